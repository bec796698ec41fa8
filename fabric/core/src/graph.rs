//! Graph topologies: any set of nodes joined by unidirectional links, with hosts at some
//! of the nodes, and per-flow ECMP over all equal-cost shortest paths.
//!
//! Routing never passes through a host: hosts are where flows start and end, switches are
//! every other node. Path length is the sum of the links' integer weights (1 per link by
//! default: hop count); weights are integers so that equal-cost paths compare exactly.
//!
//! For every destination the graph keeps, per node, the distance to it and the number of
//! shortest paths from that node to it (a table per *target*: a host's only upstream
//! switch when the host has exactly one incoming link, else the host itself, so that the
//! hosts under one switch share a table). A flow's path is drawn uniformly among all
//! equal-cost shortest paths by one seeded hash value `r < count[src]`, walked down the
//! table: at each node the outgoing links on a shortest path are taken in link order and
//! `r` picks the one whose range of path indices holds it. The same flow always gets the
//! same path; flows spread evenly over the paths.
use crate::error::{Result, SimError};

/// The most bytes the routing tables may take (2^31: 2 GiB): a fabric beyond it is
/// refused with an error naming the sizes, rather than exhausting memory.
pub const MAX_TABLE_BYTES: usize = 1 << 31;

/// Routing state of a graph topology (built once, shared by every simulator using it).
#[derive(Debug, Clone, PartialEq)]
pub struct GraphRoutes {
    /// Number of nodes (hosts and switches).
    pub n_nodes: usize,
    /// Source node of each link.
    pub link_from: Vec<u32>,
    /// Destination node of each link.
    pub link_to: Vec<u32>,
    /// Integer routing weight of each link (>= 1).
    pub link_weight: Vec<u32>,
    /// Node of each host (host h is the trace's host h).
    pub host_node: Vec<u32>,
    /// A name per link (shown in `Results.links`).
    pub link_names: Vec<String>,
    /// Propagation delay of each link in seconds, on top of the run's delay per hop (all
    /// zero when the graph gives none).
    pub link_delay_s: Vec<f64>,
    /// Whether some link's delay is not 0.
    pub any_link_delay: bool,
    /// Outgoing links of node v: `out_links[out_start[v]..out_start[v + 1]]`, in link order.
    out_start: Vec<u32>,
    out_links: Vec<u32>,
    /// Whether node v is a host.
    is_host: Vec<bool>,
    /// The routing table that destination host h uses.
    host_table: Vec<u32>,
    /// The link into host h from its table's target (u32::MAX when the target is h itself).
    host_last_link: Vec<u32>,
    /// Per table t: `dist[t * n_nodes + v]` (u64::MAX: unreachable) and the number of
    /// shortest paths from v to the target.
    dist: Vec<u64>,
    count: Vec<u64>,
    /// Each table's target node.
    table_target: Vec<u32>,
}

fn invalid(msg: String) -> SimError {
    SimError::InvalidConfig(msg)
}

