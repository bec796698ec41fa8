//! Bindings of the packet-level model (`fabric_core::PacketSimulator`): arrays in and
//! out, the GIL released around simulation, every error a Python exception.
use fabric_core::{EcnMarking, FairProjection, LoadBalancing, PacketConfig, PacketSimulator, Transport};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{guarded, outcome_name, to_py, SimArgs};

/// Writes `set_packet_options` and `PACKET_OPTION_NAMES` from one list of `PacketConfig`
/// fields: each packet option is named once in the bindings.
macro_rules! packet_options {
    ($($field:ident),* $(,)?) => {
        /// The packet model's options that a `packet=` dict takes (`PacketSimulator`,
        /// `TokenConfig`, `SwitchConfig`): `transport` and these `PacketConfig` fields.
        pub(crate) const PACKET_OPTION_NAMES: &[&str] = &["transport", $(stringify!($field)),*, "ecn_marking", "fair_projection", "load_balancing"];

        /// Sets `c`'s packet options from dict `d`, by `PacketConfig` field name (absent
        /// keys keep `c`'s values; None keeps the transport's default where the option has
        /// one). `owner` names the caller in errors; `refused` are options it does not take.
        pub(crate) fn set_packet_options(c: &mut PacketConfig, d: &Bound<'_, PyDict>, owner: &str, refused: &[&str]) -> PyResult<()> {
            for (k, v) in d.iter() {
                let key: String = k.extract()?;
                let bad = |e: PyErr| PyValueError::new_err(format!("packet option {key}: {e}"));
                if refused.contains(&key.as_str()) {
                    return Err(PyValueError::new_err(format!("packet option '{key}' is not one of {owner}'s")));
                }
                match key.as_str() {
                    "transport" => c.transport = v.extract::<Option<String>>().map_err(bad)?.map(|t| Transport::parse(&t)).transpose().map_err(to_py)?,
                    "ecn_marking" => c.ecn_marking = EcnMarking::parse(&v.extract::<String>().map_err(bad)?).map_err(to_py)?,
                    "fair_projection" => c.fair_projection = FairProjection::parse(&v.extract::<String>().map_err(bad)?).map_err(to_py)?,
                    "load_balancing" => c.load_balancing = LoadBalancing::parse(&v.extract::<String>().map_err(bad)?).map_err(to_py)?,
                    $(stringify!($field) => c.$field = v.extract().map_err(bad)?,)*
                    other => {
                        let known: Vec<&str> = PACKET_OPTION_NAMES.iter().copied().filter(|n| !refused.contains(n)).collect();
                        return Err(PyValueError::new_err(format!("unknown packet option '{other}' of {owner}; known: {}", known.join(", "))));
                    }
                }
            }
            Ok(())
        }
    };
}

packet_options!(
    mss_bytes,
    header_bytes,
    buffer_bytes,
    ecn_threshold_bytes,
    ecn_threshold_packets,
    buffer_packets,
    queue_reserve_bytes,
    pias_port_ecn,
    init_cwnd_packets,
    max_cwnd_packets,
    min_rto_s,
    queue_sample_s,
    sample_ports,
    max_events,
    ack_every_segments,
    delayed_ack_timeout_s,
    handshake,
    syn_timeout_s,
    clock_granularity_s,
    limited_transmit,
    dupack_threshold,
    count_acked_segments,
    fixed_rto,
    sack,
    prr,
    dctcp_alpha_init,
    dctcp_min_cwnd_packets,
    dctcp_hold_in_cwr,
    dctcp_ignore_dupack_ece,
    link_jitter_s,
    tx_complete_events,
    request_delay_s,
    grant_delay_s,
);

/// The packet-level simulator (see flowsched.simulate(model="packet")).
#[pyclass(name = "PacketSimulator", module = "flowsched._fabric")]
struct PyPacketSimulator {
    inner: PacketSimulator,
    link_names: Vec<String>,
    capacity: Vec<f64>,
}

