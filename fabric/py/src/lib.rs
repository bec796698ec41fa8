//! Thin PyO3 bindings of fabric-core: converts arrays in and out, releases the GIL
//! around simulation, and turns every error (and any internal panic) into a Python
//! exception.
use std::panic::{catch_unwind, AssertUnwindSafe};

use std::sync::Arc;

use fabric_core::{
    ecmp_hash, GraphRoutes, PinnedRoutes, AdmissionConfig, AllocatorChoice, FlowClass, FlowSpec, Outcome, PiasSharing, RacsParams, Scheduler, SdcParams, SimConfig, SimError, Simulator, Status,
    Topology,
};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// The topology keywords every native constructor takes (`native_methods!`): `topology` is
/// "bigswitch", "leafspine" (with `tors`, `hosts_per_tor`, `spines`, `core_gbps`,
/// `ecmp_seed`) or a `Graph` (with `ecmp_seed`); `host_gbps` is one rate per host (for a
/// graph: the sum of each host's outgoing links, checked).
pub(crate) struct TopologyArgs<'a, 'py> {
    pub(crate) topology: &'a Bound<'py, PyAny>,
    pub(crate) host_gbps: PyReadonlyArray1<'py, f64>,
    pub(crate) tors: usize,
    pub(crate) hosts_per_tor: usize,
    pub(crate) spines: usize,
    pub(crate) core_gbps: f64,
    pub(crate) ecmp_seed: u64,
}

impl TopologyArgs<'_, '_> {
    /// The native topology (the env configs').
    pub(crate) fn topology(&self) -> PyResult<Topology> {
        self.of(self.topology)
    }

    /// The topology for the simulators of a trace, which also take a `PinnedRoutes` (a
    /// graph with routes pinned to the trace's flows: its `path` column) as `topology`.
    pub(crate) fn flow_topology(&self) -> PyResult<Topology> {
        if let Ok(p) = self.topology.cast::<PyPinnedRoutes>() {
            let p = p.get();
            let topo = self.of(p.graph.bind(self.topology.py()).as_any())?;
            return topo.with_pinned(p.pinned.clone()).map_err(to_py);
        }
        self.topology()
    }

    fn of(&self, kind: &Bound<'_, PyAny>) -> PyResult<Topology> {
        let TopologyArgs { tors, hosts_per_tor, spines, core_gbps, ecmp_seed, .. } = *self;
        let rates = self.host_gbps.as_slice()?.to_vec();
        if let Ok(g) = kind.cast::<PyGraph>() {
            let g = g.get();
            if tors != 0 || hosts_per_tor != 0 || spines != 0 || core_gbps != 0.0 {
                return Err(PyValueError::new_err(
                    "a graph topology takes no tors, hosts_per_tor, spines or core_gbps (the graph gives them)",
                ));
            }
            let expected = g.host_gbps();
            if rates.len() != expected.len() {
                return Err(PyValueError::new_err(format!("host_gbps: {} rates for a graph of {} hosts", rates.len(), expected.len())));
            }
            for (h, (&a, &b)) in rates.iter().zip(&expected).enumerate() {
                if (a - b).abs() > 1e-9 * b.abs() {
                    return Err(PyValueError::new_err(format!(
                        "host_gbps[{h}] = {a} but host {h}'s outgoing links in the graph sum to {b} Gbps"
                    )));
                }
            }
            return Topology::graph_shared(g.routes.clone(), &g.link_gbps, ecmp_seed).map_err(to_py);
        }
        let kind: String = kind.extract().map_err(|_| {
            PyValueError::new_err(format!("topology must be 'bigswitch', 'leafspine' or a Graph, got {kind}"))
        })?;
        match kind.as_str() {
            "bigswitch" => Topology::big_switch(&rates),
            "leafspine" => Topology::leaf_spine(tors, hosts_per_tor, spines, &rates, core_gbps, ecmp_seed),
            other => return Err(PyValueError::new_err(format!("unknown topology '{other}'; known: bigswitch, leafspine, or a Graph"))),
        }
        .map_err(to_py)
    }
}

