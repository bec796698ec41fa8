//! RCP on the packet core (`packet/rate.rs`): an idle path at the link rate, fair shares
//! of a bottleneck with a small queue, the incast against `tcp`, delivery exactly once,
//! determinism and the refusals.
use fabric_core::{FlowSpec, PacketConfig, PacketSimulator, Scheduler, Topology, Transport};

const T_PKT: u64 = 1_200_000; // 1500 B at 10 Gbps, ps
const T_ACK: u64 = 32_000; // 40 B at 10 Gbps, ps

fn cfg(t: Transport) -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::parse("ps").unwrap());
    c.transport = Some(t);
    c
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

fn down(topo: &Topology, h: usize) -> usize {
    (0..topo.n_links()).find(|&l| topo.name(l) == format!("down{h}")).unwrap()
}

#[test]
fn one_rcp_flow_on_an_idle_path_runs_at_the_link_rate() {
    // The first packet is the rate request, alone for one unloaded RTT; its ACK brings R = C
    // (both routers idle), and the rest leave paced at C, one every T_PKT: the last of n
    // packets leaves at rtt0 + (n - 2) T_PKT and crosses two hops. R never exceeds C, so that
    // is a lower bound; the routers' rate dips below C only by the quantization of y (whole
    // packets per interval), so the FCT stays within 1% of it.
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    for (n, d_us) in [(2u64, 1.0), (100, 1.0), (1000, 5.0), (5000, 25.0)] {
        let mut c = cfg(Transport::Rcp);
        c.delay_per_hop_s = d_us * 1e-6;
        let s = {
            let mut s = PacketSimulator::new(&topo, &[FlowSpec::new(0.0, 0, 1, n as f64 * 1460.0)], c).unwrap();
            s.run().unwrap();
            s
        };
        let d = (d_us * 1e6_f64).round() as u64;
        let rtt0 = 2 * T_PKT + 2 * T_ACK + 4 * d;
        let ideal = rtt0 + (n - 2) * T_PKT + 2 * T_PKT + 2 * d;
        let fct = s.fct_ps(0).unwrap();
        assert!(fct >= ideal, "{n} packets, d = {d_us} us: {fct} < {ideal}");
        assert!((fct as f64) <= ideal as f64 * 1.01, "{n} packets, d = {d_us} us: {fct} vs {ideal}");
        assert_eq!(s.stats().drops_overflow, 0);
        assert_eq!(s.stats().retransmissions, 0);
        assert_eq!(s.delivered_bytes()[0], n * 1460);
    }
    // two packets by hand, 1 us links: rtt0 = 2 T + 2 T_ACK + 4 d = 6.464 us, then the
    // second packet's two hops: 2 T + 2 d = 4.4 us
    assert_eq!(2 * T_PKT + 2 * T_ACK + 4 * 1_000_000 + 2 * T_PKT + 2 * 1_000_000, 10_864_000);
}

#[test]
fn long_rcp_flows_converge_to_fair_shares_with_a_small_queue() {
    for n in [2usize, 5, 10] {
        let topo = Topology::big_switch(&vec![10.0; n + 1]).unwrap();
        let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 1e10)).collect();
        let mut c = cfg(Transport::Rcp);
        c.delay_per_hop_s = 5e-6;
        c.min_rto_s = Some(1e-3);
        let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
        s.step(0.01).unwrap();
        let b0: Vec<u64> = s.delivered_bytes().to_vec();
        s.step(0.02).unwrap();
        let tput: Vec<f64> = s.delivered_bytes().iter().zip(&b0).map(|(a, b)| (a - b) as f64 / 0.01).collect();
        let dl = down(&topo, 0);
        let (_, mean, ..) = s.port_stats()[dl];
        let (r, _, _) = s.rcp_routers()[dl];
        let j = jain(&tput);
        let total: f64 = tput.iter().sum();
        assert!(j > 0.99, "{n} flows: Jain's index {j}, {tput:?}");
        // the payload rate of the bottleneck (1460 / 1500 of 1.25 GB/s) at 85% or more
        assert!(total > 0.85 * 1.25e9 * 1460.0 / 1500.0, "{n} flows: {total}");
        // every flow paces near C / n, the router's rate
        for (i, x) in tput.iter().enumerate() {
            assert!((x / (total / n as f64) - 1.0).abs() < 0.02, "flow {i}: {x}");
        }
        assert!((r / (1.25e9 / n as f64) - 1.0).abs() < 0.15, "{n} flows: R = {r}");
        // a small queue: on average under 10 KB (7 packets) over the whole run
        assert!(mean < 10_000.0, "{n} flows: mean queue {mean}");
    }
}

