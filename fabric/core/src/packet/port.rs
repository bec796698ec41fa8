//! Output ports: one per unidirectional link, each with a queue of waiting packets (the
//! packet in transmission is not counted in the buffer, as in ns-3's traffic-control
//! layer with a one-packet device queue) and the queueing disciplines of the transports.
use std::collections::VecDeque;

/// A packet: a small `Copy` value, never heap-allocated on its own (32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    /// Row of the flow in the trace.
    pub flow: u32,
    /// Data: the packet's index in its flow (0-based). ACK: the cumulative ACK, the
    /// index of the next packet the receiver expects.
    pub seq: u32,
    /// Priority tag: smaller is served first (pFabric); the queue index for PIAS.
    pub prio: u64,
    /// Data: when the sender sent it (ps). ACK: that time echoed from the data packet
    /// that triggered it (for RTT samples).
    pub tx_ps: u64,
    /// Bytes on the wire (payload + headers).
    pub wire_bytes: u16,
    /// Index into the packet's route of the port it is at or goes to next.
    pub hop: u8,
    /// `ACK`, `CE`, `ECE`, `RETX` bits.
    pub flags: u8,
    /// Data: set by the port it waits at (read under [`EcnMarking::Sojourn`]): that
    /// port's count of bytes sent from its queue when the packet joined it (wrapping; in
    /// the struct's padding, so a packet stays 32 bytes). ACK: with SACK, the length of
    /// its receiver's log of out-of-order packets when it was sent (`tcp::Receiver`).
    pub enq_tx: u32,
}

/// When a port's ECN marking (the `EcnFifo`, `PriorityEcn` and ECN `MultiQueue`
/// disciplines) decides that a data packet met congestion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EcnMarking {
    /// On arrival, when the bytes already waiting (in its queue, for `MultiQueue`) are at
    /// least the threshold K: DCTCP's instantaneous-queue marking (RFC 8257 section 3.1).
    #[default]
    Enqueue,
    /// On departure, when the port sent at least K bytes from its queue while the packet
    /// waited: the aSCC paper's definition ("the number of packets transmitted by this
    /// element between p's enqueue and p's deque exceeds a certain threshold", section VII).
    /// The same as `Enqueue` in a first-in-first-out queue but for when the mark is made; in
    /// a priority queue it marks the packets that wait long behind higher priorities, not
    /// the ones that arrive at a long queue and pass it.
    Sojourn,
    /// The pFabric queue under DCTCP (`PriorityEcn`) only: on each arrival, when the bytes
    /// waiting, the arriving packet's included, are at least K, the waiting data packet
    /// with the largest priority value (the earliest of equal values) is marked, whichever
    /// packet arrived: the aSCC authors' ns-2 switches (`DropTail::mark_ecn`, which marks
    /// the queue's `HIGHEST` priority value when it holds at least K packets). A queue at
    /// K marks one packet per arrival, and the lowest-priority packets, which wait longest,
    /// take the marks.
    Worst,
}

impl EcnMarking {
    /// The names [`EcnMarking::parse`] takes.
    pub const NAMES: &'static str = "enqueue, sojourn, worst";

    pub fn parse(s: &str) -> crate::error::Result<Self> {
        match s {
            "enqueue" => Ok(EcnMarking::Enqueue),
            "sojourn" => Ok(EcnMarking::Sojourn),
            "worst" => Ok(EcnMarking::Worst),
            _ => Err(crate::error::SimError::InvalidConfig(format!("unknown ecn_marking '{s}'; known: {}", Self::NAMES))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EcnMarking::Enqueue => "enqueue",
            EcnMarking::Sojourn => "sojourn",
            EcnMarking::Worst => "worst",
        }
    }
}

pub const ACK: u8 = 1;
/// Congestion experienced: set by a port that marks it (RFC 3168).
pub const CE: u8 = 2;
/// ECN echo on an ACK: the data packet it acknowledges carried CE (RFC 8257, one ACK per packet).
pub const ECE: u8 = 4;
/// Data: a retransmission. ACK: the data packet that triggered it was one (Karn: no RTT sample).
pub const RETX: u8 = 8;
/// A connection-opening packet (header only): SYN alone from the sender, SYN | ACK from the
/// receiver (the handshake option).
pub const SYN: u8 = 16;
/// A RACS rate request (Munir 4.1): the packet carries the flow's weights (`rate.rs`).
pub const RR: u8 = 32;

impl Packet {
    #[inline]
    pub fn is_ack(&self) -> bool {
        self.flags & ACK != 0
    }
    /// A data packet (not an ACK, SYN or SYN-ACK).
    #[inline]
    pub fn is_data(&self) -> bool {
        self.flags & (ACK | SYN) == 0
    }
}

/// How a port orders and drops packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discipline {
    /// First in first out; an arriving packet that does not fit is dropped.
    DropTail,
    /// Drop-tail FIFO that marks CE on an arriving data packet when the bytes already
    /// waiting are at least `ecn_threshold_bytes` (DCTCP's K, instantaneous queue).
    EcnFifo,
    /// pFabric: dequeue the smallest priority value (that flow's earliest packet first);
    /// on overflow drop the largest priority value (the arriving packet included).
    PFabric,
    /// pFabric's queue that also marks CE on an arriving data packet when the bytes already
    /// waiting (at any priority) are at least `ecn_threshold_bytes`, as `EcnFifo` does:
    /// priority scheduling under DCTCP senders (aSCC's "SRPT and LAS with DCTCP end host
    /// control logic").
    PriorityEcn,
    /// `queues` strict-priority FIFO queues sharing the buffer (PIAS), queue 0 first,
    /// each marking CE above `ecn_threshold_bytes` of its own when `ecn` is set.
    MultiQueue { queues: u8, ecn: bool },
}

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued (CE-marked or not), after `evicted` waiting packets of larger priority value
    /// were dropped to make room (pFabric; 0 elsewhere).
    Queued { marked: bool, evicted: u32 },
    /// The arriving packet did not fit and was dropped (buffer overflow), after `evicted`
    /// waiting packets of larger value than it were dropped first (pFabric).
    Dropped { evicted: u32 },
}

