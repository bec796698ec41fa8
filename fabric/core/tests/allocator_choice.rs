//! `SimConfig::allocator`: `Incremental` is `Auto` where the scheduler has an incremental
//! allocator (bit for bit; for `ps` and `wps` on fabrics with more than
//! `DIRECT_MAX_LINKS` links, where `Auto` is not the direct fill) and an error where it
//! has none; `set_pias_thresholds` works
//! under every allocator, the incremental one ending where the full recomputation does.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn run(sched: &str, choice: AllocatorChoice, flows: &[FlowSpec]) -> Result<Vec<f64>> {
    run_on(Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap(), sched, choice, flows)
}

fn run_on(topo: Topology, sched: &str, choice: AllocatorChoice, flows: &[FlowSpec]) -> Result<Vec<f64>> {
    let mut cfg = SimConfig::new(Scheduler::parse(sched).unwrap());
    if sched == "pias" {
        cfg.pias_thresholds_bytes = vec![2e4, 1e5];
    }
    cfg.allocator = choice;
    let mut s = Simulator::new(topo, flows.to_vec(), cfg)?;
    s.run()?;
    Ok(s.finish_s().to_vec())
}

#[test]
fn incremental_is_auto_where_the_scheduler_has_one() {
    let mut rng = SplitMix64::new(7);
    let flows = random_flows(&mut rng, 8, 300, 2e-5, true, false, true);
    for sched in ["fifo", "srpt", "pias", "asrpt"] {
        let (a, b) = (run(sched, AllocatorChoice::Auto, &flows).unwrap(), run(sched, AllocatorChoice::Incremental, &flows).unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: Incremental differs from Auto");
    }
    // Fair sharing with 40 links in the fill (more than DIRECT_MAX_LINKS = 32): Auto is
    // the incremental fill.
    let flows = random_flows(&mut rng, 20, 300, 2e-5, true, false, true);
    for sched in ["ps", "wps"] {
        let big = || Topology::big_switch(&[10.0; 20]).unwrap();
        let (a, b) = (run_on(big(), sched, AllocatorChoice::Auto, &flows).unwrap(), run_on(big(), sched, AllocatorChoice::Incremental, &flows).unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: Incremental differs from Auto on 40 links");
    }
}

#[test]
fn fair_sharing_auto_is_the_direct_fill_on_few_links() {
    // The leaf-spine of `run` has 24 links in the fill: Auto runs the direct fill, whose
    // finish times are the incremental fill's and the full recomputation's up to
    // rounding (incremental_tolerance), not bit for bit.
    let mut rng = SplitMix64::new(7);
    let flows = random_flows(&mut rng, 8, 300, 2e-5, true, false, true);
    for sched in ["ps", "wps"] {
        let tol = fabric_core::sim::incremental_tolerance(&Scheduler::parse(sched).unwrap());
        let auto = run(sched, AllocatorChoice::Auto, &flows).unwrap();
        for choice in [AllocatorChoice::Incremental, AllocatorChoice::Full] {
            let other = run(sched, choice, &flows).unwrap();
            for (k, (x, y)) in auto.iter().zip(&other).enumerate() {
                assert!((x - y).abs() <= tol * y.abs().max(1e-3), "{sched} flow {k}: Auto {x} vs {choice:?} {y}");
            }
        }
    }
    // The links in the fill are those the flows' paths use (and can bind).
    let names = |topo: Topology, choice: AllocatorChoice| {
        let mut cfg = SimConfig::new(Scheduler::Ps);
        cfg.allocator = choice;
        let flows = random_flows(&mut SplitMix64::new(3), topo.n_hosts, 300, 2e-5, false, false, false);
        Simulator::new(topo, flows, cfg).unwrap().allocator_name()
    };
    let small = || Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap();
    assert_eq!(names(small(), AllocatorChoice::Auto), "fair-sharing allocator, direct fill");
    assert_eq!(names(small(), AllocatorChoice::Incremental), "incremental fair-sharing allocator");
    assert_eq!(names(Topology::big_switch(&[10.0; 20]).unwrap(), AllocatorChoice::Auto), "incremental fair-sharing allocator");
    assert_eq!(names(Topology::big_switch(&[10.0; 16]).unwrap(), AllocatorChoice::Auto), "fair-sharing allocator, direct fill");
}

#[test]
fn incremental_is_an_error_where_the_scheduler_has_none() {
    let flows = vec![FlowSpec::new(0.0, 0, 1, 1e5)];
    for sched in ["racs", "sdc", "fair", "external"] {
        match run(sched, AllocatorChoice::Incremental, &flows) {
            Err(SimError::Unsupported(m)) => assert!(m.contains("no incremental allocator"), "{sched}: {m}"),
            other => panic!("{sched}: expected Unsupported, got {other:?}"),
        }
        run(sched, AllocatorChoice::Full, &flows).unwrap();
    }
}

/// Finish times of a PIAS run whose thresholds are replaced at each of `changes`
/// (time, thresholds) as it reaches it.
fn pias_with_changes(choice: AllocatorChoice, topo: &Topology, flows: &[FlowSpec], changes: &[(f64, Vec<f64>)]) -> Vec<f64> {
    let mut cfg = SimConfig::new(Scheduler::Pias);
    cfg.pias_thresholds_bytes = vec![2e4, 1e5];
    cfg.allocator = choice;
    let mut s = Simulator::new(topo.clone(), flows.to_vec(), cfg).unwrap();
    for (t, th) in changes {
        s.step(*t).unwrap();
        s.set_pias_thresholds(th.clone()).unwrap();
    }
    s.run().unwrap();
    s.finish_s().to_vec()
}

#[test]
fn pias_thresholds_change_mid_run_under_every_allocator() {
    // Raised (flows come back to a higher queue), lowered (demoted at once), more and
    // fewer queues: the incremental allocator re-places the flows whose queue changes and
    // ends where the full recomputation does.
    let changes = vec![
        (2e-4, vec![5e4, 4e5]),
        (6e-4, vec![5e3]),
        (9e-4, vec![1e4, 3e4, 9e4, 2.7e5]),
        (1.5e-3, vec![1e6]),
    ];
    let mut rng = SplitMix64::new(11);
    let topos = [Topology::big_switch(&[10.0; 8]).unwrap(), Topology::leaf_spine(2, 4, 2, &[10.0; 8], 20.0, 0).unwrap()];
    let mut moved = 0;
    for trial in 0..12 {
        let flows = random_flows(&mut rng, 8, 300, 1e-5, trial % 2 == 1, false, false);
        for topo in &topos {
            let full = pias_with_changes(AllocatorChoice::Full, topo, &flows, &changes);
            let inc = pias_with_changes(AllocatorChoice::Auto, topo, &flows, &changes);
            for (k, (x, y)) in inc.iter().zip(&full).enumerate() {
                assert!((x - y).abs() <= 1e-9 * y.abs().max(1e-3), "trial {trial} flow {k}: incremental {x} vs full {y}");
            }
            let unchanged = pias_with_changes(AllocatorChoice::Auto, topo, &flows, &[]);
            moved += inc.iter().zip(&unchanged).filter(|(a, b)| a != b).count();
        }
    }
    assert!(moved > 1000, "the changes should move many flows, moved {moved}");
}

#[test]
fn same_pias_thresholds_again_change_nothing() {
    let mut rng = SplitMix64::new(5);
    let flows = random_flows(&mut rng, 8, 300, 1e-5, false, false, false);
    let topo = Topology::leaf_spine(2, 4, 2, &[10.0; 8], 20.0, 0).unwrap();
    let same = [(3e-4, vec![2e4, 1e5]), (7e-4, vec![2e4, 1e5])];
    let a = pias_with_changes(AllocatorChoice::Auto, &topo, &flows, &same);
    let b = pias_with_changes(AllocatorChoice::Auto, &topo, &flows, &[]);
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "re-setting the same thresholds changed a finish time");
}

#[test]
fn las_auto_is_incremental_on_large_fabrics_with_long_paths() {
    // LAS's records take paths of up to 4 links; on longer paths Auto runs the incremental
    // allocator on a large fabric, and on a small one the wide records (paths of up to 10
    // links) or the full recomputation.
    let name = |topo: Topology, choice: AllocatorChoice| {
        let mut cfg = SimConfig::new(Scheduler::Las);
        cfg.allocator = choice;
        let flows = random_flows(&mut SplitMix64::new(3), topo.n_hosts, 200, 2e-5, false, false, false);
        Simulator::new(topo, flows, cfg).unwrap().allocator_name()
    };
    let min = fabric_core::sim::LAS_INCREMENTAL_MIN_HOSTS;
    // FatTree(8): 128 hosts, paths of up to 6 links; FatTree(12): 432 hosts.
    assert!(128 < min && min <= 432);
    assert_eq!(name(common::graphs::fat_tree(8, 10.0), AllocatorChoice::Auto), "LAS fast path of the full recomputation, wide records");
    // ParkingLot(8): paths of up to 9 links; ParkingLot(12): 13.
    assert_eq!(name(common::graphs::parking_lot(8, 10.0, 10.0), AllocatorChoice::Auto), "LAS fast path of the full recomputation, wide records");
    assert_eq!(name(common::graphs::parking_lot(12, 10.0, 10.0), AllocatorChoice::Auto), "full recomputation");
    assert_eq!(name(common::graphs::fat_tree(12, 10.0), AllocatorChoice::Auto), "incremental priority allocator");
    assert_eq!(name(common::graphs::fat_tree(12, 10.0), AllocatorChoice::Full), "full recomputation");
    // Paths of at most 4 links keep the records, whatever the size.
    assert_eq!(name(Topology::big_switch(&[10.0; 300]).unwrap(), AllocatorChoice::Auto), "LAS fast path of the full recomputation");
    assert_eq!(name(Topology::leaf_spine(20, 16, 4, &[10.0; 320], 40.0, 0).unwrap(), AllocatorChoice::Auto), "LAS fast path of the full recomputation");
    // Where Auto picks the incremental allocator it is that allocator, bit for bit, and
    // within LAS's tolerance of the full recomputation on a short trace.
    let topo = common::graphs::fat_tree(12, 10.0);
    let flows = random_flows(&mut SplitMix64::new(11), topo.n_hosts, 400, 2e-6, true, false, true);
    let auto = run_on(topo.clone(), "las", AllocatorChoice::Auto, &flows).unwrap();
    let incr = run_on(topo.clone(), "las", AllocatorChoice::Incremental, &flows).unwrap();
    let full = run_on(topo, "las", AllocatorChoice::Full, &flows).unwrap();
    assert!(auto.iter().zip(&incr).all(|(x, y)| x.to_bits() == y.to_bits()), "las: Auto differs from Incremental on FatTree(12)");
    let tol = fabric_core::sim::incremental_tolerance(&Scheduler::Las);
    for (k, (x, y)) in auto.iter().zip(&full).enumerate() {
        assert!((x - y).abs() <= tol * y.abs().max(1e-3), "las flow {k}: Auto {x} vs Full {y}");
    }
}
