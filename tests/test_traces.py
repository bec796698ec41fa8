"""Tests of flowsched.traces: the trace column contract, validation messages, file round trips."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flowsched.traces import (
    REQUIRED_COLUMNS,
    TRACE_COLUMNS,
    TRACE_SUFFIXES,
    TraceError,
    read_trace,
    validate_columns,
    validate_trace,
    write_trace,
)


def minimal(n: int = 4) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "arrival_s": np.arange(n, dtype=float) * 0.5,
            "src": np.arange(n) % 3,
            "dst": (np.arange(n) + 1) % 3,
            "size_bytes": np.linspace(1000.0, 4000.0, n),
        }
    )


def full(n: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 8, n)
    return pd.DataFrame(
        {
            "id": rng.permutation(n) * 7 + 3,
            "arrival_s": np.sort(rng.random(n)) * 1e-2,
            "src": src,
            "dst": (src + rng.integers(1, 8, n)) % 8,
            "size_bytes": rng.random(n) * 1e6 + 0.1,
            "deadline_s": np.where(rng.random(n) < 0.5, np.nan, rng.random(n) + 1e-9),
            "weight": rng.random(n) + 0.5,
            "data_span_s": rng.random(n) * 1e-3,
            "size_known": rng.random(n) < 0.5,
        }
    )


# ----------------------------------------------------------------------------
# normalization
# ----------------------------------------------------------------------------


def test_constants() -> None:
    assert TRACE_COLUMNS == (
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
    assert REQUIRED_COLUMNS == ("arrival_s", "src", "dst", "size_bytes")
    assert issubclass(TraceError, ValueError)


def test_defaults_dtypes_and_order() -> None:
    df = minimal()
    out = validate_trace(df)
    assert tuple(out.columns) == TRACE_COLUMNS
    assert dict(out.dtypes.astype(str)) == {
        "id": "int64",
        "arrival_s": "float64",
        "src": "int64",
        "dst": "int64",
        "size_bytes": "float64",
        "deadline_s": "float64",
        "weight": "float64",
        "data_span_s": "float64",
        "size_known": "bool",
    }
    assert out["id"].tolist() == [0, 1, 2, 3]
    assert out["deadline_s"].isna().all()
    assert (out["weight"] == 1.0).all()
    assert (out["data_span_s"] == 0.0).all()
    assert out["size_known"].all()
    assert isinstance(out.index, pd.RangeIndex)
    # input untouched
    assert list(df.columns) == ["arrival_s", "src", "dst", "size_bytes"]


def test_rows_keep_order_and_columns_reordered() -> None:
    df = full(6)
    df = df.iloc[::-1][list(reversed(df.columns))]  # unsorted arrivals, shuffled columns
    out = validate_trace(df)
    assert tuple(out.columns) == TRACE_COLUMNS
    assert out["id"].tolist() == df["id"].tolist()
    assert out["arrival_s"].tolist() == df["arrival_s"].tolist()


def test_numeric_strings_and_integral_floats_accepted() -> None:
    df = pd.DataFrame(
        {
            "arrival_s": ["0", "1.5"],
            "src": ["0", 1.0],
            "dst": [1, "2"],
            "size_bytes": ["10.5", 7],
            "deadline_s": ["", "0.25"],
            "size_known": ["TRUE", "0"],
        }
    )
    out = validate_trace(df, hosts=3)
    assert out["src"].tolist() == [0, 1]
    assert out["size_bytes"].tolist() == [10.5, 7.0]
    assert math.isnan(out["deadline_s"][0]) and out["deadline_s"][1] == 0.25
    assert out["size_known"].tolist() == [True, False]


def test_fractional_size_allowed() -> None:
    df = minimal(2)
    df["size_bytes"] = [0.001, 1234.5678]
    assert validate_trace(df)["size_bytes"].tolist() == [0.001, 1234.5678]


# ----------------------------------------------------------------------------
# errors on in-memory frames: row (index label), column and value named
# ----------------------------------------------------------------------------

# (column, bad value at row label 11, expected column in message, expected text)
BAD_CELLS = [
    ("arrival_s", "abc", "arrival_s", "not a number"),
    ("arrival_s", np.nan, "arrival_s", "missing"),
    ("arrival_s", -1.0, "arrival_s", ">= 0"),
    ("arrival_s", np.inf, "arrival_s", "finite"),
    ("size_bytes", 0.0, "size_bytes", "> 0"),
    ("size_bytes", -5.0, "size_bytes", "> 0"),
    ("size_bytes", np.nan, "size_bytes", "missing"),
    ("size_bytes", "1e5x", "size_bytes", "not a number"),
    ("src", 1.5, "src", "not an integer"),
    ("src", -1, "src", ">= 0"),
    ("src", np.nan, "src", "missing"),
    ("dst", 99, "dst", "out of range"),
    ("dst", "x", "dst", "not an integer"),
    ("deadline_s", 0.0, "deadline_s", "> 0"),
    ("deadline_s", -2.0, "deadline_s", "> 0"),
    ("deadline_s", np.inf, "deadline_s", "finite"),
    ("weight", 0.0, "weight", "> 0"),
    ("weight", -1.0, "weight", "> 0"),
    ("weight", np.nan, "weight", "> 0"),
    ("data_span_s", -0.5, "data_span_s", ">= 0"),
    ("data_span_s", np.nan, "data_span_s", "finite"),
    ("size_known", "maybe", "size_known", "true/false"),
    ("size_known", 2, "size_known", "true/false"),
    ("id", 10, "id", "duplicate id 10"),
    ("id", -3, "id", ">= 0"),
]


@pytest.mark.parametrize(("column", "value", "msg_column", "text"), BAD_CELLS)
def test_validation_error_names_row_column_value(column: str, value: object, msg_column: str, text: str) -> None:
    df = full(3)
    df.index = [10, 11, 12]
    df["id"] = [10, 20, 30]
    df = df.astype({column: object})
    df.loc[11, column] = value
    with pytest.raises(TraceError) as err:
        validate_trace(df, hosts=8, source="mytrace")
    msg = str(err.value)
    assert msg.startswith("mytrace")
    assert "row 11" in msg
    assert f"column {msg_column!r}" in msg
    assert text in msg
    if isinstance(value, str):
        assert repr(value) in msg
    elif isinstance(value, float) and math.isfinite(value):
        assert repr(value) in msg


def test_src_equals_dst() -> None:
    df = minimal()
    df.loc[2, "dst"] = df.loc[2, "src"]
    with pytest.raises(TraceError, match=r"row 2, column 'dst': dst must differ from src, got src=2, dst=2"):
        validate_trace(df)


def test_duplicate_id_points_to_both_rows() -> None:
    df = minimal()
    df["id"] = [5, 6, 5, 7]
    with pytest.raises(TraceError, match=r"row 2, column 'id': duplicate id 5 \(first used at row 0\)"):
        validate_trace(df)


def test_missing_and_unknown_columns_and_empty() -> None:
    with pytest.raises(TraceError, match=r"missing required column\(s\) \['size_bytes'\]"):
        validate_trace(minimal().drop(columns="size_bytes"))
    bad = minimal()
    bad["priority"] = 1
    with pytest.raises(TraceError) as err:
        validate_trace(bad)
    assert "unknown column(s) ['priority']" in str(err.value)
    for col in TRACE_COLUMNS:
        assert col in str(err.value)
    with pytest.raises(TraceError, match="empty trace"):
        validate_trace(minimal().iloc[:0])
    with pytest.raises(TraceError, match="DataFrame"):
        validate_trace({"arrival_s": [0.0]})  # type: ignore[arg-type]


def test_hosts_argument() -> None:
    df = minimal()
    validate_trace(df, hosts=3)
    with pytest.raises(TraceError, match=r"row 2, column 'src': host out of range \(hosts=2, valid 0..1\), got 2"):
        validate_trace(df, hosts=2)
    with pytest.raises(TraceError, match="hosts must be"):
        validate_trace(df, hosts=1)


def test_boolean_column_for_numbers_rejected() -> None:
    df = minimal(2)
    df["size_bytes"] = [True, True]
    with pytest.raises(TraceError, match="column 'size_bytes'.*boolean"):
        validate_trace(df)


# ----------------------------------------------------------------------------
# files
# ----------------------------------------------------------------------------

HEADER = "arrival_s,src,dst,size_bytes,deadline_s,size_known"
GOOD_ROWS = ["0.0,0,1,1000,,true", "0.5,1,2,2000,0.01,FALSE", "1.0,2,0,3000,,1", "1.5,0,2,4000,0.2,0"]


@pytest.mark.parametrize(
    ("row", "bad_line", "column", "text"),
    [
        (0, "0.0,0,1,-1,,true", "size_bytes", "> 0"),
        (1, "0.5,1,2,abc,0.01,FALSE", "size_bytes", "not a number: 'abc'"),
        (2, "1.0,2,2,3000,,1", "dst", "differ"),
        (3, "-1.5,0,2,4000,0.2,0", "arrival_s", ">= 0"),
        (1, "0.5,1,2,2000,0,FALSE", "deadline_s", "> 0"),
        (2, "1.0,2,0,3000,,yes", "size_known", "'yes'"),
        (3, "1.5,0,9,4000,0.2,0", "dst", "out of range"),
        (0, "0.0,0.5,1,1000,,true", "src", "not an integer"),
        (2, "1.0,2,0,,,1", "size_bytes", "missing"),
    ],
)
def test_csv_error_gives_file_line(tmp_path: Path, row: int, bad_line: str, column: str, text: str) -> None:
    rows = list(GOOD_ROWS)
    rows[row] = bad_line
    path = tmp_path / "t.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    with pytest.raises(TraceError) as err:
        read_trace(path, hosts=3)
    msg = str(err.value)
    assert str(path) in msg
    assert f"line {row + 2}," in msg  # header is line 1, data row i is line i + 2
    assert f"column {column!r}" in msg
    assert text in msg


def test_csv_blank_lines_ignored_but_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(HEADER + "\n" + GOOD_ROWS[0] + "\n\n" + "1.0,2,2,3000,,1\n")
    with pytest.raises(TraceError, match=r"line 4, column 'dst'"):
        read_trace(path)
    path.write_text(HEADER + "\n" + GOOD_ROWS[0] + "\n\n" + GOOD_ROWS[1] + "\n\n")
    assert len(read_trace(path)) == 2


def test_csv_parsing_rules(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("\n".join([HEADER, *GOOD_ROWS]) + "\n")
    df = read_trace(path, hosts=3)
    assert df["size_known"].tolist() == [True, False, True, False]
    assert df["deadline_s"].isna().tolist() == [True, False, True, False]
    assert df["id"].tolist() == [0, 1, 2, 3]
    assert tuple(df.columns) == TRACE_COLUMNS


def test_csv_unknown_column_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("arrival_s,src,dst,size_bytes,prio\n0,0,1,10,3\n")
    with pytest.raises(TraceError, match=r"unknown column\(s\) \['prio'\]; allowed columns are"):
        read_trace(path)
    path.write_text("")
    with pytest.raises(TraceError, match="empty"):
        read_trace(path)
    path.write_text(HEADER + "\n")
    with pytest.raises(TraceError, match="empty trace"):
        read_trace(path)


def test_unknown_suffix(tmp_path: Path) -> None:
    for fn in (read_trace, lambda p: write_trace(minimal(), p)):
        with pytest.raises(TraceError) as err:
            fn(tmp_path / "t.json")
        for suffix in TRACE_SUFFIXES:
            assert suffix in str(err.value)


def _assert_bit_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for col in ("arrival_s", "size_bytes", "deadline_s", "weight", "data_span_s"):
        assert np.array_equal(a[col].to_numpy().view(np.int64), b[col].to_numpy().view(np.int64)), col


# awkward doubles within the contract's limits (flowsched.traces.LIMITS)
AWKWARD_SIZES = [0.1, 1 / 3, 1e-6, 1.0000000000000002e-6, 1e15, 999999999999999.9, 123456789.123456789, 2.0**49 + 0.5]
AWKWARD_ARRIVALS = [0.1, 1 / 3, 2.0**-1074, 5e-324, 1e-300, 1e9, 123456789.123456789, 2.0**29 + 2.0**-23]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".CSV"])
def test_round_trip_exact(tmp_path: Path, suffix: str) -> None:
    df = full(200, seed=3)
    k = len(AWKWARD_SIZES)
    df.loc[: k - 1, "size_bytes"] = AWKWARD_SIZES
    df.loc[: k - 1, "arrival_s"] = AWKWARD_ARRIVALS
    df.loc[0, "data_span_s"] = -0.0  # sign of zero survives too
    norm = validate_trace(df)
    path = tmp_path / f"trace{suffix}"
    write_trace(df, path)
    back = read_trace(path)
    _assert_bit_equal(back, norm)


def test_csv_text_format(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    df = minimal(2)
    df["deadline_s"] = [np.nan, 0.1]
    write_trace(df, path)
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(TRACE_COLUMNS)
    assert lines[1] == "0,0.0,0,1,1000.0,,1.0,0.0,true"
    assert lines[2] == "1,0.5,1,2,4000.0,0.1,1.0,0.0,true"


sizes_in_limits = st.floats(min_value=1e-6, max_value=1e15, allow_nan=False, allow_infinity=False)
deadlines_in_limits = st.floats(min_value=5e-324, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(sizes_in_limits, min_size=1, max_size=8),
    data=st.data(),
)
def test_csv_round_trip_property(tmp_path: Path, sizes: list[float], data: st.DataObject) -> None:
    n = len(sizes)
    arrivals = data.draw(st.lists(st.floats(0, 1e9, allow_nan=False), min_size=n, max_size=n))
    deadlines = data.draw(st.lists(st.one_of(st.just(math.nan), deadlines_in_limits), min_size=n, max_size=n))
    known = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    df = pd.DataFrame(
        {
            "arrival_s": arrivals,
            "src": [0] * n,
            "dst": [1] * n,
            "size_bytes": sizes,
            "deadline_s": deadlines,
            "size_known": known,
        }
    )
    path = tmp_path / "prop.csv"
    write_trace(df, path)
    _assert_bit_equal(read_trace(path), validate_trace(df))


def test_parquet_errors_name_row(tmp_path: Path) -> None:
    df = minimal()
    df.loc[3, "size_bytes"] = -1.0
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    with pytest.raises(TraceError, match=re.escape(f"{path}, row 3, column 'size_bytes'")):
        read_trace(path)


def test_write_validates(tmp_path: Path) -> None:
    df = minimal()
    df.loc[0, "size_bytes"] = 0.0
    with pytest.raises(TraceError, match="size_bytes"):
        write_trace(df, tmp_path / "t.csv")
    assert not (tmp_path / "t.csv").exists()


# ----------------------------------------------------------------------------
# validate_columns: the same contract on numpy columns, without a DataFrame
# ----------------------------------------------------------------------------


def _columns(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The frame's columns as numpy arrays, each of the dtype numpy infers from its cells
    (numeric where every cell is a number: the path that skips pandas)."""
    return {c: np.asarray(df[c].tolist()) for c in df.columns}


