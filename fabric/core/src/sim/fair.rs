//! The incremental allocator for fair sharing (`ps`, `wps`).
//!
//! Progressive filling (water-filling) raises a common level and freezes a flow when a
//! link on its path saturates (or at its cap); a flow's rate is weight * the level it
//! froze at. An event (arrival, departure, a cap that changes) changes few flows' rates,
//! and this re-runs the filling only where it differs from the previous one:
//!
//! * The floor. No link saturates, and no flow freezes, differently below the floor: the
//!   lowest old level of a departing or changing flow, and for every link of an arriving
//!   or changing flow the level where that link saturates with it (water level over the
//!   old rates of the others). Flows below the floor keep their rates.
//! * From the floor up, one progressive fill over a growing set of "real" flows (the
//!   flows of the event, then every flow found to change) and the links they use. Every
//!   other flow on those links is "virtual": it keeps its old rate while the fill runs
//!   past it and freezes at its old level, unless
//!   - a link saturates below its old level: the flow is frozen lower, so it turns real
//!     (and its other links join the fill with the capacity it frees), or
//!   - at its old level it no longer has a reason to stop there: not at its cap, no
//!     saturated link of the fill at that level, and no untouched link where it was a
//!     bottleneck (saturated, and no flow with a higher level). It turns real and goes on
//!     rising.
//!
//!   Links outside the fill have only unchanged flows below the current level, so they
//!   saturate where they did. Every flow whose rate changes is found this way, at a level
//!   at most its old and new levels, which is what makes the result the max-min fair
//!   allocation (up to rounding; slack TOL in the level comparisons).
//! * Less bookkeeping for virtual flows. On a link that joins the fill, only the virtual
//!   flows it was a bottleneck of are "tracked" (unfrozen); the others have a bottleneck
//!   elsewhere and are "parked": counted at their old rate, which can only make the link
//!   saturate early; when it would saturate below a parked flow's old level, that flow
//!   is unparked (tracked) and the link's level rises (a bound of the parked flows' old
//!   levels spares the search when none is above). A tracked flow below the level where
//!   its link would saturate, on a path of two links, turns real at once, at the current
//!   level (at most its old and new levels): checked at its old level, such a flow almost
//!   never stopped there (3% of the checks on the web-search benchmarks, 100k flows, both
//!   topologies), and the check cost a heap event. On a longer path (through a fabric's
//!   core) it is checked at its old level, as before: there the check found it stopped by
//!   another of its links 23% of the time (leaf-spine), and turning it real at once made
//!   that benchmark 18% slower. The check of the other tracked flows is deferred while
//!   their link would saturate first (they stop there then) and scheduled once the
//!   link's level rises past them.
//! * Memory. The fair state of the active flows is dense, at their index in `active`
//!   (the link lists hold these indices), so a fill touches little memory: 32 bytes per
//!   flow for what every visit reads (`FairFlow`), the rest apart (`FairCold`).
//! * Rounding. A virtual flow that stops within TOL of a level (at a link's saturation,
//!   or at its old level on a link of the fill that saturates there) takes that level's
//!   exact rate (at most its cap). Kept at its old rate instead, it handed the slack to the other flows of
//!   its link, whose level then rose a little more: flows with one bottleneck drifted
//!   apart, fill after fill, until the lower ones looked bottlenecked elsewhere (more than
//!   TOL below the link's highest level) and were parked below the link's level for good.
//!   On 1M web-search flows that put some rates 0.01% to 5% off the max-min allocation
//!   and some completion times up to 18% off the full recomputation's; `verify` finds no
//!   such gap now (see `examples/bench_trace.rs`, `check`).
//! * Completion events. A rate that falls moves the flow's completion later; its entry
//!   in the flow event heap stays where it is until it reaches the top
//!   (`EventHeap::set_later`), which spares most of the heap updates of a commit.
//!
//! * Links that never bind. The fill leaves out the links whose constraint follows from
//!   the host links' (`never_binding`): on `ParkingLot(8, 10, 40)` every switch link,
//!   which made the fill on its paths of 3 to 9 links 2.5 times slower than on the big
//!   switch's 2-link paths, for the same allocation.
//!
//! * The direct fill. On a fabric with few links in the fill (at most
//!   `DIRECT_MAX_LINKS`: the parking lot, a small big switch) and under
//!   `AllocatorChoice::Auto`, every fill is a plain progressive filling of all the active
//!   flows from level 0 (`fair_direct`): the lowest link level found by a scan of the
//!   links, its flows frozen there, capped flows frozen at their caps in order. Over a
//!   few links this costs a fraction of the incremental fill's bookkeeping (4.5 us per
//!   event on `ParkingLot(8, 10, 40)` at load 0.8 before). Both give the max-min
//!   allocation; their rates differ by rounding. The commit is the same: a rate within
//!   1e-12 relative of the committed one is not changed.
//!
//! Flows advance lazily and have flow events (completion, catching up with their data)
//! in a `LazyFlows` (incr.rs), the machinery this shares with the priority allocator.
//! `AllocatorChoice::Full` runs the full recomputation instead; the test
//! suite checks both give the same results.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::allocator::Allocator;
use super::incr::LazyFlows;
use super::{filled, total_order_bits, Core, Status, ALLOC_STEPS_PER_FLOW, INF};
use crate::error::Result;
use crate::fill::{add_compensated, compensated, leave_compensated, WeightSum};
use crate::sched::Scheduler;

/// Relative slack of the level comparisons (saturation, a virtual flow at its old
/// level): well above the rounding of a sum of rates, well below what changes a result.
const TOL: f64 = 1e-11;

/// The direct fill runs (under `AllocatorChoice::Auto`) on fabrics with at most this many
/// links in the fill (see the module doc): its scan for the lowest link level costs a
/// pass over the links per saturating link.
pub(super) const DIRECT_MAX_LINKS: usize = 32;
// (the direct fill numbers its links with a `u8`, `u8::MAX` for none, and indexes its
// arrays of `DIRECT_MAX_LINKS` with a mask: `DirectLinks`)
const _: () = assert!(DIRECT_MAX_LINKS < u8::MAX as usize && DIRECT_MAX_LINKS.is_power_of_two());

/// The fill state of an active flow (at its dense index) that the fill reads for every
/// flow on a link it visits, in half a cache line: its committed rate, its new rate, the
/// stamps of this fill (real, frozen, tracked with an event), path length, data span.
/// Its level and weight are in `FairCold` under `wps`; under `ps` every weight is 1 and
/// the level is the rate (the same bits as rate / 1.0), so they are not read there.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(crate) struct FairFlow {
    /// The committed rate (what the flow sends at now).
    rate: f64,
    /// The rate this fill gives it (a real flow's, read at commit).
    new_rate: f64,
    /// The stamp of the fill in which it is real (equal to `stamp`: real in this fill).
    real_stamp: u32,
    /// The stamp of the fill in which it is frozen (its rate in this fill is settled).
    frozen_stamp: u32,
    /// The stamp of the fill in which it is tracked with an event (at its old level, or
    /// queued to turn real at once): one such event per fill.
    tracked_stamp: u32,
    /// Its path length, in the links the fill uses (its slots).
    path_len: u16,
    /// Whether it has a data span (only then can it have a cap).
    has_data_span: bool,
    /// Under the direct fill, on a path of two links: the XOR of their indices in
    /// `fill_links` (the other link of the two is this XOR the one).
    direct_pair: u8,
}
impl FairFlow {
    /// Whether its new rate differs from the committed one by more than 1e-12 relative
    /// (or one of them is 0 and the other not: for rates >= 0, the difference is then the
    /// larger one, above 1e-12 of itself).
    #[inline]
    fn rate_changes(&self) -> bool {
        let (r, old) = (self.new_rate, self.rate);
        debug_assert!(r >= 0.0 && old >= 0.0, "rates are never negative or NaN");
        // a comparison in place of f64::max
        (r - old).abs() > 1e-12 * if r > old { r } else { old }
    }
}

impl Default for FairFlow {
    fn default() -> Self {
        FairFlow { rate: 0.0, new_rate: 0.0, real_stamp: 0, frozen_stamp: 0, tracked_stamp: 0, path_len: 0, has_data_span: false, direct_pair: 0 }
    }
}

/// The rest of an active flow's fill state: committed level (rate / weight) and weight
/// (read under `wps` only), cap in this fill (read only for a flow with a data span),
/// size (read at commit).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub(crate) struct FairCold {
    /// The committed level: rate / weight (read under `wps` only).
    level: f64,
    /// The weight (read under `wps` only).
    weight: f64,
    /// The cap in this fill (read only for a flow with a data span).
    cap: f64,
    /// The size in bytes (read at commit).
    size: f64,
}
impl Default for FairCold {
    fn default() -> Self {
        FairCold { level: 0.0, weight: 0.0, cap: INF, size: 0.0 }
    }
}

