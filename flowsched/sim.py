"""The Python entry point of the fabric simulator: :func:`simulate` and :class:`Results`."""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from flowsched import _fabric
from flowsched.metrics import DEFAULT_BUCKETS_BYTES, Summary, compare, summarize
from flowsched.topology import BigSwitch, LeafSpine, Topology
from flowsched.traces import TimeResolutionWarning, read_trace, validate_trace

#: Native schedulers (``gtcp:<inner>`` takes any priority scheduler as inner).
SCHEDULERS: tuple[str, ...] = tuple(_fabric.scheduler_names())
ADMISSION_POLICIES = ("fifo", "edf", "ssdf", "lsdf", "srpt", "random", "external")


@dataclass
class Results:
    """What a simulation produced.

    Attributes
    ----------
    flows : one row per flow, in trace order, with ``id, arrival_s, src, dst, size_bytes,
        deadline_s, weight, finish_s, fct_s, ideal_fct_s, slowdown, deadline_met,
        terminated, bytes_sent``. ``arrival_s`` and ``finish_s`` are on the trace's clock
        (``finish_s`` rounded to the float64 step there: 2.4e-7 s at 1.7e9 s epoch seconds).
        ``fct_s`` is finish - arrival plus the fixed path delay, computed on the simulator's
        clock, which starts at the whole second at or below the first arrival
        (:func:`time_origin_s`), so it does not depend on where the trace's clock starts;
        ``ideal_fct_s`` the FCT alone on an idle fabric given the data availability;
        ``deadline_met`` is NA for flows without a deadline.
    links : one row per link: ``link, capacity_Bps, bytes``.
    duration_s : first arrival to the last finish or termination.
    scheduler : the scheduler's name.
    stats : simulator counters (events, rate allocations).
    """

    flows: pd.DataFrame
    links: pd.DataFrame
    duration_s: float
    scheduler: str
    stats: dict[str, int] = field(default_factory=dict)

    def summary(self, buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES, **kwargs: Any) -> Summary:
        """FCT/slowdown statistics overall and by size bucket, deadline hit ratio, FPT,
        utilization (see :func:`flowsched.metrics.summarize`)."""
        return summarize(self.flows, links=self.links, duration_s=self.duration_s, buckets=buckets, **kwargs)

    def compare(self, reference: Results | pd.DataFrame, **kwargs: Any) -> dict:
        """Share of flows faster/slower/equal than a reference run and mean gain/loss
        (SCHED_TCP Table 2; see :func:`flowsched.metrics.compare`)."""
        ref = reference.flows if isinstance(reference, Results) else reference
        return compare(self.flows, ref, **kwargs)


def _default_pias_thresholds() -> list[float]:
    from flowsched.workloads import pias_thresholds

    return list(pias_thresholds("websearch", 0.8))


def _make_native(
    trace: pd.DataFrame,
    topology: Topology,
    scheduler: str,
    *,
    admission: str | None,
    k: int | None,
    window: int | None,
    terminate_missed: bool,
    delay_us: float,
    seed: int,
    pias_thresholds_bytes: Sequence[float] | None,
    racs: dict | None,
    sdc: dict | None,
    max_interval_s: float | None,
    pause_on_flow_change: bool = False,
    force_full_recompute: bool = False,
) -> _fabric.Simulator:
    """The native simulator of a validated trace. Its clock counts from
    :func:`time_origin_s` of the trace's arrivals (0 for a trace from :func:`_prepare`)."""
    if k is not None and admission is None:
        admission = "fifo"
    if admission is not None:
        if admission not in ADMISSION_POLICIES:
            raise ValueError(f"unknown admission policy {admission!r}; known: {', '.join(ADMISSION_POLICIES)}")
        if k is None or int(k) != k or k < 1:
            raise ValueError(f"admission needs k (max active flows per destination) >= 1, got {k!r}")
    if window is not None and (int(window) != window or window < 1):
        raise ValueError(f"window (f) must be an integer >= 1, got {window!r}")
    if not (np.isfinite(delay_us) and delay_us >= 0):
        raise ValueError(f"delay_us must be >= 0, got {delay_us!r}")
    if pias_thresholds_bytes is None and scheduler.strip().lower().endswith("pias"):
        pias_thresholds_bytes = _default_pias_thresholds()
    racs_p = {"w_min": 1.0, "w_max": 100.0, "a_per_byte": 1e-5, "update_interval_s": 300e-6}
    for name, given in (("racs", racs), ("sdc", sdc)):
        known = racs_p if name == "racs" else {"thresholds_bytes": 0, "weights": 0}
        unknown = set(given or {}) - set(known)
        if unknown:
            raise ValueError(f"unknown {name} parameter(s) {sorted(unknown)}; known: {sorted(known)}")
    racs_p.update(racs or {})
    sdc_p = {"thresholds_bytes": (50 * 1460.0, 100 * 1460.0), "weights": (10.0, 5.0, 1.0)}
    sdc_p.update(sdc or {})
    t = trace
    arrival = t["arrival_s"].to_numpy(np.float64)
    origin = time_origin_s(arrival)  # 0 for a trace from _prepare (already rebased)
    return _fabric.Simulator(
        arrival - origin if origin else arrival,
        t["src"].to_numpy(np.int64),
        t["dst"].to_numpy(np.int64),
        t["size_bytes"].to_numpy(np.float64),
        t["deadline_s"].to_numpy(np.float64),
        t["weight"].to_numpy(np.float64),
        t["data_span_s"].to_numpy(np.float64),
        t["size_known"].to_numpy(bool),
        scheduler=scheduler,
        admission=admission,
        k=int(k or 0),
        window=int(window or 0),
        terminate_missed=bool(terminate_missed),
        delay_per_hop_s=float(delay_us) * 1e-6,
        seed=int(seed),
        pias_thresholds_bytes=[float(x) for x in (pias_thresholds_bytes or [])],
        racs=tuple(float(racs_p[x]) for x in ("w_min", "w_max", "a_per_byte", "update_interval_s")),
        sdc_thresholds_bytes=tuple(float(x) for x in sdc_p["thresholds_bytes"]),
        sdc_weights=tuple(float(x) for x in sdc_p["weights"]),
        max_interval_s=max_interval_s,
        pause_on_flow_change=pause_on_flow_change,
        force_full_recompute=force_full_recompute,
        **topology._native(),
    )


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


