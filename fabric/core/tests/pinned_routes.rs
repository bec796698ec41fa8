//! Routes pinned per flow on graph topologies (issue 21, the trace's `path` column):
//! pinning a flow to the path ECMP gives it changes nothing bit for bit in either model;
//! pinned routes are the links every allocator and the packet model use (rates against the
//! independent references of `fabric_core::verify`, the exact fluid answer when two flows
//! are pinned onto one core link, path delays and FCTs that follow the pinned links); bad
//! routes are errors naming the row.
use std::sync::Arc;

use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::check_against_verify;
use common::random_flows;

/// A graph from undirected edges (a, b, gbps, own delay in s): link 2e is a->b, 2e+1 b->a.
fn graph(n_nodes: usize, hosts: Vec<u32>, edges: &[(u32, u32, f64, f64)], ecmp_seed: u64) -> Topology {
    let (mut from, mut to, mut gbps, mut names, mut delay) = (vec![], vec![], vec![], vec![], vec![]);
    for &(a, b, g, d) in edges {
        for (x, y) in [(a, b), (b, a)] {
            from.push(x);
            to.push(y);
            gbps.push(g);
            names.push(format!("{x}->{y}"));
            delay.push(d);
        }
    }
    let w = vec![1; from.len()];
    Topology::graph(GraphRoutes::new(n_nodes, from, to, w, hosts, names, delay).unwrap(), &gbps, ecmp_seed).unwrap()
}

/// k-ary fat-tree: hosts 0..k^3/4, then edge, aggregation and core switches (k = 4: edge
/// switches 16..24, aggregation 24..32, cores 32..36; aggregation switch a of each pod
/// joins cores 2a and 2a + 1).
fn fat_tree(k: usize, ecmp_seed: u64) -> Topology {
    let half = k / 2;
    let n_hosts = k * half * half;
    let edge = |p: usize, e: usize| (n_hosts + p * half + e) as u32;
    let agg = |p: usize, a: usize| (n_hosts + k * half + p * half + a) as u32;
    let core = |c: usize| (n_hosts + 2 * k * half + c) as u32;
    let mut edges = vec![];
    for h in 0..n_hosts {
        edges.push((h as u32, edge(h / half / half, (h / half) % half), 10.0, 0.0));
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                edges.push((edge(p, e), agg(p, a), 10.0, 0.0));
            }
        }
        for a in 0..half {
            for c in 0..half {
                edges.push((agg(p, a), core(a * half + c), 10.0, 0.0));
            }
        }
    }
    graph(n_hosts + 2 * k * half + half * half, (0..n_hosts as u32).collect(), &edges, ecmp_seed)
}

fn routes_of(t: &Topology) -> Arc<GraphRoutes> {
    match t.kind {
        TopologyKind::Graph { ref routes, .. } => routes.clone(),
        _ => panic!("not a graph"),
    }
}

/// `t` with flow i pinned to the route through `nodes[i]` (empty: not pinned).
fn pin(t: &Topology, flows: &[FlowSpec], nodes: &[Vec<u32>]) -> Result<Topology> {
    let src: Vec<usize> = flows.iter().map(|f| f.src).collect();
    let dst: Vec<usize> = flows.iter().map(|f| f.dst).collect();
    let (mut off, mut all) = (vec![0usize], vec![]);
    for r in nodes {
        all.extend_from_slice(r);
        off.push(all.len());
    }
    let p = PinnedRoutes::new(routes_of(t), &src, &dst, &off, &all)?;
    t.clone().with_pinned(Arc::new(p))
}

/// The nodes of the links `links`.
fn nodes_of(t: &Topology, links: &[u32]) -> Vec<u32> {
    let g = routes_of(t);
    let mut v = vec![g.link_from[links[0] as usize]];
    v.extend(links.iter().map(|&l| g.link_to[l as usize]));
    v
}

/// The nodes of flow i's ECMP path.
fn ecmp_nodes(t: &Topology, i: usize, f: &FlowSpec) -> Vec<u32> {
    let mut links = vec![];
    t.path(i as u64, f.src, f.dst, &mut links);
    nodes_of(t, &links)
}

fn fluid(topo: &Topology, flows: &[FlowSpec], name: &str, allocator: AllocatorChoice) -> Simulator {
    let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
    cfg.allocator = allocator;
    cfg.pias_thresholds_bytes = vec![2e4, 1e5, 3e5];
    cfg.delay_per_hop_s = 1e-6;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    s.run().unwrap();
    s
}

