//! Environment cores that drive the simulator one decision at a time, single and
//! batched, writing observations into flat buffers owned by the caller (the Python
//! Gymnasium envs are thin shells around these).
//!
//! [`TokenEnv`] is destination-side token scheduling (the Artemis thesis): flows ask
//! their destination for a token; at most `k` admitted flows per destination are
//! active; a decision picks which of the first `window` waiting requests to admit
//! next. A decision is asked for only when a slot is free and a request waits.
use crate::error::{Result, SimError};
use crate::packet::{PacketConfig, PacketSimulator};
use crate::rng::{mix64, SplitMix64};
use crate::sched::{AdmissionPolicy, Scheduler};
use crate::sim::{AdmissionConfig, FlowSpec, Outcome, SimConfig, Simulator, Status};
use crate::topology::Topology;
use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Features of each request of the window (see [`TokenEnv::write_obs`]).
pub const REQ_FEATURES: usize = 7;
/// Features of the summary of the destination's active flows.
pub const ACTIVE_FEATURES: usize = 5;
/// Per-episode statistics written by the batched env: deadlines met, flows with a
/// deadline that finished or were terminated, flows finished, mean FCT of the finished (s).
pub const EPISODE_STATS: usize = 4;

/// What a finished flow earns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TokenReward {
    /// 1 per deadline met: an episode's return is the number of deadlines met.
    Deadline,
    /// Minus the FCT in milliseconds: the return is minus the total FCT.
    NegFctMs,
    /// Minus the slowdown (FCT over the ideal FCT).
    NegSlowdown,
}

impl TokenReward {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "deadline" => Ok(TokenReward::Deadline),
            "neg_fct" => Ok(TokenReward::NegFctMs),
            "neg_slowdown" => Ok(TokenReward::NegSlowdown),
            _ => Err(SimError::InvalidConfig(format!("unknown reward '{name}'; known: deadline, neg_fct, neg_slowdown"))),
        }
    }
}

/// One (size, deadline) class of a gather workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowClass {
    pub weight: f64,
    pub size_bytes: f64,
    /// Relative deadline (s); NaN = none.
    pub deadline_s: f64,
}

/// Where an episode's flows come from.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenWorkload {
    /// Poisson gather bursts to host `dst` (Artemis workload A): `n_bursts` bursts at
    /// rate `burst_rate_hz`, each of `burst_size` flows from distinct senders drawn
    /// uniformly among the other hosts. With `exact`, each burst holds exactly
    /// `burst_size * weight` flows of every class, in random order; otherwise each
    /// flow's class is drawn independently.
    Gather { classes: Vec<FlowClass>, exact: bool, burst_size: usize, burst_rate_hz: f64, n_bursts: usize, dst: usize },
    /// The same trace every episode.
    Trace(Vec<FlowSpec>),
}

/// What a masked action (a window position past the waiting requests) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskedAction {
    /// It admits the oldest waiting request (position 0), and the step says so.
    Oldest,
    /// It is an error (strict mode).
    Raise,
}

impl MaskedAction {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "oldest" => Ok(MaskedAction::Oldest),
            "raise" => Ok(MaskedAction::Raise),
            _ => Err(SimError::InvalidConfig(format!(
                "masked_action must be 'oldest' (the default: a masked action admits the oldest waiting request) or \
                 'raise' (strict: a masked action raises), got '{name}'"
            ))),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TokenEnvConfig {
    pub topo: Topology,
    /// How admitted flows share the fabric (`ps`: fair sharing, as in the thesis).
    pub scheduler: Scheduler,
    pub k: usize,
    pub window: usize,
    pub delay_per_hop_s: f64,
    pub terminate_missed: bool,
    pub reward: TokenReward,
    pub workload: TokenWorkload,
    /// Where the observation saturates: bytes (MB), times (ms, both signs) and counts.
    pub obs_limits: ObsLimits,
    /// What a masked action does.
    pub masked_action: MaskedAction,
    /// None: the fluid model. Some: the packet model with these options; its scheduler,
    /// delay per hop, `terminate_missed` and admission are the env's (`scheduler`,
    /// `delay_per_hop_s`, `terminate_missed`; external admission with `k` and `window`).
    pub packet: Option<PacketConfig>,
}

/// Saturation of the observation features, so that they have finite bounds: a value
/// past its limit is written as the limit (infinite limits: none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObsLimits {
    pub mb: f64,
    pub ms: f64,
    pub count: f64,
}

impl Default for ObsLimits {
    fn default() -> Self {
        ObsLimits { mb: f64::INFINITY, ms: f64::INFINITY, count: f64::INFINITY }
    }
}

impl ObsLimits {
    // `+ 0.0` turns -0.0 (an empty f64 sum is -0.0) into 0.0
    // `clamp` without its check that the bounds are ordered (they are: `check`), which
    // the compiler keeps at every call: the same values, NaN included
    #[inline]
    fn mb(&self, v: f64) -> f32 {
        (clamp_to(v, 0.0, self.mb) + 0.0) as f32
    }
    #[inline]
    fn ms(&self, v: f64) -> f32 {
        (clamp_to(v, -self.ms, self.ms) + 0.0) as f32
    }
    #[inline]
    fn count(&self, v: usize) -> f32 {
        (v as f64).min(self.count) as f32
    }
}

/// `v.clamp(lo, hi)` for `lo <= hi` (NaN stays NaN).
#[inline(always)]
fn clamp_to(v: f64, lo: f64, hi: f64) -> f64 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

impl TokenEnvConfig {
    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(SimError::InvalidConfig(m));
        if self.k < 1 {
            return bad(format!("k (max active flows per destination) must be >= 1, got {}", self.k));
        }
        if self.window < 1 {
            return bad(format!("window (f) must be >= 1, got {}", self.window));
        }
        if let TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, n_bursts, dst } = &self.workload {
            check_gather(classes, *exact, *burst_size, *burst_rate_hz, *n_bursts, *dst, self.topo.n_hosts)?;
        }
        // The simulator's options (the scheduler with destination admission, the packet
        // options) are checked by the simulator: on one flow here, so that a bad one fails
        // now rather than at the first reset (e.g. `pias`, whose thresholds the env does not
        // take, or a `gtcp:` scheduler, which takes no admission).
        let n = self.topo.n_hosts;
        let dst = match &self.workload {
            TokenWorkload::Gather { dst, .. } => *dst,
            TokenWorkload::Trace(f) => f.first().map_or(0, |f| f.dst),
        };
        if n >= 2 && dst < n {
            let probe = FlowSpec::new(0.0, (dst + 1) % n, dst, 1000.0);
            match self.packet_config() {
                Some(pc) => {
                    PacketSimulator::new(&self.topo, &[probe], pc)?;
                }
                None => {
                    Simulator::new(self.topo.clone(), vec![probe], self.fluid_config(1))?;
                }
            }
        }
        Ok(())
    }

    /// The fluid model's options of an episode whose trace goes to `dsts` destinations.
    fn fluid_config(&self, dsts: usize) -> SimConfig {
        let mut c = SimConfig::new(self.scheduler.clone());
        c.admission = Some(AdmissionConfig { k: self.k, window: self.window, policy: AdmissionPolicy::External });
        c.delay_per_hop_s = self.delay_per_hop_s;
        c.terminate_missed = self.terminate_missed;
        // At most k flows are active per destination. Over so few flows a full
        // recomputation at every event is cheaper than the incremental allocators'
        // bookkeeping (workload A: 1.65x faster steps, measured).
        if self.k.saturating_mul(dsts) <= 64 {
            c.allocator = crate::sim::AllocatorChoice::Full;
        }
        c
    }

    /// The packet model's options of an episode (None: the fluid model).
    fn packet_config(&self) -> Option<PacketConfig> {
        let mut c = self.packet.clone()?;
        c.scheduler = self.scheduler.clone();
        c.delay_per_hop_s = self.delay_per_hop_s;
        c.terminate_missed = self.terminate_missed;
        c.admission = Some(AdmissionConfig { k: self.k, window: self.window, policy: AdmissionPolicy::External });
        Some(c)
    }
}

/// The simulator under a token env: the fluid model or the packet model, both with
/// external admission; what the env reads of either.
#[derive(Debug, Clone)]
pub enum TokenSim {
    Fluid(Simulator),
    Packet(PacketSimulator),
}

impl TokenSim {
    /// Runs to the next admission decision (its destination), or the end (None).
    fn next_decision(&mut self) -> Result<Option<usize>> {
        match self {
            TokenSim::Fluid(s) => loop {
                match s.step(f64::INFINITY)? {
                    Outcome::Decision { dst } => return Ok(Some(dst)),
                    Outcome::Done => return Ok(None),
                    _ => {}
                }
            },
            TokenSim::Packet(s) => s.next_decision(),
        }
    }
    fn admit(&mut self, dst: usize, pos: usize) -> Result<()> {
        match self {
            TokenSim::Fluid(s) => s.admit(dst, pos),
            TokenSim::Packet(s) => s.grant(dst, pos),
        }
    }
    /// Requests waiting at `dst`, oldest first.
    #[inline]
    pub fn waiting(&self, dst: usize) -> &VecDeque<u32> {
        match self {
            TokenSim::Fluid(s) => s.waiting(dst),
            TokenSim::Packet(s) => s.waiting(dst),
        }
    }
    pub fn n_flows(&self) -> usize {
        match self {
            TokenSim::Fluid(s) => s.n_flows(),
            TokenSim::Packet(s) => s.n_flows(),
        }
    }
    #[inline]
    pub fn flow(&self, i: usize) -> &FlowSpec {
        match self {
            TokenSim::Fluid(s) => s.flow(i),
            TokenSim::Packet(s) => s.flow(i),
        }
    }
    /// Simulated time, s.
    #[inline]
    pub fn now(&self) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.now(),
            TokenSim::Packet(s) => s.now_s(),
        }
    }
    /// Whether flow i has ended: Some(true) terminated, Some(false) finished, None not.
    #[inline]
    pub fn ended(&self, i: usize) -> Option<bool> {
        match self {
            TokenSim::Fluid(s) => match s.status(i) {
                Status::Done => Some(false),
                Status::Terminated => Some(true),
                _ => None,
            },
            TokenSim::Packet(s) => s.ended(i).then(|| s.terminated()[i]),
        }
    }
    /// Whether admitted flow i is active (holds its token: admitted, not ended).
    #[inline]
    pub fn is_active(&self, i: usize) -> bool {
        match self {
            TokenSim::Fluid(s) => s.status(i) == Status::Active,
            TokenSim::Packet(s) => s.holds_token(i),
        }
    }
    /// Flow i's payload bytes not yet through: the fluid model's size - sent; the packet
    /// model's size - bytes delivered in order to the receiver.
    #[inline]
    pub fn remaining_bytes(&self, i: usize) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.flow(i).size_bytes - s.sent_bytes(i),
            TokenSim::Packet(s) => s.flow(i).size_bytes - s.delivered_bytes()[i] as f64,
        }
    }
    /// Flow i's FCT (s; NaN if not finished).
    pub fn fct_s(&self, i: usize) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.fct_s(i),
            TokenSim::Packet(s) => s.fct_of(i),
        }
    }
    /// Flow i's ideal FCT (s): alone on the idle fabric, with its path's propagation.
    pub fn ideal_fct_s(&self, i: usize) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.ideal_fct_s(i),
            TokenSim::Packet(s) => s.ideal_fct_of(i),
        }
    }
    /// Flow i's data path (link ids).
    #[inline]
    pub fn path(&self, i: usize) -> &[u32] {
        match self {
            TokenSim::Fluid(s) => s.path(i),
            TokenSim::Packet(s) => s.path(i),
        }
    }
    /// Per flow: when its last byte arrived (s; NaN if not).
    pub fn finish_s(&self) -> Vec<f64> {
        match self {
            TokenSim::Fluid(s) => s.finish_s().to_vec(),
            TokenSim::Packet(s) => s.finish_s(),
        }
    }
    /// Per flow: whether it was terminated.
    pub fn terminated(&self) -> Vec<bool> {
        match self {
            TokenSim::Fluid(s) => s.terminated(),
            TokenSim::Packet(s) => s.terminated().to_vec(),
        }
    }
    /// Flow i's payload bytes through so far: the fluid model's bytes sent; the packet
    /// model's bytes delivered in order to the receiver.
    #[inline]
    pub fn through_bytes(&self, i: usize) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.sent_bytes(i),
            TokenSim::Packet(s) => s.delivered_bytes()[i] as f64,
        }
    }
    /// Whether all of flow i's data is available (`data_span_s`).
    #[inline]
    pub fn is_complete(&self, i: usize) -> bool {
        match self {
            TokenSim::Fluid(s) => s.is_complete(i),
            TokenSim::Packet(s) => s.is_complete(i),
        }
    }
    /// Flow i's ideal FCT without the path delay (s).
    #[inline]
    pub fn ideal_tx_s(&self, i: usize) -> f64 {
        match self {
            TokenSim::Fluid(s) => s.ideal_fct_s(i) - s.path_delay_s(i),
            TokenSim::Packet(s) => s.ideal_tx_of(i),
        }
    }
    /// The external scheduler's score of flow i (lower first): the fluid model's greedy
    /// order; the packet model's priority tag of the packets flow i sends from now on.
    fn set_score(&mut self, i: usize, score: f64) -> Result<()> {
        match self {
            TokenSim::Fluid(s) => s.set_score(i, score),
            TokenSim::Packet(s) => s.set_score(i, score),
        }
    }
    /// Runs to the next flow change (both built to pause there), `until`, or the end.
    fn advance(&mut self, until: f64) -> Result<Outcome> {
        match self {
            TokenSim::Fluid(s) => s.step(until),
            TokenSim::Packet(s) => s.advance(until),
        }
    }
}

