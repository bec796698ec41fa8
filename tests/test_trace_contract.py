"""The trace contract's limits (issue 16, items 6, 7 and the CLI parts of 8).

Every value outside flowsched.traces.LIMITS is a TraceError (a ValueError) that names the
source, the row, the column and the value, on every path into the simulator (a frame, a
CSV file, simulate() with or without a topology, the CLI); valid traces within the
limits always load. A hypothesis fuzzer checks both.
"""
from __future__ import annotations

import math
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import flowsched
from flowsched import workloads as wl
from flowsched.cli import main as cli_main
from flowsched.sim import FCT_RESOLUTION
from flowsched.traces import (
    LIMITS,
    MAX_ARRIVAL_S,
    MAX_ARRIVAL_SPAN_S,
    MAX_DATA_SPAN_S,
    MAX_DEADLINE_S,
    MAX_HOSTS,
    MAX_INFERRED_HOST_ID,
    MAX_SIZE_BYTES,
    MAX_WEIGHT,
    MIN_SIZE_BYTES,
    MIN_WEIGHT,
    TimeResolutionWarning,
    TraceError,
    read_trace,
    validate_trace,
)

HOSTS = 8


def two_flows(**cols: Any) -> pd.DataFrame:
    df = pd.DataFrame({"arrival_s": [0.0, 1e-3], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e3, 2e3]})
    for k, v in cols.items():
        df[k] = v
    return df


# ----------------------------------------------------------------------------
# each limit: the bound itself is accepted, just beyond it is an error naming the column
# ----------------------------------------------------------------------------

# (column, accepted values at row 1, rejected values at row 1, text of the error)
LIMIT_CASES = [
    (
        "size_bytes",
        [MIN_SIZE_BYTES, MAX_SIZE_BYTES],
        [MIN_SIZE_BYTES * 0.99, 1e-300, 5e-324, MAX_SIZE_BYTES * 1.01, 1e308],
        "MIN_SIZE_BYTES, MAX_SIZE_BYTES",
    ),
    ("arrival_s", [MAX_ARRIVAL_SPAN_S], [MAX_ARRIVAL_SPAN_S * 1.0000001, 1e308], "MAX_ARRIVAL_S"),
    ("deadline_s", [MAX_DEADLINE_S, 1e-300, math.nan], [MAX_DEADLINE_S * 1.01, 1e308], "MAX_DEADLINE_S"),
    ("data_span_s", [0.0, MAX_DATA_SPAN_S], [MAX_DATA_SPAN_S * 1.01, 1e308], "MAX_DATA_SPAN_S"),
    (
        "weight",
        [MIN_WEIGHT, MAX_WEIGHT],
        [MIN_WEIGHT * 0.99, 1e-300, MAX_WEIGHT * 1.01, 1e308],
        "MIN_WEIGHT, MAX_WEIGHT",
    ),
    ("dst", [MAX_HOSTS - 1], [MAX_HOSTS, 50_000_000, 2_000_000_000, 2**62], "MAX_HOSTS"),
]


@pytest.mark.parametrize(("column", "ok", "bad", "text"), LIMIT_CASES)
def test_limits_bound_accepted_beyond_rejected(column: str, ok: list, bad: list, text: str) -> None:
    base = two_flows(deadline_s=[math.nan, math.nan], weight=[1.0, 1.0], data_span_s=[0.0, 0.0])
    for v in ok:
        df = base.astype({column: object})
        df.at[1, column] = v
        assert validate_trace(df)[column].iloc[1] == v or math.isnan(v)
    for v in bad:
        df = base.astype({column: object})
        df.at[1, column] = v
        with pytest.raises(TraceError) as err:
            validate_trace(df, source="t.csv")
        msg = str(err.value)
        assert msg.startswith("t.csv, row 1, column " + repr(column)), msg
        assert text in msg or "the arrivals span" in msg, msg
        assert repr(float(v) if column != "dst" else int(v)) in msg, msg


def test_arrival_span_names_both_ends() -> None:
    df = two_flows(arrival_s=[5.0, 1001000005.0])
    with pytest.raises(TraceError, match=r"row 1, column 'arrival_s': the arrivals span 1\.001e\+09 s, from 5\.0 "
                                         r"\(row 0\) to 1001000005\.0; at most MAX_ARRIVAL_SPAN_S = 1e\+09 s"):
        validate_trace(df)
    with pytest.warns(TimeResolutionWarning, match=r"resolved to 0\.125 s"):
        validate_trace(two_flows(arrival_s=[MAX_ARRIVAL_S - MAX_ARRIVAL_SPAN_S, MAX_ARRIVAL_S]))
    assert LIMITS["arrival span (last - first arrival_s)"] == (0.0, MAX_ARRIVAL_SPAN_S)


