"""Flow-level metrics over simulator results.

Two entry points:

* :func:`summarize` turns one run's per-flow results (and optionally its
  per-link byte counters) into a :class:`Summary`: counts, FCT and slowdown
  statistics, deadline hit ratio, the aSCC paper's FPT / WFPT, the mean
  number of active flows, throughput and link utilization, overall and per
  flow-size bucket.
* :func:`compare` reproduces the statistics of SCHED_TCP's Table 2 (share of
  flows finishing faster / slower / equal than under a reference policy, mean
  gain and mean loss), overall and per bucket.

Input frames
------------
``flows`` has one row per flow, as returned by the simulator:

=================  ========  ==============================================
column             dtype     meaning
=================  ========  ==============================================
``id``             int64     flow id (used by :func:`compare` to match)
``arrival_s``      float64   arrival time on the trace clock
``size_bytes``     float64   flow size
``deadline_s``     float64   relative deadline; NaN = no deadline
``weight``         float64   flow weight (WFPT)
``finish_s``       float64   completion time; NaN when terminated
``fct_s``          float64   finish - arrival + path delay; NaN if terminated
``slowdown``       float64   fct / ideal fct; NaN if terminated
``deadline_met``   boolean   pandas nullable; NA = no deadline (or undecided)
``terminated``     bool      flow was dropped for missing its deadline
``path_delay_s``   float64   optional: the fixed path delay in ``fct_s``
=================  ========  ==============================================

``links`` has columns ``link`` (name), ``capacity_Bps`` (bytes/s) and
``bytes`` (bytes carried during the run).

Conventions
-----------
* Sizes use decimal units: 1 KB = 1000 B, 1 MB = 10**6 B.
* Buckets are left-closed: with edges ``(e1, e2)`` the buckets are
  ``[0, e1)``, ``[e1, e2)`` and ``[e2, inf)``; a flow of exactly ``e1`` bytes
  goes in the middle bucket.
* A flow is *finished* when it is not terminated and has a finite
  ``finish_s``. FCT, slowdown, FPT and WFPT statistics are over finished
  flows only.
* Quantiles are computed with :func:`numpy.quantile` and its default
  ``method="linear"`` (Hyndman and Fan type 7, the same as
  ``pandas.Series.quantile``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "DEADLINE_RTOL",
    "DEFAULT_BUCKETS_BYTES",
    "DEFAULT_QUANTILES",
    "FLOW_COLUMNS_SUMMARY",
    "FLOW_COLUMNS_COMPARE",
    "LINK_COLUMNS",
    "OVERALL_LABEL",
    "Summary",
    "assign_buckets",
    "bucket_labels",
    "compare",
    "deadline_met",
    "format_bytes",
    "quantile_label",
    "slowdown",
    "summarize",
]

DEFAULT_BUCKETS_BYTES: tuple[int, ...] = (100_000, 10_000_000)
"""Default size-bucket edges in bytes: "< 100 KB", "100 KB - 10 MB", ">= 10 MB"."""

DEFAULT_QUANTILES: tuple[float, ...] = (0.5, 0.95, 0.99, 0.999)
"""Default FCT / slowdown quantiles (p50, p95, p99, p99.9)."""

DEADLINE_RTOL: float = 1e-9
"""Relative tolerance of the deadline test (:func:`deadline_met`): a flow meets its
deadline when ``fct_s <= deadline_s * (1 + DEADLINE_RTOL)``, so a finish a few float64
steps late (rates summed in another order) still counts. The Rust core's envs count
deadlines the same way (``fabric/core/src/env.rs``), so a per-flow ``deadline_met`` and
an env's ``info["deadlines_met"]`` agree."""

OVERALL_LABEL = "all"
"""Row label of the all-flows row in :meth:`Summary.to_frame`."""

FLOW_COLUMNS_SUMMARY: tuple[str, ...] = (
    "arrival_s",
    "size_bytes",
    "deadline_s",
    "weight",
    "finish_s",
    "fct_s",
    "slowdown",
    "deadline_met",
    "terminated",
)
"""Columns of ``flows`` that :func:`summarize` reads."""

FLOW_COLUMNS_COMPARE: tuple[str, ...] = ("id", "size_bytes", "fct_s", "terminated")
"""Columns of ``flows`` and ``reference`` that :func:`compare` reads."""

