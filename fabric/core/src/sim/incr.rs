//! The incremental allocator for strict-priority schedulers (fifo, srpt, asrpt/ga:*,
//! pias, edf, ssdf, lsdf, random).
//!
//! Under greedy strict-priority allocation, a flow's rate depends only on the flows
//! ahead of it on its own links: rate = min(cap, min over its links of capacity minus
//! the rates of the flows ahead on that link). So every link keeps its active flows in
//! priority order, and an event re-evaluates only the flows it can affect: the flow it
//! concerns and, transitively, the flows behind a flow whose rate changed. A worklist
//! in priority order evaluates each affected flow once, after everything ahead of it.
//! Flows advance lazily (bytes sent = sent at sent_at + rate * (now - sent_at)), and every flow
//! has one pending "flow event" (completion, catching up with its data, a PIAS
//! threshold) in a heap. Keys that move with time (SRPT's remaining size) keep the
//! per-link orders right through crossing events between neighbours on a link.
//! A flow waiting at rate 0 because a link has no room ahead of it is parked: it leaves
//! the lists and waits in that link's heap of parked flows until room opens there
//! (see `park`), so that a backlog of waiting flows costs the scans nothing.
//! `AllocatorChoice::Full` runs the same schedulers through the full
//! recomputation instead; the test suite checks both give the same results.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::allocator::Allocator;
use super::{evheap, filled, finish_tol_of, pass_again_at, Core, Status, ALLOC_STEPS_PER_FLOW, INF};
use crate::error::Result;
use crate::sched::{GaInner, Scheduler};

pub(super) fn applies(s: &Scheduler) -> bool {
    matches!(
        s,
        Scheduler::Fifo
            | Scheduler::Srpt
            | Scheduler::Ga(_)
            | Scheduler::Pias
            | Scheduler::Edf
            | Scheduler::Ssdf
            | Scheduler::Lsdf
            | Scheduler::Random
    )
}

/// A hint to bring the cache line of `x` in (x86-64; nothing elsewhere).
#[inline(always)]
fn prefetch<T: ?Sized>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// `FlowSlot::parked_on`'s link of a flow that is not parked.
const NOT_PARKED: u32 = u32::MAX;

/// What the priority allocator keeps per flow, in one record (20 bytes) rather than one
/// array each: an evaluation reads most of it, and on a large trace every array read
/// is a cache miss of its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowSlot {
    /// The link it is parked on (`NOT_PARKED`: none), and the version of its entry in
    /// that link's `parked` heap. A flow that waits at rate 0 because a link has no room
    /// ahead of it leaves every list (see `park`), so no scan passes it.
    parked_on: [u32; 2],
    /// The link that bounds its rate (`u32::MAX`: its cap, or none).
    binding_link: u32,
    /// The cursor epoch in which a scan passed it.
    passed_in_epoch: u32,
    /// Whether it is on the worklist.
    on_worklist: bool,
}

/// A flow waiting to be re-evaluated, ordered by priority at the current time (min first).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WorkItem {
    k1: f64,
    k2: f64,
    arrival: f64,
    idx: u32,
}
impl WorkItem {
    fn cmp_prio(&self, o: &Self) -> Ordering {
        self.k1
            .total_cmp(&o.k1)
            .then(self.k2.total_cmp(&o.k2))
            .then(self.arrival.total_cmp(&o.arrival))
            .then(self.idx.cmp(&o.idx))
    }
}
impl PartialEq for WorkItem {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for WorkItem {}
impl PartialOrd for WorkItem {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for WorkItem {
    fn cmp(&self, o: &Self) -> Ordering {
        o.cmp_prio(self) // BinaryHeap is a max-heap: reverse for highest priority first
    }
}

/// A flow parked on a link (`IncrementalPriority::park`): its priority (which does not
/// move while it waits) and the version of its parking. In a `BinaryHeap`, the highest
/// priority comes first (`WorkItem`'s order).
pub(crate) type Parked = (WorkItem, u32);

/// Where an allocation's scan of a link's list has got to: the flows at positions below
/// `pos` are behind it, and `res` is the link's capacity minus their rates (`full`: it
/// fell to nothing, at or before `pos`). Valid while `epoch` is the allocation's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cursor {
    epoch: u32,
    pos: u32,
    full: bool,
    res: f64,
}

/// What both incremental allocators (priority, fair sharing) keep beside their own state:
/// the per-link lists, each active flow's own next event, and the flows to reschedule.
/// Flows advance lazily under them: the core's `sent` holds bytes sent at `sent_at`.
#[derive(Debug, Clone)]
pub(super) struct LazyFlows {
    /// Per link, its active flows: in priority order (incremental priority) or as dense
    /// fill indices (incremental fair sharing).
    pub(super) link_flows: Vec<Vec<u32>>,
    /// Each active flow's next own event (completion, catching up with its data, a PIAS
    /// threshold).
    pub(super) flow_events: evheap::EventHeap,
    /// Flows whose own event an allocation must schedule again although their rate may
    /// not change (after a catch-up or a threshold).
    pub(super) reschedule: Vec<u32>,
}

impl LazyFlows {
    /// The lists of `n_links` links and the event heap of `n` flows.
    pub(super) fn new(n: usize, n_links: usize) -> Result<Self> {
        Ok(LazyFlows {
            link_flows: filled(n_links, Vec::new(), "per-link lists")?,
            flow_events: evheap::EventHeap::new(n),
            reschedule: Vec::new(),
        })
    }

    /// Sets flow i's rate from now on (its bytes sent brought up to now first) and
    /// schedules its next own event. `pias_placement`: the PIAS placement (empty unless PIAS).
    #[inline]
    pub(super) fn set_rate(&mut self, core: &mut Core, i: usize, r: f64, pias_placement: &[u32]) {
        core.sent[i] = core.sent_now(i);
        core.sent_at[i] = core.now;
        let was = core.rate[i];
        core.rate[i] = r;
        if r <= 0.0 && was > 0.0 {
            // Stopped by a flow ahead of it with what it sends in a few ulps of t at the
            // rate it had left (its own completion due at this instant but for rounding):
            // that remainder is rounding, and it finishes now, as the full recomputation's
            // check at this event (with that rate's tolerance) has it. The checks that
            // follow (`schedule_flow_event`, `incr_try_finish`) read the tolerance of
            // rate 0, a relative 1e-9 of its size, which that remainder can exceed.
            let size = core.flows[i].size_bytes;
            if size - core.sent[i] <= finish_tol_of(size, was, core.now) && core.complete_or_due(i, core.now) {
                core.sent[i] = size;
            }
        }
        self.schedule_flow_event(core, i, pias_placement);
    }

