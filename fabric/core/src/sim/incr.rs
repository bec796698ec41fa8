//! The incremental allocator for strict-priority schedulers (fifo, srpt, asrpt/ga:*,
//! pias, edf, ssdf, lsdf, random).
//!
//! Under greedy strict-priority allocation, a flow's rate depends only on the flows
//! ahead of it on its own links: rate = min(cap, min over its links of capacity minus
//! the rates of the flows ahead on that link). So every link keeps its active flows in
//! priority order, and an event re-evaluates only the flows it can affect: the flow it
//! concerns and, transitively, the flows behind a flow whose rate changed. A worklist
//! in priority order evaluates each affected flow once, after everything ahead of it.
//! Flows advance lazily (bytes sent = sent at t0 + rate * (now - t0)), and every flow
//! has one pending "flow event" (completion, catching up with its data, a PIAS
//! threshold) in a heap. Keys that move with time (SRPT's remaining size) keep the
//! per-link orders right through crossing events between neighbours on a link.
//! `AllocatorChoice::Full` runs the same schedulers through the full
//! recomputation instead; the test suite checks both give the same results.
use std::cmp::{Ordering, Reverse};

use super::{tol_of, OrdF64, Simulator, Status, ALLOC_STEPS_PER_FLOW, INF};
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

impl Simulator {
    /// A new cursor epoch: every link's scan starts again from the head of its list.
    fn reset_cursors(&mut self) {
        self.cepoch = self.cepoch.wrapping_add(1);
        if self.cepoch == 0 {
            for c in self.cursors.iter_mut() {
                c.epoch = 0;
            }
            self.passed.fill(0);
            self.cepoch = 1;
        }
    }

    fn prio(&self, i: usize) -> WorkItem {
        // (PIAS: `key` reads the queue the flow is placed in, `pq`.)
        let (k1, k2, _) = self.key(&self.cfg.scheduler, i);
        WorkItem { k1, k2, arrival: self.flows[i].arrival_s, idx: i as u32 }
    }

    /// Slope of the key value per unit time (SRPT's remaining size falls at the rate).
    fn key_slope(&self, i: usize) -> f64 {
        let dynamic = match &self.cfg.scheduler {
            Scheduler::Srpt => true,
            Scheduler::Ga(GaInner::Srpt) => self.complete[i],
            _ => false,
        };
        if dynamic {
            -self.rate[i]
        } else {
            0.0
        }
    }

    fn push_work(&mut self, i: usize) {
        if !self.in_work[i] && self.status[i] == Status::Active {
            self.in_work[i] = true;
            let w = self.prio(i);
            self.work.push(w);
        }
    }

    fn mark_link(&mut self, l: usize) {
        if !self.xdirty[l] {
            self.xdirty[l] = true;
            self.xdirty_list.push(l as u32);
        }
    }

    /// Inserts flow i in link l's list at its place by priority; returns the position.
    fn list_insert(&mut self, l: usize, i: usize) -> usize {
        let p = self.prio(i);
        let list = &self.lists[l];
        let mut pos = list.len();
        for (k, &j) in list.iter().enumerate() {
            if p.cmp_prio(&self.prio(j as usize)) == Ordering::Less {
                pos = k;
                break;
            }
        }
        self.lists[l].insert(pos, i as u32);
        self.mark_link(l);
        pos
    }

    fn list_remove(&mut self, l: usize, i: usize) -> usize {
        let pos = self.lists[l].iter().position(|&x| x as usize == i).expect("flow is on its link list");
        self.lists[l].remove(pos);
        self.mark_link(l);
        pos
    }

    /// Walks link l's list from `pos`, where `res` is the capacity left ahead of that
    /// position, and pushes the flows whose rate this link now caps below their rate, or
    /// that this link bound and that now have room to grow. The others cannot be
    /// affected through l (their rate is set by another link or their cap).
    fn push_affected(&mut self, l: usize, pos: usize, mut res: f64) {
        let eps = 1e-12 * self.topo.capacity[l];
        for k in pos..self.lists[l].len() {
            let h = self.lists[l][k] as usize;
            let rh = self.rate[h];
            if res < rh - eps || (self.bind[h] as usize == l && res > rh + eps) {
                self.push_work(h);
            }
            res -= rh;
        }
    }

    pub(super) fn incr_activate(&mut self, i: usize) {
        if self.fair {
            return self.fair_activate(i);
        }
        self.apos[i] = self.active.len() as u32;
        self.active.push(i as u32);
        self.t0[i] = self.now;
        self.rate[i] = 0.0;
        if !self.pq.is_empty() {
            self.pq[i] = self.pias_queue(self.sent[i]) as u32;
        }
        let (a, b) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
        for p in a..b {
            let l = self.path_links[p] as usize;
            self.list_insert(l, i);
        }
        self.push_work(i);
    }

