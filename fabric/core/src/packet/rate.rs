//! Transports with router feedback: RCP (Dukkipati's Rate Control Protocol), the baseline of
//! Munir's thesis (shared/papers/003, chapter 4), and the thesis' SDC (chapter 3; at the end
//! of this comment).
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
//! The feedback travels in the packet's `prio` field (the FIFO queues of `ps` and `sdc` do not
//! read it): the rate as an f32 of bytes/s in the upper 32 bits, the sender's RTT estimate in ns
//! (saturating) in the lower 32.
//!
//! **SDC** (Munir, chapter 3). Routers: every port computes, at the end of each measurement
//! interval t_p, the load factor f = (lambda + q_av) / (C t_p) (eq. 3.4: lambda the bytes
//! arrived in the interval, q_av the time-average of the bytes waiting over it), with t_p the
//! port's average RTT d as for RCP (the thesis gives no value; RACS sets t_p = avgRTT, 4.2), and
//! counts the active flows of each class (a flow counts at every port of its path, in the class
//! of its size, from its start to its end: the thesis' SYN increments and FIN decrements, taken
//! as instant and lossless). A data packet carries the largest f and the highest active class
//! (A before B before C) of the ports it leaves; the ACK echoes them. Sender: TCP's (NewReno's
//! loss recovery and RFC 6298 timer, the receiver unchanged, 3.2.3) with the window law of
//! 3.2.1: class A, B or C by remaining size (r_A = 50, r_B = 100 packets, 3.4.5), mapped
//! dynamically (the flow's class uses class A's parameters when it is the highest active one
//! its ACK reports, its own otherwise: the three rules of 3.2.1); multiplicative increase
//! cwnd (1 + gamma) per RTT until the first overload (while cwnd < ssthresh, which starts
//! unbounded; a loss sets it as NewReno does), then additive increase alpha per RTT while
//! f < 1, and on f >= 1 cwnd = beta cwnd at once (eq. 3.3), at most once per window of data.
//! Parameters: class C (alpha, beta) = (0.5, 0.5) and the gains G_AC = 10, G_BC = 2 of eq.
//! 3.18 (Tables 3.2-3.3, section 3.4.5); alpha_A = alpha_B = 0.9 (assumed: alpha < 1, 3.3,
//! and the same alpha for A and B, footnote 1 of 3.4.5), beta_A, beta_B from the gains;
//! gamma = 1 for every class (assumed: the thesis gives no value; TCP's slow-start doubling).
//! SDC's packets carry f as an f32 in the upper 32 bits, the class (0 A, 1 B, 2 C, 3 none) in
//! bits 30-31 and the RTT in ns in bits 0-29.
//!
//! **RACS** (Munir, chapter 4). A flow's weight is w = w_min + w_max exp(-a f_r) (eq. 4.1, f_r
//! its remaining bytes; w_min 1, w_max 100, a 1e-5 per byte: the fluid `racs` defaults, the
//! thesis gives none), carried as u16 in units of 1/256 so that the routers' sums stay exact.
//! The sender opens with its SYN, a header-only rate request with w_p = 0 and w_c its weight,
//! then on the SYN-ACK a second header-only request (w_p = w_c), and starts its data at the
//! rate that request's answer brings (4.2: admitted first, then given a rate; one extra RTT).
//! Then it paces as RCP's sender, and once per transmission round (its SRTT) its next new data
//! packet carries a rate request (RR flag, w_p the last w_c, w_c for its remaining size); its
//! last packet carries w_c = 0 (the thesis' FIN). Every port keeps W (eq. 4.3: W += w_c - w_p per
//! request) and answers a request with min(carried, w_c C / W) (eq. 4.2), W the larger of its
//! value at the last interval's end and now (the slotted allocation of 4.2; the interval is the
//! port's average RTT, from the RTTs the other data packets carry). ACKs echo the latest answer.
//! Loss recovery as RCP's. A request lost before a port leaves that port's W off (the thesis'
//! design has no per-flow state to correct it).
use super::port::{Packet, ACK, RR, SYN};
use super::{PacketSimulator, Transport};

/// RACS's weight w = w_min + w_max exp(-a f_r) (eq. 4.1): flowsched's fluid `racs` defaults
/// (the thesis gives no values), f_r the remaining bytes.
pub const RACS_W_MIN: f64 = 1.0;
pub const RACS_W_MAX: f64 = 100.0;
pub const RACS_A_PER_BYTE: f64 = 1e-5;
/// Weights travel as u16 in units of 1/256 (so that the routers' sums of w_c - w_p are exact).
pub const RACS_W_SCALE: f64 = 256.0;

