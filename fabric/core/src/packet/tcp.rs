//! Senders' congestion control and loss recovery, in whole packets (the window is a float
//! of packets: one packet is one MSS, as RFC 5681 counts SMSS):
//! - `tcp`: NewReno, RFC 5681 (slow start, congestion avoidance, fast retransmit on the
//!   third duplicate ACK) and RFC 6582 (fast recovery with partial ACKs, `recover`,
//!   the "impatient" timer reset on the first partial ACK), retransmission timer as
//!   RFC 6298 (SRTT/RTTVAR, min RTO, doubling backoff up to 60 s, Karn's rule);
//! - `dctcp`: `tcp` plus RFC 8257 (alpha with gain g once per window of data, the window
//!   cut by alpha/2 at most once per window on ECN echoes);
//! - `pfabric`: pFabric's minimal rate control (start at `init_cwnd`, slow start then
//!   additive increase up to `max_cwnd`, no fast retransmit, a fixed RTO, and on each
//!   timeout ssthresh = cwnd/2 and a window of one packet, go-back-N).
//!
//! The receiver keeps out-of-order packets and acknowledges with a cumulative ACK (no
//! SACK): every packet, or with delayed ACKs as `delack` decides.
use super::port::{Packet, ECE, RETX};
use super::Transport;

/// Per-run constants of the senders.
#[derive(Debug, Clone, Copy)]
pub struct CcParams {
    pub transport: Transport,
    pub init_cwnd: f64,
    pub max_cwnd: f64,
    pub min_rto_ps: u64,
    pub max_rto_ps: u64,
    /// pFabric: a flow's fixed RTO is at least this many of its unloaded RTTs (0: exactly
    /// `min_rto_ps`). Set by default, so that the 45 us of the pFabric paper, sized for its
    /// fabric's RTT, does not fire before the first ACK can return on longer paths.
    pub pfabric_rto_rtts: f64,
    /// DCTCP's gain g (RFC 8257: 1/16).
    pub dctcp_g: f64,
    /// DCTCP's alpha when a connection starts, in [0, 1]: 1 (the default) as Linux and ns-3
    /// (RFC 8257 3.3 leaves it to the implementation: 1 is the conservative start, the
    /// first marked window halves cwnd); 0 as ns-2's DCTCP (`ecnhat_alpha_ 0.0`, which
    /// the pFabric, PIAS and aSCC papers' simulations run: the first marks cut little).
    pub dctcp_alpha_init: f64,
    /// RFC 6298's clock granularity G (ps): RTO = SRTT + max(G, 4 RTTVAR); at least the
    /// core's tick of 1 ps.
    pub clock_g_ps: f64,
    /// RFC 3042 limited transmit (`tcp`, `dctcp`).
    pub limited_transmit: bool,
    /// The duplicate ACKs that trigger fast retransmit (`tcp`, `dctcp`; RFC 5681's
    /// DupThresh); 0: never (losses wait for the timer).
    pub dupack_threshold: u32,
    /// `tcp`, `dctcp`: grow the window by the segments an ACK acknowledges (Linux's
    /// tcp_slow_start and tcp_cong_avoid_ai, ns-3's TcpLinuxReno and TcpDctcp; RFC 3465
    /// without its limit L) instead of RFC 5681's at most one segment per ACK in slow start
    /// and 1/cwnd per ACK in congestion avoidance.
    pub count_acked_segments: bool,
    /// `tcp`, `dctcp`: the retransmission timeout is `min_rto_ps`, always: no RTT estimate,
    /// no exponential backoff (pFabric's minimal TCP, `MinTcpAgent::rtt_timeout`, as the
    /// aSCC paper's senders), instead of RFC 6298's.
    pub fixed_rto: bool,
}

/// RFC 6298 (2.5): an upper bound on the RTO may be placed, at least 60 s.
pub const MAX_RTO_PS: u64 = 60_000_000_000_000;
/// RFC 8257 section 3.3: g = 1/16.
pub const DCTCP_G: f64 = 1.0 / 16.0;
/// The smallest clock granularity G: the core's tick (1 ps).
pub const G_MIN_PS: f64 = 1.0;

/// What the simulator must do after an ACK or a timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Action {
    /// Retransmit this packet now (fast retransmit, or a partial ACK's hole).
    pub retransmit: Option<u32>,
    /// A window of data was cut (loss or ECN), counted in the statistics.
    pub fast_retransmit: bool,
}

