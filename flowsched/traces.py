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
``path``                object    optional route pinning (graph topologies only): the
                                  nodes the flow's data passes through, from its ``src``
                                  host to its ``dst`` host; missing = ECMP (see "Pinned
                                  routes" below)
======================  ========  ==========================================================

``arrival_s``, ``src``, ``dst`` and ``size_bytes`` are required, the others
are optional and get their defaults. Any other column is an error (nothing
is silently dropped). The normalized frame always has all nine columns in
the order of :data:`TRACE_COLUMNS` and a fresh ``RangeIndex``, and then
``path`` when the trace has one (it gets no default: a trace without it
is unchanged). Rows keep their order: the simulator sorts by arrival itself.

Pinned routes
-------------
A ``path`` cell pins the flow's route on a :class:`~flowsched.topology.Graph`
(``from_networkx``, ``read_graph``, ``FatTree``, ``ParkingLot``): the flow's
data crosses exactly the links joining these nodes, in every model, instead
of the path ECMP would draw. In a DataFrame a cell is a list or tuple of node
names (the graph's own node labels, e.g. ``["h0", "edge0_0", "agg0_0",
"core0", "agg1_0", "edge1_0", "h4"]`` on ``FatTree(4)``), or the same names
joined by :data:`PATH_SEPARATOR` (``">"``) as one string: ``"h0>edge0_0>
agg0_0>core0>agg1_0>edge1_0>h4"``, which is how CSV and Parquet files hold
it (whitespace around each name is dropped). A missing cell (empty string,
NaN, None, an empty list) leaves that flow to ECMP. A string is matched
against the labels written as strings (so ``"3"`` finds node ``3`` of a
graph with integer labels); a string that several labels read as (nodes
``3`` and ``"3"``) is an error, never resolved to one of them. Any other
name must be a label itself, and a number of the same kind: ``True`` and
``1.0`` do not stand for node ``1`` (see ``Graph.node_lookup``).

Against a topology (``validate_trace(..., topology=)``, ``read_trace(...,
topology=)``, and always in :func:`flowsched.simulate`) every route is
checked, and each of these is an error naming the row: a node the graph does
not have, a first node that is not the flow's ``src`` host or a last that is
not its ``dst`` host, a host in the middle (hosts never forward), a node
visited twice (a loop), two consecutive nodes with no link from the first to
the second (links have a direction), two consecutive nodes joined by several
parallel links in that direction (a networkx multigraph's: node names cannot
say which link, so such a route is refused rather than resolved to one of
them), and any pinned route on a ``BigSwitch`` (one path per
host pair) or ``LeafSpine`` (build it as a graph with ``from_networkx`` to
pin spines). The normalized cell holds the graph's own labels as a tuple,
or None for ECMP.

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

Files: ``.csv`` (a header line, then one flow per line, each with as
many fields as the header; an empty ``deadline_s`` cell means no deadline;
``size_known`` accepts true/false/1/0 in any case; numbers are plain ASCII
decimals, see :func:`read_trace`) and ``.parquet`` (a named index, such as
ids written with ``set_index("id")``, is read as columns; an unnamed one is
ignored). :func:`write_trace` writes floats with the shortest representation
that reads back to the same double, so ``read_trace(write_trace(df))``
equals ``df`` bit for bit.

Every problem raises :class:`TraceError` naming the source, the row (for a
CSV file: the 1-based line number in the file that the row begins on, the
header being line 1, so 0-based data row ``i`` is line ``i + 2`` when no
blank line or quoted multi-line cell comes before it; for a Parquet file: ``row i``,
0-based; for an in-memory frame: ``row <index label>``), the column and
the bad value.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
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
    "PATH_COLUMN",
    "PATH_SEPARATOR",
    "path_strings",
    "path_name_problem",
    "validate_trace",
    "validate_columns",
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

PATH_COLUMN: str = "path"
"""The optional route-pinning column (see "Pinned routes" in :mod:`flowsched.traces`); it
comes after :data:`TRACE_COLUMNS` in a normalized trace that has it."""

PATH_SEPARATOR: str = ">"
"""Joins the node names of a ``path`` cell written as one string (CSV and Parquet files)."""

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
    if not mask.any():
        return
    bad = np.flatnonzero(mask)
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
    if isinstance(value, (np.complexfloating,)):
        return repr(complex(value))
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


# Numbers in strings (CSV cells, string columns) are plain ASCII decimals, as a CSV tool reads
# them: surrounding ASCII whitespace, a sign, digits with an optional '.', an optional exponent,
# or the words inf / infinity / nan (any case; the range checks then refuse them where they do
# not belong). Python's float() and int() read more: digit separators ("1_000"), any Unicode
# digit ("١" is 1) and Unicode whitespace; such cells are refused, never reinterpreted.
_ASCII_SPACE = " \t\r\n\f\v"
_NUMBER_CHARS = b"0123456789+-.eEinfatyINFATY" + _ASCII_SPACE.encode("ascii")
_NUMBER_RE = re.compile(
    r"[ \t\r\n\f\v]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf|infinity|nan)[ \t\r\n\f\v]*",
    re.ASCII | re.IGNORECASE,
)
_ZERO_CHARS = b"0.+-" + _ASCII_SPACE.encode("ascii")  # a cell of only these reads as 0 (or is missing)
_INT64_MAX = 2**63 - 1
_PLAIN_NUMBERS = "only plain ASCII decimal numbers are read: digits, a sign, '.', an exponent"


