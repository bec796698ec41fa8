//! The incremental allocator for fair sharing (`ps`, `wps`).
//!
//! The (weighted) max-min fair allocation with per-flow caps is characterized by a
//! certificate: it is feasible and every flow either sends at its cap or has a
//! bottleneck link, a saturated link on its path where no flow has a higher level
//! (level = rate / weight). An event (arrival, departure, a cap that changes) leaves
//! most flows' rates as they were. So an event re-solves only a region R of flows:
//! R starts with the flows the event concerns and the flows on their links; the flows
//! of R are re-filled (progressive filling, `Filler`) over what the others leave of
//! their links; then the certificate is checked on every flow of R and every other
//! flow that shares a link with R. A flow that fails it (or one that keeps a flow of R
//! from its bottleneck) joins R, and R is re-filled, until the certificate holds. The
//! flows outside R that share no link with R keep their bottlenecks untouched, so the
//! result is the max-min fair allocation (up to rounding). A region that grows past
//! a sixteenth of the active flows, or whose cumulative work passes an eighth (measured
//! on the web search benchmark: a full fill costs less per flow than a region round),
//! falls back to one fill over all of them (with more than 64 active flows).
//!
//! Flows advance lazily and have flow events (completion, catching up with their data)
//! in the heap of the priority allocator (incr.rs), whose machinery this shares.
//! `SimConfig::force_full_recompute` runs the full recomputation instead; the test
//! suite checks both give the same results.
use super::{Simulator, Status, INF};
use crate::fill::Paths;
use crate::sched::Scheduler;

