//! Rate-controlled transports with router feedback. Now: RCP (Dukkipati's Rate Control
//! Protocol), the baseline of Munir's thesis (shared/papers/003, chapter 4).
//!
//! **Routers.** Every output port is an RCP router. It keeps one fair rate R per link and
//! updates it at the end of every control interval T:
//!
//! R <- R (1 + (T / d) (alpha (C - y) - beta q / d) / C), clipped to [C / 1000, C],
//!
//! where C is the link's capacity (bytes/s), y the bytes that arrived at the port during the
//! interval divided by T (every packet: data, ACKs, SYNs; dropped ones too, as ns-2's RCP
//! queue counts them on arrival), q the bytes waiting at the end of the interval, and d the
//! port's average RTT: the byte-weighted mean of the RTT estimates that the data packets
//! arriving during the interval carry (their sender's SRTT), kept from the interval before
//! when none arrived. The control interval is d itself (T = d). alpha = 0.1 and beta = 1
//! (Dukkipati et al., "Processor Sharing Flows in the Internet", IWQoS 2005). R starts at C
//! (the fixed point of an idle link: with y = 0 and q = 0, R grows to C and stays there).
//! The lower clip C / 1000 is ours (the formula can go negative; ns-2's RCP clips at a
//! script parameter, a minimum number of packets per RTT).
//!
//! The updates are evaluated lazily, exactly as a timer would: the interval ends that passed
//! since a port's last packet are applied, in order, when its next packet arrives or leaves
//! (nothing at a port changes between its packets); an idle port at R = C is skipped over in
//! one step.
//!
//! **Feedback.** A data packet (and a SYN) carries the rate the path allows: its sender
//! writes "no limit", and every port it leaves writes min(carried, R). The receiver's ACK
//! echoes the rate of the data packet it answers (routers do not stamp ACKs).
//!
//! **Sender.** A flow's first data packet is its rate request (as RCP's SYN; with the
//! `handshake` option the SYN is, and data starts at the SYN-ACK's rate): until the first
//! rate comes back, the sender keeps one packet in flight. Then it paces its packets at the
//! latest rate its ACKs carry: a packet of B wire bytes after one sent at time t goes at
//! t + B / R (the rate of the latest ACK; a rate change moves the next send time). There is
//! no window.
//!
//! **Loss recovery.** As RCP's ns-2 agent, which retransmits what is unacknowledged on a
//! timeout: no fast retransmit; the RFC 6298 timer of `tcp` (SRTT, RTTVAR, `min_rto_s`,
//! doubling backoff) and on a timeout go-back-N from the first unacknowledged packet, paced
//! at the current rate (the receiver keeps out-of-order packets; their copies are counted as
//! duplicates).
//!
//! The feedback travels in the packet's `prio` field (the FIFO queues of `ps` do not read
//! it): the rate as an f32 of bytes/s in the upper 32 bits, the sender's RTT estimate in ns
//! (saturating) in the lower 32.
use super::port::{Packet, ACK};
use super::PacketSimulator;

/// RCP's alpha (Dukkipati et al. 2005).
pub const RCP_ALPHA: f64 = 0.1;
/// RCP's beta (Dukkipati et al. 2005).
pub const RCP_BETA: f64 = 1.0;
/// The lowest rate a router assigns, as a fraction of its link's capacity (ours).
pub const RCP_MIN_FRACTION: f64 = 1e-3;

/// One port's RCP state.
#[derive(Debug, Clone)]
pub struct Router {
    /// Link capacity, bytes/s.
    pub cap: f64,
    /// The fair rate R, bytes/s.
    pub rate: f64,
    /// The average RTT d (ps); 0 until a packet carrying an RTT arrives.
    pub d_ps: f64,
    /// End of the current control interval (u64::MAX: not started).
    next_ps: u64,
    /// Start of the current control interval.
    start_ps: u64,
    /// Bytes arrived in the current interval.
    bytes_in: u64,
    /// Byte-weighted RTT samples of the current interval: sum of bytes x RTT (ps), bytes.
    rtt_sum: f64,
    rtt_bytes: f64,
    /// Control intervals ended so far.
    pub updates: u64,
}