class _BadCell(ValueError):
    """One cell that does not convert; the message says why and shows the cell."""


def _plain_numbers(strings: list[Any]) -> bool:
    """Whether every one of these strings is made only of the characters of plain ASCII
    decimal numbers (one pass over the joined strings: what the fast paths check before their
    vectorized conversion; the conversion itself still refuses malformed numbers)."""
    joined = "".join(strings)
    return joined.isascii() and not joined.encode("ascii").translate(None, _NUMBER_CHARS)


def _not_plain(v: str, what: str) -> _BadCell:
    """``what`` (e.g. "not a number") for a string cell that is not a plain ASCII number,
    saying so when Python itself would have read it (digit separators, non-ASCII digits)."""
    try:
        float(v)
    except (ValueError, OverflowError):
        return _BadCell(f"{what}: {v!r}")
    return _BadCell(f"{what}: {v!r} ({_PLAIN_NUMBERS})")


def _nonzero_text(v: str) -> bool:
    """Whether a number cell's digits before its exponent are not all 0 (a nonzero value)."""
    mantissa = v.strip(_ASCII_SPACE).lower().partition("e")[0]
    return any(c in "123456789" for c in mantissa)


def _text_float(v: str) -> float:
    """A (non-missing) string cell to float, strictly; raises _BadCell."""
    if _NUMBER_RE.fullmatch(v) is None:
        raise _not_plain(v, "not a number")
    x = float(v)
    if math.isinf(x) and "inf" not in v.lower():
        raise _BadCell(f"out of the float64 range (magnitude above {np.finfo(np.float64).max:.6g}): {v!r}")
    if x == 0.0 and _nonzero_text(v):
        raise _BadCell(f"a nonzero value that underflows to 0.0 in float64: {v!r}")
    return x


def _parse_float(v: Any) -> float:
    """One cell to float; missing -> NaN; raises _BadCell for anything else."""
    if isinstance(v, str):
        if v.strip(_ASCII_SPACE) == "":
            return math.nan
        return _text_float(v)
    if _is_missing(v):
        return math.nan
    if isinstance(v, (bool, np.bool_)):
        raise _BadCell(f"not a number: {_show(v)} (a boolean)")
    if isinstance(v, (complex, np.complexfloating)):
        raise _BadCell(f"not a real number: {_show(v)} (complex)")
    try:
        return float(v)
    except OverflowError:
        raise _BadCell(f"out of the float64 range: {_show(v)}") from None
    except (TypeError, ValueError):
        raise _BadCell(f"not a number: {_show(v)}") from None


def _check_texts(out: np.ndarray, texts: np.ndarray, column: str, source: str, locate: Locator) -> None:
    """After a vectorized string -> float64 conversion: no cell overflowed to +-inf or
    underflowed to 0.0 (the cells that read as inf or 0 are rare, except columns of zeros,
    which one pass over their joined strings clears)."""
    for mask, only_zeros in ((np.isinf(out), False), (out == 0.0, True)):
        if not mask.any():
            continue
        pos = np.flatnonzero(mask)
        if only_zeros and not "".join(texts[pos].tolist()).encode("ascii").translate(None, _ZERO_CHARS):
            continue
        for i in pos.tolist():
            try:
                _text_float(texts[i])
            except _BadCell as exc:
                raise _fail(source, locate(i), column, str(exc)) from None


