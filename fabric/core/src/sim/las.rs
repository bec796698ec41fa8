//! A faster full recomputation for LAS (least attained service / foreground-background).
//!
//! It computes exactly what the generic priority path computes (`allocate_priority` with
//! the key (0, sent, 1), then `compute_next_event` with `next_crossing`), with the same
//! floating-point operations, so the results are bit-identical; only the bookkeeping is
//! cheaper:
//! - the active flows keep their order from one event to the next, and the order changes
//!   little (a few flows move per event), so an insertion sort over packed
//!   (sent, arrival, index) records replaces the general sort (with a fallback to the
//!   general sort when many flows moved);
//! - the next event (completions, data catch-up, crossings) is found in one pass over the
//!   flows in priority order: the neighbour ahead of a flow on each of its links is the
//!   last flow seen on that link, so no per-link lists are built.
//!
//! `SimConfig::force_full_recompute` keeps the generic path (the reference the tests
//! compare this one against).
use std::cmp::{Ordering, Reverse};

use super::{tol_of, OrdF64, Simulator, INF};
use crate::fill::Paths;

/// One active flow in priority order: its key (bytes sent), then the tie-breaks.
#[derive(Debug, Clone, Copy)]
pub(super) struct LasRec {
    sent: f64,
    arrival: f64,
    idx: u32,
}

#[inline]
fn rec_cmp(a: &LasRec, b: &LasRec) -> Ordering {
    a.sent.total_cmp(&b.sent).then(a.arrival.total_cmp(&b.arrival)).then(a.idx.cmp(&b.idx))
}

/// `same_key` of the generic path for keys (0, x, 1) and (0, y, 1).
#[inline]
fn same(x: f64, y: f64) -> bool {
    (x - y).abs() <= tol_of(x.abs().max(y.abs()))
}

impl Simulator {
    /// Sorts `active` by (sent, arrival, index), as `sort_active_by_key` does for LAS.
    fn las_sort(&mut self) {
        let n = self.active.len();
        self.las_recs.clear();
        for &i in &self.active {
            let iu = i as usize;
            self.las_recs.push(LasRec { sent: self.sent[iu], arrival: self.flows[iu].arrival_s, idx: i });
        }
        // Insertion sort: the previous order is nearly right (cost n + moves).
        let recs = &mut self.las_recs[..];
        let budget = 8 * n + 256;
        let mut moves = 0usize;
        let mut fallback = false;
        for k in 1..n {
            let x = recs[k];
            if rec_cmp(&recs[k - 1], &x) != Ordering::Greater {
                continue;
            }
            let mut j = k;
            while j > 0 && rec_cmp(&recs[j - 1], &x) == Ordering::Greater {
                recs[j] = recs[j - 1];
                j -= 1;
            }
            recs[j] = x;
            moves += k - j;
            if moves > budget {
                fallback = true;
                break;
            }
        }
        if fallback {
            recs.sort_by(rec_cmp);
        }
        for (a, r) in self.active.iter_mut().zip(self.las_recs.iter()) {
            *a = r.idx;
        }
    }

    /// LAS allocation (the caps and residual capacities are set by `allocate`).
    pub(super) fn allocate_las(&mut self) {
        self.las_sort();
        // Every weight is 1 (set in `Simulator::new`).
        let n = self.active.len();
        let paths = Paths { off: &self.path_off, links: &self.path_links };
        let recs = &self.las_recs;
        let mut a = 0;
        while a < n {
            let first = recs[a].sent;
            let mut b = a + 1;
            while b < n && same(first, recs[b].sent) {
                b += 1;
            }
            // Members with a saturated link get rate 0 in `Filler::fill` (their links pop
            // first, at level 0, and freezing them at 0 changes no residual), so: all
            // blocked -> all 0; one member left -> the one-flow fill; else `Filler::fill`.
            let mut free = usize::MAX;
            let mut n_free = 0;
            if b > a + 1 {
                for k in a..b {
                    let i = self.active[k] as usize;
                    let p = &self.path_links[self.path_off[i] as usize..self.path_off[i + 1] as usize];
                    if p.iter().all(|&l| self.res[l as usize] > 0.0) {
                        free = k;
                        n_free += 1;
                    } else {
                        self.rate[i] = 0.0;
                    }
                }
            } else {
                free = a;
                n_free = 1;
            }
            if n_free == 1 {
                // `Filler::fill` on one flow, inlined.
                let i = self.active[free] as usize;
                let p = &self.path_links[self.path_off[i] as usize..self.path_off[i + 1] as usize];
                let mut r = self.cap[i];
                for &l in p {
                    r = r.min(self.res[l as usize]);
                }
                let r = r.max(0.0);
                for &l in p {
                    self.res[l as usize] = (self.res[l as usize] - r).max(0.0);
                }
                self.rate[i] = r;
            } else if n_free > 1 {
                self.filler.fill(&self.active[a..b], &paths, &self.weight, &self.cap, &mut self.res, &mut self.rate);
            }
            a = b;
        }
        self.las_next_event();
    }

    /// `compute_next_event` for LAS: completions, data catch-up and crossings in one pass.
    fn las_next_event(&mut self) {
        let t = self.now;
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
                next = next.min(t + iv);
            }
        }
        // The flow ahead on each link (in priority order): (sent, rate); sent < 0: none yet.
        self.las_last.clear();
        self.las_last.resize(self.topo.n_links(), (-1.0, 0.0));
        let bump = 1e-12 * t.max(1.0);
        let mut cross = INF;
        for k in 0..self.active.len() {
            let i = self.active[k] as usize;
            let r = self.rate[i];
            let sy = self.las_recs[k].sent;
            if r > 0.0 {
                let f = &self.flows[i];
                let rem = f.size_bytes - sy;
                next = next.min(t + rem / r);
                if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && self.cap[i] == INF {
                    let dr = f.size_bytes / f.data_span_s;
                    if r > dr {
                        let gap = self.avail(i, t) - sy;
                        next = next.min(t + gap.max(0.0) / (r - dr));
                    }
                }
            }
            let (pa, pb) = (self.path_off[i] as usize, self.path_off[i + 1] as usize);
            for &l in &self.path_links[pa..pb] {
                let l = l as usize;
                let (sx, rx) = self.las_last[l];
                // `crossing(x, y)` of the generic path: x ahead, y = this flow.
                if rx > 0.0 && sx >= 0.0 && rx > r && !same(sx, sy) {
                    let dt = (sy - sx) / (rx - r);
                    if dt >= 0.0 {
                        cross = cross.min(t + dt.max(bump));
                    }
                }
                self.las_last[l] = (sy, r);
            }
        }
        self.next_event = next.min(cross);
    }
}