/// Checks the parameters of [`gather_bursts`] (those of [`TokenWorkload::Gather`] and the
/// number of hosts).
pub fn check_gather(
    classes: &[FlowClass],
    exact: bool,
    burst_size: usize,
    burst_rate_hz: f64,
    n_bursts: usize,
    dst: usize,
    hosts: usize,
) -> Result<()> {
    let bad = |m: String| Err(SimError::InvalidConfig(m));
    if dst >= hosts {
        return bad(format!("dst {dst} out of range ({hosts} hosts)"));
    }
    if burst_size < 1 || burst_size > hosts - 1 {
        return bad(format!("burst_size must be in 1..={} (distinct senders), got {burst_size}", hosts - 1));
    }
    if !(burst_rate_hz.is_finite() && burst_rate_hz > 0.0) {
        return bad(format!("burst_rate_hz must be > 0, got {burst_rate_hz}"));
    }
    if n_bursts < 1 {
        return bad("n_bursts must be >= 1".into());
    }
    if classes.is_empty() {
        return bad("a gather workload needs at least one flow class".into());
    }
    let wsum: f64 = classes.iter().map(|c| c.weight).sum();
    for (j, c) in classes.iter().enumerate() {
        if !(c.weight.is_finite() && c.weight >= 0.0) || !(c.size_bytes.is_finite() && c.size_bytes > 0.0) {
            return bad(format!("flow class {j}: weight must be >= 0 and size_bytes > 0, got {c:?}"));
        }
        if !c.deadline_s.is_nan() && !(c.deadline_s.is_finite() && c.deadline_s > 0.0) {
            return bad(format!("flow class {j}: deadline_s must be > 0 or NaN, got {}", c.deadline_s));
        }
        if exact {
            let n = c.weight / wsum * burst_size as f64;
            if (n - n.round()).abs() > 1e-9 {
                return bad(format!(
                    "exact composition needs burst_size * weight to be whole: class {j} gets {n} flows per burst"
                ));
            }
        }
    }
    if !(wsum > 0.0) {
        return bad("flow class weights sum to 0".into());
    }
    Ok(())
}

/// The generator of [`TokenWorkload::Gather`] (Artemis workload A), the one the token
/// env draws its episodes with: `n_bursts` bursts at the times of a Poisson process of
/// rate `burst_rate_hz` (the first one exponential from 0), each of `burst_size` flows to
/// `dst` that arrive together, from distinct senders (the first `burst_size` of a partial
/// Fisher-Yates shuffle of the other hosts in increasing order). With `exact` each burst
/// holds `burst_size * weight` flows of every class, in random order; otherwise each
/// flow's class is drawn independently with probability weight / sum of weights.
/// Parameters as [`check_gather`] accepts them. Flows are in burst order.
#[allow(clippy::too_many_arguments)]
pub fn gather_bursts(
    rng: &mut SplitMix64,
    classes: &[FlowClass],
    exact: bool,
    burst_size: usize,
    rate: f64,
    n_bursts: usize,
    dst: usize,
    hosts: usize,
) -> Vec<FlowSpec> {
    let wsum: f64 = classes.iter().map(|c| c.weight).sum();
    // The class of every slot of a burst, when the composition is exact.
    let mut base: Vec<usize> = Vec::with_capacity(burst_size);
    if exact {
        for (j, c) in classes.iter().enumerate() {
            let n = (c.weight / wsum * burst_size as f64).round() as usize;
            base.extend(std::iter::repeat_n(j, n));
        }
    }
    let others: Vec<usize> = (0..hosts).filter(|&h| h != dst).collect();
    let mut senders = others.clone();
    let mut out = Vec::with_capacity(n_bursts * burst_size);
    let mut t = 0.0;
    for _ in 0..n_bursts {
        t += -(1.0 - rng.next_f64()).ln() / rate;
        // distinct senders: the first burst_size of a partial Fisher-Yates shuffle
        senders.copy_from_slice(&others);
        for j in 0..burst_size {
            let r = j + rng.below((senders.len() - j) as u64) as usize;
            senders.swap(j, r);
        }
        if exact {
            for j in (1..base.len()).rev() {
                let r = rng.below(j as u64 + 1) as usize;
                base.swap(j, r);
            }
        }
        for j in 0..burst_size {
            let c = if exact {
                classes[base[j]]
            } else {
                let mut u = rng.next_f64() * wsum;
                let mut pick = classes.len() - 1;
                for (m, c) in classes.iter().enumerate() {
                    if u < c.weight {
                        pick = m;
                        break;
                    }
                    u -= c.weight;
                }
                classes[pick]
            };
            let mut f = FlowSpec::new(t, senders[j], dst, c.size_bytes);
            f.deadline_s = c.deadline_s;
            out.push(f);
        }
    }
    out
}

/// [`gather_bursts`] from a seed, as the token env's `reset(Some(seed))` draws its
/// episode: one seed, one trace, in the env and in `flowsched.workloads.gather_bursts`.
#[allow(clippy::too_many_arguments)]
pub fn gather_bursts_seeded(
    seed: u64,
    classes: &[FlowClass],
    exact: bool,
    burst_size: usize,
    burst_rate_hz: f64,
    n_bursts: usize,
    dst: usize,
    hosts: usize,
) -> Result<Vec<FlowSpec>> {
    check_gather(classes, exact, burst_size, burst_rate_hz, n_bursts, dst, hosts)?;
    let mut rng = SplitMix64::new(mix64(seed));
    Ok(gather_bursts(&mut rng, classes, exact, burst_size, burst_rate_hz, n_bursts, dst, hosts))
}

/// Token scheduling at the destination, one decision per step.
#[derive(Debug, Clone)]
pub struct TokenEnv {
    cfg: TokenEnvConfig,
    rng: SplitMix64,
    sim: Option<TokenSim>,
    /// Admitted flows not yet accounted (finished or terminated), each with its
    /// destination: the observation reads the decision's destination's flows without
    /// loading the others' records.
    pending: Vec<(u32, u32)>,
    dst: usize,
    done: bool,
    /// Requests the last decision chose from: the terminal observation's mask repeats it.
    last_choices: usize,
    met: u64,
    with_deadline: u64,
    finished: u64,
    fct_sum: f64,
    /// Scratch of [`TokenEnv::write_obs`]: remaining bytes of the active flows.
    remaining: Vec<f64>,
    /// Whether the last step's action was masked (and admitted the oldest request).
    last_masked: bool,
}

impl TokenEnv {
    pub fn new(cfg: TokenEnvConfig) -> Result<Self> {
        cfg.check()?;
        Ok(TokenEnv {
            cfg,
            rng: SplitMix64::new(0),
            sim: None,
            pending: Vec::new(),
            dst: 0,
            done: true,
            last_choices: 0,
            met: 0,
            with_deadline: 0,
            finished: 0,
            fct_sum: 0.0,
            remaining: Vec::new(),
            last_masked: false,
        })
    }

    pub fn config(&self) -> &TokenEnvConfig {
        &self.cfg
    }

    /// Replaces the workload by a fixed trace (used from the next reset on).
    pub fn set_trace(&mut self, flows: Vec<FlowSpec>) -> Result<()> {
        if flows.is_empty() {
            return Err(SimError::InvalidConfig("the trace has no flows".into()));
        }
        // Validate now, so that a bad trace fails here and not at a later reset.
        match self.cfg.packet_config() {
            Some(pc) => {
                PacketSimulator::new(&self.cfg.topo, &flows, pc)?;
            }
            None => {
                Simulator::new(self.cfg.topo.clone(), flows.clone(), self.sim_config())?;
            }
        }
        self.cfg.workload = TokenWorkload::Trace(flows);
        Ok(())
    }

    fn sim_config(&self) -> SimConfig {
        let dsts = match &self.cfg.workload {
            TokenWorkload::Gather { .. } => 1,
            TokenWorkload::Trace(f) => {
                let mut d: Vec<usize> = f.iter().map(|x| x.dst).collect();
                d.sort_unstable();
                d.dedup();
                d.len()
            }
        };
        self.cfg.fluid_config(dsts)
    }