#[derive(Debug, Clone)]
enum Queue {
    Fifo(VecDeque<Packet>),
    /// pFabric: packets in arrival order (small buffers: a linear scan, as the pFabric
    /// switch design argues for its small queues).
    Prio(PrioQueue),
    Multi { q: Vec<VecDeque<Packet>>, bytes: Vec<u64> },
}

/// The pFabric queue: packets in arrival order, with their priority values and their
/// (flow, ACK or not) keys in arrays of their own, so that the scans read 8 and 4 bytes per
/// packet rather than a whole packet, and the index of the smallest value kept between
/// calls while it is known.
#[derive(Debug, Clone, Default)]
struct PrioQueue {
    pk: Vec<Packet>,
    prio: Vec<u64>,
    /// `flow << 1 | is_ack` (flows are fewer than 2^31).
    who: Vec<u32>,
    /// `best()`'s answer, when known (None: to be found by a scan).
    best: Option<usize>,
}

impl PrioQueue {
    fn push(&mut self, p: Packet) {
        // a later packet is the earliest of the smallest value only if its value is smaller
        if let Some(b) = self.best {
            if p.prio < self.prio[b] {
                self.best = Some(self.pk.len());
            }
        }
        self.prio.push(p.prio);
        self.who.push(p.flow << 1 | p.is_ack() as u32);
        self.pk.push(p);
    }
    fn remove(&mut self, i: usize) -> Packet {
        // the packets after i move down one place; the best one itself is found again
        self.best = match self.best {
            Some(b) if i < b => Some(b - 1),
            Some(b) if i > b => Some(b),
            _ => None,
        };
        self.prio.remove(i);
        self.who.remove(i);
        self.pk.remove(i)
    }
    /// The index of the smallest priority value (the earliest of equal values).
    fn best(&mut self) -> Option<usize> {
        if self.best.is_none() {
            let (mut best, mut v) = (0, *self.prio.first()?);
            for (i, &x) in self.prio.iter().enumerate().skip(1) {
                if x < v {
                    (best, v) = (i, x);
                }
            }
            self.best = Some(best);
        }
        self.best
    }
    /// The index of the largest priority value among data packets (the earliest of equal
    /// values; None: no data packet waits).
    fn worst_data_first(&self) -> Option<usize> {
        let mut found: Option<(usize, u64)> = None;
        for (i, &x) in self.prio.iter().enumerate() {
            if self.pk[i].is_data() && found.is_none_or(|(_, v)| x > v) {
                found = Some((i, x));
            }
        }
        found.map(|(i, _)| i)
    }
    /// The index of the largest priority value (the latest of equal values).
    fn worst(&self) -> Option<usize> {
        let (mut worst, mut v) = (0, *self.prio.first()?);
        for (i, &x) in self.prio.iter().enumerate().skip(1) {
            if x >= v {
                (worst, v) = (i, x);
            }
        }
        Some(worst)
    }
}

