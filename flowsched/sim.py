"""The Python entry point of the fabric simulator: :class:`Simulation` (step by step),
:func:`simulate` (to the end) and the :class:`Results` both return.

Lower-level public helpers, for drivers that need the core's own calls (the envs):
:func:`prepare_trace` (a validated trace on the simulator's clock), :func:`native_simulator`
(the ``_fabric.Simulator`` of a prepared trace) and :func:`flow_table` (the per-flow
columns of :attr:`Results.flows` from the core's per-flow arrays).
"""
from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pandas as pd

from flowsched import _fabric, progress as _progress
from flowsched.checks import check_flag, check_number, is_finite_number, number_kind
from flowsched.metrics import (
    DEADLINE_RTOL,
    DEFAULT_BUCKETS_BYTES,
    Summary,
    compare,
    deadline_met,
    slowdown,
    summarize,
)
from flowsched.topology import BigSwitch, Graph, LeafSpine, Topology
from flowsched.traces import (
    OPTIONAL_DEFAULTS,
    PATH_COLUMN,
    TRACE_COLUMNS,
    TimeResolutionWarning,
    TraceError,
    _load_trace,
    validate_columns,
)

#: The names of the native schedulers, each one ``scheduler=`` takes as it is; the
#: scheduler families whose name takes another scheduler are :data:`SCHEDULER_PATTERNS`.
SCHEDULERS: tuple[str, ...] = tuple(n for n in _fabric.scheduler_names() if "<" not in n)
#: Scheduler names with a placeholder: ``gtcp:<inner>`` (SCHED_TCP's per-path layer over
#: any priority scheduler, e.g. ``gtcp:srpt``; docs/concepts/schedulers.md).
SCHEDULER_PATTERNS: tuple[str, ...] = tuple(n for n in _fabric.scheduler_names() if "<" in n)
ADMISSION_POLICIES = ("fifo", "edf", "ssdf", "lsdf", "srpt", "random", "external")


#: The per-flow columns of :attr:`Results.flows` and their dtypes, in order: the contract
#: that every env's ``results()`` honours too.
FLOW_COLUMNS: dict[str, str] = {
    "id": "int64",
    "arrival_s": "float64",
    "src": "int64",
    "dst": "int64",
    "size_bytes": "float64",
    "deadline_s": "float64",
    "weight": "float64",
    "finish_s": "float64",
    "fct_s": "float64",
    "ideal_fct_s": "float64",
    "slowdown": "float64",
    "deadline_met": "boolean",
    "terminated": "bool",
    "bytes_sent": "float64",
    "path_delay_s": "float64",
}