#[derive(Debug, Clone)]
pub struct Sender {
    /// Packets in the flow.
    pub n: u32,
    /// Packets whose data has reached the sender (`n` unless the flow's data arrives over
    /// time): no packet at or past it is sent.
    pub avail: u32,
    /// ASCC (`asrpt` over `dctcp`): ECN echoes of data packets sent before this time (when
    /// the flow's data became complete) are ignored; 0: none are.
    pub ignore_ece_before_ps: u64,
    /// First packet not yet acknowledged.
    pub snd_una: u32,
    /// Next packet to send (set back to `snd_una` on a timeout: go-back-N).
    pub snd_nxt: u32,
    /// One past the highest packet ever sent (a packet below it is a retransmission).
    pub high: u32,
    pub cwnd: f64,
    pub ssthresh: f64,
    dupacks: u32,
    /// RFC 3042: new segments allowed beyond cwnd by the duplicate ACKs seen (0 to 2).
    lt_allowed: u32,
    /// RFC 3042: segments sent beyond cwnd since the last new ACK (left out of FlightSize
    /// when the third duplicate ACK sets ssthresh).
    lt_sent: u32,
    pub in_recovery: bool,
    /// RFC 6582's `recover`, as one past the highest packet sent when it was set.
    recover: u32,
    partial_seen: bool,
    srtt_ps: f64,
    rttvar_ps: f64,
    base_rto_ps: u64,
    backoff: u32,
    /// When the retransmission timer fires (u64::MAX: stopped).
    pub timer_ps: u64,
    pub consecutive_timeouts: u32,
    // DCTCP (RFC 8257 section 3.3)
    pub alpha: f64,
    win_end: u32,
    acked_in_win: u32,
    marked_in_win: u32,
    /// No further ECN cut until `snd_una` passes this (once per window).
    cwr_end: Option<u32>,
}

impl Sender {
    /// A sender of `n` packets whose path has an unloaded round-trip time of `rtt0_ps`:
    /// SRTT = R and RTTVAR = R/2 as after a first RTT sample (RFC 6298 2.2), standing in for
    /// the handshake's sample (with the handshake option, `first_rtt_sample` replaces it).
    pub fn new(n: u32, p: &CcParams, rtt0_ps: u64) -> Self {
        let srtt = rtt0_ps as f64;
        let mut s = Sender {
            n,
            avail: n,
            ignore_ece_before_ps: 0,
            snd_una: 0,
            snd_nxt: 0,
            high: 0,
            cwnd: p.init_cwnd,
            ssthresh: f64::INFINITY, // RFC 5681 3.1: arbitrarily high
            dupacks: 0,
            lt_allowed: 0,
            lt_sent: 0,
            in_recovery: false,
            recover: 0,
            partial_seen: false,
            srtt_ps: srtt,
            rttvar_ps: srtt / 2.0,
            base_rto_ps: 0,
            backoff: 0,
            timer_ps: u64::MAX,
            consecutive_timeouts: 0,
            alpha: p.dctcp_alpha_init,
            win_end: 0,
            acked_in_win: 0,
            marked_in_win: 0,
            cwr_end: None,
        };
        if p.transport == Transport::PFabric {
            s.ssthresh = f64::INFINITY;
        }
        s.base_rto_ps = s.compute_rto(p);
        s
    }

    /// The handshake's RTT sample `r_ps` (SYN to SYN-ACK): SRTT = R, RTTVAR = R/2 (RFC
    /// 6298 2.2), replacing the unloaded-path estimate `new` started from.
    pub fn first_rtt_sample(&mut self, r_ps: u64, p: &CcParams) {
        self.srtt_ps = r_ps as f64;
        self.rttvar_ps = self.srtt_ps / 2.0;
        self.base_rto_ps = self.compute_rto(p);
    }

    fn compute_rto(&self, p: &CcParams) -> u64 {
        if p.fixed_rto {
            return p.min_rto_ps;
        }
        if p.transport == Transport::PFabric {
            // a fixed timeout (pFabric: about 3 RTTs); srtt_ps is the unloaded RTT here
            return p.min_rto_ps.max((p.pfabric_rto_rtts * self.srtt_ps).round() as u64);
        }
        let r = self.srtt_ps + (4.0 * self.rttvar_ps).max(p.clock_g_ps);
        (r.round() as u64).clamp(p.min_rto_ps, p.max_rto_ps)
    }

