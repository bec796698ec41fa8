//! Bindings of the environment cores (fabric_core::env): a config object and one
//! batched env per env kind (the single env is its one-lane form), stepped with the GIL
//! released into numpy buffers it allocated once.
use fabric_core::env::{BatchOut, Lane, MaskedAction, ObsLimits, VecEnv, ACTIVE_FEATURES, EPISODE_STATS, FLOW_FEATURES, MAX_OBS_PARTS, REQ_FEATURES};
use fabric_core::env::TokenSim;
use fabric_core::{PacketConfig, Scheduler, SimError, Simulator, SwitchEnv, SwitchEnvConfig, SwitchReward, TokenEnv, TokenEnvConfig, TokenReward, TokenWorkload};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::packet::set_packet_options;
use crate::{flow_classes, guarded, to_py, PyTrace};

/// The observation's saturation limits, each > 0 (infinite: none).
fn obs_limits(mb: f64, ms: f64, count: f64) -> PyResult<ObsLimits> {
    for (name, v) in [("obs_max_mb", mb), ("obs_max_ms", ms), ("obs_max_count", count)] {
        if v.is_nan() || v <= 0.0 {
            return Err(PyValueError::new_err(format!("{name} must be > 0 (or infinite), got {v}")));
        }
    }
    Ok(ObsLimits { mb, ms, count })
}

/// `delay_per_hop_s` of an env config: finite and >= 0.
fn check_delay_per_hop(delay_per_hop_s: f64) -> PyResult<()> {
    if !(delay_per_hop_s.is_finite() && delay_per_hop_s >= 0.0) {
        return Err(PyValueError::new_err(format!("delay_per_hop_s must be >= 0, got {delay_per_hop_s}")));
    }
    Ok(())
}

/// The packet model's options of a token or switch env from a dict (`PacketSimulator`'s
/// `packet=` names but the queue samples and gtcp:fair's projection; absent keys keep `PacketConfig::new`'s defaults).
/// The scheduler, delay per hop, termination and admission are the env's own.
fn env_packet_config(d: &Bound<'_, PyDict>) -> PyResult<PacketConfig> {
    let mut c = PacketConfig::new(Scheduler::Ps);
    set_packet_options(&mut c, d, "the token and switch envs", &["queue_sample_s", "sample_ports", "fair_projection"])?;
    Ok(c)
}

/// Configuration of a token-scheduling environment (see flowsched.envs.TokenSchedulingEnv).
#[pyclass(name = "TokenConfig", module = "flowsched._fabric", frozen)]
pub struct PyTokenConfig {
    inner: TokenEnvConfig,
}

native_methods! {
    impl PyTokenConfig {
        #[new(topology)]
        fn new(
            topology;
            scheduler: &str = "ps",
            k: usize,
            window: usize,
            delay_per_hop_s: f64 = 0.0,
            terminate_missed: bool = false,
            reward: &str = "deadline",
            class_weights: Vec<f64>,
            class_sizes_bytes: Vec<f64>,
            class_deadlines_s: Vec<f64>,
            exact: bool = true,
            burst_size: usize,
            burst_rate_hz: f64,
            n_bursts: usize,
            dst: usize = 0,
            obs_max_mb: f64 = { f64::INFINITY },
            obs_max_ms: f64 = { f64::INFINITY },
            obs_max_count: f64 = { f64::INFINITY },
            masked_action: &str = "oldest",
            packet: Option<Bound<'_, PyDict>> = None,
        ) -> PyResult<Self> {
            let classes = flow_classes(&class_weights, &class_sizes_bytes, &class_deadlines_s)?;
            check_delay_per_hop(delay_per_hop_s)?;
            let inner = TokenEnvConfig {
                topo: topology.topology()?,
                scheduler: Scheduler::parse(scheduler).map_err(to_py)?,
                k,
                window,
                delay_per_hop_s,
                terminate_missed,
                reward: TokenReward::parse(reward).map_err(to_py)?,
                workload: TokenWorkload::Gather { classes, exact, burst_size, burst_rate_hz, n_bursts, dst },
                obs_limits: obs_limits(obs_max_mb, obs_max_ms, obs_max_count)?,
                masked_action: MaskedAction::parse(masked_action).map_err(to_py)?,
                packet: packet.as_ref().map(env_packet_config).transpose()?,
            };
            // Fails here, with the reason, rather than at the first reset.
            TokenEnv::new(inner.clone()).map_err(to_py)?;
            Ok(PyTokenConfig { inner })
        }

        #[getter]
        fn window(&self) -> usize {
            self.inner.window
        }

        /// "fluid" or "packet".
        #[getter]
        fn model(&self) -> &'static str {
            model_name(&self.inner.packet)
        }
    }
}