    /// The next time flow i needs attention: completion, catching up with its data,
    /// or crossing a PIAS threshold (`pias_placement`: the PIAS placement, empty unless PIAS).
    fn schedule_flow_event(&mut self, core: &Core, i: usize, pias_placement: &[u32]) {
        let r = core.rate[i];
        let t = core.now;
        let sent = core.sent[i];
        if !pias_placement.is_empty() && core.pias_queue(sent) > pias_placement[i] as usize {
            // PIAS: its bytes sent reached a threshold (within its tolerance) while it was
            // re-evaluated for another reason, e.g. stopped by a flow ahead a moment before
            // its own threshold event. Re-place it at once, at this time (an event at now),
            // whatever its rate: the full recomputation demotes it at its next event too.
            self.flow_events.set(i as u32, t);
            return;
        }
        if r <= 0.0 {
            // Stopped (by a flow ahead of it) within the finish tolerance of its last byte,
            // in the instant its own completion was due: it finishes now, as the full
            // recomputation's check of every active flow at every event has it. An event
            // at now makes `incr_try_finish` see it; otherwise it would wait at rate 0.
            // (`set_rate` has brought the bytes sent of a flow stopped with its remainder
            // within the tolerance of the rate it had up to its size, so this test, at the
            // tolerance of rate 0, holds for it too.)
            if core.done_at(i, t, sent) {
                self.flow_events.set(i as u32, t);
            } else {
                self.flow_events.remove(i as u32);
            }
            return;
        }
        let f = core.flows[i];
        let mut next = t + (f.size_bytes - sent) / r;
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s {
            let dr = f.size_bytes / f.data_span_s;
            if r > dr * (1.0 + 1e-12) {
                let gap = core.avail(i, t) - sent;
                // Never at t itself (a gap too small to leave t would come back).
                next = next.min((t + gap.max(0.0) / (r - dr)).max(t.next_up()));
            }
        }
        if !pias_placement.is_empty() {
            // The next threshold above its queue. Never at t itself: a gap too small for
            // t + gap / r to leave t would re-create the same event at the same time.
            let th = &core.cfg.pias_thresholds_bytes;
            let q = pias_placement[i] as usize;
            if q < th.len() {
                next = next.min((t + (th[q] - sent).max(0.0) / r).max(t.next_up()));
            }
        }
        self.flow_events.set(i as u32, next);
    }

    /// Schedules again the own events of the flows re-evaluated without a rate change.
    pub(super) fn reschedule_pending(&mut self, core: &mut Core, pias_placement: &[u32]) {
        while let Some(i) = self.reschedule.pop() {
            let i = i as usize;
            if core.status[i] == Status::Active {
                core.sent[i] = core.sent_now(i);
                core.sent_at[i] = core.now;
                self.schedule_flow_event(core, i, pias_placement);
            }
        }
    }

    /// The next event as far as the flows' own events and the timed events go.
    pub(super) fn next_event(&mut self, core: &Core) -> f64 {
        let mut next = core.next_timed_event();
        if let Some((te, _)) = self.flow_events.peek() {
            next = next.min(te);
        }
        next
    }
}

/// The incremental priority allocator (fifo, srpt, asrpt/ga:*, pias, edf, ssdf, lsdf,
/// random): per-link lists in priority order, and a worklist that re-evaluates only the
/// flows an event can affect (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct IncrementalPriority {
    /// The per-link lists, flow events and flows to reschedule (shared machinery).
    pub(super) lazy: LazyFlows,
    /// The worklist: flows to re-evaluate, in priority order (highest first).
    pub(super) worklist: BinaryHeap<WorkItem>,
    /// Per flow: whether it is on the worklist, its binding link, its parking, and the
    /// cursor epoch in which a scan passed it, side by side (see `FlowSlot`).
    pub(super) fl: Vec<FlowSlot>,
    /// Crossing events (keys of neighbours on a link meeting): at most one per link, its
    /// earliest, replaced whenever the link's list changes (an indexed heap, so that no
    /// stale entries pile up: with a heap of versioned entries, a 1,024-host fat-tree's
    /// run kept about 65,000 of them, most stale).
    pub(super) crossings: evheap::EventHeap,
    /// Whether each link's list changed in this allocation (its crossing time is then
    /// recomputed), and those links.
    pub(super) link_changed: Vec<bool>,
    /// The links marked in `link_changed`.
    pub(super) changed_links: Vec<u32>,
    /// Scratch of a crossing: the links to re-sort.
    pub(super) resort_queue: Vec<u32>,
    /// Scratch of a crossing: the stamp of each link queued in this crossing.
    pub(super) resort_stamp_of: Vec<u32>,
    /// Scratch of a crossing: the current stamp of `resort_stamp_of`.
    pub(super) resort_stamp: u32,
    /// Scratch of a crossing: a list's new order.
    pub(super) resort_order: Vec<WorkItem>,
    /// Per-link scan positions of an allocation (see `Cursor`).
    pub(super) cursors: Vec<Cursor>,
    /// The current cursor epoch (one per allocation).
    pub(super) cursor_epoch: u32,
    /// Per link: the flows parked on it, by priority (an entry whose flow is no longer
    /// parked there, or parked there again later, is stale and dropped when it comes up).
    pub(super) parked: Vec<BinaryHeap<Parked>>,
    /// Per link: how many entries of its `parked` heap are stale (while none is, its
    /// first entry is read without checking its flow's `parked_on`).
    pub(super) parked_stale: Vec<u32>,
    /// PIAS: the queue each active flow is placed in on its link lists. Its priority
    /// reads this, never the queue its bytes sent would give now, so the lists stay in
    /// priority order between the events that re-place it (empty for other schedulers).
    pub(super) pias_placement: Vec<u32>,
    /// LAS (`AllocatorChoice::Incremental` only): flows of equal attained service on a
    /// link are filled together (see `las_eval`), and crossings are LAS's.
    pub(super) las: Option<Box<LasGroups>>,
    /// The scheduler is `srpt` (`prio` computes its key directly).
    srpt: bool,
}

/// The state of LAS's groups of equal attained service in the incremental allocator.
#[derive(Debug, Clone)]
pub(super) struct LasGroups {
    /// LAS keys this far apart per second of t are equal (`las::same`).
    key_abs_tol: f64,
    /// The allocation in which each flow was last evaluated (with its group).
    done: Vec<u32>,
    /// The current allocation (0: none yet).
    epoch: u32,
    /// Per flow / per link: the group (stamp) it was last gathered in.
    flow_stamp: Vec<u32>,
    link_stamp: Vec<u32>,
    stamp: u32,
    /// Scratch: the group's flows, its links, and the residual of each link before it.
    members: Vec<u32>,
    links: Vec<u32>,
    res: Vec<f64>,
    /// Scratch of a link's crossing: (sent, rate) of its flows, sorted.
    keys: Vec<(f64, f64)>,
    /// Scratch: the residual of each of `links` before the group, and the group's caps and rates.
    before: Vec<f64>,
    caps: Vec<f64>,
    out: Vec<f64>,
    /// Each flow's key (bytes sent) as of the time in `key_t` (a cache: an evaluation
    /// reads the keys of every flow on its links).
    key_v: Vec<f64>,
    key_t: Vec<f64>,
    /// Scratch caps and rates of `Filler::fill` (groups too large for `fill_small_core`).
    fill_cap: Vec<f64>,
    fill_rate: Vec<f64>,
    ones: Vec<f64>,
    filler: crate::fill::Filler,
}

