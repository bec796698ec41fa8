//! Thin PyO3 bindings of fabric-core: converts arrays in and out, releases the GIL
//! around simulation, and turns every error (and any internal panic) into a Python
//! exception.
use std::panic::{catch_unwind, AssertUnwindSafe};

use fabric_core::{
    AdmissionConfig, AdmissionPolicy, AllocatorChoice, FlowClass, FlowSpec, Outcome, RacsParams, Scheduler, SdcParams, SimConfig, SimError, Simulator, Status,
    Topology,
};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod envs;

pub(crate) fn to_py(e: SimError) -> PyErr {
    match e {
        SimError::Stalled(_) => PyRuntimeError::new_err(e.to_string()),
        SimError::OutOfMemory(_) => PyMemoryError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Runs `f`, converting a panic into a RuntimeError so that none crosses into Python.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, SimError>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_py),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!("internal error in the fabric simulator (please report): {msg}")))
        }
    }
}

pub(crate) fn same_len(n: usize, name: &str, len: usize) -> PyResult<()> {
    if len != n {
        return Err(PyValueError::new_err(format!("column '{name}' has {len} rows, expected {n}")));
    }
    Ok(())
}

/// The flow classes of a gather workload from its three columns (weight, size, deadline
/// or NaN), checked for equal length: the token env's config and `gather_bursts` take them
/// the same way.
pub(crate) fn flow_classes(weights: &[f64], sizes_bytes: &[f64], deadlines_s: &[f64]) -> PyResult<Vec<FlowClass>> {
    if sizes_bytes.len() != weights.len() || deadlines_s.len() != weights.len() {
        return Err(PyValueError::new_err(format!(
            "class_weights, class_sizes_bytes and class_deadlines_s must have the same length, got {}, {}, {}",
            weights.len(),
            sizes_bytes.len(),
            deadlines_s.len()
        )));
    }
    Ok((0..weights.len())
        .map(|j| FlowClass { weight: weights[j], size_bytes: sizes_bytes[j], deadline_s: deadlines_s[j] })
        .collect())
}

/// Flows of a trace given as columns (rows checked for equal length and negative hosts;
/// the simulator validates the rest).
#[allow(clippy::too_many_arguments)]
pub(crate) fn flows_from_arrays(
    arrival_s: &PyReadonlyArray1<f64>,
    src: &PyReadonlyArray1<i64>,
    dst: &PyReadonlyArray1<i64>,
    size_bytes: &PyReadonlyArray1<f64>,
    deadline_s: &PyReadonlyArray1<f64>,
    weight: &PyReadonlyArray1<f64>,
    data_span_s: &PyReadonlyArray1<f64>,
    size_known: &PyReadonlyArray1<bool>,
) -> PyResult<Vec<FlowSpec>> {
    let arrival = arrival_s.as_slice()?;
    let n = arrival.len();
    let (src, dst, size) = (src.as_slice()?, dst.as_slice()?, size_bytes.as_slice()?);
    let (dl, w, span, known) = (deadline_s.as_slice()?, weight.as_slice()?, data_span_s.as_slice()?, size_known.as_slice()?);
    for (name, len) in [("src", src.len()), ("dst", dst.len()), ("size_bytes", size.len()), ("deadline_s", dl.len()), ("weight", w.len()), ("data_span_s", span.len()), ("size_known", known.len())] {
        same_len(n, name, len)?;
    }
    let mut flows = Vec::with_capacity(n);
    for r in 0..n {
        for (name, v) in [("src", src[r]), ("dst", dst[r])] {
            if v < 0 {
                return Err(PyValueError::new_err(format!("flow at row {r}, column '{name}': host {v} is negative")));
            }
        }
        flows.push(FlowSpec {
            arrival_s: arrival[r],
            src: src[r] as usize,
            dst: dst[r] as usize,
            size_bytes: size[r],
            deadline_s: dl[r],
            weight: w[r],
            data_span_s: span[r],
            size_known: known[r],
        });
    }
    Ok(flows)
}

