//! The packet model's TCP options (delayed ACKs, the handshake, RFC 6298's clock
//! granularity) and its destination admission (issues 19 and 20: the Artemis setting), on
//! cases with hand-computed answers.
use fabric_core::packet::tcp::{CcParams, Sender, MAX_RTO_PS};
use fabric_core::rng::SplitMix64;
use fabric_core::sim::choose_admission;
use fabric_core::{AdmissionConfig, AdmissionPolicy, FlowSpec, PacketConfig, PacketSimulator, Scheduler, Topology, Transport};
mod common;
use common::packet::run;

const T_PKT: u64 = 1_200_000; // 1500 B at 10 Gbps, ps
const T_ACK: u64 = 32_000; // 40 B at 10 Gbps, ps
const D: u64 = 200_000; // 0.2 us per link, ps
const S: u64 = 1_000_000_000_000; // one second, ps

fn tcp() -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::Ps);
    c.transport = Some(Transport::Tcp);
    c.delay_per_hop_s = 0.2e-6;
    c
}

#[test]
fn delayed_acks_halve_the_acks_of_a_long_flow() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 2000.0 * 1460.0)];
    let mut c = tcp();
    c.buffer_bytes = Some(100_000_000); // no loss
    let every = run(&topo, &flows, c.clone());
    c.ack_every_segments = 2;
    let delayed = run(&topo, &flows, c);
    assert_eq!(every.stats().ack_packets, 2000);
    let (a, b) = (delayed.stats().ack_packets, every.stats().ack_packets);
    // 1 (the first segment at once) + 999 for the 1998 next; the odd last one is still held
    // when the run ends (at the last byte's arrival)
    assert_eq!(a, 1 + 999, "{a} ACKs with delayed ACKs, {b} without");
    assert_eq!(delayed.stats().delayed_acks, 0);
    assert_eq!(delayed.delivered_bytes(), every.delivered_bytes());
    assert_eq!(delayed.stats().retransmissions + every.stats().retransmissions, 0);
}

#[test]
fn an_odd_last_segment_is_acked_after_exactly_the_timeout() {
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let mut c = tcp();
    c.ack_every_segments = 2;
    // a second flow, between other hosts, arrives at 1 s: the run goes on past the first
    // flow's end, so its sender sees the delayed ACK
    let flows = [FlowSpec::new(0.0, 0, 1, 2.0 * 1460.0), FlowSpec::new(1.0, 2, 3, 1460.0)];
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    // both packets leave at 0: packet 1 reaches the receiver at 3 T + 2 d (behind packet 0
    // at both hops); packet 0, the first, is acknowledged at once, packet 1 is held for
    // 200 ms; its ACK then crosses two idle hops
    let recv1 = 3 * T_PKT + 2 * D;
    let acked = recv1 + S / 5 + 2 * T_ACK + 2 * D;
    s.step((acked - 1) as f64 / 1e12).unwrap();
    assert_eq!(s.fct_ps(0), Some(recv1));
    assert_eq!(s.sender(0).snd_una, 1, "the second packet is not acknowledged before the timeout");
    s.step(acked as f64 / 1e12).unwrap();
    assert_eq!(s.sender(0).snd_una, 2);
    assert_eq!(s.stats().delayed_acks, 1);
}

#[test]
fn delayed_acks_slow_a_one_packet_window_by_the_timeout_per_packet() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 3.0 * 1460.0)];
    let mut c = tcp();
    c.init_cwnd_packets = Some(1.0);
    c.max_cwnd_packets = Some(1.0);
    let plain = run(&topo, &flows, c.clone());
    c.ack_every_segments = 2;
    let delayed = run(&topo, &flows, c);
    // one packet per round trip: r = 2 T + 2 d there, 2 T_ACK + 2 d back
    let r = 2 * T_PKT + 2 * D + 2 * T_ACK + 2 * D;
    assert_eq!(plain.fct_ps(0), Some(2 * r + 2 * T_PKT + 2 * D));
    // packet 0 is acknowledged at once (the first); packet 1's ACK waits 200 ms (nothing
    // else arrives); packet 2 is the last: its ACK does not count in the FCT
    assert_eq!(delayed.fct_ps(0), Some(2 * r + S / 5 + 2 * T_PKT + 2 * D));
}

