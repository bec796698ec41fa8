//! SCHED_TCP's non-intrusive scheduling at the sender (Ayesta, Bertaux, Carvin, "Non-Intrusive
//! Scheduling of TCP Flows", shared/papers/001_*, section 3, Algorithms 1-4): the packet
//! model's `gtcp:<inner>` over `tcp` or `dctcp`.
//!
//! The paper's gtcp keeps every TCP connection that plain tcp would have (one per flow, with
//! its own congestion control, timers and sequence space, and a *virtual* queue: the flow's
//! own bytes) and decouples the connections from the data they carry: each time a connection
//! may send a *new* segment (its transmission credit and virtual queue allow it), the
//! scheduler `schedule()` picks whose data goes in it, among the flows of the same
//! origin-destination pair (Algorithms 2 and 4). The network sees the packets plain tcp
//! would send, at the same times: the scheme is non-intrusive (Proposition 1, `V^gtcp(t) =
//! V^tcp(t)`). Here the packets, their timing, the queues, the drops and every connection's
//! window and timers are exactly those of the `ps` run over the same transport; only the data
//! labels differ. So a flow whose data is held keeps its connection running as under tcp
//! (cwnd, RTO timer, retransmissions and ACK processing unchanged), and that connection
//! carries the scheduled flows' data instead.
//!
//! Which bytes: a connection's new segment of `len` bytes is filled with data in scheduler
//! order, byte by byte (a flow with fewer unsent bytes than `len` leaves the rest of the
//! segment to the next flow: the paper's Remark 1, segments carrying data of several flows).
//! A retransmission resends the same data (as SCHED_TCP over legacy TCP sockets, section
//! 6.1: data handed to a socket stays there). A flow's byte is delivered when its connection
//! delivers the segment carrying it in order (the receiver's `rcv_nxt` passes it; SCHED_TCP
//! reassembles at the receiver from in-order socket data), and a flow finishes when its
//! last byte is delivered; each byte is credited once.
//!
//! Groups ("paths"): flows with the same route (list of links), as the fluid model's
//! `gtcp:*`; where a host pair has one route (the big switch, a single path) this is the
//! paper's origin-destination pair. Policies (section 4.2), re-evaluated at every new segment:
//! - `fifo`: the earliest arrival first;
//! - `srpt`: the fewest bytes not yet put into segments (the paper's unsent segments, Appendix A);
//! - `las`: the fewest bytes put into segments so far ("the TCP flow that has transmitted the
//!   least number of segments"); equal values take turns segment by segment;
//! - `fair`: the flow that would finish next under tcp (after the Fair Sojourn Protocol).
//!   Its tcp counterpart is its own connection, which runs exactly as under tcp (the
//!   network run does not depend on whose data the segments carry). Two projections
//!   ([`FairProjection`]):
//!   - `Exact` (the default): the time its connection delivers its last byte, which is the
//!     flow's finish time under plain tcp: the packet model runs the trace under plain tcp
//!     first ([`crate::packet::PacketSimulator::new`]) and `fair` serves, among its
//!     route's flows with data left, the one that finishes first there. This is the
//!     paper's "if gtcp knows the behavior of tcp, it is possible ... to infer exactly which
//!     would be the next flow under tcp" (section 4.2), so Proposition 2's
//!     `T_i^FAIR <= T_i^tcp` holds without losses or reordering; the tcp run is the same
//!     network run, so it is exact with losses too (the paper's Remark 2 concerns a sender
//!     that must predict tcp, not one that knows it). It costs a second run.
//!   - `Window`: an estimate a sender could make alone: its virtual bytes left to send (its
//!     tcp queue `q^v`) at its window's share now, `q^v / cwnd` (the flows of a group share
//!     one route and so one round-trip time: their rates are in proportion to their
//!     windows; the SRTT estimates are not used, since a new connection's starts from the
//!     unloaded RTT), as the fluid `fair` projects each flow's finish at its shadow
//!     fair-sharing rate now; a connection with nothing left to send projects 0. Without
//!     losses it can still leave a few flows later than under tcp (windows change);
//! - `ps`: each connection carries its own flow's data: plain tcp (a check of the layer).
//!
//! Ties: earlier arrival, then trace row.
use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Result, SimError};
use crate::sched::Scheduler;

