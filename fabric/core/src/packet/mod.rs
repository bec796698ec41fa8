//! The packet-level model: the same traces (`FlowSpec`), topologies (`Topology`) and
//! schedulers (`Scheduler`) as the fluid `Simulator`, simulated packet by packet.
//!
//! Every unidirectional link of the topology is one output port with its own queue (the
//! hosts' uplinks are their NICs' queues). A flow's data packets follow the fluid model's
//! path of link ids (so the leaf-spine's ECMP hash is the same); its ACKs follow the path
//! from its destination back to its source. Packets are store-and-forward at every hop,
//! serialized at the link's rate and delayed `delay_per_hop_s` per link. Time is integer
//! picoseconds; events are popped in order of (time, sequence number) (`queue.rs`: a
//! calendar queue, which pops them in the order a binary heap would), so a run is
//! deterministic bit for bit. There is no randomness in the model itself.
//!
//! A flow's sender starts at its arrival (by default: no handshake, no destination
//! admission) and it finishes when its last byte reaches the receiver: its FCT (finish -
//! arrival) includes every propagation, queueing and serialization delay, and the
//! handshake and the token wait when those options are on. See `docs/packet.md` for every
//! default and its source.
pub mod delack;
pub mod hostsched;
pub mod port;
pub mod queue;
pub mod rate;
pub mod tcp;

use std::collections::VecDeque;

use crate::error::{Result, SimError};
use crate::rng::{mix64, SplitMix64};
use crate::sched::{AdmissionPolicy, GaInner, Scheduler};
use crate::sim::{admission_streams, choose_admission, total_order_bits, AdmissionConfig, FlowSpec, Outcome};
use crate::topology::{Topology, TopologyKind};
use delack::AckState;
pub use hostsched::FairProjection;
pub use port::EcnMarking;
use hostsched::{HostPolicy, HostSched};
use queue::EventQueue;
use port::{Discipline, Enqueued, Packet, Port, ACK, CE, ECE, RETX, SYN};
use tcp::{CcParams, Receiver, Sender, DCTCP_G, G_MIN_PS, MAX_RTO_PS};

/// The most links a route may have (a packet counts its hops in a u8).
pub const MAX_HOPS: usize = 255;
/// Picoseconds per second.
pub const PS_PER_S: f64 = 1e12;
/// The latest arrival (or time) the packet model takes: 1e6 s (u64 picoseconds reach 1.8e7 s).
pub const MAX_TIME_S: f64 = 1e6;
/// The end of the packet model's clock: a run whose events reach 2^63 ps (9.2e6 s) stops
/// with an error. Every delay added to the clock is far below it (a packet's transmission
/// at the slowest link rate, `MIN_LINK_GBPS`, the RTO bound, a link's delay of at most 1 s,
/// or saturates), so the u64 clock never wraps, which would put events in the past.
pub const CLOCK_END_PS: u64 = 1 << 63;
/// The slowest and fastest link rates (Gbps) the packet model takes: a 1,500-byte packet
/// takes 12 ms at 1 Mbps, 12 ps at 1 Pbps, in whole picoseconds.
pub const MIN_LINK_GBPS: f64 = 1e-3;
pub const MAX_LINK_GBPS: f64 = 1e6;

/// A packet-level transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// NewReno (RFC 5681, RFC 6582) with the RFC 6298 timer.
    Tcp,
    /// `Tcp` plus DCTCP (RFC 8257) over ECN-marking queues.
    Dctcp,
    /// pFabric's minimal rate control over pFabric priority queues.
    PFabric,
    /// RCP: routers compute a fair rate per link, senders pace at the path's minimum (`rate.rs`).
    Rcp,
    /// SDC (Munir, chapter 3): size-class AIMD windows driven by the routers' load factor (`rate.rs`).
    Sdc,
    /// RACS (Munir, chapter 4): routers share capacity by size-based weights, senders pace (`rate.rs`).
    Racs,
}

/// The scheduler x transport pairs the packet model runs, for error messages and docs.
pub const SUPPORTED: &str = "ps with tcp or dctcp (FIFO queues: drop-tail for tcp, ECN marking for dctcp); \
pias with dctcp or tcp (strict-priority queues sharing the buffer, ECN per queue with dctcp); \
gtcp:ps, gtcp:fifo, gtcp:srpt, gtcp:las and gtcp:fair with dctcp or tcp (SCHED_TCP's scheduling at the sender, FIFO queues as ps); \
fifo, srpt, asrpt (= ga:srpt), las, edf and external with pfabric (pFabric priority queues) or dctcp (the same queues \
marking ECN, DCTCP senders); \
ps with rcp (drop-tail FIFO queues, an RCP rate per link); \
sdc with sdc (drop-tail FIFO queues, a load factor per link); \
racs with racs (drop-tail FIFO queues, weighted rates per link)";

impl Transport {
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "tcp" => Ok(Transport::Tcp),
            "dctcp" => Ok(Transport::Dctcp),
            "pfabric" => Ok(Transport::PFabric),
            "rcp" => Ok(Transport::Rcp),
            "sdc" => Ok(Transport::Sdc),
            "racs" => Ok(Transport::Racs),
            _ => Err(SimError::InvalidConfig(format!("unknown transport '{name}'; known: tcp, dctcp, pfabric, rcp, sdc, racs"))),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Dctcp => "dctcp",
            Transport::PFabric => "pfabric",
            Transport::Rcp => "rcp",
            Transport::Sdc => "sdc",
            Transport::Racs => "racs",
        }
    }
    /// The default transport of a scheduler: `dctcp` for `ps` and `pias` (PIAS runs over
    /// DCTCP), `pfabric` for the priority schedulers; an error for the others.
    pub fn default_for(s: &Scheduler) -> Result<Self> {
        match s {
            Scheduler::Ps | Scheduler::Pias | Scheduler::Gtcp(_) => Ok(Transport::Dctcp),
            Scheduler::Sdc => Ok(Transport::Sdc),
            Scheduler::Racs => Ok(Transport::Racs),
            Scheduler::Fifo | Scheduler::Srpt | Scheduler::Ga(GaInner::Srpt) | Scheduler::Las | Scheduler::Edf | Scheduler::External => {
                Ok(Transport::PFabric)
            }
            other => Err(unsupported(other, None)),
        }
    }
}

fn unsupported(s: &Scheduler, t: Option<Transport>) -> SimError {
    // srpt, las, fifo over tcp or dctcp, and fair: the scheduling at the sender is gtcp:<p>
    let hint = match (s, t) {
        (Scheduler::Srpt | Scheduler::Las | Scheduler::Fifo, Some(Transport::Tcp)) => format!(
            " ('{0}' on packets is pFabric's priority queues, over pfabric or dctcp; SCHED_TCP's {0} at the sender over {1} is gtcp:{0})",
            s.name(),
            t.map_or("", |t| t.name())
        ),
        (Scheduler::Fair, _) => " (SCHED_TCP's FAIR at the sender, per route, over tcp or dctcp is gtcp:fair)".into(),
        _ => String::new(),
    };
    let what = match t {
        Some(t) => format!("scheduler '{}' with transport '{}'", s.name(), t.name()),
        None => format!("scheduler '{}'", s.name()),
    };
    SimError::Unsupported(format!("the packet model does not run {what}{hint}; supported: {SUPPORTED}"))
}

/// How a flow's packets are spread over the equal-cost paths between its hosts
/// (`PacketConfig::load_balancing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoadBalancing {
    /// Per-flow ECMP: every packet of a flow on its path (`Topology::path`), its ACKs on
    /// the ECMP path back. A pinned route (a graph trace's `path` column) is always so.
    #[default]
    Flow,
    /// Packet spraying: each packet (data, ACK, SYN) takes equal-cost path number
    /// `h mod n` of its direction, h a hash of (flow, sequence number, send time, ACK or
    /// data), the same at every hop, so packets spread uniformly at random over the paths
    /// and a retransmission may take another path than the original. Flows with a pinned
    /// route keep it. On a big switch (one path) nothing changes.
    Packet,
}

impl LoadBalancing {
    pub fn parse(name: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "flow" => Ok(LoadBalancing::Flow),
            "packet" => Ok(LoadBalancing::Packet),
            _ => Err(SimError::InvalidConfig(format!("unknown load_balancing '{name}'; known: flow (per-flow ECMP), packet (packet spraying)"))),
        }
    }
}

/// The options of a packet-level run. `None` fields take the transport's default
/// (`PacketConfig::new` documents each).
#[derive(Debug, Clone, PartialEq)]
pub struct PacketConfig {
    pub scheduler: Scheduler,
    /// None: `Transport::default_for(scheduler)`.
    pub transport: Option<Transport>,
    /// Payload bytes per packet (1460: Ethernet MTU 1500 minus 40 B of IPv4 + TCP headers).
    pub mss_bytes: u32,
    /// Header bytes per packet; an ACK is one header (40: IPv4 + TCP without options).
    pub header_bytes: u32,
    /// Buffer of every output port, bytes. None: 360,000 for tcp and dctcp (the buffer of
    /// the ns-3 and YAPS reference runs), 36,864 for pfabric (pFabric's evaluation, about
    /// 2 BDPs at 10 Gbps; YAPS's pfabric.conf).
    pub buffer_bytes: Option<u64>,
    /// DCTCP's marking threshold K in bytes (97,500 = 65 packets of 1,500 B, the DCTCP
    /// paper's K at 10 Gbps).
    pub ecn_threshold_bytes: u64,
    /// DCTCP's K counted in packets instead (`dctcp` over one FIFO per port, `ps`/`gtcp`):
    /// every packet waiting counts one, an ACK as a data packet, as the RED queues of ns-2
    /// and ns-3 in packet mode count (the DCTCP paper's K = 65 packets). None: bytes.
    pub ecn_threshold_packets: Option<u32>,
    /// At most this many packets waiting at a port (every packet one, an ACK as a data
    /// packet), beside `buffer_bytes`, as the queues of ns-2 and ns-3 in packet mode hold
    /// (the ns-3 references' 240 packets); ports with one FIFO queue only (`tcp`, or `dctcp`
    /// under `ps`/`gtcp`). None: bytes only.
    pub buffer_packets: Option<u32>,
    /// `pias`: bytes of each port's buffer reserved for each of its K queues; the rest is
    /// shared first come first served (pFabric section 6.1 reserves 15 KB, 10 packets, per
    /// queue of a 225 KB buffer). 0 (the default): the whole buffer is shared.
    pub queue_reserve_bytes: u64,
    /// `pias` over `dctcp`: a port marks by the bytes waiting in all its queues together
    /// (per-port ECN: the `marking_scheme_` 2 of PIAS's ns-2 priority queue, which the aSCC
    /// authors' runs use), not by those of the packet's own queue (the default, per-queue).
    pub pias_port_ecn: bool,
    /// None: 10 for tcp and dctcp (RFC 6928), 12 for pfabric (about one BDP; YAPS's pfabric.conf).
    pub init_cwnd_packets: Option<f64>,
    /// None: unbounded for tcp and dctcp, 15 for pfabric (YAPS's pfabric.conf).
    pub max_cwnd_packets: Option<f64>,
    /// tcp, dctcp: the lower bound of the RTO; None: 1 s (RFC 6298 2.4). pfabric: the
    /// fixed RTO; None: 45 us (about 3 RTTs as the pFabric paper sets it; YAPS's pfabric.conf),
    /// or 3 of the flow's unloaded RTTs where its path is longer than that.
    pub min_rto_s: Option<f64>,
    /// Propagation delay of every link, seconds (the fluid model's `delay_per_hop_s`).
    pub delay_per_hop_s: f64,
    /// PIAS demotion thresholds (bytes sent), increasing; K = len + 1 queues.
    pub pias_thresholds_bytes: Vec<f64>,
    /// Sample every port's queue (bytes waiting) this often; None: no samples.
    pub queue_sample_s: Option<f64>,
    /// Only these ports (link ids) are sampled; None: all.
    pub sample_ports: Option<Vec<u32>>,
    /// Stop a flow's sender at its deadline (the flow counts as terminated).
    pub terminate_missed: bool,
    /// Fail with `SimError::Stalled` after this many events (None: no bound).
    pub max_events: Option<u64>,
    /// The receiver acknowledges every this many in-order segments (1: every segment;
    /// 2: RFC 1122 4.2.3.2 / RFC 5681 4.2 delayed ACKs, ns-3's DelAckCount). `delack`
    /// gives the segments acknowledged at once.
    pub ack_every_segments: u32,
    /// The delayed-ACK timer, s (read when `ack_every_segments` > 1): 0.2 (ns-3's
    /// DelAckTimeout; RFC 1122 requires < 0.5 s).
    pub delayed_ack_timeout_s: f64,
    /// Open each flow's connection first: a SYN (header only) to the receiver, a SYN-ACK
    /// back, then the first data packet.
    pub handshake: bool,
    /// The first SYN retransmission timeout, s, doubled at each retransmission (RFC 6298
    /// 5.5): 1 (RFC 6298 2.1's initial RTO; ns-3's ConnTimeout is 3 s).
    pub syn_timeout_s: f64,
    /// RFC 6298's clock granularity G, s: RTO = SRTT + max(G, 4 RTTVAR). 0: the core's
    /// tick (1 ps); ns-3 uses 1 ms (TcpSocketBase::ClockGranularity).
    pub clock_granularity_s: f64,
    /// `tcp`/`dctcp`: RFC 3042 limited transmit: on each of the first two duplicate ACKs
    /// outside recovery, send one new segment if the flight stays within cwnd + 2
    /// segments, cwnd unchanged; the segments so sent are left out of FlightSize when the
    /// third duplicate ACK sets ssthresh (RFC 5681 3.2 step 2). Off by default; ns-3's
    /// `TcpSocketBase::LimitedTransmit` is on by default.
    pub limited_transmit: bool,
    /// `tcp`/`dctcp`: the duplicate ACKs that trigger fast retransmit (RFC 5681's
    /// DupThresh, 3 by default; cwnd is set to ssthresh plus this many segments). 0: never;
    /// duplicate ACKs then only count for limited transmit, and every loss waits for the
    /// retransmission timer, as the aSCC paper's senders (pFabric's MinTCP with
    /// `enable_dupack = false`) under packet spraying, whose reordering would fire fast
    /// retransmits for packets that are not lost.
    pub dupack_threshold: u32,
    /// `tcp`/`dctcp`: the window grows by the segments each ACK acknowledges, as Linux
    /// (tcp_slow_start, tcp_cong_avoid_ai) and ns-3's `TcpLinuxReno` and `TcpDctcp` do: in
    /// slow start cwnd += N up to ssthresh, the rest N / cwnd. Off (the default): RFC 5681,
    /// at most one segment per ACK in slow start and 1/cwnd per ACK after. The two differ
    /// only when an ACK covers several segments (delayed ACKs, a hole filled, reordering).
    pub count_acked_segments: bool,
    /// `tcp`/`dctcp`: every retransmission timeout is `min_rto_s`, with no RTT estimate and
    /// no exponential backoff, as pFabric's minimal TCP (`MinTcpAgent::rtt_timeout` in its
    /// ns-2 code, which the aSCC paper's senders run); off (the default): RFC 6298.
    pub fixed_rto: bool,
    /// `tcp`/`dctcp`/`pfabric`: selective acknowledgments (RFC 2018): the receivers report
    /// the out-of-order packets they hold, the senders keep a scoreboard, skip the packets
    /// SACKed when they go back after a timeout, and (`tcp`, `dctcp`) recover from losses
    /// as RFC 6675 (`tcp.rs`). Off by default (NewReno, RFC 6582); on in Linux and in ns-3
    /// (`TcpSocketBase::Sack`), and in the pFabric and aSCC papers' ns-2 senders.
    pub sack: bool,
    /// `tcp`/`dctcp` with `sack`: fast recovery's window as RFC 6937's proportional rate
    /// reduction (PRR-SSRB), as Linux and ns-3 (`TcpPrrRecovery`, its default with SACK);
    /// off: RFC 6675's (cwnd = ssthresh from the start of recovery).
    pub prr: bool,
    /// `dctcp`: alpha when a connection starts, in [0, 1] (`CcParams::dctcp_alpha_init`): 1
    /// (the default: Linux, ns-3; RFC 8257 leaves it open) or 0 (ns-2's DCTCP, which the
    /// pFabric, PIAS and aSCC papers' simulations use).
    pub dctcp_alpha_init: f64,
    /// `dctcp`: the least window DCTCP's cut leaves, in packets (`CcParams::dctcp_min_cwnd`):
    /// 2 (the default: Linux) or, below 1, no floor as ns-3's `TcpDctcp` (a window under
    /// one packet then waits for an ACK or the retransmission timer).
    pub dctcp_min_cwnd_packets: f64,
    /// `dctcp`: the ACK whose echo cuts the window does not grow it, and no ACK does until the
    /// data sent before the cut is acknowledged (`CcParams::dctcp_cwr_hold`: Linux's CWR
    /// state, ns-3's `CA_CWR`; the default, and RFC 3168 6.1.2's "SHOULD NOT increase the
    /// congestion window in response to" an echo); off: the echo's ACK grows the window
    /// before the cut and additive increase goes on after it (the default before 2026-11-29).
    pub dctcp_hold_in_cwr: bool,
    /// `dctcp`: the ECN echo of a duplicate ACK does not cut the window, as ns-3
    /// (`CcParams::dctcp_ignore_dupack_ece`); off (the default): any echo may.
    pub dctcp_ignore_dupack_ece: bool,
    /// How a flow's packets are spread over the equal-cost paths between its hosts: `Flow`
    /// (the default) sends them all on its ECMP path, the fluid model's; `Packet` (packet
    /// spraying, as the aSCC paper's code routes; the pFabric paper cites it) picks a path for
    /// every packet, data or ACK, by a hash of its flow, sequence number, send time and
    /// direction (`LoadBalancing`).
    pub load_balancing: LoadBalancing,
    /// Jitter, s: each packet reaches the far end of every link it crosses up to this much
    /// later than its transmission and the link's propagation give, by an extra delay
    /// uniform in [0, link_jitter_s) drawn from a hash of `seed` and the packet's place in
    /// the order of all transmissions (the same run gives the same delays), but never
    /// before the packet ahead of it on that link (a link stays first in first out). 0
    /// (the default): none; packets that reach a port at the same instant are then taken
    /// in the order they were sent. Real hosts and switches vary by tens of ns to microseconds;
    /// where many synchronized senders' packets fall on one port's grid of packet times
    /// (incast), the order of such ties moves drops between flows (docs/packet.md).
    pub link_jitter_s: f64,
    /// Whether every transmission ends with its own event and a port stays busy until that
    /// event is handled, as ns-3's point-to-point devices do (`TransmitComplete`, scheduled
    /// when the transmission starts, before the packet's arrival at the far end). Off (the
    /// default): a port is idle from the instant its transmission ends, and only a port
    /// with packets waiting has such an event (one event fewer per packet through an idle
    /// port). The two differ only for a packet that reaches a port at the very instant its
    /// transmission ends, which waits in ns-3's order of same-time events; in synchronized
    /// incasts such instants are common (docs/packet.md).
    pub tx_complete_events: bool,
    /// Destination admission (Artemis tokens), as the fluid model's: at most `k` flows per
    /// destination hold a token; the next admitted among the first `window` waiting by
    /// `policy` (not `external`). A token returns when the flow's last byte reaches the
    /// destination or the flow is terminated at its deadline.
    pub admission: Option<AdmissionConfig>,
    /// Admission: the request's travel from the sender to the destination, s (0: the
    /// destination sees it at the flow's arrival, as in the fluid model).
    pub request_delay_s: f64,
    /// Admission: the grant's travel from the destination back to the sender, s (0: the
    /// sender starts at its admission).
    pub grant_delay_s: f64,
    /// Seed of the `random` admission policy's draws and of `link_jitter_s`'s hash.
    pub seed: u64,
    /// When the ECN-marking queues (`dctcp`, and `pias` over it) mark a data packet: on
    /// arrival by the bytes waiting (`Enqueue`, the default: RFC 8257) or on departure by
    /// the bytes sent while it waited (`Sojourn`: the aSCC paper's definition).
    pub ecn_marking: EcnMarking,
    /// `gtcp:fair`: how it projects the flow that finishes next under tcp: `Exact` (the
    /// default) runs the trace under plain tcp first and uses each flow's finish time there;
    /// `Window` estimates it from the connections' windows (`hostsched.rs`).
    pub fair_projection: FairProjection,
    /// [`PacketSimulator::advance`] pauses at every flow change: at a flow's arrival (before
    /// its sender starts, so that a score set then tags its first packet) and after the
    /// event where a flow finishes or is terminated. Off: it runs on (the default).
    pub pause_on_flow_change: bool,
}