    /// The episode's flows: drawn from the generator for a gather workload.
    fn draw_flows(&mut self) -> Vec<FlowSpec> {
        match &self.cfg.workload {
            TokenWorkload::Trace(f) => f.clone(),
            TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, n_bursts, dst } => {
                gather_bursts(&mut self.rng, classes, *exact, *burst_size, *burst_rate_hz, *n_bursts, *dst, self.cfg.topo.n_hosts)
            }
        }
    }

    /// Starts an episode (reseeds the generator when `seed` is given) and runs to the
    /// first decision.
    pub fn reset(&mut self, seed: Option<u64>) -> Result<()> {
        if let Some(s) = seed {
            self.rng = SplitMix64::new(mix64(s));
        }
        let flows = self.draw_flows();
        self.sim = Some(match self.cfg.packet_config() {
            Some(pc) => TokenSim::Packet(PacketSimulator::new(&self.cfg.topo, &flows, pc)?),
            None => TokenSim::Fluid(Simulator::new(self.cfg.topo.clone(), flows, self.sim_config())?),
        });
        self.pending.clear();
        self.done = false;
        self.last_masked = false;
        self.met = 0;
        self.with_deadline = 0;
        self.finished = 0;
        self.fct_sum = 0.0;
        self.advance()?;
        Ok(())
    }

    /// Number of requests the current decision chooses from (0 when the episode is over).
    pub fn n_choices(&self) -> usize {
        match (&self.sim, self.done) {
            (Some(s), false) => s.waiting(self.dst).len().min(self.cfg.window),
            _ => 0,
        }
    }

    /// Checks an action without acting: an integer outside the action space (0 to
    /// `window - 1`) is an error, so is any action once the episode is over, and a
    /// masked one (a position past the waiting requests) with [`MaskedAction::Raise`].
    pub fn check_action(&self, action: i64) -> Result<()> {
        let w = self.cfg.window;
        if action < 0 || action as usize >= w {
            return Err(SimError::InvalidAction(format!(
                "action {action} is out of range of the action space Discrete({w}): expected 0 to {} (a position in the window)",
                w - 1
            )));
        }
        if self.sim.is_none() || self.done {
            return Err(SimError::InvalidAction("the episode is over (or never started): call reset()".into()));
        }
        if self.cfg.masked_action != MaskedAction::Raise {
            return Ok(()); // a masked action is valid: `step` admits the oldest request
        }
        let n = self.n_choices();
        if action as usize >= n {
            let valid = if n > 1 { format!("valid: 0 to {}", n - 1) } else { "valid: 0".into() };
            return Err(SimError::InvalidAction(format!(
                "action {action} is masked: only {n} request(s) wait in the window ({valid}); masked_action='raise' \
                 rejects masked actions, masked_action='oldest' (the default) admits the oldest waiting request instead"
            )));
        }
        Ok(())
    }

    /// Admits the request at position `action` of the window (the oldest one, position
    /// 0, for a masked action with [`MaskedAction::Oldest`]: see [`TokenEnv::last_masked`])
    /// and runs to the next decision or the end. Returns (reward, terminated).
    pub fn step(&mut self, action: i64) -> Result<(f64, bool)> {
        self.check_action(action)?;
        self.step_checked(action)
    }

    /// [`TokenEnv::step`] of an action [`TokenEnv::check_action`] accepted.
    fn step_checked(&mut self, action: i64) -> Result<(f64, bool)> {
        let dst = self.dst;
        let sim = self.sim.as_mut().expect("checked");
        let q = sim.waiting(dst);
        self.last_masked = action as usize >= q.len().min(self.cfg.window);
        let pos = if self.last_masked { 0 } else { action as usize };
        let flow = q[pos];
        sim.admit(dst, pos)?;
        self.pending.push((flow, dst as u32));
        let r = self.advance()?;
        Ok((r, self.done))
    }

    /// Whether the last step's action was masked (it admitted the oldest request).
    pub fn last_masked(&self) -> bool {
        self.last_masked
    }

    /// Runs to the next decision or the end; returns the reward of the flows that
    /// finished (or were terminated) meanwhile.
    fn advance(&mut self) -> Result<f64> {
        let sim = self.sim.as_mut().expect("reset before use");
        match sim.next_decision()? {
            Some(dst) => {
                self.dst = dst;
                self.last_choices = sim.waiting(dst).len().min(self.cfg.window);
            }
            None => self.done = true,
        }
        let mut reward = 0.0;
        let mut k = 0;
        while k < self.pending.len() {
            let i = self.pending[k].0 as usize;
            let Some(terminated) = sim.ended(i) else {
                k += 1;
                continue;
            };
            self.pending.swap_remove(k);
            let f = sim.flow(i);
            let has_dl = !f.deadline_s.is_nan();
            self.with_deadline += has_dl as u64;
            if terminated {
                continue;
            }
            let fct = sim.fct_s(i);
            self.finished += 1;
            self.fct_sum += fct;
            let met = has_dl && fct <= f.deadline_s * (1.0 + 1e-9);
            self.met += met as u64;
            reward += match self.cfg.reward {
                TokenReward::Deadline => met as u64 as f64,
                TokenReward::NegFctMs => -fct * 1e3,
                TokenReward::NegSlowdown => -fct / sim.ideal_fct_s(i),
            };
        }
        if self.done {
            // every flow with a deadline, also those terminated while they waited for a token
            // (never admitted, so never in `pending`): the hit ratio's denominator, as the
            // per-flow outcomes (`results()`) count it
            self.with_deadline = (0..sim.n_flows()).filter(|&i| !sim.flow(i).deadline_s.is_nan()).count() as u64;
        }
        Ok(reward)
    }

    /// [deadlines met, flows with a deadline accounted, flows finished, mean FCT (s)].
    pub fn episode_stats(&self) -> [f64; EPISODE_STATS] {
        let mean = if self.finished > 0 { self.fct_sum / self.finished as f64 } else { f64::NAN };
        [self.met as f64, self.with_deadline as f64, self.finished as f64, mean]
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The destination of the pending decision.
    pub fn decision_dst(&self) -> usize {
        self.dst
    }

    /// The fluid simulator of the episode (None before the first reset or on the packet model).
    pub fn simulator(&self) -> Option<&Simulator> {
        match self.sim.as_ref()? {
            TokenSim::Fluid(s) => Some(s),
            TokenSim::Packet(_) => None,
        }
    }

    /// The episode's simulator, either model (None before the first reset).
    pub fn sim(&self) -> Option<&TokenSim> {
        self.sim.as_ref()
    }

    /// Writes the observation: `req[window * REQ_FEATURES]`, `act[ACTIVE_FEATURES]`,
    /// `mask[window]`.
    ///
    /// Per request of the window, oldest first (zeros past the waiting ones): size (MB),
    /// relative deadline (ms, 0 without one), time left to the deadline (ms, 0 without
    /// one), time waited (ms), ideal FCT alone on the idle fabric including the path
    /// delay (ms), has a deadline (0/1), and the FCT it would have if admitted now and
    /// the destination's link were shared fairly with the active flows there, with no
    /// later admission (ms, including the path delay: the ideal FCT plus, per active
    /// flow, the smaller of its remaining bytes and the request's size at the link
    /// rate). Active flows at the destination: count / k,
    /// remaining bytes (MB), least time left to a deadline among them (ms, 0 if none),
    /// time to drain their remaining bytes at the destination's link rate (ms), number
    /// of waiting requests (window included). Mask: 1 for each waiting request; once
    /// the episode is over (no decision pending) it repeats the last decision's mask, so
    /// that a masked policy evaluating the terminal observation has a valid action.
    pub fn write_obs(&mut self, req: &mut [f32], act: &mut [f32], mask: &mut [f32]) {
        let Some(sim) = self.sim.as_ref() else {
            req.fill(0.0);
            act.fill(0.0);
            mask.fill(0.0);
            return;
        };
        let now = sim.now();
        let dst = self.dst;
        let q = sim.waiting(dst);
        let n = if self.done { 0 } else { q.len().min(self.cfg.window) };
        // every feature of the first n requests and of `act` is written below: zeros past them
        req[n * REQ_FEATURES..].fill(0.0);
        mask[n..].fill(0.0);
        if self.done {
            mask[..self.last_choices.clamp(1, self.cfg.window)].fill(1.0);
        }
        let mut remaining = std::mem::take(&mut self.remaining);
        remaining.clear();
        let mut least = f64::INFINITY;
        let mut last_active = None;
        for &(i, d) in &self.pending {
            let i = i as usize;
            if d as usize != dst || !sim.is_active(i) {
                continue;
            }
            let f = sim.flow(i);
            let r = sim.remaining_bytes(i);
            remaining.push(if r > 0.0 { r } else { 0.0 }); // no -0.0 from rounding
            if !f.deadline_s.is_nan() {
                least = least.min(f.arrival_s + f.deadline_s - now);
            }
            last_active = Some(i);
        }
        // the destination's link (the last of an active flow's path): looked up once
        let cap = last_active.map_or(f64::NAN, |i| self.cfg.topo.capacity[*sim.path(i).last().expect("a path has links") as usize]);
        let lim = &self.cfg.obs_limits;
        for (j, &i) in q.iter().take(n).enumerate() {
            let f = sim.flow(i as usize);
            let o = &mut req[j * REQ_FEATURES..(j + 1) * REQ_FEATURES];
            let has_dl = !f.deadline_s.is_nan();
            let ideal = sim.ideal_fct_s(i as usize);
            o[0] = lim.mb(f.size_bytes * 1e-6);
            o[1] = if has_dl { lim.ms(f.deadline_s * 1e3) } else { 0.0 };
            o[2] = if has_dl { lim.ms((f.arrival_s + f.deadline_s - now) * 1e3) } else { 0.0 };
            // >= 0: the packet model's clock is whole picoseconds, which can read a hair
            // before an arrival given in seconds (the fluid model's is the arrival itself)
            o[3] = lim.ms((now - f.arrival_s).max(0.0) * 1e3);
            o[4] = lim.ms(ideal * 1e3);
            o[5] = has_dl as u8 as f32;
            let shared: f64 = remaining.iter().map(|&r| r.min(f.size_bytes)).sum();
            o[6] = lim.ms((ideal + if remaining.is_empty() { 0.0 } else { shared / cap }) * 1e3);
            mask[j] = 1.0;
        }
        let cnt = remaining.len();
        let rem: f64 = remaining.iter().sum();
        act[0] = (cnt as f64 / self.cfg.k as f64) as f32;
        act[1] = lim.mb(rem * 1e-6);
        act[2] = if least.is_finite() { lim.ms(least * 1e3) } else { 0.0 };
        act[3] = if cnt > 0 { lim.ms(rem / cap * 1e3) } else { 0.0 };
        act[4] = lim.count(q.len());
        self.remaining = remaining;
    }
}

/// `e` with the lane of a batch named in its message (without repeating its kind:
/// "invalid action: env 3: action 7 out of range ...").
fn in_lane(lane: usize, e: SimError) -> SimError {
    match e {
        SimError::InvalidConfig(m) => SimError::InvalidConfig(format!("env {lane}: {m}")),
        SimError::Unsupported(m) => SimError::Unsupported(format!("env {lane}: {m}")),
        SimError::InvalidAction(m) => SimError::InvalidAction(format!("env {lane}: {m}")),
        SimError::Stalled(m) => SimError::Stalled(format!("env {lane}: {m}")),
        other => other,
    }
}

/// `x` as Python's `repr(float)` writes it (the shortest repr that reads back, "nan",
/// "inf", exponents as "1e+20" and "1e-05"), so that the envs' messages read the same
/// as the Python checks they replace.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Python: scientific when the decimal exponent is < -4 or >= 16
    let exp = if x == 0.0 { 0 } else { x.abs().log10().floor() as i32 };
    if (-4..16).contains(&exp) {
        let s = format!("{x:?}");
        if s.contains('e') {
            // Rust's Debug switches to exponents earlier than Python for tiny values
            let digits = format!("{x}");
            return if digits.contains('.') { digits } else { format!("{digits}.0") };
        }
        return s;
    }
    let s = format!("{x:e}");
    let (mant, e) = s.split_once('e').expect("{:e} has an exponent");
    let e: i32 = e.parse().expect("an integer exponent");
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

// ---------------------------------------------------------------------------------
// The batched env: an env is a [`Lane`]; [`VecEnv`] owns autoreset and threads.
// ---------------------------------------------------------------------------------

/// Most observation parts a lane writes (the token env's requests, active summary and
/// mask; the switch env's flows and mask and an unused third).
pub const MAX_OBS_PARTS: usize = 3;

/// One env of a batch, as [`VecEnv`] steps it. An env implements this once; the
/// batching, next-step autoreset, threads and output buffers are [`VecEnv`]'s.
pub trait Lane: Clone + Send + Sync {
    /// One element of an action (the token env's window position, the switch env's
    /// score of a slot).
    type Act: Copy + Sync;
    /// Action elements per lane (`actions[lane * action_len ..]`).
    fn action_len(&self) -> usize;
    /// f32s per lane of each observation part (0 for unused parts).
    fn obs_sizes(&self) -> [usize; MAX_OBS_PARTS];
    /// Checks an action before any lane moves (without naming the lane): an action
    /// outside the action space, or any action once the episode is over, is an error;
    /// what a masked action does is the lane's to say (and to check, in strict mode).
    fn check_action(&self, action: &[Self::Act]) -> Result<()>;
    /// Checks that a lane whose episode ended can be reset by the next step.
    fn check_reset(&self) -> Result<()> {
        Ok(())
    }
    /// Starts an episode, reseeding the lane's generator when `seed` is given, and runs
    /// to its first decision.
    fn reset_lane(&mut self, seed: Option<u64>) -> Result<()>;
    /// Acts and runs to the next decision (the action passed [`Lane::check_action`]).
    fn step_lane(&mut self, action: &[Self::Act]) -> Result<Stepped>;
    /// Writes the observation: one slice per part, of the sizes of [`Lane::obs_sizes`].
    fn write_lane_obs(&mut self, obs: [&mut [f32]; MAX_OBS_PARTS]);
    /// The statistics of the current episode.
    fn lane_stats(&self) -> [f64; EPISODE_STATS];
}