/// The fill state of a link, in one cache line: its used capacity and highest level at
/// the committed rates (cached while `used` is not NaN), and in this fill (joined when
/// `stamp` is this fill's): residual capacity, unfrozen weight and count, parked flows
/// and an upper bound of their old levels, the lowest deferred old level of its tracked
/// flows, and the version of its heap entry.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct FairLink {
    /// Used capacity at the committed rates (NaN: not cached).
    used: f64,
    /// Highest committed level of its flows (cached with `used`).
    old_max_level: f64,
    /// Residual capacity in this fill: capacity less the rates of its frozen and parked
    /// flows.
    residual: f64,
    /// Weight of its unfrozen flows in this fill.
    unfrozen_weight: f64,
    /// The lowest old level of its tracked flows whose check is deferred (INF: none).
    min_deferred_level: f64,
    /// An upper bound of the old levels of its parked flows.
    parked_max_level: f64,
    /// The stamp of the fill it joined last (equal to the allocator's: joined this fill).
    stamp: u32,
    /// Count of its unfrozen flows in this fill.
    unfrozen_count: u32,
    /// Count of its parked flows in this fill.
    parked_count: u32,
    /// The version of its heap entry (an entry with another version is stale).
    version: u32,
}
impl Default for FairLink {
    fn default() -> Self {
        FairLink {
            used: f64::NAN,
            old_max_level: 0.0,
            residual: 0.0,
            unfrozen_weight: 0.0,
            min_deferred_level: INF,
            parked_max_level: 0.0,
            stamp: 0,
            unfrozen_count: 0,
            parked_count: 0,
            version: 0,
        }
    }
}

impl FairLink {
    /// One of its unfrozen flows, of weight `w`, freezes at rate `r`. `lo`: the rounding
    /// its unfrozen weight has lost (`IncrementalFairSharing::link_weight_lo`), under
    /// `wps` (`W`); under `ps` the weights of 1 sum exactly and `lo` is not touched.
    #[inline(always)]
    fn freeze<const W: bool>(&mut self, r: f64, w: f64, lo: &mut f64) {
        self.residual -= r;
        self.unfrozen_count -= 1;
        if W {
            leave_compensated(&mut self.unfrozen_weight, lo, w, self.unfrozen_count);
        } else {
            self.unfrozen_weight = if self.unfrozen_count > 0 { self.unfrozen_weight - w } else { 0.0 };
        }
    }
}

/// Adds a flow's weight to a link's unfrozen weight in a join: the plain sum (`ps`, whose
/// weights of 1 sum exactly, as before), and under `wps` its rounding in `lo` as well
/// (`crate::fill::add_compensated`: the same `hi`).
#[inline(always)]
fn add_weight(hi: &mut f64, lo: &mut f64, w: f64, weighted: bool) {
    if weighted {
        add_compensated(hi, lo, w);
    } else {
        *hi += w;
    }
}

/// The direct fill's link state, by the link's index in `fill_links` (below
/// `DIRECT_MAX_LINKS`, a power of two: `ix` masks an index into range, which changes none
/// and spares the bounds checks): residual capacity, unfrozen count and (under `wps`)
/// unfrozen weight. The same arithmetic, in the same order, as `FairLink::freeze`, in a
/// few cache lines instead of one per link.
#[derive(Clone, Debug)]
pub(crate) struct DirectLinks {
    residual: [f64; DIRECT_MAX_LINKS],
    unfrozen_count: [u32; DIRECT_MAX_LINKS],
    /// Under `wps` only (compensated: `crate::fill::WeightSum`).
    unfrozen_weight: [WeightSum; DIRECT_MAX_LINKS],
    /// The level where it saturates (`set_level`), updated with each change: the scan
    /// for the lowest then divides nothing.
    level: [f64; DIRECT_MAX_LINKS],
    /// Bit j: link j is in this fill and has not saturated (the links the scan for the
    /// lowest level reads). A link whose last unfrozen flow froze through another link
    /// stays, at a level the scan never picks (see `set_level`): clearing its bit at each
    /// freeze cost more than the scan's visits of it.
    live: u32,
}
const _: () = assert!(DIRECT_MAX_LINKS <= u32::BITS as usize);
impl Default for DirectLinks {
    fn default() -> Self {
        let z = [0.0; DIRECT_MAX_LINKS];
        DirectLinks { residual: z, unfrozen_count: [0; DIRECT_MAX_LINKS], unfrozen_weight: [WeightSum::ZERO; DIRECT_MAX_LINKS], level: z, live: 0 }
    }
}
/// An index of `DirectLinks`' arrays (see there).
#[inline(always)]
fn ix(j: usize) -> usize {
    j & (DIRECT_MAX_LINKS - 1)
}
impl DirectLinks {
    /// One unfrozen flow of weight `w` on link j freezes at rate `r` (under `ps`, `W`
    /// false, the count stands for the weight: see `set_level`).
    #[inline(always)]
    fn freeze<const W: bool>(&mut self, j: u8, r: f64, w: f64) {
        let j = ix(j as usize);
        self.residual[j] -= r;
        self.unfrozen_count[j] -= 1;
        if W {
            self.unfrozen_weight[j].leave(w, self.unfrozen_count[j]);
        }
        self.set_level::<W>(j);
    }

    /// Sets the level where link j saturates: residual over unfrozen weight (the
    /// unfrozen count under `ps`, the same value). A link without unfrozen flows (weight
    /// and count 0) gets +inf or NaN, which the scan's `level < best` never picks.
    #[inline(always)]
    fn set_level<const W: bool>(&mut self, j: usize) {
        let j = ix(j);
        self.level[j] = self.residual[j].max(0.0) / if W { self.unfrozen_weight[j].value() } else { self.unfrozen_count[j] as f64 };
    }
}

/// An event of the fill: a link that saturates at `level` (kind 0; a version tells a
/// stale entry), a virtual flow at its old level (kind 1), a real flow at its cap
/// (kind 2). Ordered by level, then kind (links first), id and version (deterministic),
/// all packed in one integer: the level's bits mapped to an unsigned order that is
/// f64::total_cmp's, then kind << 62 | id << 32 | version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item(u128);
impl Item {
    #[inline]
    fn new(level: f64, kind: u64, id: usize, version: u32) -> Self {
        let ord = total_order_bits(level);
        Item((ord as u128) << 64 | (kind << 62 | (id as u64) << 32 | version as u64) as u128)
    }
    #[inline]
    fn level(&self) -> f64 {
        let ord = (self.0 >> 64) as u64;
        f64::from_bits(if ord >> 63 == 1 { ord & !(1 << 63) } else { !ord })
    }
    #[inline]
    fn key(&self) -> u64 {
        self.0 as u64
    }
    #[inline]
    fn kind(&self) -> u64 {
        self.key() >> 62
    }
    #[inline]
    fn id(&self) -> usize {
        ((self.key() >> 32) & 0x3fff_ffff) as usize
    }
    #[inline]
    fn version(&self) -> u32 {
        self.key() as u32
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    // Reversed: BinaryHeap is a max-heap.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.cmp(&self.0)
    }
}

