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
//! `SimConfig::force_full_recompute` runs the same schedulers through the full
//! recomputation instead; the test suite checks both give the same results.
use std::cmp::{Ordering, Reverse};

use super::{tol_of, OrdF64, Simulator, Status, INF};
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

impl Simulator {
    fn prio(&self, i: usize) -> WorkItem {
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

    fn list_insert(&mut self, l: usize, i: usize) {
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

    /// Pushes the flows at positions >= pos of link l's list.
    fn push_from(&mut self, l: usize, pos: usize) {
        for k in pos..self.lists[l].len() {
            let j = self.lists[l][k] as usize;
            self.push_work(j);
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
        let (a, b) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
        for p in a..b {
            let l = self.path_links[p] as usize;
            if key_changed {
                let old = self.list_remove(l, i);
                self.push_from(l, old);
                self.list_insert(l, i);
            }
            let pos = self.lists[l].iter().position(|&x| x as usize == i).unwrap();
            self.push_from(l, pos);
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
        if r <= 0.0 {
            self.fev.remove(i as u32);
            return;
        }
        let t = self.now;
        let f = self.flows[i];
        let sent = self.sent[i];
        let mut next = t + (f.size_bytes - sent) / r;
        if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s {
            let dr = f.size_bytes / f.data_span_s;
            if r > dr * (1.0 + 1e-12) {
                let gap = self.avail(i, t) - sent;
                next = next.min(t + gap.max(0.0) / (r - dr));
            }
        }
        if let Scheduler::Pias = self.cfg.scheduler {
            let th = &self.cfg.pias_thresholds_bytes;
            let q = th.partition_point(|&x| x < sent + tol_of(x));
            if q < th.len() {
                next = next.min(t + (th[q] - sent).max(0.0) / r);
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
            // Re-sort the link's list by the current keys, and the lists of every link of
            // its flows (a pair that swaps here swaps on all the links it shares).
            let members: Vec<u32> = self.lists[l].clone();
            let mut links: Vec<u32> = Vec::new();
            for &j in &members {
                let (a, b) = (self.path_off[j as usize] as usize, self.path_off[j as usize + 1] as usize);
                links.extend_from_slice(&self.path_links[a..b]);
            }
            links.sort_unstable();
            links.dedup();
            for &m in &links {
                let m = m as usize;
                let mut list = std::mem::take(&mut self.lists[m]);
                list.sort_by(|&x, &y| self.prio(x as usize).cmp_prio(&self.prio(y as usize)));
                self.lists[m] = list;
                self.mark_link(m);
                self.push_from(m, 0);
            }
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
    pub(super) fn incr_allocate(&mut self) {
        if self.fair {
            return self.fair_allocate();
        }
        self.stats.allocations += 1;
        while let Some(w) = self.work.pop() {
            let g = w.idx as usize;
            self.in_work[g] = false;
            if self.status[g] != Status::Active {
                continue;
            }
            let (a, b) = (self.path_off[g] as usize, self.path_off[g + 1] as usize);
            // Residual capacity ahead of g on each of its links, and g's position there.
            let mut before = [0.0f64; 8];
            let mut at = [0usize; 8];
            let mut r = self.cap_now(g);
            for (k, p) in (a..b).enumerate() {
                let l = self.path_links[p] as usize;
                let cap_l = self.topo.capacity[l];
                let mut res = cap_l;
                let mut pos = 0;
                for &h in &self.lists[l] {
                    if h as usize == g {
                        break;
                    }
                    res -= self.rate[h as usize];
                    pos += 1;
                    if res <= 1e-12 * cap_l {
                        // Nothing left for g here; its position is looked up if needed.
                        res = 0.0;
                        pos = usize::MAX;
                        break;
                    }
                }
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
            let list = &self.lists[l];
            for k in 1..list.len() {
                let (x, y) = (list[k - 1] as usize, list[k] as usize);
                let (px, py) = (self.prio(x), self.prio(y));
                if px.k1 != py.k1 {
                    continue;
                }
                // Keys converge when the one ahead rises faster (or falls slower).
                let (sx, sy) = (self.key_slope(x), self.key_slope(y));
                if sx > sy {
                    let dt = (py.k2 - px.k2) / (sx - sy);
                    if dt >= 0.0 {
                        best = best.min(self.now + dt.max(1e-12 * self.now.max(1.0)));
                    }
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
