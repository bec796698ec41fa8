//! The full recomputation: every active flow's rate from scratch at every event, for
//! every scheduler. Sharing policies (`ps`, `wps`, `racs`, `sdc`) are one weighted
//! max-min fill (fill.rs); strict-priority policies sort the active flows by their keys
//! and fill each group of equal keys in turn (groups share only where ties share: LAS,
//! `external`); `gtcp:*` splits the shadow fair-sharing run's rate on each path by
//! priority. The next event is the earliest completion, catch-up, threshold or key
//! crossing. It is the reference the other allocators are tested against
//! (`AllocatorChoice::Full`; tests/allocator_choice.rs, tests/incremental.rs).
use super::{filled, pass_again_at, tol_of, total_order_bits, Core, INF};
use crate::error::Result;
use crate::fill::{Filler, Paths};
use crate::sched::{GaInner, PiasSharing, Scheduler};

/// The full recomputation's own state: the filler and its scratch, the keys of the
/// last sort, and the per-link lists of the crossing pass.
#[derive(Debug, Clone)]
pub(super) struct FullRecomputation {
    /// Progressive filling (fill.rs).
    filler: Filler,
    /// Per link, the capacity not yet given out in the current allocation, bytes/s.
    residual: Vec<f64>,
    /// Per path (`Core::path_id`), the shadow run's total rate on it (gtcp).
    shadow_path_rate: Vec<f64>,
    /// Per link, where its flows start in `link_list_flows` (next crossing).
    link_list_start: Vec<u32>,
    /// The active flows of every link, in priority order, concatenated (next crossing).
    link_list_flows: Vec<u32>,
    /// Each active flow's priority key at the last sort: class (lower first)...
    key_class: Vec<f64>,
    /// ... then value (lower first) ...
    key_value: Vec<f64>,
    /// ... and the value's change per byte sent (SRPT: -1, LAS: 1), for crossing times.
    key_per_byte: Vec<f64>,
    /// Keys this far apart per second of t are equal (`same_key`; LAS and gtcp:las only,
    /// else 0): what the fastest link sends in a few ulps of t, the rounding of a
    /// crossing's time.
    key_abs_tol: f64,
    /// Scratch of the sort: each active flow's whole sort key, packed (see `sort_active_by_key`).
    sort_keys: Vec<SortKey>,
    /// Per path (`Core::path_id`), the bytes of all the trace's flows on it (gtcp; filled at
    /// its first allocation).
    path_bytes: Vec<f64>,
}

/// A flow's sort key as integers in the order of the comparison it replaces: path index
/// (or 0), then class, value and arrival time as `f64::total_cmp` orders them, then the
/// flow's index. Every key is distinct (the index), so sorting these gives the order of
/// the stable sort by the comparison.
type SortKey = (u32, u64, u64, u64, u32);

impl FullRecomputation {
    /// The allocator of a run of `n` flows over `n_paths` distinct paths on links of
    /// capacities `capacity` (bytes/s), with key tolerance `key_abs_tol`.
    pub(super) fn new(n: usize, n_paths: usize, capacity: &[f64], key_abs_tol: f64) -> Result<Self> {
        let n_links = capacity.len();
        Ok(FullRecomputation {
            filler: Filler::try_new(n_links)?,
            residual: filled(n_links, 0.0, "per-link state")?,
            shadow_path_rate: vec![0.0; n_paths],
            link_list_start: filled(n_links + 1, 0, "per-link state")?,
            link_list_flows: Vec::new(),
            key_class: vec![0.0; n],
            key_value: vec![0.0; n],
            key_per_byte: vec![0.0; n],
            key_abs_tol,
            sort_keys: Vec::new(),
            path_bytes: Vec::new(),
        })
    }
}

