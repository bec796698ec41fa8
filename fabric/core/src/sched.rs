//! Scheduler and admission-policy names, their parameters, and which flow
//! information each one reads. The `uses_size` flag is what keeps size-oblivious
//! policies honest: the simulator refuses to run a size-reading policy on flows whose
//! size is hidden (`size_known = false`), and oblivious ones never call the size.
use crate::error::{Result, SimError};

/// Inner policies allowed under the GA transform (aSCC Algorithm 1): they read sizes,
/// but GA only applies them to *complete* flows, whose size a switch does know.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GaInner {
    Srpt,
    Ssdf,
    Lsdf,
}

/// Policies that can redistribute a path's aggregate under `gtcp:<inner>`.
#[derive(Debug, Clone, PartialEq)]
pub enum Scheduler {
    /// First come first served: key = arrival time. Reads: arrival.
    Fifo,
    /// Max-min fair sharing over all links (the TCP ideal). Reads: nothing.
    Ps,
    /// Weighted max-min fair sharing. Reads: weight.
    Wps,
    /// Shortest remaining processing time: key = size - sent. Reads: size, attained.
    Srpt,
    /// GA transform (aSCC): complete flows by the inner policy first, incomplete FIFO.
    /// `asrpt` = `ga:srpt`. Reads: size of complete flows only, arrival, attained.
    Ga(GaInner),
    /// Fluid least attained service (FB): key = bytes sent; equal keys share. Reads: attained.
    Las,
    /// PIAS multi-level feedback: queue = number of thresholds <= bytes sent, strict
    /// priority between queues; inside a queue per-flow FIFO or max-min fair sharing
    /// (`SimConfig::pias_sharing`, `PiasSharing`). Reads: attained, arrival.
    Pias,
    /// Earliest deadline first: key = arrival + deadline; no deadline last. Reads: deadline, arrival.
    Edf,
    /// Smallest size/deadline ratio first. Reads: size, deadline.
    Ssdf,
    /// Largest size/deadline ratio first. Reads: size, deadline.
    Lsdf,
    /// SCHED_TCP FAIR (fair sojourn): the flow that finishes first in a shadow fair-sharing
    /// run goes first. Reads: size (through the shadow run), arrival.
    Fair,
    /// RACS: weighted sharing, weight = w_min + w_max * exp(-a * remaining), re-evaluated
    /// at every event and at least every `update_interval_s`. Reads: size, attained.
    Racs,
    /// SDC: weighted sharing by remaining-size class A/B/C (thresholds and weights). Reads: size, attained.
    Sdc,
    /// A random fixed priority per flow (seeded hash). Reads: nothing.
    Random,
    /// SCHED_TCP gtcp: every path gets exactly the aggregate rate fair sharing gives its
    /// flows (a shadow `ps` run), redistributed among them by `inner`. Reads: size (the
    /// shadow run times its flows' completions by their sizes) and what inner reads.
    Gtcp(Box<Scheduler>),
    /// Priorities set from outside (lower score first, equal scores share). Reads: nothing itself.
    External,
}