fn packet(topo: &Topology, flows: &[FlowSpec], name: &str, delay_per_hop_s: f64) -> PacketSimulator {
    let mut cfg = PacketConfig::new(Scheduler::parse(name).unwrap());
    cfg.delay_per_hop_s = delay_per_hop_s;
    let mut s = PacketSimulator::new(topo, flows, cfg).unwrap();
    s.run().unwrap();
    s
}

#[test]
fn pinning_the_ecmp_path_changes_nothing() {
    let mut rng = SplitMix64::new(12);
    let topo = fat_tree(4, 3);
    let mut flows = random_flows(&mut rng, topo.n_hosts, 160, 2e-5, false, true, false);
    // Every other flow pinned to the path ECMP gives it.
    let nodes: Vec<Vec<u32>> =
        flows.iter().enumerate().map(|(i, f)| if i % 2 == 0 { ecmp_nodes(&topo, i, f) } else { vec![] }).collect();
    let pinned = pin(&topo, &flows, &nodes).unwrap();
    for i in 0..flows.len() {
        let (mut a, mut b) = (vec![], vec![]);
        assert_eq!(topo.path(i as u64, flows[i].src, flows[i].dst, &mut a), pinned.path(i as u64, flows[i].src, flows[i].dst, &mut b));
        assert_eq!(a, b);
    }
    for name in ["ps", "wps", "srpt", "fifo", "pias", "las", "edf", "fair", "gtcp:srpt", "random"] {
        for alloc in [AllocatorChoice::Auto, AllocatorChoice::Full] {
            let (x, y) = (fluid(&topo, &flows, name, alloc), fluid(&pinned, &flows, name, alloc));
            for i in 0..flows.len() {
                assert_eq!(x.finish_s()[i].to_bits(), y.finish_s()[i].to_bits(), "{name} {alloc:?} flow {i}");
                assert_eq!(x.ideal_fct_s(i).to_bits(), y.ideal_fct_s(i).to_bits());
            }
        }
    }
    // The packet model: whole sizes, no deadlines, weights 1.
    for f in &mut flows {
        f.size_bytes = f.size_bytes.ceil();
        f.deadline_s = f64::NAN;
    }
    for name in ["ps", "srpt"] {
        let (x, y) = (packet(&topo, &flows, name, 1e-6), packet(&pinned, &flows, name, 1e-6));
        assert_eq!(x.fct_s(), y.fct_s(), "{name}");
        assert_eq!(x.stats(), y.stats());
    }
}

#[test]
fn two_flows_pinned_onto_one_core_link_share_it() {
    // Host 0 (pod 0, edge switch 16) -> host 4 (pod 1, edge 18) and host 2 (pod 0, edge
    // 17) -> host 6 (pod 1, edge 19): their only links in common can be in the core.
    let flows = vec![FlowSpec::new(0.0, 0, 4, 1.25e6), FlowSpec::new(0.0, 2, 6, 1.25e6)];
    // An ECMP seed under which their paths share no link: each runs at the full 10 Gbps.
    let topo = (0..100)
        .map(|seed| fat_tree(4, seed))
        .find(|t| {
            let (mut a, mut b) = (vec![], vec![]);
            t.path(0, 0, 4, &mut a);
            t.path(1, 2, 6, &mut b);
            a.iter().all(|l| !b.contains(l))
        })
        .unwrap();
    let rate = |t: &Topology, name: &str| {
        let mut s = Simulator::new(t.clone(), flows.clone(), SimConfig::new(Scheduler::parse(name).unwrap())).unwrap();
        s.step(1e-4).unwrap();
        let r = [s.rate_bytes_per_s(0), s.rate_bytes_per_s(1)];
        s.run().unwrap();
        (r, [s.fct_s(0), s.fct_s(1)])
    };
    assert_eq!(rate(&topo, "ps").0, [1.25e9, 1.25e9]);
    // Both through aggregation switch 24, core 32, aggregation switch 26.
    let same = pin(&topo, &flows, &[vec![0, 16, 24, 32, 26, 18, 4], vec![2, 17, 24, 32, 26, 19, 6]]).unwrap();
    let (r, fct) = rate(&same, "ps");
    assert_eq!(r, [6.25e8, 6.25e8]); // the core link's 10 Gbps halved
    for x in fct {
        assert!((x - 2e-3).abs() <= 1e-15, "{x}");
    }
    for name in ["wps"] {
        assert_eq!(rate(&same, name).0, [6.25e8, 6.25e8], "{name}");
    }
    // srpt: one flow at a time over the shared link (equal sizes: the lower row first).
    let (r, fct) = rate(&same, "srpt");
    assert_eq!(r, [1.25e9, 0.0]);
    assert!((fct[0] - 1e-3).abs() <= 1e-15 && (fct[1] - 2e-3).abs() <= 1e-15, "{fct:?}");
    // Through different cores (32 and 33) of the same aggregation switches: no shared link.
    let apart = pin(&topo, &flows, &[vec![0, 16, 24, 32, 26, 18, 4], vec![2, 17, 24, 33, 26, 19, 6]]).unwrap();
    assert_eq!(rate(&apart, "ps").0, [1.25e9, 1.25e9]);
}