/// The native envs' errors: an invalid action reads as the Python envs' checks did
/// (a bare ValueError: "env 3: action 9 is out of range ..."), the others as elsewhere.
/// An env config's model: "packet" with packet options, else "fluid".
fn model_name(packet: &Option<PacketConfig>) -> &'static str {
    if packet.is_some() {
        "packet"
    } else {
        "fluid"
    }
}

fn env_err(e: SimError) -> PyErr {
    match e {
        SimError::InvalidAction(m) => PyValueError::new_err(m),
        e => to_py(e),
    }
}

/// A [`VecEnv`] and its output buffers: numpy arrays allocated once, at construction,
/// which every call writes in place (lane-major; observation parts flat per lane).
/// Python reads them through `buffers`; Rust borrows their data for each call, with
/// the GIL released. They are C-contiguous and own their data, and this object holds
/// a reference to each, so numpy cannot resize or free them.
struct Native<L: Lane> {
    env: VecEnv<L>,
    obs: [Py<PyArray2<f32>>; MAX_OBS_PARTS],
    reward: Py<PyArray1<f64>>,
    terminated: Py<PyArray1<bool>>,
    truncated: Py<PyArray1<bool>>,
    masked: Py<PyArray1<bool>>,
    stats: Py<PyArray2<f64>>,
}

type Buffers<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray2<f64>>,
);

impl<L: Lane> Native<L> {
    fn new(py: Python<'_>, env: VecEnv<L>) -> Self {
        let (n, s) = (env.num_envs(), env.env(0).obs_sizes());
        Native {
            obs: s.map(|k| PyArray2::<f32>::zeros(py, [n, k], false).unbind()),
            reward: PyArray1::<f64>::zeros(py, n, false).unbind(),
            terminated: PyArray1::<bool>::zeros(py, n, false).unbind(),
            truncated: PyArray1::<bool>::zeros(py, n, false).unbind(),
            masked: PyArray1::<bool>::zeros(py, n, false).unbind(),
            stats: PyArray2::<f64>::zeros(py, [n, EPISODE_STATS], false).unbind(),
            env,
        }
    }