/// What every simulator of a trace takes (`Simulator`, `PacketSimulator`), parsed once: the
/// trace's flows, its topology and the options both models have.
pub(crate) struct SimArgs {
    pub(crate) flows: Vec<FlowSpec>,
    pub(crate) topo: Topology,
    pub(crate) scheduler: Scheduler,
    /// Destination admission (`admission` with `k` and `window`), or None.
    pub(crate) admission: Option<AdmissionConfig>,
    pub(crate) terminate_missed: bool,
    pub(crate) delay_per_hop_s: f64,
    pub(crate) seed: u64,
    pub(crate) pias_thresholds_bytes: Vec<f64>,
}

/// Writes a native class's `#[pymethods]` block whose constructor takes keyword groups that
/// several classes share, each declared once here, then the class's own keywords:
/// - `#[new(trace)] fn new(py, args; own...)`: the simulators of a trace: the eight trace
///   columns (positional), the topology keywords and the options of both models, parsed
///   into `args: SimArgs` (`py` is the GIL token);
/// - `#[new(topology)] fn new(topology; own...)`: the env configs: the topology keywords,
///   as `topology: TopologyArgs`.
///
/// The own keywords are `name: type` or `name: type = default` (keyword-only, in this
/// order; a default is one token: wrap a longer one in braces), then the constructor's
/// body; the class's other methods follow as written.
macro_rules! native_methods {
    (
        impl $class:ident {
            #[new(trace)]
            fn new($py:ident, $args:ident; $($own:ident: $ty:ty $(= $default:tt)?),* $(,)?) -> PyResult<Self> $body:block
            $($methods:tt)*
        }
    ) => {
        native_methods!(@impl $class, topo,
            [arrival_s, src, dst, size_bytes, deadline_s, weight, data_span_s, size_known,]
            [scheduler="ps", admission=None, k=0, window=0, terminate_missed=false, delay_per_hop_s=0.0, seed=0,
             pias_thresholds_bytes=Vec::new(),]
            [
                $py: ::pyo3::Python<'_>,
                arrival_s: ::numpy::PyReadonlyArray1<f64>,
                src: ::numpy::PyReadonlyArray1<i64>,
                dst: ::numpy::PyReadonlyArray1<i64>,
                size_bytes: ::numpy::PyReadonlyArray1<f64>,
                deadline_s: ::numpy::PyReadonlyArray1<f64>,
                weight: ::numpy::PyReadonlyArray1<f64>,
                data_span_s: ::numpy::PyReadonlyArray1<f64>,
                size_known: ::numpy::PyReadonlyArray1<bool>,
            ]
            [
                scheduler: &str,
                admission: Option<&str>,
                k: usize,
                window: usize,
                terminate_missed: bool,
                delay_per_hop_s: f64,
                seed: u64,
                pias_thresholds_bytes: Vec<f64>,
            ]
            {
                let $args = $crate::SimArgs {
                    flows: $crate::flows_from_arrays(&arrival_s, &src, &dst, &size_bytes, &deadline_s, &weight, &data_span_s, &size_known)?,
                    topo: topo.flow_topology()?,
                    scheduler: ::fabric_core::Scheduler::parse(scheduler).map_err($crate::to_py)?,
                    admission: match admission {
                        Some(p) => Some(::fabric_core::AdmissionConfig { k, window, policy: ::fabric_core::AdmissionPolicy::parse(p).map_err($crate::to_py)? }),
                        None => None,
                    },
                    terminate_missed,
                    delay_per_hop_s,
                    seed,
                    pias_thresholds_bytes,
                };
            }
            ($($own: $ty $(= $default)?),*) $body
            $($methods)*
        );
    };
    (
        impl $class:ident {
            #[new(topology)]
            fn new($topo:ident; $($own:ident: $ty:ty $(= $default:tt)?),* $(,)?) -> PyResult<Self> $body:block
            $($methods:tt)*
        }
    ) => {
        native_methods!(@impl $class, $topo, [] [] [] [] {} ($($own: $ty $(= $default)?),*) $body $($methods)*);
    };
    // The block: [positional columns] [shared keywords after the topology ones] [their
    // parameters, likewise], what makes the shared arguments (of the topology ones, `$topo`),
    // the own keywords, the body, the other methods.
    (
        @impl $class:ident, $topo:ident, [$($pos:tt)*] [$($shared:tt)*] [$($pos_param:tt)*] [$($shared_param:tt)*]
        {$($parse:tt)*} ($($own:ident: $ty:ty $(= $default:tt)?),*) $body:block
        $($methods:tt)*
    ) => {
        #[::pyo3::pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (
                $($pos)* *, topology, host_gbps, tors=0, hosts_per_tor=0, spines=0, core_gbps=0.0, ecmp_seed=0,
                $($shared)* $($own $(= $default)?),*
            ))]
            #[allow(clippy::too_many_arguments)]
            fn new(
                $($pos_param)*
                topology: &::pyo3::Bound<'_, ::pyo3::PyAny>,
                host_gbps: ::numpy::PyReadonlyArray1<f64>,
                tors: usize,
                hosts_per_tor: usize,
                spines: usize,
                core_gbps: f64,
                ecmp_seed: u64,
                $($shared_param)*
                $($own: $ty),*
            ) -> ::pyo3::PyResult<Self> {
                let $topo = $crate::TopologyArgs { topology, host_gbps, tors, hosts_per_tor, spines, core_gbps, ecmp_seed };
                $($parse)*
                $body
            }

            $($methods)*
        }
    };
}