/// What one step of a lane gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stepped {
    pub reward: f64,
    pub terminated: bool,
    /// The action was masked, and the lane's documented substitute was taken.
    pub masked: bool,
}

/// Output buffers of one batched call (flat, lane-major): the observation parts
/// (`obs[p][lane * obs_sizes[p] ..]`), reward, terminated, truncated (by the step
/// limit), masked (the lane's action was masked) and episode statistics.
pub struct BatchOut<'a> {
    pub obs: [&'a mut [f32]; MAX_OBS_PARTS],
    pub reward: &'a mut [f64],
    pub terminated: &'a mut [bool],
    pub truncated: &'a mut [bool],
    pub masked: &'a mut [bool],
    pub stats: &'a mut [f64],
}

/// The token env's output buffers: `obs` = [requests, active, mask].
pub type TokenBatchOut<'a> = BatchOut<'a>;
/// The switch env's output buffers: `obs` = [flows, mask, (unused, empty)].
pub type SwitchBatchOut<'a> = BatchOut<'a>;

/// Owned output buffers of a [`VecEnv`] (for Rust callers and tests; the Python
/// bindings allocate theirs as numpy arrays, once).
#[derive(Debug, Clone, Default)]
pub struct BatchBufs {
    pub obs: [Vec<f32>; MAX_OBS_PARTS],
    pub reward: Vec<f64>,
    pub terminated: Vec<bool>,
    pub truncated: Vec<bool>,
    pub masked: Vec<bool>,
    pub stats: Vec<f64>,
}

impl BatchBufs {
    /// Buffers for `v`, zeroed.
    pub fn new<L: Lane>(v: &VecEnv<L>) -> Self {
        let (n, s) = (v.num_envs(), v.env(0).obs_sizes());
        BatchBufs {
            obs: [vec![0.0; n * s[0]], vec![0.0; n * s[1]], vec![0.0; n * s[2]]],
            reward: vec![0.0; n],
            terminated: vec![false; n],
            truncated: vec![false; n],
            masked: vec![false; n],
            stats: vec![0.0; n * EPISODE_STATS],
        }
    }

    pub fn out(&mut self) -> BatchOut<'_> {
        let [o0, o1, o2] = &mut self.obs;
        BatchOut {
            obs: [o0, o1, o2],
            reward: &mut self.reward,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
            masked: &mut self.masked,
            stats: &mut self.stats,
        }
    }
}

/// The lanes `[lo, hi)` of a batch and their slices of every buffer.
struct Part<'a, L: Lane> {
    lo: usize,
    lanes: &'a mut [L],
    needs_reset: &'a mut [bool],
    steps: &'a mut [u64],
    obs: [&'a mut [f32]; MAX_OBS_PARTS],
    reward: &'a mut [f64],
    terminated: &'a mut [bool],
    truncated: &'a mut [bool],
    masked: &'a mut [bool],
    stats: &'a mut [f64],
}

/// How a part moves its lanes.
#[derive(Clone, Copy)]
enum Move<'a, A> {
    /// Reset every lane (seeded `seeds[lane]` when given).
    Reset(Option<&'a [u64]>),
    /// Reset the lanes whose episode ended; leave the others as they are.
    ResetDone,
    /// Step every lane (`actions[lane * action_len ..]`), autoresetting the ended ones.
    Step(&'a [A]),
}

/// What every part of a call shares.
#[derive(Clone, Copy)]
struct Shape {
    sizes: [usize; MAX_OBS_PARTS],
    /// Action elements per lane.
    m: usize,
    max_steps: Option<u64>,
    /// Errors name their lane ("env 3: ...").
    name_lanes: bool,
}

impl<L: Lane> Part<'_, L> {
    fn run(self, mv: Move<'_, L::Act>, sh: Shape) -> Result<()> {
        let Part { lo, lanes, needs_reset, steps, obs, reward, terminated, truncated, masked, stats } = self;
        let [o0, o1, o2] = obs;
        let (sizes, m) = (sh.sizes, sh.m);
        for (j, e) in lanes.iter_mut().enumerate() {
            let lane = lo + j;
            let named = |err| if sh.name_lanes { in_lane(lane, err) } else { err };
            match mv {
                Move::Reset(seeds) => {
                    e.reset_lane(seeds.map(|s| s[lane])).map_err(named)?;
                    needs_reset[j] = false;
                    steps[j] = 0;
                    reward[j] = 0.0;
                    terminated[j] = false;
                    truncated[j] = false;
                    masked[j] = false;
                }
                Move::ResetDone => {
                    if !needs_reset[j] {
                        continue;
                    }
                    e.reset_lane(None).map_err(named)?;
                    needs_reset[j] = false;
                    steps[j] = 0;
                }
                Move::Step(actions) => {
                    if needs_reset[j] {
                        e.reset_lane(None).map_err(named)?;
                        needs_reset[j] = false;
                        steps[j] = 0;
                        reward[j] = 0.0;
                        terminated[j] = false;
                        truncated[j] = false;
                        masked[j] = false;
                    } else {
                        let s = e.step_lane(&actions[lane * m..(lane + 1) * m]).map_err(named)?;
                        steps[j] += 1;
                        let trunc = !s.terminated && sh.max_steps.is_some_and(|l| steps[j] >= l);
                        reward[j] = s.reward;
                        terminated[j] = s.terminated;
                        truncated[j] = trunc;
                        masked[j] = s.masked;
                        needs_reset[j] = s.terminated || trunc;
                    }
                }
            }
            e.write_lane_obs([
                &mut o0[j * sizes[0]..(j + 1) * sizes[0]],
                &mut o1[j * sizes[1]..(j + 1) * sizes[1]],
                &mut o2[j * sizes[2]..(j + 1) * sizes[2]],
            ]);
            stats[j * EPISODE_STATS..(j + 1) * EPISODE_STATS].copy_from_slice(&e.lane_stats());
        }
        Ok(())
    }
}

/// A batch of [`Lane`]s stepped in one call, with next-step autoreset: a lane whose
/// episode ended (or that the step limit or [`VecEnv::truncate`] cut) is reset by the
/// following call, which ignores its action and returns the first observation of the
/// new episode with reward 0.
///
/// The single env is a one-lane `VecEnv` without autoreset ([`VecEnv::single`]): a
/// step after its episode ended is an error (call reset), and its errors name no lane.
///
/// With `threads > 1` the lanes are split into chunks claimed by the calling thread and
/// `threads - 1` persistent workers (see [`Pool`]).
#[derive(Debug)]
pub struct VecEnv<L: Lane> {
    envs: Vec<L>,
    needs_reset: Vec<bool>,
    /// Steps of each lane's episode (its reset not counted).
    steps: Vec<u64>,
    max_steps: Option<u64>,
    autoreset: bool,
    pool: Pool,
}

impl<L: Lane> Clone for VecEnv<L> {
    fn clone(&self) -> Self {
        VecEnv {
            envs: self.envs.clone(),
            needs_reset: self.needs_reset.clone(),
            steps: self.steps.clone(),
            max_steps: self.max_steps,
            autoreset: self.autoreset,
            pool: Pool::new(self.pool.parts()),
        }
    }
}

impl<L: Lane> VecEnv<L> {
    /// `n` copies of `env`, stepped on `threads` threads (at most one per lane).
    pub fn new(env: L, n: usize, threads: usize) -> Result<Self> {
        if n < 1 {
            return Err(SimError::InvalidConfig("num_envs must be >= 1".into()));
        }
        Ok(VecEnv {
            envs: vec![env; n],
            needs_reset: vec![true; n],
            steps: vec![0; n],
            max_steps: None,
            autoreset: true,
            pool: Pool::new(threads.clamp(1, n)),
        })
    }

    /// The single env: one lane, no autoreset (stepping an ended episode is an error),
    /// errors without a lane name.
    pub fn single(env: L) -> Self {
        VecEnv { envs: vec![env], needs_reset: vec![true], steps: vec![0], max_steps: None, autoreset: false, pool: Pool::new(1) }
    }

    /// Truncates each lane's episode after `max_steps` steps (None: no limit); the
    /// truncated lanes autoreset as ended ones do.
    pub fn set_max_steps(&mut self, max_steps: Option<u64>) -> Result<()> {
        if max_steps == Some(0) {
            return Err(SimError::InvalidConfig("max_episode_steps must be an integer >= 1 or None, got 0".into()));
        }
        if max_steps.is_some() && !self.autoreset {
            // a truncated lane is reset at its next step: the single env would start a new
            // episode silently instead of asking for reset() (Gymnasium's TimeLimit wraps it)
            return Err(SimError::InvalidConfig("the single env takes no max_episode_steps (wrap it in TimeLimit)".into()));
        }
        self.max_steps = max_steps;
        Ok(())
    }

    pub fn num_envs(&self) -> usize {
        self.envs.len()
    }

    pub fn threads(&self) -> usize {
        self.pool.parts()
    }

    pub fn env(&self, lane: usize) -> &L {
        &self.envs[lane]
    }

    /// The lanes whose episode ended: the next step (or `reset_done`) resets them.
    pub fn needs_reset(&self) -> &[bool] {
        &self.needs_reset
    }

    /// Marks lanes to be reset by the next `step` (or `reset_done`) as if their
    /// episode had ended: a time limit truncating them.
    pub fn truncate(&mut self, lanes: &[bool]) -> Result<()> {
        if lanes.len() != self.envs.len() {
            return Err(SimError::InvalidConfig(format!("expected {} lane flags, got {}", self.envs.len(), lanes.len())));
        }
        if !self.autoreset && lanes.iter().any(|&t| t) {
            return Err(SimError::InvalidConfig("the single env is not truncated from outside: call reset()".into()));
        }
        for (nr, &t) in self.needs_reset.iter_mut().zip(lanes) {
            *nr |= t;
        }
        Ok(())
    }

    /// Resets every lane (lane i seeded with `seeds[i]` when given).
    pub fn reset(&mut self, seeds: Option<&[u64]>, out: BatchOut<'_>) -> Result<()> {
        let n = self.envs.len();
        if let Some(s) = seeds {
            if s.len() != n {
                return Err(SimError::InvalidConfig(format!("got {} seeds for {n} envs", s.len())));
            }
        }
        self.run(Move::Reset(seeds), out)
    }

    /// Resets now every lane whose episode ended (same-step autoreset, for adapters such
    /// as SB3's VecEnv) and writes its first observation and statistics; the other lanes
    /// and the reward, terminated, truncated and masked buffers are left as they are.
    pub fn reset_done(&mut self, out: BatchOut<'_>) -> Result<()> {
        self.run(Move::ResetDone, out)
    }

    /// Steps every lane. All actions are checked before any lane moves, so an invalid
    /// action leaves the batch as it was; the actions of lanes about to autoreset are
    /// ignored.
    pub fn step(&mut self, actions: &[L::Act], out: BatchOut<'_>) -> Result<()> {
        let n = self.envs.len();
        let m = self.envs[0].action_len();
        if actions.len() != n * m {
            let want = if m == 1 { format!("{n}") } else { format!("{n} x {m}") };
            return Err(SimError::InvalidAction(format!("expected {want} actions, got {}", actions.len())));
        }
        let (envs, needs_reset, autoreset) = (&self.envs[..], &self.needs_reset[..], self.autoreset);
        let check = |lo: usize, hi: usize| -> Result<()> {
            for lane in lo..hi {
                let e = &envs[lane];
                if autoreset && needs_reset[lane] {
                    e.check_reset()
                } else {
                    e.check_action(&actions[lane * m..(lane + 1) * m])
                }
                .map_err(|err| if autoreset { in_lane(lane, err) } else { err })?;
            }
            Ok(())
        };
        if self.pool.workers.is_empty() {
            check(0, n)?;
        } else {
            // Each thread checks the chunks it steps next, whose lanes are in its cache (checked
            // by the calling thread alone, every lane's state would cross between the cores'
            // caches at every call, serially). The pool returns the error of the first chunk
            // that has one: the first invalid lane's, as when one thread checks them all.
            let chunks = self.pool.chunks();
            self.pool.run(&|p: usize| check(p * n / chunks, (p + 1) * n / chunks))?;
        }
        self.run(Move::Step(actions), out)
    }

