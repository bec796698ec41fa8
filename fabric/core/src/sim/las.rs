//! A faster full recomputation for LAS (least attained service / foreground-background).
//!
//! It computes exactly what the generic priority path computes (the caps of `FullRecomputation::recompute`,
//! `allocate_priority` with the key (0, sent, 1), `compute_next_event` with
//! `next_crossing`, and the fluid advance and completions of `advance_to`), with the same
//! floating-point operations in the same order where the order matters, so the results
//! are bit-identical; only the bookkeeping is cheaper:
//! - the active flows live in packed records (bytes sent, rate, size, path, ...) kept in
//!   priority order from one event to the next, so every per-event pass reads one array
//!   in order instead of several per-flow arrays at random;
//! - the order changes little between events (a few flows move), so an insertion sort
//!   replaces the general sort (with a fallback to the general sort when many flows moved);
//! - flows with a saturated link, and groups of equal attained service with one flow left
//!   to fill, skip `Filler::fill` (which would give them the same rates), and small groups
//!   go through `fill_small_core` (`Filler::fill`'s operations without a heap), fed
//!   from the records;
//! - the next event (completions, data catch-up, crossings) is found in one pass in
//!   priority order: the flow ahead on each link is the last one seen on that link, so no
//!   per-link lists are built.
//!
//! `sent` and `rate` stay up to date alongside the records. `AllocatorChoice::Full`
//! keeps the generic path (the reference the tests compare this one against).
use std::cmp::Ordering;

use super::{filled, finish_tol_of, tol_of, Core, Status, INF};
use crate::error::Result;
use crate::fill::Filler;
use crate::fill::{fill_small_core, Paths, SMALL_N};

/// Longest path the narrow records hold (big switch: 2 links, leaf-spine: up to 4).
pub(super) const MAX_PATH: usize = 4;

/// Longest path the wide records hold (80-byte records: a fat-tree's 6 links, m3's 8-host
/// parking lot's 9). The narrow ones stay 56 bytes: the big switch's LAS ran 3 to 5%
/// slower on 64-byte records. On `FatTree(8)` 80-byte records ran within 1 to 5% of
/// 64-byte ones (3 alternated rounds).
pub(super) const WIDE_PATH: usize = 10;

/// One active flow, in priority order: its key (bytes sent), its tie-break, and what the
/// per-event passes need (56 bytes with paths of up to 4 links, 80 with 10). Flows with a
/// data span (`spanned`) read their arrival, span and cap from the simulator's arrays.
#[derive(Debug, Clone, Copy)]
pub(super) struct LasRec<const N: usize> {
    sent: f64,
    rate: f64,
    size: f64,
    /// Position in (arrival, index) order: the generic path's tie-breaks.
    rank: u32,
    idx: u32,
    links: [u32; N],
    np: u8,
    spanned: bool,
}

/// The LAS records allocator (`las` on paths of up to `N` links: `MAX_PATH`, or
/// `WIDE_PATH`): the full recomputation of LAS at every event, on packed per-flow records
/// (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct LasRecords<const N: usize> {
    /// One record per active flow, in priority order (bytes sent, then arrival).
    pub(super) recs: Vec<LasRec<N>>,
    /// Each flow's position in (arrival, index) order: the generic path's tie-breaks.
    pub(super) rank: Vec<u32>,
    /// Scratch of the next-event pass: per link, where the pass is (`LasLinkScan`).
    pub(super) last: Vec<LasLinkScan>,
    /// Flows left `active` since the records were last synced.
    pub(super) removed: bool,
    /// Progressive filling of each group of equal keys (fill.rs).
    pub(super) filler: Filler,
    /// Per link, the capacity not yet given out in the current allocation, bytes/s.
    pub(super) residual: Vec<f64>,
    /// LAS keys (bytes sent) this far apart per second of t are equal (`same`): what
    /// the fastest link sends in a few ulps of t, the rounding of a crossing's time.
    pub(super) key_abs_tol: f64,
}

impl<const N: usize> LasRecords<N> {
    /// The allocator of a run whose flows arrive in `order` on links of capacities
    /// `capacity` (bytes/s) with key tolerance `key_abs_tol` (`key_abs_tol_of`).
    pub(super) fn new(order: &[u32], capacity: &[f64], key_abs_tol: f64) -> Result<Self> {
        let mut rank = vec![0u32; order.len()];
        for (p, &i) in order.iter().enumerate() {
            rank[i as usize] = p as u32;
        }
        Ok(LasRecords {
            recs: Vec::new(),
            rank,
            last: Vec::new(),
            removed: false,
            filler: Filler::try_new(capacity.len())?,
            residual: filled(capacity.len(), 0.0, "per-link state")?,
            key_abs_tol,
        })
    }
}