impl PacketConfig {
    pub fn new(scheduler: Scheduler) -> Self {
        PacketConfig {
            scheduler,
            transport: None,
            mss_bytes: 1460,
            header_bytes: 40,
            buffer_bytes: None,
            ecn_threshold_bytes: 97_500,
            ecn_threshold_packets: None,
            buffer_packets: None,
            queue_reserve_bytes: 0,
            pias_port_ecn: false,
            init_cwnd_packets: None,
            max_cwnd_packets: None,
            min_rto_s: None,
            delay_per_hop_s: 0.0,
            pias_thresholds_bytes: Vec::new(),
            queue_sample_s: None,
            sample_ports: None,
            terminate_missed: false,
            max_events: None,
            ack_every_segments: 1,
            delayed_ack_timeout_s: 0.2,
            handshake: false,
            syn_timeout_s: 1.0,
            clock_granularity_s: 0.0,
            limited_transmit: false,
            dupack_threshold: 3,
            count_acked_segments: false,
            fixed_rto: false,
            sack: false,
            prr: false,
            dctcp_alpha_init: 1.0,
            dctcp_min_cwnd_packets: 2.0,
            dctcp_hold_in_cwr: true,
            dctcp_ignore_dupack_ece: false,
            load_balancing: LoadBalancing::Flow,
            link_jitter_s: 0.0,
            tx_complete_events: false,
            admission: None,
            request_delay_s: 0.0,
            grant_delay_s: 0.0,
            seed: 0,
            ecn_marking: EcnMarking::Enqueue,
            fair_projection: FairProjection::Exact,
            pause_on_flow_change: false,
        }
    }

    /// `ps` over the Artemis thesis' TCP as the ns-3 program of `shared/peers/ns3/artemis`
    /// sets it up with 2018-era ns-3 choices (Python: `flowsched.envs.ARTEMIS_PACKET`, the
    /// defaults of `flowsched/TokenScheduling-Artemis-v0`): NewReno without SACK, MSS 1448 B
    /// with 52 B of IPv4 + TCP + timestamp headers, initial window 1, 100-packet drop-tail
    /// buffers (150,000 B), min RTO 1 s with RFC 6298's G = 1 ms, delayed ACKs every 2
    /// segments (200 ms timer), RFC 3042 limited transmit (ns-3's default), a handshake per
    /// flow (ns-3's 3 s SYN timeout), the token request and grant each travelling one
    /// one-way delay (500 us), and a link jitter of 100 ns (`link_jitter_s`: same-instant
    /// arrivals of synchronized senders no longer tie). Admission and the per-hop delay
    /// are left to the caller.
    pub fn artemis_ns3_era() -> Self {
        let mut c = PacketConfig::new(Scheduler::Ps);
        c.transport = Some(Transport::Tcp);
        c.mss_bytes = 1448;
        c.header_bytes = 52;
        c.init_cwnd_packets = Some(1.0);
        c.buffer_bytes = Some(150_000);
        c.min_rto_s = Some(1.0);
        c.clock_granularity_s = 1e-3;
        c.ack_every_segments = 2;
        c.delayed_ack_timeout_s = 0.2;
        c.limited_transmit = true;
        c.handshake = true;
        c.syn_timeout_s = 3.0;
        c.request_delay_s = 500e-6;
        c.grant_delay_s = 500e-6;
        c.link_jitter_s = 100e-9;
        c
    }
}

/// Counters of a packet-level run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacketStats {
    pub events: u64,
    /// Data packets sent by the senders (retransmissions included).
    pub data_packets: u64,
    pub ack_packets: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Packets dropped because they did not fit in a buffer (data and ACKs).
    pub drops_overflow: u64,
    /// Packets evicted from a pFabric queue by a packet of smaller priority value.
    pub drops_evicted: u64,
    /// ASCC: packets sent while their flow was incomplete, dropped by a port as one of the
    /// flow's complete-flow packets left before them.
    pub drops_stale: u64,
    pub ecn_marks: u64,
    /// Data packets that reached a receiver holding them already.
    pub duplicates: u64,
    /// Data packets that reached their receiver (duplicates included).
    pub data_arrived: u64,
    /// Data packets among the dropped and evicted ones.
    pub data_dropped: u64,
    /// The most events pending at once (the event queue and the wires together).
    pub peak_pending_events: u64,
    /// SYN and SYN-ACK packets sent (the handshake option; retransmissions included).
    pub syn_packets: u64,
    /// SYN retransmission timeouts.
    pub syn_timeouts: u64,
    /// ACKs sent by a delayed-ACK timer (counted in `ack_packets` too).
    pub delayed_acks: u64,
}

#[derive(Debug, Clone, Copy)]
enum EvKind {
    /// The port's packet in transmission has left it.
    TxDone(u32),
    /// The first packet on link l's wire reaches the link's far end (the node feeding the
    /// packet's `route[hop]`, or its endpoint past the route's end).
    Arrive(u32),
    Rto(u32),
    Deadline(u32),
    Sample,
    /// Flow f's token request reaches its destination.
    Request(u32),
    /// Flow f's grant reaches its sender: it starts.
    Grant(u32),
    /// Flow f's delayed-ACK timer.
    DelAck(u32),
    /// Flow f's SYN retransmission timer.
    Syn(u32),
    /// Flow f's paced sender may send its next packet (rate transports).
    Pace(u32),
    /// More of flow f's data has arrived at its sender (`data_span_s`): its next segment's.
    Data(u32),
}

#[derive(Debug, Clone)]
struct Flow {
    arrival_ps: u64,
    size: u64,
    /// Absolute deadline (ps) or u64::MAX.
    deadline_ps: u64,
    n: u32,
    /// Score for `external` as an order-preserving integer of the f64.
    ext: u64,
    /// `data_span_s` in ps: the flow's bytes reach its sender uniformly over
    /// `[arrival, arrival + span]` (0: all at its arrival).
    span_ps: u64,
    /// The bandwidth-delay product of its path on the idle network, in packets (its path's
    /// bottleneck rate times its unloaded round trip, over a full packet on the wire).
    bdp_packets: f64,
}

/// Packet spraying's state (`LoadBalancing::Packet`): the topology the packets' paths are
/// drawn from, the key of their hash, and per link the payload delivered over it.
#[derive(Debug, Clone)]
struct Spray {
    topo: Topology,
    key: u64,
    /// Scratch: the path of the packet being forwarded (when not cached).
    path: Vec<u32>,
    /// Per link: payload bytes delivered (each byte once) by data packets that crossed it.
    link_payload: Vec<u64>,
    /// Graphs: per (src, dst) pair met, the index + 1 of its entry in `entries`, in a
    /// table indexed by `src * n + dst` (0: not met yet) on graphs of at most
    /// `SPRAY_DENSE_HOSTS` hosts, else in `pair_map`. A graph's path is a walk over its
    /// routing tables, done once per pair here rather than at every hop of every packet.
    pair_entry: Vec<u32>,
    pair_map: std::collections::HashMap<u64, u32>,
    /// Whether the topology is a graph (whose paths are cached).
    graph: bool,
    /// Per pair met: (where its paths start in `table`, how many, the stride), or a count
    /// of 0 where it has more than `SPRAY_CACHE_PATHS` paths (computed at every hop then).
    entries: Vec<(u32, u32, u32)>,
    /// The cached paths: each its length, then its links, padded to the pair's stride.
    table: Vec<u32>,
}

/// The rate a flow from host src to host dst reaches alone when its packets are sprayed
/// uniformly over its n equal-cost paths: each link l on k_l of them carries k_l / n of the
/// flow, so the rate is the least capacity_l x n / k_l (on a leaf-spine with s spines:
/// the host links' rate, or s times a core link's). `one_path`: its ECMP path's bottleneck,
/// kept where the paths are more than `SPRAY_CAP_PATHS` (not enumerated).
fn sprayed_capacity(topo: &Topology, src: usize, dst: usize, one_path: f64) -> f64 {
    let Some(paths) = equal_cost_paths(topo, src, dst, SPRAY_CAP_PATHS).filter(|p| p.len() > 1) else {
        return one_path;
    };
    let n = paths.len() as f64;
    let mut on: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    for &l in paths.iter().flatten() {
        *on.entry(l).or_insert(0) += 1;
    }
    on.iter().map(|(&l, &k)| topo.capacity[l as usize] * n / k as f64).fold(f64::INFINITY, f64::min)
}

/// The links of every equal-cost path from host a to host b, in `path_by_hash`'s
/// numbering; None where there are more than `limit`.
fn equal_cost_paths(topo: &Topology, a: usize, b: usize, limit: u64) -> Option<Vec<Vec<u32>>> {
    let n = topo.n_paths(a, b);
    (n <= limit).then(|| {
        (0..n)
            .map(|k| {
                let mut links = Vec::new();
                topo.path_by_hash(k, a, b, &mut links);
                links
            })
            .collect()
    })
}

/// ASCC's priority tag of a packet sent while its flow was incomplete (larger than every
/// complete flow's tag, `1 +` the flow's remaining bytes).
const ASCC_INCOMPLETE_PRIO: u64 = (1 << 62) + 1;

/// `sprayed_capacity` enumerates at most this many paths per pair of hosts.
const SPRAY_CAP_PATHS: u64 = 4096;

