//! Weighted max-min fair allocation by progressive filling (water-filling) over the
//! residual capacities of the links, with per-flow rate caps. Used for whole-fabric
//! fair sharing (`ps`, `wps`, `racs`, `sdc`) and for groups of equal priority under
//! the priority schedulers.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Item {
    level: f64,
    link: u32,
    version: u32,
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
    // Reversed so that BinaryHeap (a max-heap) pops the smallest level first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.level.total_cmp(&self.level).then(o.link.cmp(&self.link))
    }
}

/// A sum of flow weights that flows join and leave (a link's unfrozen weight in a fill),
/// with the rounding it has lost kept beside it (Neumaier's compensated summation).
///
/// Weights may span a ratio of 1e12 (the trace contract's 1e-6 to 1e6). A plain running
/// sum of two flows of weight 1e6 and one of 1e-6, less the two large ones, leaves the
/// small weight give or take half an ulp of 2e6 (1.2e-10): up to 1e-4 relative off, and
/// the small flow's rate with it (7.6e-6 measured; with 10,000 large flows, 48%). `hi`
/// is that plain sum, `lo` the exact rounding of each step (`add`), and
/// `value` adds `lo` back once it is more than 1e-12 of `hi`; below that `value` is `hi`,
/// so that the fills keep their bits wherever the plain sum was accurate to 1e-12.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WeightSum {
    pub hi: f64,
    pub lo: f64,
}
impl WeightSum {
    pub const ZERO: WeightSum = WeightSum { hi: 0.0, lo: 0.0 };

    /// Adds x (a weight, or minus one) to the sum.
    #[inline(always)]
    pub fn add(&mut self, x: f64) {
        add_compensated(&mut self.hi, &mut self.lo, x);
    }

    /// The sum (see the type's doc).
    #[inline(always)]
    pub fn value(&self) -> f64 {
        compensated(self.hi, self.lo)
    }

    /// A flow of weight w leaves the sum, `left` flows staying (`leave_compensated`).
    #[inline(always)]
    pub fn leave(&mut self, w: f64, left: u32) {
        leave_compensated(&mut self.hi, &mut self.lo, w, left);
    }
}

/// `WeightSum::add` for a sum whose two parts are stored apart: hi += x, with the
/// rounding of that addition (exact, by Fast2Sum on the larger operand) added to lo.
#[inline(always)]
pub fn add_compensated(hi: &mut f64, lo: &mut f64, x: f64) {
    let t = *hi + x;
    *lo += if hi.abs() >= x.abs() { (*hi - t) + x } else { (x - t) + *hi };
    *hi = t;
}

/// `WeightSum::leave` for a sum whose two parts are stored apart: a flow of weight w
/// leaves, `left` flows staying; with none left the sum is exactly 0, not what the
/// subtractions' roundings would leave. (A plain sum below 0 with flows left is the
/// rounding of large weights gone: `compensated` adds it back.)
#[inline(always)]
pub fn leave_compensated(hi: &mut f64, lo: &mut f64, w: f64, left: u32) {
    if left > 0 {
        add_compensated(hi, lo, -w);
    } else {
        (*hi, *lo) = (0.0, 0.0);
    }
}

/// `WeightSum::value` for a sum whose two parts are stored apart.
#[inline(always)]
pub fn compensated(hi: f64, lo: f64) -> f64 {
    if lo.abs() > 1e-12 * hi.abs() {
        hi + lo
    } else {
        hi
    }
}

/// Scratch space reused across calls (no allocation in the steady state).
#[derive(Default, Debug, Clone)]
pub struct Filler {
    local: Vec<u32>,
    /// Per link (global index), zero between calls: flows and weight of the group on it
    /// (`fill_one_bottleneck`'s scratch).
    link_count: Vec<u32>,
    link_wsum: Vec<f64>,
    touched: Vec<u32>,
    count: Vec<u32>,
    wsum: Vec<WeightSum>,
    version: Vec<u32>,
    adj_off: Vec<u32>,
    adj: Vec<u32>,
    frozen: Vec<bool>,
    cap_order: Vec<u32>,
    cursor: Vec<u32>,
    heap: BinaryHeap<Item>,
}

