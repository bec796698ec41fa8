//! The incremental allocator against the full recomputation, on random traces.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn finish(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, full: bool) -> (Vec<f64>, Vec<bool>) {
    cfg.force_full_recompute = full;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    s.run().unwrap();
    (s.finish_s().to_vec(), s.terminated())
}

#[test]
fn incremental_matches_full_recomputation() {
    let mut rng = SplitMix64::new(42);
    let big = Topology::big_switch(&[10.0, 10.0, 10.0, 10.0, 25.0, 10.0]).unwrap();
    let ls = Topology::leaf_spine(3, 2, 2, &[10.0; 6], 7.5, 3).unwrap();
    let mut cases = 0;
    for trial in 0..80 {
        for topo in [&big, &ls] {
            let spans = trial % 2 == 1;
            let deadlines = trial % 4 >= 2;
            let flows = random_flows(&mut rng, 6, 60, 2e-4, spans, deadlines, false);
            for name in ["fifo", "srpt", "asrpt", "ga:ssdf", "pias", "edf", "ssdf", "lsdf", "random"] {
                let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
                cfg.pias_thresholds_bytes = vec![2e4, 1e5, 2e5];
                cfg.seed = trial;
                cfg.terminate_missed = deadlines && trial % 8 >= 4;
                if trial % 5 == 0 {
                    cfg.admission = Some(AdmissionConfig { k: 2, window: 3, policy: AdmissionPolicy::Edf });
                }
                let (a, ta) = finish(topo, &flows, cfg.clone(), false);
                let (b, tb) = finish(topo, &flows, cfg, true);
                assert_eq!(ta, tb, "{name} trial {trial}: terminated flows differ");
                for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                    let ok = (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-9 * y.abs().max(1e-3);
                    assert!(ok, "{name} trial {trial} flow {k}: incremental {x} vs full {y}");
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 80 * 2 * 9);
}