    /// The current RTO, with backoff (RFC 6298 5.5), bounded by `max_rto_ps`.
    pub fn rto_ps(&self, p: &CcParams) -> u64 {
        if p.transport == Transport::PFabric || p.fixed_rto {
            return self.base_rto_ps;
        }
        let shift = self.backoff.min(40);
        self.base_rto_ps.saturating_mul(1u64 << shift).min(p.max_rto_ps)
    }

    /// The smoothed round-trip time (s): RFC 6298's SRTT, from the path's unloaded RTT
    /// (or the handshake's sample) until the first ACK's sample (pFabric: the unloaded RTT).
    pub fn srtt_s(&self) -> f64 {
        self.srtt_ps * 1e-12
    }

    /// Whether the window allows sending packet `snd_nxt` now (with limited transmit,
    /// a new segment may go up to 2 beyond the window after duplicate ACKs).
    #[inline]
    pub fn can_send(&self) -> bool {
        let flight = (self.snd_nxt - self.snd_una) as f64;
        let window = self.cwnd.floor().max(1.0);
        self.snd_nxt < self.avail && (flight < window || (self.snd_nxt >= self.high && flight < window + self.lt_allowed as f64))
    }

    /// The next packet to send (`snd_nxt`, then advanced), once `can_send` allowed it;
    /// counts a limited-transmit segment.
    #[inline]
    pub fn take_next(&mut self) -> u32 {
        let seq = self.snd_nxt;
        if (seq - self.snd_una) as f64 >= self.cwnd.floor().max(1.0) {
            self.lt_sent += 1;
        }
        self.snd_nxt += 1;
        seq
    }

    /// Records that a packet was sent at `now` (RFC 6298 5.1: start the timer if it is off).
    #[inline]
    pub fn on_send(&mut self, now: u64, p: &CcParams) {
        if self.timer_ps == u64::MAX {
            self.timer_ps = now + self.rto_ps(p);
        }
    }

    pub fn done(&self) -> bool {
        self.snd_una >= self.n
    }