    fn buffers<'py>(&self, py: Python<'py>) -> Buffers<'py> {
        let [a, b, c] = &self.obs;
        (
            a.bind(py).clone(),
            b.bind(py).clone(),
            c.bind(py).clone(),
            self.reward.bind(py).clone(),
            self.terminated.bind(py).clone(),
            self.truncated.bind(py).clone(),
            self.masked.bind(py).clone(),
            self.stats.bind(py).clone(),
        )
    }

    /// Runs `f` on the env and the buffers, with the GIL released.
    fn call<F>(&mut self, py: Python<'_>, f: F) -> PyResult<()>
    where
        F: FnOnce(&mut VecEnv<L>, BatchOut<'_>) -> Result<(), SimError> + Send,
    {
        let [a, b, c] = &self.obs;
        let (a, b, c) = (a.bind(py), b.bind(py), c.bind(py));
        let (rew, term, trunc, msk, st) =
            (self.reward.bind(py), self.terminated.bind(py), self.truncated.bind(py), self.masked.bind(py), self.stats.bind(py));
        // SAFETY: these arrays were allocated by `new` (C-contiguous, owning their data)
        // and stay alive while `self` holds them; nothing in this call touches them
        // from Python (it holds the only &mut self, and Python code writing into the
        // arrays from another thread meanwhile would be a race, as with any buffer
        // handed to native code); the callers pass `f` owned copies of their inputs, never
        // slices of numpy arrays, since an input may be a view of these very buffers.
        let out = unsafe {
            BatchOut {
                obs: [a.as_slice_mut()?, b.as_slice_mut()?, c.as_slice_mut()?],
                reward: rew.as_slice_mut()?,
                terminated: term.as_slice_mut()?,
                truncated: trunc.as_slice_mut()?,
                masked: msk.as_slice_mut()?,
                stats: st.as_slice_mut()?,
            }
        };
        let env = &mut self.env;
        py.detach(|| guarded(|| Ok(f(env, out))))?.map_err(env_err)
    }

    /// Whether any lane's episode terminated, and whether any lane's action was masked,
    /// in the last call (read from the buffers it wrote), so that the Python side of a
    /// step tests two flags instead of reducing two arrays.
    fn any_terminated_masked(&self, py: Python<'_>) -> PyResult<(bool, bool)> {
        // SAFETY: as in `call`: arrays owned by `self`, read with the GIL held
        let (term, msk) = unsafe { (self.terminated.bind(py).as_slice()?.iter().any(|&x| x), self.masked.bind(py).as_slice()?.iter().any(|&x| x)) };
        Ok((term, msk))
    }

    fn lane(&self, lane: usize) -> PyResult<&L> {
        let n = self.env.num_envs();
        if lane >= n {
            return Err(PyValueError::new_err(format!("lane {lane} out of range ({n} envs)")));
        }
        Ok(self.env.env(lane))
    }

    fn truncate(&mut self, lanes: PyReadonlyArray1<'_, bool>) -> PyResult<()> {
        let l = lanes.as_slice()?;
        self.env.truncate(l).map_err(to_py)
    }
}

/// A lane whose episode runs on a [`TokenSim`] (the token and switch envs).
trait EpisodeLane: Lane {
    /// The current episode's simulation (None before the first reset).
    fn episode_sim(&self) -> Option<&TokenSim>;
}

impl EpisodeLane for TokenEnv {
    fn episode_sim(&self) -> Option<&TokenSim> {
        self.sim()
    }
}

impl EpisodeLane for SwitchEnv {
    fn episode_sim(&self) -> Option<&TokenSim> {
        self.simulator()
    }
}

impl<L: EpisodeLane> Native<L> {
    /// Simulated time of `lane` (s; 0 before the first reset).
    fn now(&self, lane: usize) -> PyResult<f64> {
        Ok(self.lane(lane)?.episode_sim().map_or(0.0, |s| s.now()))
    }

    /// The current episode's flows of `lane` and their outcome so far (`token_flow_dict`).
    fn flows<'py>(&self, py: Python<'py>, lane: usize) -> PyResult<Bound<'py, PyDict>> {
        let s = self.lane(lane)?.episode_sim().ok_or_else(|| PyValueError::new_err("call reset() first"))?;
        token_flow_dict(py, s)
    }
}

