//! SCHED_TCP's scheduling at the sender on the packet model (`gtcp:<inner>` over tcp and
//! dctcp, `packet/hostsched.rs`; Ayesta et al., shared/papers/001_*): the network run is the
//! `ps` run's, packet for packet (non-intrusive); only whose data each new segment carries
//! changes.
use fabric_core::rng::SplitMix64;
use fabric_core::{FairProjection, FlowSpec, PacketConfig, PacketSimulator, Scheduler, Topology, Transport};
mod common;
use common::packet::run;

fn cfg(sched: &str, t: Transport) -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
    c.transport = Some(t);
    c.delay_per_hop_s = 2e-6;
    c
}

fn finish(s: &PacketSimulator) -> Vec<f64> {
    s.finish_s()
}

/// Every flow finished, each of its bytes delivered once, as the data it was.
fn check_exactly_once(s: &PacketSimulator, flows: &[FlowSpec]) {
    let h = s.host_sched().expect("a gtcp run");
    for (i, f) in flows.iter().enumerate() {
        assert!(s.ended(i) && !s.finish_s()[i].is_nan(), "flow {i} unfinished");
        assert_eq!(h.assigned()[i], f.size_bytes as u64, "flow {i}: bytes put into segments");
        assert_eq!(s.delivered_bytes()[i], f.size_bytes as u64, "flow {i}: bytes delivered");
    }
}

/// A long flow and a short one from the same host to the same host (one path).
fn two_flows() -> (Topology, Vec<FlowSpec>) {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    (topo, vec![FlowSpec::new(0.0, 0, 1, 3e6), FlowSpec::new(500e-6, 0, 1, 300e3)])
}

#[test]
fn srpt_at_the_sender_serves_the_short_flow_and_the_long_one_sends_nothing_new_meanwhile() {
    let (topo, flows) = two_flows();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let mut s = PacketSimulator::new(&topo, &flows, cfg("gtcp:srpt", t)).unwrap();
        s.step(500e-6).unwrap();
        let a0 = s.host_sched().unwrap().assigned()[0];
        assert!(a0 > 0 && a0 < 3_000_000, "{t:?}: the long flow has started, not finished sending ({a0})");
        let mut steps = 0;
        loop {
            s.step(s.now_s() + 1e-6).unwrap();
            steps += 1;
            let h = s.host_sched().unwrap();
            if h.assigned()[1] == 300_000 {
                break;
            }
            assert_eq!(h.assigned()[0], a0, "{t:?}: the long flow's data went out while the short one had data left");
        }
        assert!(steps > 100, "{t:?}: the short flow took {steps} us to send: the check saw its whole service");
        s.run().unwrap();
        check_exactly_once(&s, &flows);
        let g = finish(&s);
        let ps = run(&topo, &flows, cfg("ps", t));
        let p = finish(&ps);
        assert!(g[1] < g[0], "{t:?}: the short flow finishes first");
        assert!(g[1] < p[1], "{t:?}: the short flow gains: {} vs ps {}", g[1], p[1]);
        // non-intrusive: the same packets at the same times; the last byte at the same time
        assert_eq!(s.stats(), ps.stats(), "{t:?}");
        assert_eq!(g[0].max(g[1]), p[0].max(p[1]), "{t:?}");
    }
}

#[test]
fn gtcp_ps_is_ps_bit_for_bit() {
    let topo = Topology::leaf_spine(2, 4, 2, &[10.0; 8], 10.0, 0).unwrap();
    let flows: Vec<FlowSpec> = (0..40)
        .map(|i| FlowSpec::new(i as f64 * 7e-6, i % 8, (i * 3 + 1) % 8, 2_000.0 + (i * 37_000 % 400_000) as f64))
        .filter(|f| f.src != f.dst)
        .collect();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let mut c = cfg("gtcp:ps", t);
        c.buffer_bytes = Some(30_000); // losses
        let g = run(&topo, &flows, c.clone());
        c.scheduler = Scheduler::Ps;
        let p = run(&topo, &flows, c);
        assert!(p.stats().retransmissions > 0, "{t:?}: the case has losses");
        assert_eq!(g.finish_s(), p.finish_s(), "{t:?}");
        assert_eq!(g.stats(), p.stats(), "{t:?}");
        assert_eq!(g.delivered_bytes(), p.delivered_bytes(), "{t:?}");
    }
}

