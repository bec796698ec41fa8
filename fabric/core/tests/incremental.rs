//! The incremental allocator against the full recomputation, on random traces.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn finish(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, full: bool) -> (Vec<f64>, Vec<bool>) {
    cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
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

/// SRPT on an oversubscribed leaf-spine: flows held back by a core link are overtaken on
/// their host links by flows behind them, so remaining sizes cross often and the
/// crossing path (re-sorting only the lists whose order changed) carries the run.
#[test]
fn srpt_crossings_match_full_recomputation() {
    let mut rng = SplitMix64::new(7);
    let topo = Topology::leaf_spine(4, 4, 2, &[10.0; 16], 10.0, 11).unwrap();
    for trial in 0..12u64 {
        let spans = trial % 2 == 1;
        let mut flows = random_flows(&mut rng, 16, 300, 2e-5, spans, false, false);
        // Heavy-tailed sizes: many long flows at once on the core.
        for f in flows.iter_mut() {
            if rng.next_f64() < 0.3 {
                f.size_bytes *= 10.0;
            }
        }
        for name in ["srpt", "asrpt"] {
            let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
            cfg.seed = trial;
            let mut s = Simulator::new(topo.clone(), flows.clone(), cfg.clone()).unwrap();
            s.run().unwrap();
            let a = s.finish_s().to_vec();
            if !spans && name == "srpt" {
                // Events beyond arrivals and completions are crossings here.
                let extra = s.stats().events as i64 - 2 * flows.len() as i64;
                assert!(extra > 50, "trial {trial}: only {extra} crossing events");
            }
            let (b, _) = finish(&topo, &flows, cfg, true);
            // A flow counts as finished within 1e-9 of its size (finish_tol), so the two
            // can differ by 1e-9 of its time at its last rate, which for a flow slowed
            // down at the end is a few times 1e-9 of its finish time.
            for (k, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!((x - y).abs() <= 1e-8 * y.abs().max(1e-3), "{name} trial {trial} flow {k}: incremental {x} vs full {y}");
            }
        }
    }
}

/// SRPT's rates at any moment are the greedy allocation in order of remaining size (ties
/// by arrival, then index), recomputed from scratch from what the simulator reports
/// (`fabric_core::verify`): each flow takes the least capacity left on its path by the
/// flows ahead.
#[test]
fn srpt_rates_are_the_greedy_allocation_at_every_pause() {
    let topo = Topology::leaf_spine(4, 4, 2, &[10.0; 16], 10.0, 5).unwrap();
    let mut rng = SplitMix64::new(11);
    let mut checks = 0;
    for trial in 0..2 {
        let mut flows = random_flows(&mut rng, 16, 1500, 2e-5, false, false, false);
        for f in flows.iter_mut() {
            if rng.next_f64() < 0.3 {
                f.size_bytes *= 10.0;
            }
        }
        let mut s = Simulator::new(topo.clone(), flows, SimConfig::new(Scheduler::Srpt)).unwrap();
        let mut until = 0.0;
        loop {
            until += 4e-6;
            if matches!(s.step(until).unwrap(), Outcome::Done) {
                break;
            }
            if let Some((i, got, want)) = verify::srpt_mismatch(&s) {
                panic!("trial {trial} t={}: flow {i} has rate {got}, greedy SRPT gives {want}", s.now());
            }
            checks += 1;
        }
    }
    assert!(checks > 500, "{checks}");
}