/// One output port.
#[derive(Debug, Clone)]
pub struct Port {
    queue: Queue,
    disc: Discipline,
    pub buffer_bytes: u64,
    pub ecn_threshold_bytes: u64,
    /// `EcnFifo`: K in packets waiting (every packet one, ACKs included) instead of bytes; 0:
    /// bytes (`PacketConfig::ecn_threshold_packets`).
    pub ecn_threshold_packets: u32,
    /// `DropTail`, `EcnFifo`: at most this many packets waiting (every packet one, ACKs
    /// included), beside `buffer_bytes`; 0: bytes only (`PacketConfig::buffer_packets`).
    pub buffer_packets: u32,
    /// `MultiQueue`: bytes of the buffer each queue keeps for itself; the rest,
    /// `buffer_bytes - queues * reserve_bytes`, is shared first come first served (a
    /// queue's bytes above its reserve come from it). 0: the whole buffer is shared.
    pub reserve_bytes: u64,
    /// Bytes waiting (not the packet in transmission).
    pub queued_bytes: u64,
    /// When the packet in transmission (if any) has left the port (ps).
    pub busy_until: u64,
    /// Whether a `TxDone` event of this port is pending (set while packets wait).
    pub txdone_pending: bool,
    /// Serialization time per byte (ps), as a float of the link's rate; a packet's time is
    /// rounded to whole picoseconds (exact at 10, 25, 40 and 100 Gbps).
    pub ps_per_byte: f64,
    /// `ps_per_byte` when it is a whole number small enough that `bytes * ps_per_byte` is
    /// exact in f64 for every u16 `bytes` (then `ser_ps` is an integer product, the same
    /// value without the float rounding); 0 otherwise.
    ps_per_byte_int: u64,
    pub prop_ps: u64,
    pub peak_bytes: u64,
    /// Integral of `queued_bytes` over time (byte-picoseconds) up to `last_change_ps`.
    pub area: u128,
    pub last_change_ps: u64,
    pub drops: u64,
    pub marks: u64,
    /// Evicted packets (the pFabric queue), counted separately from overflow drops.
    pub evictions: u64,
    /// When the discipline's ECN marking marks, and which packet ([`EcnMarking`]): on arrival
    /// the arriving one (the default), on departure one that waited while K bytes were sent
    /// (`Sojourn`), or on arrival the waiting data packet of the largest priority value
    /// (`Worst`, `PriorityEcn` only).
    pub marking: EcnMarking,
    /// Bytes sent from the queue so far (wrapping), for `EcnMarking::Sojourn`.
    tx_bytes: u32,
    /// pFabric queues: when nonzero, priority values at least this large mark stale packets
    /// (ASCC: sent while their flow was incomplete). When a flow's packet of a smaller value
    /// leaves, its flow's stale packets queued before it are dropped instead of leaving
    /// first (the aSCC authors' `drop_low_prio` switches). 0: off.
    pub stale_prio: u64,
    /// Stale packets dropped that way.
    pub stale_drops: u64,
    /// `MultiQueue` with ECN: mark on arrival by the bytes waiting in all the port's queues
    /// (per-port ECN) instead of in the packet's own queue (per-queue, the default).
    pub port_ecn: bool,
}

impl Port {
    pub fn new(disc: Discipline, buffer_bytes: u64, ecn_threshold_bytes: u64, ps_per_byte: f64, prop_ps: u64) -> Self {
        let queue = match disc {
            Discipline::DropTail | Discipline::EcnFifo => Queue::Fifo(VecDeque::new()),
            Discipline::PFabric | Discipline::PriorityEcn => Queue::Prio(PrioQueue::default()),
            Discipline::MultiQueue { queues, .. } => {
                Queue::Multi { q: (0..queues).map(|_| VecDeque::new()).collect(), bytes: vec![0; queues as usize] }
            }
        };
        Port {
            queue,
            disc,
            buffer_bytes,
            ecn_threshold_bytes,
            ecn_threshold_packets: 0,
            buffer_packets: 0,
            reserve_bytes: 0,
            queued_bytes: 0,
            busy_until: 0,
            txdone_pending: false,
            ps_per_byte,
            ps_per_byte_int: if ps_per_byte >= 1.0 && ps_per_byte.fract() == 0.0 && ps_per_byte * 65_536.0 < (1u64 << 53) as f64 {
                ps_per_byte as u64
            } else {
                0
            },
            prop_ps,
            peak_bytes: 0,
            area: 0,
            last_change_ps: 0,
            drops: 0,
            marks: 0,
            evictions: 0,
            marking: EcnMarking::Enqueue,
            tx_bytes: 0,
            stale_prio: 0,
            stale_drops: 0,
            port_ecn: false,
        }
    }

    /// Whether the discipline marks ECN (and so `marking` applies).
    pub fn marks_ecn(&self) -> bool {
        matches!(self.disc, Discipline::EcnFifo | Discipline::PriorityEcn | Discipline::MultiQueue { ecn: true, .. })
    }

    /// Serialization time of `bytes` on this port's link (ps, at least 1).
    #[inline]
    pub fn ser_ps(&self, bytes: u16) -> u64 {
        if self.ps_per_byte_int > 0 {
            return (bytes as u64 * self.ps_per_byte_int).max(1);
        }
        ((bytes as f64 * self.ps_per_byte).round() as u64).max(1)
    }

