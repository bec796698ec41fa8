//! The LAS fast path (sim/las.rs) against the generic priority path
//! (`force_full_recompute`), on random traces: the same floating-point operations, so the
//! finish times must be bit-identical.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn finish(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, full: bool) -> (Vec<f64>, Vec<bool>, u64) {
    cfg.force_full_recompute = full;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    s.run().unwrap();
    (s.finish_s().to_vec(), s.terminated(), s.stats().events)
}

#[test]
fn las_fast_path_matches_generic_path() {
    let mut rng = SplitMix64::new(7);
    let big = Topology::big_switch(&[10.0, 10.0, 10.0, 10.0, 25.0, 10.0]).unwrap();
    let ls = Topology::leaf_spine(3, 2, 2, &[10.0; 6], 7.5, 3).unwrap();
    let mut cases = 0;
    for trial in 0..200u64 {
        for topo in [&big, &ls] {
            let spans = trial % 2 == 1;
            let deadlines = trial % 4 >= 2;
            let n = if trial % 10 == 9 { 300 } else { 60 };
            let flows = random_flows(&mut rng, 6, n, 2e-4, spans, deadlines, trial % 3 == 0);
            let mut cfg = SimConfig::new(Scheduler::Las);
            cfg.seed = trial;
            cfg.terminate_missed = deadlines && trial % 8 >= 4;
            if trial % 5 == 0 {
                cfg.admission = Some(AdmissionConfig { k: 2, window: 3, policy: AdmissionPolicy::Edf });
            }
            if trial % 7 == 3 {
                cfg.max_interval_s = Some(3e-5);
            }
            let (a, ta, ea) = finish(topo, &flows, cfg.clone(), false);
            let (b, tb, eb) = finish(topo, &flows, cfg, true);
            assert_eq!(ta, tb, "trial {trial}: terminated flows differ");
            assert_eq!(ea, eb, "trial {trial}: event counts differ");
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "trial {trial} flow {k}: fast {x} vs generic {y}");
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 400);
}
