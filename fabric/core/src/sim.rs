//! The fluid, event-driven simulator.
//!
//! Between two events every active flow sends at a constant rate. Events are flow
//! arrivals, completions, data becoming fully available, a flow catching up with its
//! available data, priority crossings (LAS/SRPT keys meeting on a shared link, PIAS and
//! SDC thresholds), deadline expiries (when flows are terminated), forced
//! re-evaluations, and the events of the shadow fair-sharing run used by `fair` and
//! `gtcp`.
//!
//! `Simulator` is an event core (`Core`: the trace, flow status, admission, event heaps,
//! time) and the run's allocator (`allocator::Allocator`), which sets every active
//! flow's rate and the next event time at each event, in one call. The allocators, each
//! with its own state: `full::FullRecomputation` (every rate from scratch, for every
//! scheduler), `incr::IncrementalPriority`, `fair::IncrementalFairSharing` and
//! `las::LasRecords`; `SimConfig::allocator` picks one.
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{Result, SimError};
use crate::rng::{mix64, SplitMix64};
use crate::sched::{AdmissionPolicy, GaInner, PiasSharing, Scheduler};
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

/// Under `AllocatorChoice::Auto`, `las` on a fabric with a path longer than its records
/// take (`las::MAX_PATH` links) runs the incremental allocator on at least this many
/// hosts, else its wide records (paths of up to `las::WIDE_PATH` links) or the full
/// recomputation. The full recomputation's cost per event follows the active flows, the
/// incremental allocator's the flows an event reaches. On fat-trees with 30,000 web-search
/// flows (CPU s; full recomputation, wide records of 64 bytes, incremental): `FatTree(4)`
/// (16 hosts) at load 0.8 4.4, 1.7, 14.4; `FatTree(8)` (128) at 0.8 33.6, 14.2, 44.7 and
/// at 0.5 5.4, 2.6, 5.0; `FatTree(12)` (432) at 0.5 17.8, 9.0, 5.9 and at 0.8 75.2, -,
/// 32.2; `FatTree(16)` (1,024; 50,000 flows) at 0.8 296, -, 49 (docs/benchmarks.md).
pub const LAS_INCREMENTAL_MIN_HOSTS: usize = 256;

/// Under `AllocatorChoice::Auto`, `wps` whose weights span more than this ratio (largest
/// over smallest) runs the full recomputation where the direct fill does not apply: the
/// incremental fill treats link levels within its slack (1e-11 relative) as one, and a
/// light flow beside a heavy one misses that gap times their weight ratio (1e-6 relative
/// with weights 1e6 apart: docs/reliability.md). Up to 100 the slack stays within 1e-9.
pub const WPS_INCREMENTAL_MAX_WEIGHT_RATIO: f64 = 100.0;

/// Which allocator a run uses to recompute the rates at its events. Every choice gives
/// the same allocation up to rounding, within `incremental_tolerance` of `Full`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllocatorChoice {
    /// The scheduler's own allocator: incremental priority (fifo, srpt, asrpt/ga:*, pias,
    /// edf, ssdf, lsdf, random), fair sharing (ps, wps, and the shadow run of fair and
    /// gtcp:*: the incremental fill, or on fabrics of at most 32 links in the fill the
    /// direct fill, fair.rs; `wps` with weights more than `WPS_INCREMENTAL_MAX_WEIGHT_RATIO`
    /// apart on the full recomputation where the direct fill does not apply), LAS records
    /// (las, on paths of up to 4 links; on longer paths the incremental priority allocator
    /// on at least `LAS_INCREMENTAL_MIN_HOSTS` hosts, else wider records on paths of up to
    /// 10 links), else the full recomputation.
    /// `Simulator::allocator_name` says which.
    #[default]
    Auto,
    /// The full recomputation at every event, for every scheduler: the reference the
    /// other allocators are tested against, and cheaper than the incremental ones over a
    /// few flows.
    Full,
    /// An incremental allocator (priority or fair sharing): `Simulator::new` fails with
    /// `SimError::Unsupported` for a scheduler that has none.
    Incremental,
}

impl AllocatorChoice {
    /// The names accepted by [`AllocatorChoice::parse`], in order.
    pub const NAMES: [&'static str; 3] = ["auto", "full", "incremental"];

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "auto" => Ok(AllocatorChoice::Auto),
            "full" => Ok(AllocatorChoice::Full),
            "incremental" => Ok(AllocatorChoice::Incremental),
            _ => Err(SimError::InvalidConfig(format!("unknown allocator '{name}'; known: {}", Self::NAMES.join(", ")))),
        }
    }
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
    /// How the flows of one PIAS queue share it (`pias` and `gtcp:pias` only): per-flow
    /// FIFO (the default) or max-min fair sharing. `Fair` runs on the full recomputation
    /// (`Auto` picks it; `Incremental` is refused).
    pub pias_sharing: PiasSharing,
    /// How the incomplete flows of the GA transform (`asrpt`, `ga:*`) share their class,
    /// below every complete flow: one after another by arrival (`Fifo`, Algorithm 1's FIFO;
    /// the default) or max-min fair (`Fair`: ASCC's switches keep the incomplete flows'
    /// packets in one first-in-first-out queue that their DCTCP senders share). `Fair` runs
    /// on the full recomputation (`Auto` picks it; `Incremental` is refused).
    pub incomplete_sharing: PiasSharing,
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
            pias_sharing: PiasSharing::Fifo,
            incomplete_sharing: PiasSharing::Fifo,
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
/// (|a - b| <= tol * max(|b|, 1e-3 s): at small times, SRPT's crossing events may be
/// looked at up to 1e-12 s late (`pass_again_at`), which the floor of 1 ms covers). One place for all of
/// them; the fuzzer
/// (`tests/fuzz.rs`) and the differential tests check against these.
/// - `las`: 1e-9. `Auto` (its records fast path, las.rs) is bit-identical to the
///   generic path; `Incremental` (incr.rs with LAS's groups of equal attained service)
///   groups flows at other moments than the full recomputation (within 1e-9 of a key)
///   and advances flows lazily, so its finish times agree within rounding (2.5e-14
///   relative at most on 200,000 web-search flows on the 144-host big switch).
/// - the incremental priority allocator (fifo, srpt, asrpt/ga:*, pias, edf, ssdf, lsdf,
///   random): 1e-9. Its rates are the greedy ones up to rounding (rate changes below
///   1e-12 relative are not committed; PIAS re-places a flow within 1e-12 s of the full
///   recomputation).
/// - `ps`, `wps` (incremental fair sharing, or the direct fill on small fabrics) and the
///   shadow fair-sharing run of `fair` and `gtcp:*`: 1e-7. Its fill compares levels with a relative slack of 1e-11, and a
///   difference at one event carries over to the flows that finish later; on the
///   1M-flow benchmark every completion time is within 1.6e-8.
/// - `racs`, `sdc`, `external`: the same allocator either way (0).
pub fn incremental_tolerance(s: &Scheduler) -> f64 {
    match s {
        Scheduler::Racs | Scheduler::Sdc | Scheduler::External => 0.0,
        Scheduler::Ps | Scheduler::Wps | Scheduler::Fair | Scheduler::Gtcp(_) => 1e-7,
        _ => 1e-9,
    }
}