impl GraphRoutes {
    /// Checks a graph and builds its routing tables. `host_node[h]` is the node of host h.
    pub fn new(
        n_nodes: usize,
        link_from: Vec<u32>,
        link_to: Vec<u32>,
        link_weight: Vec<u32>,
        host_node: Vec<u32>,
        link_names: Vec<String>,
        link_delay_s: Vec<f64>,
    ) -> Result<Self> {
        let n_links = link_from.len();
        for (name, len) in [
            ("link_to", link_to.len()),
            ("link_weight", link_weight.len()),
            ("link_names", link_names.len()),
            ("link_delay_s", link_delay_s.len()),
        ] {
            if len != n_links {
                return Err(invalid(format!("graph topology: {name} has {len} entries for {n_links} links")));
            }
        }
        if n_nodes > u32::MAX as usize / 2 {
            return Err(invalid(format!("graph topology: {n_nodes} nodes is too many")));
        }
        for l in 0..n_links {
            let (a, b) = (link_from[l] as usize, link_to[l] as usize);
            if a >= n_nodes || b >= n_nodes {
                return Err(invalid(format!("graph topology: link {l} ({}) joins node {a} to {b}, but there are {n_nodes} nodes", link_names[l])));
            }
            if a == b {
                return Err(invalid(format!("graph topology: link {l} ({}) is a self-loop on node {a}", link_names[l])));
            }
            if !(link_delay_s[l].is_finite() && link_delay_s[l] >= 0.0) {
                return Err(invalid(format!(
                    "graph topology: link {l} ({}) has delay {} s; delays are finite and >= 0",
                    link_names[l], link_delay_s[l]
                )));
            }
            if link_weight[l] == 0 {
                return Err(invalid(format!("graph topology: link {l} ({}) has weight 0; weights are integers >= 1", link_names[l])));
            }
        }
        let n_hosts = host_node.len();
        if n_hosts < 2 {
            return Err(invalid(format!("graph topology needs at least 2 hosts, got {n_hosts}")));
        }
        let mut is_host = vec![false; n_nodes];
        for (h, &v) in host_node.iter().enumerate() {
            let v = v as usize;
            if v >= n_nodes {
                return Err(invalid(format!("graph topology: host {h} is node {v}, but there are {n_nodes} nodes")));
            }
            if is_host[v] {
                let first = host_node.iter().position(|&x| x as usize == v).unwrap_or(h);
                return Err(invalid(format!("graph topology: node {v} is listed as host {first} and host {h}")));
            }
            is_host[v] = true;
        }
        // Outgoing and incoming links per node (CSR, in link order).
        let csr = |ends: &[u32]| -> (Vec<u32>, Vec<u32>) {
            let mut start = vec![0u32; n_nodes + 1];
            for &e in ends {
                start[e as usize + 1] += 1;
            }
            for v in 0..n_nodes {
                start[v + 1] += start[v];
            }
            let mut fill = start.clone();
            let mut links = vec![0u32; ends.len()];
            for (l, &e) in ends.iter().enumerate() {
                links[fill[e as usize] as usize] = l as u32;
                fill[e as usize] += 1;
            }
            (start, links)
        };
        let (out_start, out_links) = csr(&link_from);
        let (in_start, in_links) = csr(&link_to);
        // One table per target: a host's only upstream switch, else the host.
        let mut table_of_node = vec![u32::MAX; n_nodes];
        let mut table_target = Vec::new();
        let mut host_table = Vec::with_capacity(n_hosts);
        let mut host_last_link = Vec::with_capacity(n_hosts);
        for (h, &v) in host_node.iter().enumerate() {
            let ins = &in_links[in_start[v as usize] as usize..in_start[v as usize + 1] as usize];
            if ins.is_empty() {
                return Err(invalid(format!("graph topology: host {h} (node {v}) has no incoming link")));
            }
            if out_start[v as usize] == out_start[v as usize + 1] {
                return Err(invalid(format!("graph topology: host {h} (node {v}) has no outgoing link")));
            }
            let (target, last) = if ins.len() == 1 && !is_host[link_from[ins[0] as usize] as usize] {
                (link_from[ins[0] as usize], ins[0])
            } else {
                (v, u32::MAX)
            };
            if table_of_node[target as usize] == u32::MAX {
                table_of_node[target as usize] = table_target.len() as u32;
                table_target.push(target);
            }
            host_table.push(table_of_node[target as usize]);
            host_last_link.push(last);
        }
        let cells = table_target.len().checked_mul(n_nodes).unwrap_or(usize::MAX);
        if cells.saturating_mul(16) > MAX_TABLE_BYTES {
            return Err(invalid(format!(
                "graph topology: routing tables for {} destinations x {n_nodes} nodes need {} MB, above the limit of {} MB",
                table_target.len(),
                cells.saturating_mul(16) >> 20,
                MAX_TABLE_BYTES >> 20
            )));
        }
        let mut dist = vec![u64::MAX; cells];
        let mut count = vec![0u64; cells];
        let mut heap = std::collections::BinaryHeap::new();
        let mut order = Vec::with_capacity(n_nodes);
        for (t, &target) in table_target.iter().enumerate() {
            let d = &mut dist[t * n_nodes..(t + 1) * n_nodes];
            let c = &mut count[t * n_nodes..(t + 1) * n_nodes];
            // Dijkstra on the reversed links from the target; hosts other than the target
            // are reached (as sources) but never expanded (they do not forward).
            d[target as usize] = 0;
            heap.push(std::cmp::Reverse((0u64, target)));
            order.clear();
            while let Some(std::cmp::Reverse((du, u))) = heap.pop() {
                if du > d[u as usize] {
                    continue;
                }
                order.push(u);
                if is_host[u as usize] && u != target {
                    continue;
                }
                for &l in &in_links[in_start[u as usize] as usize..in_start[u as usize + 1] as usize] {
                    let v = link_from[l as usize] as usize;
                    let nd = du + link_weight[l as usize] as u64;
                    if nd < d[v] {
                        d[v] = nd;
                        heap.push(std::cmp::Reverse((nd, v as u32)));
                    }
                }
            }
            // Path counts in order of distance (a node's count sums its successors').
            c[target as usize] = 1;
            for &v in order.iter().skip(1) {
                let mut sum = 0u64;
                for &l in &out_links[out_start[v as usize] as usize..out_start[v as usize + 1] as usize] {
                    let u = link_to[l as usize] as usize;
                    if (u == target as usize || !is_host[u]) && d[u] != u64::MAX && d[u] + link_weight[l as usize] as u64 == d[v as usize] {
                        sum = sum.checked_add(c[u]).ok_or_else(|| {
                            invalid(format!("graph topology: more than 2^64 equal-cost paths from node {v} to node {target}"))
                        })?;
                    }
                }
                c[v as usize] = sum;
            }
        }
        let g = GraphRoutes {
            n_nodes,
            link_from,
            link_to,
            link_weight,
            host_node,
            link_names,
            any_link_delay: link_delay_s.iter().any(|&d| d != 0.0),
            link_delay_s,
            out_start,
            out_links,
            is_host,
            host_table,
            host_last_link,
            dist,
            count,
            table_target,
        };
        // Every host reaches every other host.
        for s in 0..n_hosts {
            for (t, &target) in g.table_target.iter().enumerate() {
                if g.count[t * n_nodes + g.host_node[s] as usize] == 0 && g.host_node[s] != target {
                    // a table that serves host s alone (the switch before s: a directed
                    // graph's way back to s need not pass it) is no host s must reach
                    let Some(d) = (0..n_hosts).find(|&d| g.host_table[d] as usize == t && d != s) else { continue };
                    return Err(invalid(format!(
                        "graph topology: no path from host {s} (node {}) to host {d} (node {}) through switches",
                        g.host_node[s], g.host_node[d]
                    )));
                }
            }
        }
        Ok(g)
    }

