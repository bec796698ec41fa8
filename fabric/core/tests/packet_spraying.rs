//! Packet spraying (`LoadBalancing::Packet`) and the fast-retransmit threshold
//! (`dupack_threshold`) of the packet model.
use fabric_core::*;

mod common;
use common::graphs::graph;
use common::packet::run;

fn cfg(s: &str, t: Transport, lb: LoadBalancing) -> PacketConfig {
    let mut c = PacketConfig::new(Scheduler::parse(s).unwrap());
    c.transport = Some(t);
    c.load_balancing = lb;
    c
}

fn mixed_trace(n: usize, hosts: usize, seed: u64) -> Vec<FlowSpec> {
    let mut rng = fabric_core::rng::SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let src = rng.below(hosts as u64) as usize;
            let dst = (src + 1 + rng.below(hosts as u64 - 1) as usize) % hosts;
            let size = [1_000.0, 20_000.0, 300_000.0][rng.below(3) as usize] * (1.0 + rng.next_f64());
            FlowSpec::new(i as f64 * 4e-6, src, dst, size)
        })
        .collect()
}

#[test]
fn on_a_big_switch_spraying_changes_nothing() {
    // One path between any two hosts: the same run, bit for bit.
    let topo = Topology::big_switch(&[10.0; 8]).unwrap();
    let flows = mixed_trace(300, 8, 1);
    for (s, t) in [("ps", Transport::Dctcp), ("srpt", Transport::PFabric), ("ps", Transport::Tcp)] {
        let a = run(&topo, &flows, cfg(s, t, LoadBalancing::Flow));
        let b = run(&topo, &flows, cfg(s, t, LoadBalancing::Packet));
        let bits = |x: &PacketSimulator| x.finish_s().iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "{s} over {t:?}");
        assert_eq!(a.link_bytes(), b.link_bytes());
        assert_eq!(a.stats().events, b.stats().events);
    }
}

#[test]
fn a_flow_sprayed_over_four_spines_uses_each_for_about_a_quarter() {
    let topo = Topology::leaf_spine(2, 2, 4, &[10.0; 4], 10.0, 0).unwrap();
    let size = 14_600_000.0; // 10,000 packets
    let flows = [FlowSpec::new(0.0, 0, 2, size)];
    let names = topo.names();
    let up: Vec<usize> = (0..names.len()).filter(|&l| names[l].starts_with("tor0-spine")).collect();
    let down: Vec<usize> = (0..names.len()).filter(|&l| names[l].starts_with("spine") && names[l].ends_with("-tor1")).collect();
    assert_eq!((up.len(), down.len()), (4, 4));
    let per_flow = run(&topo, &flows, cfg("ps", Transport::Dctcp, LoadBalancing::Flow)).link_bytes();
    assert_eq!(up.iter().filter(|&&l| per_flow[l] > 0.0).count(), 1, "per-flow ECMP: one spine");
    let s = run(&topo, &flows, cfg("ps", Transport::Dctcp, LoadBalancing::Packet));
    let b = s.link_bytes();
    assert_eq!(up.iter().map(|&l| b[l]).sum::<f64>(), size, "every payload byte crosses one uplink once");
    assert_eq!(down.iter().map(|&l| b[l]).sum::<f64>(), size);
    for (&u, &d) in up.iter().zip(&down) {
        // 10,000 packets drawn uniformly: each spine's share within 5% of a quarter (2.9 sd)
        assert!((b[u] / size - 0.25).abs() < 0.0125, "{:?}", up.iter().map(|&l| b[l]).collect::<Vec<_>>());
        assert_eq!(b[u], b[d], "a packet takes the up and down links of one spine");
    }
    assert_eq!(b[0], size, "host 0's uplink");
    // the same seed, the same spray; another seed, another
    let again = run(&topo, &flows, cfg("ps", Transport::Dctcp, LoadBalancing::Packet)).link_bytes();
    assert_eq!(b, again);
    let mut other = cfg("ps", Transport::Dctcp, LoadBalancing::Packet);
    other.seed = 7;
    assert_ne!(run(&topo, &flows, other).link_bytes(), b);
}