    /// Splits the batch and its buffers into the pool's chunks and moves them.
    fn run(&mut self, mv: Move<'_, L::Act>, out: BatchOut<'_>) -> Result<()> {
        let n = self.envs.len();
        let sizes = self.envs[0].obs_sizes();
        let sh = Shape { sizes, m: self.envs[0].action_len(), max_steps: self.max_steps, name_lanes: self.autoreset };
        let BatchOut { obs, reward, terminated, truncated, masked, stats } = out;
        let lens = [(obs[0].len(), n * sizes[0]), (obs[1].len(), n * sizes[1]), (obs[2].len(), n * sizes[2])];
        if lens.iter().any(|&(got, want)| got != want)
            || [reward.len(), terminated.len(), truncated.len(), masked.len()].iter().any(|&l| l != n)
            || stats.len() != n * EPISODE_STATS
        {
            return Err(SimError::InvalidConfig(format!("output buffers of the wrong size for {n} envs")));
        }
        if self.pool.workers.is_empty() {
            let part = Part {
                lo: 0,
                lanes: &mut self.envs,
                needs_reset: &mut self.needs_reset,
                steps: &mut self.steps,
                obs,
                reward,
                terminated,
                truncated,
                masked,
                stats,
            };
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| part.run(mv, sh)))
                .unwrap_or_else(|_| Err(SimError::Stalled("a lane panicked".into())));
        }
        let parts = self.pool.chunks();
        let [mut o0, mut o1, mut o2] = obs;
        let (mut lanes, mut nr, mut stp) = (&mut self.envs[..], &mut self.needs_reset[..], &mut self.steps[..]);
        let (mut rew, mut term, mut trunc, mut msk, mut st) = (reward, terminated, truncated, masked, stats);
        let mut slots: Vec<std::sync::Mutex<Option<Part<'_, L>>>> = Vec::with_capacity(parts);
        for p in 0..parts {
            let (lo, hi) = (p * n / parts, (p + 1) * n / parts);
            let k = hi - lo;
            macro_rules! cut {
                ($s:ident, $len:expr) => {{
                    let (a, b) = std::mem::take(&mut $s).split_at_mut($len);
                    $s = b;
                    a
                }};
            }
            let part = Part {
                lo,
                lanes: cut!(lanes, k),
                needs_reset: cut!(nr, k),
                steps: cut!(stp, k),
                obs: [cut!(o0, k * sizes[0]), cut!(o1, k * sizes[1]), cut!(o2, k * sizes[2])],
                reward: cut!(rew, k),
                terminated: cut!(term, k),
                truncated: cut!(trunc, k),
                masked: cut!(msk, k),
                stats: cut!(st, k * EPISODE_STATS),
            };
            slots.push(std::sync::Mutex::new(Some(part)));
        }
        self.pool.run(&|p: usize| {
            let part = slots[p].lock().expect("a part's lock").take().expect("each part runs once");
            part.run(mv, sh)
        })
    }
}

/// The threads of a [`VecEnv`]: a call's lanes are cut into [`Pool::CHUNKS_PER_THREAD`]
/// contiguous chunks per thread, each claimed once. Thread t (0: the caller, t: worker
/// t) claims its own chunks first, so a lane is stepped by the same thread from call to
/// call while the threads keep up (its simulator is allocated and freed in one malloc
/// arena: no cross-thread frees contending on the arena's lock); then it takes the
/// chunks nobody has claimed yet (a thread descheduled on a busy machine, or a worker
/// slow to wake, holds the call up by one chunk at most). Between calls a
/// worker spins for up to [`Pool::SPIN`] (while an agent runs, a call comes every few
/// hundred microseconds), then sleeps until the next call wakes it.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<std::thread::JoinHandle<()>>,
    /// The process that started the workers.
    pid: u32,
}

type Job = *const (dyn Fn(usize) -> Result<()> + Sync);

struct Shared {
    /// Bumped by each call (and by the shutdown).
    epoch: AtomicU64,
    /// The current call's job: set before the epoch is bumped; read only by the thread
    /// that claimed a part of that call, which the caller waits for.
    job: UnsafeCell<Option<Job>>,
    /// Per part: the last epoch that claimed it (claimed by a CAS from epoch - 1).
    claimed: Vec<AtomicU64>,
    /// Parts finished in the current call.
    done: AtomicUsize,
    /// Each part's error of the current call.
    errors: Vec<Mutex<Option<SimError>>>,
    shutdown: AtomicBool,
}

// `job` is written by the caller only while no part of a call is claimable (before the
// epoch's release, after every claimed part finished); see `Shared::job`.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool {{ parts: {} }}", self.parts())
    }
}

impl Shared {
    /// Claims part `p` of the call of epoch `e`.
    fn claim(&self, p: usize, e: u64) -> bool {
        self.claimed[p].compare_exchange(e - 1, e, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Runs part `p` of the current job (claimed) and records its outcome.
    fn run_part(&self, p: usize) {
        // SAFETY: set before the epoch that claimed `p`; the caller waits for `done`.
        let job = unsafe { (*self.job.get()).expect("a job with the epoch") };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job)(p) }))
            .unwrap_or_else(|_| Err(SimError::Stalled("a worker thread panicked".into())));
        *self.errors[p].lock().expect("a part's error") = r.err();
        self.done.fetch_add(1, Ordering::Release);
    }
}

impl Pool {
    /// How long an idle worker spins before it sleeps.
    pub const SPIN: Duration = Duration::from_micros(100);

    /// Chunks of lanes per thread: a thread descheduled in the middle of its lanes (on
    /// a busy machine) holds up the call by one chunk at most, the others being taken
    /// by the threads that finished theirs.
    pub const CHUNKS_PER_THREAD: usize = 4;

