"""Flow traces: one row per flow, validated and normalized.

A *trace* is a :class:`pandas.DataFrame` with one row per flow. It is the
input format of the simulator (``flowsched.sim``) and the output format of
every generator in :mod:`flowsched.workloads`.

Column contract
---------------
======================  ========  ==========================================================
column                  dtype     meaning / constraint (limits: see "Limits" below)
======================  ========  ==========================================================
``id``                  int64     unique, >= 0; default ``0..n-1``
``arrival_s``           float64   arrival time of the flow's first byte in seconds, finite,
                                  >= 0, at most ``MAX_ARRIVAL_S``; all arrivals within
                                  ``MAX_ARRIVAL_SPAN_S`` of each other
``src``                 int64     source host, >= 0 (and < ``hosts`` when given)
``dst``                 int64     destination host, >= 0, != ``src`` (and < ``hosts``)
``size_bytes``          float64   in [``MIN_SIZE_BYTES``, ``MAX_SIZE_BYTES``] (fluid model:
                                  fractional bytes are allowed)
``deadline_s``          float64   relative to ``arrival_s`` (the flow must finish by
                                  ``arrival_s + deadline_s``); NaN = no deadline, else
                                  in (0, ``MAX_DEADLINE_S``]
``weight``              float64   in [``MIN_WEIGHT``, ``MAX_WEIGHT``]; default 1.0
                                  (weighted FCT / WFPT, ``wps``)
``data_span_s``         float64   in [0, ``MAX_DATA_SPAN_S``]; default 0.0: the flow's data
                                  becomes available uniformly over
                                  ``[arrival_s, arrival_s + data_span_s]``
                                  (aSCC's alpha model, see
                                  :func:`flowsched.workloads.add_data_span`)
``size_known``          bool      default True: may the scheduler read ``size_bytes``
                                  before the last byte of the flow has arrived?
======================  ========  ==========================================================

``arrival_s``, ``src``, ``dst`` and ``size_bytes`` are required, the others
are optional and get their defaults. Any other column is an error (nothing
is silently dropped). The normalized frame always has all nine columns in
the order of :data:`TRACE_COLUMNS` and a fresh ``RangeIndex``. Rows keep
their order: the simulator sorts by arrival itself.

Limits
------
Every value outside these limits is an error (:class:`TraceError`, naming
the row, the column and the value); nothing is clipped. :data:`LIMITS` holds
the same table.

==========================  ================  ==============================================
limit                       value             why
==========================  ================  ==============================================
``MIN_SIZE_BYTES``          1e-6 B            a positive size, not a denormal; smaller than
                                              anything the generators' continuous size
                                              distributions draw in practice
``MAX_SIZE_BYTES``          1e15 B (1 PB)     sums over a trace stay far from overflow
``MAX_ARRIVAL_S``           1e15 s            float64 steps are 0.125 s there; larger values
                                              are usually ms, us or ns given as seconds
``MAX_ARRIVAL_SPAN_S``      1e9 s (31.7 y)    last minus first arrival: simulated time is
                                              counted from the first arrival, and float64
                                              steps are 1.2e-7 s at 1e9 s
``MAX_DEADLINE_S``          1e9 s             relative deadlines, within the same horizon
``MAX_DATA_SPAN_S``         1e9 s             data spans, within the same horizon
``MIN_WEIGHT``              1e-6              weights are relative: a ratio of at most 1e12
``MAX_WEIGHT``              1e6
``MAX_FLOWS``               1e9 rows          the core indexes flows and path links with
                                              32 bits (4 links per flow on a leaf-spine)
``MAX_HOSTS``               2**24 hosts       largest fabric (``hosts``, or the host count of
                                              a topology); host ids are < ``MAX_HOSTS``
``MAX_INFERRED_HOST_ID``    100,000           with no host count given, the fabric is sized
                                              from the largest host id (callers pass
                                              ``infer_hosts=True``): a larger id needs an
                                              explicit host count (``hosts=``, a topology,
                                              ``--hosts``), so that one stray id cannot
                                              allocate gigabytes
==========================  ================  ==============================================

Time resolution
---------------
A float64 arrival time ``t`` is only known to ``numpy.spacing(t)`` (2.4e-7 s
at 1.7e9 s, epoch seconds; 1.2e-4 s at 1e12 s). When the spacing at the
largest arrival is coarser than ``ARRIVAL_RESOLUTION_S`` (1 us), validation
warns with a :class:`TimeResolutionWarning` that states the resolution (and
the smallest gap between distinct arrivals): the input itself has lost
resolution. The simulator (:func:`flowsched.simulate`) counts time from
the whole second at or below the first arrival, so arrivals far from 0
(epoch seconds) lose nothing more there: completion times are computed
exactly as for the same trace starting near 0 (the same bits when the
shift is a whole number of seconds).

Files: ``.csv`` (a header line, then one flow per line; an empty
``deadline_s`` cell means no deadline; ``size_known`` accepts
true/false/1/0 in any case) and ``.parquet``. :func:`write_trace` writes
floats with the shortest representation that reads back to the same
double, so ``read_trace(write_trace(df))`` equals ``df`` bit for bit.

Every problem raises :class:`TraceError` naming the source, the row (for a
CSV file: the 1-based line number in the file, the header being line 1, so
0-based data row ``i`` is line ``i + 2``; for a Parquet file: ``row i``,
0-based; for an in-memory frame: ``row <index label>``), the column and
the bad value.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "TraceError",
    "TimeResolutionWarning",
    "LIMITS",
    "MIN_SIZE_BYTES",
    "MAX_SIZE_BYTES",
    "MAX_ARRIVAL_S",
    "MAX_ARRIVAL_SPAN_S",
    "MAX_DEADLINE_S",
    "MAX_DATA_SPAN_S",
    "MIN_WEIGHT",
    "MAX_WEIGHT",
    "MAX_FLOWS",
    "MAX_HOSTS",
    "MAX_INFERRED_HOST_ID",
    "ARRIVAL_RESOLUTION_S",
    "check_hosts",
    "TRACE_COLUMNS",
    "REQUIRED_COLUMNS",
    "OPTIONAL_DEFAULTS",
    "TRACE_SUFFIXES",
    "validate_trace",
    "read_trace",
    "write_trace",
]

TRACE_COLUMNS: tuple[str, ...] = (
    "id",
    "arrival_s",
    "src",
    "dst",
    "size_bytes",
    "deadline_s",
    "weight",
    "data_span_s",
    "size_known",
)
"""All trace columns, in the normalized order."""

REQUIRED_COLUMNS: tuple[str, ...] = ("arrival_s", "src", "dst", "size_bytes")
"""Columns a trace must have."""

OPTIONAL_DEFAULTS: dict[str, Any] = {
    "id": None,  # 0..n-1
    "deadline_s": math.nan,
    "weight": 1.0,
    "data_span_s": 0.0,
    "size_known": True,
}
"""Default value of each optional column (``id`` defaults to ``0..n-1``)."""

TRACE_SUFFIXES: tuple[str, ...] = (".csv", ".parquet")
"""File suffixes accepted by :func:`read_trace` and :func:`write_trace`."""

MIN_SIZE_BYTES: float = 1e-6
"""Smallest ``size_bytes`` (bytes)."""
MAX_SIZE_BYTES: float = 1e15
"""Largest ``size_bytes`` (bytes)."""
MAX_ARRIVAL_S: float = 1e15
"""Largest ``arrival_s`` (seconds)."""
MAX_ARRIVAL_SPAN_S: float = 1e9
"""Largest difference between the last and the first arrival (seconds)."""
MAX_DEADLINE_S: float = 1e9
"""Largest (relative) ``deadline_s`` (seconds)."""
MAX_DATA_SPAN_S: float = 1e9
"""Largest ``data_span_s`` (seconds)."""
MIN_WEIGHT: float = 1e-6
"""Smallest ``weight``."""
MAX_WEIGHT: float = 1e6
"""Largest ``weight``."""
MAX_FLOWS: int = 10**9
"""Most rows (flows) in a trace."""
MAX_HOSTS: int = 2**24
"""Most hosts of a fabric; host ids are below it."""
MAX_INFERRED_HOST_ID: int = 100_000
"""Largest host id accepted when the fabric is sized from the trace (no host count given)."""
ARRIVAL_RESOLUTION_S: float = 1e-6
"""Float64 spacing at the largest arrival above which validation warns (seconds)."""

LIMITS: dict[str, tuple[float, float]] = {
    "size_bytes": (MIN_SIZE_BYTES, MAX_SIZE_BYTES),
    "arrival_s": (0.0, MAX_ARRIVAL_S),
    "arrival span (last - first arrival_s)": (0.0, MAX_ARRIVAL_SPAN_S),
    "deadline_s": (0.0, MAX_DEADLINE_S),  # exclusive at 0; NaN = none
    "data_span_s": (0.0, MAX_DATA_SPAN_S),
    "weight": (MIN_WEIGHT, MAX_WEIGHT),
    "rows (flows)": (1, MAX_FLOWS),
    "hosts (host count)": (2, MAX_HOSTS),
    "src/dst with no host count": (0, MAX_INFERRED_HOST_ID),
}
"""The limits of the trace contract, ``name -> (lowest, highest)``, both inclusive
except ``deadline_s > 0`` (see the module docstring for the reasons)."""

_INT_COLUMNS = ("id", "src", "dst")
_FLOAT_COLUMNS = ("arrival_s", "size_bytes", "deadline_s", "weight", "data_span_s")
_TRUE_STRINGS = frozenset({"true", "1"})
_FALSE_STRINGS = frozenset({"false", "0"})


class TraceError(ValueError):
    """A trace (frame or file) breaks the column contract of :mod:`flowsched.traces`."""


class TimeResolutionWarning(UserWarning):
    """Times in a trace (or of a simulation) are resolved more coarsely than they should be:
    float64 arrivals far from 0 (see "Time resolution" in :mod:`flowsched.traces`), or
    flows whose completion time is short against the float64 step of the simulated time
    at which they run (:func:`flowsched.simulate`)."""


def check_hosts(hosts: Any, what: str = "hosts") -> int:
    """``hosts`` as an int in ``[2, MAX_HOSTS]``, or a ValueError naming ``what``."""
    if isinstance(hosts, bool) or not isinstance(hosts, (int, np.integer)) or hosts < 2:
        raise ValueError(f"{what} must be an integer >= 2, got {hosts!r}")
    if hosts > MAX_HOSTS:
        raise ValueError(
            f"{what} = {int(hosts)} is above the largest fabric flowsched simulates "
            f"(MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)"
        )
    return int(hosts)


# ----------------------------------------------------------------------------
# locating rows in error messages
# ----------------------------------------------------------------------------

Locator = Callable[[int], str]


def _frame_locator(index: pd.Index) -> Locator:
    def locate(pos: int) -> str:
        label = index[pos]
        if isinstance(label, np.generic):
            label = label.item()
        return f"row {label!r}"

    return locate


def _positions_locator(positions: np.ndarray | None, kind: str) -> Locator:
    """Locator for file rows: ``kind`` is ``"line"`` (CSV) or ``"row"`` (Parquet)."""

    def locate(pos: int) -> str:
        return f"{kind} {int(positions[pos]) if positions is not None else pos}"

    return locate


def _fail(source: str, where: str | None, column: str | None, message: str) -> TraceError:
    parts = [source]
    if where is not None:
        parts.append(where)
    if column is not None:
        parts.append(f"column {column!r}")
    return TraceError(": ".join([", ".join(parts), message]))


def _first_bad(
    mask: np.ndarray,
    values: np.ndarray,
    *,
    source: str,
    locate: Locator,
    column: str,
    what: str,
) -> None:
    """Raise for the first True position of ``mask`` (if any)."""
    bad = np.flatnonzero(mask)
    if bad.size == 0:
        return
    pos = int(bad[0])
    more = f" ({bad.size - 1} more row(s) with the same problem)" if bad.size > 1 else ""
    raise _fail(source, locate(pos), column, f"{what}, got {_show(values[pos])}{more}")


def _show(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (np.integer,)):
        return repr(int(value))
    if isinstance(value, (np.bool_,)):
        return repr(bool(value))
    return repr(value)


# ----------------------------------------------------------------------------
# column conversion
# ----------------------------------------------------------------------------


def _is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return True
    return isinstance(v, str) and v.strip() == ""


def _parse_float(v: Any) -> float:
    """One cell to float; missing -> NaN; raises ValueError for anything else."""
    if _is_missing(v):
        return math.nan
    if isinstance(v, (bool, np.bool_)):
        raise ValueError("boolean")
    return float(v)


def _to_float(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert a column to float64; missing values (NaN, None, empty strings) become NaN.

    Strings are parsed with Python's correctly rounded ``float``, so the
    ``repr`` of a double reads back to the same double.
    """
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise _fail(source, None, column, f"must be numeric, got a boolean column (dtype {dtype})")
    if pd.api.types.is_numeric_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    obj = series.to_numpy(dtype=object)
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("string", "empty", "floating", "integer", "mixed-integer-float", "decimal"):
        filled = obj.copy()
        filled[pd.isna(obj) | (obj == "")] = "nan"
        try:
            return filled.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            pass  # locate the culprit below (or handle blanks such as "  ")
    out = np.empty(obj.size, dtype=np.float64)
    for i, v in enumerate(obj):
        try:
            out[i] = _parse_float(v)
        except (TypeError, ValueError, OverflowError):
            raise _fail(source, locate(i), column, f"not a number: {_show(v)}") from None
    return out


