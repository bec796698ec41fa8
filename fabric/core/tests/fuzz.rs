//! Property-based fuzzer of the simulator core (proptest).
//!
//! Each case draws a small random trace (ties in arrivals and sizes, sizes from 1 B to
//! 100 MB, deadlines, weights, data spans, hidden sizes), a topology (big switch or
//! leaf-spine, with varied host and core rates), a scheduler (every one of
//! `SCHEDULER_NAMES`, PIAS with random thresholds (per-flow FIFO or sharing inside a
//! queue), every `gtcp:<inner>`, `external` with
//! random scores), admission settings (k, window, every policy, external decisions),
//! deadline termination and a list of pauses. It runs the scheduler's own allocator
//! (the incremental one where there is one) paused at those times, and the full
//! recomputation (`AllocatorChoice::Full`), and checks:
//! - no panic, and both finish within an event budget (`SimConfig::max_events`) with
//!   no error (the progress guard turns a loop without progress into an error);
//! - the finish times and terminations agree within `sim::incremental_tolerance`;
//! - at every pause, the rates summed over each link are at most its capacity
//!   (relative 1e-9), and no flow has sent more than its size or its available data;
//! - every flow ends finished (having sent exactly its size, no faster than alone on
//!   an idle fabric) or terminated.
//!
//! Default: `DEFAULT_CASES` cases (4.5 s in a debug build here, seed 0). A long run:
//! `PROPTEST_CASES=20000 cargo test --release --manifest-path fabric/Cargo.toml --test fuzz`.
use fabric_core::sim::incremental_tolerance;
use fabric_core::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Events and flows simulated over the whole run (both paths), for the summary line.
static EVENTS: AtomicU64 = AtomicU64::new(0);
static FLOWS: AtomicU64 = AtomicU64::new(0);
/// Cases checked, and the number of the first that failed (before shrinking).
static CASES: AtomicU64 = AtomicU64::new(0);
static FIRST_FAIL: AtomicU64 = AtomicU64::new(0);

type TcResult<T> = std::result::Result<T, TestCaseError>;

const DEFAULT_CASES: u32 = 5000;

const SCHEDULERS: &[&str] = &[
    "fifo", "ps", "wps", "srpt", "asrpt", "ga:srpt", "ga:ssdf", "ga:lsdf", "las", "pias", "edf", "ssdf", "lsdf", "fair",
    "racs", "sdc", "random", "external", "gtcp:fifo", "gtcp:srpt", "gtcp:asrpt", "gtcp:ga:ssdf", "gtcp:las", "gtcp:pias",
    "gtcp:edf", "gtcp:ssdf", "gtcp:lsdf", "gtcp:random", "gtcp:ps", "pias/fair", "gtcp:pias/fair", "las/incr", "ps/incr", "wps/incr",
    "asrpt/fair", "ga:lsdf/fair",
];

/// The scheduler of a name of `SCHEDULERS`, and its sharing (`/fair`: sharing inside a
/// PIAS queue, `SimConfig::pias_sharing`, or among the GA transform's incomplete flows,
/// `SimConfig::incomplete_sharing`).
/// `/incr`: `AllocatorChoice::Incremental` instead of `Auto` (LAS, whose `Auto` is its
/// records fast path; `ps` and `wps`, whose `Auto` on the fuzzer's small fabrics is the
/// direct fill).
fn sched_of(name: &str) -> (Scheduler, PiasSharing) {
    let name = name.strip_suffix("/incr").unwrap_or(name);
    match name.strip_suffix("/fair") {
        Some(base) => (Scheduler::parse(base).unwrap(), PiasSharing::Fair),
        None => (Scheduler::parse(name).unwrap(), PiasSharing::Fifo),
    }
}
const POLICIES: &[&str] = &["fifo", "edf", "ssdf", "lsdf", "srpt", "random", "external"];

#[derive(Debug, Clone)]
enum Topo {
    Big(Vec<f64>),
    Leaf { tors: usize, hpt: usize, spines: usize, host: Vec<f64>, core: f64, seed: u64 },
}