/// Graphs with at most this many hosts find a pair's cached paths in a table of n^2 entries
/// of 4 bytes (256 KB at 256 hosts; a vector env holds one per lane), larger ones in a map.
const SPRAY_DENSE_HOSTS: usize = 256;
/// A pair with more equal-cost paths than this is not cached.
const SPRAY_CACHE_PATHS: u64 = 256;

impl Spray {
    fn new(topo: &Topology, seed: u64) -> Self {
        let n = topo.n_hosts;
        let graph = matches!(topo.kind, TopologyKind::Graph { .. });
        Spray {
            topo: topo.clone(),
            key: mix64(seed ^ 0x5350_5241_5900_0001),
            path: Vec::with_capacity(8),
            link_payload: vec![0; topo.n_links()],
            pair_entry: if graph && n <= SPRAY_DENSE_HOSTS { vec![0; n * n] } else { Vec::new() },
            pair_map: std::collections::HashMap::new(),
            graph,
            entries: Vec::new(),
            table: Vec::new(),
        }
    }

    /// The route of packet p of a flow from host src to host dst (the data's direction):
    /// the equal-cost path picked by the packet's hash, in the packet's direction.
    fn route(&mut self, p: &Packet, src: usize, dst: usize) -> &[u32] {
        match self.locate(p, src, dst) {
            Some((start, len)) => &self.table[start..start + len],
            None => &self.path,
        }
    }

    /// Adds `bytes` to the payload of every link of data packet p's route.
    fn add_payload(&mut self, p: &Packet, src: usize, dst: usize, bytes: u64) {
        let links = match self.locate(p, src, dst) {
            Some((start, len)) => &self.table[start..start + len],
            None => &self.path[..],
        };
        for &l in links {
            self.link_payload[l as usize] += bytes;
        }
    }

    /// Where packet p's route is: in `table` (start, length), or (None) in `path`.
    fn locate(&mut self, p: &Packet, src: usize, dst: usize) -> Option<(usize, usize)> {
        let ack = p.is_ack();
        let h = mix64(self.key ^ mix64((p.flow as u64) << 32 | p.seq as u64) ^ mix64(p.tx_ps.wrapping_mul(2) | ack as u64));
        let (a, b) = if ack { (dst, src) } else { (src, dst) };
        if self.graph {
            let slot = a * self.topo.n_hosts + b;
            let entry = if self.pair_entry.is_empty() {
                match self.pair_map.get(&(slot as u64)) {
                    Some(&e) => e,
                    None => {
                        let e = self.cache_pair(a, b);
                        self.pair_map.insert(slot as u64, e);
                        e
                    }
                }
            } else {
                if self.pair_entry[slot] == 0 {
                    self.pair_entry[slot] = self.cache_pair(a, b);
                }
                self.pair_entry[slot]
            };
            let (off, count, stride) = self.entries[entry as usize - 1];
            if count > 0 {
                // the number the walk would take: path h mod count (`GraphRoutes::path`)
                let start = (off + (h % count as u64) as u32 * stride) as usize;
                return Some((start + 1, self.table[start] as usize));
            }
        }
        self.path.clear();
        self.topo.path_by_hash(h, a, b, &mut self.path);
        None
    }

    /// Caches the equal-cost paths from host a to host b; returns the entry's index + 1.
    fn cache_pair(&mut self, a: usize, b: usize) -> u32 {
        let Some(paths) = equal_cost_paths(&self.topo, a, b, SPRAY_CACHE_PATHS) else {
            self.entries.push((0, 0, 0));
            return self.entries.len() as u32;
        };
        let count = paths.len();
        let stride = 1 + paths.iter().map(Vec::len).max().unwrap_or(0);
        let off = self.table.len() as u32;
        for links in paths {
            self.table.push(links.len() as u32);
            self.table.extend_from_slice(&links);
            self.table.resize(self.table.len() + stride - 1 - links.len(), u32::MAX);
        }
        self.entries.push((off, count as u32, stride as u32));
        self.entries.len() as u32
    }
}

/// A packet-level simulation of one trace.
#[derive(Debug, Clone)]
pub struct PacketSimulator {
    cfg: PacketConfig,
    transport: Transport,
    cc: CcParams,
    mss: u64,
    hdr: u16,
    ports: Vec<Port>,
    /// Each link's own propagation delay (s), when the topology has any (a graph's); empty otherwise.
    link_delay_s: Vec<f64>,
    /// Per link, the packets propagating on it with their arrival events' (time, sequence
    /// number), in order: a link's delay is fixed, so they arrive in the order they left,
    /// and its queue is sorted by (time, sequence number). Only the first packet's arrival
    /// event is in the event queue (as `EvKind::Arrive(l)`); when it is handled, the next
    /// one's is pushed. The queue pops the same events in the same order as one holding an
    /// event per packet, and stays small (at most one arrival per link).
    wires: Vec<VecDeque<(u64, u64, Packet)>>,
    flows: Vec<Flow>,
    senders: Vec<Sender>,
    receivers: Vec<Receiver>,
    route: Vec<u32>,
    route_off: Vec<u32>,
    rroute: Vec<u32>,
    rroute_off: Vec<u32>,
    path_cap: Vec<f64>,
    finish_ps: Vec<u64>,
    terminated: Vec<bool>,
    delivered: Vec<u64>,
    rto_event_at: Vec<u64>,
    /// Pending events, popped by (time, sequence number).
    heap: EventQueue<EvKind>,
    /// Events pending: those in the queue and the arrivals waiting behind a wire's first.
    pending: u64,
    next_seq: u64,
    /// `link_jitter_s` in ps (0: none), and the key of its hash (from `seed`).
    jitter_ps: u64,
    jitter_key: u64,
    /// `tx_complete_events`.
    tx_complete_events: bool,
    now: u64,
    n_ended: usize,
    stats: PacketStats,
    pias: Vec<u64>,
    sample_ps: u64,
    sample_ports: Vec<u32>,
    sample_t: Vec<u64>,
    sample_v: Vec<u32>,
    first_arrival_ps: u64,
    /// Flows in order of arrival (ties by row), and the next one to start: arrivals stay
    /// out of the event queue, which then holds only what is in flight (a few per active flow).
    order: Vec<u32>,
    next_start: usize,
    /// Per flow, the receiver's delayed-ACK state (empty when every segment is acknowledged).
    acks: Vec<AckState>,
    ack_every: u32,
    delack_ps: u64,
    /// Per flow: 0 not started, 1 SYN sent, 2 sending data (handshake done, or none).
    conn: Vec<u8>,
    /// Per flow (handshake): SYNs sent, and the SYN timer (the SYN-ACK echoes its SYN's send time).
    syn_tries: Vec<u32>,
    syn_timer_ps: Vec<u64>,
    syn_timeout_ps: u64,
    /// Per flow: retransmission and SYN timeouts.
    flow_timeouts: Vec<u32>,
    /// Per flow: data packets sent again, and fast retransmits (their sums are the run's
    /// `retransmissions` and `fast_retransmits`).
    flow_retx: Vec<u32>,
    flow_fast_retx: Vec<u32>,
    /// Per flow: when the destination admitted it (u64::MAX: not, or no admission) and
    /// when its sender started (u64::MAX: not yet).
    admitted_ps: Vec<u64>,
    start_ps: Vec<u64>,
    // ----- destination admission -----
    /// The flows as given (the admission policies read them).
    specs: Vec<FlowSpec>,
    /// Per destination: requests waiting, in the order they reached it.
    waiting: Vec<VecDeque<u32>>,
    /// Per destination: tokens held now.
    tokens: Vec<u32>,
    holds_token: Vec<bool>,
    /// Per destination: the most tokens held at once.
    peak_tokens: Vec<u32>,
    req_ps: u64,
    grant_ps: u64,
    /// The random admission draws, one stream per destination (as the fluid model's).
    admission_rngs: Vec<SplitMix64>,
    /// External admission (the token env): destinations that may have a decision to make,
    /// in the order they got one (a destination once); the run pauses while one has.
    decisions: VecDeque<usize>,
    /// `pause_on_flow_change`: the flow whose arrival paused the run (its sender starts
    /// when the run resumes, at the same time), and whether a flow ended at the last event.
    deferred_arrival: Option<u32>,
    flow_ended: bool,
    /// [`PacketSimulator::run_bounded`]: the event count at which the run pauses.
    pause_at_events: u64,
    /// The rate transports' routers and pacers (`rate.rs`; empty for the window transports).
    rate: rate::RateState,
    /// Packet spraying (`LoadBalancing::Packet`): None without it.
    spray: Option<Box<Spray>>,
    /// `gtcp:<inner>`: which flow's data each new segment carries (`hostsched.rs`); None otherwise.
    hs: Option<Box<HostSched>>,
    /// `asrpt` over `dctcp`: the aSCC paper's ASCC, whose senders apply its rules when a
    /// flow's data becomes complete (`PacketSimulator::update_avail`).
    ascc: bool,
}

/// Why [`PacketSimulator::run_loop`] returned.
enum Pause {
    /// Every flow ended, or the time limit was reached.
    Stop,
    /// An external admission decision is pending at this destination.
    Decision(usize),
    /// A flow arrived or ended (`pause_on_flow_change`).
    FlowChange,
    /// [`PacketSimulator::run_bounded`]'s count of events was reached.
    Budget,
}

fn to_ps(s: f64) -> u64 {
    (s * PS_PER_S).round() as u64
}