fn incast(n: usize, t: Transport) -> (f64, u64, PacketSimulator) {
    let topo = Topology::big_switch(&vec![10.0; 33]).unwrap();
    let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 25_000.0)).collect();
    let mut c = cfg(t);
    c.buffer_bytes = Some(64_000);
    c.min_rto_s = Some(10e-3);
    c.delay_per_hop_s = 1e-6;
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    s.run().unwrap();
    let mean = (0..n).map(|i| s.fct_ps(i).unwrap() as f64 * 1e-12).sum::<f64>() / n as f64;
    for i in 0..n {
        assert_eq!(s.delivered_bytes()[i], 25_000, "{t:?}, {n} senders: flow {i}");
    }
    let st = s.stats().clone();
    // every data packet sent arrived or was dropped (none in flight at the end of the run: the
    // run ends at the last byte's arrival, and a paced sender has nothing left then)
    assert!(st.data_arrived + st.data_dropped <= st.data_packets);
    (mean, st.timeouts, s)
}

#[test]
fn rcp_incast_does_not_collapse_where_tcp_does() {
    // The incast of docs/packet.md: N senders x 25 KB into one host through a 64 KB drop-tail
    // port, min RTO 10 ms, 1 us links. TCP's mean FCT jumps past min_rto from 16 senders on;
    // RCP's first packets are rate requests (one per sender), and the routers' rate falls as
    // soon as the first interval sees the burst, so it loses less, its mean stays near one
    // min RTO and under half of TCP's from 24 senders on. (It is not lossless: every sender gets R = C from the idle port
    // with its first ACK, and the few that get it first overflow the port; Munir's Fig. 4.7
    // shows RCP's loss rate rising with the number of servers too.)
    let mut rows = Vec::new();
    for n in [1usize, 2, 4, 8, 16, 24, 32] {
        let (tcp, tcp_to, _) = incast(n, Transport::Tcp);
        let (rcp, rcp_to, s) = incast(n, Transport::Rcp);
        println!("{n}: tcp {:.3} ms ({tcp_to} timeouts), rcp {:.3} ms ({rcp_to} timeouts, {} drops)", tcp * 1e3, rcp * 1e3, s.stats().drops_overflow);
        rows.push((n, tcp, rcp));
    }
    for &(n, tcp, rcp) in &rows {
        if n >= 24 {
            assert!(rcp < tcp / 2.0, "{n} senders: rcp {rcp} vs tcp {tcp}");
        }
        // at most about one min RTO: no repeated, backed-off timeouts as TCP's from 16 senders on
        assert!(rcp < 15e-3, "{n} senders: rcp {rcp}");
    }
}

#[test]
fn rcp_is_deterministic_and_refused_with_other_schedulers() {
    let (a, _, sa) = incast(16, Transport::Rcp);
    let (b, _, sb) = incast(16, Transport::Rcp);
    assert_eq!(a.to_bits(), b.to_bits());
    assert_eq!(sa.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), sb.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    assert_eq!(sa.stats(), sb.stats());
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 1, 1e4)];
    for sched in ["srpt", "pias", "fifo"] {
        let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
        c.transport = Some(Transport::Rcp);
        let e = PacketSimulator::new(&topo, &flows, c).unwrap_err().to_string();
        assert!(e.contains("ps with rcp"), "{sched}: {e}");
    }
    assert_eq!(Transport::parse("RCP").unwrap(), Transport::Rcp);
    assert_eq!(Transport::Rcp.name(), "rcp");
}

#[test]
fn rcp_with_the_handshake_learns_its_rate_from_the_syn_ack() {
    // With the handshake the SYN is the rate request: data starts at the SYN-ACK paced at C,
    // so the flow takes the handshake's RTT (a 40 B SYN and SYN-ACK) plus n packets paced at
    // C and the last one's two hops.
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let n = 100u64;
    let mut c = cfg(Transport::Rcp);
    c.delay_per_hop_s = 1e-6;
    c.handshake = true;
    let mut s = PacketSimulator::new(&topo, &[FlowSpec::new(0.0, 0, 1, n as f64 * 1460.0)], c).unwrap();
    s.run().unwrap();
    let d = 1_000_000u64;
    let hs = 4 * T_ACK + 4 * d;
    let ideal = hs + (n - 1) * T_PKT + 2 * T_PKT + 2 * d;
    let fct = s.fct_ps(0).unwrap();
    assert!(fct >= ideal && fct as f64 <= ideal as f64 * 1.01, "{fct} vs {ideal}");
    assert_eq!(s.stats().syn_packets, 2);
}

// ----- SDC (Munir, chapter 3) -----