/// The `#[pymethods]` block of a batched env class (`inner: Native<$env>`, made from a
/// `$config`): the methods every env kind has, written once here (the constructor,
/// num_envs, threads, buffers, needs_reset, truncate, reset_done, now), then the kind's
/// own methods as given. `buffers` and `needs_reset` take the kind's doc comments.
macro_rules! vec_env_methods {
    (
        impl $class:ident($config:ident => $env:ident) {
            $(#[$buffers_doc:meta])*
            buffers;
            $(#[$needs_reset_doc:meta])*
            needs_reset;
            $($methods:tt)*
        }
    ) => {
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (config, num_envs, threads=1, *, single=false, max_episode_steps=None))]
            fn new(py: Python<'_>, config: &$config, num_envs: usize, threads: usize, single: bool, max_episode_steps: Option<u64>) -> PyResult<Self> {
                let env = $env::new(config.inner.clone()).and_then(|e| vec_env(e, num_envs, threads, single, max_episode_steps)).map_err(to_py)?;
                Ok($class { inner: Native::new(py, env) })
            }

            #[getter]
            fn num_envs(&self) -> usize {
                self.inner.env.num_envs()
            }

            #[getter]
            fn threads(&self) -> usize {
                self.inner.env.threads()
            }

            $(#[$buffers_doc])*
            #[getter]
            fn buffers<'py>(&self, py: Python<'py>) -> Buffers<'py> {
                self.inner.buffers(py)
            }

            $(#[$needs_reset_doc])*
            fn needs_reset<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
                self.inner.env.needs_reset().to_vec().into_pyarray(py)
            }

            /// Marks the flagged lanes (bool, one per lane) to reset at the next step or
            /// reset_done, as if their episode had ended.
            fn truncate(&mut self, lanes: PyReadonlyArray1<'_, bool>) -> PyResult<()> {
                self.inner.truncate(lanes)
            }

            /// Resets now every lane whose episode ended (same-step autoreset).
            fn reset_done(&mut self, py: Python<'_>) -> PyResult<()> {
                self.inner.call(py, |env, out| env.reset_done(out))
            }

            /// Simulated time of `lane` (s).
            fn now(&self, lane: usize) -> PyResult<f64> {
                self.inner.now(lane)
            }

            $($methods)*
        }
    };
}

/// The VecEnv of a config: `num_envs` lanes on `threads` threads, or with `single`
/// the single env (one lane, no autoreset); `max_episode_steps` truncates episodes.
fn vec_env<L: Lane>(env: L, num_envs: usize, threads: usize, single: bool, max_episode_steps: Option<u64>) -> Result<VecEnv<L>, SimError> {
    let mut v = if single {
        if num_envs != 1 {
            return Err(SimError::InvalidConfig(format!("the single env has one lane, got num_envs={num_envs}")));
        }
        VecEnv::single(env)
    } else {
        VecEnv::new(env, num_envs, threads)?
    };
    v.set_max_steps(max_episode_steps)?;
    Ok(v)
}

/// A token env's flows and their outcome so far, as a dict of arrays: the flow's
/// arrival, endpoints, size and deadline, then as Simulator.results; on the packet model
/// also `bytes_sent` (payload bytes delivered in order) and `path_delay_s`.
fn token_flow_dict<'py>(py: Python<'py>, s: &TokenSim) -> PyResult<Bound<'py, PyDict>> {
    match s {
        TokenSim::Fluid(f) => flow_dict(py, f),
        TokenSim::Packet(p) => {
            let n = p.n_flows();
            let col = |f: &dyn Fn(usize) -> f64| (0..n).map(f).collect::<Vec<f64>>();
            let d = PyDict::new(py);
            d.set_item("arrival_s", col(&|i| p.flow(i).arrival_s).into_pyarray(py))?;
            d.set_item("src", (0..n).map(|i| p.flow(i).src as i64).collect::<Vec<_>>().into_pyarray(py))?;
            d.set_item("dst", (0..n).map(|i| p.flow(i).dst as i64).collect::<Vec<_>>().into_pyarray(py))?;
            d.set_item("size_bytes", col(&|i| p.flow(i).size_bytes).into_pyarray(py))?;
            d.set_item("deadline_s", col(&|i| p.flow(i).deadline_s).into_pyarray(py))?;
            d.set_item("finish_s", p.finish_s().into_pyarray(py))?;
            d.set_item("fct_s", col(&|i| p.fct_of(i)).into_pyarray(py))?;
            d.set_item("ideal_fct_s", col(&|i| p.ideal_fct_of(i)).into_pyarray(py))?;
            d.set_item("terminated", p.terminated().to_vec().into_pyarray(py))?;
            d.set_item("bytes_sent", p.delivered_bytes().iter().map(|&b| b as f64).collect::<Vec<_>>().into_pyarray(py))?;
            d.set_item("path_delay_s", p.path_delay_s().into_pyarray(py))?;
            Ok(d)
        }
    }
}

