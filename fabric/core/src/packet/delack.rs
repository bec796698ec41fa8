//! When a receiver acknowledges, with delayed ACKs (`PacketConfig::ack_every_segments` > 1):
//! - RFC 1122 4.2.3.2 / RFC 5681 4.2: an ACK for every `every` full in-order segments, and
//!   a timer (`PacketConfig::delayed_ack_timeout_s`, ns-3's DelAckTimeout 200 ms; RFC 1122:
//!   < 500 ms) started by the first segment left unacknowledged;
//! - RFC 5681 4.2: an out-of-order segment (a duplicate ACK), a duplicate segment and a
//!   segment that fills (part of) a hole are acknowledged at once;
//! - the flow's first data segment is acknowledged at once (ns-3's
//!   `TcpSocketBase::ProcessSynRcvd` sets its delayed-ACK count to the maximum when the
//!   handshake completes, "to speed up the connection"; Linux starts in quick-ACK mode);
//! - DCTCP, RFC 8257 3.2: the receiver keeps DCTCP.CE, the CE bit of the last data segment;
//!   when an arriving segment's CE differs, the segments held so far are acknowledged at
//!   once with the old ECE value, then the new segment is counted with the new one.
//!
//! With `every` = 1 the simulator does not use this module (every data packet is
//! acknowledged at once, echoing its own CE).

/// One receiver's delayed-ACK state.
#[derive(Debug, Clone, Default)]
pub struct AckState {
    /// In-order segments received and not yet acknowledged.
    pub pending: u32,
    /// Send time of the last of them (echoed for RTT samples, as ns-3 echoes the last
    /// timestamp it received).
    pub last_tx_ps: u64,
    /// One of them was a retransmission (Karn: the ACK gives no RTT sample).
    pub retx: bool,
    /// DCTCP.CE (RFC 8257 3.2).
    pub ce: bool,
    /// A data segment of the flow has arrived before.
    pub seen: bool,
    /// When the delayed-ACK timer fires (u64::MAX: off).
    pub timer_ps: u64,
}

/// What the receiver does on a data segment: maybe first acknowledge the segments held
/// with the old CE state (`flush`), then acknowledge now or (re)start the timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckDecision {
    /// RFC 8257 3.2: acknowledge the segments held before this one (cumulative ACK of
    /// `rcv_nxt` before the segment), with ECE = the old CE state; (ece, tx_ps, retx).
    pub flush: Option<(bool, u64, bool)>,
    /// Acknowledge now (the cumulative ACK after the segment): (ece, tx_ps, retx).
    pub now: Option<(bool, u64, bool)>,
    /// Start the delayed-ACK timer at this time (it was off).
    pub arm: Option<u64>,
}

impl AckState {
    pub fn new() -> Self {
        AckState { timer_ps: u64::MAX, ..Default::default() }
    }

    /// A data segment arrives at `now`: `in_order` when it was the next expected one and
    /// no out-of-order segment was held (neither a duplicate, nor beyond a hole, nor
    /// filling one); `ce`: its CE bit (only read with `dctcp`); `tx_ps`, `retx`: its send
    /// time and retransmission flag.
    #[allow(clippy::too_many_arguments)]
    pub fn on_segment(
        &mut self,
        in_order: bool,
        ce: bool,
        dctcp: bool,
        tx_ps: u64,
        retx: bool,
        now: u64,
        every: u32,
        timeout_ps: u64,
    ) -> AckDecision {
        let mut d = AckDecision { flush: None, now: None, arm: None };
        let ce = dctcp && ce;
        if dctcp && ce != self.ce {
            if self.pending > 0 {
                d.flush = Some((self.ce, self.last_tx_ps, self.retx));
                self.clear();
            }
            self.ce = ce;
        }
        let first = !self.seen;
        self.seen = true;
        if !in_order || first {
            let r = retx || (self.pending > 0 && self.retx);
            d.now = Some((self.ce, tx_ps, r));
            self.clear();
            return d;
        }
        self.pending += 1;
        self.last_tx_ps = tx_ps;
        self.retx |= retx;
        if self.pending >= every {
            d.now = Some((self.ce, tx_ps, self.retx));
            self.clear();
        } else if self.timer_ps == u64::MAX {
            self.timer_ps = now + timeout_ps;
            d.arm = Some(self.timer_ps);
        }
        d
    }

    /// The timer event for time `t` fires: the ACK to send (ece, tx_ps, retx), if the
    /// timer is still set for `t` and segments are held.
    pub fn on_timer(&mut self, t: u64) -> Option<(bool, u64, bool)> {
        if self.timer_ps != t {
            return None;
        }
        self.timer_ps = u64::MAX;
        if self.pending == 0 {
            return None;
        }
        let a = (self.ce, self.last_tx_ps, self.retx);
        self.clear();
        Some(a)
    }

    fn clear(&mut self) {
        self.pending = 0;
        self.retx = false;
        self.timer_ps = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_second_segment_then_timer() {
        let mut a = AckState::new();
        // the first segment: at once
        let d = a.on_segment(true, false, false, 1, false, 10, 2, 100);
        assert!(d.now.is_some() && d.arm.is_none());
        // the second: held, the timer starts
        let d = a.on_segment(true, false, false, 2, false, 20, 2, 100);
        assert_eq!(d, AckDecision { flush: None, now: None, arm: Some(120) });
        // the third: two held, ACK now, the timer stops
        let d = a.on_segment(true, false, false, 3, false, 30, 2, 100);
        assert_eq!(d.now, Some((false, 3, false)));
        assert_eq!(a.on_timer(120), None);
        // a fourth alone: acknowledged when its timer fires
        let d = a.on_segment(true, false, false, 4, true, 40, 2, 100);
        assert_eq!(d.arm, Some(140));
        assert_eq!(a.on_timer(140), Some((false, 4, true)));
        // out of order: at once
        let d = a.on_segment(false, false, false, 5, false, 50, 2, 100);
        assert!(d.now.is_some());
    }

    #[test]
    fn dctcp_ce_change_flushes_with_the_old_ece() {
        let mut a = AckState::new();
        a.on_segment(true, false, true, 1, false, 10, 2, 100);
        a.on_segment(true, false, true, 2, false, 20, 2, 100); // held
        let d = a.on_segment(true, true, true, 3, false, 30, 2, 100);
        assert_eq!(d.flush, Some((false, 2, false)), "the held segment is acknowledged without ECE");
        assert_eq!(d.now, None);
        assert_eq!(d.arm, Some(130)); // the marked one is held, with the timer
        let d = a.on_segment(true, true, true, 4, false, 40, 2, 100);
        assert_eq!(d.now, Some((true, 4, false)));
        // CE ends: nothing held, so no flush; the unmarked segment is held
        let d = a.on_segment(true, false, true, 5, false, 50, 2, 100);
        assert_eq!(d.flush, None);
        assert_eq!(d.arm, Some(150));
    }
}
