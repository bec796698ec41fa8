//! Random traces and the rate check shared by the differential tests.
#![allow(dead_code)] // each test crate uses a part
pub mod graphs;
pub mod packet;
use fabric_core::rng::SplitMix64;
use fabric_core::{verify, AdmissionConfig, AdmissionPolicy, FlowSpec, Outcome, Scheduler, SimConfig, Simulator, Topology};

/// `n` flows among `hosts` hosts: gaps uniform in [0, `max_gap_s`) between arrivals, and
/// none for about 30% of them (bursts of simultaneous arrivals: ties); optionally data
/// spans and deadlines on about half of them, and weights on all.
pub fn random_flows(
    rng: &mut SplitMix64,
    hosts: usize,
    n: usize,
    max_gap_s: f64,
    spans: bool,
    deadlines: bool,
    weights: bool,
) -> Vec<FlowSpec> {
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            // bursts of simultaneous arrivals now and then, to exercise ties
            if rng.next_f64() < 0.7 {
                t += rng.next_f64() * max_gap_s;
            }
            let src = rng.below(hosts as u64) as usize;
            let dst = (src + 1 + rng.below(hosts as u64 - 1) as usize) % hosts;
            let size = if rng.next_f64() < 0.2 { 1e5 } else { 1e3 + rng.next_f64() * 3e5 };
            let mut f = FlowSpec::new(t, src, dst, size);
            if spans && rng.next_f64() < 0.5 {
                f.data_span_s = rng.next_f64() * 5e-4;
            }
            if deadlines && rng.next_f64() < 0.5 {
                f.deadline_s = 1e-4 + rng.next_f64() * 1e-3;
            }
            if weights {
                f.weight = [1.0, 2.0, 0.5, 3.7][rng.below(4) as usize];
            }
            f
        })
        .collect()
}

/// The LAS differential tests' configuration of trial `trial` (whose trace has deadlines
/// when `deadlines`): seeded by the trial, deadline termination on half the traces with
/// deadlines, EDF destination admission (k 2, window 3) on every fifth, rates re-evaluated
/// at least every 30 us on every seventh.
pub fn las_trial_config(trial: u64, deadlines: bool) -> SimConfig {
    let mut cfg = SimConfig::new(Scheduler::Las);
    cfg.seed = trial;
    cfg.terminate_missed = deadlines && trial % 8 >= 4;
    if trial % 5 == 0 {
        cfg.admission = Some(AdmissionConfig { k: 2, window: 3, policy: AdmissionPolicy::Edf });
    }
    if trial % 7 == 3 {
        cfg.max_interval_s = Some(3e-5);
    }
    cfg
}

/// Runs to the end in small steps and checks the rates against `verify` after each.
pub fn check_against_verify(topo: &Topology, flows: &[FlowSpec], name: &str) -> usize {
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), SimConfig::new(Scheduler::parse(name).unwrap())).unwrap();
    let (mut until, mut checks) = (0.0, 0);
    loop {
        until += 2e-5;
        if matches!(s.step(until).unwrap(), Outcome::Done) {
            break;
        }
        let bad = match name {
            "ps" => verify::maxmin_mismatch(&s, false),
            "wps" => verify::maxmin_mismatch(&s, true),
            "srpt" => verify::srpt_mismatch(&s),
            _ => panic!("no verify reference for {name}"),
        };
        if let Some((i, got, want)) = bad {
            panic!("{name} at t={}: flow {i} rate {got} but the reference gives {want}", s.now());
        }
        checks += 1;
    }
    checks
}

/// The fuzzers' proptest runner: `PROPTEST_CASES` cases (else `default_cases`), drawn from
/// the ChaCha stream of `FUZZ_SEED` (else 0), so that CI runs the same cases every time and
/// a long run can draw others; no failure files. Returns the runner, the cases and the seed.
pub fn fuzz_runner(default_cases: u32) -> (proptest::test_runner::TestRunner, u32, u64) {
    use proptest::test_runner::{Config, FileFailurePersistence, RngAlgorithm, TestRng, TestRunner};
    let n: u32 = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default_cases);
    let cfg = Config { cases: n, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() };
    let seed: u64 = std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    (TestRunner::new_with_rng(cfg, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)), n, seed)
}

/// Every flow's finish time (s) of a whole run of `flows` on `topo` under `cfg`.
pub fn finish(topo: &Topology, flows: &[FlowSpec], cfg: SimConfig) -> fabric_core::Result<Vec<f64>> {
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg)?;
    s.run()?;
    Ok(s.finish_s().to_vec())
}

/// Asserts the finish times `a` and `b` agree within `rel` of the larger, flow by flow.
pub fn assert_close(a: &[f64], b: &[f64], rel: f64, what: &str) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= rel * x.abs().max(y.abs()), "{what}: flow {i} finishes at {x} vs {y}");
    }
}
