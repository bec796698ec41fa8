//! Runs a trace (arrival_s,src,dst,size_bytes per line) under srpt on the 9x16 leaf-spine
//! (4 spines, 10/40 Gbps), pauses every `dt` seconds of simulated time between `from`
//! and `to`, and checks at each pause that every active flow's rate is the greedy SRPT
//! allocation recomputed from scratch through the public API (flows in order of
//! remaining size, then arrival, then index; each takes the least capacity its path has
//! left). Prints the first mismatches and the count.
//!
//!     cargo run --release --example check_srpt_greedy -- trace.csv 0 20 1e-4
use fabric_core::*;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&a[1]).expect("trace file");
    let flows: Vec<FlowSpec> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            FlowSpec::new(v[0].parse().unwrap(), v[1].parse().unwrap(), v[2].parse().unwrap(), v[3].parse().unwrap())
        })
        .collect();
    let (from, to, dt): (f64, f64, f64) = (a[2].parse().unwrap(), a[3].parse().unwrap(), a[4].parse().unwrap());
    let topo = Topology::leaf_spine(9, 16, 4, &[10.0; 144], 40.0, 0).unwrap();
    let caps = topo.capacity.clone();
    let mut s = Simulator::new(topo, flows, SimConfig::new(Scheduler::Srpt)).unwrap();
    let (mut until, mut bad, mut checks) = (from, 0u64, 0u64);
    loop {
        if matches!(s.step(until).unwrap(), Outcome::Done) || s.now() > to {
            break;
        }
        if s.now() >= until {
            until += dt;
        }
        if s.now() < from {
            continue;
        }
        checks += 1;
        let mut act: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
        let key = |i: usize| s.flow(i).size_bytes - s.sent_bytes(i);
        act.sort_by(|&x, &y| key(x).total_cmp(&key(y)).then(s.flow(x).arrival_s.total_cmp(&s.flow(y).arrival_s)).then(x.cmp(&y)));
        let mut res = caps.clone();
        for &i in &act {
            let mut r = f64::INFINITY;
            for &l in s.path(i) {
                let l = l as usize;
                r = r.min(if res[l] <= 1e-12 * caps[l] { 0.0 } else { res[l] });
            }
            for &l in s.path(i) {
                res[l as usize] -= r;
            }
            let got = s.rate_bytes_per_s(i);
            if (got - r).abs() > 1e-6 * r.max(got).max(1.0) {
                bad += 1;
                if bad <= 10 {
                    println!("t={:.12} flow {i}: rate {got}, greedy SRPT gives {r} (remaining {} bytes)", s.now(), key(i));
                }
                break;
            }
        }
    }
    println!("checks {checks} mismatches {bad} (t = {from} to {} s)", s.now().min(to));
}