    /// An ACK arrives at `now`.
    pub fn on_ack(&mut self, a: &Packet, now: u64, p: &CcParams) -> Action {
        let mut act = Action::default();
        let ack = a.seq.min(self.n);
        // ASCC: the marks of packets sent while the flow was incomplete do not count
        let ece = a.flags & ECE != 0 && a.tx_ps >= self.ignore_ece_before_ps;
        // RFC 7661: a sender waiting for its data (`data_span_s`) with its window not in
        // use does not grow the window; in slow start a flight of half the window counts as
        // using it (Linux's tcp_is_cwnd_limited). Never the case without data spans.
        let flight0 = self.snd_nxt.saturating_sub(self.snd_una) as f64;
        let may_grow = !(self.avail < self.n && self.snd_nxt >= self.avail)
            || flight0 >= self.cwnd
            || (self.cwnd < self.ssthresh && 2.0 * flight0 >= self.cwnd);
        if ack > self.snd_nxt {
            self.snd_nxt = ack; // after a go-back-N: data the receiver already holds
        }
        if ack > self.high {
            self.high = ack;
        }
        let newly = ack.saturating_sub(self.snd_una);
        if p.transport == Transport::Dctcp {
            self.dctcp_on_ack(newly, ece, ack);
        }
        if newly > 0 {
            self.snd_una = ack;
            self.consecutive_timeouts = 0;
            self.lt_allowed = 0;
            self.lt_sent = 0;
            // Karn: no sample from an ACK of a retransmission.
            if a.flags & RETX == 0 && p.transport != Transport::PFabric && now >= a.tx_ps {
                let r = (now - a.tx_ps) as f64;
                self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (self.srtt_ps - r).abs();
                self.srtt_ps = 0.875 * self.srtt_ps + 0.125 * r;
                self.base_rto_ps = self.compute_rto(p);
                self.backoff = 0;
            }
            match p.transport {
                Transport::PFabric if may_grow => self.grow(1, p),
                Transport::PFabric => {}
                Transport::Rcp | Transport::Racs => {} // paced at the routers' rate: no window, no fast recovery (rate.rs)
                _ => {
                    if self.in_recovery {
                        if ack >= self.recover {
                            // full ACK (RFC 6582 3.2 step 3, option 1)
                            let flight = (self.snd_nxt - self.snd_una) as f64;
                            self.cwnd = self.ssthresh.min(flight.max(1.0) + 1.0);
                            self.in_recovery = false;
                            self.dupacks = 0;
                        } else {
                            // partial ACK: retransmit the next hole, deflate (step 4)
                            act.retransmit = Some(self.snd_una);
                            self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                            if !self.partial_seen {
                                self.partial_seen = true;
                                self.timer_ps = now + self.rto_ps(p);
                            }
                        }
                    } else {
                        self.dupacks = 0;
                        if may_grow {
                            self.grow(newly, p);
                        }
                    }
                }
            }
            if self.done() {
                self.timer_ps = u64::MAX; // RFC 6298 5.2
            } else if !(self.in_recovery && act.retransmit.is_some() && self.partial_seen) || self.timer_ps == u64::MAX {
                self.timer_ps = now + self.rto_ps(p); // 5.3
            }
            if p.transport == Transport::Dctcp && ece {
                self.dctcp_cut();
            }
            return act;
        }
        // no new data acknowledged
        if p.transport == Transport::Dctcp && ece {
            self.dctcp_cut();
        }
        if matches!(p.transport, Transport::PFabric | Transport::Rcp | Transport::Racs) || ack < self.snd_una || self.snd_nxt == self.snd_una {
            return act; // pFabric, RCP: no fast retransmit; an old or idle ACK
        }
        self.dupacks += 1;
        if self.in_recovery {
            self.cwnd += 1.0; // RFC 6582 step 2 / RFC 5681: inflate
        } else if self.dupacks == p.dupack_threshold && ack >= self.recover {
            // fast retransmit (RFC 6582 3.2 step 1); RFC 5681 3.2 step 2: the segments of
            // limited transmit are not in FlightSize (a threshold of 0 never gets here)
            let flight = (self.snd_nxt - self.snd_una - self.lt_sent) as f64;
            self.lt_allowed = 0;
            self.lt_sent = 0;
            self.ssthresh = (flight / 2.0).max(2.0);
            // step 3: inflated by the segments the duplicate ACKs say have left (3 by default)
            self.cwnd = self.ssthresh + p.dupack_threshold as f64;
            self.recover = self.high;
            self.in_recovery = true;
            self.partial_seen = false;
            act.retransmit = Some(self.snd_una);
            act.fast_retransmit = true;
        } else if self.dupacks <= 2 {
            if p.limited_transmit {
                self.lt_allowed = self.dupacks; // RFC 3042: one new segment per duplicate ACK
            }
        }
        act
    }

