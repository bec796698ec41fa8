//! Hand-checkable cases of the packet-level model (issue 19): exact timing on an idle path,
//! TCP fairness, DCTCP's queue near K, delivery exactly once, drop accounting, the incast
//! curve, determinism, and the refusals.
use fabric_core::{FlowSpec, Outcome, PacketConfig, PacketSimulator, Scheduler, Topology, Transport};
mod common;
use common::packet::run;

const T_PKT: u64 = 1_200_000; // 1500 B at 10 Gbps, ps
const T_ACK: u64 = 32_000; // 40 B at 10 Gbps, ps

fn cfg(sched: &str, t: Transport) -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
    c.transport = Some(t);
    c
}

/// An independent model of one flow in slow start on an idle 2-hop path (no losses): the
/// first `init` packets leave at 0, each ACK releases two more (window +1, slides by 1),
/// both hops are FIFO servers of T_PKT, the ACKs cross two servers of T_ACK; `d` per link.
fn slow_start_finish(n: usize, init: usize, d: u64) -> u64 {
    let mut release = vec![0u64; n];
    let (mut nic, mut sw, mut ack_nic, mut ack_sw) = (0u64, 0u64, 0u64, 0u64);
    let mut recv = vec![0u64; n];
    // process packets in index order; the ACK of packet k (known once k is received)
    // releases packets init + 2k and init + 2k + 1
    for j in 0..n {
        nic = nic.max(release[j]) + T_PKT;
        sw = sw.max(nic + d) + T_PKT;
        recv[j] = sw + d;
        ack_nic = ack_nic.max(recv[j]) + T_ACK;
        ack_sw = ack_sw.max(ack_nic + d) + T_ACK;
        let ack_at = ack_sw + d;
        for r in [init + 2 * j, init + 2 * j + 1] {
            if r < n {
                release[r] = ack_at;
            }
        }
    }
    recv[n - 1]
}

#[test]
fn one_flow_on_an_idle_path_finishes_as_slow_start_and_serialization_say() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    for (n, d_us) in [(1usize, 0.2), (10, 0.2), (20, 0.2), (200, 10.0), (1000, 25.0)] {
        for t in [Transport::Tcp, Transport::Dctcp] {
            let size = n as f64 * 1460.0;
            let mut c = cfg("ps", t);
            c.delay_per_hop_s = d_us * 1e-6;
            c.buffer_bytes = Some(10_000_000); // holds the whole window: no loss
            let s = run(&topo, &[FlowSpec::new(0.0, 0, 1, size)], c);
            let d = (d_us * 1e6_f64).round() as u64;
            let want = slow_start_finish(n, 10, d);
            assert_eq!(s.fct_ps(0), Some(want), "{n} packets, d = {d_us} us, {t:?}");
            assert_eq!(s.stats().drops_overflow, 0);
            assert_eq!(s.stats().retransmissions, 0);
        }
    }
    // by hand: 10 packets at line rate, two store-and-forward hops: 11 T + 2 d = 13.6 us
    assert_eq!(slow_start_finish(10, 10, 200_000), 13_600_000);
    // 200 packets with 10 us links (RTT 42.5 us, about 35 packets): the first windows of
    // slow start (10, 20, ...) leave the link idle for 48.9 us in all, beyond 201 T + 2 d
    assert_eq!(slow_start_finish(200, 10, 10_000_000), 201 * T_PKT + 20_000_000 + 48_928_000);
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

#[test]
fn long_tcp_flows_share_a_bottleneck_fairly() {
    for n in [2usize, 10] {
        let topo = Topology::big_switch(&vec![10.0; n + 1]).unwrap();
        let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 1e10)).collect();
        let mut c = cfg("ps", Transport::Tcp);
        c.delay_per_hop_s = 5e-6;
        c.buffer_bytes = Some(150_000);
        c.min_rto_s = Some(1e-3);
        let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
        // warm up, then 100 RTTs (base RTT 21.3 us plus up to 120 us of queue)
        s.step(0.02).unwrap();
        let b0: Vec<u64> = s.delivered_bytes().to_vec();
        s.step(0.02 + 100.0 * 142e-6).unwrap();
        let tput: Vec<f64> = s.delivered_bytes().iter().zip(&b0).map(|(a, b)| (a - b) as f64).collect();
        let j = jain(&tput);
        assert!(j > 0.95, "{n} flows: Jain's index {j}, {tput:?}");
        // the bottleneck is busy: at least 90% of the line rate over the window
        let total: f64 = tput.iter().sum();
        assert!(total > 0.9 * 1.25e9 * 100.0 * 142e-6 * 1460.0 / 1500.0, "{total}");
        assert!(s.stats().drops_overflow > 0, "drop-tail TCP fills the buffer");
    }
}