impl PacketSimulator {
    pub fn new(topo: &Topology, flows: &[FlowSpec], cfg: PacketConfig) -> Result<Self> {
        let transport = match cfg.transport {
            Some(t) => t,
            None => Transport::default_for(&cfg.scheduler)?,
        };
        let s = &cfg.scheduler;
        let host = HostPolicy::of(s)?;
        let ok = match transport {
            Transport::Tcp => matches!(s, Scheduler::Ps | Scheduler::Pias) || host.is_some(),
            // the priority schedulers also over dctcp: pFabric's queues marking ECN
            Transport::Dctcp => matches!(
                s,
                Scheduler::Ps
                    | Scheduler::Pias
                    | Scheduler::Fifo
                    | Scheduler::Srpt
                    | Scheduler::Ga(GaInner::Srpt)
                    | Scheduler::Las
                    | Scheduler::Edf
                    | Scheduler::External
            ) || host.is_some(),
            Transport::PFabric => matches!(
                s,
                Scheduler::Fifo | Scheduler::Srpt | Scheduler::Ga(GaInner::Srpt) | Scheduler::Las | Scheduler::Edf | Scheduler::External
            ),
            Transport::Rcp => matches!(s, Scheduler::Ps),
            Transport::Sdc => matches!(s, Scheduler::Sdc),
            Transport::Racs => matches!(s, Scheduler::Racs),
        };
        if !ok {
            return Err(unsupported(s, Some(transport)));
        }
        let bad = |m: String| Err(SimError::InvalidConfig(m));
        if !(536..=9000).contains(&cfg.mss_bytes) {
            return bad(format!("mss_bytes must be in 536..=9000 (RFC 879's minimum to a jumbo frame), got {}", cfg.mss_bytes));
        }
        if !(20..=120).contains(&cfg.header_bytes) {
            return bad(format!("header_bytes must be in 20..=120, got {}", cfg.header_bytes));
        }
        let wire = cfg.mss_bytes + cfg.header_bytes;
        let buffer = cfg.buffer_bytes.unwrap_or(if transport == Transport::PFabric { 36_864 } else { 360_000 });
        if buffer < wire as u64 || buffer > 1 << 40 {
            return bad(format!("buffer_bytes must hold at least one packet ({wire} B) and be at most 2^40, got {buffer}"));
        }
        if cfg.ecn_threshold_bytes == 0 {
            return bad("ecn_threshold_bytes must be > 0".into());
        }
        if cfg.buffer_packets == Some(0) {
            return bad("buffer_packets must be > 0".into());
        }
        if cfg.ecn_threshold_packets == Some(0) {
            return bad("ecn_threshold_packets must be > 0".into());
        }
        let init = cfg.init_cwnd_packets.unwrap_or(match transport {
            Transport::PFabric => 12.0,
            Transport::Sdc => 2.0, // "a send window of two packets" (Munir 4.2, of the TCPs of the time)
            _ => 10.0,
        });
        let maxc = cfg.max_cwnd_packets.unwrap_or(if transport == Transport::PFabric { 15.0 } else { f64::INFINITY });
        if !(init.is_finite() && init >= 1.0) {
            return bad(format!("init_cwnd_packets must be >= 1, got {init}"));
        }
        if !(maxc >= init) {
            return bad(format!("max_cwnd_packets must be >= init_cwnd_packets ({init}), got {maxc}"));
        }
        let min_rto = cfg.min_rto_s.unwrap_or(if transport == Transport::PFabric { 45e-6 } else { 1.0 });
        if !(min_rto.is_finite() && min_rto >= 1e-9 && min_rto <= 60.0) {
            return bad(format!("min_rto_s must be in [1e-9, 60] s, got {min_rto}"));
        }
        if !(cfg.delay_per_hop_s.is_finite() && cfg.delay_per_hop_s >= 0.0 && cfg.delay_per_hop_s <= 1.0) {
            return bad(format!("delay per hop must be in [0, 1] s, got {}", cfg.delay_per_hop_s));
        }
        let th = &cfg.pias_thresholds_bytes;
        if matches!(s, Scheduler::Pias) {
            check_thresholds(th)?;
        } else if !th.is_empty() {
            return bad(format!("pias_thresholds_bytes are only read by the pias scheduler, not '{}'", s.name()));
        }
        let reserve = cfg.queue_reserve_bytes;
        if reserve > 0 {
            if !matches!(s, Scheduler::Pias) || transport == Transport::PFabric {
                return bad(format!(
                    "queue_reserve_bytes is read only by the pias scheduler's priority queues (over tcp or dctcp), not '{}' over {}",
                    s.name(),
                    transport.name()
                ));
            }
            let queues = th.len() as u64 + 1;
            if reserve.saturating_mul(queues) > buffer {
                return bad(format!(
                    "queue_reserve_bytes x {queues} queues = {} B exceeds buffer_bytes ({buffer} B)",
                    reserve.saturating_mul(queues)
                ));
            }
        }
        if cfg.pias_port_ecn && !(matches!(s, Scheduler::Pias) && transport == Transport::Dctcp) {
            return bad(format!(
                "pias_port_ecn is read only by the pias scheduler's priority queues over dctcp, not '{}' over {}",
                s.name(),
                transport.name()
            ));
        }
        if cfg.ecn_marking != EcnMarking::Enqueue && transport != Transport::Dctcp {
            return bad(format!(
                "ecn_marking '{}' is an option of the queues that mark ECN (transport dctcp), not of '{}' over {}",
                cfg.ecn_marking.name(),
                s.name(),
                transport.name()
            ));
        }
        if cfg.ecn_marking == EcnMarking::Worst && matches!(s, Scheduler::Ps | Scheduler::Gtcp(_) | Scheduler::Pias) {
            return bad(format!(
                "ecn_marking 'worst' marks the pFabric queues of the priority schedulers over dctcp (srpt, asrpt, las, ...), \
                 not the queues of '{}'",
                s.name()
            ));
        }
        if cfg.fair_projection != FairProjection::Exact && host != Some(HostPolicy::Fair) {
            return bad(format!(
                "fair_projection '{}' is an option of gtcp:fair (how it projects tcp's next finish), not of '{}'",
                cfg.fair_projection.name(),
                s.name()
            ));
        }
        // the options of the tcp and dctcp senders' window and timer, refused elsewhere
        let tcp_only = [
            ("dupack_threshold", cfg.dupack_threshold != 3, "fast retransmit"),
            ("count_acked_segments", cfg.count_acked_segments, "window growth"),
            ("fixed_rto", cfg.fixed_rto, "retransmission timer"),
        ];
        if !(0.0..=1.0).contains(&cfg.dctcp_alpha_init) {
            return bad(format!("dctcp_alpha_init must be in [0, 1], got {}", cfg.dctcp_alpha_init));
        }
        if !(cfg.dctcp_min_cwnd_packets.is_finite() && cfg.dctcp_min_cwnd_packets >= 0.0) {
            return bad(format!("dctcp_min_cwnd_packets must be a finite number >= 0, got {}", cfg.dctcp_min_cwnd_packets));
        }
        // the options of the dctcp senders alone, refused elsewhere (set: not at their default)
        let dctcp_only = [
            ("dctcp_alpha_init", cfg.dctcp_alpha_init != 1.0, "DCTCP's alpha"),
            ("dctcp_min_cwnd_packets", cfg.dctcp_min_cwnd_packets != 2.0, "the least window DCTCP's cut leaves"),
            ("dctcp_hold_in_cwr", !cfg.dctcp_hold_in_cwr, "no window growth after DCTCP's cut"),
            ("dctcp_ignore_dupack_ece", cfg.dctcp_ignore_dupack_ece, "which ECN echoes cut the window"),
        ];
        if transport != Transport::Dctcp {
            if let Some((name, _, what)) = dctcp_only.iter().find(|o| o.1) {
                return bad(format!("{name} is read by the dctcp senders ({what}), not by {}", transport.name()));
            }
        }
        if !matches!(transport, Transport::Tcp | Transport::Dctcp) {
            if let Some((name, _, what)) = tcp_only.iter().find(|o| o.1) {
                return bad(format!("{name} is read by the tcp and dctcp senders ({what}), not by {}", transport.name()));
            }
        }
        if cfg.sack && !matches!(transport, Transport::Tcp | Transport::Dctcp | Transport::PFabric) {
            return bad(format!(
                "sack is read by the tcp, dctcp and pfabric senders (selective acknowledgments), not by {}: its senders \
                 pace at the routers' rate and recover by their timer",
                transport.name()
            ));
        }
        if cfg.prr && !(cfg.sack && matches!(transport, Transport::Tcp | Transport::Dctcp)) {
            return bad(format!(
                "prr is the fast recovery of the tcp and dctcp senders with sack (RFC 6937 over RFC 6675's pipe): give \
                 sack=True{}",
                if matches!(transport, Transport::Tcp | Transport::Dctcp) { String::new() } else { format!(", and transport tcp or dctcp, not {}", transport.name()) }
            ));
        }
        // options only some transports read (Python: `flowsched.sim.TRANSPORT_OPTIONS`), set
        // (not at their default) for another: refused, not ignored
        use Transport::*;
        let transport_only: [(&str, bool, &[Transport]); 4] = [
            ("ecn_threshold_bytes", cfg.ecn_threshold_bytes != 97_500, &[Dctcp]),
            ("init_cwnd_packets", cfg.init_cwnd_packets.is_some(), &[Tcp, Dctcp, PFabric, Sdc]),
            ("max_cwnd_packets", cfg.max_cwnd_packets.is_some(), &[Tcp, Dctcp, PFabric]),
            ("limited_transmit", cfg.limited_transmit, &[Tcp, Dctcp]),
        ];
        for (name, set, readers) in transport_only {
            if set && !readers.contains(&transport) {
                let names: Vec<&str> = readers.iter().map(|t| t.name()).collect();
                return bad(format!(
                    "{name} is read by the {} transport(s) only; this run's transport is '{}', which would ignore it",
                    names.join(", "),
                    transport.name()
                ));
            }
        }
        if cfg.load_balancing == LoadBalancing::Packet {
            if matches!(transport, Transport::Rcp | Transport::Sdc | Transport::Racs) {
                return Err(SimError::Unsupported(format!(
                    "packet spraying (load_balancing 'packet') with {}: its senders pace at the rate the routers of one path \
                     give, which per-packet paths would mix",
                    transport.name()
                )));
            }
            if host.is_some() {
                return Err(SimError::Unsupported(format!(
                    "'{}' (SCHED_TCP's scheduling at the sender) with packet spraying (load_balancing 'packet'): it \
                     schedules per route, and sprayed packets have none",
                    s.name()
                )));
            }
        }
        if host.is_some() && (cfg.admission.is_some() || cfg.terminate_missed) {
            return Err(SimError::Unsupported(format!(
                "'{}' (SCHED_TCP's scheduling at the sender) with {}: a flow's data rides its route's connections, \
                 which admission and termination act on one by one",
                s.name(),
                if cfg.admission.is_some() { "destination admission" } else { "terminate_missed" }
            )));
        }
        if !(1..=64).contains(&cfg.ack_every_segments) {
            return bad(format!("ack_every_segments must be in 1..=64, got {}", cfg.ack_every_segments));
        }
        if !(cfg.delayed_ack_timeout_s.is_finite() && cfg.delayed_ack_timeout_s > 0.0 && cfg.delayed_ack_timeout_s <= 1.0) {
            return bad(format!("delayed_ack_timeout_s must be in (0, 1] s, got {}", cfg.delayed_ack_timeout_s));
        }
        if !(cfg.syn_timeout_s.is_finite() && cfg.syn_timeout_s >= 1e-6 && cfg.syn_timeout_s <= 60.0) {
            return bad(format!("syn_timeout_s must be in [1e-6, 60] s, got {}", cfg.syn_timeout_s));
        }
        if !(cfg.clock_granularity_s.is_finite() && cfg.clock_granularity_s >= 0.0 && cfg.clock_granularity_s <= 1.0) {
            return bad(format!("clock_granularity_s must be in [0, 1] s, got {}", cfg.clock_granularity_s));
        }
        // the timers' options, set where no timer reads them
        if cfg.clock_granularity_s != 0.0 && (transport == PFabric || cfg.fixed_rto) {
            return bad(format!(
                "clock_granularity_s is RFC 6298's G in the estimated RTO; {} does not estimate it",
                if cfg.fixed_rto { "fixed_rto (the RTO is min_rto_s)".to_string() } else { format!("{} (a fixed RTO of about 3 RTTs)", transport.name()) }
            ));
        }
        if cfg.syn_timeout_s != 1.0 && !cfg.handshake && transport != Racs {
            return bad(format!(
                "syn_timeout_s is the handshake's SYN timer: give handshake=True (this run's {} senders send no SYN)",
                transport.name()
            ));
        }
        if cfg.delayed_ack_timeout_s != 0.2 && cfg.ack_every_segments == 1 {
            return bad(
                "delayed_ack_timeout_s is the timer of delayed ACKs, which ack_every_segments=1 (an ACK per segment) never holds: \
                 give ack_every_segments >= 2"
                    .into(),
            );
        }
        if !(cfg.link_jitter_s.is_finite() && (0.0..=1e-3).contains(&cfg.link_jitter_s)) {
            return bad(format!("link_jitter_s must be in [0, 1e-3] s, got {}", cfg.link_jitter_s));
        }
        for (name, v) in [("request_delay_s", cfg.request_delay_s), ("grant_delay_s", cfg.grant_delay_s)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return bad(format!("{name} must be in [0, 1] s, got {v}"));
            }
            if v > 0.0 && cfg.admission.is_none() {
                return bad(format!("{name} is a delay of destination admission: give admission too"));
            }
        }
        if let Some(a) = &cfg.admission {
            if a.k == 0 {
                return bad("admission k must be >= 1".into());
            }
            if a.policy.uses_size() {
                if let Some(r) = flows.iter().position(|f| !f.size_known) {
                    return Err(SimError::InvalidFlow {
                        row: r,
                        field: "size_known",
                        message: format!("admission policy {:?} reads flow sizes, and this flow's size is hidden", a.policy),
                    });
                }
            }
        }
        if let Some(q) = cfg.queue_sample_s {
            if !(q.is_finite() && q >= 1e-9) {
                return bad(format!("queue sample interval must be >= 1 ns, got {q}"));
            }
        }
        if topo.expected_links() != Some(topo.n_links()) || topo.n_links() > u32::MAX as usize {
            return bad("topology's link count does not match its kind".into());
        }
        if flows.len() > u32::MAX as usize / 2 {
            return bad(format!("{} flows: at most 2^31", flows.len()));
        }
        let dp = to_ps(cfg.delay_per_hop_s);
        // A port's propagation (delay per hop plus a graph link's own delay) is bounded as
        // the delay per hop is, so that picosecond times cannot overflow.
        for l in 0..topo.n_links() {
            let gbps = topo.capacity[l] * 8.0 / 1e9;
            if !(MIN_LINK_GBPS..=MAX_LINK_GBPS).contains(&gbps) {
                return bad(format!(
                    "link {l} ({}) runs at {gbps:e} Gbps; the packet model takes link rates from {MIN_LINK_GBPS:e} to \
                     {MAX_LINK_GBPS:e} Gbps (1 Mbps to 1 Pbps: its clock counts whole picoseconds up to 9.2e6 s)",
                    topo.name(l)
                ));
            }
            let d = cfg.delay_per_hop_s + topo.link_delay_s(l);
            if d > 1.0 {
                return bad(format!(
                    "link {l} ({}): delay per hop + its own delay = {d} s; the packet model takes at most 1 s per link",
                    topo.name(l)
                ));
            }
        }
        let disc = match (transport, s) {
            (Transport::PFabric, _) => Discipline::PFabric,
            (t, Scheduler::Pias) => Discipline::MultiQueue { queues: (th.len() + 1) as u8, ecn: t == Transport::Dctcp },
            (Transport::Dctcp, Scheduler::Ps | Scheduler::Gtcp(_)) => Discipline::EcnFifo,
            (Transport::Dctcp, _) => Discipline::PriorityEcn,
            (Transport::Tcp | Transport::Rcp | Transport::Sdc | Transport::Racs, _) => Discipline::DropTail,
        };
        if cfg.ecn_threshold_packets.is_some() && (disc != Discipline::EcnFifo || cfg.ecn_marking != EcnMarking::Enqueue) {
            return bad(format!(
                "ecn_threshold_packets counts the packets of one FIFO queue at a packet's arrival: dctcp with ps or gtcp \
                 and ecn_marking \"enqueue\" only (this run: {} with {}, ecn_marking \"{}\"); use ecn_threshold_bytes",
                transport.name(),
                s.name(),
                cfg.ecn_marking.name()
            ));
        }
        if cfg.buffer_packets.is_some() && !matches!(disc, Discipline::EcnFifo | Discipline::DropTail) {
            return bad(format!(
                "buffer_packets counts the packets of one FIFO queue per port: tcp, rcp, sdc and racs (drop-tail), or \
                 dctcp with ps or gtcp (this run: {} \
                 with {}); use buffer_bytes",
                transport.name(),
                s.name()
            ));
        }
        let ascc = transport == Transport::Dctcp && *s == Scheduler::Ga(GaInner::Srpt);
        let ports: Vec<Port> =
            // A port's propagation: the run's delay per hop plus its link's own (a graph's
            // per-link delays; 0 on the big switch and the leaf-spine).
            topo.capacity
                .iter()
                .enumerate()
                .map(|(l, &c)| {
                    let mut p = Port::new(disc, buffer, cfg.ecn_threshold_bytes, PS_PER_S / c, dp + to_ps(topo.link_delay_s(l)));
                    p.ecn_threshold_packets = cfg.ecn_threshold_packets.unwrap_or(0);
                    p.buffer_packets = cfg.buffer_packets.unwrap_or(0);
                    p.reserve_bytes = reserve;
                    p.marking = cfg.ecn_marking;
                    p.port_ecn = cfg.pias_port_ecn;
                    if ascc {
                        // ASCC's ports drop a flow's packets sent while it was incomplete when
                        // one of its complete-flow packets leaves before them (the aSCC
                        // authors' switches, `drop_low_prio`): "retransmit when complete"
                        // then costs the copies' place, not the stale packets' too
                        p.stale_prio = ASCC_INCOMPLETE_PRIO;
                    }
                    p
                })
                .collect();