native_methods! {
    impl PyPacketSimulator {
        #[new(trace)]
        fn new(
            py, args;
            packet: Option<Bound<'_, PyDict>> = None,
            pause_on_flow_change: bool = false,
        ) -> PyResult<Self> {
            let SimArgs { flows, topo, scheduler, admission, terminate_missed, delay_per_hop_s, seed, pias_thresholds_bytes } = args;
            let mut cfg = PacketConfig::new(scheduler);
            if let Some(d) = &packet {
                set_packet_options(&mut cfg, d, "PacketSimulator", &[])?;
            }
            cfg.delay_per_hop_s = delay_per_hop_s;
            cfg.pias_thresholds_bytes = pias_thresholds_bytes;
            cfg.terminate_missed = terminate_missed;
            cfg.admission = admission;
            cfg.seed = seed;
            cfg.pause_on_flow_change = pause_on_flow_change;
            let link_names = topo.names();
            let capacity = topo.capacity.clone();
            let inner = py.detach(|| guarded(|| PacketSimulator::new(&topo, &flows, cfg)))?;
            Ok(PyPacketSimulator { inner, link_names, capacity })
        }

        /// Runs to the end (GIL released; Ctrl-C stops it between pieces of the run).
        fn run(&mut self, py: Python<'_>) -> PyResult<()> {
            loop {
                let inner = &mut self.inner;
                if py.detach(|| guarded(|| inner.run_bounded(crate::RUN_PIECE_EVENTS)))? {
                    return Ok(());
                }
                py.check_signals()?;
            }
        }

        /// Handles every event at or before `until` (seconds, the simulator's clock); returns
        /// whether every flow has ended.
        fn step(&mut self, py: Python<'_>, until: f64) -> PyResult<bool> {
            let inner = &mut self.inner;
            py.detach(|| guarded(|| inner.step(until)))?;
            Ok(self.inner.done())
        }

        /// Runs until `n` more flows have finished or were terminated, time `until`, or the
        /// end (needs pause_on_flow_change=True; GIL released), as the fluid Simulator's
        /// run_until_ended. Returns (kind, ids of the flows that ended).
        #[pyo3(signature = (n, until=f64::INFINITY))]
        fn run_until_ended<'py>(&mut self, py: Python<'py>, n: usize, until: f64) -> PyResult<(&'static str, Bound<'py, PyArray1<i64>>)> {
            let inner = &mut self.inner;
            let mut ended = Vec::new();
            let out = py.detach(|| guarded(|| inner.run_until_ended(n, until, &mut ended)))?;
            Ok((outcome_name(out).0, ended.into_iter().map(|x| x as i64).collect::<Vec<_>>().into_pyarray(py)))
        }

        #[getter]
        fn now(&self) -> f64 {
            self.inner.now_s()
        }

        #[getter]
        fn done(&self) -> bool {
            self.inner.done()
        }

        /// The transport this run uses (the given one or the scheduler's default).
        #[getter]
        fn transport(&self) -> &'static str {
            self.inner.transport().name()
        }

        /// Per-flow arrays on the simulator's clock: finish_s, fct_s (finish - arrival; it
        /// includes every delay), ideal_fct_s (the fluid model's definition), terminated,
        /// bytes_sent (payload delivered in order), path_delay_s (propagation, included in fct_s),
        /// duplicates, timeouts (retransmission + SYN timeouts), retransmissions (data packets
        /// sent again), fast_retransmits, admitted_s (when the destination
        /// admitted the flow; NaN without admission), start_s (when its sender started).
        fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            let s = &self.inner;
            d.set_item("finish_s", s.finish_s().into_pyarray(py))?;
            d.set_item("fct_s", s.fct_s().into_pyarray(py))?;
            d.set_item("ideal_fct_s", s.ideal_fct_s().into_pyarray(py))?;
            d.set_item("terminated", s.terminated().to_vec().into_pyarray(py))?;
            d.set_item("bytes_sent", s.delivered_bytes().iter().map(|&b| b as f64).collect::<Vec<_>>().into_pyarray(py))?;
            d.set_item("path_delay_s", s.path_delay_s().into_pyarray(py))?;
            d.set_item("duplicates", s.duplicates().into_pyarray(py))?;
            d.set_item("timeouts", s.flow_timeouts().to_vec().into_pyarray(py))?;
            d.set_item("retransmissions", s.flow_retransmissions().to_vec().into_pyarray(py))?;
            d.set_item("fast_retransmits", s.flow_fast_retransmits().to_vec().into_pyarray(py))?;
            d.set_item("admitted_s", s.admitted_s().into_pyarray(py))?;
            d.set_item("start_s", s.start_s().into_pyarray(py))?;
            Ok(d)
        }

        /// Counters of the run: events, data_packets, ack_packets, retransmissions, timeouts,
        /// fast_retransmits, drops_overflow, drops_evicted, drops_stale, ecn_marks, duplicates,
        /// ...
        fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let s = self.inner.stats();
            let d = PyDict::new(py);
            for (k, v) in [
                ("events", s.events),
                ("data_packets", s.data_packets),
                ("ack_packets", s.ack_packets),
                ("retransmissions", s.retransmissions),
                ("timeouts", s.timeouts),
                ("fast_retransmits", s.fast_retransmits),
                ("drops_overflow", s.drops_overflow),
                ("drops_evicted", s.drops_evicted),
                ("drops_stale", s.drops_stale),
                ("ecn_marks", s.ecn_marks),
                ("duplicates", s.duplicates),
                ("data_arrived", s.data_arrived),
                ("data_dropped", s.data_dropped),
                ("peak_pending_events", s.peak_pending_events),
                ("syn_packets", s.syn_packets),
                ("syn_timeouts", s.syn_timeouts),
                ("delayed_acks", s.delayed_acks),
            ] {
                d.set_item(k, v)?;
            }
            Ok(d)
        }

        /// Per port (one per link, in link order): link name, peak and mean bytes waiting,
        /// overflow drops, pFabric evictions, ECN marks, ASCC's stale-packet drops.
        fn port_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.inner.port_stats();
            let d = PyDict::new(py);
            d.set_item("link", self.link_names.clone())?;
            d.set_item("peak_queue_bytes", p.iter().map(|x| x.0).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("mean_queue_bytes", p.iter().map(|x| x.1).collect::<Vec<f64>>().into_pyarray(py))?;
            d.set_item("drops_overflow", p.iter().map(|x| x.2).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("drops_evicted", p.iter().map(|x| x.3).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("ecn_marks", p.iter().map(|x| x.4).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("drops_stale", p.iter().map(|x| x.5).collect::<Vec<u64>>().into_pyarray(py))?;
            Ok(d)
        }

        /// Queue samples: (times in s, sampled port ids, bytes waiting, sample-major).
        #[allow(clippy::type_complexity)]
        fn queue_samples<'py>(
            &self,
            py: Python<'py>,
        ) -> (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>) {
            let (t, ports, v) = self.inner.queue_samples();
            (t.into_pyarray(py), ports.to_vec().into_pyarray(py), v.to_vec().into_pyarray(py))
        }

        /// Per host: the most tokens its flows held at once as a destination (empty without admission).
        #[getter]
        fn peak_tokens<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
            self.inner.peak_tokens().to_vec().into_pyarray(py)
        }

        /// Per flow, its sender's window now: cwnd_packets, in_flight_packets (sent, not yet
        /// acknowledged) and srtt_s.
        fn windows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let (cwnd, flight, srtt) = self.inner.windows();
            let d = PyDict::new(py);
            d.set_item("cwnd_packets", cwnd.into_pyarray(py))?;
            d.set_item("in_flight_packets", flight.into_pyarray(py))?;
            d.set_item("srtt_s", srtt.into_pyarray(py))?;
            Ok(d)
        }

        /// Payload bytes per packet (the MSS).
        #[getter]
        fn mss_bytes(&self) -> u64 {
            self.inner.mss_bytes()
        }

        /// Sets flow i's priority for the `external` scheduler (lower first).
        fn set_score(&mut self, i: usize, score: f64) -> PyResult<()> {
            self.inner.set_score(i, score).map_err(to_py)
        }

        /// Sets the priorities of the flows at the given trace rows (`external` scheduler;
        /// lower first), as the fluid Simulator's set_scores.
        fn set_scores(&mut self, flows: PyReadonlyArray1<i64>, scores: PyReadonlyArray1<f64>) -> PyResult<()> {
            let (f, s) = (flows.as_slice()?, scores.as_slice()?);
            if f.len() != s.len() {
                return Err(PyValueError::new_err(format!("{} flow indices but {} scores", f.len(), s.len())));
            }
            for (&i, &x) in f.iter().zip(s) {
                if i < 0 {
                    return Err(PyValueError::new_err(format!("flow index {i} is negative")));
                }
                self.inner.set_score(i as usize, x).map_err(to_py)?;
            }
            Ok(())
        }

        /// Replaces the PIAS thresholds from now on (as many as before).
        fn set_pias_thresholds(&mut self, thresholds_bytes: Vec<f64>) -> PyResult<()> {
            self.inner.set_pias_thresholds(thresholds_bytes).map_err(to_py)
        }

        /// (names, capacities in bytes/s, payload bytes delivered across each) of the links,
        /// in link order, as the fluid Simulator's links().
        #[allow(clippy::type_complexity)]
        fn links<'py>(&self, py: Python<'py>) -> (Vec<String>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>) {
            (self.link_names.clone(), self.capacity.clone().into_pyarray(py), self.inner.link_bytes().into_pyarray(py))
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPacketSimulator>()
}