impl Scheduler {
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.trim().to_ascii_lowercase();
        if let Some(inner) = lower.strip_prefix("gtcp:") {
            let inner = Scheduler::parse(inner)?;
            // gtcp:fair is the packet model's (SCHED_TCP's FAIR at the sender); the fluid
            // model refuses it (its `fair` is the same policy on a single path)
            if !inner.is_priority() || matches!(inner, Scheduler::External) {
                if !matches!(inner, Scheduler::Ps) {
                    return Err(SimError::InvalidConfig(format!(
                        "gtcp:<inner> takes a priority policy (fifo, srpt, asrpt, ga:*, las, pias, edf, ssdf, lsdf, random), ps, or fair (packet model only), got '{name}'"
                    )));
                }
            }
            return Ok(Scheduler::Gtcp(Box::new(inner)));
        }
        if let Some(inner) = lower.strip_prefix("ga:") {
            return match inner {
                "srpt" => Ok(Scheduler::Ga(GaInner::Srpt)),
                "ssdf" => Ok(Scheduler::Ga(GaInner::Ssdf)),
                "lsdf" => Ok(Scheduler::Ga(GaInner::Lsdf)),
                _ => Err(SimError::InvalidConfig(format!(
                    "ga:<inner> takes a size-based policy: srpt, ssdf or lsdf; got '{name}'"
                ))),
            };
        }
        Ok(match lower.as_str() {
            "fifo" => Scheduler::Fifo,
            "ps" => Scheduler::Ps,
            "wps" => Scheduler::Wps,
            "srpt" => Scheduler::Srpt,
            "asrpt" => Scheduler::Ga(GaInner::Srpt),
            "las" => Scheduler::Las,
            "pias" => Scheduler::Pias,
            "edf" => Scheduler::Edf,
            "ssdf" => Scheduler::Ssdf,
            "lsdf" => Scheduler::Lsdf,
            "fair" => Scheduler::Fair,
            "racs" => Scheduler::Racs,
            "sdc" => Scheduler::Sdc,
            "random" => Scheduler::Random,
            "external" => Scheduler::External,
            _ => {
                return Err(SimError::InvalidConfig(format!(
                    "unknown scheduler '{name}'; known: {}",
                    SCHEDULER_NAMES.join(", ")
                )))
            }
        })
    }

    /// The name `parse` reads (e.g. `pias`, `ga:srpt`, `gtcp:las`).
    pub fn name(&self) -> String {
        match self {
            Scheduler::Fifo => "fifo".into(),
            Scheduler::Ps => "ps".into(),
            Scheduler::Wps => "wps".into(),
            Scheduler::Srpt => "srpt".into(),
            Scheduler::Ga(GaInner::Srpt) => "ga:srpt".into(),
            Scheduler::Ga(GaInner::Ssdf) => "ga:ssdf".into(),
            Scheduler::Ga(GaInner::Lsdf) => "ga:lsdf".into(),
            Scheduler::Las => "las".into(),
            Scheduler::Pias => "pias".into(),
            Scheduler::Edf => "edf".into(),
            Scheduler::Ssdf => "ssdf".into(),
            Scheduler::Lsdf => "lsdf".into(),
            Scheduler::Fair => "fair".into(),
            Scheduler::Racs => "racs".into(),
            Scheduler::Sdc => "sdc".into(),
            Scheduler::Random => "random".into(),
            Scheduler::Gtcp(inner) => format!("gtcp:{}", inner.name()),
            Scheduler::External => "external".into(),
        }
    }

    /// Greedy priority allocation (true) or weighted max-min sharing (false).
    pub fn is_priority(&self) -> bool {
        !matches!(self, Scheduler::Ps | Scheduler::Wps | Scheduler::Racs | Scheduler::Sdc | Scheduler::Gtcp(_))
    }

    /// Whether the policy reads the size of flows that are not complete.
    pub fn uses_size(&self) -> bool {
        match self {
            Scheduler::Srpt | Scheduler::Ssdf | Scheduler::Lsdf | Scheduler::Fair | Scheduler::Racs | Scheduler::Sdc => true,
            // the shadow fair-sharing run completes flows by their sizes
            Scheduler::Gtcp(_) => true,
            _ => false,
        }
    }

    pub fn needs_shadow(&self) -> bool {
        matches!(self, Scheduler::Fair | Scheduler::Gtcp(_))
    }
}

/// How the flows of one PIAS queue share it (`SimConfig::pias_sharing`), or the GA
/// transform's incomplete flows their class (`SimConfig::incomplete_sharing`). Between
/// queues (classes) the priority is strict either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PiasSharing {
    /// One flow after another, by arrival (then trace order): what `optimal_thresholds`'s
    /// and the thresholds environment's M/G/1 model assumes. The default.
    #[default]
    Fifo,
    /// The flows of a queue share what the queues above leave by max-min fairness (equal
    /// weights), as PIAS's DCTCP senders share a switch queue: on one link, M/G/1
    /// multi-level processor sharing (MLPS) with PS inside every level.
    Fair,
}