/// The links that can never limit a max-min fair allocation, which the fill leaves out.
///
/// Let F(l) be the set of first links of the paths through link l, and L(l) that of
/// their last links. Every flow through l crosses one link of F(l), so the flows through
/// l never carry more than the capacities of F(l) together (nor those of L(l)). When that
/// bound is at most l's capacity, and l is no path's first or last link itself, l's
/// constraint follows from the others: the feasible rates, and so the max-min fair
/// allocation (which is unique), are the same without it. On `ParkingLot(8, 10, 40)` this
/// leaves out every switch-to-switch link (the middle one, 4 hosts on each side, exactly
/// at its bound), and the fill runs on the hosts' two links, as on the big switch.
/// Nothing changes on a fabric where every link can be a bottleneck (big switch,
/// leaf-spine and fat-tree at full bisection: one link of F(l) or L(l) is never enough).
/// The sums are in floating point: a link within a few ulps of its bound may be left out,
/// which moves rates far less than the fill's own slack (TOL).
pub(super) fn never_binding(path_off: &[u32], path_links: &[u32], capacity: &[f64]) -> Result<Vec<bool>> {
    let n_links = capacity.len();
    // Per link: it may bind (a path's first or last link, or its bound exceeds its
    // capacity); else the distinct first and last links seen so far and their sums.
    let mut binds = filled(n_links, false, "per-link state")?;
    let mut firsts: Vec<Vec<u32>> = filled(n_links, Vec::new(), "per-link state")?;
    let mut lasts: Vec<Vec<u32>> = filled(n_links, Vec::new(), "per-link state")?;
    let mut sums = filled(n_links, (0.0f64, 0.0f64), "per-link state")?;
    let n = path_off.len().saturating_sub(1);
    for i in 0..n {
        let p = &path_links[path_off[i] as usize..path_off[i + 1] as usize];
        if let (Some(&f), Some(&e)) = (p.first(), p.last()) {
            binds[f as usize] = true;
            binds[e as usize] = true;
        }
    }
    for i in 0..n {
        let p = &path_links[path_off[i] as usize..path_off[i + 1] as usize];
        if p.len() < 3 {
            continue;
        }
        let (f, e) = (p[0], p[p.len() - 1]);
        for &l in &p[1..p.len() - 1] {
            let l = l as usize;
            if binds[l] {
                continue;
            }
            // Sets stay small: they grow only while their sum is at most the capacity.
            if !firsts[l].contains(&f) {
                firsts[l].push(f);
                sums[l].0 += capacity[f as usize];
            }
            if !lasts[l].contains(&e) {
                lasts[l].push(e);
                sums[l].1 += capacity[e as usize];
            }
            if sums[l].0 > capacity[l] && sums[l].1 > capacity[l] {
                binds[l] = true;
                firsts[l] = Vec::new();
                lasts[l] = Vec::new();
            }
        }
    }
    // A link no flow crosses is left out too (it never joins a fill anyway).
    Ok(binds.into_iter().map(|b| !b).collect())
}

pub(super) fn applies(s: &Scheduler) -> bool {
    matches!(s, Scheduler::Ps | Scheduler::Wps)
}

/// The incremental fair-sharing allocator's own state. Flows are at their dense index
/// in `active` (g below); a flow's "slots" are `g * slots_per_flow ..`, one per link of its path.
/// The per-link lists (`link_flows`, of dense indices), the lazy flow state (`sent_at`, `active_pos`)
/// and the flow event heap (`flow_events`) are the simulator's, shared with the incremental
/// priority allocator.
/// The incremental fair-sharing allocator (`ps`, `wps`, and the shadow run of `fair` and
/// `gtcp:*`): max-min fair rates re-filled only where an event changes them (see the
/// module doc).
#[derive(Debug, Clone)]
pub(super) struct IncrementalFairSharing {
    /// The per-link lists (dense fill indices), flow events and flows to reschedule
    /// (the machinery shared with the incremental priority allocator, incr.rs).
    pub(super) lazy: LazyFlows,
    /// Per link: whether the fill leaves it out (it can never limit a rate: see
    /// `never_binding`).
    pub(super) left_out: Vec<bool>,
    /// The longest path, in links the fill uses: the slots per flow.
    pub(super) slots_per_flow: usize,
    /// Per slot: the link.
    pub(super) slot_link: Vec<u32>,
    /// Per dense flow: what every visit of the fill reads (`FairFlow`).
    pub(super) flows_hot: Vec<FairFlow>,
    /// Per dense flow: the rest of its fill state (`FairCold`).
    pub(super) flows_cold: Vec<FairCold>,
    /// Weighted fair sharing (`wps`): levels and weights are read from `flows_cold`.
    pub(super) weighted: bool,
    /// Per slot: the flow's position in its link's list.
    pub(super) slot_pos: Vec<u32>,
    /// The real flows of this fill (dense indices).
    pub(super) real_flows: Vec<u32>,
    /// Flows that arrived or changed since the last fill: the fill starts from them.
    pub(super) seed_flows: Vec<u32>,
    /// Links of flows that left since the last fill: the fill starts from them too.
    pub(super) seed_links: Vec<u32>,
    /// The current fill's stamp (the `*_stamp` fields equal to it belong to this fill).
    pub(super) stamp: u32,
    /// Per slot: the stamp of the fill in which the flow is parked on that link.
    pub(super) slot_parked: Vec<u32>,
    /// Per link: its fill state (`FairLink`).
    pub(super) link_state: Vec<FairLink>,
    /// Per link, under `wps`: the rounding its unfrozen weight has lost in this fill
    /// (`crate::fill::WeightSum`; weights 1e12 apart would otherwise leave a light flow
    /// the rounding of the heavy ones' sum). Empty under `ps`, whose sums are exact.
    pub(super) link_weight_lo: Vec<f64>,
    /// Scratch of a link's join: the flows it tracks.
    pub(super) tracked_scratch: Vec<u32>,
    /// Tracked flows on two-link paths to turn real at once (see the module doc).
    pub(super) promote_now: Vec<u32>,
    /// The fill's events (`Item`): links saturating, virtual flows at their old level,
    /// real flows at their cap.
    pub(super) fill_events: BinaryHeap<Item>,
    /// Unfrozen flows of the fill, counted once per joined link they are unfrozen on.
    pub(super) unfrozen_total: u32,
    /// The level the next fill starts from (see the module doc: the floor).
    pub(super) floor: f64,
    /// Scratch of the floor: (level, rate, weight) of a link's flows.
    pub(super) floor_scratch: Vec<(f64, f64, f64)>,
    /// Scratch of the floor: the links it looks at.
    pub(super) floor_links: Vec<u32>,
    /// Whether every fill is the direct fill (`fair_direct`; see the module doc).
    pub(super) direct: bool,
    /// Active flows with a data span (the only ones that can have a cap).
    pub(super) active_spans: u32,
    /// Scratch of the direct fill: the flows (dense indices) whose rate changes, the first
    /// `direct_n_changed` entries, in the order they froze.
    pub(super) direct_changed: Vec<u32>,
    pub(super) direct_n_changed: usize,
    /// The links of the fill (not left out); the direct fill visits these.
    pub(super) fill_links: Vec<u32>,
    /// The direct fill's link state, by index in `fill_links` (`DirectLinks`).
    pub(super) direct_links: Box<DirectLinks>,
    /// Per slot, under the direct fill: the link's index in `fill_links`.
    pub(super) slot_fill: Vec<u8>,
    /// Per link: its index in `fill_links` under the direct fill (`u8::MAX`: none).
    pub(super) link_fill: Vec<u8>,
    /// Scratch of the direct fill: (level of its cap, dense index) of each flow with a
    /// finite cap, lowest first.
    pub(super) capped: Vec<(f64, u32)>,
}

impl IncrementalFairSharing {
    /// The allocator of a run of `n` flows on links of capacity `capacity`, flow i's path
    /// being `path_links[path_off[i]..path_off[i + 1]]` (`weighted`: `wps`). The fill
    /// leaves out the links that can never limit a rate (`never_binding`). `direct_allowed`:
    /// the direct fill may run (`AllocatorChoice::Auto`; it does on at most
    /// `DIRECT_MAX_LINKS` links in the fill).
    pub(super) fn new(path_off: &[u32], path_links: &[u32], capacity: &[f64], weighted: bool, direct_allowed: bool) -> Result<Self> {
        let n = path_off.len().saturating_sub(1);
        let n_links = capacity.len();
        let left_out = never_binding(path_off, path_links, capacity)?;
        let slots_per_flow = (0..n)
            .map(|i| path_links[path_off[i] as usize..path_off[i + 1] as usize].iter().filter(|&&l| !left_out[l as usize]).count())
            .max()
            .unwrap_or(1)
            .max(1);
        let fill_links: Vec<u32> = (0..n_links as u32).filter(|&l| !left_out[l as usize]).collect();
        let direct = direct_allowed && fill_links.len() <= DIRECT_MAX_LINKS;
        let mut link_fill = vec![u8::MAX; if direct { n_links } else { 0 }];
        if direct {
            for (j, &l) in fill_links.iter().enumerate() {
                link_fill[l as usize] = j as u8;
            }
        }
        Ok(IncrementalFairSharing {
            lazy: LazyFlows::new(n, n_links)?,
            left_out,
            slots_per_flow,
            slot_link: Vec::new(),
            flows_hot: Vec::new(),
            flows_cold: Vec::new(),
            weighted,
            slot_pos: Vec::new(),
            real_flows: Vec::new(),
            active_spans: 0,
            direct_changed: Vec::new(),
            direct_n_changed: 0,
            seed_flows: Vec::new(),
            seed_links: Vec::new(),
            stamp: 0,
            slot_parked: Vec::new(),
            link_state: filled(n_links, FairLink::default(), "per-link state")?,
            link_weight_lo: if weighted { filled(n_links, 0.0, "per-link state")? } else { Vec::new() },
            tracked_scratch: Vec::new(),
            promote_now: Vec::new(),
            fill_events: BinaryHeap::new(),
            unfrozen_total: 0,
            floor: INF,
            floor_scratch: Vec::new(),
            floor_links: Vec::new(),
            direct,
            link_fill,
            fill_links,
            direct_links: Box::new(DirectLinks::default()),
            slot_fill: Vec::new(),
            capped: Vec::new(),
        })
    }
}

