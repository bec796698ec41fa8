//! The packet model's event queue: a calendar queue (a timing wheel of buckets of
//! `2^shift` picoseconds) that pops events in exactly the order of a binary heap keyed by
//! (time, sequence number), in O(1) amortized time per event when the events are spread
//! over many buckets.
//!
//! - The bucket being drained (`cur`) is a vector sorted by key, latest first: a pop takes
//!   its last entry. An event pushed into this bucket (or before it: any time is taken) is
//!   inserted at its place.
//! - The next `SLOTS - 1` buckets are a ring of unsorted vectors, with a bitmap of the
//!   non-empty ones. When the current bucket is empty, the next non-empty one is sorted and
//!   becomes current.
//! - Events further ahead wait in a binary heap (`far`) and move into the ring when it
//!   reaches them.
//!
//! Keys (time, sequence number) are unique in the packet model (every event gets a new
//! sequence number), so the order is total and a run is deterministic bit for bit whatever
//! `shift` is; `shift` only moves the cost between sorting (large buckets) and walking empty
//! buckets and the far heap (small ones).
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Buckets in the ring (a power of two; 64 words of bitmap).
const SLOTS: usize = 4096;
const MASK: u64 = SLOTS as u64 - 1;

/// One event: its time (ps), its sequence number and what it is.
#[derive(Debug, Clone, Copy)]
pub struct Entry<T> {
    pub t: u64,
    pub seq: u64,
    pub val: T,
}

impl<T> Entry<T> {
    /// (time, sequence number) as one integer (one comparison, without branches).
    #[inline]
    fn key(&self) -> u128 {
        (self.t as u128) << 64 | self.seq as u128
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key())
    }
}

/// A priority queue of events popped in increasing (time, sequence number).
#[derive(Debug, Clone)]
pub struct EventQueue<T> {
    shift: u32,
    /// The bucket being drained (time >> shift), and its events sorted latest first.
    cur: u64,
    now: Vec<Entry<T>>,
    /// Bucket b in (cur, cur + SLOTS) is `ring[b & MASK]`, unsorted.
    ring: Vec<Vec<Entry<T>>>,
    /// Bit s: `ring[s]` is not empty.
    bits: Vec<u64>,
    in_ring: usize,
    /// Events of buckets at or beyond cur + SLOTS.
    far: BinaryHeap<Reverse<Entry<T>>>,
    len: usize,
}

impl<T: Copy> EventQueue<T> {
    /// An empty queue with buckets of `2^shift` ps (`shift` at most 63).
    pub fn new(shift: u32) -> Self {
        EventQueue {
            shift: shift.min(63),
            cur: 0,
            now: Vec::new(),
            ring: vec![Vec::new(); SLOTS],
            bits: vec![0; SLOTS / 64],
            in_ring: 0,
            far: BinaryHeap::new(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, t: u64, seq: u64, val: T) {
        let e = Entry { t, seq, val };
        let b = t >> self.shift;
        if b <= self.cur {
            // the current bucket (or earlier): at its place, latest first
            let k = e.key();
            let i = self.now.partition_point(|x| x.key() > k);
            self.now.insert(i, e);
        } else if b - self.cur < SLOTS as u64 {
            let s = (b & MASK) as usize;
            self.ring[s].push(e);
            self.bits[s >> 6] |= 1 << (s & 63);
            self.in_ring += 1;
        } else {
            self.far.push(Reverse(e));
        }
        self.len += 1;
    }

    /// The earliest event (it may move the queue on to a later bucket; events pushed
    /// later before it are still taken).
    pub fn peek(&mut self) -> Option<&Entry<T>> {
        if self.now.is_empty() {
            self.advance();
        }
        self.now.last()
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<Entry<T>> {
        if self.now.is_empty() {
            self.advance();
        }
        let e = self.now.pop()?;
        self.len -= 1;
        Some(e)
    }

    /// The current bucket is empty: the next bucket holding events becomes current.
    fn advance(&mut self) {
        if self.len == 0 {
            return;
        }
        if self.in_ring > 0 {
            // the first non-empty slot after cur's, cyclically (cur's own slot is empty)
            let from = ((self.cur + 1) & MASK) as usize;
            let mut w = from >> 6;
            let mut word = self.bits[w] & (!0u64 << (from & 63));
            while word == 0 {
                w = (w + 1) % self.bits.len();
                word = self.bits[w];
            }
            let s = (w << 6) as u64 + word.trailing_zeros() as u64;
            self.cur += (s.wrapping_sub(self.cur)) & MASK;
        } else if let Some(Reverse(e)) = self.far.peek() {
            self.cur = e.t >> self.shift;
        }
        // far events that the ring now reaches move into it
        while let Some(Reverse(e)) = self.far.peek() {
            let b = e.t >> self.shift;
            if b - self.cur >= SLOTS as u64 {
                break;
            }
            let s = (b & MASK) as usize;
            let e = *e;
            self.far.pop();
            self.ring[s].push(e);
            self.bits[s >> 6] |= 1 << (s & 63);
            self.in_ring += 1;
        }
        let s = (self.cur & MASK) as usize;
        std::mem::swap(&mut self.now, &mut self.ring[s]);
        self.bits[s >> 6] &= !(1 << (s & 63));
        self.in_ring -= self.now.len();
        self.now.sort_unstable_by_key(|e| Reverse(e.key()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Random pushes and pops (times ahead of the last pop, far ahead, and before it)
    /// against a binary heap: the same entries in the same order.
    #[test]
    fn pops_in_key_order_like_a_binary_heap() {
        for shift in [0, 3, 10, 14, 40] {
            let mut rng = SplitMix64::new(shift as u64 + 7);
            let mut q = EventQueue::new(shift);
            let mut reference: BinaryHeap<Reverse<Entry<u32>>> = BinaryHeap::new();
            let (mut seq, mut last_t) = (0u64, 0u64);
            for step in 0..200_000u32 {
                let r = rng.next_u64();
                if r % 100 < 52 {
                    let dt = match r % 7 {
                        0 => rng.next_u64() % 100,
                        1 => rng.next_u64() % 100_000,
                        2 => rng.next_u64() % 50_000_000,
                        3 => rng.next_u64() % (1 << 40),
                        4 => 0,
                        _ => rng.next_u64() % 2_000_000,
                    };
                    // now and then an event before the last one popped
                    let t = if r % 1000 < 19 { last_t.saturating_sub(rng.next_u64() % 10_000) } else { last_t + dt };
                    q.push(t, seq, step);
                    reference.push(Reverse(Entry { t, seq, val: step }));
                    seq += 1;
                } else if r % 100 < 55 {
                    let a = q.peek().map(|e| (e.t, e.seq, e.val));
                    let b = reference.peek().map(|Reverse(e)| (e.t, e.seq, e.val));
                    assert_eq!(a, b, "peek, shift {shift}, step {step}");
                } else {
                    let a = q.pop().map(|e| (e.t, e.seq, e.val));
                    let b = reference.pop().map(|Reverse(e)| (e.t, e.seq, e.val));
                    assert_eq!(a, b, "pop, shift {shift}, step {step}");
                    if let Some((t, _, _)) = a {
                        last_t = t;
                    }
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse(e)) = reference.pop() {
                assert_eq!(q.pop().map(|x| (x.t, x.seq)), Some((e.t, e.seq)));
            }
            assert!(q.pop().is_none() && q.is_empty());
        }
    }
}