#[test]
fn every_policy_is_non_intrusive_and_delivers_every_byte_once_under_losses() {
    let topo = Topology::leaf_spine(2, 4, 2, &[10.0; 8], 10.0, 0).unwrap();
    // many flows per host pair (same route), overlapping
    let flows: Vec<FlowSpec> = (0..60)
        .map(|i| FlowSpec::new(i as f64 * 5e-6, i % 3, 4 + i % 2, 1_000.0 + (i * 53_411 % 700_000) as f64))
        .collect();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let mut c = cfg("ps", t);
        c.buffer_bytes = Some(30_000);
        let p = run(&topo, &flows, c.clone());
        assert!(p.stats().retransmissions > 0 && p.stats().drops_overflow > 0, "{t:?}: the case has losses");
        let last = finish(&p).into_iter().fold(0.0, f64::max);
        for inner in ["fifo", "srpt", "las", "fair", "fair by window"] {
            c.scheduler = Scheduler::parse(&format!("gtcp:{}", &inner[..inner.len().min(4)])).unwrap();
            c.fair_projection = if inner == "fair by window" { FairProjection::Window } else { FairProjection::Exact };
            let g = run(&topo, &flows, c.clone());
            check_exactly_once(&g, &flows);
            assert_eq!(g.stats(), p.stats(), "{t:?} {inner}: the network run is ps's");
            assert_eq!(finish(&g).into_iter().fold(0.0, f64::max), last, "{t:?} {inner}");
            // deterministic bit for bit
            let again = run(&topo, &flows, c.clone());
            assert_eq!(again.finish_s(), g.finish_s(), "{t:?} {inner}");
            assert_eq!(again.host_sched().unwrap().assigned(), g.host_sched().unwrap().assigned());
        }
    }
}

#[test]
fn a_held_flow_recovers_its_lost_data_while_held() {
    // the long flow overflows a small buffer in slow start; the short flow arrives while its
    // losses are outstanding; under srpt the long flow's data is held, its connection
    // keeps running as under tcp and retransmits the lost segments (its own data: a
    // retransmission resends what the segment carried)
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = vec![FlowSpec::new(0.0, 0, 1, 3e6), FlowSpec::new(60e-6, 0, 1, 1e6)];
    let mut c = cfg("gtcp:srpt", Transport::Tcp);
    c.buffer_bytes = Some(20_000);
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    s.step(60e-6).unwrap();
    let (a0, d0, r0) = (s.host_sched().unwrap().assigned()[0], s.delivered_bytes()[0], s.stats().retransmissions);
    assert!(s.stats().drops_overflow > 0, "the long flow has lost packets by then");
    assert!(d0 < a0, "it has data outstanding");
    let mut r_hold = r0;
    let mut d_hold = d0;
    while s.host_sched().unwrap().assigned()[1] < 1_000_000 {
        s.step(s.now_s() + 1e-6).unwrap();
        if s.host_sched().unwrap().assigned()[1] < 1_000_000 {
            assert_eq!(s.host_sched().unwrap().assigned()[0], a0, "held: nothing new of the long flow");
            r_hold = s.stats().retransmissions;
            d_hold = s.delivered_bytes()[0];
        }
    }
    assert!(r_hold > r0, "retransmissions while held: {r0} -> {r_hold}");
    assert_eq!(d_hold, a0, "every byte it had sent, the lost ones included, arrived while it was held");
    s.run().unwrap();
    check_exactly_once(&s, &flows);
}