#[inline]
fn rec_cmp<const N: usize>(a: &LasRec<N>, b: &LasRec<N>) -> Ordering {
    a.sent.total_cmp(&b.sent).then(a.rank.cmp(&b.rank))
}

/// `rec_cmp(a, b) == Greater`, by plain comparisons: bytes sent are never NaN or -0.0,
/// where `total_cmp` and `<` differ (the hot check of the insertion sort).
#[inline]
fn rec_after<const N: usize>(a: &LasRec<N>, b: &LasRec<N>) -> bool {
    a.sent > b.sent || (a.sent == b.sent && a.rank > b.rank)
}

/// `f64::max` for operands that are not NaN (a plain `maxsd`, without `max`'s NaN
/// handling, which the per-event passes paid for in every `same`).
#[inline(always)]
fn max_num(a: f64, b: f64) -> f64 {
    if a >= b {
        a
    } else {
        b
    }
}

/// `f64::min` for operands that are not NaN (see `max_num`).
#[inline(always)]
fn min_num(a: f64, b: f64) -> f64 {
    if a <= b {
        a
    } else {
        b
    }
}

/// `fill_one` (fill.rs) with `min_num` and `max_num`: rates, caps and residuals are not
/// NaN, so the bits are the same.
#[inline]
fn fill_one_num(path: &[u32], cap: f64, res: &mut [f64]) -> f64 {
    let mut r = cap;
    for &l in path {
        r = min_num(r, res[l as usize]);
    }
    let r = max_num(r, 0.0);
    for &l in path {
        res[l as usize] = max_num(res[l as usize] - r, 0.0);
    }
    r
}

/// `same_key` of the generic path for keys (0, x, 1) and (0, y, 1): |x - y| <=
/// max(`tol_of(max(|x|, |y|))`, abs), with `max_num` (keys and `abs` are not NaN; the
/// bits are those of `f64::max`).
#[inline]
pub(super) fn same(x: f64, y: f64, abs: f64) -> bool {
    let m = max_num(x.abs(), y.abs());
    debug_assert_eq!(1e-9 * max_num(m, 1.0), tol_of(m));
    (x - y).abs() <= max_num(1e-9 * max_num(m, 1.0), abs)
}

/// `same(x, y, abs)` for keys in priority order, 0 <= x <= y (the records are sorted by
/// bytes sent), given `tol = same_tol(y, abs)`: then |x - y| = y - x and max(|x|, |y|) = y,
/// so the bits are `same`'s, and the tolerance is computed once per record.
#[inline(always)]
fn same_sorted(x: f64, y: f64, tol: f64) -> bool {
    y - x <= tol
}

/// The tolerance of `same_sorted` for the later key y.
#[inline(always)]
fn same_tol(y: f64, abs: f64) -> f64 {
    max_num(1e-9 * max_num(y, 1.0), abs)
}

/// Sets a flow's rate in its record and in `rate`, which always agree: `rate` is written
/// only when the bits change (most flows keep their rate from one event to the next).
#[inline]
fn set_rate<const N: usize>(rate: &mut [f64], r: &mut LasRec<N>, x: f64) {
    if r.rate.to_bits() != x.to_bits() {
        r.rate = x;
        rate[r.idx as usize] = x;
    }
}

/// Where `las_next_event`'s pass is on a link: the last flow seen there, the first flow
/// of its group of equal keys on the link, the group's fastest flow, and the fastest flow
/// of the group before (as `next_crossing` pairs them); (sent, rate), sent < 0: none.
#[derive(Debug, Clone, Copy)]
pub(super) struct LasLinkScan {
    last: (f64, f64),
    lead: f64,
    fast: (f64, f64),
    prev_fast: (f64, f64),
}

const NO_SCAN: LasLinkScan = LasLinkScan { last: (-1.0, 0.0), lead: -1.0, fast: (-1.0, 0.0), prev_fast: (-1.0, 0.0) };

/// `crossing(x, y)` of the generic path for LAS: x = (sent, rate) ahead, y behind, with
/// `tol = same_tol(sent of y, abs)` (x's sent is at most y's: `same_sorted`).
#[inline]
fn las_crossing((sx, rx): (f64, f64), (sy, ry): (f64, f64), t: f64, tol: f64) -> f64 {
    if rx > 0.0 && sx >= 0.0 && rx > ry && !same_sorted(sx, sy, tol) {
        let dt = (sy - sx) / (rx - ry);
        if dt >= 0.0 {
            return max_num(t + dt, t.next_up());
        }
    }
    INF
}