/// Where a flow's links are: `links[off[i]..off[i+1]]`.
pub struct Paths<'a> {
    pub off: &'a [u32],
    pub links: &'a [u32],
}
impl Paths<'_> {
    #[inline]
    pub fn of(&self, i: u32) -> &[u32] {
        &self.links[self.off[i as usize] as usize..self.off[i as usize + 1] as usize]
    }
}

impl Filler {
    pub fn new(n_links: usize) -> Self {
        Filler { local: vec![u32::MAX; n_links], link_count: vec![0; n_links], link_wsum: vec![0.0; n_links], ..Default::default() }
    }

    /// `new`, or `SimError::OutOfMemory` if the memory for `n_links` is not there.
    pub fn try_new(n_links: usize) -> crate::error::Result<Self> {
        let oom = |_| crate::error::SimError::OutOfMemory(format!("the fill's per-link state: {n_links} entries of 16 bytes"));
        let (mut local, mut link_count, mut link_wsum) = (Vec::new(), Vec::new(), Vec::new());
        local.try_reserve_exact(n_links).map_err(oom)?;
        link_count.try_reserve_exact(n_links).map_err(oom)?;
        link_wsum.try_reserve_exact(n_links).map_err(oom)?;
        local.resize(n_links, u32::MAX);
        link_count.resize(n_links, 0);
        link_wsum.resize(n_links, 0.0);
        Ok(Filler { local, link_count, link_wsum, ..Default::default() })
    }

    /// Allocates `rate[i]` for every flow `i` in `group`: weighted max-min fair over
    /// the residual capacities `res` (which are reduced by what is allocated), with
    /// `rate[i] <= cap[i]`. `weight[i] > 0`.
    pub fn fill(
        &mut self,
        group: &[u32],
        paths: &Paths,
        weight: &[f64],
        cap: &[f64],
        res: &mut [f64],
        rate: &mut [f64],
    ) {
        match group.len() {
            0 => {}
            1 => {
                let i = group[0] as usize;
                rate[i] = fill_one(paths.of(group[0]), cap[i], res);
            }
            n => {
                if n <= FILL_SMALL_N
                    && (self.fill_one_bottleneck(group, paths, weight, cap, res, rate)
                        || Self::fill_small_group(group, paths, weight, cap, res, rate))
                {
                    return;
                }
                self.fill_heap(group, paths, weight, cap, res, rate);
            }
        }
    }

    /// [`fill_small`] for `Filler::fill`: small groups (the token envs' k flows at a
    /// destination) without the heap and the adjacency lists: the same bits, 30% fewer
    /// instructions (the token env x256: 1,059 -> 746 per env-step in the fill,
    /// callgrind). Out of line, so that its stack arrays cost nothing to the shortcut
    /// before it.
    #[inline(never)]
    fn fill_small_group(group: &[u32], paths: &Paths, weight: &[f64], cap: &[f64], res: &mut [f64], rate: &mut [f64]) -> bool {
        let mut out = [0.0; FILL_SMALL_N];
        let at = |p: usize| group[p] as usize;
        if fill_small::<FILL_SMALL_N, 32, 64>(group.len(), |p| paths.of(group[p]), |p| weight[at(p)], |p| cap[at(p)], res, &mut out) {
            for (&i, &r) in group.iter().zip(&out) {
                rate[i as usize] = r;
            }
            return true;
        }
        false
    }