@dataclass
class Results:
    """What a simulation produced.

    Attributes
    ----------
    flows : one row per flow, in trace order, with the columns and dtypes of
        :data:`FLOW_COLUMNS`: ``id, arrival_s, src, dst, size_bytes, deadline_s, weight,
        finish_s, fct_s, ideal_fct_s, slowdown, deadline_met, terminated, bytes_sent,
        path_delay_s`` (seconds, bytes). ``arrival_s`` and ``finish_s`` are on the trace's clock
        (``finish_s`` rounded to the float64 step there: 2.4e-7 s at 1.7e9 s epoch seconds).
        ``fct_s`` is finish - arrival plus the fixed path delay, computed on the simulator's
        clock, which starts at the whole second at or below the first arrival
        (:func:`time_origin_s`), so it does not depend on where the trace's clock starts;
        ``ideal_fct_s`` the FCT alone on an idle fabric given the data availability;
        ``slowdown`` is ``fct_s / ideal_fct_s`` and ``deadline_met`` is
        :func:`flowsched.metrics.deadline_met` (NA for flows without a deadline, and, in
        :meth:`Simulation.results` before the end, for flows still running or waiting whose
        deadline has not passed; met within a relative tolerance of
        :data:`flowsched.metrics.DEADLINE_RTOL`); ``path_delay_s``
        is the fixed path delay included in ``fct_s``. When the trace has a ``path``
        column (pinned routes, :mod:`flowsched.traces`), a last column ``path`` gives the
        route each flow took as a tuple of node labels: its pinned one, or ECMP's
        (:meth:`Simulation.routes`).
    links : one row per link: ``link, capacity_Bps, bytes``.
    duration_s : first arrival to the last finish or termination.
    scheduler : the scheduler's name.
    stats : simulator counters (events, rate allocations; the packet model's counters
        for ``model="packet"``).
    model : ``"fluid"`` or ``"packet"``.
    packet : ``model="packet"`` only: the transport and the run's packet counters
        (``transport, events, data_packets, ack_packets, retransmissions, timeouts,
        fast_retransmits, drops_overflow, drops_evicted, drops_stale, ecn_marks, duplicates,
        ...``; ``drops_stale``: ASCC's packets sent while their flow was incomplete, dropped
        when one of the flow's complete-flow packets left a port before them);
        None for the fluid model.
    ports : ``model="packet"`` only: one row per output port (link): ``link,
        peak_queue_bytes, mean_queue_bytes, drops_overflow, drops_evicted, ecn_marks,
        drops_stale``.
    queue_samples : ``model="packet"`` with ``queue_sample_us``: one row per sample and
        sampled port: ``time_s`` (trace clock), ``link``, ``queue_bytes`` (bytes waiting).
    packet_flows : ``model="packet"`` only: one row per flow, in trace order: ``id``,
        ``timeouts`` (its retransmission and SYN timeouts), ``retransmissions`` (data packets
        its sender sent again), ``fast_retransmits`` (its entries into fast recovery),
        ``duplicates`` (duplicate data packets its receiver got), ``admitted_s`` (trace
        clock: when its destination admitted it; NaN without admission or if never),
        ``start_s`` (when its sender started: its arrival, or its grant's arrival with
        admission; NaN if never).
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    duration_s: float
    scheduler: str
    stats: dict[str, int] = field(default_factory=dict)
    model: str = "fluid"
    packet: dict[str, Any] | None = None
    ports: pd.DataFrame | None = None
    queue_samples: pd.DataFrame | None = None
    packet_flows: pd.DataFrame | None = None

    def summary(self, buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES, **kwargs: Any) -> Summary:
        """FCT/slowdown statistics overall and by size bucket, deadline hit ratio, FPT,
        utilization (see :func:`flowsched.metrics.summarize`)."""
        return summarize(self.flows, links=self.links, duration_s=self.duration_s, buckets=buckets, **kwargs)

    def compare(self, reference: Results | pd.DataFrame, **kwargs: Any) -> dict:
        """Share of flows faster/slower/equal than a reference run and mean gain/loss
        (SCHED_TCP Table 2; see :func:`flowsched.metrics.compare`)."""
        ref = reference.flows if isinstance(reference, Results) else reference
        return compare(self.flows, ref, **kwargs)


def default_pias_thresholds() -> list[float]:
    """PIAS's demotion thresholds for web search at load 0.8 (from the PIAS scripts; see
    flowsched/data/README.md): the default of the ``pias`` scheduler and baseline."""
    from flowsched.workloads import pias_thresholds

    return list(pias_thresholds("websearch", 0.8))


_default_pias_thresholds = default_pias_thresholds  # the old private name, kept for now

#: How the flows of one PIAS queue share it in the fluid model (``pias_sharing=``):
#: ``fifo`` (the default) serves them one after another by arrival; ``fair`` shares the
#: queue by max-min fairness, as PIAS's DCTCP senders do (docs/concepts/schedulers.md).
PIAS_SHARING = ("fifo", "fair")

#: How :class:`Simulation` allocates rates: ``auto`` lets the core pick (incremental
#: allocators where the scheduler has one), ``full`` recomputes every allocation from
#: scratch (the reference the incremental allocators are tested against; slower),
#: ``incremental`` insists on an incremental allocator (an error for a scheduler that has
#: none: racs, sdc, fair, external, gtcp:*). For ``las``, ``auto`` is its records fast path
#: (bit-identical to ``full``) on paths of up to 4 links, and on fabrics of fewer than 256
#: hosts on paths of up to 10 (else ``full`` there); on a larger fabric with longer paths
#: it is ``incremental``, an incremental allocator with groups of equal attained service. Every
#: choice gives the same rates up to rounding; completion times agree within 1e-9 on short
#: traces and statistically on long ones (docs/reliability.md).
ALLOCATORS = ("auto", "full", "incremental")


def _trace_columns(t: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """The trace's columns as the native simulators take them, positionally: arrival (on
    the simulator's clock, rebased by :func:`time_origin_s`: a no-op for a trace from
    :func:`prepare_trace`), src, dst, size, deadline, weight, data span, size known."""
    arrival = t["arrival_s"].to_numpy(np.float64)
    origin = time_origin_s(arrival)
    return (
        arrival - origin if origin else arrival,
        t["src"].to_numpy(np.int64),
        t["dst"].to_numpy(np.int64),
        t["size_bytes"].to_numpy(np.float64),
        t["deadline_s"].to_numpy(np.float64),
        t["weight"].to_numpy(np.float64),
        t["data_span_s"].to_numpy(np.float64),
        t["size_known"].to_numpy(bool),
    )


def _check_admission(admission: str | None, k: int | None, window: int | None) -> str | None:
    """The admission policy (``k`` alone means fifo), after checking ``admission``, ``k`` and
    ``window`` as both models take them."""
    if k is not None and admission is None:
        admission = "fifo"
    if admission is not None:
        if admission not in ADMISSION_POLICIES:
            raise ValueError(f"unknown admission policy {admission!r}; known: {', '.join(ADMISSION_POLICIES)}")
        if k is None or not is_finite_number(k) or int(k) != k or not 1 <= k < 2**63:
            raise ValueError(f"admission needs k (max active flows per destination), an integer >= 1, got {k!r}")
    if window is not None and (not is_finite_number(window) or int(window) != window or not 1 <= window < 2**63):
        raise ValueError(f"window (f) must be an integer >= 1, got {window!r}")
    if window is not None and admission is None:
        raise ValueError(f"window={window!r} is the admission window: it needs admission (k= and admission=)")
    return admission


def _check_run_options(scheduler: str, seed: Any, pias_thresholds_bytes: Any) -> int:
    """The seed (an integer in [0, 2**64), not a bool or a float), after refusing PIAS
    thresholds for a scheduler that has no PIAS queues (they would be ignored)."""
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a scheduler's name (a string, one of flowsched.SCHEDULERS), got "
                        f"{scheduler!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    if pias_thresholds_bytes is not None and not is_pias(scheduler):
        raise ValueError(f"pias_thresholds_bytes are the queues' thresholds of pias (and gtcp:pias); scheduler "
                         f"{scheduler!r} has no PIAS queues")
    return int(seed)


def is_pias(scheduler: str) -> bool:
    """Whether ``scheduler`` has PIAS queues (``pias``, ``gtcp:pias``): the ones that read
    PIAS thresholds and ``pias_sharing``."""
    return scheduler.strip().lower() in ("pias", "gtcp:pias")


def is_ga_transform(scheduler: str) -> bool:
    """Whether ``scheduler`` names the GA transform (``asrpt``, ``ga:<inner>``)."""
    name = scheduler.strip().lower()
    return name == "asrpt" or name.startswith("ga:")


def check_sharing(option: str, value: str | None, scheduler: str) -> str:
    """A sharing option checked (one of :data:`PIAS_SHARING`; None is ``fifo``) and, when
    given, allowed only for the schedulers it applies to: ``pias_sharing`` for ``pias`` and
    ``gtcp:pias``, ``incomplete_sharing`` for the GA transform (``asrpt``, ``ga:<inner>``)."""
    if value is None:
        return "fifo"
    if not isinstance(value, str) or value not in PIAS_SHARING:
        raise ValueError(f"unknown {option} {value!r}; known: {', '.join(PIAS_SHARING)}")
    name = scheduler.strip().lower()
    if option == "pias_sharing" and not is_pias(name):
        raise ValueError(f"pias_sharing={value!r} applies to the pias scheduler (and gtcp:pias), not {scheduler!r}")
    if option == "incomplete_sharing" and not is_ga_transform(name):
        raise ValueError(f"incomplete_sharing={value!r} applies to the GA transform (asrpt, ga:<inner>), "
                         f"not {scheduler!r}")
    return value


def _native_topology(topology: Topology, trace: pd.DataFrame) -> dict[str, Any]:
    """``topology.native_config()`` for the simulators of ``trace``: on a graph, a trace that
    pins routes (its ``path`` column) gets its ``topology`` as the native pinned routes."""
    config = topology.native_config()
    if PATH_COLUMN in trace.columns:
        paths = trace[PATH_COLUMN].to_numpy(dtype=object)
        if any(p is not None for p in paths):
            if not isinstance(topology, Graph):
                raise ValueError(f"the trace pins routes (its 'path' column), which only a Graph topology takes, "
                                 f"not a {type(topology).__name__}")
            config["topology"] = topology.pin(paths, trace["src"].to_numpy(np.int64), trace["dst"].to_numpy(np.int64))
    return config


def native_simulator(
    trace: pd.DataFrame,
    topology: Topology,
    scheduler: str = "srpt",
    *,
    admission: str | None = None,
    k: int | None = None,
    window: int | None = None,
    terminate_missed: bool = False,
    delay_us: float = 0.0,
    seed: int = 0,
    pias_thresholds_bytes: Sequence[float] | None = None,
    pias_sharing: str | None = None,
    incomplete_sharing: str | None = None,
    racs: dict | None = None,
    sdc: dict | None = None,
    max_interval_s: float | None = None,
    pause_on_flow_change: bool = False,
    allocator: str = "auto",
    force_full_recompute: bool | None = None,
) -> _fabric.Simulator:
    """The native simulator (``flowsched._fabric.Simulator``) of a trace from
    :func:`prepare_trace`, for drivers that need the core's own calls (the envs'
    ``run_until_ended``, external admission); :class:`Simulation` is the documented way.

    The options are :func:`simulate`'s, checked the same way, and the core's
    ``pause_on_flow_change`` (``step()`` also returns when the set of active flows changes;
    needed by ``run_until_ended``) and ``allocator`` (one of :data:`ALLOCATORS`;
    ``force_full_recompute=True``, its old spelling, is ``allocator="full"`` and warns).
    Its clock counts from
    :func:`time_origin_s` of the trace's arrivals (0 for a trace from :func:`prepare_trace`).
    """
    admission = _check_admission(admission, k, window)
    seed = _check_run_options(scheduler, seed, pias_thresholds_bytes)
    for name, given in (("racs", racs), ("sdc", sdc)):
        if given is not None and scheduler.strip().lower() != name:
            raise ValueError(f"{name}= holds the parameters of the {name} scheduler; scheduler {scheduler!r} "
                             "does not read them")
    if force_full_recompute is not None:
        warnings.warn("native_simulator(force_full_recompute=...) is deprecated: use allocator='full' or 'auto'",
                      DeprecationWarning, stacklevel=2)
        if allocator != "auto":
            raise ValueError("give allocator or force_full_recompute, not both")
        allocator = "full" if force_full_recompute else "auto"
    if allocator not in ALLOCATORS:
        raise ValueError(f"unknown allocator {allocator!r}; known: {', '.join(ALLOCATORS)}")
    check_number("delay_us", delay_us, low=0.0)
    sharing = check_sharing("pias_sharing", pias_sharing, scheduler)
    incomplete = check_sharing("incomplete_sharing", incomplete_sharing, scheduler)
    if pias_thresholds_bytes is None and scheduler.strip().lower().endswith("pias"):
        pias_thresholds_bytes = default_pias_thresholds()
    racs_p = {"w_min": 1.0, "w_max": 100.0, "a_per_byte": 1e-5, "update_interval_s": 300e-6}
    for name, given in (("racs", racs), ("sdc", sdc)):
        known = racs_p if name == "racs" else {"thresholds_bytes": 0, "weights": 0}
        unknown = set(given or {}) - set(known)
        if unknown:
            raise ValueError(f"unknown {name} parameter(s) {sorted(unknown)}; known: {sorted(known)}")
    racs_p.update(racs or {})
    sdc_p = {"thresholds_bytes": (50 * 1460.0, 100 * 1460.0), "weights": (10.0, 5.0, 1.0)}
    sdc_p.update(sdc or {})
    sdc_thresholds = _floats(sdc_p["thresholds_bytes"], 2, "sdc['thresholds_bytes']")
    sdc_weights = _floats(sdc_p["weights"], 3, "sdc['weights']")
    return _fabric.Simulator(
        *_trace_columns(trace),
        scheduler=scheduler,
        admission=admission,
        k=int(k or 0),
        window=int(window or 0),
        terminate_missed=check_flag("terminate_missed", terminate_missed),
        delay_per_hop_s=float(delay_us) * 1e-6,
        seed=int(seed),
        pias_thresholds_bytes=[float(x) for x in (pias_thresholds_bytes or [])],
        pias_sharing=sharing,
        incomplete_sharing=incomplete,
        racs=(float(racs_p["w_min"]), float(racs_p["w_max"]), float(racs_p["a_per_byte"]),
              float(racs_p["update_interval_s"])),
        sdc_thresholds_bytes=(sdc_thresholds[0], sdc_thresholds[1]),
        sdc_weights=(sdc_weights[0], sdc_weights[1], sdc_weights[2]),
        max_interval_s=max_interval_s,
        pause_on_flow_change=pause_on_flow_change,
        allocator=allocator,
        **_native_topology(topology, trace),
    )


_make_native = native_simulator  # the old private name, kept for now

#: The models :func:`simulate` runs: the fluid model (default) and the packet-level model
#: (docs/packet.md).
MODELS = ("fluid", "packet")
#: The packet model's transports (``transport=``; None picks the scheduler's default:
#: ``dctcp`` for ``ps`` and ``pias``, ``pfabric`` for the priority schedulers, ``sdc`` for
#: ``sdc``, ``racs`` for ``racs``; ``rcp`` runs with ``ps``).
TRANSPORTS = ("tcp", "dctcp", "pfabric", "rcp", "sdc", "racs")
#: Packet options that only some transports read (docs/packet.md's options table): given
#: for another transport they are refused, not ignored.
TRANSPORT_OPTIONS = {
    "ecn_threshold_bytes": ("dctcp",),  # the ports that mark ECN
    "init_cwnd_packets": ("tcp", "dctcp", "pfabric", "sdc"),  # rcp and racs send at rates, without a window
    "max_cwnd_packets": ("tcp", "dctcp", "pfabric"),
    "limited_transmit": ("tcp", "dctcp"),  # RFC 3042's recovery
}
#: The packet model's options (``**packet_options`` of :func:`simulate`) and their defaults;
#: None takes the transport's default (docs/packet.md gives each and its source).
PACKET_OPTIONS: dict[str, Any] = {
    "mss_bytes": 1460,
    "header_bytes": 40,
    "buffer_bytes": None,
    "ecn_threshold_bytes": 97_500,
    "ecn_threshold_packets": None,
    "buffer_packets": None,
    "queue_reserve_bytes": 0,
    "pias_port_ecn": False,
    "init_cwnd_packets": None,
    "max_cwnd_packets": None,
    "min_rto_s": None,
    "queue_sample_us": None,
    "sample_links": None,
    "max_events": None,
    "ack_every_segments": 1,
    "delayed_ack_timeout_s": 0.2,
    "handshake": False,
    "syn_timeout_s": 1.0,
    "clock_granularity_s": 0.0,
    "limited_transmit": False,
    "dupack_threshold": 3,
    "count_acked_segments": False,
    "fixed_rto": False,
    "sack": False,
    "prr": False,
    "dctcp_alpha_init": 1.0,
    "dctcp_min_cwnd_packets": 2.0,
    "dctcp_hold_in_cwr": True,
    "dctcp_ignore_dupack_ece": False,
    "load_balancing": "flow",
    "link_jitter_ns": 0.0,
    "tx_complete_events": False,
    "request_delay_us": 0.0,
    "grant_delay_us": 0.0,
    "ecn_marking": "enqueue",
    "fair_projection": "exact",
}
#: When the queues that mark ECN (transport ``dctcp``) mark a data packet
#: (``ecn_marking``): ``enqueue`` on arrival, when the bytes already waiting are at least
#: ``ecn_threshold_bytes`` (DCTCP's instantaneous queue, RFC 8257); ``sojourn`` on departure,
#: when the port sent at least that many bytes from its queue while the packet waited (the
#: aSCC paper's definition: in a priority queue it marks the packets that wait behind higher
#: priorities rather than those that arrive at a long queue and pass it); ``worst`` (the priority
#: schedulers' pFabric queues only) on each arrival at that many bytes waiting, the waiting data
#: packet of the largest priority value, whichever arrived (the aSCC authors' ns-2 switches).
ECN_MARKINGS = ("enqueue", "sojourn", "worst")
#: How the packet model spreads a flow's packets over the equal-cost paths between its hosts
#: (``load_balancing``): ``flow`` sends them all on the flow's ECMP path (the fluid model's
#: path); ``packet`` is packet spraying: every packet (data, ACK, SYN) takes an equal-cost path
#: picked by a hash of its flow, sequence number, send time and direction, as the aSCC paper's
#: code routes (the pFabric paper cites it). Flows with a pinned route keep it.
LOAD_BALANCINGS = ("flow", "packet")
#: How ``gtcp:fair`` on packets projects the flow that finishes next under tcp
#: (``fair_projection``): ``exact`` runs the trace under plain tcp first and uses each
#: flow's finish time there (SCHED_TCP's definition; twice the run time); ``window``
#: estimates it from each connection's bytes left over its congestion window.
FAIR_PROJECTIONS = ("exact", "window")


def native_packet_simulator(
    trace: pd.DataFrame,
    topology: Topology,
    scheduler: str = "srpt",
    *,
    transport: str | None = None,
    admission: str | None = None,
    k: int | None = None,
    window: int | None = None,
    terminate_missed: bool = False,
    delay_us: float = 0.0,
    seed: int = 0,
    pias_thresholds_bytes: Sequence[float] | None = None,
    pause_on_flow_change: bool = False,
    **packet_options: Any,
) -> _fabric.PacketSimulator:
    """The native packet-level simulator (``flowsched._fabric.PacketSimulator``) of a trace
    from :func:`prepare_trace`; :class:`Simulation` with ``model="packet"`` is the
    documented way. ``admission``, ``k``, ``window``, ``seed`` as :func:`simulate`
    (``external`` admission is refused); ``packet_options`` are the keys of
    :data:`PACKET_OPTIONS`. ``pause_on_flow_change``: the core pauses at every flow arrival
    and end (needed by the simulator's ``run_until_ended``, as :func:`native_simulator`'s)."""
    admission = _check_admission(admission, k, window)
    seed = _check_run_options(scheduler, seed, pias_thresholds_bytes)
    if admission == "external":
        raise ValueError("external admission on the packet model needs a driver that makes the decisions: "
                         "flowsched.envs.TokenSchedulingEnv(model='packet'); use fifo, edf, ssdf, lsdf, srpt or random")
    if not isinstance(topology, (BigSwitch, LeafSpine, Graph)):
        raise TypeError(f"topology must be a BigSwitch, LeafSpine or Graph, got {type(topology).__name__}")
    check_number("delay_us", delay_us, low=0.0)
    if pias_thresholds_bytes is None and scheduler.strip().lower() == "pias":
        pias_thresholds_bytes = default_pias_thresholds()
    sim = _fabric.PacketSimulator(
        *_trace_columns(trace),
        scheduler=scheduler,
        delay_per_hop_s=float(delay_us) * 1e-6,
        pias_thresholds_bytes=[float(x) for x in (pias_thresholds_bytes or [])],
        terminate_missed=check_flag("terminate_missed", terminate_missed),
        admission=admission,
        k=int(k or 0),
        window=int(window or 0),
        seed=int(seed),
        pause_on_flow_change=bool(pause_on_flow_change),
        packet=native_packet_options(topology, transport, admission is not None, **packet_options),
        **_native_topology(topology, trace),
    )
    for name, readers in TRANSPORT_OPTIONS.items():
        v = packet_options.get(name)
        if v is not None and v is not False and sim.transport not in readers:
            raise ValueError(f"{name} is read by the {', '.join(readers)} transport(s) only; this run's transport is "
                             f"{sim.transport!r}, which would ignore it")
    return sim


def native_packet_options(topology: Topology, transport: str | None, admission: bool,
                          **packet_options: Any) -> dict[str, Any]:
    """The native ``packet=`` dict of the packet model's options (``transport`` and the
    keys of :data:`PACKET_OPTIONS`, checked, in the units and names of the core's
    ``PacketConfig``); ``admission``: whether the run has destination admission (the
    request and grant delays need it). Shared by :func:`simulate` and the envs
    (``TokenSchedulingEnv(model="packet")``, ...)."""
    unknown = set(packet_options) - set(PACKET_OPTIONS)
    if unknown:
        raise TypeError(f"unknown packet option(s) {sorted(unknown)}; known: {', '.join(PACKET_OPTIONS)}")
    o = {**PACKET_OPTIONS, **packet_options}
    if transport is not None and transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; known: {', '.join(TRANSPORTS)}")

    def integer(name: str, low: int, bits: int = 63) -> int | None:
        """Option ``name`` as an integer >= ``low`` below 2**bits (the core's field: 32 for
        counts of packets and bytes per packet), or None if not given."""
        v = o[name]
        if v is None:
            return None
        if not (is_finite_number(v) and int(v) == v and low <= v < 2**bits):
            raise ValueError(f"{name} must be an integer >= {low} (below 2**{bits}), got {v!r}")
        return int(v)

    def real(name: str) -> float | None:
        """Option ``name`` as a finite number (not a bool or a string), or None if not given."""
        return None if o[name] is None else check_number(name, o[name])

    sample_s = None
    if o["queue_sample_us"] is not None:
        q = real("queue_sample_us")
        if not (q is not None and q > 0):
            raise ValueError(f"queue_sample_us must be > 0, got {o['queue_sample_us']!r}")
        sample_s = q * 1e-6
    sample_ports = None
    if o["sample_links"] is not None:
        if sample_s is None:
            raise ValueError("sample_links needs queue_sample_us (how often to sample)")
        names = topology_link_names(topology)
        index = {n: i for i, n in enumerate(names)}
        sample_ports = []
        if isinstance(o["sample_links"], (str, bytes)) or not hasattr(o["sample_links"], "__iter__"):
            raise ValueError(f"sample_links must be a list of link names or indices, got {o['sample_links']!r}")
        for x in o["sample_links"]:
            if isinstance(x, str):
                if x not in index:
                    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
                    raise ValueError(f"unknown link {x!r} in sample_links; this topology's links are {shown} "
                                     "(Results.links['link'])")
                sample_ports.append(index[x])
            elif not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer)) and 0 <= x < len(names):
                sample_ports.append(int(x))
            else:
                raise ValueError(f"sample_links: {x!r} is neither a link name nor a link index below {len(names)}")
            if sample_ports[-1] in sample_ports[:-1]:
                raise ValueError(f"sample_links names link {names[sample_ports[-1]]!r} twice")
    reals = {name: real(name) for name in ("init_cwnd_packets", "max_cwnd_packets", "min_rto_s")}
    for flag in ("handshake", "limited_transmit", "tx_complete_events", "count_acked_segments", "fixed_rto",
                 "sack", "prr", "pias_port_ecn", "dctcp_hold_in_cwr", "dctcp_ignore_dupack_ece"):
        if not isinstance(o[flag], (bool, np.bool_)):
            raise ValueError(f"{flag} must be True or False, got {o[flag]!r}")

    def finite(name: str, scale: float = 1.0) -> float:
        """Option ``name`` as a finite number (not a bool), times ``scale`` (to seconds, for a time)."""
        return check_number(name, o[name]) * scale

    if o["ecn_marking"] not in ECN_MARKINGS:
        raise ValueError(f"unknown ecn_marking {o['ecn_marking']!r}; known: {', '.join(ECN_MARKINGS)}")
    if o["load_balancing"] not in LOAD_BALANCINGS:
        raise ValueError(f"unknown load_balancing {o['load_balancing']!r}; known: {', '.join(LOAD_BALANCINGS)}")
    if o["fair_projection"] not in FAIR_PROJECTIONS:
        raise ValueError(f"unknown fair_projection {o['fair_projection']!r}; known: {', '.join(FAIR_PROJECTIONS)}")
    alpha0 = finite("dctcp_alpha_init")
    if not 0.0 <= alpha0 <= 1.0:
        raise ValueError(f"dctcp_alpha_init must be in [0, 1], got {o['dctcp_alpha_init']!r}")
    min_cwnd = finite("dctcp_min_cwnd_packets")
    if min_cwnd < 0:
        raise ValueError(f"dctcp_min_cwnd_packets must be >= 0, got {o['dctcp_min_cwnd_packets']!r}")
    jitter_s = finite("link_jitter_ns", 1e-9)
    if not 0.0 <= jitter_s <= 1e-3:
        raise ValueError(f"link_jitter_ns must be in [0, 1e6] ns (at most 1 ms), got {o['link_jitter_ns']!r}")
    delays = {name: finite(name, 1e-6) for name in ("request_delay_us", "grant_delay_us")}
    for name, v in delays.items():
        if v > 0 and not admission:
            raise ValueError(f"{name} is a delay of destination admission: give admission (and k) too")
    return dict(
        transport=transport,
        mss_bytes=integer("mss_bytes", 1, 32) or 0,
        header_bytes=integer("header_bytes", 1, 32) or 0,
        buffer_bytes=integer("buffer_bytes", 1),
        ecn_threshold_bytes=integer("ecn_threshold_bytes", 1) or 0,
        ecn_threshold_packets=integer("ecn_threshold_packets", 1, 32),
        buffer_packets=integer("buffer_packets", 1, 32),
        queue_reserve_bytes=integer("queue_reserve_bytes", 0) or 0,
        pias_port_ecn=bool(o["pias_port_ecn"]),
        init_cwnd_packets=reals["init_cwnd_packets"],
        max_cwnd_packets=reals["max_cwnd_packets"],
        min_rto_s=reals["min_rto_s"],
        queue_sample_s=sample_s,
        sample_ports=sample_ports,
        max_events=integer("max_events", 1),
        ack_every_segments=integer("ack_every_segments", 1, 32) or 1,
        delayed_ack_timeout_s=finite("delayed_ack_timeout_s"),
        handshake=bool(o["handshake"]),
        syn_timeout_s=finite("syn_timeout_s"),
        clock_granularity_s=finite("clock_granularity_s"),
        limited_transmit=bool(o["limited_transmit"]),
        dupack_threshold=3 if o["dupack_threshold"] is None else integer("dupack_threshold", 0, 32),
        count_acked_segments=bool(o["count_acked_segments"]),
        fixed_rto=bool(o["fixed_rto"]),
        sack=bool(o["sack"]),
        prr=bool(o["prr"]),
        dctcp_alpha_init=alpha0,
        dctcp_min_cwnd_packets=min_cwnd,
        dctcp_hold_in_cwr=bool(o["dctcp_hold_in_cwr"]),
        dctcp_ignore_dupack_ece=bool(o["dctcp_ignore_dupack_ece"]),
        load_balancing=str(o["load_balancing"]),
        link_jitter_s=jitter_s,
        tx_complete_events=bool(o["tx_complete_events"]),
        request_delay_s=delays["request_delay_us"],
        grant_delay_s=delays["grant_delay_us"],
        ecn_marking=str(o["ecn_marking"]),
        fair_projection=str(o["fair_projection"]),
    )


def topology_link_names(topology: Topology) -> list[str]:
    """The names of a topology's links in link order (``up<h>``, ``down<h>``, and on a
    leaf-spine ``tor<t>-spine<s>``, ``spine<s>-tor<t>``; a graph's own ``link_names``), as
    ``Results.links["link"]``."""
    if isinstance(topology, Graph):
        return list(topology.link_names)
    n = topology.n_hosts
    names = [f"up{h}" for h in range(n)] + [f"down{h}" for h in range(n)]
    cfg = topology.native_config()
    if cfg["topology"] == "leafspine":
        tors, spines = int(cfg["tors"]), int(cfg["spines"])
        names += [f"tor{t}-spine{s}" for t in range(tors) for s in range(spines)]
        names += [f"spine{s}-tor{t}" for s in range(spines) for t in range(tors)]
    return names


def _floats(values, n: int, name: str) -> list[float]:
    """``values`` as ``n`` floats, or a ValueError naming the parameter."""
    out = [float(x) for x in values]
    if len(out) != n:
        raise ValueError(f"{name} must have {n} values, got {len(out)}: {values!r}")
    return out


#: Relative resolution of a flow's FCT (a few float64 steps of the simulated time at its
#: end, over its ideal FCT) above which :func:`simulate` warns.
FCT_RESOLUTION = 1e-3


def time_origin_s(arrival_s: np.ndarray | pd.Series) -> float:
    """Where the simulator's clock starts for a trace: the whole second at or below its first
    arrival (0.0 for a trace that starts before 1 s).

    Simulated time is ``arrival_s - time_origin_s``: the subtraction is exact for every valid
    arrival (at most ``MAX_ARRIVAL_S`` = 1e15 < 2**53, so the origin is a float64 integer
    and a multiple of each arrival's step when the step is <= 1 s, and Sterbenz's lemma covers
    the arrivals within a factor 2 of it), so shifting a trace by a whole number of seconds
    changes no simulated time, and times stay as fine-grained as the trace's span allows
    instead of the float64 step of epoch seconds (2.4e-7 s at 1.7e9 s, 1.2e-4 s at 1e12 s).
    """
    a = np.asarray(arrival_s, dtype=np.float64)
    return float(np.floor(a.min())) if a.size else 0.0


def prepare_trace(
    trace: pd.DataFrame | str | os.PathLike[str], topology: Topology | None = None, link_gbps: float = 10.0
) -> tuple[pd.DataFrame, Topology]:
    """The validated trace, rebased to the simulator's clock, and the topology.

    The returned trace's ``arrival_s`` is ``arrival_s - time_origin_s`` (exact) and its
    ``attrs["time_origin_s"]`` the origin: :class:`Simulation` adds it back to
    ``arrival_s`` and ``finish_s``. With no topology, a big switch at ``link_gbps`` with as
    many hosts as the trace names (largest id + 1, at most ``MAX_INFERRED_HOST_ID`` + 1
    this way). Warns (:class:`~flowsched.traces.TimeResolutionWarning`) when some flow's
    FCT cannot be resolved to :data:`FCT_RESOLUTION` in float64. A ``path`` column (pinned
    routes) is checked against the topology, which must then be a graph.
    """
    if topology is not None and not isinstance(topology, (BigSwitch, LeafSpine, Graph)):
        raise TypeError(f"topology must be a BigSwitch, LeafSpine or Graph, got {type(topology).__name__}")
    tr = _load_trace(trace, infer_hosts=topology is None, topology=topology,
                    pins_refused=None if topology is not None else
                    "routes are pinned on a Graph topology only, and none was given (the default is a big switch)")
    if topology is None:
        topology = BigSwitch(max(int(max(tr["src"].max(), tr["dst"].max())) + 1, 2), link_gbps)
    origin = time_origin_s(tr["arrival_s"])
    if origin != 0.0:
        tr["arrival_s"] = tr["arrival_s"].to_numpy() - origin
    tr.attrs["time_origin_s"] = origin
    _warn_fct_resolution(tr, topology)
    return tr, topology


def prepare_columns(
    columns: Mapping[str, Any], topology: Topology, *, validate: bool = True
) -> tuple[dict[str, np.ndarray], float]:
    """:func:`prepare_trace` for a trace held as columns
    (:func:`flowsched.traces.validate_columns`), on a given topology: the validated
    columns, ``arrival_s`` rebased to the simulator's clock, and the time origin. The
    same checks and warnings, without a DataFrame (what the envs use for the trace they
    draw at each autoreset).

    ``validate=False`` is for columns that a generator of this package built valid by
    construction (``poisson_all_to_all_columns(..., validate=False)``): the optional
    columns missing get their defaults (:data:`flowsched.traces.OPTIONAL_DEFAULTS`) and an
    unknown column still raises, but the per-row checks of
    :func:`~flowsched.traces.validate_columns` are skipped (they cost the switch env more
    than drawing its episode). The core checks every field again when it takes the flows
    (finite, positive sizes and weights, hosts in range, ``src != dst``), so a bad value
    still raises, naming its row and column, only with the core's message."""
    if not isinstance(topology, (BigSwitch, LeafSpine, Graph)):
        raise TypeError(f"topology must be a BigSwitch, LeafSpine or Graph, got {type(topology).__name__}")
    cols = validate_columns(columns, topology=topology) if validate else _default_columns(columns)
    origin = time_origin_s(cols["arrival_s"])
    if origin != 0.0:
        cols["arrival_s"] = cols["arrival_s"] - origin
    _warn_fct_resolution(cols, topology)
    return cols, origin