def test_rows_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import flowsched.traces as traces

    monkeypatch.setattr(traces, "MAX_FLOWS", 1)
    with pytest.raises(TraceError, match=r"2 rows \(flows\): at most MAX_FLOWS = 1"):
        validate_trace(two_flows())


# ----------------------------------------------------------------------------
# the reproductions (item 6: memory blow-up from one host id; item 7: extremes)
# ----------------------------------------------------------------------------


def csv(tmp_path: Path, body: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text("arrival_s,src,dst,size_bytes\n" + body)
    return p


@pytest.mark.parametrize(
    ("dst", "text"),
    [
        (5_000_000, "host id above MAX_INFERRED_HOST_ID = 100000 with no host count given"),  # took 3.4 GB
        (50_000_000, "host id above the largest fabric"),  # aborted the process
        (2_000_000_000, "host id above the largest fabric"),  # MemoryError
    ],
)
def test_huge_host_id_without_host_count(tmp_path: Path, dst: int, text: str) -> None:
    path = csv(tmp_path, f"0,0,1,1000\n0.001,1,{dst},2000\n")
    for trace in (path, pd.read_csv(path)):
        with pytest.raises(TraceError) as err:
            flowsched.simulate(trace)
        msg = str(err.value)
        assert "column 'dst'" in msg and text in msg and f"got {dst}" in msg
        assert "line 3" in msg if isinstance(trace, Path) else "row 1" in msg


def test_host_ids_up_to_the_inferred_limit_size_the_fabric(tmp_path: Path) -> None:
    res = flowsched.simulate(csv(tmp_path, f"0,0,{MAX_INFERRED_HOST_ID},1000\n"))
    assert len(res.links) == 2 * (MAX_INFERRED_HOST_ID + 1)
    with pytest.raises(TraceError, match="MAX_INFERRED_HOST_ID"):
        flowsched.simulate(csv(tmp_path, f"0,0,{MAX_INFERRED_HOST_ID + 1},1000\n"))
    # an explicit host count takes larger ids (only validated here: 5M hosts take gigabytes)
    assert validate_trace(two_flows(dst=[1, 5_000_000]), hosts=5_000_001)["dst"].max() == 5_000_000
    with pytest.raises(TraceError, match="infer_hosts=True sizes the fabric from the trace"):
        validate_trace(two_flows(), hosts=4, infer_hosts=True)


@pytest.mark.parametrize(
    "topology",
    [
        lambda: flowsched.BigSwitch(MAX_HOSTS + 1),
        lambda: flowsched.BigSwitch(10**12),
        lambda: flowsched.LeafSpine(2**20, 32, 4),
        lambda: flowsched.LeafSpine(2**12, 2, 2**13),
    ],
)
def test_absurd_topologies_are_value_errors(topology) -> None:
    with pytest.raises(ValueError, match=r"2\*\*24 = 16777216"):
        topology()


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("0,0,1,1e308\n", "column 'size_bytes': must be within [MIN_SIZE_BYTES, MAX_SIZE_BYTES]"),
        ("0,0,1,1e-300\n", "column 'size_bytes': must be within [MIN_SIZE_BYTES, MAX_SIZE_BYTES]"),
        ("0,0,1,1000\n1e308,1,0,1000\n", "column 'arrival_s': must be <= MAX_ARRIVAL_S"),
        ("1e308,0,1,1000\n", "column 'arrival_s': must be <= MAX_ARRIVAL_S"),
        ("1.7e18,0,1,1000\n", "is it in ms, us or ns?"),
    ],
)
def test_extreme_values_rejected(tmp_path: Path, body: str, text: str) -> None:
    with pytest.raises(TraceError) as err:
        flowsched.simulate(csv(tmp_path, body), flowsched.BigSwitch(2))
    assert text in str(err.value) and "t.csv, line" in str(err.value)


# ----------------------------------------------------------------------------
# the fuzzer: malformed or extreme cells always give a TraceError naming the column and
# the row; valid traces within the limits always load (and simulate)
# ----------------------------------------------------------------------------