def _parse_int(v: Any) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise ValueError("boolean")
    if isinstance(v, (int, np.integer)):
        iv = int(v)
    else:
        if isinstance(v, str):
            s = v.strip()
            try:
                iv = int(s)
            except ValueError:
                fv = float(s)
                if not (math.isfinite(fv) and fv == round(fv)):
                    raise ValueError("not integral") from None
                iv = int(fv)
        else:
            fv = float(v)
            if not (math.isfinite(fv) and fv == round(fv)):
                raise ValueError("not integral")
            iv = int(fv)
    if not -(2**63) <= iv < 2**63:
        raise OverflowError("out of int64 range")
    return iv


def _to_int(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert a column to int64: integers, or integral floats/strings (``"3"``, ``3.0``)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise _fail(source, None, column, f"must be an integer, got a boolean column (dtype {dtype})")
    if pd.api.types.is_integer_dtype(dtype) and not series.hasnans:
        return series.to_numpy(dtype=np.int64)
    if pd.api.types.is_numeric_dtype(dtype):
        f = series.to_numpy(dtype=np.float64, na_value=np.nan)
        _first_bad(np.isnan(f), f, source=source, locate=locate, column=column, what="missing value (NaN)")
        bad = ~np.isfinite(f) | (f != np.round(f)) | (np.abs(f) >= 2.0**63)
        _first_bad(bad, f, source=source, locate=locate, column=column, what="not an integer")
        return f.astype(np.int64)
    obj = series.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(series, skipna=False) in ("string", "integer"):
        try:
            return obj.astype(np.int64)
        except (TypeError, ValueError, OverflowError):
            pass  # "3.0", blanks, garbage: slow path below
    out = np.empty(obj.size, dtype=np.int64)
    for i, v in enumerate(obj):
        if _is_missing(v):
            raise _fail(source, locate(i), column, f"missing value, got {_show(v)}")
        try:
            out[i] = _parse_int(v)
        except (TypeError, ValueError, OverflowError):
            raise _fail(source, locate(i), column, f"not an integer: {_show(v)}") from None
    return out


def _to_bool(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert ``size_known``: booleans, 0/1, or the strings true/false/1/0 (any case)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) and not series.hasnans:
        return series.to_numpy(dtype=bool)
    obj = series.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(series, skipna=False) == "string":
        low = pd.Series(obj, dtype=object).str.strip().str.lower().to_numpy(dtype=object)
        is_true = np.isin(low, list(_TRUE_STRINGS))
        is_false = np.isin(low, list(_FALSE_STRINGS))
        if (is_true | is_false).all():
            return is_true
    out = np.empty(obj.size, dtype=bool)
    for i, v in enumerate(obj):
        if isinstance(v, (bool, np.bool_)):
            out[i] = bool(v)
            continue
        if isinstance(v, str):
            s = v.strip().lower()
            if s in _TRUE_STRINGS:
                out[i] = True
                continue
            if s in _FALSE_STRINGS:
                out[i] = False
                continue
        elif isinstance(v, (int, float, np.integer, np.floating)) and not _is_missing(v):
            if v == 1:
                out[i] = True
                continue
            if v == 0:
                out[i] = False
                continue
        raise _fail(
            source,
            locate(i),
            column,
            f"must be true/false/1/0 (case-insensitive) or a boolean, got {_show(v)}",
        )
    return out


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------


def validate_trace(
    df: pd.DataFrame, hosts: int | None = None, *, source: str = "trace", infer_hosts: bool = False
) -> pd.DataFrame:
    """Check a trace against the column contract and return a normalized copy.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per flow. Required columns ``arrival_s, src, dst, size_bytes``;
        optional ``id, deadline_s, weight, data_span_s, size_known`` (see the
        module docstring for dtypes, defaults and constraints). Columns may
        hold numbers or strings that parse as numbers.
    hosts : int or None
        Number of hosts of the fabric; when given, ``src`` and ``dst`` must be
        ``< hosts``.
    source : str
        Name used in error messages (a file path, a generator name).
    infer_hosts : bool
        The caller will size the fabric from the largest host id (``hosts`` is None):
        then a host id above :data:`MAX_INFERRED_HOST_ID` is an error that asks for an
        explicit host count. Without it (and without ``hosts``), host ids are only
        checked against :data:`MAX_HOSTS`.

    Returns
    -------
    pandas.DataFrame
        A new frame with exactly the columns :data:`TRACE_COLUMNS` in that
        order, the normalized dtypes, defaults filled in, rows in the input
        order and a ``RangeIndex``. The input is not modified.

    Raises
    ------
    TraceError
        On the first problem found, naming ``source``, the row
        (``row <index label>``), the column and the bad value: an empty
        trace, a missing or unknown column, a non-numeric value, NaN in a
        required column, ``size_bytes <= 0``, a negative or non-finite
        ``arrival_s``, ``src == dst``, a host out of range, a duplicate
        ``id``, a bad ``size_known`` value, ``weight <= 0``, a negative
        ``data_span_s``, ``deadline_s <= 0``, or any value outside the
        limits of the contract (:data:`LIMITS`).

    Warns
    -----
    TimeResolutionWarning
        When the float64 spacing at the largest arrival is coarser than
        :data:`ARRIVAL_RESOLUTION_S` (the message states the resolution and
        the smallest gap between distinct arrivals).
    """
    if not isinstance(df, pd.DataFrame):
        raise TraceError(f"{source}: a trace must be a pandas DataFrame, got {type(df).__name__}")
    return _validate(df, hosts, source, _frame_locator(df.index), infer_hosts)


def _validate(
    df: pd.DataFrame, hosts: int | None, source: str, locate: Locator, infer_hosts: bool = False
) -> pd.DataFrame:
    if hosts is not None:
        if isinstance(hosts, bool) or not isinstance(hosts, (int, np.integer)) or hosts < 2:
            raise TraceError(f"{source}: hosts must be an integer >= 2 or None, got {hosts!r}")
        try:
            hosts = check_hosts(hosts)
        except ValueError as exc:
            raise TraceError(f"{source}: {exc}") from None
        if infer_hosts:
            raise TraceError(f"{source}: infer_hosts=True sizes the fabric from the trace; it excludes hosts={hosts}")
    columns = [str(c).strip() if isinstance(c, str) else c for c in df.columns]
    dup = sorted({str(c) for c in columns if columns.count(c) > 1})
    if dup:
        raise _fail(source, None, None, f"duplicate column(s) {dup}")
    unknown = [c for c in columns if c not in TRACE_COLUMNS]
    if unknown:
        raise _fail(
            source,
            None,
            None,
            f"unknown column(s) {[str(c) for c in unknown]}; allowed columns are {list(TRACE_COLUMNS)} "
            f"(required: {list(REQUIRED_COLUMNS)})",
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise _fail(
            source,
            None,
            None,
            f"missing required column(s) {missing}; present: {[str(c) for c in columns]}",
        )
    if len(df) == 0:
        raise _fail(source, None, None, "empty trace (no flows)")
    if len(df) > MAX_FLOWS:
        raise _fail(source, None, None, f"{len(df)} rows (flows): at most MAX_FLOWS = {MAX_FLOWS} are allowed")
    frame = df.copy(deep=False)
    frame.columns = columns
    n = len(frame)

    out: dict[str, np.ndarray] = {}
    # --- required float columns
    for col in ("arrival_s", "size_bytes"):
        v = _to_float(frame[col], col, source, locate)
        _first_bad(np.isnan(v), v, source=source, locate=locate, column=col, what="missing value (NaN)")
        out[col] = v
    a = out["arrival_s"]
    _first_bad(~np.isfinite(a), a, source=source, locate=locate, column="arrival_s", what="must be finite")
    _first_bad(a < 0, a, source=source, locate=locate, column="arrival_s", what="must be >= 0 (negative arrival)")
    _first_bad(
        a > MAX_ARRIVAL_S,
        a,
        source=source,
        locate=locate,
        column="arrival_s",
        what=f"must be <= MAX_ARRIVAL_S = {MAX_ARRIVAL_S:g} s (arrival_s is in seconds: is it in ms, us or ns?)",
    )
    _check_span(a, source, locate)
    s = out["size_bytes"]
    _first_bad(~np.isfinite(s), s, source=source, locate=locate, column="size_bytes", what="must be finite")
    _first_bad(s <= 0, s, source=source, locate=locate, column="size_bytes", what="must be > 0")
    _first_bad(
        (s < MIN_SIZE_BYTES) | (s > MAX_SIZE_BYTES),
        s,
        source=source,
        locate=locate,
        column="size_bytes",
        what=f"must be within [MIN_SIZE_BYTES, MAX_SIZE_BYTES] = [{MIN_SIZE_BYTES:g}, {MAX_SIZE_BYTES:g}] bytes",
    )

    # --- hosts
    for col in ("src", "dst"):
        v = _to_int(frame[col], col, source, locate)
        _first_bad(v < 0, v, source=source, locate=locate, column=col, what="host must be >= 0")
        if hosts is None:
            _first_bad(
                v >= MAX_HOSTS,
                v,
                source=source,
                locate=locate,
                column=col,
                what=f"host id above the largest fabric (MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts, "
                f"ids 0..{MAX_HOSTS - 1})",
            )
        if infer_hosts:
            _first_bad(
                v > MAX_INFERRED_HOST_ID,
                v,
                source=source,
                locate=locate,
                column=col,
                what=f"host id above MAX_INFERRED_HOST_ID = {MAX_INFERRED_HOST_ID} with no host count given (the "
                "fabric would be sized from the largest id: give the host count, hosts=, a topology or --hosts, "
                "if the fabric really has that many hosts)",
            )
        if hosts is not None:
            _first_bad(
                v >= hosts,
                v,
                source=source,
                locate=locate,
                column=col,
                what=f"host out of range (hosts={hosts}, valid 0..{hosts - 1})",
            )
        out[col] = v
    same = np.flatnonzero(out["src"] == out["dst"])
    if same.size:
        pos = int(same[0])
        more = f" ({same.size - 1} more row(s) with the same problem)" if same.size > 1 else ""
        raise _fail(
            source,
            locate(pos),
            "dst",
            f"dst must differ from src, got src={int(out['src'][pos])}, dst={int(out['dst'][pos])}{more}",
        )

    # --- id
    if "id" in frame.columns:
        ids = _to_int(frame["id"], "id", source, locate)
        _first_bad(ids < 0, ids, source=source, locate=locate, column="id", what="must be >= 0")
        uniq, first_pos, counts = np.unique(ids, return_index=True, return_counts=True)
        if uniq.size != n:
            dup_mask = np.ones(n, dtype=bool)
            dup_mask[first_pos] = False  # every occurrence after the first of a value
            pos = int(np.flatnonzero(dup_mask)[0])
            first = int(np.flatnonzero(ids == ids[pos])[0])
            raise _fail(
                source,
                locate(pos),
                "id",
                f"duplicate id {int(ids[pos])} (first used at {locate(first)}); "
                f"{int((counts > 1).sum())} id value(s) are duplicated",
            )
        out["id"] = ids
    else:
        out["id"] = np.arange(n, dtype=np.int64)

    # --- optional float columns
    if "deadline_s" in frame.columns:
        d = _to_float(frame["deadline_s"], "deadline_s", source, locate)
        has = ~np.isnan(d)
        _first_bad(
            has & ~np.isfinite(d),
            d,
            source=source,
            locate=locate,
            column="deadline_s",
            what="must be finite (use NaN or an empty cell for no deadline)",
        )
        _first_bad(
            has & (d <= 0),
            d,
            source=source,
            locate=locate,
            column="deadline_s",
            what="must be > 0 (relative to arrival_s; NaN/empty = no deadline)",
        )
        _first_bad(
            has & (d > MAX_DEADLINE_S),
            d,
            source=source,
            locate=locate,
            column="deadline_s",
            what=f"must be <= MAX_DEADLINE_S = {MAX_DEADLINE_S:g} s (relative to arrival_s; NaN/empty = no deadline)",
        )
        out["deadline_s"] = d
    else:
        out["deadline_s"] = np.full(n, np.nan)
    if "weight" in frame.columns:
        w = _to_float(frame["weight"], "weight", source, locate)
        _first_bad(
            ~(np.isfinite(w) & (w > 0)), w, source=source, locate=locate, column="weight", what="must be finite and > 0"
        )
        _first_bad(
            (w < MIN_WEIGHT) | (w > MAX_WEIGHT),
            w,
            source=source,
            locate=locate,
            column="weight",
            what=f"must be within [MIN_WEIGHT, MAX_WEIGHT] = [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]",
        )
        out["weight"] = w
    else:
        out["weight"] = np.ones(n)
    if "data_span_s" in frame.columns:
        sp = _to_float(frame["data_span_s"], "data_span_s", source, locate)
        _first_bad(
            ~np.isfinite(sp), sp, source=source, locate=locate, column="data_span_s", what="must be finite (and >= 0)"
        )
        _first_bad(sp < 0, sp, source=source, locate=locate, column="data_span_s",
                   what="must be >= 0 (negative data span)")
        _first_bad(
            sp > MAX_DATA_SPAN_S,
            sp,
            source=source,
            locate=locate,
            column="data_span_s",
            what=f"must be <= MAX_DATA_SPAN_S = {MAX_DATA_SPAN_S:g} s",
        )
        out["data_span_s"] = sp
    else:
        out["data_span_s"] = np.zeros(n)
    if "size_known" in frame.columns:
        out["size_known"] = _to_bool(frame["size_known"], "size_known", source, locate)
    else:
        out["size_known"] = np.ones(n, dtype=bool)

    result = pd.DataFrame({c: out[c] for c in TRACE_COLUMNS})
    result.attrs.update(df.attrs)
    _warn_resolution(a, source, locate)
    return result


def _check_span(a: np.ndarray, source: str, locate: Locator) -> None:
    """The arrivals (finite, in [0, MAX_ARRIVAL_S]) span at most MAX_ARRIVAL_SPAN_S."""
    lo, hi = int(np.argmin(a)), int(np.argmax(a))
    span = float(a[hi]) - float(a[lo])
    if span > MAX_ARRIVAL_SPAN_S:
        raise _fail(
            source,
            locate(hi),
            "arrival_s",
            f"the arrivals span {span:.6g} s, from {_show(a[lo])} ({locate(lo)}) to {_show(a[hi])}; at most "
            f"MAX_ARRIVAL_SPAN_S = {MAX_ARRIVAL_SPAN_S:g} s between the first and the last arrival",
        )


def _warn_resolution(a: np.ndarray, source: str, locate: Locator) -> None:
    """Warn when the float64 spacing at the largest arrival exceeds ARRIVAL_RESOLUTION_S."""
    hi = int(np.argmax(a))
    step = float(np.spacing(a[hi]))
    if step <= ARRIVAL_RESOLUTION_S:
        return
    distinct = np.unique(a)
    gap = f"{float(np.diff(distinct).min()):.3g} s" if distinct.size > 1 else "none (a single arrival time)"
    warnings.warn(
        f"{source}, column 'arrival_s': the largest arrival, {_show(a[hi])} s ({locate(hi)}), is resolved "
        f"to {step:.3g} s in float64, coarser than ARRIVAL_RESOLUTION_S = {ARRIVAL_RESOLUTION_S:g} s "
        f"(smallest gap between distinct arrivals: {gap}); the arrival times and their order are only "
        "known to that step. The simulator counts time from the first arrival and loses nothing more, "
        "but the input has: write arrival_s relative to a nearer origin (e.g. minus the trace's start) "
        "to keep the resolution of the source (and check that arrival_s is in seconds).",
        TimeResolutionWarning,
        stacklevel=4,
    )


# ----------------------------------------------------------------------------
# files
# ----------------------------------------------------------------------------


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in TRACE_SUFFIXES:
        raise TraceError(
            f"{path}: unknown trace file suffix {path.suffix!r}; accepted suffixes are {list(TRACE_SUFFIXES)}"
        )
    return suffix


def read_trace(path: str | os.PathLike[str], hosts: int | None = None, *, infer_hosts: bool = False) -> pd.DataFrame:
    """Read and validate a trace from a ``.csv`` or ``.parquet`` file.

    Parameters
    ----------
    path : str or os.PathLike
        File to read; the format is chosen by the suffix (case-insensitive).
    hosts : int or None
        Passed to the validation (``src``/``dst`` must be ``< hosts``).
    infer_hosts : bool
        Passed to the validation: the fabric will be sized from the largest host
        id, which must then be at most :data:`MAX_INFERRED_HOST_ID`.

    Returns
    -------
    pandas.DataFrame
        The normalized trace (see :func:`validate_trace`).

    Raises
    ------
    TraceError
        Unknown suffix, unreadable file, or any contract violation. For CSV
        files the message gives the 1-based line number in the file (the
        header is line 1), for Parquet files the 0-based row.

    Notes
    -----
    CSV: an empty ``deadline_s`` cell means no deadline; ``size_known``
    accepts true/false/1/0 in any case; lines that are completely empty are
    ignored (they still count for line numbers); floats are parsed with
    correct rounding, so files written by :func:`write_trace` read back bit
    for bit.
    """
    p = Path(path)
    suffix = _suffix(p)
    source = str(p)
    if suffix == ".parquet":
        try:
            df = pd.read_parquet(p)
        except Exception as exc:  # pyarrow raises many types
            raise TraceError(f"{source}: cannot read Parquet file: {exc}") from exc
        if not isinstance(df.index, pd.RangeIndex):
            df = df.reset_index(drop=True)
        return _validate(df, hosts, source, _positions_locator(None, "row"), infer_hosts)
    try:
        raw = pd.read_csv(
            p,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=False,
            skipinitialspace=True,
        )
    except pd.errors.EmptyDataError as exc:
        raise TraceError(f"{source}: empty file (a CSV trace needs a header line)") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise TraceError(f"{source}: cannot parse CSV: {exc}") from exc
    lines = np.arange(len(raw), dtype=np.int64) + 2
    if len(raw):
        blank = np.ones(len(raw), dtype=bool)
        for col in raw.columns:
            blank &= raw[col].to_numpy(dtype=object) == ""
        if blank.any():
            raw = raw.loc[~blank].reset_index(drop=True)
            lines = lines[~blank]
    unnamed = [c for c in raw.columns if str(c).startswith("Unnamed:")]
    if unnamed:
        raise TraceError(
            f"{source}: line 1 (header): empty column name(s) (is there a trailing comma?); "
            f"allowed columns are {list(TRACE_COLUMNS)}"
        )
    return _validate(raw, hosts, source, _positions_locator(lines, "line"), infer_hosts)


def _float_strings(values: np.ndarray, *, empty_nan: bool = False) -> np.ndarray:
    """Shortest round-trip decimal strings of a float64 array (``repr`` precision)."""
    strs = np.asarray([repr(float(v)) for v in values.tolist()], dtype=object)
    if empty_nan:
        strs[np.isnan(values)] = ""
    return strs


def write_trace(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Validate a trace and write it to a ``.csv`` or ``.parquet`` file.

    Parameters
    ----------
    df : pandas.DataFrame
        The trace; it is validated (without a host count) and normalized
        first, so the file always holds all nine columns in the standard
        order.
    path : str or os.PathLike
        Destination; the format is chosen by the suffix. Overwrites.

    Raises
    ------
    TraceError
        Unknown suffix or an invalid trace.

    Notes
    -----
    CSV floats are written with ``repr`` precision (the shortest string that
    reads back to the same double), NaN deadlines as empty cells and
    ``size_known`` as ``true``/``false``; ``read_trace(path)`` then equals
    the normalized frame exactly.
    """
    p = Path(path)
    suffix = _suffix(p)
    trace = validate_trace(df, source=str(p))
    if suffix == ".parquet":
        trace.to_parquet(p, index=False)
        return
    cols: dict[str, np.ndarray] = {}
    for c in TRACE_COLUMNS:
        v = trace[c].to_numpy()
        if c in _INT_COLUMNS:
            cols[c] = v.astype(str).astype(object)
        elif c == "size_known":
            cols[c] = np.where(v, "true", "false").astype(object)
        else:
            cols[c] = _float_strings(v, empty_nan=(c == "deadline_s"))
    out = pd.DataFrame(cols)
    out.to_csv(p, index=False, lineterminator="\n")