#[test]
fn dctcp_holds_the_queue_near_k_without_drops() {
    for n in [2usize, 10] {
        let topo = Topology::big_switch(&vec![10.0; n + 1]).unwrap();
        let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 1e10)).collect();
        let mut c = cfg("ps", Transport::Dctcp);
        c.delay_per_hop_s = 5e-6;
        c.buffer_bytes = Some(4_000_000);
        c.queue_sample_s = Some(1e-6);
        c.sample_ports = Some(vec![(n + 1) as u32]); // down0, the bottleneck
        let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
        s.step(0.03).unwrap();
        let (t, _, v) = s.queue_samples();
        let k = 97_500.0;
        let late: Vec<f64> = t.iter().zip(v).filter(|(t, _)| **t > 0.01).map(|(_, v)| *v as f64).collect();
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        let max = late.iter().cloned().fold(0.0, f64::max);
        assert!(mean > 0.5 * k && mean < 1.5 * k, "{n} flows: mean queue {mean} B against K = {k}");
        assert!(max < 2.5 * k, "{n} flows: peak {max}");
        assert_eq!(s.stats().drops_overflow, 0);
        assert_eq!(s.stats().timeouts, 0);
        assert!(s.stats().ecn_marks > 0);
    }
}

/// A small mixed trace: many-to-one bursts and random pairs.
fn trace(hosts: usize, n: usize, seed: u64) -> Vec<FlowSpec> {
    let mut r = fabric_core::rng::SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let src = r.below(hosts as u64) as usize;
            let mut dst = if i % 3 == 0 { 0 } else { r.below(hosts as u64) as usize };
            if dst == src {
                dst = (src + 1) % hosts;
            }
            let size = [1_000.0, 20_000.0, 150_000.0, 3_000_000.0][r.below(4) as usize] + r.below(1460) as f64;
            FlowSpec::new(i as f64 * 2e-6, src, dst, size)
        })
        .collect()
}

#[test]
fn every_byte_delivered_once_and_every_drop_counted() {
    let flows = trace(16, 300, 7);
    let big = Topology::big_switch(&[10.0; 16]).unwrap();
    let ls = Topology::leaf_spine(4, 4, 2, &[10.0; 16], 40.0, 3).unwrap();
    for topo in [&big, &ls] {
        for (sched, t, buf) in [
            ("ps", Transport::Tcp, 30_000u64),
            ("ps", Transport::Dctcp, 60_000),
            ("srpt", Transport::PFabric, 36_864),
            ("las", Transport::PFabric, 36_864),
            ("fifo", Transport::PFabric, 20_000),
            ("edf", Transport::PFabric, 36_864),
            ("asrpt", Transport::PFabric, 36_864),
            ("pias", Transport::Dctcp, 60_000),
            ("pias", Transport::Tcp, 30_000),
        ] {
            let mut c = cfg(sched, t);
            c.buffer_bytes = Some(buf);
            c.delay_per_hop_s = 1e-6;
            c.min_rto_s = Some(if t == Transport::PFabric { 40e-6 } else { 1e-3 });
            if sched == "pias" {
                c.pias_thresholds_bytes = vec![10_000.0, 100_000.0, 1_000_000.0];
            }
            let s = run(topo, &flows, c);
            let st = s.stats().clone();
            for (i, f) in flows.iter().enumerate() {
                assert_eq!(s.delivered_bytes()[i], f.size_bytes.ceil() as u64, "{sched}/{t:?} flow {i}");
                assert!(s.fct_ps(i).is_some());
            }
            // conservation: a data packet sent arrived, was dropped (counted), or is still out
            assert_eq!(st.data_packets, st.data_arrived + st.data_dropped + s.data_in_network(), "{sched}/{t:?}");
            let ps = s.port_stats();
            assert_eq!(ps.iter().map(|p| p.2).sum::<u64>(), st.drops_overflow);
            assert_eq!(ps.iter().map(|p| p.3).sum::<u64>(), st.drops_evicted);
            assert!(st.drops_overflow + st.drops_evicted > 0, "{sched}/{t:?}: the buffers were meant to overflow");
            if t == Transport::PFabric {
                assert!(st.drops_evicted > 0, "{sched}: pFabric evicts");
            }
        }
    }
}

