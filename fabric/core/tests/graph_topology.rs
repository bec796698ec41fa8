//! Graph topologies (issue 21): on random graphs, a fat-tree and a parking lot, every
//! allocator's rates equal the independent recomputations of `fabric_core::verify`
//! (max-min by progressive filling for ps/wps, greedy SRPT for srpt) after every change,
//! the incremental allocators equal the full recomputation, and a big switch or a
//! leaf-spine given as a graph gives the native topology's results bit for bit.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::graphs::{graph, parking_lot};
use common::{check_against_verify, random_flows};

/// k-ary fat-tree: hosts 0..k^3/4, then edge, aggregation and core switches.
fn fat_tree(k: usize, host_gbps: f64, core_gbps: f64) -> Topology {
    let half = k / 2;
    let n_hosts = k * half * half;
    let edge = |p: usize, e: usize| (n_hosts + p * half + e) as u32;
    let agg = |p: usize, a: usize| (n_hosts + k * half + p * half + a) as u32;
    let core = |c: usize| (n_hosts + 2 * k * half + c) as u32;
    let mut edges = vec![];
    for h in 0..n_hosts {
        edges.push((h as u32, edge(h / half / half, (h / half) % half), host_gbps));
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                edges.push((edge(p, e), agg(p, a), core_gbps));
            }
        }
        for a in 0..half {
            for c in 0..half {
                edges.push((agg(p, a), core(a * half + c), core_gbps));
            }
        }
    }
    graph(n_hosts + 2 * k * half + half * half, (0..n_hosts as u32).collect(), &edges, 5)
}

/// A random connected switch graph (a random tree plus extra links) with `hosts` hosts
/// hung on random switches, random rates.
fn random_graph(rng: &mut SplitMix64, hosts: usize, switches: usize) -> Topology {
    let rate = |rng: &mut SplitMix64| [2.5, 10.0, 10.0, 25.0, 40.0][rng.below(5) as usize];
    let mut edges = vec![];
    for s in 1..switches {
        let p = rng.below(s as u64) as usize;
        edges.push(((hosts + p) as u32, (hosts + s) as u32, rate(rng)));
    }
    for _ in 0..switches {
        let (a, b) = (rng.below(switches as u64) as usize, rng.below(switches as u64) as usize);
        if a != b {
            edges.push(((hosts + a) as u32, (hosts + b) as u32, rate(rng)));
        }
    }
    for h in 0..hosts {
        let s = rng.below(switches as u64) as usize;
        edges.push((h as u32, (hosts + s) as u32, rate(rng)));
    }
    graph(hosts + switches, (0..hosts as u32).collect(), &edges, rng.next_u64())
}

fn finishes(topo: &Topology, flows: &[FlowSpec], name: &str, allocator: AllocatorChoice) -> Vec<f64> {
    let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
    cfg.allocator = allocator;
    cfg.pias_thresholds_bytes = vec![2e4, 1e5, 3e5];
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    s.run().unwrap();
    s.finish_s().to_vec()
}

#[test]
fn rates_match_the_references_on_graphs() {
    let mut rng = SplitMix64::new(21);
    let mut topos = vec![("fat-tree k=4", fat_tree(4, 10.0, 10.0), 16), ("parking lot", parking_lot(8, 10.0, 40.0), 8)];
    for t in 0..4 {
        topos.push(("random graph", random_graph(&mut rng, 10, 6 + t), 10));
    }
    let mut checks = 0;
    for (what, topo, hosts) in &topos {
        let flows = random_flows(&mut rng, *hosts, 400, 2e-5, false, false, true);
        for name in ["ps", "wps", "srpt"] {
            let c = check_against_verify(topo, &flows, name);
            assert!(c > 20, "{what} {name}: only {c} checks");
            checks += c;
        }
    }
    assert!(checks > 500, "{checks}");
}

