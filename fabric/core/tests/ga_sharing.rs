//! The GA transform's incomplete flows sharing their class (`SimConfig::incomplete_sharing
//! = Fair`): complete flows first by the inner policy, then the incomplete ones (data still
//! arriving) share what is left by max-min fairness, each at most at its data rate. Checked
//! against an independent from-scratch reference (`verify::asrpt_fair_rates`) along random
//! runs, by hand on one link, and for what `Auto` runs and refuses.
use fabric_core::rng::SplitMix64;
use fabric_core::*;

mod common;
use common::{assert_close, finish, random_flows};

fn config(sched: &str, sharing: PiasSharing, choice: AllocatorChoice) -> SimConfig {
    let mut cfg = SimConfig::new(Scheduler::parse(sched).unwrap());
    cfg.incomplete_sharing = sharing;
    cfg.allocator = choice;
    cfg
}

/// Random flows, every one with data arriving over a span (so that many are incomplete at
/// once), some slower than the host links.
fn spread_flows(seed: u64, hosts: usize, n: usize) -> Vec<FlowSpec> {
    let mut rng = SplitMix64::new(seed);
    let mut flows = random_flows(&mut rng, hosts, n, 2e-5, false, false, false);
    for f in &mut flows {
        f.data_span_s = rng.next_f64() * 6e-4;
    }
    flows
}

#[test]
fn rates_match_the_reference_along_random_runs() {
    let leaf_spine = Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap();
    for (seed, topo) in [(1, leaf_spine.clone()), (2, Topology::big_switch(&[10.0; 6]).unwrap()), (3, leaf_spine)] {
        let flows = spread_flows(seed, topo.n_hosts, 200);
        let mut s = Simulator::new(topo.clone(), flows, config("asrpt", PiasSharing::Fair, AllocatorChoice::Auto)).unwrap();
        let (mut until, mut checks, mut shared, mut capped) = (0.0, 0, 0, 0);
        loop {
            until += 1e-5;
            if matches!(s.step(until).unwrap(), Outcome::Done) {
                break;
            }
            if let Some((i, got, want)) = verify::asrpt_fair_mismatch(&s) {
                panic!("seed {seed} at t={}: flow {i} rate {got} but the reference gives {want}", s.now());
            }
            checks += 1;
            // the check has teeth: incomplete flows sharing a link with a rate, and at their caps
            let inc: Vec<usize> = s.active().iter().map(|&i| i as usize).filter(|&i| !s.is_complete(i)).collect();
            let busy = |i: usize| s.rate_bytes_per_s(i) > 0.0;
            shared += inc.iter().any(|&a| inc.iter().any(|&b| a < b && busy(a) && busy(b) && s.path(a).iter().any(|l| s.path(b).contains(l)))) as usize;
            capped += inc.iter().any(|&i| verify::data_cap(&s, i) < f64::INFINITY && s.rate_bytes_per_s(i) >= verify::data_cap(&s, i) * (1.0 - 1e-9)) as usize;
        }
        assert!(checks > 20 && shared > 5 && capped > 5, "seed {seed}: {checks} checks, {shared} shared, {capped} capped");
    }
}

#[test]
fn auto_runs_it_on_the_full_recomputation_and_fifo_stays_the_default() {
    let topo = Topology::leaf_spine(2, 4, 2, &[10.0; 8], 40.0, 0).unwrap();
    let flows = spread_flows(7, 8, 300);
    for sched in ["asrpt", "ga:ssdf"] {
        let a = finish(&topo, &flows, config(sched, PiasSharing::Fair, AllocatorChoice::Auto)).unwrap();
        let f = finish(&topo, &flows, config(sched, PiasSharing::Fair, AllocatorChoice::Full)).unwrap();
        assert!(a.iter().zip(&f).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: Auto differs from Full");
        // it is not FIFO, and FIFO is what SimConfig::new gives
        let fifo = finish(&topo, &flows, config(sched, PiasSharing::Fifo, AllocatorChoice::Full)).unwrap();
        assert!(a.iter().zip(&fifo).any(|(x, y)| (x - y).abs() > 1e-9 * x), "{sched}: fair = fifo");
        let default = finish(&topo, &flows, SimConfig { allocator: AllocatorChoice::Full, ..SimConfig::new(Scheduler::parse(sched).unwrap()) }).unwrap();
        assert!(default.iter().zip(&fifo).all(|(x, y)| x.to_bits() == y.to_bits()), "{sched}: the default is not fifo");
    }
    match finish(&topo, &flows, config("asrpt", PiasSharing::Fair, AllocatorChoice::Incremental)) {
        Err(SimError::Unsupported(m)) => assert!(m.contains("with incomplete_sharing='fair' has no incremental allocator"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    for sched in ["srpt", "pias", "ps", "gtcp:asrpt"] {
        let mut cfg = config(sched, PiasSharing::Fair, AllocatorChoice::Auto);
        cfg.pias_thresholds_bytes = vec![1e5];
        match Simulator::new(topo.clone(), Vec::new(), cfg) {
            Err(SimError::InvalidConfig(m)) => assert!(m.contains("incomplete_sharing='fair' applies to the GA transform"), "{m}"),
            other => panic!("{sched}: expected InvalidConfig, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn by_hand_on_one_link() {
    // Hosts 0 and 1 send to host 2 (10 Gbps = 1.25e9 bytes/s): one bottleneck, the
    // destination's link. Two flows of 1e6 bytes at t=0 whose data arrives over 2 ms (at
    // 5e8 bytes/s, 40% of the link): incomplete until 2 ms, each capped by its data, so
    // both send at 5e8 either way and are done at 2 ms.
    let c = 1.25e9;
    let topo = Topology::big_switch(&[10.0; 3]).unwrap();
    let slow = |src| FlowSpec { data_span_s: 2e-3, ..FlowSpec::new(0.0, src, 2, 1e6) };
    for sharing in [PiasSharing::Fifo, PiasSharing::Fair] {
        let f = finish(&topo, &[slow(0), slow(1)], config("asrpt", sharing, AllocatorChoice::Auto)).unwrap();
        assert_close(&f, &[2e-3, 2e-3], 1e-12, &format!("two slow flows ({sharing:?})"));
    }
    // Data over 0.4 ms (2.5e9 bytes/s, above the link): under FIFO the first takes the link
    // until its data is complete (0.5e9 bytes at 0.4 ms; then it is known and, as the
    // shorter remaining, keeps it: done at 0.8 ms) and the second waits; sharing, each
    // sends at c/2 until 0.4 ms (2.5e5 bytes), then both are complete with 7.5e5 left:
    // SRPT ties go by arrival, then trace order, so flow 0 finishes at 0.4 ms + 7.5e5/c
    // and flow 1 at 0.4 ms + 1.5e6/c.
    let fast = |src| FlowSpec { data_span_s: 4e-4, ..FlowSpec::new(0.0, src, 2, 1e6) };
    let f = finish(&topo, &[fast(0), fast(1)], config("asrpt", PiasSharing::Fair, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[4e-4 + 7.5e5 / c, 4e-4 + 1.5e6 / c], 1e-12, "two fast flows share");
    let f = finish(&topo, &[fast(0), fast(1)], config("asrpt", PiasSharing::Fifo, AllocatorChoice::Auto)).unwrap();
    assert_close(&f, &[1e6 / c, 2e6 / c], 1e-12, "two fast flows, FIFO");
}