    pub fn n_hosts(&self) -> usize {
        self.host_node.len()
    }

    pub fn n_links(&self) -> usize {
        self.link_from.len()
    }

    /// The number of equal-cost shortest paths from host src to host dst.
    pub fn n_paths(&self, src: usize, dst: usize) -> u64 {
        let t = self.host_table[dst] as usize;
        self.count[t * self.n_nodes + self.host_node[src] as usize]
    }

    /// Appends the links of path number `r % n_paths(src, dst)` from host src to host dst
    /// to `out` and returns that path number.
    pub fn path(&self, r: u64, src: usize, dst: usize, out: &mut Vec<u32>) -> u64 {
        let t = self.host_table[dst] as usize;
        let base = t * self.n_nodes;
        let target = self.table_target[t] as usize;
        let (d, c) = (&self.dist[base..base + self.n_nodes], &self.count[base..base + self.n_nodes]);
        let mut v = self.host_node[src] as usize;
        let n = c[v];
        let chosen = r % n;
        let mut r = chosen;
        while v != target {
            let mut next = None;
            for &l in &self.out_links[self.out_start[v] as usize..self.out_start[v + 1] as usize] {
                let u = self.link_to[l as usize] as usize;
                if (u == target || !self.is_host[u]) && d[u] != u64::MAX && d[u] + self.link_weight[l as usize] as u64 == d[v] {
                    if r < c[u] {
                        next = Some((l, u));
                        break;
                    }
                    r -= c[u];
                }
            }
            // The counts sum to c[v] over these links, so one always holds r.
            let (l, u) = next.expect("path counts are consistent");
            out.push(l);
            v = u;
        }
        let last = self.host_last_link[dst];
        if last != u32::MAX {
            out.push(last);
        }
        chosen
    }