    /// Takes an active flow out (finished or terminated); the flows behind it may speed up.
    pub(super) fn incr_remove(&mut self, i: usize) {
        if self.fair {
            return self.fair_remove(i);
        }
        self.sent[i] = self.sent_now(i);
        self.t0[i] = self.now;
        let had_rate = self.rate[i] > 0.0;
        self.rate[i] = 0.0;
        self.fev.remove(i as u32);
        let (a, b) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
        for p in a..b {
            let l = self.path_links[p] as usize;
            let pos = self.list_remove(l, i);
            if had_rate {
                let ahead: f64 = self.lists[l][..pos].iter().map(|&h| self.rate[h as usize]).sum();
                self.push_affected(l, pos, self.topo.capacity[l] - ahead);
            }
        }
        let k = self.apos[i] as usize;
        self.active.swap_remove(k);
        if k < self.active.len() {
            self.apos[self.active[k] as usize] = k as u32;
        }
        self.apos[i] = u32::MAX;
    }

    /// Flow i's key or cap may have changed: re-place it on its links and re-evaluate it
    /// and everything behind it there.
    pub(super) fn incr_changed(&mut self, i: usize, key_changed: bool) {
        if self.fair {
            return self.fair_changed(i);
        }
        if key_changed {
            if !self.pq.is_empty() {
                self.pq[i] = self.pias_queue(self.sent_now(i)) as u32;
            }
            // The flows between its old and new places have a different set of flows
            // ahead of them now; the others behind it see only its rate change, which its
            // re-evaluation passes on (push_affected).
            let (a, b) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
            for p in a..b {
                let l = self.path_links[p] as usize;
                let old = self.list_remove(l, i);
                let new = self.list_insert(l, i);
                let (lo, hi) = (old.min(new), old.max(new));
                for k in lo..=hi {
                    let j = self.lists[l][k] as usize;
                    self.push_work(j);
                }
            }
        }
        self.push_work(i);
    }

    pub(super) fn cap_now(&self, i: usize) -> f64 {
        let f = &self.flows[i];
        let t = self.now;
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && self.sent_now(i) >= self.avail(i, t) - tol_of(f.size_bytes) {
            f.size_bytes / f.data_span_s
        } else {
            INF
        }
    }

    pub(super) fn set_rate(&mut self, i: usize, r: f64) {
        self.sent[i] = self.sent_now(i);
        self.t0[i] = self.now;
        self.rate[i] = r;
        self.schedule_flow_event(i);
    }

    /// The next time flow i needs attention: completion, catching up with its data,
    /// or crossing a PIAS threshold.
    fn schedule_flow_event(&mut self, i: usize) {
        let r = self.rate[i];
        let t = self.now;
        let sent = self.sent[i];
        if !self.pq.is_empty() && self.pias_queue(sent) > self.pq[i] as usize {
            // PIAS: its bytes sent reached a threshold (within its tolerance) while it was
            // re-evaluated for another reason, e.g. stopped by a flow ahead a moment before
            // its own threshold event. Re-place it at once, at this time (an event at now),
            // whatever its rate: the full recomputation demotes it at its next event too.
            self.fev.set(i as u32, t);
            return;
        }
        if r <= 0.0 {
            self.fev.remove(i as u32);
            return;
        }
        let f = self.flows[i];
        let mut next = t + (f.size_bytes - sent) / r;
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s {
            let dr = f.size_bytes / f.data_span_s;
            if r > dr * (1.0 + 1e-12) {
                let gap = self.avail(i, t) - sent;
                // Never at t itself (a gap too small to leave t would come back).
                next = next.min((t + gap.max(0.0) / (r - dr)).max(t.next_up()));
            }
        }
        if !self.pq.is_empty() {
            // The next threshold above its queue. Never at t itself: a gap too small for
            // t + gap / r to leave t would re-create the same event at the same time.
            let th = &self.cfg.pias_thresholds_bytes;
            let q = self.pq[i] as usize;
            if q < th.len() {
                next = next.min((t + (th[q] - sent).max(0.0) / r).max(t.next_up()));
            }
        }
        self.fev.set(i as u32, next);
    }