/// The most flows a simulator takes (2^29 = 536,870,912): flow and path-link indices
/// are 32-bit (a path has up to 4 links), with u32::MAX reserved as "none".
pub const MAX_FLOWS: usize = 1 << 29;

/// The shortest `max_interval_s` (one nanosecond).
pub const MIN_INTERVAL_S: f64 = 1e-9;

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

/// When to look again at a flow y that is behind a flow x at an equal (or nearly equal)
/// key and whose key falls `slope_gap` bytes per second faster, so that y passes x with a
/// key strictly below: at `now + dt` when the keys meet later than that; else once the
/// gap between the keys exceeds their rounding (16 ulps of `scale`, the largest of the
/// two keys and the two flows' sizes), at least 4 ulps of `now` later (so that time
/// moves), and at most 1e-12 s later (1e-12 of `now` from 1 s on: the fixed delay this
/// replaced). Until then y keeps its place behind x, so the shorter the delay, the nearer
/// the exact schedule: with the fixed picosecond the two allocators' finish times lay
/// 1e-12 s apart where one of them looked again and the other did not (the fuzzer's
/// seeds 4, 76, 93, 145, 149, 165, 172 and 175; docs/reliability.md). A delay too short
/// for the rounding only makes one more look again, as the fixed one did whenever the
/// gap grew slowly.
#[inline]
pub(crate) fn pass_again_at(now: f64, dt: f64, slope_gap: f64, scale: f64) -> f64 {
    let most = 1e-12 * now.max(1.0);
    let enough = (16.0 * f64::EPSILON * scale / slope_gap).max(4.0 * f64::EPSILON * now);
    now + dt.max(enough.min(most))
}

/// Aggregate counters of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub events: u64,
    pub allocations: u64,
}

/// The fluid simulator: its event core and the run's allocator. `step`/`run` advance
/// the core from event to event; at each, the allocator sets every active flow's rate
/// and the next event time, in one call (`Allocator::allocate`).
#[derive(Debug, Clone)]
pub struct Simulator {
    /// The event core: the trace, each flow's status, destination admission, the event
    /// heaps and simulated time.
    core: Core,
    /// The run's allocator, picked once from `SimConfig::allocator` and the scheduler.
    allocator: Allocators,
}

/// The event core of the fluid simulator: the trace, each flow's status, destination
/// admission, the event heaps and simulated time. The allocators read and write the
/// flows' rates (and, under the incremental ones, their bytes sent) here; everything
/// else an allocator needs is its own state.
#[derive(Debug, Clone)]
pub(crate) struct Core {
    // ----- the trace (read-only after construction) -----
    /// The fabric: hosts, links and their capacities, routing.
    topo: Topology,
    /// The run's configuration (the PIAS thresholds may change during a run).
    cfg: SimConfig,
    /// The flows, in trace order (a flow's index is its trace row).
    flows: Vec<FlowSpec>,
    /// Flow i's links are `path_links[path_off[i]..path_off[i + 1]]`.
    path_off: Vec<u32>,
    /// Every flow's path links, concatenated (see `path_off`).
    path_links: Vec<u32>,
    /// Each flow's path as a dense index: equal paths, equal indices (gtcp's per-path sharing).
    path_id: Vec<u32>,
    /// Each flow's fixed path delay, s (`Simulator::path_delay_s`).
    path_delay_s: Vec<f64>,
    /// Each flow's FCT alone on an idle fabric, s (`Simulator::ideal_fct_s`).
    ideal_fct_s: Vec<f64>,
    /// The flow indices in (arrival, index) order.
    arrival_order: Vec<u32>,
    /// The position in `arrival_order` of the next flow to arrive.
    next_arrival: usize,

    // ----- flow status -----
    /// Bytes each flow has sent: up to date at `now` (full recomputation, LAS records),
    /// or at `sent_at` (incremental allocators; `sent_now` reads either).
    sent: Vec<f64>,
    /// Each flow's current rate, bytes/s.
    rate: Vec<f64>,
    /// Each flow's cap, bytes/s: its data rate once it has caught up with its data, else INF.
    cap: Vec<f64>,
    /// Each flow's weight in a fill: set per scheduler at each full recomputation; 1 under
    /// LAS records; the flow's own weight (`wps`) or 1 under incremental fair sharing.
    weight: Vec<f64>,
    /// Each flow's status: pending, waiting for admission, active, done or terminated.
    status: Vec<Status>,
    /// Each flow's finish time (NaN until it finishes).
    finish: Vec<f64>,
    /// Whether all of each flow's bytes are available (data span over).
    data_complete: Vec<bool>,
    /// The `external` scheduler's score of each flow (lower first; `set_score`).
    external_score: Vec<f64>,
    /// The `random` scheduler's fixed random key of each flow (from the seed).
    random_key: Vec<f64>,
    /// The active flows (in priority order after a full recomputation; in activation
    /// order, with `active_pos`, under the incremental allocators).
    active: Vec<u32>,

    // ----- destination admission -----
    /// Per destination, the flows waiting for admission, in arrival order.
    waiting: Vec<VecDeque<u32>>,
    /// Per destination, its active flows (at most `AdmissionConfig::k`).
    active_per_dst: Vec<u32>,
    /// Destinations where a slot may have freed or a request arrived: to check for admissions.
    dsts_to_admit: VecDeque<usize>,
    /// The admission policy's random draws (`random`), one stream per destination: the
    /// draws at one destination do not depend on when decisions at others come (two
    /// destinations deciding at the same instant, in an order the allocators' rounding
    /// can set).
    admission_rngs: Vec<SplitMix64>,

    // ----- events and time -----
    /// Deadline expiries (with `terminate_missed`): (time, flow), earliest first.
    deadline_heap: BinaryHeap<Reverse<(OrdF64, u32)>>,
    /// Flows whose data becomes fully available: (time, flow), earliest first.
    data_heap: BinaryHeap<Reverse<(OrdF64, u32)>>,
    /// Simulated time, s.
    now: f64,
    /// The rates must be recomputed before the next event time is known (an event
    /// happened, or a score or threshold changed).
    rates_stale: bool,
    /// The next event time, as of the last allocation.
    next_event: f64,
    /// Flows arrived, finished, were admitted or terminated, or became complete since
    /// `step` last looked (`Outcome::FlowsChanged`, progress guard).
    flows_changed: bool,
    /// Consecutive events at the current time with no flow-set change (progress guard).
    events_without_progress: u64,
    /// The shadow fair-sharing run (`ps`) whose rates or finish times `fair` and `gtcp:*` read.
    shadow: Option<Box<Simulator>>,
    /// Counters of the run.
    stats: Stats,

    // ----- lazy advancement (the incremental allocators) -----
    /// Flows advance lazily (the incremental allocators): flow i's bytes sent are
    /// `sent[i] + rate[i] * (now - sent_at[i])`, and `sent` is brought up to date only
    /// when its rate changes. Otherwise `sent` is up to date at `now`.
    lazy: bool,
    /// Under `lazy`, when each flow's `sent` was last brought up to date.
    sent_at: Vec<f64>,
    /// Each active flow's position in `active` (under `lazy`; `u32::MAX` if not active).
    active_pos: Vec<u32>,
}

mod allocator;
mod evheap;
mod fair;
mod full;
mod incr;
mod las;