        let mss = cfg.mss_bytes as u64;
        let n = flows.len();
        let mut fl = Vec::with_capacity(n);
        let mut route = Vec::with_capacity(2 * n);
        let mut route_off = Vec::with_capacity(n + 1);
        let mut rroute = Vec::with_capacity(2 * n);
        let mut rroute_off = Vec::with_capacity(n + 1);
        let mut path_cap = Vec::with_capacity(n);
        let mut senders = Vec::with_capacity(n);
        route_off.push(0);
        rroute_off.push(0);
        let cc = CcParams {
            transport,
            init_cwnd: init,
            max_cwnd: maxc,
            min_rto_ps: to_ps(min_rto),
            max_rto_ps: MAX_RTO_PS,
            // the default pFabric RTO: 45 us, or 3 unloaded RTTs of the flow's path if longer
            pfabric_rto_rtts: if cfg.min_rto_s.is_none() { 3.0 } else { 0.0 },
            dctcp_g: DCTCP_G,
            dctcp_alpha_init: cfg.dctcp_alpha_init,
            dctcp_min_cwnd: cfg.dctcp_min_cwnd_packets,
            dctcp_cwr_hold: cfg.dctcp_hold_in_cwr,
            dctcp_ignore_dupack_ece: cfg.dctcp_ignore_dupack_ece,
            clock_g_ps: (cfg.clock_granularity_s * PS_PER_S).round().max(G_MIN_PS),
            limited_transmit: cfg.limited_transmit,
            dupack_threshold: cfg.dupack_threshold,
            count_acked_segments: cfg.count_acked_segments,
            fixed_rto: cfg.fixed_rto,
            sack: cfg.sack,
            prr: cfg.prr,
        };
        let bad_flow = |row: usize, field: &'static str, message: String| Err(SimError::InvalidFlow { row, field, message });
        let mut spray_caps: std::collections::HashMap<(usize, usize), f64> = std::collections::HashMap::new();
        topo.check_pinned(flows)?; // routes pinned by a trace's `path` column: made for these flows
        for (r, f) in flows.iter().enumerate() {
            if f.src >= topo.n_hosts || f.dst >= topo.n_hosts {
                return bad_flow(r, "src", format!("hosts {} -> {} outside the topology's {} hosts", f.src, f.dst, topo.n_hosts));
            }
            if f.src == f.dst {
                return bad_flow(r, "dst", format!("source and destination are both host {}", f.src));
            }
            if !(f.arrival_s.is_finite() && f.arrival_s >= 0.0 && f.arrival_s <= MAX_TIME_S) {
                return bad_flow(r, "arrival_s", format!("must be in [0, {MAX_TIME_S}] s in the packet model, got {}", f.arrival_s));
            }
            if !(f.size_bytes.is_finite() && f.size_bytes >= 1.0 && f.size_bytes <= 1e12) {
                return bad_flow(r, "size_bytes", format!("must be in [1, 1e12] bytes in the packet model, got {}", f.size_bytes));
            }
            if f.weight != 1.0 {
                return bad_flow(r, "weight", format!("no packet-level transport honours weights; got {} (use weight 1)", f.weight));
            }
            if !(f.data_span_s.is_finite() && f.data_span_s >= 0.0 && f.data_span_s <= MAX_TIME_S) {
                return bad_flow(r, "data_span_s", format!("must be in [0, {MAX_TIME_S}] s in the packet model, got {}", f.data_span_s));
            }
            if f.data_span_s > 0.0 && host.is_some() {
                return bad_flow(
                    r,
                    "data_span_s",
                    format!(
                        "'{}' (SCHED_TCP's scheduling at the sender) with data arriving over time ({} s): a connection's \
                         segments carry its route's flows' data, which the layer does not hold back until it has arrived",
                        s.name(),
                        f.data_span_s
                    ),
                );
            }
            if !f.size_known && host.map_or(s.uses_size(), HostPolicy::uses_size) {
                return bad_flow(r, "size_known", format!("scheduler '{}' reads sizes, and this flow's size is hidden", s.name()));
            }
            let dl = if f.deadline_s.is_nan() {
                u64::MAX
            } else if f.deadline_s.is_finite() && f.deadline_s > 0.0 && f.deadline_s <= MAX_TIME_S {
                to_ps(f.arrival_s + f.deadline_s)
            } else {
                return bad_flow(r, "deadline_s", format!("must be NaN (none) or in (0, {MAX_TIME_S}] s, got {}", f.deadline_s));
            };
            let size = f.size_bytes.ceil() as u64;
            let npk = size.div_ceil(mss);
            if npk > u32::MAX as u64 / 2 {
                return bad_flow(r, "size_bytes", format!("{npk} packets: at most 2^31 per flow"));
            }
            let before = route.len();
            let rbefore = rroute.len();
            topo.path(r as u64, f.src, f.dst, &mut route);
            topo.path(r as u64, f.dst, f.src, &mut rroute);
            // A packet counts its hops in a u8 (`Packet::hop`): longer routes are refused.
            let hops = (route.len() - before).max(rroute.len() - rbefore);
            if hops > MAX_HOPS {
                let pinned = route.len() - before > MAX_HOPS && topo.pinned().is_some_and(|p| p.is_pinned(r));
                return bad_flow(
                    r,
                    if pinned { "path" } else { "dst" },
                    format!("its route has {hops} links; the packet model takes routes of at most {MAX_HOPS} links"),
                );
            }
            route_off.push(route.len() as u32);
            rroute_off.push(rroute.len() as u32);
            let links = &route[before..];
            let mut cap = links.iter().map(|&l| topo.capacity[l as usize]).fold(f64::INFINITY, f64::min);
            if cfg.load_balancing == LoadBalancing::Packet && !topo.pinned().is_some_and(|p| p.is_pinned(r)) {
                cap = *spray_caps.entry((f.src, f.dst)).or_insert_with(|| sprayed_capacity(topo, f.src, f.dst, cap));
            }
            path_cap.push(cap);
            // unloaded RTT: a full packet through the data path, an ACK back
            let rb = rroute_off[r] as usize;
            let mut rtt0 = 0u64;
            for &l in links {
                rtt0 += ports[l as usize].ser_ps(wire as u16) + ports[l as usize].prop_ps;
            }
            for &l in &rroute[rb..] {
                rtt0 += ports[l as usize].ser_ps(cfg.header_bytes as u16) + ports[l as usize].prop_ps;
            }
            let span_ps = to_ps(f.data_span_s);
            let mut sender = Sender::new(npk as u32, &cc, rtt0);
            if span_ps > 0 {
                sender.avail = 0; // counted when it starts (PacketSimulator::update_avail)
            }
            senders.push(sender);
            let bdp_packets = cap * rtt0 as f64 * 1e-12 / wire as f64;
            fl.push(Flow { arrival_ps: to_ps(f.arrival_s), size, deadline_ps: dl, n: npk as u32, ext: total_order_bits(0.0), span_ps, bdp_packets });
        }
        // gtcp:fair, exact: each flow's finish under plain tcp, from a run of the same trace
        // (the network run of gtcp is plain tcp's, whatever the policy)
        let tcp_finish_ps = if host == Some(HostPolicy::Fair) && cfg.fair_projection == FairProjection::Exact {
            let mut plain = cfg.clone();
            plain.scheduler = Scheduler::Ps;
            plain.transport = Some(transport);
            plain.queue_sample_s = None;
            plain.sample_ports = None;
            plain.pause_on_flow_change = false;
            let mut tcp = PacketSimulator::new(topo, flows, plain)?;
            tcp.run().map_err(|e| match e {
                SimError::Stalled(m) => SimError::Stalled(format!("{m} (in the plain tcp run behind gtcp:fair's exact projection)")),
                e => e,
            })?;
            tcp.finish_ps
        } else {
            Vec::new()
        };
        let hs = host.map(|h| {
            let routes: Vec<&[u32]> = (0..n).map(|i| &route[route_off[i] as usize..route_off[i + 1] as usize]).collect();
            let (size, arrival) = (fl.iter().map(|f| f.size).collect(), fl.iter().map(|f| f.arrival_ps).collect());
            Box::new(HostSched::new(h, &routes, size, arrival, tcp_finish_ps))
        });
        let mut sim = PacketSimulator {
            ascc,
            transport,
            cc,
            mss,
            hdr: cfg.header_bytes as u16,
            wires: vec![VecDeque::new(); ports.len()],
            link_delay_s: if topo.has_link_delays() { (0..ports.len()).map(|l| topo.link_delay_s(l)).collect() } else { Vec::new() },
            ports,
            receivers: vec![Receiver::new(cfg.sack); n],
            senders,
            route,
            route_off,
            rroute,
            rroute_off,
            path_cap,
            finish_ps: vec![u64::MAX; n],
            terminated: vec![false; n],
            delivered: vec![0; n],
            rto_event_at: vec![u64::MAX; n],
            heap: EventQueue::new(0), // its bucket width is set below, from the ports
            pending: 0,
            next_seq: 0,
            jitter_ps: (cfg.link_jitter_s * PS_PER_S).round() as u64,
            jitter_key: mix64(cfg.seed ^ 0x6A09_E667_F3BC_C908),
            tx_complete_events: cfg.tx_complete_events,
            now: 0,
            n_ended: 0,
            stats: PacketStats::default(),
            pias: th.iter().map(|&x| x.ceil() as u64).collect(),
            sample_ps: cfg.queue_sample_s.map(to_ps).unwrap_or(0),
            sample_ports: Vec::new(),
            sample_t: Vec::new(),
            sample_v: Vec::new(),
            first_arrival_ps: fl.iter().map(|f| f.arrival_ps).min().unwrap_or(0),
            order: Vec::new(),
            next_start: 0,
            acks: if cfg.ack_every_segments > 1 { vec![AckState::new(); n] } else { Vec::new() },
            ack_every: cfg.ack_every_segments,
            delack_ps: to_ps(cfg.delayed_ack_timeout_s),
            conn: vec![0; n],
            syn_tries: if cfg.handshake || transport == Transport::Racs { vec![0; n] } else { Vec::new() },
            syn_timer_ps: if cfg.handshake || transport == Transport::Racs { vec![u64::MAX; n] } else { Vec::new() },
            syn_timeout_ps: to_ps(cfg.syn_timeout_s),
            flow_timeouts: vec![0; n],
            flow_retx: vec![0; n],
            flow_fast_retx: vec![0; n],
            admitted_ps: vec![u64::MAX; n],
            start_ps: vec![u64::MAX; n],
            specs: flows.to_vec(),
            waiting: if cfg.admission.is_some() { vec![VecDeque::new(); topo.n_hosts] } else { Vec::new() },
            tokens: if cfg.admission.is_some() { vec![0; topo.n_hosts] } else { Vec::new() },
            holds_token: vec![false; if cfg.admission.is_some() { n } else { 0 }],
            peak_tokens: if cfg.admission.is_some() { vec![0; topo.n_hosts] } else { Vec::new() },
            req_ps: to_ps(cfg.request_delay_s),
            grant_ps: to_ps(cfg.grant_delay_s),
            admission_rngs: if cfg.admission.is_some() { admission_streams(cfg.seed, topo.n_hosts)? } else { Vec::new() },
            decisions: VecDeque::new(),
            deferred_arrival: None,
            flow_ended: false,
            pause_at_events: u64::MAX,
            rate: match transport {
                Transport::Rcp => rate::RateState::rcp(&topo.capacity, n),
                Transport::Sdc => rate::RateState::new_sdc(&topo.capacity, n),
                Transport::Racs => rate::RateState::new_racs(&topo.capacity, n),
                _ => rate::RateState::default(),
            },
            hs,
            spray: (cfg.load_balancing == LoadBalancing::Packet).then(|| Box::new(Spray::new(topo, cfg.seed))),
            flows: fl,
            cfg,
        };
        if let Some(sp) = &sim.cfg.sample_ports {
            for &p in sp {
                if p as usize >= sim.ports.len() {
                    return bad(format!("sample port {p} outside the topology's {} links", sim.ports.len()));
                }
            }
            sim.sample_ports = sp.clone();
        } else if sim.sample_ps > 0 {
            sim.sample_ports = (0..sim.ports.len() as u32).collect();
        }
        // Buckets of the event queue: about the shortest serialization time (an ACK's on the
        // fastest link), so that a bucket holds few events under load (the order of events
        // does not depend on it).
        let min_ser = sim.ports.iter().map(|p| p.ser_ps(sim.hdr)).min().unwrap_or(1);
        sim.heap = EventQueue::new(63 - min_ser.max(1).leading_zeros());
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| (sim.flows[i as usize].arrival_ps, i));
        sim.order = order;
        for i in 0..n {
            if sim.cfg.terminate_missed && sim.flows[i].deadline_ps != u64::MAX {
                let d = sim.flows[i].deadline_ps;
                sim.push(d, EvKind::Deadline(i as u32));
            }
        }
        if sim.sample_ps > 0 && n > 0 {
            sim.push(sim.first_arrival_ps, EvKind::Sample);
        }
        // the clock starts at 0 (the trace's time origin), as the fluid model's: a run can
        // be stepped to a time before the first arrival
        sim.now = 0;
        Ok(sim)
    }

    #[inline]
    fn push(&mut self, t: u64, kind: EvKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(t, seq, kind);
        self.note_pending();
    }

    /// One more event pending (the peak counts the queue and the wires' arrivals together).
    #[inline]
    fn note_pending(&mut self) {
        self.pending += 1;
        if self.pending > self.stats.peak_pending_events {
            self.stats.peak_pending_events = self.pending;
        }
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }
    pub fn n_flows(&self) -> usize {
        self.flows.len()
    }
    /// Simulated time, seconds.
    pub fn now_s(&self) -> f64 {
        self.now as f64 / PS_PER_S
    }
    pub fn now_ps(&self) -> u64 {
        self.now
    }
    /// Whether every flow has finished or was terminated.
    pub fn done(&self) -> bool {
        self.n_ended == self.flows.len()
    }

    /// Runs to the end.
    pub fn run(&mut self) -> Result<()> {
        self.run_until_ps(u64::MAX)
    }

    /// [`PacketSimulator::run`] in pieces: true once every flow has ended, false after
    /// `max_events` more events (it pauses between events, so a run in pieces is the same
    /// bit for bit; the Python bindings look for Ctrl-C between pieces).
    pub fn run_bounded(&mut self, max_events: u64) -> Result<bool> {
        self.pause_at_events = self.stats.events.saturating_add(max_events.max(1));
        let out = self.run_until_ps(u64::MAX);
        self.pause_at_events = u64::MAX;
        out.map(|()| self.done())
    }

    /// External admission: runs to the next admission decision and returns its
    /// destination (its requests: [`PacketSimulator::waiting`]; the choice:
    /// [`PacketSimulator::grant`]), or None when every flow has ended.
    pub fn next_decision(&mut self) -> Result<Option<usize>> {
        loop {
            match self.run_loop(u64::MAX)? {
                Pause::Stop => return Ok(None),
                Pause::Decision(d) => return Ok(Some(d)),
                Pause::FlowChange | Pause::Budget => {}
            }
        }
    }

    /// Runs to `until_s` (as [`PacketSimulator::step`]), pausing early at the next flow
    /// change when `pause_on_flow_change` is on (`Outcome::FlowsChanged`) or at a pending
    /// external admission decision (`Outcome::Decision`). A paused run resumed at once is
    /// the run that never paused, bit for bit (the pauses fall between events).
    pub fn advance(&mut self, until_s: f64) -> Result<Outcome> {
        let u = self.until_ps(until_s)?;
        Ok(match self.run_loop(u)? {
            Pause::Decision(dst) => Outcome::Decision { dst },
            Pause::FlowChange => Outcome::FlowsChanged,
            Pause::Stop if self.done() => Outcome::Done,
            Pause::Stop | Pause::Budget => Outcome::TimeReached,
        })
    }

    /// Runs until `n` more flows have ended (finished or were terminated), time `until_s`,
    /// or the end, as the fluid model's `run_until_ended` (the thresholds env's control
    /// interval); needs `pause_on_flow_change`. Appends the flows that ended to `ended`
    /// (in the order they were seen to end) and returns why it stopped: `FlowsChanged`
    /// once `n` ended, `TimeReached` or `Done`. It only pauses between events, so a run
    /// driven this way is the run that never paused, bit for bit.
    pub fn run_until_ended(&mut self, n: usize, until_s: f64, ended: &mut Vec<u32>) -> Result<Outcome> {
        if !self.cfg.pause_on_flow_change {
            return Err(SimError::InvalidConfig("run_until_ended needs pause_on_flow_change".into()));
        }
        let start = ended.len();
        // every arrival pauses the run before its sender starts, so each flow is watched
        // before it can end
        let mut seen = self.next_start;
        let mut watch: Vec<u32> = self.arrived().iter().copied().filter(|&f| !self.ended(f as usize)).collect();
        loop {
            let out = self.advance(until_s)?;
            let mut k = 0;
            while k < watch.len() {
                if self.ended(watch[k] as usize) {
                    ended.push(watch.swap_remove(k));
                } else {
                    k += 1;
                }
            }
            match out {
                Outcome::FlowsChanged => {
                    for i in seen..self.next_start {
                        let f = self.order[i];
                        if !self.ended(f as usize) {
                            watch.push(f);
                        }
                    }
                    seen = self.next_start;
                    if ended.len() - start >= n {
                        return Ok(out);
                    }
                }
                Outcome::Decision { dst } => {
                    return Err(SimError::InvalidConfig(format!(
                        "external admission decision pending at destination {dst}: run_until_ended cannot make it"
                    )))
                }
                Outcome::Done | Outcome::TimeReached => return Ok(out),
            }
        }
    }

    /// Flows that have arrived, in order of arrival (ties by row).
    pub fn arrived(&self) -> &[u32] {
        &self.order[..self.next_start]
    }

    /// External admission: the destination whose decision is pending (it has a free
    /// token and a waiting request), if any.
    pub fn pending_decision(&self) -> Option<usize> {
        self.decisions.iter().copied().find(|&d| self.can_admit(d))
    }

    fn can_admit(&self, d: usize) -> bool {
        match &self.cfg.admission {
            Some(a) => !self.waiting[d].is_empty() && (self.tokens[d] as usize) < a.k,
            None => false,
        }
    }

    /// Requests waiting at destination d, in the order they reached it (empty without admission).
    pub fn waiting(&self, d: usize) -> &VecDeque<u32> {
        static NONE: VecDeque<u32> = VecDeque::new();
        self.waiting.get(d).unwrap_or(&NONE)
    }

    /// External admission: gives the pending decision's token at `dst` to the request at
    /// `position` of its window (the first `window` waiting, oldest first), as a rule
    /// would: the grant then travels `grant_delay_s` to the sender.
    pub fn grant(&mut self, dst: usize, position: usize) -> Result<()> {
        match self.pending_decision() {
            Some(d) if d == dst => {}
            other => {
                return Err(SimError::InvalidAction(format!("no admission decision pending at destination {dst} (pending: {other:?})")));
            }
        }
        let w = self.cfg.admission.as_ref().map_or(0, |a| a.window);
        let q = &self.waiting[dst];
        let m = if w == 0 { q.len() } else { w.min(q.len()) };
        if position >= m {
            return Err(SimError::InvalidAction(format!(
                "position {position} outside the window of {m} waiting requests at destination {dst}"
            )));
        }
        let Some(f) = self.waiting[dst].remove(position) else {
            return Err(SimError::InvalidAction(format!("no request at position {position} at destination {dst}")));
        };
        self.give_token(dst, f as usize);
        // forget the destinations with nothing left to decide
        let mut keep = std::mem::take(&mut self.decisions);
        keep.retain(|&d| self.can_admit(d));
        self.decisions = keep;
        Ok(())
    }

    /// Handles every event at or before `until_s`; simulated time is then `until_s` (or the
    /// last event's time when the run ended before).
    pub fn step(&mut self, until_s: f64) -> Result<()> {
        let u = self.until_ps(until_s)?;
        self.run_until_ps(u)
    }

    fn until_ps(&self, until_s: f64) -> Result<u64> {
        if until_s.is_nan() || until_s < 0.0 {
            return Err(SimError::InvalidAction(format!("until must be a time >= 0, got {until_s}")));
        }
        let u = if until_s >= MAX_TIME_S * 10.0 { u64::MAX } else { to_ps(until_s) };
        if u < self.now {
            return Err(SimError::InvalidAction(format!("until = {until_s} s lies before now = {} s", self.now_s())));
        }
        Ok(u)
    }

    fn run_until_ps(&mut self, until: u64) -> Result<()> {
        loop {
            match self.run_loop(until)? {
                Pause::Decision(d) => {
                    return Err(SimError::InvalidConfig(format!(
                        "external admission decision pending at destination {d}: drive the simulator with next_decision()/grant()"
                    )))
                }
                Pause::Stop | Pause::Budget => return Ok(()),
                Pause::FlowChange => {}
            }
        }
    }

    /// Handles the events up to `until`; returns early with the destination of a pending
    /// external admission decision (checked between events, so a run paused there and
    /// granted at once is the run of a rule making the same choices, bit for bit).
    fn run_loop(&mut self, until: u64) -> Result<Pause> {
        // an arrival that paused the run is handled now, at its time
        if let Some(f) = self.deferred_arrival.take() {
            self.arrival(f as usize);
        }
        self.flow_ended = false;
        while !self.done() {
            if self.stats.events >= self.pause_at_events {
                return Ok(Pause::Budget);
            }
            if !self.decisions.is_empty() {
                if let Some(d) = self.pending_decision() {
                    return Ok(Pause::Decision(d));
                }
                self.decisions.clear();
            }
            // the next arrival goes before queued events at the same time
            if let Some(&f) = self.order.get(self.next_start) {
                let t = self.flows[f as usize].arrival_ps;
                if self.heap.peek().is_none_or(|top| t <= top.t) {
                    if t > until {
                        self.now = until;
                        return Ok(Pause::Stop);
                    }
                    self.next_start += 1;
                    self.now = t;
                    self.count_event()?;
                    if self.cfg.pause_on_flow_change {
                        self.deferred_arrival = Some(f);
                        return Ok(Pause::FlowChange);
                    }
                    self.arrival(f as usize);
                    continue;
                }
            }
            let Some(top) = self.heap.peek() else {
                return Err(SimError::Stalled(format!(
                    "no event left at {} s with {} of {} flows unfinished",
                    self.now_s(),
                    self.flows.len() - self.n_ended,
                    self.flows.len()
                )));
            };
            if top.t > until {
                self.now = until;
                return Ok(Pause::Stop);
            }
            let Some(ev) = self.heap.pop() else { break };
            self.pending -= 1;
            debug_assert!(ev.t >= self.now, "an event at {} ps, before now ({} ps)", ev.t, self.now);
            self.now = ev.t;
            self.count_event()?;
            match ev.val {
                EvKind::TxDone(l) => self.tx_done(l as usize),
                EvKind::Arrive(l) => {
                    // a wire's first arrival: the next packet on that wire (if any) takes its place
                    let w = &mut self.wires[l as usize];
                    let arrived = w.pop_front();
                    if let Some(&(t, seq, _)) = w.front() {
                        self.heap.push(t, seq, EvKind::Arrive(l));
                    }
                    if let Some((_, _, p)) = arrived {
                        self.arrive(p);
                    }
                }
                EvKind::Rto(f) => self.rto(f as usize, ev.t),
                EvKind::Deadline(f) => self.deadline(f as usize),
                EvKind::Sample => self.sample(),
                EvKind::Request(f) => self.request(f as usize),
                EvKind::Grant(f) => self.start(f as usize),
                EvKind::DelAck(f) => self.delack_timer(f as usize, ev.t),
                EvKind::Syn(f) => self.syn_timer(f as usize, ev.t),
                EvKind::Pace(f) => self.rate_pace(f as usize, ev.t),
                EvKind::Data(f) => self.data_arrived(f as usize, ev.t),
            }
            if self.flow_ended && self.cfg.pause_on_flow_change && !self.done() {
                self.flow_ended = false;
                return Ok(Pause::FlowChange);
            }
        }
        let now = self.now;
        for p in &mut self.ports {
            p.close(now);
        }
        Ok(Pause::Stop)
    }

    #[inline]
    fn count_event(&mut self) -> Result<()> {
        self.stats.events += 1;
        if self.now >= CLOCK_END_PS {
            return Err(SimError::Unsupported(format!(
                "the packet model's clock ends at {:.4e} s (2^63 picoseconds) and this run reached it with {} of {} \
                 flows unfinished: its flows take too long at these link rates for a picosecond clock",
                CLOCK_END_PS as f64 / PS_PER_S,
                self.flows.len() - self.n_ended,
                self.flows.len()
            )));
        }
        if let Some(m) = self.cfg.max_events {
            if self.stats.events > m {
                return Err(SimError::Stalled(format!("event budget of {m} events spent at {} s", self.now_s())));
            }
        }
        Ok(())
    }

    /// The priority tag of flow f's next packet (smaller first).
    #[inline]
    fn prio(&self, f: usize) -> u64 {
        let fl = &self.flows[f];
        let s = &self.senders[f];
        let sent = (s.high as u64 * self.mss).min(fl.size);
        let remaining = || fl.size - (s.snd_una as u64 * self.mss).min(fl.size);
        // pFabric tags are at least 1: ACKs carry 0, the highest priority, so no data
        // packet ever evicts an ACK.
        1 + match self.cfg.scheduler {
            Scheduler::Fifo => fl.arrival_ps,
            Scheduler::Srpt => remaining(),
            // aSCC's GA transform: a flow whose data has all arrived by its remaining size
            // (SRPT), after it, the others in arrival order
            Scheduler::Ga(_) if self.is_complete(f) => remaining(),
            // ASCC's switches (aSCC section VII, "Buffer management policy"): the packets of
            // incomplete flows wait in a queue of their own, served first in first out when no
            // complete flow's packet waits, and the last of them to arrive is dropped first on
            // overflow. One tag for all of them gives exactly that in the priority queue
            // (equal tags leave in arrival order; the latest of the largest tag is dropped)
            // (the `1 +` above makes it ASCC_INCOMPLETE_PRIO, what the ports know as stale)
            Scheduler::Ga(_) if self.ascc => ASCC_INCOMPLETE_PRIO - 1,
            Scheduler::Ga(_) => (1 << 62) + fl.arrival_ps,
            Scheduler::Las => sent,
            Scheduler::Edf => {
                if fl.deadline_ps != u64::MAX {
                    fl.deadline_ps
                } else {
                    (1 << 62) + fl.arrival_ps
                }
            }
            Scheduler::Pias => return self.pias.iter().take_while(|&&t| t <= sent).count() as u64,
            Scheduler::External => fl.ext.min(u64::MAX - 1),
            _ => return 0,
        }
    }

    fn send_window(&mut self, f: usize) {
        if self.terminated[f] {
            return;
        }
        if self.rate.paced() {
            return self.rate_send(f);
        }
        while self.senders[f].can_send() {
            let seq = self.senders[f].take_next();
            self.emit(f, seq);
        }
        self.arm_timer(f);
    }

    fn emit(&mut self, f: usize, seq: u32) {
        let (prio, rf) = if self.rate.on() { self.rate_data_tag(f, seq) } else { (self.prio(f), 0) };
        let s = &mut self.senders[f];
        let retx = seq < s.high;
        if !retx {
            s.high = seq + 1;
        }
        s.on_send(self.now, &self.cc);
        let fl = &self.flows[f];
        let payload = if seq + 1 == fl.n { fl.size - seq as u64 * self.mss } else { self.mss };
        if !retx {
            if let Some(h) = self.hs.as_deref_mut() {
                // a new segment: the scheduler picks whose data it carries (a failure
                // leaves data undelivered, and the run ends Stalled, never panics)
                let senders = &self.senders;
                h.assign(f, seq as u64 * self.mss, payload, |j| senders[j].cwnd);
            }
        }
        self.stats.data_packets += 1;
        if retx {
            self.stats.retransmissions += 1;
            self.flow_retx[f] += 1;
        }
        let p = Packet {
            flow: f as u32,
            seq,
            prio,
            tx_ps: self.now,
            wire_bytes: (payload as u16) + self.hdr,
            hop: 0,
            flags: rf | if retx { RETX } else { 0 },
            enq_tx: 0,
        };
        self.send_first(p);
    }

    fn arm_timer(&mut self, f: usize) {
        let t = self.senders[f].timer_ps;
        if t != u64::MAX && self.rto_event_at[f] > t {
            self.rto_event_at[f] = t;
            self.push(t, EvKind::Rto(f as u32));
        }
    }

    /// A packet reaches port l's queue. A port that is idle with an empty queue starts
    /// sending it at once; otherwise it waits, and the port has a `TxDone` event at the end
    /// of its current transmission (only ports with a queue need one: a packet through an
    /// idle port costs one event, its arrival at the far end).
    #[inline]
    fn to_port(&mut self, l: usize, p: Packet) {
        self.rate_arrive(l, &p);
        let now = self.now;
        let port = &mut self.ports[l];
        let idle = if self.tx_complete_events { !port.txdone_pending } else { now >= port.busy_until };
        if idle && port.is_empty() {
            self.transmit(l, p);
            return;
        }
        let (dropped, evicted) = match port.enqueue(p, now) {
            Enqueued::Queued { marked, evicted } => {
                if marked {
                    self.stats.ecn_marks += 1;
                }
                (false, evicted)
            }
            Enqueued::Dropped { evicted } => (true, evicted),
        };
        if !port.txdone_pending && !port.is_empty() {
            port.txdone_pending = true;
            let t = port.busy_until.max(now);
            self.push(t, EvKind::TxDone(l as u32));
        }
        if dropped {
            self.stats.drops_overflow += 1;
            if p.is_data() {
                self.stats.data_dropped += 1;
            }
        }
        // evicted packets have larger priority values than the arriving one, so never an ACK (0)
        self.stats.drops_evicted += evicted as u64;
        self.stats.data_dropped += evicted as u64;
    }

    /// Port l starts sending p now: it is on the link's wire until it reaches the far end.
    #[inline]
    fn transmit(&mut self, l: usize, mut p: Packet) {
        self.rate_depart(l, &mut p);
        let port = &mut self.ports[l];
        let done = self.now.saturating_add(port.ser_ps(p.wire_bytes));
        port.busy_until = done;
        if self.tx_complete_events {
            // the end of this transmission, scheduled before the packet's arrival (ns-3's order)
            port.txdone_pending = true;
            self.push(done, EvKind::TxDone(l as u32));
        }
        let port = &self.ports[l];
        let mut arrive = done + port.prop_ps;
        if self.jitter_ps > 0 {
            arrive += mix64(self.next_seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.jitter_key) % self.jitter_ps;
            if let Some(&(last, _, _)) = self.wires[l].back() {
                arrive = arrive.max(last); // the link stays first in first out
            }
        }
        p.hop += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        let w = &mut self.wires[l];
        w.push_back((arrive, seq, p));
        if w.len() == 1 {
            self.heap.push(arrive, seq, EvKind::Arrive(l as u32));
        }
        self.note_pending();
    }

    /// Port l has finished a transmission and has packets waiting: it sends the next.
    fn tx_done(&mut self, l: usize) {
        self.rate_tick(l);
        let now = self.now;
        let port = &mut self.ports[l];
        port.txdone_pending = false;
        let stale = port.stale_drops;
        let Some((nx, marked)) = port.dequeue_marking(now) else { return };
        let stale = port.stale_drops - stale;
        self.stats.drops_stale += stale;
        self.stats.data_dropped += stale;
        self.stats.ecn_marks += marked as u64;
        self.transmit(l, nx);
        let port = &mut self.ports[l];
        if !self.tx_complete_events && !port.is_empty() {
            port.txdone_pending = true;
            let t = port.busy_until;
            self.push(t, EvKind::TxDone(l as u32));
        }
    }

    /// Whether flow f's packets are sprayed (packet spraying on, and no pinned route).
    #[inline]
    fn sprayed(&self, f: usize) -> bool {
        self.spray.as_deref().is_some_and(|sp| !sp.topo.pinned().is_some_and(|r| r.is_pinned(f)))
    }

    /// The link packet p crosses at its hop `p.hop`, or None once it has crossed its
    /// route's last: the flow's route (or the way back, for an ACK), or under packet
    /// spraying the packet's own equal-cost path.
    #[inline]
    fn next_link(&mut self, p: &Packet) -> Option<u32> {
        let f = p.flow as usize;
        if self.sprayed(f) {
            let (src, dst) = (self.specs[f].src, self.specs[f].dst);
            let sp = self.spray.as_deref_mut().expect("sprayed");
            return sp.route(p, src, dst).get(p.hop as usize).copied();
        }
        let (off, end) = if p.is_ack() {
            (self.rroute_off[f] as usize, self.rroute_off[f + 1] as usize)
        } else {
            (self.route_off[f] as usize, self.route_off[f + 1] as usize)
        };
        let h = off + p.hop as usize;
        (h < end).then(|| if p.is_ack() { self.rroute[h] } else { self.route[h] })
    }

    /// A host puts packet p (at hop 0) on the first link of its route.
    fn send_first(&mut self, p: Packet) {
        debug_assert_eq!(p.hop, 0);
        // every route has a link (src != dst is checked)
        if let Some(l) = self.next_link(&p) {
            self.to_port(l as usize, p);
        }
    }

    fn arrive(&mut self, p: Packet) {
        let f = p.flow as usize;
        if let Some(l) = self.next_link(&p) {
            self.to_port(l as usize, p);
            return;
        }
        if p.flags & SYN != 0 {
            if p.is_ack() {
                self.on_synack(f, p);
            } else {
                self.on_syn(p);
            }
        } else if p.is_ack() {
            self.on_ack(f, p);
        } else {
            self.on_data(f, p);
        }
    }

    fn on_data(&mut self, f: usize, p: Packet) {
        self.rate_on_data(f, &p);
        self.stats.data_arrived += 1;
        let n = self.flows[f].n;
        let before = self.receivers[f].rcv_nxt;
        let held_before = self.receivers[f].held;
        if self.receivers[f].on_data(p.seq, n) {
            let fl = &self.flows[f];
            let bytes = if p.seq + 1 == fl.n { fl.size - p.seq as u64 * self.mss } else { self.mss };
            self.delivered[f] += bytes;
            if self.spray.is_some() {
                self.count_link_payload(f, &p, bytes);
            }
        } else {
            self.stats.duplicates += 1;
            if self.ascc && self.flows[f].span_ps > 0 {
                // ASCC's receiver ignores the second copy of a packet its sender sent again
                // when the flow became complete (aSCC section VII): no ACK, so the copies
                // raise no duplicate ACKs
                return;
            }
        }
        let mut finished = false;
        if let Some(h) = self.hs.as_deref_mut() {
            // gtcp: the data of the segments now delivered in order, flow by flow; a flow
            // finishes with its own last byte (its connection may still carry others' data)
            let rn = self.receivers[f].rcv_nxt;
            if rn > before {
                h.deliver(f, (rn as u64 * self.mss).min(self.flows[f].size));
                for &j in &h.finished {
                    let j = j as usize;
                    if self.finish_ps[j] == u64::MAX {
                        self.finish_ps[j] = self.now;
                        self.n_ended += 1;
                        self.flow_ended = true;
                    }
                }
            }
        } else if self.receivers[f].rcv_nxt >= n && self.finish_ps[f] == u64::MAX && !self.terminated[f] {
            self.finish_ps[f] = self.now;
            self.n_ended += 1;
            self.flow_ended = true;
            finished = true;
        }
        let (ce, retx) = (p.flags & CE != 0, p.flags & RETX != 0);
        if self.ack_every == 1 {
            let rcv = self.receivers[f].rcv_nxt;
            self.send_ack(f, rcv, ce, p.tx_ps, retx);
        } else {
            let in_order = p.seq == before && held_before == 0;
            let dctcp = self.transport == Transport::Dctcp;
            let d = self.acks[f].on_segment(in_order, ce, dctcp, p.tx_ps, retx, self.now, self.ack_every, self.delack_ps);
            if let Some((ece, tx, r)) = d.flush {
                self.send_ack(f, before, ece, tx, r);
            }
            if let Some((ece, tx, r)) = d.now {
                let rcv = self.receivers[f].rcv_nxt;
                self.send_ack(f, rcv, ece, tx, r);
            }
            if let Some(t) = d.arm {
                self.push(t, EvKind::DelAck(f as u32));
            }
        }
        if finished {
            self.rate_flow(f, false);
            self.release(f);
        }
    }

    /// The receiver of flow f sends a cumulative ACK of `seq` (echoing `tx_ps`; ECE and
    /// RETX as given).
    fn send_ack(&mut self, f: usize, seq: u32, ece: bool, tx_ps: u64, retx: bool) {
        let mut flags = ACK;
        if ece {
            flags |= ECE;
        }
        if retx {
            flags |= RETX;
        }
        // with SACK, the ACK's `enq_tx` carries the length of its receiver's SACK log
        let log = self.receivers[f].sack_log.len() as u32;
        let a = Packet { flow: f as u32, seq, prio: self.rate_echo(f), tx_ps, wire_bytes: self.hdr, hop: 0, flags, enq_tx: log };
        self.stats.ack_packets += 1;
        self.send_first(a);
    }

    fn delack_timer(&mut self, f: usize, t: u64) {
        if let Some((ece, tx, retx)) = self.acks[f].on_timer(t) {
            self.stats.delayed_acks += 1;
            let rcv = self.receivers[f].rcv_nxt;
            self.send_ack(f, rcv, ece, tx, retx);
        }
    }

    // ----- the handshake -----

    /// Flow f's sender sends a SYN (again), with its timer: `syn_timeout_s` doubled per
    /// SYN sent before (RFC 6298 5.5), at most the RTO bound.
    fn send_syn(&mut self, f: usize) {
        self.syn_tries[f] += 1;
        let tries = self.syn_tries[f];
        let to = self.syn_timeout_ps.saturating_mul(1u64 << (tries - 1).min(40)).min(MAX_RTO_PS);
        let t = self.now.saturating_add(to);
        self.syn_timer_ps[f] = t;
        self.push(t, EvKind::Syn(f as u32));
        let flags = SYN | if tries > 1 { RETX } else { 0 };
        let p = Packet { flow: f as u32, seq: 0, prio: self.rate_syn_tag(f), tx_ps: self.now, wire_bytes: self.hdr, hop: 0, flags, enq_tx: 0 };
        self.stats.syn_packets += 1;
        self.send_first(p);
    }

    fn syn_timer(&mut self, f: usize, t: u64) {
        if self.syn_timer_ps[f] != t || self.conn[f] != 1 || self.terminated[f] {
            return;
        }
        self.stats.syn_timeouts += 1;
        self.flow_timeouts[f] += 1;
        self.send_syn(f);
    }

    /// A SYN reaches flow f's receiver: it answers with a SYN-ACK (every SYN, a
    /// retransmitted one too), echoing the SYN's send time and RETX bit.
    fn on_syn(&mut self, p: Packet) {
        // the SYN's rate feedback (rate transports; 0 otherwise) goes back on the SYN-ACK
        let a = Packet { flow: p.flow, seq: 0, prio: p.prio, tx_ps: p.tx_ps, wire_bytes: self.hdr, hop: 0, flags: SYN | ACK | (p.flags & RETX), enq_tx: 0 };
        self.stats.syn_packets += 1;
        self.send_first(a);
    }

    /// A SYN-ACK reaches flow f's sender: the connection is open (the first one; later
    /// copies are ignored), its RTT is the first sample unless the SYN was retransmitted
    /// (Karn), and the first data goes out.
    fn on_synack(&mut self, f: usize, p: Packet) {
        if self.conn[f] != 1 || self.terminated[f] || self.rate_synack(f) {
            return;
        }
        self.conn[f] = 2;
        self.syn_timer_ps[f] = u64::MAX;
        if p.flags & RETX == 0 && self.transport != Transport::PFabric && self.now >= p.tx_ps {
            let r = self.now - p.tx_ps;
            self.senders[f].first_rtt_sample(r, &self.cc);
        }
        if self.rate.on() {
            self.rate_feedback(f, p.prio);
        }
        self.send_window(f);
    }

    // ----- starting flows, destination admission -----

    /// Flow f arrives: it requests a token from its destination (admission), or starts.
    fn arrival(&mut self, f: usize) {
        if self.cfg.admission.is_none() {
            self.start(f);
        } else if self.req_ps == 0 {
            self.request(f);
        } else {
            let t = self.now.saturating_add(self.req_ps);
            self.push(t, EvKind::Request(f as u32));
        }
    }

    /// Flow f's sender starts (at its arrival, or when its grant arrives): the handshake
    /// first when it is on, else its first window of data.
    fn start(&mut self, f: usize) {
        if self.terminated[f] || self.conn[f] != 0 {
            return;
        }
        self.start_ps[f] = self.now;
        self.update_avail(f);
        self.rate_flow(f, true);
        if let Some(h) = self.hs.as_deref_mut() {
            h.join(f); // its data may go out in any of its route's connections from now on
        }
        if !self.syn_tries.is_empty() {
            self.conn[f] = 1;
            self.send_syn(f);
        } else {
            self.conn[f] = 2;
            self.send_window(f);
        }
    }

    /// When the data of flow f's segment k (0-based) has all reached its sender: bytes
    /// arrive uniformly over `[arrival, arrival + span]` (the time rounded up to the tick).
    fn data_time(&self, f: usize, k: u32) -> u64 {
        let fl = &self.flows[f];
        let bytes = ((k as u64 + 1) * self.mss).min(fl.size);
        fl.arrival_ps + (fl.span_ps as u128 * bytes as u128).div_ceil(fl.size as u128) as u64
    }

    /// Brings flow f's segments whose data has arrived up to now (its sender sends no
    /// other), and sets the event of its next one. Segments are whole (the last one may be
    /// short): the sender does not send a segment before all its data is there.
    fn update_avail(&mut self, f: usize) {
        let (n, span) = (self.flows[f].n, self.flows[f].span_ps);
        let mut k = self.senders[f].avail;
        if span == 0 || k >= n {
            return;
        }
        let fl = &self.flows[f];
        let elapsed = self.now.saturating_sub(fl.arrival_ps);
        let arrived = if elapsed >= span { fl.size } else { (elapsed as u128 * fl.size as u128 / span as u128) as u64 };
        k = if arrived >= fl.size { n } else { (arrived / self.mss) as u32 }.max(k);
        debug_assert!(k == n || self.data_time(f, k) > self.now);
        self.senders[f].avail = k;
        if k == n && self.ascc {
            // ASCC's rules when a flow becomes complete (aSCC section VII): its packets sent
            // while incomplete, still unacknowledged, go again, now tagged as a complete
            // flow's ("retransmit when complete"; the receiver ignores the copies that come
            // second); its window is at least the idle path's bandwidth-delay product
            // ("adjust cwnd when complete"); the ECN marks of the packets it sent before are
            // ignored ("ignore ECN from incomplete flows")
            let bdp = self.flows[f].bdp_packets;
            let s = &mut self.senders[f];
            s.snd_nxt = s.snd_una;
            s.cwnd = s.cwnd.max(bdp);
            s.ignore_ece_before_ps = self.now;
        }
        if k < n {
            let t = self.data_time(f, k);
            self.push(t, EvKind::Data(f as u32));
        }
    }

    /// Flow f's next segment's data has arrived: the sender may send it.
    fn data_arrived(&mut self, f: usize, t: u64) {
        if self.terminated[f] || self.senders[f].avail >= self.flows[f].n || self.data_time(f, self.senders[f].avail) != t {
            return;
        }
        self.update_avail(f);
        if self.conn[f] == 2 {
            self.send_window(f);
        }
    }

    /// Flow f's request reaches its destination: it waits there, in arrival order.
    fn request(&mut self, f: usize) {
        if self.terminated[f] {
            return;
        }
        let d = self.specs[f].dst;
        self.waiting[d].push_back(f as u32);
        self.admit(d);
    }

    /// While destination d has a free token and requests waiting, it admits the one its
    /// policy picks among the first `window` (the fluid model's `choose`).
    fn admit(&mut self, d: usize) {
        let Some(a) = &self.cfg.admission else { return };
        let (k, w, policy) = (a.k, a.window, a.policy);
        if policy == AdmissionPolicy::External {
            if self.can_admit(d) && !self.decisions.contains(&d) {
                self.decisions.push_back(d);
            }
            return;
        }
        while !self.waiting[d].is_empty() && (self.tokens[d] as usize) < k {
            let q = &self.waiting[d];
            let m = if w == 0 { q.len() } else { w.min(q.len()) };
            let win: Vec<u32> = q.iter().take(m).copied().collect();
            let pos = choose_admission(&policy, &self.specs, &win, &mut self.admission_rngs[d]);
            let Some(f) = self.waiting[d].remove(pos) else { break };
            self.give_token(d, f as usize);
        }
    }

    /// Destination d gives a token to flow f (out of its waiting requests): its grant
    /// travels to the sender, which starts when it arrives.
    fn give_token(&mut self, d: usize, f: usize) {
        self.tokens[d] += 1;
        self.peak_tokens[d] = self.peak_tokens[d].max(self.tokens[d]);
        self.holds_token[f] = true;
        self.admitted_ps[f] = self.now;
        if self.grant_ps == 0 {
            self.start(f);
        } else {
            let t = self.now.saturating_add(self.grant_ps);
            self.push(t, EvKind::Grant(f as u32));
        }
    }

    /// Flow f has ended (its last byte reached the destination, or it was terminated): its
    /// token returns to its destination, which admits the next request.
    fn release(&mut self, f: usize) {
        if self.holds_token.get(f) == Some(&true) {
            self.holds_token[f] = false;
            let d = self.specs[f].dst;
            self.tokens[d] -= 1;
            self.admit(d);
        }
    }

    fn on_ack(&mut self, f: usize, a: Packet) {
        if self.senders[f].done() || self.terminated[f] {
            return;
        }
        let act = self.senders[f].on_ack(&a, self.now, &self.cc, &self.receivers[f].sack_log);
        if self.cc.sack && self.senders[f].done() {
            self.receivers[f].sack_log = Vec::new();
        }
        if self.rate.on() {
            self.rate_feedback(f, a.prio);
        }
        if act.fast_retransmit {
            self.stats.fast_retransmits += 1;
            self.flow_fast_retx[f] += 1;
        }
        if let Some(seq) = act.retransmit {
            self.emit(f, seq);
        }
        self.send_window(f);
    }

    fn rto(&mut self, f: usize, t: u64) {
        if self.rto_event_at[f] != t {
            return; // superseded by an earlier timer event
        }
        self.rto_event_at[f] = u64::MAX;
        if self.terminated[f] || self.senders[f].done() {
            return;
        }
        let due = self.senders[f].timer_ps;
        if due == u64::MAX {
            return;
        }
        if due > self.now {
            self.arm_timer(f); // the timer was restarted since: wait for its new time
            return;
        }
        self.stats.timeouts += 1;
        self.flow_timeouts[f] += 1;
        self.senders[f].on_timeout(self.now, &self.cc);
        self.send_window(f);
    }

    fn deadline(&mut self, f: usize) {
        if self.finish_ps[f] == u64::MAX && !self.terminated[f] {
            self.terminated[f] = true;
            self.senders[f].timer_ps = u64::MAX;
            self.n_ended += 1;
            self.flow_ended = true;
            if self.start_ps[f] != u64::MAX {
                self.rate_flow(f, false);
            }
            if self.cfg.admission.is_some() {
                let d = self.specs[f].dst;
                if let Some(pos) = self.waiting[d].iter().position(|&x| x as usize == f) {
                    self.waiting[d].remove(pos);
                }
                self.release(f);
            }
        }
    }

    fn sample(&mut self) {
        self.sample_t.push(self.now);
        for &l in &self.sample_ports {
            self.sample_v.push(self.ports[l as usize].queued_bytes.min(u32::MAX as u64) as u32);
        }
        if !self.done() {
            let t = self.now.saturating_add(self.sample_ps);
            self.push(t, EvKind::Sample);
        }
    }

    /// Sets flow i's priority for the `external` scheduler (lower first), read by the
    /// packets it sends from now on.
    pub fn set_score(&mut self, i: usize, score: f64) -> Result<()> {
        if !matches!(self.cfg.scheduler, Scheduler::External) {
            return Err(SimError::InvalidAction(format!("set_score needs the external scheduler, not '{}'", self.cfg.scheduler.name())));
        }
        if i >= self.flows.len() {
            return Err(SimError::InvalidAction(format!("flow index {i} out of range ({} flows)", self.flows.len())));
        }
        if !score.is_finite() {
            return Err(SimError::InvalidAction(format!("score of flow {i} must be finite, got {score}")));
        }
        self.flows[i].ext = total_order_bits(score);
        Ok(())
    }

    /// Replaces the PIAS thresholds from now on (packets sent from now on are tagged with
    /// them); the number of queues may not change.
    pub fn set_pias_thresholds(&mut self, th: Vec<f64>) -> Result<()> {
        if !matches!(self.cfg.scheduler, Scheduler::Pias) {
            return Err(SimError::InvalidAction(format!("set_pias_thresholds needs the pias scheduler, not '{}'", self.cfg.scheduler.name())));
        }
        check_thresholds(&th)?;
        if th.len() != self.pias.len() {
            return Err(SimError::InvalidAction(format!(
                "the ports have {} queues: give {} thresholds, got {}",
                self.pias.len() + 1,
                self.pias.len(),
                th.len()
            )));
        }
        self.pias = th.iter().map(|&x| x.ceil() as u64).collect();
        Ok(())
    }

    pub fn stats(&self) -> &PacketStats {
        &self.stats
    }

    /// Per flow: the time its last byte reached the receiver (s, NaN if not).
    pub fn finish_s(&self) -> Vec<f64> {
        self.finish_ps.iter().map(|&t| if t == u64::MAX { f64::NAN } else { t as f64 / PS_PER_S }).collect()
    }
    /// Per flow: finish - arrival, computed in picoseconds (s, NaN if not finished).
    pub fn fct_s(&self) -> Vec<f64> {
        self.finish_ps
            .iter()
            .zip(&self.flows)
            .map(|(&t, f)| if t == u64::MAX { f64::NAN } else { (t - f.arrival_ps) as f64 / PS_PER_S })
            .collect()
    }
    pub fn fct_ps(&self, i: usize) -> Option<u64> {
        let t = self.finish_ps[i];
        (t != u64::MAX).then(|| t - self.flows[i].arrival_ps)
    }
    /// Per flow: propagation along its data path (s), part of its FCT.
    pub fn path_delay_s(&self) -> Vec<f64> {
        (0..self.flows.len())
            .map(|i| {
                let (a, b) = (self.route_off[i] as usize, self.route_off[i + 1] as usize);
                let per_hop = self.cfg.delay_per_hop_s * (b - a) as f64;
                if self.link_delay_s.is_empty() {
                    per_hop
                } else {
                    // the same sum as the fluid model's Simulator::path_delay_s
                    per_hop + self.route[a..b].iter().map(|&l| self.link_delay_s[l as usize]).sum::<f64>()
                }
            })
            .collect()
    }
    /// Per flow: the fluid model's ideal FCT ([`PacketSimulator::ideal_tx_of`] plus propagation).
    pub fn ideal_fct_s(&self) -> Vec<f64> {
        let d = self.path_delay_s();
        (0..self.flows.len()).map(|i| self.ideal_tx_of(i) + d[i]).collect()
    }
    pub fn terminated(&self) -> &[bool] {
        &self.terminated
    }
    /// Per flow: payload bytes delivered in order to the receiver, each byte once.
    pub fn delivered_bytes(&self) -> &[u64] {
        match &self.hs {
            Some(h) => h.delivered(), // gtcp: the flow's data, whichever connections carried it
            None => &self.delivered,
        }
    }
    /// `gtcp:<inner>`: the relabelling state (per flow: its data's bytes put into segments
    /// and delivered, its group); None under other schedulers.
    pub fn host_sched(&self) -> Option<&HostSched> {
        self.hs.as_deref()
    }
    /// Packet spraying: a new data packet of flow f delivered `bytes` of payload over the
    /// links of the path it took.
    fn count_link_payload(&mut self, f: usize, p: &Packet, bytes: u64) {
        let sprayed = self.sprayed(f);
        let (src, dst) = (self.specs[f].src, self.specs[f].dst);
        let sp = self.spray.as_deref_mut().expect("packet spraying");
        if sprayed {
            sp.add_payload(p, src, dst, bytes);
        } else {
            for &l in &self.route[self.route_off[f] as usize..self.route_off[f + 1] as usize] {
                sp.link_payload[l as usize] += bytes;
            }
        }
    }

    /// Per link: payload bytes delivered by the flows whose data path crosses it (as the
    /// fluid model counts a link's bytes; retransmissions and headers not included). Under
    /// packet spraying, each packet's payload on the links of the path it took (its first
    /// copy to be delivered).
    pub fn link_bytes(&self) -> Vec<f64> {
        if let Some(sp) = self.spray.as_deref() {
            return sp.link_payload.iter().map(|&b| b as f64).collect();
        }
        let mut b = vec![0.0; self.ports.len()];
        for i in 0..self.flows.len() {
            for &l in &self.route[self.route_off[i] as usize..self.route_off[i + 1] as usize] {
                b[l as usize] += self.delivered_bytes()[i] as f64;
            }
        }
        b
    }
    /// Flow i as given.
    pub fn flow(&self, i: usize) -> &FlowSpec {
        &self.specs[i]
    }
    /// Flow i's data path (link ids, source to destination).
    pub fn path(&self, i: usize) -> &[u32] {
        &self.route[self.route_off[i] as usize..self.route_off[i + 1] as usize]
    }
    /// Whether flow i has ended: its last byte reached the receiver, or it was terminated.
    pub fn ended(&self, i: usize) -> bool {
        self.finish_ps[i] != u64::MAX || self.terminated[i]
    }
    /// Whether flow i holds a token of its destination now (admitted, not ended).
    pub fn holds_token(&self, i: usize) -> bool {
        self.holds_token.get(i) == Some(&true)
    }
    /// Flow i's FCT (s; NaN if not finished), computed in picoseconds as [`PacketSimulator::fct_s`].
    pub fn fct_of(&self, i: usize) -> f64 {
        self.fct_ps(i).map_or(f64::NAN, |t| t as f64 / PS_PER_S)
    }
    /// Flow i's ideal FCT without the path delay (s): its payload at its path's bottleneck
    /// rate, or its data span where that is longer (the fluid model's definition). Under
    /// packet spraying the rate is that of its equal-cost paths together, each carrying an
    /// equal share (`sprayed_capacity`).
    pub fn ideal_tx_of(&self, i: usize) -> f64 {
        (self.specs[i].size_bytes / self.path_cap[i]).max(self.specs[i].data_span_s)
    }
    /// Whether all of flow i's data has reached its sender (`data_span_s`: at its arrival
    /// plus its span; without one, from its arrival).
    pub fn is_complete(&self, i: usize) -> bool {
        self.now >= self.flows[i].arrival_ps + self.flows[i].span_ps
    }
    /// Flow i's ideal FCT: [`PacketSimulator::ideal_tx_of`] plus its path's propagation,
    /// as [`PacketSimulator::ideal_fct_s`] computes it.
    pub fn ideal_fct_of(&self, i: usize) -> f64 {
        let (a, b) = (self.route_off[i] as usize, self.route_off[i + 1] as usize);
        let mut d = self.cfg.delay_per_hop_s * (b - a) as f64;
        if !self.link_delay_s.is_empty() {
            d += self.route[a..b].iter().map(|&l| self.link_delay_s[l as usize]).sum::<f64>();
        }
        self.ideal_tx_of(i) + d
    }
    /// Per flow: duplicate data packets its receiver got.
    pub fn duplicates(&self) -> Vec<u32> {
        self.receivers.iter().map(|r| r.duplicates).collect()
    }
    /// Per port: (peak bytes waiting, mean bytes waiting from the first arrival to now,
    /// overflow drops, pFabric evictions, ECN marks, ASCC's stale-packet drops).
    pub fn port_stats(&self) -> Vec<(u64, f64, u64, u64, u64, u64)> {
        let span = self.now.saturating_sub(self.first_arrival_ps).max(1) as f64;
        self.ports.iter().map(|p| (p.peak_bytes, p.area as f64 / span, p.drops, p.evictions, p.marks, p.stale_drops)).collect()
    }
    /// Queue samples: the sample times (s), the sampled ports, and bytes waiting
    /// (sample-major: `values[k * ports.len() + j]`).
    pub fn queue_samples(&self) -> (Vec<f64>, &[u32], &[u32]) {
        (self.sample_t.iter().map(|&t| t as f64 / PS_PER_S).collect(), &self.sample_ports, &self.sample_v)
    }
    /// Per flow: retransmission timeouts plus SYN timeouts.
    pub fn flow_timeouts(&self) -> &[u32] {
        &self.flow_timeouts
    }
    /// Per flow: data packets sent again (go-back-N after a timeout, fast retransmits,
    /// partial ACKs' holes).
    pub fn flow_retransmissions(&self) -> &[u32] {
        &self.flow_retx
    }
    /// Per flow: fast retransmits (entries into fast recovery).
    pub fn flow_fast_retransmits(&self) -> &[u32] {
        &self.flow_fast_retx
    }
    /// Per flow: when its destination admitted it (s; NaN without admission or if never).
    pub fn admitted_s(&self) -> Vec<f64> {
        self.admitted_ps.iter().map(|&t| if t == u64::MAX { f64::NAN } else { t as f64 / PS_PER_S }).collect()
    }
    /// Per flow: when its sender started, its handshake or its data (s; NaN if never).
    pub fn start_s(&self) -> Vec<f64> {
        self.start_ps.iter().map(|&t| if t == u64::MAX { f64::NAN } else { t as f64 / PS_PER_S }).collect()
    }
    /// Per host: the most tokens its flows held at once as a destination (empty without admission).
    pub fn peak_tokens(&self) -> &[u32] {
        &self.peak_tokens
    }
    /// The sender of flow i (its window and state), for tests and diagnostics.
    pub fn sender(&self, i: usize) -> &Sender {
        &self.senders[i]
    }
    /// Per flow, its sender's window now: (cwnd in packets, packets sent and not yet
    /// acknowledged, SRTT in s). Flows not started report their initial state.
    pub fn windows(&self) -> (Vec<f64>, Vec<u32>, Vec<f64>) {
        let s = &self.senders;
        (s.iter().map(|x| x.cwnd).collect(), s.iter().map(|x| x.snd_nxt - x.snd_una).collect(), s.iter().map(Sender::srtt_s).collect())
    }
    /// Payload bytes per packet (the MSS).
    pub fn mss_bytes(&self) -> u64 {
        self.mss
    }
    /// Data packets in the network now: waiting, in transmission or propagating.
    pub fn data_in_network(&self) -> u64 {
        let ports: u64 = self.ports.iter().map(|p| p.data_packets()).sum(); // the one in transmission is on the wire
        let flying = self.wires.iter().flatten().filter(|(_, _, p)| p.is_data()).count() as u64;
        ports + flying
    }
    /// Bytes waiting at port l now.
    pub fn queued_bytes(&self, l: usize) -> u64 {
        self.ports[l].queued_bytes
    }
}

