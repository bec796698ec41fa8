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
    let mut res = s.topology().capacity.clone();
    greedy_fill(s, order, &mut res)
}

/// `greedy_rates` on the capacities `res` left, which it then lowers by the rates.
fn greedy_fill(s: &Simulator, order: &[usize], res: &mut [f64]) -> Vec<f64> {
    let caps = &s.topology().capacity;
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
    let act: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
    let mut res = s.topology().capacity.clone();
    maxmin_fill(s, &act, weighted, &mut res)
}

/// Progressive filling of the flows `act` on the capacities `res` left (`maxmin_rates`),
/// which it then lowers by their rates. Rates by position in `act`.
fn maxmin_fill(s: &Simulator, act: &[usize], weighted: bool, res: &mut [f64]) -> Vec<f64> {
    let nl = res.len();
    let w = |k: usize| if weighted { s.flow(act[k]).weight } else { 1.0 };
    // Compensated sums (`WeightSum`): weights 1e12 apart leave a plain running sum the
    // rounding of the heavy ones where a light one is left.
    let mut wsum = vec![crate::fill::WeightSum::ZERO; nl];
    let mut n = vec![0usize; nl];
    let mut on: Vec<Vec<usize>> = vec![Vec::new(); nl];
    for (k, &i) in act.iter().enumerate() {
        for &l in s.path(i) {
            wsum[l as usize].add(w(k));
            n[l as usize] += 1;
            on[l as usize].push(k);
        }
    }
    let share = |l: usize, res: &[f64], wsum: &[crate::fill::WeightSum]| res[l].max(0.0) / wsum[l].value();
    let mut rate = vec![f64::NAN; act.len()];
    loop {
        let best = (0..nl).filter(|&l| n[l] > 0).min_by(|&a, &b| share(a, res, &wsum).total_cmp(&share(b, res, &wsum)));
        let Some(l) = best else { break };
        let x = share(l, res, &wsum);
        for k in std::mem::take(&mut on[l]) {
            if !rate[k].is_nan() {
                continue;
            }
            rate[k] = w(k) * x;
            for &m in s.path(act[k]) {
                let m = m as usize;
                res[m] -= rate[k];
                wsum[m].add(-w(k));
                n[m] -= 1;
            }
        }
    }
    rate
}

/// PIAS with sharing inside a queue (`pias_sharing = Fair`), from scratch: each active
/// flow's queue is the number of `thresholds` its bytes sent have reached (within a
/// relative 1e-9 of each); the flows of the highest-priority queue share the links by
/// max-min fairness (equal weights), those of the next queue share what is left by
/// max-min, and so on. Rates by position in `s.active()` (no rate caps: flows without
/// data spans).
pub fn pias_fair_rates(s: &Simulator, thresholds: &[f64]) -> Vec<f64> {
    let act: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
    let queue = |i: usize| {
        let sent = s.sent_bytes(i);
        thresholds.iter().filter(|&&x| x < sent + 1e-9 * x.abs().max(1.0)).count()
    };
    let mut res = s.topology().capacity.clone();
    let mut rate = vec![f64::NAN; act.len()];
    for q in 0..=thresholds.len() {
        let ks: Vec<usize> = (0..act.len()).filter(|&k| queue(act[k]) == q).collect();
        let members: Vec<usize> = ks.iter().map(|&k| act[k]).collect();
        for (k, r) in ks.into_iter().zip(maxmin_fill(s, &members, false, &mut res)) {
            rate[k] = r;
        }
    }
    rate
}

/// The first active flow whose rate differs from `pias_fair_rates` by more than 1e-6 of
/// the larger: (flow, its rate, the reference rate).
pub fn pias_fair_mismatch(s: &Simulator, thresholds: &[f64]) -> Option<(usize, f64, f64)> {
    let want = pias_fair_rates(s, thresholds);
    first_mismatch(s, s.active().iter().map(|&i| i as usize), want)
}