/// The policy choosing whose data a new segment carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPolicy {
    Ps,
    Fifo,
    Srpt,
    Las,
    Fair,
}

/// How `gtcp:fair` projects which flow finishes next under tcp (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FairProjection {
    /// Each flow's finish time under plain tcp, from a run of the same trace under plain tcp.
    #[default]
    Exact,
    /// The connection's bytes left over its congestion window now.
    Window,
}

impl FairProjection {
    /// The names [`FairProjection::parse`] takes.
    pub const NAMES: &'static str = "exact, window";

    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "exact" => Ok(FairProjection::Exact),
            "window" => Ok(FairProjection::Window),
            _ => Err(SimError::InvalidConfig(format!("unknown fair_projection '{s}'; known: {}", Self::NAMES))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FairProjection::Exact => "exact",
            FairProjection::Window => "window",
        }
    }
}

/// The inner policies `gtcp:<inner>` takes on the packet model.
pub const HOST_POLICIES: &str = "ps, fifo, srpt, las, fair";

impl HostPolicy {
    /// The policy of `gtcp:<inner>`; an error for another inner policy.
    pub fn of(s: &Scheduler) -> Result<Option<Self>> {
        let Scheduler::Gtcp(inner) = s else { return Ok(None) };
        Ok(Some(match inner.as_ref() {
            Scheduler::Ps => HostPolicy::Ps,
            Scheduler::Fifo => HostPolicy::Fifo,
            Scheduler::Srpt => HostPolicy::Srpt,
            Scheduler::Las => HostPolicy::Las,
            Scheduler::Fair => HostPolicy::Fair,
            other => {
                return Err(SimError::Unsupported(format!(
                    "the packet model's gtcp:<inner> (SCHED_TCP's scheduling at the sender) takes {HOST_POLICIES}, not '{}'",
                    other.name()
                )))
            }
        }))
    }
    /// Whether the policy reads flow sizes.
    pub fn uses_size(self) -> bool {
        matches!(self, HostPolicy::Srpt | HostPolicy::Fair)
    }
}

/// The relabelling state of a run (see the module comment).
#[derive(Debug, Clone)]
pub struct HostSched {
    policy: HostPolicy,
    /// Per flow: its group (route) index.
    group: Vec<u32>,
    size: Vec<u64>,
    arrival: Vec<u64>,
    /// Per flow (data): bytes put into segments (first transmissions).
    assigned: Vec<u64>,
    /// Per flow (data): bytes delivered in order at the receiver.
    delivered: Vec<u64>,
    /// Per flow (connection): new bytes its connection has sent (its virtual queue is size - this).
    conn_sent: Vec<u64>,
    /// Per connection: runs of its byte space, (end byte, data flow), in order.
    runs: Vec<Vec<(u64, u32)>>,
    /// Per connection: the next run to credit and the connection bytes credited so far.
    cursor: Vec<(u32, u64)>,
    /// Per group: the flows with data not yet put into segments, by (key, arrival, row).
    ready: Vec<BTreeSet<(u64, u64, u32)>>,
    /// Per flow: its key in `ready` (valid while it is there).
    key: Vec<u64>,
    /// `fair` with the exact projection: per flow, its finish time under plain tcp (ps;
    /// `u64::MAX` if it did not finish there); empty otherwise (the window projection).
    tcp_finish_ps: Vec<u64>,
    /// Flows whose last byte was delivered by the last `deliver` call.
    pub finished: Vec<u32>,
}

impl HostSched {
    /// `routes[i]`: flow i's links; sizes in bytes; arrivals in ps. `tcp_finish_ps`: for
    /// `fair`, each flow's finish time under plain tcp (the exact projection), or empty (the
    /// window projection); empty for the other policies.
    pub fn new(policy: HostPolicy, routes: &[&[u32]], size: Vec<u64>, arrival: Vec<u64>, tcp_finish_ps: Vec<u64>) -> Self {
        assert!(tcp_finish_ps.is_empty() || (policy == HostPolicy::Fair && tcp_finish_ps.len() == size.len()));
        let n = size.len();
        let mut ids: BTreeMap<&[u32], u32> = BTreeMap::new();
        let mut group = Vec::with_capacity(n);
        for r in routes {
            let next = ids.len() as u32;
            group.push(*ids.entry(r).or_insert(next));
        }
        HostSched {
            policy,
            group,
            size,
            arrival,
            assigned: vec![0; n],
            delivered: vec![0; n],
            conn_sent: vec![0; n],
            runs: vec![Vec::new(); n],
            cursor: vec![(0, 0); n],
            ready: vec![BTreeSet::new(); ids.len()],
            key: vec![0; n],
            tcp_finish_ps,
            finished: Vec::new(),
        }
    }

