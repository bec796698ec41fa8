//! The progress guarantee: a run whose simulated time stops advancing fails with
//! `SimError::Stalled`, naming the scheduler, the allocator, the time and the flows,
//! instead of spinning. `SimConfig::inject_stall_at_s` forces the condition.
use fabric_core::*;
use std::time::Instant;

fn flows() -> Vec<FlowSpec> {
    (0..12).map(|k| FlowSpec::new(1e-4 * k as f64, k % 4, (k + 1 + k / 4) % 4, 2e5 + 1e4 * k as f64)).collect()
}

fn stalled(name: &str, full: bool) -> String {
    let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
    cfg.pias_thresholds_bytes = vec![1e5];
    cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
    cfg.inject_stall_at_s = Some(5e-4);
    let mut s = Simulator::new(Topology::big_switch(&[10.0; 4]).unwrap(), flows(), cfg).unwrap();
    let t0 = Instant::now();
    let e = s.run().expect_err("the injected stall must be reported");
    assert!(t0.elapsed().as_secs_f64() < 5.0, "took {:?}", t0.elapsed());
    assert!(matches!(e, SimError::Stalled(_)), "{e:?}");
    // It stopped where the stall began, with flows left.
    assert_eq!(s.now(), 5e-4, "{e}");
    assert!(!s.active().is_empty());
    e.to_string()
}

#[test]
fn worklist_that_never_drains_is_reported() {
    let m = stalled("pias", false);
    for want in ["simulation stalled", "scheduler 'pias'", "incremental priority allocator", "t = 5.00000000000000010e-4 s", "re-evaluations of flows in one allocation", "flows involved (trace rows): [", "active flows"] {
        assert!(m.contains(want), "'{want}' not in: {m}");
    }
}

#[test]
fn events_at_one_time_without_progress_are_reported() {
    for (name, full, alloc) in [
        ("pias", true, "full recomputation"),
        ("srpt", true, "full recomputation"),
        ("ps", false, "fair-sharing allocator, direct fill"),
        ("las", false, "LAS fast path"),
    ] {
        let m = stalled(name, full);
        for want in ["simulation stalled", &format!("scheduler '{name}'"), alloc, "t = 5.00000000000000010e-4 s", "consecutive events at this time", "bound 16 * (active flows + 1)", "flows involved (trace rows): ["] {
            assert!(m.contains(want), "{name}: '{want}' not in: {m}");
        }
    }
}

#[test]
fn a_run_with_a_shadow_run_is_reported_too() {
    let m = stalled("fair", false);
    assert!(m.contains("scheduler 'fair' (full recomputation)") && m.contains("consecutive events"), "{m}");
}

#[test]
fn without_injection_the_same_runs_finish() {
    for name in ["pias", "srpt", "ps", "las", "fair"] {
        for full in [false, true] {
            let mut cfg = SimConfig::new(Scheduler::parse(name).unwrap());
            cfg.pias_thresholds_bytes = vec![1e5];
            cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
            let mut s = Simulator::new(Topology::big_switch(&[10.0; 4]).unwrap(), flows(), cfg).unwrap();
            s.run().unwrap();
            assert!(s.finish_s().iter().all(|f| f.is_finite()));
        }
    }
}

/// gtcp (found by the fuzzer): the shadow fair-sharing run finishes the last flow of the
/// path 1 -> 0 at t = 1.6 s while the gtcp run has 1.25e-4 B of flow 5 left there (flow
/// 3 ahead of it finished within its tolerance of 0.1 B); the path's aggregate was then
/// 0 and the run stopped: "1 active flows have no rate and no event is scheduled".
#[test]
fn gtcp_path_emptied_by_the_shadow_run_first_still_finishes() {
    let topo = Topology::big_switch(&[1.0; 6]).unwrap();
    let f = FlowSpec::new;
    let flows = vec![f(0.0, 1, 3, 1e8), f(0.0, 0, 2, 1.0), f(1e-12, 0, 2, 1.0), f(1e-12, 1, 0, 1e8), f(1e-12, 0, 2, 1.0), f(1e-12, 1, 0, 1.0)];
    let mut fins = Vec::new();
    for full in [false, true] {
        let mut cfg = SimConfig::new(Scheduler::parse("gtcp:edf").unwrap());
        cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
        let mut s = Simulator::new(topo.clone(), flows.clone(), cfg).unwrap();
        s.run().unwrap();
        fins.push(s.finish_s().to_vec());
    }
    for i in 0..6 {
        assert!((fins[0][i] - fins[1][i]).abs() <= 1e-7 * fins[1][i].max(1e-3), "flow {i}: {} vs {}", fins[0][i], fins[1][i]);
    }
    assert!((fins[1][5] - 1.6).abs() < 1e-6, "flow 5 at {}", fins[1][5]);
}

/// Found by the fuzzer: flow 2 (1 B over a data span) at 40 Gbps catches up with its data
/// at t = 4.89e-3 s, where one step of the float64 clock moves it 4.3e-9 B, more than the
/// 1e-9 B within which it counts as caught up: the catch-up event came back at the same
/// time, unchanged, until the progress guard stopped the run.
#[test]
fn catch_up_below_the_clock_resolution_finishes() {
    let topo = Topology::big_switch(&[40.0, 1.0, 40.0]).unwrap();
    let mut flows = vec![
        FlowSpec::new(0.0, 1, 0, 1.0),
        FlowSpec::new(0.0008468805203311932, 0, 2, 1.0),
        FlowSpec::new(0.0008468805203311932, 2, 0, 1.0),
    ];
    flows[0].data_span_s = 0.004892539579816937;
    flows[2].data_span_s = 0.004223567216170222;
    let mut fins = Vec::new();
    for full in [false, true] {
        let mut cfg = SimConfig::new(Scheduler::Fifo);
        cfg.admission = Some(AdmissionConfig { k: 1, window: 0, policy: AdmissionPolicy::Fifo });
        cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
        let mut s = Simulator::new(topo.clone(), flows.clone(), cfg).unwrap();
        s.run().unwrap();
        fins.push(s.finish_s().to_vec());
    }
    assert_eq!(fins[0], fins[1]);
}