impl IncrementalFairSharing {
    /// Flow i becomes active. The fair state of the active flows is dense, at their
    /// index in `active` (link lists hold these indices), so that a fill touches little
    /// memory.
    pub(super) fn fair_activate(&mut self, core: &mut Core, i: usize) {
        let a = core.active.len();
        core.active_pos[i] = a as u32;
        core.active.push(i as u32);
        core.sent_at[i] = core.now;
        core.rate[i] = 0.0;
        let w = if self.weighted { core.flows[i].weight } else { 1.0 };
        core.weight[i] = w;
        core.cap[i] = INF;
        if self.flows_hot.len() <= a {
            let n = a + 1;
            self.flows_hot.resize(n, FairFlow::default());
            self.flows_cold.resize(n, FairCold::default());
            self.slot_link.resize(n * self.slots_per_flow, 0);
            self.slot_pos.resize(n * self.slots_per_flow, 0);
            self.slot_parked.resize(n * self.slots_per_flow, 0);
            if self.direct {
                self.slot_fill.resize(n * self.slots_per_flow, 0);
            }
        }
        self.flows_hot[a].rate = 0.0;
        self.flows_cold[a].level = 0.0;
        self.flows_cold[a].weight = w;
        self.flows_hot[a].has_data_span = core.flows[i].data_span_s > 0.0;
        self.active_spans += self.flows_hot[a].has_data_span as u32;
        self.flows_cold[a].cap = INF;
        let (p0, p1) = (core.path_off[i] as usize, core.path_off[i + 1] as usize);
        self.flows_cold[a].size = core.flows[i].size_bytes;
        let mut k = 0;
        for p in p0..p1 {
            let l = core.path_links[p] as usize;
            if self.left_out[l] {
                continue;
            }
            let s = a * self.slots_per_flow + k;
            k += 1;
            self.slot_link[s] = l as u32;
            if self.direct {
                self.slot_fill[s] = self.link_fill[l];
            }
            self.slot_pos[s] = self.lazy.link_flows[l].len() as u32;
            // At rate 0 it changes neither the link's used capacity nor its highest level.
            self.lazy.link_flows[l].push(a as u32);
        }
        self.flows_hot[a].path_len = k as u16;
        if self.direct && k == 2 {
            let s = a * self.slots_per_flow;
            self.flows_hot[a].direct_pair = self.slot_fill[s] ^ self.slot_fill[s + 1];
        }
        self.seed_flows.push(i as u32);
    }

    /// Takes an active flow out (finished or terminated): the flows on its links are re-solved.
    pub(super) fn fair_remove(&mut self, core: &mut Core, i: usize) {
        let a = core.active_pos[i] as usize;
        self.active_spans -= self.flows_hot[a].has_data_span as u32;
        if self.flows_hot[a].rate > 0.0 {
            self.floor = self.floor.min(self.committed_level(a));
        }
        core.sent[i] = core.sent_now(i);
        core.sent_at[i] = core.now;
        core.rate[i] = 0.0;
        self.lazy.flow_events.remove(i as u32);
        for s in self.fair_slots(a) {
            let l = self.slot_link[s] as usize;
            let pos = self.slot_pos[s] as usize;
            self.lazy.link_flows[l].swap_remove(pos);
            if pos < self.lazy.link_flows[l].len() {
                let moved_flow = self.lazy.link_flows[l][pos] as usize;
                let moved_slot = self.fair_slot(moved_flow, l);
                self.slot_pos[moved_slot] = pos as u32;
            }
            self.seed_links.push(l as u32);
            self.link_state[l].used = f64::NAN;
        }
        core.active.swap_remove(a);
        core.active_pos[i] = u32::MAX;
        let last = core.active.len();
        if a < last {
            // The last active flow moves to index a.
            let j = core.active[a] as usize;
            core.active_pos[j] = a as u32;
            self.flows_hot[a] = self.flows_hot[last];
            self.flows_cold[a] = self.flows_cold[last];
            let slots = self.slots_per_flow;
            for k in 0..self.flows_hot[a].path_len as usize {
                let (s, last_slot) = (a * slots + k, last * slots + k);
                self.slot_link[s] = self.slot_link[last_slot];
                if self.direct {
                    self.slot_fill[s] = self.slot_fill[last_slot];
                }
                self.slot_pos[s] = self.slot_pos[last_slot];
                self.lazy.link_flows[self.slot_link[s] as usize][self.slot_pos[s] as usize] = a as u32;
            }
        }
    }

    /// Handles the flow events due at t (completions, catching up with their data).
    pub(super) fn flow_events_due(&mut self, core: &mut Core, t: f64) {
        while let Some((due, i)) = self.lazy.flow_events.peek() {
            if due > t {
                break;
            }
            self.lazy.flow_events.pop();
            let i = i as usize;
            if core.status[i] != Status::Active {
                continue;
            }
            if self.try_finish(core, i, t) {
                continue;
            }
            // A catch-up: its cap changed; re-fill from it. Its next flow event is
            // scheduled after the fill (by set_rate if the rate changes, else at its end).
            self.fair_changed(i);
            self.lazy.flow_events.remove(i as u32);
            self.lazy.reschedule.push(i as u32);
        }
    }

    /// Finishes flow i if all its bytes are sent and all its data has arrived.
    pub(super) fn try_finish(&mut self, core: &mut Core, i: usize, t: f64) -> bool {
        if core.done_at(i, t, core.sent_now(i)) {
            self.fair_remove(core, i);
            core.finish_now(i, t);
            core.flows_changed = true;
            return true;
        }
        false
    }

    /// Flow i's cap may have changed (it caught up with its data, or its data is complete).
    pub(super) fn fair_changed(&mut self, i: usize) {
        self.seed_flows.push(i as u32);
    }

    /// The floor (see the module doc) of the pending changes; the flows of `real_flows` are
    /// the arriving and changing ones (their old rate: 0 for an arrival).
    fn fair_floor(&mut self, core: &mut Core) -> f64 {
        let mut floor = std::mem::replace(&mut self.floor, INF);
        let stamp = self.stamp;
        let mut links = std::mem::take(&mut self.floor_links);
        links.clear();
        for k in 0..self.real_flows.len() {
            let s = self.real_flows[k] as usize;
            if self.flows_hot[s].rate > 0.0 {
                floor = floor.min(self.committed_level(s));
            }
            floor = floor.min(self.fair_cap(core, s) / self.weight_of(s));
            links.extend_from_slice(&self.slot_link[self.fair_slots(s)]);
        }
        links.sort_unstable();
        links.dedup();
        for &l in &links {
            let l = l as usize;
            // Water level of l: the others at min(old rate, weight * level).
            self.floor_scratch.clear();
            // (compensated under `wps`: see `link_weight_lo`)
            let (mut weight_above, mut above_lo) = (0.0, 0.0);
            for &g in &self.lazy.link_flows[l] {
                let g = g as usize;
                let w = self.weight_of(g);
                add_weight(&mut weight_above, &mut above_lo, w, self.weighted);
                if self.flows_hot[g].real_stamp != stamp {
                    self.floor_scratch.push((self.committed_level(g), self.flows_hot[g].rate, w));
                }
            }
            self.floor_scratch.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let capacity = core.topo.capacity[l];
            let mut frozen = 0.0;
            let mut water_level = INF;
            for &(old_level, r, w) in &self.floor_scratch {
                let candidate = (capacity - frozen).max(0.0) / compensated(weight_above, above_lo);
                if candidate <= old_level {
                    water_level = candidate;
                    break;
                }
                frozen += r;
                add_weight(&mut weight_above, &mut above_lo, -w, self.weighted);
            }
            if water_level == INF {
                water_level = (capacity - frozen).max(0.0) / compensated(weight_above, above_lo);
            }
            floor = floor.min(water_level);
        }
        self.floor_links = links;
        floor
    }

