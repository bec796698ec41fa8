//! Topologies: a set of unidirectional links with capacities, and a path (list of
//! links) for every flow. Rates are in bytes per second throughout the core.
use std::sync::Arc;

use crate::error::{Result, SimError};
pub use crate::graph::GraphRoutes;
use crate::rng::mix64;

/// Gigabits per second to bytes per second.
pub fn gbps_to_bytes_per_s(gbps: f64) -> f64 {
    gbps * 1e9 / 8.0
}

#[derive(Debug, Clone, PartialEq)]
pub enum TopologyKind {
    /// Every host has one uplink into and one downlink out of a non-blocking switch.
    BigSwitch,
    /// Two-tier Clos: hosts under ToRs, every ToR connected to every spine.
    LeafSpine { tors: usize, hosts_per_tor: usize, spines: usize, ecmp_seed: u64 },
    /// Any graph (`GraphRoutes`): a flow takes one of the equal-cost shortest paths from
    /// its source host to its destination host, chosen by the same seeded per-flow hash as
    /// the leaf-spine's spine (ECMP), unless `pinned` gives the flow a route of its own
    /// (`Topology::with_pinned`: a trace's `path` column).
    Graph { routes: Arc<GraphRoutes>, ecmp_seed: u64, pinned: Option<Arc<PinnedRoutes>> },
}

/// The most hosts a topology may have (2^24 = 16,777,216). Above it, the constructors
/// return `SimError::InvalidConfig` instead of trying to allocate the per-host and
/// per-link state (a simulator keeps about 100 bytes per link).
pub const MAX_HOSTS: usize = 1 << 24;
/// The most links a topology may have (2^26 = 67,108,864: two per host, and two per
/// ToR-spine pair of a leaf-spine). Link indices are 32-bit in the simulator.
pub const MAX_LINKS: usize = 1 << 26;

#[derive(Debug, Clone)]
pub struct Topology {
    pub kind: TopologyKind,
    pub n_hosts: usize,
    /// Capacity of each link in bytes/s.
    pub capacity: Vec<f64>,
}

fn check_rates(host_gbps: &[f64], what: &str) -> Result<()> {
    for (h, &g) in host_gbps.iter().enumerate() {
        if !(g.is_finite() && g > 0.0) {
            return Err(SimError::InvalidConfig(format!(
                "{what}: host {h} link rate must be a positive finite number of Gbps, got {g}"
            )));
        }
    }
    Ok(())
}

fn check_hosts(n: usize, what: &str) -> Result<()> {
    if n > MAX_HOSTS {
        return Err(SimError::InvalidConfig(format!(
            "{what}: {n} hosts, above the limit of {MAX_HOSTS} (2^24, fabric_core::topology::MAX_HOSTS)"
        )));
    }
    Ok(())
}

/// An empty vector with room for `n` link capacities, or an error if the memory is not there.
fn alloc_links(n: usize) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| SimError::OutOfMemory(format!("the capacities of {n} links ({} bytes)", 8 * n)))?;
    Ok(v)
}

/// The per-flow ECMP hash of (flow id, src, dst), seeded: the leaf-spine's spine and a
/// graph's path index are this value modulo the number of choices.
pub fn ecmp_hash(ecmp_seed: u64, flow_id: u64, src: usize, dst: usize) -> u64 {
    mix64(ecmp_seed ^ mix64(flow_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((src as u64) << 32 | dst as u64)))
}

/// The id of path number `r` from host src to host dst of a graph of `n` hosts: below
/// 2^112 (src * n + dst < 2^48 above the 64 bits of `r`), so the top bit is free for
/// routes that are no equal-cost shortest path (`PinnedRoutes`).
#[inline]
fn graph_path_id(n: usize, src: usize, dst: usize, r: u64) -> u128 {
    ((src * n + dst) as u128) << 64 | r as u128
}

/// The id bit of a pinned route that is none of the equal-cost shortest paths: such ids
/// are `OFF_ECMP | k`, k counting the distinct such routes of a trace, and never equal
/// an ECMP path's id (`graph_path_id` stays below 2^112).
const OFF_ECMP: u128 = 1 << 127;