impl IncrementalPriority {
    /// The allocator of a run of `n` flows on `n_links` links under `scheduler`.
    pub(super) fn new(n: usize, n_links: usize, scheduler: &Scheduler) -> Result<Self> {
        let pias = matches!(scheduler, Scheduler::Pias);
        Ok(IncrementalPriority {
            lazy: LazyFlows::new(n, n_links)?,
            worklist: BinaryHeap::new(),
            fl: filled(n, FlowSlot { parked_on: [NOT_PARKED, 0], binding_link: u32::MAX, passed_in_epoch: 0, on_worklist: false }, "per-flow state")?,
            crossings: evheap::EventHeap::new(n_links),
            link_changed: filled(n_links, false, "per-link state")?,
            changed_links: Vec::new(),
            resort_queue: Vec::new(),
            resort_stamp_of: filled(n_links, 0, "per-link state")?,
            resort_stamp: 0,
            resort_order: Vec::new(),
            cursors: filled(n_links, Cursor::default(), "per-link state")?,
            cursor_epoch: 0,
            parked: filled(n_links, BinaryHeap::new(), "per-link state")?,
            parked_stale: filled(n_links, 0, "per-link state")?,
            pias_placement: vec![0; if pias { n } else { 0 }],
            las: None,
            srpt: matches!(scheduler, Scheduler::Srpt),
        })
    }

    /// The allocator for LAS (`key_abs_tol`: `las::same`'s absolute key tolerance per
    /// second of t), on `n` flows and links of capacities `capacity`.
    pub(super) fn new_las(n: usize, capacity: &[f64], key_abs_tol: f64) -> Result<Self> {
        let n_links = capacity.len();
        let mut a = Self::new(n, n_links, &Scheduler::Las)?;
        a.las = Some(Box::new(LasGroups {
            key_abs_tol,
            done: vec![0; n],
            epoch: 0,
            flow_stamp: vec![0; n],
            link_stamp: filled(n_links, 0, "per-link state")?,
            stamp: 0,
            members: Vec::new(),
            links: Vec::new(),
            res: filled(n_links, 0.0, "per-link state")?,
            keys: Vec::new(),
            before: Vec::new(),
            caps: Vec::new(),
            out: Vec::new(),
            key_v: vec![0.0; n],
            key_t: vec![f64::NAN; n],
            fill_cap: vec![0.0; n],
            fill_rate: vec![0.0; n],
            ones: vec![1.0; n],
            filler: crate::fill::Filler::try_new(n_links)?,
        }));
        Ok(a)
    }
}

impl IncrementalPriority {
    /// A new cursor epoch: every link's scan starts again from the head of its list.
    fn reset_cursors(&mut self) {
        self.cursor_epoch = self.cursor_epoch.wrapping_add(1);
        if self.cursor_epoch == 0 {
            for c in self.cursors.iter_mut() {
                c.epoch = 0;
            }
            for f in self.fl.iter_mut() {
                f.passed_in_epoch = 0;
            }
            self.cursor_epoch = 1;
        }
    }

    #[inline]
    fn prio(&self, core: &Core, i: usize) -> WorkItem {
        if self.srpt {
            // `key_by`'s SRPT key (the same bits), without its dispatch on the scheduler:
            // the most frequent call of the allocator's scans.
            let f = &core.flows[i];
            return WorkItem { k1: 0.0, k2: f.size_bytes - core.sent_now(i), arrival: f.arrival_s, idx: i as u32 };
        }
        // PIAS: the queue the flow is placed in on its link lists (`pias_placement`), not
        // the one its bytes sent give now: they differ between its reaching a threshold
        // and its re-placement.
        let (k1, k2, _) = core.key_by(&core.cfg.scheduler, i, |i, _| self.pias_placement[i] as usize);
        WorkItem { k1, k2, arrival: core.flows[i].arrival_s, idx: i as u32 }
    }

    /// Slope of the key value per unit time (SRPT's remaining size falls at the rate).
    fn key_slope(&self, core: &Core, i: usize) -> f64 {
        if self.las.is_some() {
            return core.rate[i];
        }
        let dynamic = match &core.cfg.scheduler {
            Scheduler::Srpt => true,
            Scheduler::Ga(GaInner::Srpt) => core.data_complete[i],
            _ => false,
        };
        if dynamic {
            -core.rate[i]
        } else {
            0.0
        }
    }

    fn push_work(&mut self, core: &mut Core, i: usize) {
        if let Some(g) = self.las.as_mut() {
            g.done[i] = 0;
        }
        if !self.fl[i].on_worklist && core.status[i] == Status::Active {
            self.fl[i].on_worklist = true;
            let w = self.prio(core, i);
            self.worklist.push(w);
            // Its evaluation reads its path and parking next: fetched now, alongside
            // the reads of its key (flows' state is in arrays over the whole trace).
            prefetch(&core.path_off[i]);
            prefetch(&core.path_links[core.path_off[i] as usize..]);
            prefetch(&self.fl[i].parked_on);
        }
    }

    fn mark_link(&mut self, l: usize) {
        if !self.link_changed[l] {
            self.link_changed[l] = true;
            self.changed_links.push(l as u32);
        }
    }

    /// Inserts flow i in link l's list at its place by priority; returns the position.
    fn list_insert(&mut self, core: &mut Core, l: usize, i: usize) -> usize {
        let p = self.prio(core, i);
        let list = &self.lazy.link_flows[l];
        let mut pos = list.len();
        for (k, &j) in list.iter().enumerate() {
            if p.cmp_prio(&self.prio(core, j as usize)) == Ordering::Less {
                pos = k;
                break;
            }
        }
        self.lazy.link_flows[l].insert(pos, i as u32);
        self.mark_link(l);
        pos
    }

    fn list_remove(&mut self, l: usize, i: usize) -> usize {
        let pos = self.lazy.link_flows[l].iter().position(|&x| x as usize == i).expect("flow is on its link list");
        self.lazy.link_flows[l].remove(pos);
        self.mark_link(l);
        pos
    }

    /// Walks link l's list from `pos`, where `res` is the capacity left ahead of that
    /// position, and pushes the flows whose rate this link now caps below their rate, or
    /// that this link bound and that now have room to grow. The others cannot be
    /// affected through l (their rate is set by another link or their cap). A flow at
    /// rate 0 cannot fall: it is pushed only if l bound it and now has room. (Behind a
    /// flow that sped up, the residual is below 0 until the flows behind it slow down;
    /// on the fat-tree most active flows wait at rate 0, and pushing every one of them
    /// there made most of the re-evaluations, which changed nothing.) Its bound link, at
    /// or below 0 ahead of it, pushes it when it frees room.
    #[inline(never)]
    fn push_affected(&mut self, core: &mut Core, l: usize, pos: usize, mut res: f64) {
        let eps = 1e-12 * core.topo.capacity[l];
        if self.las.is_some() {
            // LAS: every flow behind with a rate, and every waiting one with room (groups
            // fill together, so no one link binds a flow alone).
            for k in pos..self.lazy.link_flows[l].len() {
                let h = self.lazy.link_flows[l][k] as usize;
                let rh = core.rate[h];
                if rh > 0.0 || res > eps {
                    self.push_work(core, h);
                }
                res -= rh;
            }
            return;
        }
        let mut waiting_pushed = false;
        for k in pos..self.lazy.link_flows[l].len() {
            let h = self.lazy.link_flows[l][k] as usize;
            let rh = core.rate[h];
            if rh == 0.0 {
                // Of the flows at rate 0 that l bound, only the first with room: it may
                // take the room. If it does, its own push_affected goes on from it; if
                // it stays at 0, incr_allocate goes on from it (waiting_stays_waiting).
                if !waiting_pushed && self.fl[h].binding_link as usize == l && res > eps {
                    waiting_pushed = true;
                    self.push_work(core, h);
                }
                continue;
            }
            if res < rh - eps || (self.fl[h].binding_link as usize == l && res > rh + eps) {
                self.push_work(core, h);
            }
            res -= rh;
        }
        // The first flow parked on l may take room ahead of it: room behind every listed
        // flow, or, if a listed flow with a rate is behind it (moved back, a PIAS
        // demotion), room at its place.
        if let Some((x, px)) = self.parked_head(l) {
            if res > eps || (self.rate_behind(core, l, &px) && self.residual_unlisted(core, l, &px) > eps) {
                self.push_work(core, x);
            }
        }
    }

