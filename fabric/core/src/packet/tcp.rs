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
//! The receiver keeps out-of-order packets and acknowledges with a cumulative ACK: every
//! packet, or with delayed ACKs as `delack` decides.
//!
//! With `CcParams::sack` (`tcp`, `dctcp`, `pfabric`), ACKs carry selective
//! acknowledgments (RFC 2018) and the sender keeps a scoreboard of the packets SACKed:
//! - every ACK tells the sender every out-of-order packet its receiver held when it sent the
//!   ACK (the receiver's log of them, `Receiver::sack_log`; the ACK carries the log's
//!   length). RFC 2018's option has room for 3 or 4 blocks and repeats the most recent
//!   ones, so a real sender can miss a block when ACKs are lost and more than 3 blocks
//!   are newer: the one way this scoreboard knows more than SACK can;
//! - `tcp`, `dctcp`: loss recovery as RFC 6675 (conservative SACK-based recovery): a
//!   duplicate ACK is one that SACKs new data; recovery starts at DupThresh of them or
//!   when DupThresh packets above the first unacknowledged one are SACKed (IsLost), with
//!   ssthresh = cwnd = FlightSize / 2 and the first unacknowledged packet sent again;
//!   during recovery the sender keeps `pipe` (SetPipe) and sends while cwnd - pipe >= 1
//!   the packets NextSeg gives (rules 1 to 3; no rescue retransmission, rule 4 is a MAY);
//!   recovery ends at the first ACK at or past RecoveryPoint (`recover`), with cwnd =
//!   ssthresh (RFC 5681 3.2 step 6);
//! - on a timeout (all three) the sender goes back to the first unacknowledged packet, as
//!   without SACK, but skips the packets SACKed, and until the cumulative ACK reaches the
//!   highest packet sent at the timeout (RFC 6675 5.1's RecoveryPoint, no fast recovery
//!   before) its flight leaves them out. The scoreboard is kept across the timeout, as
//!   Linux and ns-3 do (and the aSCC authors' ns-2 senders, `clear_on_timeout_ false`):
//!   RFC 2018 section 8 has the sender clear it in case the receiver reneged, which these
//!   receivers never do. The timeout's ssthresh (`tcp`, `dctcp`) is half of what the
//!   scoreboard says is in the network (pipe in fast recovery), as ns-3's, not half of
//!   everything unacknowledged (`Sender::on_timeout`).
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
    /// The least window DCTCP's cut leaves, in packets: 2 (the default) as Linux's
    /// `dctcp_ssthresh` and RFC 5681's ssthresh floor; below 1 the cut can leave less than
    /// one packet, as ns-3's `TcpDctcp` does (its ssthresh, (1 - alpha/2) cwnd, has no floor),
    /// and a sender whose window is under one packet sends nothing until an ACK or its
    /// retransmission timer (ns-3 sends no segment larger than the window it has).
    pub dctcp_min_cwnd: f64,
    /// `dctcp`: no window growth from the ACK whose ECN echo cuts the window until the
    /// data sent before the cut is acknowledged (the cut first, then no additive increase
    /// in that window), as Linux's CWR state (`tcp_in_cwnd_reduction`) and ns-3's `CA_CWR`;
    /// off: the ACK grows the window before the cut and the next ACKs go on growing it.
    pub dctcp_cwr_hold: bool,
    /// `dctcp`: an ECN echo on an ACK that acknowledges no new data (a duplicate ACK) does
    /// not cut the window, as ns-3 (`TcpSocketBase::ReceivedAck` reacts to ECE only when
    /// the ACK advances `snd_una`); off: any echo may cut it (at most once per window).
    pub dctcp_ignore_dupack_ece: bool,
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
    /// Selective acknowledgments (RFC 2018) and, for `tcp` and `dctcp`, RFC 6675's loss
    /// recovery (see the module doc).
    pub sack: bool,
    /// With `sack` (`tcp`, `dctcp`): the window in fast recovery as RFC 6937's proportional
    /// rate reduction (PRR-SSRB), Linux's and ns-3's default, instead of RFC 6675's
    /// cwnd = ssthresh from the start of recovery.
    pub prr: bool,
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
    // SACK (with `CcParams::sack`)
    /// The scoreboard: bit i set when packet i was SACKed; allocated at the first SACK.
    sacked: Vec<u64>,
    /// Entries of the receiver's SACK log already read.
    sack_seen: u32,
    /// One past the highest packet SACKed (0: none yet).
    high_sacked: u32,
    /// RFC 6675's HighRxt, as one past the highest packet retransmitted in this recovery.
    high_rxt: u32,
    /// RFC 6675's pipe, during fast recovery.
    pipe: u32,
    /// After a timeout, until `snd_una` reaches `recover`: SACKed packets are skipped and
    /// left out of the flight.
    rto_recovery: bool,
    /// `CcParams::sack`.
    sack: bool,
    /// `CcParams::prr`.
    prr: bool,
    /// RFC 6937: packets delivered to the receiver since recovery started (`prr_delivered`),
    /// packets sent since (`prr_out`), and the flight when it started (`RecoverFS`).
    prr_delivered: u32,
    prr_out: u32,
    recover_fs: u32,
    /// RFC 6675's DupThresh (`CcParams::dupack_threshold`).
    dupthresh: u32,
    /// The least window it sends with: 1 packet, or 0 when DCTCP's cut may leave less than
    /// one packet (`CcParams::dctcp_min_cwnd` below 1, ns-3's `TcpDctcp`).
    min_window: f64,
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
            sacked: Vec::new(),
            sack_seen: 0,
            high_sacked: 0,
            high_rxt: 0,
            pipe: 0,
            rto_recovery: false,
            sack: p.sack,
            prr: p.prr,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            dupthresh: p.dupack_threshold,
            min_window: if p.transport == Transport::Dctcp && p.dctcp_min_cwnd < 1.0 { 0.0 } else { 1.0 },
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

    /// The packets the window lets it have in flight: cwnd's whole packets, at least
    /// `min_window` (1, or 0 where DCTCP's cut may leave less than a packet).
    #[inline]
    fn window(&self) -> f64 {
        self.cwnd.floor().max(self.min_window)
    }

    /// Whether the window allows sending packet `snd_nxt` now (with limited transmit,
    /// a new segment may go up to 2 beyond the window after duplicate ACKs).
    #[inline]
    pub fn can_send(&self) -> bool {
        if self.sack {
            return self.sack_can_send();
        }
        let flight = (self.snd_nxt - self.snd_una) as f64;
        let window = self.window();
        self.snd_nxt < self.avail && (flight < window || (self.snd_nxt >= self.high && flight < window + self.lt_allowed as f64))
    }

    /// The next packet to send (`snd_nxt`, then advanced), once `can_send` allowed it;
    /// counts a limited-transmit segment. With SACK: the next packet not SACKed, or in
    /// fast recovery RFC 6675's NextSeg.
    #[inline]
    pub fn take_next(&mut self) -> u32 {
        if self.sack {
            return self.sack_take_next();
        }
        let seq = self.snd_nxt;
        if (seq - self.snd_una) as f64 >= self.window() {
            self.lt_sent += 1;
        }
        self.snd_nxt += 1;
        seq
    }

    /// Whether packet `s` is SACKed.
    #[inline]
    fn is_sacked(&self, s: u32) -> bool {
        let i = s as usize;
        !self.sacked.is_empty() && self.sacked[i / 64] >> (i % 64) & 1 == 1
    }

    /// The packets SACKed in [a, b).
    fn sacked_in(&self, a: u32, b: u32) -> u32 {
        let b = b.min(self.n);
        if self.sacked.is_empty() || a >= b {
            return 0;
        }
        let (a, b) = (a as usize, b as usize);
        let (wa, wb) = (a / 64, (b - 1) / 64);
        let mut c = 0;
        for w in wa..=wb {
            let mut x = self.sacked[w];
            if w == wa {
                x &= !0u64 << (a % 64);
            }
            if w == wb {
                let e = (b - 1) % 64 + 1;
                if e < 64 {
                    x &= (1u64 << e) - 1;
                }
            }
            c += x.count_ones();
        }
        c
    }

    /// The first packet in [a, b) not SACKed.
    fn first_unsacked(&self, a: u32, b: u32) -> Option<u32> {
        if self.sacked.is_empty() {
            return (a < b).then_some(a);
        }
        let mut i = a;
        while i < b {
            let off = i % 64;
            let run = (!(self.sacked[i as usize / 64] >> off)).trailing_zeros();
            if run < 64 - off {
                let s = i + run;
                return (s < b).then_some(s);
            }
            i += 64 - off;
        }
        None
    }

    /// `snd_nxt`, or past it the first packet below `high` not SACKed (a go-back-N after
    /// a timeout skips what the receiver holds).
    #[inline]
    fn skip_sacked(&self, s: u32) -> u32 {
        if s >= self.high || self.sacked.is_empty() {
            return s;
        }
        self.first_unsacked(s, self.high).unwrap_or(self.high)
    }

    /// The flight outside fast recovery: RFC 5681's FlightSize, less the packets SACKed
    /// below `snd_nxt` after a timeout (they are not sent again).
    #[inline]
    fn sack_flight(&self) -> f64 {
        let mut flight = self.snd_nxt - self.snd_una;
        if self.rto_recovery {
            flight -= self.sacked_in(self.snd_una, self.snd_nxt);
        }
        flight as f64
    }

    /// With SACK, the packets the sender reckons are in the network: in fast recovery RFC
    /// 6675's pipe (SetPipe: not SACKed and not lost, plus the retransmissions); outside it
    /// the packets sent (since the last timeout, while its recovery lasts) that are neither
    /// cumulatively acknowledged nor SACKed.
    fn sack_in_network(&mut self) -> f64 {
        if self.in_recovery {
            self.set_pipe();
            return self.pipe as f64;
        }
        (self.snd_nxt - self.snd_una - self.sacked_in(self.snd_una, self.snd_nxt)) as f64
    }

    fn sack_can_send(&self) -> bool {
        let window = self.window();
        if self.in_recovery {
            return (self.pipe as f64) < window && self.next_seg().is_some();
        }
        let nxt = self.skip_sacked(self.snd_nxt);
        let flight = self.sack_flight();
        nxt < self.avail && (flight < window || (nxt >= self.high && flight < window + self.lt_allowed as f64))
    }

    fn sack_take_next(&mut self) -> u32 {
        if self.in_recovery {
            let s = self.next_seg().unwrap_or(self.snd_nxt); // can_send found one
            if s < self.high {
                self.high_rxt = self.high_rxt.max(s + 1); // (C.3)
            } else {
                self.snd_nxt = s + 1;
            }
            self.pipe += 1; // (C.4)
            self.prr_out += 1;
            return s;
        }
        let seq = self.skip_sacked(self.snd_nxt);
        if self.sack_flight() >= self.window() {
            self.lt_sent += 1;
        }
        self.snd_nxt = seq + 1;
        seq
    }

    /// RFC 6675's NextSeg (rules 1 to 3) in fast recovery: the first hole at or past HighRxt
    /// below the highest SACKed packet if it is lost (IsLost: DupThresh packets SACKed
    /// above it), else new data, else that hole.
    fn next_seg(&self) -> Option<u32> {
        let from = self.high_rxt.max(self.snd_una);
        let hole = self.first_unsacked(from, self.high_sacked);
        if let Some(h) = hole {
            if self.sacked_in(h + 1, self.high) >= self.dupthresh {
                return Some(h); // rule 1
            }
        }
        let new = self.high.max(self.snd_nxt);
        if new < self.avail {
            return Some(new); // rule 2
        }
        hole // rule 3
    }

    /// RFC 6675's SetPipe: per packet from `snd_una` to `high` not SACKed, 1 unless it is
    /// lost (IsLost), and 1 more if it was retransmitted in this recovery (below HighRxt).
    fn set_pipe(&mut self) {
        let (mut pipe, mut above) = (0u32, 0u32);
        for s in (self.snd_una..self.high).rev() {
            if self.is_sacked(s) {
                above += 1;
                continue;
            }
            if above < self.dupthresh {
                pipe += 1;
            }
            if s < self.high_rxt {
                pipe += 1;
            }
        }
        self.pipe = pipe;
    }

    /// Reads the SACK information of ACK `a` (the receiver's log up to the length it
    /// carries) into the scoreboard; returns how many packets it SACKed that were not
    /// SACKed before (all at or past the cumulative ACK).
    fn read_sack(&mut self, a: &Packet, log: &[u32], ack: u32) -> u32 {
        let upto = (a.enq_tx as usize).min(log.len());
        if upto <= self.sack_seen as usize {
            return 0;
        }
        let floor = ack.max(self.snd_una);
        let mut new = 0;
        for &s in &log[self.sack_seen as usize..upto] {
            if s >= floor && s < self.n && !self.is_sacked(s) {
                if self.sacked.is_empty() {
                    self.sacked = vec![0u64; (self.n as usize).div_ceil(64)];
                }
                self.sacked[s as usize / 64] |= 1 << (s % 64);
                self.high_sacked = self.high_sacked.max(s + 1);
                new += 1;
            }
        }
        self.sack_seen = upto as u32;
        new
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

    /// An ACK arrives at `now`; `sack_log` is its receiver's log of out-of-order packets
    /// (`Receiver::sack_log`, read with SACK only).
    pub fn on_ack(&mut self, a: &Packet, now: u64, p: &CcParams, sack_log: &[u32]) -> Action {
        let mut act = Action::default();
        let ack = a.seq.min(self.n);
        let new_sack = if self.sack { self.read_sack(a, sack_log, ack) } else { 0 };
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
            if self.rto_recovery && ack >= self.recover {
                self.rto_recovery = false;
            }
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
            let may_grow = if p.transport == Transport::Dctcp && p.dctcp_cwr_hold {
                if ece {
                    self.dctcp_cut(p);
                }
                may_grow && !self.cwr_end.is_some_and(|e| ack <= e)
            } else {
                may_grow
            };
            match p.transport {
                Transport::PFabric if may_grow => self.grow(1, p),
                Transport::PFabric => {}
                Transport::Rcp | Transport::Racs => {} // paced at the routers' rate: no window, no fast recovery (rate.rs)
                _ if self.sack => {
                    if self.in_recovery {
                        if ack >= self.recover {
                            // RFC 6675 (A): recovery ends; RFC 5681 3.2 step 6
                            self.cwnd = self.ssthresh;
                            self.in_recovery = false;
                            self.dupacks = 0;
                        } else {
                            // (B); `newly` less what was SACKed before, plus the new SACKs
                            let old_una = ack - newly;
                            let delivered = newly - self.sacked_in(old_una, ack) + new_sack;
                            self.recovery_ack(delivered);
                        }
                    } else {
                        self.dupacks = 0;
                        if may_grow {
                            self.grow(newly, p);
                        }
                    }
                }
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
                self.sacked = Vec::new();
            } else if !(self.in_recovery && act.retransmit.is_some() && self.partial_seen) || self.timer_ps == u64::MAX {
                self.timer_ps = now + self.rto_ps(p); // 5.3
            }
            if p.transport == Transport::Dctcp && ece && !p.dctcp_cwr_hold {
                self.dctcp_cut(p);
            }
            return act;
        }
        // no new data acknowledged
        if p.transport == Transport::Dctcp && ece && !p.dctcp_ignore_dupack_ece {
            self.dctcp_cut(p);
        }
        if matches!(p.transport, Transport::PFabric | Transport::Rcp | Transport::Racs) || ack < self.snd_una || self.snd_nxt == self.snd_una {
            return act; // pFabric, RCP: no fast retransmit; an old or idle ACK
        }
        if self.sack {
            return self.sack_dupack(new_sack, ack, p, act);
        }
        self.dupacks += 1;
        if self.in_recovery {
            self.cwnd += 1.0; // RFC 6582 step 2 / RFC 5681: inflate
        } else if self.dupacks == p.dupack_threshold && ack >= self.recover {
            // fast retransmit (RFC 6582 3.2 step 1; a threshold of 0 never gets here)
            self.enter_fast_recovery(&mut act);
            // step 3: inflated by the segments the duplicate ACKs say have left (3 by default)
            self.cwnd = self.ssthresh + p.dupack_threshold as f64;
            self.partial_seen = false;
        } else if self.dupacks <= 2 {
            if p.limited_transmit {
                self.lt_allowed = self.dupacks; // RFC 3042: one new segment per duplicate ACK
            }
        }
        act
    }

    /// Fast retransmit, with or without SACK: ssthresh = max(FlightSize / 2, 2) with the
    /// segments of limited transmit left out of FlightSize (RFC 5681 3.2 step 2), recovery
    /// until `recover` = the highest packet sent (RFC 6582's recover, RFC 6675's
    /// RecoveryPoint), and the first unacknowledged packet sent again. The caller sets cwnd.
    fn enter_fast_recovery(&mut self, act: &mut Action) {
        let flight = (self.snd_nxt - self.snd_una - self.lt_sent) as f64;
        self.lt_allowed = 0;
        self.lt_sent = 0;
        self.ssthresh = (flight / 2.0).max(2.0);
        self.recover = self.high;
        self.in_recovery = true;
        act.retransmit = Some(self.snd_una);
        act.fast_retransmit = true;
    }

    /// An ACK that acknowledges no new data, with SACK: a duplicate ACK if it SACKs new
    /// data (RFC 6675 section 2); fast recovery starts at DupThresh of them or when the
    /// first unacknowledged packet is lost (IsLost), steps (4.1) to (4.4).
    fn sack_dupack(&mut self, new_sack: u32, ack: u32, p: &CcParams, mut act: Action) -> Action {
        if new_sack == 0 {
            return act;
        }
        self.dupacks += 1;
        if self.in_recovery {
            self.recovery_ack(new_sack); // (B)
            return act;
        }
        let t = p.dupack_threshold;
        if t > 0 && ack >= self.recover && (self.dupacks >= t || self.sacked_in(self.snd_una + 1, self.high) >= t) {
            self.enter_fast_recovery(&mut act); // (4.1), (4.2), the retransmission of (4.3)
            self.cwnd = self.ssthresh; // (4.2): ssthresh = cwnd = FlightSize / 2
            self.high_rxt = self.snd_una + 1; // (4.3)
            self.set_pipe(); // (4.4)
            if self.prr {
                // RFC 6937: the retransmission is the first packet sent in recovery
                self.recover_fs = self.snd_nxt - self.snd_una;
                (self.prr_delivered, self.prr_out) = (new_sack, 1);
                self.prr_window(new_sack);
            }
        } else if self.dupacks <= 2 && p.limited_transmit {
            self.lt_allowed = self.dupacks;
        }
        act
    }

    /// An ACK in fast recovery that delivered `delivered` packets (newly acknowledged or
    /// SACKed): SetPipe, and with PRR the window for this ACK.
    fn recovery_ack(&mut self, delivered: u32) {
        self.set_pipe();
        if self.prr {
            self.prr_delivered += delivered;
            self.prr_window(delivered);
        }
    }

    /// RFC 6937 on an ACK that delivered `delivered` packets: while pipe is above ssthresh,
    /// send ceil(prr_delivered ssthresh / RecoverFS) - prr_out (the proportional part);
    /// else up to ssthresh - pipe, at most what was delivered and not yet sent again plus
    /// one (slow start reduction bound, PRR-SSRB); cwnd = pipe + that.
    fn prr_window(&mut self, delivered: u32) {
        let pipe = self.pipe as f64;
        let sndcnt = if pipe > self.ssthresh {
            (self.prr_delivered as f64 * self.ssthresh / self.recover_fs.max(1) as f64).ceil() - self.prr_out as f64
        } else {
            let limit = (self.prr_delivered as f64 - self.prr_out as f64).max(delivered as f64) + 1.0;
            (self.ssthresh - pipe).min(limit)
        };
        self.cwnd = pipe + sndcnt.max(0.0);
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
    /// (not during loss recovery, which already cut it), at least `dctcp_min_cwnd`.
    fn dctcp_cut(&mut self, p: &CcParams) {
        if self.in_recovery {
            return;
        }
        if let Some(end) = self.cwr_end {
            if self.snd_una <= end {
                return;
            }
        }
        self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(p.dctcp_min_cwnd);
        self.ssthresh = self.cwnd;
        self.cwr_end = Some(self.snd_nxt.max(self.snd_una));
    }

    /// The retransmission timer fired at `now` (RFC 6298 5.4-5.6, RFC 5681 eq. 4, RFC 6582:
    /// record `recover`, leave fast recovery; pFabric: ssthresh = cwnd / 2, window 1).
    ///
    /// RFC 5681 section 3.1: ssthresh = max(FlightSize / 2, 2) when the first unacknowledged
    /// packet has not yet been retransmitted by the timer; when it has (a second timeout with
    /// no new data acknowledged in between), ssthresh is held constant. With SACK, FlightSize
    /// is what the scoreboard says is still in the network (`sack_in_network`), as ns-3
    /// (its BytesInFlight); the packets sent and not yet cumulatively acknowledged, which
    /// include the SACKed and the lost ones, set ssthresh after a timeout in fast recovery
    /// to several times the window the recovery had cut to, and the next slow start
    /// overshot into the same full queue.
    pub fn on_timeout(&mut self, now: u64, p: &CcParams) {
        match p.transport {
            Transport::PFabric => self.ssthresh = (self.cwnd / 2.0).max(2.0),
            _ if self.consecutive_timeouts == 0 => {
                let flight = if self.sack { self.sack_in_network() } else { (self.snd_nxt - self.snd_una) as f64 };
                self.ssthresh = (flight / 2.0).max(2.0);
            }
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
        if self.sack {
            // RFC 6675 5.1: recovery ends, RecoveryPoint = HighData (`recover` above); the
            // scoreboard is kept (module doc)
            self.rto_recovery = true;
            self.high_rxt = self.snd_una;
            self.pipe = 0;
        }
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
    /// With SACK: log the out-of-order packets in `sack_log`.
    pub sack: bool,
    /// With SACK: every out-of-order packet held, in the order they arrived. An ACK
    /// carries the log's length when it was sent, and so reports every block the receiver
    /// held then (module doc).
    pub sack_log: Vec<u32>,
}

impl Receiver {
    /// A receiver; with `sack`, it logs its out-of-order packets for SACK.
    pub fn new(sack: bool) -> Self {
        Receiver { sack, ..Receiver::default() }
    }

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
            if self.sack {
                self.sack_log.push(seq);
            }
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
        CcParams { transport: t, init_cwnd: 10.0, max_cwnd: f64::INFINITY, min_rto_ps: 1_000_000_000, max_rto_ps: MAX_RTO_PS, pfabric_rto_rtts: 0.0, dctcp_g: DCTCP_G, dctcp_alpha_init: 1.0, dctcp_min_cwnd: 2.0, dctcp_cwr_hold: false, dctcp_ignore_dupack_ece: false, clock_g_ps: G_MIN_PS, dupack_threshold: 3, limited_transmit: false, count_acked_segments: false, fixed_rto: false, sack: false, prr: false }
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
            s.on_ack(&ack(a, 0), 100, &p, &[]);
        }
        assert_eq!(s.cwnd, 20.0);
        s.ssthresh = 20.0;
        s.snd_nxt = 30;
        s.high = 30;
        s.on_ack(&ack(11, 0), 200, &p, &[]);
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
            s.on_ack(&ack(4, 0), 100, &p, &[]);
            s.on_ack(&ack(8, 0), 101, &p, &[]);
            assert!((s.cwnd - after_ss).abs() < 1e-12, "{count}: {}", s.cwnd);
            // 4 more segments: 2 of slow start to ssthresh 20, then 2 in congestion avoidance
            s.cwnd = if count { 18.0 } else { 20.0 };
            s.snd_nxt = 40;
            s.high = 40;
            s.on_ack(&ack(12, 0), 102, &p, &[]);
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
        assert_eq!(s.on_ack(&ack(0, 0), 1, &p, &[]), Action::default());
        assert_eq!(s.on_ack(&ack(0, 0), 2, &p, &[]), Action::default());
        let a = s.on_ack(&ack(0, 0), 3, &p, &[]);
        assert_eq!(a.retransmit, Some(0));
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh, 5.0);
        assert_eq!(s.cwnd, 8.0);
        s.on_ack(&ack(0, 0), 4, &p, &[]);
        assert_eq!(s.cwnd, 9.0);
        // partial ACK up to 5 (packet 5 was lost too): retransmit 5, deflate by 5, add 1
        let a = s.on_ack(&ack(5, RETX), 5, &p, &[]);
        assert_eq!(a.retransmit, Some(5));
        assert_eq!(s.cwnd, 5.0);
        // full ACK: leave recovery with cwnd = min(ssthresh, flight + 1)
        s.on_ack(&ack(10, RETX), 6, &p, &[]);
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
                assert_eq!(s.on_ack(&ack(0, 0), k as u64, &p, &[]), Action::default());
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
            let a = s.on_ack(&ack(0, 0), 3, &p, &[]);
            assert_eq!(a.retransmit, Some(0));
            assert_eq!(s.ssthresh, 5.0);
            assert_eq!(s.cwnd, 8.0);
            assert_eq!(s.snd_nxt, if lt { 12 } else { 10 });
            // a fourth duplicate ACK inflates (RFC 6582), no limited transmit in recovery
            s.on_ack(&ack(0, 0), 4, &p, &[]);
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
        s.on_ack(&ack(1, 0), 5_000_000_000, &p, &[]); // a 5 ms sample (tx_ps 0)
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
        s.on_ack(&ack(1, RETX), 10, &p, &[]);
        assert_eq!(s.rto_ps(&p), 4_000_000_000);
        s.snd_nxt = 5;
        s.on_ack(&ack(2, 0), 10, &p, &[]);
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
            s.on_ack(&ack(1, RETX), 10, &p, &[]);
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
        s.on_ack(&ack(1, ECE), 1, &p, &[]);
        assert_eq!(s.alpha, 1.0);
        let c = s.cwnd;
        assert!((c - 5.05).abs() < 1e-12, "{c}"); // 10 + 1/10 (AI), then cut by alpha/2 = 1/2
        s.on_ack(&ack(2, ECE), 2, &p, &[]);
        assert!(s.cwnd >= c, "cut at most once per window");
        // the next window ends when snd_una passes 10: acks 2..=11, one of ten marked
        s.snd_nxt = 40;
        s.high = 40;
        for a in 3..=11 {
            s.on_ack(&ack(a, 0), 3, &p, &[]);
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
        s.on_ack(&ack(1, ECE), 1, &p, &[]);
        assert_eq!(s.alpha, 1.0 / 16.0);
        assert!((s.cwnd - 10.1 * (1.0 - 1.0 / 32.0)).abs() < 1e-12, "{}", s.cwnd);
        // the default (1, Linux and ns-3) halves it
        let q = params(Transport::Dctcp);
        let mut t = Sender::new(1000, &q, 10_000);
        (t.snd_nxt, t.high, t.cwnd, t.ssthresh) = (10, 10, 10.0, 10.0);
        t.on_ack(&ack(1, ECE), 1, &q, &[]);
        assert!((t.cwnd - 5.05).abs() < 1e-12, "{}", t.cwnd);
    }

    #[test]
    fn dctcp_cut_without_a_floor_leaves_less_than_a_packet_and_waits_for_the_timer() {
        // ns-3's TcpDctcp: ssthresh = (1 - alpha/2) cwnd with no floor, and no growth on the
        // echo's ACK (CA_CWR). One packet in flight, cwnd 1.8, alpha 1: the echo that
        // acknowledges it halves the window to 0.9 (Linux, the default floor: 2)
        let run = |floor: f64| {
            let p = CcParams { dctcp_min_cwnd: floor, dctcp_cwr_hold: true, ..params(Transport::Dctcp) };
            let mut s = Sender::new(1000, &p, 10_000);
            (s.snd_nxt, s.high, s.cwnd, s.ssthresh) = (5, 5, 1.8, 1.0);
            s.snd_una = 4;
            s.win_end = 5;
            s.on_send(0, &p);
            s.on_ack(&ack(5, ECE), 1_000, &p, &[]);
            (s, p)
        };
        let (s, _) = run(2.0);
        assert_eq!(s.cwnd, 2.0);
        assert!(s.can_send());
        let (mut s, p) = run(0.0);
        assert!((s.cwnd - 0.9).abs() < 1e-12, "{}", s.cwnd);
        // nothing in flight, a window under one packet: it sends nothing, and its timer
        // (restarted by the ACK, RFC 6298 5.3) is what moves it on
        assert_eq!(s.snd_nxt, s.snd_una);
        assert!(!s.can_send());
        assert!(s.timer_ps < u64::MAX);
        s.on_timeout(s.timer_ps, &p);
        assert_eq!(s.cwnd, 1.0);
        assert!(s.can_send());
        // a floor at 1 keeps a packet's window
        let (s, _) = run(1.0);
        assert_eq!(s.cwnd, 1.0);
        assert!(s.can_send());
    }

    #[test]
    fn dctcp_hold_in_cwr_cuts_first_and_does_not_grow_until_the_window_is_acknowledged() {
        let hold = CcParams { dctcp_cwr_hold: true, ..params(Transport::Dctcp) };
        let run = |p: &CcParams| {
            let mut s = Sender::new(1000, p, 10_000);
            (s.snd_nxt, s.high, s.cwnd, s.ssthresh) = (10, 10, 10.0, 10.0);
            s.on_ack(&ack(1, ECE), 1, p, &[]);
            let cut = s.cwnd;
            // the rest of the window at the cut (packets up to 10), unmarked
            for a in 2..=10 {
                s.on_ack(&ack(a, 0), 2, p, &[]);
            }
            let held = s.cwnd;
            s.on_ack(&ack(11, 0), 3, p, &[]); // past the cut's window: growth again
            (cut, held, s.cwnd)
        };
        let (cut, held, after) = run(&hold);
        assert_eq!((cut, held), (5.0, 5.0)); // halved without the ACK's growth first, then held
        assert!((after - 5.2).abs() < 1e-12, "{after}"); // congestion avoidance: + 1/5
        // off (the earlier rule; PacketConfig holds by default, these unit params do not): 10 + 1/10,
        // then the cut, then additive increase on every ACK
        let (cut, held, _) = run(&params(Transport::Dctcp));
        assert!((cut - 5.05).abs() < 1e-12, "{cut}");
        assert!(held > cut + 1.5, "{held}");
    }

    #[test]
    fn dctcp_ignore_dupack_ece_cuts_only_on_acks_of_new_data_as_ns3() {
        let run = |ignore: bool| {
            let p = CcParams { dctcp_ignore_dupack_ece: ignore, ..params(Transport::Dctcp) };
            let mut s = Sender::new(1000, &p, 10_000);
            (s.snd_nxt, s.high, s.cwnd, s.ssthresh) = (10, 10, 10.0, 10.0);
            s.snd_una = 1;
            s.on_ack(&ack(1, ECE), 1, &p, &[]); // a duplicate ACK (reordering) with an echo
            let after_dup = s.cwnd;
            s.on_ack(&ack(2, ECE), 2, &p, &[]); // new data, with an echo
            (after_dup, s.cwnd)
        };
        let (dup, _) = run(false);
        assert_eq!(dup, 5.0); // the default: the duplicate's echo halves it (alpha 1)
        let (dup, new) = run(true);
        assert_eq!(dup, 10.0); // ns-3: ignored
        assert!((new - 5.05).abs() < 1e-12, "{new}"); // the next ACK of new data cuts: 10 + 1/10, halved
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
            s.on_ack(&a, 1_000, &p, &[]);
            s.cwnd
        };
        // the echo of a packet sent before: no cut (10 + 1/10, congestion avoidance)
        assert_eq!(run(400), 10.1);
        // after: DCTCP's cut (alpha 1: by half)
        assert!((run(600) - 5.05).abs() < 1e-12);
    }

    /// An ACK of `seq` that carries a SACK log of length `log`.
    fn sack_ack(seq: u32, log: u32) -> Packet {
        Packet { enq_tx: log, ..ack(seq, 0) }
    }

    #[test]
    fn sack_recovers_two_losses_of_a_window_without_a_partial_ack_rfc6675() {
        // packets 0..10 sent with cwnd 10; 0 and 5 lost; 1-4 and 6-9 arrive, each SACKed
        let p = CcParams { sack: true, ..params(Transport::Tcp) };
        let mut s = Sender::new(100, &p, 10_000);
        let sent: Vec<u32> = std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect();
        assert_eq!(sent, (0..10).collect::<Vec<_>>());
        s.high = 10;
        let log = [1u32, 2, 3, 4, 6, 7, 8, 9];
        // two duplicate ACKs (each SACKs new data): nothing yet
        for k in 1..=2u32 {
            assert_eq!(s.on_ack(&sack_ack(0, k), k as u64, &p, &log), Action::default());
        }
        // an ACK that SACKs nothing new is not a duplicate ACK (RFC 6675 section 2)
        assert_eq!(s.on_ack(&sack_ack(0, 2), 3, &p, &log), Action::default());
        // the third: recovery, ssthresh = cwnd = FlightSize / 2, packet 0 again
        let a = s.on_ack(&sack_ack(0, 3), 4, &p, &log);
        assert_eq!(a, Action { retransmit: Some(0), fast_retransmit: true });
        assert!(s.in_recovery);
        assert_eq!((s.ssthresh, s.cwnd), (5.0, 5.0));
        // pipe: 4..=9 not lost (fewer than 3 SACKed above) + packet 0 retransmitted
        assert_eq!(s.pipe, 7);
        assert!(!s.can_send());
        // 4, 6, 7 SACKed: pipe 4 (5, 8, 9, and 0 again): one new packet (NextSeg rule 2: 5
        // is not lost yet, 2 SACKed above it)
        for k in 4..=6u32 {
            s.on_ack(&sack_ack(0, k), 4 + k as u64, &p, &log);
        }
        assert_eq!(s.pipe, 4);
        assert!(s.can_send());
        assert_eq!(s.take_next(), 10);
        s.high = 11;
        assert!(!s.can_send());
        // 8 SACKed: 5 is lost now (3 SACKed above): NextSeg rule 1 sends it, without the
        // partial ACK NewReno would wait for; then new data
        s.on_ack(&sack_ack(0, 7), 20, &p, &log);
        assert_eq!(s.pipe, 3);
        assert_eq!(s.take_next(), 5);
        assert_eq!(s.high_rxt, 6);
        assert_eq!(s.take_next(), 11);
        s.high = 12;
        assert!(!s.can_send());
        // the ACK of 0's copy (cumulative 5, partial): still in recovery; then the ACK of
        // 5's copy covers RecoveryPoint (10): recovery ends with cwnd = ssthresh
        s.on_ack(&sack_ack(5, 8), 30, &p, &log);
        assert!(s.in_recovery);
        s.on_ack(&sack_ack(10, 8), 31, &p, &log);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 5.0);
        assert_eq!(s.snd_una, 10);
    }

    #[test]
    fn prr_spreads_the_window_reduction_over_the_recovery_rfc6937() {
        // 20 packets sent with cwnd 20, packet 0 lost, 1..=19 arrive: 19 duplicate ACKs that
        // each SACK one packet; recovery starts at the third. After the k-th, the packets
        // sent in recovery so far (the fast retransmission included): PRR sends
        // ceil(prr_delivered * ssthresh / RecoverFS) = ceil((k - 2) / 2) while pipe (19 - k +
        // sent) is above ssthresh = 10, then one per packet delivered, holding pipe at
        // ssthresh (PRR-SSRB); RFC 6675 sends nothing until pipe falls below cwnd = ssthresh,
        // then one per ACK. Both have sent 10 by the end.
        let run = |prr: bool| -> Vec<u32> {
            let p = CcParams { sack: true, prr, init_cwnd: 20.0, ..params(Transport::Tcp) };
            let mut s = Sender::new(1000, &p, 10_000);
            while s.can_send() {
                s.take_next();
            }
            s.high = 20;
            let log: Vec<u32> = (1..20).collect();
            let mut sent = 0u32;
            let mut out = Vec::new();
            for k in 1..=19u32 {
                let a = s.on_ack(&sack_ack(0, k), k as u64, &p, &log);
                if a.retransmit.is_some() {
                    sent += 1;
                }
                while s.can_send() {
                    let q = s.take_next();
                    if q >= s.high {
                        s.high = q + 1;
                    }
                    sent += 1;
                }
                if k >= 3 {
                    out.push(sent);
                }
            }
            assert!(s.in_recovery);
            assert_eq!(s.ssthresh, 10.0);
            out
        };
        let prr: Vec<u32> = (3..=19).map(|k: u32| if k <= 14 { (k - 2).div_ceil(2) } else { k - 9 }).collect();
        assert_eq!(run(true), prr);
        let rfc6675: Vec<u32> = (3..=19).map(|k: u32| 1 + k.saturating_sub(10)).collect();
        assert_eq!(run(false), rfc6675);
    }

    #[test]
    fn sack_after_a_timeout_sends_only_what_the_receiver_lacks() {
        // 0..10 sent; 0, 3 and 7 lost; the others SACKed; no fast retransmit (DupThresh 0,
        // as under packet spraying): the timer fires
        for t in [Transport::Tcp, Transport::PFabric] {
            let p = CcParams { sack: true, dupack_threshold: 0, ..params(t) };
            let mut s = Sender::new(100, &p, 10_000);
            while s.can_send() {
                s.take_next();
            }
            s.high = 10;
            let log = [1u32, 2, 4, 5, 6, 8, 9];
            for k in 1..=7u32 {
                assert_eq!(s.on_ack(&sack_ack(0, k), k as u64, &p, &log), Action::default());
            }
            s.on_timeout(100, &p);
            // TCP: ssthresh from the 3 packets not SACKed (pFabric: cwnd / 2)
            let ssthresh = if t == Transport::Tcp { 2.0 } else { 5.0 };
            assert_eq!((s.cwnd, s.ssthresh), (1.0, ssthresh), "{t:?}");
            // window 1: packet 0 only
            assert_eq!(std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect::<Vec<_>>(), vec![0]);
            // its ACK (cumulative 3): the window grows to 2 and the holes 3 and 7 go, not
            // 4-6 (SACKed); the flight leaves those out
            s.on_ack(&sack_ack(3, 7), 200, &p, &log);
            assert_eq!(s.cwnd, 2.0);
            assert_eq!(std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect::<Vec<_>>(), vec![3, 7], "{t:?}");
            // both arrive: the cumulative ACK passes the highest packet sent at the timeout
            s.on_ack(&sack_ack(8, 7), 300, &p, &log);
            s.on_ack(&sack_ack(10, 7), 301, &p, &log);
            assert!(!s.rto_recovery);
            assert_eq!(s.snd_nxt, 10);
            assert_eq!(s.take_next(), 10, "{t:?}: new data after the holes");
        }
        // without SACK, the same timeout sends 4, 5, 6 again
        let p = CcParams { dupack_threshold: 0, ..params(Transport::Tcp) };
        let mut s = Sender::new(100, &p, 10_000);
        while s.can_send() {
            s.take_next();
        }
        s.high = 10;
        s.on_timeout(100, &p);
        s.take_next();
        s.on_ack(&ack(3, 0), 200, &p, &[]);
        assert_eq!(std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect::<Vec<_>>(), vec![3, 4]);
    }

    #[test]
    fn sack_timeout_in_recovery_sets_ssthresh_from_what_is_in_the_network() {
        // 0..20 sent with cwnd 20; the even packets lost, the odd ones SACKed
        let p = CcParams { sack: true, ..params(Transport::Tcp) };
        let mut s = Sender::new(100, &p, 10_000);
        s.cwnd = 20.0;
        let sent: Vec<u32> = std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect();
        assert_eq!(sent.len(), 20);
        s.high = 20;
        let log: Vec<u32> = (1..20).step_by(2).collect();
        for k in 1..=10u32 {
            s.on_ack(&sack_ack(0, k), k as u64, &p, &log);
        }
        assert!(s.in_recovery);
        assert_eq!((s.ssthresh, s.cwnd), (10.0, 10.0));
        // pipe: 16 and 18 (fewer than 3 SACKed above: not lost) and 0's copy; 7 more holes
        // go again (NextSeg rule 1), all of them lost too
        assert_eq!(s.pipe, 3);
        let again: Vec<u32> = std::iter::from_fn(|| s.can_send().then(|| s.take_next())).collect();
        assert_eq!(again, vec![2, 4, 6, 8, 10, 12, 14]);
        // the timer fires: 10 packets in the network (16, 18 and 8 copies), not the 20
        // sent and not cumulatively acknowledged
        s.on_timeout(100, &p);
        assert_eq!((s.ssthresh, s.cwnd), (5.0, 1.0));
        // without SACK the same timeout takes FlightSize as RFC 5681 counts it
        let p = params(Transport::Tcp);
        let mut s = Sender::new(100, &p, 10_000);
        s.cwnd = 20.0;
        while s.can_send() {
            s.take_next();
        }
        s.high = 20;
        s.on_timeout(100, &p);
        assert_eq!(s.ssthresh, 10.0);
    }

    #[test]
    fn scoreboard_counts_and_holes() {
        let p = CcParams { sack: true, ..params(Transport::Tcp) };
        let mut s = Sender::new(300, &p, 10_000);
        s.high = 300;
        s.snd_nxt = 300;
        let log: Vec<u32> = (0..300).filter(|i| i % 3 != 0 && *i != 130).collect();
        s.on_ack(&sack_ack(0, log.len() as u32), 1, &p, &log);
        for (a, b) in [(0, 300), (1, 2), (60, 200), (63, 65), (0, 64), (64, 128), (127, 131), (299, 300)] {
            let want = (a..b).filter(|i| log.contains(i)).count() as u32;
            assert_eq!(s.sacked_in(a, b), want, "[{a}, {b})");
        }
        assert_eq!(s.first_unsacked(1, 300), Some(3));
        assert_eq!(s.first_unsacked(127, 300), Some(129));
        assert_eq!(s.first_unsacked(130, 300), Some(130));
        assert_eq!(s.first_unsacked(298, 299), None);
        assert_eq!(s.high_sacked, 300); // one past 299, the highest SACKed
        // an older ACK (a shorter log) adds nothing; entries below the cumulative ACK are not SACKs
        let mut r = Sender::new(10, &p, 10_000);
        (r.high, r.snd_nxt) = (10, 10);
        assert_eq!(r.read_sack(&sack_ack(0, 0), &[4, 5], 0), 0);
        assert_eq!(r.read_sack(&sack_ack(5, 2), &[4, 6], 5), 1);
        assert!(!r.is_sacked(4) && r.is_sacked(6));
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