    /// Used capacity and highest level of link l at the committed rates (cached until a
    /// flow of l changes rate or leaves; an arrival, at rate 0, changes neither).
    fn fair_old_state(&mut self, l: usize) -> (f64, f64) {
        if self.link_state[l].used.is_nan() {
            let mut used = 0.0;
            let mut max_level = 0.0f64;
            let (flows_hot, flows_cold) = (&self.flows_hot[..], &self.flows_cold[..]);
            for &h in &self.lazy.link_flows[l] {
                let h = h as usize;
                used += flows_hot[h].rate;
                max_level = max_level.max(if self.weighted { flows_cold[h].level } else { flows_hot[h].rate });
            }
            self.link_state[l].used = used;
            self.link_state[l].old_max_level = max_level;
        }
        (self.link_state[l].used, self.link_state[l].old_max_level)
    }

    /// The cap of the active flow at dense index g (cap_now; a flow whose data is all
    /// there from the start has none, which spares a look at its spec).
    #[inline]
    fn fair_cap(&self, core: &Core, g: usize) -> f64 {
        if self.flows_hot[g].has_data_span {
            core.cap_now(core.active[g] as usize)
        } else {
            INF
        }
    }

    /// The committed level of the flow at dense index g (its rate under `ps`).
    #[inline]
    fn committed_level(&self, g: usize) -> f64 {
        if self.weighted {
            self.flows_cold[g].level
        } else {
            self.flows_hot[g].rate
        }
    }

    /// The weight of the flow at dense index g (1 under `ps`).
    #[inline]
    fn weight_of(&self, g: usize) -> f64 {
        if self.weighted {
            self.flows_cold[g].weight
        } else {
            1.0
        }
    }

    /// The unfrozen weight of link l in this fill (with its lost rounding under `wps`).
    #[inline]
    fn link_weight(&self, l: usize) -> f64 {
        if self.weighted {
            compensated(self.link_state[l].unfrozen_weight, self.link_weight_lo[l])
        } else {
            self.link_state[l].unfrozen_weight
        }
    }

    /// The cap of this fill of the flow at dense index g (none without a data span).
    #[inline]
    fn fill_cap(&self, g: usize) -> f64 {
        if self.flows_hot[g].has_data_span {
            self.flows_cold[g].cap
        } else {
            INF
        }
    }

    /// The path slot of flow g on link l.
    #[inline]
    fn fair_slot(&self, g: usize, l: usize) -> usize {
        let mut p = g * self.slots_per_flow;
        while self.slot_link[p] as usize != l {
            p += 1;
        }
        p
    }

    /// The path slots of the flow at dense index g.
    #[inline]
    fn fair_slots(&self, g: usize) -> std::ops::Range<usize> {
        let p = g * self.slots_per_flow;
        p..p + self.flows_hot[g].path_len as usize
    }

    /// Link l joins the fill at level fill_level: its residual capacity and unfrozen weight. Its
    /// virtual flows below fill_level are final. A virtual flow that l was a bottleneck of (or
    /// every virtual flow, on a link an event changed) is tracked: unfrozen, with an
    /// event at its old level. The others are "parked" at their old rate on l (they have
    /// a bottleneck elsewhere); a parked flow found above the level where l saturates is
    /// unparked and tracked (see fair_allocate), which only raises that level.
    #[inline]
    fn fair_join(&mut self, core: &mut Core, l: usize, fill_level: f64, track_all: bool) {
        // Most calls find the link joined already: that test stays at the caller.
        if self.link_state[l].stamp != self.stamp {
            if self.weighted {
                self.fair_join_new::<true>(core, l, fill_level, track_all);
            } else {
                self.fair_join_new::<false>(core, l, fill_level, track_all);
            }
        }
    }

    /// `fair_join` of a link not yet in this fill, under `wps` (`W`) or `ps`.
    #[inline(never)]
    fn fair_join_new<const W: bool>(&mut self, core: &mut Core, l: usize, fill_level: f64, track_all: bool) {
        let stamp = self.stamp;
        self.link_state[l].stamp = stamp;
        // On a link of the event every virtual flow is tracked: no need for its old state.
        let bottleneck_level = if track_all {
            0.0
        } else {
            let (used, max_level) = self.fair_old_state(l);
            if used >= core.topo.capacity[l] * (1.0 - TOL) {
                max_level * (1.0 - TOL)
            } else {
                INF
            }
        };
        let mut residual = core.topo.capacity[l];
        let (mut unfrozen_weight, mut weight_lo) = (0.0, 0.0);
        let mut unfrozen = 0u32;
        let mut parked = 0u32;
        let mut parked_max = 0.0f64;
        // Local borrows: the loop reads and writes disjoint fields.
        let (flows_hot, slot_parked, slot_link) = (&mut self.flows_hot[..], &mut self.slot_parked[..], &self.slot_link[..]);
        let (flows_cold, weighted) = (&self.flows_cold[..], W);
        let (tracked_scratch, slots_per_flow) = (&mut self.tracked_scratch, self.slots_per_flow);
        for &g in &self.lazy.link_flows[l] {
            let g = g as usize;
            let f = &mut flows_hot[g];
            let (old_level, weight) = if weighted { (flows_cold[g].level, flows_cold[g].weight) } else { (f.rate, 1.0) };
            if f.real_stamp == stamp {
                if f.frozen_stamp == stamp {
                    residual -= f.new_rate;
                } else {
                    add_weight(&mut unfrozen_weight, &mut weight_lo, weight, weighted);
                    unfrozen += 1;
                }
            } else if f.frozen_stamp == stamp {
                residual -= f.rate;
            } else {
                if old_level < fill_level {
                    f.frozen_stamp = stamp;
                    residual -= f.rate;
                } else if old_level >= bottleneck_level {
                    add_weight(&mut unfrozen_weight, &mut weight_lo, weight, weighted);
                    unfrozen += 1;
                    if f.tracked_stamp != stamp {
                        tracked_scratch.push(g as u32);
                    }
                } else {
                    residual -= f.rate;
                    // fair_slot(g, l)
                    let mut p = g * slots_per_flow;
                    while slot_link[p] as usize != l {
                        p += 1;
                    }
                    slot_parked[p] = stamp;
                    parked += 1;
                    parked_max = parked_max.max(old_level);
                }
            }
        }
        self.link_state[l].residual = residual;
        self.link_state[l].unfrozen_weight = unfrozen_weight;
        if W {
            self.link_weight_lo[l] = weight_lo;
        }
        self.link_state[l].unfrozen_count = unfrozen;
        self.unfrozen_total += unfrozen;
        self.link_state[l].parked_count = parked;
        self.link_state[l].parked_max_level = parked_max;
        self.link_state[l].version = 0;
        // A tracked flow needs its own check only if l does not stop it first: the check
        // of one at or above the level of l is deferred until that level rises past it
        // (see fair_allocate), and is mostly never needed. Below it, a flow on a two-link
        // path turns real at once (see the module doc); one on a longer path gets an
        // event at its old level.
        let mut min_deferred = INF;
        if unfrozen > 0 {
            let saturation = residual.max(0.0) / compensated(unfrozen_weight, weight_lo);
            for k in 0..self.tracked_scratch.len() {
                let g = self.tracked_scratch[k] as usize;
                let old_level = self.committed_level(g);
                if old_level < saturation {
                    if self.flows_hot[g].tracked_stamp != stamp {
                        self.flows_hot[g].tracked_stamp = stamp;
                        if self.flows_hot[g].path_len <= 2 {
                            self.promote_now.push(g as u32);
                        } else {
                            self.fill_events.push(Item::new(old_level, 1, g, 0));
                        }
                    }
                } else {
                    min_deferred = min_deferred.min(old_level);
                }
            }
            self.fill_events.push(Item::new(saturation, 0, l, 0));
        }
        self.tracked_scratch.clear();
        self.link_state[l].min_deferred_level = min_deferred;
    }

    /// Link l's level rose to `saturation`: the events of the flows tracked there whose old level
    /// it passed (deferred in fair_join) go into the heap.
    fn fair_undefer(&mut self, l: usize, saturation: f64) {
        let stamp = self.stamp;
        let mut min_deferred = INF;
        for k in 0..self.lazy.link_flows[l].len() {
            let g = self.lazy.link_flows[l][k] as usize;
            if self.flows_hot[g].tracked_stamp == stamp || self.flows_hot[g].frozen_stamp == stamp || self.flows_hot[g].real_stamp == stamp || (self.link_state[l].parked_count > 0 && self.slot_parked[self.fair_slot(g, l)] == stamp) {
                continue;
            }
            let old_level = self.committed_level(g);
            if old_level < saturation {
                self.flows_hot[g].tracked_stamp = stamp;
                self.fill_events.push(Item::new(old_level, 1, g, 0));
            } else {
                min_deferred = min_deferred.min(old_level);
            }
        }
        self.link_state[l].min_deferred_level = min_deferred;
    }

