"""Build m3's flowSim (exact max-min fair fluid FCTs on a parking lot) and run it on a
flowsched trace.

flowSim is ``clibs/get_fct_mmf.c`` (with ``clibs/topo.c``, ``clibs/topo.h``) of the public
netiken/m3 repository. Nothing of it is stored here: this script extracts the three files
at the pinned commit from a clone (or a bare git directory) given with ``--m3``, checks
their sha256, compiles them with ``gcc -O3 -fcommon -fPIC -shared`` into a temporary
folder and calls ``get_fct_mmf`` through ctypes, as m3's own Python callers do.

Units of flowSim: times in ns, sizes in bytes, link rates in Gbps (= bits/ns). Each flow's
size becomes ``(size + ceil(size / 1000) * 48) * 8`` bits inside flowSim (48 B of headers
per 1,000 B); its FCT is the fluid transmission time alone, no propagation delay.

Parking lots (``--layers``):
  2 (PL_TWO_LAYER, method_mmf = 1, the default): n hosts, each on its own switch by a host
    link at ``topo[0] * base_lr`` Gbps, the n switches in a line joined by links at
    ``topo[1] * base_lr``: flowsched's ``ParkingLot(n, 10, 40)`` with topo = (1, 4),
    base_lr = 10.
  1 (PL_ONE_LAYER, method_mmf = 2): n nodes in a line, no host links; the first and the
    last link at ``topo[0] * base_lr``, the others at ``topo[1] * base_lr``; every flow's
    rate capped at ``topo[0] * base_lr``. flowsched has no equivalent (a host would have to
    forward).
flowSim's arrays bound the parking lot to 8 hosts and 50,000 simultaneously active flows.

    python benchmarks/references/flowsim/flowsim.py --m3 /path/to/m3 --trace ws.csv \\
        --out fct_flowsim.csv [--layers 2] [--build-dir DIR] [--json timing.json]

(``--lib DIR/libflowsim.so`` in place of ``--m3`` reuses a build.)

writes ``id,fct_ns`` (the trace's ids, flowSim's FCT in ns) and prints a JSON line with the
CPU and wall time of the ``get_fct_mmf`` call alone.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

M3_REPO = "https://github.com/netiken/m3"
M3_COMMIT = "894cd492c38a2f8ae713381493c1ffea030db80d"  # HEAD of m3's default branch when fetched, 2026-11-26
#: The files' sha256 at M3_COMMIT (they were last changed in 267d6382).
M3_FILES = {
    "clibs/get_fct_mmf.c": "4b3aa1534744283c37b53bcb8fc44a2755612e6ac09cc4d59cbd2101205d4402",
    "clibs/topo.c": "f682e266beeb0ccc1253b48289e70de0dc35b277a725c21dee5e72e9a1ef4821",
    "clibs/topo.h": "18e5eb448e00b18f5a1d610a736b50c7fe4b5995891db63f114f8333002d761d",
}
BUILD = ["gcc", "-O3", "-fcommon", "-fPIC", "-shared", "-o", "libflowsim.so", "topo.c", "get_fct_mmf.c", "-lm"]
MAX_HOSTS = 8  # topo.h: MAX_RACK 8
PL_TWO_LAYER, PL_ONE_LAYER, PL_ECMP_ROUTING, PL = 1, 2, 8, 2  # topo.h


class _FCTStruct(ctypes.Structure):
    # get_fct_mmf's return value: four malloc'ed arrays (n, 2n, 2n and n long).
    _fields_ = [("estimated_fcts", ctypes.POINTER(ctypes.c_double)), ("t_flows", ctypes.POINTER(ctypes.c_double)),
                ("num_flows", ctypes.POINTER(ctypes.c_uint)), ("num_flows_enq", ctypes.POINTER(ctypes.c_uint))]


def _source(m3: Path, name: str) -> bytes:
    """``name`` at M3_COMMIT from a clone or a bare git directory."""
    git_dir = m3 if (m3 / "HEAD").is_file() and (m3 / "objects").is_dir() else m3 / ".git"
    return subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{M3_COMMIT}:{name}"],
                          check=True, capture_output=True).stdout


#: flowSim's progressive filling freezes, in each round, the flows of every link whose fair
#: share is within 1e-4 (Gbps, absolute) of the smallest. ``--exact-grouping`` replaces that
#: test by a relative 1e-12 (a diagnostic build: it tells rounding apart from that tolerance).
GROUPING = b"fabs(rate_limit_per_link[link_id][downlink_indicator] - min_rate_limit) < 0.0001"
GROUPING_EXACT = b"fabs(rate_limit_per_link[link_id][downlink_indicator] - min_rate_limit) <= 1e-12 * min_rate_limit"


def build(m3: Path, out_dir: Path, exact_grouping: bool = False) -> Path:
    """Extract, check and compile flowSim into ``out_dir``; the shared library's path."""
    for name, want in M3_FILES.items():
        data = _source(m3, name)
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise SystemExit(f"{name} at {M3_COMMIT[:12]} has sha256 {got}, expected {want}")
        if exact_grouping and name == "clibs/topo.c":
            assert data.count(GROUPING) == 1
            data = data.replace(GROUPING, GROUPING_EXACT)
        (out_dir / Path(name).name).write_bytes(data)
    subprocess.run(BUILD, cwd=out_dir, check=True)
    return out_dir / "libflowsim.so"