    #[inline]
    fn account(&mut self, now: u64) {
        if now > self.last_change_ps {
            self.area += self.queued_bytes as u128 * (now - self.last_change_ps) as u128;
            self.last_change_ps = now;
        }
    }

    /// Queue an arriving packet at time `now` (the port is busy: the caller starts
    /// transmission directly when it is idle and the queue empty).
    pub fn enqueue(&mut self, mut p: Packet, now: u64) -> Enqueued {
        self.account(now);
        let size = p.wire_bytes as u64;
        // marking at arrival, or (sojourn) the count its departure is compared with
        let at_arrival = self.marking != EcnMarking::Sojourn;
        if p.is_data() {
            p.enq_tx = self.tx_bytes; // an ACK's carries its SACK information (tcp.rs)
        }
        let res = match &mut self.queue {
            Queue::Fifo(q) => {
                if self.queued_bytes + size > self.buffer_bytes || (self.buffer_packets > 0 && q.len() >= self.buffer_packets as usize) {
                    self.drops += 1;
                    return Enqueued::Dropped { evicted: 0 };
                }
                let over = if self.ecn_threshold_packets > 0 {
                    q.len() >= self.ecn_threshold_packets as usize
                } else {
                    self.queued_bytes >= self.ecn_threshold_bytes
                };
                let marked = at_arrival && self.disc == Discipline::EcnFifo && p.is_data() && over;
                if marked {
                    p.flags |= CE;
                    self.marks += 1;
                }
                q.push_back(p);
                Enqueued::Queued { marked, evicted: 0 }
            }
            Queue::Multi { q, bytes } => {
                let k = (p.prio as usize).min(q.len() - 1);
                let fits = if self.reserve_bytes == 0 {
                    self.queued_bytes + size <= self.buffer_bytes
                } else {
                    // the queue's own reserve first, then the shared rest of the buffer
                    let r = self.reserve_bytes;
                    let shared_used: u64 = bytes.iter().map(|&b| b.saturating_sub(r)).sum();
                    let extra = (bytes[k] + size).saturating_sub(r) - bytes[k].saturating_sub(r);
                    shared_used + extra <= self.buffer_bytes - r * q.len() as u64
                };
                if !fits {
                    self.drops += 1;
                    return Enqueued::Dropped { evicted: 0 };
                }
                let ecn = matches!(self.disc, Discipline::MultiQueue { ecn: true, .. });
                let waiting = if self.port_ecn { self.queued_bytes } else { bytes[k] };
                let marked = at_arrival && ecn && p.is_data() && waiting >= self.ecn_threshold_bytes;
                if marked {
                    p.flags |= CE;
                    self.marks += 1;
                }
                bytes[k] += size;
                q[k].push_back(p);
                Enqueued::Queued { marked, evicted: 0 }
            }
            Queue::Prio(q) => {
                let marked = self.marking == EcnMarking::Enqueue && self.disc == Discipline::PriorityEcn && p.is_data() && self.queued_bytes >= self.ecn_threshold_bytes;
                if marked {
                    p.flags |= CE;
                }
                let mut evicted = 0u32;
                while self.queued_bytes + size > self.buffer_bytes {
                    // The waiting packet with the largest priority value (the latest one of
                    // equal values); the arriving packet is dropped instead if its value is
                    // at least as large.
                    match q.worst() {
                        Some(w) if q.prio[w] > p.prio => {
                            let v = q.remove(w);
                            self.queued_bytes -= v.wire_bytes as u64;
                            evicted += 1;
                        }
                        _ => {
                            self.drops += 1;
                            self.evictions += evicted as u64;
                            self.note_peak();
                            return Enqueued::Dropped { evicted };
                        }
                    }
                }
                q.push(p);
                self.evictions += evicted as u64;
                self.marks += marked as u64;
                let mut marked = marked;
                if self.marking == EcnMarking::Worst && self.queued_bytes + size >= self.ecn_threshold_bytes {
                    // the waiting data packet of the largest value takes the mark (counted
                    // once: a packet marked already stays marked)
                    if let Some(w) = q.worst_data_first() {
                        if q.pk[w].flags & CE == 0 {
                            q.pk[w].flags |= CE;
                            self.marks += 1;
                            marked = true;
                        }
                    }
                }
                Enqueued::Queued { marked, evicted }
            }
        };
        self.queued_bytes += size;
        self.note_peak();
        res
    }

    #[inline]
    fn note_peak(&mut self) {
        if self.queued_bytes > self.peak_bytes {
            self.peak_bytes = self.queued_bytes;
        }
    }

