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

/// Scratch space reused across calls (no allocation in the steady state).
#[derive(Default, Debug, Clone)]
pub struct Filler {
    local: Vec<u32>,
    touched: Vec<u32>,
    count: Vec<u32>,
    wsum: Vec<f64>,
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
        Filler { local: vec![u32::MAX; n_links], ..Default::default() }
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
        if group.len() == 1 {
            let i = group[0];
            let p = paths.of(i);
            let mut r = cap[i as usize];
            for &l in p {
                r = r.min(res[l as usize]);
            }
            let r = r.max(0.0);
            for &l in p {
                res[l as usize] = (res[l as usize] - r).max(0.0);
            }
            rate[i as usize] = r;
            return;
        }
        // Local link indices and per-link sums.
        for &i in group {
            for &l in paths.of(i) {
                let l = l as usize;
                if self.local[l] == u32::MAX {
                    self.local[l] = self.touched.len() as u32;
                    self.touched.push(l as u32);
                    self.count.push(0);
                    self.wsum.push(0.0);
                    self.version.push(0);
                }
                let j = self.local[l] as usize;
                self.count[j] += 1;
                self.wsum[j] += weight[i as usize];
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
            self.heap.push(Item { level: res[l].max(0.0) / self.wsum[j], link: j as u32, version: 0 });
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
                    let ws = if self.wsum[j] > 0.0 { self.wsum[j] } else { f64::MIN_POSITIVE };
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
            if self.count[j] > 0 {
                self.wsum[j] = (self.wsum[j] - w).max(0.0);
            } else {
                self.wsum[j] = 0.0;
            }
        }
    }
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
    fn weights_and_caps() {
        // One link of 6: weights 1 and 2 -> 2 and 4; with a cap of 1 on the second -> 5 and 1.
        let r = run(&[vec![0], vec![0]], 1, &[6.0], &[1.0, 2.0], &[f64::INFINITY; 2]);
        assert!((r[0] - 2.0).abs() < 1e-12 && (r[1] - 4.0).abs() < 1e-12);
        let r = run(&[vec![0], vec![0]], 1, &[6.0], &[1.0, 2.0], &[f64::INFINITY, 1.0]);
        assert!((r[0] - 5.0).abs() < 1e-12 && (r[1] - 1.0).abs() < 1e-12);
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
