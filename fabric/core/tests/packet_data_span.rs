//! Data arriving over time on the packet model (`data_span_s`, aSCC's alpha): a flow's
//! bytes reach its sender uniformly over `[arrival, arrival + span]`, and the sender sends
//! a segment only once all of its data is there.
use fabric_core::{FlowSpec, PacketConfig, PacketSimulator, Scheduler, Topology, Transport};
mod common;
use common::packet::run;

const MSS: u64 = 1460;

fn spanned(arrival_s: f64, src: usize, dst: usize, size: f64, span_s: f64) -> FlowSpec {
    let mut f = FlowSpec::new(arrival_s, src, dst, size);
    f.data_span_s = span_s;
    f
}

fn cfg(sched: &str, t: Transport) -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::parse(sched).unwrap());
    c.transport = Some(t);
    c.delay_per_hop_s = 1e-6;
    c
}

#[test]
fn a_sender_never_sends_a_segment_before_its_data_has_arrived() {
    // 1 MB arriving over 3.2 ms (2.5 Gb/s) on a 10 Gb/s path: the data, not the window,
    // sets the pace; checked every microsecond for every transport
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let (size, span) = (1e6, 3.2e-3);
    let flows = vec![spanned(0.0, 0, 1, size, span)];
    for (sched, t) in [("ps", Transport::Tcp), ("ps", Transport::Dctcp), ("srpt", Transport::PFabric), ("ps", Transport::Rcp)] {
        let mut s = PacketSimulator::new(&topo, &flows, cfg(sched, t)).unwrap();
        let mut now = 0.0;
        let mut lagged = false;
        while !s.done() {
            now += 1e-6;
            s.step(now).unwrap();
            // (the byte's slack: this clock's rounding against the simulator's)
            let arrived = (size * (s.now_s() / span).min(1.0)) as u64 + 1;
            let sent = (s.sender(0).high as u64 * MSS).min(size as u64);
            assert!(sent <= arrived, "{t:?}: {sent} bytes in segments at {now} s, {arrived} arrived");
            lagged |= now > 1e-4 && now < span && arrived - sent > 20 * MSS;
        }
        assert!(!lagged, "{t:?}: the sender fell behind its data (the data should set the pace)");
        let fct = s.finish_s()[0];
        // the last segment leaves when the last byte arrives: then one segment's
        // transmission on two links, the propagation and the last ACK's way are left
        assert!(fct >= span && fct < span + 20e-6, "{t:?}: fct {fct} for a span of {span}");
        assert_eq!(s.delivered_bytes()[0], size as u64);
    }
}

#[test]
fn a_short_span_costs_little_and_nothing_is_faster_than_without_it() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    for t in [Transport::Tcp, Transport::Dctcp] {
        let base = run(&topo, &[spanned(0.0, 0, 1, 2e6, 0.0)], cfg("ps", t)).finish_s()[0];
        // the data arrives at 40 Gb/s, four times the link's rate
        let s = run(&topo, &[spanned(0.0, 0, 1, 2e6, 0.4e-3)], cfg("ps", t)).finish_s()[0];
        assert!(s >= base && s < base * 1.05, "{t:?}: {s} against {base} without a span");
    }
}

#[test]
fn asrpt_serves_a_flow_whose_data_is_still_arriving_after_complete_ones() {
    // aSCC's GA transform on pFabric's queues: flow 1 (100 kB, arriving over 0.5 ms) is
    // shorter than flow 0 (2 MB, all there), so srpt serves it first; asrpt serves it in
    // arrival order, after flow 0, until its data is complete
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let flows = vec![spanned(0.0, 0, 2, 2e6, 0.0), spanned(10e-6, 1, 2, 1e5, 0.5e-3)];
    let srpt = run(&topo, &flows, cfg("srpt", Transport::PFabric));
    let asrpt = run(&topo, &flows, cfg("asrpt", Transport::PFabric));
    let (fs, fa) = (srpt.finish_s(), asrpt.finish_s());
    // srpt: flow 1's segments go out as their data arrives (it ends within 20 us of it)
    assert!(fs[1] < 10e-6 + 0.5e-3 + 20e-6, "srpt: flow 1 ends at {}", fs[1]);
    // asrpt: flow 0 keeps the downlink (2 MB take 1.6 ms) while flow 1 is incomplete
    assert!(fa[1] > fs[1] + 100e-6, "asrpt: flow 1 ends at {} (srpt {})", fa[1], fs[1]);
    for s in [&srpt, &asrpt] {
        assert_eq!(s.delivered_bytes(), &[2_000_000, 100_000]);
    }
}