    /// The next packet to transmit, removed from the queue.
    pub fn dequeue(&mut self, now: u64) -> Option<Packet> {
        self.dequeue_marking(now).map(|(p, _)| p)
    }

    /// [`Port::dequeue`], and whether the port marked the packet CE as it left
    /// (`EcnMarking::Sojourn`: it waited while the port sent at least K bytes from its queue).
    pub fn dequeue_marking(&mut self, now: u64) -> Option<(Packet, bool)> {
        let mut p = self.take_next(now)?;
        let mut marked = false;
        if self.marking == EcnMarking::Sojourn {
            // (the u32 count wraps every 4 GiB sent; a packet waits while far less is sent)
            marked = self.marks_ecn() && p.is_data() && self.tx_bytes.wrapping_sub(p.enq_tx) as u64 >= self.ecn_threshold_bytes;
            if marked {
                p.flags |= CE;
                self.marks += 1;
            }
            self.tx_bytes = self.tx_bytes.wrapping_add(p.wire_bytes as u32);
        }
        Some((p, marked))
    }

    fn take_next(&mut self, now: u64) -> Option<Packet> {
        self.account(now);
        let p = match &mut self.queue {
            Queue::Fifo(q) => q.pop_front(),
            Queue::Multi { q, bytes } => {
                let k = q.iter().position(|x| !x.is_empty())?;
                let p = q[k].pop_front()?;
                bytes[k] -= p.wire_bytes as u64;
                Some(p)
            }
            Queue::Prio(q) => {
                // The smallest priority value (earliest of equal values), then that flow's
                // earliest queued packet, so a flow's packets leave in order.
                let best = q.best()?;
                let who = q.who[best];
                if self.stale_prio > 0 && q.prio[best] < self.stale_prio {
                    // ASCC: that flow's stale packets before it are dropped, then its
                    // earliest other packet leaves
                    let (mut i, mut b) = (0, best);
                    while i < b {
                        if q.who[i] == who {
                            if q.prio[i] < self.stale_prio {
                                break;
                            }
                            let v = q.remove(i);
                            self.queued_bytes -= v.wire_bytes as u64;
                            self.stale_drops += 1;
                            b -= 1;
                        } else {
                            i += 1;
                        }
                    }
                    Some(q.remove(i))
                } else {
                    let first = q.who[..best].iter().position(|&x| x == who).unwrap_or(best);
                    Some(q.remove(first))
                }
            }
        }?;
        self.queued_bytes -= p.wire_bytes as u64;
        Some(p)
    }

    /// Bytes waiting in each of the port's queues (one entry for single-queue disciplines).
    pub fn is_empty(&self) -> bool {
        self.queued_bytes == 0
    }

    /// Data packets waiting.
    pub fn data_packets(&self) -> u64 {
        let c = |q: &VecDeque<Packet>| q.iter().filter(|p| p.is_data()).count() as u64;
        match &self.queue {
            Queue::Fifo(q) => c(q),
            Queue::Prio(q) => q.pk.iter().filter(|p| p.is_data()).count() as u64,
            Queue::Multi { q, .. } => q.iter().map(c).sum(),
        }
    }

