//! The LAS fast path (sim/las.rs) against the generic priority path
//! (`AllocatorChoice::Full`), on random traces: the same floating-point operations, so the
//! finish times must be bit-identical. The big switch and the leaf-spine run the narrow
//! records (paths of up to 4 links), a 4-ary fat-tree and a 6-host parking lot (paths of
//! up to 6 and 7 links) the wide ones (up to 10).
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::{las_trial_config, random_flows};

fn finish(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, full: bool) -> (Vec<f64>, Vec<bool>, u64) {
    cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    s.run().unwrap();
    (s.finish_s().to_vec(), s.terminated(), s.stats().events)
}

#[test]
fn las_fast_path_matches_generic_path() {
    let mut rng = SplitMix64::new(7);
    let big = Topology::big_switch(&[10.0, 10.0, 10.0, 10.0, 25.0, 10.0]).unwrap();
    let ls = Topology::leaf_spine(3, 2, 2, &[10.0; 6], 7.5, 3).unwrap();
    // Hosts 0 to 5 of FatTree(4): paths of 2, 4 and 6 links (hosts 4 and 5 in another pod).
    let ft = common::graphs::fat_tree(4, 10.0);
    let pl = common::graphs::parking_lot(6, 10.0, 10.0);
    let mut cases = 0;
    for trial in 0..200u64 {
        for topo in [&big, &ls, &ft, &pl] {
            let spans = trial % 2 == 1;
            let deadlines = trial % 4 >= 2;
            let n = if trial % 10 == 9 { 300 } else { 60 };
            let flows = random_flows(&mut rng, 6, n, 2e-4, spans, deadlines, trial % 3 == 0);
            let cfg = las_trial_config(trial, deadlines);
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
    assert_eq!(cases, 800);
    let name = |topo: &Topology| Simulator::new(topo.clone(), vec![FlowSpec::new(0.0, 0, 5, 1e4)], SimConfig::new(Scheduler::Las)).unwrap().allocator_name();
    assert_eq!(name(&ls), "LAS fast path of the full recomputation");
    assert_eq!(name(&ft), "LAS fast path of the full recomputation, wide records");
    assert_eq!(name(&pl), "LAS fast path of the full recomputation, wide records");
}

/// Drives a run through `step` in slices of time (the `TimeReached` path advances the
/// fluid between events), pausing on flow changes and making external admission
/// decisions; records every flow's bytes sent and rate at every pause.
fn driven(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, full: bool, slice: f64) -> (Vec<f64>, Vec<u64>) {
    cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
    cfg.pause_on_flow_change = true;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    let mut trace = Vec::new();
    let mut until = slice;
    let mut pick = 0usize;
    loop {
        match s.step(until).unwrap() {
            Outcome::Done => break,
            Outcome::Decision { dst } => {
                let w = s.window(dst).len();
                pick += 1;
                s.admit(dst, pick % w).unwrap();
            }
            Outcome::TimeReached => until += slice,
            Outcome::FlowsChanged => {}
        }
        for i in 0..s.n_flows() {
            trace.push(s.sent_bytes(i).to_bits());
            trace.push(s.rate_bytes_per_s(i).to_bits());
        }
    }
    (s.finish_s().to_vec(), trace)
}

#[test]
fn las_fast_path_matches_generic_path_when_driven_step_by_step() {
    let mut rng = SplitMix64::new(11);
    let big = Topology::big_switch(&[10.0, 10.0, 10.0, 10.0, 25.0, 10.0]).unwrap();
    let ls = Topology::leaf_spine(3, 2, 2, &[10.0; 6], 7.5, 3).unwrap();
    let ft = common::graphs::fat_tree(4, 10.0);
    for trial in 0..60u64 {
        for topo in [&big, &ls, &ft] {
            let flows = random_flows(&mut rng, 6, 50, 2e-4, trial % 2 == 1, trial % 4 >= 2, false);
            let mut cfg = SimConfig::new(Scheduler::Las);
            cfg.terminate_missed = trial % 4 == 3;
            if trial % 3 != 2 {
                let policy = if trial % 3 == 0 { AdmissionPolicy::External } else { AdmissionPolicy::Fifo };
                cfg.admission = Some(AdmissionConfig { k: 2, window: 3, policy });
            }
            let slice = [1e-5, 7.3e-5, 1.0][trial as usize % 3];
            let (a, ta) = driven(topo, &flows, cfg.clone(), false, slice);
            let (b, tb) = driven(topo, &flows, cfg, true, slice);
            assert!(ta == tb, "trial {trial}: sent/rate traces differ");
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()), "trial {trial} flow {k}: fast {x} vs generic {y}");
            }
        }
    }
}
