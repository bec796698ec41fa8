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
//!   Links outside the fill have only unchanged flows below the current level, so they
//!   saturate where they did. Every flow whose rate changes is found this way, at a level
//!   at most its old and new levels, which is what makes the result the max-min fair
//!   allocation (up to rounding; slack TOL in the level comparisons).
//!
//! Flows advance lazily and have flow events (completion, catching up with their data)
//! in the heap of the priority allocator (incr.rs), whose machinery this shares.
//! `SimConfig::force_full_recompute` runs the full recomputation instead; the test
//! suite checks both give the same results.
use std::cmp::Ordering;

use super::{Simulator, Status, INF};
use crate::sched::Scheduler;

/// Relative slack of the level comparisons (saturation, a virtual flow at its old
/// level): well above the rounding of a sum of rates, well below what changes a result.
const TOL: f64 = 1e-11;

/// An event of the fill: a link that saturates at `level` (kind 0; a version tells a
/// stale entry), a virtual flow at its old level (kind 1), a real flow at its cap
/// (kind 2). Ordered by level, then kind (links first), id and version, packed in
/// `key` (deterministic).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    level: f64,
    key: u64,
}
impl Item {
    #[inline]
    fn new(level: f64, kind: u64, id: usize, version: u32) -> Self {
        Item { level, key: kind << 62 | (id as u64) << 32 | version as u64 }
    }
    #[inline]
    fn kind(&self) -> u64 {
        self.key >> 62
    }
    #[inline]
    fn id(&self) -> usize {
        ((self.key >> 32) & 0x3fff_ffff) as usize
    }
    #[inline]
    fn version(&self) -> u32 {
        self.key as u32
    }
}
impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    // Reversed: BinaryHeap is a max-heap.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.level.total_cmp(&self.level).then(o.key.cmp(&self.key))
    }
}

pub(super) fn applies(s: &Scheduler) -> bool {
    matches!(s, Scheduler::Ps | Scheduler::Wps)
}

impl Simulator {
    pub(super) fn fair_activate(&mut self, i: usize) {
        self.apos[i] = self.active.len() as u32;
        self.active.push(i as u32);
        self.t0[i] = self.now;
        self.rate[i] = 0.0;
        self.weight[i] = if matches!(self.cfg.scheduler, Scheduler::Wps) { self.flows[i].weight } else { 1.0 };
        self.cap[i] = INF;
        for p in self.path_off[i] as usize..self.path_off[i + 1] as usize {
            let l = self.path_links[p] as usize;
            self.lpos[p] = self.lists[l].len() as u32;
            self.lists[l].push(i as u32);
            self.lok[l] = false;
        }
        self.seed_flows.push(i as u32);
    }

    /// Takes an active flow out (finished or terminated): the flows on its links are re-solved.
    pub(super) fn fair_remove(&mut self, i: usize) {
        if self.rate[i] > 0.0 {
            self.floor = self.floor.min(self.rate[i] / self.weight[i]);
        }
        self.sent[i] = self.sent_now(i);
        self.t0[i] = self.now;
        self.rate[i] = 0.0;
        self.fev.remove(i as u32);
        for p in self.path_off[i] as usize..self.path_off[i + 1] as usize {
            let l = self.path_links[p] as usize;
            let pos = self.lpos[p] as usize;
            self.lists[l].swap_remove(pos);
            if pos < self.lists[l].len() {
                let j = self.lists[l][pos] as usize;
                for q in self.path_off[j] as usize..self.path_off[j + 1] as usize {
                    if self.path_links[q] as usize == l {
                        self.lpos[q] = pos as u32;
                    }
                }
            }
            self.seed_links.push(l as u32);
            self.lok[l] = false;
        }
        let k = self.apos[i] as usize;
        self.active.swap_remove(k);
        if k < self.active.len() {
            self.apos[self.active[k] as usize] = k as u32;
        }
        self.apos[i] = u32::MAX;
    }

    /// Flow i's cap may have changed (it caught up with its data, or its data is complete).
    pub(super) fn fair_changed(&mut self, i: usize) {
        self.seed_flows.push(i as u32);
    }