/// Two hosts (0, 1) on switches 2 and 3, joined through middle switch 4 (no delay of its
/// own), through switch 5 (links with `slow_s` of delay each), and through switches 6 -> 7
/// (a path one link longer).
fn detours(slow_s: f64) -> Topology {
    let edges = [
        (0, 2, 10.0, 0.0),
        (1, 3, 10.0, 0.0),
        (2, 4, 10.0, 0.0),
        (4, 3, 10.0, 0.0),
        (2, 5, 10.0, slow_s),
        (5, 3, 10.0, slow_s),
        (2, 6, 10.0, 0.0),
        (6, 7, 10.0, 0.0),
        (7, 3, 10.0, 0.0),
    ];
    graph(8, vec![0, 1], &edges, 0)
}

#[test]
fn path_delays_and_fcts_follow_the_pinned_route() {
    let slow = 3e-6;
    let topo = detours(slow);
    let flows = vec![FlowSpec::new(0.0, 0, 1, 5.0 * 1460.0), FlowSpec::new(0.01, 0, 1, 5.0 * 1460.0)];
    let via = |mid: &[u32]| {
        let mut r = vec![0, 2];
        r.extend_from_slice(mid);
        r.extend([3, 1]);
        r
    };
    let fast = pin(&topo, &flows, &[via(&[4]), via(&[4])]).unwrap();
    let slowed = pin(&topo, &flows, &[via(&[5]), via(&[4])]).unwrap();
    let longer = pin(&topo, &flows, &[via(&[6, 7]), via(&[4])]).unwrap();
    // Fluid: 1 us per hop plus the links' own delays.
    let (a, b, c) = (fluid(&fast, &flows, "ps", AllocatorChoice::Auto), fluid(&slowed, &flows, "ps", AllocatorChoice::Auto), fluid(&longer, &flows, "ps", AllocatorChoice::Auto));
    // (as the core sums them: per-hop delay times the links, plus each link's own in route order)
    assert_eq!(a.path_delay_s(0), 1e-6 * 4.0 + 0.0);
    assert_eq!(b.path_delay_s(0), 1e-6 * 4.0 + (0.0 + slow + slow + 0.0));
    assert_eq!(c.path_delay_s(0), 1e-6 * 5.0 + 0.0);
    // Same rates (the same bottleneck), so the same finish; the FCT adds the path delay.
    assert_eq!(a.finish_s()[0], b.finish_s()[0]);
    assert!((b.fct_s(0) - a.fct_s(0) - 2.0 * slow).abs() < 1e-17);
    assert!((b.ideal_fct_s(0) - a.ideal_fct_s(0) - 2.0 * slow).abs() < 1e-18);
    assert_eq!(b.path(0).len(), 4);
    assert_eq!(c.path(0).len(), 5);
    assert_eq!(a.fct_s(1), b.fct_s(1)); // the second flow is pinned through switch 4 in both
    // Packet model on an idle network: the five packets fit in the first window, so the
    // FCT grows by exactly the extra delay of the slow links (in picoseconds).
    for name in ["ps", "srpt"] {
        let (x, y) = (packet(&fast, &flows, name, 1e-6), packet(&slowed, &flows, name, 1e-6));
        assert_eq!(y.fct_ps(0).unwrap() - x.fct_ps(0).unwrap(), 6_000_000, "{name}");
        assert_eq!(y.path_delay_s()[0], b.path_delay_s(0));
        assert_eq!(x.fct_ps(1), y.fct_ps(1));
        // One link more: one more hop of propagation and of one packet's serialization.
        let z = packet(&longer, &flows, name, 1e-6);
        let wire = 1460.0 + 40.0;
        let extra = z.fct_s()[0] - x.fct_s()[0];
        assert!((extra - (1e-6 + wire / 1.25e9)).abs() < 2e-12, "{name}: {extra}");
        // The bytes each link carried: the first flow's over its detour, the second's via switch 4.
        let lb = z.link_bytes();
        for (l, n) in longer.names().iter().enumerate() {
            let want = match n.as_str() {
                "0->2" | "3->1" => 2.0 * 5.0 * 1460.0,
                "2->6" | "6->7" | "7->3" | "2->4" | "4->3" => 5.0 * 1460.0,
                _ => 0.0,
            };
            assert_eq!(lb[l], want, "{name}: link {n}");
        }
    }
}