pub(crate) fn make_topology(
    kind: &str,
    host_gbps: &PyReadonlyArray1<f64>,
    tors: usize,
    hosts_per_tor: usize,
    spines: usize,
    core_gbps: f64,
    ecmp_seed: u64,
) -> PyResult<Topology> {
    let rates = host_gbps.as_slice()?.to_vec();
    match kind {
        "bigswitch" => Topology::big_switch(&rates),
        "leafspine" => Topology::leaf_spine(tors, hosts_per_tor, spines, &rates, core_gbps, ecmp_seed),
        other => return Err(PyValueError::new_err(format!("unknown topology '{other}'; known: bigswitch, leafspine"))),
    }
    .map_err(to_py)
}

/// A validated-by-shape trace (the flows of an episode) handed to the environment cores.
#[pyclass(name = "Trace", module = "flowsched._fabric", frozen)]
pub(crate) struct PyTrace {
    pub(crate) flows: Vec<FlowSpec>,
}

#[pymethods]
impl PyTrace {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        arrival_s: PyReadonlyArray1<f64>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        size_bytes: PyReadonlyArray1<f64>,
        deadline_s: PyReadonlyArray1<f64>,
        weight: PyReadonlyArray1<f64>,
        data_span_s: PyReadonlyArray1<f64>,
        size_known: PyReadonlyArray1<bool>,
    ) -> PyResult<Self> {
        Ok(PyTrace { flows: flows_from_arrays(&arrival_s, &src, &dst, &size_bytes, &deadline_s, &weight, &data_span_s, &size_known)? })
    }

    fn __len__(&self) -> usize {
        self.flows.len()
    }
}

/// (kind, destination of a decision or -1) of a step's outcome.
fn outcome_name(o: Outcome) -> (&'static str, i64) {
    match o {
        Outcome::Done => ("done", -1),
        Outcome::Decision { dst } => ("decision", dst as i64),
        Outcome::FlowsChanged => ("flows_changed", -1),
        Outcome::TimeReached => ("time_reached", -1),
    }
}

/// The fluid fabric simulator (see flowsched.simulate for the documented interface).
#[pyclass(name = "Simulator", module = "flowsched._fabric")]
struct PySimulator {
    inner: Simulator,
    pause_on_flow_change: bool,
}

