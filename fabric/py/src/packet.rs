//! Bindings of the packet-level model (`fabric_core::PacketSimulator`): arrays in and
//! out, the GIL released around simulation, every error a Python exception.
use fabric_core::{PacketConfig, PacketSimulator, Transport};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{guarded, outcome_name, to_py, SimArgs};

/// The packet-level simulator (see flowsched.simulate(model="packet")).
#[pyclass(name = "PacketSimulator", module = "flowsched._fabric")]
struct PyPacketSimulator {
    inner: PacketSimulator,
    sizes: Vec<f64>,
    link_names: Vec<String>,
    capacity: Vec<f64>,
}

native_methods! {
    impl PyPacketSimulator {
        #[new(trace)]
        fn new(
            py, args;
            transport: Option<&str> = None,
            mss_bytes: u32 = 1460,
            header_bytes: u32 = 40,
            buffer_bytes: Option<u64> = None,
            ecn_threshold_bytes: u64 = 97_500,
            queue_reserve_bytes: u64 = 0,
            init_cwnd_packets: Option<f64> = None,
            max_cwnd_packets: Option<f64> = None,
            min_rto_s: Option<f64> = None,
            queue_sample_s: Option<f64> = None,
            sample_ports: Option<Vec<u32>> = None,
            max_events: Option<u64> = None,
            ack_every_segments: u32 = 1,
            delayed_ack_timeout_s: f64 = 0.2,
            handshake: bool = false,
            syn_timeout_s: f64 = 1.0,
            clock_granularity_s: f64 = 0.0,
            limited_transmit: bool = false,
            request_delay_s: f64 = 0.0,
            grant_delay_s: f64 = 0.0,
            pause_on_flow_change: bool = false,
        ) -> PyResult<Self> {
            let SimArgs { flows, topo, scheduler, admission, terminate_missed, delay_per_hop_s, seed, pias_thresholds_bytes } = args;
            let mut cfg = PacketConfig::new(scheduler);
            cfg.transport = transport.map(Transport::parse).transpose().map_err(to_py)?;
            cfg.mss_bytes = mss_bytes;
            cfg.header_bytes = header_bytes;
            cfg.buffer_bytes = buffer_bytes;
            cfg.ecn_threshold_bytes = ecn_threshold_bytes;
            cfg.queue_reserve_bytes = queue_reserve_bytes;
            cfg.init_cwnd_packets = init_cwnd_packets;
            cfg.max_cwnd_packets = max_cwnd_packets;
            cfg.min_rto_s = min_rto_s;
            cfg.delay_per_hop_s = delay_per_hop_s;
            cfg.pias_thresholds_bytes = pias_thresholds_bytes;
            cfg.queue_sample_s = queue_sample_s;
            cfg.sample_ports = sample_ports;
            cfg.terminate_missed = terminate_missed;
            cfg.max_events = max_events;
            cfg.ack_every_segments = ack_every_segments;
            cfg.delayed_ack_timeout_s = delayed_ack_timeout_s;
            cfg.handshake = handshake;
            cfg.syn_timeout_s = syn_timeout_s;
            cfg.clock_granularity_s = clock_granularity_s;
            cfg.limited_transmit = limited_transmit;
            cfg.admission = admission;
            cfg.request_delay_s = request_delay_s;
            cfg.grant_delay_s = grant_delay_s;
            cfg.seed = seed;
            cfg.pause_on_flow_change = pause_on_flow_change;
            let sizes: Vec<f64> = flows.iter().map(|f| f.size_bytes).collect();
            let link_names = topo.names();
            let capacity = topo.capacity.clone();
            let inner = py.detach(|| guarded(|| PacketSimulator::new(&topo, &flows, cfg)))?;
            Ok(PyPacketSimulator { inner, sizes, link_names, capacity })
        }

        /// Runs to the end (GIL released).
        fn run(&mut self, py: Python<'_>) -> PyResult<()> {
            let inner = &mut self.inner;
            py.detach(|| guarded(|| inner.run()))
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
        /// duplicates, timeouts (retransmission + SYN timeouts), admitted_s (when the destination
        /// admitted the flow; NaN without admission), start_s (when its sender started).
        fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            let s = &self.inner;
            d.set_item("finish_s", s.finish_s().into_pyarray(py))?;
            d.set_item("fct_s", s.fct_s().into_pyarray(py))?;
            d.set_item("ideal_fct_s", s.ideal_fct_s(&self.sizes).into_pyarray(py))?;
            d.set_item("terminated", s.terminated().to_vec().into_pyarray(py))?;
            d.set_item("bytes_sent", s.delivered_bytes().iter().map(|&b| b as f64).collect::<Vec<_>>().into_pyarray(py))?;
            d.set_item("path_delay_s", s.path_delay_s().into_pyarray(py))?;
            d.set_item("duplicates", s.duplicates().into_pyarray(py))?;
            d.set_item("timeouts", s.flow_timeouts().to_vec().into_pyarray(py))?;
            d.set_item("admitted_s", s.admitted_s().into_pyarray(py))?;
            d.set_item("start_s", s.start_s().into_pyarray(py))?;
            Ok(d)
        }

        /// Counters of the run: events, data_packets, ack_packets, retransmissions, timeouts,
        /// fast_retransmits, drops_overflow, drops_evicted, ecn_marks, duplicates.
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
        /// overflow drops, pFabric evictions, ECN marks.
        fn port_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.inner.port_stats();
            let d = PyDict::new(py);
            d.set_item("link", self.link_names.clone())?;
            d.set_item("peak_queue_bytes", p.iter().map(|x| x.0).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("mean_queue_bytes", p.iter().map(|x| x.1).collect::<Vec<f64>>().into_pyarray(py))?;
            d.set_item("drops_overflow", p.iter().map(|x| x.2).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("drops_evicted", p.iter().map(|x| x.3).collect::<Vec<u64>>().into_pyarray(py))?;
            d.set_item("ecn_marks", p.iter().map(|x| x.4).collect::<Vec<u64>>().into_pyarray(py))?;
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