#[test]
fn spraying_undoes_an_ecmp_collision() {
    // Two spines of 10 Gbps: two flows from tor 0 to tor 1 whose ECMP hashes pick the
    // same spine share its 10 Gbps; sprayed, they have both spines' 20.
    let topo = Topology::leaf_spine(2, 2, 2, &[10.0; 4], 10.0, 3).unwrap();
    let spine = |id: u64, src: usize, dst: usize| {
        let mut p = Vec::new();
        topo.path(id, src, dst, &mut p);
        p[1]
    };
    let mut flows = vec![FlowSpec::new(0.0, 0, 2, 5e6), FlowSpec::new(0.0, 1, 3, 5e6)];
    // a row for the second flow whose hash collides with the first's (filler rows before it
    // start late and are small)
    let first = spine(0, 0, 2);
    let mut row = 1;
    while spine(row as u64, 1, 3) != first {
        row += 1;
    }
    let second = flows.pop().unwrap();
    while flows.len() < row {
        flows.push(FlowSpec::new(1.0, 0, 1, 1000.0));
    }
    flows.push(second);
    let fct = |lb| {
        let mut c = cfg("ps", Transport::Dctcp, lb);
        // spraying reorders packets (the test below): with fast retransmit on, the sprayed
        // flows took 1.57x their time alone here
        c.dupack_threshold = 0;
        c.min_rto_s = Some(0.001);
        let s = run(&topo, &flows, c);
        let f = s.fct_s();
        f[0].max(f[row])
    };
    let (per_flow, sprayed) = (fct(LoadBalancing::Flow), fct(LoadBalancing::Packet));
    let alone = 5e6 * 8.0 / 10e9 * 1500.0 / 1460.0; // and headers
    assert!(per_flow > 1.8 * alone, "collided: {per_flow} s against {alone} s alone");
    assert!(sprayed < 1.1 * alone, "sprayed: {sprayed} s against {alone} s alone");
}

/// Two equal-cost paths between host 0 (node 0, on switch 2) and host 1 (node 1, on
/// switch 3): through switch 4 (links of no delay of their own) or switch 5 (50 us each).
fn two_paths() -> Topology {
    let edges = [(0u32, 2u32), (1, 3), (2, 4), (4, 3), (2, 5), (5, 3)];
    let (mut from, mut to, mut names, mut delay) = (vec![], vec![], vec![], vec![]);
    for (e, &(a, b)) in edges.iter().enumerate() {
        for (x, y) in [(a, b), (b, a)] {
            from.push(x);
            to.push(y);
            names.push(format!("{x}->{y}"));
            delay.push(if e >= 4 { 50e-6 } else { 0.0 });
        }
    }
    let n = from.len();
    let routes = GraphRoutes::new(6, from, to, vec![1; n], vec![0, 1], names, delay).unwrap();
    Topology::graph(routes, &vec![10.0; n], 0).unwrap()
}

#[test]
fn reordering_fires_fast_retransmits_unless_the_threshold_is_off() {
    let topo = two_paths();
    let flows = [FlowSpec::new(0.0, 0, 1, 3e6)];
    let mut c = cfg("ps", Transport::Dctcp, LoadBalancing::Packet);
    c.min_rto_s = Some(0.002);
    let spurious = run(&topo, &flows, c.clone());
    let st = spurious.stats();
    assert_eq!(st.drops_overflow + st.drops_evicted, 0, "nothing is lost");
    assert!(st.fast_retransmits > 10 && st.duplicates > 10, "reordering alone: {st:?}");
    c.dupack_threshold = 0;
    let off = run(&topo, &flows, c.clone());
    let st = off.stats();
    assert_eq!((st.fast_retransmits, st.retransmissions, st.duplicates, st.timeouts), (0, 0, 0, 0), "{st:?}");
    assert!(off.fct_s()[0] < spurious.fct_s()[0], "spurious recoveries halve the window: {} {}", off.fct_s()[0], spurious.fct_s()[0]);
    // Not sprayed, the flow keeps one path and nothing is reordered.
    c.load_balancing = LoadBalancing::Flow;
    c.dupack_threshold = 3;
    let st = run(&topo, &flows, c).stats().clone();
    assert_eq!((st.fast_retransmits, st.duplicates), (0, 0));
}

#[test]
fn the_threshold_is_the_duplicate_ack_count() {
    // One loss (a 2-packet buffer behind a 10:1 rate step), recovered by fast retransmit at
    // the threshold's duplicate ACK, or, with 0, by the timer.
    let edges = [(0u32, 2u32, 100.0), (1, 2, 10.0)];
    let topo = graph(3, vec![0, 1], &edges, 0);
    let flows = [FlowSpec::new(0.0, 0, 1, 146_000.0)];
    let mut c = cfg("ps", Transport::Tcp, LoadBalancing::Flow);
    c.buffer_bytes = Some(3_000);
    c.init_cwnd_packets = Some(20.0);
    for th in [1, 2, 3] {
        c.dupack_threshold = th;
        let st = run(&topo, &flows, c.clone()).stats().clone();
        assert!(st.fast_retransmits > 0 && st.drops_overflow > 0, "threshold {th}: {st:?}");
    }
    c.dupack_threshold = 0;
    let st = run(&topo, &flows, c).stats().clone();
    assert!(st.fast_retransmits == 0 && st.timeouts > 0 && st.drops_overflow > 0, "{st:?}");
}