    /// Whether a flow listed on link l with a rate is behind priority `p` (the last one is).
    fn rate_behind(&self, core: &Core, l: usize, p: &WorkItem) -> bool {
        match self.lazy.link_flows[l].iter().rev().find(|&&h| core.rate[h as usize] > 0.0) {
            Some(&h) => self.prio(core, h as usize).cmp_prio(p) == Ordering::Greater,
            None => false,
        }
    }

    pub(super) fn incr_activate(&mut self, core: &mut Core, i: usize) {
        core.active_pos[i] = core.active.len() as u32;
        core.active.push(i as u32);
        core.sent_at[i] = core.now;
        core.rate[i] = 0.0;
        if !self.pias_placement.is_empty() {
            self.pias_placement[i] = core.pias_queue(core.sent[i]) as u32;
        }
        let (a, b) = (core.path_off[i] as usize, core.path_off[i + 1] as usize);
        for p in a..b {
            let l = core.path_links[p] as usize;
            self.list_insert(core, l, i);
        }
        self.push_work(core, i);
    }

    /// Takes an active flow out (finished or terminated); the flows behind it may speed up.
    pub(super) fn incr_remove(&mut self, core: &mut Core, i: usize) {
        core.sent[i] = core.sent_now(i);
        core.sent_at[i] = core.now;
        core.rate[i] = 0.0;
        self.lazy.flow_events.remove(i as u32);
        // A parked flow is on no list, at rate 0. It may have been pushed as the first flow
        // parked on its link when room opened there (push_affected), to go on to the next
        // through its evaluation: removed before that (terminated at its arrival, or at the
        // event that made the room), it passes that on, else the flows parked behind it
        // waited at rate 0 on a free link until their own deadlines (a fuzzer's cases: fifo,
        // edf, ssdf with terminate_missed and deadlines within the path delay).
        let parked_on = self.fl[i].parked_on[0];
        if self.leave_parking(i) {
            self.push_parked_head(core, parked_on as usize);
        } else {
            let (a, b) = (core.path_off[i] as usize, core.path_off[i + 1] as usize);
            for p in a..b {
                let l = core.path_links[p] as usize;
                let pos = self.list_remove(l, i);
                if self.las.is_some() {
                    // LAS: the flows of its group, ahead of it too, may speed up.
                    self.push_affected(core, l, 0, core.topo.capacity[l]);
                } else {
                    // With a rate, the flows behind may take it. Without one it may still
                    // have held the baton: the first waiting flow that l bound, pushed when
                    // room opened ahead of it (push_affected), goes on to the next one only
                    // through its own evaluation; removed before that (terminated at its
                    // arrival, or at the event that made the room), it passes it on here,
                    // else the flows behind it waited at rate 0 on a free link until their
                    // own deadlines (FUZZ: fifo and edf with terminate_missed).
                    let ahead: f64 = self.lazy.link_flows[l][..pos].iter().map(|&h| core.rate[h as usize]).sum();
                    self.push_affected(core, l, pos, core.topo.capacity[l] - ahead);
                }
            }
        }
        let k = core.active_pos[i] as usize;
        core.active.swap_remove(k);
        if k < core.active.len() {
            core.active_pos[core.active[k] as usize] = k as u32;
        }
        core.active_pos[i] = u32::MAX;
    }

    /// Flow i's key or cap may have changed: re-place it on its links and re-evaluate it
    /// and everything behind it there.
    pub(super) fn incr_changed(&mut self, core: &mut Core, i: usize, key_changed: bool) {
        self.unpark(core, i);
        if key_changed {
            if !self.pias_placement.is_empty() {
                self.pias_placement[i] = core.pias_queue(core.sent_now(i)) as u32;
            }
            // The flows between its old and new places have a different set of flows
            // ahead of them now; the others behind it see only its rate change, which its
            // re-evaluation passes on (push_affected).
            let (a, b) = (core.path_off[i] as usize, core.path_off[i + 1] as usize);
            for p in a..b {
                let l = core.path_links[p] as usize;
                let old = self.list_remove(l, i);
                let new = self.list_insert(core, l, i);
                let (lo, hi) = (old.min(new), old.max(new));
                for k in lo..=hi {
                    let j = self.lazy.link_flows[l][k] as usize;
                    self.push_work(core, j);
                }
                // Moved back (a PIAS demotion), it may now be behind flows parked on l.
                self.push_parked_head(core, l);
            }
        }
        self.push_work(core, i);
    }

    /// The PIAS thresholds were replaced (between events): every active flow whose bytes
    /// sent now fall in another queue is re-placed on its links (either way: promoted or
    /// demoted), with the flows between its old and new places re-evaluated, and every
    /// active flow's next threshold event is rescheduled under the new thresholds. Each
    /// re-placement keeps the lists in the order of the placements stored so far, so the
    /// lists are in the new order once every flow is done.
    pub(super) fn incr_thresholds_changed(&mut self, core: &mut Core) {
        if self.pias_placement.is_empty() {
            return;
        }
        for k in 0..core.active.len() {
            let i = core.active[k] as usize;
            if core.pias_queue(core.sent_now(i)) as u32 != self.pias_placement[i] {
                self.incr_changed(core, i, true);
            }
            self.lazy.flow_events.remove(i as u32);
            self.lazy.reschedule.push(i as u32);
        }
    }

    /// Handles the flow events due at t (completions, catch-ups, thresholds).
    pub(super) fn incr_flow_events(&mut self, core: &mut Core, t: f64) {
        while let Some((te, i)) = self.lazy.flow_events.peek() {
            if te > t {
                break;
            }
            self.lazy.flow_events.pop();
            let i = i as usize;
            if core.status[i] != Status::Active {
                continue;
            }
            if self.incr_try_finish(core, i, t) {
                continue;
            }
            // A catch-up or a threshold: re-place (the key may have changed) and re-evaluate.
            let key_changed = matches!(core.cfg.scheduler, Scheduler::Pias);
            self.incr_changed(core, i, key_changed);
            // Its next flow event is scheduled after the re-evaluation (by set_rate if the
            // rate changes, otherwise in incr_allocate).
            self.lazy.flow_events.remove(i as u32);
            self.lazy.reschedule.push(i as u32);
        }
        // Crossings between neighbours on a link.
        while let Some((te, l)) = self.crossings.peek() {
            if te > t {
                break;
            }
            self.crossings.pop();
            self.incr_crossing(core, l as usize);
        }
    }