LINK_COLUMNS: tuple[str, ...] = ("link", "capacity_Bps", "bytes")
"""Columns of ``links`` that :func:`summarize` reads."""

_BYTE_UNITS: tuple[tuple[float, str], ...] = (
    (1e12, "TB"),
    (1e9, "GB"),
    (1e6, "MB"),
    (1e3, "KB"),
)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise ``ValueError`` naming the columns of ``columns`` missing from ``frame``."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} is missing required column(s): {', '.join(missing)} "
            f"(has: {', '.join(map(str, frame.columns))})"
        )


def format_bytes(n_bytes: float) -> str:
    """Format a byte count with decimal units (1 KB = 1000 B).

    Parameters
    ----------
    n_bytes : float
        Number of bytes.

    Returns
    -------
    str
        E.g. ``"100 KB"``, ``"1.5 MB"``, ``"999 B"``.
    """
    for scale, unit in _BYTE_UNITS:
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.6g} {unit}"
    return f"{n_bytes:.6g} B"


def deadline_met(
    fct_s: Sequence[float] | np.ndarray | pd.Series,
    deadline_s: Sequence[float] | np.ndarray | pd.Series,
    terminated: Sequence[bool] | np.ndarray | pd.Series | None = None,
) -> pd.arrays.BooleanArray:
    """Whether each flow met its deadline: the one definition flowsched uses.

    Parameters
    ----------
    fct_s : array-like of float
        Flow completion times (NaN for a flow that did not finish).
    deadline_s : array-like of float
        Relative deadlines; NaN (or inf) means no deadline.
    terminated : array-like of bool, optional
        Flows terminated for missing their deadline (they never meet it).

    Returns
    -------
    pandas.arrays.BooleanArray
        NA where the flow has no (finite) deadline; otherwise True when
        ``fct_s <= deadline_s * (1 + DEADLINE_RTOL)`` and the flow was not
        terminated (an unfinished flow, NaN ``fct_s``, has not met it).
    """
    fct = np.asarray(fct_s, dtype=np.float64)
    deadline = np.asarray(deadline_s, dtype=np.float64)
    term = np.zeros(fct.shape, bool) if terminated is None else np.asarray(terminated, dtype=bool)
    has = np.isfinite(deadline)
    with np.errstate(invalid="ignore"):
        met = (fct <= deadline * (1 + DEADLINE_RTOL)) & ~term
    return pd.arrays.BooleanArray(np.where(has, met, False), ~has)


def slowdown(
    fct_s: Sequence[float] | np.ndarray | pd.Series,
    ideal_fct_s: Sequence[float] | np.ndarray | pd.Series,
) -> np.ndarray:
    """Slowdown of each flow: ``fct_s / ideal_fct_s``, its FCT over its FCT alone on an idle
    fabric (both with the path delay); NaN where ``fct_s`` is NaN (not finished).

    It is at least 1 up to the rounding of the FCT, which the fluid model takes as finish
    minus arrival: about 1e-16 of the simulated time over the FCT, so a 14 us flow ending
    at t = 4 s can show 0.99999999998 (nothing is clipped; the packet model counts FCTs in
    whole picoseconds)."""
    return np.asarray(fct_s, dtype=np.float64) / np.asarray(ideal_fct_s, dtype=np.float64)


def _validate_edges(edges: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(list(edges), dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("bucket edges must be a flat sequence of byte counts")
    if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr <= 0)):
        raise ValueError(f"bucket edges must be finite and > 0 bytes, got {list(edges)}")
    if arr.size > 1 and np.any(np.diff(arr) <= 0):
        raise ValueError(f"bucket edges must be strictly increasing, got {list(edges)}")
    return arr


def bucket_labels(edges: Sequence[float] | np.ndarray = DEFAULT_BUCKETS_BYTES) -> list[str]:
    """Readable labels of the left-closed size buckets defined by ``edges``.

    Parameters
    ----------
    edges : sequence of float
        Strictly increasing, positive bucket edges in bytes. ``k`` edges give
        ``k + 1`` buckets; no edges give the single bucket ``"all sizes"``.

    Returns
    -------
    list of str
        E.g. ``["< 100 KB", "100 KB - 10 MB", ">= 10 MB"]`` for the default.
    """
    arr = _validate_edges(edges)
    if arr.size == 0:
        return ["all sizes"]
    names = [format_bytes(e) for e in arr]
    labels = [f"< {names[0]}"]
    labels += [f"{lo} - {hi}" for lo, hi in pairwise(names)]
    labels.append(f">= {names[-1]}")
    return labels