/// Routes pinned to some flows of one trace (flow i is trace row i) on a graph: the
/// trace's `path` column, checked and turned into links once. A flow with a pinned route
/// sends its data over exactly those links in every model (the packet model's ACKs take
/// the ECMP path back, as every flow's do); its path id is the ECMP path's id when the
/// route is one of the equal-cost shortest paths (so pinning a flow to the path ECMP
/// would choose changes nothing, bit for bit), else an id of its own that no ECMP path
/// has, shared by the flows pinned to the same links.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedRoutes {
    /// The routing tables the routes were checked against.
    routes: Arc<GraphRoutes>,
    /// Per flow: (src, dst) as given (checked against the flows by `check_pinned`).
    ends: Vec<(u32, u32)>,
    /// Flow i's route: `links[off[i]..off[i + 1]]` (empty: not pinned, ECMP).
    off: Vec<u32>,
    links: Vec<u32>,
    /// Per flow: the path id of its route (0 when not pinned).
    ids: Vec<u128>,
}

impl PinnedRoutes {
    /// Checks and converts pinned routes given as nodes: flow i from host `src[i]` to
    /// host `dst[i]` takes the route through nodes `nodes[node_off[i]..node_off[i + 1]]`
    /// (empty: not pinned). Each route must start at src's node and end at dst's, pass
    /// through switches only, visit no node twice and join consecutive nodes by exactly one
    /// link in that direction (parallel links are refused: nodes cannot say which one); an
    /// error names the flow's row (`SimError::InvalidFlow`, column `path`).
    pub fn new(routes: Arc<GraphRoutes>, src: &[usize], dst: &[usize], node_off: &[usize], nodes: &[u32]) -> Result<Self> {
        let n = src.len();
        if dst.len() != n || node_off.len() != n + 1 {
            return Err(SimError::InvalidConfig(format!(
                "pinned routes: {n} sources, {} destinations and {} route offsets (expected {})",
                dst.len(),
                node_off.len(),
                n + 1
            )));
        }
        if node_off[0] != 0 || node_off.windows(2).any(|w| w[0] > w[1]) || node_off[n] != nodes.len() {
            return Err(SimError::InvalidConfig(format!(
                "pinned routes: route offsets must rise from 0 to the {} nodes given",
                nodes.len()
            )));
        }
        if nodes.len() >= u32::MAX as usize {
            return Err(SimError::InvalidConfig(format!("pinned routes: {} nodes in all, at most 2^32 - 2", nodes.len())));
        }
        let hosts = routes.n_hosts();
        let mut ends = Vec::with_capacity(n);
        let mut off = Vec::with_capacity(n + 1);
        let mut links = Vec::new();
        let mut ids = Vec::with_capacity(n);
        let mut own: std::collections::HashMap<Vec<u32>, u128> = std::collections::HashMap::new();
        off.push(0u32);
        for i in 0..n {
            let (s, d) = (src[i], dst[i]);
            let route = &nodes[node_off[i]..node_off[i + 1]];
            if route.is_empty() {
                ends.push((s.min(u32::MAX as usize) as u32, d.min(u32::MAX as usize) as u32));
                off.push(links.len() as u32);
                ids.push(0);
                continue;
            }
            if s >= hosts || d >= hosts || s == d {
                return Err(SimError::InvalidFlow {
                    row: i,
                    field: "path",
                    message: format!("a route from host {s} to host {d}: not two different hosts of the graph's {hosts}"),
                });
            }
            let a = links.len();
            routes.route_links(s, d, route, &mut links).map_err(|message| SimError::InvalidFlow { row: i, field: "path", message })?;
            if links.len() >= u32::MAX as usize {
                return Err(SimError::InvalidConfig("pinned routes cross 2^32 - 1 links in all".into()));
            }
            let id = match routes.path_number(s, d, &links[a..]) {
                Some(r) => graph_path_id(hosts, s, d, r),
                None => {
                    let k = own.len() as u128;
                    *own.entry(links[a..].to_vec()).or_insert(OFF_ECMP | k)
                }
            };
            ends.push((s as u32, d as u32));
            off.push(links.len() as u32);
            ids.push(id);
        }
        Ok(PinnedRoutes { routes, ends, off, links, ids })
    }

    /// The number of flows (pinned or not) the routes were made for.
    pub fn n_flows(&self) -> usize {
        self.ends.len()
    }

    /// Whether flow i has a pinned route.
    pub fn is_pinned(&self, i: usize) -> bool {
        i < self.n_flows() && self.off[i] != self.off[i + 1]
    }