/// Relative slack of the certificate checks (saturation and level comparisons): well
/// above the rounding of a sum of rates, well below what changes a result.
const TOL: f64 = 1e-11;

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
        }
        self.seed_flows.push(i as u32);
    }

    /// Takes an active flow out (finished or terminated): the flows on its links are re-solved.
    pub(super) fn fair_remove(&mut self, i: usize) {
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

    #[inline]
    fn fair_cur(&self, g: usize) -> f64 {
        if self.in_r[g] {
            self.nrate[g]
        } else {
            self.rate[g]
        }
    }

    fn add_r(&mut self, g: usize) {
        if !self.in_r[g] && self.status[g] == Status::Active {
            self.in_r[g] = true;
            self.rlist.push(g as u32);
        }
    }

    fn add_link_flows(&mut self, l: usize) {
        for k in 0..self.lists[l].len() {
            let g = self.lists[l][k] as usize;
            self.add_r(g);
        }
    }

    /// Used capacity and highest level on link l at the current rates (memoized per round).
    fn link_state(&mut self, l: usize) -> (f64, f64) {
        if self.mstamp[l] != self.stamp {
            let mut used = 0.0;
            let mut mx = 0.0f64;
            for &g in &self.lists[l] {
                let g = g as usize;
                let r = self.fair_cur(g);
                used += r;
                mx = mx.max(r / self.weight[g]);
            }
            self.mstamp[l] = self.stamp;
            self.lused[l] = used;
            self.lmax[l] = mx;
        }
        (self.lused[l], self.lmax[l])
    }

    /// Whether flow g sends at its cap or has a bottleneck link at the current rates.
    fn has_bottleneck(&mut self, g: usize) -> bool {
        let r = self.fair_cur(g);
        if self.cap[g] < INF && r >= self.cap[g] * (1.0 - TOL) {
            return true;
        }
        let lev = r / self.weight[g];
        for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
            let l = self.path_links[p] as usize;
            let (used, mx) = self.link_state(l);
            if used >= self.topo.capacity[l] * (1.0 - TOL) && lev >= mx * (1.0 - TOL) {
                return true;
            }
        }
        false
    }

    /// One fill over every active flow (the fallback for large regions).
    fn fair_fill_all(&mut self) {
        for k in 0..self.active.len() {
            let g = self.active[k] as usize;
            self.cap[g] = self.cap_now(g);
            if !self.in_r[g] {
                self.in_r[g] = true;
                self.rlist.push(g as u32);
            }
        }
        self.res.copy_from_slice(&self.topo.capacity);
        let paths = Paths { off: &self.path_off, links: &self.path_links };
        self.filler.fill(&self.active, &paths, &self.weight, &self.cap, &mut self.res, &mut self.nrate);
    }

    /// Re-solves the region of the pending changes, commits the rates that changed, and
    /// computes the next event time.
    pub(super) fn fair_allocate(&mut self) {
        self.stats.allocations += 1;
        let seeds = std::mem::take(&mut self.seed_flows);
        for &i in &seeds {
            let i = i as usize;
            if self.status[i] != Status::Active {
                continue;
            }
            self.add_r(i);
            for p in self.path_off[i] as usize..self.path_off[i + 1] as usize {
                self.add_link_flows(self.path_links[p] as usize);
            }
        }
        self.seed_flows = seeds;
        self.seed_flows.clear();
        let links = std::mem::take(&mut self.seed_links);
        for &l in &links {
            self.add_link_flows(l as usize);
        }

        let mut grow: Vec<u32> = std::mem::take(&mut self.grow);
        let mut work = 0usize;
        while !self.rlist.is_empty() {
            work += self.rlist.len();
            if (16 * self.rlist.len() > self.active.len() || work > self.active.len() / 8) && self.active.len() > 64 {
                self.fair_fill_all();
                break;
            }
            self.stamp = self.stamp.wrapping_add(1);
            let stamp = self.stamp;
            // Links of R, and what the flows outside R leave of them.
            self.tlinks.clear();
            for k in 0..self.rlist.len() {
                let f = self.rlist[k] as usize;
                for p in self.path_off[f] as usize..self.path_off[f + 1] as usize {
                    let l = self.path_links[p] as usize;
                    if self.tstamp[l] != stamp {
                        self.tstamp[l] = stamp;
                        self.tlinks.push(l as u32);
                        let mut used = 0.0;
                        for &g in &self.lists[l] {
                            if !self.in_r[g as usize] {
                                used += self.rate[g as usize];
                            }
                        }
                        self.res[l] = (self.topo.capacity[l] - used).max(0.0);
                    }
                }
                self.cap[f] = self.cap_now(f);
            }
            let paths = Paths { off: &self.path_off, links: &self.path_links };
            self.filler.fill(&self.rlist, &paths, &self.weight, &self.cap, &mut self.res, &mut self.nrate);
            // The certificate: flows of R first (a flow that fails pulls in the flows
            // outside R with a higher level on its links), then the flows beside R.
            // The links whose flows' rates change (and those a departure left).
            for &l in &links {
                self.cstamp[l as usize] = stamp;
            }
            for k in 0..self.rlist.len() {
                let f = self.rlist[k] as usize;
                let (r, old) = (self.nrate[f], self.rate[f]);
                if (r - old).abs() <= 1e-12 * r.max(old) && (r == 0.0) == (old == 0.0) {
                    self.nrate[f] = old;
                } else {
                    for p in self.path_off[f] as usize..self.path_off[f + 1] as usize {
                        self.cstamp[self.path_links[p] as usize] = stamp;
                    }
                }
            }
            grow.clear();
            for k in 0..self.rlist.len() {
                let f = self.rlist[k] as usize;
                if self.has_bottleneck(f) {
                    continue;
                }
                let lev = self.nrate[f] / self.weight[f];
                for p in self.path_off[f] as usize..self.path_off[f + 1] as usize {
                    let l = self.path_links[p] as usize;
                    for &g in &self.lists[l] {
                        let g = g as usize;
                        if !self.in_r[g] && self.fstamp[g] != stamp && self.rate[g] / self.weight[g] > lev * (1.0 + TOL) {
                            self.fstamp[g] = stamp;
                            grow.push(g as u32);
                        }
                    }
                }
            }
            for k in 0..self.tlinks.len() {
                let l = self.tlinks[k] as usize;
                if self.cstamp[l] != stamp {
                    continue;
                }
                for m in 0..self.lists[l].len() {
                    let g = self.lists[l][m] as usize;
                    if self.in_r[g] || self.fstamp[g] == stamp {
                        continue;
                    }
                    self.fstamp[g] = stamp;
                    if !self.has_bottleneck(g) {
                        grow.push(g as u32);
                    }
                }
            }
            if grow.is_empty() {
                break;
            }
            // A flow that joins R changes the links it is on: the flows bottlenecked
            // there (at the highest level of a saturated link) join it too.
            let n_fail = grow.len();
            for k in 0..n_fail {
                let g = grow[k] as usize;
                for p in self.path_off[g] as usize..self.path_off[g + 1] as usize {
                    let l = self.path_links[p] as usize;
                    let (used, mx) = self.link_state(l);
                    if used < self.topo.capacity[l] * (1.0 - TOL) {
                        continue;
                    }
                    for &h in &self.lists[l] {
                        let h = h as usize;
                        if !self.in_r[h] && self.fstamp[h] != stamp && self.rate[h] / self.weight[h] >= mx * (1.0 - TOL) {
                            self.fstamp[h] = stamp;
                            grow.push(h as u32);
                        }
                    }
                }
            }
            for &g in &grow {
                self.add_r(g as usize);
            }
        }
        self.grow = grow;
        self.seed_links = links;
        self.seed_links.clear();
        // Commit.
        let rl = std::mem::take(&mut self.rlist);
        for &f in &rl {
            let f = f as usize;
            self.in_r[f] = false;
            let (r, old) = (self.nrate[f], self.rate[f]);
            if (r - old).abs() > 1e-12 * r.max(old) || (r == 0.0) != (old == 0.0) {
                self.set_rate(f, r);
            }
        }
        self.rlist = rl;
        self.rlist.clear();
        self.incr_finish_allocation();
    }
}
