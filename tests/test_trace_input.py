"""Malformed trace input is an error that says what and where (flowsched.traces).

Each case used to be read silently (shifted, dropped, wrapped, truncated or reinterpreted) or
failed with an error that did not say where: a CSV row with more or fewer fields than the
header, a row of empty cells, a Parquet file's named index, a missing file or a directory,
uint64 and complex columns, numbers that only Python reads (digit separators, non-ASCII
digits), cells that overflow or underflow, line numbers after a quoted cell that spans lines.
Valid traces still read exactly as before.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flowsched.traces import TRACE_COLUMNS, TraceError, read_trace, validate_columns, validate_trace, write_trace

H = "arrival_s,src,dst,size_bytes\n"


def csv_file(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def raises(path: Path, message: str) -> str:
    """read_trace(path) raises a TraceError starting with the path and containing ``message``."""
    with pytest.raises(TraceError) as err:
        read_trace(path)
    text = str(err.value)
    assert text.startswith(str(path)) and message in text, text
    return text


# ----------------------------------------------------------------------------
# CSV rows whose number of fields is not the header's
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # one field too many on every row: pandas made the first column the index (shifted)
        ("0.5,0,1,1000,9\n0.7,1,2,2000,9\n", "line 2: 5 fields, the header has 4 (1 more line(s)"),
        ("0.5,0,1,1000,\n0.7,1,2,2000\n", "line 2: 5 fields, the header has 4 (a trailing comma?)"),
        ("0.5,0,1,1000\n0.7,1,2,2000,9\n", "line 3: 5 fields, the header has 4"),
        ("0.5,0,1,1000\n\n0.7,1,2,2000, \n", "line 4: 5 fields, the header has 4 (a trailing comma?)"),
        # fewer fields than the header
        ("0.5,0,1,1000\n0.7,1,2\n", "line 3: 3 fields, the header has 4"),
        ("0.5,0,1,1000\n0.7\n", "line 3: 1 field, the header has 4"),
        ('0.5,0,1,1000\n""\n0.7,1,2,2000\n', "line 3: 1 field, the header has 4"),  # quoted: not blank
    ],
)
def test_csv_field_count_differs_from_header(tmp_path: Path, body: str, message: str) -> None:
    raises(csv_file(tmp_path, H + body), f"t.csv, {message}")


def test_csv_short_row_in_an_optional_column_is_not_a_missing_value(tmp_path: Path) -> None:
    # The short row used to read as "no deadline".
    path = csv_file(tmp_path, "arrival_s,src,dst,size_bytes,deadline_s\n0.5,0,1,1000,0.1\n0.7,1,2,2000\n")
    raises(path, "t.csv, line 3: 4 fields, the header has 5")


def test_csv_row_of_empty_cells_is_a_flow_with_missing_values(tmp_path: Path) -> None:
    # Only empty or whitespace-only lines are skipped (and still counted); ",,," is a row.
    path = csv_file(tmp_path, H + "0.5,0,1,1000\n\n \t \n,,,\n0.7,1,2,2000\n")
    raises(path, "t.csv, line 5, column 'arrival_s': missing value")
    path = csv_file(tmp_path, H + "0.5,0,1,1000\n\n \t \n\t\n0.7,1,1,2000\n\n")
    raises(path, "t.csv, line 6, column 'dst': dst must differ from src")


def test_csv_line_numbers_count_the_lines_of_a_quoted_multiline_cell(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'arrival_s,src,dst,size_bytes,path\n0.5,0,1,1000,"h0>\ns0>h1"\n\n0.7,1,1,2000,\n')
    raises(path, "t.csv, line 5, column 'dst': dst must differ from src")
    path = csv_file(tmp_path, 'arrival_s,src,dst,size_bytes,path\n0.5,0,1,1000,"h0>\ns0>h1"\n0.7,1,2\n')
    raises(path, "t.csv, line 4: 3 fields, the header has 5")


# ----------------------------------------------------------------------------
# files that are not there
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_missing_file_and_directory(tmp_path: Path, suffix: str) -> None:
    raises(tmp_path / f"nonexist{suffix}", f"nonexist{suffix}: no such file")
    (tmp_path / f"x{suffix}").mkdir()
    raises(tmp_path / f"x{suffix}", f"x{suffix}: is a directory, not a trace file")


# ----------------------------------------------------------------------------
# Parquet: a named index is columns
# ----------------------------------------------------------------------------


def test_parquet_named_index_is_read_as_columns(tmp_path: Path) -> None:
    df = pd.DataFrame({"id": [10, 20], "arrival_s": [0.0, 0.1], "src": [0, 1], "dst": [1, 0],
                       "size_bytes": [1e3, 2e3]})
    path = tmp_path / "idx.parquet"
    df.set_index("id").to_parquet(path)
    assert read_trace(path)["id"].tolist() == [10, 20]
    df.set_index(["id", "src"]).to_parquet(path)
    back = read_trace(path)
    assert back["id"].tolist() == [10, 20] and back["src"].tolist() == [0, 1]
    df.set_index("id").rename_axis("flow").to_parquet(path)
    raises(path, "unknown column(s) ['flow']")
    df.set_index("src").rename_axis("id").to_parquet(path)
    raises(path, "['id'] appear both as column(s) and as index level(s)")
    # an unnamed index (row labels of a filtered frame) is dropped, as before
    df.iloc[[1, 0]].to_parquet(path)
    assert read_trace(path)["id"].tolist() == [20, 10]


# ----------------------------------------------------------------------------
# dtypes that lost values: uint64 wrapped around, complex lost its imaginary part
# ----------------------------------------------------------------------------

BIG = 2**64 - 1


def two_flows(**columns: object) -> dict[str, object]:
    cols: dict[str, object] = {"arrival_s": np.array([0.0, 0.1]), "src": np.array([0, 1]), "dst": np.array([1, 0]),
                               "size_bytes": np.array([1e3, 1e3])}
    cols.update(columns)
    return cols


@pytest.mark.parametrize("column", ["src", "dst", "id"])
def test_uint64_above_int64_is_out_of_range(column: str) -> None:
    cols = two_flows(**{column: np.array([BIG, 1], dtype=np.uint64)})
    for call in (lambda: validate_trace(pd.DataFrame(cols)), lambda: validate_columns(cols)):
        with pytest.raises(TraceError, match=rf"row 0, column '{column}': out of the int64 range, got {BIG}"):
            call()
    with pytest.raises(TraceError, match=rf"row 0, column '{column}': out of the int64 range, got {BIG}"):
        validate_trace(pd.DataFrame(cols).astype({column: "UInt64"}))


@pytest.mark.parametrize("column", ["size_bytes", "arrival_s", "src", "weight"])
def test_complex_columns_are_refused(column: str) -> None:
    cols = two_flows(**{column: np.array([1 + 5j, 1])})
    for call in (lambda: validate_trace(pd.DataFrame(cols)), lambda: validate_columns(cols)):
        with pytest.raises(TraceError, match=rf"column '{column}': must be .*complex column \(dtype complex128\)"):
            call()
    cells = pd.Series([np.complex128(1 + 5j), 1.0], dtype=object)  # an object column: refused per cell
    with pytest.raises(TraceError, match=rf"row 0, column '{column}': not a.* \(1\+5j\)"):
        validate_trace(pd.DataFrame(cols).assign(**{column: cells}))


# ----------------------------------------------------------------------------
# numbers: plain ASCII decimals only; the message shows the cell
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "column", "message"),
    [
        ("0.5,0,1,1_000", "size_bytes", "not a number: '1_000' (only plain ASCII decimal numbers"),
        ("0.5,0,1_0,1000", "dst", "not an integer: '1_0' (only plain ASCII"),
        ("0.5,0,\u0661,1000", "dst", "not an integer: '\u0661'"),  # Arabic-Indic digit one
        ("0.5,0,1,\u0661\u0660\u0660\u0660", "size_bytes", "not a number: '\u0661\u0660\u0660\u0660'"),
        ("\uff10.5,0,1,1000", "arrival_s", "not a number: '\uff10.5'"),  # fullwidth zero
        ("0.5,0,1,1000\u00a0", "size_bytes", "not a number: '1000\\xa0'"),  # no-break space
        ("0.5,0,99999999999999999999,1000", "dst", "out of the int64 range: '99999999999999999999'"),
        ("0.5,0,1e30,1000", "dst", "out of the int64 range: '1e30'"),
        ("0.5,0,2.0000000000000001,1000", "dst", "not an integer: '2.0000000000000001'"),  # not rounded to 2
        ("0.5,1e-400,1,1000", "src", "not an integer: '1e-400'"),
        ("0.5,0,1,1e400", "size_bytes", "out of the float64 range"),
        ("1e-400,0,1,1000", "arrival_s", "a nonzero value that underflows to 0.0 in float64: '1e-400'"),
        ("-2e-324,0,1,1000", "arrival_s", "a nonzero value that underflows to 0.0 in float64: '-2e-324'"),
    ],
)
def test_csv_numbers_are_plain_ascii_decimals(tmp_path: Path, row: str, column: str, message: str) -> None:
    path = csv_file(tmp_path, H + "0.25,1,0,500\n" + row + "\n")
    text = raises(path, f"t.csv, line 3, column {column!r}: {message}")
    if "1e400" in row:
        assert "'1e400'" in text and "inf" not in text


def test_string_columns_of_a_frame_are_read_as_csv_cells() -> None:
    df = pd.DataFrame({"arrival_s": ["0", "0.1"], "src": ["0", "1"], "dst": ["1", "0"],
                       "size_bytes": ["1000", "1_000"]})
    with pytest.raises(TraceError, match=re.escape("trace, row 1, column 'size_bytes': not a number: '1_000'")):
        validate_trace(df)
    df["size_bytes"] = ["1000", "1e-400"]
    with pytest.raises(TraceError, match=re.escape("row 1, column 'size_bytes': a nonzero value that underflows")):
        validate_trace(df)


# ----------------------------------------------------------------------------
# valid traces: unchanged
# ----------------------------------------------------------------------------


def test_valid_traces_still_read_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    n = 300
    df = pd.DataFrame({
        "id": rng.permutation(n) * 3 + 1,
        "arrival_s": np.sort(rng.random(n)) * 10,
        "src": rng.integers(0, 4, n),
        "size_bytes": rng.random(n) * 1e6 + 1e-3,
        "deadline_s": np.where(rng.random(n) < 0.5, np.nan, rng.random(n) + 1e-9),
        "weight": rng.random(n) + 0.5,
        "data_span_s": np.where(rng.random(n) < 0.5, 0.0, rng.random(n) * 1e-3),
        "size_known": rng.random(n) < 0.5,
    })
    df["dst"] = (df["src"] + 1 + rng.integers(0, 3, n)) % 4
    df.loc[:4, "arrival_s"] = [0.0, 5e-324, 2.0**-1074 * 3, 1e-300, 0.1]
    df.loc[0, "data_span_s"] = -0.0
    df["path"] = [f"h{s}>x>h{d}" if i % 3 == 0 else None
                  for i, (s, d) in enumerate(zip(df["src"], df["dst"], strict=True))]
    norm = validate_trace(df)
    for suffix in (".csv", ".parquet"):
        path = tmp_path / f"valid{suffix}"
        write_trace(df, path)
        back = read_trace(path)
        pd.testing.assert_frame_equal(back, norm, check_exact=True)
        for col in ("arrival_s", "size_bytes", "deadline_s", "weight", "data_span_s"):
            assert back[col].to_numpy().tobytes() == norm[col].to_numpy().tobytes(), (suffix, col)
    # the same CSV with a BOM, CRLF line ends, quoted cells, whitespace around cells and blank lines
    lines = (tmp_path / "valid.csv").read_text().splitlines()
    edited = [lines[0]]
    for i, line in enumerate(lines[1:]):
        cells = line.split(",")
        if i % 2:
            cells = [f'"{c}"' for c in cells]
        if i % 3 == 0:
            cells = [f" {c} \t" if j < len(cells) - 1 else c for j, c in enumerate(cells)]
        edited.append(",".join(cells))
        if i % 50 == 7:
            edited.append("  ")
    path = tmp_path / "edited.csv"
    path.write_bytes(("\ufeff" + "\r\n".join(edited) + "\r\n\r\n").encode("utf-8"))
    back = read_trace(path)
    pd.testing.assert_frame_equal(back, norm, check_exact=True)
    assert tuple(back.columns) == (*TRACE_COLUMNS, "path")
