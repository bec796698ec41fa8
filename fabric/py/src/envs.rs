//! Bindings of the environment cores (fabric_core::env): a config object, a single env
//! returning fresh arrays, and a batched env writing into caller-owned numpy buffers
//! with the GIL released.
use fabric_core::{
    Scheduler, SwitchBatchOut, SwitchEnv, SwitchEnvConfig, SwitchReward, SwitchVecEnv, TokenBatchOut, TokenEnv, TokenEnvConfig, TokenReward, TokenVecEnv, TokenWorkload,
};
use fabric_core::env::{ObsLimits, ACTIVE_FEATURES, EPISODE_STATS, FLOW_FEATURES, REQ_FEATURES};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1, PyReadwriteArray2, PyReadwriteArray3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{flow_classes, guarded, make_topology, to_py, PyTrace};

/// The observation's saturation limits, each > 0 (infinite: none).
fn obs_limits(mb: f64, ms: f64, count: f64) -> PyResult<ObsLimits> {
    for (name, v) in [("obs_max_mb", mb), ("obs_max_ms", ms), ("obs_max_count", count)] {
        if v.is_nan() || v <= 0.0 {
            return Err(PyValueError::new_err(format!("{name} must be > 0 (or infinite), got {v}")));
        }
    }
    Ok(ObsLimits { mb, ms, count })
}

/// Configuration of a token-scheduling environment (see flowsched.envs.TokenSchedulingEnv).
#[pyclass(name = "TokenConfig", module = "flowsched._fabric", frozen)]
pub struct PyTokenConfig {
    inner: TokenEnvConfig,
}

#[pymethods]
impl PyTokenConfig {
    #[new]
    #[pyo3(signature = (
        *, topology, host_gbps, tors=0, hosts_per_tor=0, spines=0, core_gbps=0.0, ecmp_seed=0,
        scheduler="ps", k, window, delay_per_hop_s=0.0, terminate_missed=false, reward="deadline",
        class_weights, class_sizes_bytes, class_deadlines_s, exact=true, burst_size, burst_rate_hz,
        n_bursts, dst=0, obs_max_mb=f64::INFINITY, obs_max_ms=f64::INFINITY, obs_max_count=f64::INFINITY
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        topology: &Bound<'_, PyAny>,
        host_gbps: PyReadonlyArray1<f64>,
        tors: usize,
        hosts_per_tor: usize,
        spines: usize,
        core_gbps: f64,
        ecmp_seed: u64,
        scheduler: &str,
        k: usize,
        window: usize,
        delay_per_hop_s: f64,
        terminate_missed: bool,
        reward: &str,
        class_weights: Vec<f64>,
        class_sizes_bytes: Vec<f64>,
        class_deadlines_s: Vec<f64>,
        exact: bool,
        burst_size: usize,
        burst_rate_hz: f64,
        n_bursts: usize,
        dst: usize,
        obs_max_mb: f64,
        obs_max_ms: f64,
        obs_max_count: f64,
    ) -> PyResult<Self> {
        let classes = flow_classes(&class_weights, &class_sizes_bytes, &class_deadlines_s)?;
        if !(delay_per_hop_s.is_finite() && delay_per_hop_s >= 0.0) {
            return Err(PyValueError::new_err(format!("delay_per_hop_s must be >= 0, got {delay_per_hop_s}")));
        }
        let inner = TokenEnvConfig {
            topo: make_topology(topology, &host_gbps, tors, hosts_per_tor, spines, core_gbps, ecmp_seed)?,
            scheduler: Scheduler::parse(scheduler).map_err(to_py)?,
            k,
            window,
            delay_per_hop_s,
            terminate_missed,
            reward: TokenReward::parse(reward).map_err(to_py)?,
            workload: TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, n_bursts, dst },
            obs_limits: obs_limits(obs_max_mb, obs_max_ms, obs_max_count)?,
        };
        // Fails here, with the reason, rather than at the first reset.
        TokenEnv::new(inner.clone()).map_err(to_py)?;
        Ok(PyTokenConfig { inner })
    }

    #[getter]
    fn window(&self) -> usize {
        self.inner.window
    }
}

/// Per-episode statistics as a dict.
fn stats_dict<'py>(py: Python<'py>, s: [f64; EPISODE_STATS]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("deadlines_met", s[0])?;
    d.set_item("flows_with_deadline", s[1])?;
    d.set_item("flows_finished", s[2])?;
    d.set_item("mean_fct_s", s[3])?;
    Ok(d)
}

type Obs<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<f32>>);

/// One token-scheduling environment.
#[pyclass(name = "TokenEnv", module = "flowsched._fabric")]
pub struct PyTokenEnv {
    inner: TokenEnv,
}