def _prepare(trace: pd.DataFrame | str | os.PathLike[str], topology: Topology | None, link_gbps: float):
    """The validated trace, rebased to the simulator's clock, and the topology.

    The returned trace's ``arrival_s`` is ``arrival_s - time_origin_s`` (exact) and its
    ``attrs["time_origin_s"]`` the origin: :func:`simulate` adds it back to ``arrival_s`` and
    ``finish_s``. With no topology, a big switch at ``link_gbps`` with as many hosts as the
    trace names (largest id + 1, at most ``MAX_INFERRED_HOST_ID`` + 1 this way).
    """
    if topology is not None and not isinstance(topology, (BigSwitch, LeafSpine)):
        raise TypeError(f"topology must be a BigSwitch or LeafSpine, got {type(topology).__name__}")
    hosts = None if topology is None else topology.n_hosts
    if isinstance(trace, (str, os.PathLike)):
        tr = read_trace(trace, hosts=hosts, infer_hosts=topology is None)
    else:
        tr = validate_trace(trace, hosts=hosts, infer_hosts=topology is None)
    if topology is None:
        topology = BigSwitch(max(int(max(tr["src"].max(), tr["dst"].max())) + 1, 2), link_gbps)
    origin = time_origin_s(tr["arrival_s"])
    if origin != 0.0:
        tr["arrival_s"] = tr["arrival_s"].to_numpy() - origin
    tr.attrs["time_origin_s"] = origin
    _warn_fct_resolution(tr, topology)
    return tr, topology