impl Router {
    fn new(cap: f64) -> Self {
        Router { cap, rate: cap, d_ps: 0.0, next_ps: u64::MAX, start_ps: 0, bytes_in: 0, rtt_sum: 0.0, rtt_bytes: 0.0, updates: 0 }
    }

    /// Ends every control interval that ended at or before `now` (q: bytes waiting, unchanged since the last packet).
    fn catch_up(&mut self, now: u64, q: u64) {
        while self.next_ps <= now {
            let t = self.next_ps;
            let len = (t - self.start_ps).max(1) as f64;
            if self.rtt_bytes > 0.0 {
                self.d_ps = self.rtt_sum / self.rtt_bytes;
            }
            let d = self.d_ps.max(1.0);
            let y = self.bytes_in as f64 / len * 1e12;
            let qd = q as f64 / d * 1e12;
            let r = self.rate * (1.0 + (len / d) * (RCP_ALPHA * (self.cap - y) - RCP_BETA * qd) / self.cap);
            self.rate = r.clamp(self.cap * RCP_MIN_FRACTION, self.cap);
            self.updates += 1;
            let idle = self.bytes_in == 0 && q == 0 && self.rate == self.cap;
            self.bytes_in = 0;
            self.rtt_sum = 0.0;
            self.rtt_bytes = 0.0;
            self.start_ps = t;
            let step = (d.round() as u64).max(1);
            self.next_ps = t + step;
            if idle && self.next_ps <= now {
                // nothing changes while the port stays idle at R = C: skip the whole intervals before now
                let k = (now - self.next_ps) / step;
                self.next_ps += k * step;
                self.start_ps = self.next_ps - step;
                self.updates += k;
            }
        }
    }
}

/// Per flow, the RCP sender's rate and pacing state.
#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    /// The rate from the latest feedback, bytes/s (0: none yet).
    pub rate: f64,
    /// When the last packet was sent and its wire bytes.
    last_ps: u64,
    last_bytes: u16,
    /// The pending pacing event (u64::MAX: none).
    pub event_ps: u64,
}

/// The rate transports' state in a run (empty for the window transports).
#[derive(Debug, Clone, Default)]
pub struct RateState {
    pub routers: Vec<Router>,
    pub pacers: Vec<Pacer>,
    /// Per flow: the feedback of the last data packet its receiver got (echoed on ACKs).
    echo: Vec<u64>,
}

impl RateState {
    /// RCP state for ports of these capacities (bytes/s) and `n` flows.
    pub fn rcp(caps: &[f64], n: usize) -> Self {
        RateState {
            routers: caps.iter().map(|&c| Router::new(c)).collect(),
            pacers: vec![Pacer { rate: 0.0, last_ps: 0, last_bytes: 0, event_ps: u64::MAX }; n],
            echo: vec![0; n],
        }
    }
    #[inline]
    pub fn on(&self) -> bool {
        !self.routers.is_empty()
    }
}

/// The feedback field: rate (f32 bytes/s) above, RTT in ns below.
#[inline]
pub fn tag(rate: f32, rtt_ps: f64) -> u64 {
    let ns = (rtt_ps / 1000.0).round().clamp(0.0, u32::MAX as f64) as u64;
    (rate.to_bits() as u64) << 32 | ns
}
#[inline]
pub fn tag_rate(t: u64) -> f32 {
    f32::from_bits((t >> 32) as u32)
}
#[inline]
pub fn tag_rtt_ps(t: u64) -> f64 {
    (t & 0xFFFF_FFFF) as f64 * 1000.0
}

impl PacketSimulator {
    /// The feedback field flow f's next data packet or SYN starts with: no rate limit, and its RTT estimate.
    pub(super) fn rate_tag(&self, f: usize) -> u64 {
        if !self.rate.on() {
            return 0;
        }
        tag(f32::INFINITY, self.senders[f].srtt_s() * 1e12)
    }

    /// Port l: ends the control intervals due by now (before its queue changes).
    #[inline]
    pub(super) fn rate_tick(&mut self, l: usize) {
        if self.rate.on() {
            let q = self.ports[l].queued_bytes;
            self.rate.routers[l].catch_up(self.now, q);
        }
    }