/// A simulator's flows and their outcome so far, as a dict of arrays: the flow's
/// arrival, endpoints, size and deadline, then as Simulator.results.
fn flow_dict<'py>(py: Python<'py>, s: &Simulator) -> PyResult<Bound<'py, PyDict>> {
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

/// A batch of token-scheduling environments stepped in one call (next-step autoreset),
/// or with `single=True` the single env (one lane, no autoreset), writing into the
/// numpy buffers it allocated once (`buffers`).
#[pyclass(name = "TokenVecEnv", module = "flowsched._fabric")]
pub struct PyTokenVecEnv {
    inner: Native<TokenEnv>,
}

vec_env_methods! {
    impl PyTokenVecEnv(PyTokenConfig => TokenEnv) {
        /// The output buffers, written in place by every call: (requests (n, window * 7),
        /// active (n, 5), action_mask (n, window), reward, terminated, truncated, masked,
        /// stats (n, 4)).
        buffers;
        /// Lanes whose episode ended or was truncated (the next step resets them).
        needs_reset;

        /// Resets every lane (lane i seeded with seeds[i] when given).
        #[pyo3(signature = (seeds=None))]
        fn reset(&mut self, py: Python<'_>, seeds: Option<PyReadonlyArray1<'_, u64>>) -> PyResult<()> {
            let seeds: Option<Vec<u64>> = match seeds {
                Some(s) => Some(s.as_slice()?.to_vec()),
                None => None,
            };
            self.inner.call(py, |env, out| env.reset(seeds.as_deref(), out))
    }

    /// Steps every lane with `actions` (int64, one per lane); returns whether any lane's
    /// episode terminated and whether any lane's action was masked.
    fn step(&mut self, py: Python<'_>, actions: PyReadonlyArray1<'_, i64>) -> PyResult<(bool, bool)> {
        // an owned copy: the input may be a view of one of the output buffers, which
        // `call` writes through unchecked mutable slices
        let acts = actions.as_slice()?.to_vec();
        self.inner.call(py, |env, out| env.step(&acts, out))?;
        self.inner.any_terminated_masked(py)
    }

    /// Steps a one-lane env with `action`.
    fn step_one(&mut self, py: Python<'_>, action: i64) -> PyResult<()> {
        self.inner.call(py, |env, out| env.step(&[action], out))
    }

    /// Replaces every lane's workload by a fixed trace (from the next reset on).
    fn set_trace(&mut self, trace: &PyTrace) -> PyResult<()> {
        guarded(|| self.inner.env.set_trace(trace.flows.clone()))
    }

    /// Number of requests the pending decision of `lane` chooses from.
    fn n_choices(&self, lane: usize) -> PyResult<usize> {
        Ok(self.inner.lane(lane)?.n_choices())
    }

    /// The destination of the pending decision of `lane`.
    fn decision_dst(&self, lane: usize) -> PyResult<usize> {
        Ok(self.inner.lane(lane)?.decision_dst())
    }

    /// The current episode's flows of `lane` and their outcome so far, as a dict of arrays.
    fn episode<'py>(&self, py: Python<'py>, lane: usize) -> PyResult<Bound<'py, PyDict>> {
        self.inner.flows(py, lane)
    }
    }
}