    fn new(parts: usize) -> Self {
        let parts = parts.max(1);
        let chunks = if parts > 1 { parts * Self::CHUNKS_PER_THREAD } else { 1 };
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            job: UnsafeCell::new(None),
            claimed: (0..chunks).map(|_| AtomicU64::new(0)).collect(),
            done: AtomicUsize::new(0),
            errors: (0..chunks).map(|_| Mutex::new(None)).collect(),
            shutdown: AtomicBool::new(false),
        });
        let workers = (1..parts)
            .map(|p| {
                let s = Arc::clone(&shared);
                std::thread::Builder::new().name(format!("flowsched-lanes-{p}")).spawn(move || worker(&s, p)).expect("spawn a lane worker")
            })
            .collect();
        Pool { shared, workers, pid: std::process::id() }
    }

    /// Threads (the caller and the workers).
    fn parts(&self) -> usize {
        self.workers.len() + 1
    }

    /// Chunks of a call: thread t owns chunks `t * CHUNKS_PER_THREAD ..`.
    fn chunks(&self) -> usize {
        self.shared.claimed.len()
    }

    /// Runs `job(p)` for every part p and returns the first part's error (a panic as an
    /// error) after all of them finished.
    fn run(&self, job: &(dyn Fn(usize) -> Result<()> + Sync)) -> Result<()> {
        if self.workers.is_empty() {
            return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(0)))
                .unwrap_or_else(|_| Err(SimError::Stalled("a worker thread panicked".into())));
        }
        let s = &*self.shared;
        let chunks = self.chunks();
        let own = Self::CHUNKS_PER_THREAD;
        // SAFETY: the lifetime is erased only while this call waits for every part.
        let ptr: Job = unsafe { std::mem::transmute::<*const (dyn Fn(usize) -> Result<()> + Sync + '_), Job>(job) };
        unsafe { *s.job.get() = Some(ptr) };
        s.done.store(0, Ordering::Relaxed);
        let e = s.epoch.fetch_add(1, Ordering::Release) + 1;
        for w in &self.workers {
            w.thread().unpark();
        }
        // its own chunks first, then, from the end of the batch (where the workers come
        // last), those no worker has claimed yet
        for c in (0..own).chain((own..chunks).rev()) {
            if s.claim(c, e) {
                s.run_part(c);
            }
        }
        let mut spins = 0u32;
        while s.done.load(Ordering::Acquire) != chunks {
            if spins < 1 << 12 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
        unsafe { *s.job.get() = None };
        for e in &s.errors {
            if let Some(err) = e.lock().expect("a part's error").take() {
                return Err(err);
            }
        }
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // a forked child: the workers are the parent's (the child's calls ran every
            // part on the calling thread); joining them would wait forever
            self.workers.drain(..).for_each(std::mem::forget);
            return;
        }
        self.shared.shutdown.store(true, Ordering::Release);
        self.shared.epoch.fetch_add(1, Ordering::Release);
        for w in &self.workers {
            w.thread().unpark();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Worker of part `p`: waits for each new epoch and runs its part unless the caller
/// claimed it first.
fn worker(s: &Shared, p: usize) {
    let mut seen = 0u64;
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        let e = loop {
            let e = s.epoch.load(Ordering::Acquire);
            if e != seen {
                break e;
            }
            spins = spins.wrapping_add(1);
            if spins % 64 != 0 || start.elapsed() < Pool::SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::park();
            }
        };
        seen = e;
        if s.shutdown.load(Ordering::Acquire) {
            return;
        }
        // its own chunks, then the others not claimed yet (after its own, round the batch)
        let (chunks, own) = (s.claimed.len(), Pool::CHUNKS_PER_THREAD);
        for k in 0..chunks {
            let c = (p * own + k) % chunks;
            if s.claim(c, e) {
                s.run_part(c);
            }
        }
    }
}

/// A batch of [`TokenEnv`]s (see [`VecEnv`]).
pub type TokenVecEnv = VecEnv<TokenEnv>;

impl Lane for TokenEnv {
    type Act = i64;
    fn action_len(&self) -> usize {
        1
    }
    fn obs_sizes(&self) -> [usize; MAX_OBS_PARTS] {
        [self.cfg.window * REQ_FEATURES, ACTIVE_FEATURES, self.cfg.window]
    }
    fn check_action(&self, action: &[i64]) -> Result<()> {
        TokenEnv::check_action(self, action[0])
    }
    fn reset_lane(&mut self, seed: Option<u64>) -> Result<()> {
        self.reset(seed)
    }
    fn step_lane(&mut self, action: &[i64]) -> Result<Stepped> {
        let (reward, terminated) = self.step_checked(action[0])?; // VecEnv::step checked it
        Ok(Stepped { reward, terminated, masked: self.last_masked })
    }
    fn write_lane_obs(&mut self, [req, act, mask]: [&mut [f32]; MAX_OBS_PARTS]) {
        self.write_obs(req, act, mask)
    }
    fn lane_stats(&self) -> [f64; EPISODE_STATS] {
        self.episode_stats()
    }
}

impl VecEnv<TokenEnv> {
    /// Replaces every lane's workload by a fixed trace (from its next reset on).
    pub fn set_trace(&mut self, flows: Vec<FlowSpec>) -> Result<()> {
        for e in &mut self.envs {
            e.set_trace(flows.clone())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(exact: bool) -> TokenEnvConfig {
        TokenEnvConfig {
            topo: Topology::big_switch(&[1.0; 11]).unwrap(),
            scheduler: Scheduler::Ps,
            k: 10,
            window: 5,
            delay_per_hop_s: 250e-6,
            terminate_missed: false,
            reward: TokenReward::Deadline,
            obs_limits: ObsLimits::default(),
            masked_action: MaskedAction::Oldest,
            packet: None,
            workload: TokenWorkload::Gather {
                classes: vec![
                    FlowClass { weight: 0.6, size_bytes: 350e3, deadline_s: 0.040 },
                    FlowClass { weight: 0.4, size_bytes: 250e3, deadline_s: 0.050 },
                ],
                exact,
                burst_size: 10,
                burst_rate_hz: 10.0,
                n_bursts: 50,
                dst: 0,
            },
        }
    }

    #[test]
    fn the_env_draws_its_episodes_with_gather_bursts_seeded() {
        for exact in [true, false] {
            let c = cfg(exact);
            let TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, n_bursts, dst } = c.workload.clone() else {
                unreachable!()
            };
            let mut env = TokenEnv::new(c).unwrap();
            for seed in [0u64, 7, u64::MAX] {
                env.reset(Some(seed)).unwrap();
                let want = gather_bursts_seeded(seed, &classes, exact, burst_size, burst_rate_hz, n_bursts, dst, 11).unwrap();
                let sim = env.simulator().unwrap();
                assert_eq!(sim.n_flows(), want.len());
                for (i, w) in want.iter().enumerate() {
                    let f = sim.flow(i);
                    assert_eq!((f.arrival_s.to_bits(), f.src, f.dst), (w.arrival_s.to_bits(), w.src, w.dst));
                    assert_eq!((f.size_bytes.to_bits(), f.deadline_s.to_bits()), (w.size_bytes.to_bits(), w.deadline_s.to_bits()));
                }
            }
        }
        assert!(gather_bursts_seeded(0, &[], true, 10, 10.0, 1, 0, 11).is_err());
    }

    #[test]
    fn gather_bursts_have_the_exact_composition_and_distinct_senders() {
        let mut env = TokenEnv::new(cfg(true)).unwrap();
        let flows = env.draw_flows();
        assert_eq!(flows.len(), 500);
        for b in flows.chunks(10) {
            assert!(b.iter().all(|f| f.arrival_s == b[0].arrival_s && f.dst == 0 && f.src != 0));
            assert_eq!(b.iter().filter(|f| f.size_bytes == 350e3 && f.deadline_s == 0.040).count(), 6);
            let mut s: Vec<usize> = b.iter().map(|f| f.src).collect();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 10);
        }
        // Poisson bursts: mean gap 1 / 10 Hz within a loose bound for 50 gaps
        let mean_gap = flows[499].arrival_s / 50.0;
        assert!((0.06..0.15).contains(&mean_gap), "{mean_gap}");
    }

    #[test]
    fn episodes_are_reproducible_and_the_return_counts_deadlines() {
        let run = |seed| {
            let mut env = TokenEnv::new(cfg(false)).unwrap();
            env.reset(Some(seed)).unwrap();
            let (mut ret, mut steps) = (0.0, 0);
            loop {
                let (r, done) = env.step((steps % env.n_choices()) as i64).unwrap();
                ret += r;
                steps += 1;
                if done {
                    break;
                }
            }
            (ret, steps, env.episode_stats())
        };
        let (a, b) = (run(3), run(3));
        assert_eq!(a.0, b.0);
        assert_eq!(a.2[3].to_bits(), b.2[3].to_bits());
        assert_eq!(a.1, 500); // one decision per flow
        assert_eq!(a.0, a.2[0]);
        assert_ne!(run(4).2[3].to_bits(), a.2[3].to_bits());
    }

    #[test]
    fn invalid_actions_are_errors() {
        let mut env = TokenEnv::new(cfg(true)).unwrap();
        assert!(env.step(0).unwrap_err().to_string().contains("reset"));
        env.reset(Some(0)).unwrap();
        assert!(env.step(5).unwrap_err().to_string().contains("out of range"));
        assert!(env.step(-1).unwrap_err().to_string().contains("out of range"));
        assert!(env.step(5).unwrap_err().to_string().contains("expected 0 to 4"), "closed range of a window of 5");
    }

    #[test]
    fn threads_step_the_lanes_as_one_thread_does() {
        let run = |threads: usize| {
            let n = 7;
            let mut v = TokenVecEnv::new(TokenEnv::new(cfg(false)).unwrap(), n, threads).unwrap();
            v.set_max_steps(Some(130)).unwrap();
            let mut b = BatchBufs::new(&v);
            let mut trail: Vec<u64> = Vec::new();
            let seeds: Vec<u64> = (0..n as u64).collect();
            v.reset(Some(&seeds), b.out()).unwrap();
            for t in 0..600 {
                // some masked actions: position 4 while fewer than 5 requests wait
                let acts: Vec<i64> = (0..n).map(|l| if (t + l) % 5 == 0 { 4 } else { (t % 3) as i64 }).collect();
                v.step(&acts, b.out()).unwrap();
                trail.extend(b.obs.iter().flatten().map(|x| x.to_bits() as u64));
                trail.extend(b.reward.iter().chain(&b.stats).map(|x| x.to_bits()));
                trail.extend(b.terminated.iter().chain(&b.truncated).chain(&b.masked).map(|&x| x as u64));
            }
            assert!(trail.len() > 0);
            let bad = v.step(&[9; 7], b.out()).unwrap_err().to_string();
            // the threads check their own chunks: the error is still the first bad lane's,
            // and no lane moved (the next valid step continues every lane as before)
            let later = v.step(&[0, 0, 0, 0, 9, -1, 9], b.out()).unwrap_err().to_string();
            v.step(&[0; 7], b.out()).unwrap();
            trail.extend(b.obs.iter().flatten().map(|x| x.to_bits() as u64));
            trail.extend(b.reward.iter().map(|x| x.to_bits()));
            (trail, bad, later)
        };
        let one = run(1);
        assert!(one.1.starts_with("invalid action: env 0: action 9 is out of range of the action space Discrete(5)"), "{}", one.1);
        assert!(one.2.starts_with("invalid action: env 4: action 9 is out of range"), "{}", one.2);
        assert_eq!(run(2), one);
        assert_eq!(run(3), one);
        assert_eq!(run(7), one);
    }

    #[test]
    fn lane_errors_name_the_lane_once_and_the_terminal_mask_is_the_last_decisions() {
        let mut v = TokenVecEnv::new(TokenEnv::new(cfg(true)).unwrap(), 2, 1).unwrap();
        let w = 5;
        let mut b = BatchBufs::new(&v);
        v.reset(Some(&[0, 1]), b.out()).unwrap();
        let msg = v.step(&[0, 9], b.out()).unwrap_err().to_string();
        assert_eq!(msg, "invalid action: env 1: action 9 is out of range of the action space Discrete(5): expected 0 to 4 (a position in the window)");
        let mut last = vec![0f32; 2 * w];
        loop {
            last.copy_from_slice(&b.obs[2]);
            v.step(&[0, 0], b.out()).unwrap();
            if b.terminated[0] {
                break;
            }
        }
        assert!(b.obs[2][..w].iter().any(|&m| m > 0.0), "terminal mask all zeros");
        assert!(b.obs.iter().flatten().all(|&x| !(x == 0.0 && x.is_sign_negative())), "a -0.0 in the observation");
        assert_eq!(&b.obs[2][..w], &last[..w]);
    }

    /// Drives `env` with `pick(mask)` until a decision has fewer than 5 requests waiting.
    fn to_a_partial_window(env: &mut TokenEnv) {
        env.reset(Some(3)).unwrap();
        while env.n_choices() == 5 {
            env.step(0).unwrap();
        }
        assert!(!env.is_done());
    }

    #[test]
    fn a_masked_action_admits_the_oldest_request_or_raises_in_strict_mode() {
        let mut lax = TokenEnv::new(cfg(true)).unwrap();
        let mut fifo = lax.clone();
        to_a_partial_window(&mut lax);
        to_a_partial_window(&mut fifo);
        let n = lax.n_choices();
        assert_eq!(lax.step(4).unwrap(), fifo.step(0).unwrap());
        assert!(lax.last_masked() && !fifo.last_masked());
        let bits = |e: &TokenEnv| e.simulator().unwrap().finish_s().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&lax), bits(&fifo));
        let mut c = cfg(true);
        c.masked_action = MaskedAction::Raise;
        let mut strict = TokenEnv::new(c).unwrap();
        to_a_partial_window(&mut strict);
        let msg = strict.step(4).unwrap_err().to_string();
        assert!(msg.contains(&format!("action 4 is masked: only {} request(s) wait", strict.n_choices())), "{msg}");
        assert!(msg.contains("masked_action='raise' rejects masked actions"), "{msg}");
        assert!(n < 5);
        assert!(MaskedAction::parse("first").unwrap_err().to_string().contains("got 'first'"));
    }

    #[test]
    fn the_single_env_is_a_one_lane_vec_env_without_autoreset() {
        let mut single = TokenVecEnv::single(TokenEnv::new(cfg(false)).unwrap());
        let mut vec = TokenVecEnv::new(TokenEnv::new(cfg(false)).unwrap(), 3, 1).unwrap();
        let (mut bs, mut bv) = (BatchBufs::new(&single), BatchBufs::new(&vec));
        let msg = single.step(&[0], bs.out()).unwrap_err().to_string();
        assert_eq!(msg, "invalid action: the episode is over (or never started): call reset()");
        single.reset(Some(&[5]), bs.out()).unwrap();
        vec.reset(Some(&[5, 6, 7]), bv.out()).unwrap();
        let mut steps = 0;
        loop {
            let a = (steps % 5) as i64;
            single.step(&[a], bs.out()).unwrap();
            vec.step(&[a, 0, 0], bv.out()).unwrap();
            steps += 1;
            for p in 0..MAX_OBS_PARTS {
                let k = bs.obs[p].len();
                assert_eq!(bs.obs[p], bv.obs[p][..k], "step {steps}");
            }
            assert_eq!((bs.reward[0], bs.terminated[0], bs.masked[0]), (bv.reward[0], bv.terminated[0], bv.masked[0]));
            if bs.terminated[0] {
                break;
            }
        }
        assert_eq!(steps, 500);
        assert_eq!(bs.stats[..EPISODE_STATS], bv.stats[..EPISODE_STATS]);
        // no autoreset: the ended episode is an error, naming no lane; the vector lane resets
        let msg = single.step(&[0], bs.out()).unwrap_err().to_string();
        assert_eq!(msg, "invalid action: the episode is over (or never started): call reset()");
        vec.step(&[9, 0, 0], bv.out()).unwrap(); // lane 0's action is ignored: it resets
        assert!(!bv.terminated[0] && bv.reward[0] == 0.0);
        // nor can a step limit or an outside truncation make it start a new episode silently
        let msg = single.set_max_steps(Some(2)).unwrap_err().to_string();
        assert!(msg.contains("the single env takes no max_episode_steps"), "{msg}");
        let msg = single.truncate(&[true]).unwrap_err().to_string();
        assert!(msg.contains("call reset()"), "{msg}");
        single.truncate(&[false]).unwrap();
    }

    #[test]
    fn the_step_limit_truncates_and_the_next_step_resets() {
        let mut v = TokenVecEnv::new(TokenEnv::new(cfg(false)).unwrap(), 2, 1).unwrap();
        assert!(v.set_max_steps(Some(0)).is_err());
        v.set_max_steps(Some(3)).unwrap();
        let mut b = BatchBufs::new(&v);
        v.reset(Some(&[0, 1]), b.out()).unwrap();
        for k in 1..=3 {
            v.step(&[0, 0], b.out()).unwrap();
            assert_eq!(b.truncated, [k == 3, k == 3]);
            assert_eq!(b.terminated, [false, false]);
        }
        assert_eq!(v.needs_reset(), [true, true]);
        v.step(&[0, 0], b.out()).unwrap();
        assert_eq!((b.truncated.as_slice(), b.reward.as_slice()), ([false, false].as_slice(), [0.0, 0.0].as_slice()));
        assert_eq!(v.needs_reset(), [false, false]);
    }

    /// The Artemis setting on the packet model (benchmarks/reproduce/artemis.py's NS3_ERA).
    fn packet_cfg(k: usize, terminate: bool) -> TokenEnvConfig {
        let mut c = cfg(true);
        c.k = k;
        c.terminate_missed = terminate;
        c.packet = Some(PacketConfig::artemis_ns3_era());
        c
    }

    #[test]
    fn the_packet_env_driven_by_a_rule_is_the_packet_models_run_of_that_rule() {
        for (k, terminate) in [(10, false), (3, true), (2, false)] {
            let mut env = TokenEnv::new(packet_cfg(k, terminate)).unwrap();
            let mut g = SplitMix64::new(mix64(9));
            let TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, dst, .. } = env.config().workload.clone() else {
                unreachable!()
            };
            let flows = gather_bursts(&mut g, &classes, exact, burst_size, burst_rate_hz, 12, dst, 11);
            env.set_trace(flows.clone()).unwrap();
            for policy in [AdmissionPolicy::Fifo, AdmissionPolicy::Edf, AdmissionPolicy::Ssdf, AdmissionPolicy::Lsdf] {
                let mut pc = PacketConfig::artemis_ns3_era();
                pc.delay_per_hop_s = 250e-6;
                pc.terminate_missed = terminate;
                pc.admission = Some(AdmissionConfig { k, window: 5, policy });
                let mut rule = PacketSimulator::new(&Topology::big_switch(&[1.0; 11]).unwrap(), &flows, pc).unwrap();
                rule.run().unwrap();
                env.reset(Some(0)).unwrap();
                let mut rng = SplitMix64::new(0);
                let mut steps = 0;
                while !env.is_done() {
                    let win: Vec<u32> = env.sim().unwrap().waiting(env.decision_dst()).iter().take(5).copied().collect();
                    let pos = crate::sim::choose_admission(&policy, &flows, &win, &mut rng);
                    env.step(pos as i64).unwrap();
                    steps += 1;
                }
                let TokenSim::Packet(p) = env.sim().unwrap() else { panic!("the packet model") };
                let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(p.finish_s()), bits(rule.finish_s()), "{policy:?} k {k}");
                assert_eq!(bits(p.admitted_s()), bits(rule.admitted_s()), "{policy:?} k {k}");
                assert_eq!(p.stats(), rule.stats());
                let admitted = rule.admitted_s().iter().filter(|x| !x.is_nan()).count();
                assert_eq!(steps, admitted, "one step per admission");
                // the return counts the deadlines met
                let met = (0..flows.len()).filter(|&i| !rule.terminated()[i] && rule.fct_of(i) <= flows[i].deadline_s * (1.0 + 1e-9)).count();
                assert_eq!(env.episode_stats()[0] as usize, met);
            }
        }
    }

    #[test]
    fn packet_lanes_are_single_envs_seeded_seed_plus_i_and_episodes_repeat() {
        let mut c = packet_cfg(10, false);
        if let TokenWorkload::Gather { n_bursts, .. } = &mut c.workload {
            *n_bursts = 6;
        }
        let run = |env: &mut TokenEnv, seed: u64| {
            env.reset(Some(seed)).unwrap();
            let (mut obs, mut rew) = (Vec::new(), Vec::new());
            let (mut req, mut act, mut mask) = (vec![0f32; 5 * REQ_FEATURES], vec![0f32; ACTIVE_FEATURES], vec![0f32; 5]);
            let mut j = 0i64;
            while !env.is_done() {
                env.write_obs(&mut req, &mut act, &mut mask);
                obs.extend(req.iter().chain(&act).chain(&mask).map(|x| x.to_bits()));
                let (r, _) = env.step(j % 5).unwrap();
                rew.push(r.to_bits());
                j += 1;
            }
            (obs, rew)
        };
        let mut a = TokenEnv::new(c.clone()).unwrap();
        let first = run(&mut a, 3);
        assert_eq!(first, run(&mut a, 3));
        assert_ne!(first, run(&mut a, 4));
        assert!(first.1.iter().any(|&r| f64::from_bits(r) > 0.0));
        // a batch: lane i follows the single env seeded 5 + i
        let mut v = TokenVecEnv::new(TokenEnv::new(c.clone()).unwrap(), 3, 1).unwrap();
        let mut bufs = BatchBufs::new(&v);
        v.reset(Some(&[5, 6, 7]), bufs.out()).unwrap();
        let mut singles: Vec<TokenEnv> = (0..3)
            .map(|lane| {
                let mut e = TokenEnv::new(c.clone()).unwrap();
                e.reset(Some(5 + lane as u64)).unwrap();
                e
            })
            .collect();
        let (rq, ac) = (5 * REQ_FEATURES, ACTIVE_FEATURES);
        let mut compared = 0;
        for j in 0.. {
            for (lane, e) in singles.iter_mut().enumerate() {
                let (mut req, mut act, mut mask) = (vec![0f32; rq], vec![0f32; ac], vec![0f32; 5]);
                e.write_obs(&mut req, &mut act, &mut mask);
                assert_eq!(req, bufs.obs[0][lane * rq..(lane + 1) * rq], "lane {lane} step {j}");
                assert_eq!(act, bufs.obs[1][lane * ac..(lane + 1) * ac], "lane {lane} step {j}");
                assert_eq!(mask, bufs.obs[2][lane * 5..(lane + 1) * 5], "lane {lane} step {j}");
                compared += 1;
            }
            if singles.iter().any(|e| e.is_done()) {
                break;
            }
            let acts = [j % 5, (j + 1) % 5, (j + 2) % 5];
            v.step(&acts, bufs.out()).unwrap();
            for (lane, e) in singles.iter_mut().enumerate() {
                let (r, _) = e.step(acts[lane]).unwrap();
                assert_eq!(r.to_bits(), bufs.reward[lane].to_bits(), "lane {lane} step {j}");
            }
        }
        assert!(compared > 30);
    }

    #[test]
    fn bad_packet_options_fail_at_construction() {
        let mut c = packet_cfg(10, false);
        c.packet.as_mut().unwrap().mss_bytes = 100;
        assert!(TokenEnv::new(c).unwrap_err().to_string().contains("mss_bytes"));
    }

    #[test]
    fn py_float_writes_as_python_repr() {
        for (x, want) in [
            (1.5, "1.5"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
            (1.0010000467300415, "1.0010000467300415"),
            (-2.0, "-2.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (3.4028234663852886e38, "3.4028234663852886e+38"),
            (0.0, "0.0"),
        ] {
            assert_eq!(py_float(x), want);
        }
    }
}

// ---------------------------------------------------------------------------------
// Switch scheduling (pFabric / aSCC): one priority score per active flow.
// ---------------------------------------------------------------------------------

/// Features of each flow slot (see [`SwitchEnv::write_obs`]).
pub const FLOW_FEATURES: usize = 9;

/// What the switch env's reward integrates between decisions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SwitchReward {
    /// Minus the number of flows in the system times the elapsed ms: the return is
    /// minus the total flow time (sum of finish - arrival) in ms.
    FlowTime,
    /// Minus the sum over flows in the system of elapsed ms / the flow's ideal FCT
    /// (ms): the return is minus the sum of slowdowns (without the path delay).
    Slowdown,
}