    /// Flow g (unfrozen, or parked, on the links of the fill) freezes at rate r.
    fn fair_freeze(&mut self, g: usize, r: f64) {
        if self.weighted {
            self.fair_freeze_w::<true>(g, r)
        } else {
            self.fair_freeze_w::<false>(g, r)
        }
    }

    /// `fair_freeze` under `wps` (`W`) or `ps`.
    #[inline(always)]
    fn fair_freeze_w<const W: bool>(&mut self, g: usize, r: f64) {
        let stamp = self.stamp;
        self.flows_hot[g].frozen_stamp = stamp;
        let w = self.weight_of(g);
        for p in self.fair_slots(g) {
            let l = self.slot_link[p] as usize;
            if self.link_state[l].stamp != stamp {
                continue;
            }
            if self.slot_parked[p] == stamp {
                self.slot_parked[p] = stamp.wrapping_sub(1);
                self.link_state[l].parked_count -= 1;
                self.link_state[l].residual += self.flows_hot[g].rate - r;
            } else {
                let mut unused = 0.0;
                let lo = if W { &mut self.link_weight_lo[l] } else { &mut unused };
                self.link_state[l].freeze::<W>(r, w, lo);
                self.unfrozen_total -= 1;
            }
            self.link_state[l].version = self.link_state[l].version.wrapping_add(1);
        }
    }

    /// Unparks flow g on the link of slot p (it is unfrozen there from now on); the link's
    /// level may fall (not below the current level): a fresh heap entry.
    fn fair_unpark(&mut self, g: usize, p: usize) {
        let stamp = self.stamp;
        let l = self.slot_link[p] as usize;
        self.slot_parked[p] = stamp.wrapping_sub(1);
        self.link_state[l].parked_count -= 1;
        self.link_state[l].residual += self.flows_hot[g].rate;
        if self.weighted {
            add_compensated(&mut self.link_state[l].unfrozen_weight, &mut self.link_weight_lo[l], self.flows_cold[g].weight);
        } else {
            self.link_state[l].unfrozen_weight += 1.0;
        }
        self.link_state[l].unfrozen_count += 1;
        self.unfrozen_total += 1;
        self.link_state[l].version = self.link_state[l].version.wrapping_add(1);
        self.fill_events.push(Item::new(self.link_state[l].residual.max(0.0) / self.link_weight(l), 0, l, self.link_state[l].version));
    }

    /// Flow g turns real: its cap, and its other links join the fill.
    fn fair_make_real(&mut self, core: &mut Core, g: usize, fill_level: f64) {
        self.flows_hot[g].real_stamp = self.stamp;
        self.real_flows.push(g as u32);
        self.flows_cold[g].cap = self.fair_cap(core, g);
        for p in self.fair_slots(g) {
            self.fair_join(core, self.slot_link[p] as usize, fill_level, false);
        }
    }

    /// Virtual flow g goes on rising from level fill_level: unparked wherever it is parked, it
    /// turns real, with an event at its cap if it has one.
    #[inline]
    fn fair_rise(&mut self, core: &mut Core, g: usize, fill_level: f64) {
        let stamp = self.stamp;
        for p in self.fair_slots(g) {
            if self.slot_parked[p] == stamp && self.link_state[self.slot_link[p] as usize].stamp == stamp {
                self.fair_unpark(g, p);
            }
        }
        self.fair_make_real(core, g, fill_level);
        let cap = self.fill_cap(g);
        if cap < INF {
            self.fill_events.push(Item::new(cap / self.weight_of(g), 2, g, 0));
        }
    }

    /// Whether virtual flow g, at its old level fill_level, still stops there, and at which rate:
    /// its old rate at its cap or on an untouched link where it was a bottleneck
    /// (saturated, and no flow with a higher level); on links of the fill that saturate
    /// at fill_level (within TOL, and no parked flow above fill_level there), weight * the lowest of
    /// their levels, so that a link's slack of up to TOL is not left to its other flows.
    fn fair_still_stops(&mut self, core: &mut Core, g: usize, fill_level: f64) -> Option<f64> {
        let stamp = self.stamp;
        let r = self.flows_hot[g].rate;
        let cap = self.fill_cap(g);
        if cap < INF && r >= cap * (1.0 - TOL) {
            return Some(r);
        }
        let old_level = self.committed_level(g);
        let mut lowest_level = INF;
        for p in self.fair_slots(g) {
            let l = self.slot_link[p] as usize;
            if self.link_state[l].stamp == stamp {
                if self.link_state[l].unfrozen_count > 0 && self.slot_parked[p] != stamp && self.link_state[l].residual.max(0.0) <= self.link_weight(l) * fill_level * (1.0 + TOL) {
                    let upper = fill_level * (1.0 + TOL);
                    let parked_above = self.link_state[l].parked_count > 0 && self.lazy.link_flows[l].iter().any(|&h| {
                        let h = h as usize;
                        self.flows_hot[h].frozen_stamp != stamp && self.flows_hot[h].real_stamp != stamp && self.flows_hot[h].rate > self.weight_of(h) * upper && self.slot_parked[self.fair_slot(h, l)] == stamp
                    });
                    if !parked_above {
                        lowest_level = lowest_level.min(self.link_state[l].residual.max(0.0) / self.link_weight(l));
                    }
                }
            } else {
                let (used, max_level) = self.fair_old_state(l);
                if used >= core.topo.capacity[l] * (1.0 - TOL) && old_level >= max_level * (1.0 - TOL) {
                    return Some(r);
                }
            }
        }
        (lowest_level < INF).then(|| self.weight_of(g) * lowest_level)
    }

    /// Virtual flow g freezes at rate r (at most its cap), within TOL of its old rate,
    /// committed as a real flow's (its links outside the fill keep its old rate: a change
    /// within TOL).
    fn fair_freeze_near(&mut self, core: &mut Core, g: usize, r: f64) {
        let old = self.flows_hot[g].rate;
        let r = if self.flows_hot[g].has_data_span {
            self.flows_cold[g].cap = self.fair_cap(core, g);
            r.min(self.flows_cold[g].cap)
        } else {
            r
        };
        if r.to_bits() != old.to_bits() {
            self.flows_hot[g].real_stamp = self.stamp;
            self.real_flows.push(g as u32);
            self.flows_hot[g].new_rate = r;
            self.fair_freeze(g, r);
        } else {
            self.fair_freeze(g, old);
        }
    }

    /// Commits the new rate of the flow at dense index f (its `new_rate`; `rate_changes`
    /// holds): its bytes sent brought up to now, its flow event moved, its links' cached
    /// old state dropped.
    #[inline(always)]
    fn fair_commit(&mut self, core: &mut Core, f: usize) {
        let (r, old) = (self.flows_hot[f].new_rate, self.flows_hot[f].rate);
        let i = core.active[f] as usize;
        if self.flows_hot[f].has_data_span {
            self.lazy.set_rate(core, i, r, &[]);
        } else {
            // set_rate for a flow with no data span (no cap, no PIAS threshold).
            // The dense state mirrors the flow's: its old rate and size.
            debug_assert!(old.to_bits() == core.rate[i].to_bits() && self.flows_cold[f].size == core.flows[i].size_bytes);
            let (now, size, old_rate) = (core.now, self.flows_cold[f].size, old);
            let sent = if old_rate == 0.0 { core.sent[i] } else { (core.sent[i] + old_rate * (now - core.sent_at[i])).min(size) };
            core.sent[i] = sent;
            core.sent_at[i] = now;
            core.rate[i] = r;
            if r <= 0.0 {
                self.lazy.flow_events.remove(i as u32);
            } else {
                self.lazy.flow_events.set_later(i as u32, now + (size - sent) / r);
            }
        }
        self.flows_hot[f].rate = r;
        if self.weighted {
            self.flows_cold[f].level = r / self.flows_cold[f].weight;
        }
        // The links' cached old state is dropped (a store; updating it in place
        // reads the links here and measured slower). The direct fill keeps none.
        if !self.direct {
            for p in self.fair_slots(f) {
                self.link_state[self.slot_link[p] as usize].used = f64::NAN;
            }
        }
    }