mod envs;
mod packet;

/// Event times of a fluid run between two looks for Ctrl-C (`Simulator.run`): at most about
/// 0.1 s on the large fabrics' slowest schedulers (a few microseconds an event time
/// elsewhere).
const RUN_PIECE_TIMES: u64 = 10_000;
/// Events of a packet run between two looks for Ctrl-C (`PacketSimulator.run`: about
/// 0.2 s of work).
pub(crate) const RUN_PIECE_EVENTS: u64 = 1_000_000;

/// Routes pinned to the flows of one trace on a graph (`Graph.pin`): passed as the
/// `topology` of a `Simulator` or `PacketSimulator` of that trace.
#[pyclass(name = "PinnedRoutes", module = "flowsched._fabric", frozen)]
pub(crate) struct PyPinnedRoutes {
    graph: Py<PyGraph>,
    pinned: Arc<PinnedRoutes>,
}

#[pymethods]
impl PyPinnedRoutes {
    /// The number of flows (pinned or not) of the trace the routes were made for.
    #[getter]
    fn n_flows(&self) -> usize {
        self.pinned.n_flows()
    }

    /// The graph the routes run on.
    #[getter]
    fn graph(&self, py: Python<'_>) -> Py<PyGraph> {
        self.graph.clone_ref(py)
    }

    /// The links (indices) of flow i's pinned route (empty: not pinned).
    fn links(&self, i: usize) -> Vec<u32> {
        self.pinned.links(i).to_vec()
    }
}

/// A graph topology's nodes, links and hosts, with its routing tables (built once; every
/// simulator and env given it shares them).
#[pyclass(name = "Graph", module = "flowsched._fabric", frozen)]
pub(crate) struct PyGraph {
    routes: Arc<GraphRoutes>,
    link_gbps: Vec<f64>,
}