    /// Closes the time integral at `now` (for the mean queue).
    pub fn close(&mut self, now: u64) {
        self.account(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(flow: u32, seq: u32, prio: u64) -> Packet {
        Packet { flow, seq, prio, tx_ps: 0, wire_bytes: 1500, hop: 0, flags: 0, enq_tx: 0 }
    }

    #[test]
    fn stale_packets_of_a_flow_are_dropped_when_its_fresher_packet_leaves_first() {
        // ASCC's ports: values >= 100 are stale (sent while the flow was incomplete)
        let mut p = Port::new(Discipline::PFabric, 100_000, 0, 800.0, 0);
        p.stale_prio = 100;
        for (flow, seq, prio) in [(0, 1, 100), (1, 0, 100), (0, 2, 100), (0, 1, 5), (0, 2, 5)] {
            p.enqueue(data(flow, seq, prio), 0);
        }
        // flow 0's fresh copy (5) leaves first; its two stale packets before it are dropped,
        // flow 1's stays; then the next fresh one, then flow 1's
        let got: Vec<(u32, u32)> = std::iter::from_fn(|| p.dequeue(0)).map(|x| (x.flow, x.seq)).collect();
        assert_eq!(got, vec![(0, 1), (0, 2), (1, 0)]);
        assert_eq!((p.stale_drops, p.queued_bytes), (2, 0));
        // with no fresh packet queued, stale packets leave in order; a flow's earlier fresh
        // packet still leaves before its later one (pFabric's order within a flow)
        for (flow, seq, prio) in [(0, 3, 100), (0, 4, 100), (2, 0, 7), (2, 1, 3)] {
            p.enqueue(data(flow, seq, prio), 0);
        }
        let got: Vec<(u32, u32)> = std::iter::from_fn(|| p.dequeue(0)).map(|x| (x.flow, x.seq)).collect();
        assert_eq!(got, vec![(2, 0), (2, 1), (0, 3), (0, 4)]);
        assert_eq!(p.stale_drops, 2);
        // off (0), the stale packets leave first, in the flow's order
        let mut q = Port::new(Discipline::PFabric, 100_000, 0, 800.0, 0);
        for (flow, seq, prio) in [(0, 1, 100), (0, 1, 5)] {
            q.enqueue(data(flow, seq, prio), 0);
        }
        assert_eq!(q.dequeue(0).unwrap().prio, 100);
        assert_eq!(q.stale_drops, 0);
    }

    #[test]
    fn pias_marks_per_queue_or_per_port() {
        // 3,000 B waiting in queue 1; a packet for queue 0 (empty) with K = 3,000 B: marked
        // only when the port's bytes count (per-port ECN)
        for (port_ecn, want) in [(false, false), (true, true)] {
            let mut p = Port::new(Discipline::MultiQueue { queues: 2, ecn: true }, 100_000, 3000, 800.0, 0);
            p.port_ecn = port_ecn;
            p.enqueue(data(0, 0, 1), 0);
            p.enqueue(data(0, 1, 1), 0);
            assert_eq!(p.enqueue(data(1, 0, 0), 0), Enqueued::Queued { marked: want, evicted: 0 });
            // queue 1's own bytes reach K either way
            assert_eq!(p.enqueue(data(0, 2, 1), 0), Enqueued::Queued { marked: true, evicted: 0 });
        }
    }

    #[test]
    fn droptail_drops_what_does_not_fit() {
        let mut p = Port::new(Discipline::DropTail, 3000, 0, 800.0, 0);
        assert_eq!(p.enqueue(data(0, 0, 0), 0), Enqueued::Queued { marked: false, evicted: 0 });
        assert_eq!(p.enqueue(data(0, 1, 0), 0), Enqueued::Queued { marked: false, evicted: 0 });
        assert_eq!(p.enqueue(data(0, 2, 0), 0), Enqueued::Dropped { evicted: 0 });
        assert_eq!(p.drops, 1);
        assert_eq!(p.dequeue(0).unwrap().seq, 0);
        assert_eq!(p.ser_ps(1500), 1_200_000);
    }

    #[test]
    fn ecn_marks_at_enqueue_above_k() {
        let mut p = Port::new(Discipline::EcnFifo, 100_000, 3000, 800.0, 0);
        for s in 0..2 {
            assert_eq!(p.enqueue(data(0, s, 0), 0), Enqueued::Queued { marked: false, evicted: 0 });
        }
        // 3000 B waiting = K: the next one is marked
        assert_eq!(p.enqueue(data(0, 2, 0), 0), Enqueued::Queued { marked: true, evicted: 0 });
        assert_eq!(p.marks, 1);
    }

    #[test]
    fn buffer_in_packets_counts_acks_as_packets() {
        // a 100,000 B buffer holds 60 ACKs in bytes; with buffer_packets = 3 the fourth
        // packet waiting is dropped, a data packet as an ACK, on either FIFO discipline
        let ack = Packet { wire_bytes: 40, flags: ACK, ..data(1, 0, 0) };
        for disc in [Discipline::DropTail, Discipline::EcnFifo] {
            for (limit, dropped) in [(0u32, false), (3, true)] {
                let mut p = Port::new(disc, 100_000, 97_500, 800.0, 0);
                p.buffer_packets = limit;
                for _ in 0..3 {
                    assert!(matches!(p.enqueue(ack, 0), Enqueued::Queued { .. }));
                }
                assert_eq!(matches!(p.enqueue(data(0, 0, 0), 0), Enqueued::Dropped { .. }), dropped, "{disc:?} limit {limit}");
                assert_eq!(p.drops, dropped as u64);
            }
        }
    }

    #[test]
    fn ecn_threshold_in_packets_counts_acks_as_packets() {
        // K = 2 data packets of bytes, or 2 packets: two ACKs waiting (80 B) reach the
        // second and not the first
        let ack = Packet { wire_bytes: 40, flags: ACK, ..data(1, 0, 0) };
        for (packets, marked) in [(0u32, false), (2, true)] {
            let mut p = Port::new(Discipline::EcnFifo, 100_000, 3000, 800.0, 0);
            p.ecn_threshold_packets = packets;
            p.enqueue(ack, 0);
            p.enqueue(ack, 0);
            assert_eq!(p.enqueue(data(0, 0, 0), 0), Enqueued::Queued { marked, evicted: 0 }, "K in packets: {packets}");
            // ACKs themselves are never marked
            assert_eq!(p.enqueue(ack, 0), Enqueued::Queued { marked: false, evicted: 0 });
        }
    }

    #[test]
    fn a_packet_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 32);
    }