    /// Re-runs the filling where it changes (see the module doc), commits the rates that
    /// changed, and computes the next event time.
    pub(super) fn fair_allocate(&mut self, core: &mut Core) -> Result<()> {
        if self.direct {
            return self.fair_direct(core);
        }
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        self.real_flows.clear();
        for k in 0..self.seed_flows.len() {
            let i = self.seed_flows[k] as usize;
            if core.status[i] != Status::Active {
                continue;
            }
            let s = core.active_pos[i] as usize;
            if self.flows_hot[s].real_stamp != stamp {
                self.flows_hot[s].real_stamp = stamp;
                self.real_flows.push(s as u32);
            }
        }
        self.seed_flows.clear();
        let mut fill_level = self.fair_floor(core);
        if fill_level == INF && !self.seed_links.is_empty() {
            fill_level = 0.0;
        }
        fill_level *= 1.0 - 1e-9;
        self.fill_events.clear();
        self.unfrozen_total = 0;
        for k in 0..self.real_flows.len() {
            let g = self.real_flows[k] as usize;
            self.flows_cold[g].cap = self.fair_cap(core, g);
        }
        // The links of the event: every virtual flow there is tracked (their committed
        // rates do not tell the bottlenecks of the new state).
        for k in 0..self.seed_links.len() {
            self.fair_join(core, self.seed_links[k] as usize, fill_level, true);
        }
        for k in 0..self.real_flows.len() {
            let g = self.real_flows[k] as usize;
            for p in self.fair_slots(g) {
                self.fair_join(core, self.slot_link[p] as usize, fill_level, true);
            }
        }
        self.seed_links.clear();
        for k in 0..self.real_flows.len() {
            let g = self.real_flows[k] as usize;
            let cap = self.fill_cap(g);
            if cap < INF {
                self.fill_events.push(Item::new(cap / self.weight_of(g), 2, g, 0));
            }
        }
        // Progress guard: a step per flow or link of the fill, about twice per flow.
        let bound = ALLOC_STEPS_PER_FLOW * (core.active.len() as u64 + self.link_state.len() as u64 + 1);
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps > bound {
                let flows: Vec<u32> = self.real_flows.iter().take(64).map(|&s| core.active[s as usize]).collect();
                let what = format!(
                    "{steps} steps of one fill, and its heap does not drain \
                     (bound {ALLOC_STEPS_PER_FLOW} * (active flows + links + 1) = {bound})"
                );
                return Err(core.no_progress(self.name(), &what, &flows));
            }
            while let Some(g) = self.promote_now.pop() {
                let g = g as usize;
                if self.flows_hot[g].real_stamp != stamp && self.flows_hot[g].frozen_stamp != stamp {
                    self.fair_rise(core, g, fill_level);
                }
            }
            let Some(top) = self.fill_events.peek().copied() else { break };
            if self.unfrozen_total == 0 {
                // Every flow of the fill is frozen: what is left in the heap is stale.
                break;
            }
            let id = top.id();
            if top.kind() == 0 && self.link_state[id].unfrozen_count > 0 && top.version() != self.link_state[id].version {
                // Levels only rise as flows freeze: the stale top moves to the current one
                // (in place: one sift instead of a pop and a push).
                let level = self.link_state[id].residual.max(0.0) / self.link_weight(id);
                *self.fill_events.peek_mut().unwrap() = Item::new(level, 0, id, self.link_state[id].version);
                if level > self.link_state[id].min_deferred_level {
                    self.fair_undefer(id, level);
                }
                continue;
            }
            let event = self.fill_events.pop().unwrap();
            match event.kind() {
                0 => {
                    let l = id;
                    if self.link_state[l].unfrozen_count == 0 {
                        continue;
                    }
                    // Parked flows above this level: unpark them (the level rises).
                    let upper = event.level() * (1.0 + TOL);
                    let mut moved = false;
                    // None if every parked flow's old level is below (parked_max_level bounds them:
                    // parked flows keep their old rates; the margin covers rate vs
                    // weight * level rounding under wps).
                    let scan = self.link_state[l].parked_count > 0 && self.link_state[l].parked_max_level > upper * (1.0 - 1e-12);
                    for k in 0..if scan { self.lazy.link_flows[l].len() } else { 0 } {
                        let g = self.lazy.link_flows[l][k] as usize;
                        if self.flows_hot[g].frozen_stamp == stamp || self.flows_hot[g].real_stamp == stamp || self.flows_hot[g].rate <= self.weight_of(g) * upper {
                            continue;
                        }
                        let p = self.fair_slot(g, l);
                        if self.slot_parked[p] == stamp {
                            self.fair_unpark(g, p);
                            moved = true;
                            if self.flows_hot[g].tracked_stamp != stamp {
                                self.flows_hot[g].tracked_stamp = stamp;
                                self.fill_events.push(Item::new(self.committed_level(g), 1, g, 0));
                            }
                        }
                    }
                    if moved {
                        continue;
                    }
                    fill_level = fill_level.max(event.level());
                    for k in 0..self.lazy.link_flows[l].len() {
                        let g = self.lazy.link_flows[l][k] as usize;
                        if self.flows_hot[g].frozen_stamp == stamp {
                            continue;
                        }
                        let w = self.weight_of(g);
                        if self.flows_hot[g].real_stamp == stamp {
                            let r = (w * fill_level).min(self.fill_cap(g));
                            self.flows_hot[g].new_rate = r;
                            self.fair_freeze(g, r);
                        } else if self.flows_hot[g].rate <= w * fill_level * (1.0 + TOL) {
                            // Saturates at the virtual flow's old level (or a parked flow
                            // below it): it stays. One within TOL of the level but not at
                            // it takes the level's exact rate (committed when it differs by
                            // more than 1e-12; the other links keep its old rate, a change
                            // within TOL): otherwise flows bottlenecked at one link drift
                            // apart by up to TOL at each fill, until the lower ones look
                            // bottlenecked elsewhere (below the link's highest level by
                            // more than TOL) and are parked below it for good.
                            let (old, r) = (self.flows_hot[g].rate, w * fill_level);
                            if old >= r * (1.0 - TOL) {
                                self.fair_freeze_near(core, g, r);
                            } else {
                                self.fair_freeze(g, old);
                            }
                        } else {
                            // Frozen below its old level: it turns real.
                            let r = w * fill_level;
                            self.flows_hot[g].new_rate = r;
                            self.fair_freeze(g, r);
                            self.fair_make_real(core, g, fill_level);
                        }
                    }
                }
                1 => {
                    let g = id;
                    if self.flows_hot[g].real_stamp == stamp || self.flows_hot[g].frozen_stamp == stamp {
                        continue;
                    }
                    fill_level = fill_level.max(event.level());
                    if let Some(r) = self.fair_still_stops(core, g, fill_level) {
                        self.fair_freeze_near(core, g, r);
                    } else {
                        self.fair_rise(core, g, fill_level);
                    }
                }
                _ => {
                    let g = id;
                    if self.flows_hot[g].real_stamp != stamp || self.flows_hot[g].frozen_stamp == stamp {
                        continue;
                    }
                    fill_level = fill_level.max(event.level());
                    let r = self.fill_cap(g);
                    self.flows_hot[g].new_rate = r;
                    self.fair_freeze(g, r);
                }
            }
        }
        // Commit.
        for k in 0..self.real_flows.len() {
            let f = self.real_flows[k] as usize;
            debug_assert!(self.flows_hot[f].frozen_stamp == stamp, "a real flow is frozen at the end of the fill");
            if self.flows_hot[f].rate_changes() {
                self.fair_commit(core, f);
            }
        }
        self.real_flows.clear();
        self.lazy.reschedule_pending(core, &[]);
        core.next_event = self.lazy.next_event(core);
        Ok(())
    }
}

impl IncrementalFairSharing {
    /// The direct fill (see the module doc): progressive filling of every active flow
    /// from level 0, then the commit of the rates that changed and the next event time.
    fn fair_direct(&mut self, core: &mut Core) -> Result<()> {
        if self.weighted {
            self.fair_direct_w::<true>(core)
        } else {
            self.fair_direct_w::<false>(core)
        }
    }