    /// A crossing on link l: re-sorts its list by the current keys. The flows whose order
    /// changed re-sort the other lists they are on (a pair that swaps here swaps on every
    /// link it shares), and so on until no list changes. In each changed list, the flows
    /// from the first to the last changed position are re-evaluated: the others have the
    /// same flows ahead of them as before, and the rate changes of those ahead reach them
    /// through push_affected.
    fn incr_crossing(&mut self, core: &mut Core, l: usize) {
        self.resort_stamp = self.resort_stamp.wrapping_add(1);
        if self.resort_stamp == 0 {
            self.resort_stamp_of.fill(0);
            self.resort_stamp = 1;
        }
        let st = self.resort_stamp;
        self.resort_queue.clear();
        self.resort_queue.push(l as u32);
        self.resort_stamp_of[l] = st;
        self.mark_link(l);
        if self.las.is_some() {
            // LAS: flows that caught up share from now on (the evaluation reads keys, not
            // list positions).
            for k in 0..self.lazy.link_flows[l].len() {
                let j = self.lazy.link_flows[l][k] as usize;
                self.push_work(core, j);
            }
            return;
        }
        let mut q = 0;
        while q < self.resort_queue.len() {
            let m = self.resort_queue[q] as usize;
            q += 1;
            // The list in the order of the current keys (cmp_prio is a total order, so the
            // order is unique).
            let mut sorted = std::mem::take(&mut self.resort_order);
            sorted.clear();
            sorted.extend(self.lazy.link_flows[m].iter().map(|&j| self.prio(core, j as usize)));
            sorted.sort_unstable_by(|a, b| a.cmp_prio(b));
            let list = &self.lazy.link_flows[m];
            let first = (0..list.len()).find(|&k| list[k] != sorted[k].idx);
            if let Some(first) = first {
                let last = (first..list.len()).rev().find(|&k| list[k] != sorted[k].idx).unwrap();
                for k in first..=last {
                    let j = self.lazy.link_flows[m][k] as usize;
                    self.lazy.link_flows[m][k] = sorted[k].idx;
                    self.push_work(core, sorted[k].idx as usize);
                    if j != sorted[k].idx as usize {
                        let (a, b) = (core.path_off[j] as usize, core.path_off[j + 1] as usize);
                        for p in a..b {
                            let n = core.path_links[p] as usize;
                            if self.resort_stamp_of[n] != st {
                                self.resort_stamp_of[n] = st;
                                self.resort_queue.push(n as u32);
                            }
                        }
                    }
                }
                self.mark_link(m);
            }
            self.resort_order = sorted;
        }
    }

    /// Finishes flow i if all its bytes are sent and all its data has arrived.
    pub(super) fn incr_try_finish(&mut self, core: &mut Core, i: usize, t: f64) -> bool {
        if core.done_at(i, t, core.sent_now(i)) {
            self.incr_remove(core, i);
            core.finish_now(i, t);
            core.flows_changed = true;
            return true;
        }
        false
    }

    /// Re-evaluates the worklist in priority order, then the crossing times of the links
    /// that changed, then the next event time.
    pub(super) fn incr_allocate(&mut self, core: &mut Core) -> Result<()> {
        self.reset_cursors();
        if let Some(g) = self.las.as_mut() {
            g.epoch = g.epoch.wrapping_add(1);
            if g.epoch == 0 {
                g.done.fill(0);
                g.epoch = 1;
            }
        }
        // Progress guard: each active flow is re-evaluated about once.
        let bound = ALLOC_STEPS_PER_FLOW * (core.active.len() as u64 + 1);
        let mut steps = 0u64;
        let inject = core.cfg.inject_stall_at_s.is_some_and(|ts| core.now >= ts);
        while let Some(w) = self.worklist.pop() {
            let g = w.idx as usize;
            self.fl[g].on_worklist = false;
            steps += 1;
            if steps > bound {
                let mut flows: Vec<u32> = self.worklist.iter().map(|w| w.idx).collect();
                flows.push(g as u32);
                let what = format!(
                    "{steps} re-evaluations of flows in one allocation, and the worklist does not drain \
                     (bound {ALLOC_STEPS_PER_FLOW} * (active flows + 1) = {bound})"
                );
                return Err(core.no_progress(self.name(), &what, &flows));
            }
            if inject {
                self.push_work(core, g); // test only: the worklist never drains
            }
            if core.status[g] != Status::Active {
                continue;
            }
            if self.las.is_some() {
                self.las_eval(core, g);
                continue;
            }
            if self.fl[g].parked_on[0] != NOT_PARKED {
                // A chain of parked flows evaluated one after another (`eval_parked`).
                let mut cur = (g, w);
                while let Some(next) = self.eval_parked(core, cur.0, cur.1) {
                    steps += 1;
                    if steps > bound {
                        self.push_work(core, next.0);
                        break; // the worklist check above reports it
                    }
                    cur = next;
                }
                continue;
            }
            let (a, b) = (core.path_off[g] as usize, core.path_off[g + 1] as usize);
            // Residual capacity ahead of g on each of its links, and g's position there.
            // The worklist runs in priority order, which is each list's order, so each
            // link's scan goes on from where the previous flow's stopped (its cursor)
            // instead of from the head: the same subtractions in the same order. A flow
            // that a cursor already passed (a list out of priority order by rounding, or a
            // flow evaluated again) may change rate under the cursors, so they all restart.
            if self.fl[g].passed_in_epoch == self.cursor_epoch {
                self.reset_cursors();
            }
            let ep = self.cursor_epoch;
            // Per link of g's path: the residual before g and g's position in the list
            // (on the stack for paths of up to 16 links; a graph's longer paths on the heap).
            let (mut before_stack, mut at_stack) = ([0.0f64; 16], [0usize; 16]);
            let (mut before_heap, mut at_heap) = (Vec::new(), Vec::new());
            let (before, at): (&mut [f64], &mut [usize]) = if b - a <= 16 {
                (&mut before_stack[..], &mut at_stack[..])
            } else {
                before_heap.resize(b - a, 0.0);
                at_heap.resize(b - a, 0);
                (&mut before_heap[..], &mut at_heap[..])
            };
            let mut r = core.cap_now(g);
            for (k, p) in (a..b).enumerate() {
                let l = core.path_links[p] as usize;
                let cap_l = core.topo.capacity[l];
                let mut c = self.cursors[l];
                if c.epoch != ep {
                    c = Cursor { epoch: ep, pos: 0, full: false, res: cap_l };
                }
                let (res, pos);
                if c.full {
                    // g is behind the point where nothing was left (it was not passed).
                    res = 0.0;
                    pos = usize::MAX;
                } else {
                    let list = &self.lazy.link_flows[l];
                    let mut q = c.pos as usize;
                    let mut found = false;
                    while q < list.len() {
                        let h = list[q] as usize;
                        if h == g {
                            found = true;
                            break;
                        }
                        c.res -= core.rate[h];
                        self.fl[h].passed_in_epoch = ep;
                        q += 1;
                        if c.res <= 1e-12 * cap_l {
                            // Nothing left for g here; its position is looked up if needed.
                            c.full = true;
                            break;
                        }
                    }
                    c.pos = q as u32;
                    if c.full {
                        res = 0.0;
                        pos = usize::MAX;
                    } else {
                        debug_assert!(found, "flow {g} is behind the cursor of link {l}");
                        res = c.res;
                        pos = q;
                    }
                }
                self.cursors[l] = c;
                before[k] = res;
                at[k] = pos;
                r = r.min(res);
            }
            let r = r.max(0.0);
            // The link that binds g (u32::MAX: its cap).
            let mut bind = u32::MAX;
            let mut best = core.cap_now(g);
            for (k, p) in (a..b).enumerate() {
                if before[k] < best {
                    best = before[k];
                    bind = core.path_links[p];
                }
            }
            self.fl[g].binding_link = bind;
            let old = core.rate[g];
            if r == 0.0 && old == 0.0 {
                // Still waiting: the flows waiting behind it where it had room may take
                // that room (push_affected pushed only the first of them).
                for (k, p) in (a..b).enumerate() {
                    let l = core.path_links[p] as usize;
                    if at[k] != usize::MAX && before[k] > 1e-12 * core.topo.capacity[l] {
                        self.push_affected(core, l, at[k] + 1, before[k]);
                    }
                }
            } else if (r - old).abs() > 1e-12 * r.max(old) {
                self.lazy.set_rate(core, g, r, &self.pias_placement);
                for (k, p) in (a..b).enumerate() {
                    let l = core.path_links[p] as usize;
                    self.mark_link(l);
                    let pos = if at[k] == usize::MAX {
                        self.lazy.link_flows[l].iter().position(|&x| x as usize == g).unwrap()
                    } else {
                        at[k]
                    };
                    self.push_affected(core, l, pos + 1, before[k] - r);
                }
            }
            if r == 0.0 && bind != u32::MAX {
                self.park(core, g, bind as usize);
            }
        }
        self.incr_finish_allocation(core);
        Ok(())
    }

