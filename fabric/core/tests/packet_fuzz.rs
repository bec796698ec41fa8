//! Property-based fuzzer of the packet model (proptest).
//!
//! Each case draws a small random trace (ties in arrivals, sizes from 1 B to 400 KB around
//! the segment boundaries, deadlines), a fabric (big switch or leaf-spine, with varied host
//! and core rates and per-hop delays), one of the scheduler x transport pairs the packet
//! model runs (`packet::SUPPORTED`), and options at and past their usual ranges (segment
//! and header sizes, buffers down to one packet, initial and maximum windows, minimum RTO,
//! delayed ACKs, the handshake, limited transmit, the fast-retransmit threshold, SACK and
//! PRR, packet spraying, PIAS thresholds and reserved queue space, destination admission
//! with request and grant delays, termination at deadlines),
//! and checks:
//! - no panic, and the run ends within an event budget (`PacketConfig::max_events`) with
//!   no error: a run that neither ends nor makes progress is a bug, not a slow case;
//! - every flow ends: finished, having delivered exactly its size (each byte once), no
//!   sooner than alone on an idle fabric, or terminated at its deadline where asked (its
//!   packets on their way still arrive, but no more than its size);
//! - the same case run again gives the same finish times and counters, bit for bit, and
//!   a run paused at every flow change (`pause_on_flow_change`) gives them too.
//!
//! Default: `DEFAULT_CASES` cases (about 5 s in a debug build here, seed 0). A long run:
//! `PROPTEST_CASES=20000 FUZZ_SEED=1 cargo test --release --manifest-path fabric/Cargo.toml --test packet_fuzz -- --nocapture`.
use fabric_core::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

static CASES: AtomicU64 = AtomicU64::new(0);
static RUN: AtomicU64 = AtomicU64::new(0);
static EVENTS: AtomicU64 = AtomicU64::new(0);
static DROPS: AtomicU64 = AtomicU64::new(0);
static TIMEOUTS: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

type TcResult<T> = std::result::Result<T, TestCaseError>;

const DEFAULT_CASES: u32 = 2000;
/// Events a case may take: far above what its few flows need (a 400 KB flow is a few
/// hundred packets; timeouts and retransmissions multiply that by a small factor).
const MAX_EVENTS: u64 = 20_000_000;

/// (scheduler, transport) pairs of `packet::SUPPORTED`.
const PAIRS: &[(&str, &str)] = &[
    ("ps", "tcp"),
    ("ps", "dctcp"),
    ("pias", "dctcp"),
    ("pias", "tcp"),
    ("gtcp:ps", "tcp"),
    ("gtcp:fifo", "dctcp"),
    ("gtcp:srpt", "tcp"),
    ("gtcp:las", "dctcp"),
    ("gtcp:fair", "tcp"),
    ("srpt", "dctcp"),
    ("asrpt", "dctcp"),
    ("las", "dctcp"),
    ("edf", "dctcp"),
    ("fifo", "pfabric"),
    ("srpt", "pfabric"),
    ("asrpt", "pfabric"),
    ("las", "pfabric"),
    ("edf", "pfabric"),
    ("ps", "rcp"),
    ("sdc", "sdc"),
    ("racs", "racs"),
];
const POLICIES: &[AdmissionPolicy] =
    &[AdmissionPolicy::Fifo, AdmissionPolicy::Edf, AdmissionPolicy::Ssdf, AdmissionPolicy::Srpt, AdmissionPolicy::Random];

#[derive(Debug, Clone)]
enum Topo {
    Big(Vec<f64>),
    LeafSpine { tors: usize, per_tor: usize, spines: usize, host: Vec<f64>, core: f64, seed: u64 },
}

impl Topo {
    fn build(&self) -> Topology {
        match self {
            Topo::Big(g) => Topology::big_switch(g).unwrap(),
            Topo::LeafSpine { tors, per_tor, spines, host, core, seed } => {
                Topology::leaf_spine(*tors, *per_tor, *spines, host, *core, *seed).unwrap()
            }
        }
    }
    fn hosts(&self) -> usize {
        match self {
            Topo::Big(g) => g.len(),
            Topo::LeafSpine { tors, per_tor, .. } => tors * per_tor,
        }
    }
}