    /// Slow start (cwnd += min(N, 1) per ACK, RFC 5681 3.1) or congestion avoidance
    /// (cwnd += 1/cwnd per ACK, RFC 5681 eq. 3), bounded by `max_cwnd`; with
    /// `count_acked_segments`, N segments in slow start (up to ssthresh) and the rest as
    /// N / cwnd (Linux).
    fn grow(&mut self, newly: u32, p: &CcParams) {
        if p.transport == Transport::Sdc {
            return; // SDC's window law runs on the router feedback (rate.rs)
        }
        if p.count_acked_segments {
            // slow start up to ssthresh, the rest of the acknowledged segments in
            // congestion avoidance (Linux: tcp_slow_start returns them to tcp_cong_avoid_ai)
            let mut n = newly as f64;
            if self.cwnd < self.ssthresh {
                let ss = n.min(self.ssthresh - self.cwnd);
                self.cwnd += ss;
                n -= ss;
            }
            if n > 0.0 {
                self.cwnd += n / self.cwnd;
            }
        } else if self.cwnd < self.ssthresh {
            self.cwnd += (newly as f64).min(1.0);
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        if self.cwnd > p.max_cwnd {
            self.cwnd = p.max_cwnd;
        }
    }

    /// RFC 8257 3.3: count acknowledged and marked data; at the end of each window of data
    /// (when `snd_una` passes the window's end), alpha = (1 - g) alpha + g F.
    fn dctcp_on_ack(&mut self, newly: u32, ece: bool, ack: u32) {
        self.acked_in_win += newly;
        if ece {
            self.marked_in_win += newly;
        }
        if ack > self.win_end {
            if self.acked_in_win > 0 {
                let f = self.marked_in_win as f64 / self.acked_in_win as f64;
                self.alpha = (1.0 - DCTCP_G) * self.alpha + DCTCP_G * f;
            }
            self.acked_in_win = 0;
            self.marked_in_win = 0;
            self.win_end = self.snd_nxt;
        }
    }

    /// RFC 8257 3.4: on an ECN echo, cwnd = cwnd (1 - alpha/2), at most once per window
    /// (not during loss recovery, which already cut it).
    fn dctcp_cut(&mut self) {
        if self.in_recovery {
            return;
        }
        if let Some(end) = self.cwr_end {
            if self.snd_una <= end {
                return;
            }
        }
        self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(2.0);
        self.ssthresh = self.cwnd;
        self.cwr_end = Some(self.snd_nxt.max(self.snd_una));
    }

    /// The retransmission timer fired at `now` (RFC 6298 5.4-5.6, RFC 5681 eq. 4, RFC 6582:
    /// record `recover`, leave fast recovery; pFabric: ssthresh = cwnd / 2, window 1).
    ///
    /// RFC 5681 section 3.1: ssthresh = max(FlightSize / 2, 2) when the first unacknowledged
    /// packet has not yet been retransmitted by the timer; when it has (a second timeout with
    /// no new data acknowledged in between), ssthresh is held constant.
    pub fn on_timeout(&mut self, now: u64, p: &CcParams) {
        let flight = (self.snd_nxt - self.snd_una) as f64;
        match p.transport {
            Transport::PFabric => self.ssthresh = (self.cwnd / 2.0).max(2.0),
            _ if self.consecutive_timeouts == 0 => self.ssthresh = (flight / 2.0).max(2.0),
            _ => {} // the same packet timed out again: ssthresh is held
        }
        self.cwnd = 1.0;
        self.snd_nxt = self.snd_una;
        self.recover = self.high;
        self.in_recovery = false;
        self.dupacks = 0;
        self.lt_allowed = 0;
        self.lt_sent = 0;
        self.consecutive_timeouts += 1;
        if p.transport != Transport::PFabric {
            self.backoff += 1;
        }
        self.timer_ps = now + self.rto_ps(p);
    }
}

/// The receiver of one flow: the next packet it expects and the packets it holds beyond it.
#[derive(Debug, Clone, Default)]
pub struct Receiver {
    pub rcv_nxt: u32,
    /// Out-of-order packets held (bit i = packet i of the flow), allocated on the first
    /// out-of-order packet for the whole flow (n / 8 bytes).
    ooo: Vec<u64>,
    /// Packets received that were already held or delivered.
    pub duplicates: u32,
    /// Out-of-order packets held now (bits set in `ooo`).
    pub held: u32,
}

impl Receiver {
    /// A data packet `seq` of a flow of `n` packets arrives. Returns whether it was new.
    pub fn on_data(&mut self, seq: u32, n: u32) -> bool {
        if seq < self.rcv_nxt || seq >= n {
            self.duplicates += 1;
            return false;
        }
        if seq > self.rcv_nxt {
            let i = seq as usize;
            if self.ooo.is_empty() {
                self.ooo = vec![0u64; (n as usize).div_ceil(64)];
            }
            let (w, b) = (i / 64, i % 64);
            if self.ooo[w] >> b & 1 == 1 {
                self.duplicates += 1;
                return false;
            }
            self.ooo[w] |= 1 << b;
            self.held += 1;
            return true;
        }
        self.rcv_nxt += 1;
        while !self.ooo.is_empty() && self.rcv_nxt < n {
            let i = self.rcv_nxt as usize;
            let (w, b) = (i / 64, i % 64);
            if self.ooo[w] >> b & 1 == 0 {
                break;
            }
            self.ooo[w] &= !(1 << b);
            self.held -= 1;
            self.rcv_nxt += 1;
        }
        if self.rcv_nxt >= n {
            self.ooo = Vec::new();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(t: Transport) -> CcParams {
        CcParams { transport: t, init_cwnd: 10.0, max_cwnd: f64::INFINITY, min_rto_ps: 1_000_000_000, max_rto_ps: MAX_RTO_PS, pfabric_rto_rtts: 0.0, dctcp_g: DCTCP_G, dctcp_alpha_init: 1.0, clock_g_ps: G_MIN_PS, dupack_threshold: 3, limited_transmit: false, count_acked_segments: false, fixed_rto: false }
    }
    fn ack(seq: u32, flags: u8) -> Packet {
        Packet { flow: 0, seq, prio: 0, tx_ps: 0, wire_bytes: 40, hop: 0, flags: super::super::port::ACK | flags, enq_tx: 0 }
    }

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let p = params(Transport::Tcp);
        let mut s = Sender::new(1000, &p, 10_000);
        s.snd_nxt = 10;
        s.high = 10;
        for a in 1..=10 {
            s.on_ack(&ack(a, 0), 100, &p);
        }
        assert_eq!(s.cwnd, 20.0);
        s.ssthresh = 20.0;
        s.snd_nxt = 30;
        s.high = 30;
        s.on_ack(&ack(11, 0), 200, &p);
        assert!((s.cwnd - 20.05).abs() < 1e-12);
    }

    #[test]
    fn stretch_acks_grow_the_window_by_their_segments_only_when_counting_them() {
        // ACKs of 4 segments each: RFC 5681 adds 1 per ACK in slow start and 1/cwnd per ACK
        // after; counting the segments adds 4, up to ssthresh, and the rest as 4/cwnd (Linux)
        for (count, after_ss, after_ca) in [(false, 12.0, 20.0 + 1.0 / 20.0), (true, 18.0, 20.0 + 2.0 / 20.0)] {
            let p = CcParams { count_acked_segments: count, ..params(Transport::Tcp) };
            let mut s = Sender::new(1000, &p, 10_000);
            s.ssthresh = 20.0;
            s.snd_nxt = 10;
            s.high = 10;
            s.on_ack(&ack(4, 0), 100, &p);
            s.on_ack(&ack(8, 0), 101, &p);
            assert!((s.cwnd - after_ss).abs() < 1e-12, "{count}: {}", s.cwnd);
            // 4 more segments: 2 of slow start to ssthresh 20, then 2 in congestion avoidance
            s.cwnd = if count { 18.0 } else { 20.0 };
            s.snd_nxt = 40;
            s.high = 40;
            s.on_ack(&ack(12, 0), 102, &p);
            assert!((s.cwnd - after_ca).abs() < 1e-12, "{count}: {}", s.cwnd);
        }
    }

    #[test]
    fn newreno_fast_retransmit_and_recovery() {
        let p = params(Transport::Tcp);
        let mut s = Sender::new(100, &p, 10_000);
        s.snd_nxt = 10;
        s.high = 10;
        // packet 0 lost: packets 1..=3 give three duplicate ACKs of 0
        assert_eq!(s.on_ack(&ack(0, 0), 1, &p), Action::default());
        assert_eq!(s.on_ack(&ack(0, 0), 2, &p), Action::default());
        let a = s.on_ack(&ack(0, 0), 3, &p);
        assert_eq!(a.retransmit, Some(0));
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(s.cwnd, 8.0);
        s.on_ack(&ack(0, 0), 4, &p);
        assert_eq!(s.cwnd, 9.0);
        // partial ACK up to 5 (packet 5 was lost too): retransmit 5, deflate by 5, add 1
        let a = s.on_ack(&ack(5, RETX), 5, &p);
        assert_eq!(a.retransmit, Some(5));
        assert_eq!(s.cwnd, 5.0);
        // full ACK: leave recovery with cwnd = min(ssthresh, flight + 1)
        s.on_ack(&ack(10, RETX), 6, &p);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 2.0); // min(ssthresh, max(flight, 1) + 1)
    }