fn incast_sdc(n: usize, link_gbps: f64, d_s: f64, buf: u64, sched: &str, t: Transport) -> (f64, u64, u64) {
    let topo = Topology::big_switch(&vec![link_gbps; n.max(32) + 1]).unwrap();
    let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 25_000.0)).collect();
    let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
    c.transport = Some(t);
    c.buffer_bytes = Some(buf);
    c.min_rto_s = Some(10e-3);
    c.delay_per_hop_s = d_s;
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    s.run().unwrap();
    for i in 0..n {
        assert_eq!(s.delivered_bytes()[i], 25_000, "{t:?}, {n} senders: flow {i}");
    }
    let mean = (0..n).map(|i| s.fct_ps(i).unwrap() as f64 * 1e-12).sum::<f64>() / n as f64;
    (mean, s.stats().timeouts, s.stats().data_dropped)
}

#[test]
fn sdc_incast_is_lossless_up_to_16_senders_and_does_not_collapse() {
    // docs/packet.md's incast (64 KB, 1 us links, 10 Gbps) and the thesis' (100 packets of
    // 1,500 B, 300 us links, 1 Gbps), RTOmin 10 ms: SDC starts from 2 packets and the routers'
    // load factor stops its increase before the port overflows: no loss up to 16 senders, and
    // at 32 a mean well under TCP's
    for (g, d, buf) in [(10.0, 1e-6, 64_000u64), (1.0, 300e-6, 150_000)] {
        for n in [1usize, 4, 8, 16] {
            let (_, to, drops) = incast_sdc(n, g, d, buf, "sdc", Transport::Sdc);
            assert_eq!((to, drops), (0, 0), "{n} senders, {g} Gbps");
        }
        let (sdc, ..) = incast_sdc(32, g, d, buf, "sdc", Transport::Sdc);
        let (tcp, ..) = incast_sdc(32, g, d, buf, "ps", Transport::Tcp);
        assert!(sdc < tcp * 0.7, "32 senders, {g} Gbps: sdc {sdc} vs tcp {tcp}");
    }
}

/// The responses' mean FCT (s) in Munir's short/long mix in small: 1 Gbps, 300 us links, two
/// long background flows into host 0 and 60 responses of 2 to 50 KB (sizes spread evenly) into
/// it at 1000/s from host 3; 150 KB buffers, min RTO 10 ms.
fn mix_afct(sched: &str, t: Transport) -> f64 {
    let topo = Topology::big_switch(&[1.0; 4]).unwrap();
    let mut flows = vec![FlowSpec::new(0.0, 1, 0, 1e8), FlowSpec::new(0.0, 2, 0, 1e8)];
    for i in 0..60 {
        flows.push(FlowSpec::new(0.01 + i as f64 * 1e-3, 3, 0, 2_000.0 + (i * 37 % 60) as f64 * 800.0));
    }
    let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
    c.transport = Some(t);
    c.delay_per_hop_s = 300e-6;
    c.buffer_bytes = Some(150_000);
    c.min_rto_s = Some(10e-3);
    let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
    s.step(0.2).unwrap();
    (2..flows.len()).map(|i| s.fct_ps(i).expect("response finished") as f64 * 1e-12).sum::<f64>() / 60.0
}

#[test]
fn sdc_beats_rcp_on_a_short_long_mix() {
    // Munir 3.5.2 / 4.3.2 in small: 1 Gbps, 300 us links, two long background flows into host 0
    // and 60 responses of 2 to 50 KB (sizes spread evenly) into it at 1000/s from host 3: SDC
    // gives the responses (class A) a larger share than the long flows (class C), RCP the same
    // rate: the responses' mean FCT is lower under SDC (Table 4.2's direction: 2.6 < 2.67 ms)
    let (sdc, rcp, tcp) = (mix_afct("sdc", Transport::Sdc), mix_afct("ps", Transport::Rcp), mix_afct("ps", Transport::Tcp));
    // measured: sdc 5.55 ms (5.00 before SDC's once-per-overload backoff), rcp 16.26 ms,
    // tcp 4.78 ms (TCP's long flows are still far from filling the 150 KB buffers within these 70 ms: not Table 3.4's setting of long-lived
    // background flows at a full buffer; the munir.py mix runs that)
    println!("mix: sdc {:.3} ms, rcp {:.3} ms, tcp {:.3} ms", sdc * 1e3, rcp * 1e3, tcp * 1e3);
    assert!(sdc < rcp * 0.5, "sdc {sdc}, rcp {rcp}");
}