    /// The floor (see the module doc) of the pending changes; the flows of `rlist` are
    /// the arriving and changing ones (their old rate: 0 for an arrival).
    fn fair_floor(&mut self) -> f64 {
        let mut lam = std::mem::replace(&mut self.floor, INF);
        let st = self.stamp;
        let mut links = std::mem::take(&mut self.grow_links);
        links.clear();
        for k in 0..self.rlist.len() {
            let s = self.rlist[k] as usize;
            if self.rate[s] > 0.0 {
                lam = lam.min(self.rate[s] / self.weight[s]);
            }
            lam = lam.min(self.cap_now(s) / self.weight[s]);
            links.extend_from_slice(&self.path_links[self.path_off[s] as usize..self.path_off[s + 1] as usize]);
        }
        links.sort_unstable();
        links.dedup();
        for &l in &links {
            let l = l as usize;
            // Water level of l: the others at min(old rate, weight * level).
            self.wl.clear();
            let mut wrem = 0.0;
            for &g in &self.lists[l] {
                let g = g as usize;
                let w = self.weight[g];
                wrem += w;
                if self.rst[g] != st {
                    self.wl.push((self.rate[g] / w, self.rate[g], w));
                }
            }
            self.wl.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let c = self.topo.capacity[l];
            let mut frozen = 0.0;
            let mut x = INF;
            for &(lev, r, w) in &self.wl {
                let cand = (c - frozen).max(0.0) / wrem;
                if cand <= lev {
                    x = cand;
                    break;
                }
                frozen += r;
                wrem -= w;
            }
            if x == INF {
                x = (c - frozen).max(0.0) / wrem;
            }
            lam = lam.min(x);
        }
        self.grow_links = links;
        lam
    }

    /// Link l joins the fill at level lam: its residual capacity and unfrozen weight; its
    /// virtual flows below lam are final, the others get an event at their old level.
    fn fair_join(&mut self, l: usize, lam: f64) {
        let st = self.stamp;
        if self.tstamp[l] == st {
            return;
        }
        self.tstamp[l] = st;
        let mut res = self.topo.capacity[l];
        let mut w = 0.0;
        let mut cnt = 0u32;
        for k in 0..self.lists[l].len() {
            let g = self.lists[l][k] as usize;
            if self.rst[g] == st {
                if self.zst[g] == st {
                    res -= self.nrate[g];
                } else {
                    w += self.weight[g];
                    cnt += 1;
                }
            } else if self.zst[g] == st {
                res -= self.rate[g];
            } else {
                let lev = self.rate[g] / self.weight[g];
                if lev < lam {
                    self.zst[g] = st;
                    res -= self.rate[g];
                } else {
                    w += self.weight[g];
                    cnt += 1;
                    if self.vst[g] != st {
                        self.vst[g] = st;
                        self.fheap.push(Item::new(lev, 1, g, 0));
                    }
                }
            }
        }
        self.lres[l] = res;
        self.lw[l] = w;
        self.lcnt[l] = cnt;
        self.lver[l] = 0;
        if cnt > 0 {
            self.fheap.push(Item::new(res.max(0.0) / w, 0, l, 0));
        }
    }