#[test]
fn gtcp_refuses_data_arriving_over_time() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = vec![spanned(0.0, 0, 1, 1e5, 1e-3)];
    let e = PacketSimulator::new(&topo, &flows, cfg("gtcp:srpt", Transport::Tcp)).unwrap_err().to_string();
    assert!(e.contains("data_span_s") && e.contains("gtcp:srpt"), "{e}");
    let e = PacketSimulator::new(&topo, &[spanned(0.0, 0, 1, 1e5, -1.0)], cfg("ps", Transport::Tcp)).unwrap_err().to_string();
    assert!(e.contains("data_span_s") && e.contains("must be in [0"), "{e}");
}

#[test]
fn a_window_a_sender_short_of_data_does_not_use_does_not_grow() {
    // RFC 7661: 1 MB arriving at 1 Gb/s over a 10 Gb/s path keeps well under one packet in
    // flight; the ACKs of its 685 segments would otherwise grow the window by one each in
    // slow start, and the inflated window would let the flow burst past every congestion
    // signal once it has data
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = vec![spanned(0.0, 0, 1, 1e6, 8e-3)];
    for t in [Transport::Tcp, Transport::Dctcp, Transport::PFabric] {
        let sched = if t == Transport::PFabric { "srpt" } else { "ps" };
        let mut s = PacketSimulator::new(&topo, &flows, cfg(sched, t)).unwrap();
        let init = s.sender(0).cwnd;
        s.step(7e-3).unwrap();
        assert!(s.sender(0).high > 500, "{t:?}: {} segments sent by 7 ms", s.sender(0).high);
        assert_eq!(s.sender(0).cwnd, init, "{t:?}: the window grew while unused");
        s.run().unwrap();
        assert_eq!(s.delivered_bytes()[0], 1_000_000);
    }
}

#[test]
fn ascc_resends_and_opens_its_window_when_a_flow_becomes_complete() {
    // asrpt over dctcp is the aSCC paper's ASCC. Flow 1's data arrives over 5 ms while a
    // complete 60 MB flow holds the shared downlink: its packets wait there, tagged as an
    // incomplete flow's, and are marked. When its data is complete its unacknowledged
    // packets go again (no loss, no timeout: only the rule retransmits here), its window
    // is at least the idle path's bandwidth-delay product, and the receiver ignores the
    // copies (no duplicate ACK, no fast retransmit)
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let flows = vec![spanned(0.0, 0, 2, 60e6, 0.0), spanned(10e-6, 1, 2, 3e5, 5e-3)];
    let mut c = cfg("asrpt", Transport::Dctcp);
    c.delay_per_hop_s = 20e-6;
    c.buffer_bytes = Some(8_000_000);
    c.init_cwnd_packets = Some(2.0);
    let complete = 10e-6 + 5e-3;
    // the idle path: 2 hops of 20 us each way, a 1,500 B packet at 10 Gb/s per hop
    let bdp = 10e9 / 8.0 * (80e-6 + 2.0 * 1.2e-6 + 2.0 * 0.032e-6) / 1500.0;
    let mut s = PacketSimulator::new(&topo, &flows, c.clone()).unwrap();
    s.step(complete - 1e-6).unwrap();
    let before = (s.sender(1).snd_una, s.sender(1).snd_nxt, s.sender(1).cwnd);
    assert!(before.1 > before.0 && before.2 < bdp, "in flight and a small window before: {before:?}");
    s.step(complete + 1e-9).unwrap();
    let opened = s.sender(1).cwnd;
    assert!(opened >= bdp * (1.0 - 1e-9), "window {opened} at completion, bdp {bdp}");
    // (the ACKs of the marked packets it sent before come back in the next round trip; that
    // they do not cut the window is the unit test `ascc_ignores_the_marks_...` in tcp.rs)
    s.step(complete + 1.5 * 80e-6).unwrap();
    assert!(s.sender(1).cwnd >= opened, "window {} a round trip later, {opened} at completion", s.sender(1).cwnd);
    s.run().unwrap();
    let st = s.stats();
    assert_eq!((st.drops_overflow, st.drops_evicted, st.timeouts, st.fast_retransmits), (0, 0, 0, 0));
    assert!(st.retransmissions > 0 && st.ecn_marks > 0, "{st:?}");
    // the copies pass the stale packets waiting at the downlink, which drops them (the
    // authors' switches), so the receiver gets each packet about once
    assert!(st.drops_stale > 0 && st.data_dropped == st.drops_stale, "{st:?}");
    assert!(st.duplicates + st.drops_stale >= st.retransmissions, "{st:?}");
    assert_eq!(s.delivered_bytes(), &[60_000_000, 300_000]);
    // without data spans nothing is ever incomplete: no rule applies
    let plain = run(&topo, &[flows[0].clone(), spanned(10e-6, 1, 2, 3e5, 0.0)], c);
    assert_eq!(plain.stats().retransmissions, 0);
}