impl SwitchReward {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "fct" => Ok(SwitchReward::FlowTime),
            "slowdown" => Ok(SwitchReward::Slowdown),
            _ => Err(SimError::InvalidConfig(format!("unknown reward '{name}'; known: fct, slowdown"))),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SwitchEnvConfig {
    pub topo: Topology,
    pub max_flows: usize,
    /// Also decide at least this often (simulated seconds); None: only at flow changes.
    pub decision_interval_s: Option<f64>,
    pub reward: SwitchReward,
    pub delay_per_hop_s: f64,
    pub terminate_missed: bool,
    /// Where the observation saturates (see [`ObsLimits`]).
    pub obs_limits: ObsLimits,
    /// Hide every flow's size for its whole life (remaining bytes 0, size visible 0): the
    /// information LAS and PIAS schedule with. Otherwise a size is visible when the
    /// trace says it is known, or once all its data is there (aSCC).
    pub hide_sizes: bool,
    /// None: the fluid model. Some: the packet model with these options; its scheduler
    /// (`external`: the scores are the packets' priority tags), delay per hop and
    /// `terminate_missed` are the env's, and it pauses at every flow change.
    pub packet: Option<PacketConfig>,
}

/// Priority scheduling in the switch, one decision per step: the agent scores every
/// active flow (lower = served first) and the simulator serves flows greedily in score
/// order until the next decision. The episode's flows come from a trace set before
/// each reset ([`SwitchEnv::set_next_trace`]).
#[derive(Debug, Clone)]
pub struct SwitchEnv {
    cfg: SwitchEnvConfig,
    next: Option<Vec<FlowSpec>>,
    sim: Option<TokenSim>,
    /// Flow ids in observation slots (oldest first), then the overflow.
    slots: Vec<u32>,
    /// Packet model: how many flows of its arrival order are in `slots` or ended.
    seen: usize,
    done: bool,
    /// Time in the system summed over the flows (the return's flow time): finished and
    /// terminated flows alike, each until it ended.
    flow_time_s: f64,
    finished: u64,
    /// Flows that ended (finished or terminated), and the finished ones' time in the system.
    ended: u64,
    finished_time_s: f64,
    // per-host counts of flows in the system (scratch)
    at_src: Vec<u32>,
    at_dst: Vec<u32>,
}

impl SwitchEnv {
    pub fn new(cfg: SwitchEnvConfig) -> Result<Self> {
        if cfg.max_flows < 1 {
            return Err(SimError::InvalidConfig(format!("max_flows must be >= 1, got {}", cfg.max_flows)));
        }
        if let Some(d) = cfg.decision_interval_s {
            if !(d.is_finite() && d > 0.0) {
                return Err(SimError::InvalidConfig(format!("decision_interval_s must be > 0, got {d}")));
            }
        }
        let h = cfg.topo.n_hosts;
        if let Some(pc) = &cfg.packet {
            // the packet options are checked by the packet model, on one flow (a bad option
            // fails now rather than at the first trace)
            if h >= 2 {
                let mut pc = pc.clone();
                pc.scheduler = Scheduler::External;
                PacketSimulator::new(&cfg.topo, &[FlowSpec::new(0.0, 0, 1, 1000.0)], pc)?;
            }
        }
        Ok(SwitchEnv {
            cfg,
            next: None,
            sim: None,
            slots: Vec::new(),
            seen: 0,
            done: true,
            flow_time_s: 0.0,
            finished: 0,
            ended: 0,
            finished_time_s: 0.0,
            at_src: vec![0; h],
            at_dst: vec![0; h],
        })
    }

    pub fn config(&self) -> &SwitchEnvConfig {
        &self.cfg
    }

    fn sim_config(&self) -> SimConfig {
        let mut c = SimConfig::new(Scheduler::External);
        c.pause_on_flow_change = true;
        c.delay_per_hop_s = self.cfg.delay_per_hop_s;
        c.terminate_missed = self.cfg.terminate_missed;
        c
    }

    fn new_sim(&self, flows: Vec<FlowSpec>) -> Result<TokenSim> {
        Ok(match &self.cfg.packet {
            None => TokenSim::Fluid(Simulator::new(self.cfg.topo.clone(), flows, self.sim_config())?),
            Some(pc) => {
                let mut c = pc.clone();
                c.scheduler = Scheduler::External;
                c.delay_per_hop_s = self.cfg.delay_per_hop_s;
                c.terminate_missed = self.cfg.terminate_missed;
                c.pause_on_flow_change = true;
                TokenSim::Packet(PacketSimulator::new(&self.cfg.topo, &flows, c)?)
            }
        })
    }

