//! The fair-sharing allocator (ps, wps, and the shadow run of fair and gtcp), its
//! incremental fill and its direct fill (`Auto` on fabrics of at most 32 links in the
//! fill), against the full recomputation, on random traces.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn run(topo: &Topology, flows: &[FlowSpec], cfg: SimConfig, full: bool) -> (Vec<f64>, Vec<bool>, Vec<f64>) {
    run_with(topo, flows, cfg, if full { AllocatorChoice::Full } else { AllocatorChoice::Auto })
}

fn run_with(topo: &Topology, flows: &[FlowSpec], mut cfg: SimConfig, choice: AllocatorChoice) -> (Vec<f64>, Vec<bool>, Vec<f64>) {
    cfg.allocator = choice;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    // Stop now and then (TimeReached) to exercise the lazy advance between events.
    let mut until = 1e-4;
    loop {
        match s.step(until).unwrap() {
            Outcome::Done => break,
            Outcome::TimeReached => until += 3.7e-4,
            _ => {}
        }
    }
    (s.finish_s().to_vec(), s.terminated(), s.sent())
}

fn close(x: f64, y: f64, scale: f64) -> bool {
    (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-9 * y.abs().max(scale)
}

#[test]
fn incremental_fair_sharing_matches_full_recomputation() {
    let mut rng = SplitMix64::new(7);
    let big = Topology::big_switch(&[10.0, 10.0, 10.0, 10.0, 25.0, 10.0, 40.0, 10.0]).unwrap();
    let ls = Topology::leaf_spine(4, 2, 2, &[10.0, 10.0, 25.0, 10.0, 10.0, 40.0, 10.0, 10.0], 7.5, 3).unwrap();
    let mut cases = 0;
    for trial in 0..60u64 {
        for topo in [&big, &ls] {
            let spans = trial % 2 == 1;
            let deadlines = trial % 4 >= 2;
            let n = if trial % 3 == 0 { 300 } else { 80 };
            let flows = random_flows(&mut rng, 8, n, 1e-4, spans, deadlines, trial % 3 != 1);
            for name in ["ps", "wps", "fair", "gtcp:srpt", "gtcp:ps"] {
                let gtcp = name.starts_with("gtcp");
                if gtcp && (spans || deadlines) {
                    continue; // gtcp takes neither
                }
                let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
                cfg.seed = trial;
                cfg.terminate_missed = deadlines && trial % 8 >= 4;
                if trial % 5 == 0 && !gtcp {
                    cfg.admission = Some(AdmissionConfig { k: 2, window: 3, policy: AdmissionPolicy::Edf });
                }
                let (b, tb, sb) = run(topo, &flows, cfg.clone(), true);
                // Auto is the direct fill on these fabrics (16 and 32 links); the
                // incremental fill is asked for (ps and wps; fair and gtcp:* take no
                // allocator choice for their shadow run).
                let incremental = if name.ends_with("ps") && !gtcp { &[AllocatorChoice::Incremental][..] } else { &[] };
                for &choice in [AllocatorChoice::Auto].iter().chain(incremental) {
                    let (a, ta, sa) = run_with(topo, &flows, cfg.clone(), choice);
                    assert_eq!(ta, tb, "{name} {choice:?} trial {trial}: terminated flows differ");
                    for k in 0..flows.len() {
                        assert!(close(a[k], b[k], 1e-3), "{name} {choice:?} trial {trial} flow {k}: finish {} vs full {}", a[k], b[k]);
                        assert!(close(sa[k], sb[k], flows[k].size_bytes), "{name} {choice:?} trial {trial} flow {k}: sent {} vs {}", sa[k], sb[k]);
                    }
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 450, "{cases}");
}

#[test]
fn incremental_fair_sharing_matches_full_recomputation_at_scale() {
    // More hosts and a heavier load than above: hundreds of active flows, so that the
    // fill grows far from the flows of an event (forced-lower and risen virtual flows,
    // links joining late). Leaf-spine with a thin core as well.
    let mut rng = SplitMix64::new(23);
    // The 16-host big switch (32 links) runs the direct fill, the others the incremental one.
    let big = Topology::big_switch(&[1.5; 24]).unwrap();
    let ls = Topology::leaf_spine(4, 6, 2, &[1.5; 24], 2.5, 1).unwrap();
    let small = Topology::big_switch(&[1.5; 16]).unwrap();
    for (k, topo) in [&big, &ls, &small].into_iter().enumerate() {
        for name in ["ps", "wps"] {
            let flows = random_flows(&mut rng, topo.n_hosts, 2500, 1e-4, k == 1, false, name == "wps");
            let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
            cfg.seed = 3;
            let (a, _, sa) = run(topo, &flows, cfg.clone(), false);
            let (b, _, sb) = run(topo, &flows, cfg, true);
            for i in 0..flows.len() {
                assert!(close(a[i], b[i], 1e-3), "{name} topo {k} flow {i}: incremental finish {} vs full {}", a[i], b[i]);
                assert!(close(sa[i], sb[i], flows[i].size_bytes), "{name} topo {k} flow {i}: sent {} vs {}", sa[i], sb[i]);
            }
        }
    }
}

#[test]
fn incremental_fair_sharing_is_deterministic() {
    let mut rng = SplitMix64::new(11);
    let ls = Topology::leaf_spine(3, 3, 2, &[10.0; 9], 20.0, 5).unwrap();
    let flows = random_flows(&mut rng, 9, 2000, 1e-4, true, false, true);
    let a = run(&ls, &flows, SimConfig::new(Scheduler::Wps), false);
    let b = run(&ls, &flows, SimConfig::new(Scheduler::Wps), false);
    assert_eq!(a.0.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.0.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
}

#[test]
fn many_flows_one_bottleneck() {
    // A large region (the fallback to one fill over every flow) on one link, and the
    // classic check: n equal flows from one host finish together at n * size / C.
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let flows: Vec<FlowSpec> = (0..100).map(|k| FlowSpec::new(0.0, 0, 1 + k % 3, 1e6)).collect();
    let mut s = Simulator::new(topo, flows, SimConfig::new(Scheduler::Ps)).unwrap();
    s.run().unwrap();
    let want = 100.0 * 1e6 / gbps_to_bytes_per_s(10.0);
    for &f in s.finish_s() {
        assert!((f - want).abs() <= 1e-9 * want, "{f} vs {want}");
    }
}

/// Runs `ps` (or another scheduler) with a pause at every flow change and returns the
/// number of pauses and the first one whose rates are not the max-min fair allocation
/// recomputed from scratch by an independent progressive filling (`verify`).
fn max_min_checks(topo: &Topology, flows: &[FlowSpec], scheduler: Scheduler) -> (usize, Option<String>) {
    let mut cfg = SimConfig::new(scheduler.clone());
    cfg.pause_on_flow_change = true;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    let mut checks = 0;
    loop {
        if matches!(s.step(f64::INFINITY).unwrap(), Outcome::Done) {
            break;
        }
        // The pause comes before the allocation of the change: compute it.
        if matches!(s.step(s.now()).unwrap(), Outcome::Done) {
            break;
        }
        checks += 1;
        if let Some((i, got, want)) = verify::maxmin_mismatch(&s, matches!(scheduler, Scheduler::Wps)) {
            return (checks, Some(format!("t = {}: flow {i} at {got} B/s, max-min gives {want}", s.now())));
        }
    }
    (checks, None)
}

#[test]
fn fair_sharing_rates_are_max_min_fair_after_every_flow_change() {
    // Hundreds of active flows on a heavily loaded fabric, checked against a from-scratch
    // progressive filling after every arrival and completion. (Over a million events on
    // the web-search benchmark, rates within TOL of a level once drifted apart until
    // flows of one bottleneck sat 0.01% to 5% apart: `bench_trace ... ps bigswitch check
    // 1e-3` finds that; the incremental fill now snaps such rates to the level.)
    let mut rng = SplitMix64::new(31);
    // The 16-host big switch runs the direct fill.
    let big = Topology::big_switch(&[1.5; 24]).unwrap();
    let ls = Topology::leaf_spine(4, 6, 2, &[1.5; 24], 2.5, 1).unwrap();
    let small = Topology::big_switch(&[1.5; 16]).unwrap();
    for (k, topo) in [&big, &ls, &small].into_iter().enumerate() {
        for scheduler in [Scheduler::Ps, Scheduler::Wps] {
            let flows = random_flows(&mut rng, topo.n_hosts, 1500, 1e-4, false, false, scheduler == Scheduler::Wps);
            let (checks, bad) = max_min_checks(topo, &flows, scheduler.clone());
            assert!(bad.is_none(), "{scheduler:?} topology {k}: {}", bad.unwrap());
            // Simultaneous arrivals and completions pause once.
            assert!(checks > flows.len(), "{scheduler:?} topology {k}: {checks} checks");
        }
    }
}

#[test]
fn the_max_min_check_flags_an_allocation_that_is_not() {
    // The check above can fail: SRPT's allocation on the same kind of trace is not max-min fair.
    let mut rng = SplitMix64::new(31);
    let big = Topology::big_switch(&[1.5; 24]).unwrap();
    let flows = random_flows(&mut rng, 24, 300, 1e-4, false, false, false);
    assert!(max_min_checks(&big, &flows, Scheduler::Srpt).1.is_some());
    assert!(max_min_checks(&big, &flows, Scheduler::Ps).1.is_none());
}

/// Weights 1e12 apart (the trace contract's 1e-6 to 1e6): host 0 sends `n` flows of weight
/// 1e6 to host 1 and one of weight 1e-6 to host 2; host 2 sends 2n flows of weight 1e6 to
/// host 1. Host 1's downlink saturates first (3n heavy flows, C / 3n each), which leaves
/// host 0's uplink 2C/3 for the light flow alone (host 2's downlink carries nothing
/// else): its max-min rate is 2C/3 whatever n. A plain running sum of host 0's weights,
/// less the n heavy ones, left the rounding of n x 1e6 in place of 1e-6, and every
/// allocator (and `verify`) gave the light flow 7.6e-6 (n = 2), 2.4e-4 (10), 1.6e-3 (100)
/// and 0.48 (10,000) relative off; the sums are compensated now (`fill::WeightSum`).
#[test]
fn weights_a_trillion_apart_leave_a_light_flow_its_max_min_rate() {
    let c = 10.0 * 1e9 / 8.0;
    for n in [2usize, 10, 100, 3000] {
        for topo in [Topology::big_switch(&[10.0; 3]).unwrap(), Topology::big_switch(&[10.0; 40]).unwrap()] {
            let mut flows = Vec::new();
            for (src, k) in [(0, n), (2, 2 * n)] {
                for _ in 0..k {
                    let mut f = FlowSpec::new(0.0, src, 1, 1e9);
                    f.weight = 1e6;
                    flows.push(f);
                }
            }
            let mut light = FlowSpec::new(0.0, 0, 2, 1e9);
            light.weight = 1e-6;
            flows.push(light);
            let i = flows.len() - 1;
            // the incremental fill is refused for weights this far apart (its slack between
            // link levels would cost a light flow up to 1e-6 of its rate)
            let mut cfg = SimConfig::new(Scheduler::Wps);
            cfg.allocator = AllocatorChoice::Incremental;
            let err = Simulator::new(topo.clone(), flows.clone(), cfg).err().unwrap().to_string();
            assert!(err.contains("allocator 'incremental' under wps with weights 1e12 apart"), "{err}");
            // direct fill (3 hosts) or the full recomputation (auto), full recomputation
            for choice in [AllocatorChoice::Auto, AllocatorChoice::Full] {
                let mut cfg = SimConfig::new(Scheduler::Wps);
                cfg.allocator = choice;
                let mut s = Simulator::new(topo.clone(), flows.clone(), cfg).unwrap();
                s.step(1e-6).unwrap();
                let got = s.rate_bytes_per_s(i);
                assert!((got - 2.0 * c / 3.0).abs() <= 1e-12 * c, "n = {n}, {} hosts, {choice:?}: light flow at {got} B/s, max-min gives {}", topo.n_hosts, 2.0 * c / 3.0);
                let pos = s.active().iter().position(|&x| x as usize == i).unwrap();
                let want = verify::maxmin_rates(&s, true)[pos];
                assert!((want - 2.0 * c / 3.0).abs() <= 1e-12 * c, "n = {n}: verify gives {want}");
            }
        }
    }
}

/// `FUZZ_EXTREME_WEIGHTS=1 FUZZ_SEED=6` (shrunk): on a leaf-spine with 2.5 Gbps core links,
/// a flow of weight 1e6 shares one core link with flows of weight 1 and 1e-6, and another
/// with flow 3 (weight 1) alone. The two links' levels are 1e-12 apart, within the
/// incremental fill's slack, so that fill gives flow 3 the first link's level, 312.4996875
/// B/s; exactly it gets what the heavy flow leaves, C - 1e6 x C / (1e6 + 1 + 1e-6),
/// 312.4999999997 B/s, as the full recomputation and the direct fill (no slack) give.
/// `Auto` runs such weights (more than `WPS_INCREMENTAL_MAX_WEIGHT_RATIO` apart) on the
/// full recomputation where the direct fill does not apply; milder weights keep the
/// incremental fill.
#[test]
fn auto_runs_weights_a_million_apart_on_an_exact_fill() {
    let fl = |t: f64, s: usize, d: usize, size: f64, w: f64| {
        let mut f = FlowSpec::new(t, s, d, size);
        f.weight = w;
        f
    };
    // hosts per ToR: the fuzzer's 2 (the direct fill's), or 8 (the incremental fill's: see
    // below); the case's hosts are the first two of each ToR
    for hpt in [2usize, 8] {
        let mut rates = vec![10.0; 3 * hpt];
        for tor in 0..3 {
            rates[tor * hpt] = 1.0;
        }
        let topo = Topology::leaf_spine(3, hpt, 1, &rates, 2.5, 0).unwrap();
        let h = |x: usize| (x / 2) * hpt + x % 2;
        let mut flows = vec![
            fl(0.0, h(2), h(0), 32895.0, 1.0),
            fl(0.0, h(5), h(1), 10196944.0, 3.7),
            fl(0.0, h(3), h(5), 1e8, 1e6),
            fl(0.0, h(0), h(4), 1.0, 1.0),
            fl(1e-12, h(2), h(0), 1.0, 1e-6),
            fl(1e-12, h(1), h(0), 1.0, 1.0),
            fl(1e-12, h(0), h(1), 1.0, 1.0),
        ];
        // With 8 hosts per ToR, flows much later between the other hosts put more than
        // 32 links in the fill (the direct fill's limit) and change nothing before.
        for tor in 0..3 {
            for k in 2..hpt {
                flows.push(fl(1.0, tor * hpt + k, tor * hpt + (k + 1 - 2) % (hpt - 2) + 2, 1.0, 1.0));
            }
        }
        let c = 2.5e9 / 8.0;
        let exact = c - 1e6 * (c / (1e6 + 1.0 + 1e-6));
        let rate_of_3 = |flows: &[FlowSpec], choice: AllocatorChoice| {
            let mut cfg = SimConfig::new(Scheduler::Wps);
            cfg.allocator = choice;
            let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
            s.step(1e-9).unwrap();
            (s.rate_bytes_per_s(3), s.allocator_name())
        };
        let (auto, name) = rate_of_3(&flows, AllocatorChoice::Auto);
        assert_eq!(name, if hpt == 2 { "fair-sharing allocator, direct fill" } else { "full recomputation" });
        assert!((auto - exact).abs() <= 1e-9 * exact, "{hpt} hosts per ToR, auto: {auto} B/s, exactly {exact}");
        if hpt == 8 {
            // the incremental fill's slack (flow 3 got 312.4996875 B/s, 1e-6 off) is what Auto
            // avoids; asked for, it is refused
            let mut cfg = SimConfig::new(Scheduler::Wps);
            cfg.allocator = AllocatorChoice::Incremental;
            let err = Simulator::new(topo.clone(), flows.clone(), cfg).err().unwrap().to_string();
            assert!(err.contains("only for weights at most 100 apart"), "{err}");
            // Weights within the ratio: the incremental fill.
            let mild: Vec<FlowSpec> = flows.iter().map(|f| fl(f.arrival_s, f.src, f.dst, f.size_bytes, f.weight.clamp(0.1, 10.0))).collect();
            assert_eq!(rate_of_3(&mild, AllocatorChoice::Auto).1, "incremental fair-sharing allocator");
        }
    }
}