impl FullRecomputation {
    /// Sets every active flow's rate from scratch, and the next event time.
    pub(super) fn recompute(&mut self, core: &mut Core) {
        let t = core.now;
        // Caps from data availability: a flow that has caught up with its data sends at the data rate.
        for &i in &core.active {
            let i = i as usize;
            let f = &core.flows[i];
            core.cap[i] = if f.data_span_s > 0.0 && t < f.arrival_s + f.data_span_s && core.caught_up(i, t, core.sent[i]) {
                f.size_bytes / f.data_span_s
            } else {
                INF
            };
        }
        self.residual.copy_from_slice(&core.topo.capacity);
        let sched = core.cfg.scheduler.clone();
        match &sched {
            Scheduler::Ps | Scheduler::Wps | Scheduler::Racs | Scheduler::Sdc => {
                for &i in &core.active {
                    let i = i as usize;
                    core.weight[i] = match sched {
                        Scheduler::Ps => 1.0,
                        Scheduler::Wps => core.flows[i].weight,
                        Scheduler::Racs => {
                            let r = &core.cfg.racs;
                            r.w_min + r.w_max * (-r.a_per_byte * (core.flows[i].size_bytes - core.sent[i])).exp()
                        }
                        _ => core.cfg.sdc.weights[core.sdc_class(core.flows[i].size_bytes - core.sent[i])],
                    };
                }
                let paths = Paths { off: &core.path_off, links: &core.path_links };
                self.filler.fill(&core.active, &paths, &core.weight, &core.cap, &mut self.residual, &mut core.rate);
            }
            Scheduler::Gtcp(inner) => self.allocate_gtcp(core, inner),
            _ => self.allocate_priority(core, &sched),
        }
        self.compute_next_event(core, &sched);
    }

    fn sort_active_by_key(&mut self, core: &mut Core, s: &Scheduler, by_path: bool) {
        for k in 0..core.active.len() {
            let i = core.active[k] as usize;
            let (a, b, sl) = core.key(s, i);
            self.key_class[i] = a;
            self.key_value[i] = b;
            self.key_per_byte[i] = sl;
        }
        // By path (when asked), class, value; equal keys fall back to arrival time, then
        // trace order. The keys packed beside each flow and sorted as integers: the same
        // order as a sort by the comparison of the arrays (cheaper: the switch env sorts
        // about 40 flows by new scores at each step).
        let (k1, k2, pix, fl) = (&self.key_class, &self.key_value, &core.path_id, &core.flows);
        let keys = &mut self.sort_keys;
        keys.clear();
        keys.extend(core.active.iter().map(|&i| {
            let a = i as usize;
            let p = if by_path { pix[a] } else { 0 };
            (p, total_order_bits(k1[a]), total_order_bits(k2[a]), total_order_bits(fl[a].arrival_s), i)
        }));
        // stable and adaptive (the order changes little from one event to the next, but for
        // new scores); the keys are distinct, so any sort gives this order
        keys.sort();
        if matches!(s, Scheduler::Fair) && !by_path {
            // FAIR's key is a projected finish time in the shadow fair-sharing run: flows
            // that would finish together there (in exact arithmetic) get times a rounding
            // apart, which the shadow's own allocator decides. Projected finishes within
            // `tol_of` of the one before count as tied: such a run goes by arrival, then
            // trace order, as exact ties do.
            let mut a = 0;
            while a < keys.len() {
                let mut b = a + 1;
                while b < keys.len()
                    && keys[b].1 == keys[a].1
                    && k2[keys[b].4 as usize] - k2[keys[b - 1].4 as usize] <= tol_of(k2[keys[b].4 as usize])
                {
                    b += 1;
                }
                if b - a > 1 {
                    keys[a..b].sort_by_key(|k| (k.3, k.4));
                }
                a = b;
            }
        }
        for (slot, key) in core.active.iter_mut().zip(keys.iter()) {
            *slot = key.4;
        }
    }

    /// Whether flows with equal keys share (fluid LAS/FB serves equally the flows with the
    /// least attained service; equal external scores share; PIAS with
    /// `pias_sharing = Fair`, whose key is its queue, shares inside a queue). Every other priority policy
    /// is a strict order: ties go to the earlier arrival, then to the earlier trace row.
    fn ties_share(&self, core: &Core) -> bool {
        let eff = match &core.cfg.scheduler {
            Scheduler::Gtcp(inner) => inner.as_ref(),
            other => other,
        };
        matches!(eff, Scheduler::Las | Scheduler::External)
            || (matches!(eff, Scheduler::Pias) && core.cfg.pias_sharing == PiasSharing::Fair)
    }

