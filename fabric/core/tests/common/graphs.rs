//! Graph topologies built from undirected edges, for the tests and the examples
//! (`examples/bench_trace.rs` includes this file by path).
use fabric_core::{GraphRoutes, Topology};

/// Builds a graph from undirected edges (a, b, gbps): link 2e is a->b, 2e+1 is b->a.
pub fn graph(n_nodes: usize, hosts: Vec<u32>, edges: &[(u32, u32, f64)], ecmp_seed: u64) -> Topology {
    let (mut from, mut to, mut gbps, mut names) = (vec![], vec![], vec![], vec![]);
    for &(a, b, g) in edges {
        for (x, y) in [(a, b), (b, a)] {
            from.push(x);
            to.push(y);
            gbps.push(g);
            names.push(format!("{x}->{y}"));
        }
    }
    let w = vec![1; from.len()];
    let d = vec![0.0; from.len()];
    Topology::graph(GraphRoutes::new(n_nodes, from, to, w, hosts, names, d).unwrap(), &gbps, ecmp_seed).unwrap()
}

/// `n` hosts at `host_gbps`, each on its own switch, the switches in a line at
/// `switch_gbps` (`flowsched.topology.ParkingLot`; m3's flowSim's parking lot).
pub fn parking_lot(n: usize, host_gbps: f64, switch_gbps: f64) -> Topology {
    let mut edges: Vec<(u32, u32, f64)> = (0..n).map(|h| (h as u32, (n + h) as u32, host_gbps)).collect();
    edges.extend((0..n - 1).map(|s| ((n + s) as u32, (n + s + 1) as u32, switch_gbps)));
    graph(2 * n, (0..n as u32).collect(), &edges, 0)
}

/// The k-ary fat-tree of Al-Fares et al. (`flowsched.topology.FatTree(k, gbps, gbps)`):
/// k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 hosts,
/// every link at `gbps`. Nodes: hosts first, then edge, aggregation and core switches.
#[allow(dead_code)]
pub fn fat_tree(k: usize, gbps: f64) -> Topology {
    let h = k / 2;
    let n_hosts = k * h * h;
    let edge = |pod: usize, e: usize| (n_hosts + pod * h + e) as u32;
    let agg = |pod: usize, a: usize| (n_hosts + k * h + pod * h + a) as u32;
    let core = |a: usize, c: usize| (n_hosts + 2 * k * h + a * h + c) as u32;
    let mut edges = Vec::new();
    for pod in 0..k {
        for e in 0..h {
            for x in 0..h {
                edges.push((((pod * h + e) * h + x) as u32, edge(pod, e), gbps));
            }
            for a in 0..h {
                edges.push((edge(pod, e), agg(pod, a), gbps));
            }
        }
        for a in 0..h {
            for c in 0..h {
                edges.push((agg(pod, a), core(a, c), gbps));
            }
        }
    }
    graph(n_hosts + 2 * k * h + h * h, (0..n_hosts as u32).collect(), &edges, 0)
}