#[derive(Debug, Clone)]
struct Opts {
    mss: u32,
    header: u32,
    buffer: Option<u64>,
    init_cwnd: Option<f64>,
    max_cwnd: Option<f64>,
    min_rto_s: Option<f64>,
    delay_s: f64,
    ack_every: u32,
    handshake: bool,
    limited_transmit: bool,
    granularity_s: f64,
    thresholds: Vec<f64>,
    reserve: u64,
    admission: Option<(usize, usize, usize, f64, f64)>,
    terminate_missed: bool,
    seed: u64,
}

#[derive(Debug, Clone)]
struct Case {
    topo: Topo,
    /// (arrival slot, src, dst offset, size, deadline, data span)
    flows: Vec<(u8, usize, usize, f64, Option<f64>, f64)>,
    pair: usize,
    opts: Opts,
}

fn gbps() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(10.0), Just(40.0), 0.5f64..50.0]
}

fn size() -> impl Strategy<Value = f64> {
    prop_oneof![
        2 => prop::sample::select(vec![1.0, 40.0, 1459.0, 1460.0, 1461.0, 1448.0, 2920.0, 14600.0, 65536.0, 100_000.0]),
        3 => (1u32..400_000).prop_map(f64::from),
    ]
}

fn topo() -> impl Strategy<Value = Topo> {
    prop_oneof![
        prop::collection::vec(gbps(), 2..6).prop_map(Topo::Big),
        (1usize..3, 1usize..3, 1usize..3, gbps(), any::<u64>()).prop_flat_map(|(tors, per_tor, spines, core, seed)| {
            prop::collection::vec(gbps(), tors * per_tor)
                .prop_map(move |host| Topo::LeafSpine { tors, per_tor, spines, host, core, seed })
        }),
    ]
    .prop_filter("two hosts or more", |t| t.hosts() >= 2)
}

fn opts() -> impl Strategy<Value = Opts> {
    let transport = (
        prop_oneof![3 => Just(1460u32), 1 => 536u32..9001],
        prop_oneof![Just(40u32), Just(52u32), 20u32..121],
        prop_oneof![2 => Just(None), 1 => (1u64..400_000).prop_map(Some)],
        prop_oneof![2 => Just(None), 1 => (1u32..16).prop_map(|w| Some(f64::from(w)))],
        prop_oneof![3 => Just(None), 1 => (1u32..40).prop_map(|w| Some(f64::from(w)))],
        prop_oneof![2 => Just(None), 1 => prop::sample::select(vec![10e-6, 200e-6, 1e-3, 0.2, 1.0]).prop_map(Some)],
        prop_oneof![Just(0.0), 0.0f64..50e-6],
        prop_oneof![3 => Just(1u32), 1 => 2u32..4],
    );
    let rest = (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![3 => Just(0.0), 1 => Just(1e-3)],
        prop::collection::vec(1.0f64..300_000.0, 0..4),
        prop_oneof![3 => Just(0u64), 1 => 1u64..20_000],
        prop_oneof![
            2 => Just(None),
            1 => (1usize..4, 0usize..3, 0usize..POLICIES.len(), prop_oneof![Just(0.0), 0.0f64..100e-6], prop_oneof![Just(0.0), 0.0f64..100e-6])
                .prop_map(Some)
        ],
        any::<bool>(),
        any::<u64>(),
    );
    (transport, rest).prop_map(
        |((mss, header, buffer, init_cwnd, max_cwnd, min_rto_s, delay_s, ack_every), (handshake, limited_transmit, granularity_s, mut th, reserve, admission, terminate_missed, seed))| {
            th.sort_by(f64::total_cmp);
            th.dedup();
            Opts {
                mss,
                header,
                buffer,
                init_cwnd,
                max_cwnd,
                min_rto_s,
                delay_s,
                ack_every,
                handshake,
                limited_transmit,
                granularity_s,
                thresholds: th,
                reserve,
                admission,
                terminate_missed,
                seed,
            }
        },
    )
}

fn case() -> impl Strategy<Value = Case> {
    (topo(), 0usize..PAIRS.len(), opts()).prop_flat_map(|(topo, pair, opts)| {
        let n = topo.hosts();
        // data spans (aSCC's alpha): none, or from a nanosecond to a few ms
        let span = prop_oneof![4 => Just(0.0), 1 => prop::sample::select(vec![1e-9, 2e-6, 1e-4, 3e-3])];
        let flow = (0u8..6, 0..n, 1..n, size(), prop_oneof![3 => Just(None), 1 => (1e-6f64..5e-3).prop_map(Some)], span);
        (Just(topo), prop::collection::vec(flow, 1..10), Just(pair), Just(opts))
            .prop_map(|(topo, flows, pair, opts)| Case { topo, flows, pair, opts })
    })
}