def run(lib_path: Path, trace: pd.DataFrame, hosts: int, layers: int, topo: tuple[int, int], base_lr: int) -> dict:
    lib = ctypes.CDLL(str(lib_path))
    dp, ip = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int)
    lib.get_fct_mmf.argtypes = [ctypes.c_uint, dp, dp, ip, ip, ctypes.c_int, ip, ctypes.c_int, ctypes.c_int,
                                ctypes.c_int, ctypes.c_int]
    lib.get_fct_mmf.restype = _FCTStruct
    lib.free_fctstruct.argtypes = [_FCTStruct]
    lib.free_fctstruct.restype = None
    tr = trace.sort_values("arrival_s", kind="stable")
    n = len(tr)
    # ns from the first arrival (flowSim's clock starts at 0); FCTs are differences.
    fats = np.ascontiguousarray((tr["arrival_s"].to_numpy() - tr["arrival_s"].iloc[0]) * 1e9, np.float64)
    sizes = np.ascontiguousarray(tr["size_bytes"].to_numpy(), np.float64)
    src = np.ascontiguousarray(tr["src"].to_numpy(), np.int32)
    dst = np.ascontiguousarray(tr["dst"].to_numpy(), np.int32)
    topo_arr = np.ascontiguousarray(topo, np.int32)
    method = PL_TWO_LAYER if layers == 2 else PL_ONE_LAYER
    c0, t0 = time.process_time(), time.perf_counter()
    res = lib.get_fct_mmf(n, fats.ctypes.data_as(dp), sizes.ctypes.data_as(dp), src.ctypes.data_as(ip),
                          dst.ctypes.data_as(ip), hosts, topo_arr.ctypes.data_as(ip), method, PL_ECMP_ROUTING, PL,
                          base_lr)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    fct_ns = np.ctypeslib.as_array(res.estimated_fcts, shape=(n,)).copy()
    lib.free_fctstruct(res)
    return {"id": tr["id"].to_numpy(), "fct_ns": fct_ns, "cpu_s": cpu, "wall_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m3", type=Path, help="a clone of netiken/m3 (or its bare git directory): build flowSim from it")
    ap.add_argument("--lib", type=Path, help="or: a libflowsim.so this script built before (--build-dir)")
    ap.add_argument("--trace", required=True,
                    help="a flowsched trace (CSV or Parquet: id, arrival_s, src, dst, size_bytes)")
    ap.add_argument("--out", required=True, help="CSV to write: id,fct_ns")
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--layers", type=int, choices=(1, 2), default=2, help="parking lot model (see above); default 2")
    ap.add_argument("--topo", type=int, nargs=2, default=(1, 4), help="host and switch link rates in units of base_lr")
    ap.add_argument("--base-lr", type=int, default=10, help="Gbps")
    ap.add_argument("--build-dir", type=Path, default=None, help="where to build (default: a temporary folder)")
    ap.add_argument("--exact-grouping", action="store_true",
                    help="diagnostic build: group equal fair shares within 1e-12 (relative), not 1e-4 Gbps")
    ap.add_argument("--json", default=None, help="also write the timing line here")
    a = ap.parse_args()
    tr = pd.read_parquet(a.trace) if str(a.trace).endswith(".parquet") else pd.read_csv(a.trace)
    if not 2 <= a.hosts <= MAX_HOSTS:
        raise SystemExit(f"flowSim's parking lot takes 2 to {MAX_HOSTS} hosts, got {a.hosts}")
    if tr["src"].max() >= a.hosts or tr["dst"].max() >= a.hosts or (tr["src"] == tr["dst"]).any():
        raise SystemExit(f"the trace needs hosts 0..{a.hosts - 1} and src != dst")
    if (a.m3 is None) == (a.lib is None):
        raise SystemExit("give --m3 (build flowSim) or --lib (a library built before)")
    with tempfile.TemporaryDirectory() as tmp:
        if a.lib is not None:
            lib = a.lib
        else:
            bdir = a.build_dir or Path(tmp)
            bdir.mkdir(parents=True, exist_ok=True)
            lib = build(a.m3, bdir, a.exact_grouping)
        sys.stdout.flush()
        r = run(lib, tr, a.hosts, a.layers, tuple(a.topo), a.base_lr)
    out = pd.DataFrame({"id": r["id"], "fct_ns": r["fct_ns"]}).sort_values("id")
    out.to_csv(a.out, index=False, float_format="%.17g")
    line = {"flows": len(tr), "exact_grouping": a.exact_grouping, "layers": a.layers, "hosts": a.hosts,
            "topo": list(a.topo), "base_lr": a.base_lr, "m3_commit": M3_COMMIT, "call_cpu_s": round(r["cpu_s"], 4),
            "call_wall_s": round(r["wall_s"], 4), "mean_fct_ms": float(np.mean(r["fct_ns"]) / 1e6),
            "cc": " ".join(BUILD)}
    print(json.dumps(line))
    if a.json:
        Path(a.json).write_text(json.dumps(line) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