    #[inline]
    fn same_key(&self, core: &Core, a: usize, b: usize) -> bool {
        self.key_class[a] == self.key_class[b]
            && (self.key_value[a] - self.key_value[b]).abs()
                <= tol_of(self.key_value[a].abs().max(self.key_value[b].abs())).max(self.key_abs_tol * core.now)
    }

    fn allocate_priority(&mut self, core: &mut Core, s: &Scheduler) {
        self.sort_active_by_key(core, s, false);
        // Equal-priority flows share with equal weights.
        for &i in &core.active {
            core.weight[i as usize] = 1.0;
        }
        let n = core.active.len();
        let share = self.ties_share(core);
        // the GA transform's incomplete flows (class 2) with `incomplete_sharing = Fair`:
        // one key, filled together
        let share_incomplete = core.cfg.incomplete_sharing == PiasSharing::Fair;
        let paths = Paths { off: &core.path_off, links: &core.path_links };
        let mut a = 0;
        while a < n {
            let first = core.active[a] as usize;
            let mut b = a + 1;
            let share_here = share || (share_incomplete && self.key_class[first] == 2.0);
            while share_here && b < n && self.same_key(core, first, core.active[b] as usize) {
                b += 1;
            }
            self.filler.fill(&core.active[a..b], &paths, &core.weight, &core.cap, &mut self.residual, &mut core.rate);
            a = b;
        }
    }

    fn allocate_gtcp(&mut self, core: &mut Core, inner: &Scheduler) {
        let sh = core.shadow.as_ref().expect("gtcp has a shadow run");
        for &i in sh.active() {
            self.shadow_path_rate[core.path_id[i as usize] as usize] += sh.rate_bytes_per_s(i as usize);
        }
        // A flow on a path the shadow run has no flow on any more has only the rounding of
        // the path's finished flows left (the path carries the shadow's bytes, and each flow
        // finishes within its finish tolerance, 1e-9 of its size): within 1e-9 of the
        // path's bytes it finishes now. (Served from what the other paths leave, below, it
        // could wait for their flows to finish: the fuzzer found a flow held 0.38 ms with
        // 0.006 B left.)
        if self.path_bytes.is_empty() {
            self.path_bytes = vec![0.0; self.shadow_path_rate.len()];
            for (i, f) in core.flows.iter().enumerate() {
                self.path_bytes[core.path_id[i] as usize] += f.size_bytes;
            }
        }
        let t = core.now;
        let mut finished = false;
        for k in 0..core.active.len() {
            let i = core.active[k] as usize;
            let p = core.path_id[i] as usize;
            if self.shadow_path_rate[p] <= 0.0
                && core.flows[i].size_bytes - core.sent[i] <= 1e-9 * self.path_bytes[p] + core.finish_tol(i, t)
                && core.complete_or_due(i, t)
            {
                core.finish_now(i, t);
                core.rate[i] = 0.0;
                finished = true;
            }
        }
        if finished {
            core.retain_active();
            core.flows_changed = true;
        }
        let by_key = !matches!(inner, Scheduler::Ps);
        let share = self.ties_share(core);
        if by_key {
            self.sort_active_by_key(core, inner, true);
        } else {
            let pix = &core.path_id;
            core.active.sort_by(|&a, &b| pix[a as usize].cmp(&pix[b as usize]).then(a.cmp(&b)));
        }
        let n = core.active.len();
        let mut a = 0;
        // Flows on a path the shadow run has no flow on any more: what they have left is
        // the rounding of the flows that finished before them on that path (each finishes
        // within a relative 1e-9 of its size), so the path's aggregate, 0, would hold
        // them forever. They share what the other paths leave of their links.
        let mut orphans: Vec<u32> = Vec::new();
        while a < n {
            let p = core.path_id[core.active[a] as usize];
            let mut left = self.shadow_path_rate[p as usize];
            let mut b = a;
            while b < n && core.path_id[core.active[b] as usize] == p {
                b += 1;
            }
            if left <= 0.0 {
                for k in a..b {
                    core.rate[core.active[k] as usize] = 0.0;
                    orphans.push(core.active[k]);
                }
                a = b;
                continue;
            }
            // Inside the path: priority groups in order; equal keys split equally (up to caps).
            let mut g = a;
            while g < b {
                let first = core.active[g] as usize;
                let mut e = g + 1;
                while e < b && (!by_key || (share && self.same_key(core, first, core.active[e] as usize))) {
                    e += 1;
                }
                let mut members: Vec<usize> = core.active[g..e].iter().map(|&x| x as usize).collect();
                members.sort_by(|&x, &y| core.cap[x].total_cmp(&core.cap[y]));
                let mut cnt = members.len();
                for &m in &members {
                    let r = core.cap[m].min(left / cnt as f64).max(0.0);
                    core.rate[m] = r;
                    left -= r;
                    cnt -= 1;
                }
                g = e;
            }
            a = b;
        }
        let sh = core.shadow.as_ref().unwrap();
        for &i in sh.active() {
            self.shadow_path_rate[core.path_id[i as usize] as usize] = 0.0;
        }
        if !orphans.is_empty() {
            // (allocate set res to the capacities)
            for &i in &core.active {
                let i = i as usize;
                for p in core.path_off[i] as usize..core.path_off[i + 1] as usize {
                    self.residual[core.path_links[p] as usize] -= core.rate[i];
                }
            }
            for &i in &orphans {
                core.weight[i as usize] = 1.0;
            }
            let paths = Paths { off: &core.path_off, links: &core.path_links };
            self.filler.fill(&orphans, &paths, &core.weight, &core.cap, &mut self.residual, &mut core.rate);
        }
    }