    /// The trace of the next episode (validated now).
    pub fn set_next_trace(&mut self, flows: Vec<FlowSpec>) -> Result<()> {
        if flows.is_empty() {
            return Err(SimError::InvalidConfig("the trace has no flows".into()));
        }
        self.new_sim(flows.clone())?;
        self.next = Some(flows);
        Ok(())
    }

    pub fn reset(&mut self) -> Result<()> {
        let flows = self.next.take().ok_or_else(|| SimError::InvalidAction("reset() needs a trace: set_next_trace() first".into()))?;
        self.sim = Some(self.new_sim(flows)?);
        self.slots.clear();
        self.seen = 0;
        self.done = false;
        self.flow_time_s = 0.0;
        self.finished = 0;
        self.ended = 0;
        self.finished_time_s = 0.0;
        self.advance()?;
        Ok(())
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    pub fn simulator(&self) -> Option<&TokenSim> {
        self.sim.as_ref()
    }

    /// Number of flows in the observation (at most max_flows).
    pub fn n_slots(&self) -> usize {
        self.slots.len().min(self.cfg.max_flows)
    }

    /// Checks scores without acting: `max_flows` of them, each within [-1, 1] (the
    /// action space; NaN is outside), and an episode under way. Nothing is clipped.
    pub fn check_action(&self, scores: &[f32]) -> Result<()> {
        let m = self.cfg.max_flows;
        if scores.len() != m {
            return Err(SimError::InvalidAction(format!("expected {m} scores, got {}", scores.len())));
        }
        let outside = |x: &f32| !(*x >= -1.0 && *x <= 1.0);
        // without an early exit, so that it vectorizes: every score is checked at every step
        if scores.iter().fold(false, |bad, x| bad | outside(x)) {
            let j = scores.iter().position(outside).expect("one is outside");
            let count = scores.iter().filter(|x| outside(x)).count();
            return Err(SimError::InvalidAction(format!(
                "action (one score per flow slot): element {j} is {}; actions must be within [-1, 1], the action \
                 space's bounds ({count} element(s) outside); nothing is clipped: clip or rescale actions before \
                 stepping (SB3 and gymnasium.wrappers.ClipAction do)",
                py_float(scores[j] as f64)
            )));
        }
        if self.sim.is_none() || self.done {
            return Err(SimError::InvalidAction("the episode is over (or never started): call reset()".into()));
        }
        Ok(())
    }

    /// Sets the scores (one per slot, each within [-1, 1]; slots past the flows are
    /// ignored) and runs to the next decision. Flows past `max_flows` get the worst
    /// score (+inf-like, equal: they share what is left). Returns (reward, terminated).
    pub fn step(&mut self, scores: &[f32]) -> Result<(f64, bool)> {
        self.check_action(scores)?;
        self.step_checked(scores)
    }

    /// [`SwitchEnv::step`] of scores [`SwitchEnv::check_action`] accepted.
    fn step_checked(&mut self, scores: &[f32]) -> Result<(f64, bool)> {
        let n = self.n_slots();
        let sim = self.sim.as_mut().expect("checked");
        for (j, &i) in self.slots.iter().enumerate() {
            let s = if j < n { scores[j] as f64 } else { f64::MAX };
            sim.set_score(i as usize, s)?;
        }
        let r = self.advance()?;
        Ok((r, self.done))
    }

    /// Runs to the next decision; returns the reward accrued meanwhile.
    fn advance(&mut self) -> Result<f64> {
        let sim = self.sim.as_mut().expect("reset before use");
        let t0 = sim.now();
        // weight of the flows in the system, constant until the next flow change
        let w: f64 = match self.cfg.reward {
            SwitchReward::FlowTime => self.slots.len() as f64,
            SwitchReward::Slowdown => self.slots.iter().map(|&i| 1.0 / sim.ideal_tx_s(i as usize)).sum(),
        };
        let until = self.cfg.decision_interval_s.map_or(f64::INFINITY, |d| t0 + d);
        // one step: it pauses at the next flow change (or `until`), never for a decision
        match sim.advance(until)? {
            Outcome::Done => self.done = true,
            Outcome::FlowsChanged | Outcome::TimeReached => {}
            Outcome::Decision { dst } => {
                return Err(SimError::InvalidConfig(format!(
                    "an admission decision is pending at destination {dst}, but the switch env has no admission control"
                )))
            }
        }
        let dt = sim.now() - t0;
        self.flow_time_s += self.slots.len() as f64 * dt;
        // every flow enters the slots at its arrival (a decision): count those that left, and
        // the finished ones' time in the system (each ended at a pause: now)
        let now = sim.now();
        for &i in &self.slots {
            match sim.ended(i as usize) {
                Some(false) => {
                    self.finished += 1;
                    self.ended += 1;
                    self.finished_time_s += now - sim.flow(i as usize).arrival_s;
                }
                Some(true) => self.ended += 1,
                None => {}
            }
        }
        // the flows now in the system, oldest first
        match &*sim {
            TokenSim::Fluid(s) => {
                self.slots.clear();
                self.slots.extend(s.active().iter().copied().filter(|&i| s.status(i as usize) == Status::Active));
            }
            TokenSim::Packet(p) => {
                self.slots.retain(|&i| !p.ended(i as usize));
                let arrived = p.arrived();
                self.slots.extend(arrived[self.seen..].iter().copied().filter(|&i| !p.ended(i as usize)));
                self.seen = arrived.len();
            }
        }
        let fl = |i: u32| (sim.flow(i as usize).arrival_s, i);
        self.slots.sort_unstable_by(|&a, &b| fl(a).partial_cmp(&fl(b)).expect("arrival times are finite"));
        // the last flow ended: the episode ends at this step (the fluid core says Done only at
        // the next advance, which would be a step with no flow and no reward)
        if self.ended as usize == sim.n_flows() {
            self.done = true;
        }
        Ok(match self.cfg.reward {
            SwitchReward::FlowTime => -w * dt * 1e3,
            SwitchReward::Slowdown => -w * dt,
        })
    }

    /// [flows finished, total flow time (s: finished and terminated flows, each until it
    /// ended), mean flow time of the finished flows (s), flows in the system].
    pub fn episode_stats(&self) -> [f64; EPISODE_STATS] {
        let mean = if self.finished > 0 { self.finished_time_s / self.finished as f64 } else { f64::NAN };
        [self.finished as f64, self.flow_time_s, mean, self.slots.len() as f64]
    }

    /// Writes `flows[max_flows * FLOW_FEATURES]` and `mask[max_flows]`.
    ///
    /// Per flow in the system, oldest first (zeros past them): bytes sent (MB),
    /// remaining bytes (MB; 0 while the size is hidden, always with `hide_sizes`), size
    /// visible (0/1), age (ms),
    /// all data available (0/1), flows in the system at its source and at its
    /// destination, time left to its deadline (ms, 0 without one), has a deadline (0/1).
    pub fn write_obs(&mut self, flows: &mut [f32], mask: &mut [f32]) {
        flows.fill(0.0);
        mask.fill(0.0);
        let Some(sim) = self.sim.as_ref() else { return };
        let now = sim.now();
        self.at_src.fill(0);
        self.at_dst.fill(0);
        for &i in &self.slots {
            let f = sim.flow(i as usize);
            self.at_src[f.src] += 1;
            self.at_dst[f.dst] += 1;
        }
        for (j, &i) in self.slots.iter().take(self.cfg.max_flows).enumerate() {
            let i = i as usize;
            let f = sim.flow(i);
            let sent = sim.through_bytes(i);
            let complete = sim.is_complete(i);
            let visible = !self.cfg.hide_sizes && (f.size_known || complete);
            let has_dl = !f.deadline_s.is_nan();
            let o = &mut flows[j * FLOW_FEATURES..(j + 1) * FLOW_FEATURES];
            let lim = &self.cfg.obs_limits;
            o[0] = lim.mb(sent * 1e-6);
            o[1] = if visible { lim.mb((f.size_bytes - sent) * 1e-6) } else { 0.0 };
            o[2] = visible as u8 as f32;
            // the packet model's clock is in picoseconds: at an arrival it may read a hair
            // before the arrival time in seconds (age 0, never negative)
            o[3] = lim.ms((now - f.arrival_s).max(0.0) * 1e3);
            o[4] = complete as u8 as f32;
            o[5] = lim.count(self.at_src[f.src] as usize);
            o[6] = lim.count(self.at_dst[f.dst] as usize);
            o[7] = if has_dl { lim.ms((f.arrival_s + f.deadline_s - now) * 1e3) } else { 0.0 };
            o[8] = has_dl as u8 as f32;
            mask[j] = 1.0;
        }
    }
}

/// A batch of [`SwitchEnv`]s (see [`VecEnv`]); each lane's next trace is set from
/// outside before the call that resets it.
pub type SwitchVecEnv = VecEnv<SwitchEnv>;

impl Lane for SwitchEnv {
    type Act = f32;
    fn action_len(&self) -> usize {
        self.cfg.max_flows
    }
    fn obs_sizes(&self) -> [usize; MAX_OBS_PARTS] {
        [self.cfg.max_flows * FLOW_FEATURES, self.cfg.max_flows, 0]
    }
    fn check_action(&self, s: &[f32]) -> Result<()> {
        SwitchEnv::check_action(self, s)
    }
    fn check_reset(&self) -> Result<()> {
        if self.next.is_none() {
            return Err(SimError::InvalidAction("its episode ended and no next trace is set".into()));
        }
        Ok(())
    }
    fn reset_lane(&mut self, _seed: Option<u64>) -> Result<()> {
        self.reset()
    }
    fn step_lane(&mut self, scores: &[f32]) -> Result<Stepped> {
        let (reward, terminated) = self.step_checked(scores)?; // VecEnv::step checked them
        Ok(Stepped { reward, terminated, masked: false })
    }
    fn write_lane_obs(&mut self, [flows, mask, _]: [&mut [f32]; MAX_OBS_PARTS]) {
        self.write_obs(flows, mask)
    }
    fn lane_stats(&self) -> [f64; EPISODE_STATS] {
        self.episode_stats()
    }
}

impl VecEnv<SwitchEnv> {
    /// The next trace of `lane` (used by its next reset).
    pub fn set_next_trace(&mut self, lane: usize, flows: Vec<FlowSpec>) -> Result<()> {
        let n = self.envs.len();
        self.envs.get_mut(lane).ok_or_else(|| SimError::InvalidConfig(format!("lane {lane} out of range ({n} envs)")))?.set_next_trace(flows)
    }
}

/// Runs `sim` (built with `pause_on_flow_change`) until `n` more flows have finished or
/// were terminated, simulated time reaches `until`, or the run is done; appends the
/// flows that ended to `ended` (in the order their ends were seen).
pub fn run_until_ended(sim: &mut Simulator, n: usize, until: f64, ended: &mut Vec<u32>) -> Result<Outcome> {
    let start = ended.len();
    let mut watch: Vec<u32> = sim.active().to_vec();
    let mut seen = vec![false; sim.n_flows()];
    for &i in &watch {
        seen[i as usize] = true;
    }
    loop {
        let out = sim.step(until)?;
        let mut k = 0;
        while k < watch.len() {
            let st = sim.status(watch[k] as usize);
            if st == Status::Done || st == Status::Terminated {
                ended.push(watch.swap_remove(k));
            } else {
                k += 1;
            }
        }
        match out {
            Outcome::FlowsChanged => {
                // flows that arrived since: watch them too
                for &i in sim.active() {
                    if !seen[i as usize] && sim.status(i as usize) == Status::Active {
                        seen[i as usize] = true;
                        watch.push(i);
                    }
                }
                if ended.len() - start >= n {
                    return Ok(out);
                }
            }
            Outcome::Decision { .. } => {
                return Err(SimError::Unsupported("run_until_ended: the simulator asks for an admission decision".into()))
            }
            _ => return Ok(out),
        }
    }
}