fn check_thresholds(th: &[f64]) -> Result<()> {
    if th.is_empty() || th.len() > 31 || th.iter().any(|t| !(t.is_finite() && *t > 0.0)) || th.windows(2).any(|w| w[1] <= w[0]) {
        return Err(SimError::InvalidConfig(format!(
            "PIAS thresholds must be 1 to 31 positive, strictly increasing byte counts, got {th:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphRoutes;

    /// `hosts` hosts, each linked to `switches` switches (that many equal-cost paths between
    /// any two hosts).
    fn star(hosts: usize, switches: usize) -> Topology {
        let (mut from, mut to, mut names) = (vec![], vec![], vec![]);
        for h in 0..hosts as u32 {
            for s in 0..switches as u32 {
                for (x, y) in [(h, hosts as u32 + s), (hosts as u32 + s, h)] {
                    from.push(x);
                    to.push(y);
                    names.push(format!("{x}->{y}"));
                }
            }
        }
        let n = from.len();
        let routes = GraphRoutes::new(hosts + switches, from, to, vec![1; n], (0..hosts as u32).collect(), names, vec![0.0; n]).unwrap();
        Topology::graph(routes, &vec![10.0; n], 0).unwrap()
    }

    #[test]
    fn cached_paths_are_the_routing_tables_paths() {
        // dense table (6 hosts), map (300 hosts), and a pair with too many paths to cache
        for (hosts, switches) in [(6, 3), (300, 2), (3, SPRAY_CACHE_PATHS as usize + 1)] {
            let topo = star(hosts, switches);
            let mut cached = Spray::new(&topo, 9);
            assert_eq!(cached.pair_entry.is_empty(), hosts > SPRAY_DENSE_HOSTS);
            let mut walked = cached.clone();
            walked.graph = false; // every path from the routing tables
            let mut rng = SplitMix64::new(hosts as u64);
            let mut used = std::collections::HashSet::new();
            for i in 0..3000u32 {
                let (a, b) = (rng.below(hosts as u64) as usize, 1 + rng.below(hosts as u64 - 1) as usize);
                let b = (a + b) % hosts;
                let flags = if i % 3 == 0 { ACK } else { 0 };
                let p = Packet { flow: i % 7, seq: rng.next_u64() as u32, prio: 0, tx_ps: rng.next_u64() >> 20, wire_bytes: 40, hop: 0, flags, enq_tx: 0 };
                let want = walked.route(&p, a, b).to_vec();
                assert_eq!(cached.route(&p, a, b), &want[..], "{hosts} hosts, packet {i}");
                used.insert(want[0]);
            }
            assert!(used.len() > switches.min(hosts), "the packets spread over the paths: {}", used.len());
        }
    }
}
