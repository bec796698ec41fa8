"""Trace modifiers: deadlines, weights and aSCC's data spacing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from flowsched.checks import is_finite_number, number_kind
from flowsched.traces import validate_trace
from flowsched.workloads._common import PACKET_PAYLOAD_BYTES, PACKET_WIRE_BYTES, _check_pos, _rng


def _bounds(what: str, pair: Any) -> tuple[float, float]:
    """A pair of numbers (not bools, not strings), or a ValueError naming ``what``."""
    a: Any
    b: Any
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a pair of numbers, got {pair!r}") from None
    if number_kind(a) not in ("integer", "float") or number_kind(b) not in ("integer", "float"):
        raise ValueError(f"{what} must be a pair of numbers, got {pair!r}")
    try:
        return float(a), float(b)
    except OverflowError:
        raise ValueError(f"{what}: {pair!r} is beyond the range of floats") from None


def add_deadlines(
    trace: pd.DataFrame,
    *,
    fixed_s: float | None = None,
    slack: tuple[float, float] | None = None,
    link_gbps: float | None = None,
    base_rtt_s: float = 0.0,
    seed: int | None = 0,
    only_missing: bool = False,
) -> pd.DataFrame:
    """Give flows deadlines (relative to arrival).

    Exactly one of:

    * ``fixed_s``: every flow gets this deadline;
    * ``slack=(lo, hi)``: deadline = U(lo, hi) * ideal FCT, with ideal FCT
      = size_bytes * 8 / (link_gbps * 1e9) + base_rtt_s (the flow alone on
      an idle path). ``lo >= 1`` makes every deadline feasible in
      isolation; D3/D2TCP-style experiments draw slack in about [1, 4].

    Parameters
    ----------
    trace : DataFrame
        A trace (validated).
    fixed_s : float, optional
        Deadline in seconds (> 0).
    slack : (float, float), optional
        0 < lo <= hi.
    link_gbps : float, optional
        Needed with ``slack``.
    base_rtt_s : float
        Added to the ideal FCT (>= 0).
    seed : int or None
        Seed of the U(lo, hi) draws.
    only_missing : bool
        Keep the flows' existing deadlines and fill only the NaN ones.

    Returns
    -------
    pandas.DataFrame
        A validated copy.
    """
    df = validate_trace(trace, source="add_deadlines")
    if (fixed_s is None) == (slack is None):
        raise ValueError("add_deadlines: give exactly one of fixed_s and slack")
    n = len(df)
    if fixed_s is not None:
        new = np.full(n, _check_pos("fixed_s", fixed_s))
    else:
        lo, hi = _bounds("add_deadlines: slack", slack)
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ValueError(f"add_deadlines: slack must satisfy 0 < lo <= hi, got {slack!r}")
        if link_gbps is None:
            raise ValueError("add_deadlines: slack needs link_gbps")
        rate_bps = _check_pos("link_gbps", link_gbps) * 1e9
        if not (math.isfinite(base_rtt_s) and base_rtt_s >= 0):
            raise ValueError(f"base_rtt_s must be >= 0, got {base_rtt_s!r}")
        ideal = df["size_bytes"].to_numpy() * 8.0 / rate_bps + base_rtt_s
        factor = lo + (hi - lo) * _rng(seed).random(n)
        new = factor * ideal
    old = df["deadline_s"].to_numpy()
    df["deadline_s"] = np.where(np.isnan(old), new, old) if only_missing else new
    return validate_trace(df, source="add_deadlines")


def add_weights(
    trace: pd.DataFrame,
    weights: float | Sequence[float] | np.ndarray | None = None,
    *,
    uniform: tuple[float, float] | None = None,
    choices: Sequence[tuple[float, float]] | None = None,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Set flow weights (for weighted FCT, aSCC's WFPT, weighted sharing).

    Exactly one of:

    * ``weights``: a scalar or one value per flow (> 0);
    * ``uniform=(lo, hi)``: i.i.d. U(lo, hi), 0 < lo <= hi;
    * ``choices=[(prob, weight), ...]``: i.i.d. discrete weights (e.g. QoS
      classes); probabilities are normalized.

    Parameters
    ----------
    trace : DataFrame
        A trace.
    weights : float or array_like, optional
        The weights.
    uniform : (float, float), optional
        Bounds of i.i.d. uniform weights.
    choices : sequence of (float, float), optional
        (probability, weight) pairs.
    seed : int or None
        Seed of the random draws (``uniform`` and ``choices``; ``weights`` draws nothing).

    Returns
    -------
    pandas.DataFrame
        A validated copy.
    """
    df = validate_trace(trace, source="add_weights")
    given = sum(x is not None for x in (weights, uniform, choices))
    if given != 1:
        raise ValueError("add_weights: give exactly one of weights, uniform and choices")
    n = len(df)
    if weights is not None:
        arr = np.asarray(weights)
        if arr.ndim == 0 and not is_finite_number(weights):
            raise ValueError(f"add_weights: weights must be a number or one number per flow, got {weights!r}")
        if arr.dtype.kind not in "iuf" or arr.ndim > 1:
            raise ValueError("add_weights: weights must be a number or one number per flow, got an array of "
                             f"dtype {arr.dtype} and shape {arr.shape}")
        if arr.ndim == 1 and arr.size != n:
            raise ValueError(f"add_weights: weights has {arr.size} values for a trace of {n} flows")
        w = np.broadcast_to(arr.astype(np.float64), (n,)).copy()
    elif uniform is not None:
        lo, hi = _bounds("add_weights: uniform", uniform)
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ValueError(f"add_weights: uniform must satisfy 0 < lo <= hi, got {uniform!r}")
        w = lo + (hi - lo) * _rng(seed).random(n)
    else:
        pairs = [_bounds("add_weights: each of choices", c) for c in choices]  # type: ignore[union-attr]
        probs = np.asarray([p for p, _ in pairs], dtype=np.float64)
        vals = np.asarray([v for _, v in pairs], dtype=np.float64)
        if probs.size == 0 or np.any(probs <= 0) or not np.all(np.isfinite(probs)):
            raise ValueError(f"add_weights: choices need probabilities > 0, got {choices!r}")
        cum = np.cumsum(probs / probs.sum())
        idx = np.minimum(np.searchsorted(cum, _rng(seed).random(n), side="right"), vals.size - 1)
        w = vals[idx]
    df["weight"] = w
    return validate_trace(df, source="add_weights")