#[test]
fn incast_jumps_by_min_rto_once_the_buffer_overflows() {
    let mean_fct = |n: usize, buf: u64| {
        let topo = Topology::big_switch(&vec![10.0; n + 1]).unwrap();
        let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 25_000.0)).collect();
        let mut c = cfg("ps", Transport::Tcp);
        c.buffer_bytes = Some(buf);
        c.min_rto_s = Some(10e-3);
        c.delay_per_hop_s = 1e-6;
        let s = run(&topo, &flows, c);
        (0..n).map(|i| s.fct_ps(i).unwrap() as f64 * 1e-12).sum::<f64>() / n as f64
    };
    let small: Vec<f64> = [1, 2, 4, 8, 16, 32].iter().map(|&n| mean_fct(n, 64_000)).collect();
    let large: Vec<f64> = [1, 2, 4, 8, 16, 32].iter().map(|&n| mean_fct(n, 1_000_000)).collect();
    // 1 and 2 senders fit (up to 2 x 18 packets of 1,500 B in 64 KB): no timeouts
    assert!(small[0] < 1e-3 && small[1] < 1e-3, "{small:?}");
    // 16 and 32 senders: the first windows (10 packets each) overflow 64 KB, and the mean
    // jumps by about min_rto (10 ms)
    assert!(small[4] > 5e-3 && small[5] > 8e-3, "{small:?}");
    // with 1 MB nothing is lost: the mean stays within the transfer time (32 x 25 KB = 640 us)
    assert!(large.iter().all(|&m| m < 1e-3), "{large:?}");
}

#[test]
fn same_input_same_output_bit_for_bit() {
    let flows = trace(16, 200, 11);
    let topo = Topology::leaf_spine(4, 4, 2, &[10.0; 16], 40.0, 3).unwrap();
    for (sched, t) in [("ps", Transport::Dctcp), ("srpt", Transport::PFabric)] {
        let mut c = cfg(sched, t);
        c.delay_per_hop_s = 1e-6;
        let a = run(&topo, &flows, c.clone());
        let b = run(&topo, &flows, c);
        let bits = |s: &PacketSimulator| s.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
        assert_eq!(a.stats(), b.stats());
    }
}

#[test]
fn srpt_over_pfabric_lets_a_short_flow_pass_a_long_one() {
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let flows = [FlowSpec::new(0.0, 1, 0, 10e6), FlowSpec::new(1e-3, 2, 0, 14_600.0)];
    let mut c = cfg("srpt", Transport::PFabric);
    c.delay_per_hop_s = 0.2e-6;
    let s = run(&topo, &flows, c.clone());
    // 10 packets behind at most a full pFabric queue of the long flow's packets
    assert!(s.fct_ps(1).unwrap() < 60_000_000, "{:?}", s.fct_ps(1));
    c.scheduler = Scheduler::Fifo;
    let f = run(&topo, &flows, c);
    assert!(f.fct_ps(1).unwrap() > s.fct_ps(1).unwrap());
}

#[test]
fn priority_queues_under_dctcp_serve_by_tag_and_keep_the_queue_near_k() {
    // srpt over dctcp: pFabric's queues marking ECN as DCTCP's do (aSCC's "SRPT and LAS with
    // DCTCP end host control logic"): the short flow passes the long one at the shared
    // downlink, and the long flows' DCTCP keeps that queue near K without a drop
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let flows = [FlowSpec::new(0.0, 1, 0, 20e6), FlowSpec::new(0.0, 2, 0, 20e6), FlowSpec::new(5e-3, 3, 0, 146_000.0)];
    let mut c = cfg("srpt", Transport::Dctcp);
    c.delay_per_hop_s = 5e-6;
    c.buffer_bytes = Some(4_000_000);
    c.queue_sample_s = Some(1e-6);
    c.sample_ports = Some(vec![4]); // down0
    let s = run(&topo, &flows, c.clone());
    assert_eq!((s.stats().drops_overflow, s.stats().drops_evicted, s.stats().timeouts), (0, 0, 0));
    assert!(s.stats().ecn_marks > 0);
    let (t, _, v) = s.queue_samples();
    let late: Vec<f64> = t.iter().zip(v).filter(|(t, _)| **t > 2e-3 && **t < 5e-3).map(|(_, v)| *v as f64).collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean > 0.3 * 97_500.0 && mean < 2.0 * 97_500.0, "mean queue {mean} B against K = 97,500");
    // 100 packets: about 120 us at 10 Gb/s behind the queue the long flows keep near K
    assert!(s.fct_ps(2).unwrap() < 400_000_000, "{:?}", s.fct_ps(2));
    c.scheduler = Scheduler::Fifo;
    let f = run(&topo, &flows, c.clone());
    assert!(f.fct_ps(2).unwrap() > s.fct_ps(2).unwrap());
    // the same tags over pFabric's own rate control serve the short flow first too
    c.scheduler = Scheduler::Srpt;
    c.transport = Some(Transport::PFabric);
    c.buffer_bytes = None;
    assert!(run(&topo, &flows, c).fct_ps(2).unwrap() < 400_000_000);
}