def test_validate_columns_equals_validate_trace() -> None:
    df = full(200, seed=3)
    k = len(AWKWARD_SIZES)
    df.loc[: k - 1, "size_bytes"] = AWKWARD_SIZES
    df.loc[: k - 1, "arrival_s"] = AWKWARD_ARRIVALS
    cols = _columns(df)
    assert all(a.dtype.kind in "biuf" for a in cols.values())
    _assert_bit_equal(pd.DataFrame(validate_columns(cols, hosts=8)), validate_trace(df, hosts=8))
    # only the required columns, strings where a CSV reader leaves them: defaults and parsing as a frame's
    req = df[["arrival_s", "src", "dst", "size_bytes"]].astype({"size_bytes": str})
    _assert_bit_equal(pd.DataFrame(validate_columns({c: req[c].to_numpy() for c in req})), validate_trace(req))
    assert cols["arrival_s"][0] == AWKWARD_ARRIVALS[0]  # the input is not modified


@pytest.mark.parametrize(("column", "value", "msg_column", "text"), BAD_CELLS)
def test_validate_columns_errors_are_validate_traces(column: str, value: object, msg_column: str, text: str) -> None:
    df = full(3)
    df["id"] = [10, 20, 30]
    df = df.astype({column: object})
    df.loc[1, column] = value
    cols = _columns(df)
    with pytest.raises(TraceError) as frame_err:
        validate_trace(pd.DataFrame(cols), hosts=8, source="mytrace")
    with pytest.raises(TraceError) as columns_err:
        validate_columns(cols, hosts=8, source="mytrace")
    assert str(columns_err.value) == str(frame_err.value)
    assert "row 1" in str(columns_err.value) and text in str(columns_err.value)


def test_validate_columns_refuses_ragged_or_2d_columns() -> None:
    cols = _columns(full(4))
    with pytest.raises(TraceError, match="different lengths"):
        validate_columns({**cols, "src": cols["src"][:3]}, hosts=8)
    with pytest.raises(TraceError, match="one-dimensional"):
        validate_columns({**cols, "size_bytes": cols["size_bytes"].reshape(2, 2)}, hosts=8)
    with pytest.raises(TraceError, match="missing required column"):
        validate_columns({c: v for c, v in cols.items() if c != "dst"}, hosts=8)
    with pytest.raises(TraceError, match="mapping"):
        validate_columns([cols["src"]])  # type: ignore[arg-type]