fn specs(c: &Case) -> Vec<FlowSpec> {
    let n = c.topo.hosts();
    // arrival slots: ties (slot 0 twice), close (ns apart) and spread (up to a ms)
    let slot = [0.0, 0.0, 1e-9, 3e-6, 1e-4, 1e-3];
    c.flows
        .iter()
        .map(|&(a, src, off, size, dl, span)| {
            let mut f = FlowSpec::new(slot[a as usize], src, (src + off) % n, size);
            if let Some(d) = dl {
                f.deadline_s = d;
            }
            // (SCHED_TCP at the sender refuses data spans)
            f.data_span_s = if PAIRS[c.pair].0.starts_with("gtcp:") { 0.0 } else { span };
            f
        })
        .collect()
}

fn config(c: &Case) -> PacketConfig {
    let (s, t) = PAIRS[c.pair];
    let o = &c.opts;
    let mut cfg = PacketConfig::new(Scheduler::parse(s).unwrap());
    cfg.transport = Some(Transport::parse(t).unwrap());
    cfg.mss_bytes = o.mss;
    cfg.header_bytes = o.header;
    cfg.buffer_bytes = o.buffer;
    // (options a transport does not read are refused: the drawn values go to those that do)
    let window = matches!(t, "tcp" | "dctcp" | "pfabric");
    cfg.init_cwnd_packets = o.init_cwnd.filter(|_| window || t == "sdc");
    cfg.max_cwnd_packets = o.max_cwnd.filter(|_| window);
    cfg.min_rto_s = o.min_rto_s;
    cfg.delay_per_hop_s = o.delay_s;
    cfg.ack_every_segments = o.ack_every;
    cfg.handshake = o.handshake;
    cfg.limited_transmit = o.limited_transmit && matches!(t, "tcp" | "dctcp");
    cfg.clock_granularity_s = if t == "pfabric" { 0.0 } else { o.granularity_s };
    // (a maximum window below the initial one is refused: a given maximum lifts a given
    // initial window's floor, and caps a default one)
    match (cfg.init_cwnd_packets, cfg.max_cwnd_packets) {
        (Some(i), Some(m)) => cfg.max_cwnd_packets = Some(m.max(i)),
        (None, Some(m)) => cfg.init_cwnd_packets = Some(m.min(10.0)),
        _ => {}
    }
    if s == "pias" {
        cfg.pias_thresholds_bytes = if o.thresholds.is_empty() { vec![o.reserve as f64 + 1.0] } else { o.thresholds.clone() };
        cfg.queue_reserve_bytes = o.reserve;
        // per-port ECN marking (bit 11), where the queues mark
        cfg.pias_port_ecn = t == "dctcp" && (o.seed >> 11) % 2 == 1;
    }
    // SCHED_TCP at the sender runs neither admission nor termination (refused)
    let gtcp = s.starts_with("gtcp:");
    if let Some((k, window, p, req, grant)) = o.admission.filter(|_| !gtcp) {
        cfg.admission = Some(AdmissionConfig { k, window, policy: POLICIES[p] });
        cfg.request_delay_s = req;
        cfg.grant_delay_s = grant;
    }
    cfg.terminate_missed = o.terminate_missed && !gtcp;
    if s == "gtcp:fair" && o.seed % 2 == 1 {
        // (the seed is read by nothing else here: gtcp has no random admission)
        cfg.fair_projection = FairProjection::Window;
    }
    if t == "dctcp" && (o.seed >> 1) % 2 == 1 {
        // (the seed's second bit: it also seeds random admission, independently enough here;
        // with bit 13, the priority schedulers' queues mark their lowest-priority packet)
        let prio_queues = !matches!(s, "ps" | "pias") && !gtcp;
        cfg.ecn_marking = if prio_queues && (o.seed >> 13) % 2 == 1 { EcnMarking::Worst } else { EcnMarking::Sojourn };
    }
    // link jitter: none (half the cases), a tie-breaking 10 ns, or up to several packet times
    // (the seed's third and fourth bits: independent enough of the uses above)
    cfg.link_jitter_s = match (o.seed >> 2) % 4 {
        0 | 1 => 0.0,
        2 => 10e-9,
        _ => 1e-9 * ((o.seed >> 8) % 20_000) as f64,
    };
    // a transmission-complete event per packet, as ns-3 (the seed's fifth bit)
    cfg.tx_complete_events = (o.seed >> 4) % 2 == 1;
    // packet spraying (the seed's sixth bit), where the transport and scheduler take it
    if (o.seed >> 5) % 2 == 1 && !gtcp && !matches!(t, "rcp" | "sdc" | "racs") {
        cfg.load_balancing = LoadBalancing::Packet;
    }
    // fast retransmit at 1 or 2 duplicate ACKs, or never (bits 7 and 8; tcp and dctcp)
    if matches!(t, "tcp" | "dctcp") {
        cfg.dupack_threshold = [3, 0, 1, 2][((o.seed >> 6) % 4) as usize];
        // the window grown by the segments each ACK acknowledges (bit 9), as Linux
        cfg.count_acked_segments = (o.seed >> 9) % 2 == 1;
        // pFabric's minimal TCP's fixed RTO (bit 10), with a timeout of 1 ms or more: above any
        // unloaded round trip drawn here (at most 4 hops of 50 us each way, and a packet's
        // serialization at 1 Gbps per hop). A fixed timer below the round trip has no backoff to
        // end its resends: under load that is a collapse, which can outlast the event budget
        // (FUZZ_SEED=30, case 11,500: tcp under pias, 10 us against a 29 us round trip).
        cfg.fixed_rto = (o.seed >> 10) % 2 == 1 && o.min_rto_s.is_none_or(|r| r >= 1e-3);
    }
    // selective acknowledgments (bit 14; RFC 6675 recovery on tcp and dctcp)
    if matches!(t, "tcp" | "dctcp" | "pfabric") {
        cfg.sack = (o.seed >> 14) % 2 == 1;
        // its recovery as RFC 6937's PRR (bit 15; tcp and dctcp)
        cfg.prr = cfg.sack && t != "pfabric" && (o.seed >> 15) % 2 == 1;
    }
    // K counted in packets, ACKs included (bit 16; dctcp's FIFO ports, marking on arrival)
    if t == "dctcp" && (s == "ps" || gtcp) && cfg.ecn_marking == EcnMarking::Enqueue && (o.seed >> 16) % 2 == 1 {
        cfg.ecn_threshold_packets = Some(1 + ((o.seed >> 17) % 80) as u32);
    }
    // DCTCP's alpha from 0 at the start, as ns-2's (bit 12)
    if t == "dctcp" && (o.seed >> 12) % 2 == 1 {
        cfg.dctcp_alpha_init = 0.0;
    }
    // DCTCP's cut without a floor, as ns-3's (bits 24, 25): windows under one packet wait
    // for an ACK or the timer
    if t == "dctcp" && (o.seed >> 24) % 4 != 0 {
        cfg.dctcp_min_cwnd_packets = [2.0, 0.0, 0.5, 1.0][((o.seed >> 24) % 4) as usize];
    }
    // growth in the window after DCTCP's cut (bit 26; the default holds it, as Linux and ns-3)
    if t == "dctcp" && (o.seed >> 26) % 2 == 1 {
        cfg.dctcp_hold_in_cwr = false;
    }
    // a buffer counted in packets too (bit 28; one FIFO per port), 2 to 64 packets
    if matches!(t, "tcp" | "dctcp") && (s == "ps" || gtcp || (t == "tcp" && s != "pias")) && (o.seed >> 28) % 2 == 1 {
        cfg.buffer_packets = Some(2 + ((o.seed >> 29) % 63) as u32);
    }
    // echoes of duplicate ACKs ignored, as ns-3 (bit 27)
    cfg.dctcp_ignore_dupack_ece = t == "dctcp" && (o.seed >> 27) % 2 == 1;
    cfg.seed = o.seed;
    cfg.max_events = Some(MAX_EVENTS);
    cfg
}