    #[test]
    fn sojourn_marking_is_enqueue_marking_in_a_fifo_made_at_departure() {
        let (mut a, mut d) = (Port::new(Discipline::EcnFifo, 100_000, 3000, 800.0, 0), Port::new(Discipline::EcnFifo, 100_000, 3000, 800.0, 0));
        d.marking = EcnMarking::Sojourn;
        let at_arrival: Vec<bool> = (0..4).map(|s| matches!(a.enqueue(data(0, s, 0), 0), Enqueued::Queued { marked: true, .. })).collect();
        for s in 0..4 {
            // nothing is marked on arrival under sojourn marking
            assert_eq!(d.enqueue(data(0, s, 0), 0), Enqueued::Queued { marked: false, evicted: 0 });
        }
        let at_departure: Vec<bool> = std::iter::from_fn(|| d.dequeue_marking(0)).map(|(p, m)| {
            assert_eq!(m, p.flags & CE != 0);
            m
        }).collect();
        assert_eq!(at_arrival, vec![false, false, true, true]);
        assert_eq!(at_departure, at_arrival);
        assert_eq!((a.marks, d.marks), (2, 2));
    }

    #[test]
    fn worst_marking_marks_the_lowest_priority_packet_waiting_whoever_arrives() {
        // K = 3,000 B; 1,500 B packets. Flow 5's two packets (value 5) wait, then flow 9's
        // (value 9), then an ACK (value 0, never marked)
        let mut p = Port::new(Discipline::PriorityEcn, 100_000, 3000, 800.0, 0);
        p.marking = EcnMarking::Worst;
        let pk = data;
        // below K with the arriving packet: no mark
        assert_eq!(p.enqueue(pk(5, 0, 5), 0), Enqueued::Queued { marked: false, evicted: 0 });
        // at K (3,000 B with it): the largest value waiting, the earliest of equal ones, is
        // marked: flow 5's first packet, not the arriving second one
        assert_eq!(p.enqueue(pk(5, 1, 5), 0), Enqueued::Queued { marked: true, evicted: 0 });
        // flow 9 arrives: its own packet is the worst now and takes the mark
        assert_eq!(p.enqueue(pk(9, 0, 9), 0), Enqueued::Queued { marked: true, evicted: 0 });
        // an ACK arrives: flow 9's packet is marked already, so no new mark
        assert_eq!(p.enqueue(Packet { flags: ACK, ..pk(1, 0, 0) }, 0), Enqueued::Queued { marked: false, evicted: 0 });
        assert_eq!(p.marks, 2);
        let out: Vec<(u32, u32, bool)> = std::iter::from_fn(|| p.dequeue(0)).map(|q| (q.flow, q.seq, q.flags & CE != 0)).collect();
        assert_eq!(out, vec![(1, 0, false), (5, 0, true), (5, 1, false), (9, 0, true)]);
    }

    #[test]
    fn sojourn_marking_in_a_priority_queue_marks_who_waits_not_who_passes() {
        // three low-priority packets wait; a high-priority one arrives at 4,500 B of queue
        let mut a = Port::new(Discipline::PriorityEcn, 100_000, 3000, 800.0, 0);
        let mut d = a.clone();
        d.marking = EcnMarking::Sojourn;
        for p in [&mut a, &mut d] {
            for s in 0..3 {
                p.enqueue(data(1, s, 900), 0);
            }
        }
        // on arrival: marked, as the queue it joins is long
        assert_eq!(a.enqueue(data(2, 0, 1), 0), Enqueued::Queued { marked: true, evicted: 0 });
        d.enqueue(data(2, 0, 1), 0);
        let out: Vec<(u32, bool)> = std::iter::from_fn(|| d.dequeue_marking(0)).map(|(p, m)| (p.flow, m)).collect();
        // on departure: it leaves first, having waited for nothing; the low-priority packets
        // waited while 1,500, 3,000 and 4,500 B were sent
        assert_eq!(out, vec![(2, false), (1, false), (1, true), (1, true)]);
        // an ACK (or SYN) is never marked
        let mut e = Port::new(Discipline::EcnFifo, 100_000, 0, 800.0, 0);
        e.marking = EcnMarking::Sojourn;
        e.enqueue(Packet { flags: ACK, ..data(0, 0, 0) }, 0);
        assert!(!e.dequeue_marking(0).unwrap().1);
    }