    pub fn policy(&self) -> HostPolicy {
        self.policy
    }
    /// Per flow: bytes of its data put into segments so far.
    pub fn assigned(&self) -> &[u64] {
        &self.assigned
    }
    /// Per flow: bytes of its data delivered in order.
    pub fn delivered(&self) -> &[u64] {
        &self.delivered
    }
    /// Per flow: its group (flows with the same route share one).
    pub fn group(&self) -> &[u32] {
        &self.group
    }

    fn key_of(&self, j: usize) -> u64 {
        match self.policy {
            // fair, exact: the finish under tcp, fixed; by window: chosen by a scan at each
            // pick (its projections move with every window)
            HostPolicy::Fair if !self.tcp_finish_ps.is_empty() => self.tcp_finish_ps[j],
            HostPolicy::Ps | HostPolicy::Fifo | HostPolicy::Fair => 0,
            HostPolicy::Srpt => self.size[j] - self.assigned[j],
            HostPolicy::Las => self.assigned[j],
        }
    }

    fn insert(&mut self, j: usize) {
        let k = self.key_of(j);
        self.key[j] = k;
        self.ready[self.group[j] as usize].insert((k, self.arrival[j], j as u32));
    }

    fn remove(&mut self, j: usize) -> bool {
        self.ready[self.group[j] as usize].remove(&(self.key[j], self.arrival[j], j as u32))
    }

    /// Flow j's data is there to send (its sender starts).
    pub fn join(&mut self, j: usize) {
        if self.policy != HostPolicy::Ps && self.assigned[j] < self.size[j] {
            self.insert(j);
        }
    }

    /// Connection i sends a new segment of `len` bytes, from byte `lo` of its sequence
    /// space: fills it with data in policy order. `window_rate(j)`: connection j's share of
    /// its route now, in any unit common to the group (`fair` by window only; the packet model gives its cwnd). False if the group had too little data left (cannot
    /// happen: a group's unsent data equals its connections' unsent bytes).
    pub fn assign(&mut self, i: usize, lo: u64, len: u64, window_rate: impl Fn(usize) -> f64) -> bool {
        self.conn_sent[i] = self.conn_sent[i].max(lo + len);
        let mut end = lo;
        let mut left = len;
        if self.policy == HostPolicy::Ps {
            self.assigned[i] += len;
            self.push_run(i, lo + len, i as u32);
            return true;
        }
        let g = self.group[i] as usize;
        while left > 0 {
            let pick = if self.policy == HostPolicy::Fair && self.tcp_finish_ps.is_empty() {
                self.fair_pick(g, &window_rate)
            } else {
                self.ready[g].first().map(|e| e.2)
            };
            let Some(j) = pick else { return false };
            let j = j as usize;
            let take = left.min(self.size[j] - self.assigned[j]);
            self.remove(j);
            self.assigned[j] += take;
            end += take;
            left -= take;
            self.push_run(i, end, j as u32);
            if self.assigned[j] < self.size[j] {
                self.insert(j);
            }
        }
        true
    }

