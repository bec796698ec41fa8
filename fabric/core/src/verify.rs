//! Independent recomputations of what the allocators produce, from what a `Simulator`
//! reports through its public accessors, for tests and for checking long runs.

use crate::Simulator;

/// The active flows in SRPT order: remaining bytes, then arrival time, then index.
pub fn srpt_order(s: &Simulator) -> Vec<usize> {
    let mut act: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
    let key = |i: usize| s.flow(i).size_bytes - s.sent_bytes(i);
    act.sort_by(|&x, &y| key(x).total_cmp(&key(y)).then(s.flow(x).arrival_s.total_cmp(&s.flow(y).arrival_s)).then(x.cmp(&y)));
    act
}

/// The greedy strict-priority allocation of the flows in `order` (highest priority
/// first), computed from scratch: each flow takes the least capacity its path has left
/// after the flows before it, and nothing on a link with less than 1e-12 of its capacity
/// left. Flows without data spans only (a rate cap is not applied).
pub fn greedy_rates(s: &Simulator, order: &[usize]) -> Vec<f64> {
    let caps = &s.topology().capacity;
    let mut res = caps.clone();
    order
        .iter()
        .map(|&i| {
            let mut r = f64::INFINITY;
            for &l in s.path(i) {
                let l = l as usize;
                r = r.min(if res[l] <= 1e-12 * caps[l] { 0.0 } else { res[l] });
            }
            for &l in s.path(i) {
                res[l as usize] -= r;
            }
            r
        })
        .collect()
}

/// The first active flow (in SRPT order) whose rate differs from the greedy SRPT
/// allocation by more than 1e-6 of the larger: (flow, its rate, the greedy rate).
pub fn srpt_mismatch(s: &Simulator) -> Option<(usize, f64, f64)> {
    let order = srpt_order(s);
    let want = greedy_rates(s, &order);
    first_mismatch(s, order.into_iter(), want)
}

/// The first of `flows` whose rate differs from `want` (by position) by more than 1e-6
/// of the larger: (flow, its rate, the wanted rate).
fn first_mismatch(s: &Simulator, flows: impl Iterator<Item = usize>, want: Vec<f64>) -> Option<(usize, f64, f64)> {
    flows.zip(want).map(|(i, r)| (i, s.rate_bytes_per_s(i), r)).find(|&(_, got, r)| (got - r).abs() > 1e-6 * r.max(got).max(1.0))
}

/// The weighted max-min fair allocation of the active flows (no rate caps: flows without
/// data spans), computed from scratch by progressive filling: the link with the least
/// capacity left per unit of unfrozen weight freezes its unfrozen flows at that share
/// times their weight, until every flow is frozen. With `weighted` false every weight is
/// 1 (`ps`); with true, each flow's trace weight (`wps`). Rates by position in
/// `s.active()`.
pub fn maxmin_rates(s: &Simulator, weighted: bool) -> Vec<f64> {
    let caps = &s.topology().capacity;
    let act = s.active();
    let w = |k: usize| if weighted { s.flow(act[k] as usize).weight } else { 1.0 };
    let mut res = caps.clone();
    let mut wsum = vec![0.0f64; caps.len()];
    let mut n = vec![0usize; caps.len()];
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); caps.len()];
    for (k, &i) in act.iter().enumerate() {
        for &l in s.path(i as usize) {
            wsum[l as usize] += w(k);
            n[l as usize] += 1;
            on[l as usize].push(k);
        }
    }
    let share = |l: usize, res: &[f64], wsum: &[f64]| res[l].max(0.0) / wsum[l];
    let mut rate = vec![f64::NAN; act.len()];
    loop {
        let best = (0..caps.len()).filter(|&l| n[l] > 0).min_by(|&a, &b| share(a, &res, &wsum).total_cmp(&share(b, &res, &wsum)));
        let Some(l) = best else { break };
        let x = share(l, &res, &wsum);
        for k in std::mem::take(&mut on[l]) {
            if !rate[k].is_nan() {
                continue;
            }
            rate[k] = w(k) * x;
            for &m in s.path(act[k] as usize) {
                let m = m as usize;
                res[m] -= rate[k];
                wsum[m] -= w(k);
                n[m] -= 1;
            }
        }
    }
    rate
}

/// The first active flow whose rate differs from the max-min fair allocation
/// (`maxmin_rates`) by more than 1e-6 of the larger: (flow, its rate, the max-min rate).
pub fn maxmin_mismatch(s: &Simulator, weighted: bool) -> Option<(usize, f64, f64)> {
    let want = maxmin_rates(s, weighted);
    first_mismatch(s, s.active().iter().map(|&i| i as usize), want)
}