impl PyTokenEnv {
    fn obs<'py>(&mut self, py: Python<'py>) -> PyResult<Obs<'py>> {
        let w = self.inner.config().window;
        let (mut req, mut act, mut mask) = (vec![0f32; w * REQ_FEATURES], vec![0f32; ACTIVE_FEATURES], vec![0f32; w]);
        self.inner.write_obs(&mut req, &mut act, &mut mask);
        Ok((req.into_pyarray(py).reshape([w, REQ_FEATURES])?, act.into_pyarray(py), mask.into_pyarray(py)))
    }
}

#[pymethods]
impl PyTokenEnv {
    #[new]
    fn new(config: &PyTokenConfig) -> PyResult<Self> {
        Ok(PyTokenEnv { inner: TokenEnv::new(config.inner.clone()).map_err(to_py)? })
    }

    /// Starts an episode; returns (requests, active, mask).
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(&mut self, py: Python<'py>, seed: Option<u64>) -> PyResult<Obs<'py>> {
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset(seed)))?;
        self.obs(py)
    }

    /// Admits the request at `action`; returns (requests, active, mask, reward, terminated).
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        action: i64,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<f32>>, f64, bool)> {
        let (r, t) = guarded(|| self.inner.step(action))?;
        let (a, b, c) = self.obs(py)?;
        Ok((a, b, c, r, t))
    }

    /// Number of requests the pending decision chooses from.
    fn n_choices(&self) -> usize {
        self.inner.n_choices()
    }

    fn episode_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, self.inner.episode_stats())
    }

    /// Replaces the workload by a fixed trace (from the next reset on).
    fn set_trace(&mut self, trace: &PyTrace) -> PyResult<()> {
        guarded(|| self.inner.set_trace(trace.flows.clone()))
    }

    #[getter]
    fn now(&self) -> f64 {
        self.inner.simulator().map_or(0.0, |s| s.now())
    }

    #[getter]
    fn decision_dst(&self) -> usize {
        self.inner.decision_dst()
    }

    /// The current episode's flows and their outcome so far, as a dict of arrays.
    fn episode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.simulator().ok_or_else(|| PyValueError::new_err("call reset() first"))?;
        let n = s.n_flows();
        let col = |f: &dyn Fn(usize) -> f64| (0..n).map(f).collect::<Vec<f64>>();
        let d = PyDict::new(py);
        d.set_item("arrival_s", col(&|i| s.flow(i).arrival_s).into_pyarray(py))?;
        d.set_item("src", (0..n).map(|i| s.flow(i).src as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("dst", (0..n).map(|i| s.flow(i).dst as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("size_bytes", col(&|i| s.flow(i).size_bytes).into_pyarray(py))?;
        d.set_item("deadline_s", col(&|i| s.flow(i).deadline_s).into_pyarray(py))?;
        d.set_item("finish_s", s.finish_s().to_vec().into_pyarray(py))?;
        d.set_item("fct_s", col(&|i| s.fct_s(i)).into_pyarray(py))?;
        d.set_item("ideal_fct_s", col(&|i| s.ideal_fct_s(i)).into_pyarray(py))?;
        d.set_item("terminated", s.terminated().into_pyarray(py))?;
        Ok(d)
    }
}

/// A batch of token-scheduling environments stepped in one call (next-step autoreset).
#[pyclass(name = "TokenVecEnv", module = "flowsched._fabric")]
pub struct PyTokenVecEnv {
    inner: TokenVecEnv,
}

/// Borrowed output buffers, checked for shape.
struct Bufs<'py> {
    req: PyReadwriteArray3<'py, f32>,
    act: PyReadwriteArray2<'py, f32>,
    mask: PyReadwriteArray2<'py, f32>,
    reward: PyReadwriteArray1<'py, f64>,
    terminated: PyReadwriteArray1<'py, bool>,
    stats: PyReadwriteArray2<'py, f64>,
}

impl Bufs<'_> {
    fn check(&self, n: usize, w: usize) -> PyResult<()> {
        let want: [(&str, Vec<usize>, Vec<usize>); 6] = [
            ("requests", self.req.shape().to_vec(), vec![n, w, REQ_FEATURES]),
            ("active", self.act.shape().to_vec(), vec![n, ACTIVE_FEATURES]),
            ("action_mask", self.mask.shape().to_vec(), vec![n, w]),
            ("reward", self.reward.shape().to_vec(), vec![n]),
            ("terminated", self.terminated.shape().to_vec(), vec![n]),
            ("stats", self.stats.shape().to_vec(), vec![n, EPISODE_STATS]),
        ];
        for (name, got, exp) in want {
            if got != exp {
                return Err(PyValueError::new_err(format!("buffer '{name}' has shape {got:?}, expected {exp:?}")));
            }
        }
        Ok(())
    }
}