#[test]
fn incremental_allocators_equal_the_full_recomputation_on_graphs() {
    let mut rng = SplitMix64::new(4);
    // The 20-host parking lot has paths of up to 21 links (beyond the allocators' stack buffers).
    let topos = [fat_tree(4, 10.0, 10.0), parking_lot(6, 10.0, 40.0), parking_lot(20, 10.0, 25.0), random_graph(&mut rng, 12, 9)];
    for topo in &topos {
        let flows = random_flows(&mut rng, topo.n_hosts, 500, 2e-5, true, false, true);
        for name in ["ps", "wps", "srpt", "fifo", "pias", "las", "asrpt", "edf"] {
            let a = finishes(topo, &flows, name, AllocatorChoice::Auto);
            let b = finishes(topo, &flows, name, AllocatorChoice::Full);
            // A flow counts as finished within 1e-9 of its size, so finish times may differ
            // by a few times 1e-9 of the time (tests/incremental.rs allows 1e-8; here asrpt
            // with data spans reached 1.01e-8 on the random graph, so 2e-8); fair sharing
            // has its documented 1e-7 (`incremental_tolerance`).
            let tol = fabric_core::sim::incremental_tolerance(&Scheduler::parse(name).unwrap()).max(2e-8);
            for i in 0..flows.len() {
                let ok = (a[i] - b[i]).abs() <= tol * b[i].abs().max(1e-3);
                assert!(ok, "{name} flow {i}: auto {} vs full {}", a[i], b[i]);
            }
        }
    }
}

#[test]
fn las_incremental_equals_the_full_recomputation_on_graphs() {
    // LAS's incremental allocator (`AllocatorChoice::Incremental`, incr.rs with groups of
    // equal attained service) on paths of 2 to 21 links, with ties (tests/las_incremental.rs
    // has the big switch and leaf-spine).
    let mut rng = SplitMix64::new(5);
    let topos = [fat_tree(4, 10.0, 10.0), parking_lot(6, 10.0, 40.0), parking_lot(6, 10.0, 10.0), parking_lot(20, 10.0, 25.0), random_graph(&mut rng, 12, 9)];
    for (k, topo) in topos.iter().enumerate() {
        for spans in [false, true] {
            let flows = random_flows(&mut rng, topo.n_hosts, 400, 2e-5, spans, false, k % 2 == 0);
            let a = finishes(topo, &flows, "las", AllocatorChoice::Incremental);
            let b = finishes(topo, &flows, "las", AllocatorChoice::Full);
            let tol = fabric_core::sim::incremental_tolerance(&Scheduler::Las);
            for i in 0..flows.len() {
                let ok = (a[i] - b[i]).abs() <= tol * b[i].abs().max(1e-3);
                assert!(ok, "topology {k} spans {spans} flow {i}: incremental {} vs full {}", a[i], b[i]);
            }
        }
    }
}

#[test]
fn big_switch_and_leaf_spine_as_graphs_equal_the_native_ones() {
    let mut rng = SplitMix64::new(9);
    let n = 8;
    // Big switch: a star, hosts 0..n around switch n.
    let star: Vec<(u32, u32, f64)> = (0..n).map(|h| (h as u32, n as u32, 10.0)).collect();
    let g = graph(n + 1, (0..n as u32).collect(), &star, 0);
    let native = Topology::big_switch(&[10.0; 8]).unwrap();
    // Leaf-spine: 4 ToRs x 2 hosts, 3 spines; ToR t is node 8 + t, spine s node 12 + s.
    // Each ToR's spine links are added in spine order, so the graph's ECMP order (links
    // out of a ToR in link order) is the native one's (spine = hash % spines).
    let (tors, hpt, spines) = (4, 2, 3);
    let mut ls_edges: Vec<(u32, u32, f64)> = (0..n).map(|h| (h as u32, (n + h / hpt) as u32, 10.0)).collect();
    for t in 0..tors {
        for s in 0..spines {
            ls_edges.push(((n + t) as u32, (n + tors + s) as u32, 15.0));
        }
    }
    let ls_graph = graph(n + tors + spines, (0..n as u32).collect(), &ls_edges, 77);
    let ls_native = Topology::leaf_spine(tors, hpt, spines, &[10.0; 8], 15.0, 77).unwrap();
    for (a, b) in [(&g, &native), (&ls_graph, &ls_native)] {
        let flows = random_flows(&mut rng, n, 800, 1e-5, false, false, true);
        for name in ["ps", "wps", "srpt", "fifo", "pias", "las"] {
            let x = finishes(a, &flows, name, AllocatorChoice::Auto);
            let y = finishes(b, &flows, name, AllocatorChoice::Auto);
            for i in 0..flows.len() {
                let ok = x[i] == y[i] || (x[i] - y[i]).abs() <= 1e-9 * y[i].abs();
                assert!(ok, "{name} flow {i}: graph {} vs native {}", x[i], y[i]);
            }
        }
    }
}