impl Topo {
    fn hosts(&self) -> usize {
        match self {
            Topo::Big(r) => r.len(),
            Topo::Leaf { tors, hpt, .. } => tors * hpt,
        }
    }
    fn build(&self) -> Topology {
        match self {
            Topo::Big(r) => Topology::big_switch(r).unwrap(),
            Topo::Leaf { tors, hpt, spines, host, core, seed } => {
                Topology::leaf_spine(*tors, *hpt, *spines, &host[..tors * hpt], *core, *seed).unwrap()
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    topo: Topo,
    flows: Vec<FlowSpec>,
    sched: &'static str,
    thresholds: Vec<f64>,
    admission: Option<(usize, usize, &'static str)>,
    terminate_missed: bool,
    /// Pause times (absolute), in increasing order, and whether to pause at flow changes.
    pauses: Vec<f64>,
    pause_on_flow_change: bool,
    /// Scores for `external`, one set per pause (cycled).
    scores: Vec<f64>,
    seed: u64,
}

const RATES: &[f64] = &[1.0, 10.0, 10.0, 25.0, 40.0];

fn topo_strategy() -> impl Strategy<Value = Topo> {
    let rates = prop::collection::vec(prop::sample::select(RATES), 9);
    prop_oneof![
        (2usize..=6, rates.clone()).prop_map(|(n, r)| Topo::Big(r[..n].to_vec())),
        (1usize..=3, 1usize..=3, 1usize..=3, rates, prop::sample::select(&[2.5, 7.5, 10.0, 40.0][..]), 0u64..4).prop_filter_map(
            "a leaf-spine needs 2 hosts",
            |(tors, hpt, spines, host, core, seed)| (tors * hpt >= 2).then_some(Topo::Leaf { tors, hpt, spines, host, core, seed })
        ),
    ]
}

/// Sizes from 1 B to 100 MB, log-uniform, or one of a few values (ties).
fn size_strategy() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (0.0f64..8.0).prop_map(|e| 10f64.powf(e).round().max(1.0)),
        1 => prop::sample::select(&[1.0, 1460.0, 1e5, 1e6, 1.5e6, 1e8][..]),
    ]
}

fn flow_strategy() -> impl Strategy<Value = (f64, usize, usize, f64, Option<f64>, f64, f64, bool)> {
    (
        // gap to the previous arrival: none (a tie), tiny, or up to 1 ms
        prop_oneof![2 => Just(0.0), 1 => 1e-12f64..1e-9, 3 => 0.0f64..1e-3],
        0usize..64,
        1usize..64,
        size_strategy(),
        prop::option::weighted(0.3, 1e-6f64..2e-2),
        // weights near 1; with FUZZ_EXTREME_WEIGHTS set, now and then the trace contract's
        // ends (1e-6, 1e6) too (open: see docs/reliability.md)
        prop::sample::select(if std::env::var_os("FUZZ_EXTREME_WEIGHTS").is_some() {
            &[1.0, 1.0, 2.0, 0.5, 3.7, 1.0, 2.0, 0.5, 1e-6, 1e6][..]
        } else {
            &[1.0, 1.0, 2.0, 0.5, 3.7][..]
        }),
        prop_oneof![3 => Just(0.0), 1 => 0.0f64..5e-3],
        prop::bool::weighted(0.85),
    )
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        topo_strategy(),
        prop::collection::vec(flow_strategy(), 1..12),
        prop::sample::select(SCHEDULERS),
        prop::collection::vec(size_strategy(), 1..4),
        prop::option::weighted(0.3, (1usize..=3, 0usize..=3, prop::sample::select(POLICIES))),
        prop::bool::weighted(0.3),
        prop::collection::vec(0.0f64..2e-2, 0..6),
        prop::bool::weighted(0.3),
        prop::collection::vec(-5.0f64..5.0, 1..16),
        0u64..1000,
    )
        .prop_map(|(topo, fl, sched, mut th, admission, terminate_missed, mut pauses, pofc, scores, seed)| {
            let h = topo.hosts();
            let mut t = 0.0;
            let flows = fl
                .into_iter()
                .map(|(gap, src, off, size, dl, w, span, known)| {
                    t += gap;
                    let src = src % h;
                    let dst = (src + 1 + off % (h - 1)) % h;
                    let mut f = FlowSpec::new(t, src, dst, size);
                    f.deadline_s = dl.unwrap_or(f64::NAN);
                    f.weight = w;
                    f.data_span_s = span;
                    f.size_known = known;
                    f
                })
                .collect();
            th.sort_by(f64::total_cmp);
            th.dedup();
            pauses.sort_by(f64::total_cmp);
            Case {
                topo,
                flows,
                sched,
                thresholds: th,
                admission,
                terminate_missed,
                pauses,
                pause_on_flow_change: pofc,
                scores,
                seed,
            }
        })
}

/// Makes the case one the simulator accepts: size-reading policies see sizes; gtcp has
/// no admission, termination or data spans; external admission only with the driver.
fn normalize(c: &mut Case) {
    let s = sched_of(c.sched).0;
    let a_size = c.admission.is_some_and(|(_, _, p)| AdmissionPolicy::parse(p).unwrap().uses_size());
    if s.uses_size() || a_size {
        for f in &mut c.flows {
            f.size_known = true;
        }
    }
    if matches!(s, Scheduler::Gtcp(_)) {
        c.admission = None;
        c.terminate_missed = false;
        for f in &mut c.flows {
            f.data_span_s = 0.0;
        }
    }
}

/// Events a case may take: a few per flow and threshold, and the RACS updates.
fn event_budget(c: &Case) -> u64 {
    let end = c.flows.iter().map(|f| f.arrival_s + f.data_span_s).fold(0.0, f64::max)
        + c.flows.iter().map(|f| f.size_bytes).sum::<f64>() / 1.25e8;
    let racs = if c.sched == "racs" { (end / 300e-6) as u64 + 10 } else { 0 };
    2_000 + 200 * c.flows.len() as u64 * (c.thresholds.len() as u64 + 4) + 2 * racs
}

struct Run {
    finish: Vec<f64>,
    terminated: Vec<bool>,
}

fn check_pause(s: &Simulator, c: &Case) -> TcResult<()> {
    let topo = s.topology();
    let mut load = vec![0.0; topo.n_links()];
    for &i in s.active() {
        let i = i as usize;
        let r = s.rate_bytes_per_s(i);
        prop_assert!(r >= 0.0 && r.is_finite(), "flow {i}: rate {r}");
        for &l in s.path(i) {
            load[l as usize] += r;
        }
    }
    for (l, (&x, &cap)) in load.iter().zip(&topo.capacity).enumerate() {
        prop_assert!(x <= cap * (1.0 + 1e-9), "t = {}: link {} carries {x} B/s, capacity {cap}", s.now(), topo.name(l));
    }
    let t = s.now();
    for i in 0..s.n_flows() {
        let f = &c.flows[i];
        let sent = s.sent_bytes(i);
        prop_assert!(sent <= f.size_bytes, "flow {i}: sent {sent} > size {}", f.size_bytes);
        if f.data_span_s > 0.0 {
            let avail = f.size_bytes * ((t - f.arrival_s) / f.data_span_s).clamp(0.0, 1.0);
            prop_assert!(sent <= avail + 1e-9 * f.size_bytes + 1e-6, "t = {t}: flow {i} sent {sent} of {avail} available");
        }
    }
    Ok(())
}

fn run(c: &Case, full: bool, paused: bool) -> TcResult<Run> {
    let (sched, sharing) = sched_of(c.sched);
    let is_pias = matches!(&sched, Scheduler::Pias) || sched == Scheduler::Gtcp(Box::new(Scheduler::Pias));
    let is_ga = matches!(&sched, Scheduler::Ga(_));
    let mut cfg = SimConfig::new(sched);
    cfg.pias_thresholds_bytes = if is_pias { c.thresholds.clone() } else { Vec::new() };
    if is_ga {
        cfg.incomplete_sharing = sharing;
    } else {
        cfg.pias_sharing = sharing;
    }
    cfg.admission = c.admission.map(|(k, window, p)| AdmissionConfig { k, window, policy: AdmissionPolicy::parse(p).unwrap() });
    cfg.terminate_missed = c.terminate_missed;
    cfg.seed = c.seed;
    cfg.allocator = if full {
        AllocatorChoice::Full
    } else if c.sched.ends_with("/incr") {
        AllocatorChoice::Incremental
    } else {
        AllocatorChoice::Auto
    };
    cfg.pause_on_flow_change = paused && c.pause_on_flow_change;
    cfg.max_events = Some(event_budget(c));
    let mut s = Simulator::new(c.topo.build(), c.flows.clone(), cfg).map_err(|e| TestCaseError::fail(format!("new: {e}")))?;
    let external = c.sched == "external";
    let both = same_pauses(c);
    let mut k = 0usize;
    let set_scores = |s: &mut Simulator, k: usize| {
        for i in 0..s.n_flows() {
            s.set_score(i, c.scores[(i + k) % c.scores.len()]).unwrap();
        }
    };
    if external {
        set_scores(&mut s, 0);
    }
    loop {
        let until = if paused || both { c.pauses.get(k).copied().unwrap_or(f64::INFINITY) } else { f64::INFINITY };
        let out = s.step(until).map_err(|e| TestCaseError::fail(format!("step (full = {full}): {e}")))?;
        check_pause(&s, c)?;
        match out {
            Outcome::Done => break,
            Outcome::Decision { dst } => {
                // A choice both paths make alike: a function of the window's flows.
                let w = s.window(dst);
                let pos = (w.iter().map(|&x| x as usize).sum::<usize>() + c.seed as usize) % w.len();
                s.admit(dst, pos).map_err(|e| TestCaseError::fail(format!("admit: {e}")))?;
            }
            Outcome::TimeReached => {
                k += 1;
                if external {
                    set_scores(&mut s, k);
                }
            }
            Outcome::FlowsChanged => {}
        }
    }
    EVENTS.fetch_add(s.stats().events, Relaxed);
    FLOWS.fetch_add(s.n_flows() as u64, Relaxed);
    let fin = s.finish_s().to_vec();
    let term = s.terminated();
    for i in 0..s.n_flows() {
        let f = &c.flows[i];
        prop_assert!(term[i] || fin[i].is_finite(), "flow {i} neither finished nor terminated");
        if !term[i] {
            prop_assert_eq!(s.sent_bytes(i), f.size_bytes, "flow {} finished without sending its size", i);
            let ideal = s.ideal_fct_s(i);
            prop_assert!(s.fct_s(i) >= ideal * (1.0 - 1e-9) - 1e-12, "flow {i}: fct {} below its ideal {ideal}", s.fct_s(i));
        }
    }
    Ok(Run { finish: fin, terminated: term })
}

/// Schedulers whose rates depend on when they are evaluated pause at the same times in
/// both runs: `external` (its scores change at pauses) and `racs` (a pause re-evaluates
/// its weights, which depend on the remaining sizes, as its periodic update does).
fn same_pauses(c: &Case) -> bool {
    matches!(c.sched, "external" | "racs")
}

fn check(mut c: Case) -> TcResult<()> {
    normalize(&mut c);
    // FUZZ_SKIP=name,name... leaves schedulers out (to look past a known failure);
    // FUZZ_ONLY=name,name... runs only those.
    if std::env::var("FUZZ_SKIP").is_ok_and(|v| v.split(',').any(|x| x == c.sched))
        || std::env::var("FUZZ_ONLY").is_ok_and(|v| !v.split(',').any(|x| x == c.sched))
    {
        return Ok(());
    }
    let k = CASES.fetch_add(1, Relaxed) + 1;
    let r = check_case(c);
    if r.is_err() && FIRST_FAIL.load(Relaxed) == 0 {
        FIRST_FAIL.store(k, Relaxed);
    }
    r
}

fn check_case(c: Case) -> TcResult<()> {
    let (lo, hi) = c.flows.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), f| (lo.min(f.weight), hi.max(f.weight)));
    if c.sched == "wps/incr" && hi / lo > fabric_core::sim::WPS_INCREMENTAL_MAX_WEIGHT_RATIO {
        // refused: the incremental fill cannot keep such weights within the tolerance
        let mut cfg = SimConfig::new(Scheduler::Wps);
        cfg.allocator = AllocatorChoice::Incremental;
        let err = Simulator::new(c.topo.build(), c.flows.clone(), cfg).err().map(|e| e.to_string()).unwrap_or_default();
        prop_assert!(err.contains("allocator 'incremental' under wps with weights"), "wps/incr not refused: {err}");
        return Ok(());
    }
    let own = run(&c, false, true)?;
    let full = run(&c, true, false)?;
    let tol = incremental_tolerance(&sched_of(c.sched).0);
    // Pausing is not part of the scheduler: a non-zero slack for paused runs (a pause
    // re-evaluates the rates, which can round differently).
    let tol = if c.pauses.is_empty() || same_pauses(&c) { tol } else { tol.max(1e-9) };
    prop_assert_eq!(&own.terminated, &full.terminated, "terminated flows differ");
    for (i, (a, b)) in own.finish.iter().zip(&full.finish).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * b.abs().max(1e-3);
        prop_assert!(ok, "flow {i}: own allocator {a} vs full recomputation {b} (tolerance {tol:e})");
    }
    Ok(())
}

#[test]
fn fuzz_own_allocator_against_full_recomputation() {
    // Deterministic, so that CI runs the same cases; FUZZ_SEED=<u64> draws others.
    let (mut runner, n, seed) = common::fuzz_runner(DEFAULT_CASES);
    let t0 = std::time::Instant::now();
    let res = runner.run(&case_strategy(), check);
    eprintln!(
        "fuzz: {n} cases (seed {seed}) in {:.1} s: {} checked (with shrinking; {}), {} flows and {} events simulated",
        t0.elapsed().as_secs_f64(),
        CASES.load(Relaxed),
        match FIRST_FAIL.load(Relaxed) {
            0 => "no failure".to_string(),
            k => format!("first failure at case {k}"),
        },
        FLOWS.load(Relaxed),
        EVENTS.load(Relaxed)
    );
    if let Err(e) = res {
        panic!("{e}");
    }
}