    /// `fair_direct` under `wps` (`W`) or `ps` (every weight 1: none is read).
    fn fair_direct_w<const W: bool>(&mut self, core: &mut Core) -> Result<()> {
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        // The incremental fill's seeds and floor mean nothing here.
        self.seed_flows.clear();
        self.seed_links.clear();
        self.floor = INF;
        let n_active = core.active.len();
        if self.direct_changed.len() < n_active {
            self.direct_changed.resize(n_active, 0);
        }
        self.direct_n_changed = 0;
        self.direct_links.live = 0;
        for (j, &l) in self.fill_links.iter().enumerate() {
            let flows = &self.lazy.link_flows[l as usize];
            if flows.is_empty() {
                continue;
            }
            let dl = &mut *self.direct_links;
            dl.residual[ix(j)] = core.topo.capacity[l as usize];
            dl.unfrozen_count[ix(j)] = flows.len() as u32;
            if W {
                let mut sum = WeightSum::ZERO;
                for &g in flows {
                    sum.add(self.flows_cold[g as usize].weight);
                }
                dl.unfrozen_weight[ix(j)] = sum;
            }
            dl.set_level::<W>(j);
            dl.live |= 1 << j;
        }
        self.capped.clear();
        // (no flow can have a cap without a data span)
        for g in 0..if self.active_spans > 0 { n_active } else { 0 } {
            if self.flows_hot[g].has_data_span {
                let cap = self.fair_cap(core, g);
                self.flows_cold[g].cap = cap;
                if cap < INF {
                    self.capped.push((cap / self.weight_of(g), g as u32));
                }
            }
        }
        self.capped.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut next_capped = 0;
        // Progress guard: each round freezes at least one flow.
        let bound = n_active as u64 + 1;
        let mut rounds = 0u64;
        loop {
            rounds += 1;
            if rounds > bound {
                let what = format!("{rounds} rounds of one direct fill over {n_active} active flows, each of which should freeze one");
                return Err(core.no_progress(self.name(), &what, &[]));
            }
            // The link that saturates first (the lowest index on a tie; links without
            // unfrozen flows have levels this never picks: `set_level`).
            let (mut best, mut best_level) = (u8::MAX, INF);
            let dl = &*self.direct_links;
            let mut live = dl.live;
            while live != 0 {
                let j = live.trailing_zeros() as usize;
                live &= live - 1;
                let level = dl.level[ix(j)];
                if level < best_level {
                    (best, best_level) = (j as u8, level);
                }
            }
            while next_capped < self.capped.len() && self.flows_hot[self.capped[next_capped].1 as usize].frozen_stamp == stamp {
                next_capped += 1;
            }
            if next_capped < self.capped.len() && self.capped[next_capped].0 <= best_level {
                // A flow reaches its cap first.
                let g = self.capped[next_capped].1 as usize;
                next_capped += 1;
                self.direct_freeze::<W>(g, self.flows_cold[g].cap);
                continue;
            }
            if best == u8::MAX {
                break;
            }
            self.direct_freeze_link::<W>(best, best_level);
        }
        // The flows whose rate changes, noted as they froze (`direct_freeze_link`,
        // `direct_freeze`), committed in that order (a commit changes only its own flow's
        // state, so the order changes no result).
        let changed = std::mem::take(&mut self.direct_changed);
        debug_assert!(self.flows_hot[..n_active].iter().all(|f| f.frozen_stamp == stamp), "every active flow is frozen at the end of the direct fill");
        for &f in &changed[..self.direct_n_changed] {
            self.fair_commit(core, f as usize);
        }
        self.direct_changed = changed;
        self.lazy.reschedule_pending(core, &[]);
        core.next_event = self.lazy.next_event(core);
        Ok(())
    }

    /// The direct fill freezes the unfrozen flows of link j (its index in `fill_links`) at
    /// `level` (each at its weight times the level), in the link's list order: each flow's
    /// other links as `DirectLinks::freeze`, with the state borrowed once for the loop,
    /// except that link j itself is only marked as having no unfrozen flow: it leaves the
    /// fill, and its residual is not read again in this fill (per-flow updates of it made
    /// one long chain of dependent stores).
    fn direct_freeze_link<const W: bool>(&mut self, j: u8, level: f64) {
        let (stamp, spf) = (self.stamp, self.slots_per_flow);
        let (flows_hot, flows_cold) = (&mut self.flows_hot[..], &self.flows_cold[..]);
        let (slot_fill, dl) = (&self.slot_fill[..], &mut *self.direct_links);
        let (changed, mut n_changed) = (&mut self.direct_changed[..], self.direct_n_changed);
        for &g in &self.lazy.link_flows[self.fill_links[j as usize] as usize] {
            let g = g as usize;
            let f = &mut flows_hot[g];
            if f.frozen_stamp == stamp {
                continue;
            }
            let w = if W { flows_cold[g].weight } else { 1.0 };
            let r = w * level;
            f.frozen_stamp = stamp;
            f.new_rate = r;
            // (without a branch: about a third of the flows change, unpredictably)
            changed[n_changed] = g as u32;
            n_changed += f.rate_changes() as usize;
            if f.path_len == 2 {
                // a host's two links (a big switch, a parking lot's host links): the other one
                dl.freeze::<W>(f.direct_pair ^ j, r, w);
                continue;
            }
            let p = g * spf;
            for &sj in &slot_fill[p..p + f.path_len as usize] {
                if sj == j {
                    continue;
                }
                dl.freeze::<W>(sj, r, w);
            }
        }
        self.direct_n_changed = n_changed;
        dl.unfrozen_count[ix(j as usize)] = 0;
        dl.unfrozen_weight[ix(j as usize)] = WeightSum::ZERO;
        dl.live &= !(1 << j);
    }

    /// The direct fill freezes the flow at dense index g at rate r.
    #[inline]
    fn direct_freeze<const W: bool>(&mut self, g: usize, r: f64) {
        self.flows_hot[g].frozen_stamp = self.stamp;
        self.flows_hot[g].new_rate = r;
        self.direct_changed[self.direct_n_changed] = g as u32;
        self.direct_n_changed += self.flows_hot[g].rate_changes() as usize;
        let w = self.weight_of(g);
        for p in self.fair_slots(g) {
            self.direct_links.freeze::<W>(self.slot_fill[p], r, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{never_binding, Item};

    /// Paths on a line of 4 switches, host h on switch h: up link h (host -> switch),
    /// down link 4 + h, switch links 8 + s (s -> s + 1) and 11 + s (s + 1 -> s).
    fn line_paths(pairs: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
        let (mut off, mut links) = (vec![0u32], Vec::new());
        for &(a, b) in pairs {
            links.push(a);
            if a < b {
                links.extend((a..b).map(|s| 8 + s));
            } else {
                links.extend((b..a).rev().map(|s| 11 + s));
            }
            links.push(4 + b);
            off.push(links.len() as u32);
        }
        (off, links)
    }

    #[test]
    fn never_binding_leaves_out_exactly_the_links_their_hosts_cannot_fill() {
        let all: Vec<(u32, u32)> = (0..4).flat_map(|a| (0..4).filter(move |&b| b != a).map(move |b| (a, b))).collect();
        let (off, links) = line_paths(&all);
        // Host links 10, switch links 20: the middle link (2 hosts a side) is exactly at its
        // bound and left out, like the outer ones (1 host a side); host links stay.
        let mut cap = vec![10.0; 8];
        cap.extend([20.0; 6]);
        let skip = never_binding(&off, &links, &cap).unwrap();
        assert_eq!(skip, [vec![false; 8], vec![true; 6]].concat());
        // At 15 the middle links (8 + 1, 11 + 1) can bind; the outer ones still cannot.
        cap[9] = 15.0;
        cap[12] = 15.0;
        let skip = never_binding(&off, &links, &cap).unwrap();
        assert_eq!(&skip[8..], &[true, false, true, true, false, true]);
        // One source is enough: link 9 (switch 1 -> 2) carries only host 1's flows here,
        // whatever the destinations' links add up to.
        let (off, links) = line_paths(&[(1, 2), (1, 3)]);
        let skip = never_binding(&off, &links, &cap).unwrap();
        assert!(skip[9] && skip[10] && !skip[1] && !skip[6] && !skip[7]);
        // A link no path crosses is left out; no flows, nothing kept.
        assert!(skip[13]);
        assert_eq!(never_binding(&[0], &[], &cap).unwrap(), vec![true; 14]);
    }

    #[test]
    fn items_order_like_total_cmp_then_key() {
        let levels = [f64::NEG_INFINITY, -2.5, -1e-300, -0.0, 0.0, 1e-300, 1.0, 1.0000000000000002, 3e9, f64::INFINITY];
        for (a, &x) in levels.iter().enumerate() {
            for (b, &y) in levels.iter().enumerate() {
                for (k, v) in [(0u64, 5u32), (1, 0), (2, 7)] {
                    let (p, q) = (Item::new(x, k, a, v), Item::new(y, 1, b, 3));
                    assert_eq!(p.level().to_bits(), x.to_bits());
                    assert_eq!((p.kind(), p.id(), p.version()), (k, a, v));
                    let want = x.total_cmp(&y).then((k, a, v).cmp(&(1, b, 3)));
                    assert_eq!(q.cmp(&p), want, "{x} {k} {a} vs {y}");
                }
            }
        }
    }
}
