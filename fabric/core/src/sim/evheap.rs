//! An indexed binary min-heap of per-flow event times: at most one entry per flow,
//! updated or removed in place, ordered by (time, flow index).
//!
//! An entry may lag behind its flow's event when the event moved later (`set_later`):
//! its key is then a lower bound, and the flow's time is in `time`. Every read of the
//! top first moves lagging tops to their times, so `peek` and `pop` see the same
//! (time, flow) order as if every update had moved its entry at once: every other key
//! is at most its flow's time and at least the top's.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventHeap {
    heap: Vec<(f64, u32)>,
    pos: Vec<u32>,
    time: Vec<f64>,
}

const NONE: u32 = u32::MAX;

#[inline]
fn less(a: (f64, u32), b: (f64, u32)) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
}

impl EventHeap {
    pub fn new(n: usize) -> Self {
        EventHeap { heap: Vec::new(), pos: vec![NONE; n], time: vec![0.0; n] }
    }

    #[allow(dead_code)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The earliest event (after moving lagging entries at the top to their times).
    pub fn peek(&mut self) -> Option<(f64, u32)> {
        loop {
            let (k, i) = *self.heap.first()?;
            let t = self.time[i as usize];
            if t.to_bits() == k.to_bits() {
                return Some((k, i));
            }
            self.heap[0].0 = t;
            self.down(0);
        }
    }

    /// Sets the event time of flow i when it may have moved later: an entry already
    /// at or before t stays where it is (its key a lower bound) until it reaches the
    /// top. Saves the sift down of a later time, which is most of an update's cost.
    #[inline]
    pub fn set_later(&mut self, i: u32, t: f64) {
        let p = self.pos[i as usize];
        if p != NONE && self.heap[p as usize].0 <= t {
            self.time[i as usize] = t;
        } else {
            self.set(i, t);
        }
    }

    /// Sets (inserts or moves) the event time of flow i.
    pub fn set(&mut self, i: u32, t: f64) {
        self.time[i as usize] = t;
        let p = self.pos[i as usize];
        if p == NONE {
            let k = self.heap.len();
            self.heap.push((t, i));
            self.pos[i as usize] = k as u32;
            self.up(k);
        } else {
            let k = p as usize;
            let old = self.heap[k];
            self.heap[k] = (t, i);
            if less((t, i), old) {
                self.up(k);
            } else {
                self.down(k);
            }
        }
    }

    /// Removes the event of flow i, if any.
    pub fn remove(&mut self, i: u32) {
        let p = self.pos[i as usize];
        if p == NONE {
            return;
        }
        let k = p as usize;
        self.pos[i as usize] = NONE;
        let last = self.heap.pop().unwrap();
        if k < self.heap.len() {
            self.heap[k] = last;
            self.pos[last.1 as usize] = k as u32;
            self.up(k);
            let k = self.pos[last.1 as usize] as usize;
            self.down(k);
        }
    }

    pub fn pop(&mut self) -> Option<(f64, u32)> {
        let top = self.peek()?;
        self.remove(top.1);
        Some(top)
    }

    fn up(&mut self, mut k: usize) {
        let x = self.heap[k];
        while k > 0 {
            let parent = (k - 1) / 2;
            let p = self.heap[parent];
            if !less(x, p) {
                break;
            }
            self.heap[k] = p;
            self.pos[p.1 as usize] = k as u32;
            k = parent;
        }
        self.heap[k] = x;
        self.pos[x.1 as usize] = k as u32;
    }

    fn down(&mut self, mut k: usize) {
        let n = self.heap.len();
        let x = self.heap[k];
        loop {
            let a = 2 * k + 1;
            if a >= n {
                break;
            }
            let b = a + 1;
            let c = if b < n && less(self.heap[b], self.heap[a]) { b } else { a };
            let y = self.heap[c];
            if !less(y, x) {
                break;
            }
            self.heap[k] = y;
            self.pos[y.1 as usize] = k as u32;
            k = c;
        }
        self.heap[k] = x;
        self.pos[x.1 as usize] = k as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn matches_a_sorted_reference() {
        let mut rng = SplitMix64::new(7);
        let n = 50;
        let mut h = EventHeap::new(n);
        let mut r: Vec<Option<f64>> = vec![None; n];
        for _ in 0..20_000 {
            let i = rng.below(n as u64) as usize;
            match rng.below(5) {
                0 => {
                    h.remove(i as u32);
                    r[i] = None;
                }
                1 => {
                    let want = r.iter().enumerate().filter_map(|(j, t)| t.map(|t| (t, j as u32))).min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    assert_eq!(h.pop(), want);
                    if let Some((_, j)) = want {
                        r[j as usize] = None;
                    }
                }
                2 => {
                    // coarse times, to exercise ties
                    let t = (rng.below(30) as f64) * 0.5;
                    h.set(i as u32, t);
                    r[i] = Some(t);
                }
                _ => {
                    // A later time, mostly left lagging in the heap.
                    let t = r[i].unwrap_or(0.0) + (rng.below(6) as f64) * 0.5;
                    h.set_later(i as u32, t);
                    r[i] = Some(t);
                }
            }
            assert_eq!(h.len(), r.iter().filter(|t| t.is_some()).count());
            let want = r.iter().enumerate().filter_map(|(j, t)| t.map(|t| (t, j as u32))).min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            assert_eq!(h.peek(), want);
        }
    }
}