    /// Parks flow g, waiting at rate 0 with no room ahead of it on link `bind`: it leaves
    /// every list (at rate 0 it takes nothing from the flows behind it) and waits in
    /// `bind`'s heap of parked flows, in priority order. Its key does not move at rate 0,
    /// so its place is found again when it is re-evaluated (`eval_parked`). Room opening
    /// on `bind` behind the listed flows pushes the first flow parked there
    /// (`push_affected`); a flow released this way that another link holds back moves
    /// there and passes the room on to the next. The flows listed on a link are mostly
    /// ahead of those parked on it: a flow behind a parked one had no room there either,
    /// and keys move only forward while flows send (SRPT), or not at all (FIFO, EDF,
    /// ...). A flow moved back (a PIAS demotion) pushes the first parked flow of its
    /// links, and the room left at the first parked flow's place is checked when a
    /// listed flow with a rate is behind it. On a fabric with a backlog (a fat-tree at
    /// load 0.8 keeps most of its active flows waiting) the scans of the lists otherwise
    /// passed every waiting flow on every link of its path, at every event that touched
    /// it.
    fn park(&mut self, core: &mut Core, g: usize, bind: usize) {
        let (a, b) = (core.path_off[g] as usize, core.path_off[g + 1] as usize);
        for p in a..b {
            let l = core.path_links[p] as usize;
            self.list_remove(l, g);
            // Positions behind it moved: the link's scan starts again from the head.
            self.cursors[l].epoch = 0;
        }
        let item = self.prio(core, g);
        self.park_as(g, bind, item);
    }

    /// Flow g, on no list, of priority `item`, waits in link `bind`'s heap of parked flows.
    fn park_as(&mut self, g: usize, bind: usize, item: WorkItem) {
        self.leave_parking(g);
        let version = self.fl[g].parked_on[1].wrapping_add(1);
        self.fl[g].parked_on = [bind as u32, version];
        self.parked[bind].push((item, version));
    }

    /// Flow g leaves the link it is parked on, if any (returns whether it was parked):
    /// its entry there is dropped if it is the first one (a flow leaves its parking
    /// mostly when it comes up first, `eval_parked`), else counted stale.
    fn leave_parking(&mut self, g: usize) -> bool {
        let [l, version] = self.fl[g].parked_on;
        if l == NOT_PARKED {
            return false;
        }
        self.fl[g].parked_on[0] = NOT_PARKED;
        let l = l as usize;
        match self.parked[l].peek() {
            Some(&(item, v)) if item.idx as usize == g && v == version => {
                self.parked[l].pop();
            }
            _ => self.parked_stale[l] += 1,
        }
        true
    }

    /// The first flow parked on link l and its priority, if any (stale entries dropped).
    #[inline]
    fn parked_head(&mut self, l: usize) -> Option<(usize, WorkItem)> {
        while let Some(&(item, version)) = self.parked[l].peek() {
            let x = item.idx as usize;
            if self.parked_stale[l] == 0 {
                debug_assert!(self.fl[x].parked_on == [l as u32, version], "a stale entry not counted");
                return Some((x, item));
            }
            if self.fl[x].parked_on == [l as u32, version] {
                return Some((x, item));
            }
            self.parked[l].pop();
            self.parked_stale[l] -= 1;
        }
        None
    }

    /// Pushes the first flow parked on link l onto the worklist, if any.
    fn push_parked_head(&mut self, core: &mut Core, l: usize) {
        if let Some((x, _)) = self.parked_head(l) {
            self.push_work(core, x);
        }
    }

    /// Flow g is listed on every link of its path again (if it was parked).
    fn unpark(&mut self, core: &mut Core, g: usize) {
        if !self.leave_parking(g) {
            return;
        }
        let (a, b) = (core.path_off[g] as usize, core.path_off[g + 1] as usize);
        for p in a..b {
            let l = core.path_links[p] as usize;
            self.list_insert(core, l, g);
            self.cursors[l].epoch = 0;
        }
    }

    /// The capacity of link l left ahead of flow g, listed on l: its capacity less the
    /// rates of the flows before g in the list, subtracted in list order (as the cursors
    /// of `incr_allocate` do), and 0 once it falls to 1e-12 of the capacity; and g's
    /// position (`usize::MAX` then).
    fn residual_listed(&self, core: &Core, l: usize, g: usize) -> (f64, usize) {
        let cap_l = core.topo.capacity[l];
        let mut res = cap_l;
        for (q, &h) in self.lazy.link_flows[l].iter().enumerate() {
            if h as usize == g {
                return (res, q);
            }
            res -= core.rate[h as usize];
            if res <= 1e-12 * cap_l {
                return (0.0, usize::MAX);
            }
        }
        unreachable!("flow {g} is on the list of link {l}")
    }