nan, inf = math.nan, math.inf
WRONG_TYPES = [[1.0], {"a": 1}, 1j, object()]
BAD_VALUES: dict[str, list[Any]] = {
    "arrival_s": [nan, inf, -inf, -1e-9, -5.0, 1e308, 1.7e18, MAX_ARRIVAL_S * 1.5, "abc", "", None, True, "1e5x",
                  *WRONG_TYPES],
    "size_bytes": [nan, inf, -inf, 0.0, -0.0, -1.0, 1e308, 1e-300, 5e-324, 1e-7, MAX_SIZE_BYTES * 2, "abc", "", None,
                   True, *WRONG_TYPES],
    "src": [nan, inf, -1, 1.5, MAX_HOSTS, 2**31, 2**63, 1e30, -(2**63), "x", "", None, True, *WRONG_TYPES],
    "dst": [nan, inf, -1, 1.5, MAX_HOSTS, 2**31, 2**63, 1e30, "x", "", None, True, *WRONG_TYPES],
    "deadline_s": [inf, -inf, 0.0, -1.0, 1e308, MAX_DEADLINE_S * 2, "abc", True, *WRONG_TYPES],
    "weight": [nan, inf, 0.0, -1.0, 1e308, 1e-300, MAX_WEIGHT * 2, MIN_WEIGHT / 2, "w", "", None, True, *WRONG_TYPES],
    "data_span_s": [nan, inf, -1e-9, 1e308, MAX_DATA_SPAN_S * 2, "abc", "", None, True, *WRONG_TYPES],
    "size_known": ["maybe", 2, 0.5, "", None, nan, "yes", *WRONG_TYPES],
    "id": [nan, -1, 1.5, "x", "", None, True, 2**63, *WRONG_TYPES],
}
EXTRA = {"span": "arrival_s", "duplicate_id": "id", "inferred_host": "dst"}


@st.composite
def valid_traces(draw: st.DrawFn, max_rows: int = 6) -> pd.DataFrame:
    n = draw(st.integers(1, max_rows))
    base = draw(st.sampled_from([0.0, 1.7e9, 2.0**32, 1e12, MAX_ARRIVAL_S - MAX_ARRIVAL_SPAN_S]))
    offs = draw(st.lists(st.floats(0, MAX_ARRIVAL_SPAN_S), min_size=n, max_size=n))
    src = draw(st.lists(st.integers(0, HOSTS - 1), min_size=n, max_size=n))
    dst = [(s + draw(st.integers(1, HOSTS - 1))) % HOSTS for s in src]
    floats = lambda lo, hi: st.lists(st.floats(lo, hi), min_size=n, max_size=n)  # noqa: E731
    return pd.DataFrame(
        {
            "id": draw(st.permutations(range(n))),
            "arrival_s": [min(base + o, MAX_ARRIVAL_S) for o in offs],
            "src": src,
            "dst": dst,
            "size_bytes": draw(floats(MIN_SIZE_BYTES, MAX_SIZE_BYTES)),
            "deadline_s": draw(
                st.lists(st.one_of(st.just(nan), st.floats(5e-324, MAX_DEADLINE_S)), min_size=n, max_size=n)
            ),
            "weight": draw(floats(MIN_WEIGHT, MAX_WEIGHT)),
            "data_span_s": draw(floats(0.0, MAX_DATA_SPAN_S)),
            "size_known": draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        }
    )


def _csv_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v).replace(",", ";").replace("\n", " ")


def _check_rejected(df: pd.DataFrame, row: int, column: str, tmp_path: Path, infer: bool) -> None:
    """Every path gives a TraceError naming the source, the row and the column."""
    frame = df.copy()
    frame.index = range(100, 100 + len(df))
    paths: list[tuple[str, Any]] = [
        ("validate", lambda: validate_trace(frame, source="fuzz", infer_hosts=infer)),
        ("simulate", lambda: flowsched.simulate(frame, None if infer else flowsched.BigSwitch(HOSTS), "ps")),
    ]
    path = tmp_path / "fuzz.csv"
    path.write_text(",".join(df.columns) + "\n" + "".join(
        ",".join(_csv_cell(v) for v in rec) + "\n" for rec in df.itertuples(index=False)))
    paths.append(("csv", lambda: read_trace(path, infer_hosts=infer)))
    for name, call in paths:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimeResolutionWarning)
            with pytest.raises(TraceError) as err:
                call()
        msg = str(err.value)
        assert f"column {column!r}" in msg, (name, msg)
        where = f"line {row + 2}" if name == "csv" else f"row {100 + row}"
        assert where in msg, (name, msg)