macro_rules! out {
    ($b:expr) => {
        TokenBatchOut {
            obs: [$b.req.as_slice_mut()?, $b.act.as_slice_mut()?, $b.mask.as_slice_mut()?],
            reward: $b.reward.as_slice_mut()?,
            terminated: $b.terminated.as_slice_mut()?,
            stats: $b.stats.as_slice_mut()?,
        }
    };
}

#[pymethods]
impl PyTokenVecEnv {
    #[new]
    #[pyo3(signature = (config, num_envs, threads=1))]
    fn new(config: &PyTokenConfig, num_envs: usize, threads: usize) -> PyResult<Self> {
        Ok(PyTokenVecEnv { inner: TokenEnv::new(config.inner.clone()).and_then(|e| TokenVecEnv::new(e, num_envs, threads)).map_err(to_py)? })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    /// Resets every lane (lane i seeded with seeds[i] when given) into the buffers.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (seeds, requests, active, action_mask, reward, terminated, stats))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seeds: Option<PyReadonlyArray1<'py, u64>>,
        requests: PyReadwriteArray3<'py, f32>,
        active: PyReadwriteArray2<'py, f32>,
        action_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = Bufs { req: requests, act: active, mask: action_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().window)?;
        let seeds: Option<Vec<u64>> = match seeds {
            Some(s) => Some(s.as_slice()?.to_vec()),
            None => None,
        };
        let out = out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset(seeds.as_deref(), out)))
    }

    /// Steps every lane with `actions` (int64, one per lane) into the buffers.
    #[allow(clippy::too_many_arguments)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: PyReadonlyArray1<'py, i64>,
        requests: PyReadwriteArray3<'py, f32>,
        active: PyReadwriteArray2<'py, f32>,
        action_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = Bufs { req: requests, act: active, mask: action_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().window)?;
        let acts = actions.as_slice()?;
        let out = out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.step(acts, out)))
    }

    /// Resets now every lane whose episode ended (same-step autoreset) into the buffers.
    #[allow(clippy::too_many_arguments)]
    fn reset_done<'py>(
        &mut self,
        py: Python<'py>,
        requests: PyReadwriteArray3<'py, f32>,
        active: PyReadwriteArray2<'py, f32>,
        action_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = Bufs { req: requests, act: active, mask: action_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().window)?;
        let out = out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset_done(out)))
    }

    /// Replaces every lane's workload by a fixed trace (from the next reset on).
    fn set_trace(&mut self, trace: &PyTrace) -> PyResult<()> {
        guarded(|| self.inner.set_trace(trace.flows.clone()))
    }

    /// Marks the flagged lanes (bool, one per lane) to reset at the next step or
    /// reset_done, as if their episode had ended (a time limit's truncation).
    fn truncate(&mut self, lanes: PyReadonlyArray1<'_, bool>) -> PyResult<()> {
        let l = lanes.as_slice()?;
        guarded(|| self.inner.truncate(l))
    }
}

/// Features per request and per active summary, and the episode statistics' names.
#[pyfunction]
fn token_layout() -> (usize, usize, Vec<&'static str>) {
    (REQ_FEATURES, ACTIVE_FEATURES, vec!["deadlines_met", "flows_with_deadline", "flows_finished", "mean_fct_s"])
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTokenConfig>()?;
    m.add_class::<PyTokenEnv>()?;
    m.add_class::<PyTokenVecEnv>()?;
    m.add_function(wrap_pyfunction!(token_layout, m)?)?;
    register_switch(m)
}

// ----- switch scheduling -----

/// Configuration of a switch-scheduling environment (see flowsched.envs.SwitchSchedulingEnv).
#[pyclass(name = "SwitchConfig", module = "flowsched._fabric", frozen)]
pub struct PySwitchConfig {
    inner: SwitchEnvConfig,
}

