//! Exact sample paths for small hand-computed cases. Links of 1 byte/s (8e-9 Gbps)
//! unless said otherwise, so sizes in bytes read as seconds of service.
use fabric_core::*;

const UNIT_GBPS: f64 = 8e-9; // 1 byte/s

fn flow(arrival: f64, src: usize, dst: usize, size: f64) -> FlowSpec {
    FlowSpec::new(arrival, src, dst, size)
}

fn run_cfg(hosts: usize, gbps: f64, flows: Vec<FlowSpec>, cfg: SimConfig) -> Simulator {
    let topo = Topology::big_switch(&vec![gbps; hosts]).unwrap();
    let mut s = Simulator::new(topo, flows, cfg).unwrap();
    s.run().unwrap();
    s
}

fn run(hosts: usize, gbps: f64, flows: Vec<FlowSpec>, sched: &str) -> Vec<f64> {
    let s = run_cfg(hosts, gbps, flows, SimConfig::new(Scheduler::parse(sched).unwrap()));
    (0..s.n_flows()).map(|i| s.fct_s(i)).collect()
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-9 * y.abs().max(1e-6), "got {a:?}, expected {b:?}");
    }
}

#[test]
fn srpt_preempts_and_ps_shares() {
    // 10 Gbps = 1.25e9 B/s: 1.25 MB takes 1 ms alone.
    let f = || vec![flow(0.0, 0, 1, 1.25e6), flow(0.0, 0, 1, 2.5e6), flow(0.0005, 0, 1, 1e5)];
    close(&run(2, 10.0, f(), "srpt"), &[1.08e-3, 3.08e-3, 0.08e-3]);
    // PS: two flows at half rate until 0.5 ms; then three at a third: the small one needs
    // 1e5 B at 1.25e9/3 B/s = 0.24 ms.
    close(&run(2, 10.0, f(), "ps"), &[2.08e-3, 3.08e-3, 0.24e-3]);
}

#[test]
fn las_group_catches_up_then_shares() {
    // A (4 B) alone until B (2 B) arrives at 1; B alone until its attained service equals
    // A's (t = 2); then both share at 1/2: B done at 4, A alone to 6.
    close(&run(2, UNIT_GBPS, vec![flow(0.0, 0, 1, 4.0), flow(1.0, 0, 1, 2.0)], "las"), &[6.0, 3.0]);
}

#[test]
fn pias_demotes_at_thresholds_fifo_within_queue() {
    // Threshold 1 B: A crosses into queue 1 at t = 1 when B arrives; B is served alone in
    // queue 0 until t = 2, then queue 1 is FIFO: A (3 B left) to t = 5, B to t = 6.
    let mut cfg = SimConfig::new(Scheduler::Pias);
    cfg.pias_thresholds_bytes = vec![1.0];
    let s = run_cfg(2, UNIT_GBPS, vec![flow(0.0, 0, 1, 4.0), flow(1.0, 0, 1, 2.0)], cfg);
    close(&[s.fct_s(0), s.fct_s(1)], &[5.0, 5.0]);
}

#[test]
fn big_switch_greedy_matching() {
    // pFabric's Ideal: SRPT order f1 (1 B, 0->1), f2 (2 B, 0->2), f3 (3 B, 2->1).
    // f1 blocks both others; at t = 1 f2 and f3 run in parallel on disjoint ports.
    let f = vec![flow(0.0, 0, 1, 1.0), flow(0.0, 0, 2, 2.0), flow(0.0, 2, 1, 3.0)];
    close(&run(3, UNIT_GBPS, f.clone(), "srpt"), &[1.0, 3.0, 4.0]);
    // Fair sharing: max-min over up0, down1 (each shared by two flows): all 1/2 until f1
    // finishes at 2 (f2, f3 have 1 and 2 B left), then f2 and f3 at full rate.
    close(&run(3, UNIT_GBPS, f, "ps"), &[2.0, 3.0, 4.0]);
}