#[test]
fn pias_thresholds_change_during_a_run() {
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let flows = trace(4, 50, 3);
    let mut c = cfg("pias", Transport::Dctcp);
    c.pias_thresholds_bytes = vec![10_000.0, 100_000.0];
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    s.step(20e-6).unwrap();
    s.set_pias_thresholds(vec![5_000.0, 50_000.0]).unwrap();
    assert!(s.set_pias_thresholds(vec![5_000.0]).unwrap_err().to_string().contains("3 queues"));
    s.run().unwrap();
    assert!(s.done());
}

#[test]
fn refusals_name_what_is_wrong() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let f = [FlowSpec::new(0.0, 0, 1, 1000.0)];
    let e = PacketSimulator::new(&topo, &f, cfg("srpt", Transport::Tcp)).err().unwrap().to_string();
    assert!(e.contains("does not run scheduler 'srpt' with transport 'tcp'") && e.contains("supported: ps with tcp"), "{e}");
    let e = PacketSimulator::new(&topo, &f, PacketConfig::new(Scheduler::Wps)).err().unwrap().to_string();
    assert!(e.contains("'wps'"), "{e}");
    let mut c = cfg("ps", Transport::Tcp);
    c.buffer_bytes = Some(1000);
    assert!(PacketSimulator::new(&topo, &f, c).err().unwrap().to_string().contains("buffer_bytes"));
    let mut g = f.clone();
    g[0].weight = 2.0;
    assert!(PacketSimulator::new(&topo, &g, cfg("ps", Transport::Tcp)).err().unwrap().to_string().contains("'weight'"));
    let mut g = f.clone();
    g[0].data_span_s = f64::NAN;
    assert!(PacketSimulator::new(&topo, &g, cfg("ps", Transport::Tcp)).err().unwrap().to_string().contains("data_span_s"));
    let mut g = f.clone();
    g[0].size_known = false;
    assert!(PacketSimulator::new(&topo, &g, cfg("srpt", Transport::PFabric)).err().unwrap().to_string().contains("size_known"));
    let mut c = cfg("ps", Transport::Tcp);
    c.max_events = Some(3);
    let mut s = PacketSimulator::new(&topo, &[FlowSpec::new(0.0, 0, 1, 1e6)], c).unwrap();
    assert!(s.run().unwrap_err().to_string().contains("event budget"));
    assert_eq!(Transport::default_for(&Scheduler::Ps).unwrap(), Transport::Dctcp);
    assert_eq!(Transport::default_for(&Scheduler::Srpt).unwrap(), Transport::PFabric);
}

#[test]
fn terminate_missed_stops_a_flow_at_its_deadline() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let mut f = FlowSpec::new(0.0, 0, 1, 10e6);
    f.deadline_s = 1e-3; // 10 MB needs 8 ms
    let mut c = cfg("edf", Transport::PFabric);
    c.terminate_missed = true;
    let s = run(&topo, &[f, FlowSpec::new(0.0, 0, 1, 1000.0)], c);
    assert!(s.terminated()[0] && !s.terminated()[1]);
    assert!(s.fct_ps(0).is_none());
}