#[test]
fn dctcp_with_delayed_acks_still_echoes_marks() {
    // 8 long flows into one port: the queue passes K, marks must reach the senders (RFC 8257
    // 3.2: an ACK at once when the CE state changes), so DCTCP keeps the queue without loss.
    let topo = Topology::big_switch(&[10.0; 9]).unwrap();
    let flows: Vec<FlowSpec> = (1..9).map(|i| FlowSpec::new(0.0, i, 0, 5e6)).collect();
    let mut c = tcp();
    c.transport = Some(Transport::Dctcp);
    c.ack_every_segments = 2;
    let s = run(&topo, &flows, c);
    assert!(s.stats().ecn_marks > 0);
    assert_eq!(s.stats().drops_overflow, 0, "{:?}", s.stats());
    let alpha: Vec<f64> = (0..8).map(|i| s.sender(i).alpha).collect();
    assert!(alpha.iter().all(|&a| a < 1.0), "alpha {alpha:?}: marks were echoed");
    assert!(s.stats().ack_packets < s.stats().data_packets * 3 / 4, "{:?}", s.stats());
}

#[test]
fn the_handshake_adds_one_round_trip_of_header_packets() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    for n in [1.0, 20.0, 300.0] {
        let flows = [FlowSpec::new(0.0, 0, 1, n * 1460.0)];
        let mut c = tcp();
        c.buffer_bytes = Some(10_000_000);
        let plain = run(&topo, &flows, c.clone());
        c.handshake = true;
        let hs = run(&topo, &flows, c);
        // SYN over two idle hops, SYN-ACK back: 40 B each way
        assert_eq!(hs.fct_ps(0).unwrap() - plain.fct_ps(0).unwrap(), 4 * T_ACK + 4 * D, "{n} packets");
        assert_eq!(hs.stats().syn_packets, 2);
        assert_eq!(hs.stats().data_packets, plain.stats().data_packets);
    }
}

#[test]
fn a_lost_syn_costs_the_syn_timeout() {
    // Host 0's NIC holds one data packet. Flow 0 (to host 2) opens its connection, then
    // sends its first window of 10 at t_a = 4 T_ACK + 4 d: one is sent, one waits, the rest
    // are dropped. Flow 1 (to host 1) arrives while the NIC's buffer is full: its SYN is
    // dropped and sent again 3 s later, on an idle path (flow 0, with a 1 ms min RTO, is
    // long done). Flow 1 has two packets: they fit in the NIC (one sent, one waiting).
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let t_a = 4 * T_ACK + 4 * D;
    let t1 = t_a + T_PKT / 2;
    let flows = [FlowSpec::new(0.0, 0, 2, 10.0 * 1460.0), FlowSpec::new(t1 as f64 / 1e12, 0, 1, 2.0 * 1460.0)];
    let mut c = tcp();
    c.handshake = true;
    c.syn_timeout_s = 3.0;
    c.buffer_bytes = Some(1500);
    c.min_rto_s = Some(1e-3);
    let s = run(&topo, &flows, c.clone());
    assert!(s.fct_ps(0).unwrap() < S / 10, "{:?}", s.fct_ps(0));
    assert_eq!(s.stats().syn_timeouts, 1);
    assert_eq!(s.flow_timeouts()[1], 1);
    assert_eq!(s.stats().data_dropped + 1, s.stats().drops_overflow, "one SYN among the drops");
    // the same flow alone on the idle path
    let alone = run(&topo, &[FlowSpec::new(0.0, 0, 1, 2.0 * 1460.0)], c);
    assert_eq!(s.fct_ps(1), Some(3 * S + alone.fct_ps(0).unwrap()));
}

