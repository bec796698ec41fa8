"""One flow and isolated bursts: the ns-3 program and the packet model flow by flow (docs/papers.md,
"Where the rest of the gap comes from").

Runs ``artemis_tokens`` (built by ``shared/peers/ns3/artemis/build.sh``) with the calibration's c2 setting
(SACK off) on one flow alone and on single bursts (``--bursts=1``: the burst's flows start into an
empty port, nothing before or after), then the packet model with the Artemis id's defaults on the very
same flows, and prints the FCTs side by side::

    python benchmarks/references/artemis_ns3/isolated_bursts.py --ns3 /tmp/ns3ref/artemis/artemis_tokens \\
        --seeds 1 2 3 4 5 6 7 8 9 10

``--ns3-arg=ARG`` (repeatable) adds an argument to every ns-3 run (another recovery or option of ns-3's
TCP, e.g. ``--ns3-arg=--classic=0`` or ``--ns3-arg=--ns3::TcpSocketBase::LimitedTransmit=false``);
``--packet-option NAME=VALUE`` (repeatable) sets a packet option of the packet model's runs
(e.g. ``limited_transmit=false``), over the Artemis id's defaults.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reproduce"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import artemis as A  # noqa: E402
from compare_packet import parse_overrides  # noqa: E402

C2 = ["--k=10", "--f=5", "--bursts=1", "--mss=1448", "--initCwnd=1", "--queue=dev", "--devQ=100", "--sack=0",
      "--tailS=5"]


def ns3(binary: str, out: Path, *args: str) -> pd.DataFrame:
    subprocess.run([binary, *C2, *args, f"--out={out}"], check=True, capture_output=True, text=True)
    return pd.read_csv(out, comment="#")


def packet(run: Path, rule: str, **options: object) -> tuple[pd.DataFrame, dict]:
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):  # the single flow: a class with no flow
        warnings.simplefilter("ignore", RuntimeWarning)
        num, r = A.flowsched_on(A.ns3_trace(A.ns3_bursts(run)), "packet", rule, **options)
    f = r.flows.assign(timeouts=r.packet_flows["timeouts"].to_numpy())
    return f, num


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns3", required=True, help="the artemis_tokens binary")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    ap.add_argument("--rule", default="fifo")
    ap.add_argument("--ns3-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument of every ns-3 run (repeatable)")
    ap.add_argument("--packet-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a packet option of the packet model's runs (repeatable; the value as JSON, else a string)")
    a = ap.parse_args()
    options = parse_overrides(a.packet_option, "--packet-option")
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one.csv"
        d = ns3(a.ns3, one, f"--rule={a.rule}", "--senders=1", "--nA=1", "--seed=1", *a.ns3_arg)
        f, _ = packet(one, a.rule, **options)
        print(f"one 350 KB flow alone: FCT ns-3 {d['fct_s'].iloc[0] * 1e3:.4f} ms, packet model "
              f"{f['fct_s'].iloc[0] * 1e3:.4f} ms")
        rows = []
        for s in a.seeds:
            run = Path(tmp) / f"b{s}.csv"
            d = ns3(a.ns3, run, f"--rule={a.rule}", f"--seed={s}", *a.ns3_arg)
            f, num = packet(run, a.rule, **options)
            n_ok, p_ok = d.loc[d["rto"] == 0, "fct_s"], f.loc[f["timeouts"] == 0, "fct_s"]
            rows.append({"seed": s, "ns-3 RTO flows": int((d["rto"] > 0).sum()),
                         "packet timeout flows": int((f["timeouts"] > 0).sum()),
                         "ns-3 median FCT, flows without RTO, ms": 1e3 * float(n_ok.median()),
                         "packet median FCT, flows without timeout, ms": 1e3 * float(p_ok.median()),
                         "ns-3 retransmissions": int(d["retx"].sum()), "packet retransmissions": num["retransmissions"],
                         "ns-3 met": int(d["met"].sum()), "packet met": int(f["deadline_met"].sum())})
    t = pd.DataFrame(rows).set_index("seed")
    setting = " ".join([*a.ns3_arg, *(f"packet {o}" for o in a.packet_option)])
    A.C.print_frame(f"isolated bursts, rule {a.rule}" + (f" ({setting})" if setting else ""), t)
    diff = t["ns-3 median FCT, flows without RTO, ms"] - t["packet median FCT, flows without timeout, ms"]
    print(f"\nmedian FCT of the flows without a timeout, ns-3 minus packet: {diff.mean():.2f} ms on average "
          f"({diff.min():.2f} to {diff.max():.2f}); flows with a timeout: ns-3 {t['ns-3 RTO flows'].sum()}, "
          f"packet {t['packet timeout flows'].sum()} of {10 * len(t)}; deadlines met: ns-3 {t['ns-3 met'].sum()}, "
          f"packet {t['packet met'].sum()}; retransmissions: ns-3 {t['ns-3 retransmissions'].sum()}, "
          f"packet {t['packet retransmissions'].sum()}")
    return 0 if np.isfinite(diff).all() else 1


if __name__ == "__main__":
    sys.exit(main())
