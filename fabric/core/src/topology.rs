//! Topologies: a set of unidirectional links with capacities, and a path (list of
//! links) for every flow. Rates are in bytes per second throughout the core.
use crate::error::{Result, SimError};
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
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub kind: TopologyKind,
    pub n_hosts: usize,
    /// Capacity of each link in bytes/s.
    pub capacity: Vec<f64>,
    pub names: Vec<String>,
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

impl Topology {
    /// Big switch: link `h` is host h's uplink, link `n + h` its downlink.
    /// `host_gbps` has one rate per host (heterogeneous rates allowed).
    pub fn big_switch(host_gbps: &[f64]) -> Result<Self> {
        let n = host_gbps.len();
        if n < 2 {
            return Err(SimError::InvalidConfig(format!("BigSwitch needs at least 2 hosts, got {n}")));
        }
        check_rates(host_gbps, "BigSwitch")?;
        let mut capacity = Vec::with_capacity(2 * n);
        let mut names = Vec::with_capacity(2 * n);
        for (h, &g) in host_gbps.iter().enumerate() {
            capacity.push(gbps_to_bytes_per_s(g));
            names.push(format!("up{h}"));
        }
        for (h, &g) in host_gbps.iter().enumerate() {
            capacity.push(gbps_to_bytes_per_s(g));
            names.push(format!("down{h}"));
        }
        Ok(Topology { kind: TopologyKind::BigSwitch, n_hosts: n, capacity, names })
    }

    /// Leaf-spine: links are host uplinks (0..n), host downlinks (n..2n), ToR->spine
    /// uplinks (2n + tor*spines + s) and spine->ToR downlinks (2n + T*S + s*tors + tor).
    /// Host h sits under ToR h / hosts_per_tor. The spine of an inter-ToR flow is chosen
    /// per flow by a seeded hash of (flow id, src, dst): ECMP.
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
        let n = tors * hosts_per_tor;
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
        let mut capacity = Vec::new();
        let mut names = Vec::new();
        for (h, &g) in host_gbps.iter().enumerate() {
            capacity.push(gbps_to_bytes_per_s(g));
            names.push(format!("up{h}"));
        }
        for (h, &g) in host_gbps.iter().enumerate() {
            capacity.push(gbps_to_bytes_per_s(g));
            names.push(format!("down{h}"));
        }
        for t in 0..tors {
            for s in 0..spines {
                capacity.push(gbps_to_bytes_per_s(core_gbps));
                names.push(format!("tor{t}-spine{s}"));
            }
        }
        for s in 0..spines {
            for t in 0..tors {
                capacity.push(gbps_to_bytes_per_s(core_gbps));
                names.push(format!("spine{s}-tor{t}"));
            }
        }
        Ok(Topology {
            kind: TopologyKind::LeafSpine { tors, hosts_per_tor, spines, ecmp_seed },
            n_hosts: n,
            capacity,
            names,
        })
    }

    pub fn n_links(&self) -> usize {
        self.capacity.len()
    }

    /// Number of hops a flow from src to dst traverses (links on its path).
    /// Appends the links of the path of flow `flow_id` to `out` and returns an id of
    /// the path (flows with equal path ids use exactly the same links).
    pub fn path(&self, flow_id: u64, src: usize, dst: usize, out: &mut Vec<u32>) -> u64 {
        let n = self.n_hosts;
        match self.kind {
            TopologyKind::BigSwitch => {
                out.push(src as u32);
                out.push((n + dst) as u32);
                (src * n + dst) as u64
            }
            TopologyKind::LeafSpine { tors, hosts_per_tor, spines, ecmp_seed } => {
                let ts = src / hosts_per_tor;
                let td = dst / hosts_per_tor;
                out.push(src as u32);
                if ts == td {
                    out.push((n + dst) as u32);
                    ((src * n + dst) * (spines + 1)) as u64
                } else {
                    let h = mix64(
                        ecmp_seed
                            ^ mix64(flow_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((src as u64) << 32 | dst as u64)),
                    );
                    let s = (h % spines as u64) as usize;
                    out.push((2 * n + ts * spines + s) as u32);
                    out.push((2 * n + tors * spines + s * tors + td) as u32);
                    out.push((n + dst) as u32);
                    ((src * n + dst) * (spines + 1) + 1 + s) as u64
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
        assert_eq!(t.names[7], "down3");
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
            assert_eq!(t.names[p[2] as usize], format!("spine{s}-tor1"));
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
}