impl PyGraph {
    fn host_gbps(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.routes.n_hosts()];
        let mut node_host = std::collections::HashMap::new();
        for (h, &v) in self.routes.host_node.iter().enumerate() {
            node_host.insert(v, h);
        }
        for (l, &a) in self.routes.link_from.iter().enumerate() {
            if let Some(&h) = node_host.get(&a) {
                out[h] += self.link_gbps[l];
            }
        }
        out
    }

    /// `f` of the links of each flow's path (flow i is row i, routed as the simulator routes
    /// it; src == dst: no links), hosts checked.
    fn map_paths<T>(
        &self,
        src: &PyReadonlyArray1<i64>,
        dst: &PyReadonlyArray1<i64>,
        ecmp_seed: u64,
        f: impl Fn(&[u32]) -> T,
    ) -> PyResult<Vec<T>> {
        let (src, dst) = (src.as_slice()?, dst.as_slice()?);
        same_len(src.len(), "dst", dst.len())?;
        let mut out = Vec::with_capacity(src.len());
        let mut buf = Vec::new();
        for (i, (&a, &b)) in src.iter().zip(dst).enumerate() {
            let (s, d) = (self.check_host("src", a)?, self.check_host("dst", b)?);
            buf.clear();
            if s != d {
                self.routes.path(ecmp_hash(ecmp_seed, i as u64, s, d), s, d, &mut buf);
            }
            out.push(f(&buf));
        }
        Ok(out)
    }

    fn check_host(&self, what: &str, h: i64) -> PyResult<usize> {
        if h < 0 || h as usize >= self.routes.n_hosts() {
            return Err(PyValueError::new_err(format!("{what} host {h} is not one of the graph's {} hosts", self.routes.n_hosts())));
        }
        Ok(h as usize)
    }
}

#[pymethods]
impl PyGraph {
    /// Checks the graph and builds its routing tables (equal-cost shortest paths by the
    /// links' integer weights; hosts never forward).
    #[new]
    #[pyo3(signature = (n_nodes, link_from, link_to, link_gbps, link_weight, host_nodes, link_names, link_delay_s=None))]
    fn new(
        py: Python<'_>,
        n_nodes: usize,
        link_from: Vec<u32>,
        link_to: Vec<u32>,
        link_gbps: Vec<f64>,
        link_weight: Vec<u32>,
        host_nodes: Vec<u32>,
        link_names: Vec<String>,
        link_delay_s: Option<Vec<f64>>,
    ) -> PyResult<Self> {
        let delays = link_delay_s.unwrap_or_else(|| vec![0.0; link_from.len()]);
        let routes =
            py.detach(|| guarded(|| GraphRoutes::new(n_nodes, link_from, link_to, link_weight, host_nodes, link_names, delays)))?;
        // Checks the rates once, here, with the same messages as the simulator.
        let routes = Arc::new(routes);
        Topology::graph_shared(routes.clone(), &link_gbps, 0).map_err(to_py)?;
        Ok(PyGraph { routes, link_gbps })
    }

    #[getter]
    fn n_hosts(&self) -> usize {
        self.routes.n_hosts()
    }

    #[getter]
    fn n_links(&self) -> usize {
        self.routes.n_links()
    }