/// Flow i's FCT in ps (None: not finished), for every flow.
fn fcts(s: &PacketSimulator) -> Vec<Option<u64>> {
    (0..s.n_flows()).map(|i| s.fct_ps(i)).collect()
}

/// The case run to its end (paused at every flow change if `paused`); None if the config
/// checks refuse it.
fn run(topo: &Topology, flows: &[FlowSpec], mut cfg: PacketConfig, paused: bool) -> TcResult<Option<PacketSimulator>> {
    cfg.pause_on_flow_change = paused;
    let mut s = match PacketSimulator::new(topo, flows, cfg) {
        Ok(s) => s,
        Err(e @ (SimError::InvalidConfig(_) | SimError::Unsupported(_))) => {
            if std::env::var("FUZZ_SHOW_REFUSED").is_ok() {
                eprintln!("refused: {e}");
            }
            return Ok(None);
        }
        Err(e) => return Err(TestCaseError::fail(format!("building the run: {e}"))),
    };
    let r = if paused {
        let mut r = Ok(());
        while r.is_ok() && !s.done() {
            r = s.advance(f64::INFINITY).map(|_| ());
        }
        r
    } else {
        s.run()
    };
    r.map_err(|e| TestCaseError::fail(format!("run failed: {e}")))?;
    Ok(Some(s))
}