    /// [`Filler::fill`] when one link of the group saturates first and carries every
    /// flow of it (a destination's downlink shared by the flows into it, as in the token
    /// envs), so that the fill ends with that one link: every flow gets its weight times
    /// the link's level (or its cap, if smaller). The same operations in the same order
    /// as the first round of [`fill_small`] and [`Filler::fill_heap`], so the same bits;
    /// it applies only where that round is the whole fill: the link whose level
    /// `max(res, 0) / sum of weights` is least (ties to the link met first in group
    /// order, as the heap breaks them) carries every flow, and no flow's cap over its
    /// weight is at or below that level (the heap would take the cap first).
    /// Returns false, having changed nothing, otherwise.
    fn fill_one_bottleneck(
        &mut self,
        group: &[u32],
        paths: &Paths,
        weight: &[f64],
        cap: &[f64],
        res: &mut [f64],
        rate: &mut [f64],
    ) -> bool {
        // Per-link flow counts and weight sums, summed in group order as the fills do (in
        // scratch indexed by link, zero between calls; `touched` in order of first sight).
        let (count, wsum) = (&mut self.link_count, &mut self.link_wsum);
        for &i in group {
            let w = weight[i as usize];
            for &l in paths.of(i) {
                let l = l as usize;
                if count[l] == 0 {
                    self.touched.push(l as u32);
                }
                count[l] += 1;
                wsum[l] += w;
            }
        }
        // The least level, ties to the link seen first in group order (the heap's order).
        let mut best = usize::MAX;
        let mut best_level = f64::INFINITY;
        for &l in &self.touched {
            let l = l as usize;
            let level = res[l].max(0.0) / wsum[l];
            if best == usize::MAX || level.total_cmp(&best_level) == Ordering::Less {
                (best, best_level) = (l, level);
            }
        }
        let n = group.len();
        let mut ok = best != usize::MAX && count[best] as usize == n;
        if ok {
            // the heap takes a cap first when cap / weight <= the link's level
            ok = group.iter().all(|&i| {
                let i = i as usize;
                !(cap[i].is_finite() && cap[i] / weight[i] <= best_level)
            });
        }
        for &l in &self.touched {
            count[l as usize] = 0;
            wsum[l as usize] = 0.0;
        }
        self.touched.clear();
        if !ok {
            return false;
        }
        let level = 0.0f64.max(best_level);
        for &i in group {
            let r = (weight[i as usize] * level).min(cap[i as usize]);
            rate[i as usize] = r;
            for &l in paths.of(i) {
                res[l as usize] = (res[l as usize] - r).max(0.0);
            }
        }
        true
    }

