"""Packet spraying on flowsched's packet model against ns-3's (RandomEcmpRouting), on a leaf-spine.

Runs a trace on ``LeafSpine(tors, hosts_per_tor, spines, host_gbps, core_gbps)`` with ``ps`` over ``dctcp``,
``load_balancing="packet"`` and the given ``dupack_threshold`` (0 for ns-3's "never": a threshold it never
reaches), and prints the mean FCT per size bucket beside each ns-3 output given (``leafspine_fct`` with
``--spray=1``; the settings are read from the output's first line and must match).

    python benchmarks/references/ns3_spray/compare.py --trace ws32_n1500.csv NS3_OUT.csv [NS3_OUT.csv ...]
"""

from __future__ import annotations

import argparse
import lzma
import re
import time

import numpy as np
import pandas as pd

import flowsched
from flowsched import metrics

HEADER = re.compile(r"leaf-spine (\d+) x (\d+) hosts, (\d+) spines, ([\d.]+)/([\d.]+) Gbps, ([\d.]+) us per link, "
                    r"spray (\d), dupThresh (\d+), buffer (\d+) B, K (\d+), init cwnd (\d+), "
                    r"min RTO ([\de.-]+) s, seed (\d+)")


def buckets(sizes: pd.Series, fct: pd.Series) -> dict[str, float]:
    """Mean FCT overall ('all') and per flowsched size bucket (flowsched.metrics' default edges)."""
    means = fct.groupby(metrics.assign_buckets(sizes.to_numpy()), observed=False).mean()
    return {"all": float(fct.mean()), **{str(k): float(v) for k, v in means.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", required=True, help="the trace (CSV, or .csv.xz as stored here)")
    p.add_argument("ns3", nargs="+", help="leafspine_fct outputs")
    a = p.parse_args(argv)
    trace = pd.read_csv(a.trace)
    rows, runs = [], {}
    for path in a.ns3:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as fh:
            m = HEADER.search(fh.readline())
        if m is None:
            raise SystemExit(f"{path}: not a leafspine_fct output (first line)")
        tors, per, spines, hg, cg, delay, spray, dup, buf, k, iw, rto, seed = m.groups()
        if spray != "1":
            raise SystemExit(f"{path}: ns-3 ran without spraying")
        ns3 = pd.read_csv(path, comment="#")
        if (ns3["fct_s"] < 0).any():
            raise SystemExit(f"{path}: {(ns3['fct_s'] < 0).sum()} flows did not finish in ns-3")
        dup_fs = 0 if int(dup) >= 1000 else int(dup)
        key = (tors, per, spines, hg, cg, delay, dup_fs, buf, k, iw, rto)
        if key not in runs:
            topo = flowsched.LeafSpine(tors=int(tors), hosts_per_tor=int(per), spines=int(spines),
                                       host_gbps=float(hg), core_gbps=float(cg))
            t = time.process_time()
            r = flowsched.simulate(trace, topo, "ps", model="packet", transport="dctcp", delay_us=float(delay),
                                   load_balancing="packet", dupack_threshold=dup_fs, buffer_bytes=int(buf),
                                   ecn_threshold_bytes=int(k) * 1500, init_cwnd_packets=int(iw), min_rto_s=float(rto))
            runs[key] = (r, time.process_time() - t)
            r_, cpu = runs[key]
            rows.append({"run": f"flowsched, dupack_threshold {dup_fs}", "cpu_s": round(cpu, 1),
                         "retransmissions": int(r_.packet["retransmissions"]),
                         **{b: v * 1e6 for b, v in buckets(trace["size_bytes"], r_.flows["fct_s"]).items()}})
        rows.append({"run": f"ns-3, dupThresh {dup}, seed {seed}", "cpu_s": np.nan, "retransmissions": np.nan,
                     **{b: v * 1e6 for b, v in buckets(ns3["size_bytes"], ns3["fct_s"]).items()}})
    df = pd.DataFrame(rows).set_index("run")
    print("mean FCT (us) by flow size; ps over dctcp with packet spraying")
    print(df.round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