/// RACS's weight of a flow with `remaining` bytes, in units of 1/256 (at least 1).
pub fn racs_weight(remaining: u64) -> u64 {
    let w = RACS_W_MIN + RACS_W_MAX * (-RACS_A_PER_BYTE * remaining as f64).exp();
    ((w * RACS_W_SCALE).round() as u64).clamp(1, u16::MAX as u64)
}

/// SDC's class thresholds, packets of remaining size (Munir 3.4.5: d_a = 50, d_b = 100).
pub const SDC_THRESHOLDS_PACKETS: [u64; 2] = [50, 100];
/// SDC's class C (alpha, beta) (Tables 3.2-3.3) and the gains G_AC, G_BC (3.4.5).
pub const SDC_C: (f64, f64) = (0.5, 0.5);
pub const SDC_GAINS: (f64, f64) = (10.0, 2.0);
/// SDC's alpha of classes A and B (assumed: < 1, and shared by A and B).
pub const SDC_ALPHA_AB: f64 = 0.9;
/// SDC's gamma (multiplicative increase per RTT), every class (assumed).
pub const SDC_GAMMA: f64 = 1.0;

/// SDC's (gamma, alpha, beta) of classes A, B, C: beta_A and beta_B from eq. 3.18's gains over
/// class C, G = alpha_1 (1 - beta_2)(1 + beta_1) / (alpha_2 (1 - beta_1)(1 + beta_2)).
pub fn sdc_params() -> [(f64, f64, f64); 3] {
    let (ac, bc) = SDC_C;
    let k = |g: f64| g * ac * (1.0 + bc) / ((1.0 - bc) * SDC_ALPHA_AB); // (1 + beta) / (1 - beta)
    let beta = |k: f64| (k - 1.0) / (k + 1.0);
    [
        (SDC_GAMMA, SDC_ALPHA_AB, beta(k(SDC_GAINS.0))),
        (SDC_GAMMA, SDC_ALPHA_AB, beta(k(SDC_GAINS.1))),
        (SDC_GAMMA, ac, bc),
    ]
}

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
    /// SDC: the load factor f of the last interval, the integral of the queue (byte-ps) at the
    /// interval's start, and the active flows per class.
    pub load: f64,
    area0: u128,
    pub classes: [u32; 3],
    /// RACS: the sum W of the weights of the flows crossing the port (units of 1/256), kept as
    /// eq. 4.3 says (W += w_c - w_p per rate request), and its value at the last interval's end.
    pub w_sum: u64,
    w_slot: u64,
}

impl Router {
    fn new(cap: f64) -> Self {
        Router {
            cap,
            rate: cap,
            d_ps: 0.0,
            next_ps: u64::MAX,
            start_ps: 0,
            bytes_in: 0,
            rtt_sum: 0.0,
            rtt_bytes: 0.0,
            updates: 0,
            load: 0.0,
            area0: 0,
            classes: [0; 3],
            w_sum: 0,
            w_slot: 0,
        }
    }

    /// The highest active class (0 A, 1 B, 2 C; 3 none).
    pub fn highest(&self) -> u64 {
        self.classes.iter().position(|&c| c > 0).unwrap_or(3) as u64
    }