#[test]
fn clock_granularity_bounds_the_rto_from_below_by_srtt_plus_g() {
    let mut p = CcParams {
        transport: Transport::Tcp,
        init_cwnd: 1.0,
        max_cwnd: f64::INFINITY,
        min_rto_ps: 1,
        max_rto_ps: MAX_RTO_PS,
        pfabric_rto_rtts: 0.0,
        dctcp_g: 1.0 / 16.0,
        dctcp_alpha_init: 1.0,
        dctcp_min_cwnd: 2.0,
        dctcp_cwr_hold: false,
        dctcp_ignore_dupack_ece: false,
        clock_g_ps: 1.0,
        limited_transmit: false,
        dupack_threshold: 3,
        count_acked_segments: false,
        fixed_rto: false,
        sack: false,
        prr: false,
    };
    let r = 1_000_000; // 1 us: RTTVAR 0.5 us
    assert_eq!(Sender::new(10, &p, r).rto_ps(&p), r + 4 * r / 2);
    p.clock_g_ps = 1e9; // ns-3's 1 ms
    assert_eq!(Sender::new(10, &p, r).rto_ps(&p), r + 1_000_000_000);
    // through the simulator: the option sets G
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let mut c = tcp();
    c.clock_granularity_s = 1e-3;
    c.min_rto_s = Some(1e-6);
    let s = PacketSimulator::new(&topo, &[FlowSpec::new(0.0, 0, 1, 1460.0)], c).unwrap();
    let cc = CcParams { min_rto_ps: 1_000_000, clock_g_ps: 1e9, ..p };
    assert!(s.sender(0).rto_ps(&cc) > 1_000_000_000);
}

// ----- destination admission -----

fn admission(policy: AdmissionPolicy, k: usize, window: usize) -> Option<AdmissionConfig> {
    Some(AdmissionConfig { k, window, policy })
}

/// Host 0 receives: flow 0 (no deadline) takes the only token at 0; flows 1-4 wait with
/// (size, deadline) chosen so that every rule orders them differently.
fn hand_case() -> Vec<FlowSpec> {
    let mut f = vec![FlowSpec::new(0.0, 1, 0, 1e6)];
    for (i, (size, dl)) in [(3e5, 0.010), (1e5, 0.020), (4e5, 0.005), (2e5, 0.008)].into_iter().enumerate() {
        let mut x = FlowSpec::new((i + 1) as f64 * 1e-6, i + 2, 0, size);
        x.deadline_s = dl;
        f.push(x);
    }
    f
}

fn admission_order(s: &PacketSimulator) -> Vec<usize> {
    let a = s.admitted_s();
    let mut o: Vec<usize> = (0..a.len()).collect();
    o.sort_by(|&i, &j| a[i].total_cmp(&a[j]).then(i.cmp(&j)));
    o
}

#[test]
fn each_rule_admits_in_its_order_on_a_hand_made_case() {
    let topo = Topology::big_switch(&[10.0; 6]).unwrap();
    // abs. deadlines 10.001, 20.002, 5.003, 8.004 ms; size/deadline 30, 5, 80, 25 MB/s
    for (p, w, want) in [
        (AdmissionPolicy::Fifo, 0, [0, 1, 2, 3, 4]),
        (AdmissionPolicy::Edf, 0, [0, 3, 4, 1, 2]),
        (AdmissionPolicy::Ssdf, 0, [0, 2, 4, 1, 3]),
        (AdmissionPolicy::Lsdf, 0, [0, 3, 1, 4, 2]),
        (AdmissionPolicy::Srpt, 0, [0, 2, 4, 1, 3]),
        // a window of 2: EDF among the two oldest waiting
        (AdmissionPolicy::Edf, 2, [0, 1, 3, 4, 2]),
    ] {
        let mut c = tcp();
        c.admission = admission(p.clone(), 1, w);
        let s = run(&topo, &hand_case(), c);
        assert_eq!(admission_order(&s), want, "{p:?} window {w}");
        // one token: each flow is admitted when the previous one's last byte arrived
        let fin = s.finish_s();
        let adm = s.admitted_s();
        for k in 1..5 {
            assert_eq!(adm[want[k]], fin[want[k - 1]], "{p:?}");
        }
        assert_eq!(s.peak_tokens()[0], 1);
    }
}

/// The largest number of flows per destination holding a token at once, from the
/// admission and end times (a release before an admission at the same time).
fn max_concurrent(s: &PacketSimulator, flows: &[FlowSpec]) -> usize {
    let (adm, fin, term) = (s.admitted_s(), s.finish_s(), s.terminated().to_vec());
    let mut ev: Vec<(f64, i32)> = Vec::new();
    for i in 0..flows.len() {
        if adm[i].is_nan() {
            continue;
        }
        // the core's termination time, converted as it converts its times
        let end = if term[i] { ((flows[i].arrival_s + flows[i].deadline_s) * 1e12).round() as u64 as f64 / 1e12 } else { fin[i] };
        ev.push((adm[i], 1));
        ev.push((end, -1));
    }
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut peak) = (0i32, 0i32);
    for (_, d) in ev {
        now += d;
        peak = peak.max(now);
    }
    peak as usize
}