    #[test]
    fn limited_transmit_rfc3042() {
        for lt in [false, true] {
            let p = CcParams { limited_transmit: lt, ..params(Transport::Tcp) };
            let mut s = Sender::new(100, &p, 10_000); // cwnd 10
            let sent: Vec<u32> = std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect();
            assert_eq!(sent, (0..10).collect::<Vec<_>>());
            s.high = 10;
            // packet 0 lost: the first two duplicate ACKs each release one new segment
            // with limited transmit (flight at most cwnd + 2), none without; cwnd unchanged
            for k in 1..=2u32 {
                assert_eq!(s.on_ack(&ack(0, 0), k as u64, &p), Action::default());
                assert_eq!(s.can_send(), lt);
                if lt {
                    assert_eq!(s.take_next(), 9 + k);
                    s.high = 10 + k;
                    assert!(!s.can_send());
                }
                assert_eq!(s.cwnd, 10.0);
            }
            // the third: fast retransmit; ssthresh from the flight without the two
            // limited-transmit segments (RFC 5681 3.2 step 2): 10 / 2 either way
            let a = s.on_ack(&ack(0, 0), 3, &p);
            assert_eq!(a.retransmit, Some(0));
            assert_eq!(s.ssthresh, 5.0);
            assert_eq!(s.cwnd, 8.0);
            assert_eq!(s.snd_nxt, if lt { 12 } else { 10 });
            // a fourth duplicate ACK inflates (RFC 6582), no limited transmit in recovery
            s.on_ack(&ack(0, 0), 4, &p);
            assert_eq!(s.cwnd, 9.0);
            assert!(!s.can_send()); // flight 12 (or 10) against 9
        }
    }