    /// [`Filler::fill`] by a heap of the links' levels, for groups of any size (the
    /// reference [`fill_small`] is tested against).
    pub fn fill_heap(
        &mut self,
        group: &[u32],
        paths: &Paths,
        weight: &[f64],
        cap: &[f64],
        res: &mut [f64],
        rate: &mut [f64],
    ) {
        // Local link indices and per-link sums.
        for &i in group {
            for &l in paths.of(i) {
                let l = l as usize;
                if self.local[l] == u32::MAX {
                    self.local[l] = self.touched.len() as u32;
                    self.touched.push(l as u32);
                    self.count.push(0);
                    self.wsum.push(WeightSum::ZERO);
                    self.version.push(0);
                }
                let j = self.local[l] as usize;
                self.count[j] += 1;
                self.wsum[j].add(weight[i as usize]);
            }
        }
        let nl = self.touched.len();
        self.adj_off.clear();
        self.adj_off.push(0);
        for j in 0..nl {
            let last = *self.adj_off.last().unwrap();
            self.adj_off.push(last + self.count[j]);
        }
        self.adj.clear();
        self.adj.resize(self.adj_off[nl] as usize, 0);
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.adj_off[..nl]);
        for (p, &i) in group.iter().enumerate() {
            for &l in paths.of(i) {
                let j = self.local[l as usize] as usize;
                self.adj[self.cursor[j] as usize] = p as u32;
                self.cursor[j] += 1;
            }
        }
        self.frozen.clear();
        self.frozen.resize(group.len(), false);
        self.heap.clear();
        for j in 0..nl {
            let l = self.touched[j] as usize;
            self.heap.push(Item { level: res[l].max(0.0) / self.wsum[j].value(), link: j as u32, version: 0 });
        }
        self.cap_order.clear();
        for (p, &i) in group.iter().enumerate() {
            if cap[i as usize].is_finite() {
                self.cap_order.push(p as u32);
            }
        }
        self.cap_order.sort_by(|&a, &b| {
            let (ia, ib) = (group[a as usize] as usize, group[b as usize] as usize);
            (cap[ia] / weight[ia]).total_cmp(&(cap[ib] / weight[ib])).then(a.cmp(&b))
        });
        let mut cap_ptr = 0usize;
        let mut left = group.len();
        let mut level = 0.0f64;
        while left > 0 {
            // Next saturating link.
            let mut link_level = f64::INFINITY;
            let mut link_j = u32::MAX;
            // Levels only increase as flows freeze (see `freeze`), so a stored level is a
            // lower bound of the link's current level: a stale top is re-inserted with its
            // current level, and a top whose level is current is the true minimum.
            while let Some(top) = self.heap.peek().copied() {
                let j = top.link as usize;
                if self.count[j] == 0 {
                    self.heap.pop();
                    continue;
                }
                if top.version != self.version[j] {
                    let l = self.touched[j] as usize;
                    let ws = self.wsum[j].value();
                    let ws = if ws > 0.0 { ws } else { f64::MIN_POSITIVE };
                    // Replace the top in place (one sift instead of a pop and a push).
                    *self.heap.peek_mut().unwrap() = Item { level: res[l] / ws, link: top.link, version: self.version[j] };
                    continue;
                }
                link_level = top.level;
                link_j = top.link;
                break;
            }
            while cap_ptr < self.cap_order.len() && self.frozen[self.cap_order[cap_ptr] as usize] {
                cap_ptr += 1;
            }
            let cap_level = if cap_ptr < self.cap_order.len() {
                let i = group[self.cap_order[cap_ptr] as usize] as usize;
                cap[i] / weight[i]
            } else {
                f64::INFINITY
            };
            if cap_level <= link_level {
                if !cap_level.is_finite() {
                    break; // cannot happen: every flow has a link
                }
                level = level.max(cap_level);
                let p = self.cap_order[cap_ptr] as usize;
                let i = group[p] as usize;
                self.freeze(p, cap[i], group, paths, weight, res, rate);
                left -= 1;
            } else {
                self.heap.pop();
                level = level.max(link_level);
                let j = link_j as usize;
                let (a, b) = (self.adj_off[j] as usize, self.adj_off[j + 1] as usize);
                for k in a..b {
                    let p = self.adj[k] as usize;
                    if !self.frozen[p] {
                        let i = group[p] as usize;
                        let r = (weight[i] * level).min(cap[i]);
                        self.freeze(p, r, group, paths, weight, res, rate);
                        left -= 1;
                    }
                }
            }
        }
        for &l in &self.touched {
            self.local[l as usize] = u32::MAX;
        }
        self.touched.clear();
        self.count.clear();
        self.wsum.clear();
        self.version.clear();
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn freeze(&mut self, p: usize, r: f64, group: &[u32], paths: &Paths, weight: &[f64], res: &mut [f64], rate: &mut [f64]) {
        self.frozen[p] = true;
        let i = group[p];
        rate[i as usize] = r;
        let w = weight[i as usize];
        for &l in paths.of(i) {
            let l = l as usize;
            let j = self.local[l] as usize;
            res[l] = (res[l] - r).max(0.0);
            self.count[j] -= 1;
            self.version[j] += 1;
            // With res >= W * level on every link, removing a flow frozen at rate
            // r <= w * level raises (or keeps) the link's level res / W.
            self.wsum[j].leave(w, self.count[j]);
        }
    }
}

/// The rate `Filler::fill` gives a group of one flow (its cap, or the least residual on
/// its path), taken from the residuals `res`.
#[inline]
pub fn fill_one(path: &[u32], cap: f64, res: &mut [f64]) -> f64 {
    let mut r = cap;
    for &l in path {
        r = r.min(res[l as usize]);
    }
    let r = r.max(0.0);
    for &l in path {
        res[l as usize] = (res[l as usize] - r).max(0.0);
    }
    r
}

/// Most flows `fill_small_core` takes.
pub const SMALL_N: usize = 8;

/// Most flows `Filler::fill` gives to [`fill_small`] (larger groups take the heap).
const FILL_SMALL_N: usize = 16;

