//! PIAS with sharing inside a queue (`SimConfig::pias_sharing = Fair`): strict priority
//! between the queues, max-min fair sharing among the flows of one queue. Checked against
//! an independent from-scratch reference (`verify::pias_fair_rates`) along random runs,
//! against `ps` where there is one queue, and by hand on small cases; `Auto` runs it on the
//! full recomputation (there is no incremental allocator for it).
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::{assert_close, finish, random_flows};

const TH: [f64; 2] = [2e4, 1e5];

fn config(sched: &str, sharing: PiasSharing, th: &[f64], choice: AllocatorChoice) -> SimConfig {
    let mut cfg = SimConfig::new(Scheduler::parse(sched).unwrap());
    cfg.pias_thresholds_bytes = th.to_vec();
    cfg.pias_sharing = sharing;
    cfg.allocator = choice;
    cfg
}

fn leaf_spine() -> Topology {
    Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap()
}

#[test]
fn rates_match_the_reference_along_random_runs() {
    for (seed, topo) in [(1, leaf_spine()), (2, Topology::big_switch(&[10.0; 6]).unwrap()), (3, leaf_spine())] {
        let mut rng = SplitMix64::new(seed);
        let hosts = topo.n_hosts;
        let flows = random_flows(&mut rng, hosts, 200, 2e-5, false, false, false);
        let mut s = Simulator::new(topo.clone(), flows, config("pias", PiasSharing::Fair, &TH, AllocatorChoice::Auto)).unwrap();
        let (mut until, mut checks, mut multi) = (0.0, 0, 0);
        loop {
            until += 1e-5;
            if matches!(s.step(until).unwrap(), Outcome::Done) {
                break;
            }
            if let Some((i, got, want)) = verify::pias_fair_mismatch(&s, &TH) {
                panic!("seed {seed} at t={}: flow {i} rate {got} but the reference gives {want}", s.now());
            }
            checks += 1;
            // the check has teeth: several flows of one queue in flight, sharing
            let q0 = s.active().iter().filter(|&&i| s.sent_bytes(i as usize) < TH[0]).count();
            multi += (q0 >= 2) as usize;
        }
        assert!(checks > 20 && multi > 5, "seed {seed}: {checks} checks, {multi} with a shared queue");
    }
}

