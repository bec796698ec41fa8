//! PIAS: a flow stopped within the tolerance of a demotion threshold (a relative 1e-9
//! below it), a moment before its own threshold event, is in the lower queue from then
//! on. The incremental allocator used to keep it in its old place on its link lists
//! while its priority already read the lower queue: the lists fell out of priority order,
//! flows behind it on one link and ahead of it on another were served in the wrong
//! order, and on the leaf-spine the re-evaluation could go round a cycle of such flows
//! forever (issue 16: `pias` with one threshold of 1,946,000 B livelocked at t = 0.229 s).
use fabric_core::*;

/// Y demotes at th / C. A, which arrived 4e-16 s after Y at the same rate C, has then
/// sent 5e-7 B less than th (within the tolerance of 1e-3 B), and X, now ahead of Y on
/// Y's destination, stops it. W arrived after A behind it on A's links: from then on W
/// (queue 0) is ahead of A (queue 1), and W finishes long before A.
fn flows() -> Vec<FlowSpec> {
    vec![
        FlowSpec::new(0.0, 2, 1, 3e6),   // Y
        FlowSpec::new(2e-16, 0, 1, 1e6), // X
        FlowSpec::new(4e-16, 0, 3, 3e6), // A
        FlowSpec::new(6e-16, 0, 3, 1e5), // W
    ]
}

fn run(full: bool) -> Simulator {
    let mut cfg = SimConfig::new(Scheduler::Pias);
    cfg.pias_thresholds_bytes = vec![1e6];
    cfg.allocator = if full { AllocatorChoice::Full } else { AllocatorChoice::Auto };
    let mut s = Simulator::new(Topology::big_switch(&[10.0; 4]).unwrap(), flows(), cfg).unwrap();
    s.run().unwrap();
    s
}

#[test]
fn pias_flow_stopped_within_tolerance_of_threshold_is_demoted() {
    let (inc, full) = (run(false), run(true));
    let c = 1.25e9;
    // X runs from Y's demotion at th / C for 1e6 / C, then W, then A.
    let w_done = 2.0 * 1e6 / c + 1e5 / c;
    assert!((full.finish_s()[3] - w_done).abs() < 1e-12, "full recomputation: W at {}", full.finish_s()[3]);
    for i in 0..4 {
        let (a, b) = (inc.finish_s()[i], full.finish_s()[i]);
        assert!((a - b).abs() <= 1e-9 * b, "flow {i}: incremental {a} vs full {b}");
    }
}