/// The names `PiasSharing::parse` reads.
pub const PIAS_SHARING_NAMES: &[&str] = &["fifo", "fair"];

impl PiasSharing {
    pub fn parse(name: &str) -> Result<Self> {
        Self::parse_option(name, "pias_sharing")
    }
    /// `parse` for the option named `option` (`pias_sharing`, `incomplete_sharing`), which
    /// an error names.
    pub fn parse_option(name: &str, option: &str) -> Result<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "fifo" => Ok(PiasSharing::Fifo),
            "fair" => Ok(PiasSharing::Fair),
            _ => Err(SimError::InvalidConfig(format!("unknown {option} '{name}'; known: {}", PIAS_SHARING_NAMES.join(", ")))),
        }
    }
    /// The name `parse` reads.
    pub fn name(&self) -> &'static str {
        match self {
            PiasSharing::Fifo => "fifo",
            PiasSharing::Fair => "fair",
        }
    }
}

pub const SCHEDULER_NAMES: &[&str] = &[
    "fifo", "ps", "wps", "srpt", "asrpt", "ga:srpt", "ga:ssdf", "ga:lsdf", "las", "pias", "edf", "ssdf",
    "lsdf", "fair", "racs", "sdc", "random", "gtcp:<inner>", "external",
];

/// Which waiting request a destination admits next (Artemis token scheduling).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AdmissionPolicy {
    /// Oldest request first. Reads: arrival.
    Fifo,
    /// Earliest absolute deadline first (no deadline last). Reads: deadline, arrival.
    Edf,
    /// Smallest size/deadline first. Reads: size, deadline.
    Ssdf,
    /// Largest size/deadline first. Reads: size, deadline.
    Lsdf,
    /// Smallest size first. Reads: size.
    Srpt,
    /// Uniformly random among the window. Reads: nothing.
    Random,
    /// Chosen from outside (the token-scheduling environment): the simulator pauses.
    External,
}

impl AdmissionPolicy {
    pub fn parse(name: &str) -> Result<Self> {
        Ok(match name.trim().to_ascii_lowercase().as_str() {
            "fifo" => AdmissionPolicy::Fifo,
            "edf" => AdmissionPolicy::Edf,
            "ssdf" => AdmissionPolicy::Ssdf,
            "lsdf" => AdmissionPolicy::Lsdf,
            "srpt" => AdmissionPolicy::Srpt,
            "random" => AdmissionPolicy::Random,
            "external" => AdmissionPolicy::External,
            _ => {
                return Err(SimError::InvalidConfig(format!(
                    "unknown admission policy '{name}'; known: fifo, edf, ssdf, lsdf, srpt, random, external"
                )))
            }
        })
    }
    pub fn uses_size(&self) -> bool {
        matches!(self, AdmissionPolicy::Ssdf | AdmissionPolicy::Lsdf | AdmissionPolicy::Srpt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_names() {
        assert_eq!(Scheduler::parse("asrpt").unwrap(), Scheduler::Ga(GaInner::Srpt));
        assert_eq!(Scheduler::parse("gtcp:srpt").unwrap(), Scheduler::Gtcp(Box::new(Scheduler::Srpt)));
        assert!(Scheduler::parse("gtcp:wps").is_err());
        assert!(Scheduler::parse("bogus").unwrap_err().to_string().contains("known: fifo"));
        assert!(!Scheduler::Las.uses_size());
        assert!(!Scheduler::Ga(GaInner::Srpt).uses_size());
        assert!(Scheduler::Srpt.uses_size());
        assert!(Scheduler::parse("gtcp:las").unwrap().uses_size()); // through its shadow fair-sharing run
        assert!(AdmissionPolicy::parse("LSDF").is_ok());
        assert!(AdmissionPolicy::parse("x").is_err());
        assert_eq!(PiasSharing::parse(" FAIR ").unwrap(), PiasSharing::Fair);
        assert_eq!(PiasSharing::parse("fifo").unwrap().name(), "fifo");
        let e = PiasSharing::parse("ps").unwrap_err().to_string();
        assert!(e.contains("pias_sharing") && e.contains("fifo, fair"), "{e}");
    }
}