impl<const N: usize> LasRec<N> {
    #[inline]
    fn path(&self) -> &[u32] {
        &self.links[..self.np as usize]
    }
}

impl<const N: usize> LasRecords<N> {
    /// `advance_fluid` over the records (in sync with `active`: see `las_sync`).
    pub(super) fn las_advance_fluid(&mut self, core: &mut Core, t: f64) {
        let dt = t - core.now;
        if dt > 0.0 {
            for r in self.recs.iter_mut() {
                if r.rate > 0.0 {
                    let mut s = r.sent + r.rate * dt;
                    if r.spanned {
                        let f = &core.flows[r.idx as usize];
                        s = s.min(f.size_bytes * ((t - f.arrival_s) / f.data_span_s).min(1.0));
                    }
                    let s = s.min(r.size);
                    r.sent = s;
                    core.sent[r.idx as usize] = s;
                }
            }
        }
        core.now = t.max(core.now);
    }

    /// `las_advance_fluid` to t, then the completion pass of `advance_to` at the new
    /// `core.now`, in one pass over the records (each flow's own operations in the same
    /// order, so the same bits); true if any flow finished.
    pub(super) fn las_advance_complete(&mut self, core: &mut Core, t: f64) -> bool {
        let dt = t - core.now;
        let now = t.max(core.now);
        let mut any_done = false;
        for r in self.recs.iter_mut() {
            if dt > 0.0 && r.rate > 0.0 {
                let mut s = r.sent + r.rate * dt;
                if r.spanned {
                    let f = &core.flows[r.idx as usize];
                    s = s.min(f.size_bytes * ((t - f.arrival_s) / f.data_span_s).min(1.0));
                }
                let s = min_num(s, r.size);
                r.sent = s;
                core.sent[r.idx as usize] = s;
            }
            // `finish_tol_of(r.size, r.rate, now)`, with `max_num` (the same bits).
            let tol = max_num(1e-9 * r.size, r.rate * now.abs() * 8.0 * f64::EPSILON);
            debug_assert_eq!(tol, finish_tol_of(r.size, r.rate, now));
            let i = r.idx as usize;
            if r.size - r.sent <= tol && core.complete_or_due(i, now) {
                core.finish_now(i, now);
                r.sent = r.size;
                any_done = true;
            }
        }
        core.now = now;
        any_done
    }