fn bursts(n: usize, seed: u64) -> Vec<FlowSpec> {
    // 10-to-1 bursts every 2 ms of 100-300 KB flows with 5-30 ms deadlines (a SplitMix-like draw)
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    };
    let mut f = Vec::new();
    for b in 0..n {
        for s in 1..=10 {
            let mut x = FlowSpec::new(b as f64 * 2e-3, s, 0, 1e5 + 2e5 * next());
            x.deadline_s = 5e-3 + 25e-3 * next();
            f.push(x);
        }
    }
    f
}

#[test]
fn never_more_than_k_tokens_per_destination() {
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(20, 7);
    for p in [AdmissionPolicy::Fifo, AdmissionPolicy::Edf, AdmissionPolicy::Ssdf, AdmissionPolicy::Lsdf, AdmissionPolicy::Random] {
        for (k, terminate, handshake) in [(1, false, false), (3, true, true), (10, false, true)] {
            let mut c = tcp();
            c.delay_per_hop_s = 250e-6;
            c.admission = admission(p.clone(), k, 5);
            c.terminate_missed = terminate;
            c.handshake = handshake;
            c.ack_every_segments = 2;
            c.request_delay_s = 500e-6;
            c.grant_delay_s = 500e-6;
            let s = run(&topo, &flows, c);
            let m = max_concurrent(&s, &flows);
            assert!(m <= k, "{p:?} k {k}: {m} tokens at once");
            assert_eq!(s.peak_tokens()[0] as usize, m, "{p:?} k {k}");
            assert_eq!(m, k, "{p:?} k {k}: the bursts use every token");
            // the sender starts one grant delay after its admission, and nobody starts
            // before its request reached the destination
            let (adm, st) = (s.admitted_s(), s.start_s());
            for i in 0..flows.len() {
                if !st[i].is_nan() {
                    assert!((st[i] - adm[i] - 500e-6).abs() < 1e-12, "flow {i}");
                    assert!(adm[i] >= flows[i].arrival_s + 500e-6 - 1e-12);
                }
            }
            assert!(s.done());
        }
    }
}

#[test]
fn fifo_admits_in_arrival_order() {
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(15, 3);
    let mut c = tcp();
    c.admission = admission(AdmissionPolicy::Fifo, 2, 0);
    c.handshake = true;
    let s = run(&topo, &flows, c);
    let order = admission_order(&s);
    assert_eq!(order, (0..flows.len()).collect::<Vec<_>>());
}

#[test]
fn everything_on_is_deterministic_bit_for_bit() {
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(30, 5);
    let mut c = tcp();
    c.delay_per_hop_s = 250e-6;
    c.buffer_bytes = Some(100 * 1488);
    c.mss_bytes = 1448;
    c.init_cwnd_packets = Some(1.0);
    c.ack_every_segments = 2;
    c.handshake = true;
    c.syn_timeout_s = 3.0;
    c.clock_granularity_s = 1e-3;
    c.admission = admission(AdmissionPolicy::Random, 10, 5);
    c.request_delay_s = 500e-6;
    c.grant_delay_s = 500e-6;
    c.seed = 42;
    let a = run(&topo, &flows, c.clone());
    let b = run(&topo, &flows, c.clone());
    let bits = |s: &PacketSimulator| s.fct_s().iter().chain(&s.admitted_s()).map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(a.stats(), b.stats());
    assert!(a.stats().drops_overflow > 0, "the incast overflows the 100-packet buffer");
    c.seed = 43;
    let other = run(&topo, &flows, c);
    assert_ne!(admission_order(&a), admission_order(&other), "the seed drives random admission");
}