def _to_float(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert a column to float64; missing values (NaN, None, empty strings) become NaN.

    Strings are parsed with Python's correctly rounded ``float``, so the
    ``repr`` of a double reads back to the same double; only plain ASCII decimal
    numbers are read (see ``_NUMBER_RE``), and a cell that overflows to inf or
    underflows to 0 is refused, showing the cell.
    """
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise _fail(source, None, column, f"must be numeric, got a boolean column (dtype {dtype})")
    if pd.api.types.is_complex_dtype(dtype):
        raise _fail(source, None, column, f"must be real numbers, got a complex column (dtype {dtype})")
    if isinstance(series, np.ndarray):  # a numeric column of validate_columns
        return series.astype(np.float64)
    if pd.api.types.is_numeric_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    obj = series.to_numpy(dtype=object)
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("string", "empty"):
        filled = obj.copy()
        filled[pd.isna(obj) | (obj == "")] = "nan"
        if _plain_numbers(filled.tolist()):
            try:
                out = filled.astype(np.float64)
            except (TypeError, ValueError, OverflowError):
                pass  # locate the culprit below (or handle blanks such as "  ")
            else:
                _check_texts(out, filled, column, source, locate)
                return out
    elif kind in ("floating", "integer", "mixed-integer-float", "decimal"):
        try:
            return obj.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
            pass  # locate the culprit below
    out = np.empty(obj.size, dtype=np.float64)
    for i, v in enumerate(obj):
        try:
            out[i] = _parse_float(v)
        except _BadCell as exc:
            raise _fail(source, locate(i), column, str(exc)) from None
    return out


def _parse_int(v: Any) -> int:
    """One (non-missing) cell to an int64 integer; raises _BadCell saying why not."""
    if isinstance(v, (bool, np.bool_)):
        raise _BadCell(f"not an integer: {_show(v)} (a boolean)")
    if isinstance(v, (complex, np.complexfloating)):
        raise _BadCell(f"not an integer: {_show(v)} (complex)")
    if isinstance(v, (int, np.integer)):
        iv = int(v)
    elif isinstance(v, str):
        if _NUMBER_RE.fullmatch(v) is None:
            raise _not_plain(v, "not an integer")
        try:
            iv = int(v)
        except ValueError:  # "3.0", "1e3": exact decimal arithmetic, no rounding to a float
            d = Decimal(v.strip(_ASCII_SPACE))
            if not d.is_finite():
                raise _BadCell(f"not an integer: {v!r}") from None
            if d != 0 and d.adjusted() > 18:  # at least 1e19 > 2**63: do not build a huge int
                raise _BadCell(f"out of the int64 range: {v!r}") from None
            if d != d.to_integral_value():
                raise _BadCell(f"not an integer: {v!r}") from None
            iv = int(d)
    else:
        try:
            fv = float(v)
        except OverflowError:
            raise _BadCell(f"out of the int64 range: {_show(v)}") from None
        except (TypeError, ValueError):
            raise _BadCell(f"not an integer: {_show(v)}") from None
        if not (math.isfinite(fv) and fv == round(fv)):
            raise _BadCell(f"not an integer: {_show(v)}")
        iv = int(fv)
    if not -(2**63) <= iv <= _INT64_MAX:
        raise _BadCell(f"out of the int64 range: {_show(v)}")
    return iv


def _to_int(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert a column to int64: integers, or integral floats/strings (``"3"``, ``3.0``)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise _fail(source, None, column, f"must be an integer, got a boolean column (dtype {dtype})")
    if pd.api.types.is_complex_dtype(dtype):
        raise _fail(source, None, column, f"must be an integer, got a complex column (dtype {dtype})")
    if isinstance(series, np.ndarray) and dtype.kind in "iu":  # an integer column of validate_columns
        if dtype.kind == "u" and dtype.itemsize >= 8:
            _first_bad(series > _INT64_MAX, series, source=source, locate=locate, column=column,
                       what="out of the int64 range")
        return series.astype(np.int64)
    if pd.api.types.is_integer_dtype(dtype) and not series.hasnans:
        if dtype.kind == "u":  # uint64 (numpy or pandas' UInt64) above 2**63 - 1 would wrap around
            u = series.to_numpy(dtype=np.uint64)
            _first_bad(u > _INT64_MAX, u, source=source, locate=locate, column=column, what="out of the int64 range")
        return series.to_numpy(dtype=np.int64)
    if pd.api.types.is_numeric_dtype(dtype):
        f = series.astype(np.float64) if isinstance(series, np.ndarray) else series.to_numpy(dtype=np.float64,
                                                                                           na_value=np.nan)
        _first_bad(np.isnan(f), f, source=source, locate=locate, column=column, what="missing value (NaN)")
        _first_bad(~np.isfinite(f) | (f != np.round(f)), f, source=source, locate=locate, column=column,
                   what="not an integer")
        _first_bad(np.abs(f) >= 2.0**63, f, source=source, locate=locate, column=column,
                   what="out of the int64 range")
        return f.astype(np.int64)
    obj = series.to_numpy(dtype=object)
    kind = pd.api.types.infer_dtype(series, skipna=False)
    if kind == "integer" or (kind == "string" and _plain_numbers(obj.tolist())):
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
        except _BadCell as exc:
            raise _fail(source, locate(i), column, str(exc)) from None
    return out


def _to_bool(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert ``size_known``: booleans, 0/1, or the strings true/false/1/0 (any case)."""
    if isinstance(series, np.ndarray):  # a numeric column of validate_columns
        if series.dtype.kind == "b":
            return series.copy()
        series = pd.Series(series)
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


def _path_cell(v: Any) -> tuple[Any, ...] | None:
    """One ``path`` cell as a tuple of node names, or None (ECMP) for a missing one; raises
    ValueError saying what is wrong."""
    if isinstance(v, str):
        if v.strip() == "":
            return None
        names = tuple(map(str.strip, v.split(PATH_SEPARATOR)))
        if "" in names:
            raise ValueError(f"an empty node name in {v!r} (node names joined by {PATH_SEPARATOR!r})")
    elif isinstance(v, (list, tuple, np.ndarray, pd.Series)):
        names = tuple(v.tolist() if isinstance(v, (np.ndarray, pd.Series)) else v)
        if not names:
            return None
        try:
            plain = all(map(str.strip, names))  # non-blank strings, the usual names: nothing to check
        except TypeError:  # a name that is not a string
            plain = False
        for x in () if plain else names:
            if _is_missing(x) or isinstance(x, (list, dict, set, np.ndarray)):
                raise ValueError(f"{_show(x)} is not a node name")
            hash(x)
    elif _is_missing(v):
        return None
    else:
        raise ValueError(f"expected a list of node names or a {PATH_SEPARATOR!r}-joined string, got {_show(v)}")
    if len(names) < 2:
        raise ValueError(f"a route names at least its source and destination hosts, got {_show(list(names))}")
    return names


def _to_paths(series: pd.Series, column: str, source: str, locate: Locator) -> np.ndarray:
    """Convert a ``path`` column to an object array of tuples of node names (None: ECMP)."""
    obj = series.to_numpy(dtype=object)
    out = np.empty(obj.size, dtype=object)
    for i, v in enumerate(obj):
        try:
            out[i] = _path_cell(v)
        except (TypeError, ValueError) as exc:
            raise _fail(source, locate(i), column, str(exc)) from None
    return out


def path_strings(paths: Any) -> np.ndarray:
    """``path`` cells as the strings files hold (node names joined by :data:`PATH_SEPARATOR`;
    "" for ECMP). Raises ValueError for a node name that would not read back: empty, with
    whitespace around it or with the separator in it."""
    out = np.empty(len(paths), dtype=object)
    for i, p in enumerate(paths):
        cell = _path_cell(p)
        if cell is None:
            out[i] = ""
            continue
        names = [str(x) for x in cell]
        for x in names:
            problem = path_name_problem(x)
            if problem is not None:
                raise ValueError(f"row {i}: {problem}")
        out[i] = PATH_SEPARATOR.join(names)
    return out


def path_name_problem(name: Any) -> str | None:
    """Why node ``name`` (a label, written as ``str(name)``) cannot be written in a path
    string that reads back (:func:`path_strings`), or None if it can."""
    x = str(name)
    if x == "" or x != x.strip() or PATH_SEPARATOR in x:
        return (f"node name {x!r} cannot be written as a path string (names joined by {PATH_SEPARATOR!r} must be "
                "non-empty, without the separator or surrounding whitespace)")
    return None


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------


def validate_trace(
    df: pd.DataFrame,
    hosts: int | None = None,
    *,
    source: str = "trace",
    infer_hosts: bool = False,
    topology: Any = None,
) -> pd.DataFrame:
    """Check a trace against the column contract and return a normalized copy.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per flow. Required columns ``arrival_s, src, dst, size_bytes``;
        optional ``id, deadline_s, weight, data_span_s, size_known`` (see the
        module docstring for dtypes, defaults and constraints). Columns may
        hold numbers or strings that are numbers (plain ASCII decimals, read
        as :func:`read_trace` reads a CSV cell).
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
    topology : a fabric (:mod:`flowsched.topology`) or None
        When given, ``hosts`` defaults to its host count and each ``path`` cell is checked
        against it and holds the graph's own node labels (see "Pinned routes" above).

    Returns
    -------
    pandas.DataFrame
        A new frame with exactly the columns :data:`TRACE_COLUMNS` in that
        order, the normalized dtypes, defaults filled in, rows in the input
        order and a ``RangeIndex`` (and ``path`` after them when the trace has
        it). The input is not modified.

    Raises
    ------
    TraceError
        On the first problem found, naming ``source``, the row
        (``row <index label>``), the column and the bad value: an empty
        trace, a missing or unknown column, a non-numeric value, NaN in a
        required column, ``size_bytes <= 0``, a negative or non-finite
        ``arrival_s``, ``src == dst``, a host out of range, a duplicate
        ``id``, a bad ``size_known`` value, ``weight <= 0``, a negative
        ``data_span_s``, ``deadline_s <= 0``, any value outside the
        limits of the contract (:data:`LIMITS`), or a bad ``path`` cell.

    Warns
    -----
    TimeResolutionWarning
        When the float64 spacing at the largest arrival is coarser than
        :data:`ARRIVAL_RESOLUTION_S` (the message states the resolution and
        the smallest gap between distinct arrivals).
    """
    if not isinstance(df, pd.DataFrame):
        raise TraceError(f"{source}: a trace must be a pandas DataFrame, got {type(df).__name__}")
    return _validate(df, hosts, source, _frame_locator(df.index), infer_hosts, topology)


def validate_columns(
    columns: Mapping[str, Any],
    hosts: int | None = None,
    *,
    source: str = "trace",
    topology: Any = None,
) -> dict[str, np.ndarray]:
    """:func:`validate_trace` for a trace held as columns: the same contract, checks,
    errors and warnings, without a DataFrame.

    What generators that build a trace per episode use (the switch env draws one at each
    autoreset): the checks are numpy operations, and a DataFrame's construction and
    column access would cost more than them.

    Parameters
    ----------
    columns : mapping of str to 1-D array-like
        One entry per column, all of the same length (the names and contents as
        :func:`validate_trace`'s columns). Numeric numpy arrays are read as they are;
        anything else is read as a pandas Series would be.
    hosts, source, topology :
        As :func:`validate_trace`. Errors locate a row by its position (``row 3``).

    Returns
    -------
    dict of str to numpy.ndarray
        New arrays (the input is not modified): exactly the columns
        :data:`TRACE_COLUMNS` in that order, with :func:`validate_trace`'s dtypes and
        defaults (and ``path`` after them when given), so that
        ``pandas.DataFrame(validate_columns(c))`` equals ``validate_trace(pandas.DataFrame(c))``.

    Raises
    ------
    TraceError
        As :func:`validate_trace`, and for columns of different lengths or not 1-D.
    """
    if not isinstance(columns, Mapping):
        raise TraceError(f"{source}: columns must be a mapping of column name to array, got {type(columns).__name__}")
    names = [str(c).strip() if isinstance(c, str) else c for c in columns]
    arrays: dict[Any, Any] = {}
    for key, name in zip(columns, names, strict=True):
        value = columns[key]
        a = value if isinstance(value, np.ndarray) else None
        if a is not None and a.ndim != 1:
            raise TraceError(f"{source}: column {str(name)!r} must be one-dimensional, got shape {a.shape}")
        arrays[name] = a if a is not None and a.dtype.kind in "biuf" else pd.Series(value)
    lengths = {str(name): len(v) for name, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise TraceError(f"{source}: the columns have different lengths: {lengths}")
    locate = _positions_locator(None, "row")
    out = _check(arrays, names, next(iter(lengths.values()), 0), hosts, source, locate, topology=topology)
    _warn_resolution(out["arrival_s"], source, locate, stacklevel=3)
    return out


def _load_trace(
    trace: pd.DataFrame | str | os.PathLike[str], *, infer_hosts: bool = False, topology: Any = None,
    pins_refused: str | None = None,
) -> pd.DataFrame:
    """:func:`read_trace` for a path, else :func:`validate_trace` (no host count but the
    topology's): as :func:`flowsched.simulate` loads a trace. ``pins_refused``, when given,
    says why no route may be pinned (no topology to pin them on): a ``path`` cell that pins
    one is then an error naming its row, index label or line as any other bad cell."""
    if isinstance(trace, (str, os.PathLike)):
        return _read(trace, None, infer_hosts, topology, pins_refused)
    if not isinstance(trace, pd.DataFrame):
        raise TraceError(f"trace: a trace must be a pandas DataFrame, got {type(trace).__name__}")
    return _validate(trace, None, "trace", _frame_locator(trace.index), infer_hosts, topology, pins_refused)


def _validate(
    df: pd.DataFrame, hosts: int | None, source: str, locate: Locator, infer_hosts: bool = False,
    topology: Any = None, pins_refused: str | None = None,
) -> pd.DataFrame:
    columns = [str(c).strip() if isinstance(c, str) else c for c in df.columns]
    frame = df.copy(deep=False)
    frame.columns = columns
    out = _check(frame, columns, len(df), hosts, source, locate, infer_hosts, topology, pins_refused)
    result = pd.DataFrame(out)
    result.attrs.update(df.attrs)
    _warn_resolution(out["arrival_s"], source, locate)
    return result


def _check(
    frame: Any, columns: list[Any], n: int, hosts: int | None, source: str, locate: Locator,
    infer_hosts: bool = False, topology: Any = None, pins_refused: str | None = None,
) -> dict[str, np.ndarray]:
    """The checks of the trace contract on ``frame``'s columns (``frame[name]``: a pandas
    Series, or a numpy array for :func:`validate_columns`), whose names are ``columns``
    (stripped) and length ``n``: the normalized columns, in the contract's order."""
    if topology is not None:
        n_topo = int(topology.n_hosts)
        if hosts is not None and hosts != n_topo:
            raise TraceError(f"{source}: hosts={hosts!r} but the topology has {n_topo} hosts")
        if infer_hosts:
            raise TraceError(f"{source}: infer_hosts=True sizes the fabric from the trace; it excludes a topology")
        hosts = n_topo
    if hosts is not None:
        if isinstance(hosts, bool) or not isinstance(hosts, (int, np.integer)) or hosts < 2:
            raise TraceError(f"{source}: hosts must be an integer >= 2 or None, got {hosts!r}")
        try:
            hosts = check_hosts(hosts)
        except ValueError as exc:
            raise TraceError(f"{source}: {exc}") from None
        if infer_hosts:
            raise TraceError(f"{source}: infer_hosts=True sizes the fabric from the trace; it excludes hosts={hosts}")
    dup = sorted({str(c) for c in columns if columns.count(c) > 1})
    if dup:
        raise _fail(source, None, None, f"duplicate column(s) {dup}")
    unknown = [c for c in columns if c not in TRACE_COLUMNS and c != PATH_COLUMN]
    if unknown:
        raise _fail(
            source,
            None,
            None,
            f"unknown column(s) {[str(c) for c in unknown]}; allowed columns are {list(TRACE_COLUMNS)} and "
            f"{PATH_COLUMN!r} (required: {list(REQUIRED_COLUMNS)})",
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise _fail(
            source,
            None,
            None,
            f"missing required column(s) {missing}; present: {[str(c) for c in columns]}",
        )
    if n == 0:
        raise _fail(source, None, None, "empty trace (no flows)")
    if n > MAX_FLOWS:
        raise _fail(source, None, None, f"{n} rows (flows): at most MAX_FLOWS = {MAX_FLOWS} are allowed")

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
    if "id" in columns:
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
    if "deadline_s" in columns:
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
    if "weight" in columns:
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
    if "data_span_s" in columns:
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
    if "size_known" in columns:
        out["size_known"] = _to_bool(frame["size_known"], "size_known", source, locate)
    else:
        out["size_known"] = np.ones(n, dtype=bool)

    if PATH_COLUMN in columns:
        paths = _to_paths(frame[PATH_COLUMN], PATH_COLUMN, source, locate)
        if topology is not None:
            from flowsched.topology import resolve_paths

            paths, problem = resolve_paths(topology, paths, out["src"], out["dst"])
            if problem is not None:
                raise _fail(source, locate(problem[0]), PATH_COLUMN, problem[1])
        elif pins_refused is not None:
            pinned = np.flatnonzero(np.fromiter((p is not None for p in paths), bool, len(paths)))
            if pinned.size:
                raise _fail(source, locate(int(pinned[0])), PATH_COLUMN,
                            f"{pins_refused}; {pinned.size} row(s) pin one")
        out[PATH_COLUMN] = paths

    return {c: out[c] for c in (*TRACE_COLUMNS, PATH_COLUMN) if c in out}


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


def _warn_resolution(a: np.ndarray, source: str, locate: Locator, stacklevel: int = 4) -> None:
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
        stacklevel=stacklevel,
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


def read_trace(
    path: str | os.PathLike[str], hosts: int | None = None, *, infer_hosts: bool = False, topology: Any = None
) -> pd.DataFrame:
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
    topology : a fabric or None
        Passed to the validation: the host count, and the fabric the ``path``
        column's routes are checked against.

    Returns
    -------
    pandas.DataFrame
        The normalized trace (see :func:`validate_trace`).

    Raises
    ------
    TraceError
        Unknown suffix, no such file, a directory, an unreadable or malformed
        file, or any contract violation. For CSV files the message gives the
        1-based line number in the file that the row begins on (the header is
        line 1; a quoted cell may span lines), for Parquet files the 0-based row.

    Notes
    -----
    CSV: every line has as many fields as the header (a line with more or fewer
    is an error naming it); lines that are empty or only whitespace are ignored
    (they still count for line numbers), any other line is a flow (``,,,`` is a
    flow with missing values). An empty ``deadline_s`` cell means no deadline
    (an empty ``path`` cell: ECMP); ``size_known`` accepts true/false/1/0 in any
    case. Numbers are plain ASCII decimals: an optional sign, digits with an
    optional ``.``, an optional exponent, surrounding whitespace (and ``inf``,
    ``nan``, which the limits then refuse where they do not belong); digit
    separators (``1_000``), non-ASCII digits, a value beyond the float64 range
    and a nonzero value that underflows to 0 are errors showing the cell, and an
    integer column takes only integral values (``3``, ``3.0``, ``3e0``), read
    exactly. Floats are parsed with correct rounding, so files written by
    :func:`write_trace` read back bit for bit.

    Parquet: a named index (any level with a name) is read as columns, checked
    as any column (``id`` is one); an unnamed index (the row labels of a
    filtered frame) is ignored.
    """
    return _read(path, hosts, infer_hosts, topology)


def _read(path: str | os.PathLike[str], hosts: int | None, infer_hosts: bool, topology: Any,
          pins_refused: str | None = None) -> pd.DataFrame:
    p = Path(path)
    suffix = _suffix(p)
    source = str(p)
    _check_file(p, source)
    if suffix == ".parquet":
        try:
            df = pd.read_parquet(p)
        except Exception as exc:  # pyarrow raises many types
            raise TraceError(f"{source}: cannot read Parquet file: {exc}") from exc
        df = _index_to_columns(df, source)
        return _validate(df, hosts, source, _positions_locator(None, "row"), infer_hosts, topology, pins_refused)
    raw, locate = _read_csv(p, source)
    return _validate(raw, hosts, source, locate, infer_hosts, topology, pins_refused)


def _check_file(p: Path, source: str) -> None:
    """Raise a TraceError unless ``p`` names an existing file (not a directory)."""
    try:
        if p.is_dir():
            raise TraceError(f"{source}: is a directory, not a trace file")
        if not p.exists():
            raise TraceError(f"{source}: no such file")
    except OSError as exc:
        raise TraceError(f"{source}: cannot read: {exc.strerror or exc}") from exc


def _index_to_columns(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """A Parquet file's frame with its named index levels (``set_index("id")`` before writing)
    turned back into columns, then checked as any column; unnamed levels (the row labels of a
    filtered frame) are dropped."""
    names = list(df.index.names)
    named = [i for i, name in enumerate(names) if name is not None]
    if named:
        both = sorted({str(names[i]) for i in named if names[i] in df.columns})
        if both:
            raise TraceError(f"{source}: {both} appear both as column(s) and as index level(s) of the Parquet file")
        df = df.reset_index(level=named, allow_duplicates=True)  # twice the same level name: a duplicate column
    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index(drop=True)
    return df


_CSV_OPTIONS: dict[str, Any] = {
    "dtype": str,
    "keep_default_na": False,
    "na_filter": False,
    "skip_blank_lines": False,  # blank lines are rows, so that the rows can be matched to lines
    "skipinitialspace": True,
    "index_col": False,  # one field too many per row is an error, never an index
}


def _read_csv(p: Path, source: str) -> tuple[pd.DataFrame, Locator]:
    """The cells of a CSV trace as strings (blank lines dropped) and the locator of its rows
    (their lines); a TraceError for a malformed file, a row whose number of fields is not the
    header's naming its line."""
    try:
        with open(p, newline="", encoding="utf-8-sig", errors="replace") as fh:
            header = next(csv.reader(fh, skipinitialspace=True), [])
    except (OSError, csv.Error) as exc:
        raise TraceError(f"{source}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    names = [h.strip() for h in header]
    twice = sorted({h for h in names if h and names.count(h) > 1})
    if twice:
        raise TraceError(f"{source}: line 1 (header): column(s) {twice} appear more than once")
    if "" in names:
        raise TraceError(
            f"{source}: line 1 (header): empty column name(s) (is there a trailing comma?); "
            f"allowed columns are {list(TRACE_COLUMNS)}"
        )
    try:
        with warnings.catch_warnings():
            # index_col=False: pandas warns (first data row) or raises (later rows) for a row with
            # more fields than the header, and drops the extra fields: an error here, located below
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(p, **_CSV_OPTIONS)
    except pd.errors.EmptyDataError as exc:
        raise TraceError(f"{source}: empty file (a CSV trace needs a header line)") from exc
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        first_line, n_fields, blank = _csv_records(p, source)
        problem = _field_count_error(p, source, len(header), first_line, n_fields, blank)
        raise (problem or TraceError(f"{source}: cannot parse CSV: {str(exc).strip()}")) from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{source}: cannot parse CSV: {exc}") from exc
    except OSError as exc:
        raise TraceError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    if any(str(c).startswith("Unnamed:") for c in raw.columns):
        raise TraceError(
            f"{source}: line 1 (header): empty column name(s) (is there a trailing comma?); "
            f"allowed columns are {list(TRACE_COLUMNS)}"
        )
    n_records = len(raw)
    first: np.ndarray | None = None
    rows: np.ndarray | None = None
    # pandas fills the missing fields of a row shorter than the header with "" (and reads a blank
    # line as a row of ""), so such a row ends with an empty cell: the fields of each line are
    # counted only when the last column has an empty cell, never for a file whose last column is
    # always filled (any file write_trace writes without a path column).
    if len(raw) and bool((raw.iloc[:, -1] == "").any()):
        first, n_fields, blank = _csv_layout(p, source, len(raw))
        problem = _field_count_error(p, source, len(raw.columns), first, n_fields, blank)
        if problem is not None:
            raise problem
        if blank.any():
            rows = np.flatnonzero(~blank)
            raw = raw.iloc[rows].reset_index(drop=True)
    return raw, _csv_locator(p, n_records, rows, first)


def _csv_layout(p: Path, source: str, n_records: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_csv_records`, counted directly in the file's bytes when no cell is quoted (one
    record per line, as pandas reads it) and the file has the ``n_records`` records that pandas
    read."""
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise TraceError(f"{source}: cannot read: {exc.strerror or exc}") from exc
    if b'"' not in data and data.count(b"\r") == data.count(b"\r\n"):
        arr = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(arr == 0x0A)  # "\n"
        if data and not data.endswith(b"\n"):
            ends = np.append(ends, len(data))
        if ends.size - 1 == n_records:
            commas = np.flatnonzero(arr == 0x2C)  # ","
            n_commas = np.diff(np.searchsorted(commas, ends), prepend=0)[1:]  # after the header
            starts = ends[:-1] + 1
            blank = np.zeros(n_records, dtype=bool)
            for i in np.flatnonzero(n_commas == 0).tolist():
                blank[i] = not data[starts[i]:ends[i + 1]].strip()
            return np.arange(2, n_records + 2, dtype=np.int64), n_commas + 1, blank
    layout = _csv_records(p, source)
    if layout[0].size != n_records:
        raise TraceError(
            f"{source}: cannot parse CSV: pandas and the csv module split the file into different records "
            f"({n_records} and {layout[0].size}; an unbalanced quote?)"
        )
    return layout


def _csv_records(p: Path, source: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each record of a CSV file after the header, as the csv module reads it: the line it
    begins on (1-based, a quoted cell may span lines), its number of fields, and whether it is
    blank (an empty line or only whitespace)."""
    first: list[int] = []
    n_fields: list[int] = []
    blank: list[bool] = []
    text = [""]  # the last line read: a one-field record is blank if its line is, not a quoted ""

    def lines(fh: Iterable[str]) -> Iterator[str]:
        for one in fh:
            text[0] = one
            yield one

    try:
        with open(p, newline="", encoding="utf-8-sig", errors="replace") as fh:
            reader = csv.reader(lines(fh), skipinitialspace=True)
            next(reader, None)
            line = reader.line_num
            for rec in reader:
                first.append(line + 1)
                n_fields.append(len(rec))
                blank.append(not rec or (len(rec) == 1 and reader.line_num == line + 1
                                         and not text[0].strip(_ASCII_SPACE)))
                line = reader.line_num
    except (OSError, csv.Error) as exc:
        raise TraceError(f"{source}: cannot parse CSV: {getattr(exc, 'strerror', None) or exc}") from exc
    return np.asarray(first, dtype=np.int64), np.asarray(n_fields, dtype=np.int64), np.asarray(blank, dtype=bool)


def _field_count_error(p: Path, source: str, k: int, first: np.ndarray, n_fields: np.ndarray,
                       blank: np.ndarray) -> TraceError | None:
    """The error for the first record (not blank) whose number of fields is not the header's
    ``k``, or None if there is none."""
    bad = np.flatnonzero(~blank & (n_fields != k))
    if not bad.size:
        return None
    i = int(bad[0])
    n = int(n_fields[i])
    hint = ""
    if n > k:
        try:
            with open(p, newline="", encoding="utf-8-sig", errors="replace") as fh:
                rec = next(itertools.islice(csv.reader(fh, skipinitialspace=True), i + 1, None), [])
        except (OSError, csv.Error):
            rec = []
        if rec[k:] and not any(x.strip(_ASCII_SPACE) for x in rec[k:]):
            hint = " (a trailing comma?)"
    more = f" ({bad.size - 1} more line(s) with the same problem)" if bad.size > 1 else ""
    return TraceError(f"{source}, line {int(first[i])}: {n} field{'s' if n != 1 else ''}, "
                      f"the header has {k}{hint}{more}")


def _csv_locator(p: Path, n_records: int, rows: np.ndarray | None, first: np.ndarray | None) -> Locator:
    """Locator for the rows of a CSV trace: the line each row begins on. ``rows``: the rows'
    positions among the file's ``n_records`` records (blank lines dropped), ``first``: the line
    of each record when known. Otherwise the lines are found when an error (or a warning) first
    needs one: record ``i`` is on line ``i + 2`` unless a cell is quoted, which may span lines
    (a ``path``), and then the csv module counts them."""
    lines: np.ndarray | None = None

    def locate(pos: int) -> str:
        nonlocal lines
        if lines is None:
            starts = first
            if starts is None:
                try:
                    quoted = b'"' in p.read_bytes()
                    starts = _csv_records(p, str(p))[0] if quoted else None
                except (OSError, TraceError):
                    starts = None
                if starts is None or starts.size != n_records:
                    starts = np.arange(2, n_records + 2, dtype=np.int64)
            lines = starts if rows is None else starts[rows]
        return f"line {int(lines[pos])}"

    return locate


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
        order (and ``path`` when the trace has it).
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
    the normalized frame exactly. ``path`` cells are written (CSV and
    Parquet) as node names joined by :data:`PATH_SEPARATOR` (:func:`path_strings`;
    empty for ECMP), and read back as tuples of those strings (the labels
    themselves for string-labelled graphs; against a topology, any label).
    """
    p = Path(path)
    suffix = _suffix(p)
    trace = validate_trace(df, source=str(p))
    if PATH_COLUMN in trace.columns:
        try:
            trace[PATH_COLUMN] = path_strings(trace[PATH_COLUMN].to_numpy(dtype=object))
        except ValueError as exc:
            raise TraceError(f"{p}: column {PATH_COLUMN!r}: {exc}") from None
    if suffix == ".parquet":
        trace.to_parquet(p, index=False)
        return
    cols: dict[str, np.ndarray] = {}
    if PATH_COLUMN in trace.columns:
        cols[PATH_COLUMN] = trace[PATH_COLUMN].to_numpy(dtype=object)
    for c in TRACE_COLUMNS:
        v = trace[c].to_numpy()
        if c in _INT_COLUMNS:
            cols[c] = v.astype(str).astype(object)
        elif c == "size_known":
            cols[c] = np.where(v, "true", "false").astype(object)
        else:
            cols[c] = _float_strings(v, empty_nan=(c == "deadline_s"))
    out = pd.DataFrame({c: cols[c] for c in (*TRACE_COLUMNS, PATH_COLUMN) if c in cols})
    out.to_csv(p, index=False, lineterminator="\n")