    #[test]
    fn fixed_rto_is_the_minimum_whatever_the_rtt_and_the_timeouts() {
        let p = CcParams { fixed_rto: true, min_rto_ps: 2_000_000_000, ..params(Transport::Dctcp) };
        // an unloaded RTT of 1 ms would give RFC 6298 an RTO of 3 ms: fixed, it is 2 ms
        let mut s = Sender::new(100, &p, 1_000_000_000);
        assert_eq!(s.rto_ps(&p), 2_000_000_000);
        s.snd_nxt = 10;
        s.high = 10;
        s.on_ack(&ack(1, 0), 5_000_000_000, &p); // a 5 ms sample (tx_ps 0)
        assert_eq!(s.rto_ps(&p), 2_000_000_000);
        for k in 1..=6u64 {
            s.on_timeout(k * 2_000_000_000, &p);
            assert_eq!(s.rto_ps(&p), 2_000_000_000); // no backoff
            assert_eq!(s.timer_ps, (k + 1) * 2_000_000_000);
        }
        // RFC 6298 without the option: 3 ms from the unloaded RTT, doubled per timeout
        let q = CcParams { fixed_rto: false, ..p };
        let mut r = Sender::new(100, &q, 1_000_000_000);
        assert_eq!(r.rto_ps(&q), 3_000_000_000);
        r.on_timeout(0, &q);
        assert_eq!(r.rto_ps(&q), 6_000_000_000);
    }

    #[test]
    fn rto_backoff_and_karn() {
        let p = params(Transport::Tcp);
        let mut s = Sender::new(100, &p, 10_000);
        assert_eq!(s.rto_ps(&p), 1_000_000_000); // min RTO
        s.on_timeout(0, &p);
        assert_eq!(s.rto_ps(&p), 2_000_000_000);
        s.on_timeout(0, &p);
        assert_eq!(s.rto_ps(&p), 4_000_000_000);
        assert_eq!(s.cwnd, 1.0);
        // an ACK of a retransmission gives no sample and keeps the backoff (Karn)
        s.on_ack(&ack(1, RETX), 10, &p);
        assert_eq!(s.rto_ps(&p), 4_000_000_000);
        s.snd_nxt = 5;
        s.on_ack(&ack(2, 0), 10, &p);
        assert_eq!(s.rto_ps(&p), 1_000_000_000);
    }

    #[test]
    fn ssthresh_is_held_when_the_same_packet_times_out_again() {
        // RFC 5681 section 3.1: eq. (4) on the first timeout of a packet; "held constant" when
        // the packet has already been retransmitted by the timer
        for t in [Transport::Tcp, Transport::Dctcp] {
            let p = params(t);
            let mut s = Sender::new(100, &p, 10_000);
            s.snd_nxt = 40;
            s.high = 40;
            s.cwnd = 40.0;
            s.on_timeout(0, &p);
            assert_eq!((s.ssthresh, s.cwnd, s.snd_nxt), (20.0, 1.0, 0)); // FlightSize 40 / 2, go-back-N
            s.snd_nxt = 1; // the timer's retransmission of packet 0, lost again
            s.on_timeout(0, &p);
            assert_eq!((s.ssthresh, s.cwnd, s.snd_nxt), (20.0, 1.0, 0), "{t:?}: held, not max(1 / 2, 2)");
            s.snd_nxt = 1;
            s.on_timeout(0, &p);
            assert_eq!(s.ssthresh, 20.0);
            // packet 0 gets through: new data acknowledged; then packet 1 times out, a new packet
            s.snd_nxt = 7;
            s.on_ack(&ack(1, RETX), 10, &p);
            assert_eq!(s.consecutive_timeouts, 0);
            s.on_timeout(20, &p);
            assert_eq!(s.ssthresh, 3.0, "{t:?}: eq. (4) again: FlightSize 6 / 2");
        }
        // pfabric keeps its own rule (ssthresh = cwnd / 2 on every timeout)
        let p = params(Transport::PFabric);
        let mut s = Sender::new(100, &p, 10_000);
        s.cwnd = 12.0;
        s.on_timeout(0, &p);
        s.on_timeout(0, &p);
        assert_eq!(s.ssthresh, 2.0);
    }