#[test]
fn fat_tree_paths_spread_over_the_core() {
    let t = fat_tree(4, 10.0, 10.0);
    let TopologyKind::Graph { ref routes, .. } = t.kind else { panic!() };
    // Inter-pod: (k/2)^2 = 4 paths of 6 links; same edge switch: 1 path of 2 links.
    assert_eq!(routes.n_paths(0, 15), 4);
    assert_eq!(routes.n_paths(0, 1), 1);
    assert_eq!(routes.n_paths(0, 2), 2); // same pod, other edge switch: via either aggregation switch
    let mut seen = std::collections::HashMap::new();
    let mut p = Vec::new();
    for id in 0..4000u64 {
        p.clear();
        t.path(id, 0, 15, &mut p);
        assert_eq!(p.len(), 6);
        *seen.entry(p[2]).or_insert(0) += 1; // the aggregation -> core link
    }
    assert_eq!(seen.len(), 4);
    for c in seen.values() {
        assert!(*c > 850 && *c < 1150, "{seen:?}");
    }
}

/// A fat-tree loaded past what greedy priority scheduling drains keeps most of its active
/// flows waiting at rate 0, each held back by one link (the incremental priority allocator
/// then lists it on that link only: `incr.rs`, `park`). At every pause the rates are still
/// the greedy allocation recomputed from scratch (`verify::greedy_rates`), in SRPT order
/// (remaining size) and FIFO order (arrival), through waiting, overtaking and release.
#[test]
fn greedy_priority_with_a_backlog_on_a_fat_tree() {
    let topo = fat_tree(4, 10.0, 10.0);
    let mut rng = SplitMix64::new(31);
    // 16 hosts at 10 Gbps, 3,000 flows of 20 to 2,000 KB in 20 ms: several times the load
    // the host links carry, so a backlog builds up.
    let mut flows = random_flows(&mut rng, 16, 3000, 7e-6, false, false, true);
    for f in flows.iter_mut() {
        f.size_bytes = 2e4 * (1.0 + 99.0 * rng.next_f64() * rng.next_f64());
    }
    for name in ["srpt", "fifo"] {
        let mut s = Simulator::new(topo.clone(), flows.clone(), SimConfig::new(Scheduler::parse(name).unwrap())).unwrap();
        let (mut until, mut checks, mut most_waiting) = (0.0, 0, 0);
        loop {
            until += 2e-4;
            if matches!(s.step(until).unwrap(), Outcome::Done) {
                break;
            }
            let mut order: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
            if name == "srpt" {
                order = verify::srpt_order(&s);
            } else {
                order.sort_by(|&x, &y| s.flow(x).arrival_s.total_cmp(&s.flow(y).arrival_s).then(x.cmp(&y)));
            }
            let want = verify::greedy_rates(&s, &order);
            for (&i, &r) in order.iter().zip(&want) {
                let got = s.rate_bytes_per_s(i);
                assert!((got - r).abs() <= 1e-6 * r.max(got).max(1.0), "{name} t={}: flow {i} has rate {got}, greedy gives {r}", s.now());
            }
            most_waiting = most_waiting.max(order.iter().filter(|&&i| s.rate_bytes_per_s(i) == 0.0).count());
            checks += 1;
        }
        assert!(checks > 50, "{name}: {checks} checks");
        assert!(most_waiting > 500, "{name}: at most {most_waiting} flows waited at once (no backlog)");
    }
}