#[test]
fn data_availability_caps_and_catch_up() {
    // C = 2 B/s. A: 10 B arriving over 10 s (data rate 1 B/s); B: 4 B at once.
    let mk = || {
        let mut a = flow(0.0, 0, 1, 10.0);
        a.data_span_s = 10.0;
        vec![a, flow(0.0, 0, 1, 4.0)]
    };
    // PS: A is capped at its data rate 1, B gets the other 1 B/s -> B at 4, A at 10.
    close(&run(2, 2.0 * UNIT_GBPS, mk(), "ps"), &[10.0, 4.0]);
    // SRPT: B first at 2 B/s (done at 2); A then sends at 2 B/s with 2 B banked, catches up
    // with its data at t = 4 and is capped at 1 B/s until its data ends at 10.
    close(&run(2, 2.0 * UNIT_GBPS, mk(), "srpt"), &[10.0, 2.0]);
    // Ideal FCT: alone it is limited by its data: max(10/2, 10) = 10.
    let s = run_cfg(2, 2.0 * UNIT_GBPS, mk(), SimConfig::new(Scheduler::Ps));
    close(&[s.ideal_fct_s(0), s.ideal_fct_s(1)], &[10.0, 2.0]);
}

#[test]
fn asrpt_serves_complete_flows_first() {
    // C = 1. A: 3 B, complete at once. B: 1 B arriving over 4 s (incomplete until t = 4).
    // ASRPT: A first (complete), B waits (incomplete flows are FIFO behind complete ones)
    // though it is smaller; SRPT would serve B at its data rate 1/4 beside A.
    let mk = || {
        let mut b = flow(0.0, 0, 1, 1.0);
        b.data_span_s = 4.0;
        vec![flow(0.0, 0, 1, 3.0), b]
    };
    // A done at 3; B then has 3/4 B available, sends them at once, and the last 1/4 B
    // arrives at rate 1/4 until t = 4.
    close(&run(2, UNIT_GBPS, mk(), "asrpt"), &[3.0, 4.0]);
    // SRPT: B (remaining 1 < 3) first, capped at its data rate 1/4; A gets 3/4 B/s until
    // t = 4, when it has 0 B left... 3 B at 3/4 B/s = 4 s: both finish at 4.
    close(&run(2, UNIT_GBPS, mk(), "srpt"), &[4.0, 4.0]);
}

#[test]
fn destination_admission_window() {
    // Three requests to host 0 at t = 0 of 3, 2, 1 B from hosts 1, 2, 3; k = 1.
    let f = || vec![flow(0.0, 1, 0, 3.0), flow(0.0, 2, 0, 2.0), flow(0.0, 3, 0, 1.0)];
    let cfg = |policy, window| {
        let mut c = SimConfig::new(Scheduler::Ps);
        c.admission = Some(AdmissionConfig { k: 1, window, policy });
        c
    };
    let fct = |s: Simulator| (0..3).map(|i| s.fct_s(i)).collect::<Vec<_>>();
    close(&fct(run_cfg(4, UNIT_GBPS, f(), cfg(AdmissionPolicy::Fifo, 0))), &[3.0, 5.0, 6.0]);
    close(&fct(run_cfg(4, UNIT_GBPS, f(), cfg(AdmissionPolicy::Srpt, 0))), &[6.0, 3.0, 1.0]);
    // Only the first two waiting are eligible: 2 B first, then 1 B, then 3 B.
    close(&fct(run_cfg(4, UNIT_GBPS, f(), cfg(AdmissionPolicy::Srpt, 2))), &[6.0, 2.0, 3.0]);
}

#[test]
fn external_admission_pauses_for_decisions() {
    let mut c = SimConfig::new(Scheduler::Ps);
    c.admission = Some(AdmissionConfig { k: 1, window: 2, policy: AdmissionPolicy::External });
    let topo = Topology::big_switch(&[UNIT_GBPS; 4]).unwrap();
    let f = vec![flow(0.0, 1, 0, 3.0), flow(0.0, 2, 0, 2.0), flow(0.0, 3, 0, 1.0)];
    let mut s = Simulator::new(topo, f, c).unwrap();
    assert_eq!(s.step(f64::INFINITY).unwrap(), Outcome::Decision { dst: 0 });
    assert_eq!(s.window(0), vec![0, 1]);
    assert!(s.admit(0, 2).is_err()); // outside the window
    assert!(s.admit(1, 0).is_err()); // nothing pending there
    s.admit(0, 1).unwrap();
    assert_eq!(s.step(f64::INFINITY).unwrap(), Outcome::Decision { dst: 0 });
    assert_eq!(s.now(), 2.0);
    s.admit(0, 1).unwrap(); // the 1 B request
    assert_eq!(s.step(f64::INFINITY).unwrap(), Outcome::Decision { dst: 0 });
    s.admit(0, 0).unwrap();
    assert_eq!(s.step(f64::INFINITY).unwrap(), Outcome::Done);
    close(&[s.fct_s(0), s.fct_s(1), s.fct_s(2)], &[6.0, 2.0, 3.0]);
}