#[pymethods]
impl PySimulator {
    #[new]
    #[pyo3(signature = (
        arrival_s, src, dst, size_bytes, deadline_s, weight, data_span_s, size_known, *,
        topology, host_gbps, tors=0, hosts_per_tor=0, spines=0, core_gbps=0.0, ecmp_seed=0,
        scheduler="ps", admission=None, k=0, window=0, terminate_missed=false, delay_per_hop_s=0.0,
        seed=0, pias_thresholds_bytes=Vec::new(), racs=(1.0, 100.0, 1e-5, 300e-6),
        sdc_thresholds_bytes=(73_000.0, 146_000.0), sdc_weights=(10.0, 5.0, 1.0),
        max_interval_s=None, pause_on_flow_change=false, force_full_recompute=false,
        inject_stall_at_s=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        arrival_s: PyReadonlyArray1<f64>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        size_bytes: PyReadonlyArray1<f64>,
        deadline_s: PyReadonlyArray1<f64>,
        weight: PyReadonlyArray1<f64>,
        data_span_s: PyReadonlyArray1<f64>,
        size_known: PyReadonlyArray1<bool>,
        topology: &str,
        host_gbps: PyReadonlyArray1<f64>,
        tors: usize,
        hosts_per_tor: usize,
        spines: usize,
        core_gbps: f64,
        ecmp_seed: u64,
        scheduler: &str,
        admission: Option<&str>,
        k: usize,
        window: usize,
        terminate_missed: bool,
        delay_per_hop_s: f64,
        seed: u64,
        pias_thresholds_bytes: Vec<f64>,
        racs: (f64, f64, f64, f64),
        sdc_thresholds_bytes: (f64, f64),
        sdc_weights: (f64, f64, f64),
        max_interval_s: Option<f64>,
        pause_on_flow_change: bool,
        force_full_recompute: bool,
        inject_stall_at_s: Option<f64>,
    ) -> PyResult<Self> {
        let flows = flows_from_arrays(&arrival_s, &src, &dst, &size_bytes, &deadline_s, &weight, &data_span_s, &size_known)?;
        let topo = make_topology(topology, &host_gbps, tors, hosts_per_tor, spines, core_gbps, ecmp_seed)?;
        let mut cfg = SimConfig::new(Scheduler::parse(scheduler).map_err(to_py)?);
        if let Some(a) = admission {
            cfg.admission = Some(AdmissionConfig { k, window, policy: AdmissionPolicy::parse(a).map_err(to_py)? });
        }
        cfg.terminate_missed = terminate_missed;
        cfg.delay_per_hop_s = delay_per_hop_s;
        cfg.seed = seed;
        cfg.pias_thresholds_bytes = pias_thresholds_bytes;
        cfg.racs = RacsParams { w_min: racs.0, w_max: racs.1, a_per_byte: racs.2, update_interval_s: racs.3 };
        cfg.sdc = SdcParams {
            thresholds_bytes: [sdc_thresholds_bytes.0, sdc_thresholds_bytes.1],
            weights: [sdc_weights.0, sdc_weights.1, sdc_weights.2],
        };
        cfg.max_interval_s = max_interval_s;
        cfg.pause_on_flow_change = pause_on_flow_change;
        if force_full_recompute {
            cfg.allocator = AllocatorChoice::Full;
        }
        // Test only: forces the progress guard's error (SimConfig::inject_stall_at_s).
        cfg.inject_stall_at_s = inject_stall_at_s;
        let inner = py.detach(|| guarded(|| Simulator::new(topo, flows, cfg)))?;
        Ok(PySimulator { inner, pause_on_flow_change })
    }

    /// Runs to the end (GIL released).
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        let sim = &mut self.inner;
        py.detach(|| guarded(|| sim.run()))
    }

    /// Advances until done, a decision, a flow-set change or time `until`.
    /// Returns (kind, dst) with kind in {"done", "decision", "flows_changed", "time_reached"}.
    #[pyo3(signature = (until=f64::INFINITY))]
    fn step(&mut self, py: Python<'_>, until: f64) -> PyResult<(&'static str, i64)> {
        let sim = &mut self.inner;
        let out = py.detach(|| guarded(|| sim.step(until)))?;
        Ok(outcome_name(out))
    }

    /// Runs until `n` more flows have finished or were terminated, time `until`, or the
    /// end (needs pause_on_flow_change). Returns (kind, ids of the flows that ended).
    #[pyo3(signature = (n, until=f64::INFINITY))]
    fn run_until_ended<'py>(&mut self, py: Python<'py>, n: usize, until: f64) -> PyResult<(&'static str, Bound<'py, PyArray1<i64>>)> {
        if !self.pause_on_flow_change {
            return Err(PyValueError::new_err("run_until_ended needs a simulator built with pause_on_flow_change=True"));
        }
        let sim = &mut self.inner;
        let mut ended = Vec::new();
        let out = py.detach(|| guarded(|| fabric_core::run_until_ended(sim, n, until, &mut ended)))?;
        Ok((outcome_name(out).0, ended.into_iter().map(|x| x as i64).collect::<Vec<_>>().into_pyarray(py)))
    }

    /// Replaces the PIAS thresholds from now on (needs force_full_recompute=True: the full recomputation, AllocatorChoice::Full).
    fn set_pias_thresholds(&mut self, thresholds_bytes: Vec<f64>) -> PyResult<()> {
        guarded(|| self.inner.set_pias_thresholds(thresholds_bytes))
    }

    fn admit(&mut self, dst: usize, position: usize) -> PyResult<()> {
        guarded(|| self.inner.admit(dst, position))
    }

    fn window<'py>(&self, py: Python<'py>, dst: usize) -> PyResult<Bound<'py, PyArray1<i64>>> {
        if dst >= self.inner.topology().n_hosts {
            return Err(PyValueError::new_err(format!("destination {dst} out of range")));
        }
        Ok(self.inner.window(dst).into_iter().map(|x| x as i64).collect::<Vec<_>>().into_pyarray(py))
    }

    fn set_scores(&mut self, flows: PyReadonlyArray1<i64>, scores: PyReadonlyArray1<f64>) -> PyResult<()> {
        let (f, s) = (flows.as_slice()?, scores.as_slice()?);
        same_len(f.len(), "scores", s.len())?;
        for (&i, &x) in f.iter().zip(s) {
            if i < 0 {
                return Err(PyValueError::new_err(format!("flow index {i} is negative")));
            }
            guarded(|| self.inner.set_score(i as usize, x))?;
        }
        Ok(())
    }

    #[getter]
    fn now(&self) -> f64 {
        self.inner.now()
    }

    fn active<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.inner.active().iter().map(|&x| x as i64).collect::<Vec<_>>().into_pyarray(py)
    }

    /// Current rate of every flow (bytes/s; 0 for flows not active now).
    fn rates<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let s = &self.inner;
        (0..s.n_flows())
            .map(|i| if s.status(i) == Status::Active { s.rate_bytes_per_s(i) } else { 0.0 })
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// Per-flow results as a dict of arrays (trace order).
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = &self.inner;
        let n = s.n_flows();
        let d = PyDict::new(py);
        d.set_item("finish_s", s.finish_s().to_vec().into_pyarray(py))?;
        d.set_item("fct_s", (0..n).map(|i| s.fct_s(i)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("ideal_fct_s", (0..n).map(|i| s.ideal_fct_s(i)).collect::<Vec<_>>().into_pyarray(py))?;
        d.set_item("bytes_sent", s.sent().to_vec().into_pyarray(py))?;
        d.set_item("terminated", s.terminated().into_pyarray(py))?;
        d.set_item("path_delay_s", (0..n).map(|i| s.path_delay_s(i)).collect::<Vec<_>>().into_pyarray(py))?;
        Ok(d)
    }

    /// Per-link data: (names, capacity in bytes/s, bytes carried).
    fn links<'py>(&self, py: Python<'py>) -> (Vec<String>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>) {
        let t = self.inner.topology();
        (t.names(), t.capacity.clone().into_pyarray(py), self.inner.link_bytes().into_pyarray(py))
    }

    /// Counters: {"events": ..., "allocations": ...}.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("events", self.inner.stats().events)?;
        d.set_item("allocations", self.inner.stats().allocations)?;
        Ok(d)
    }
}