def _warn_fct_resolution(tr: pd.DataFrame, topology: Topology) -> None:
    """Warn when some flow's FCT cannot be resolved to FCT_RESOLUTION (relative) in float64.

    A flow's FCT is at least ``max(size / min(src, dst host rate), data_span_s)`` (its ideal
    time), and its finish time is known to a few float64 steps of the simulated time then
    (the core counts a flow finished within 8 steps of ``t``). A tiny flow late in a long
    trace (1 B at 10 Gbps is 0.8 ns; the step at 1e5 s is 15 ps) gets a coarse FCT.
    """
    rate = np.asarray(topology._native()["host_gbps"], dtype=np.float64) * (1e9 / 8.0)
    src, dst = tr["src"].to_numpy(), tr["dst"].to_numpy()
    ideal = np.maximum(tr["size_bytes"].to_numpy() / np.minimum(rate[src], rate[dst]), tr["data_span_s"].to_numpy())
    t = tr["arrival_s"].to_numpy() + ideal
    rel = 8.0 * np.spacing(t) / ideal
    bad = np.flatnonzero(rel > FCT_RESOLUTION)
    if bad.size == 0:
        return
    w = int(bad[np.argmax(rel[bad])])
    warnings.warn(
        f"{bad.size} flow(s) are short against the float64 step of the simulated time they run at: their fct_s "
        f"and slowdown are only resolved to {rel[w]:.2g} (relative) at worst, above FCT_RESOLUTION = "
        f"{FCT_RESOLUTION:g}: row {w}, {float(tr['size_bytes'].iloc[w])!r} bytes, ideal FCT {ideal[w]:.3g} s, at "
        f"simulated time {t[w]:.6g} s (counted from the first arrival's whole second), where a float64 step is "
        f"{np.spacing(t[w]):.3g} s",
        TimeResolutionWarning,
        stacklevel=4,
    )


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
    racs: dict | None = None,
    sdc: dict | None = None,
    max_interval_s: float | None = None,
    link_gbps: float = 10.0,
) -> Results:
    """Simulate a trace on a fabric under a scheduler.

    Parameters
    ----------
    trace : a trace DataFrame (see :mod:`flowsched.traces`) or a path to a CSV/Parquet trace.
    topology : :class:`BigSwitch` or :class:`LeafSpine`; default a big switch with as
        many hosts as the trace names, at ``link_gbps``.
    scheduler : one of :data:`SCHEDULERS` (``fifo, ps, wps, srpt, asrpt, ga:<inner>, las,
        pias, edf, ssdf, lsdf, fair, racs, sdc, random, gtcp:<inner>``).
    admission, k, window : destination admission (Artemis token requests): at most ``k``
        active flows per destination, the next admitted by ``admission`` (fifo, edf,
        ssdf, lsdf, srpt, random) among the first ``window`` waiting (all if None).
        Giving ``k`` alone means fifo admission.
    terminate_missed : terminate flows whose deadline passed (they count as missed).
    delay_us : fixed delay per link of the path, added to every FCT.
    seed : seeds ``random`` priorities and random admission.
    pias_thresholds_bytes : PIAS demotion thresholds (default: web search, load 0.8,
        from the PIAS scripts; see flowsched/data/README.md).
    racs : ``{"w_min", "w_max", "a_per_byte", "update_interval_s"}`` for ``racs``.
    sdc : ``{"thresholds_bytes": (r_A, r_B), "weights": (w_A, w_B, w_C)}`` for ``sdc``.
    max_interval_s : re-evaluate rates at least this often (default: only at events).

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
    tr, topo = _prepare(trace, topology, link_gbps)
    sim = _make_native(
        tr, topo, scheduler, admission=admission, k=k, window=window, terminate_missed=terminate_missed,
        delay_us=delay_us, seed=seed, pias_thresholds_bytes=pias_thresholds_bytes, racs=racs, sdc=sdc,
        max_interval_s=max_interval_s,
    )
    sim.run()
    return _collect(tr, sim, scheduler)


def _collect(tr: pd.DataFrame, sim: _fabric.Simulator, scheduler: str) -> Results:
    """Results in the trace's own clock: ``tr`` is rebased (see :func:`_prepare`) and its
    ``attrs["time_origin_s"]`` is added back to ``arrival_s`` (exactly) and ``finish_s``;
    ``fct_s``, ``slowdown`` and ``duration_s`` come from the rebased clock."""
    res = sim.results()
    origin = float(tr.attrs.get("time_origin_s", 0.0))
    flows = tr[["id", "arrival_s", "src", "dst", "size_bytes", "deadline_s", "weight"]].copy()
    flows["arrival_s"] = flows["arrival_s"].to_numpy() + origin
    flows["finish_s"] = res["finish_s"] + origin
    flows["fct_s"] = res["fct_s"]
    flows["ideal_fct_s"] = res["ideal_fct_s"]
    flows["slowdown"] = flows["fct_s"] / flows["ideal_fct_s"]
    has_dl = np.isfinite(flows["deadline_s"].to_numpy())
    met = np.asarray(flows["fct_s"] <= flows["deadline_s"] * (1 + 1e-9), dtype=bool) & ~res["terminated"]
    flows["deadline_met"] = pd.array(np.where(has_dl, met, False), dtype="boolean")
    flows.loc[~has_dl, "deadline_met"] = pd.NA
    flows["terminated"] = res["terminated"]
    flows["bytes_sent"] = res["bytes_sent"]
    flows["path_delay_s"] = res["path_delay_s"]
    names, cap, carried = sim.links()
    links = pd.DataFrame({"link": names, "capacity_Bps": cap, "bytes": carried})
    # The run lasts until its last finish or termination: a terminated flow sends until
    # its deadline can no longer be met, at arrival + deadline - path delay.
    t_term = tr["arrival_s"].to_numpy() + np.maximum(flows["deadline_s"].to_numpy() - res["path_delay_s"], 0.0)
    ends = np.where(res["terminated"], t_term, res["finish_s"])
    end = np.nanmax(ends) if np.isfinite(ends).any() else float(tr["arrival_s"].max())
    duration = float(end - tr["arrival_s"].min())
    return Results(flows=flows, links=links, duration_s=duration, scheduler=scheduler, stats=dict(sim.stats()))
