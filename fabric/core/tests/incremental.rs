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
/// their host links by flows behind them. Those overtakings change no rate, and neither
/// allocator makes an event of them (the incremental one keeps a waiting flow on the list
/// of the link that holds it back only: `incr.rs`, `park`), so both have the same events.
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
            let mut full_cfg = cfg;
            full_cfg.allocator = AllocatorChoice::Full;
            let mut full = Simulator::new(topo.clone(), flows.clone(), full_cfg).unwrap();
            full.run().unwrap();
            if !spans {
                // (Before waiting flows were parked, the incremental run had 50 to 90 more
                // events here: a crossing each time a flow with a rate passed a waiting one.)
                assert_eq!(s.stats().events, full.stats().events, "{name} trial {trial}: events");
            }
            // A flow counts as finished within 1e-9 of its size (finish_tol), so the two
            // can differ by 1e-9 of its time at its last rate, which for a flow slowed
            // down at the end is a few times 1e-9 of its finish time.
            for (k, (x, y)) in a.iter().zip(full.finish_s()).enumerate() {
                assert!((x - y).abs() <= 1e-8 * y.abs().max(1e-3), "{name} trial {trial} flow {k}: incremental {x} vs full {y}");
            }
        }
    }
}

/// A crossing of two flows that both have a rate: on a big switch whose host 2 has 7 Gbps
/// links, z (2 -> 1, 90 MB) takes 7 Gbps of host 1's down-link, x (0 -> 1, 100 MB) the 3
/// left, and y (0 -> 3, 110 MB), behind x on host 0's up-link, the 7 left there. y's
/// remaining size falls faster than x's and meets it at t = 10 MB / 4 Gbps = 20 ms; from
/// then y goes first: it takes host 0's whole up-link and x waits until y is done, at
/// 20 ms + 92.5 MB / 10 Gbps = 94 ms. x then sends at 3 Gbps until z is done (90 MB /
/// 7 Gbps = 102.857 ms) and at 10 Gbps after, so it finishes at 174.2286 ms (computed by
/// hand). Both allocators give these times and have the same events, the crossing's among
/// them.
#[test]
fn srpt_crossing_of_two_flows_with_rates() {
    let topo = Topology::big_switch(&[10.0, 10.0, 7.0, 10.0]).unwrap();
    let flows = vec![FlowSpec::new(0.0, 2, 1, 90e6), FlowSpec::new(0.0, 0, 1, 100e6), FlowSpec::new(0.0, 0, 3, 110e6)];
    let gbps = 1.25e8; // bytes per second per Gbps
    let z_done = 90e6 / (7.0 * gbps);
    let x_done = z_done + (92.5e6 - 3.0 * gbps * (z_done - 0.094)) / (10.0 * gbps);
    let want = [z_done, x_done, 0.094];
    let mut events = Vec::new();
    for full in [false, true] {
        let mut cfg = SimConfig::new(Scheduler::Srpt);
        cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Incremental };
        let mut s = Simulator::new(topo.clone(), flows.clone(), cfg).unwrap();
        s.run().unwrap();
        for (k, (&got, &w)) in s.finish_s().iter().zip(&want).enumerate() {
            assert!((got - w).abs() <= 1e-9 * w, "full={full} flow {k}: finish {got}, by hand {w}");
        }
        events.push(s.stats().events);
    }
    // The arrivals (one event) and three completions, and the crossing's.
    assert!(events[0] > 4 && events[0] == events[1], "events (incremental, full): {events:?}");
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
