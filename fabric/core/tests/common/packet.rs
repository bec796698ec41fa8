//! The packet model's test helpers.
use fabric_core::{FlowSpec, PacketConfig, PacketSimulator, Topology};

/// The packet-level simulation of `flows` on `topo` under `c`, run to its end.
pub fn run(topo: &Topology, flows: &[FlowSpec], c: PacketConfig) -> PacketSimulator {
    let mut s = PacketSimulator::new(topo, flows, c).unwrap();
    s.run().unwrap();
    s
}