    /// Ends every control interval that ended at or before `now` (q: bytes waiting, unchanged
    /// since the port's last packet; `area` and `area_ps`: the port's queue integral and when
    /// it was last brought up to date).
    fn catch_up(&mut self, now: u64, q: u64, area: u128, area_ps: u64) {
        while self.next_ps <= now {
            let t = self.next_ps;
            let len = (t - self.start_ps).max(1) as f64;
            let area_t = area + q as u128 * t.saturating_sub(area_ps) as u128;
            let q_av = area_t.saturating_sub(self.area0) as f64 / len;
            self.area0 = area_t;
            self.load = (self.bytes_in as f64 + q_av) / (self.cap * len * 1e-12);
            if self.rtt_bytes > 0.0 {
                self.d_ps = self.rtt_sum / self.rtt_bytes;
            }
            let d = self.d_ps.max(1.0);
            let y = self.bytes_in as f64 / len * 1e12;
            let qd = q as f64 / d * 1e12;
            let r = self.rate * (1.0 + (len / d) * (RCP_ALPHA * (self.cap - y) - RCP_BETA * qd) / self.cap);
            self.rate = r.clamp(self.cap * RCP_MIN_FRACTION, self.cap);
            self.updates += 1;
            self.w_slot = self.w_sum;
            let idle = self.bytes_in == 0 && q == 0 && self.rate == self.cap && self.load == 0.0;
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
                self.area0 = area + q as u128 * self.start_ps.saturating_sub(area_ps) as u128;
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
    /// Rcp or Sdc (unread when `routers` is empty).
    pub kind: Option<Transport>,
    pub routers: Vec<Router>,
    /// SDC, per flow: no further cut until the cumulative ACK passes this (the data sent in
    /// the RTT after the last cut); the last snd_una seen.
    cut_end: Vec<u32>,
    una: Vec<u32>,
    /// RACS, per flow: the weight of its last rate request, its phase (0: nothing sent, 1: its
    /// SYN sent, 2: its first rate request sent), and when its last rate request left.
    w: Vec<u64>,
    phase: Vec<u8>,
    last_rr_ps: Vec<u64>,
    pub pacers: Vec<Pacer>,
    /// Per flow: the feedback of the last data packet its receiver got (echoed on ACKs).
    echo: Vec<u64>,
}

impl RateState {
    /// RCP state for ports of these capacities (bytes/s) and `n` flows.
    pub fn rcp(caps: &[f64], n: usize) -> Self {
        RateState {
            kind: Some(Transport::Rcp),
            routers: caps.iter().map(|&c| Router::new(c)).collect(),
            pacers: vec![Pacer { rate: 0.0, last_ps: 0, last_bytes: 0, event_ps: u64::MAX }; n],
            echo: vec![0; n],
            cut_end: Vec::new(),
            una: Vec::new(),
            w: Vec::new(),
            phase: Vec::new(),
            last_rr_ps: Vec::new(),
        }
    }
    /// RACS state for ports of these capacities (bytes/s) and `n` flows.
    pub fn new_racs(caps: &[f64], n: usize) -> Self {
        let mut s = Self::rcp(caps, n);
        s.kind = Some(Transport::Racs);
        s.w = vec![0; n];
        s.phase = vec![0; n];
        s.last_rr_ps = vec![0; n];
        s
    }
    #[inline]
    fn is_racs(&self) -> bool {
        self.kind == Some(Transport::Racs)
    }
    /// SDC state for ports of these capacities (bytes/s) and `n` flows.
    pub fn new_sdc(caps: &[f64], n: usize) -> Self {
        RateState {
            kind: Some(Transport::Sdc),
            routers: caps.iter().map(|&c| Router::new(c)).collect(),
            pacers: Vec::new(),
            echo: vec![0; n],
            cut_end: vec![0; n],
            una: vec![0; n],
            w: Vec::new(),
            phase: Vec::new(),
            last_rr_ps: Vec::new(),
        }
    }
    #[inline]
    pub fn on(&self) -> bool {
        !self.routers.is_empty()
    }
    /// Whether the senders pace at a rate (RCP) instead of a window.
    #[inline]
    pub fn paced(&self) -> bool {
        !self.pacers.is_empty()
    }
    #[inline]
    fn is_sdc(&self) -> bool {
        self.kind == Some(Transport::Sdc)
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
/// SDC's field: f (f32) above, the class in bits 30-31, the RTT in ns in bits 0-29.
#[inline]
pub fn sdc_tag(f: f32, class: u64, rtt_ps: f64) -> u64 {
    let ns = (rtt_ps / 1000.0).round().clamp(0.0, ((1u64 << 30) - 1) as f64) as u64;
    (f.to_bits() as u64) << 32 | class << 30 | ns
}
#[inline]
pub fn sdc_class(t: u64) -> u64 {
    (t >> 30) & 3
}
#[inline]
pub fn sdc_rtt_ps(t: u64) -> f64 {
    (t & ((1 << 30) - 1)) as f64 * 1000.0
}

impl PacketSimulator {
    /// The field a SYN of flow f carries: as its data (RCP, SDC); RACS: its first rate request
    /// (w_p = 0, w_c of its size), or a repeat of it (w_p = w_c: its second request, or a
    /// retransmitted SYN).
    pub(super) fn rate_syn_tag(&mut self, f: usize) -> u64 {
        if !self.rate.is_racs() {
            return self.rate_tag(f);
        }
        let wc = racs_weight(self.flows[f].size);
        let wp = if self.rate.phase[f] == 0 { 0 } else { self.rate.w[f] };
        self.rate.phase[f] = self.rate.phase[f].max(1);
        self.rate.w[f] = wc;
        self.rate.last_rr_ps[f] = self.now;
        (f32::INFINITY.to_bits() as u64) << 32 | wc << 16 | wp
    }

    /// RACS: flow f's SYN-ACK answers its SYN (phase 1): it sends its first rate request (a
    /// header, as a SYN) and waits for that answer before any data (Munir 4.2). True when handled.
    pub(super) fn rate_synack(&mut self, f: usize) -> bool {
        if !self.rate.is_racs() || self.rate.phase[f] != 1 {
            return false;
        }
        self.rate.phase[f] = 2;
        self.send_syn(f);
        true
    }

    /// The field and flags of flow f's data packet `seq`: RCP and SDC as `rate_tag`; RACS: a rate
    /// request (RR, its weights) on the first packet sent a transmission round (the sender's
    /// SRTT) after the last one, and on the last packet (w_c = 0: the flow leaves, the thesis'
    /// FIN); other packets carry the RTT estimate.
    pub(super) fn rate_data_tag(&mut self, f: usize, seq: u32) -> (u64, u8) {
        if !self.rate.is_racs() {
            return (self.rate_tag(f), 0);
        }
        let s = &self.senders[f];
        let srtt = s.srtt_s() * 1e12;
        let fresh = seq >= s.high;
        let last = seq + 1 == self.flows[f].n;
        if fresh && (last || self.now as f64 >= self.rate.last_rr_ps[f] as f64 + srtt) {
            let rem = self.flows[f].size - (seq as u64 * self.mss).min(self.flows[f].size);
            let wc = if last { 0 } else { racs_weight(rem) };
            let wp = self.rate.w[f];
            self.rate.w[f] = wc;
            self.rate.last_rr_ps[f] = self.now;
            return ((f32::INFINITY.to_bits() as u64) << 32 | wc << 16 | wp, RR);
        }
        (tag(f32::INFINITY, srtt), 0)
    }

    /// The feedback field flow f's next data packet or SYN starts with: no rate limit, and its RTT estimate.
    pub(super) fn rate_tag(&self, f: usize) -> u64 {
        if !self.rate.on() {
            return 0;
        }
        if self.rate.is_sdc() {
            return sdc_tag(0.0, 3, self.senders[f].srtt_s() * 1e12);
        }
        tag(f32::INFINITY, self.senders[f].srtt_s() * 1e12)
    }

    /// SDC: a flow's class by remaining bytes (0 A, 1 B, 2 C).
    fn sdc_class_of(&self, remaining: u64) -> usize {
        let [a, b] = SDC_THRESHOLDS_PACKETS;
        if remaining <= a * self.mss {
            0
        } else if remaining <= b * self.mss {
            1
        } else {
            2
        }
    }

    /// SDC: flow f starts (+1) or ends (-1): its class count at every port of its path.
    pub(super) fn rate_flow(&mut self, f: usize, start: bool) {
        if !self.rate.is_sdc() {
            return;
        }
        let c = self.sdc_class_of(self.flows[f].size);
        let (a, b) = (self.route_off[f] as usize, self.route_off[f + 1] as usize);
        for i in a..b {
            let l = self.route[i] as usize;
            let k = &mut self.rate.routers[l].classes[c];
            *k = if start { *k + 1 } else { k.saturating_sub(1) };
        }
    }

    /// Port l: ends the control intervals due by now (before its queue changes).
    #[inline]
    pub(super) fn rate_tick(&mut self, l: usize) {
        if self.rate.on() {
            let p = &self.ports[l];
            let (q, area, at) = (p.queued_bytes, p.area, p.last_change_ps);
            self.rate.routers[l].catch_up(self.now, q, area, at);
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
        let carries_rtt = p.flags & ACK == 0 && !(self.rate.is_racs() && p.flags & (RR | SYN) != 0);
        let sdc = self.rate.is_sdc();
        let r = &mut self.rate.routers[l];
        r.bytes_in += p.wire_bytes as u64;
        if carries_rtt {
            let rtt = if sdc { sdc_rtt_ps(p.prio) } else { tag_rtt_ps(p.prio) };
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
        if self.rate.is_racs() {
            if p.flags & (RR | SYN) == 0 {
                return;
            }
            // a rate request: W += w_c - w_p (eq. 4.3), then R = w_c C / W (eq. 4.2), with W
            // the larger of the last interval's and the current sum
            let (wc, wp) = ((p.prio >> 16) & 0xFFFF, p.prio & 0xFFFF);
            let r = &mut self.rate.routers[l];
            r.w_sum = (r.w_sum + wc).saturating_sub(wp);
            if wc > 0 {
                let w = r.w_slot.max(r.w_sum).max(wc);
                let rate = (r.cap * wc as f64 / w as f64) as f32;
                if rate < tag_rate(p.prio) {
                    p.prio = (rate.to_bits() as u64) << 32 | (p.prio & 0xFFFF_FFFF);
                }
            }
            return;
        }
        if self.rate.is_sdc() {
            let r = &self.rate.routers[l];
            let f = tag_rate(p.prio).max(r.load as f32);
            let c = sdc_class(p.prio).min(r.highest());
            p.prio = (f.to_bits() as u64) << 32 | c << 30 | (p.prio & ((1 << 30) - 1));
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
        if self.rate.on() && !(self.rate.is_racs() && p.flags & RR == 0) {
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
        if self.rate.is_sdc() {
            return self.sdc_feedback(f, t);
        }
        let r = tag_rate(t) as f64;
        if r.is_finite() && r > 0.0 {
            self.rate.pacers[f].rate = r;
        }
    }

    /// SDC's window law on an ACK (after NewReno's bookkeeping): MI while cwnd < ssthresh, AI
    /// while f < 1, and on f >= 1 cwnd = beta cwnd once per overload (below); the class by
    /// remaining size, class A's parameters when it is the highest active class reported.
    ///
    /// Once per overload: a packet carries the f of its ports' last completed interval (t_p,
    /// the average RTT), so the ACKs of the window sent after a cut still report the intervals
    /// before it took effect. The thesis' analysis (3.3) backs off once per overload slot,
    /// informed one RTT after it; so after a cut the sender ignores f >= 1 until the ACK of the
    /// data it sends in the next RTT (one window at the new cwnd), whose f was measured after
    /// the cut. Cutting again on that stale f (once per window) held long-lived flows at 84-86%
    /// of a link's payload rate (Fig. 3.7: at least 95% of the link), now about 90%.
    fn sdc_feedback(&mut self, f: usize, t: u64) {
        let load = tag_rate(t) as f64;
        let h = sdc_class(t);
        let s = &self.senders[f];
        let newly = s.snd_una.saturating_sub(self.rate.una[f]);
        self.rate.una[f] = s.snd_una;
        let fl = &self.flows[f];
        let remaining = fl.size - (s.snd_una as u64 * self.mss).min(fl.size);
        let own = self.sdc_class_of(remaining);
        let eff = if own as u64 == h { 0 } else { own };
        let (gamma, alpha, beta) = sdc_params()[eff];
        let maxc = self.cc.max_cwnd;
        let s = &mut self.senders[f];
        if s.in_recovery || s.done() {
            return;
        }
        if load >= 1.0 {
            if s.snd_una >= self.rate.cut_end[f] {
                s.cwnd = (beta * s.cwnd).max(1.0);
                s.ssthresh = s.cwnd;
                self.rate.cut_end[f] = s.snd_nxt.saturating_add(s.cwnd as u32).max(s.snd_una + 1);
            }
        } else if newly > 0 {
            if s.cwnd < s.ssthresh {
                s.cwnd += gamma * newly as f64;
            } else {
                s.cwnd += alpha * newly as f64 / s.cwnd;
            }
            s.cwnd = s.cwnd.min(maxc);
        }
    }

    /// Flow f's sender sends what its rate allows now, and sets its pacing event for the next packet.
    pub(super) fn rate_send(&mut self, f: usize) {
        if self.terminated[f] || self.senders[f].done() {
            return;
        }
        loop {
            let s = &self.senders[f];
            if s.snd_nxt >= s.avail {
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
    /// Per port: RACS's sum of weights W now (units of 1/256; 0 once every flow has left).
    pub fn racs_weight_sums(&self) -> Vec<u64> {
        self.rate.routers.iter().map(|r| r.w_sum).collect()
    }
    /// Per flow: the rate its RCP sender paces at (bytes/s; 0 before the first feedback).
    pub fn rcp_flow_rates(&self) -> Vec<f64> {
        self.rate.pacers.iter().map(|p| p.rate).collect()
    }
}