use allocator::{Allocator, Allocators};

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

/// `x`'s bits mapped to an unsigned integer in `f64::total_cmp`'s order (flip every bit of
/// a negative, the sign bit of the rest): keys that sort and compare as integers.
#[inline]
pub(crate) fn total_order_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
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

impl Core {


    // ----- accessors -----





    fn can_admit(&self, d: usize) -> bool {
        let k = self.cfg.admission.as_ref().map_or(usize::MAX, |a| a.k);
        !self.waiting[d].is_empty() && (self.active_per_dst[d] as usize) < k
    }


    // ----- the main loop -----





    /// The progress guard's error: names the scheduler, the allocator, the simulated
    /// time, what did not progress and the flows involved (trace rows).
    pub(crate) fn no_progress(&self, allocator: &str, what: &str, flows: &[u32]) -> SimError {
        let mut rows: Vec<u32> = flows.to_vec();
        rows.sort_unstable();
        rows.dedup();
        let shown = rows.len().min(10);
        let mut more = if rows.len() > shown { format!(" and {} more", rows.len() - shown) } else { String::new() };
        if let Some(iv) = self.cfg.max_interval_s {
            if self.now + iv == self.now {
                more += &format!(
                    " (max_interval_s = {iv:e} s is below the resolution of the simulated clock at this time, \
                     {:e} s: give a longer one)",
                    f64::EPSILON * self.now
                );
            }
        }
        SimError::Stalled(format!(
            "no progress under scheduler '{}' ({}) at simulated time t = {:.17e} s: {what}; flows involved (trace rows): {:?}{more}; {} active flows",
            self.cfg.scheduler.name(),
            allocator,
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

    /// Flow i's cap now: its data rate once it has caught up with its data, else INF
    /// (under `lazy`, from its bytes sent by now).
    pub(crate) fn cap_now(&self, i: usize) -> f64 {
        let f = &self.flows[i];
        let t = self.now;
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && self.caught_up(i, t, self.sent_now(i)) {
            f.size_bytes / f.data_span_s
        } else {
            INF
        }
    }

    /// Whether flow i, with a data span not over at t and `sent` bytes sent by t, has
    /// caught up with its data (so that it sends at its data rate). Every allocator asks
    /// this at its own events, so the answer must not depend on which events it has:
    /// - a flow sending at its data rate (up to rounding: capped at the last allocation)
    ///   stays caught up within 1e-9 of its size (`tol_of`): its bytes sent, advanced at
    ///   that rate, drift from the available bytes by a rounding per update;
    /// - any other flow has caught up once its bytes sent reach the available bytes up to
    ///   the rounding of the two (16 ulps of its size, or what it and its data send in 8
    ///   ulps of t): at its catch-up event, which every allocator schedules, and not 1e-9
    ///   of its size earlier, at whichever event an allocator happened to have then
    ///   (`FUZZ_SEED=108`).
    #[inline]
    pub(crate) fn caught_up(&self, i: usize, t: f64, sent: f64) -> bool {
        let f = &self.flows[i];
        let (dr, r) = (f.size_bytes / f.data_span_s, self.rate[i]);
        let tol = if (r - dr).abs() <= 1e-12 * dr {
            tol_of(f.size_bytes)
        } else {
            (16.0 * f64::EPSILON * f.size_bytes).max((r + dr) * t.abs() * 8.0 * f64::EPSILON)
        };
        sent >= self.avail(i, t) - tol
    }

    /// Bytes sent by flow i by now (the incremental allocator advances flows lazily).
    #[inline(always)]
    pub(crate) fn sent_now(&self, i: usize) -> f64 {
        if !self.lazy || self.rate[i] == 0.0 {
            return self.sent[i];
        }
        let f = &self.flows[i];
        let s = (self.sent[i] + self.rate[i] * (self.now - self.sent_at[i])).min(f.size_bytes);
        if f.data_span_s > 0.0 {
            s.min(self.avail(i, self.now))
        } else {
            s
        }
    }


    /// Moves time to t, every active flow sending at its rate (capped by its data);
    /// for the allocators under which `sent` is up to date at `now`.
    fn advance_fluid(&mut self, t: f64) {
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


    /// Whether flow i, with `sent` bytes sent by t, is done at t: its last bytes within the
    /// finish tolerance, and its data all arrived (the test every allocator and the deadline
    /// check make).
    #[inline]
    pub(crate) fn done_at(&self, i: usize, t: f64, sent: f64) -> bool {
        self.flows[i].size_bytes - sent <= self.finish_tol(i, t) && self.complete_or_due(i, t)
    }

    /// Finishes the active flows whose bytes are all sent and whose data has arrived by
    /// t (with `sent` up to date at t); true if any did. They stay in `active` until
    /// `retain_active`.
    fn finish_due(&mut self, t: f64) -> bool {
        let mut any_done = false;
        for k in 0..self.active.len() {
            let i = self.active[k] as usize;
            if self.done_at(i, t, self.sent[i]) {
                self.finish_now(i, t);
                any_done = true;
            }
        }
        any_done
    }

    /// Flow i finishes at t: all its bytes sent, its admission slot freed (it stays in
    /// `active` until `retain_active`).
    pub(crate) fn finish_now(&mut self, i: usize, t: f64) {
        self.sent[i] = self.flows[i].size_bytes;
        self.status[i] = Status::Done;
        self.finish[i] = t;
        self.release_slot(i);
    }

    /// Drops the flows that are no longer active from `active`, keeping the order.
    fn retain_active(&mut self) {
        let st = &self.status;
        self.active.retain(|&i| st[i as usize] == Status::Active);
    }

    /// A flow with all bytes sent finishes once all its data has arrived.
    #[inline]
    pub(crate) fn complete_or_due(&self, i: usize, t: f64) -> bool {
        let f = &self.flows[i];
        self.data_complete[i] || t >= f.arrival_s + f.data_span_s - tol_of(t) * 1e-3
    }

    fn release_slot(&mut self, i: usize) {
        if self.cfg.admission.is_some() {
            let d = self.flows[i].dst;
            self.active_per_dst[d] -= 1;
            self.dsts_to_admit.push_back(d);
        }
    }


    fn choose(&mut self, p: &AdmissionPolicy, d: usize, win: &[u32]) -> usize {
        choose_admission(p, &self.flows, win, &mut self.admission_rngs[d])
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
        self.key_by(s, i, |_, sent| self.pias_queue(sent))
    }

    /// `key`, with PIAS's queue of flow i (with `sent` bytes sent) given by `pias_queue`:
    /// the incremental priority allocator places a flow by the queue it holds for it.
    #[inline]
    pub(crate) fn key_by(&self, s: &Scheduler, i: usize, pias_queue: impl Fn(usize, f64) -> usize) -> (f64, f64, f64) {
        let f = &self.flows[i];
        let sent = self.sent_now(i);
        let rem = f.size_bytes - sent;
        let has_dl = !f.deadline_s.is_nan();
        match s {
            Scheduler::Fifo => (0.0, f.arrival_s, 0.0),
            Scheduler::Srpt => (0.0, rem, -1.0),
            Scheduler::Las => (0.0, sent, 1.0),
            // Sharing inside a queue: every flow of a queue has the same key (and the
            // full recomputation fills equal keys together, `ties_share`).
            Scheduler::Pias if self.cfg.pias_sharing == PiasSharing::Fair => (pias_queue(i, sent) as f64, 0.0, 0.0),
            Scheduler::Pias => (pias_queue(i, sent) as f64, f.arrival_s, 0.0),
            Scheduler::Ga(inner) => {
                if self.data_complete[i] {
                    match inner {
                        GaInner::Srpt => (0.0, rem, -1.0),
                        GaInner::Ssdf if has_dl => (0.0, f.size_bytes / f.deadline_s, 0.0),
                        GaInner::Lsdf if has_dl => (0.0, -f.size_bytes / f.deadline_s, 0.0),
                        _ => (1.0, f.arrival_s, 0.0),
                    }
                } else if self.cfg.incomplete_sharing == PiasSharing::Fair {
                    // one key: the full recomputation fills them together (`FullRecompute`)
                    (2.0, 0.0, 0.0)
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
            Scheduler::Fair => match self.shadow.as_ref().expect("fair has a shadow run").core.projected_finish(i) {
                Some(t) => (0.0, t, 0.0),
                None => (1.0, f.arrival_s, 0.0),
            },
            Scheduler::Random => (0.0, self.random_key[i], 0.0),
            Scheduler::External => (0.0, self.external_score[i], 0.0),
            Scheduler::Ps | Scheduler::Wps | Scheduler::Racs | Scheduler::Sdc | Scheduler::Gtcp(_) => (0.0, 0.0, 0.0),
        }
    }

    /// Flow i's finish time if it is done, else when it would finish at its current rate,
    /// or None if it has no rate (what `fair` reads of its shadow fair-sharing run).
    #[inline]
    pub(crate) fn projected_finish(&self, i: usize) -> Option<f64> {
        match self.status[i] {
            Status::Done => Some(self.finish[i]),
            _ if self.rate[i] > 0.0 => Some(self.now + (self.flows[i].size_bytes - self.sent_now(i)) / self.rate[i]),
            _ => None,
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

    /// The earliest event that does not come from the rates: the next arrival, data
    /// becoming fully available, a deadline, or the end of `max_interval_s`.
    pub(crate) fn next_timed_event(&self) -> f64 {
        let mut next = INF;
        if self.next_arrival < self.arrival_order.len() {
            next = self.flows[self.arrival_order[self.next_arrival] as usize].arrival_s;
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
        if let Some(l) = topo.capacity.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(SimError::InvalidConfig(format!(
                "link {l} ({}) has a capacity of {} bytes/s: capacities must be positive and finite (in Gbps, below about \
                 1.8e299: Gbps x 1e9 / 8 overflows beyond)",
                topo.name(l),
                topo.capacity[l]
            )));
        }
        if h > crate::topology::MAX_HOSTS || Some(topo.n_links()) != topo.expected_links() {
            return Err(SimError::InvalidConfig(format!(
                "topology with {h} hosts and {} links: at most {} hosts and {} links, as many as its kind has",
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
        Simulator::check_config(&cfg, &flows)?;
        topo.check_pinned(&flows)?;
        let mut path_off = Vec::with_capacity(n + 1);
        let mut path_links = Vec::with_capacity(2 * n);
        let mut path_ids = Vec::with_capacity(n);
        let mut path_delay = Vec::with_capacity(n);
        let mut ideal = Vec::with_capacity(n);
        let link_delays = topo.has_link_delays();
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
            let links = &path_links[start..];
            let bottleneck = links.iter().map(|&l| topo.capacity[l as usize]).fold(INF, f64::min);
            // the delay per hop times the number of links, plus the links' own delays
            let per_hop = cfg.delay_per_hop_s * links.len() as f64;
            let delay = if link_delays { per_hop + links.iter().map(|&l| topo.link_delay_s(l as usize)).sum::<f64>() } else { per_hop };
            path_delay.push(delay);
            let alone = (f.size_bytes / bottleneck).max(f.data_span_s) + delay;
            if !alone.is_finite() {
                // (links so slow that the flow alone would take forever: it stalled at its start)
                return Err(SimError::InvalidFlow {
                    row: i,
                    field: "size_bytes",
                    message: format!(
                        "{:e} bytes over its slowest link ({:e} bytes/s) would take {alone:e} s alone: beyond the \
                         simulator's clock (faster links or a smaller flow)",
                        f.size_bytes, bottleneck
                    ),
                });
            }
            ideal.push(alone);
        }
        // Dense path indices (same links <=> same index).
        let (path_ix, n_paths) = dense_ranks(&path_ids);
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
        // LAS under Auto: its records on paths of up to 4 links; on longer paths the
        // incremental allocator on a fabric of at least LAS_INCREMENTAL_MIN_HOSTS hosts,
        // else the wide records (paths of up to 10 links), else the full recomputation.
        let las_auto = cfg.allocator == AllocatorChoice::Auto && matches!(cfg.scheduler, Scheduler::Las);
        // A pass over every flow's path: only where the choice needs it.
        let longest_path = if las_auto { (0..n).map(|i| (path_off[i + 1] - path_off[i]) as usize).max().unwrap_or(0) } else { 0 };
        let large = topo.n_hosts >= LAS_INCREMENTAL_MIN_HOSTS;
        let las_fast = las_auto && longest_path <= las::MAX_PATH;
        let las_wide = las_auto && !las_fast && !large && longest_path <= las::WIDE_PATH;
        // LAS on the incremental priority allocator (with its groups of equal keys).
        let las_incr = matches!(cfg.scheduler, Scheduler::Las)
            && (cfg.allocator == AllocatorChoice::Incremental || (las_auto && !las_fast && large));
        // LAS shares with equal weights (the generic path sets them at every allocation).
        let weight = flows.iter().map(|f| if las_fast || las_wide || las_incr { 1.0 } else { f.weight }).collect();
        let fair = !full && fair::applies(&cfg.scheduler);
        if fair && n >= 1 << 30 {
            return Err(SimError::InvalidConfig(format!("fair sharing takes at most 2^30 - 1 flows, got {n}")));
        }
        // PIAS with sharing inside a queue has no incremental allocator (incr.rs keeps a
        // strict order per link): the full recomputation runs it.
        let pias_fair = cfg.pias_sharing == PiasSharing::Fair;
        let incomplete_fair = cfg.incomplete_sharing == PiasSharing::Fair;
        let incremental = !full && ((incr::applies(&cfg.scheduler) && !pias_fair && !incomplete_fair) || fair || las_incr);
        if cfg.allocator == AllocatorChoice::Incremental && !incremental {
            return Err(SimError::Unsupported(format!(
                "scheduler '{}'{} has no incremental allocator (AllocatorChoice::Incremental); use Auto or Full",
                cfg.scheduler.name(),
                if pias_fair {
                    " with pias_sharing='fair'"
                } else if incomplete_fair {
                    " with incomplete_sharing='fair'"
                } else {
                    ""
                }
            )));
        }
        let key_abs_tol = match &cfg.scheduler {
            Scheduler::Las => 8.0 * f64::EPSILON * topo.capacity.iter().fold(0.0, |a: f64, &c| a.max(c)),
            Scheduler::Gtcp(inner) if matches!(**inner, Scheduler::Las) => {
                8.0 * f64::EPSILON * topo.capacity.iter().fold(0.0, |a: f64, &c| a.max(c))
            }
            _ => 0.0,
        };
        let allocator = if fair {
            let weighted = matches!(cfg.scheduler, Scheduler::Wps);
            let a = fair::IncrementalFairSharing::new(&path_off, &path_links, &topo.capacity, weighted, cfg.allocator == AllocatorChoice::Auto)?;
            let spread = || {
                let (lo, hi) = flows.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), f| (lo.min(f.weight), hi.max(f.weight)));
                hi / lo
            };
            if weighted && !a.direct && spread() > WPS_INCREMENTAL_MAX_WEIGHT_RATIO {
                if cfg.allocator == AllocatorChoice::Incremental {
                    return Err(SimError::Unsupported(format!(
                        "allocator 'incremental' under wps with weights {:e} apart: the incremental fill keeps wps within \
                         1e-9 of the exact allocation only for weights at most {WPS_INCREMENTAL_MAX_WEIGHT_RATIO} apart (a \
                         light flow beside a heavy one misses its rate by up to 1e-6 relative at 1e6); use allocator \
                         'auto' (it runs the full recomputation here) or 'full'",
                        spread()
                    )));
                }
                Allocators::Full(full::FullRecomputation::new(n, n_paths, &topo.capacity, key_abs_tol)?)
            } else {
                Allocators::FairSharing(a)
            }
        } else if las_incr {
            Allocators::Priority(incr::IncrementalPriority::new_las(n, &topo.capacity, key_abs_tol)?)
        } else if incremental {
            Allocators::Priority(incr::IncrementalPriority::new(n, n_links, &cfg.scheduler)?)
        } else if las_fast {
            Allocators::Las(las::LasRecords::new(&order, &topo.capacity, key_abs_tol)?)
        } else if las_wide {
            Allocators::LasWide(las::LasRecords::new(&order, &topo.capacity, key_abs_tol)?)
        } else {
            Allocators::Full(full::FullRecomputation::new(n, n_paths, &topo.capacity, key_abs_tol)?)
        };
        let core = Core {
            lazy: allocator.advances_lazily(),
            sent_at: vec![0.0; n],
            active_pos: vec![u32::MAX; n],
            path_off,
            path_links,
            path_id: path_ix,
            path_delay_s: path_delay,
            ideal_fct_s: ideal,
            arrival_order: order,
            next_arrival: 0,
            sent: vec![0.0; n],
            rate: vec![0.0; n],
            cap: vec![INF; n],
            weight,
            status: vec![Status::Pending; n],
            finish: vec![f64::NAN; n],
            data_complete: flows.iter().map(|f| f.data_span_s == 0.0).collect(),
            external_score: vec![0.0; n],
            random_key: rand_key,
            active: Vec::new(),
            waiting: filled(h, VecDeque::new(), "per-host queues")?,
            active_per_dst: filled(h, 0, "per-host state")?,
            dsts_to_admit: VecDeque::new(),
            deadline_heap: BinaryHeap::new(),
            data_heap: BinaryHeap::new(),
            now: 0.0,
            rates_stale: true,
            next_event: 0.0,
            flows_changed: false,
            events_without_progress: 0,
            admission_rngs: admission_streams(cfg.seed, h)?,
            shadow,
            stats: Stats::default(),
            topo,
            cfg,
            flows,
        };
        Ok(Simulator { core, allocator })
    }


    fn check_config(cfg: &SimConfig, flows: &[FlowSpec]) -> Result<()> {
        if !(cfg.delay_per_hop_s.is_finite() && cfg.delay_per_hop_s >= 0.0) {
            return Err(SimError::InvalidConfig(format!("delay per hop must be >= 0, got {}", cfg.delay_per_hop_s)));
        }
        if let Some(iv) = cfg.max_interval_s {
            // Below a nanosecond the re-evaluations would creep (1e-300 s apart near t = 0:
            // a run that never ends) or fall below the clock's resolution.
            if !(iv.is_finite() && iv >= MIN_INTERVAL_S) {
                return Err(SimError::InvalidConfig(format!(
                    "max_interval_s must be at least {MIN_INTERVAL_S:e} s (one nanosecond) and finite, got {iv:e}"
                )));
            }
        }
        let th = &cfg.pias_thresholds_bytes;
        if th.iter().any(|t| !(t.is_finite() && *t > 0.0)) || th.windows(2).any(|w| w[1] <= w[0]) {
            return Err(SimError::InvalidConfig(format!(
                "PIAS thresholds must be positive, finite and strictly increasing, got {th:?}"
            )));
        }
        let is_pias = match &cfg.scheduler {
            Scheduler::Pias => true,
            Scheduler::Gtcp(inner) => matches!(**inner, Scheduler::Pias),
            _ => false,
        };
        if cfg.incomplete_sharing != PiasSharing::Fifo && !matches!(cfg.scheduler, Scheduler::Ga(_)) {
            return Err(SimError::InvalidConfig(format!(
                "incomplete_sharing='{}' applies to the GA transform (asrpt, ga:srpt, ga:ssdf, ga:lsdf; under gtcp, \
                 which takes no data spans, no flow is incomplete), not '{}'",
                cfg.incomplete_sharing.name(),
                cfg.scheduler.name()
            )));
        }
        if cfg.pias_sharing != PiasSharing::Fifo && !is_pias {
            return Err(SimError::InvalidConfig(format!(
                "pias_sharing='{}' applies to the pias scheduler (and gtcp:pias), not '{}'",
                cfg.pias_sharing.name(),
                cfg.scheduler.name()
            )));
        }
        // With sharing inside a queue, no threshold is one queue: `ps`. Under per-flow
        // FIFO it would be `fifo`, which has its own name.
        if matches!(cfg.scheduler, Scheduler::Pias) && th.is_empty() && cfg.pias_sharing == PiasSharing::Fifo {
            return Err(SimError::InvalidConfig(
                "pias needs at least one threshold (with pias_sharing='fair', none is one queue: ps)".into(),
            ));
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
        if let Scheduler::Gtcp(inner) = &cfg.scheduler {
            if matches!(**inner, Scheduler::Fair) {
                return Err(SimError::Unsupported(
                    "gtcp:fair is SCHED_TCP's FAIR at the sender on the packet model (model='packet', transport tcp or dctcp); \
                     the fluid model's fair is that policy on a single path (on several paths it orders all flows by their \
                     finish in one shadow fair-sharing run)"
                        .into(),
                ));
            }
            if cfg.admission.is_some() || cfg.terminate_missed {
                return Err(SimError::Unsupported("gtcp with destination admission or deadline termination".into()));
            }
            if let Some(r) = flows.iter().position(|f| f.data_span_s > 0.0) {
                return Err(SimError::Unsupported(format!(
                    "gtcp with data_span_s > 0 (row {r}): a path could not always use the rate fair sharing gives it"
                )));
            }
        }
        Ok(())
    }

    pub fn now(&self) -> f64 {
        self.core.now
    }

    /// The allocator this run uses (`SimConfig::allocator` and the scheduler decide it),
    /// as in error messages, e.g. "incremental fair-sharing allocator".
    pub fn allocator_name(&self) -> &'static str {
        self.allocator.name()
    }

    pub fn n_flows(&self) -> usize {
        self.core.flows.len()
    }

    pub fn flow(&self, i: usize) -> &FlowSpec {
        &self.core.flows[i]
    }

    pub fn status(&self, i: usize) -> Status {
        self.core.status[i]
    }

    pub fn sent_bytes(&self, i: usize) -> f64 {
        self.core.sent_now(i)
    }

    pub fn rate_bytes_per_s(&self, i: usize) -> f64 {
        self.core.rate[i]
    }

    pub fn is_complete(&self, i: usize) -> bool {
        self.core.data_complete[i]
    }

    pub fn active(&self) -> &[u32] {
        &self.core.active
    }

    pub fn topology(&self) -> &Topology {
        &self.core.topo
    }

    pub fn stats(&self) -> &Stats {
        &self.core.stats
    }

    pub fn path(&self, i: usize) -> &[u32] {
        &self.core.path_links[self.core.path_off[i] as usize..self.core.path_off[i + 1] as usize]
    }

    /// Flows waiting at a destination, in arrival order.
    pub fn waiting(&self, dst: usize) -> &VecDeque<u32> {
        &self.core.waiting[dst]
    }

    pub fn active_at_dst(&self, dst: usize) -> usize {
        self.core.active_per_dst[dst] as usize
    }

    pub fn finish_s(&self) -> &[f64] {
        &self.core.finish
    }

    pub fn sent(&self) -> Vec<f64> {
        (0..self.core.flows.len()).map(|i| self.core.sent_now(i)).collect()
    }

    pub fn terminated(&self) -> Vec<bool> {
        self.core.status.iter().map(|s| *s == Status::Terminated).collect()
    }

    /// Fixed path delay of flow i: the delay per hop times the number of links, plus the
    /// links' own delays (a graph's per-link delays); computed once per flow, at construction.
    #[inline]
    pub fn path_delay_s(&self, i: usize) -> f64 {
        self.core.path_delay_s[i]
    }

    /// FCT of the flow alone on an idle fabric: max(size / bottleneck rate, data span) + path
    /// delay (computed once per flow, at construction).
    #[inline]
    pub fn ideal_fct_s(&self, i: usize) -> f64 {
        self.core.ideal_fct_s[i]
    }

    /// FCT (finish - arrival + path delay); NaN if not finished.
    pub fn fct_s(&self, i: usize) -> f64 {
        self.core.finish[i] - self.core.flows[i].arrival_s + self.path_delay_s(i)
    }

    /// Bytes carried by each link over the run so far.
    pub fn link_bytes(&self) -> Vec<f64> {
        let mut b = vec![0.0; self.core.topo.n_links()];
        for i in 0..self.core.flows.len() {
            for &l in self.path(i) {
                b[l as usize] += self.core.sent_now(i);
            }
        }
        b
    }

    /// Sets the priority score of flow i for the `external` scheduler (lower first).
    pub fn set_score(&mut self, i: usize, score: f64) -> Result<()> {
        if i >= self.core.flows.len() {
            return Err(SimError::InvalidAction(format!("flow index {i} out of range ({} flows)", self.core.flows.len())));
        }
        if !score.is_finite() {
            return Err(SimError::InvalidAction(format!("score of flow {i} must be finite, got {score}")));
        }
        self.core.external_score[i] = score;
        self.core.rates_stale = true;
        Ok(())
    }

    /// Replaces the PIAS demotion thresholds from now on (the queue-threshold tuning
    /// environment), under any allocator: the incremental one re-places the flows whose
    /// queue changes (`Allocator::thresholds_changed`).
    pub fn set_pias_thresholds(&mut self, th: Vec<f64>) -> Result<()> {
        if th.is_empty() || th.iter().any(|t| !(t.is_finite() && *t > 0.0)) || th.windows(2).any(|w| w[1] <= w[0]) {
            return Err(SimError::InvalidAction(format!(
                "PIAS thresholds must be non-empty, positive, finite and strictly increasing, got {th:?}"
            )));
        }
        self.core.cfg.pias_thresholds_bytes = th;
        self.allocator.thresholds_changed(&mut self.core);
        self.core.rates_stale = true;
        Ok(())
    }

    /// The destination whose admission decision is pending (external admission only).
    pub fn pending_decision(&self) -> Option<usize> {
        let a = self.core.cfg.admission.as_ref()?;
        if a.policy != AdmissionPolicy::External {
            return None;
        }
        self.core.dsts_to_admit.iter().copied().find(|&d| self.core.can_admit(d))
    }

    /// The requests an admission decision at `dst` chooses from (first `window` waiting).
    pub fn window(&self, dst: usize) -> Vec<u32> {
        self.core.waiting[dst].iter().take(self.window_len(dst)).copied().collect()
    }

    /// Length of [`Simulator::window`] (without building it).
    fn window_len(&self, dst: usize) -> usize {
        let w = self.core.cfg.admission.as_ref().map_or(0, |a| a.window);
        let q = &self.core.waiting[dst];
        if w == 0 { q.len() } else { w.min(q.len()) }
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
        let win = self.window_len(dst);
        if position >= win {
            return Err(SimError::InvalidAction(format!(
                "position {position} outside the window of {win} waiting requests at destination {dst}"
            )));
        }
        self.admit_at(dst, position);
        Ok(())
    }

    fn admit_at(&mut self, dst: usize, pos: usize) {
        let i = self.core.waiting[dst].remove(pos).expect("position checked");
        self.activate(i as usize);
        self.core.active_per_dst[dst] += 1;
        self.core.rates_stale = true;
        self.core.flows_changed = true;
    }

    /// Runs until every flow is done.
    pub fn run(&mut self) -> Result<()> {
        while !self.run_bounded(u64::MAX)? {}
        Ok(())
    }

    /// [`Simulator::run`] in pieces: true once the run is done, false after about
    /// `max_times` event times (it pauses between event times, so a run in pieces is the
    /// same bit for bit; the Python bindings look for Ctrl-C between pieces).
    pub fn run_bounded(&mut self, max_times: u64) -> Result<bool> {
        loop {
            match self.step_bounded(INF, max_times)? {
                None => return Ok(false),
                Some(Outcome::Done) => return Ok(true),
                Some(Outcome::Decision { dst }) => {
                    return Err(SimError::InvalidConfig(format!(
                        "external admission decision pending at destination {dst}: drive the simulator with step()/admit()"
                    )))
                }
                Some(_) => {}
            }
        }
    }

    /// Advances the simulation until it is done, a decision is needed, the flow set
    /// changed (with `pause_on_flow_change`), or simulated time reaches `until`.
    pub fn step(&mut self, until: f64) -> Result<Outcome> {
        Ok(self.step_bounded(until, u64::MAX)?.unwrap_or(Outcome::TimeReached))
    }

    /// [`Simulator::step`] that also returns `None` after `max_times` event times
    /// (at least one). It pauses between two event times, where the loop keeps no state
    /// of its own, so a run in bounded steps is the same bit for bit as one `run`
    /// (unlike a pause at a time `until` between events, which advances every flow to
    /// `until`). A progress display uses it after the last arrival.
    pub fn step_bounded(&mut self, until: f64, max_times: u64) -> Result<Option<Outcome>> {
        let mut times = 0u64;
        loop {
            if let Some(dst) = self.pending_decision() {
                return Ok(Some(Outcome::Decision { dst }));
            }
            if self.core.flows_changed && self.core.cfg.pause_on_flow_change {
                self.core.flows_changed = false;
                return Ok(Some(Outcome::FlowsChanged));
            }
            self.core.flows_changed = false;
            // The shadow run first: this run's rates read its state.
            let t_shadow = match self.core.shadow.as_mut() {
                Some(sh) => sh.peek_next_event().map_err(|e| match e {
                    SimError::Stalled(m) => SimError::Stalled(format!(
                        "in the shadow fair-sharing run of '{}': {m}",
                        self.core.cfg.scheduler.name()
                    )),
                    e => e,
                })?,
                None => INF,
            };
            let t = self.peek_next_event()?.min(t_shadow);
            if t == INF {
                if self.core.next_arrival >= self.core.arrival_order.len() && self.core.active.is_empty() && self.core.waiting.iter().all(|q| q.is_empty()) {
                    return Ok(Some(Outcome::Done));
                }
                return Err(SimError::Stalled(format!(
                    "at t = {} s, {} active flows have no rate and no event is scheduled",
                    self.core.now,
                    self.core.active.len()
                )));
            }
            if t > until {
                if until > self.core.now {
                    if let Some(sh) = self.core.shadow.as_mut() {
                        sh.advance_without_event(until);
                    }
                    self.advance_without_event(until);
                }
                return Ok(Some(Outcome::TimeReached));
            }
            if t <= self.core.now {
                self.core.events_without_progress += 1;
                let bound = STALL_EVENTS_PER_FLOW * (self.core.active.len() as u64 + 1);
                if self.core.events_without_progress > bound {
                    let what = format!(
                        "{} consecutive events at this time with no flow arriving, finishing or being admitted \
                         (bound {STALL_EVENTS_PER_FLOW} * (active flows + 1) = {bound})",
                        self.core.events_without_progress
                    );
                    let due = self.core.due_flows();
                    return Err(self.core.no_progress(self.allocator.name(), &what, &due));
                }
            } else {
                self.core.events_without_progress = 0;
            }
            if self.core.cfg.max_events.is_some_and(|m| self.core.stats.events >= m) {
                let what = format!("the event budget of {} events is spent", self.core.stats.events);
                let due = self.core.due_flows();
                return Err(self.core.no_progress(self.allocator.name(), &what, &due));
            }
            if let Some(sh) = self.core.shadow.as_mut() {
                sh.advance_to(t);
            }
            self.advance_to(t);
            if self.core.flows_changed {
                self.core.events_without_progress = 0;
            }
            times += 1;
            if times >= max_times {
                return Ok(None);
            }
        }
    }

    /// Moves time to `until`, before the next event: the flows advance at their rates
    /// (lazily under the incremental allocators), and the rates are recomputed before
    /// the next event time is known.
    fn advance_without_event(&mut self, until: f64) {
        self.allocator.advance_idle(&mut self.core, until);
        self.core.rates_stale = true;
    }

    /// Next event time of this simulator alone (recomputes the rates if needed).
    fn peek_next_event(&mut self) -> Result<f64> {
        if self.core.rates_stale {
            self.core.stats.allocations += 1;
            self.allocator.allocate(&mut self.core)?;
            self.core.rates_stale = false;
            if self.core.cfg.inject_stall_at_s.is_some_and(|ts| self.core.now >= ts) && !self.core.active.is_empty() {
                self.core.next_event = self.core.now; // test only: an event that changes nothing
            }
        }
        Ok(self.core.next_event)
    }

    fn activate(&mut self, i: usize) {
        self.core.status[i] = Status::Active;
        self.allocator.activate(&mut self.core, i);
    }

    fn advance_to(&mut self, t: f64) {
        self.core.stats.events += 1;
        // Time moves to the event; the flows done by then finish.
        let mut any_done = self.allocator.advance(&mut self.core, t);
        let t = self.core.now;
        // Data becoming fully available.
        while let Some(Reverse((OrdF64(td), i))) = self.core.data_heap.peek().copied() {
            if td > t + tol_of(t) * 1e-3 {
                break;
            }
            self.core.data_heap.pop();
            if !self.core.data_complete[i as usize] {
                self.core.data_complete[i as usize] = true;
                self.core.flows_changed = true;
                if self.core.status[i as usize] == Status::Active {
                    self.allocator.data_complete(&mut self.core, i as usize, t);
                }
            }
        }
        // Deadlines.
        if self.core.cfg.terminate_missed {
            while let Some(Reverse((OrdF64(td), i))) = self.core.deadline_heap.peek().copied() {
                if td > t {
                    break;
                }
                self.core.deadline_heap.pop();
                let i = i as usize;
                match self.core.status[i] {
                    // Due to end at its deadline, within the finish tolerance: it finishes
                    // at its own completion event, a rounding later, not terminated. The
                    // full recomputation finished it in `advance` just above (it checks every
                    // flow at every event); an incremental allocator, whose completion event
                    // for it a rounding past the deadline was not due yet, terminated it.
                    Status::Active if self.core.done_at(i, t, self.core.sent_now(i)) => {}
                    Status::Active => {
                        self.allocator.terminate(&mut self.core, i);
                        self.core.status[i] = Status::Terminated;
                        any_done = true;
                        self.core.release_slot(i);
                    }
                    Status::Waiting => {
                        self.core.status[i] = Status::Terminated;
                        let d = self.core.flows[i].dst;
                        if let Some(p) = self.core.waiting[d].iter().position(|&x| x as usize == i) {
                            self.core.waiting[d].remove(p);
                        }
                        self.core.flows_changed = true;
                    }
                    _ => {}
                }
            }
        }
        if any_done {
            self.allocator.remove_finished(&mut self.core);
            self.core.flows_changed = true;
        }
        // Arrivals.
        while self.core.next_arrival < self.core.arrival_order.len() {
            let i = self.core.arrival_order[self.core.next_arrival] as usize;
            if self.core.flows[i].arrival_s > t {
                break;
            }
            self.core.next_arrival += 1;
            self.core.flows_changed = true;
            let f = self.core.flows[i];
            if f.data_span_s > 0.0 {
                self.core.data_heap.push(Reverse((OrdF64(f.arrival_s + f.data_span_s), i as u32)));
            }
            if self.core.cfg.terminate_missed && !f.deadline_s.is_nan() {
                let td = (f.arrival_s + f.deadline_s - self.path_delay_s(i)).max(f.arrival_s);
                self.core.deadline_heap.push(Reverse((OrdF64(td), i as u32)));
            }
            if self.core.cfg.admission.is_some() {
                self.core.status[i] = Status::Waiting;
                self.core.waiting[f.dst].push_back(i as u32);
                self.core.dsts_to_admit.push_back(f.dst);
            } else {
                self.activate(i);
            }
        }
        // A deadline equal to the arrival (delay >= deadline): terminate at once.
        if self.core.cfg.terminate_missed && self.core.deadline_heap.peek().is_some_and(|Reverse((OrdF64(td), _))| *td <= t) {
            self.core.rates_stale = true;
            self.core.next_event = t;
        }
        self.run_admissions();
        self.core.rates_stale = true;
    }

    fn run_admissions(&mut self) {
        let Some(a) = self.core.cfg.admission.clone() else { return };
        if a.policy == AdmissionPolicy::External {
            // Drop destinations with nothing to decide; keep the rest (deduplicated) in
            // order, in place (this runs at every event).
            let mut q = std::mem::take(&mut self.core.dsts_to_admit);
            let mut kept = 0;
            for r in 0..q.len() {
                let d = q[r];
                if self.core.can_admit(d) && !q.range(..kept).any(|&x| x == d) {
                    q[kept] = d;
                    kept += 1;
                }
            }
            q.truncate(kept);
            self.core.dsts_to_admit = q;
            return;
        }
        while let Some(d) = self.core.dsts_to_admit.pop_front() {
            while self.core.can_admit(d) {
                let win = self.window(d);
                let pos = self.core.choose(&a.policy, d, &win);
                self.admit_at(d, pos);
            }
        }
    }
}

/// The random admission draws of a run with `seed` on `hosts` hosts: one stream per
/// destination (see `Core::admission_rngs`; the packet model's too).
pub(crate) fn admission_streams(seed: u64, hosts: usize) -> Result<Vec<SplitMix64>> {
    let mut v = filled(hosts, SplitMix64::new(0), "per-host admission streams")?;
    for (d, r) in v.iter_mut().enumerate() {
        *r = SplitMix64::new(mix64(seed ^ 0xA5A5_5A5A_DEAD_BEEF) ^ mix64(d as u64 + 1));
    }
    Ok(v)
}

/// Each id's rank among the distinct ids in increasing order, and how many distinct ids
/// there are. Few distinct ids (a gather, a small fabric: the token envs build a
/// simulator per episode) are numbered in first-seen order by a linear scan, and the
/// few numbers mapped to ranks by one small sort; past `FEW` of them, one sort of all
/// (id, position) pairs.
fn dense_ranks(ids: &[u128]) -> (Vec<u32>, usize) {
    const FEW: usize = 32;
    let mut uniq: Vec<u128> = Vec::with_capacity(FEW);
    let mut seen: Vec<u32> = Vec::with_capacity(ids.len());
    let mut last: Option<(u128, u32)> = None;
    let few = ids.iter().all(|&p| {
        let j = match last {
            Some((q, j)) if q == p => j,
            _ => match uniq.iter().position(|&q| q == p) {
                Some(j) => j as u32,
                None if uniq.len() == FEW => return false,
                None => {
                    uniq.push(p);
                    uniq.len() as u32 - 1
                }
            },
        };
        last = Some((p, j));
        seen.push(j);
        true
    });
    if few {
        let mut by_id: Vec<u32> = (0..uniq.len() as u32).collect();
        by_id.sort_unstable_by_key(|&j| uniq[j as usize]);
        let mut rank_of = vec![0u32; uniq.len()];
        for (r, &j) in by_id.iter().enumerate() {
            rank_of[j as usize] = r as u32;
        }
        for j in &mut seen {
            *j = rank_of[*j as usize];
        }
        return (seen, uniq.len());
    }
    let mut pairs: Vec<(u128, u32)> = ids.iter().enumerate().map(|(i, &p)| (p, i as u32)).collect();
    pairs.sort_unstable();
    let mut rank = vec![0u32; ids.len()];
    let mut n = 0usize;
    for k in 0..pairs.len() {
        if k > 0 && pairs[k].0 != pairs[k - 1].0 {
            n += 1;
        }
        rank[pairs[k].1 as usize] = n as u32;
    }
    (rank, if ids.is_empty() { 0 } else { n + 1 })
}

/// The position in `win` (flow rows, oldest request first) of the request that `p` admits
/// next: fifo the oldest; edf the earliest absolute deadline, ssdf / lsdf the smallest /
/// largest size/deadline (for these three, flows without a deadline after those with one;
/// ties to the oldest); srpt the smallest size (ties to the earliest arrival); random a
/// uniform draw from `rng`. Shared by the fluid
/// `Simulator` and the packet model. `win` must not be empty; `External` is decided outside.
pub fn choose_admission(p: &AdmissionPolicy, fl: &[FlowSpec], win: &[u32], rng: &mut SplitMix64) -> usize {
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
        AdmissionPolicy::Random => rng.below(win.len() as u64) as usize,
        AdmissionPolicy::External => unreachable!("external admissions are made by admit()"),
    }
}

#[cfg(test)]
mod dense_rank_tests {
    use super::dense_ranks;
    use crate::rng::SplitMix64;

    #[test]
    fn ranks_are_the_positions_among_the_sorted_distinct_ids_on_both_paths() {
        let mut rng = SplitMix64::new(7);
        for trial in 0..400 {
            let n = rng.below(300) as usize;
            // few distinct ids (the short list) or many (the sort), ties included
            let distinct = 1 + rng.below(if trial % 2 == 0 { 20 } else { 200 });
            let ids: Vec<u128> = (0..n).map(|_| (rng.below(distinct) as u128) << 70 | rng.below(3) as u128).collect();
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let want: Vec<u32> = ids.iter().map(|p| sorted.iter().position(|q| q == p).unwrap() as u32).collect();
            assert_eq!(dense_ranks(&ids), (want, sorted.len()), "trial {trial}");
        }
    }
}

#[cfg(test)]
mod pass_again_tests {
    use super::pass_again_at;
    use crate::rng::SplitMix64;

    /// The look-again time moves time, never waits longer than the fixed 1e-12 s it
    /// replaced (or than the keys' meeting time dt), and, where that bound leaves room,
    /// waits long enough for keys falling `gap` B/s apart to be 12 to 16 ulps of `scale`
    /// apart (16, less the rounding of `now + delay`): more than the rounding of keys
    /// recomputed from bytes sent, so that their order is then strict.
    #[test]
    fn moves_time_waits_at_most_the_old_picosecond_and_long_enough_for_the_rounding() {
        let mut rng = SplitMix64::new(11);
        for trial in 0..20_000 {
            let now = if trial % 7 == 0 { 0.0 } else { 10f64.powf(-9.0 + 10.0 * rng.next_f64()) };
            let dt = if trial % 3 == 0 { 10f64.powf(-15.0 + 6.0 * rng.next_f64()) } else { 0.0 };
            let gap = 10f64.powf(-3.0 + 13.0 * rng.next_f64());
            let scale = 10f64.powf(8.0 * rng.next_f64());
            let at = pass_again_at(now, dt, gap, scale);
            assert!(at > now, "trial {trial}: {at} does not move from {now}");
            let most = 1e-12 * now.max(1.0);
            // (plus the rounding of `now + delay`: half an ulp of `now`)
            assert!(at - now <= dt.max(most) + f64::EPSILON * now, "trial {trial}: waits {} past {} and {most}", at - now, dt);
            let enough = 16.0 * f64::EPSILON * scale / gap;
            if enough <= most && dt <= enough {
                // 16 ulps of `scale` apart, less what `now + delay` loses to rounding (half
                // an ulp of `now`, at most a quarter of a delay of 4 ulps of `now`)
                assert!((at - now) * gap >= 0.75 * 16.0 * f64::EPSILON * scale, "trial {trial}: keys only {} apart", (at - now) * gap);
            }
        }
    }
}