#[test]
fn terminate_missed_deadlines_frees_capacity() {
    // FIFO: A (3 B, deadline 1 s) blocks B (1 B) until A is terminated at t = 1.
    let mut a = flow(0.0, 0, 1, 3.0);
    a.deadline_s = 1.0;
    let mut cfg = SimConfig::new(Scheduler::Fifo);
    cfg.terminate_missed = true;
    let s = run_cfg(2, UNIT_GBPS, vec![a, flow(0.5, 0, 1, 1.0)], cfg);
    assert_eq!(s.status(0), Status::Terminated);
    assert!(s.finish_s()[0].is_nan());
    close(&[s.sent_bytes(0), s.fct_s(1)], &[1.0, 1.5]);
}

#[test]
fn gtcp_keeps_each_path_aggregate() {
    // Pair (0->1) has two flows, pair (0->2) one; they share up0. Under ps each flow gets
    // 1/3 until the 1 B flow ends at 3; gtcp:srpt gives pair 0->1's 2/3 to its smaller
    // flow first, so it ends at 1.5, and the pair's bytes track ps: its last flow ends
    // when it does under ps.
    let f = || vec![flow(0.0, 0, 1, 1.0), flow(0.0, 0, 1, 2.0), flow(0.0, 0, 2, 2.0)];
    let ps = run(3, UNIT_GBPS, f(), "ps");
    let g = run(3, UNIT_GBPS, f(), "gtcp:srpt");
    close(&ps, &[3.0, 5.0, 5.0]);
    close(&g, &[1.5, 5.0, 5.0]);
}

#[test]
fn fair_serves_the_first_to_finish_under_ps() {
    // Single link, sizes 2 and 1 at t = 0: under PS the 1 B flow finishes first, so FAIR
    // serves it first: 1 then 3.
    close(&run(2, UNIT_GBPS, vec![flow(0.0, 0, 1, 2.0), flow(0.0, 0, 1, 1.0)], "fair"), &[3.0, 1.0]);
}

#[test]
fn heterogeneous_host_rates_and_delay() {
    // Host 1's downlink is 1 B/s, host 0's uplink 2 B/s: the path runs at 1 B/s.
    let topo = Topology::big_switch(&[2.0 * UNIT_GBPS, UNIT_GBPS]).unwrap();
    let mut cfg = SimConfig::new(Scheduler::Ps);
    cfg.delay_per_hop_s = 0.25;
    let mut s = Simulator::new(topo, vec![flow(0.0, 0, 1, 3.0)], cfg).unwrap();
    s.run().unwrap();
    close(&[s.fct_s(0), s.ideal_fct_s(0)], &[3.5, 3.5]);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let topo = Topology::big_switch(&[10.0; 2]).unwrap();
    let e = Simulator::new(topo.clone(), vec![flow(0.0, 0, 0, 1.0)], SimConfig::new(Scheduler::Ps)).unwrap_err();
    assert!(e.to_string().contains("row 0") && e.to_string().contains("src == dst"), "{e}");
    let e = Simulator::new(topo.clone(), vec![flow(0.0, 0, 1, 1.0), flow(0.0, 0, 5, 1.0)], SimConfig::new(Scheduler::Ps)).unwrap_err();
    assert!(e.to_string().contains("row 1") && e.to_string().contains("'dst'"), "{e}");
    let e = Simulator::new(topo.clone(), vec![flow(f64::NAN, 0, 1, 1.0)], SimConfig::new(Scheduler::Ps)).unwrap_err();
    assert!(e.to_string().contains("arrival_s"), "{e}");
    let mut hidden = flow(0.0, 0, 1, 1.0);
    hidden.size_known = false;
    let e = Simulator::new(topo.clone(), vec![hidden], SimConfig::new(Scheduler::Srpt)).unwrap_err();
    assert!(matches!(e, SimError::Unsupported(_)), "{e}");
    assert!(Simulator::new(topo, vec![hidden], SimConfig::new(Scheduler::Las)).is_ok());
}