    /// The pinned links of flow i (empty if not pinned).
    pub fn links(&self, i: usize) -> &[u32] {
        if i < self.n_flows() { &self.links[self.off[i] as usize..self.off[i + 1] as usize] } else { &[] }
    }

    /// Appends flow `flow_id`'s pinned route and returns its id; None when the flow is not
    /// pinned or src and dst are not the route's (the way back).
    fn route(&self, flow_id: u64, src: usize, dst: usize, out: &mut Vec<u32>) -> Option<u128> {
        let i = usize::try_from(flow_id).ok().filter(|&i| self.is_pinned(i))?;
        if self.ends[i] != (src as u32, dst as u32) {
            return None;
        }
        out.extend_from_slice(self.links(i));
        Some(self.ids[i])
    }
}

impl Topology {
    /// Big switch: link `h` is host h's uplink, link `n + h` its downlink.
    /// `host_gbps` has one rate per host (heterogeneous rates allowed), at most `MAX_HOSTS`.
    pub fn big_switch(host_gbps: &[f64]) -> Result<Self> {
        let n = host_gbps.len();
        if n < 2 {
            return Err(SimError::InvalidConfig(format!("BigSwitch needs at least 2 hosts, got {n}")));
        }
        check_hosts(n, "BigSwitch")?;
        check_rates(host_gbps, "BigSwitch")?;
        let mut capacity = alloc_links(2 * n)?;
        capacity.extend(host_gbps.iter().map(|&g| gbps_to_bytes_per_s(g)));
        capacity.extend(host_gbps.iter().map(|&g| gbps_to_bytes_per_s(g)));
        Ok(Topology { kind: TopologyKind::BigSwitch, n_hosts: n, capacity })
    }

    /// Leaf-spine: links are host uplinks (0..n), host downlinks (n..2n), ToR->spine
    /// uplinks (2n + tor*spines + s) and spine->ToR downlinks (2n + T*S + s*tors + tor).
    /// Host h sits under ToR h / hosts_per_tor. The spine of an inter-ToR flow is chosen
    /// per flow by a seeded hash of (flow id, src, dst): ECMP. At most `MAX_HOSTS` hosts
    /// (tors * hosts_per_tor) and `MAX_LINKS` links (2 * hosts + 2 * tors * spines).
    pub fn leaf_spine(
        tors: usize,
        hosts_per_tor: usize,
        spines: usize,
        host_gbps: &[f64],
        core_gbps: f64,
        ecmp_seed: u64,
    ) -> Result<Self> {
        if tors < 1 || hosts_per_tor < 1 || spines < 1 {
            return Err(SimError::InvalidConfig(format!(
                "LeafSpine needs tors, hosts_per_tor and spines >= 1, got {tors}, {hosts_per_tor}, {spines}"
            )));
        }
        let n = tors.checked_mul(hosts_per_tor).unwrap_or(usize::MAX);
        check_hosts(n, &format!("LeafSpine ({tors} ToRs x {hosts_per_tor} hosts per ToR)"))?;
        let n_links = tors
            .checked_mul(spines)
            .and_then(|c| c.checked_mul(2))
            .and_then(|c| c.checked_add(2 * n))
            .filter(|&l| l <= MAX_LINKS)
            .ok_or_else(|| {
                SimError::InvalidConfig(format!(
                    "LeafSpine: {tors} ToRs x {spines} spines and {n} hosts make more than {MAX_LINKS} links \
                     (2 * hosts + 2 * ToRs * spines; fabric_core::topology::MAX_LINKS)"
                ))
            })?;
        if n < 2 {
            return Err(SimError::InvalidConfig("LeafSpine needs at least 2 hosts".into()));
        }
        if host_gbps.len() != n {
            return Err(SimError::InvalidConfig(format!(
                "LeafSpine: {} host rates given for {n} hosts",
                host_gbps.len()
            )));
        }
        check_rates(host_gbps, "LeafSpine")?;
        if !(core_gbps.is_finite() && core_gbps > 0.0) {
            return Err(SimError::InvalidConfig(format!(
                "LeafSpine: core_gbps must be positive and finite, got {core_gbps}"
            )));
        }
        let mut capacity = alloc_links(n_links)?;
        capacity.extend(host_gbps.iter().map(|&g| gbps_to_bytes_per_s(g)));
        capacity.extend(host_gbps.iter().map(|&g| gbps_to_bytes_per_s(g)));
        capacity.resize(n_links, gbps_to_bytes_per_s(core_gbps));
        Ok(Topology { kind: TopologyKind::LeafSpine { tors, hosts_per_tor, spines, ecmp_seed }, n_hosts: n, capacity })
    }

