"""Compare flowsched's per-flow completion times with a packet-level reference (ns-3, YAPS).

Issue 19's evidence: on the same trace, flowsched's packet model must give a mean FCT within 10%
of the reference overall and within 20% in each size bucket, with every flow finished (for
``pfabric`` against YAPS: 5% and 10%). This module does the comparison; the references and how
they were made are in ``benchmarks/references/`` (README.md there).

Reference format (``*.csv.xz`` in benchmarks/references/): one row per flow of the trace,
``id, size_bytes, fct_s, finished`` (``fct_s`` empty and ``finished`` 0 for a flow the reference
did not finish). ``load_reference`` also reads the peers' raw outputs (ns-3's ``trace_fct`` CSV,
YAPS's per-flow lines) and ``convert`` writes them in that format.

Everything is compared on the flows finished in both runs; the finished counts of each are
reported beside. Buckets are flowsched.metrics' (``DEFAULT_BUCKETS_BYTES``, left-closed, on the
reference's ``size_bytes``).

Command line::

    # a flowsched result (CSV with id, fct_s) against a reference, with issue 19's criteria
    python benchmarks/compare_packet.py compare ours.csv \
        benchmarks/references/ns3_dctcp_ws_h144_n1500_seed2.csv.xz --criteria dctcp
    # run flowsched on a reference's trace with the reference's settings, then compare
    python benchmarks/compare_packet.py run ns3_dctcp_ws_h144_n1500_seed2 --criteria        # model=packet
    python benchmarks/compare_packet.py run ns3_dctcp_ws_h144_n1500_seed2 --model fluid     # fluid ps, for scale
    python benchmarks/compare_packet.py run --all --model fluid                             # every reference
    # the references' own numbers (the README's table)
    python benchmarks/compare_packet.py table
    # a peer's raw output -> the reference format
    python benchmarks/compare_packet.py convert yaps out.txt ref.csv.xz --trace trace.csv

Exit status: 0, or 1 when ``--criteria`` is given and a criterion fails, or 2 on a usage error
(and for ``run --model packet`` while flowsched has no packet model yet).
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import io
import json
import lzma
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from flowsched.metrics import DEFAULT_BUCKETS_BYTES, assign_buckets, bucket_labels

HERE = Path(__file__).resolve().parent
REFERENCES_DIR = HERE / "references"

#: issue 19's pass criteria: (overall tolerance, per-bucket tolerance) on the mean FCT ratio.
CRITERIA: dict[str, tuple[float, float]] = {
    "tcp": (0.10, 0.20),
    "dctcp": (0.10, 0.20),
    "pfabric": (0.05, 0.10),
}

#: What each reference ran, as flowsched's packet-model arguments (issue 19's names). The
#: peers' settings are in references/README.md; ``delay_us`` is per hop, as in the fluid model.
#: ns-3's RED queue holds 360,000 B / 1,500 B = 240 packets and marks at K = 65 packets (DCTCP's step marking: RED
#: with MinTh = MaxTh = K and Gentle off), counting packets, ACKs included, as ``buffer_packets`` and
#: ``ecn_threshold_packets`` do (the DCTCP references made before 2026-11-28 evening ran ns-3's default Gentle = true:
#: a marking probability from 2% at K to 1 at 2K); its drop-tail queue (``tcp``) counts bytes. YAPS's pFabric queue
#: holds 36,864 B and retransmits after a fixed 45 us. ns-3's DCTCP does not grow its window in the window after an
#: ECN cut (its CA_CWR state, as Linux's CWR): ``dctcp_hold_in_cwr``; it grows by the segments an ACK covers
#: (``count_acked_segments``) and reacts to an echo only on an ACK of new data (``dctcp_ignore_dupack_ece``): both
#: the same bits here, where each ACK covers one and duplicates are rare. Its cut also has no floor (ssthresh =
#: (1 - alpha/2) cwnd), which ``dctcp_min_cwnd_packets=0`` models; the settings keep Linux's floor of 2 packets, with
#: which the small flows come closer (docs/packet.md, "Against ns-3 and YAPS").
SETTINGS: dict[str, dict[str, Any]] = {
    "ns3_tcp": {"scheduler": "ps", "transport": "tcp", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 360_000, "init_cwnd_packets": 10,
        "min_rto_s": 1e-3, "delay_us": 0.2}},
    "ns3_dctcp": {"scheduler": "ps", "transport": "dctcp", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 360_000, "buffer_packets": 240,
        "ecn_threshold_packets": 65, "dctcp_hold_in_cwr": True, "count_acked_segments": True,
        "dctcp_ignore_dupack_ece": True,
        "init_cwnd_packets": 10, "min_rto_s": 1e-3, "delay_us": 0.2}},
    # ns-3 with SACK on (`trace_fct --sack=1`): its scoreboard and pipe (RFC 6675), its default recovery with
    # SACK (PRR, RFC 6937) and its limited transmit (on by default, in the runs above too): the same here
    "ns3_tcpsack": {"scheduler": "ps", "transport": "tcp", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 360_000, "init_cwnd_packets": 10,
        "min_rto_s": 1e-3, "delay_us": 0.2, "sack": True, "prr": True, "limited_transmit": True}},
    "ns3_dctcpsack": {"scheduler": "ps", "transport": "dctcp", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 360_000, "buffer_packets": 240,
        "ecn_threshold_packets": 65, "dctcp_hold_in_cwr": True, "count_acked_segments": True,
        "dctcp_ignore_dupack_ece": True,
        "init_cwnd_packets": 10, "min_rto_s": 1e-3, "delay_us": 0.2, "sack": True, "prr": True,
        "limited_transmit": True}},
    "yaps_pfabric": {"scheduler": "srpt", "transport": "pfabric", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 36_864, "init_cwnd_packets": 12,
        "max_cwnd_packets": 15, "min_rto_s": 45e-6, "delay_us": 0.2}},
    # YAPS's dctcp and tcp are kept for speed comparisons only (not references: see the README).
    "yaps_dctcp": {"scheduler": "ps", "transport": "dctcp", "options": {
        "mss_bytes": 1460, "header_bytes": 40, "buffer_bytes": 360_000, "ecn_threshold_bytes": 65 * 1500,
        "init_cwnd_packets": 10, "max_cwnd_packets": 1000, "min_rto_s": 1e-3, "delay_us": 0.2}},
}

REF_COLUMNS = ["id", "size_bytes", "fct_s", "finished"]

#: ns-3's FCT with its handshake (its flow's arrival to its last byte), an optional fifth column of the
#: ns-3 references (``fct_s`` counts from the connection, as the packet model without a handshake starts).
HANDSHAKE_COLUMN = "fct_handshake_s"

#: The packet options that play ns-3's handshake (``compare_packet.py run --handshake``): a SYN and SYN-ACK before
#: the data, the SYN sent again after trace_fct's ConnTimeout, max(min RTO, 1 ms) = 1 ms for every ns-3 reference.
HANDSHAKE_OPTIONS: dict[str, Any] = {"handshake": True, "syn_timeout_s": 1e-3}


# --------------------------------------------------------------------------- reading


def _open_text(path: str | Path) -> io.TextIOBase:
    path = str(path)
    return lzma.open(path, "rt") if path.endswith(".xz") else open(path)


def read_trace(path: str | Path) -> pd.DataFrame:
    """A reference trace (``id,arrival_s,src,dst,size_bytes``) as a DataFrame."""
    with _open_text(path) as f:
        return pd.read_csv(f)


def _from_ns3(text: str) -> pd.DataFrame:
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    raw = pd.read_csv(io.StringIO("\n".join(lines)))
    fct = raw["fct_s"].astype(float)
    done = fct >= 0
    out = pd.DataFrame({"id": raw["id"].astype(np.int64), "size_bytes": raw["size_bytes"].astype(np.int64),
                        "fct_s": fct.where(done), "finished": done})
    if "fct_with_handshake_s" in raw:
        out[HANDSHAKE_COLUMN] = raw["fct_with_handshake_s"].astype(float).where(done)
    return out


def _from_yaps(text: str, trace: pd.DataFrame | None) -> pd.DataFrame:
    # per-flow lines: id size src dst start_us finish_us fct_us oracle_us slowdown pkts drops first_byte,
    # printed when a flow finishes (a flow YAPS did not finish has no line).
    rows = []
    for ln in text.splitlines():
        p = ln.split()
        if len(p) >= 12 and "//" in p[9]:
            rows.append((int(p[0]), int(p[1]), float(p[6]) * 1e-6))
    got = pd.DataFrame(rows, columns=["id", "size_bytes", "fct_s"]).drop_duplicates("id", keep="last")
    if trace is None:
        out = got.assign(finished=True)
    else:
        out = trace[["id"]].astype({"id": np.int64}).merge(got, on="id", how="left")
        sizes = trace["size_bytes"].to_numpy(np.int64)
        out["size_bytes"] = sizes
        out["finished"] = out["fct_s"].notna()
    return out[REF_COLUMNS].sort_values("id").reset_index(drop=True)


def load_reference(path: str | Path, trace: str | Path | pd.DataFrame | None = None) -> pd.DataFrame:
    """Read a reference: the ``id, size_bytes, fct_s, finished`` format, or a peer's raw output.

    ``trace`` (a path or frame) is needed for YAPS's raw output to know the flows it did not
    finish; without it those flows are simply absent. An ns-3 reference keeps ns-3's FCT with its
    handshake as a fifth column, ``fct_handshake_s``, where it has it (see :func:`with_handshake`).
    """
    with _open_text(path) as f:
        text = f.read()
    head = text.lstrip().splitlines()[0] if text.strip() else ""
    if head.startswith("# ns-3") or head.startswith("id,size_bytes,src,dst,arrival_s,connected_s"):
        ref = _from_ns3(text)
    elif head.replace(" ", "").startswith("id,size_bytes,fct_s,finished"):
        ref = pd.read_csv(io.StringIO(text))
        ref["finished"] = ref["finished"].astype(str).str.lower().isin(["1", "true"])
        ref.loc[~ref["finished"], "fct_s"] = np.nan
        if HANDSHAKE_COLUMN in ref:
            ref.loc[~ref["finished"], HANDSHAKE_COLUMN] = np.nan
    else:
        tr = read_trace(trace) if isinstance(trace, (str, Path)) else trace
        ref = _from_yaps(text, tr)
    ref = ref[REF_COLUMNS + ([HANDSHAKE_COLUMN] if HANDSHAKE_COLUMN in ref else [])].copy()
    ref["id"] = ref["id"].astype(np.int64)
    ref["finished"] = ref["finished"].astype(bool) & ref["fct_s"].notna()
    return ref


def write_reference(ref: pd.DataFrame, path: str | Path) -> None:
    """Write ``ref`` in the reference format (xz-compressed if ``path`` ends in .xz), with its
    ``fct_handshake_s`` column if it has one."""
    hs = HANDSHAKE_COLUMN in ref
    lines = ["id,size_bytes,fct_s,finished" + (f",{HANDSHAKE_COLUMN}" if hs else "")]
    fh = ref[HANDSHAKE_COLUMN] if hs else np.full(len(ref), np.nan)
    for i, s, t, done, h in zip(ref["id"], ref["size_bytes"], ref["fct_s"], ref["finished"], fh, strict=True):
        row = f"{int(i)},{int(s)},{t:.9e},1" if done else f"{int(i)},{int(s)},,0"
        lines.append(row + ((f",{h:.9e}" if done else ",") if hs else ""))
    data = ("\n".join(lines) + "\n").encode()
    if str(path).endswith(".xz"):
        data = lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)
    Path(path).write_bytes(data)


def with_handshake(ref: pd.DataFrame) -> pd.DataFrame:
    """``ref`` with ns-3's FCT counted from the flow's arrival, its handshake included, as ``fct_s``: the one to
    compare with the packet model run with :data:`HANDSHAKE_OPTIONS` (whose FCT counts from the arrival too).

    Raises ``ValueError`` for a reference without that column (YAPS's, and the ns-3 references stored before it).
    """
    if HANDSHAKE_COLUMN not in ref:
        raise ValueError(f"this reference has no {HANDSHAKE_COLUMN} column (ns-3's FCT with its handshake): only "
                         "ns-3 references converted from trace_fct's output with it have one")
    out = ref[REF_COLUMNS].copy()
    out["fct_s"] = ref[HANDSHAKE_COLUMN].to_numpy(np.float64)
    out["finished"] = out["finished"] & out["fct_s"].notna()
    return out


def as_flows(ours: Any) -> pd.DataFrame:
    """flowsched's side as ``id, fct_s, finished`` (and ``size_bytes`` if known).

    Accepts a ``flowsched.Results``, its ``flows`` frame, or a CSV path (``id, fct_s`` at least;
    flowsched's ``simulate --out`` writes one). A flow is finished when its ``fct_s`` is finite
    and, where the column exists, it is not ``terminated``.
    """
    if hasattr(ours, "flows") and isinstance(ours.flows, pd.DataFrame):
        frame = ours.flows
    elif isinstance(ours, pd.DataFrame):
        frame = ours
    else:
        with _open_text(ours) as f:
            frame = pd.read_csv(f)
    if "id" not in frame or "fct_s" not in frame:
        raise ValueError("flowsched results need columns id and fct_s")
    fct = pd.to_numeric(frame["fct_s"], errors="coerce").astype(float)
    done = np.isfinite(fct.to_numpy()) & (fct.to_numpy() >= 0)
    if "terminated" in frame:
        done &= ~frame["terminated"].astype(bool).to_numpy()
    if "finished" in frame:
        done &= frame["finished"].astype(str).str.lower().isin(["1", "true"]).to_numpy()
    out = pd.DataFrame({"id": frame["id"].astype(np.int64).to_numpy(), "fct_s": fct.where(done).to_numpy(),
                        "finished": done})
    if "size_bytes" in frame:
        out["size_bytes"] = frame["size_bytes"].astype(float).to_numpy()
    return out


# --------------------------------------------------------------------------- comparing


@dataclass
class Group:
    """One group of flows (overall or a bucket), on the flows finished in both runs."""

    label: str
    n_flows: int  # flows of the reference in this group
    n_both: int  # finished in both
    ours_finished: int
    ref_finished: int
    ours_mean_s: float
    ref_mean_s: float
    ours_p99_s: float
    ref_p99_s: float

    @property
    def ratio(self) -> float:
        if self.n_both == 0 or not self.ref_mean_s > 0:
            return math.nan
        return self.ours_mean_s / self.ref_mean_s


@dataclass
class Comparison:
    overall: Group
    buckets: list[Group]
    small_p99: tuple[float, float]  # p99 FCT of the first bucket, (ours, reference)
    missing_in_ours: int  # reference flows that the flowsched side has no row for
    extra_in_ours: int
    size_mismatches: int
    failures: list[str] = field(default_factory=list)
    criteria: tuple[float, float] | None = None

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        def g(x: Group) -> dict[str, Any]:
            return {**x.__dict__, "ratio": x.ratio}

        return {"overall": g(self.overall), "buckets": [g(b) for b in self.buckets],
                "small_p99_s": {"ours": self.small_p99[0], "reference": self.small_p99[1]},
                "missing_in_ours": self.missing_in_ours, "extra_in_ours": self.extra_in_ours,
                "size_mismatches": self.size_mismatches, "criteria": self.criteria,
                "failures": self.failures, "passed": self.passed}

    def format(self) -> str:
        us = 1e6
        lines = [f"{'group':<16} {'flows':>6} {'both':>6} {'fin ours':>8} {'fin ref':>8} "
                 f"{'mean ours us':>13} {'mean ref us':>12} {'ratio':>7}"]
        for x in [self.overall, *self.buckets]:
            lines.append(f"{x.label:<16} {x.n_flows:>6} {x.n_both:>6} {x.ours_finished:>8} {x.ref_finished:>8} "
                         f"{x.ours_mean_s * us:>13.1f} {x.ref_mean_s * us:>12.1f} {x.ratio:>7.3f}")
        lines.append(f"p99 of {self.buckets[0].label}: ours {self.small_p99[0] * us:.1f} us, "
                     f"reference {self.small_p99[1] * us:.1f} us")
        if self.missing_in_ours or self.extra_in_ours or self.size_mismatches:
            lines.append(f"ids: {self.missing_in_ours} reference flows missing in ours, {self.extra_in_ours} extra; "
                         f"{self.size_mismatches} size mismatches")
        if self.criteria is not None:
            o, b = self.criteria
            verdict = "PASS" if self.passed else "FAIL"
            lines.append(f"criteria (overall within {o:.0%}, each bucket within {b:.0%}, every flow finished): "
                         f"{verdict}")
            lines += [f"  - {msg}" for msg in self.failures]
        return "\n".join(lines)


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if x.size else math.nan


def _p99(x: np.ndarray) -> float:
    return float(np.quantile(x, 0.99)) if x.size else math.nan


def compare(ours: Any, reference: pd.DataFrame | str | Path, *,
            buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES,
            criteria: tuple[float, float] | str | None = None,
            require_all_finished: bool = True) -> Comparison:
    """Compare flowsched's FCTs with a reference's, on the flows finished in both.

    ``ours``: see :func:`as_flows`. ``reference``: a frame in the reference format or a path
    (see :func:`load_reference`). ``criteria``: a transport name of :data:`CRITERIA` or
    ``(overall_tol, bucket_tol)``; then ``failures`` lists each criterion missed: the mean FCT
    ratio ours/reference beyond ``1 +- tol`` overall or in a non-empty bucket, and, with
    ``require_all_finished``, any flow of the trace that flowsched did not finish (issue 19
    asks for every flow finished). The reference's own unfinished flows are reported, not failed.
    """
    ref = load_reference(reference) if isinstance(reference, (str, Path)) else reference
    mine = as_flows(ours)
    mine = mine.drop_duplicates("id", keep="last")
    cols = ["id", "fct_s", "finished"] + (["size_bytes"] if "size_bytes" in mine else [])
    merged = ref[REF_COLUMNS].merge(mine[cols], on="id", how="left", suffixes=("_ref", "_ours"), indicator=True)
    present = (merged["_merge"] == "both").to_numpy()
    missing = int((~present).sum())
    extra = int((~mine["id"].isin(ref["id"])).sum())
    fin_o = present & (merged["finished_ours"].to_numpy(dtype=object) == True)  # noqa: E712 (NaN where absent)
    fin_r = merged["finished_ref"].astype(bool).to_numpy()
    sizes = merged["size_bytes_ref" if "size_bytes_ours" in merged else "size_bytes"].to_numpy(np.float64)
    mism = 0
    if "size_bytes_ours" in merged:
        so = merged["size_bytes_ours"].to_numpy(np.float64)
        mism = int(np.sum(np.isfinite(so) & (np.abs(so - sizes) > 0.5)))
    fo = merged["fct_s_ours"].to_numpy(np.float64)
    fr = merged["fct_s_ref"].to_numpy(np.float64)
    both = fin_o & fin_r
    cat = np.asarray(assign_buckets(sizes, buckets).codes)

    def group(label: str, sel: np.ndarray) -> Group:
        b = sel & both
        return Group(label, int(sel.sum()), int(b.sum()), int((sel & fin_o).sum()), int((sel & fin_r).sum()),
                     _mean(fo[b]), _mean(fr[b]), _p99(fo[b]), _p99(fr[b]))

    overall = group("all", np.ones(len(merged), bool))
    groups = [group(lab, cat == k) for k, lab in enumerate(bucket_labels(buckets))]
    cmp = Comparison(overall, groups, (groups[0].ours_p99_s, groups[0].ref_p99_s), missing, extra, mism)
    if criteria is not None:
        tol = CRITERIA[criteria] if isinstance(criteria, str) else (float(criteria[0]), float(criteria[1]))
        cmp.criteria = tol
        cmp.failures = check(cmp, tol, require_all_finished=require_all_finished)
    return cmp


def check(cmp: Comparison, tol: tuple[float, float], *, require_all_finished: bool = True) -> list[str]:
    """The criteria that ``cmp`` misses (empty when it passes)."""
    fails = []
    o_tol, b_tol = tol
    for x, t in [(cmp.overall, o_tol)] + [(b, b_tol) for b in cmp.buckets]:
        if x.n_flows == 0:
            continue  # an empty bucket has nothing to compare
        r = x.ratio
        if not (abs(r - 1.0) <= t + 1e-12):
            fails.append(f"{x.label}: mean FCT ratio ours/reference {r:.3f} outside 1 +- {t:g}"
                         f" ({x.n_both} flows finished in both)")
    if require_all_finished:
        unfinished = cmp.overall.n_flows - cmp.overall.ours_finished
        if unfinished:
            fails.append(f"{unfinished} of {cmp.overall.n_flows} flows not finished by flowsched")
    return fails


def summarize_reference(ref: pd.DataFrame, buckets: Sequence[float] = DEFAULT_BUCKETS_BYTES) -> dict[str, Any]:
    """The reference's own numbers: finished, mean FCT overall and per bucket, p99 of the first bucket."""
    fin = ref["finished"].to_numpy(bool)
    fct = ref["fct_s"].to_numpy(np.float64)
    cat = np.asarray(assign_buckets(ref["size_bytes"].to_numpy(np.float64), buckets).codes)
    labels = bucket_labels(buckets)
    return {"flows": int(len(ref)), "finished": int(fin.sum()), "mean_s": _mean(fct[fin]),
            "buckets": {lab: {"flows": int((cat == k).sum()), "finished": int((fin & (cat == k)).sum()),
                              "mean_s": _mean(fct[fin & (cat == k)])} for k, lab in enumerate(labels)},
            "small_p99_s": _p99(fct[fin & (cat == 0)])}


# --------------------------------------------------------------------------- references on disk


def reference_path(name: str) -> Path:
    """``ns3_dctcp_ws_h144_n1500_seed2`` (or a path) -> the reference file."""
    p = Path(name)
    if p.exists():
        return p
    for cand in (REFERENCES_DIR / f"{name}.csv.xz", REFERENCES_DIR / name):
        if cand.exists():
            return cand
    raise FileNotFoundError(f"no reference {name!r} (looked in {REFERENCES_DIR})")


def parse_name(path: Path) -> tuple[str, str]:
    """``ns3_dctcp_ws_h144_n1500_seed3.csv.xz`` -> (``ns3_dctcp``, ``ws_h144_n1500_seed3``)."""
    stem = path.name.split(".csv")[0]
    parts = stem.split("_", 2)
    if len(parts) < 3:
        raise ValueError(f"{path.name}: not named <peer>_<transport>_<trace>")
    return f"{parts[0]}_{parts[1]}", parts[2]


def all_references() -> list[Path]:
    return sorted(p for p in REFERENCES_DIR.glob("*.csv.xz") if p.name.split("_")[0] in ("ns3", "yaps"))


def _make_traces_module() -> Any:
    spec = importlib.util.spec_from_file_location("_fs_make_traces", REFERENCES_DIR / "make_traces.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def trace_for(trace_name: str) -> pd.DataFrame:
    """The trace a reference ran on, regenerated by references/make_traces.py (checked by sha256)."""
    import hashlib

    mt = _make_traces_module()
    if trace_name not in mt.TRACES:
        raise KeyError(f"trace {trace_name!r} is not in references/make_traces.py's TRACES")
    text = mt.build(trace_name)
    want = mt.TRACES[trace_name][-1]
    got = hashlib.sha256(text.encode()).hexdigest()
    if want and got != want:
        raise RuntimeError(f"regenerated {trace_name} has sha256 {got}, the references ran on {want}: "
                           "the generator changed; compare against a saved copy of the trace instead")
    return pd.read_csv(io.StringIO(text))


def hosts_of(trace_name: str, trace: pd.DataFrame) -> int:
    """The big switch's size: ``h<N>`` in the trace's name (``ws_h144_...``), else the largest host id + 1."""
    m = re.search(r"_h(\d+)_", f"_{trace_name}_")
    return int(m.group(1)) if m else int(max(trace["src"].max(), trace["dst"].max()) + 1)


def has_packet_model() -> bool:
    import flowsched

    return "model" in inspect.signature(flowsched.simulate).parameters


def run_flowsched(trace: pd.DataFrame, setting: Mapping[str, Any], *, model: str = "packet",
                  hosts: int = 144, link_gbps: float = 10.0, overrides: Mapping[str, Any] | None = None) -> Any:
    """Run flowsched on ``trace`` with a reference's setting (see :data:`SETTINGS`).

    ``model="fluid"`` runs the fluid model with the same scheduler and ``delay_us`` (the packet
    options do not apply). ``model="packet"`` needs issue 19's ``simulate(..., model="packet",
    transport=...)`` and raises ``NotImplementedError`` while flowsched lacks it.
    """
    import flowsched

    opts = dict(setting["options"])
    opts.update(overrides or {})
    topo = flowsched.BigSwitch(hosts, link_gbps=link_gbps)
    if model == "fluid":
        return flowsched.simulate(trace, topo, setting["scheduler"], delay_us=opts.get("delay_us", 0.0),
                                  progress=False)
    if model != "packet":
        raise ValueError(f"model must be packet or fluid, got {model!r}")
    if not has_packet_model():
        raise NotImplementedError("flowsched.simulate has no model= argument yet: issue 19's packet model is "
                                  "not in this flowsched; nothing was run (use --model fluid for the fluid model)")
    return flowsched.simulate(trace, topo, setting["scheduler"], model="packet", transport=setting["transport"],
                              progress=False, **opts)


# --------------------------------------------------------------------------- command line


def parse_overrides(items: Sequence[str], flag: str = "--opt") -> dict[str, Any]:
    """Packet options given as ``KEY=VALUE`` on a command line (``flag`` names the option in
    errors): each value read as JSON (true/false, numbers), else kept as the string."""
    out: dict[str, Any] = {}
    for it in items:
        k, _, v = it.partition("=")
        if not k or not _:
            raise SystemExit(f"{flag} wants KEY=VALUE, got {it!r}")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _criteria_arg(value: str | None, default: str) -> tuple[float, float] | str | None:
    if value is None:
        return None
    if value in ("", "auto"):
        return default
    if value in CRITERIA:
        return value
    try:
        o, b = (float(x) for x in value.split(","))
    except ValueError:
        raise SystemExit(f"--criteria: a transport ({', '.join(CRITERIA)}) or OVERALL,BUCKET, got {value!r}") from None
    return (o, b)


def _cmd_compare(a: argparse.Namespace) -> int:
    ref = load_reference(a.reference, trace=a.trace)
    try:
        default = parse_name(Path(a.reference))[0].split("_")[1]
    except ValueError:
        default = ""
    if a.criteria in ("auto", "") and default not in CRITERIA:
        raise SystemExit("--criteria: cannot tell the transport from the reference's name; give tcp, dctcp or pfabric")
    crit = _criteria_arg(a.criteria, default)
    cmp = compare(a.ours, ref, criteria=crit, require_all_finished=not a.allow_unfinished)
    print(json.dumps(cmp.to_dict(), indent=1) if a.json else cmp.format())
    return 0 if cmp.passed else 1


def _cmd_run(a: argparse.Namespace) -> int:
    import time

    names = [str(p) for p in all_references()] if a.all else a.reference
    if not names:
        raise SystemExit("run: name a reference (or --all)")
    if a.model == "packet" and not has_packet_model():
        print("flowsched.simulate has no model= argument yet: issue 19's packet model is not in this flowsched, "
              "so there is nothing to compare. Use --model fluid to run the fluid model on the same traces.")
        return 2
    status = 0
    for name in names:
        path = reference_path(name)
        key, trace_name = parse_name(path)
        setting = SETTINGS[key]
        if a.setting:
            setting = SETTINGS[a.setting]
        ref = load_reference(path)
        overrides = parse_overrides(a.opt)
        if a.handshake:
            if a.model != "packet":
                raise SystemExit("run --handshake: the packet model only (the fluid model has no handshake)")
            try:
                ref = with_handshake(ref)
            except ValueError as e:
                raise SystemExit(f"run --handshake: {path.name}: {e}") from None
            overrides = {**HANDSHAKE_OPTIONS, **overrides}
        trace = read_trace(a.trace) if a.trace else trace_for(trace_name)
        t0 = time.perf_counter()
        res = run_flowsched(trace, setting, model=a.model, hosts=hosts_of(trace_name, trace), overrides=overrides)
        wall = time.perf_counter() - t0
        transport = setting["transport"]
        crit = _criteria_arg(a.criteria, transport)
        cmp = compare(res, ref, criteria=crit, require_all_finished=not a.allow_unfinished)
        what = (f"fluid {setting['scheduler']}" if a.model == "fluid"
                else f"packet {setting['scheduler']}/{transport}" + (" with handshakes" if a.handshake else ""))
        print(f"== {path.name}: flowsched {what} on {trace_name} ({len(trace)} flows, {wall:.1f} s)")
        print(json.dumps(cmp.to_dict()) if a.json else cmp.format())
        if a.out_dir:
            out = Path(a.out_dir)
            out.mkdir(parents=True, exist_ok=True)
            res.flows.to_csv(out / f"flowsched_{a.model}_{key}_{trace_name}.csv", index=False)
        status |= 0 if cmp.passed else 1
    return status


def _cmd_table(a: argparse.Namespace) -> int:
    paths = [reference_path(n) for n in a.reference] if a.reference else all_references()
    labels = bucket_labels(DEFAULT_BUCKETS_BYTES)
    print("| reference | trace | finished | mean FCT (us) | " + " | ".join(labels) + f" | p99, {labels[0]} (us) |")
    print("|---|---|---|---|" + "---|" * len(labels) + "---|")
    def row(what: str, trace: str, ref: pd.DataFrame) -> None:
        s = summarize_reference(ref)
        cells = [f"{s['buckets'][lab]['mean_s'] * 1e6:,.1f}" for lab in labels]
        fin = f"{s['finished']:,}" + ("" if s["finished"] == s["flows"] else f" of {s['flows']:,}")
        print(f"| {what} | {trace} | {fin} | {s['mean_s'] * 1e6:,.1f} | " + " | ".join(cells)
              + f" | {s['small_p99_s'] * 1e6:,.1f} |")

    for p in paths:
        try:
            key, trace = parse_name(p)
        except ValueError:
            key, trace = p.name, ""
        ref = load_reference(p)
        row(key, trace, ref)
        if a.fluid and key in SETTINGS and trace:
            setting = SETTINGS[key]
            tr = trace_for(trace)
            res = run_flowsched(tr, setting, model="fluid", hosts=hosts_of(trace, tr))
            flows = as_flows(res).drop(columns="size_bytes", errors="ignore").merge(ref[["id", "size_bytes"]], on="id")
            row(f"fluid {setting['scheduler']}, delay_us {setting['options']['delay_us']:g}", trace,
                flows[REF_COLUMNS])
    return 0


def _cmd_convert(a: argparse.Namespace) -> int:
    trace = read_trace(a.trace) if a.trace else None
    ref = load_reference(a.raw, trace=trace)
    if a.peer == "yaps" and trace is None:
        print("warning: without --trace, flows YAPS did not finish are left out", file=sys.stderr)
    write_reference(ref, a.out)
    print(f"{a.out}: {len(ref)} flows, {int(ref['finished'].sum())} finished")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="compare_packet.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    crit_help = ("apply issue 19's criteria and set the exit code: a transport (tcp, dctcp: 10%%/20%%; pfabric: "
                 "5%%/10%%) or OVERALL,BUCKET tolerances; bare --criteria takes the reference's transport")

    c = sub.add_parser("compare", help="compare a flowsched result CSV (id, fct_s) with a reference")
    c.add_argument("ours", help="flowsched per-flow CSV (simulate --out), id and fct_s at least")
    c.add_argument("reference", help="a reference (benchmarks/references/*.csv.xz) or a peer's raw output")
    c.add_argument("--trace", help="the trace (needed to count the flows a raw YAPS output did not finish)")
    c.add_argument("--criteria", nargs="?", const="auto", default=None, help=crit_help)
    c.add_argument("--allow-unfinished", action="store_true", help="do not fail on flows flowsched left unfinished")
    c.add_argument("--json", action="store_true")
    c.set_defaults(fn=_cmd_compare)

    r = sub.add_parser("run", help="run flowsched on a reference's trace with its settings, then compare")
    r.add_argument("reference", nargs="*", help="reference names (e.g. ns3_dctcp_ws_h144_n1500_seed2) or paths")
    r.add_argument("--all", action="store_true", help="every reference in benchmarks/references/")
    r.add_argument("--model", choices=("packet", "fluid"), default="packet")
    r.add_argument("--setting", choices=sorted(SETTINGS), help="use another reference's settings")
    r.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                   help="override a packet option (JSON value), e.g. --opt buffer_bytes=200000")
    r.add_argument("--trace", help="a saved copy of the trace instead of regenerating it")
    r.add_argument("--criteria", nargs="?", const="auto", default=None, help=crit_help)
    r.add_argument("--handshake", action="store_true",
                   help="both sides with their handshake: the packet model with HANDSHAKE_OPTIONS against ns-3's FCT "
                   "from the flow's arrival (the reference's fct_handshake_s column)")
    r.add_argument("--allow-unfinished", action="store_true")
    r.add_argument("--out-dir", help="also write flowsched's per-flow results here")
    r.add_argument("--json", action="store_true")
    r.set_defaults(fn=_cmd_run)

    t = sub.add_parser("table", help="the references' own numbers, as a markdown table")
    t.add_argument("reference", nargs="*")
    t.add_argument("--fluid", action="store_true", help="under each reference, flowsched's fluid model on its trace "
                   "(the reference's scheduler: ps for ns-3, srpt for YAPS pfabric)")
    t.set_defaults(fn=_cmd_table)

    v = sub.add_parser("convert", help="a peer's raw output -> the reference format")
    v.add_argument("peer", choices=("ns3", "yaps"))
    v.add_argument("raw")
    v.add_argument("out")
    v.add_argument("--trace", help="the trace the peer ran (YAPS: to list the flows it did not finish)")
    v.set_defaults(fn=_cmd_convert)

    a = p.parse_args(argv)
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