    /// Handles the flow events due at t (completions, catch-ups, thresholds).
    pub(super) fn incr_flow_events(&mut self, t: f64) {
        while let Some((te, i)) = self.fev.peek() {
            if te > t {
                break;
            }
            self.fev.pop();
            let i = i as usize;
            if self.status[i] != Status::Active {
                continue;
            }
            if self.incr_try_finish(i, t) {
                continue;
            }
            // A catch-up or a threshold: re-place (the key may have changed) and re-evaluate.
            let key_changed = matches!(self.cfg.scheduler, Scheduler::Pias);
            self.incr_changed(i, key_changed);
            // Its next flow event is scheduled after the re-evaluation (by set_rate if the
            // rate changes, otherwise in incr_allocate).
            self.fev.remove(i as u32);
            self.resched.push(i as u32);
        }
        // Crossings between neighbours on a link.
        while let Some(Reverse((OrdF64(te), l, v))) = self.xheap.peek().copied() {
            if te > t {
                break;
            }
            self.xheap.pop();
            let l = l as usize;
            if v != self.xver[l] {
                continue;
            }
            self.xver[l] = self.xver[l].wrapping_add(1);
            self.incr_crossing(l);
        }
    }

    /// A crossing on link l: re-sorts its list by the current keys. The flows whose order
    /// changed re-sort the other lists they are on (a pair that swaps here swaps on every
    /// link it shares), and so on until no list changes. In each changed list, the flows
    /// from the first to the last changed position are re-evaluated: the others have the
    /// same flows ahead of them as before, and the rate changes of those ahead reach them
    /// through push_affected.
    fn incr_crossing(&mut self, l: usize) {
        self.xstamp = self.xstamp.wrapping_add(1);
        if self.xstamp == 0 {
            self.xseen.fill(0);
            self.xstamp = 1;
        }
        let st = self.xstamp;
        self.xqueue.clear();
        self.xqueue.push(l as u32);
        self.xseen[l] = st;
        self.mark_link(l);
        let mut q = 0;
        while q < self.xqueue.len() {
            let m = self.xqueue[q] as usize;
            q += 1;
            // The list in the order of the current keys (cmp_prio is a total order, so the
            // order is unique).
            let mut sorted = std::mem::take(&mut self.xsorted);
            sorted.clear();
            sorted.extend(self.lists[m].iter().map(|&j| self.prio(j as usize)));
            sorted.sort_unstable_by(|a, b| a.cmp_prio(b));
            let list = &self.lists[m];
            let first = (0..list.len()).find(|&k| list[k] != sorted[k].idx);
            if let Some(first) = first {
                let last = (first..list.len()).rev().find(|&k| list[k] != sorted[k].idx).unwrap();
                for k in first..=last {
                    let j = self.lists[m][k] as usize;
                    self.lists[m][k] = sorted[k].idx;
                    self.push_work(sorted[k].idx as usize);
                    if j != sorted[k].idx as usize {
                        let (a, b) = (self.path_off[j] as usize, self.path_off[j + 1] as usize);
                        for p in a..b {
                            let n = self.path_links[p] as usize;
                            if self.xseen[n] != st {
                                self.xseen[n] = st;
                                self.xqueue.push(n as u32);
                            }
                        }
                    }
                }
                self.mark_link(m);
            }
            self.xsorted = sorted;
        }
    }

    /// Finishes flow i if all its bytes are sent and all its data has arrived.
    pub(super) fn incr_try_finish(&mut self, i: usize, t: f64) -> bool {
        let size = self.flows[i].size_bytes;
        if size - self.sent_now(i) <= self.finish_tol(i, t) && self.complete_or_due(i, t) {
            self.incr_remove(i);
            self.sent[i] = size;
            self.status[i] = Status::Done;
            self.finish[i] = t;
            self.changed = true;
            self.release_slot(i);
            return true;
        }
        false
    }