#[test]
fn fair_finishes_every_flow_no_later_than_tcp_without_losses() {
    // SCHED_TCP's Proposition 2: without losses or reordering, T_i^FAIR <= T_i^tcp
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let sizes = [2e6, 300e3, 1.2e6, 50e3, 700e3, 5e3, 900e3];
    let flows: Vec<FlowSpec> = sizes.iter().enumerate().map(|(i, &b)| FlowSpec::new(i as f64 * 150e-6, 0, 1, b)).collect();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let mut c = cfg("ps", t);
        c.buffer_bytes = Some(10_000_000);
        let p = run(&topo, &flows, c.clone());
        assert_eq!(p.stats().retransmissions, 0);
        c.scheduler = Scheduler::parse("gtcp:fair").unwrap();
        let g = run(&topo, &flows, c);
        check_exactly_once(&g, &flows);
        let (fp, fg) = (finish(&p), finish(&g));
        let mut gained = 0;
        for i in 0..flows.len() {
            assert!(fg[i] <= fp[i], "{t:?} flow {i}: FAIR {} > tcp {}", fg[i], fp[i]);
            gained += (fg[i] < fp[i]) as usize;
        }
        // the last flow ends as under tcp (the paper's Appendix A), and so does one whose
        // segments leave at its arrival under tcp as well (the 5 kB flow: four segments)
        assert!(gained >= flows.len() - 2, "{t:?}: {gained} flows gain");
    }
}

/// `n` flows from host 0 to host 1 (one route), Poisson arrivals at `load` of a `gbps`
/// link, sizes log-uniform from 2 kB to 2 MB.
fn one_path_poisson(n: usize, load: f64, gbps: f64, seed: u64) -> Vec<FlowSpec> {
    let mut rng = SplitMix64::new(seed);
    let (lo, hi) = (2e3f64, 2e6f64);
    let mean = (hi - lo) / (hi / lo).ln();
    let gap = mean * 8.0 / (gbps * 1e9 * load);
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            t += -gap * (1.0 - rng.next_f64()).ln();
            FlowSpec::new(t, 0, 1, (lo * (hi / lo).powf(rng.next_f64())).round())
        })
        .collect()
}

#[test]
fn exact_fair_finishes_every_flow_of_a_poisson_trace_no_later_than_tcp() {
    // Proposition 2 (T_i^FAIR <= T_i^tcp without losses or reordering) on many flows that
    // overlap at load 0.9: the exact projection (the default) knows tcp's finish times
    let topo = Topology::big_switch(&[1.0; 2]).unwrap();
    for (t, seed) in [(Transport::Tcp, 1), (Transport::Dctcp, 2)] {
        let flows = one_path_poisson(300, 0.9, 1.0, seed);
        let mut c = cfg("ps", t);
        // no loss: a buffer for every window
        c.buffer_bytes = Some(1 << 36);
        c.min_rto_s = Some(5.0);
        let p = run(&topo, &flows, c.clone());
        assert_eq!((p.stats().retransmissions, p.stats().timeouts), (0, 0), "{t:?}: no loss, no timeout");
        c.scheduler = Scheduler::parse("gtcp:fair").unwrap();
        let g = run(&topo, &flows, c.clone());
        check_exactly_once(&g, &flows);
        assert_eq!(g.stats(), p.stats(), "{t:?}: the network run is tcp's");
        let (fp, fg) = (finish(&p), finish(&g));
        let later: Vec<usize> = (0..flows.len()).filter(|&i| fg[i] > fp[i]).collect();
        assert!(later.is_empty(), "{t:?}: flows {later:?} finish later than under tcp");
        let gained = (0..flows.len()).filter(|&i| fg[i] < fp[i]).count();
        // the others finish as under tcp: flows alone on the path, and small flows whose
        // first window carries them whole at their arrival under tcp too
        assert!(gained > flows.len() / 2, "{t:?}: {gained} of {} flows gain", flows.len());
        // the window estimate runs the same network, in another order, and leaves some
        // flows later than tcp here (which is why the exact projection is the default)
        c.fair_projection = FairProjection::Window;
        let w = run(&topo, &flows, c);
        check_exactly_once(&w, &flows);
        assert_eq!(w.stats(), p.stats(), "{t:?}");
        let fw = finish(&w);
        assert!((0..flows.len()).any(|i| fw[i] > fp[i]), "{t:?}: the estimate was exact on this trace");
    }
}