    /// Flow g (unfrozen on the links of the fill) freezes at rate r.
    fn fair_freeze(&mut self, g: usize, r: f64) {
        let st = self.stamp;
        self.zst[g] = st;
        let w = self.weight[g];
        for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
            let l = self.path_links[p] as usize;
            if self.tstamp[l] != st {
                continue;
            }
            self.lres[l] -= r;
            self.lcnt[l] -= 1;
            self.lw[l] = if self.lcnt[l] > 0 { self.lw[l] - w } else { 0.0 };
            self.lver[l] = self.lver[l].wrapping_add(1);
        }
    }

    /// Flow g turns real: its cap, and its links join the fill.
    fn fair_make_real(&mut self, g: usize, lam: f64) {
        self.rst[g] = self.stamp;
        self.rlist.push(g as u32);
        self.cap[g] = self.cap_now(g);
        for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
            self.fair_join(self.path_links[p] as usize, lam);
        }
    }

    /// Whether virtual flow g, at its old level lam, still stops there: at its cap, on a
    /// link of the fill that saturates at lam, or on an untouched link where it was a
    /// bottleneck.
    fn fair_still_stops(&mut self, g: usize, lam: f64) -> bool {
        let st = self.stamp;
        let r = self.rate[g];
        if self.cap[g] < INF && r >= self.cap[g] * (1.0 - TOL) {
            return true;
        }
        let lev = r / self.weight[g];
        for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
            let l = self.path_links[p] as usize;
            if self.tstamp[l] == st {
                if self.lcnt[l] > 0 && self.lres[l].max(0.0) <= self.lw[l] * lam * (1.0 + TOL) {
                    return true;
                }
            } else {
                if !self.lok[l] {
                    // Used capacity and highest level at the committed rates (cached
                    // until a flow of l changes rate, arrives or leaves).
                    let mut used = 0.0;
                    let mut mx = 0.0f64;
                    for &h in &self.lists[l] {
                        let h = h as usize;
                        used += self.rate[h];
                        mx = mx.max(self.rate[h] / self.weight[h]);
                    }
                    self.lok[l] = true;
                    self.lused[l] = used;
                    self.lmax[l] = mx;
                }
                if self.lused[l] >= self.topo.capacity[l] * (1.0 - TOL) && lev >= self.lmax[l] * (1.0 - TOL) {
                    return true;
                }
            }
        }
        false
    }

    /// Re-runs the filling where it changes (see the module doc), commits the rates that
    /// changed, and computes the next event time.
    pub(super) fn fair_allocate(&mut self) {
        self.stats.allocations += 1;
        self.stamp = self.stamp.wrapping_add(1);
        let st = self.stamp;
        self.rlist.clear();
        for k in 0..self.seed_flows.len() {
            let s = self.seed_flows[k] as usize;
            if self.status[s] == Status::Active && self.rst[s] != st {
                self.rst[s] = st;
                self.rlist.push(s as u32);
            }
        }
        self.seed_flows.clear();
        let mut lam = self.fair_floor();
        if lam == INF && !self.seed_links.is_empty() {
            lam = 0.0;
        }
        lam *= 1.0 - 1e-9;
        self.fheap.clear();
        for k in 0..self.rlist.len() {
            let g = self.rlist[k] as usize;
            self.cap[g] = self.cap_now(g);
        }
        for k in 0..self.rlist.len() {
            let g = self.rlist[k] as usize;
            for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
                self.fair_join(self.path_links[p] as usize, lam);
            }
        }
        for k in 0..self.seed_links.len() {
            self.fair_join(self.seed_links[k] as usize, lam);
        }
        self.seed_links.clear();
        for k in 0..self.rlist.len() {
            let g = self.rlist[k] as usize;
            if self.cap[g] < INF {
                self.fheap.push(Item::new(self.cap[g] / self.weight[g], 2, g, 0));
            }
        }
        while let Some(top) = self.fheap.peek().copied() {
            let id = top.id();
            if top.kind() == 0 && self.lcnt[id] > 0 && top.version() != self.lver[id] {
                // Levels only rise as flows freeze: the stale top moves to the current one
                // (in place: one sift instead of a pop and a push).
                let level = self.lres[id].max(0.0) / self.lw[id];
                *self.fheap.peek_mut().unwrap() = Item::new(level, 0, id, self.lver[id]);
                continue;
            }
            let it = self.fheap.pop().unwrap();
            match it.kind() {
                0 => {
                    let l = id;
                    if self.lcnt[l] == 0 {
                        continue;
                    }
                    lam = lam.max(it.level);
                    for k in 0..self.lists[l].len() {
                        let g = self.lists[l][k] as usize;
                        if self.zst[g] == st {
                            continue;
                        }
                        let w = self.weight[g];
                        if self.rst[g] == st {
                            let r = (w * lam).min(self.cap[g]);
                            self.nrate[g] = r;
                            self.fair_freeze(g, r);
                        } else if self.rate[g] <= w * lam * (1.0 + TOL) {
                            // Saturates at the virtual flow's old level: it stays.
                            self.fair_freeze(g, self.rate[g]);
                        } else {
                            // Frozen below its old level: it turns real.
                            let r = w * lam;
                            self.nrate[g] = r;
                            self.fair_freeze(g, r);
                            self.fair_make_real(g, lam);
                        }
                    }
                }
                1 => {
                    let g = id;
                    if self.rst[g] == st || self.zst[g] == st {
                        continue;
                    }
                    lam = lam.max(it.level);
                    if self.fair_still_stops(g, lam) {
                        self.fair_freeze(g, self.rate[g]);
                    } else {
                        self.fair_make_real(g, lam);
                        if self.cap[g] < INF {
                            self.fheap.push(Item::new(self.cap[g] / self.weight[g], 2, g, 0));
                        }
                    }
                }
                _ => {
                    let g = id;
                    if self.rst[g] != st || self.zst[g] == st {
                        continue;
                    }
                    lam = lam.max(it.level);
                    let r = self.cap[g];
                    self.nrate[g] = r;
                    self.fair_freeze(g, r);
                }
            }
        }
        // Commit.
        for k in 0..self.rlist.len() {
            let f = self.rlist[k] as usize;
            debug_assert!(self.zst[f] == st, "a real flow is frozen at the end of the fill");
            let (r, old) = (self.nrate[f], self.rate[f]);
            if (r - old).abs() > 1e-12 * r.max(old) || (r == 0.0) != (old == 0.0) {
                self.set_rate(f, r);
                for p in self.path_off[f] as usize..self.path_off[f + 1] as usize {
                    self.lok[self.path_links[p] as usize] = false;
                }
            }
        }
        self.rlist.clear();
        self.incr_finish_allocation();
    }
}