    #[test]
    fn dctcp_alpha_and_once_per_window_cut() {
        let p = params(Transport::Dctcp);
        let mut s = Sender::new(1000, &p, 10_000);
        s.snd_nxt = 10;
        s.high = 10;
        s.cwnd = 10.0;
        s.ssthresh = 10.0;
        // every packet of the first window marked: F = 1, alpha stays 1
        s.on_ack(&ack(1, ECE), 1, &p);
        assert_eq!(s.alpha, 1.0);
        let c = s.cwnd;
        assert!((c - 5.05).abs() < 1e-12, "{c}"); // 10 + 1/10 (AI), then cut by alpha/2 = 1/2
        s.on_ack(&ack(2, ECE), 2, &p);
        assert!(s.cwnd >= c, "cut at most once per window");
        // the next window ends when snd_una passes 10: acks 2..=11, one of ten marked
        s.snd_nxt = 40;
        s.high = 40;
        for a in 3..=11 {
            s.on_ack(&ack(a, 0), 3, &p);
        }
        let want = 15.0 / 16.0 + 0.1 / 16.0;
        assert!((s.alpha - want).abs() < 1e-12, "{}", s.alpha);
    }

    #[test]
    fn dctcp_alpha_init_zero_starts_from_a_small_cut_as_ns2() {
        // ns-2's DCTCP (alpha 0 at the start): the first window, all marked, ends at the
        // first ACK: alpha = g F = 1/16, then the cut is by alpha / 2 = 1/32, not by half
        let p = CcParams { dctcp_alpha_init: 0.0, ..params(Transport::Dctcp) };
        let mut s = Sender::new(1000, &p, 10_000);
        assert_eq!(s.alpha, 0.0);
        (s.snd_nxt, s.high, s.cwnd, s.ssthresh) = (10, 10, 10.0, 10.0);
        s.on_ack(&ack(1, ECE), 1, &p);
        assert_eq!(s.alpha, 1.0 / 16.0);
        assert!((s.cwnd - 10.1 * (1.0 - 1.0 / 32.0)).abs() < 1e-12, "{}", s.cwnd);
        // the default (1, Linux and ns-3) halves it
        let q = params(Transport::Dctcp);
        let mut t = Sender::new(1000, &q, 10_000);
        (t.snd_nxt, t.high, t.cwnd, t.ssthresh) = (10, 10, 10.0, 10.0);
        t.on_ack(&ack(1, ECE), 1, &q);
        assert!((t.cwnd - 5.05).abs() < 1e-12, "{}", t.cwnd);
    }

    #[test]
    fn ascc_ignores_the_marks_of_packets_sent_before_completion() {
        let p = params(Transport::Dctcp);
        let run = |tx_ps: u64| {
            let mut s = Sender::new(1000, &p, 10_000);
            (s.snd_nxt, s.high, s.cwnd, s.ssthresh) = (10, 10, 10.0, 10.0);
            s.ignore_ece_before_ps = 500; // the flow became complete at 500 ps
            let mut a = ack(1, ECE);
            a.tx_ps = tx_ps;
            s.on_ack(&a, 1_000, &p);
            s.cwnd
        };
        // the echo of a packet sent before: no cut (10 + 1/10, congestion avoidance)
        assert_eq!(run(400), 10.1);
        // after: DCTCP's cut (alpha 1: by half)
        assert!((run(600) - 5.05).abs() < 1e-12);
    }

    #[test]
    fn receiver_delivers_each_packet_once() {
        let mut r = Receiver::default();
        assert!(r.on_data(1, 4));
        assert!(!r.on_data(1, 4));
        assert_eq!(r.rcv_nxt, 0);
        assert!(r.on_data(0, 4));
        assert_eq!(r.rcv_nxt, 2);
        assert!(!r.on_data(0, 4));
        assert!(r.on_data(3, 4));
        assert!(r.on_data(2, 4));
        assert_eq!(r.rcv_nxt, 4);
        assert_eq!(r.duplicates, 2);
    }
}