    /// The capacity of link l left ahead of flow g (priority `pg`), not listed on l: its
    /// capacity less the rates of the listed flows ahead of g by priority, subtracted in
    /// list order (flows at rate 0 change nothing), and 0 once it falls to 1e-12 of the
    /// capacity.
    fn residual_unlisted(&self, core: &Core, l: usize, pg: &WorkItem) -> f64 {
        let cap_l = core.topo.capacity[l];
        let mut res = cap_l;
        for &h in &self.lazy.link_flows[l] {
            let rh = core.rate[h as usize];
            if rh == 0.0 {
                continue;
            }
            if self.prio(core, h as usize).cmp_prio(pg) != Ordering::Less {
                break; // the list is in priority order: the rest is behind g
            }
            res -= rh;
            if res <= 1e-12 * cap_l {
                return 0.0;
            }
        }
        res
    }

    /// Re-evaluates flow g, parked (see `park`): its rate from the room ahead of it on
    /// each link, as `incr_allocate` computes it for a listed flow. Still waiting, it
    /// stays parked, on the link that holds it back now, and passes the room it had where
    /// it was parked to the next flow parked there; with a rate (or waiting on its cap),
    /// it is listed on every link again and the flows behind it are pushed.
    ///
    /// `pg` is its priority (it waits at rate 0, so the priority it was pushed with).
    /// Returns the next flow parked where it was, with its priority, when that one is to
    /// be evaluated next (ahead of everything on the worklist, and not on it): the caller
    /// evaluates it at once, as popping it from the worklist would.
    fn eval_parked(&mut self, core: &mut Core, g: usize, pg: WorkItem) -> Option<(usize, WorkItem)> {
        let was = self.fl[g].parked_on[0] as usize;
        debug_assert!(pg.cmp_prio(&self.prio(core, g)) == Ordering::Equal, "a parked flow's priority stands still");
        let (a, b) = (core.path_off[g] as usize, core.path_off[g + 1] as usize);
        let cap = core.cap_now(g);
        let (mut r, mut best, mut bind) = (cap, cap, u32::MAX);
        let mut before_was = f64::NAN;
        for p in a..b {
            let l = core.path_links[p] as usize;
            let res = self.residual_unlisted(core, l, &pg);
            if l == was {
                before_was = res;
            }
            r = r.min(res);
            if res < best {
                best = res;
                bind = l as u32;
                if res == 0.0 {
                    // No room (the residuals are 0 or above 1e-12 of the capacity): the
                    // first such link binds it, whatever the others have.
                    break;
                }
            }
        }
        let r = r.max(0.0);
        self.fl[g].binding_link = bind;
        debug_assert!(core.rate[g] == 0.0, "a parked flow waits at rate 0");
        if r == 0.0 && bind != u32::MAX {
            let bind = bind as usize;
            if bind != was {
                // Held back elsewhere now: parked there. The room it had on `was` goes
                // to the next flow parked there.
                self.park_as(g, bind, pg);
                if before_was.is_nan() {
                    before_was = self.residual_unlisted(core, was, &pg);
                }
                if before_was > 1e-12 * core.topo.capacity[was] {
                    if let Some((x, px)) = self.parked_head(was) {
                        if !self.fl[x].on_worklist && self.worklist.peek().is_none_or(|w| px.cmp_prio(w) == Ordering::Less) {
                            return Some((x, px));
                        }
                        self.push_work(core, x);
                    }
                }
            }
            return None;
        }
        // It gets a rate (or waits on its cap): listed on every link again.
        self.unpark(core, g);
        if r == 0.0 {
            // Waiting on its cap (no data yet): the room it leaves goes to the flows behind it.
            for p in a..b {
                let l = core.path_links[p] as usize;
                let (res, at) = self.residual_listed(core, l, g);
                if at != usize::MAX && res > 1e-12 * core.topo.capacity[l] {
                    self.push_affected(core, l, at + 1, res);
                }
            }
            return None;
        }
        self.lazy.set_rate(core, g, r, &self.pias_placement);
        for p in a..b {
            let l = core.path_links[p] as usize;
            self.mark_link(l);
            let (res, at) = self.residual_listed(core, l, g);
            let at = if at == usize::MAX { self.lazy.link_flows[l].iter().position(|&x| x as usize == g).unwrap() } else { at };
            // res is the room ahead of it, as computed above from the same flows in the
            // same order (at least r).
            self.push_affected(core, l, at + 1, res - r);
        }
        None
    }

    /// The flow events of the flows re-evaluated without a rate change, the crossing
    /// times of the links that changed, and the next event time.
    pub(super) fn incr_finish_allocation(&mut self, core: &mut Core) {
        self.lazy.reschedule_pending(core, &self.pias_placement);
        let dynamic = matches!(core.cfg.scheduler, Scheduler::Srpt | Scheduler::Ga(GaInner::Srpt));
        while let Some(l) = self.changed_links.pop() {
            let l = l as usize;
            self.link_changed[l] = false;
            if self.las.is_some() {
                let best = self.las_link_crossing(core, l);
                if best < INF {
                    self.crossings.set(l as u32, best);
                } else {
                    self.crossings.remove(l as u32);
                }
                continue;
            }
            if !dynamic {
                continue;
            }
            self.crossings.remove(l as u32);
            let mut best = INF;
            let soon = 1e-12 * core.now.max(1.0);
            let list = &self.lazy.link_flows[l];
            // The priority of the flow before y, if computed.
            let mut prev: Option<WorkItem> = None;
            for k in 1..list.len() {
                let (x, y) = (list[k - 1] as usize, list[k] as usize);
                let (sx, sy) = (self.key_slope(core, x), self.key_slope(core, y));
                if sx == 0.0 && sy == 0.0 {
                    // Neither key moves (both wait on their caps, or under ga:srpt both
                    // wait for their data): they keep the order they had when one of
                    // them last moved, which this check saw then.
                    prev = None;
                    continue;
                }
                let px = match prev {
                    Some(p) => p,
                    None => self.prio(core, x),
                };
                let py = self.prio(core, y);
                prev = Some(py);
                if px.cmp_prio(&py) == Ordering::Greater {
                    // Already out of order: the keys met between two events (a crossing
                    // computed a rounding error late). Re-sort at once.
                    best = best.min(core.now + soon);
                    continue;
                }
                if px.k1 != py.k1 {
                    continue;
                }
                // Keys converge when the one ahead rises faster (or falls slower).
                if sx > sy {
                    let dt = (py.k2 - px.k2) / (sx - sy);
                    let scale = px.k2.abs().max(py.k2.abs()).max(core.flows[x].size_bytes).max(core.flows[y].size_bytes);
                    best = best.min(pass_again_at(core.now, dt, sx - sy, scale));
                }
            }
            if best < INF {
                self.crossings.set(l as u32, best);
            }
        }
        // Next event.
        let mut next = self.lazy.next_event(core);
        if let Some((te, _)) = self.crossings.peek() {
            next = next.min(te);
        }
        core.next_event = next;
    }
}

/// `las::same` for keys (bytes sent) that are not NaN and not negative, by plain
/// comparisons (`f64::max` handles NaN; this is the hot test of a group's scan).
#[inline(always)]
fn same_key(x: f64, y: f64, abs: f64) -> bool {
    let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
    let m = if hi >= 1.0 { hi } else { 1.0 };
    let tol = 1e-9 * m;
    let tol = if tol >= abs { tol } else { abs };
    let ok = hi - lo <= tol;
    debug_assert_eq!(ok, super::las::same(x, y, abs));
    ok
}