#[test]
fn option_refusals_name_what_is_wrong() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let f = [FlowSpec::new(0.0, 0, 1, 1000.0)];
    let err = |c: PacketConfig| PacketSimulator::new(&topo, &f, c).err().unwrap().to_string();
    let mut c = tcp();
    c.ack_every_segments = 0;
    assert!(err(c).contains("ack_every_segments"));
    let mut c = tcp();
    c.delayed_ack_timeout_s = 0.6e3;
    assert!(err(c).contains("delayed_ack_timeout_s"));
    let mut c = tcp();
    c.syn_timeout_s = f64::NAN;
    assert!(err(c).contains("syn_timeout_s"));
    let mut c = tcp();
    c.request_delay_s = 1e-3;
    assert!(err(c).contains("give admission"));
    let mut c = tcp();
    c.admission = admission(AdmissionPolicy::Fifo, 0, 0);
    assert!(err(c).contains("k must be >= 1"));
    // options a transport or a setting would ignore
    let with = |t: Transport| {
        let mut c = PacketConfig::new(if t == Transport::PFabric { Scheduler::Srpt } else { Scheduler::Ps });
        c.transport = Some(t);
        c
    };
    let mut c = with(Transport::Tcp);
    c.ecn_threshold_bytes = 3000;
    assert!(err(c).contains("ecn_threshold_bytes is read by the dctcp transport(s) only; this run's transport is 'tcp'"));
    let mut c = with(Transport::Rcp);
    c.init_cwnd_packets = Some(1.0);
    assert!(err(c).contains("init_cwnd_packets is read by the tcp, dctcp, pfabric, sdc transport(s) only"));
    let mut c = with(Transport::PFabric);
    c.limited_transmit = true;
    assert!(err(c).contains("limited_transmit is read by the tcp, dctcp transport(s) only"));
    let mut c = with(Transport::PFabric);
    c.clock_granularity_s = 1e-3;
    assert!(err(c).contains("clock_granularity_s is RFC 6298's G in the estimated RTO; pfabric"));
    let mut c = tcp();
    c.fixed_rto = true;
    c.clock_granularity_s = 1e-3;
    assert!(err(c).contains("clock_granularity_s is RFC 6298's G in the estimated RTO; fixed_rto"));
    let mut c = tcp();
    c.syn_timeout_s = 3.0;
    assert!(err(c).contains("syn_timeout_s is the handshake's SYN timer: give handshake=True"));
    let mut c = tcp();
    c.delayed_ack_timeout_s = 0.1;
    assert!(err(c).contains("ack_every_segments=1 (an ACK per segment) never holds"));
    // where they are read, the same values run
    let ok = |c: PacketConfig| PacketSimulator::new(&topo, &f, c).map(|_| ()).unwrap();
    let mut c = with(Transport::Dctcp);
    c.ecn_threshold_bytes = 3000;
    c.limited_transmit = true;
    c.clock_granularity_s = 1e-3;
    ok(c);
    let mut c = tcp();
    c.handshake = true;
    c.syn_timeout_s = 3.0;
    c.ack_every_segments = 2;
    c.delayed_ack_timeout_s = 0.1;
    ok(c);
    let mut c = PacketConfig::new(Scheduler::Racs);
    c.syn_timeout_s = 3.0; // RACS always opens with a SYN
    ok(c);
    for bad in [-1e-9, f64::NAN, 2e-3] {
        let mut c = tcp();
        c.link_jitter_s = bad;
        assert!(err(c).contains("link_jitter_s must be in [0, 1e-3] s"), "{bad}");
    }
}

#[test]
fn link_jitter_delays_packets_but_keeps_every_link_first_in_first_out() {
    // One flow alone on a lossless path, 100 KB at 10 Gbps (1.2 us per packet) with a jitter
    // of 20 us, far more than a packet time: a packet drawn to arrive before the one ahead of
    // it on its link arrives with it (without that rule its event would lie in the past, which
    // the event loop's debug assertion refuses). So no retransmission and no duplicate, and
    // the FCT is at most the jitter-free one plus two hops of jitter per packet.
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 70.0 * 1460.0)];
    let mut c = tcp();
    c.buffer_bytes = Some(100_000_000);
    let plain = run(&topo, &flows, c.clone());
    c.link_jitter_s = 20e-6;
    let a = run(&topo, &flows, c.clone());
    let b = run(&topo, &flows, c.clone());
    assert_eq!(a.stats().retransmissions + a.stats().fast_retransmits + a.stats().duplicates, 0, "{:?}", a.stats());
    let (f0, f1) = (plain.fct_ps(0).unwrap(), a.fct_ps(0).unwrap());
    assert!(f1 > f0 && f1 <= f0 + 2 * 70 * 20_000_000, "FCT {f1} ps with jitter, {f0} ps without");
    // the same run gives the same delays; another seed, others
    assert_eq!(a.fct_s()[0].to_bits(), b.fct_s()[0].to_bits());
    assert_eq!(a.stats(), b.stats());
    c.seed = 1;
    assert_ne!(run(&topo, &flows, c).fct_ps(0), Some(f1));
}