    /// A graph topology: `routes` (nodes, links, hosts) with a capacity per link in Gbps.
    /// Link l of the topology is link l of the graph.
    pub fn graph(routes: GraphRoutes, link_gbps: &[f64], ecmp_seed: u64) -> Result<Self> {
        Self::graph_shared(Arc::new(routes), link_gbps, ecmp_seed)
    }

    /// `graph` with routing tables shared with other topologies (built once).
    pub fn graph_shared(routes: Arc<GraphRoutes>, link_gbps: &[f64], ecmp_seed: u64) -> Result<Self> {
        let n_links = routes.n_links();
        if link_gbps.len() != n_links {
            return Err(SimError::InvalidConfig(format!(
                "graph topology: {} link rates given for {n_links} links",
                link_gbps.len()
            )));
        }
        if n_links > MAX_LINKS {
            return Err(SimError::InvalidConfig(format!("graph topology: {n_links} links, above the limit of {MAX_LINKS}")));
        }
        check_hosts(routes.n_hosts(), "graph topology")?;
        for (l, &g) in link_gbps.iter().enumerate() {
            if !(g.is_finite() && g > 0.0) {
                return Err(SimError::InvalidConfig(format!(
                    "graph topology: link {l} ({}) rate must be a positive finite number of Gbps, got {g}",
                    routes.link_names[l]
                )));
            }
        }
        let mut capacity = alloc_links(n_links)?;
        capacity.extend(link_gbps.iter().map(|&g| gbps_to_bytes_per_s(g)));
        let n_hosts = routes.n_hosts();
        Ok(Topology { kind: TopologyKind::Graph { routes, ecmp_seed, pinned: None }, n_hosts, capacity })
    }

    /// This graph topology with routes pinned to some flows of one trace (`pinned`, built
    /// on this graph's routing tables): `path` gives a pinned flow its own route. An error
    /// on a big switch or a leaf-spine (their routes are closed-form), and for routes built
    /// on another graph.
    pub fn with_pinned(mut self, pinned: Arc<PinnedRoutes>) -> Result<Self> {
        match self.kind {
            TopologyKind::Graph { ref routes, pinned: ref mut p, .. } => {
                if !Arc::ptr_eq(routes, &pinned.routes) {
                    return Err(SimError::InvalidConfig(
                        "pinned routes built on another graph's routing tables than this topology's".into(),
                    ));
                }
                *p = Some(pinned);
                Ok(self)
            }
            _ => Err(SimError::InvalidConfig(
                "routes can be pinned on a graph topology only (a big switch has one path per host pair, a \
                 leaf-spine's is chosen by ECMP: build it as a graph to pin spines)"
                    .into(),
            )),
        }
    }

    /// The pinned routes, if any (`with_pinned`).
    pub fn pinned(&self) -> Option<&PinnedRoutes> {
        match self.kind {
            TopologyKind::Graph { pinned: Some(ref p), .. } => Some(p),
            _ => None,
        }
    }

    /// Checks that pinned routes (if any) were made for `flows`: as many flows, and each
    /// pinned flow's hosts as the route's. The simulators call it before routing.
    pub fn check_pinned(&self, flows: &[crate::sim::FlowSpec]) -> Result<()> {
        let Some(p) = self.pinned() else { return Ok(()) };
        if p.n_flows() != flows.len() {
            return Err(SimError::InvalidConfig(format!(
                "routes pinned for a trace of {} flows, given {} flows",
                p.n_flows(),
                flows.len()
            )));
        }
        for (i, f) in flows.iter().enumerate() {
            if p.is_pinned(i) && p.ends[i] != (f.src as u32, f.dst as u32) {
                return Err(SimError::InvalidFlow {
                    row: i,
                    field: "path",
                    message: format!(
                        "route pinned from host {} to host {}, but the flow goes from host {} to host {}",
                        p.ends[i].0, p.ends[i].1, f.src, f.dst
                    ),
                });
            }
        }
        Ok(())
    }

    /// The propagation delay of link l of its own, seconds, on top of a run's delay per hop
    /// (a graph's per-link delays; 0 on the big switch and the leaf-spine).
    #[inline]
    pub fn link_delay_s(&self, l: usize) -> f64 {
        match self.kind {
            TopologyKind::Graph { ref routes, .. } => routes.link_delay_s[l],
            _ => 0.0,
        }
    }