/// Features per request and per active summary, and the episode statistics' names.
#[pyfunction]
fn token_layout() -> (usize, usize, Vec<&'static str>) {
    (REQ_FEATURES, ACTIVE_FEATURES, vec!["deadlines_met", "flows_with_deadline", "flows_finished", "mean_fct_s"])
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTokenConfig>()?;
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

native_methods! {
    impl PySwitchConfig {
        #[new(topology)]
        fn new(
            topology;
            max_flows: usize,
            decision_interval_s: Option<f64> = None,
            reward: &str = "fct",
            delay_per_hop_s: f64 = 0.0,
            terminate_missed: bool = false,
            obs_max_mb: f64 = { f64::INFINITY },
            obs_max_ms: f64 = { f64::INFINITY },
            obs_max_count: f64 = { f64::INFINITY },
            hide_sizes: bool = false,
            packet: Option<Bound<'_, PyDict>> = None,
        ) -> PyResult<Self> {
            check_delay_per_hop(delay_per_hop_s)?;
            let inner = SwitchEnvConfig {
                hide_sizes,
                obs_limits: obs_limits(obs_max_mb, obs_max_ms, obs_max_count)?,
                topo: topology.topology()?,
                max_flows,
                decision_interval_s,
                reward: SwitchReward::parse(reward).map_err(to_py)?,
                delay_per_hop_s,
                terminate_missed,
                packet: packet.as_ref().map(env_packet_config).transpose()?,
            };
            SwitchEnv::new(inner.clone()).map_err(to_py)?;
            Ok(PySwitchConfig { inner })
        }

        #[getter]
        fn max_flows(&self) -> usize {
            self.inner.max_flows
        }

        /// "fluid" or "packet".
        #[getter]
        fn model(&self) -> &'static str {
            model_name(&self.inner.packet)
        }
    }
}

/// A batch of switch-scheduling environments (next-step autoreset; each lane's next
/// trace is set with set_next_trace before the call that resets it), or with
/// `single=True` the single env; buffers as `TokenVecEnv`'s.
#[pyclass(name = "SwitchVecEnv", module = "flowsched._fabric")]
pub struct PySwitchVecEnv {
    inner: Native<SwitchEnv>,
}

vec_env_methods! {
    impl PySwitchVecEnv(PySwitchConfig => SwitchEnv) {
        /// The output buffers, written in place by every call: (flows (n, max_flows * 9),
        /// flow_mask (n, max_flows), unused (n, 0), reward, terminated, truncated, masked
        /// (always False), stats (n, 4)).
        buffers;
        /// Lanes whose episode ended or was truncated (they reset at the next step, from
        /// their next trace).
        needs_reset;

        /// The next trace of `lane` (used by its next reset).
        fn set_next_trace(&mut self, lane: usize, trace: &PyTrace) -> PyResult<()> {
            guarded(|| self.inner.env.set_next_trace(lane, trace.flows.clone()))
    }

    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        self.inner.call(py, |env, out| env.reset(None, out))
    }

    /// Steps every lane with `scores` (float32, C-contiguous, num_envs * max_flows).
    fn step(&mut self, py: Python<'_>, scores: PyReadonlyArrayDyn<'_, f32>) -> PyResult<()> {
        // an owned copy: `scores` may be one of the output buffers itself (the flow mask
        // has the action space's shape and dtype), which `call` writes through unchecked
        // mutable slices; one copy of n x max_flows floats per call
        let s = scores.as_slice()?.to_vec();
        self.inner.call(py, |env, out| env.step(&s, out))
    }

    /// Per-flow outcome of the current episode of `lane` (trace order).
    fn results<'py>(&self, py: Python<'py>, lane: usize) -> PyResult<Bound<'py, PyDict>> {
        self.inner.flows(py, lane)
    }
    }
}

const SWITCH_STATS: [&str; EPISODE_STATS] = ["flows_finished", "flow_time_s", "mean_fct_s", "flows_in_system"];

/// Features per flow slot and the episode statistics' names of the switch env.
#[pyfunction]
fn switch_layout() -> (usize, Vec<&'static str>) {
    (FLOW_FEATURES, SWITCH_STATS.to_vec())
}

pub(crate) fn register_switch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySwitchConfig>()?;
    m.add_class::<PySwitchVecEnv>()?;
    m.add_function(wrap_pyfunction!(switch_layout, m)?)?;
    Ok(())
}