#[test]
fn fair_projection_is_an_option_of_gtcp_fair_only() {
    let (topo, flows) = two_flows();
    let mut c = cfg("gtcp:srpt", Transport::Tcp);
    c.fair_projection = FairProjection::Window;
    let e = PacketSimulator::new(&topo, &flows, c).unwrap_err().to_string();
    assert!(e.contains("fair_projection 'window'") && e.contains("gtcp:fair") && e.contains("gtcp:srpt"), "{e}");
    assert_eq!(FairProjection::parse("exact").unwrap(), FairProjection::Exact);
    let e = FairProjection::parse("oracle").unwrap_err().to_string();
    assert!(e.contains("'oracle'") && e.contains("exact, window"), "{e}");
}

#[test]
fn las_serves_the_newcomer_first() {
    let (topo, flows) = two_flows();
    let g = run(&topo, &flows, cfg("gtcp:las", Transport::Tcp));
    let p = run(&topo, &flows, cfg("ps", Transport::Tcp));
    check_exactly_once(&g, &flows);
    assert!(g.finish_s()[1] < p.finish_s()[1]);
}

#[test]
fn refusals_name_the_cause() {
    let (topo, flows) = two_flows();
    let err = |c: PacketConfig| PacketSimulator::new(&topo, &flows, c).unwrap_err().to_string();
    let e = err(cfg("srpt", Transport::Tcp));
    assert!(e.contains("gtcp:srpt") && e.contains("pFabric"), "{e}");
    let e = err(cfg("fair", Transport::Dctcp));
    assert!(e.contains("gtcp:fair"), "{e}");
    let e = err(cfg("gtcp:edf", Transport::Tcp));
    assert!(e.contains("ps, fifo, srpt, las, fair"), "{e}");
    let e = err(cfg("gtcp:srpt", Transport::PFabric));
    assert!(e.contains("gtcp:srpt") && e.contains("dctcp or tcp"), "{e}");
    let mut c = cfg("gtcp:las", Transport::Tcp);
    c.terminate_missed = true;
    assert!(err(c).contains("terminate_missed"));
    // the default transport is ps's
    let s = PacketSimulator::new(&topo, &flows, PacketConfig::new(Scheduler::parse("gtcp:fair").unwrap())).unwrap();
    assert_eq!(s.transport(), Transport::Dctcp);
    // the fluid model refuses gtcp:fair
    let e = fabric_core::Simulator::new(topo.clone(), flows.clone(), fabric_core::SimConfig::new(Scheduler::parse("gtcp:fair").unwrap()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("packet model"), "{e}");
    // a hidden size: srpt and fair read it, las does not
    let mut hidden = flows.clone();
    hidden[0].size_known = false;
    assert!(PacketSimulator::new(&topo, &hidden, cfg("gtcp:srpt", Transport::Tcp)).is_err());
    assert!(PacketSimulator::new(&topo, &hidden, cfg("gtcp:las", Transport::Tcp)).is_ok());
}


#[test]
fn with_the_handshake_and_delayed_acks_too() {
    let (topo, flows) = two_flows();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let mut c = cfg("ps", t);
        c.handshake = true;
        c.ack_every_segments = 2;
        c.buffer_bytes = Some(60_000);
        let p = run(&topo, &flows, c.clone());
        c.scheduler = Scheduler::parse("gtcp:srpt").unwrap();
        let g = run(&topo, &flows, c);
        check_exactly_once(&g, &flows);
        assert_eq!(g.stats(), p.stats(), "{t:?}");
        assert!(p.stats().syn_packets > 0 && p.stats().ack_packets < p.stats().data_packets);
        assert!(g.finish_s()[1] < p.finish_s()[1], "{t:?}");
    }
}