    /// Whether some link has a delay of its own (`link_delay_s` is not 0 everywhere; O(1)).
    pub fn has_link_delays(&self) -> bool {
        matches!(self.kind, TopologyKind::Graph { ref routes, .. } if routes.any_link_delay)
    }

    pub fn n_links(&self) -> usize {
        self.capacity.len()
    }

    /// The number of links its kind and host count make (None if inconsistent or above
    /// `MAX_LINKS`): a `Topology` built field by field is checked against it.
    pub fn expected_links(&self) -> Option<usize> {
        let n = self.n_hosts;
        let l = match self.kind {
            TopologyKind::BigSwitch => n.checked_mul(2)?,
            TopologyKind::LeafSpine { tors, hosts_per_tor, spines, .. } => {
                if tors.checked_mul(hosts_per_tor)? != n || spines == 0 {
                    return None;
                }
                tors.checked_mul(spines)?.checked_mul(2)?.checked_add(n.checked_mul(2)?)?
            }
            TopologyKind::Graph { ref routes, .. } => {
                if routes.n_hosts() != n {
                    return None;
                }
                routes.n_links()
            }
        };
        (n >= 2 && l <= MAX_LINKS).then_some(l)
    }

    /// The name of link l: `up{h}`, `down{h}`, `tor{t}-spine{s}` or `spine{s}-tor{t}`;
    /// a graph's own link names.
    pub fn name(&self, l: usize) -> String {
        if let TopologyKind::Graph { ref routes, .. } = self.kind {
            return routes.link_names[l].clone();
        }
        let n = self.n_hosts;
        if l < n {
            return format!("up{l}");
        }
        if l < 2 * n {
            return format!("down{}", l - n);
        }
        match self.kind {
            TopologyKind::LeafSpine { tors, spines, .. } => {
                let k = l - 2 * n;
                if k < tors * spines {
                    format!("tor{}-spine{}", k / spines, k % spines)
                } else {
                    let k = k - tors * spines;
                    format!("spine{}-tor{}", k / tors, k % tors)
                }
            }
            TopologyKind::BigSwitch | TopologyKind::Graph { .. } => format!("link{l}"),
        }
    }

    /// The names of all links, in link order (built on demand: a topology keeps none).
    pub fn names(&self) -> Vec<String> {
        (0..self.n_links()).map(|l| self.name(l)).collect()
    }

    /// Appends the links of the path of flow `flow_id` (its trace row) to `out` and returns
    /// an id of the path: flows with equal path ids use exactly the same links, and on a
    /// graph flows with the same links have equal ids, pinned or not (128 bits, so that no
    /// host and spine counts within the limits make two paths share one). A flow with a
    /// pinned route (`with_pinned`) gets it from its src to its dst; every other call (any
    /// other flow, or the way back from dst to src: the packet model's ACKs) gets the
    /// ECMP path.
    pub fn path(&self, flow_id: u64, src: usize, dst: usize, out: &mut Vec<u32>) -> u128 {
        let seed = match self.kind {
            TopologyKind::Graph { ref pinned, ecmp_seed, .. } => {
                if let Some(id) = pinned.as_ref().and_then(|p| p.route(flow_id, src, dst, out)) {
                    return id;
                }
                ecmp_seed
            }
            TopologyKind::LeafSpine { ecmp_seed, .. } => ecmp_seed,
            TopologyKind::BigSwitch => 0,
        };
        self.path_by_hash(ecmp_hash(seed, flow_id, src, dst), src, dst, out)
    }

    /// The number of equal-cost paths from host src to host dst (the choices of
    /// `path_by_hash`): 1 on a big switch and inside a leaf-spine's rack, the spines
    /// across racks, a graph's count of equal-cost shortest paths.
    pub fn n_paths(&self, src: usize, dst: usize) -> u64 {
        match self.kind {
            TopologyKind::Graph { ref routes, .. } => routes.n_paths(src, dst),
            TopologyKind::BigSwitch => 1,
            TopologyKind::LeafSpine { hosts_per_tor, spines, .. } => {
                if src / hosts_per_tor == dst / hosts_per_tor { 1 } else { spines as u64 }
            }
        }
    }