#[test]
fn asccs_copies_replace_the_stale_packets_in_the_senders_own_queue() {
    // A 10-packet flow alone, its data arriving over 1 us: at completion its first packet
    // is on the wire, the next eight wait in its host's port, tagged as an incomplete
    // flow's, and the last is not sent yet. "Retransmit when complete" sends the nine
    // again; the port drops the eight stale ones as the first copy leaves before them (the
    // aSCC authors' `drop_low_prio`), so ASCC costs one packet's transmission more than
    // SRPT (the copy of the packet on the wire), not nine
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let flows = vec![spanned(0.0, 0, 1, 10.0 * MSS as f64, 1e-6)];
    let srpt = run(&topo, &flows, cfg("srpt", Transport::Dctcp));
    let ascc = run(&topo, &flows, cfg("asrpt", Transport::Dctcp));
    let st = ascc.stats();
    assert_eq!(st.retransmissions, 9, "{st:?}");
    assert_eq!(st.drops_stale, 8, "{st:?}");
    assert_eq!(st.duplicates, 1, "only the copy of the packet on the wire arrives twice: {st:?}");
    let one = 1500.0 * 8.0 / 10e9;
    let (fs, fa) = (srpt.finish_s()[0], ascc.finish_s()[0]);
    assert!((fa - fs - one).abs() < 1e-9, "ascc {fa}, srpt {fs}: one packet's time apart");
    assert_eq!(ascc.delivered_bytes(), srpt.delivered_bytes());
}

#[test]
fn asccs_switches_serve_incomplete_flows_first_in_first_out() {
    // ASCC's switches keep incomplete flows' packets in one first-in-first-out queue (aSCC
    // section VII), not in the GA transform's order of flow arrival: two incomplete flows
    // whose data arrives at 8 Gb/s each, into one 10 Gb/s downlink, share it under DCTCP
    // (the later one is not held behind the earlier one, as asrpt over pfabric holds it)
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let (size, span) = (10e6, 10e6 * 8.0 / 8e9);
    let flows = vec![spanned(0.0, 0, 2, size, span), spanned(10e-6, 1, 2, size, span)];
    let mid = span / 2.0;
    let at_mid = |c: PacketConfig| {
        let mut s = PacketSimulator::new(&topo, &flows, c).unwrap();
        s.step(mid).unwrap();
        let d = s.delivered_bytes().to_vec();
        s.run().unwrap();
        assert_eq!(s.delivered_bytes(), &[size as u64, size as u64]);
        (d[0] as f64, d[1] as f64)
    };
    let (a0, a1) = at_mid(cfg("asrpt", Transport::Dctcp));
    let link = 10e9 / 8.0 * mid;
    assert!(a0 + a1 > 0.8 * link, "ASCC kept the downlink busy: {a0} + {a1} of {link} B");
    assert!(a1 > 0.7 * a0 && a0 > 0.7 * a1, "ASCC's incomplete flows share the downlink: {a0}, {a1}");
    // the GA transform's order (pFabric's queues and transport): the earlier flow first, at
    // the rate its data arrives, the later one on what is left
    let (g0, g1) = at_mid(cfg("asrpt", Transport::PFabric));
    assert!(g1 < 0.5 * g0, "asrpt over pfabric serves the earlier incomplete flow first: {g0}, {g1}");
}