#[test]
fn options_that_do_not_apply_are_errors() {
    let topo = Topology::leaf_spine(2, 2, 2, &[10.0; 4], 10.0, 0).unwrap();
    let flows = [FlowSpec::new(0.0, 0, 2, 1e5)];
    let err = |c: PacketConfig| PacketSimulator::new(&topo, &flows, c).unwrap_err().to_string();
    let e = err(cfg("ps", Transport::Rcp, LoadBalancing::Packet));
    assert!(e.contains("packet spraying") && e.contains("rcp"), "{e}");
    let e = err(cfg("gtcp:srpt", Transport::Dctcp, LoadBalancing::Packet));
    assert!(e.contains("gtcp:srpt") && e.contains("packet spraying"), "{e}");
    let mut c = cfg("srpt", Transport::PFabric, LoadBalancing::Flow);
    c.dupack_threshold = 0;
    let e = err(c);
    assert!(e.contains("dupack_threshold") && e.contains("pfabric"), "{e}");
    assert!(LoadBalancing::parse("spray").unwrap_err().to_string().contains("known: flow"));
}

#[test]
fn the_cache_of_a_graphs_paths_changes_nothing() {
    // Hosts on two switches each (two equal-cost paths between any two hosts): up to 256
    // hosts a pair's cached paths are found in a table, above it in a map (the unit test
    // `cached_paths_are_the_routing_tables_paths` compares both with the routing tables'
    // walk). Hosts past the 8 that send change nothing.
    let build = |hosts: usize| {
        let (a, b) = (hosts as u32, hosts as u32 + 1);
        let edges: Vec<(u32, u32, f64)> = (0..hosts as u32).flat_map(|h| [(h, a, 10.0), (h, b, 10.0)]).collect();
        graph(hosts + 2, (0..hosts as u32).collect(), &edges, 0)
    };
    let flows = mixed_trace(200, 8, 5);
    let runs: Vec<PacketSimulator> = [256, 257]
        .iter()
        .map(|&h| run(&build(h), &flows, cfg("ps", Transport::Dctcp, LoadBalancing::Packet)))
        .collect();
    let bits = |x: &PacketSimulator| x.finish_s().iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&runs[0]), bits(&runs[1]));
    // the links of hosts 0..8 and of both switches are the first 4 x 8 (two edges per host)
    assert_eq!(runs[0].link_bytes()[..32], runs[1].link_bytes()[..32]);
    let (through_a, through_b) = (runs[0].link_bytes()[0], runs[0].link_bytes()[2]);
    assert!(through_a > 0.0 && through_b > 0.0, "both paths used: {through_a} {through_b}");
}

#[test]
fn the_ideal_of_a_sprayed_flow_counts_every_path() {
    // 10 Gbps hosts, two spines of 1 Gbps: one path gives 1 Gbps, the two sprayed 2.
    let topo = Topology::leaf_spine(2, 2, 2, &[10.0; 4], 1.0, 0).unwrap();
    let flows = [FlowSpec::new(0.0, 1, 3, 1e6), FlowSpec::new(0.0, 0, 1, 1e6)];
    let one = run(&topo, &flows, cfg("ps", Transport::Dctcp, LoadBalancing::Flow));
    let mut c = cfg("ps", Transport::Dctcp, LoadBalancing::Packet);
    c.dupack_threshold = 0;
    let two = run(&topo, &flows, c);
    assert_eq!(one.ideal_tx_of(0), 1e6 / 0.125e9);
    assert_eq!(two.ideal_tx_of(0), 1e6 / 0.25e9);
    // inside a rack nothing to spray: the host links' 10 Gbps
    assert_eq!((one.ideal_tx_of(1), two.ideal_tx_of(1)), (1e6 / 1.25e9, 1e6 / 1.25e9));
    let fct = two.fct_s()[0];
    assert!(fct >= two.ideal_fct_of(0) && fct < 1.2 * two.ideal_fct_of(0), "{fct}");
}