    /// The sum of each host's outgoing link rates (Gbps).
    fn host_rates_gbps<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.host_gbps().into_pyarray(py)
    }

    /// The number of equal-cost shortest paths from host src to host dst.
    fn n_paths(&self, src: i64, dst: i64) -> PyResult<u64> {
        let (s, d) = (self.check_host("src", src)?, self.check_host("dst", dst)?);
        if s == d {
            return Err(PyValueError::new_err(format!("src and dst are both host {s}")));
        }
        Ok(self.routes.n_paths(s, d))
    }

    /// The links (indices) of the path the simulator gives flow `flow_id` (its row in the
    /// trace) from src to dst under `ecmp_seed`.
    fn path(&self, flow_id: u64, src: i64, dst: i64, ecmp_seed: u64) -> PyResult<Vec<u32>> {
        let (s, d) = (self.check_host("src", src)?, self.check_host("dst", dst)?);
        if s == d {
            return Err(PyValueError::new_err(format!("src and dst are both host {s}")));
        }
        let mut out = Vec::new();
        self.routes.path(ecmp_hash(ecmp_seed, flow_id, s, d), s, d, &mut out);
        Ok(out)
    }

    /// The fixed path delay of each flow (flow i is row i): `delay_per_hop_s` per link of its
    /// path plus the links' own delays, as the simulator computes it.
    fn path_delay_s<'py>(
        &self,
        py: Python<'py>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        ecmp_seed: u64,
        delay_per_hop_s: f64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = self.map_paths(&src, &dst, ecmp_seed, |links| {
            let own: f64 = links.iter().map(|&l| self.routes.link_delay_s[l as usize]).sum();
            delay_per_hop_s * links.len() as f64 + own
        })?;
        Ok(out.into_pyarray(py))
    }

    /// What is wrong with a route from host src to host dst through `nodes` (node indices),
    /// or None if it is a valid route to pin (`GraphRoutes::route_links`).
    fn check_route(&self, src: i64, dst: i64, nodes: Vec<u32>) -> PyResult<Option<String>> {
        let (s, d) = (self.check_host("src", src)?, self.check_host("dst", dst)?);
        let mut out = Vec::new();
        Ok(self.routes.route_links(s, d, &nodes, &mut out).err())
    }

    /// Routes pinned to the flows of a trace (flow i is row i, from `src[i]` to `dst[i]`):
    /// flow i's route passes through nodes `nodes[node_off[i]..node_off[i + 1]]` (node
    /// indices; empty: not pinned, ECMP). Every route is checked; an error names the row.
    fn pin(
        slf: &Bound<'_, Self>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        node_off: PyReadonlyArray1<i64>,
        nodes: PyReadonlyArray1<i64>,
    ) -> PyResult<PyPinnedRoutes> {
        let (src, dst, off, nodes) = (src.as_slice()?, dst.as_slice()?, node_off.as_slice()?, nodes.as_slice()?);
        same_len(src.len(), "dst", dst.len())?;
        let unsigned = |name: &str, x: &[i64]| -> PyResult<Vec<usize>> {
            x.iter()
                .map(|&v| usize::try_from(v).map_err(|_| PyValueError::new_err(format!("{name}: {v} is negative"))))
                .collect()
        };
        let (src, dst, off) = (unsigned("src", src)?, unsigned("dst", dst)?, unsigned("node_off", off)?);
        let nodes = nodes
            .iter()
            .map(|&v| u32::try_from(v).map_err(|_| PyValueError::new_err(format!("nodes: {v} is not a node index"))))
            .collect::<PyResult<Vec<u32>>>()?;
        let routes = slf.get().routes.clone();
        let pinned = slf.py().detach(|| guarded(|| PinnedRoutes::new(routes, &src, &dst, &off, &nodes)))?;
        Ok(PyPinnedRoutes { graph: slf.clone().unbind(), pinned: Arc::new(pinned) })
    }

    /// The nodes of each flow's ECMP path (flow i is row i), as `path` gives its links:
    /// `nodes[off[i]..off[i + 1]]` (node indices, src's node first; none when src == dst).
    #[allow(clippy::type_complexity)]
    fn path_nodes<'py>(
        &self,
        py: Python<'py>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        ecmp_seed: u64,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>)> {
        let g = &self.routes;
        let per_flow = self.map_paths(&src, &dst, ecmp_seed, |links| {
            let mut v = Vec::with_capacity(links.len() + 1);
            if let Some(&l) = links.first() {
                v.push(g.link_from[l as usize] as i64);
                v.extend(links.iter().map(|&l| g.link_to[l as usize] as i64));
            }
            v
        })?;
        let mut off = Vec::with_capacity(per_flow.len() + 1);
        off.push(0i64);
        let mut nodes = Vec::with_capacity(per_flow.iter().map(Vec::len).sum());
        for v in per_flow {
            nodes.extend_from_slice(&v);
            off.push(nodes.len() as i64);
        }
        Ok((off.into_pyarray(py), nodes.into_pyarray(py)))
    }

    /// The number of links of each flow's path (flow i is row i), as `path` gives them.
    fn path_links<'py>(
        &self,
        py: Python<'py>,
        src: PyReadonlyArray1<i64>,
        dst: PyReadonlyArray1<i64>,
        ecmp_seed: u64,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let out = self.map_paths(&src, &dst, ecmp_seed, |links| links.len() as i64)?;
        Ok(out.into_pyarray(py))
    }
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
pub(crate) fn outcome_name(o: Outcome) -> (&'static str, i64) {
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

native_methods! {
    impl PySimulator {
        #[new(trace)]
        fn new(
            py, args;
            pias_sharing: &str = "fifo",
            incomplete_sharing: &str = "fifo",
            racs: (f64, f64, f64, f64) = (1.0, 100.0, 1e-5, 300e-6),
            sdc_thresholds_bytes: (f64, f64) = (73_000.0, 146_000.0),
            sdc_weights: (f64, f64, f64) = (10.0, 5.0, 1.0),
            max_interval_s: Option<f64> = None,
            pause_on_flow_change: bool = false,
            allocator: &str = "auto",
            inject_stall_at_s: Option<f64> = None,
        ) -> PyResult<Self> {
            let SimArgs { flows, topo, scheduler, admission, terminate_missed, delay_per_hop_s, seed, pias_thresholds_bytes } = args;
            let mut cfg = SimConfig::new(scheduler);
            cfg.admission = admission;
            cfg.terminate_missed = terminate_missed;
            cfg.delay_per_hop_s = delay_per_hop_s;
            cfg.seed = seed;
            cfg.pias_thresholds_bytes = pias_thresholds_bytes;
            cfg.pias_sharing = PiasSharing::parse(pias_sharing).map_err(to_py)?;
            cfg.incomplete_sharing = PiasSharing::parse_option(incomplete_sharing, "incomplete_sharing").map_err(to_py)?;
            cfg.racs = RacsParams { w_min: racs.0, w_max: racs.1, a_per_byte: racs.2, update_interval_s: racs.3 };
            cfg.sdc = SdcParams {
                thresholds_bytes: [sdc_thresholds_bytes.0, sdc_thresholds_bytes.1],
                weights: [sdc_weights.0, sdc_weights.1, sdc_weights.2],
            };
            cfg.max_interval_s = max_interval_s;
            cfg.pause_on_flow_change = pause_on_flow_change;
            cfg.allocator = AllocatorChoice::parse(allocator).map_err(to_py)?;
            // Test only: forces the progress guard's error (SimConfig::inject_stall_at_s).
            cfg.inject_stall_at_s = inject_stall_at_s;
            let inner = py.detach(|| guarded(|| Simulator::new(topo, flows, cfg)))?;
            Ok(PySimulator { inner, pause_on_flow_change })
        }

        /// Runs to the end (GIL released; Ctrl-C stops it between pieces of the run).
        fn run(&mut self, py: Python<'_>) -> PyResult<()> {
            loop {
                let sim = &mut self.inner;
                if py.detach(|| guarded(|| sim.run_bounded(RUN_PIECE_TIMES)))? {
                    return Ok(());
                }
                py.check_signals()?;
            }
        }

        /// Advances until done, a decision, a flow-set change or time `until`, or, with
        /// `max_times`, after that many event times ("paused": the same results bit for bit
        /// as a run without pauses). Returns (kind, dst) with kind in {"done", "decision",
        /// "flows_changed", "time_reached", "paused"}.
        #[pyo3(signature = (until=f64::INFINITY, max_times=None))]
        fn step(&mut self, py: Python<'_>, until: f64, max_times: Option<u64>) -> PyResult<(&'static str, i64)> {
            if max_times == Some(0) {
                return Err(PyValueError::new_err("max_times must be at least 1 (or None for no bound)"));
            }
            let sim = &mut self.inner;
            let out = py.detach(|| guarded(|| sim.step_bounded(until, max_times.unwrap_or(u64::MAX))))?;
            Ok(out.map_or(("paused", -1), outcome_name))
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

        /// Replaces the PIAS thresholds from now on (any allocator).
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
}

/// Names of the native schedulers.
#[pyfunction]
fn scheduler_names() -> Vec<&'static str> {
    fabric_core::SCHEDULER_NAMES.to_vec()
}

/// The token env's gather-burst generator (fabric-core `gather_bursts_seeded`): the flows
/// of the token env's `reset(seed)` episode as columns (arrival_s, src, dst, size_bytes,
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
    m.add_class::<PyGraph>()?;
    m.add_class::<PyPinnedRoutes>()?;
    envs::register(m)?;
    packet::register(m)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(gather_bursts, m)?)?;
    Ok(())
}