fn check(c: Case) -> TcResult<()> {
    CASES.fetch_add(1, Relaxed);
    let topo = c.topo.build();
    let flows = specs(&c);
    let cfg = config(&c);
    let Some(s) = run(&topo, &flows, cfg.clone(), false)? else {
        REFUSED.fetch_add(1, Relaxed);
        return Ok(());
    };
    let (fct, term, delivered, stats) = (fcts(&s), s.terminated(), s.delivered_bytes(), s.stats());
    RUN.fetch_add(1, Relaxed);
    EVENTS.fetch_add(stats.events, Relaxed);
    DROPS.fetch_add(stats.drops_overflow, Relaxed);
    TIMEOUTS.fetch_add(stats.timeouts, Relaxed);
    for (i, f) in flows.iter().enumerate() {
        match fct[i] {
            Some(ps) => {
                prop_assert!(!term[i], "flow {i} both finished and terminated");
                prop_assert_eq!(delivered[i] as f64, f.size_bytes, "flow {} finished having delivered {} of {} bytes", i, delivered[i], f.size_bytes);
                let fct_s = ps as f64 / 1e12;
                let ideal = s.ideal_fct_of(i);
                prop_assert!(fct_s >= ideal * (1.0 - 1e-9) - 2e-12, "flow {i}: fct {fct_s} below its ideal {ideal}");
            }
            None => {
                prop_assert!(term[i], "flow {i} neither finished nor terminated");
                prop_assert!(cfg.terminate_missed && !f.deadline_s.is_nan(), "flow {i} terminated without a deadline to terminate at");
                // (its sender stops at the deadline; packets already on their way still arrive,
                // its last byte too, after the deadline)
                prop_assert!(delivered[i] as f64 <= f.size_bytes, "flow {i} terminated with {} of {} bytes delivered", delivered[i], f.size_bytes);
            }
        }
    }
    let again = run(&topo, &flows, cfg.clone(), false)?.expect("built once");
    prop_assert_eq!(&fcts(&again), &fct, "the same case again: other finish times");
    prop_assert_eq!(again.stats(), stats, "the same case again: other counters");
    let paused = run(&topo, &flows, cfg, true)?.expect("built once");
    prop_assert_eq!(&fcts(&paused), &fct, "paused at every flow change: other finish times");
    prop_assert_eq!(paused.delivered_bytes(), delivered, "paused at every flow change: other bytes delivered");
    Ok(())
}

#[test]
fn packet_model_ends_every_flow_and_repeats_itself() {
    let (mut runner, n, seed) = common::fuzz_runner(DEFAULT_CASES);
    let t0 = std::time::Instant::now();
    let res = runner.run(&case(), check);
    eprintln!(
        "packet fuzz: {n} cases (seed {seed}) in {:.1} s: {} checked with shrinking, {} run ({} refused by the config checks), {} events, {} drops, {} timeouts",
        t0.elapsed().as_secs_f64(),
        CASES.load(Relaxed),
        RUN.load(Relaxed),
        REFUSED.load(Relaxed),
        EVENTS.load(Relaxed),
        DROPS.load(Relaxed),
        TIMEOUTS.load(Relaxed)
    );
    if let Err(e) = res {
        panic!("{e}");
    }
}