/// Names of the native schedulers.
#[pyfunction]
fn scheduler_names() -> Vec<&'static str> {
    fabric_core::SCHEDULER_NAMES.to_vec()
}

/// The token env's gather-burst generator (fabric-core `gather_bursts_seeded`): the flows
/// of `TokenEnv.reset(seed)`'s episode as columns (arrival_s, src, dst, size_bytes,
/// deadline_s), in burst order. Classes are (weight, size, deadline or NaN).
#[pyfunction]
#[pyo3(signature = (*, seed, class_weights, class_sizes_bytes, class_deadlines_s, exact, burst_size, burst_rate_hz, n_bursts, dst, hosts))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn gather_bursts<'py>(
    py: Python<'py>,
    seed: u64,
    class_weights: Vec<f64>,
    class_sizes_bytes: Vec<f64>,
    class_deadlines_s: Vec<f64>,
    exact: bool,
    burst_size: usize,
    burst_rate_hz: f64,
    n_bursts: usize,
    dst: usize,
    hosts: usize,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
    let classes = flow_classes(&class_weights, &class_sizes_bytes, &class_deadlines_s)?;
    let flows = py.detach(|| {
        guarded(|| fabric_core::gather_bursts_seeded(seed, &classes, exact, burst_size, burst_rate_hz, n_bursts, dst, hosts))
    })?;
    let col = |f: &dyn Fn(&FlowSpec) -> f64| flows.iter().map(f).collect::<Vec<f64>>();
    Ok((
        col(&|f| f.arrival_s).into_pyarray(py),
        flows.iter().map(|f| f.src as i64).collect::<Vec<_>>().into_pyarray(py),
        flows.iter().map(|f| f.dst as i64).collect::<Vec<_>>().into_pyarray(py),
        col(&|f| f.size_bytes).into_pyarray(py),
        col(&|f| f.deadline_s).into_pyarray(py),
    ))
}

#[pymodule]
fn _fabric(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulator>()?;
    m.add_class::<PyTrace>()?;
    envs::register(m)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(gather_bursts, m)?)?;
    Ok(())
}