/// Flow i's rate cap from its data arriving over time (`data_span_s`): its data rate
/// (size / span) once it has sent what has arrived by now (within a relative 1e-9 of its
/// size), else none (infinite).
pub fn data_cap(s: &Simulator, i: usize) -> f64 {
    let f = s.flow(i);
    let t = s.now();
    if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s {
        let arrived = f.size_bytes * ((t - f.arrival_s) / f.data_span_s).clamp(0.0, 1.0);
        if s.sent_bytes(i) >= arrived - 1e-9 * f.size_bytes.max(1.0) {
            return f.size_bytes / f.data_span_s;
        }
    }
    f64::INFINITY
}

/// ASRPT (`ga:srpt`) with its incomplete flows sharing (`incomplete_sharing = Fair`), from
/// scratch: the complete flows (all their data arrived) by greedy SRPT (remaining bytes,
/// then arrival, then index; `greedy_rates`), then the incomplete flows share what is left
/// by max-min fairness (equal weights), each at most at its data cap (`data_cap`): a
/// progressive filling in which a flow whose cap the level reaches first freezes there.
/// Rates by position in `s.active()`.
pub fn asrpt_fair_rates(s: &Simulator) -> Vec<f64> {
    let act: Vec<usize> = s.active().iter().map(|&i| i as usize).collect();
    let complete: Vec<usize> = srpt_order(s).into_iter().filter(|&i| s.is_complete(i)).collect();
    let mut res = s.topology().capacity.clone();
    let mut rate_of = vec![f64::NAN; s.n_flows()];
    for (&i, r) in complete.iter().zip(greedy_fill(s, &complete, &mut res)) {
        rate_of[i] = r;
    }
    let incomplete: Vec<usize> = act.iter().copied().filter(|&i| !s.is_complete(i)).collect();
    let nl = res.len();
    let mut n = vec![0usize; nl];
    for &i in &incomplete {
        for &l in s.path(i) {
            n[l as usize] += 1;
        }
    }
    let mut left: Vec<usize> = incomplete;
    while !left.is_empty() {
        // the lowest level: a link's share of what is left, or a flow's cap
        let link = (0..nl).filter(|&l| n[l] > 0).map(|l| (res[l].max(0.0) / n[l] as f64, l)).min_by(|a, b| a.0.total_cmp(&b.0));
        let capped = left.iter().map(|&i| (data_cap(s, i), i)).min_by(|a, b| a.0.total_cmp(&b.0));
        let (level, frozen): (f64, Vec<usize>) = match (link, capped) {
            (_, Some((c, i))) if link.is_none_or(|(x, _)| c <= x) => (c, vec![i]),
            (Some((x, l)), _) => (x, left.iter().copied().filter(|&i| s.path(i).contains(&(l as u32))).collect()),
            _ => unreachable!("flows left, so a link with flows or a cap"),
        };
        for &i in &frozen {
            rate_of[i] = level;
            for &l in s.path(i) {
                res[l as usize] -= level;
                n[l as usize] -= 1;
            }
        }
        left.retain(|i| !frozen.contains(i));
    }
    act.iter().map(|&i| rate_of[i]).collect()
}

/// The first active flow whose rate differs from `asrpt_fair_rates` by more than 1e-6 of
/// the larger: (flow, its rate, the reference rate).
pub fn asrpt_fair_mismatch(s: &Simulator) -> Option<(usize, f64, f64)> {
    let want = asrpt_fair_rates(s);
    first_mismatch(s, s.active().iter().map(|&i| i as usize), want)
}

/// The first active flow whose rate differs from the max-min fair allocation
/// (`maxmin_rates`) by more than 1e-6 of the larger: (flow, its rate, the max-min rate).
pub fn maxmin_mismatch(s: &Simulator, weighted: bool) -> Option<(usize, f64, f64)> {
    let want = maxmin_rates(s, weighted);
    first_mismatch(s, s.active().iter().map(|&i| i as usize), want)
}