    /// The links from node a to node b, in link order: none, one, or several (parallel
    /// links, as a networkx multigraph makes them).
    pub fn links_between(&self, a: usize, b: usize) -> impl Iterator<Item = u32> + '_ {
        let outs: &[u32] = if a < self.n_nodes { &self.out_links[self.out_start[a] as usize..self.out_start[a + 1] as usize] } else { &[] };
        outs.iter().copied().filter(move |&l| self.link_to[l as usize] as usize == b)
    }

    /// Appends to `out` the links of a route from host src to host dst given as its nodes
    /// (`nodes[0]` src's node, the last dst's node), or says what is wrong with it: fewer
    /// than two nodes, a node that does not exist, the wrong first or last node, a host in
    /// the middle (hosts never forward), a node visited twice (a loop), two consecutive
    /// nodes with no link from the first to the second, or with several (parallel links:
    /// the nodes cannot say which one the route takes, so such a route is refused, never
    /// resolved to one of them). Nodes are named `node <index>` in the messages (the
    /// Python side puts the labels in). `out` is unchanged on error.
    pub fn route_links(&self, src: usize, dst: usize, nodes: &[u32], out: &mut Vec<u32>) -> std::result::Result<(), String> {
        if src >= self.n_hosts() || dst >= self.n_hosts() || src == dst {
            return Err(format!("hosts {src} -> {dst}: not two different hosts of the graph's {}", self.n_hosts()));
        }
        if nodes.len() < 2 {
            return Err(format!("a route names at least two nodes (the source and the destination host), got {}", nodes.len()));
        }
        if let Some((i, &v)) = nodes.iter().enumerate().find(|&(_, &v)| v as usize >= self.n_nodes) {
            return Err(format!("position {i} is node index {v}, but the graph has {} nodes", self.n_nodes));
        }
        let (first, last) = (nodes[0], nodes[nodes.len() - 1]);
        if first != self.host_node[src] {
            return Err(format!("starts at node {first}, not at the flow's source host {src} (node {})", self.host_node[src]));
        }
        if last != self.host_node[dst] {
            return Err(format!("ends at node {last}, not at the flow's destination host {dst} (node {})", self.host_node[dst]));
        }
        for (i, &v) in nodes.iter().enumerate().take(nodes.len() - 1).skip(1) {
            if self.is_host[v as usize] {
                let h = self.host_node.iter().position(|&x| x == v).unwrap_or(usize::MAX);
                return Err(format!("node {v} (position {i}) is host {h}, and hosts do not forward: a route passes through switches only"));
            }
        }
        let mut seen = std::collections::HashMap::with_capacity(nodes.len());
        for (i, &v) in nodes.iter().enumerate() {
            if let Some(j) = seen.insert(v, i) {
                return Err(format!("node {v} appears at positions {j} and {i}: a route visits each node once (no loops)"));
            }
        }
        let start = out.len();
        for (i, w) in nodes.windows(2).enumerate() {
            let mut links = self.links_between(w[0] as usize, w[1] as usize);
            let first = links.next();
            let more = links.count();
            match first {
                Some(l) if more == 0 => out.push(l),
                _ => {
                    out.truncate(start);
                    return Err(if first.is_none() {
                        format!(
                            "no link from node {} to node {} (positions {i} and {}): consecutive nodes must be joined by a link in that direction",
                            w[0],
                            w[1],
                            i + 1
                        )
                    } else {
                        format!(
                            "{} parallel links from node {} to node {} (positions {i} and {}): a route given as nodes cannot say which one it \
                             takes, so routes are pinned only where consecutive nodes are joined by one link in that direction",
                            more + 1,
                            w[0],
                            w[1],
                            i + 1
                        )
                    });
                }
            }
        }
        Ok(())
    }

    /// If `links` is one of the equal-cost shortest paths from host src to host dst, its
    /// number as `path` numbers them (`path(r, src, dst)` gives these links for that `r`);
    /// None for any other sequence of links.
    pub fn path_number(&self, src: usize, dst: usize, links: &[u32]) -> Option<u64> {
        if src >= self.n_hosts() || dst >= self.n_hosts() || src == dst {
            return None;
        }
        let t = self.host_table[dst] as usize;
        let base = t * self.n_nodes;
        let target = self.table_target[t] as usize;
        let (d, c) = (&self.dist[base..base + self.n_nodes], &self.count[base..base + self.n_nodes]);
        let mut v = self.host_node[src] as usize;
        let mut r = 0u64;
        let mut k = 0;
        while v != target {
            let &want = links.get(k)?;
            k += 1;
            let mut next = None;
            for &l in &self.out_links[self.out_start[v] as usize..self.out_start[v + 1] as usize] {
                let u = self.link_to[l as usize] as usize;
                if (u == target || !self.is_host[u]) && d[u] != u64::MAX && d[u] + self.link_weight[l as usize] as u64 == d[v] {
                    if l == want {
                        next = Some(u);
                        break;
                    }
                    r += c[u];
                }
            }
            v = next?;
        }
        let last = self.host_last_link[dst];
        if last != u32::MAX {
            if links.get(k) != Some(&last) {
                return None;
            }
            k += 1;
        }
        (k == links.len()).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|l| format!("l{l}")).collect()
    }

    /// Two hosts (0, 1) joined by two switches (2, 3) in parallel: two equal paths.
    fn diamond() -> GraphRoutes {
        // 0->2, 2->1, 0->3, 3->1 and reverses
        let from = vec![0, 2, 0, 3, 2, 1, 3, 1];
        let to = vec![2, 1, 3, 1, 0, 2, 0, 3];
        GraphRoutes::new(4, from, to, vec![1; 8], vec![0, 1], names(8), vec![0.0; 8]).unwrap()
    }

    #[test]
    fn diamond_has_two_paths() {
        let g = diamond();
        assert_eq!(g.n_paths(0, 1), 2);
        let mut p = Vec::new();
        assert_eq!(g.path(0, 0, 1, &mut p), 0);
        assert_eq!(p, vec![0, 1]);
        p.clear();
        assert_eq!(g.path(3, 0, 1, &mut p), 1);
        assert_eq!(p, vec![2, 3]);
        p.clear();
        g.path(1, 1, 0, &mut p);
        assert_eq!(p, vec![7, 6]);
    }

    #[test]
    fn weights_pick_shortest() {
        let g = GraphRoutes::new(4, vec![0, 2, 0, 3, 2, 1, 3, 1], vec![2, 1, 3, 1, 0, 2, 0, 3], vec![1, 1, 1, 2, 1, 1, 1, 1], vec![0, 1], names(8), vec![0.0; 8]).unwrap();
        assert_eq!(g.n_paths(0, 1), 1);
        let mut p = Vec::new();
        g.path(7, 0, 1, &mut p);
        assert_eq!(p, vec![0, 1]);
    }

    #[test]
    fn hosts_do_not_forward() {
        // 0 - 1 - 2 in a line, all hosts: 0 cannot reach 2 except through host 1.
        let e = GraphRoutes::new(3, vec![0, 1, 1, 2], vec![1, 0, 2, 1], vec![1; 4], vec![0, 1, 2], names(4), vec![0.0; 4]).unwrap_err();
        assert!(e.to_string().contains("no path from host 0 (node 0) to host 2 (node 2)"), "{e}");
    }

    #[test]
    fn bad_graphs_rejected() {
        let e = GraphRoutes::new(2, vec![0, 1], vec![1, 0], vec![1; 2], vec![0, 0], names(2), vec![0.0; 2]).unwrap_err();
        assert!(e.to_string().contains("listed as host 0 and host 1"), "{e}");
        let e = GraphRoutes::new(2, vec![0, 1], vec![1, 1], vec![1; 2], vec![0, 1], names(2), vec![0.0; 2]).unwrap_err();
        assert!(e.to_string().contains("self-loop"), "{e}");
        let e = GraphRoutes::new(2, vec![0, 1], vec![1, 0], vec![1, 0], vec![0, 1], names(2), vec![0.0; 2]).unwrap_err();
        assert!(e.to_string().contains("weight 0"), "{e}");
        let e = GraphRoutes::new(3, vec![0, 2], vec![2, 0], vec![1; 2], vec![0, 1], names(2), vec![0.0; 2]).unwrap_err();
        assert!(e.to_string().contains("host 1 (node 1) has no incoming link"), "{e}");
    }

    /// Hosts 0 and 1, each on its own switch (2, 3); four middle switches 4..8: four
    /// equal-cost paths between the hosts.
    fn four_middle_switches() -> GraphRoutes {
        let (mut from, mut to) = (vec![0, 2, 1, 3], vec![2, 0, 3, 1]);
        for m in 4..8 {
            from.extend([2, m, 3, m]);
            to.extend([m, 2, m, 3]);
        }
        let n = from.len();
        GraphRoutes::new(8, from, to, vec![1; n], vec![0, 1], names(n), vec![0.0; n]).unwrap()
    }

    #[test]
    fn uniform_over_paths() {
        let g = four_middle_switches();
        assert_eq!(g.n_paths(0, 1), 4);
        let mut seen = std::collections::BTreeSet::new();
        for r in 0..4 {
            let mut p = Vec::new();
            g.path(r, 0, 1, &mut p);
            assert_eq!(p.len(), 4);
            assert_eq!(p[0], 0);
            assert_eq!(*p.last().unwrap(), 3);
            seen.insert(p);
        }
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn path_number_inverts_path() {
        // path(r) has number r
        let g = four_middle_switches();
        for r in 0..4 {
            let mut p = Vec::new();
            g.path(r, 0, 1, &mut p);
            assert_eq!(g.path_number(0, 1, &p), Some(r));
            let mut q = Vec::new();
            g.path(r, 1, 0, &mut q);
            assert_eq!(g.path_number(1, 0, &q), Some(r));
        }
        // Not a path from 0 to 1: cut short, too long, through no shortest hop.
        let mut p = Vec::new();
        g.path(2, 0, 1, &mut p);
        assert_eq!(g.path_number(0, 1, &p[..3]), None);
        let mut longer = p.clone();
        longer.push(p[0]);
        assert_eq!(g.path_number(0, 1, &longer), None);
        assert_eq!(g.path_number(1, 0, &p), None);
        // The route through nodes is the same links.
        let mut via = Vec::new();
        g.route_links(0, 1, &[0, 2, 6, 3, 1], &mut via).unwrap();
        assert_eq!(g.path_number(0, 1, &via), Some(2));
    }

    #[test]
    fn route_links_checks() {
        // Hosts 0, 1, 2 on switches 3, 4, 5 in a line 3 - 4 - 5, and a one-way shortcut 3 -> 5.
        let mut from = vec![0, 3, 1, 4, 2, 5, 3, 4, 4, 5, 3];
        let mut to = vec![3, 0, 4, 1, 5, 2, 4, 3, 5, 4, 5];
        let n = from.len();
        let g = GraphRoutes::new(6, std::mem::take(&mut from), std::mem::take(&mut to), vec![1; n], vec![0, 1, 2], names(n), vec![0.0; n])
            .unwrap();
        let mut out = vec![99];
        g.route_links(0, 2, &[0, 3, 4, 5, 2], &mut out).unwrap();
        assert_eq!(out, vec![99, 0, 6, 8, 5]);
        let err = |nodes: &[u32], s: usize, d: usize| {
            let mut o = Vec::new();
            let e = g.route_links(s, d, nodes, &mut o).unwrap_err();
            assert!(o.is_empty());
            e
        };
        assert!(err(&[0], 0, 2).contains("at least two nodes"));
        assert!(err(&[0, 3, 9, 2], 0, 2).contains("position 2 is node index 9"));
        assert!(err(&[3, 5, 2], 0, 2).contains("starts at node 3, not at the flow's source host 0 (node 0)"));
        assert!(err(&[0, 3, 4], 0, 2).contains("ends at node 4, not at the flow's destination host 2 (node 2)"));
        assert!(err(&[0, 3, 4, 1, 4, 5, 2], 0, 2).contains("node 1 (position 3) is host 1, and hosts do not forward"));
        assert!(err(&[0, 3, 4, 3, 5, 2], 0, 2).contains("node 3 appears at positions 1 and 3"));
        // The shortcut runs one way only.
        assert!(err(&[2, 5, 3, 0], 2, 0).contains("no link from node 5 to node 3 (positions 1 and 2)"));
        assert!(err(&[0, 3, 5, 2], 1, 2).contains("starts at node 0"));
        assert!(err(&[0, 3, 5, 2], 0, 0).contains("not two different hosts"));
        // A shortest path (the shortcut), and a longer one that is none.
        let mut o = Vec::new();
        g.route_links(0, 2, &[0, 3, 5, 2], &mut o).unwrap();
        assert_eq!(g.path_number(0, 2, &o), Some(0));
        o.clear();
        g.route_links(0, 2, &[0, 3, 4, 5, 2], &mut o).unwrap();
        assert_eq!(g.path_number(0, 2, &o), None);
    }

    #[test]
    fn route_links_refuses_parallel_links() {
        // Hosts 0, 1 on switches 2, 3, which two parallel links join each way (links 4, 5
        // from 2 to 3; 6, 7 back) and a third switch 4 another way round.
        let from = vec![0, 2, 1, 3, 2, 2, 3, 3, 2, 4, 3, 4];
        let to = vec![2, 0, 3, 1, 3, 3, 2, 2, 4, 2, 4, 3];
        let n = from.len();
        let g = GraphRoutes::new(5, from, to, vec![1; n], vec![0, 1], names(n), vec![0.0; n]).unwrap();
        assert_eq!(g.links_between(2, 3).collect::<Vec<_>>(), vec![4, 5]);
        assert_eq!(g.links_between(2, 4).collect::<Vec<_>>(), vec![8]);
        assert_eq!(g.links_between(0, 3).count(), 0);
        assert_eq!(g.links_between(9, 3).count(), 0);
        let mut o = vec![7];
        let e = g.route_links(0, 1, &[0, 2, 3, 1], &mut o).unwrap_err();
        assert_eq!(o, vec![7]);
        assert!(e.contains("2 parallel links from node 2 to node 3 (positions 1 and 2)"), "{e}");
        assert!(e.contains("cannot say which one"), "{e}");
        // Around them: one link per hop, a route of its own.
        g.route_links(0, 1, &[0, 2, 4, 3, 1], &mut o).unwrap();
        assert_eq!(o, vec![7, 0, 8, 11, 3]);
    }
}
