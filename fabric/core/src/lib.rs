//! fabric-core: a fluid, event-driven, flow-level simulator of datacenter fabrics.
//!
//! Pure Rust, no Python. Time is in seconds, sizes in bytes, rates in bytes per second.
pub mod env;
pub mod error;
pub mod fill;
pub mod graph;
pub mod packet;
pub mod rng;
pub mod sched;
pub mod sim;
pub mod topology;
pub mod verify;

pub use env::{check_gather, gather_bursts, gather_bursts_seeded, run_until_ended, BatchBufs, BatchOut, FlowClass, Lane, MaskedAction, Stepped, SwitchBatchOut, SwitchEnv, SwitchEnvConfig, SwitchReward, SwitchVecEnv, TokenBatchOut, TokenEnv, TokenEnvConfig, TokenReward, TokenVecEnv, TokenWorkload, VecEnv};
pub use error::{Result, SimError};
pub use packet::{EcnMarking, FairProjection, LoadBalancing, PacketConfig, PacketSimulator, PacketStats, Transport};
pub use sched::{AdmissionPolicy, GaInner, PiasSharing, Scheduler, PIAS_SHARING_NAMES, SCHEDULER_NAMES};
pub use sim::{AdmissionConfig, AllocatorChoice, FlowSpec, Outcome, RacsParams, SdcParams, SimConfig, Simulator, Stats, Status};
pub use topology::{ecmp_hash, gbps_to_bytes_per_s, GraphRoutes, PinnedRoutes, Topology, TopologyKind};