impl LasGroups {
    /// Flow i's bytes sent now (`Core::sent_now`, computed once per flow and time: the
    /// rate changes of an allocation keep it, as `LazyFlows::set_rate` first brings
    /// `sent` to now).
    #[inline]
    fn key(&mut self, core: &Core, i: usize) -> f64 {
        if self.key_t[i].to_bits() != core.now.to_bits() {
            self.key_t[i] = core.now;
            self.key_v[i] = core.sent_now(i);
        }
        self.key_v[i]
    }
}

impl IncrementalPriority {
    /// LAS: evaluates flow g with its group, the flows of equal attained service
    /// (`las::same`) next to it on its links, and transitively on theirs: the group is
    /// filled max-min fairly (`fill_small_core`, else `Filler::fill`) from each link's
    /// capacity less the rates of the flows ahead of the group there, as the full
    /// recomputation fills its groups of equal keys. Flows behind a member whose rate
    /// changed are pushed (`push_affected`).
    fn las_eval(&mut self, core: &mut Core, g: usize) {
        let mut st = self.las.take().expect("las state");
        if st.done[g] == st.epoch {
            self.las = Some(st);
            return;
        }
        let abs = st.key_abs_tol * core.now;
        st.stamp = st.stamp.wrapping_add(1);
        if st.stamp == 0 {
            st.flow_stamp.fill(0);
            st.link_stamp.fill(0);
            st.stamp = 1;
        }
        let gs = st.stamp;
        let kg = st.key(core, g);
        st.members.clear();
        st.links.clear();
        st.before.clear();
        st.members.push(g as u32);
        st.flow_stamp[g] = gs;
        // The group: the flows with g's key on g's links, and on theirs. The lists are
        // not kept in LAS order (members of a group that split drift apart without an
        // event), so each link's list is scanned once, by key: its members, and the
        // rates of the flows ahead of the group (smaller keys), for the residual.
        let mut q = 0;
        while q < st.members.len() {
            let m = st.members[q] as usize;
            q += 1;
            for p in core.path_off[m] as usize..core.path_off[m + 1] as usize {
                let l = core.path_links[p] as usize;
                if st.link_stamp[l] == gs {
                    continue;
                }
                st.link_stamp[l] = gs;
                st.links.push(l as u32);
                let mut r = core.topo.capacity[l];
                for &h in &self.lazy.link_flows[l] {
                    let h = h as usize;
                    let k = st.key(core, h);
                    if same_key(k, kg, abs) {
                        if st.flow_stamp[h] != gs {
                            st.flow_stamp[h] = gs;
                            st.members.push(h as u32);
                        }
                    } else if k < kg {
                        r -= core.rate[h];
                    }
                }
                let r = r.max(0.0);
                st.res[l] = r;
                st.before.push(r);
            }
        }
        let n = st.members.len();
        let mut out = [0.0; crate::fill::SMALL_N];
        st.out.clear();
        if n == 1 {
            let mut r = core.cap_now(g);
            for p in core.path_off[g] as usize..core.path_off[g + 1] as usize {
                r = r.min(st.res[core.path_links[p] as usize]);
            }
            st.out.push(r.max(0.0));
        } else {
            let (po, pl) = (&core.path_off, &core.path_links);
            let members = &st.members;
            let path_of = |p: usize| {
                let i = members[p] as usize;
                &pl[po[i] as usize..po[i + 1] as usize]
            };
            st.caps.clear();
            st.caps.extend(members.iter().map(|&i| core.cap_now(i as usize)));
            let caps = &st.caps;
            if n <= crate::fill::SMALL_N && crate::fill::fill_small_core(n, path_of, |_| 1.0, |p| caps[p], &mut st.res, &mut out) {
                st.out.extend_from_slice(&out[..n]);
            } else {
                // `Filler::fill` reads caps and writes rates per flow index.
                for (k, &i) in members.iter().enumerate() {
                    st.fill_cap[i as usize] = caps[k];
                }
                let paths = crate::fill::Paths { off: &core.path_off, links: &core.path_links };
                st.filler.fill(members, &paths, &st.ones, &st.fill_cap, &mut st.res, &mut st.fill_rate);
                for &i in members.iter() {
                    st.out.push(st.fill_rate[i as usize]);
                }
            }
        }
        let (mut changed, mut fell) = (false, false);
        for k in 0..n {
            let m = st.members[k] as usize;
            st.done[m] = st.epoch;
            let (r, old) = (st.out[k], core.rate[m]);
            if (r - old).abs() > 1e-12 * r.max(old) {
                self.lazy.set_rate(core, m, r, &self.pias_placement);
                changed = true;
                fell |= r < old;
            }
        }
        if changed {
            // The flows behind the group (by key) on each of its links: those with a
            // rate, and the waiting ones (rate 0) if a member slowed down (room may have
            // opened for them; if every change was a rise, they stay at 0).
            for j in 0..st.links.len() {
                let l = st.links[j] as usize;
                self.mark_link(l);
                for k in 0..self.lazy.link_flows[l].len() {
                    let h = self.lazy.link_flows[l][k] as usize;
                    if st.flow_stamp[h] != gs && (fell || core.rate[h] > 0.0) && st.key(core, h) > kg {
                        self.push_work(core, h);
                    }
                }
            }
        }
        self.las = Some(st);
    }

    /// LAS: the earliest time a flow on link l catches up with a flow behind it (the
    /// fastest of each group of equal keys against every flow of the next group), or a
    /// pair out of order (at once); INF: none.
    fn las_link_crossing(&mut self, core: &Core, l: usize) -> f64 {
        let st = self.las.as_mut().expect("las state");
        let mut keys = std::mem::take(&mut st.keys);
        keys.clear();
        keys.extend(self.lazy.link_flows[l].iter().map(|&y| (core.sent_now(y as usize), core.rate[y as usize])));
        keys.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let t = core.now;
        let abs = st.key_abs_tol * t;
        let mut best = INF;
        // The current group: its first key and its fastest flow (sent, rate); the group
        // before's fastest flow.
        let (mut lead, mut fast, mut prev_fast) = (-1.0f64, (-1.0f64, 0.0f64), (-1.0f64, 0.0f64));
        for &(sy, ry) in &keys {
            if lead >= 0.0 && !super::las::same(lead, sy, abs) {
                prev_fast = fast;
                lead = sy;
                fast = (sy, ry);
            } else if lead < 0.0 {
                lead = sy;
                fast = (sy, ry);
            } else if ry > fast.1 {
                fast = (sy, ry);
            }
            let (sx, rx) = prev_fast;
            if sx >= 0.0 && rx > ry && !super::las::same(sx, sy, abs) && sy > sx {
                // As the full recomputation's crossing: at least one ulp of t later (a
                // coarser step lets the pair pass each other by more than the tolerance).
                let tc = t + (sy - sx) / (rx - ry);
                best = best.min(if tc > t { tc } else { t.next_up() });
            }
        }
        st.keys = keys;
        best
    }
}