    /// Appends the links of equal-cost path number `h % n` from host src to host dst (n:
    /// `n_paths(src, dst)`) to `out` and returns its path id (as `path`). `path` is
    /// this with the flow's ECMP hash; the packet model's per-packet load balancing calls
    /// it with a hash of each packet. Pinned routes play no part here.
    pub fn path_by_hash(&self, h: u64, src: usize, dst: usize, out: &mut Vec<u32>) -> u128 {
        let n = self.n_hosts;
        match self.kind {
            TopologyKind::Graph { ref routes, .. } => {
                let r = routes.path(h, src, dst, out);
                graph_path_id(n, src, dst, r)
            }
            TopologyKind::BigSwitch => {
                out.push(src as u32);
                out.push((n + dst) as u32);
                (src * n + dst) as u128
            }
            TopologyKind::LeafSpine { tors, hosts_per_tor, spines, .. } => {
                let ts = src / hosts_per_tor;
                let td = dst / hosts_per_tor;
                out.push(src as u32);
                if ts == td {
                    out.push((n + dst) as u32);
                    (src * n + dst) as u128 * (spines as u128 + 1)
                } else {
                    let s = (h % spines as u64) as usize;
                    out.push((2 * n + ts * spines + s) as u32);
                    out.push((2 * n + tors * spines + s * tors + td) as u32);
                    out.push((n + dst) as u32);
                    (src * n + dst) as u128 * (spines as u128 + 1) + 1 + s as u128
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_switch_links() {
        let t = Topology::big_switch(&[10.0; 4]).unwrap();
        assert_eq!(t.n_links(), 8);
        assert_eq!(t.capacity[0], 1.25e9);
        let mut p = Vec::new();
        t.path(0, 1, 3, &mut p);
        assert_eq!(p, vec![1, 7]);
        assert_eq!(t.name(7), "down3");
        assert_eq!(t.names(), ["up0", "up1", "up2", "up3", "down0", "down1", "down2", "down3"]);
    }

    #[test]
    fn leaf_spine_paths() {
        let t = Topology::leaf_spine(9, 16, 4, &[10.0; 144], 40.0, 1).unwrap();
        assert_eq!(t.n_links(), 2 * 144 + 2 * 36);
        let mut p = Vec::new();
        t.path(5, 0, 1, &mut p); // same ToR
        assert_eq!(p.len(), 2);
        let mut counts = [0usize; 4];
        for id in 0..4000u64 {
            p.clear();
            t.path(id, 0, 20, &mut p);
            assert_eq!(p.len(), 4);
            assert_eq!(p[0], 0);
            assert_eq!(p[3], 144 + 20);
            let s = p[1] as usize - 288; // tor 0
            assert_eq!(t.name(p[2] as usize), format!("spine{s}-tor1"));
            assert_eq!(t.name(p[1] as usize), format!("tor0-spine{s}"));
            counts[s] += 1;
        }
        // ECMP spreads flows over the spines roughly evenly.
        for c in counts {
            assert!(c > 850 && c < 1150, "{counts:?}");
        }
    }

    #[test]
    fn bad_rates_rejected() {
        assert!(Topology::big_switch(&[10.0, 0.0]).is_err());
        assert!(Topology::big_switch(&[10.0]).is_err());
        assert!(Topology::leaf_spine(2, 2, 1, &[10.0; 3], 40.0, 0).is_err());
    }

    #[test]
    fn host_and_link_counts_are_bounded() {
        // One host above the limit: an error, before any per-host allocation.
        let e = Topology::big_switch(&vec![10.0; MAX_HOSTS + 1]).unwrap_err().to_string();
        assert!(e.contains("16777217 hosts, above the limit of 16777216"), "{e}");
        // Products that overflow usize, and core links beyond MAX_LINKS.
        let e = Topology::leaf_spine(usize::MAX / 2, 4, 1, &[10.0; 8], 40.0, 0).unwrap_err().to_string();
        assert!(e.contains("above the limit"), "{e}");
        let e = Topology::leaf_spine(2, 2, usize::MAX / 2, &[10.0; 4], 40.0, 0).unwrap_err().to_string();
        assert!(e.contains("more than 67108864 links"), "{e}");
        let e = Topology::leaf_spine(1 << 13, 2, 1 << 13, &vec![10.0; 1 << 14], 40.0, 0).unwrap_err().to_string();
        assert!(e.contains("more than 67108864 links"), "{e}");
    }
}