@st.composite
def malformed(draw: st.DrawFn) -> tuple[pd.DataFrame, int, str, bool]:
    """A valid trace with one bad cell: (trace, its row, its column, infer_hosts)."""
    df = draw(valid_traces())
    kind = draw(st.sampled_from(sorted(BAD_VALUES) + sorted(EXTRA)))
    column = EXTRA.get(kind, kind)
    pair = kind in ("span", "duplicate_id")  # needs a second row
    if pair and len(df) == 1:
        df = pd.concat([df, df.iloc[[0]].assign(id=1)], ignore_index=True)
    row = draw(st.integers(1 if pair else 0, len(df) - 1))
    df = df.astype({column: object})
    if kind == "span":  # above every other arrival (they span <= 1e9 s), so the error names this row
        value: Any = float(df["arrival_s"].drop(index=row).min()) + MAX_ARRIVAL_SPAN_S * draw(st.floats(1.001, 2.0))
    elif kind == "duplicate_id":
        value = int(df.at[draw(st.integers(0, row - 1)), "id"])
    elif kind == "inferred_host":
        value = draw(st.integers(MAX_INFERRED_HOST_ID + 1, MAX_HOSTS - 1))
    else:
        value = draw(st.sampled_from(BAD_VALUES[kind]))
    df.at[row, column] = value
    return df, row, column, kind == "inferred_host"


BASE = pd.DataFrame({
    "id": [0, 1, 2], "arrival_s": [0.0, 1e-3, 2e-3], "src": [0, 1, 2], "dst": [1, 2, 0], "size_bytes": [1e3, 2e3, 3e3],
    "deadline_s": [nan, 0.1, nan], "weight": [1.0, 2.0, 1.0], "data_span_s": [0.0, 1e-4, 0.0],
    "size_known": [True, False, True],
})


@pytest.mark.parametrize(("column", "value"), [(c, v) for c, vs in BAD_VALUES.items() for v in vs],
                         ids=lambda x: repr(x)[:20])
def test_every_bad_value_is_a_trace_error(tmp_path: Path, column: str, value: Any) -> None:
    """Each bad value of the fuzzer's table, in the middle row of a valid trace, on every path."""
    df = BASE.astype({column: object})
    df.at[1, column] = value
    _check_rejected(df, 1, column, tmp_path, infer=False)


def _fuzz_malformed(case: tuple[pd.DataFrame, int, str, bool], tmp_path: Path) -> None:
    df, row, column, infer = case
    _check_rejected(df, row, column, tmp_path, infer)


def _fuzz_valid(df: pd.DataFrame, tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TimeResolutionWarning)
        norm = validate_trace(df)
        path = tmp_path / "ok.csv"
        flowsched.write_trace(df, path)
        pd.testing.assert_frame_equal(read_trace(path), norm, check_exact=True)
        res = flowsched.simulate(df, flowsched.BigSwitch(HOSTS), "ps")
    f = res.flows
    assert np.isfinite(f["fct_s"]).all() and (f["fct_s"] >= 0).all()
    if not caught:  # silent means right: no flow finishes before its ideal time, within the FCT's resolution
        assert (f["slowdown"] >= 1 - FCT_RESOLUTION).all(), f[["arrival_s", "size_bytes", "fct_s", "ideal_fct_s"]]


def test_a_silent_late_flow_is_resolved_to_fct_resolution() -> None:
    """Found by the long fuzz run: an 11,422 B flow arriving at 2^22 s (where a float64 step
    is 9.3e-10 s) after two tiny ones. Its FCT is resolved to 8 steps over its ideal FCT,
    8.2e-4, under FCT_RESOLUTION, so nothing warns; its finish time falls on the float grid
    0.4 steps before arrival + ideal, so its slowdown is 0.99996: within that resolution,
    not within 1e-6 (the fuzz test's old bound)."""
    df = pd.DataFrame({"arrival_s": [0.0, 4194304.0, 0.0], "src": [0, 0, 0], "dst": [1, 1, 1],
                       "size_bytes": [1.0, 11422.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimeResolutionWarning)
        f = flowsched.simulate(df, flowsched.BigSwitch(2, 10.0), "ps").flows
    step = np.spacing(4194304.0 + f["ideal_fct_s"][1])
    assert abs(f["fct_s"][1] - f["ideal_fct_s"][1]) <= step  # on the grid of simulated time
    assert (f["slowdown"] >= 1 - FCT_RESOLUTION).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=malformed())
def test_fuzz_malformed_cells_are_trace_errors(case, tmp_path: Path) -> None:
    _fuzz_malformed(case, tmp_path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=valid_traces())
def test_fuzz_valid_traces_load_and_simulate(df: pd.DataFrame, tmp_path: Path) -> None:
    _fuzz_valid(df, tmp_path)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=malformed())
def test_fuzz_malformed_cells_are_trace_errors_long(case, tmp_path: Path) -> None:
    _fuzz_malformed(case, tmp_path)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=valid_traces())