def assign_buckets(
    size_bytes: Sequence[float] | np.ndarray | pd.Series,
    edges: Sequence[float] | np.ndarray = DEFAULT_BUCKETS_BYTES,
) -> pd.Categorical:
    """Assign each flow size to its left-closed bucket.

    Parameters
    ----------
    size_bytes : array-like of float
        Flow sizes in bytes.
    edges : sequence of float
        Bucket edges in bytes (see :func:`bucket_labels`).

    Returns
    -------
    pandas.Categorical
        Ordered categorical whose categories are :func:`bucket_labels`
        (all of them, even empty ones). A size equal to an edge goes in the
        bucket that starts at that edge.
    """
    arr = _validate_edges(edges)
    labels = bucket_labels(arr)
    sizes = np.asarray(size_bytes, dtype=np.float64)
    codes = np.searchsorted(arr, sizes, side="right").astype(np.int64)
    codes[np.isnan(sizes)] = -1
    # pandas-stubs make Categorical generic (here Categorical[str]); the runtime class cannot be
    # subscripted, so the annotation stays the bare class
    return pd.Categorical.from_codes(codes, categories=pd.Index(labels), ordered=True)  # type: ignore[return-value]


def quantile_label(q: float) -> str:
    """Name fragment of quantile ``q``: ``0.5 -> "p50"``, ``0.999 -> "p99.9"``."""
    return f"p{q * 100:.6g}"


def _validate_quantiles(quantiles: Sequence[float]) -> tuple[float, ...]:
    qs = tuple(float(q) for q in quantiles)
    for q in qs:
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantiles must lie in [0, 1], got {q}")
    if len({quantile_label(q) for q in qs}) != len(qs):
        raise ValueError(f"quantiles must be distinct, got {qs}")
    return qs


def _as_bool(series: pd.Series) -> np.ndarray:
    """Plain bool array from a bool-like column (NA counts as False)."""
    return series.astype("boolean").fillna(False).to_numpy(dtype=bool)


def _nullable_bool(series: pd.Series) -> pd.Series:
    return series.astype("boolean")


def _to_builtin(value: Any) -> Any:
    """numpy scalar -> Python scalar, for ``to_dict``."""
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------