    /// Brings the records in line with `active` (flows that left are dropped, new ones
    /// appended, as `advance_to` and `activate` change `active`), then sorts them and
    /// `active` by (sent, arrival, index), as `sort_active_by_key` does for LAS.
    fn las_sync_sort(&mut self, core: &mut Core) {
        let old = self.recs.len();
        let mut w = old;
        if self.removed {
            self.removed = false;
            // Drop the flows that left, keeping the order.
            w = 0;
            for k in 0..old {
                let r = self.recs[k];
                if core.status[r.idx as usize] == Status::Active {
                    self.recs[w] = r;
                    w += 1;
                }
            }
        }
        // `active` only loses flows (`advance_to`) and gains new ones at its end (`activate`).
        debug_assert!(core.active.len() >= w && self.recs[..w].iter().zip(&core.active).all(|(r, &i)| r.idx == i));
        if core.active.len() < w {
            w = 0; // not expected: rebuild
        }
        self.recs.truncate(w);
        for k in w..core.active.len() {
            let i = core.active[k] as usize;
            let f = &core.flows[i];
            let (pa, pb) = (core.path_off[i] as usize, core.path_off[i + 1] as usize);
            let mut links = [0u32; N];
            links[..pb - pa].copy_from_slice(&core.path_links[pa..pb]);
            self.recs.push(LasRec {
                sent: core.sent[i],
                rate: core.rate[i],
                size: f.size_bytes,
                rank: self.rank[i],
                idx: i as u32,
                links,
                np: (pb - pa) as u8,
                spanned: f.data_span_s > 0.0,
            });
        }
        // Insertion sort: the previous order is nearly right (cost n + moves).
        let n = self.recs.len();
        let recs = &mut self.recs[..];
        let budget = 8 * n + 256;
        let mut moves = 0usize;
        let mut fallback = false;
        for k in 1..n {
            if !rec_after(&recs[k - 1], &recs[k]) {
                continue;
            }
            let x = recs[k];
            let mut j = k;
            while j > 0 && rec_after(&recs[j - 1], &x) {
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
        for (a, r) in core.active.iter_mut().zip(self.recs.iter()) {
            *a = r.idx;
        }
    }

    /// LAS allocation and next event (what `FullRecomputation::recompute` does for LAS).
    pub(super) fn allocate_las(&mut self, core: &mut Core) {
        let t = core.now;
        self.las_sync_sort(core);
        // Caps from data availability (as `recompute`); flows without a data span keep INF.
        for r in &self.recs {
            if r.spanned {
                let i = r.idx as usize;
                let f = &core.flows[i];
                core.cap[i] = if t < f.arrival_s + f.data_span_s && core.caught_up(i, t, r.sent) {
                    f.size_bytes / f.data_span_s
                } else {
                    INF
                };
            }
        }
        self.residual.copy_from_slice(&core.topo.capacity);
        // Every weight is 1 (set in `Simulator::new`).
        let n = self.recs.len();
        let mut a = 0;
        let abs = self.key_abs_tol * t;
        while a < n {
            let first = self.recs[a].sent;
            let mut b = a + 1;
            while b < n && same_sorted(first, self.recs[b].sent, same_tol(self.recs[b].sent, abs)) {
                debug_assert!(same(first, self.recs[b].sent, abs));
                b += 1;
            }
            // Members with a saturated link get rate 0 in `Filler::fill` (their links pop
            // first, at level 0, and freezing them at 0 changes no residual), so: all
            // blocked -> all 0; one member left -> the one-flow fill; else `Filler::fill`.
            let mut free = a;
            let mut n_free = 1;
            if b > a + 1 {
                n_free = 0;
                for k in a..b {
                    let r = &mut self.recs[k];
                    if r.path().iter().all(|&l| self.residual[l as usize] > 0.0) {
                        free = k;
                        n_free += 1;
                    } else {
                        set_rate(&mut core.rate, r, 0.0);
                    }
                }
            }
            if n_free == 1 {
                let r = &mut self.recs[free];
                let cap = if r.spanned { core.cap[r.idx as usize] } else { INF };
                let x = fill_one_num(r.path(), cap, &mut self.residual);
                set_rate(&mut core.rate, r, x);
            } else if n_free > 1 {
                let mut out = [0.0; SMALL_N];
                let (recs, capv) = (&self.recs[a..b], &core.cap);
                let cap_of = |p: usize| if recs[p].spanned { capv[recs[p].idx as usize] } else { INF };
                if fill_small_core(b - a, |p| recs[p].path(), |_| 1.0, cap_of, &mut self.residual, &mut out) {
                    for (r, &x) in self.recs[a..b].iter_mut().zip(&out) {
                        set_rate(&mut core.rate, r, x);
                    }
                } else {
                    let paths = Paths { off: &core.path_off, links: &core.path_links };
                    self.filler.fill(&core.active[a..b], &paths, &core.weight, &core.cap, &mut self.residual, &mut core.rate);
                    for r in &mut self.recs[a..b] {
                        r.rate = core.rate[r.idx as usize];
                    }
                }
            }
            a = b;
        }
        self.las_next_event(core);
    }

    /// `compute_next_event` for LAS: completions, data catch-up and crossings in one pass.
    fn las_next_event(&mut self, core: &mut Core) {
        let t = core.now;
        let mut next = core.next_timed_event();
        // The flow ahead on each link (in priority order): (sent, rate); sent < 0: none yet.
        self.last.clear();
        self.last.resize(core.topo.n_links(), NO_SCAN);
        let abs = self.key_abs_tol * t;
        let mut cross = INF;
        for r in &self.recs {
            let (sy, ry) = (r.sent, r.rate);
            let tol = same_tol(sy, abs);
            if ry > 0.0 {
                next = min_num(next, t + (r.size - sy) / ry);
                if r.spanned {
                    next = min_num(next, core.catch_up_at(r.idx as usize, t, sy, ry));
                }
            }
            for &l in r.path() {
                let k = &mut self.last[l as usize];
                // `next_crossing`'s pairs: the flow ahead, and the fastest of the group before.
                debug_assert!(k.last.0 <= sy && k.lead <= sy && k.prev_fast.0 <= sy);
                cross = min_num(cross, las_crossing(k.last, (sy, ry), t, tol));
                debug_assert!(k.lead < 0.0 || same_sorted(k.lead, sy, tol) == same(k.lead, sy, abs));
                if k.lead < 0.0 || !same_sorted(k.lead, sy, tol) {
                    (k.prev_fast, k.lead, k.fast) = (k.fast, sy, (sy, ry));
                } else if ry > k.fast.1 {
                    k.fast = (sy, ry);
                }
                if k.prev_fast != k.last {
                    cross = min_num(cross, las_crossing(k.prev_fast, (sy, ry), t, tol));
                }
                k.last = (sy, ry);
            }
        }
        core.next_event = min_num(next, cross);
    }
}