#[test]
fn link_jitter_breaks_the_ties_of_synchronized_senders() {
    // Ten 100 KB flows started together into one 10 Gbps port with a 50-packet buffer: every
    // sender's packets fall on the same grid of packet times, so with no jitter their
    // arrivals at the port tie and are taken in send order. A jitter of 10 ns (1% of a
    // packet time) orders them otherwise: another drop pattern, the same bytes delivered.
    let topo = Topology::big_switch(&[10.0; 11]).unwrap();
    let flows: Vec<FlowSpec> = (1..=10).map(|s| FlowSpec::new(0.0, s, 0, 100.0 * 1460.0)).collect();
    let mut c = tcp();
    c.buffer_bytes = Some(50 * 1500);
    c.min_rto_s = Some(1e-3);
    let plain = run(&topo, &flows, c.clone());
    c.link_jitter_s = 10e-9;
    let jit = run(&topo, &flows, c);
    assert!(plain.stats().drops_overflow > 0 && jit.stats().drops_overflow > 0);
    assert_eq!(plain.delivered_bytes(), jit.delivered_bytes());
    let bits = |s: &PacketSimulator| s.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_ne!(bits(&plain), bits(&jit));
}

#[test]
fn tx_complete_events_change_only_the_order_of_same_instant_arrivals() {
    // A flow alone: each packet reaches the switch's port at the very instant the port ends
    // the packet before (equal link rates), so with `tx_complete_events` it waits for that
    // end's event, and starts at the same instant: the same times, one event more per packet.
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 200.0 * 1460.0)];
    let mut c = tcp();
    c.buffer_bytes = Some(100_000_000);
    let plain = run(&topo, &flows, c.clone());
    c.tx_complete_events = true;
    let txc = run(&topo, &flows, c);
    assert_eq!(plain.fct_s()[0].to_bits(), txc.fct_s()[0].to_bits());
    assert_eq!(plain.stats().data_packets, txc.stats().data_packets);
    assert!(txc.stats().events > plain.stats().events, "{} events against {}", txc.stats().events, plain.stats().events);
    // The Artemis setting's 10-to-1 bursts (synchronized senders, delayed ACKs, a 100-packet
    // port): same-instant arrivals at the full port go in another order, and the drops move.
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(10, 1);
    let mut c = artemis(AdmissionPolicy::Fifo, false);
    c.admission = admission(AdmissionPolicy::Fifo, 10, 5);
    let plain = run(&topo, &flows, c.clone());
    c.tx_complete_events = true;
    let txc = run(&topo, &flows, c.clone());
    let again = run(&topo, &flows, c);
    let bits = |s: &PacketSimulator| s.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_ne!(bits(&plain), bits(&txc));
    assert_eq!(bits(&txc), bits(&again));
    assert_eq!(plain.delivered_bytes(), txc.delivered_bytes());
}

/// The Artemis setting of the token env's packet model (benchmarks/reproduce/artemis.py's NS3_ERA).
fn artemis(policy: AdmissionPolicy, terminate: bool) -> PacketConfig {
    let mut c = PacketConfig::artemis_ns3_era();
    c.delay_per_hop_s = 250e-6;
    c.terminate_missed = terminate;
    c.admission = admission(policy, 3, 5);
    c
}

#[test]
fn external_admission_granted_by_a_rule_is_the_rules_run_bit_for_bit() {
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(25, 11);
    for p in [AdmissionPolicy::Fifo, AdmissionPolicy::Edf, AdmissionPolicy::Ssdf, AdmissionPolicy::Lsdf, AdmissionPolicy::Srpt] {
        for terminate in [false, true] {
            let rule = run(&topo, &flows, artemis(p, terminate));
            let mut ext = PacketSimulator::new(&topo, &flows, artemis(AdmissionPolicy::External, terminate)).unwrap();
            let mut rng = SplitMix64::new(0);
            let mut decisions = 0;
            while let Some(d) = ext.next_decision().unwrap() {
                assert_eq!(ext.pending_decision(), Some(d));
                let win: Vec<u32> = ext.waiting(d).iter().take(5).copied().collect();
                let pos = choose_admission(&p, &flows, &win, &mut rng);
                ext.grant(d, pos).unwrap();
                decisions += 1;
            }
            assert!(ext.done());
            let bits = |s: &PacketSimulator| s.fct_s().iter().chain(&s.admitted_s()).chain(&s.start_s()).map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&rule), bits(&ext), "{p:?} terminate {terminate}");
            assert_eq!(rule.stats(), ext.stats(), "{p:?} terminate {terminate}");
            assert_eq!(rule.terminated(), ext.terminated());
            let admitted = ext.admitted_s().iter().filter(|x| !x.is_nan()).count();
            assert_eq!(decisions, admitted, "one decision per admission");
            assert!(terminate || admitted == flows.len());
        }
    }
}