#[test]
fn rates_match_the_references_with_pinned_detours() {
    // Random flows on a fat-tree, a third pinned to random loop-free routes (most of them
    // longer than the shortest), every allocator checked against `verify` after each step
    // and incremental against full.
    let mut rng = SplitMix64::new(7);
    let topo = fat_tree(4, 1);
    let g = routes_of(&topo);
    let flows = random_flows(&mut rng, topo.n_hosts, 160, 2e-5, false, false, true);
    let mut nodes = vec![];
    for (i, f) in flows.iter().enumerate() {
        if i % 3 != 0 {
            nodes.push(vec![]);
            continue;
        }
        // A random walk over switches from src's edge switch until it reaches dst's, without revisits.
        'walk: loop {
            let mut r = vec![f.src as u32, g.link_to[g.link_from.iter().position(|&a| a == f.src as u32).unwrap()]];
            let last_sw = g.link_from[g.link_to.iter().position(|&b| b == f.dst as u32).unwrap()];
            while *r.last().unwrap() != last_sw {
                let v = *r.last().unwrap();
                let next: Vec<u32> = (0..g.n_links())
                    .filter(|&l| g.link_from[l] == v && g.link_to[l] >= 16 && !r.contains(&g.link_to[l]))
                    .map(|l| g.link_to[l])
                    .collect();
                if next.is_empty() || r.len() > 12 {
                    continue 'walk;
                }
                r.push(next[rng.below(next.len() as u64) as usize]);
            }
            r.push(f.dst as u32);
            nodes.push(r);
            break;
        }
    }
    let pinned = pin(&topo, &flows, &nodes).unwrap();
    for name in ["ps", "wps", "srpt"] {
        let s = Simulator::new(pinned.clone(), flows.clone(), SimConfig::new(Scheduler::parse(name).unwrap())).unwrap();
        for (i, r) in nodes.iter().enumerate() {
            if !r.is_empty() {
                assert_eq!(nodes_of(&topo, s.path(i)), *r);
            }
        }
        check_against_verify(&pinned, &flows, name);
    }
    for name in ["ps", "wps", "srpt", "fifo", "pias", "las", "gtcp:srpt"] {
        let (a, b) = (fluid(&pinned, &flows, name, AllocatorChoice::Auto), fluid(&pinned, &flows, name, AllocatorChoice::Full));
        let tol = fabric_core::sim::incremental_tolerance(&Scheduler::parse(name).unwrap()).max(2e-8);
        for i in 0..flows.len() {
            let (x, y) = (a.finish_s()[i], b.finish_s()[i]);
            assert!((x - y).abs() <= tol * y.abs().max(1e-3), "{name} flow {i}: auto {x} vs full {y}");
        }
    }
}