    /// A packet arrives at port l (before it is queued, sent or dropped): the router counts it.
    #[inline]
    pub(super) fn rate_arrive(&mut self, l: usize, p: &Packet) {
        if !self.rate.on() {
            return;
        }
        self.rate_tick(l);
        let now = self.now;
        let r = &mut self.rate.routers[l];
        r.bytes_in += p.wire_bytes as u64;
        if p.flags & ACK == 0 {
            let rtt = tag_rtt_ps(p.prio);
            if rtt > 0.0 {
                let b = p.wire_bytes as f64;
                r.rtt_sum += b * rtt;
                r.rtt_bytes += b;
                if r.next_ps == u64::MAX {
                    // the first RTT this port sees: its first control interval starts now
                    r.d_ps = rtt;
                    r.start_ps = now;
                    r.next_ps = now + (rtt.round() as u64).max(1);
                }
            }
        }
    }

    /// Port l starts sending p: a data packet or SYN takes min(carried rate, R).
    #[inline]
    pub(super) fn rate_depart(&mut self, l: usize, p: &mut Packet) {
        if !self.rate.on() || p.flags & ACK != 0 {
            return;
        }
        let r = self.rate.routers[l].rate as f32;
        if r < tag_rate(p.prio) {
            p.prio = (r.to_bits() as u64) << 32 | (p.prio & 0xFFFF_FFFF);
        }
    }

    /// A data packet reaches flow f's receiver: its feedback is what the next ACK echoes.
    #[inline]
    pub(super) fn rate_on_data(&mut self, f: usize, p: &Packet) {
        if self.rate.on() {
            self.rate.echo[f] = p.prio;
        }
    }

    /// The feedback an ACK (or SYN-ACK) of flow f carries back.
    #[inline]
    pub(super) fn rate_echo(&self, f: usize) -> u64 {
        if self.rate.on() {
            self.rate.echo[f]
        } else {
            0
        }
    }

    /// Feedback `t` (an ACK's or SYN-ACK's) reaches flow f's sender: it paces at that rate.
    pub(super) fn rate_feedback(&mut self, f: usize, t: u64) {
        let r = tag_rate(t) as f64;
        if r.is_finite() && r > 0.0 {
            self.rate.pacers[f].rate = r;
        }
    }

    /// Flow f's sender sends what its rate allows now, and sets its pacing event for the next packet.
    pub(super) fn rate_send(&mut self, f: usize) {
        if self.terminated[f] || self.senders[f].done() {
            return;
        }
        loop {
            let s = &self.senders[f];
            if s.snd_nxt >= s.n {
                break;
            }
            let pc = self.rate.pacers[f];
            if pc.rate <= 0.0 {
                // no rate yet: the first packet is the rate request, alone in flight
                if s.snd_nxt != s.snd_una {
                    break;
                }
            } else if pc.last_bytes > 0 {
                let due = pc.last_ps + (pc.last_bytes as f64 / pc.rate * 1e12).round() as u64;
                if due > self.now {
                    if self.rate.pacers[f].event_ps > due {
                        self.rate.pacers[f].event_ps = due;
                        self.push(due, super::EvKind::Pace(f as u32));
                    }
                    break;
                }
            }
            let seq = s.snd_nxt;
            self.senders[f].snd_nxt += 1;
            let fl = &self.flows[f];
            let payload = if seq + 1 == fl.n { fl.size - seq as u64 * self.mss } else { self.mss };
            let pc = &mut self.rate.pacers[f];
            pc.last_ps = self.now;
            pc.last_bytes = payload as u16 + self.hdr;
            self.emit(f, seq);
        }
        self.arm_timer(f);
    }

    /// Flow f's pacing event.
    pub(super) fn rate_pace(&mut self, f: usize, t: u64) {
        if self.rate.pacers[f].event_ps != t {
            return; // superseded
        }
        self.rate.pacers[f].event_ps = u64::MAX;
        self.rate_send(f);
    }

    /// Per port: the RCP rate now (bytes/s), the average RTT (s) and the control intervals ended.
    pub fn rcp_routers(&self) -> Vec<(f64, f64, u64)> {
        self.rate.routers.iter().map(|r| (r.rate, r.d_ps * 1e-12, r.updates)).collect()
    }
    /// Per flow: the rate its RCP sender paces at (bytes/s; 0 before the first feedback).
    pub fn rcp_flow_rates(&self) -> Vec<f64> {
        self.rate.pacers.iter().map(|p| p.rate).collect()
    }
}
