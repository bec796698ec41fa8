//! The fluid, event-driven simulator.
//!
//! Between two events every active flow sends at a constant rate. Events are flow
//! arrivals, completions, data becoming fully available, a flow catching up with its
//! available data, priority crossings (LAS/SRPT keys meeting on a shared link, PIAS and
//! SDC thresholds), deadline expiries (when flows are terminated), forced
//! re-evaluations, and the events of the shadow fair-sharing run used by `fair` and
//! `gtcp`. At every event all rates are recomputed from the current state.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{Result, SimError};
use crate::fill::{Filler, Paths};
use crate::rng::{mix64, SplitMix64};
use crate::sched::{AdmissionPolicy, GaInner, Scheduler};
use crate::topology::Topology;

/// One flow of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowSpec {
    pub arrival_s: f64,
    pub src: usize,
    pub dst: usize,
    pub size_bytes: f64,
    /// Relative deadline in seconds; NaN = none.
    pub deadline_s: f64,
    pub weight: f64,
    /// The flow's bytes become available uniformly over [arrival, arrival + data_span].
    pub data_span_s: f64,
    /// When false, schedulers may not read the size until the flow is complete.
    pub size_known: bool,
}

impl FlowSpec {
    pub fn new(arrival_s: f64, src: usize, dst: usize, size_bytes: f64) -> Self {
        FlowSpec { arrival_s, src, dst, size_bytes, deadline_s: f64::NAN, weight: 1.0, data_span_s: 0.0, size_known: true }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AdmissionConfig {
    /// At most `k` concurrently active flows per destination.
    pub k: usize,
    /// Choose only among the first `window` waiting requests (0 = all).
    pub window: usize,
    pub policy: AdmissionPolicy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RacsParams {
    pub w_min: f64,
    pub w_max: f64,
    /// Decay per byte of remaining size.
    pub a_per_byte: f64,
    /// Weights are re-evaluated at every event and at least this often (RACS: every RTT).
    pub update_interval_s: f64,
}

impl Default for RacsParams {
    fn default() -> Self {
        RacsParams { w_min: 1.0, w_max: 100.0, a_per_byte: 1.0 / 100_000.0, update_interval_s: 300e-6 }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SdcParams {
    /// Remaining-size thresholds r_A < r_B (bytes): class A if remaining <= r_A, B if <= r_B, else C.
    pub thresholds_bytes: [f64; 2],
    /// Weights of classes A, B, C (the steady-state share of AIMD sources, eq. 3.12).
    pub weights: [f64; 3],
}

impl Default for SdcParams {
    fn default() -> Self {
        // Thresholds 50 and 100 packets of 1460 B (Munir, Section 3.5); weights are
        // flowsched's defaults with the class A:C gain of 10 used there.
        SdcParams { thresholds_bytes: [50.0 * 1460.0, 100.0 * 1460.0], weights: [10.0, 5.0, 1.0] }
    }
}

/// Which allocator a run uses to recompute the rates at its events. Every choice gives
/// the same allocation up to rounding, within `incremental_tolerance` of `Full`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllocatorChoice {
    /// The scheduler's own allocator: incremental priority (fifo, srpt, asrpt/ga:*, pias,
    /// edf, ssdf, lsdf, random), incremental fair sharing (ps, wps, and the shadow run of
    /// fair and gtcp:*), LAS records (las, on paths of up to 4 links), else the full
    /// recomputation.
    #[default]
    Auto,
    /// The full recomputation at every event, for every scheduler: the reference the
    /// other allocators are tested against; cheaper than the incremental ones over a few
    /// flows; and needed to change PIAS thresholds during a run (`set_pias_thresholds`).
    Full,
    /// An incremental allocator (priority or fair sharing): `Simulator::new` fails with
    /// `SimError::Unsupported` for a scheduler that has none.
    Incremental,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub scheduler: Scheduler,
    pub admission: Option<AdmissionConfig>,
    /// Terminate a flow when its deadline passes (it counts as missed).
    pub terminate_missed: bool,
    /// Fixed delay per link of the path, added to FCT.
    pub delay_per_hop_s: f64,
    pub seed: u64,
    /// PIAS demotion thresholds in bytes (increasing).
    pub pias_thresholds_bytes: Vec<f64>,
    pub racs: RacsParams,
    pub sdc: SdcParams,
    /// Re-evaluate rates at least this often (None = only at events).
    pub max_interval_s: Option<f64>,
    /// `step` returns `Outcome::FlowsChanged` after events that add, remove or complete flows.
    pub pause_on_flow_change: bool,
    /// Which allocator recomputes the rates (see `AllocatorChoice`): the scheduler's own
    /// (`Auto`, the default), the full recomputation at every event (`Full`: the
    /// reference the others are tested against, and what `set_pias_thresholds` needs), or
    /// an incremental one (`Incremental`, an error for schedulers that have none).
    pub allocator: AllocatorChoice,
    /// Test only (fault injection for the progress guard): from this simulated time on,
    /// every allocation schedules an event at the current time that changes nothing, and
    /// the incremental priority allocator puts every flow it re-evaluates back on its
    /// worklist. `step` must then fail with `SimError::Stalled` instead of spinning.
    pub inject_stall_at_s: Option<f64>,
    /// An event budget: `step` fails with `SimError::Stalled` once the run has had this
    /// many events (None = no budget). For callers that must bound a run's work, such as
    /// the fuzzer (`tests/fuzz.rs`).
    pub max_events: Option<u64>,
}

impl SimConfig {
    pub fn new(scheduler: Scheduler) -> Self {
        SimConfig {
            scheduler,
            admission: None,
            terminate_missed: false,
            delay_per_hop_s: 0.0,
            seed: 0,
            pias_thresholds_bytes: Vec::new(),
            racs: RacsParams::default(),
            sdc: SdcParams::default(),
            max_interval_s: None,
            pause_on_flow_change: false,
            allocator: AllocatorChoice::Auto,
            inject_stall_at_s: None,
            max_events: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Waiting,
    Active,
    Done,
    Terminated,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Every flow has finished or was terminated.
    Done,
    /// A destination has a free slot and waiting requests: call `admit(dst, position)`.
    Decision { dst: usize },
    /// Flows arrived, finished, were terminated, or became complete (with `pause_on_flow_change`).
    FlowsChanged,
    /// The time limit given to `step` was reached.
    TimeReached,
}

const INF: f64 = f64::INFINITY;

/// The progress guarantee. `step` fails with `SimError::Stalled` (naming the scheduler,
/// the allocator, the simulated time and the flows involved) instead of spinning when
/// simulated time stops advancing:
/// - more than `STALL_EVENTS_PER_FLOW * (active flows + 1)` consecutive events at one
///   simulated time with no flow arriving, finishing, being terminated or admitted and
///   no flow's data completing (a legitimate run has at most a few per active flow: a
///   PIAS re-placement, a deadline at an arrival);
/// - more than `ALLOC_STEPS_PER_FLOW * (active flows + 1)` re-evaluations of flows in one
///   incremental priority allocation (each active flow is re-evaluated about once: at
///   most 0.4 times the active flows on the 100k-flow benchmarks), or more than
///   `ALLOC_STEPS_PER_FLOW * (active flows + links + 1)` steps of one incremental
///   fair-sharing fill (at most 2 times the active flows there).
/// The other loops of the core (progressive filling, the LAS fast path, the event heap)
/// end by construction: every pass freezes a flow or pops an item.
pub const STALL_EVENTS_PER_FLOW: u64 = 16;
/// See `STALL_EVENTS_PER_FLOW`.
pub const ALLOC_STEPS_PER_FLOW: u64 = 64;

/// How far the finish times of a scheduler's own allocator may lie from those of the
/// full recomputation (`AllocatorChoice::Full`), relative to the finish time
/// (|a - b| <= tol * max(|b|, 1e-3 s): at small times, SRPT's crossing events are
/// looked at up to 1e-12 s late, which the floor of 1 ms covers). One place for all of
/// them; the fuzzer
/// (`tests/fuzz.rs`) and the differential tests check against these.
/// - `las`: its fast path is bit-identical to the generic path (0).
/// - the incremental priority allocator (fifo, srpt, asrpt/ga:*, pias, edf, ssdf, lsdf,
///   random): 1e-9. Its rates are the greedy ones up to rounding (rate changes below
///   1e-12 relative are not committed; PIAS re-places a flow within 1e-12 s of the full
///   recomputation).
/// - `ps`, `wps` (incremental fair sharing) and the shadow fair-sharing run of `fair`
///   and `gtcp:*`: 1e-7. Its fill compares levels with a relative slack of 1e-11, and a
///   difference at one event carries over to the flows that finish later; on the
///   1M-flow benchmark every completion time is within 1.6e-8.
/// - `racs`, `sdc`, `external`: the same allocator either way (0).
pub fn incremental_tolerance(s: &Scheduler) -> f64 {
    match s {
        Scheduler::Las | Scheduler::Racs | Scheduler::Sdc | Scheduler::External => 0.0,
        Scheduler::Ps | Scheduler::Wps | Scheduler::Fair | Scheduler::Gtcp(_) => 1e-7,
        _ => 1e-9,
    }
}

/// The most flows a simulator takes (2^29 = 536,870,912): flow and path-link indices
/// are 32-bit (a path has up to 4 links), with u32::MAX reserved as "none".
pub const MAX_FLOWS: usize = 1 << 29;

#[inline]
fn tol_of(x: f64) -> f64 {
    1e-9 * x.abs().max(1.0)
}

/// Bytes left below which a flow of `size` bytes sending at `rate` counts as finished at
/// time t: a relative 1e-9 of its size, or what it sends in a few ulps of t (a smaller
/// remainder could never be reached: t + remainder / rate would round back to t).
#[inline]
pub(crate) fn finish_tol_of(size: f64, rate: f64, t: f64) -> f64 {
    (1e-9 * size).max(rate * t.abs() * 8.0 * f64::EPSILON)
}

/// Aggregate counters of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub events: u64,
    pub allocations: u64,
}

#[derive(Debug, Clone)]
pub struct Simulator {
    topo: Topology,
    cfg: SimConfig,
    flows: Vec<FlowSpec>,
    path_off: Vec<u32>,
    path_links: Vec<u32>,
    path_ix: Vec<u32>,
    path_cap: Vec<f64>,
    order: Vec<u32>,
    next_arr: usize,
    // dynamic
    sent: Vec<f64>,
    rate: Vec<f64>,
    cap: Vec<f64>,
    weight: Vec<f64>,
    status: Vec<Status>,
    finish: Vec<f64>,
    complete: Vec<bool>,
    k1: Vec<f64>,
    k2: Vec<f64>,
    slope: Vec<f64>,
    ext_score: Vec<f64>,
    rand_key: Vec<f64>,
    active: Vec<u32>,
    waiting: Vec<VecDeque<u32>>,
    n_active_dst: Vec<u32>,
    admit_check: VecDeque<usize>,
    deadline_heap: BinaryHeap<Reverse<(OrdF64, u32)>>,
    data_heap: BinaryHeap<Reverse<(OrdF64, u32)>>,
    now: f64,
    dirty: bool,
    next_event: f64,
    changed: bool,
    /// Consecutive events at the current time with no flow-set change (progress guard).
    stall: u64,
    rng: SplitMix64,
    filler: Filler,
    res: Vec<f64>,
    agg: Vec<f64>,
    link_cnt: Vec<u32>,
    link_lists: Vec<u32>,
    shadow: Option<Box<Simulator>>,
    stats: Stats,
    // Incremental allocator (strict-priority schedulers; see incr.rs).
    incremental: bool,
    t0: Vec<f64>,
    apos: Vec<u32>,
    lists: Vec<Vec<u32>>,
    work: BinaryHeap<incr::WorkItem>,
    in_work: Vec<bool>,
    fev: evheap::EventHeap,
    xheap: BinaryHeap<Reverse<(OrdF64, u32, u32)>>,
    xver: Vec<u32>,
    xdirty: Vec<bool>,
    xdirty_list: Vec<u32>,
    /// Scratch of a crossing: links to re-sort, their stamps, and a list's new order.
    xqueue: Vec<u32>,
    xseen: Vec<u32>,
    xstamp: u32,
    xsorted: Vec<incr::WorkItem>,
    /// Per-link scan positions of an allocation, and the flows they passed (incr.rs).
    cursors: Vec<incr::Cursor>,
    passed: Vec<u32>,
    cepoch: u32,
    resched: Vec<u32>,
    bind: Vec<u32>,
    /// PIAS (incremental allocator): the queue each active flow is placed in on its link
    /// lists. Its priority reads this, never the queue its bytes sent would give now, so
    /// the lists stay in priority order between the events that re-place it (incr.rs).
    pq: Vec<u32>,
    // Incremental fair sharing (ps, wps; see fair.rs).
    fair: bool,
    maxp: usize,
    dpl: Vec<u32>,
    /// The fill state of each active flow, at its index in `active`.
    ff: Vec<fair::FairFlow>,
    /// The rest of each active flow's fill state, apart from what every visit reads.
    fc: Vec<fair::FairCold>,
    /// Weighted fair sharing (`wps`): levels and weights are read from `fc`.
    fwt: bool,
    lpos: Vec<u32>,
    rlist: Vec<u32>,
    seed_flows: Vec<u32>,
    seed_links: Vec<u32>,
    stamp: u32,
    pst: Vec<u32>,
    /// The fill state of each link (see fair.rs).
    lk: Vec<fair::FairLink>,
    tq: Vec<u32>,
    fpromote: Vec<u32>,
    fheap: BinaryHeap<fair::Item>,
    /// Unfrozen flows of the fill, counted once per joined link they are unfrozen on.
    fopen: u32,
    floor: f64,
    wl: Vec<(f64, f64, f64)>,
    grow_links: Vec<u32>,
    // The LAS full recomputation with cheaper bookkeeping (see las.rs).
    las_fast: bool,
    las_recs: Vec<las::LasRec>,
    /// Each flow's position in (arrival, index) order (LAS fast path only).
    las_rank: Vec<u32>,
    las_last: Vec<las::LasLinkScan>,
    /// LAS keys (bytes sent) this far apart per second of t are equal (`same_key`): what
    /// the fastest link sends in a few ulps of t, the rounding of a crossing's time.
    key_abs_tol: f64,
    /// Flows left `active` since the records were last synced.
    las_removed: bool,
}

mod evheap;
mod fair;
mod incr;
mod las;

#[derive(Debug, Clone, Copy, PartialEq)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// `n` copies of `v`, or `SimError::OutOfMemory` if the memory is not there (for
/// counts that come from the input: hosts and links).
fn filled<T: Clone>(n: usize, v: T, what: &str) -> Result<Vec<T>> {
    let mut x = Vec::new();
    x.try_reserve_exact(n)
        .map_err(|_| SimError::OutOfMemory(format!("{what}: {n} entries of {} bytes", std::mem::size_of::<T>())))?;
    x.resize(n, v);
    Ok(x)
}

fn bad(row: usize, field: &'static str, message: String) -> SimError {
    SimError::InvalidFlow { row, field, message }
}

impl Simulator {
    /// A simulator of `flows` on `topo` (at most `topology::MAX_HOSTS` hosts and
    /// `MAX_FLOWS` flows). Every bad input is an error, never a panic.
    pub fn new(topo: Topology, flows: Vec<FlowSpec>, cfg: SimConfig) -> Result<Self> {
        let n = flows.len();
        let h = topo.n_hosts;
        if n > MAX_FLOWS {
            return Err(SimError::InvalidConfig(format!("{n} flows, above the limit of {MAX_FLOWS} (2^29, fabric_core::sim::MAX_FLOWS)")));
        }
        if h > crate::topology::MAX_HOSTS
            || Some(topo.n_links()) != topo.expected_links()
            || topo.capacity.iter().any(|c| !(c.is_finite() && *c > 0.0))
        {
            return Err(SimError::InvalidConfig(format!(
                "topology with {h} hosts and {} links: at most {} hosts and {} links, as many as its kind has, with positive finite capacities",
                topo.n_links(),
                crate::topology::MAX_HOSTS,
                crate::topology::MAX_LINKS
            )));
        }
        for (r, f) in flows.iter().enumerate() {
            if !(f.arrival_s.is_finite() && f.arrival_s >= 0.0) {
                return Err(bad(r, "arrival_s", format!("must be finite and >= 0, got {}", f.arrival_s)));
            }
            if f.src >= h {
                return Err(bad(r, "src", format!("host {} out of range (topology has {h} hosts)", f.src)));
            }
            if f.dst >= h {
                return Err(bad(r, "dst", format!("host {} out of range (topology has {h} hosts)", f.dst)));
            }
            if f.src == f.dst {
                return Err(bad(r, "dst", format!("src == dst == {}", f.src)));
            }
            if !(f.size_bytes.is_finite() && f.size_bytes > 0.0) {
                return Err(bad(r, "size_bytes", format!("must be finite and > 0, got {}", f.size_bytes)));
            }
            if !f.deadline_s.is_nan() && !(f.deadline_s.is_finite() && f.deadline_s > 0.0) {
                return Err(bad(r, "deadline_s", format!("must be > 0 or NaN for none, got {}", f.deadline_s)));
            }
            if !(f.weight.is_finite() && f.weight > 0.0) {
                return Err(bad(r, "weight", format!("must be finite and > 0, got {}", f.weight)));
            }
            if !(f.data_span_s.is_finite() && f.data_span_s >= 0.0) {
                return Err(bad(r, "data_span_s", format!("must be finite and >= 0, got {}", f.data_span_s)));
            }
        }
        Self::check_config(&cfg, &flows)?;
        let mut path_off = Vec::with_capacity(n + 1);
        let mut path_links = Vec::with_capacity(2 * n);
        let mut path_ids = Vec::with_capacity(n);
        let mut path_cap = Vec::with_capacity(n);
        path_off.push(0u32);
        for (i, f) in flows.iter().enumerate() {
            let start = path_links.len();
            path_ids.push(topo.path(i as u64, f.src, f.dst, &mut path_links));
            if path_links.len() >= u32::MAX as usize {
                return Err(SimError::InvalidConfig(format!(
                    "the paths of the first {} flows cross 2^32 - 1 links in all, the most a simulator indexes \
                     (long graph paths x many flows)",
                    i + 1
                )));
            }
            path_off.push(path_links.len() as u32);
            path_cap.push(path_links[start..].iter().map(|&l| topo.capacity[l as usize]).fold(INF, f64::min));
        }
        // Dense path indices (same links <=> same index).
        let mut ids: Vec<(u128, u32)> = path_ids.iter().enumerate().map(|(i, &p)| (p, i as u32)).collect();
        ids.sort_unstable();
        let mut path_ix = vec![0u32; n];
        let mut n_paths = 0usize;
        for k in 0..ids.len() {
            if k > 0 && ids[k].0 != ids[k - 1].0 {
                n_paths += 1;
            }
            path_ix[ids[k].1 as usize] = n_paths as u32;
        }
        if n > 0 {
            n_paths += 1;
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&a, &b| flows[a as usize].arrival_s.total_cmp(&flows[b as usize].arrival_s).then(a.cmp(&b)));
        let rand_key = (0..n).map(|i| (mix64(cfg.seed ^ mix64(i as u64 + 1)) >> 11) as f64).collect();
        let shadow = if cfg.scheduler.needs_shadow() {
            let mut scfg = SimConfig::new(Scheduler::Ps);
            scfg.seed = cfg.seed;
            scfg.delay_per_hop_s = cfg.delay_per_hop_s;
            // The shadow run is `ps`: incremental unless the full recomputation is asked for.
            scfg.allocator = if cfg.allocator == AllocatorChoice::Full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
            Some(Box::new(Simulator::new(topo.clone(), flows.clone(), scfg)?))
        } else {
            None
        };
        let n_links = topo.n_links();
        let full = cfg.allocator == AllocatorChoice::Full;
        let las_fast = !full
            && cfg.allocator == AllocatorChoice::Auto
            && matches!(cfg.scheduler, Scheduler::Las)
            && (0..n).all(|i| (path_off[i + 1] - path_off[i]) as usize <= las::MAX_PATH);
        // LAS shares with equal weights (the generic path sets them at every allocation).
        let weight = flows.iter().map(|f| if las_fast { 1.0 } else { f.weight }).collect();
        let fair = !full && fair::applies(&cfg.scheduler);
        if fair && n >= 1 << 30 {
            return Err(SimError::InvalidConfig(format!("fair sharing takes at most 2^30 - 1 flows, got {n}")));
        }
        let incremental = !full && (incr::applies(&cfg.scheduler) || fair);
        if cfg.allocator == AllocatorChoice::Incremental && !incremental {
            return Err(SimError::Unsupported(format!(
                "scheduler '{}' has no incremental allocator (AllocatorChoice::Incremental); use Auto or Full",
                cfg.scheduler.name()
            )));
        }
        Ok(Simulator {
            incremental,
            fair,
            maxp: (0..n).map(|i| (path_off[i + 1] - path_off[i]) as usize).max().unwrap_or(1).max(1),
            dpl: Vec::new(),
            ff: Vec::new(),
            fc: Vec::new(),
            fwt: matches!(cfg.scheduler, Scheduler::Wps),
            lpos: Vec::new(),
            rlist: Vec::new(),
            seed_flows: Vec::new(),
            seed_links: Vec::new(),
            stamp: 0,
            pst: Vec::new(),
            lk: filled(n_links, fair::FairLink::default(), "per-link state")?,
            tq: Vec::new(),
            fpromote: Vec::new(),
            fheap: BinaryHeap::new(),
            fopen: 0,
            floor: INF,
            wl: Vec::new(),
            grow_links: Vec::new(),
            las_fast,
            las_recs: Vec::new(),
            las_rank: if las_fast {
                let mut rank = vec![0u32; n];
                for (p, &i) in order.iter().enumerate() {
                    rank[i as usize] = p as u32;
                }
                rank
            } else {
                Vec::new()
            },
            las_last: Vec::new(),
            key_abs_tol: match &cfg.scheduler {
                Scheduler::Las => 8.0 * f64::EPSILON * topo.capacity.iter().fold(0.0, |a: f64, &c| a.max(c)),
                Scheduler::Gtcp(inner) if matches!(**inner, Scheduler::Las) => {
                    8.0 * f64::EPSILON * topo.capacity.iter().fold(0.0, |a: f64, &c| a.max(c))
                }
                _ => 0.0,
            },
            las_removed: false,
            t0: vec![0.0; n],
            apos: vec![u32::MAX; n],
            lists: filled(if incremental { n_links } else { 0 }, Vec::new(), "per-link lists")?,
            work: BinaryHeap::new(),
            in_work: vec![false; n],
            fev: evheap::EventHeap::new(n),
            xheap: BinaryHeap::new(),
            xver: filled(n_links, 0, "per-link state")?,
            xdirty: filled(n_links, false, "per-link state")?,
            xdirty_list: Vec::new(),
            xqueue: Vec::new(),
            xseen: filled(n_links, 0, "per-link state")?,
            xstamp: 0,
            xsorted: Vec::new(),
            cursors: filled(n_links, incr::Cursor::default(), "per-link state")?,
            passed: vec![0; if incremental && !fair { n } else { 0 }],
            cepoch: 0,
            resched: Vec::new(),
            bind: vec![u32::MAX; n],
            pq: vec![0; if incremental && matches!(cfg.scheduler, Scheduler::Pias) { n } else { 0 }],
            filler: Filler::try_new(n_links)?,
            res: filled(n_links, 0.0, "per-link state")?,
            link_cnt: filled(n_links + 1, 0, "per-link state")?,
            link_lists: Vec::new(),
            agg: vec![0.0; n_paths],
            path_off,
            path_links,
            path_ix,

            path_cap,
            order,
            next_arr: 0,
            sent: vec![0.0; n],
            rate: vec![0.0; n],
            cap: vec![INF; n],
            weight,
            status: vec![Status::Pending; n],
            finish: vec![f64::NAN; n],
            complete: flows.iter().map(|f| f.data_span_s == 0.0).collect(),
            k1: vec![0.0; n],
            k2: vec![0.0; n],
            slope: vec![0.0; n],
            ext_score: vec![0.0; n],
            rand_key,
            active: Vec::new(),
            waiting: filled(h, VecDeque::new(), "per-host queues")?,
            n_active_dst: filled(h, 0, "per-host state")?,
            admit_check: VecDeque::new(),
            deadline_heap: BinaryHeap::new(),
            data_heap: BinaryHeap::new(),
            now: 0.0,
            dirty: true,
            next_event: 0.0,
            changed: false,
            stall: 0,
            rng: SplitMix64::new(cfg.seed ^ 0xA5A5_5A5A_DEAD_BEEF),
            shadow,
            stats: Stats::default(),
            topo,
            cfg,
            flows,
        })
    }

    fn check_config(cfg: &SimConfig, flows: &[FlowSpec]) -> Result<()> {
        if !(cfg.delay_per_hop_s.is_finite() && cfg.delay_per_hop_s >= 0.0) {
            return Err(SimError::InvalidConfig(format!("delay per hop must be >= 0, got {}", cfg.delay_per_hop_s)));
        }
        if let Some(iv) = cfg.max_interval_s {
            if !(iv.is_finite() && iv > 0.0) {
                return Err(SimError::InvalidConfig(format!("max_interval_s must be > 0, got {iv}")));
            }
        }
        let th = &cfg.pias_thresholds_bytes;
        if th.iter().any(|t| !(t.is_finite() && *t > 0.0)) || th.windows(2).any(|w| w[1] <= w[0]) {
            return Err(SimError::InvalidConfig(format!(
                "PIAS thresholds must be positive, finite and strictly increasing, got {th:?}"
            )));
        }
        if matches!(cfg.scheduler, Scheduler::Pias) && th.is_empty() {
            return Err(SimError::InvalidConfig("pias needs at least one threshold".into()));
        }
        let r = &cfg.racs;
        if !(r.w_min > 0.0 && r.w_max >= 0.0 && r.a_per_byte >= 0.0 && r.update_interval_s > 0.0)
            || ![r.w_min, r.w_max, r.a_per_byte, r.update_interval_s].iter().all(|x| x.is_finite())
        {
            return Err(SimError::InvalidConfig(format!("RACS parameters must be finite with w_min > 0, w_max >= 0, a >= 0, interval > 0: {r:?}")));
        }
        let s = &cfg.sdc;
        if !(s.thresholds_bytes[0] > 0.0 && s.thresholds_bytes[1] > s.thresholds_bytes[0] && s.thresholds_bytes[1].is_finite())
            || s.weights.iter().any(|w| !(w.is_finite() && *w > 0.0))
        {
            return Err(SimError::InvalidConfig(format!("SDC needs 0 < r_A < r_B and positive weights: {s:?}")));
        }
        if let Some(a) = &cfg.admission {
            if a.k == 0 {
                return Err(SimError::InvalidConfig("admission k must be >= 1".into()));
            }
            if a.policy.uses_size() {
                if let Some(r) = flows.iter().position(|f| !f.size_known) {
                    return Err(SimError::Unsupported(format!(
                        "admission policy {:?} reads flow sizes, but flow at row {r} has size_known = false",
                        a.policy
                    )));
                }
            }
        }
        if cfg.scheduler.uses_size() {
            if let Some(r) = flows.iter().position(|f| !f.size_known) {
                return Err(SimError::Unsupported(format!(
                    "scheduler {:?} reads flow sizes, but flow at row {r} has size_known = false; use a size-oblivious scheduler (fifo, ps, las, pias, asrpt/ga:*, ...)",
                    cfg.scheduler
                )));
            }
        }
        if let Scheduler::Gtcp(_) = cfg.scheduler {
            if cfg.admission.is_some() || cfg.terminate_missed {
                return Err(SimError::Unsupported("gtcp with destination admission or deadline termination".into()));
            }
            if let Some(r) = flows.iter().position(|f| f.data_span_s > 0.0) {
                return Err(SimError::Unsupported(format!(
                    "gtcp with data_span_s > 0 (row {r}): a path could not always use the rate fair sharing gives it"
                )));
            }
        }
        if matches!(cfg.scheduler, Scheduler::External) && cfg.admission.as_ref().is_some_and(|a| a.policy == AdmissionPolicy::External) {
            // both external is fine
        }
        Ok(())
    }

    // ----- accessors -----
    pub fn now(&self) -> f64 {
        self.now
    }
    pub fn n_flows(&self) -> usize {
        self.flows.len()
    }
    pub fn flow(&self, i: usize) -> &FlowSpec {
        &self.flows[i]
    }
    pub fn status(&self, i: usize) -> Status {
        self.status[i]
    }
    pub fn sent_bytes(&self, i: usize) -> f64 {
        self.sent_now(i)
    }
    pub fn rate_bytes_per_s(&self, i: usize) -> f64 {
        self.rate[i]
    }
    pub fn is_complete(&self, i: usize) -> bool {
        self.complete[i]
    }
    pub fn active(&self) -> &[u32] {
        &self.active
    }
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    pub fn path(&self, i: usize) -> &[u32] {
        &self.path_links[self.path_off[i] as usize..self.path_off[i + 1] as usize]
    }
    /// Flows waiting at a destination, in arrival order.
    pub fn waiting(&self, dst: usize) -> &VecDeque<u32> {
        &self.waiting[dst]
    }
    pub fn active_at_dst(&self, dst: usize) -> usize {
        self.n_active_dst[dst] as usize
    }
    pub fn finish_s(&self) -> &[f64] {
        &self.finish
    }
    pub fn sent(&self) -> Vec<f64> {
        (0..self.flows.len()).map(|i| self.sent_now(i)).collect()
    }
    pub fn terminated(&self) -> Vec<bool> {
        self.status.iter().map(|s| *s == Status::Terminated).collect()
    }
    /// Fixed path delay of flow i: the delay per hop times the number of links, plus the
    /// links' own delays (a graph's per-link delays).
    pub fn path_delay_s(&self, i: usize) -> f64 {
        let (a, b) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
        let per_hop = self.cfg.delay_per_hop_s * (b - a) as f64;
        if self.topo.has_link_delays() {
            per_hop + self.path_links[a..b].iter().map(|&l| self.topo.link_delay_s(l as usize)).sum::<f64>()
        } else {
            per_hop
        }
    }
    /// FCT of the flow alone on an idle fabric: max(size / bottleneck rate, data span) + path delay.
    pub fn ideal_fct_s(&self, i: usize) -> f64 {
        let f = &self.flows[i];
        (f.size_bytes / self.path_cap[i]).max(f.data_span_s) + self.path_delay_s(i)
    }
    /// FCT (finish - arrival + path delay); NaN if not finished.
    pub fn fct_s(&self, i: usize) -> f64 {
        self.finish[i] - self.flows[i].arrival_s + self.path_delay_s(i)
    }
    /// Bytes carried by each link over the run so far.
    pub fn link_bytes(&self) -> Vec<f64> {
        let mut b = vec![0.0; self.topo.n_links()];
        for i in 0..self.flows.len() {
            for &l in self.path(i) {
                b[l as usize] += self.sent_now(i);
            }
        }
        b
    }
    /// Sets the priority score of flow i for the `external` scheduler (lower first).
    pub fn set_score(&mut self, i: usize, score: f64) -> Result<()> {
        if i >= self.flows.len() {
            return Err(SimError::InvalidAction(format!("flow index {i} out of range ({} flows)", self.flows.len())));
        }
        if !score.is_finite() {
            return Err(SimError::InvalidAction(format!("score of flow {i} must be finite, got {score}")));
        }
        self.ext_score[i] = score;
        self.dirty = true;
        Ok(())
    }

    /// Replaces the PIAS demotion thresholds from now on (the queue-threshold tuning
    /// environment). Needs the full recomputation, `AllocatorChoice::Full` (the
    /// incremental allocator keeps per-link orders that a change of thresholds would
    /// invalidate).
    pub fn set_pias_thresholds(&mut self, th: Vec<f64>) -> Result<()> {
        if self.incremental {
            return Err(SimError::Unsupported(
                "changing PIAS thresholds during a run needs the full recomputation \
                 (AllocatorChoice::Full; force_full_recompute=True from Python)"
                    .into(),
            ));
        }
        if th.is_empty() || th.iter().any(|t| !(t.is_finite() && *t > 0.0)) || th.windows(2).any(|w| w[1] <= w[0]) {
            return Err(SimError::InvalidAction(format!(
                "PIAS thresholds must be non-empty, positive, finite and strictly increasing, got {th:?}"
            )));
        }
        self.cfg.pias_thresholds_bytes = th;
        self.dirty = true;
        Ok(())
    }

    /// The destination whose admission decision is pending (external admission only).
    pub fn pending_decision(&self) -> Option<usize> {
        let a = self.cfg.admission.as_ref()?;
        if a.policy != AdmissionPolicy::External {
            return None;
        }
        self.admit_check.iter().copied().find(|&d| self.can_admit(d))
    }

    /// The requests an admission decision at `dst` chooses from (first `window` waiting).
    pub fn window(&self, dst: usize) -> Vec<u32> {
        let w = self.cfg.admission.as_ref().map_or(0, |a| a.window);
        let q = &self.waiting[dst];
        let m = if w == 0 { q.len() } else { w.min(q.len()) };
        q.iter().take(m).copied().collect()
    }

    /// Admits the request at `position` of the window of `dst` (external admission).
    pub fn admit(&mut self, dst: usize, position: usize) -> Result<()> {
        match self.pending_decision() {
            Some(d) if d == dst => {}
            other => {
                return Err(SimError::InvalidAction(format!(
                    "no admission decision pending at destination {dst} (pending: {other:?})"
                )))
            }
        }
        let win = self.window(dst).len();
        if position >= win {
            return Err(SimError::InvalidAction(format!(
                "position {position} outside the window of {win} waiting requests at destination {dst}"
            )));
        }
        self.admit_at(dst, position);
        Ok(())
    }

    fn can_admit(&self, d: usize) -> bool {
        let k = self.cfg.admission.as_ref().map_or(usize::MAX, |a| a.k);
        !self.waiting[d].is_empty() && (self.n_active_dst[d] as usize) < k
    }

    fn admit_at(&mut self, dst: usize, pos: usize) {
        let i = self.waiting[dst].remove(pos).expect("position checked");
        self.activate(i as usize);
        self.n_active_dst[dst] += 1;
        self.dirty = true;
        self.changed = true;
    }

    // ----- the main loop -----

    /// Runs until every flow is done.
    pub fn run(&mut self) -> Result<()> {
        loop {
            match self.step(INF)? {
                Outcome::Done => return Ok(()),
                Outcome::Decision { dst } => {
                    return Err(SimError::InvalidConfig(format!(
                        "external admission decision pending at destination {dst}: drive the simulator with step()/admit()"
                    )))
                }
                _ => {}
            }
        }
    }

    /// Advances the simulation until it is done, a decision is needed, the flow set
    /// changed (with `pause_on_flow_change`), or simulated time reaches `until`.
    pub fn step(&mut self, until: f64) -> Result<Outcome> {
        loop {
            if let Some(dst) = self.pending_decision() {
                return Ok(Outcome::Decision { dst });
            }
            if self.changed && self.cfg.pause_on_flow_change {
                self.changed = false;
                return Ok(Outcome::FlowsChanged);
            }
            self.changed = false;
            // The shadow run first: this run's rates read its state.
            let t_shadow = match self.shadow.as_mut() {
                Some(sh) => sh.peek_next_event().map_err(|e| match e {
                    SimError::Stalled(m) => SimError::Stalled(format!(
                        "in the shadow fair-sharing run of '{}': {m}",
                        self.cfg.scheduler.name()
                    )),
                    e => e,
                })?,
                None => INF,
            };
            let t = self.peek_next_event()?.min(t_shadow);
            if t == INF {
                if self.next_arr >= self.order.len() && self.active.is_empty() && self.waiting.iter().all(|q| q.is_empty()) {
                    return Ok(Outcome::Done);
                }
                return Err(SimError::Stalled(format!(
                    "at t = {} s, {} active flows have no rate and no event is scheduled",
                    self.now,
                    self.active.len()
                )));
            }
            if t > until {
                if until > self.now {
                    if let Some(sh) = self.shadow.as_mut() {
                        if sh.incremental {
                            sh.now = until; // flows advance lazily
                        } else {
                            sh.advance_fluid(until);
                        }
                        sh.dirty = true;
                    }
                    if self.incremental {
                        self.now = until; // flows advance lazily
                    } else {
                        self.advance_fluid(until);
                    }
                    self.dirty = true;
                }
                return Ok(Outcome::TimeReached);
            }
            if t <= self.now {
                self.stall += 1;
                let bound = STALL_EVENTS_PER_FLOW * (self.active.len() as u64 + 1);
                if self.stall > bound {
                    let what = format!(
                        "{} consecutive events at this time with no flow arriving, finishing or being admitted \
                         (bound {STALL_EVENTS_PER_FLOW} * (active flows + 1) = {bound})",
                        self.stall
                    );
                    let due = self.due_flows();
                    return Err(self.no_progress(&what, &due));
                }
            } else {
                self.stall = 0;
            }
            if self.cfg.max_events.is_some_and(|m| self.stats.events >= m) {
                let what = format!("the event budget of {} events is spent", self.stats.events);
                let due = self.due_flows();
                return Err(self.no_progress(&what, &due));
            }
            if let Some(sh) = self.shadow.as_mut() {
                sh.advance_to(t);
            }
            self.advance_to(t);
            if self.changed {
                self.stall = 0;
            }
        }
    }

    /// Next event time of this simulator alone (recomputes the rates if needed).
    fn peek_next_event(&mut self) -> Result<f64> {
        if self.dirty {
            if self.incremental {
                self.incr_allocate()?;
            } else {
                self.allocate();
            }
            self.dirty = false;
            if self.cfg.inject_stall_at_s.is_some_and(|ts| self.now >= ts) && !self.active.is_empty() {
                self.next_event = self.now; // test only: an event that changes nothing
            }
        }
        Ok(self.next_event)
    }

    /// The allocator this run uses, for messages.
    fn allocator_name(&self) -> &'static str {
        if self.fair {
            "incremental fair-sharing allocator"
        } else if self.incremental {
            "incremental priority allocator"
        } else if self.las_fast {
            "LAS fast path of the full recomputation"
        } else {
            "full recomputation"
        }
    }

    /// The progress guard's error: names the scheduler, the allocator, the simulated
    /// time, what did not progress and the flows involved (trace rows).
    pub(crate) fn no_progress(&self, what: &str, flows: &[u32]) -> SimError {
        let mut rows: Vec<u32> = flows.to_vec();
        rows.sort_unstable();
        rows.dedup();
        let shown = rows.len().min(10);
        let more = if rows.len() > shown { format!(" and {} more", rows.len() - shown) } else { String::new() };
        SimError::Stalled(format!(
            "no progress under scheduler '{}' ({}) at simulated time t = {:.17e} s: {what}; flows involved (trace rows): {:?}{more}; {} active flows",
            self.cfg.scheduler.name(),
            self.allocator_name(),
            self.now,
            &rows[..shown],
            self.active.len()
        ))
    }

    /// The active flows whose own next event (completion, catching up with their data, a
    /// PIAS or SDC threshold) is due now, or the first active ones if none is (for the
    /// progress guard's message; not on any hot path).
    fn due_flows(&self) -> Vec<u32> {
        let t = self.now;
        let mut due = Vec::new();
        for &i in &self.active {
            let i = i as usize;
            let r = self.rate[i];
            let sent = self.sent_now(i);
            let f = &self.flows[i];
            let mut next = if r > 0.0 { t + (f.size_bytes - sent) / r } else { INF };
            if r > 0.0 {
                next = next.min(self.catch_up_at(i, t, sent, r));
                if let Scheduler::Pias = self.cfg.scheduler {
                    let th = &self.cfg.pias_thresholds_bytes;
                    let q = self.pias_queue(sent);
                    if q < th.len() {
                        next = next.min(t + (th[q] - sent).max(0.0) / r);
                    }
                }
            }
            if next <= t {
                due.push(i as u32);
            }
        }
        if due.is_empty() {
            due = self.active.iter().copied().take(10).collect();
        }
        due
    }

    /// `finish_tol_of` for flow i at its current rate.
    #[inline]
    pub(crate) fn finish_tol(&self, i: usize, t: f64) -> f64 {
        finish_tol_of(self.flows[i].size_bytes, self.rate[i], t)
    }

    /// Bytes sent by flow i by now (the incremental allocator advances flows lazily).
    #[inline]
    pub(crate) fn sent_now(&self, i: usize) -> f64 {
        if !self.incremental || self.rate[i] == 0.0 {
            return self.sent[i];
        }
        let f = &self.flows[i];
        let s = (self.sent[i] + self.rate[i] * (self.now - self.t0[i])).min(f.size_bytes);
        if f.data_span_s > 0.0 {
            s.min(self.avail(i, self.now))
        } else {
            s
        }
    }

    fn activate(&mut self, i: usize) {
        self.status[i] = Status::Active;
        if self.incremental {
            self.incr_activate(i);
        } else {
            self.active.push(i as u32);
        }
    }

    fn advance_fluid(&mut self, t: f64) {
        if self.las_fast {
            self.las_advance_fluid(t);
            return;
        }
        let dt = t - self.now;
        if dt > 0.0 {
            for &i in &self.active {
                let i = i as usize;
                let r = self.rate[i];
                if r > 0.0 {
                    let f = &self.flows[i];
                    let mut s = self.sent[i] + r * dt;
                    if f.data_span_s > 0.0 {
                        s = s.min(f.size_bytes * ((t - f.arrival_s) / f.data_span_s).min(1.0));
                    }
                    self.sent[i] = s.min(f.size_bytes);
                }
            }
        }
        self.now = t.max(self.now);
    }

    fn advance_to(&mut self, t: f64) {
        self.stats.events += 1;
        if self.incremental {
            self.now = t.max(self.now);
        } else {
            self.advance_fluid(t);
        }
        let t = self.now;
        // Completions.
        let mut any_done = false;
        if self.incremental {
            self.incr_flow_events(t);
        }
        if self.las_fast {
            any_done = self.las_completions(t);
        }
        for k in 0..if self.incremental || self.las_fast { 0 } else { self.active.len() } {
            let i = self.active[k] as usize;
            let size = self.flows[i].size_bytes;
            if size - self.sent[i] <= self.finish_tol(i, t) && self.complete_or_due(i, t) {
                self.sent[i] = size;
                self.status[i] = Status::Done;
                self.finish[i] = t;
                any_done = true;
                self.release_slot(i);
            }
        }
        // Data becoming fully available.
        while let Some(Reverse((OrdF64(td), i))) = self.data_heap.peek().copied() {
            if td > t + tol_of(t) * 1e-3 {
                break;
            }
            self.data_heap.pop();
            if !self.complete[i as usize] {
                self.complete[i as usize] = true;
                self.changed = true;
                if self.incremental && self.status[i as usize] == Status::Active && !self.incr_try_finish(i as usize, t) {
                    self.incr_changed(i as usize, true);
                }
            }
        }
        // Deadlines.
        if self.cfg.terminate_missed {
            while let Some(Reverse((OrdF64(td), i))) = self.deadline_heap.peek().copied() {
                if td > t {
                    break;
                }
                self.deadline_heap.pop();
                let i = i as usize;
                match self.status[i] {
                    Status::Active => {
                        if self.incremental {
                            self.incr_remove(i);
                        }
                        self.status[i] = Status::Terminated;
                        any_done = true;
                        self.release_slot(i);
                    }
                    Status::Waiting => {
                        self.status[i] = Status::Terminated;
                        let d = self.flows[i].dst;
                        if let Some(p) = self.waiting[d].iter().position(|&x| x as usize == i) {
                            self.waiting[d].remove(p);
                        }
                        self.changed = true;
                    }
                    _ => {}
                }
            }
        }
        if any_done {
            self.las_removed = true;
            if !self.incremental {
                let st = &self.status;
                self.active.retain(|&i| st[i as usize] == Status::Active);
            }
            self.changed = true;
        }
        // Arrivals.
        while self.next_arr < self.order.len() {
            let i = self.order[self.next_arr] as usize;
            if self.flows[i].arrival_s > t {
                break;
            }
            self.next_arr += 1;
            self.changed = true;
            let f = self.flows[i];
            if f.data_span_s > 0.0 {
                self.data_heap.push(Reverse((OrdF64(f.arrival_s + f.data_span_s), i as u32)));
            }
            if self.cfg.terminate_missed && !f.deadline_s.is_nan() {
                let td = (f.arrival_s + f.deadline_s - self.path_delay_s(i)).max(f.arrival_s);
                self.deadline_heap.push(Reverse((OrdF64(td), i as u32)));
            }
            if self.cfg.admission.is_some() {
                self.status[i] = Status::Waiting;
                self.waiting[f.dst].push_back(i as u32);
                self.admit_check.push_back(f.dst);
            } else {
                self.activate(i);
            }
        }
        // A deadline equal to the arrival (delay >= deadline): terminate at once.
        if self.cfg.terminate_missed && self.deadline_heap.peek().is_some_and(|Reverse((OrdF64(td), _))| *td <= t) {
            self.dirty = true;
            self.next_event = t;
        }
        self.run_admissions();
        self.dirty = true;
    }

    /// A flow with all bytes sent finishes once all its data has arrived.
    #[inline]
    fn complete_or_due(&self, i: usize, t: f64) -> bool {
        let f = &self.flows[i];
        self.complete[i] || t >= f.arrival_s + f.data_span_s - tol_of(t) * 1e-3
    }

    fn release_slot(&mut self, i: usize) {
        if self.cfg.admission.is_some() {
            let d = self.flows[i].dst;
            self.n_active_dst[d] -= 1;
            self.admit_check.push_back(d);
        }
    }

    fn run_admissions(&mut self) {
        let Some(a) = self.cfg.admission.clone() else { return };
        if a.policy == AdmissionPolicy::External {
            // Drop destinations with nothing to decide; keep the rest (deduplicated) in order.
            let mut seen = Vec::new();
            let mut keep = VecDeque::new();
            while let Some(d) = self.admit_check.pop_front() {
                if self.can_admit(d) && !seen.contains(&d) {
                    seen.push(d);
                    keep.push_back(d);
                }
            }
            self.admit_check = keep;
            return;
        }
        while let Some(d) = self.admit_check.pop_front() {
            while self.can_admit(d) {
                let win = self.window(d);
                let pos = self.choose(&a.policy, &win);
                self.admit_at(d, pos);
            }
        }
    }

    fn choose(&mut self, p: &AdmissionPolicy, win: &[u32]) -> usize {
        let fl = &self.flows;
        let by = |key: &dyn Fn(&FlowSpec) -> (f64, f64)| -> usize {
            let mut best = 0usize;
            for k in 1..win.len() {
                let (a, b) = (key(&fl[win[k] as usize]), key(&fl[win[best] as usize]));
                if a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) {
                    best = k;
                }
            }
            best
        };
        let ratio = |f: &FlowSpec| if f.deadline_s.is_nan() { INF } else { f.size_bytes / f.deadline_s };
        match p {
            AdmissionPolicy::Fifo => 0,
            AdmissionPolicy::Edf => by(&|f| {
                if f.deadline_s.is_nan() {
                    (1.0, f.arrival_s)
                } else {
                    (0.0, f.arrival_s + f.deadline_s)
                }
            }),
            AdmissionPolicy::Ssdf => by(&|f| (if f.deadline_s.is_nan() { 1.0 } else { 0.0 }, ratio(f))),
            AdmissionPolicy::Lsdf => by(&|f| (if f.deadline_s.is_nan() { 1.0 } else { 0.0 }, -ratio(f))),
            AdmissionPolicy::Srpt => by(&|f| (f.size_bytes, f.arrival_s)),
            AdmissionPolicy::Random => self.rng.below(win.len() as u64) as usize,
            AdmissionPolicy::External => unreachable!("external admissions are made by admit()"),
        }
    }

    // ----- rate allocation -----

    /// When flow i, with `sent` bytes sent at time t and sending at `rate` > 0 without a
    /// data cap, catches up with its data (INF when it has no data span left to catch
    /// up with, is capped already, or is not faster than its data).
    fn catch_up_at(&self, i: usize, t: f64, sent: f64, rate: f64) -> f64 {
        let f = &self.flows[i];
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && self.cap[i] == INF {
            let dr = f.size_bytes / f.data_span_s;
            if rate > dr {
                let gap = self.avail(i, t) - sent;
                // Never at t itself (a gap too small to leave t would come back).
                return (t + gap.max(0.0) / (rate - dr)).max(t.next_up());
            }
        }
        INF
    }

    fn avail(&self, i: usize, t: f64) -> f64 {
        let f = &self.flows[i];
        if f.data_span_s == 0.0 {
            f.size_bytes
        } else {
            f.size_bytes * ((t - f.arrival_s) / f.data_span_s).clamp(0.0, 1.0)
        }
    }

    /// Priority key of flow i under scheduler s: (class, value, d value / d sent).
    fn key(&self, s: &Scheduler, i: usize) -> (f64, f64, f64) {
        let f = &self.flows[i];
        let sent = self.sent_now(i);
        let rem = f.size_bytes - sent;
        let has_dl = !f.deadline_s.is_nan();
        match s {
            Scheduler::Fifo => (0.0, f.arrival_s, 0.0),
            Scheduler::Srpt => (0.0, rem, -1.0),
            Scheduler::Las => (0.0, sent, 1.0),
            Scheduler::Pias => {
                // The incremental allocator reads the queue the flow is placed in on its
                // link lists, not the one its bytes sent give now (they differ between
                // its reaching a threshold and its re-placement; see incr.rs).
                let q = if self.pq.is_empty() { self.pias_queue(sent) } else { self.pq[i] as usize };
                (q as f64, f.arrival_s, 0.0)
            }
            Scheduler::Ga(inner) => {
                if self.complete[i] {
                    match inner {
                        GaInner::Srpt => (0.0, rem, -1.0),
                        GaInner::Ssdf if has_dl => (0.0, f.size_bytes / f.deadline_s, 0.0),
                        GaInner::Lsdf if has_dl => (0.0, -f.size_bytes / f.deadline_s, 0.0),
                        _ => (1.0, f.arrival_s, 0.0),
                    }
                } else {
                    (2.0, f.arrival_s, 0.0)
                }
            }
            Scheduler::Edf => {
                if has_dl {
                    (0.0, f.arrival_s + f.deadline_s, 0.0)
                } else {
                    (1.0, f.arrival_s, 0.0)
                }
            }
            Scheduler::Ssdf => {
                if has_dl {
                    (0.0, f.size_bytes / f.deadline_s, 0.0)
                } else {
                    (1.0, f.arrival_s, 0.0)
                }
            }
            Scheduler::Lsdf => {
                if has_dl {
                    (0.0, -f.size_bytes / f.deadline_s, 0.0)
                } else {
                    (1.0, f.arrival_s, 0.0)
                }
            }
            Scheduler::Fair => {
                let sh = self.shadow.as_ref().expect("fair has a shadow run");
                match sh.status[i] {
                    Status::Done => (0.0, sh.finish[i], 0.0),
                    _ if sh.rate[i] > 0.0 => (0.0, sh.now + (f.size_bytes - sh.sent_now(i)) / sh.rate[i], 0.0),
                    _ => (1.0, f.arrival_s, 0.0),
                }
            }
            Scheduler::Random => (0.0, self.rand_key[i], 0.0),
            Scheduler::External => (0.0, self.ext_score[i], 0.0),
            Scheduler::Ps | Scheduler::Wps | Scheduler::Racs | Scheduler::Sdc | Scheduler::Gtcp(_) => (0.0, 0.0, 0.0),
        }
    }

    /// PIAS queue of a flow with `sent` bytes sent: the number of thresholds it has
    /// reached, within a relative 1e-9 (`tol_of`) of each threshold.
    #[inline]
    pub(crate) fn pias_queue(&self, sent: f64) -> usize {
        self.cfg.pias_thresholds_bytes.partition_point(|&x| x < sent + tol_of(x))
    }

    fn sdc_class(&self, rem: f64) -> usize {
        let [ra, rb] = self.cfg.sdc.thresholds_bytes;
        if rem <= ra + tol_of(ra) {
            0
        } else if rem <= rb + tol_of(rb) {
            1
        } else {
            2
        }
    }

    fn allocate(&mut self) {
        self.stats.allocations += 1;
        if self.las_fast {
            // LAS: the same results as the generic path, cheaper bookkeeping (see las.rs).
            self.allocate_las();
            return;
        }
        let t = self.now;
        // Caps from data availability: a flow that has caught up with its data sends at the data rate.
        for &i in &self.active {
            let i = i as usize;
            let f = &self.flows[i];
            self.cap[i] = if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && self.sent[i] >= self.avail(i, t) - tol_of(f.size_bytes) {
                f.size_bytes / f.data_span_s
            } else {
                INF
            };
        }
        self.res.copy_from_slice(&self.topo.capacity);
        let sched = self.cfg.scheduler.clone();
        match &sched {
            Scheduler::Ps | Scheduler::Wps | Scheduler::Racs | Scheduler::Sdc => {
                for &i in &self.active {
                    let i = i as usize;
                    self.weight[i] = match sched {
                        Scheduler::Ps => 1.0,
                        Scheduler::Wps => self.flows[i].weight,
                        Scheduler::Racs => {
                            let r = &self.cfg.racs;
                            r.w_min + r.w_max * (-r.a_per_byte * (self.flows[i].size_bytes - self.sent[i])).exp()
                        }
                        _ => self.cfg.sdc.weights[self.sdc_class(self.flows[i].size_bytes - self.sent[i])],
                    };
                }
                let paths = Paths { off: &self.path_off, links: &self.path_links };
                self.filler.fill(&self.active, &paths, &self.weight, &self.cap, &mut self.res, &mut self.rate);
            }
            Scheduler::Gtcp(inner) => self.allocate_gtcp(inner),
            _ => self.allocate_priority(&sched),
        }
        self.compute_next_event(&sched);
    }

    fn sort_active_by_key(&mut self, s: &Scheduler, by_path: bool) {
        for k in 0..self.active.len() {
            let i = self.active[k] as usize;
            let (a, b, sl) = self.key(s, i);
            self.k1[i] = a;
            self.k2[i] = b;
            self.slope[i] = sl;
        }
        let (k1, k2, pix, fl) = (&self.k1, &self.k2, &self.path_ix, &self.flows);
        // Stable, adaptive sort: the order changes little from one event to the next.
        // Equal keys fall back to arrival time, then trace order.
        self.active.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            let p = if by_path { pix[a].cmp(&pix[b]) } else { std::cmp::Ordering::Equal };
            p.then(k1[a].total_cmp(&k1[b]))
                .then(k2[a].total_cmp(&k2[b]))
                .then(fl[a].arrival_s.total_cmp(&fl[b].arrival_s))
                .then(a.cmp(&b))
        });
    }

    /// Whether flows with equal keys share (fluid LAS/FB serves equally the flows with the
    /// least attained service; equal external scores share). Every other priority policy
    /// is a strict order: ties go to the earlier arrival, then to the earlier trace row.
    fn ties_share(&self) -> bool {
        let eff = match &self.cfg.scheduler {
            Scheduler::Gtcp(inner) => inner.as_ref(),
            other => other,
        };
        matches!(eff, Scheduler::Las | Scheduler::External)
    }

    #[inline]
    fn same_key(&self, a: usize, b: usize) -> bool {
        self.k1[a] == self.k1[b]
            && (self.k2[a] - self.k2[b]).abs() <= tol_of(self.k2[a].abs().max(self.k2[b].abs())).max(self.key_abs_tol * self.now)
    }

    fn allocate_priority(&mut self, s: &Scheduler) {
        self.sort_active_by_key(s, false);
        // Equal-priority flows share with equal weights.
        for &i in &self.active {
            self.weight[i as usize] = 1.0;
        }
        let n = self.active.len();
        let share = self.ties_share();
        let paths = Paths { off: &self.path_off, links: &self.path_links };
        let mut a = 0;
        while a < n {
            let first = self.active[a] as usize;
            let mut b = a + 1;
            while share && b < n && self.same_key(first, self.active[b] as usize) {
                b += 1;
            }
            self.filler.fill(&self.active[a..b], &paths, &self.weight, &self.cap, &mut self.res, &mut self.rate);
            a = b;
        }
    }

    fn allocate_gtcp(&mut self, inner: &Scheduler) {
        let sh = self.shadow.as_ref().expect("gtcp has a shadow run");
        for &i in &sh.active {
            self.agg[self.path_ix[i as usize] as usize] += sh.rate[i as usize];
        }
        let by_key = !matches!(inner, Scheduler::Ps);
        let share = self.ties_share();
        if by_key {
            self.sort_active_by_key(inner, true);
        } else {
            let pix = &self.path_ix;
            self.active.sort_by(|&a, &b| pix[a as usize].cmp(&pix[b as usize]).then(a.cmp(&b)));
        }
        let n = self.active.len();
        let mut a = 0;
        // Flows on a path the shadow run has no flow on any more: what they have left is
        // the rounding of the flows that finished before them on that path (each finishes
        // within a relative 1e-9 of its size), so the path's aggregate, 0, would hold
        // them forever. They share what the other paths leave of their links.
        let mut orphans: Vec<u32> = Vec::new();
        while a < n {
            let p = self.path_ix[self.active[a] as usize];
            let mut left = self.agg[p as usize];
            let mut b = a;
            while b < n && self.path_ix[self.active[b] as usize] == p {
                b += 1;
            }
            if left <= 0.0 {
                for k in a..b {
                    self.rate[self.active[k] as usize] = 0.0;
                    orphans.push(self.active[k]);
                }
                a = b;
                continue;
            }
            // Inside the path: priority groups in order; equal keys split equally (up to caps).
            let mut g = a;
            while g < b {
                let first = self.active[g] as usize;
                let mut e = g + 1;
                while e < b && (!by_key || (share && self.same_key(first, self.active[e] as usize))) {
                    e += 1;
                }
                let mut members: Vec<usize> = self.active[g..e].iter().map(|&x| x as usize).collect();
                members.sort_by(|&x, &y| self.cap[x].total_cmp(&self.cap[y]));
                let mut cnt = members.len();
                for &m in &members {
                    let r = self.cap[m].min(left / cnt as f64).max(0.0);
                    self.rate[m] = r;
                    left -= r;
                    cnt -= 1;
                }
                g = e;
            }
            a = b;
        }
        let sh = self.shadow.as_ref().unwrap();
        for &i in &sh.active {
            self.agg[self.path_ix[i as usize] as usize] = 0.0;
        }
        if !orphans.is_empty() {
            // (allocate set res to the capacities)
            for &i in &self.active {
                let i = i as usize;
                for p in self.path_off[i] as usize..self.path_off[i + 1] as usize {
                    self.res[self.path_links[p] as usize] -= self.rate[i];
                }
            }
            for &i in &orphans {
                self.weight[i as usize] = 1.0;
            }
            let paths = Paths { off: &self.path_off, links: &self.path_links };
            self.filler.fill(&orphans, &paths, &self.weight, &self.cap, &mut self.res, &mut self.rate);
        }
    }

    /// The earliest event that does not come from the rates: the next arrival, data
    /// becoming fully available, a deadline, or the end of `max_interval_s`.
    pub(crate) fn next_timed_event(&self) -> f64 {
        let mut next = INF;
        if self.next_arr < self.order.len() {
            next = self.flows[self.order[self.next_arr] as usize].arrival_s;
        }
        if let Some(Reverse((OrdF64(td), _))) = self.data_heap.peek() {
            next = next.min(*td);
        }
        if let Some(Reverse((OrdF64(td), _))) = self.deadline_heap.peek() {
            next = next.min(*td);
        }
        if let Some(iv) = self.cfg.max_interval_s {
            if !self.active.is_empty() {
                next = next.min(self.now + iv);
            }
        }
        next
    }

    fn compute_next_event(&mut self, s: &Scheduler) {
        let t = self.now;
        let mut next = self.next_timed_event();
        if matches!(s, Scheduler::Racs) && !self.active.is_empty() {
            next = next.min(t + self.cfg.racs.update_interval_s);
        }
        let eff = match s {
            Scheduler::Gtcp(inner) => inner.as_ref(),
            other => other,
        };
        for &i in &self.active {
            let i = i as usize;
            let r = self.rate[i];
            if r <= 0.0 {
                continue;
            }
            let f = &self.flows[i];
            let rem = f.size_bytes - self.sent[i];
            next = next.min(t + rem / r);
            next = next.min(self.catch_up_at(i, t, self.sent[i], r));
            match eff {
                Scheduler::Pias => {
                    let th = &self.cfg.pias_thresholds_bytes;
                    let s = self.sent[i];
                    let q = self.pias_queue(s);
                    if q < th.len() {
                        // Never at t itself: a gap too small to leave t would come back
                        // at t, unchanged, at every event.
                        next = next.min((t + (th[q] - s).max(0.0) / r).max(t.next_up()));
                    }
                }
                Scheduler::Sdc => {
                    let [ra, rb] = self.cfg.sdc.thresholds_bytes;
                    let target = match self.sdc_class(rem) {
                        2 => rb,
                        1 => ra,
                        _ => -1.0,
                    };
                    if target >= 0.0 {
                        next = next.min((t + (rem - target).max(0.0) / r).max(t.next_up()));
                    }
                }
                _ => {}
            }
        }
        let dynamic = match eff {
            Scheduler::Srpt | Scheduler::Las | Scheduler::Ga(GaInner::Srpt) => true,
            _ => false,
        };
        if dynamic && !matches!(s, Scheduler::Gtcp(_)) {
            next = next.min(self.next_crossing());
        }
        if let Scheduler::Gtcp(_) = s {
            if dynamic {
                next = next.min(self.next_crossing_same_path());
            }
        }
        self.next_event = next;
    }

    /// Earliest time at which two flows that share a link swap priority (their keys
    /// meet), where the one ahead is being served (otherwise the swap changes nothing).
    fn next_crossing(&mut self) -> f64 {
        let nl = self.topo.n_links();
        for c in self.link_cnt.iter_mut() {
            *c = 0;
        }
        for &i in &self.active {
            let (a, b) = (self.path_off[i as usize] as usize, self.path_off[i as usize + 1] as usize);
            for &l in &self.path_links[a..b] {
                self.link_cnt[l as usize + 1] += 1;
            }
        }
        for l in 0..nl {
            self.link_cnt[l + 1] += self.link_cnt[l];
        }
        self.link_lists.resize(self.link_cnt[nl] as usize, 0);
        let mut cursor = self.link_cnt[..nl].to_vec();
        for k in 0..self.active.len() {
            let i = self.active[k];
            let (a, b) = (self.path_off[i as usize] as usize, self.path_off[i as usize + 1] as usize);
            for p in a..b {
                let l = self.path_links[p] as usize;
                self.link_lists[cursor[l] as usize] = i;
                cursor[l] += 1;
            }
        }
        let mut best = INF;
        let share = self.ties_share();
        for l in 0..nl {
            let (a, b) = (self.link_cnt[l] as usize, self.link_cnt[l + 1] as usize);
            // Under a strict order (SRPT) the flow behind moves: on its way to the nearest
            // served flow ahead it passes unserved ones, swaps that change no rate but
            // that no adjacent pair would look past. So each flow is paired with the
            // nearest served flow ahead. (LAS, ties sharing: the one ahead moves, and the
            // first flow it meets is the next one; adjacent pairs.)
            // Under LAS a group of equal keys can hold flows of different rates (capped,
            // or held elsewhere): its fastest flow moves through the group, whose pairs
            // make no event, and meets the flows behind it first. So each flow is also
            // paired with the fastest flow of the group of equal keys before its own (a
            // group: the flows on the link within same_key of its first).
            let mut x = usize::MAX;
            let (mut lead, mut fast, mut prev_fast) = (usize::MAX, usize::MAX, usize::MAX);
            for p in a..b {
                let y = self.link_lists[p] as usize;
                if x != usize::MAX {
                    best = best.min(self.crossing(x, y, share));
                }
                if share {
                    if lead == usize::MAX || !self.same_key(lead, y) {
                        (prev_fast, lead, fast) = (fast, y, y);
                    } else if self.rate[y] > self.rate[fast] {
                        fast = y;
                    }
                    if prev_fast != usize::MAX && prev_fast != x {
                        best = best.min(self.crossing(prev_fast, y, share));
                    }
                }
                if share || self.rate[y] > 0.0 {
                    x = y;
                }
            }
        }
        best
    }

    fn next_crossing_same_path(&self) -> f64 {
        let mut best = INF;
        let share = self.ties_share();
        for w in self.active.windows(2) {
            let (x, y) = (w[0] as usize, w[1] as usize);
            if self.path_ix[x] == self.path_ix[y] {
                best = best.min(self.crossing(x, y, share));
            }
        }
        best
    }

    /// Time at which the key of y (behind) meets the key of x (ahead), if x is served.
    #[inline]
    fn crossing(&self, x: usize, y: usize, share: bool) -> f64 {
        if self.rate[x] <= 0.0 || self.k1[x] != self.k1[y] || (share && self.same_key(x, y)) {
            return INF;
        }
        let sx = self.slope[x] * self.rate[x];
        let sy = self.slope[y] * self.rate[y];
        if sx > sy {
            let dt = (self.k2[y] - self.k2[x]) / (sx - sy);
            if dt >= 0.0 {
                if share {
                    // (LAS) Keys that differ meet at now + dt > now; the floor only makes
                    // the time move. A later time would overshoot: the pair would swap the
                    // lead at every event instead of meeting within same_key's tolerance,
                    // which covers a few ulps of t (`key_abs_tol`), no more.
                    return (self.now + dt).max(self.now.next_up());
                }
                // Equal keys in a strict order (y behind by the tie-break) that y is about
                // to pass: look again a moment later, when y's key is strictly smaller.
                return self.now + dt.max(1e-12 * self.now.max(1.0));
            }
        }
        INF
    }
}