    /// `fair` by window: the ready flow of group g whose connection projects the earliest finish
    /// (ties: earlier arrival, then row: the set's order).
    fn fair_pick(&self, g: usize, window_rate: &impl Fn(usize) -> f64) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        for &(_, _, j) in &self.ready[g] {
            let left = (self.size[j as usize] - self.conn_sent[j as usize]) as f64;
            let t = if left == 0.0 { 0.0 } else { left / window_rate(j as usize) };
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, j));
            }
        }
        best.map(|b| b.1)
    }

    fn push_run(&mut self, i: usize, end: u64, j: u32) {
        let r = &mut self.runs[i];
        match r.last_mut() {
            Some(last) if last.1 == j => last.0 = end,
            _ => r.push((end, j)),
        }
    }

    /// Connection i has delivered its first `upto` bytes in order: credits the data they
    /// carry, once; the flows whose last byte this was are left in `finished`.
    pub fn deliver(&mut self, i: usize, upto: u64) {
        self.finished.clear();
        let (mut k, mut done) = self.cursor[i];
        while done < upto {
            let Some(&(end, j)) = self.runs[i].get(k as usize) else { break };
            if done >= end {
                // past this run (the cursor stays on a run until then: a later segment
                // with the same flow's data extends it)
                k += 1;
                continue;
            }
            let to = end.min(upto);
            let j = j as usize;
            self.delivered[j] += to - done;
            done = to;
            if self.delivered[j] == self.size[j] {
                self.finished.push(j as u32);
            }
        }
        if done == self.size[i] {
            // the connection has delivered everything: its runs are spent
            self.runs[i] = Vec::new();
            k = 0;
        } else if k >= 1024 && 2 * k as usize > self.runs[i].len() {
            // drop the runs credited in full (LAS alternates flows segment by segment)
            self.runs[i].drain(..k as usize);
            k = 0;
        }
        self.cursor[i] = (k, done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srpt_fills_segments_in_order_and_credits_once() {
        let r: [&[u32]; 2] = [&[0, 1], &[0, 1]];
        let mut h = HostSched::new(HostPolicy::Srpt, &r, vec![3000, 1000], vec![0, 5], Vec::new());
        h.join(0);
        assert!(h.assign(0, 0, 1460, |_| 1.0));
        assert_eq!(h.assigned(), &[1460, 0]);
        h.join(1);
        // the short flow takes the next 1000 bytes, the rest of the segment goes to flow 0
        assert!(h.assign(0, 1460, 1460, |_| 1.0));
        assert_eq!(h.assigned(), &[1920, 1000]);
        assert!(h.assign(1, 0, 1000, |_| 1.0));
        assert!(h.assign(0, 2920, 80, |_| 1.0));
        assert_eq!(h.assigned(), &[3000, 1000]);
        assert!(!h.assign(1, 1000, 1, |_| 1.0), "nothing left to send");
        h.deliver(0, 2920);
        assert_eq!(h.finished, vec![1]);
        h.deliver(0, 2920); // again: nothing new
        assert!(h.finished.is_empty());
        h.deliver(1, 1000);
        h.deliver(0, 3000);
        assert_eq!(h.finished, vec![0]);
        assert_eq!(h.delivered(), &[3000, 1000]);
    }

    #[test]
    fn las_takes_turns_and_groups_are_routes() {
        let r: [&[u32]; 3] = [&[0], &[0], &[1]];
        let mut h = HostSched::new(HostPolicy::Las, &r, vec![5000, 5000, 5000], vec![0, 0, 0], Vec::new());
        assert_eq!(h.group(), &[0, 0, 1]);
        for j in 0..3 {
            h.join(j);
        }
        h.assign(0, 0, 1000, |_| 1.0);
        h.assign(0, 1000, 1000, |_| 1.0);
        h.assign(1, 0, 1000, |_| 1.0);
        assert_eq!(h.assigned(), &[2000, 1000, 0]); // turns: 0, 1, then 0 again (a tie: the earlier row)
        h.assign(2, 0, 1000, |_| 1.0);
        assert_eq!(h.assigned(), &[2000, 1000, 1000]); // the other route's data only
    }

    #[test]
    fn only_gtcp_inner_policies_of_the_packet_model() {
        assert_eq!(HostPolicy::of(&Scheduler::parse("gtcp:fair").unwrap()).unwrap(), Some(HostPolicy::Fair));
        assert_eq!(HostPolicy::of(&Scheduler::Ps).unwrap(), None);
        let e = HostPolicy::of(&Scheduler::parse("gtcp:edf").unwrap()).unwrap_err().to_string();
        assert!(e.contains("ps, fifo, srpt, las, fair") && e.contains("gtcp:<inner>"), "{e}");
    }
}