    /// Re-evaluates the worklist in priority order, then the crossing times of the links
    /// that changed, then the next event time.
    pub(super) fn incr_allocate(&mut self) -> Result<()> {
        if self.fair {
            return self.fair_allocate();
        }
        self.stats.allocations += 1;
        self.reset_cursors();
        // Progress guard: each active flow is re-evaluated about once.
        let bound = ALLOC_STEPS_PER_FLOW * (self.active.len() as u64 + 1);
        let mut steps = 0u64;
        let inject = self.cfg.inject_stall_at_s.is_some_and(|ts| self.now >= ts);
        while let Some(w) = self.work.pop() {
            let g = w.idx as usize;
            self.in_work[g] = false;
            steps += 1;
            if steps > bound {
                let mut flows: Vec<u32> = self.work.iter().map(|w| w.idx).collect();
                flows.push(g as u32);
                let what = format!(
                    "{steps} re-evaluations of flows in one allocation, and the worklist does not drain \
                     (bound {ALLOC_STEPS_PER_FLOW} * (active flows + 1) = {bound})"
                );
                return Err(self.no_progress(&what, &flows));
            }
            if inject {
                self.push_work(g); // test only: the worklist never drains
            }
            if self.status[g] != Status::Active {
                continue;
            }
            let (a, b) = (self.path_off[g] as usize, self.path_off[g + 1] as usize);
            // Residual capacity ahead of g on each of its links, and g's position there.
            // The worklist runs in priority order, which is each list's order, so each
            // link's scan goes on from where the previous flow's stopped (its cursor)
            // instead of from the head: the same subtractions in the same order. A flow
            // that a cursor already passed (a list out of priority order by rounding, or a
            // flow evaluated again) may change rate under the cursors, so they all restart.
            if self.passed[g] == self.cepoch {
                self.reset_cursors();
            }
            let ep = self.cepoch;
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
            let mut r = self.cap_now(g);
            for (k, p) in (a..b).enumerate() {
                let l = self.path_links[p] as usize;
                let cap_l = self.topo.capacity[l];
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
                    let list = &self.lists[l];
                    let mut q = c.pos as usize;
                    let mut found = false;
                    while q < list.len() {
                        let h = list[q] as usize;
                        if h == g {
                            found = true;
                            break;
                        }
                        c.res -= self.rate[h];
                        self.passed[h] = ep;
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
            let mut best = self.cap_now(g);
            for (k, p) in (a..b).enumerate() {
                if before[k] < best {
                    best = before[k];
                    bind = self.path_links[p];
                }
            }
            self.bind[g] = bind;
            let old = self.rate[g];
            if (r - old).abs() > 1e-12 * r.max(old) {
                self.set_rate(g, r);
                for (k, p) in (a..b).enumerate() {
                    let l = self.path_links[p] as usize;
                    self.mark_link(l);
                    let pos = if at[k] == usize::MAX {
                        self.lists[l].iter().position(|&x| x as usize == g).unwrap()
                    } else {
                        at[k]
                    };
                    self.push_affected(l, pos + 1, before[k] - r);
                }
            }
        }
        self.incr_finish_allocation();
        Ok(())
    }

    /// The flow events of the flows re-evaluated without a rate change, the crossing
    /// times of the links that changed, and the next event time.
    pub(super) fn incr_finish_allocation(&mut self) {
        while let Some(i) = self.resched.pop() {
            let i = i as usize;
            if self.status[i] == Status::Active {
                self.sent[i] = self.sent_now(i);
                self.t0[i] = self.now;
                self.schedule_flow_event(i);
            }
        }
        let dynamic = matches!(self.cfg.scheduler, Scheduler::Srpt | Scheduler::Ga(GaInner::Srpt));
        while let Some(l) = self.xdirty_list.pop() {
            let l = l as usize;
            self.xdirty[l] = false;
            if !dynamic {
                continue;
            }
            self.xver[l] = self.xver[l].wrapping_add(1);
            let mut best = INF;
            let soon = 1e-12 * self.now.max(1.0);
            let list = &self.lists[l];
            let mut py = match list.first() {
                Some(&y) => self.prio(y as usize),
                None => continue,
            };
            for k in 1..list.len() {
                let (x, y) = (list[k - 1] as usize, list[k] as usize);
                let px = py;
                py = self.prio(y);
                if px.cmp_prio(&py) == Ordering::Greater {
                    // Already out of order: the keys met between two events (a crossing
                    // computed a rounding error late). Re-sort at once.
                    best = best.min(self.now + soon);
                    continue;
                }
                if px.k1 != py.k1 {
                    continue;
                }
                // Keys converge when the one ahead rises faster (or falls slower).
                let (sx, sy) = (self.key_slope(x), self.key_slope(y));
                if sx > sy {
                    let dt = (py.k2 - px.k2) / (sx - sy);
                    best = best.min(self.now + dt.max(soon));
                }
            }
            if best < INF {
                self.xheap.push(Reverse((OrdF64(best), l as u32, self.xver[l])));
            }
        }
        // Next event.
        let mut next = self.next_timed_event();
        if let Some((te, _)) = self.fev.peek() {
            next = next.min(te);
        }
        while let Some(Reverse((OrdF64(te), l, v))) = self.xheap.peek().copied() {
            if v != self.xver[l as usize] {
                self.xheap.pop();
                continue;
            }
            next = next.min(te);
            break;
        }
        self.next_event = next;
    }
}