#[test]
fn external_admission_refuses_a_run_without_a_driver_and_bad_grants() {
    let topo = Topology::big_switch(&[1.0; 11]).unwrap();
    let flows = bursts(2, 1);
    let mut s = PacketSimulator::new(&topo, &flows, artemis(AdmissionPolicy::External, false)).unwrap();
    let e = s.run().unwrap_err().to_string();
    assert!(e.contains("decision pending at destination 0"), "{e}");
    let d = s.next_decision().unwrap().unwrap();
    assert_eq!(d, 0);
    assert!(s.grant(1, 0).unwrap_err().to_string().contains("no admission decision pending at destination 1"));
    let n = s.waiting(0).len().min(5);
    assert!(s.grant(0, n).unwrap_err().to_string().contains("outside the window"));
    s.grant(0, 0).unwrap();
}

/// PIAS over tcp into one port: 8 long flows (demoted to queue 1 after 10 KB) fill the
/// receiver's port, then short flows (queue 0) arrive.
fn pias_incast(reserve_packets: u64) -> (PacketSimulator, Vec<FlowSpec>) {
    let topo = Topology::big_switch(&[10.0; 9]).unwrap();
    let mut flows: Vec<FlowSpec> = (1..9).map(|h| FlowSpec::new(0.0, h, 0, 2e6)).collect();
    for j in 0..40 {
        flows.push(FlowSpec::new(20e-6 + j as f64 * 25e-6, 1 + j % 8, 0, 4380.0)); // 3 packets
    }
    let mut c = tcp();
    c.scheduler = Scheduler::Pias;
    c.pias_thresholds_bytes = vec![10_000.0];
    c.buffer_bytes = Some(60 * 1500);
    c.min_rto_s = Some(1e-3);
    c.queue_reserve_bytes = reserve_packets * 1500;
    (run(&topo, &flows, c), flows)
}

#[test]
fn a_reserve_per_pias_queue_keeps_room_for_the_high_priority_queue() {
    let (shared, flows) = pias_incast(0);
    let (reserved, _) = pias_incast(20);
    let short_mean = |s: &PacketSimulator| {
        let fct = s.fct_s();
        let v: Vec<f64> = (8..flows.len()).map(|i| fct[i]).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (a, b) = (short_mean(&shared), short_mean(&reserved));
    assert!(shared.stats().drops_overflow > 0, "the long flows must overflow the shared buffer");
    // with 20 of the 60 packets kept for queue 0, the short flows' packets find room
    assert!(b < 0.5 * a, "short flows' mean FCT {b} s with the reserve, {a} s without");
    for s in [&shared, &reserved] {
        assert!(s.fct_s().iter().all(|x| x.is_finite()), "every flow finishes");
        let want: Vec<u64> = flows.iter().map(|f| f.size_bytes as u64).collect();
        assert_eq!(s.delivered_bytes(), &want[..]);
    }
}

#[test]
fn queue_reserve_refusals_name_what_is_wrong() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 1460.0)];
    let mut c = tcp();
    c.queue_reserve_bytes = 1500;
    let e = PacketSimulator::new(&topo, &flows, c.clone()).unwrap_err().to_string();
    assert!(e.contains("queue_reserve_bytes is read only by the pias scheduler") && e.contains("'ps' over tcp"), "{e}");
    c.scheduler = Scheduler::Pias;
    c.pias_thresholds_bytes = vec![10_000.0, 100_000.0];
    c.buffer_bytes = Some(4000);
    let e = PacketSimulator::new(&topo, &flows, c.clone()).unwrap_err().to_string();
    assert!(e.contains("queue_reserve_bytes x 3 queues = 4500 B exceeds buffer_bytes (4000 B)"), "{e}");
    c.buffer_bytes = Some(4500);
    assert!(PacketSimulator::new(&topo, &flows, c).is_ok());
}