def _default_columns(columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The columns of :data:`TRACE_COLUMNS`, in that order, as numpy arrays (not checked),
    the optional ones missing at their defaults; an unknown column raises."""
    unknown = sorted(str(c) for c in columns if c not in TRACE_COLUMNS)
    if unknown:
        raise TraceError(f"trace: unknown column(s) {unknown}; allowed columns are {list(TRACE_COLUMNS)}")
    n = len(columns["arrival_s"])
    out: dict[str, np.ndarray] = {}
    for c in TRACE_COLUMNS:
        if c in columns:
            out[c] = np.asarray(columns[c])
        else:
            out[c] = np.arange(n, dtype=np.int64) if c == "id" else np.full(n, OPTIONAL_DEFAULTS[c])
    return out


_prepare = prepare_trace  # the old private name, kept for now


def _caller_stacklevel() -> int:
    """``warnings.warn``'s stacklevel, from its caller, of the first frame outside this module."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename == __file__:
        f, level = f.f_back, level + 1  # type: ignore[assignment]
    return level


def _warn_fct_resolution(tr: pd.DataFrame | Mapping[str, np.ndarray], topology: Topology) -> None:
    """Warn when some flow's FCT cannot be resolved to FCT_RESOLUTION (relative) in float64.

    A flow's FCT is at least ``max(size / min(src, dst host rate), data_span_s)`` (its ideal
    time), and its finish time is known to a few float64 steps of the simulated time then
    (the core counts a flow finished within 8 steps of ``t``). A tiny flow late in a long
    trace (1 B at 10 Gbps is 0.8 ns; the step at 1e5 s is 15 ps) gets a coarse FCT.
    """
    rate = np.asarray(topology.native_config()["host_gbps"], dtype=np.float64) * (1e9 / 8.0)
    src, dst, size = np.asarray(tr["src"]), np.asarray(tr["dst"]), np.asarray(tr["size_bytes"])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # unchecked columns or rates so slow that
        # a flow never ends (a bad row): the core refuses it next
        ideal = np.maximum(size / np.minimum(rate[src], rate[dst]), np.asarray(tr["data_span_s"]))
        t = np.asarray(tr["arrival_s"]) + ideal
        rel = 8.0 * np.spacing(t) / ideal
    bad = np.flatnonzero((rel > FCT_RESOLUTION) & (ideal > 0) & np.isfinite(rel))
    if bad.size == 0:
        return
    w = int(bad[np.argmax(rel[bad])])
    warnings.warn(
        f"{bad.size} flow(s) are short against the float64 step of the simulated time they run at: their fct_s "
        f"and slowdown are only resolved to {rel[w]:.2g} (relative) at worst, above FCT_RESOLUTION = "
        f"{FCT_RESOLUTION:g}: row {w}, {float(size[w])!r} bytes, ideal FCT {ideal[w]:.3g} s, at "
        f"simulated time {t[w]:.6g} s (counted from the first arrival's whole second), where a float64 step is "
        f"{np.spacing(t[w]):.3g} s",
        TimeResolutionWarning,
        stacklevel=_caller_stacklevel(),
    )


def flow_table(trace: pd.DataFrame, outcome: Mapping[str, Any], time_origin_s: float = 0.0) -> pd.DataFrame:
    """The per-flow table of :attr:`Results.flows` (columns and dtypes :data:`FLOW_COLUMNS`)
    from a trace and the core's per-flow outcome, in trace order.

    Parameters
    ----------
    trace : the flows on the simulator's clock, with ``id, arrival_s, src, dst, size_bytes,
        deadline_s, weight`` (a trace from :func:`prepare_trace`).
    outcome : per-flow arrays on the simulator's clock, as ``_fabric.Simulator.results()``
        gives them: ``finish_s, fct_s, ideal_fct_s, terminated, bytes_sent, path_delay_s``.
    time_origin_s : added back to ``arrival_s`` and ``finish_s`` (see :func:`time_origin_s`).

    ``slowdown`` and ``deadline_met`` come from :func:`flowsched.metrics.slowdown` and
    :func:`flowsched.metrics.deadline_met` (the one deadline test, with its tolerance).
    """
    origin = float(time_origin_s)
    flows = trace[["id", "arrival_s", "src", "dst", "size_bytes", "deadline_s", "weight"]].copy()
    flows["arrival_s"] = flows["arrival_s"].to_numpy() + origin
    flows["finish_s"] = np.asarray(outcome["finish_s"], np.float64) + origin
    flows["fct_s"] = np.asarray(outcome["fct_s"], np.float64)
    flows["ideal_fct_s"] = np.asarray(outcome["ideal_fct_s"], np.float64)
    flows["slowdown"] = slowdown(flows["fct_s"], flows["ideal_fct_s"])
    terminated = np.asarray(outcome["terminated"], bool)
    flows["deadline_met"] = deadline_met(flows["fct_s"], flows["deadline_s"], terminated)
    flows["terminated"] = terminated
    flows["bytes_sent"] = np.asarray(outcome["bytes_sent"], np.float64)
    flows["path_delay_s"] = np.asarray(outcome["path_delay_s"], np.float64)
    return flows


def path_links(topology: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """How many links each flow's path crosses: 2 on a big switch and within a leaf-spine
    ToR, 4 across ToRs, the ECMP path's on a :class:`~flowsched.topology.Graph` (flow i is
    trace row i) (the core's fixed path delay is ``delay_us * 1e-6`` times this)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if isinstance(topology, Graph):
        return topology.path_links(src, dst)
    cfg = topology.native_config()
    if cfg["topology"] == "leafspine":
        h = int(cfg["hosts_per_tor"])
        return np.where(src // h == dst // h, 2, 4)
    return np.full(src.shape, 2, np.int64)


def env_flow_table(episode: Mapping[str, Any], topology: Topology, delay_us: float,
                   time_origin_s: float = 0.0) -> pd.DataFrame:
    """:attr:`Results.flows` (:data:`FLOW_COLUMNS`) of an env core's episode, for the envs'
    ``results()``: ``episode`` holds the per-flow arrays the env bindings give (``arrival_s,
    src, dst, size_bytes, deadline_s, finish_s, fct_s, ideal_fct_s, terminated``, on the
    simulator's clock) and, where they give them, ``id, weight, bytes_sent, path_delay_s``.
    Otherwise ``id`` is the row, ``weight`` 1, ``path_delay_s`` ``delay_us * 1e-6`` times
    :func:`path_links` plus a graph's own link delays (what the core computes) and
    ``bytes_sent`` the size for a finished flow and NaN (not known) for the others.
    ``time_origin_s`` (the env's fixed trace's :func:`time_origin_s`) is added back to
    ``arrival_s`` and ``finish_s``, so the times are on the trace's clock."""
    n = len(episode["arrival_s"])
    size = np.asarray(episode["size_bytes"], np.float64)
    src, dst = np.asarray(episode["src"], np.int64), np.asarray(episode["dst"], np.int64)
    trace = pd.DataFrame({
        "id": np.asarray(episode["id"], np.int64) if "id" in episode else np.arange(n, dtype=np.int64),
        "arrival_s": np.asarray(episode["arrival_s"], np.float64), "src": src, "dst": dst, "size_bytes": size,
        "deadline_s": np.asarray(episode["deadline_s"], np.float64),
        "weight": np.asarray(episode["weight"], np.float64) if "weight" in episode else np.ones(n),
    })
    outcome = dict(episode)
    if "path_delay_s" not in outcome:
        if isinstance(topology, Graph):  # per-link delays of its own, and path lengths by ECMP choice
            outcome["path_delay_s"] = topology.path_delay_s(src, dst, float(delay_us))
        else:
            outcome["path_delay_s"] = float(delay_us) * 1e-6 * path_links(topology, src, dst).astype(np.float64)
    if "bytes_sent" not in outcome:
        done = np.isfinite(np.asarray(episode["finish_s"], np.float64)) & ~np.asarray(episode["terminated"], bool)
        outcome["bytes_sent"] = np.where(done, size, np.nan)
    return flow_table(trace, outcome, time_origin_s)


class Simulation:
    """A simulation of a trace on a fabric under a scheduler, advanced step by step.

    ``Simulation(trace, topology, scheduler, **options)`` takes :func:`simulate`'s
    arguments (and ``allocator``); :meth:`step` advances simulated time, :meth:`active`
    and :meth:`rates` show the flows in flight, :meth:`set_pias_thresholds` changes PIAS's
    thresholds between steps, :meth:`run` goes to the end and :meth:`results` gives the
    :class:`Results` that :func:`simulate` returns (``simulate`` is ``Simulation(...).run()``
    then ``results()``: the same results, bit for bit).

    Times (``until``, :attr:`now`) are on the trace's clock, as ``arrival_s`` and
    ``finish_s`` in the results. The clock starts at :attr:`time_origin_s`, the whole second
    at or below the first arrival. Stepping stops the fluid model at ``until`` and resumes
    it from there, so a run stepped at many intermediate times can differ from :meth:`run`
    in the last bits of its finish times; except ``racs``, whose weights are recomputed at
    every event and a pause is one: stepping it takes more samples of its weight function
    (``racs={"update_interval_s": ...}`` bounds the time between them), so its finish times
    move by the difference that sampling makes (1.8% on a 2-flow case with a 1 s interval
    and one step).

    Parameters
    ----------
    trace, topology, scheduler, admission, k, window, terminate_missed, delay_us, seed,
    pias_thresholds_bytes, pias_sharing, incomplete_sharing, racs, sdc, max_interval_s, link_gbps, model,
    transport, packet_options : as :func:`simulate` (whose keywords are this class's and ``progress``;
        a test keeps the two lists equal).
    allocator : one of :data:`ALLOCATORS`: ``"auto"`` (the default), ``"full"`` (every
        allocation recomputed from scratch: the reference, slower) or ``"incremental"``.

    Examples
    --------
    >>> import pandas as pd, flowsched
    >>> tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1],
    ...                    "size_bytes": [1.25e6, 2.5e6]})
    >>> sim = flowsched.Simulation(tr, flowsched.BigSwitch(2, 10), "srpt")
    >>> sim.step(0.0005)                  # half of the small flow is through
    >>> sim.now
    0.0005
    >>> sim.active()[["id", "bytes_sent", "remaining_bytes", "rate_Bps"]]
       id  bytes_sent  remaining_bytes      rate_Bps
    0   0    625000.0         625000.0  1.250000e+09
    1   1         0.0        2500000.0  0.000000e+00
    >>> sim.run()
    >>> sim.done, sim.results().flows["fct_s"].round(6).tolist()
    (True, [0.001, 0.003])
    """

    def __init__(
        self,
        trace: pd.DataFrame | str | os.PathLike[str],
        topology: Topology | None = None,
        scheduler: str = "srpt",
        *,
        admission: str | None = None,
        k: int | None = None,
        window: int | None = None,
        terminate_missed: bool = False,
        delay_us: float = 0.0,
        seed: int = 0,
        pias_thresholds_bytes: Sequence[float] | None = None,
        pias_sharing: str | None = None,
        incomplete_sharing: str | None = None,
        racs: dict | None = None,
        sdc: dict | None = None,
        max_interval_s: float | None = None,
        link_gbps: float | None = None,
        allocator: str = "auto",
        model: str = "fluid",
        transport: str | None = None,
        **packet_options: Any,
    ) -> None:
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
        if model == "fluid" and (transport is not None or packet_options):
            given = (["transport"] if transport is not None else []) + sorted(packet_options)
            unknown = set(packet_options) - set(PACKET_OPTIONS)
            if unknown:
                raise TypeError(f"unknown option(s) {sorted(unknown)}")
            raise ValueError(f"{', '.join(given)}: options of the packet model; pass model='packet'")
        if model == "packet":
            fluid_only = {"racs": racs, "sdc": sdc, "max_interval_s": max_interval_s, "pias_sharing": pias_sharing,
                          "incomplete_sharing": incomplete_sharing}
            given = [name for name, v in fluid_only.items() if v is not None]
            if allocator != "auto":
                given.append("allocator")
            if given:
                raise ValueError(f"{', '.join(given)}: not supported by the packet model (racs, sdc, "
                                 "max_interval_s, pias_sharing, incomplete_sharing and allocator are fluid-model "
                                 "options; the packet model's queues are shared by its transport; see "
                                 "docs/packet.md)")
        if admission == "external":
            raise ValueError("admission='external' needs a driver that makes the decisions (flowsched.envs."
                             "TokenSchedulingEnv, or native_simulator(...) with step()/admit())")
        if allocator not in ALLOCATORS:
            raise ValueError(f"unknown allocator {allocator!r}; known: {', '.join(ALLOCATORS)}")
        if topology is not None and link_gbps is not None:
            raise ValueError("link_gbps sets the rate of the big switch built for a trace given without a topology; "
                             "with a topology, its links' rates are the ones given to it")
        tr, topo = prepare_trace(trace, topology, 10.0 if link_gbps is None else link_gbps)
        self._native: Any
        if model == "packet":
            self._native = native_packet_simulator(
                tr, topo, scheduler, transport=transport, admission=admission, k=k, window=window,
                terminate_missed=terminate_missed, delay_us=delay_us, seed=seed,
                pias_thresholds_bytes=pias_thresholds_bytes, **packet_options,
            )
        else:
            self._native = native_simulator(
                tr, topo, scheduler, admission=admission, k=k, window=window, terminate_missed=terminate_missed,
                delay_us=delay_us, seed=seed, pias_thresholds_bytes=pias_thresholds_bytes,
                pias_sharing=pias_sharing, incomplete_sharing=incomplete_sharing, racs=racs, sdc=sdc,
                max_interval_s=max_interval_s, allocator=allocator,
            )
        #: ``"fluid"`` or ``"packet"``.
        self.model: str = model
        #: The packet model's transport (the given one or the scheduler's default); None for the fluid model.
        self.transport: str | None = self._native.transport if model == "packet" else None
        self._trace = tr
        self._routes: np.ndarray | None = None
        self._done = False
        self._admission = admission is not None or k is not None
        self._t_first = float(tr["arrival_s"].min()) if len(tr) else 0.0  # on the simulator's clock
        #: The fabric (the one given, or the big switch built for the trace).
        self.topology: Topology = topo
        #: The scheduler's name, as given.
        self.scheduler: str = scheduler
        #: Allocator choice (see :data:`ALLOCATORS`).
        self.allocator: str = allocator

    @property
    def time_origin_s(self) -> float:
        """Where the simulator's clock starts on the trace's clock (:func:`time_origin_s`)."""
        return float(self._trace.attrs.get("time_origin_s", 0.0))

    @property
    def trace(self) -> pd.DataFrame:
        """The validated trace, on the trace's clock (a copy)."""
        tr = self._trace.copy()
        tr["arrival_s"] = tr["arrival_s"].to_numpy() + self.time_origin_s
        return tr

    @property
    def now(self) -> float:
        """Simulated time, on the trace's clock."""
        return self._native.now + self.time_origin_s

    @property
    def done(self) -> bool:
        """Whether every flow has finished or was terminated (no event is left)."""
        return self._done

    def step(self, until: float) -> None:
        """Advance simulated time to ``until`` (on the trace's clock), handling every event
        at or before it; :attr:`now` is then ``until``, or the time of the last event if the
        simulation ended before (:attr:`done`). ``until`` may not lie before :attr:`now`."""
        if number_kind(until) not in ("integer", "float"):  # a string "1" was read as 1 s
            raise TypeError(f"until must be a time in seconds (a number), got {until!r}")
        until = float(until)
        if np.isnan(until):
            raise ValueError("until must be a time, got nan")
        if until < self.now:
            raise ValueError(f"until = {until!r} s lies before now = {self.now!r} s: a simulation only goes forward")
        if self._done:
            return
        if self.model == "packet":
            self._done = bool(self._native.step(until - self.time_origin_s))
            return
        kind, _ = self._native.step(until - self.time_origin_s)
        self._done = kind == "done"

    def run(self, progress: bool | None = None, *, file: IO[str] | None = None) -> None:
        """Advance to the end: every flow finished or terminated.

        ``progress`` shows flows finished, simulated time and events/s on ``file`` (default
        stderr; see :mod:`flowsched.progress`): ``None`` (the default) only when stdout and
        stderr are terminals and once the run has lasted 2 s, ``True`` always, ``False``
        never. The results are the same bit for bit either way: with a display, the run
        pauses only at arrival times, where it has an event anyway, and after the last
        arrival between two event times (the display keeps moving while the run drains)."""
        if self._done:
            return
        bar = _progress.bar(len(self._trace), f"simulate {self.scheduler}", "flow", progress=progress, file=file)
        if bar is None:
            self._native.run()
        elif self.model == "packet":
            try:
                self._run_shown_packet(bar)
            finally:
                bar.close()
        else:
            try:
                self._run_shown(bar)
            finally:
                bar.close()
        self._done = True

    def _run_shown(self, bar: Any) -> None:
        """:meth:`run` in pieces that end at arrival times (an event of the run anyway, so
        pausing there changes nothing: ``step`` returns after the events at ``until``
        without moving the fluid model), sized to about 0.1 s of wall time each; after the
        last arrival, in pieces of a number of event times (the native ``step``'s
        ``max_times``: it pauses between two event times, which changes nothing either)."""
        native = self._native
        arrivals = self._trace["arrival_s"].to_numpy(np.float64)  # the simulator's clock
        if len(arrivals) > 1 and not (arrivals[1:] >= arrivals[:-1]).all():
            arrivals = np.sort(arrivals)
        n = len(arrivals)
        i = int(np.searchsorted(arrivals, native.now, side="right"))  # arrivals handled already
        chunk, shown = 64, 0
        ev0, t0 = native.stats()["events"], time.perf_counter()
        count_waiting, counted_at = self._admission, -np.inf

        def show(arrived: int, *, force: bool = False) -> None:
            nonlocal shown, counted_at
            if count_waiting:  # admission holds flows back: count the ended ones, at most once a second
                if not force and time.perf_counter() - counted_at < 1.0:
                    return
                counted_at = time.perf_counter()
                res = native.results()
                ended = int(np.count_nonzero(np.isfinite(res["finish_s"]) | res["terminated"]))
            else:
                ended = arrived - len(native.active())
            bar.update(ended - shown)
            shown = ended
            el = time.perf_counter() - t0
            bar.set_postfix_str(f"{native.now - self._t_first:.4g} s simulated, "
                                f"{(native.stats()['events'] - ev0) / max(el, 1e-9):,.0f} events/s", refresh=False)

        kind = ""
        while i < n:
            j = min(i + chunk, n) - 1
            ts = time.perf_counter()
            kind, _ = native.step(float(arrivals[j]))
            dt = time.perf_counter() - ts
            i = j + 1
            if kind == "done":
                break
            chunk = max(16, min(4 * chunk, int(chunk * 0.1 / max(dt, 1e-4))))
            show(i)
        times = 256  # the flows still active after the last arrival
        while kind != "done":
            ts = time.perf_counter()
            kind, _ = native.step(np.inf, max_times=times)
            if kind != "paused":
                break
            times = max(16, min(4 * times, int(times * 0.1 / max(time.perf_counter() - ts, 1e-4))))
            show(n)
        if kind != "done":
            native.run()  # what stopped the run (an admission decision nobody makes) raises there
        show(n, force=True)
        bar.update(n - shown)

    def _run_shown_packet(self, bar: Any) -> None:
        """:meth:`run` of the packet model in pieces of simulated time, ending at arrival
        times and then, after the last arrival, at times spaced for about 0.1 s of wall
        time each (pausing changes nothing: the model only handles events up to the pause)."""
        native = self._native
        arrivals = np.sort(self._trace["arrival_s"].to_numpy(np.float64))
        i, chunk, shown = int(np.searchsorted(arrivals, native.now, side="right")), 64, 0
        t0, ev0 = time.perf_counter(), native.stats()["events"]

        def show() -> None:
            nonlocal shown
            res = native.results()
            ended = int(np.count_nonzero(np.isfinite(res["finish_s"]) | res["terminated"]))
            bar.update(ended - shown)
            shown = ended
            bar.set_postfix_str(f"{native.now - self._t_first:.4g} s simulated, "
                                f"{(native.stats()['events'] - ev0) / max(time.perf_counter() - t0, 1e-9):,.0f} "
                                "events/s", refresh=False)

        while i < len(arrivals) and not native.done:
            j = min(i + chunk, len(arrivals)) - 1
            ts = time.perf_counter()
            native.step(float(arrivals[j]))
            chunk = max(16, min(4 * chunk, int(chunk * 0.1 / max(time.perf_counter() - ts, 1e-4))))
            i = j + 1
            show()
        span = 1e-4  # simulated seconds per piece after the last arrival, resized to ~0.1 s of wall time
        while not native.done:
            ts = time.perf_counter()
            native.step(native.now + span)
            span = min(4 * span, span * 0.1 / max(time.perf_counter() - ts, 1e-4))
            show()
        native.run()  # closes the ports' statistics (a no-op when the run has ended)
        bar.update(len(arrivals) - shown)

    def _fluid_only(self, what: str) -> None:
        if self.model != "fluid":
            raise ValueError(f"{what} gives the fluid model's rates; the packet model has no per-flow rate "
                             "(active() gives each sender's window, SRTT and window_rate_Bps; see also "
                             "Results.flows and Results.packet)")

    def active(self) -> pd.DataFrame:
        """The flows active now (admitted, not finished), in trace order (the index is the
        trace row, as in :attr:`Results.flows`): ``id, src, dst, size_bytes, bytes_sent,
        remaining_bytes`` (bytes), then what the model knows of each flow's speed.

        - Fluid model: ``rate_Bps``, the flow's rate now (bytes/s; 0 for a flow the scheduler
          holds back). ``bytes_sent`` counts the bytes through the flow's path.
        - Packet model (a flow is active from the moment its sender starts, handshake
          included, until its last byte arrives or its deadline terminates it):
          ``bytes_sent`` counts the payload delivered in order to the receiver;
          ``cwnd_packets`` (the congestion window, in packets of ``mss_bytes``),
          ``in_flight_packets`` (sent and not yet acknowledged), ``srtt_s`` (RFC 6298's
          smoothed RTT; before the first sample, the path's unloaded RTT; pFabric keeps
          that one) and ``window_rate_Bps`` = cwnd x MSS / SRTT, the rate the window
          allows per round trip: an estimate, not a measured throughput (a flow that
          waits behind others in a priority queue still has its window)."""
        native = self._native
        res = native.results()
        if self.model == "packet":
            started = ~np.isnan(np.asarray(res["start_s"], np.float64))
            ended = ~np.isnan(np.asarray(res["finish_s"], np.float64)) | np.asarray(res["terminated"], bool)
            rows = np.flatnonzero(started & ~ended)
        else:
            rows = np.sort(native.active())
        sent = np.asarray(res["bytes_sent"], np.float64)[rows]
        tr = self._trace
        size = tr["size_bytes"].to_numpy()[rows]
        cols: dict[str, Any] = {
            "id": tr["id"].to_numpy()[rows],
            "src": tr["src"].to_numpy()[rows],
            "dst": tr["dst"].to_numpy()[rows],
            "size_bytes": size,
            "bytes_sent": sent,
            "remaining_bytes": size - sent,
        }
        if self.model == "packet":
            w = native.windows()
            cwnd = np.asarray(w["cwnd_packets"], np.float64)[rows]
            srtt = np.asarray(w["srtt_s"], np.float64)[rows]
            cols["cwnd_packets"] = cwnd
            cols["in_flight_packets"] = np.asarray(w["in_flight_packets"], np.int64)[rows]
            cols["srtt_s"] = srtt
            cols["window_rate_Bps"] = cwnd * native.mss_bytes / srtt
        else:
            cols["rate_Bps"] = native.rates()[rows]
        return pd.DataFrame(cols, index=pd.Index(rows, name=None))

    def rates(self) -> np.ndarray:
        """The current rate of every flow in trace order (bytes/s; 0 for flows not active now).
        Fluid model only."""
        self._fluid_only("rates()")
        return np.asarray(self._native.rates(), np.float64)

    def set_scores(self, scores: Sequence[float] | np.ndarray, rows: Sequence[int] | np.ndarray | None = None) -> None:
        """Set the flows' priorities for the ``external`` scheduler, from now on (lower
        first; flows with equal scores share fairly in the fluid model, and in the packet
        model their packets leave in the order they reached the queue): one finite score
        per flow in trace order, or per trace row in ``rows``. Both models: in the fluid model the
        allocation is recomputed with them at once, in the packet model the packets sent
        from now on carry them as their priority tags. Flows never given a score have 0.

        This is how a hand-written policy drives the fabric's priorities outside an
        environment (the switch env does the same with its agent's scores)."""
        if self.scheduler != "external":
            raise ValueError(f"set_scores needs the 'external' scheduler, not {self.scheduler!r}")
        s = np.asarray(scores, np.float64)
        n = len(self._trace)
        r = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows)
        if s.ndim != 1 or r.ndim != 1 or len(s) != len(r):
            what = f"{n} flows" if rows is None else f"{len(r)} rows"
            raise ValueError(f"set_scores needs one score per flow ({what}), got an array of shape {s.shape}")
        if r.dtype.kind not in "iu" or (len(r) and (r.min() < 0 or r.max() >= n)):
            raise ValueError(f"rows must be trace row numbers in [0, {n}), got {r.tolist()[:10]}")
        if not np.isfinite(s).all():
            bad = int(np.flatnonzero(~np.isfinite(s))[0])
            raise ValueError(f"scores must be finite: score {bad} is {s[bad]}")
        self._native.set_scores(r.astype(np.int64), s)

    def set_pias_thresholds(self, thresholds_bytes: Sequence[float]) -> None:
        """Replace the PIAS demotion thresholds from now on (non-empty, positive, strictly
        increasing bytes). In the fluid model every active flow moves at once to the queue
        its bytes sent give under the new thresholds (up or down; under any allocator), and
        the number of queues may change; in the packet model (as many thresholds as
        before) the packets sent from now on are tagged with them. Refused for a scheduler
        without PIAS queues (the thresholds would be ignored)."""
        if not is_pias(self.scheduler):
            raise ValueError(f"set_pias_thresholds: scheduler {self.scheduler!r} has no PIAS queues")
        self._native.set_pias_thresholds([float(x) for x in thresholds_bytes])

    def stats(self) -> dict[str, int]:
        """Simulator counters so far (events, rate allocations)."""
        return dict(self._native.stats())

    def results(self) -> Results:
        """The :class:`Results` so far: the same as :func:`simulate`'s once :attr:`done`
        (before, flows not yet finished have NaN ``finish_s`` and ``fct_s``, and those whose
        deadline has not passed yet an NA ``deadline_met``: undecided, which the summary's
        ``deadline_flows`` and hit ratio leave out)."""
        if self.model == "packet":
            res = _collect_packet(self._trace, self._native, self.scheduler)
        else:
            res = _collect(self._trace, self._native, self.scheduler)
        if not self._done:
            f = res.flows
            deadline = f["deadline_s"].to_numpy(np.float64)
            with np.errstate(invalid="ignore"):
                open_ = (self.now - f["arrival_s"].to_numpy(np.float64)) <= deadline * (1 + DEADLINE_RTOL)
            undecided = f["fct_s"].isna().to_numpy() & ~f["terminated"].to_numpy(bool) & open_
            met = f["deadline_met"].array.copy()
            met[undecided] = pd.NA
            f["deadline_met"] = met
        if PATH_COLUMN in self._trace.columns:
            res.flows[PATH_COLUMN] = self.routes()
        return res

    def routes(self) -> np.ndarray:
        """Each flow's route, in trace order, as a tuple of node labels: the pinned one (the
        trace's ``path``) or the path ECMP gave it, on a graph; None on a big switch or a
        leaf-spine. :attr:`Results.flows` has it as its ``path`` column when the trace has
        a ``path`` column (the trace's own routes are known without a run).

        Fed back as the trace's ``path`` column, these routes reproduce the run bit for bit,
        except on a graph with parallel links (a networkx multigraph): there the node labels
        do not say which of the parallel links ECMP gave a flow, and a route that crosses
        them is refused as a pin (an error naming the two nodes) rather than resolved to one
        of the links."""
        if self._routes is None:
            tr, topo = self._trace, self.topology
            pinned = (tr[PATH_COLUMN].to_numpy(dtype=object) if PATH_COLUMN in tr.columns
                      else np.full(len(tr), None, dtype=object))
            mine = np.fromiter((p is not None for p in pinned), bool, len(pinned))
            if isinstance(topo, Graph) and not mine.all():
                out = topo.ecmp_routes(tr["src"].to_numpy(np.int64), tr["dst"].to_numpy(np.int64))
                out[mine] = pinned[mine]
            else:
                out = pinned.copy()
            self._routes = out
        return self._routes.copy()

    def __repr__(self) -> str:
        return (f"Simulation({len(self._trace)} flows, {type(self.topology).__name__}, {self.scheduler!r}, "
                f"now={self.now!r}, done={self._done})")


def simulate(
    trace: pd.DataFrame | str | os.PathLike[str],
    topology: Topology | None = None,
    scheduler: str = "srpt",
    *,
    admission: str | None = None,
    k: int | None = None,
    window: int | None = None,
    terminate_missed: bool = False,
    delay_us: float = 0.0,
    seed: int = 0,
    pias_thresholds_bytes: Sequence[float] | None = None,
    pias_sharing: str | None = None,
    incomplete_sharing: str | None = None,
    racs: dict | None = None,
    sdc: dict | None = None,
    max_interval_s: float | None = None,
    link_gbps: float | None = None,
    allocator: str = "auto",
    progress: bool | None = None,
    model: str = "fluid",
    transport: str | None = None,
    **packet_options: Any,
) -> Results:
    """Simulate a trace on a fabric under a scheduler.

    Parameters
    ----------
    trace : a trace DataFrame (see :mod:`flowsched.traces`) or a path to a CSV/Parquet trace.
    topology : :class:`BigSwitch`, :class:`LeafSpine` or a :class:`~flowsched.topology.Graph`;
        default a big switch with as many hosts as the trace names, at ``link_gbps`` (10 Gbps
        unless given; with a topology, ``link_gbps`` is refused: the topology sets the rates).
    scheduler : one of :data:`SCHEDULERS` (``fifo, ps, wps, srpt, asrpt, ga:<inner>, las,
        pias, edf, ssdf, lsdf, fair, racs, sdc, random, gtcp:<inner>``).
    admission, k, window : destination admission (Artemis token requests): at most ``k``
        active flows per destination, the next admitted by ``admission`` (fifo, edf,
        ssdf, lsdf, srpt, random) among the first ``window`` waiting (all if None).
        Giving ``k`` alone means fifo admission.
    terminate_missed : terminate flows whose deadline passed (they count as missed).
    delay_us : fixed delay per link of the path, added to every FCT.
    seed : seeds ``random`` priorities and random admission (an integer in [0, 2**64)).
    pias_thresholds_bytes : PIAS demotion thresholds (default: web search, load 0.8,
        from the PIAS scripts; see flowsched/data/README.md).
    pias_sharing : fluid model, ``pias`` and ``gtcp:pias`` only: how the flows of one PIAS
        queue share it, one of :data:`PIAS_SHARING`: ``"fifo"`` (None, the default: one
        after another, by arrival) or ``"fair"`` (max-min fair sharing inside a queue, as
        under PIAS's DCTCP; strict priority between queues either way; with ``"fair"`` an
        empty threshold list is one queue, ``ps``). ``"fair"`` runs on the full
        recomputation.
    incomplete_sharing : fluid model, the GA transform (``asrpt``, ``ga:<inner>``) only:
        how its incomplete flows (data still arriving, ``data_span_s``), below every
        complete flow, share their class, one of :data:`PIAS_SHARING`: ``"fifo"`` (None,
        the default: one after another by arrival, the paper's Algorithm 1) or ``"fair"``
        (max-min fair sharing among them, each at most at its data rate, as the senders of
        ASCC's one first-in-first-out queue for incomplete flows share it). ``"fair"`` runs
        on the full recomputation.
    racs : ``{"w_min", "w_max", "a_per_byte", "update_interval_s"}`` for ``racs``.
    sdc : ``{"thresholds_bytes": (r_A, r_B), "weights": (w_A, w_B, w_C)}`` for ``sdc``.
    max_interval_s : re-evaluate rates at least this often (default: only at events; at least
        1e-9 s).
    allocator : fluid model only: one of :data:`ALLOCATORS` (:class:`Simulation`); every
        choice gives the same allocation up to rounding.
    progress : show progress on stderr (:meth:`Simulation.run`): None (default) for
        terminals only and after 2 s, True always, False never; the results are the same.
    model : ``"fluid"`` (default) or ``"packet"``: the packet-level model (docs/packet.md),
        which reads the same trace, topology and scheduler and returns the same
        :class:`Results` plus ``Results.packet``, ``Results.ports`` and, with
        ``queue_sample_us``, ``Results.queue_samples``. Its ``fct_s`` runs from arrival to
        the last byte's arrival at the receiver (propagation and queueing included once);
        ``ideal_fct_s`` and ``slowdown`` keep the fluid definitions. Destination admission
        as in the fluid model (not ``external``); data spans as in the fluid model (not
        under ``gtcp:*``); not with the options ``racs=``, ``sdc=`` (the schedulers ``racs``
        and ``sdc`` run their own transports), ``max_interval_s``, ``pias_sharing``,
        ``incomplete_sharing``, ``allocator``, or weights other than 1.
    transport : packet model only: one of :data:`TRANSPORTS` (default: ``dctcp`` for
        ``ps`` and ``pias``, ``pfabric`` for ``fifo, srpt, asrpt, las, edf``, ``sdc`` for
        ``sdc``, ``racs`` for ``racs``; ``rcp``, the Rate Control Protocol, with ``ps`` on request: docs/packet.md).
    packet_options : packet model only: the keys of :data:`PACKET_OPTIONS` (each default
        and its source: docs/packet.md).

    Returns
    -------
    Results

    Examples
    --------
    >>> import pandas as pd, flowsched
    >>> tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1],
    ...                    "size_bytes": [1.25e6, 2.5e6]})
    >>> r = flowsched.simulate(tr, flowsched.BigSwitch(2, 10), "srpt")
    >>> r.flows["fct_s"].round(6).tolist()   # 1 ms alone, then 2 ms more
    [0.001, 0.003]
    """
    if admission == "external":
        raise ValueError("admission='external' needs a driver that makes the decisions (flowsched.envs."
                         "TokenSchedulingEnv, or _fabric.Simulator step()/admit()); simulate() runs to the end")
    sim = Simulation(
        trace, topology, scheduler, admission=admission, k=k, window=window, terminate_missed=terminate_missed,
        delay_us=delay_us, seed=seed, pias_thresholds_bytes=pias_thresholds_bytes, pias_sharing=pias_sharing,
        incomplete_sharing=incomplete_sharing, racs=racs, sdc=sdc, max_interval_s=max_interval_s, link_gbps=link_gbps,
        allocator=allocator, model=model, transport=transport, **packet_options,
    )
    sim.run(progress=progress)
    return sim.results()


def _collect(tr: pd.DataFrame, sim: _fabric.Simulator, scheduler: str) -> Results:
    """Results in the trace's own clock: ``tr`` is rebased (see :func:`prepare_trace`) and its
    ``attrs["time_origin_s"]`` is added back to ``arrival_s`` (exactly) and ``finish_s``;
    ``fct_s``, ``slowdown`` and ``duration_s`` come from the rebased clock."""
    res = sim.results()
    flows = flow_table(tr, res, float(tr.attrs.get("time_origin_s", 0.0)))
    names, cap, carried = sim.links()
    links = pd.DataFrame({"link": names, "capacity_Bps": cap, "bytes": carried})
    # The run lasts until its last finish or termination: a terminated flow sends until
    # its deadline can no longer be met, at arrival + deadline - path delay.
    t_term = tr["arrival_s"].to_numpy() + np.maximum(flows["deadline_s"].to_numpy() - res["path_delay_s"], 0.0)
    ends = np.where(res["terminated"], t_term, res["finish_s"])
    end = np.nanmax(ends) if np.isfinite(ends).any() else float(tr["arrival_s"].max())
    duration = float(end - tr["arrival_s"].min())
    return Results(flows=flows, links=links, duration_s=duration, scheduler=scheduler, stats=dict(sim.stats()))


def _collect_packet(tr: pd.DataFrame, sim: _fabric.PacketSimulator, scheduler: str) -> Results:
    """:func:`_collect` for the packet model: ``fct_s`` comes from the core as finish - arrival
    (every propagation and queueing delay is in it already, nothing is added), and the
    packet counters, per-port queues and queue samples come with it."""
    res = sim.results()
    origin = float(tr.attrs.get("time_origin_s", 0.0))
    flows = flow_table(tr, res, origin)
    names, cap, carried = sim.links()
    links = pd.DataFrame({"link": names, "capacity_Bps": cap, "bytes": carried})
    arrival = tr["arrival_s"].to_numpy()
    t_term = arrival + flows["deadline_s"].to_numpy()  # a terminated flow stops at its deadline
    ends = np.where(res["terminated"], t_term, res["finish_s"])
    end = np.nanmax(ends) if np.isfinite(ends).any() else float(arrival.max())
    duration = float(end - arrival.min())
    stats = dict(sim.stats())
    ps = sim.port_stats()
    ports = pd.DataFrame({k: ps[k] for k in ("link", "peak_queue_bytes", "mean_queue_bytes", "drops_overflow",
                                             "drops_evicted", "ecn_marks", "drops_stale")})
    t, sampled, values = sim.queue_samples()
    samples = None
    if len(sampled):
        k = len(sampled)
        samples = pd.DataFrame({
            "time_s": np.repeat(np.asarray(t, np.float64) + origin, k),
            "link": np.asarray(names, dtype=object)[np.tile(np.asarray(sampled, np.int64), len(t))],
            "queue_bytes": np.asarray(values, np.int64),
        })
    packet = {"transport": sim.transport, **stats}
    packet_flows = pd.DataFrame({
        "id": tr["id"].to_numpy(),
        "timeouts": np.asarray(res["timeouts"], np.int64),
        "retransmissions": np.asarray(res["retransmissions"], np.int64),
        "fast_retransmits": np.asarray(res["fast_retransmits"], np.int64),
        "duplicates": np.asarray(res["duplicates"], np.int64),
        "admitted_s": np.asarray(res["admitted_s"], np.float64) + origin,
        "start_s": np.asarray(res["start_s"], np.float64) + origin,
    })
    return Results(flows=flows, links=links, duration_s=duration, scheduler=scheduler, stats=stats, model="packet",
                   packet=packet, ports=ports, queue_samples=samples, packet_flows=packet_flows)