#[pymethods]
impl PySwitchConfig {
    #[new]
    #[pyo3(signature = (
        *, topology, host_gbps, tors=0, hosts_per_tor=0, spines=0, core_gbps=0.0, ecmp_seed=0,
        max_flows, decision_interval_s=None, reward="fct", delay_per_hop_s=0.0, terminate_missed=false,
        obs_max_mb=f64::INFINITY, obs_max_ms=f64::INFINITY, obs_max_count=f64::INFINITY
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        topology: &Bound<'_, PyAny>,
        host_gbps: PyReadonlyArray1<f64>,
        tors: usize,
        hosts_per_tor: usize,
        spines: usize,
        core_gbps: f64,
        ecmp_seed: u64,
        max_flows: usize,
        decision_interval_s: Option<f64>,
        reward: &str,
        delay_per_hop_s: f64,
        terminate_missed: bool,
        obs_max_mb: f64,
        obs_max_ms: f64,
        obs_max_count: f64,
    ) -> PyResult<Self> {
        if !(delay_per_hop_s.is_finite() && delay_per_hop_s >= 0.0) {
            return Err(PyValueError::new_err(format!("delay_per_hop_s must be >= 0, got {delay_per_hop_s}")));
        }
        let inner = SwitchEnvConfig {
            obs_limits: obs_limits(obs_max_mb, obs_max_ms, obs_max_count)?,
            topo: make_topology(topology, &host_gbps, tors, hosts_per_tor, spines, core_gbps, ecmp_seed)?,
            max_flows,
            decision_interval_s,
            reward: SwitchReward::parse(reward).map_err(to_py)?,
            delay_per_hop_s,
            terminate_missed,
        };
        SwitchEnv::new(inner.clone()).map_err(to_py)?;
        Ok(PySwitchConfig { inner })
    }

    #[getter]
    fn max_flows(&self) -> usize {
        self.inner.max_flows
    }
}

/// One switch-scheduling environment.
#[pyclass(name = "SwitchEnv", module = "flowsched._fabric")]
pub struct PySwitchEnv {
    inner: SwitchEnv,
}

impl PySwitchEnv {
    fn obs<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>)> {
        let m = self.inner.config().max_flows;
        let (mut f, mut mask) = (vec![0f32; m * FLOW_FEATURES], vec![0f32; m]);
        self.inner.write_obs(&mut f, &mut mask);
        Ok((f.into_pyarray(py).reshape([m, FLOW_FEATURES])?, mask.into_pyarray(py)))
    }
}

#[pymethods]
impl PySwitchEnv {
    #[new]
    fn new(config: &PySwitchConfig) -> PyResult<Self> {
        Ok(PySwitchEnv { inner: SwitchEnv::new(config.inner.clone()).map_err(to_py)? })
    }

    /// The next episode's trace.
    fn set_next_trace(&mut self, trace: &PyTrace) -> PyResult<()> {
        guarded(|| self.inner.set_next_trace(trace.flows.clone()))
    }

