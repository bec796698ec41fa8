//! Runs a trace from a CSV file (as `flowsched generate` writes, or arrival_s,src,dst,
//! size_bytes per line without a header) and prints the
//! wall time, the event count, the mean FCT and a hash of the finish times' bits.
//!
//!     cargo run --release --example bench_trace -- trace.csv ps [bigswitch|leafspine|parkinglot|fattree] [full|incremental]
//!
//! `bigswitch` and `leafspine` have 144 hosts at 10 Gbps (the leaf-spine 9 x 16 with 4
//! spines at 40 Gbps); `parkinglot` is `ParkingLot(8, 10, 40)` (8 hosts, each on its own
//! switch, the switches in a line at 40 Gbps: m3's flowSim's two-layer parking lot);
//! `fattree` is `FatTree(16, 10, 10)` (1,024 hosts, every link at 10 Gbps).
//!
//! `BENCH_PROGRESS=DT` prints the wall time, events and active flows every DT seconds of
//! simulated time.
//!
//! With `check DT` in place of `full` (srpt, ps), it also pauses every DT seconds of
//! simulated time and checks that every active flow's rate is the allocation
//! recomputed from scratch (`fabric_core::verify`: greedy SRPT, or max-min fair sharing
//! by progressive filling), then prints the number of
//! checks and mismatches (the wall time then includes the checks).
use fabric_core::*;
use std::time::Instant;

mod common;
#[path = "../tests/common/graphs.rs"]
mod graphs;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let flows: Vec<FlowSpec> = common::read_trace(&a[1]);
    let topo = match a.get(3).map(String::as_str) {
        Some("leafspine") => Topology::leaf_spine(9, 16, 4, &[10.0; 144], 40.0, 0).unwrap(),
        Some("parkinglot") => graphs::parking_lot(8, 10.0, 40.0),
        Some("fattree") => graphs::fat_tree(16, 10.0),
        _ => Topology::big_switch(&[10.0; 144]).unwrap(),
    };
    let mut cfg = SimConfig::new(Scheduler::parse(&a[2]).unwrap());
    if a[2] == "pias" {
        // The package's default: flowsched.workloads.pias_thresholds("websearch", 0.8).
        cfg.pias_thresholds_bytes = vec![1327140.0, 1940340.0, 2406080.0, 2861600.0, 3128780.0, 3412020.0, 3626640.0];
    }
    if a.get(4).is_some_and(|s| s == "full") {
        cfg.allocator = AllocatorChoice::Full;
    }
    if a.get(4).is_some_and(|s| s == "incremental") {
        cfg.allocator = AllocatorChoice::Incremental;
    }
    let n = flows.len();
    let t0 = Instant::now();
    let mut s = Simulator::new(topo, flows, cfg).unwrap();
    let check_dt: Option<f64> = match a.get(4).map(String::as_str) {
        Some("check") => Some(a.get(5).expect("check DT").parse().expect("DT in seconds")),
        _ => None,
    };
    if let Some(dt) = check_dt {
        let (mut until, mut checks, mut bad) = (dt, 0u64, 0u64);
        while !matches!(s.step(until).unwrap(), Outcome::Done) {
            until = s.now() + dt;
            checks += 1;
            let bad_flow = if a[2] == "ps" { verify::maxmin_mismatch(&s, false) } else { verify::srpt_mismatch(&s) };
            if let Some((i, got, want)) = bad_flow {
                bad += 1;
                if bad <= 10 {
                    println!("t={:.12} flow {i}: rate {got}, recomputed {want}", s.now());
                }
            }
        }
        println!("checks {checks} mismatches {bad}");
    } else if let Ok(dt) = std::env::var("BENCH_PROGRESS") {
        // BENCH_PROGRESS=DT: pause every DT s of simulated time and print the wall time,
        // the events and allocations so far, and the active flows and how many have a rate.
        let dt: f64 = dt.parse().expect("BENCH_PROGRESS: seconds of simulated time");
        assert!(dt.is_finite() && dt > 0.0, "BENCH_PROGRESS: a positive number of seconds, got {dt}");
        let mut until = dt;
        while !matches!(s.step(until).unwrap(), Outcome::Done) {
            let act = s.active();
            let with_rate = act.iter().filter(|&&i| s.rate_bytes_per_s(i as usize) > 0.0).count();
            let st = s.stats();
            println!(
                "t={:.3} wall {:.3} events {} allocations {} active {} with rate {with_rate}",
                s.now(),
                t0.elapsed().as_secs_f64(),
                st.events,
                st.allocations,
                act.len()
            );
            until = s.now() + dt;
        }
    } else {
        s.run().unwrap();
    }
    let wall = t0.elapsed().as_secs_f64();
    let fin = s.finish_s();
    // BENCH_FINISH_OUT=path: every finish time, one a line ({:e}, round-trip exact), for
    // per-flow comparisons between builds.
    if let Ok(path) = std::env::var("BENCH_FINISH_OUT") {
        let text: String = fin.iter().map(|x| format!("{x:e}\n")).collect();
        std::fs::write(&path, text).expect("writing BENCH_FINISH_OUT");
    }
    let sum: f64 = (0..n).map(|i| fin[i] - s.flow(i).arrival_s).sum();
    // FNV-1a over the bits of every finish time: equal hashes mean bit-identical results.
    let hash = fin.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3));
    println!(
        "{} flows {n} wall {wall:.3} s  {:.0} flows/s  events {}  mean fct {:.9e}  finish hash {hash:016x}",
        a[2],
        n as f64 / wall,
        s.stats().events,
        sum / n as f64
    );
}