    fn compute_next_event(&mut self, core: &mut Core, s: &Scheduler) {
        let t = core.now;
        let mut next = core.next_timed_event();
        if matches!(s, Scheduler::Racs) && !core.active.is_empty() {
            next = next.min(t + core.cfg.racs.update_interval_s);
        }
        let eff = match s {
            Scheduler::Gtcp(inner) => inner.as_ref(),
            other => other,
        };
        for &i in &core.active {
            let i = i as usize;
            let r = core.rate[i];
            if r <= 0.0 {
                continue;
            }
            let f = &core.flows[i];
            let rem = f.size_bytes - core.sent[i];
            next = next.min(t + rem / r);
            next = next.min(core.catch_up_at(i, t, core.sent[i], r));
            match eff {
                Scheduler::Pias => {
                    let th = &core.cfg.pias_thresholds_bytes;
                    let s = core.sent[i];
                    let q = core.pias_queue(s);
                    if q < th.len() {
                        // Never at t itself: a gap too small to leave t would come back
                        // at t, unchanged, at every event.
                        next = next.min((t + (th[q] - s).max(0.0) / r).max(t.next_up()));
                    }
                }
                Scheduler::Sdc => {
                    let [ra, rb] = core.cfg.sdc.thresholds_bytes;
                    let target = match core.sdc_class(rem) {
                        2 => rb,
                        1 => ra,
                        _ => -1.0,
                    };
                    if target >= 0.0 {
                        next = next.min((t + (rem - target).max(0.0) / r).max(t.next_up()));
                    }
                }
                _ => {}
            }
        }
        let dynamic = match eff {
            Scheduler::Srpt | Scheduler::Las | Scheduler::Ga(GaInner::Srpt) => true,
            _ => false,
        };
        if dynamic && !matches!(s, Scheduler::Gtcp(_)) {
            next = next.min(self.next_crossing(core));
        }
        if let Scheduler::Gtcp(_) = s {
            if dynamic {
                next = next.min(self.next_crossing_same_path(core));
            }
        }
        core.next_event = next;
    }