    /// Starts the episode of the trace set last; returns (flows, mask).
    fn reset<'py>(&mut self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>)> {
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset()))?;
        self.obs(py)
    }

    /// Sets the scores and runs to the next decision; returns (flows, mask, reward, terminated).
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        scores: PyReadonlyArray1<'py, f32>,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f32>>, f64, bool)> {
        let s = scores.as_slice()?;
        let env = &mut self.inner;
        let (r, t) = py.detach(|| guarded(|| env.step(s)))?;
        let (a, b) = self.obs(py)?;
        Ok((a, b, r, t))
    }

    fn episode_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.episode_stats();
        let d = PyDict::new(py);
        for (k, v) in SWITCH_STATS.iter().zip(s) {
            d.set_item(*k, v)?;
        }
        Ok(d)
    }

    #[getter]
    fn now(&self) -> f64 {
        self.inner.simulator().map_or(0.0, |s| s.now())
    }

    /// Per-flow outcome of the current episode (trace order): the flow's arrival, size and
    /// deadline, then as Simulator.results.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.simulator().ok_or_else(|| PyValueError::new_err("call reset() first"))?;
        let n = s.n_flows();
        let d = PyDict::new(py);
        d.set_item("arrival_s", (0..n).map(|i| s.flow(i).arrival_s).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("src", (0..n).map(|i| s.flow(i).src as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("dst", (0..n).map(|i| s.flow(i).dst as i64).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("size_bytes", (0..n).map(|i| s.flow(i).size_bytes).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("deadline_s", (0..n).map(|i| s.flow(i).deadline_s).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("finish_s", s.finish_s().to_vec().into_pyarray(py))?;
        d.set_item("fct_s", (0..n).map(|i| s.fct_s(i)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("ideal_fct_s", (0..n).map(|i| s.ideal_fct_s(i)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("terminated", s.terminated().into_pyarray(py))?;
        Ok(d)
    }
}

const SWITCH_STATS: [&str; EPISODE_STATS] = ["flows_finished", "flow_time_s", "mean_fct_s", "flows_in_system"];

/// A batch of switch-scheduling environments (next-step autoreset; each lane's next
/// trace is set with set_next_trace before the call that resets it).
#[pyclass(name = "SwitchVecEnv", module = "flowsched._fabric")]
pub struct PySwitchVecEnv {
    inner: SwitchVecEnv,
}

struct SwitchBufs<'py> {
    flows: PyReadwriteArray3<'py, f32>,
    mask: PyReadwriteArray2<'py, f32>,
    reward: PyReadwriteArray1<'py, f64>,
    terminated: PyReadwriteArray1<'py, bool>,
    stats: PyReadwriteArray2<'py, f64>,
}

impl SwitchBufs<'_> {
    fn check(&self, n: usize, m: usize) -> PyResult<()> {
        let want: [(&str, Vec<usize>, Vec<usize>); 5] = [
            ("flows", self.flows.shape().to_vec(), vec![n, m, FLOW_FEATURES]),
            ("flow_mask", self.mask.shape().to_vec(), vec![n, m]),
            ("reward", self.reward.shape().to_vec(), vec![n]),
            ("terminated", self.terminated.shape().to_vec(), vec![n]),
            ("stats", self.stats.shape().to_vec(), vec![n, EPISODE_STATS]),
        ];
        for (name, got, exp) in want {
            if got != exp {
                return Err(PyValueError::new_err(format!("buffer '{name}' has shape {got:?}, expected {exp:?}")));
            }
        }
        Ok(())
    }
}

macro_rules! switch_out {
    ($b:expr) => {
        SwitchBatchOut {
            obs: [$b.flows.as_slice_mut()?, $b.mask.as_slice_mut()?, &mut []],
            reward: $b.reward.as_slice_mut()?,
            terminated: $b.terminated.as_slice_mut()?,
            stats: $b.stats.as_slice_mut()?,
        }
    };
}

#[pymethods]
impl PySwitchVecEnv {
    #[new]
    #[pyo3(signature = (config, num_envs, threads=1))]
    fn new(config: &PySwitchConfig, num_envs: usize, threads: usize) -> PyResult<Self> {
        Ok(PySwitchVecEnv { inner: SwitchEnv::new(config.inner.clone()).and_then(|e| SwitchVecEnv::new(e, num_envs, threads)).map_err(to_py)? })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    /// Lanes whose episode ended (they reset at the next step, from their next trace).
    fn needs_reset<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.inner.needs_reset().to_vec().into_pyarray(py)
    }

    /// The next trace of `lane` (used by its next reset).
    fn set_next_trace(&mut self, lane: usize, trace: &PyTrace) -> PyResult<()> {
        guarded(|| self.inner.set_next_trace(lane, trace.flows.clone()))
    }

    /// Marks the flagged lanes (bool, one per lane) to reset at the next step or
    /// reset_done, as if their episode had ended (a time limit's truncation).
    fn truncate(&mut self, lanes: PyReadonlyArray1<'_, bool>) -> PyResult<()> {
        let l = lanes.as_slice()?;
        guarded(|| self.inner.truncate(l))
    }

    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        flows: PyReadwriteArray3<'py, f32>,
        flow_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = SwitchBufs { flows, mask: flow_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().max_flows)?;
        let out = switch_out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset(None, out)))
    }

    fn reset_done<'py>(
        &mut self,
        py: Python<'py>,
        flows: PyReadwriteArray3<'py, f32>,
        flow_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = SwitchBufs { flows, mask: flow_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().max_flows)?;
        let out = switch_out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.reset_done(out)))
    }

    #[allow(clippy::too_many_arguments)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f32>,
        flows: PyReadwriteArray3<'py, f32>,
        flow_mask: PyReadwriteArray2<'py, f32>,
        reward: PyReadwriteArray1<'py, f64>,
        terminated: PyReadwriteArray1<'py, bool>,
        stats: PyReadwriteArray2<'py, f64>,
    ) -> PyResult<()> {
        let mut b = SwitchBufs { flows, mask: flow_mask, reward, terminated, stats };
        b.check(self.inner.num_envs(), self.inner.env(0).config().max_flows)?;
        let s = scores.as_slice()?;
        let out = switch_out!(b);
        let env = &mut self.inner;
        py.detach(|| guarded(|| env.step(s, out)))
    }
}

/// Features per flow slot and the episode statistics' names of the switch env.
#[pyfunction]
fn switch_layout() -> (usize, Vec<&'static str>) {
    (FLOW_FEATURES, SWITCH_STATS.to_vec())
}

pub(crate) fn register_switch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySwitchConfig>()?;
    m.add_class::<PySwitchEnv>()?;
    m.add_class::<PySwitchVecEnv>()?;
    m.add_function(wrap_pyfunction!(switch_layout, m)?)?;
    Ok(())
}