    #[test]
    fn pfabric_serves_smallest_and_evicts_largest() {
        let mut p = Port::new(Discipline::PFabric, 4500, 0, 800.0, 0);
        p.enqueue(data(1, 0, 900), 0);
        p.enqueue(data(2, 0, 100), 0);
        p.enqueue(data(1, 1, 50), 0); // flow 1's later packet with a smaller value
        // full: an arriving packet of value 500 evicts the 900 one
        assert_eq!(p.enqueue(data(3, 0, 500), 0), Enqueued::Queued { marked: false, evicted: 1 });
        assert_eq!(p.evictions, 1);
        // the arriving packet with the largest value is dropped itself
        assert_eq!(p.enqueue(data(4, 0, 10_000), 0), Enqueued::Dropped { evicted: 0 });
        // smallest value is flow 1 (50): its earliest packet (seq 1 is the only one left)
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| p.dequeue(0)).map(|x| (x.flow, x.seq)).collect();
        assert_eq!(order, vec![(1, 1), (2, 0), (3, 0)]);
    }

    #[test]
    fn pfabric_keeps_a_flows_order() {
        let mut p = Port::new(Discipline::PFabric, 100_000, 0, 800.0, 0);
        p.enqueue(data(1, 0, 900), 0);
        p.enqueue(data(1, 1, 800), 0);
        assert_eq!(p.dequeue(0).unwrap().seq, 0);
    }

    #[test]
    fn multiqueue_is_strict_priority_with_shared_buffer() {
        let mut p = Port::new(Discipline::MultiQueue { queues: 2, ecn: true }, 4500, 1500, 800.0, 0);
        p.enqueue(data(1, 0, 1), 0);
        p.enqueue(data(1, 1, 1), 0);
        assert_eq!(p.enqueue(data(2, 0, 0), 0), Enqueued::Queued { marked: false, evicted: 0 }); // queue 0 empty: no mark
        assert_eq!(p.enqueue(data(2, 1, 0), 0), Enqueued::Dropped { evicted: 0 }); // shared buffer full
        let order: Vec<u32> = std::iter::from_fn(|| p.dequeue(0)).map(|x| x.flow).collect();
        assert_eq!(order, vec![2, 1, 1]);
    }

    #[test]
    fn multiqueue_reserves_bytes_per_queue_and_shares_the_rest() {
        // 3 queues, a buffer of 6 packets, 1 packet reserved per queue: 3 shared
        let mut p = Port::new(Discipline::MultiQueue { queues: 3, ecn: false }, 9000, 1_000_000, 800.0, 0);
        p.reserve_bytes = 1500;
        for s in 0..4 {
            // queue 2: its own packet, then the 3 shared ones
            assert_eq!(p.enqueue(data(1, s, 2), 0), Enqueued::Queued { marked: false, evicted: 0 }, "packet {s}");
        }
        assert_eq!(p.enqueue(data(1, 4, 2), 0), Enqueued::Dropped { evicted: 0 }); // shared part full
        // queues 0 and 1 still have their reserve, one packet each
        assert_eq!(p.enqueue(data(2, 0, 0), 0), Enqueued::Queued { marked: false, evicted: 0 });
        assert_eq!(p.enqueue(data(2, 1, 0), 0), Enqueued::Dropped { evicted: 0 });
        assert_eq!(p.enqueue(data(3, 0, 1), 0), Enqueued::Queued { marked: false, evicted: 0 });
        assert_eq!(p.queued_bytes, 9000);
        assert_eq!(p.drops, 2);
        // queue 0 first (strict priority); a packet leaving queue 2 frees a shared slot
        let first: Vec<u32> = (0..3).map(|_| p.dequeue(0).unwrap().flow).collect();
        assert_eq!(first, vec![2, 3, 1]);
        assert_eq!(p.enqueue(data(2, 1, 0), 0), Enqueued::Queued { marked: false, evicted: 0 }); // its reserve again
        assert_eq!(p.enqueue(data(2, 2, 0), 0), Enqueued::Queued { marked: false, evicted: 0 }); // the freed shared slot
        assert_eq!(p.enqueue(data(2, 3, 0), 0), Enqueued::Dropped { evicted: 0 });
        // without a reserve the same port shares all 6 packets
        let mut q = Port::new(Discipline::MultiQueue { queues: 3, ecn: false }, 9000, 1_000_000, 800.0, 0);
        for s in 0..6 {
            assert!(matches!(q.enqueue(data(1, s, 2), 0), Enqueued::Queued { .. }));
        }
        assert_eq!(q.enqueue(data(2, 0, 0), 0), Enqueued::Dropped { evicted: 0 });
    }

    #[test]
    fn mean_queue_integral() {
        let mut p = Port::new(Discipline::DropTail, 10_000, 0, 800.0, 0);
        p.enqueue(data(0, 0, 0), 0);
        p.dequeue(1000);
        p.close(2000);
        assert_eq!(p.area, 1500 * 1000);
        assert_eq!(p.peak_bytes, 1500);
    }
}