def test_fuzz_valid_traces_load_and_simulate_long(df: pd.DataFrame, tmp_path: Path) -> None:
    _fuzz_valid(df, tmp_path)


# ----------------------------------------------------------------------------
# the command line: one clean line on stderr and exit code 2; SIGTERM ends with 143
# ----------------------------------------------------------------------------


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("0,0,1,1000\n0.001,1,5000000,2000\n", "line 3, column 'dst': host id above MAX_INFERRED_HOST_ID"),
        ("0,0,1,1000\n0.001,1,2000000000,2000\n", "line 3, column 'dst': host id above the largest fabric"),
        ("0,0,1,1e308\n", "line 2, column 'size_bytes'"),
        ("0,0,1,1e-300\n", "line 2, column 'size_bytes'"),
        ("1e308,0,1,1000\n", "line 2, column 'arrival_s'"),
    ],
)
def test_cli_trace_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, text: str
) -> None:
    code, out, err = run_cli(capsys, "simulate", "--trace", str(csv(tmp_path, body)), "--scheduler", "srpt")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("flowsched simulate: error: ") and text in err, err


def test_cli_options_out_of_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(csv(tmp_path, "0,0,1,1000\n"))
    for argv, text in [
        (["simulate", "--trace", trace, "--hosts", str(MAX_HOSTS + 1)], "--hosts = 16777217 is above the largest"),
        (["simulate", "--trace", trace, "--topology", "leafspine", "--tors", "100000", "--hosts-per-tor", "1000"],
         "LeafSpine: tors x hosts_per_tor = 100000000 hosts"),
        (["simulate", "--trace", trace, "--out", str(tmp_path / "missing" / "r.csv")], "missing' does not exist"),
        (["simulate", "--trace", trace, "--summary-json", str(tmp_path / "no" / "s.json")], "no' does not exist"),
        (["simulate", "--trace", str(tmp_path / "absent.csv")], "absent.csv"),
        (["generate", "--load", "1.5", "--hosts", "4", "--flows", "10", "--out", str(tmp_path / "g.csv")],
         "--load must be in (0, 1), got 1.5; a load >= 1 overloads the fabric"),
        (["generate", "--load", "0", "--hosts", "4", "--flows", "10", "--out", str(tmp_path / "g.csv")],
         "--load must be in (0, 1), got 0.0"),
        (["generate", "--load", "nan", "--hosts", "4", "--flows", "10", "--out", str(tmp_path / "g.csv")],
         "--load must be in (0, 1), got nan"),
        (["generate", "--load", "0.5", "--hosts", "4", "--flows", "10", "--out", "/nonexistent_dir/x.csv"],
         "--out /nonexistent_dir/x.csv: the directory '/nonexistent_dir' does not exist"),
        (["generate", "--load", "0.5", "--hosts", "4", "--flows", "0", "--out", str(tmp_path / "g.csv")],
         "--flows must be >= 1, got 0"),
    ]:
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and text in err, (argv, err)
    assert not (tmp_path / "g.csv").exists()
    code, out, err = run_cli(capsys, "generate", "--load", "1.5", "--allow-overload", "--hosts", "4", "--flows", "10",
                             "--out", str(tmp_path / "g.csv"))
    assert code == 0 and len(read_trace(tmp_path / "g.csv")) == 10


def test_cli_warns_once_about_coarse_arrivals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "simulate", "--trace", str(csv(tmp_path, "1e12,0,1,1000\n1000000000000.001,1,0,10\n"))
    )
    assert code == 0
    assert err.count("\n") == 1 and err.startswith("flowsched simulate: warning: ") and "resolved to 0.000122 s" in err


def test_cli_sigterm_during_simulate_exits_143(tmp_path: Path) -> None:
    trace = tmp_path / "big.parquet"
    flowsched.write_trace(wl.poisson_all_to_all("websearch", 0.8, 144, 10, 50_000, seed=0), trace)
    proc = subprocess.Popen([sys.executable, "-m", "flowsched.cli", "simulate", "--trace", str(trace), "--scheduler",
                             "fair"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)  # imports and reading take about 1 s here; the run about 6 s of CPU
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)  # a shell shows 128 + 15 = 143
    assert b"Traceback" not in err


def test_generator_counts_within_the_limits() -> None:
    with pytest.raises(ValueError, match=r"n_flows must be at most MAX_FLOWS = 1000000000.*got 10000000000"):
        wl.poisson_all_to_all("websearch", 0.5, 4, 10, 10**10)
    with pytest.raises(ValueError, match=r"hosts = 33554432 is above the largest fabric"):
        wl.poisson_all_to_all("websearch", 0.5, 2**25, 10, 10)
