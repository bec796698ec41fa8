"""Regenerate ``pl8_sw10_ws_l04_n200_seed3.csv``, the stored flowSim result that
``tests/test_flowsim_reference.py`` checks flowsched against.

The trace: ``flowsched.workloads.poisson_all_to_all("websearch", 0.4, 8, 10.0, 200, seed=3)``
(web search, load 0.4 of the 10 Gbps host links, 8 hosts). The fabric: flowSim's two-layer
parking lot with topo = (1, 1) and base_lr = 10, i.e. ``ParkingLot(8, 10, 10)``: the
switch-to-switch links are as fast as the host links, so they are the bottleneck of many
flows (with 40 Gbps between switches, as in issue 21's setting, no switch link of an
8-host parking lot can ever limit a max-min allocation, and the parking lot gives the big
switch's answer).

    python benchmarks/references/flowsim/make_fixture.py --m3 /path/to/m3

Columns: the trace's ``id, arrival_s, src, dst, size_bytes`` (payload bytes, as generated)
and flowSim's ``fct_ns`` (its FCT in ns, for sizes inflated by 48 B per started 1,000 B).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "pl8_sw10_ws_l04_n200_seed3.csv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m3", required=True, help="a clone of netiken/m3 (or its bare git directory)")
    a = ap.parse_args()
    from flowsched import workloads

    tr = workloads.poisson_all_to_all("websearch", 0.4, 8, 10.0, 200, seed=3)[["id", "arrival_s", "src", "dst",
                                                                               "size_bytes"]]
    with tempfile.TemporaryDirectory() as tmp:
        trace, fct = Path(tmp) / "trace.csv", Path(tmp) / "fct.csv"
        tr.to_csv(trace, index=False, float_format="%.17g")
        subprocess.run([sys.executable, str(HERE / "flowsim.py"), "--m3", a.m3, "--trace", str(trace), "--out",
                        str(fct), "--topo", "1", "1"], check=True)
        out = tr.merge(pd.read_csv(fct), on="id", validate="one_to_one")
    out.to_csv(OUT, index=False, float_format="%.17g")
    print(f"wrote {OUT} ({len(out)} flows, mean flowSim FCT {out['fct_ns'].mean() / 1e6:.4f} ms)")


if __name__ == "__main__":
    main()