#[test]
fn auto_runs_it_on_the_full_recomputation() {
    let mut rng = SplitMix64::new(7);
    let spans = random_flows(&mut rng, 8, 300, 2e-5, true, false, true);
    let plain = random_flows(&mut rng, 8, 300, 2e-5, false, false, true);
    let topo = leaf_spine();
    // (gtcp refuses data spans)
    for (sched, flows) in [("pias", &spans), ("gtcp:pias", &plain)] {
        let a = finish(&topo, flows, config(sched, PiasSharing::Fair, &TH, AllocatorChoice::Auto)).unwrap();
        let f = finish(&topo, flows, config(sched, PiasSharing::Fair, &TH, AllocatorChoice::Full)).unwrap();
        if sched == "pias" {
            assert!(a.iter().zip(&f).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: Auto differs from Full");
        } else {
            // gtcp's shadow `ps` run is incremental under Auto: equal up to rounding
            assert_close(&a, &f, 1e-9, "gtcp:pias, Auto vs Full");
        }
        // and it is not per-flow FIFO
        let fifo = finish(&topo, flows, config(sched, PiasSharing::Fifo, &TH, AllocatorChoice::Full)).unwrap();
        assert!(a.iter().zip(&fifo).any(|(x, y)| (x - y).abs() > 1e-9 * x), "{sched}: fair = fifo");
    }
    match finish(&topo, &plain, config("pias", PiasSharing::Fair, &TH, AllocatorChoice::Incremental)) {
        Err(SimError::Unsupported(m)) => {
            assert!(m.contains("'pias' with pias_sharing='fair' has no incremental allocator"), "{m}")
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn one_queue_is_ps() {
    let mut rng = SplitMix64::new(11);
    // data spans too: caps from data arriving over time
    let flows = random_flows(&mut rng, 8, 300, 2e-5, true, false, false);
    for topo in [leaf_spine(), Topology::big_switch(&[10.0; 8]).unwrap()] {
        for choice in [AllocatorChoice::Auto, AllocatorChoice::Full] {
            let ps = finish(&topo, &flows, config("ps", PiasSharing::Fifo, &[], choice)).unwrap();
            // no threshold: one queue
            let none = finish(&topo, &flows, config("pias", PiasSharing::Fair, &[], AllocatorChoice::Auto)).unwrap();
            assert_close(&none, &ps, 1e-12, &format!("no threshold vs ps ({choice:?})"));
            // thresholds nobody reaches (the largest flow is 3.01e5 bytes)
            let big = finish(&topo, &flows, config("pias", PiasSharing::Fair, &[1e7, 1e9], AllocatorChoice::Auto)).unwrap();
            assert_close(&big, &ps, 1e-12, &format!("thresholds above every size vs ps ({choice:?})"));
        }
    }
}

#[test]
fn by_hand_on_one_link() {
    // Hosts 0, 1, 2 send to host 3 (10 Gbps = 1.25e9 bytes/s): one bottleneck.
    let c = 1.25e9;
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let th = [1e5];
    // Two flows of 1e4 bytes at t=0 (queue 0 throughout): fair, they share and finish
    // together at 2e4 / c; FIFO, one after the other.
    let two = vec![FlowSpec::new(0.0, 0, 3, 1e4), FlowSpec::new(0.0, 1, 3, 1e4)];
    let f = finish(&topo, &two, config("pias", PiasSharing::Fair, &th, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[2e4 / c, 2e4 / c], 1e-12, "two mice share");
    let f = finish(&topo, &two, config("pias", PiasSharing::Fifo, &th, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[1e4 / c, 2e4 / c], 1e-12, "two mice in FIFO");
    // An elephant (1e6) alone until t0, when two mice of 1e4 arrive: it has sent
    // 1e5 (the threshold) at 1e5 / c, so at t0 = 2e5 / c it is in queue 1 and stops
    // while the mice share the link (queue 0): they finish at t0 + 2e4 / c; then the
    // elephant has 1e6 - 2e5 left alone: it finishes at 1e6 / c + 2e4 / c.
    let t0 = 2e5 / c;
    let three = vec![FlowSpec::new(0.0, 0, 3, 1e6), FlowSpec::new(t0, 1, 3, 1e4), FlowSpec::new(t0, 2, 3, 1e4)];
    let f = finish(&topo, &three, config("pias", PiasSharing::Fair, &th, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[1.02e6 / c, t0 + 2e4 / c, t0 + 2e4 / c], 1e-9, "elephant demoted, mice share");
    // Two flows of 3e5 together: they share queue 0 up to the threshold (both reach it
    // at 2e5 / c), then share queue 1: both finish at 6e5 / c.
    let pair = vec![FlowSpec::new(0.0, 0, 3, 3e5), FlowSpec::new(0.0, 1, 3, 3e5)];
    let f = finish(&topo, &pair, config("pias", PiasSharing::Fair, &th, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[6e5 / c, 6e5 / c], 1e-9, "a pair through both queues");
}

#[test]
fn bad_configs_are_refused() {
    let flows = vec![FlowSpec::new(0.0, 0, 1, 1e5)];
    let topo = Topology::big_switch(&[10.0; 4]).unwrap();
    let e = finish(&topo, &flows, config("srpt", PiasSharing::Fair, &[], AllocatorChoice::Auto)).unwrap_err().to_string();
    assert!(e.contains("pias_sharing='fair' applies to the pias scheduler"), "{e}");
    let e = finish(&topo, &flows, config("pias", PiasSharing::Fifo, &[], AllocatorChoice::Auto)).unwrap_err().to_string();
    assert!(e.contains("pias needs at least one threshold"), "{e}");
    let e = PiasSharing::parse("ps").unwrap_err().to_string();
    assert!(e.contains("unknown pias_sharing 'ps'; known: fifo, fair"), "{e}");
}