/// `Filler::fill` for a small group (2 to `SMALL_N` flows, at most 24 distinct links and
/// 64 flow-link pairs) given by accessors (flow p of n: its path, weight and cap), the
/// rates going to `out[p]`: for callers that hold the group's data in their own records.
/// [`fill_small`] with those sizes.
#[inline(always)]
pub fn fill_small_core<'a>(
    n: usize,
    path_of: impl Fn(usize) -> &'a [u32],
    weight_of: impl Fn(usize) -> f64,
    cap_of: impl Fn(usize) -> f64,
    res: &mut [f64],
    out: &mut [f64; SMALL_N],
) -> bool {
    fill_small::<SMALL_N, 24, 64>(n, path_of, weight_of, cap_of, res, out)
}

/// `Filler::fill` for a group of 2 to `N` flows over at most `L` distinct links and `E`
/// flow-link pairs (`L`, `E` <= 255). No heap and no scratch vectors, but the same
/// floating-point operations in the same order, so the same bits: the heap of `fill`
/// holds one item per link and its top is the least stored (level, local link index),
/// which a linear scan over the stored items finds too, and a flag per link stands for
/// the version counter. Returns false, having changed nothing, for fewer than 2 or more
/// than `N` flows and for groups over too many links.
#[inline(always)]
pub fn fill_small<'a, const N: usize, const L: usize, const E: usize>(
    n: usize,
    path_of: impl Fn(usize) -> &'a [u32],
    weight_of: impl Fn(usize) -> f64,
    cap_of: impl Fn(usize) -> f64,
    res: &mut [f64],
    out: &mut [f64; N],
) -> bool {
    const { assert!(L <= 255 && E <= 255) };
    if !(2..=N).contains(&n) {
        return false;
    }
    let mut links = [0u32; L];
    let mut nl = 0usize;
    let mut count = [0u32; L];
    let mut wsum = [WeightSum::ZERO; L];
    // Local link index of each flow-link pair, per flow: loc[start(p)..end[p]].
    let mut loc = [0u8; E];
    let mut end = [0u8; N];
    let mut ne = 0usize;
    for p in 0..n {
        for &l in path_of(p) {
            let j = match links[..nl].iter().position(|&x| x == l) {
                Some(j) => j,
                None => {
                    if nl == L {
                        return false;
                    }
                    links[nl] = l;
                    nl += 1;
                    nl - 1
                }
            };
            if ne == E {
                return false;
            }
            loc[ne] = j as u8;
            ne += 1;
            count[j] += 1;
            wsum[j].add(weight_of(p));
        }
        end[p] = ne as u8;
    }
    let mut stored = [0f64; L];
    let mut present = [false; L];
    let mut stale = [false; L];
    for j in 0..nl {
        stored[j] = res[links[j] as usize].max(0.0) / wsum[j].value();
        present[j] = true;
    }
    // Flows with a finite cap by (cap / weight, position) (`sort_by` is stable).
    let mut cap_order = [0u8; N];
    let mut ncap = 0usize;
    for p in 0..n {
        if cap_of(p).is_finite() {
            cap_order[ncap] = p as u8;
            ncap += 1;
        }
    }
    cap_order[..ncap].sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        (cap_of(a) / weight_of(a)).total_cmp(&(cap_of(b) / weight_of(b))).then(a.cmp(&b))
    });
    let mut frozen = [false; N];
    let mut cap_ptr = 0usize;
    let mut left = n;
    let mut level = 0.0f64;
    let start = |p: usize| if p == 0 { 0 } else { end[p - 1] as usize };
    let freeze = |p: usize,
                      r: f64,
                      frozen: &mut [bool; N],
                      count: &mut [u32; L],
                      wsum: &mut [WeightSum; L],
                      stale: &mut [bool; L],
                      res: &mut [f64],
                      out: &mut [f64; N]| {
        frozen[p] = true;
        out[p] = r;
        let w = weight_of(p);
        for &j in &loc[start(p)..end[p] as usize] {
            let j = j as usize;
            let l = links[j] as usize;
            res[l] = (res[l] - r).max(0.0);
            count[j] -= 1;
            stale[j] = true;
            wsum[j].leave(w, count[j]);
        }
    };
    while left > 0 {
        let mut link_level = f64::INFINITY;
        let mut link_j = usize::MAX;
        loop {
            let mut top = usize::MAX;
            for j in 0..nl {
                if present[j] && (top == usize::MAX || stored[j].total_cmp(&stored[top]) == Ordering::Less) {
                    top = j;
                }
            }
            if top == usize::MAX {
                break;
            }
            if count[top] == 0 {
                present[top] = false;
                continue;
            }
            if stale[top] {
                let ws = wsum[top].value();
                let ws = if ws > 0.0 { ws } else { f64::MIN_POSITIVE };
                stored[top] = res[links[top] as usize] / ws;
                stale[top] = false;
                continue;
            }
            link_level = stored[top];
            link_j = top;
            break;
        }
        while cap_ptr < ncap && frozen[cap_order[cap_ptr] as usize] {
            cap_ptr += 1;
        }
        let cap_level = if cap_ptr < ncap {
            let p = cap_order[cap_ptr] as usize;
            cap_of(p) / weight_of(p)
        } else {
            f64::INFINITY
        };
        if cap_level <= link_level {
            if !cap_level.is_finite() {
                break; // cannot happen: every flow has a link
            }
            level = level.max(cap_level);
            let p = cap_order[cap_ptr] as usize;
            freeze(p, cap_of(p), &mut frozen, &mut count, &mut wsum, &mut stale, res, out);
            left -= 1;
        } else {
            present[link_j] = false;
            level = level.max(link_level);
            // The flows on the link, in group order (the order of `adj`).
            for p in 0..n {
                if !frozen[p] && loc[start(p)..end[p] as usize].contains(&(link_j as u8)) {
                    let r = (weight_of(p) * level).min(cap_of(p));
                    freeze(p, r, &mut frozen, &mut count, &mut wsum, &mut stale, res, out);
                    left -= 1;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(paths: &[Vec<u32>], n_links: usize, caps_links: &[f64], w: &[f64], cap: &[f64]) -> Vec<f64> {
        let mut off = vec![0u32];
        let mut links = vec![];
        for p in paths {
            links.extend_from_slice(p);
            off.push(links.len() as u32);
        }
        let paths = Paths { off: &off, links: &links };
        let mut f = Filler::new(n_links);
        let mut res = caps_links.to_vec();
        let mut rate = vec![0.0; w.len()];
        let group: Vec<u32> = (0..w.len() as u32).collect();
        f.fill(&group, &paths, w, cap, &mut res, &mut rate);
        rate
    }

    #[test]
    fn classic_maxmin_example() {
        // Bertsekas & Gallager style: link0 cap 1 shared by A,B; link1 cap 10 shared by B,C.
        // A and B get 0.5 on link0, C gets the rest of link1: 9.5.
        let r = run(&[vec![0], vec![0, 1], vec![1]], 2, &[1.0, 10.0], &[1.0; 3], &[f64::INFINITY; 3]);
        assert!((r[0] - 0.5).abs() < 1e-12 && (r[1] - 0.5).abs() < 1e-12 && (r[2] - 9.5).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn a_weight_sum_keeps_the_light_weights_when_the_heavy_ones_leave() {
        // Random weights of 1e-6 to 1e6 join in a random order; the heavy ones (>= 1)
        // leave; what is left must be the sum of the light ones (summed alone, where
        // no rounding of the heavy ones can reach it), to 1e-12.
        let mut rng = crate::rng::SplitMix64::new(5);
        for trial in 0..2000 {
            let n = 2 + rng.below(200) as usize;
            let w: Vec<f64> = (0..n).map(|_| 10f64.powf(rng.next_f64() * 12.0 - 6.0)).collect();
            let mut sum = WeightSum::ZERO;
            for &x in &w {
                sum.add(x);
            }
            for &x in w.iter().filter(|&&x| x >= 1.0) {
                sum.add(-x);
            }
            let light: f64 = w.iter().filter(|&&x| x < 1.0).sum();
            assert!((sum.value() - light).abs() <= 1e-12 * light.max(1e-300), "trial {trial}: {} vs {light}", sum.value());
        }
        // Without heavy weights to lose, the plain sum's bits.
        let mut sum = WeightSum::ZERO;
        let mut plain = 0.0;
        for x in [0.5, 4.0, 1.7, 3.3, 2.9] {
            sum.add(x);
            plain += x;
        }
        assert_eq!(sum.value().to_bits(), plain.to_bits());
    }

    #[test]
    fn weights_and_caps() {
        // One link of 6: weights 1 and 2 -> 2 and 4; with a cap of 1 on the second -> 5 and 1.
        let r = run(&[vec![0], vec![0]], 1, &[6.0], &[1.0, 2.0], &[f64::INFINITY; 2]);
        assert!((r[0] - 2.0).abs() < 1e-12 && (r[1] - 4.0).abs() < 1e-12);
        let r = run(&[vec![0], vec![0]], 1, &[6.0], &[1.0, 2.0], &[f64::INFINITY, 1.0]);
        assert!((r[0] - 5.0).abs() < 1e-12 && (r[1] - 1.0).abs() < 1e-12);
    }

    /// Weights of n flows (all 1 on even trials, else from a few values) and their caps
    /// (one in `odds` a random finite cap, one in `odds` 2.5, the others none).
    fn random_weights_and_caps(rng: &mut crate::rng::SplitMix64, n: usize, trial: usize, odds: u64) -> (Vec<f64>, Vec<f64>) {
        let w = (0..n).map(|_| if trial % 2 == 0 { 1.0 } else { [1.0, 2.0, 0.5, 3.7][rng.below(4) as usize] }).collect();
        let cap = (0..n)
            .map(|_| match rng.below(odds) {
                0 => rng.next_f64() * 6.0,
                1 => 2.5,
                _ => f64::INFINITY,
            })
            .collect();
        (w, cap)
    }

    /// The heap fill of flows 0..n (`w.len()`) from residuals `res0`: (rates, residuals after).
    fn heap_fill(n_links: usize, paths: &Paths, w: &[f64], cap: &[f64], res0: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let group: Vec<u32> = (0..w.len() as u32).collect();
        let (mut rate, mut res) = (vec![-1.0; w.len()], res0.to_vec());
        Filler::new(n_links).fill_heap(&group, paths, w, cap, &mut res, &mut rate);
        (rate, res)
    }

    /// Two fills of the same group left the same rates and residuals, bit for bit.
    fn assert_same_bits(trial: usize, (xa, ra): (&[f64], &[f64]), (xb, rb): (&[f64], &[f64])) {
        for k in 0..xa.len() {
            assert_eq!(xa[k].to_bits(), xb[k].to_bits(), "trial {trial}: rate {k}: {xa:?} vs {xb:?}");
        }
        for l in 0..ra.len() {
            assert_eq!(ra[l].to_bits(), rb[l].to_bits(), "trial {trial}: residual {l}");
        }
    }

    #[test]
    fn the_small_fills_give_the_same_bits_as_the_heap_fill() {
        let mut rng = crate::rng::SplitMix64::new(3);
        let mut checked = 0;
        for trial in 0..20000 {
            let n_links = 1 + rng.below(10) as usize;
            let n = 2 + rng.below(if trial % 3 == 0 { 15 } else { 7 }) as usize;
            let mut off = vec![0u32];
            let mut links = vec![];
            for _ in 0..n {
                let len = 1 + rng.below(4) as usize;
                let mut p: Vec<u32> = vec![];
                while p.len() < len.min(n_links) {
                    let l = rng.below(n_links as u64) as u32;
                    if !p.contains(&l) {
                        p.push(l);
                    }
                }
                links.extend_from_slice(&p);
                off.push(links.len() as u32);
            }
            let paths = Paths { off: &off, links: &links };
            // Residuals: some saturated, some equal (ties), some odd values.
            let res0: Vec<f64> = (0..n_links)
                .map(|_| match rng.below(4) {
                    0 => 0.0,
                    1 => 10.0,
                    _ => rng.next_f64() * 13.7,
                })
                .collect();
            let (w, cap) = random_weights_and_caps(&mut rng, n, trial, 5);
            let (xa, ra) = heap_fill(n_links, &paths, &w, &cap, &res0);
            let group: Vec<u32> = (0..n as u32).collect();
            let (mut rb, mut xb) = (res0.clone(), vec![-1.0; n]);
            if n <= SMALL_N {
                let mut out = [0.0; SMALL_N];
                if !fill_small_core(n, |p| paths.of(group[p]), |p| w[p], |p| cap[p], &mut rb, &mut out) {
                    continue;
                }
                xb.copy_from_slice(&out[..n]);
            } else {
                // what `fill` runs for groups of up to FILL_SMALL_N flows
                let mut out = [0.0; FILL_SMALL_N];
                if !fill_small::<FILL_SMALL_N, 32, 64>(n, |p| paths.of(group[p]), |p| w[p], |p| cap[p], &mut rb, &mut out) {
                    continue;
                }
                xb.copy_from_slice(&out[..n]);
            }
            checked += 1;
            assert_same_bits(trial, (&xa, &ra), (&xb, &rb));
        }
        assert!(checked > 19000, "{checked}");
    }

    #[test]
    fn the_one_bottleneck_fill_gives_the_same_bits_as_the_heap_fill() {
        // Groups whose paths mostly share one link (a destination's downlink): where the
        // shortcut applies it must agree with the heap fill bit for bit, residuals
        // included; where it does not it must leave everything as it was.
        let mut rng = crate::rng::SplitMix64::new(11);
        let (mut taken, mut declined) = (0, 0);
        for trial in 0..20000 {
            let n_links = 2 + rng.below(12) as usize;
            let n = 2 + rng.below(15) as usize;
            let common = rng.below(n_links as u64) as u32;
            let mut off = vec![0u32];
            let mut links = vec![];
            for _ in 0..n {
                let mut p: Vec<u32> = vec![];
                // the common link on nearly every path, in any position
                for _ in 0..rng.below(3) {
                    let l = rng.below(n_links as u64) as u32;
                    if !p.contains(&l) && l != common {
                        p.push(l);
                    }
                }
                if rng.below(25) != 0 {
                    let at = rng.below(p.len() as u64 + 1) as usize;
                    p.insert(at, common);
                } else if p.is_empty() {
                    p.push((common + 1) % n_links as u32);
                }
                links.extend_from_slice(&p);
                off.push(links.len() as u32);
            }
            let paths = Paths { off: &off, links: &links };
            let res0: Vec<f64> = (0..n_links)
                .map(|l| match rng.below(5) {
                    0 => 0.0,
                    1 => 10.0,
                    2 if l as u32 == common => 1.0,
                    _ => rng.next_f64() * 13.7,
                })
                .collect();
            let (w, cap) = random_weights_and_caps(&mut rng, n, trial, 8);
            let (xa, ra) = heap_fill(n_links, &paths, &w, &cap, &res0);
            let group: Vec<u32> = (0..n as u32).collect();
            let mut f = Filler::new(n_links);
            let (mut rb, mut xb) = (res0.clone(), vec![-1.0; n]);
            if f.fill_one_bottleneck(&group, &paths, &w, &cap, &mut rb, &mut xb) {
                taken += 1;
                assert_same_bits(trial, (&xa, &ra), (&xb, &rb));
            } else {
                declined += 1;
                assert!(xb.iter().all(|&x| x == -1.0) && rb == res0, "trial {trial}: declined but changed state");
            }
            // the scratch is clean for the next call: the full fill still agrees
            let (mut rc, mut xc) = (res0.clone(), vec![-1.0; n]);
            f.fill(&group, &paths, &w, &cap, &mut rc, &mut xc);
            assert!(xc.iter().zip(&xa).all(|(c, a)| c.to_bits() == a.to_bits()), "trial {trial}: fill after the shortcut");
        }
        assert!(taken > 5000 && declined > 5000, "taken {taken}, declined {declined}");
    }

    #[test]
    fn parking_lot() {
        // Long flow over links 0,1,2 and one short flow per link; all caps 1 -> everyone 0.5.
        let r = run(&[vec![0, 1, 2], vec![0], vec![1], vec![2]], 3, &[1.0; 3], &[1.0; 4], &[f64::INFINITY; 4]);
        for x in r {
            assert!((x - 0.5).abs() < 1e-12);
        }
    }
}