def add_data_span(
    trace: pd.DataFrame,
    alpha: float,
    link_gbps: float,
    *,
    header_factor: bool = False,
    chunks: int | None = None,
    seed: int | np.random.Generator | None = 0,
) -> pd.DataFrame:
    """Spread each flow's data over time, aSCC's alpha model.

    aSCC (Davydow et al.), section VIII "Workloads": "Let Delta t_i be the
    minimum possible time that it takes to send all packets of a flow f_i
    out of the sender's host interface. We distribute arrival times of
    f_i's packets uniformly in [a_i, a_i + alpha Delta t_i], where alpha >= 0
    is a parameter reflecting the spacing between arrival times of f_i's
    packets." The evaluation varies alpha from 0 to 2. Here

        data_span_s = alpha * size_bytes * 8 / (link_gbps * 1e9)

    and the simulator makes the flow's bytes available uniformly over
    ``[arrival_s, arrival_s + data_span_s]`` (for alpha <= 1 data arrives
    at least as fast as the link can send it). With ``header_factor`` the
    wire time of whole packets is used: ceil(size/1460) * 1500 * 8 / C.

    With ``chunks``, the span ends where the aSCC authors' simulation code
    (github.com/pschuprikov/ascc, ``ns2/apps/app-chunks.cc``; the paper's
    reference [21]) has a flow's data complete: it cuts a flow of p packets
    into m = min(p, chunks) chunks (100 for data mining, 20,000 for web
    search in its runs), draws each chunk's time uniformly in [a_i, a_i +
    alpha Delta t_i], hands the earliest to the sender at once and the
    others at their times. So ``data_span_s`` is alpha Delta t_i times the
    largest of m uniform draws (its mean m / (m + 1)), and 0 for a flow of
    one chunk. Only the span's end is drawn that way: within it the bytes
    still arrive uniformly (the code's chunks arrive in steps at random
    times).

    Parameters
    ----------
    trace : DataFrame
        A trace.
    alpha : float
        >= 0.
    link_gbps : float
        Sender's host link rate.
    header_factor : bool
        Use whole 1500-byte packets for Delta t.
    chunks : int, optional
        The most chunks a flow's data comes in (>= 1); None (default): the
        span is the whole alpha Delta t_i.
    seed : int, Generator or None
        The draws of the chunks' times (only with ``chunks``).

    Returns
    -------
    pandas.DataFrame
        A validated copy with ``data_span_s`` set.
    """
    df = validate_trace(trace, source="add_data_span")
    df["data_span_s"] = data_spans(df["size_bytes"].to_numpy(), alpha, link_gbps, header_factor=header_factor,
                                   chunks=chunks, seed=seed)
    return validate_trace(df, source="add_data_span")


def data_spans(
    size_bytes: np.ndarray,
    alpha: float,
    link_gbps: float,
    *,
    header_factor: bool = False,
    chunks: int | None = None,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """The ``data_span_s`` that :func:`add_data_span` gives flows of these sizes (same
    arguments, same formula), for traces held as columns
    (:func:`flowsched.traces.validate_columns`)."""
    if not (is_finite_number(alpha) and alpha >= 0):
        raise ValueError(f"add_data_span: alpha must be finite and >= 0, got {alpha!r}")
    rate_bps = _check_pos("link_gbps", link_gbps) * 1e9
    size = np.asarray(size_bytes, dtype=np.float64)
    wire = np.ceil(size / PACKET_PAYLOAD_BYTES) * PACKET_WIRE_BYTES if header_factor else size
    span = float(alpha) * wire * 8.0 / rate_bps
    if chunks is None:
        return span
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise ValueError(f"add_data_span: chunks must be an integer >= 1 (or None), got {chunks!r}")
    m = np.minimum(np.maximum(np.ceil(size / PACKET_PAYLOAD_BYTES), 1.0), float(chunks))
    u = _rng(seed).random(size.size)
    # the largest of m uniform draws is U^(1/m) (its CDF is x^m); the earliest chunk goes at once
    last = np.where(m > 1, u ** (1.0 / m), 0.0)
    return span * last
