//! `SimConfig::allocator`: `Incremental` is `Auto` where the scheduler has an incremental
//! allocator (bit for bit) and an error where it has none; `set_pias_thresholds` needs
//! `Full`.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::random_flows;

fn run(sched: &str, choice: AllocatorChoice, flows: &[FlowSpec]) -> Result<Vec<f64>> {
    let mut cfg = SimConfig::new(Scheduler::parse(sched).unwrap());
    if sched == "pias" {
        cfg.pias_thresholds_bytes = vec![2e4, 1e5];
    }
    cfg.allocator = choice;
    let mut s = Simulator::new(Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap(), flows.to_vec(), cfg)?;
    s.run()?;
    Ok(s.finish_s().to_vec())
}

#[test]
fn incremental_is_auto_where_the_scheduler_has_one() {
    let mut rng = SplitMix64::new(7);
    let flows = random_flows(&mut rng, 8, 300, 2e-5, true, false, true);
    for sched in ["fifo", "srpt", "pias", "ps", "wps", "asrpt"] {
        let (a, b) = (run(sched, AllocatorChoice::Auto, &flows).unwrap(), run(sched, AllocatorChoice::Incremental, &flows).unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: Incremental differs from Auto");
    }
}

#[test]
fn incremental_is_an_error_where_the_scheduler_has_none() {
    let flows = vec![FlowSpec::new(0.0, 0, 1, 1e5)];
    for sched in ["las", "racs", "sdc", "fair", "external"] {
        match run(sched, AllocatorChoice::Incremental, &flows) {
            Err(SimError::Unsupported(m)) => assert!(m.contains("no incremental allocator"), "{sched}: {m}"),
            other => panic!("{sched}: expected Unsupported, got {other:?}"),
        }
        run(sched, AllocatorChoice::Full, &flows).unwrap();
    }
}

#[test]
fn set_pias_thresholds_needs_full() {
    let flows = vec![FlowSpec::new(0.0, 0, 1, 1e5), FlowSpec::new(0.0, 2, 1, 1e5)];
    for (choice, ok) in [(AllocatorChoice::Auto, false), (AllocatorChoice::Full, true)] {
        let mut cfg = SimConfig::new(Scheduler::Pias);
        cfg.pias_thresholds_bytes = vec![1e4];
        cfg.allocator = choice;
        let mut s = Simulator::new(Topology::big_switch(&[10.0; 4]).unwrap(), flows.clone(), cfg).unwrap();
        s.step(1e-6).unwrap();
        let r = s.set_pias_thresholds(vec![2e4]);
        assert_eq!(r.is_ok(), ok, "{choice:?}: {r:?}");
        if let Err(e) = r {
            assert!(e.to_string().contains("AllocatorChoice::Full"), "{e}");
        }
        s.run().unwrap();
    }
}