#[test]
fn sdc_parameters_follow_the_gains_of_eq_3_18() {
    let p = fabric_core::packet::rate::sdc_params();
    let gain = |a: (f64, f64, f64), b: (f64, f64, f64)| a.1 * (1.0 - b.2) * (1.0 + a.2) / (b.1 * (1.0 - a.2) * (1.0 + b.2));
    assert!((gain(p[0], p[2]) - 10.0).abs() < 1e-12 && (gain(p[1], p[2]) - 2.0).abs() < 1e-12);
    assert!(p[0].2 >= p[1].2 && p[1].2 >= p[2].2 && p[0].1 >= p[2].1, "{p:?}");
    let e = PacketSimulator::new(&Topology::big_switch(&[10.0; 2]).unwrap(), &[FlowSpec::new(0.0, 0, 1, 1e4)], cfg(Transport::Sdc))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sdc with sdc"), "{e}");
}

// ----- RACS (Munir, chapter 4) -----

#[test]
fn racs_incast_is_lossless_and_the_weights_return_to_zero() {
    // RACS admits a flow (its SYN adds its weight to W at every port) before it gives it a rate
    // (its next rate request gets w C / W): the burst is shared before it is sent. No loss on
    // either incast, at any number of senders, and a mean FCT below TCP's from 16 senders on;
    // every flow's last packet carries w_c = 0, so every port's W is back to 0 at the end.
    for (g, d, buf, ns) in [(10.0, 1e-6, 64_000u64, vec![1usize, 4, 16, 32]), (1.0, 300e-6, 150_000, vec![1, 16, 64])] {
        for n in ns {
            let topo = Topology::big_switch(&vec![g; n.max(32) + 1]).unwrap();
            let flows: Vec<FlowSpec> = (0..n).map(|i| FlowSpec::new(0.0, i + 1, 0, 25_000.0)).collect();
            let mut c = PacketConfig::new(Scheduler::parse("racs").unwrap());
            c.buffer_bytes = Some(buf);
            c.min_rto_s = Some(10e-3);
            c.delay_per_hop_s = d;
            let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
            assert_eq!(s.transport(), Transport::Racs, "the racs scheduler's default transport");
            s.run().unwrap();
            assert_eq!((s.stats().drops_overflow, s.stats().timeouts), (0, 0), "{n} senders, {g} Gbps");
            for i in 0..n {
                assert_eq!(s.delivered_bytes()[i], 25_000);
            }
            // the last packets' w_c = 0 may still be in flight at the last byte's arrival: run none
            // further, but every port the finished flows' last packets crossed is back to 0
            assert!(s.racs_weight_sums().iter().all(|&w| w == 0), "{n} senders: {:?}", s.racs_weight_sums());
            if n >= 16 {
                let mean = (0..n).map(|i| s.fct_ps(i).unwrap() as f64 * 1e-12).sum::<f64>() / n as f64;
                let (tcp, ..) = incast_sdc(n, g, d, buf, "ps", Transport::Tcp);
                assert!(mean < tcp, "{n} senders, {g} Gbps: racs {mean} vs tcp {tcp}");
            }
        }
    }
}

#[test]
fn racs_below_sdc_below_rcp_on_a_short_long_mix() {
    // the mix of `mix_afct`: Table 4.2's order, RACS < SDC < RCP
    let (racs, sdc, rcp) = (mix_afct("racs", Transport::Racs), mix_afct("sdc", Transport::Sdc), mix_afct("ps", Transport::Rcp));
    println!("mix: racs {:.3} ms, sdc {:.3} ms, rcp {:.3} ms", racs * 1e3, sdc * 1e3, rcp * 1e3);
    assert!(racs < sdc && sdc < rcp, "racs {racs}, sdc {sdc}, rcp {rcp}");
}

#[test]
fn sdc_and_racs_are_deterministic() {
    let topo = Topology::big_switch(&[10.0; 9]).unwrap();
    let mut flows = Vec::new();
    for i in 0..40usize {
        flows.push(FlowSpec::new(i as f64 * 7e-6, 1 + i % 7, (i * 3) % 9, 1_000.0 + (i * 7919 % 200) as f64 * 1_000.0));
    }
    flows.retain(|f| f.src != f.dst);
    for (sched, t) in [("sdc", Transport::Sdc), ("racs", Transport::Racs)] {
        let go = || {
            let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
            c.transport = Some(t);
            c.delay_per_hop_s = 2e-6;
            c.buffer_bytes = Some(50_000);
            c.min_rto_s = Some(1e-3);
            let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
            s.run().unwrap();
            s
        };
        let (a, b) = (go(), go());
        assert_eq!(a.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.fct_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        assert_eq!(a.stats(), b.stats());
        for (i, f) in flows.iter().enumerate() {
            assert_eq!(a.delivered_bytes()[i], f.size_bytes as u64, "{sched}: flow {i}");
        }
    }
}
