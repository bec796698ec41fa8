//! Runs the packet model on a trace CSV (as `flowsched generate` writes, or YAPS's
//! id,arrival_s,src,dst,size_bytes) with `benchmarks/bench_packet.py`'s settings for one
//! transport on a 144-host 10 Gbps big switch (or the 9-leaf, 4-spine, 40 Gbps leaf-spine of
//! `bench_trace.rs`), and prints the CPU time of the run (no
//! Python, for profiling and for timing builds against each other), the event count and
//! a hash of the per-flow finish times' bits (equal hashes: the same results bit for bit).
//!
//!     cargo run --release --example bench_packet -- trace.csv [pfabric|dctcp|tcp] [runs] [bigswitch|leafspine]
use fabric_core::*;
use std::time::Instant;

mod common;

/// CPU time of this process, s (user + system, from /proc/self/stat; Linux only).
fn cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // the fields after the command name in parentheses: utime and stime are 14 and 15
    let rest = s.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let v: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| v.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0 // USER_HZ is 100 on Linux
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let flows: Vec<FlowSpec> = common::read_trace(&a[1]);
    let transport = a.get(2).map(String::as_str).unwrap_or("pfabric");
    let runs: usize = a.get(3).map(|x| x.parse().unwrap()).unwrap_or(1);
    let topo = match a.get(4).map(String::as_str) {
        Some("leafspine") => Topology::leaf_spine(9, 16, 4, &[10.0; 144], 40.0, 0).unwrap(),
        _ => Topology::big_switch(&[10.0; 144]).unwrap(),
    };
    // benchmarks/bench_packet.py's SETTINGS, delay_us = 0.2
    let mut cfg = PacketConfig::new(Scheduler::parse(if transport == "pfabric" { "srpt" } else { "ps" }).unwrap());
    cfg.transport = Some(Transport::parse(transport).unwrap());
    cfg.delay_per_hop_s = 0.2e-6;
    if transport == "pfabric" {
        cfg.buffer_bytes = Some(36_864);
        cfg.init_cwnd_packets = Some(12.0);
        cfg.max_cwnd_packets = Some(15.0);
        cfg.min_rto_s = Some(45e-6);
    } else {
        cfg.buffer_bytes = Some(360_000);
        cfg.init_cwnd_packets = Some(10.0);
        cfg.min_rto_s = Some(1e-3);
    }
    for _ in 0..runs {
        let (c0, t0) = (cpu_s(), Instant::now());
        let mut sim = PacketSimulator::new(&topo, &flows, cfg.clone()).unwrap();
        sim.run().unwrap();
        let (cpu, wall) = (cpu_s() - c0, t0.elapsed().as_secs_f64());
        let mut h: u64 = 0xcbf29ce484222325;
        for x in sim.finish_s() {
            h = (h ^ x.to_bits()).wrapping_mul(0x100000001b3);
        }
        let st = sim.stats();
        println!(
            "{transport} {} flows: {cpu:.3} s CPU, {wall:.3} s wall, {} events, peak {} pending, finish hash {h:016x}",
            flows.len(),
            st.events,
            st.peak_pending_events
        );
    }
}