    /// Earliest time at which two flows that share a link swap priority (their keys
    /// meet), where the one ahead is being served (otherwise the swap changes nothing).
    fn next_crossing(&mut self, core: &mut Core) -> f64 {
        let nl = core.topo.n_links();
        for c in self.link_list_start.iter_mut() {
            *c = 0;
        }
        for &i in &core.active {
            let (a, b) = (core.path_off[i as usize] as usize, core.path_off[i as usize + 1] as usize);
            for &l in &core.path_links[a..b] {
                self.link_list_start[l as usize + 1] += 1;
            }
        }
        for l in 0..nl {
            self.link_list_start[l + 1] += self.link_list_start[l];
        }
        self.link_list_flows.resize(self.link_list_start[nl] as usize, 0);
        let mut cursor = self.link_list_start[..nl].to_vec();
        for k in 0..core.active.len() {
            let i = core.active[k];
            let (a, b) = (core.path_off[i as usize] as usize, core.path_off[i as usize + 1] as usize);
            for p in a..b {
                let l = core.path_links[p] as usize;
                self.link_list_flows[cursor[l] as usize] = i;
                cursor[l] += 1;
            }
        }
        let mut best = INF;
        let share = self.ties_share(core);
        for l in 0..nl {
            let (a, b) = (self.link_list_start[l] as usize, self.link_list_start[l + 1] as usize);
            // Under a strict order (SRPT) the flow behind moves: on its way to the nearest
            // served flow ahead it passes unserved ones, swaps that change no rate but
            // that no adjacent pair would look past. So each flow is paired with the
            // nearest served flow ahead. (LAS, ties sharing: the one ahead moves, and the
            // first flow it meets is the next one; adjacent pairs.)
            // Under LAS a group of equal keys can hold flows of different rates (capped,
            // or held elsewhere): its fastest flow moves through the group, whose pairs
            // make no event, and meets the flows behind it first. So each flow is also
            // paired with the fastest flow of the group of equal keys before its own (a
            // group: the flows on the link within same_key of its first).
            let mut x = usize::MAX;
            let (mut lead, mut fast, mut prev_fast) = (usize::MAX, usize::MAX, usize::MAX);
            for p in a..b {
                let y = self.link_list_flows[p] as usize;
                if x != usize::MAX {
                    best = best.min(self.crossing(core, x, y, share));
                }
                if share {
                    if lead == usize::MAX || !self.same_key(core, lead, y) {
                        (prev_fast, lead, fast) = (fast, y, y);
                    } else if core.rate[y] > core.rate[fast] {
                        fast = y;
                    }
                    if prev_fast != usize::MAX && prev_fast != x {
                        best = best.min(self.crossing(core, prev_fast, y, share));
                    }
                }
                if share || core.rate[y] > 0.0 {
                    x = y;
                }
            }
        }
        best
    }

    fn next_crossing_same_path(&self, core: &Core) -> f64 {
        let mut best = INF;
        let share = self.ties_share(core);
        for w in core.active.windows(2) {
            let (x, y) = (w[0] as usize, w[1] as usize);
            if core.path_id[x] == core.path_id[y] {
                best = best.min(self.crossing(core, x, y, share));
            }
        }
        best
    }

    /// Time at which the key of y (behind) meets the key of x (ahead), if x is served.
    #[inline]
    fn crossing(&self, core: &Core, x: usize, y: usize, share: bool) -> f64 {
        if core.rate[x] <= 0.0 || self.key_class[x] != self.key_class[y] || (share && self.same_key(core, x, y)) {
            return INF;
        }
        let sx = self.key_per_byte[x] * core.rate[x];
        let sy = self.key_per_byte[y] * core.rate[y];
        if sx > sy {
            let dt = (self.key_value[y] - self.key_value[x]) / (sx - sy);
            if dt >= 0.0 {
                if share {
                    // (LAS) Keys that differ meet at now + dt > now; the floor only makes
                    // the time move. A later time would overshoot: the pair would swap the
                    // lead at every event instead of meeting within same_key's tolerance,
                    // which covers a few ulps of t (`key_abs_tol`), no more.
                    return (core.now + dt).max(core.now.next_up());
                }
                // Equal keys in a strict order (y behind by the tie-break) that y is about
                // to pass: look again a moment later, when y's key is strictly smaller.
                let scale = self.key_value[x].abs().max(self.key_value[y].abs()).max(core.flows[x].size_bytes).max(core.flows[y].size_bytes);
                return pass_again_at(core.now, dt, sx - sy, scale);
            }
        }
        INF
    }
}