/// `pause_on_flow_change`: `advance` pauses once per arrival (before the flow's sender
/// starts: the flow is in `arrived()` and has sent nothing) and once per flow end but the
/// last (that one ends the run: `Done`); the paused run is the unpaused one bit for bit,
/// and `run()` with the option on runs through the pauses.
#[test]
fn pause_on_flow_change_pauses_at_arrivals_and_ends_only() {
    let flows = trace(16, 120, 5);
    let topo = Topology::leaf_spine(4, 4, 2, &[10.0; 16], 40.0, 3).unwrap();
    for sched in ["fifo", "external"] {
        let mut c = cfg(sched, Transport::PFabric);
        c.delay_per_hop_s = 1e-6;
        let plain = run(&topo, &flows, c.clone());
        c.pause_on_flow_change = true;
        let through = run(&topo, &flows, c.clone());
        let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
        let (mut arrivals, mut ends, mut pauses) = (0, 0, 0);
        loop {
            let (arrived0, ended0) = (s.arrived().len(), (0..flows.len()).filter(|&i| s.ended(i)).count());
            let out = s.advance(f64::INFINITY).unwrap();
            let (arrived1, ended1) = (s.arrived().len(), (0..flows.len()).filter(|&i| s.ended(i)).count());
            match out {
                Outcome::FlowsChanged => {
                    pauses += 1;
                    // exactly one change: an arrival (not started yet) or one or more ends
                    if arrived1 > arrived0 {
                        assert_eq!((arrived1 - arrived0, ended1), (1, ended0));
                        let f = *s.arrived().last().unwrap() as usize;
                        assert_eq!(s.now_ps(), (flows[f].arrival_s * 1e12).round() as u64);
                        assert_eq!(s.sender(f).snd_nxt, 0, "flow {f} sent before the pause");
                        arrivals += 1;
                    } else {
                        assert!(ended1 > ended0, "a pause without a change at {} s", s.now_s());
                        ends += ended1 - ended0;
                    }
                }
                Outcome::Done => {
                    ends += ended1 - ended0;
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(arrivals, flows.len());
        assert_eq!(ends, flows.len());
        assert!(pauses >= 2 * flows.len() - 1 - 5 && pauses <= 2 * flows.len() - 1, "{pauses}");
        let bits = |s: &PacketSimulator| s.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&s), bits(&plain), "{sched}");
        assert_eq!(bits(&through), bits(&plain), "{sched}");
        assert_eq!(s.stats(), plain.stats());
    }
}

/// `run_until_ended` (the thresholds env's control interval): each call returns once at
/// least `n` more flows ended (or at `until`, or the end), every flow is reported exactly
/// once, the flows it reports are exactly those that ended since the last call, and with
/// thresholds re-set between calls the run is the unpaused one bit for bit.
#[test]
fn run_until_ended_reports_every_flow_once_and_changes_nothing() {
    let flows = trace(8, 150, 11);
    let topo = Topology::big_switch(&[10.0; 8]).unwrap();
    let mut c = cfg("pias", Transport::Dctcp);
    c.pias_thresholds_bytes = vec![10_000.0, 100_000.0, 1_000_000.0];
    let plain = run(&topo, &flows, c.clone());
    let mut s = PacketSimulator::new(&topo, &flows, c.clone()).unwrap();
    assert!(s.run_until_ended(5, f64::INFINITY, &mut Vec::new()).unwrap_err().to_string().contains("pause_on_flow_change"));
    c.pause_on_flow_change = true;
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    let mut seen = vec![false; flows.len()];
    let mut calls = 0;
    // one bounded by time first: it stops at the time with fewer than n ended
    let out = s.run_until_ended(1_000, 30e-6, &mut Vec::new()).unwrap();
    assert!(matches!(out, Outcome::TimeReached));
    assert_eq!(s.now_ps(), 30_000_000);
    for i in 0..flows.len() {
        seen[i] = s.ended(i);
    }
    loop {
        let before: Vec<bool> = (0..flows.len()).map(|i| s.ended(i)).collect();
        s.set_pias_thresholds(vec![10_000.0, 100_000.0, 1_000_000.0]).unwrap();
        let mut ended = Vec::new();
        let out = s.run_until_ended(7, f64::INFINITY, &mut ended).unwrap();
        calls += 1;
        let newly: Vec<usize> = (0..flows.len()).filter(|&i| s.ended(i) && !before[i]).collect();
        let mut got: Vec<usize> = ended.iter().map(|&x| x as usize).collect();
        got.sort_unstable();
        assert_eq!(got, newly);
        for &f in &got {
            assert!(!seen[f], "flow {f} reported twice");
            seen[f] = true;
        }
        match out {
            Outcome::FlowsChanged => assert!(got.len() >= 7),
            Outcome::Done => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(seen.iter().all(|&x| x) && calls >= 150 / 7 / 2);
    let bits = |s: &PacketSimulator| s.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&s), bits(&plain));
    assert_eq!(s.stats(), plain.stats());
}