@dataclass
class Summary:
    """Metrics of one simulation run, as returned by :func:`summarize`.

    Attributes
    ----------
    overall : dict of str to float
        Metrics over all flows (keys as the columns of ``by_bucket``), plus
        run-level entries: ``duration_s``, and when links were given
        ``aggregate_utilization`` and ``max_link_utilization``.
    by_bucket : pandas.DataFrame
        One row per size bucket (index ``bucket``, smallest first, empty
        buckets included), one column per metric.
    links : pandas.DataFrame or None
        The ``links`` frame with a ``utilization`` column added (fraction of
        ``capacity_Bps * duration_s``), or ``None`` when no links were given.
    quantiles : tuple of float
        Quantiles used for the ``fct_pXX_s`` / ``slowdown_pXX`` columns.
    """

    overall: dict[str, float]
    by_bucket: pd.DataFrame
    links: pd.DataFrame | None = None
    quantiles: tuple[float, ...] = field(default=DEFAULT_QUANTILES)

    def to_frame(self) -> pd.DataFrame:
        """Overall row (labelled ``"all"``) followed by one row per bucket.

        Run-level entries of ``overall`` (``duration_s``, utilizations) are
        NaN in the bucket rows.

        Returns
        -------
        pandas.DataFrame
            Index ``bucket``; columns are the union of ``overall``'s keys and
            ``by_bucket``'s columns, bucket metrics first.
        """
        overall = pd.DataFrame([self.overall], index=pd.Index([OVERALL_LABEL]))
        columns = list(self.by_bucket.columns) + [
            c for c in overall.columns if c not in self.by_bucket.columns
        ]
        frame = pd.concat([overall, self.by_bucket], axis=0)[columns]
        frame.index.name = "bucket"
        return frame

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python view (nested dicts / lists; NaN kept as float NaN).

        Returns
        -------
        dict
            ``{"overall": {...}, "by_bucket": {label: {...}}, "links":
            [{...}, ...] or None, "quantiles": [...]}``.
        """
        by_bucket = {
            str(label): {k: _to_builtin(v) for k, v in row.items()}
            for label, row in self.by_bucket.to_dict(orient="index").items()
        }
        links = None
        if self.links is not None:
            links = [
                {k: _to_builtin(v) for k, v in rec.items()}
                for rec in self.links.to_dict(orient="records")
            ]
        return {
            "overall": {k: _to_builtin(v) for k, v in self.overall.items()},
            "by_bucket": by_bucket,
            "links": links,
            "quantiles": list(self.quantiles),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text (RFC 8259), with NaN and infinities as ``null``
        (JSON has no NaN: a deadline hit ratio without deadlines, an empty size bucket's
        statistics); what ``flowsched simulate --summary-json`` writes."""

        def plain(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            if isinstance(v, float) and not math.isfinite(v):
                return None
            return v

        return json.dumps(plain(self.to_dict()), indent=indent, allow_nan=False)

    def __str__(self) -> str:
        return _format_summary(self)


def _group_metrics(
    *,
    finished: np.ndarray,
    terminated: np.ndarray,
    fct_s: np.ndarray,
    slowdown: np.ndarray,
    finish_s: np.ndarray,
    weight: np.ndarray,
    has_deadline: np.ndarray,
    met: np.ndarray,
    sojourn_s: np.ndarray,
    duration_s: float,
    quantiles: tuple[float, ...],
) -> dict[str, float]:
    """Metrics of one group of flows (all arrays already restricted to it)."""
    out: dict[str, float] = {}
    n = int(finished.size)
    n_fin = int(finished.sum())
    out["count"] = n
    out["finished"] = n_fin
    out["terminated"] = int(terminated.sum())

    fct = fct_s[finished]
    sd = slowdown[finished]
    out["fct_mean_s"] = float(fct.mean()) if n_fin else math.nan
    for q in quantiles:
        out[f"fct_{quantile_label(q)}_s"] = float(np.quantile(fct, q)) if n_fin else math.nan
    sd_ok = sd[~np.isnan(sd)]
    out["slowdown_mean"] = float(sd_ok.mean()) if sd_ok.size else math.nan
    for q in quantiles:
        out[f"slowdown_{quantile_label(q)}"] = (
            float(np.quantile(sd_ok, q)) if sd_ok.size else math.nan
        )

    n_dl = int(has_deadline.sum())
    n_met = int((met & has_deadline).sum())
    out["deadline_flows"] = n_dl
    out["deadline_met"] = n_met
    out["deadline_hit_ratio"] = n_met / n_dl if n_dl else math.nan

    w = weight[finished]
    out["total_fct_s"] = float(fct.sum())
    out["weighted_total_fct_s"] = float((w * fct).sum())
    e = finish_s[finished]
    out["fpt_s"] = float(e.sum())
    out["wfpt_s"] = float((w * e).sum())

    ok_duration = math.isfinite(duration_s) and duration_s > 0
    out["mean_active_flows"] = float(np.nansum(sojourn_s)) / duration_s if ok_duration else math.nan
    out["finished_per_s"] = n_fin / duration_s if ok_duration else math.nan
    return out


def summarize(
    flows: pd.DataFrame,
    links: pd.DataFrame | None = None,
    duration_s: float | None = None,
    buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES,
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
) -> Summary:
    """Summarize one run's per-flow (and per-link) results.

    Parameters
    ----------
    flows : pandas.DataFrame
        Per-flow results; needs the columns in :data:`FLOW_COLUMNS_SUMMARY`
        (see the module docstring for their meaning).
    links : pandas.DataFrame, optional
        Per-link byte counters with columns ``link``, ``capacity_Bps``,
        ``bytes``. When given, utilization metrics are computed.
    duration_s : float, optional
        The run's time span (first arrival to last finish), used by the rate
        metrics (``mean_active_flows``, ``finished_per_s``, utilization).
        When ``None`` it is inferred from ``flows`` as the latest end time
        (``finish_s``, or the termination time for terminated flows) minus the
        earliest ``arrival_s``.
    buckets : sequence of float
        Size-bucket edges in bytes (left-closed; see :func:`bucket_labels`).
    quantiles : sequence of float
        Quantiles in [0, 1] reported for FCT and slowdown.

    Returns
    -------
    Summary
        ``overall`` and ``by_bucket`` hold, per group of flows:

        ``count``, ``finished``, ``terminated``
            Flow counts. A flow is finished when it is not terminated and its
            ``finish_s`` is finite.
        ``fct_mean_s``, ``fct_pXX_s``
            Mean and quantiles of ``fct_s`` over finished flows, in seconds.
            Quantiles use :func:`numpy.quantile` with ``method="linear"``.
        ``slowdown_mean``, ``slowdown_pXX``
            Same for ``slowdown`` (dimensionless).
        ``deadline_flows``, ``deadline_met``, ``deadline_hit_ratio``
            Flows with a deadline (``deadline_met`` not NA, or a finite
            ``deadline_s`` on a flow that finished or was terminated: an
            unfinished flow with an NA ``deadline_met`` is undecided, as in
            :meth:`flowsched.Simulation.results` before the end, and left
            out), how many met it, and the ratio of the two (NaN when no
            flow has a deadline). Terminated flows count as missed.
        ``total_fct_s``, ``weighted_total_fct_s``
            ``sum(fct_i)`` and ``sum(w_i * fct_i)`` over finished flows: the
            aSCC paper's total flow completion time ``FCT(A, F)``
            (Section III; the paper's slotted definition is
            ``sum(e_i - a_i + 1)``, here fct includes the path delay).
        ``fpt_s``, ``wfpt_s``
            The aSCC paper's total *flow processing time*
            ``FPT(A, F) = sum(e_i)`` and weighted
            ``WFPT(A, F) = sum(w_i * e_i)`` (Davydow et al., "SRPT-based
            Congestion Control for Flows with Unknown Sizes", Section III
            "Latency representations"). Note that ``e_i`` is the flow's *end
            time*, not completion minus arrival: here ``e_i = finish_s`` on
            the trace clock, summed over finished flows. For a fixed trace,
            routing and set of finished flows, ``FPT - total FCT`` is a
            policy-independent constant (the paper's Theorem 2), so policy
            *differences* in FPT equal those in total FCT; *ratios* of FPT
            depend on where the trace clock starts.
        ``mean_active_flows``
            Time-average number of flows in the system over ``duration_s``,
            by Little's law: ``sum(time in system) / duration_s``. A flow is
            in the system from ``arrival_s`` to ``finish_s`` (the aSCC
            paper's "active" flow, ``a_i <= t <= e_i``; the path delay in
            ``fct_s`` is not counted); a terminated flow is dropped when its
            deadline can no longer be met, at ``arrival_s + deadline_s -
            path_delay_s`` (0 when that is negative; without a
            ``path_delay_s`` column, at ``arrival_s + deadline_s``; nothing
            when its deadline is not finite). Exact when every flow arrives and
            leaves within the span, which holds for the default span.
        ``finished_per_s``
            Finished flows per second of ``duration_s``.

        ``overall`` also has ``duration_s`` and, when ``links`` is given,
        ``aggregate_utilization = sum(bytes) / (sum(capacity_Bps) *
        duration_s)`` and ``max_link_utilization``; ``Summary.links`` then
        holds the per-link ``utilization = bytes / (capacity_Bps *
        duration_s)``.

    Raises
    ------
    ValueError
        If a required column is missing (the message names them), or the
        buckets or quantiles are invalid.
    """
    _require_columns(flows, FLOW_COLUMNS_SUMMARY, "flows")
    qs = _validate_quantiles(quantiles)
    edges = _validate_edges(buckets)

    arrival = flows["arrival_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    size = flows["size_bytes"].to_numpy(dtype=np.float64, na_value=np.nan)
    deadline = flows["deadline_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    weight = flows["weight"].to_numpy(dtype=np.float64, na_value=np.nan)
    finish = flows["finish_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    fct = flows["fct_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    slowdown = flows["slowdown"].to_numpy(dtype=np.float64, na_value=np.nan)
    terminated = _as_bool(flows["terminated"])
    met_nullable = _nullable_bool(flows["deadline_met"])

    finished = ~terminated & np.isfinite(finish)
    has_deadline = met_nullable.notna().to_numpy() | (np.isfinite(deadline) & (finished | terminated))
    met = met_nullable.fillna(False).to_numpy(dtype=bool) & ~terminated

    # time in system (Little's law) and end time of each flow; the simulator drops a
    # terminated flow once its deadline cannot be met: the path delay before it
    if "path_delay_s" in flows:
        delay = flows["path_delay_s"].to_numpy(dtype=np.float64, na_value=np.nan)
        t_term = arrival + np.maximum(deadline - delay, 0.0)
    else:
        t_term = arrival + deadline
    end = np.where(finished, finish, np.where(terminated, t_term, np.nan))
    sojourn = end - arrival

    if duration_s is None:
        if np.any(np.isfinite(end)) and np.any(np.isfinite(arrival)):
            duration = float(np.nanmax(end) - np.nanmin(arrival))
        else:
            duration = math.nan
    else:
        duration = float(duration_s)
        if not duration >= 0:
            raise ValueError(f"duration_s must be >= 0, got {duration_s}")

    cols = dict(
        finished=finished,
        terminated=terminated,
        fct_s=fct,
        slowdown=slowdown,
        finish_s=finish,
        weight=weight,
        has_deadline=has_deadline,
        met=met,
        sojourn_s=sojourn,
    )

    overall: dict[str, float] = _group_metrics(**cols, duration_s=duration, quantiles=qs)
    overall["duration_s"] = duration

    cats = assign_buckets(size, edges)
    codes = np.asarray(cats.codes)
    rows = []
    for i, _label in enumerate(cats.categories):
        mask = codes == i
        rows.append(
            _group_metrics(
                **{k: v[mask] for k, v in cols.items()}, duration_s=duration, quantiles=qs
            )
        )
    by_bucket = pd.DataFrame(rows, index=pd.Index(list(cats.categories), name="bucket"))

    link_frame: pd.DataFrame | None = None
    if links is not None:
        _require_columns(links, LINK_COLUMNS, "links")
        link_frame = links.copy()
        cap = link_frame["capacity_Bps"].to_numpy(dtype=np.float64)
        carried = link_frame["bytes"].to_numpy(dtype=np.float64)
        ok = math.isfinite(duration) and duration > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            util = carried / (cap * duration) if ok else np.full(len(cap), np.nan)
        link_frame["utilization"] = util
        total_cap = float(cap.sum())
        overall["aggregate_utilization"] = (
            float(carried.sum()) / (total_cap * duration) if ok and total_cap > 0 else math.nan
        )
        overall["max_link_utilization"] = (
            float(np.nanmax(util)) if util.size and np.any(np.isfinite(util)) else math.nan
        )

    return Summary(overall=overall, by_bucket=by_bucket, links=link_frame, quantiles=qs)


# ---------------------------------------------------------------------------
# text rendering
# ---------------------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    if value is None:
        return "-"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "-"
    return format(v, spec)


def _summary_rows(quantiles: Sequence[float]) -> list[tuple[str, str, float, str]]:
    """(row label, metric key, scale, format spec) for the text table."""
    rows: list[tuple[str, str, float, str]] = [
        ("flows", "count", 1.0, ".0f"),
        ("finished", "finished", 1.0, ".0f"),
        ("terminated", "terminated", 1.0, ".0f"),
        ("FCT mean (ms)", "fct_mean_s", 1e3, ".3f"),
    ]
    for q in quantiles:
        p = quantile_label(q)
        rows.append((f"FCT {p} (ms)", f"fct_{p}_s", 1e3, ".3f"))
    rows.append(("slowdown mean", "slowdown_mean", 1.0, ".3f"))
    for q in quantiles:
        p = quantile_label(q)
        rows.append((f"slowdown {p}", f"slowdown_{p}", 1.0, ".3f"))
    rows += [
        ("deadline flows", "deadline_flows", 1.0, ".0f"),
        ("deadline hit (%)", "deadline_hit_ratio", 100.0, ".2f"),
        ("total FCT (s)", "total_fct_s", 1.0, ".6g"),
        ("weighted total FCT (s)", "weighted_total_fct_s", 1.0, ".6g"),
        ("FPT (s)", "fpt_s", 1.0, ".6g"),
        ("WFPT (s)", "wfpt_s", 1.0, ".6g"),
        ("mean active flows", "mean_active_flows", 1.0, ".3f"),
        ("finished flows/s", "finished_per_s", 1.0, ".6g"),
    ]
    return rows


def _format_summary(summary: Summary) -> str:
    groups: list[tuple[str, Mapping[Any, Any]]] = [(OVERALL_LABEL, summary.overall)]
    groups += [(str(label), row) for label, row in summary.by_bucket.to_dict(orient="index").items()]

    table: list[list[str]] = [["metric"] + [name for name, _ in groups]]
    for label, key, scale, spec in _summary_rows(summary.quantiles):
        cells = [label]
        for _, metrics in groups:
            v = metrics.get(key)
            cells.append(_fmt(None if v is None else float(v) * scale, spec))
        table.append(cells)

    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = []
    for j, row in enumerate(table):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))

    o = summary.overall
    head = f"flowsched summary: duration {_fmt(o.get('duration_s'), '.6g')} s"
    if summary.links is not None:
        head += (
            f", {len(summary.links)} links, aggregate utilization "
            f"{_fmt(100.0 * o.get('aggregate_utilization', math.nan), '.2f')} %, max link "
            f"{_fmt(100.0 * o.get('max_link_utilization', math.nan), '.2f')} %"
        )
    return "\n".join([head, *lines])


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


def _missing_ids_message(ids: np.ndarray, where: str, limit: int = 5) -> str:
    shown = ", ".join(str(_to_builtin(i)) for i in ids[:limit])
    more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
    return f"{len(ids)} id(s) {where}: {shown}{more}"


def _compare_group(
    diff: np.ndarray,
    equal: np.ndarray,
    compared: np.ndarray,
    term_flows: np.ndarray,
    term_ref: np.ndarray,
) -> dict[str, float]:
    n_cmp = int(compared.sum())
    d = diff[compared]
    eq = equal[compared]
    faster = (d < 0) & ~eq
    slower = (d > 0) & ~eq
    n_f, n_s = int(faster.sum()), int(slower.sum())
    n_e = n_cmp - n_f - n_s
    pct = (lambda k: 100.0 * k / n_cmp) if n_cmp else (lambda k: math.nan)
    return {
        "count": int(compared.size),
        "compared": n_cmp,
        "excluded_terminated": int(compared.size - n_cmp),
        "terminated": int(term_flows.sum()),
        "terminated_reference": int(term_ref.sum()),
        "faster": n_f,
        "slower": n_s,
        "equal": n_e,
        "faster_pct": pct(n_f),
        "slower_pct": pct(n_s),
        "equal_pct": pct(n_e),
        "mean_gain_s": float(d[faster].mean()) if n_f else math.nan,
        "mean_loss_s": float(d[slower].mean()) if n_s else math.nan,
        "mean_diff_s": float(d.mean()) if n_cmp else math.nan,
    }


def compare(
    flows: pd.DataFrame,
    reference: pd.DataFrame,
    rtol: float = 1e-9,
    atol_s: float = 1e-9,
    buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES,
) -> dict[str, Any]:
    """Per-flow comparison of FCTs against a reference run (SCHED_TCP Table 2).

    Reproduces the statistics of Table 2 in Ayesta et al., "Non-Intrusive
    Scheduling of TCP Flows" (Section 6.2): taking ``reference`` as the
    baseline (``tcp`` in the paper), the percentage of flows that finish
    *faster*, *slower* and *equal*, the mean *gain* (average change of the
    transfer time among flows that finish faster: negative seconds, e.g.
    -1.11 s) and the mean *loss* (average increase among flows that finish
    slower: positive seconds, e.g. +28 ms).

    Parameters
    ----------
    flows : pandas.DataFrame
        Results of the policy under test; needs ``id``, ``size_bytes``,
        ``fct_s``, ``terminated``.
    reference : pandas.DataFrame
        Results of the reference policy on the same trace, same columns.
    rtol : float
        Relative tolerance: two FCTs are *equal* when
        ``|fct - fct_ref| <= atol_s + rtol * |fct_ref|`` (the
        :func:`numpy.isclose` rule).
    atol_s : float
        Absolute tolerance in seconds.
    buckets : sequence of float
        Size-bucket edges in bytes for the per-bucket breakdown (buckets of
        ``flows["size_bytes"]``).

    Returns
    -------
    dict
        ``{"overall": dict, "by_bucket": pandas.DataFrame}``; the dict and
        each row of the frame (index ``bucket``) hold:

        ``count``
            Flows in the group.
        ``compared``
            Flows finished in both runs; only these are classified.
        ``excluded_terminated``
            ``count - compared``: flows terminated in either run (or with a
            NaN FCT) are excluded from the shares and means, since they have
            no transfer time to compare.
        ``terminated``, ``terminated_reference``
            Terminated flows in ``flows`` and in ``reference``.
        ``faster``, ``slower``, ``equal``
            Counts; ``faster_pct``, ``slower_pct``, ``equal_pct`` are
            percentages (0-100) of ``compared`` and sum to 100.
        ``mean_gain_s``
            Mean of ``fct - fct_ref`` over faster flows (< 0; NaN if none).
        ``mean_loss_s``
            Mean of ``fct - fct_ref`` over slower flows (> 0; NaN if none).
        ``mean_diff_s``
            Mean of ``fct - fct_ref`` over all compared flows (equal flows
            included, at their exact difference).

    Raises
    ------
    ValueError
        If a required column is missing, ids are duplicated, the id sets of
        the two frames differ (the message names a few missing ids), or a
        flow's ``size_bytes`` differs between the two runs.
    """
    _require_columns(flows, FLOW_COLUMNS_COMPARE, "flows")
    _require_columns(reference, FLOW_COLUMNS_COMPARE, "reference")
    if rtol < 0 or atol_s < 0:
        raise ValueError("rtol and atol_s must be >= 0")

    for frame, name in ((flows, "flows"), (reference, "reference")):
        dup = frame["id"][frame["id"].duplicated()].unique()
        if len(dup):
            raise ValueError(f"{name} has duplicated {_missing_ids_message(np.asarray(dup), 'ids')}")

    ids = pd.Index(flows["id"])
    ref_ids = pd.Index(reference["id"])
    only_flows = np.sort(np.asarray(ids.difference(ref_ids)))
    only_ref = np.sort(np.asarray(ref_ids.difference(ids)))
    if only_flows.size or only_ref.size:
        parts = []
        if only_ref.size:
            parts.append(_missing_ids_message(only_ref, "missing from flows"))
        if only_flows.size:
            parts.append(_missing_ids_message(only_flows, "missing from reference"))
        raise ValueError("flows and reference have different flow ids: " + "; ".join(parts))

    ref = reference.set_index("id").reindex(flows["id"])
    size = flows["size_bytes"].to_numpy(dtype=np.float64, na_value=np.nan)
    ref_size = ref["size_bytes"].to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isclose(size, ref_size, rtol=1e-12, atol=0.0, equal_nan=True)
    if bad.any():
        bad_ids = np.asarray(flows["id"])[bad]
        raise ValueError(
            "flows and reference disagree on size_bytes (different traces?): "
            + _missing_ids_message(bad_ids, "differ")
        )

    fct = flows["fct_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    ref_fct = ref["fct_s"].to_numpy(dtype=np.float64, na_value=np.nan)
    term = _as_bool(flows["terminated"])
    ref_term = _as_bool(ref["terminated"])
    compared = ~term & ~ref_term & np.isfinite(fct) & np.isfinite(ref_fct)
    diff = fct - ref_fct
    equal = np.abs(diff) <= atol_s + rtol * np.abs(ref_fct)

    cols = dict(diff=diff, equal=equal, compared=compared, term_flows=term, term_ref=ref_term)
    overall = _compare_group(**cols)
    cats = assign_buckets(size, buckets)
    codes = np.asarray(cats.codes)
    rows = [
        _compare_group(**{k: v[codes == i] for k, v in cols.items()})
        for i in range(len(cats.categories))
    ]
    by_bucket = pd.DataFrame(rows, index=pd.Index(list(cats.categories), name="bucket"))
    return {"overall": overall, "by_bucket": by_bucket}
