"""One ns-3 program run beside the packet model, burst by burst (docs/papers.md, "The k sweep
against ns-3 on the same bursts").

Reads a per-flow CSV of ``artemis_tokens`` (any rule, k, f, MSS and initial window, from its header
line), runs the packet model with the Artemis id's defaults (plus ``--packet-option NAME=VALUE``) on
the very same flows, and prints per burst the deadlines met, the flows with a timeout (RTO or SYN)
and the mean token wait in both, so that one sees where the two runs part::

    python benchmarks/references/artemis_ns3/per_burst.py k10_edf_s3.csv --packet-option link_jitter_ns=0
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reproduce"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import artemis as A  # noqa: E402
from compare_packet import parse_overrides  # noqa: E402


def per_burst(run: Path, **options: object) -> pd.DataFrame:
    """Per burst of the run: deadlines met, flows with a timeout and mean token wait (ms, from the
    flow's arrival), in ns-3 (``ns-3 ...``) and the packet model (``packet ...``)."""
    v, _, _ = A.ns3_run_header(run)
    d = pd.read_csv(run, comment="#").sort_values(["arrival_s", "burst", "idx"]).reset_index(drop=True)
    _, r = A.flowsched_on(A.ns3_trace(d), "packet", v["rule"], k=int(v["k"]), window=int(v["f"]),
                          mss_bytes=int(v["mss"]), init_cwnd_packets=int(v["initCwnd"]), **options)
    pf = r.packet_flows
    d = d.assign(**{
        "ns-3 timeouts": A.ns3_timed_out(d).astype(int),
        "packet timeouts": (pf["timeouts"] > 0).to_numpy().astype(int),
        "packet met": r.flows["deadline_met"].to_numpy().astype(int),
        "ns-3 wait ms": 1e3 * (d["admit_s"] - d["arrival_s"]),
        "packet wait ms": 1e3 * (pf["admitted_s"].to_numpy() - d["arrival_s"]),
    })
    return d.groupby("burst").agg(**{
        "arrival s": ("arrival_s", "min"), "ns-3 met": ("met", "sum"), "packet met": ("packet met", "sum"),
        "ns-3 timeouts": ("ns-3 timeouts", "sum"), "packet timeouts": ("packet timeouts", "sum"),
        "ns-3 wait ms": ("ns-3 wait ms", "mean"), "packet wait ms": ("packet wait ms", "mean")})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a per-flow CSV of the ns-3 program (artemis_tokens --out=FILE)")
    ap.add_argument("--packet-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a packet option of the packet model's run (repeatable; the value as JSON, else a string)")
    a = ap.parse_args()
    t = per_burst(Path(a.run), **parse_overrides(a.packet_option, "--packet-option"))
    setting = " ".join(f"packet {o}" for o in a.packet_option)
    A.C.print_frame(f"{Path(a.run).name} burst by burst" + (f" ({setting})" if setting else ""), t, "{:.3g}")
    print(f"\nin all: deadlines met ns-3 {t['ns-3 met'].sum()}, packet {t['packet met'].sum()}; flows with a timeout "
          f"ns-3 {t['ns-3 timeouts'].sum()}, packet {t['packet timeouts'].sum()}; mean token wait ns-3 "
          f"{t['ns-3 wait ms'].mean():.1f} ms, packet {t['packet wait ms'].mean():.1f} ms (means of the bursts' means)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