#[test]
fn bad_routes_are_errors_naming_the_row() {
    let topo = fat_tree(4, 0);
    let flows = vec![FlowSpec::new(0.0, 0, 4, 1e4), FlowSpec::new(0.0, 1, 5, 1e4)];
    let err = |second: Vec<u32>| pin(&topo, &flows, &[vec![], second]).unwrap_err().to_string();
    assert!(err(vec![1, 16, 24, 32, 26, 18, 4]).starts_with("flow at row 1, column 'path': ends at node 4"), "{}", err(vec![1, 16, 24, 32, 26, 18, 4]));
    assert!(err(vec![1, 16, 24, 25, 18, 5]).contains("no link from node 24 to node 25"));
    assert!(err(vec![1, 16, 0, 16, 5]).contains("node 0 (position 2) is host 0"));
    assert!(err(vec![1, 16, 24, 17, 25, 16, 5]).contains("node 16 appears at positions 1 and 5"));
    assert!(err(vec![1]).contains("at least two nodes"));
    assert!(err(vec![1, 16, 99, 5]).contains("position 2 is node index 99, but the graph has 36 nodes"));
    // Pinned routes belong to one trace and one graph.
    let p = pin(&topo, &flows, &[vec![], vec![1, 16, 24, 32, 26, 18, 5]]).unwrap();
    let e = Simulator::new(p.clone(), flows[..1].to_vec(), SimConfig::new(Scheduler::Ps)).unwrap_err().to_string();
    assert!(e.contains("routes pinned for a trace of 2 flows, given 1 flows"), "{e}");
    let moved = vec![flows[0].clone(), FlowSpec::new(0.0, 1, 6, 1e4)];
    let e = Simulator::new(p.clone(), moved.clone(), SimConfig::new(Scheduler::Ps)).unwrap_err().to_string();
    assert!(e.contains("flow at row 1, column 'path': route pinned from host 1 to host 5, but the flow goes from host 1 to host 6"), "{e}");
    let e = PacketSimulator::new(&p, &moved, PacketConfig::new(Scheduler::Ps)).err().unwrap().to_string();
    assert!(e.contains("route pinned from host 1 to host 5"), "{e}");
    let pinned = match p.kind {
        TopologyKind::Graph { pinned: Some(ref x), .. } => x.clone(),
        _ => unreachable!(),
    };
    let e = fat_tree(4, 0).with_pinned(pinned.clone()).unwrap_err().to_string();
    assert!(e.contains("another graph"), "{e}");
    let e = Topology::big_switch(&[10.0; 16]).unwrap().with_pinned(pinned).unwrap_err().to_string();
    assert!(e.contains("on a graph topology only"), "{e}");
    // Offsets that do not describe the nodes.
    let e = PinnedRoutes::new(routes_of(&topo), &[0, 1], &[4, 5], &[0, 3], &[0, 16, 4]).unwrap_err().to_string();
    assert!(e.contains("pinned routes: 2 sources, 2 destinations and 2 route offsets (expected 3)"), "{e}");
    let e = PinnedRoutes::new(routes_of(&topo), &[0], &[4], &[0, 5], &[0, 16, 4]).unwrap_err().to_string();
    assert!(e.contains("offsets must rise from 0 to the 3 nodes given"), "{e}");
}

#[test]
fn flows_share_a_path_id_only_on_the_same_links() {
    // FatTree(4): host 0 under edge switch 16, host 4 under 18; aggregation switch 25 (pod
    // 0) and 27 (pod 1) join cores 34 and 35. Two detours through edge switch 17, one per
    // core, and a shortest path.
    let topo = fat_tree(4, 0);
    let via_34 = vec![0, 16, 24, 17, 25, 34, 27, 18, 4];
    let via_35 = vec![0, 16, 24, 17, 25, 35, 27, 18, 4];
    let shortest = vec![0, 16, 24, 32, 26, 18, 4];
    let flows: Vec<FlowSpec> = (0..6).map(|_| FlowSpec::new(0.0, 0, 4, 1e4)).collect();
    let nodes = [via_34.clone(), via_35.clone(), via_34.clone(), shortest.clone(), vec![], via_35];
    let pinned = pin(&topo, &flows, &nodes).unwrap();
    let ids: Vec<u128> = (0..6)
        .map(|i| {
            let mut links = vec![];
            let id = pinned.path(i as u64, 0, 4, &mut links);
            if !nodes[i].is_empty() {
                assert_eq!(nodes_of(&pinned, &links), nodes[i], "flow {i}");
            }
            id
        })
        .collect();
    // The same detour: one id; the other detour: another one.
    assert_eq!(ids[0], ids[2]);
    assert_eq!(ids[1], ids[5]);
    assert_ne!(ids[0], ids[1]);
    // Every ECMP path from host 0 to host 4 (flow ids drawn until all four are seen) has
    // an id of its own, none a detour's; the pinned shortest path has its ECMP path's id.
    let mut ecmp = std::collections::HashMap::new();
    for f in 0..400u64 {
        let mut links = vec![];
        let id = topo.path(f, 0, 4, &mut links);
        assert_eq!(*ecmp.entry(nodes_of(&topo, &links)).or_insert(id), id);
    }
    assert_eq!(ecmp.len(), 4);
    assert_eq!(ecmp.values().collect::<std::collections::HashSet<_>>().len(), 4);
    assert!(!ecmp.values().any(|&id| id == ids[0] || id == ids[1]));
    assert_eq!(ecmp[&shortest], ids[3]);
    // The unpinned flow keeps its ECMP path and id.
    let mut links = vec![];
    assert_eq!(topo.path(4, 0, 4, &mut links), ids[4]);
}
