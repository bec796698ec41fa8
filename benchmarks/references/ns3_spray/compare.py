"""Packet spraying on flowsched's packet model against ns-3's (RandomEcmpRouting), on a leaf-spine.

Runs a trace on ``LeafSpine(tors, hosts_per_tor, spines, host_gbps, core_gbps)`` with ``ps`` over ``dctcp``,
``load_balancing="packet"`` and the given ``dupack_threshold`` (0 for ns-3's "never": a threshold it never
reaches), and prints the mean FCT per size bucket beside each ns-3 output given (``leafspine_fct`` with
``--spray=1``; the settings are read from the output's first line and must match). DCTCP as ns-3's ``TcpDctcp``
runs it: K and the buffer counted as its RED queue counts them (in packets, ACKs included: ``ecn_threshold_packets``,
``buffer_packets``; or in bytes with ``--redBytes=1``), no window growth in the window after a cut
(``dctcp_hold_in_cwr``, ns-3's CA_CWR), the window grown by the segments an ACK covers (``count_acked_segments``: it
derives from ``TcpLinuxReno``; a cumulative ACK after a reordering hole covers many), no floor under the cut
(``dctcp_min_cwnd_packets=0``) and no reaction to the echo of a duplicate ACK (``dctcp_ignore_dupack_ece``: ns-3
reacts only on an ACK of new data).
Outputs of ``leafspine_fct`` from before it marked with RED's step (their first line without "step marking")
are refused. Outputs made with
``--counters=1`` also give ns-3's retransmitted data segments, entries into fast recovery and the mean queue of
the ToR ports towards the hosts and the packets dropped (all, and at the hosts' own ports), printed beside
flowsched's (``Results.packet``, ``Results.packet_flows`` and ``Results.ports``).

    python benchmarks/references/ns3_spray/compare.py --trace ws32_n1500.csv NS3_OUT.csv [NS3_OUT.csv ...]
"""

from __future__ import annotations

import argparse
import io
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
QUEUE = re.compile(r"# mean queue of the ToR ports towards the hosts: ([\d.]+) B")
DROPS = re.compile(r"packets dropped: (\d+) at the hosts' ports, (\d+) at the ToRs' towards the hosts, (\d+) between")


def buckets(sizes: pd.Series, fct: pd.Series) -> dict[str, float]:
    """Mean FCT overall ('all') and per flowsched size bucket (flowsched.metrics' default edges)."""
    means = fct.groupby(metrics.assign_buckets(sizes.to_numpy()), observed=False).mean()
    return {"all": float(fct.mean()), **{str(k): float(v) for k, v in means.items()}}


def small_flows(sizes: pd.Series, fct: pd.Series, recoveries: pd.Series | None) -> dict[str, float]:
    """The flows under 100 KB: the share that entered fast recovery, and their mean FCT (us) with and without."""
    if recoveries is None:
        return {}
    small = sizes.to_numpy() < 100e3
    fr = recoveries.to_numpy() > 0
    return {"small: share with FR": float(fr[small].mean()),
            "small with FR": float(fct[small & fr].mean() * 1e6),
            "small without FR": float(fct[small & ~fr].mean() * 1e6)}


#: ns-3's TcpDctcp (module doc)
NS3_DCTCP = {"dctcp_hold_in_cwr": True, "count_acked_segments": True, "dctcp_min_cwnd_packets": 0.0,
             "dctcp_ignore_dupack_ece": True}


def segments(ns3: pd.DataFrame) -> np.ndarray:
    """Each flow's data segments, sent once each (the runner's MSS, 1,460 B)."""
    return np.ceil(ns3["size_bytes"].to_numpy() / 1460.0).clip(min=1)


def stalled(ns3: pd.DataFrame) -> np.ndarray:
    """ns-3's flows that timed out without resending a segment (``--counters=1``): with no loss, a wait for the
    timer with a window under one segment (ns-3's DCTCP cut has no floor; docs/packet.md)."""
    return (ns3["timeouts"].to_numpy() > 0) & (ns3["data_segments"].to_numpy() == segments(ns3))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trace", required=True, help="the trace (CSV, or .csv.xz as stored here)")
    p.add_argument("ns3", nargs="+", help="leafspine_fct outputs")
    a = p.parse_args(argv)
    trace = pd.read_csv(a.trace)
    rows, runs = [], {}
    for path in a.ns3:
        with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as fh:
            text = fh.read()
        first = text.split("\n", 1)[0]
        m = HEADER.search(first)
        q, d = QUEUE.search(text), DROPS.search(text)
        if m is None:
            raise SystemExit(f"{path}: not a leafspine_fct output (first line)")
        tors, per, spines, hg, cg, delay, spray, dup, buf, k, iw, rto, seed = m.groups()
        if spray != "1":
            raise SystemExit(f"{path}: ns-3 ran without spraying")
        if "step marking" not in first:
            raise SystemExit(f"{path}: made before leafspine_fct marked with RED's step (its RED was gentle); run it "
                             "again with the current leafspine_fct")
        in_bytes = "RED queues in bytes" in first
        ns3 = pd.read_csv(io.StringIO(text), comment="#")
        if (ns3["fct_s"] < 0).any():
            raise SystemExit(f"{path}: {(ns3['fct_s'] < 0).sum()} flows did not finish in ns-3")
        dup_fs = 0 if int(dup) >= 1000 else int(dup)
        key = (tors, per, spines, hg, cg, delay, dup_fs, buf, k, iw, rto, in_bytes)
        if key not in runs:
            topo = flowsched.LeafSpine(tors=int(tors), hosts_per_tor=int(per), spines=int(spines),
                                       host_gbps=float(hg), core_gbps=float(cg))
            t = time.process_time()
            r = flowsched.simulate(trace, topo, "ps", model="packet", transport="dctcp", delay_us=float(delay),
                                   load_balancing="packet", dupack_threshold=dup_fs, buffer_bytes=int(buf),
                                   init_cwnd_packets=int(iw), min_rto_s=float(rto), **NS3_DCTCP,
                                   **({"ecn_threshold_bytes": int(k) * 1500} if in_bytes
                                      else {"ecn_threshold_packets": int(k), "buffer_packets": int(buf) // 1500}))
            runs[key] = (r, time.process_time() - t)
            r_, cpu = runs[key]
            down = r_.ports[r_.ports["link"].str.startswith("down")]
            unit_fs = ", K in bytes" if in_bytes else ""
            rows.append({"run": f"flowsched{unit_fs}, dupack_threshold {dup_fs}", "cpu_s": round(cpu, 1),
                         "retransmissions": int(r_.packet["retransmissions"]),
                         "fast_retransmits": int(r_.packet["fast_retransmits"]),
                         "host_port_queue_B": float(down["mean_queue_bytes"].mean()),
                         "drops": int(r_.packet["drops_overflow"] + r_.packet["drops_evicted"]),
                         "drops at hosts": int(r_.ports[r_.ports["link"].str.startswith("up")]["drops_overflow"].sum()),
                         **{b: v * 1e6 for b, v in buckets(trace["size_bytes"], r_.flows["fct_s"]).items()},
                         **small_flows(trace["size_bytes"], r_.flows["fct_s"], r_.packet_flows["fast_retransmits"])})
        counted = "data_segments" in ns3.columns
        unit = " (RED in bytes)" if in_bytes else ""
        rows.append({"run": f"ns-3{unit}, dupThresh {dup}, seed {seed}", "cpu_s": np.nan,
                     "retransmissions": (ns3["data_segments"].to_numpy() - segments(ns3)).sum() if counted else np.nan,
                     "fast_retransmits": ns3["recoveries"].sum() if counted else np.nan,
                     "host_port_queue_B": float(q.group(1)) if q else np.nan,
                     "drops": sum(int(x) for x in d.groups()) if d else np.nan,
                     "drops at hosts": int(d.group(1)) if d else np.nan,
                     **{b: v * 1e6 for b, v in buckets(ns3["size_bytes"], ns3["fct_s"]).items()},
                     **small_flows(ns3["size_bytes"], ns3["fct_s"], ns3["recoveries"] if counted else None)})
        if counted:
            # the small flows but those ns-3 stalled (timed out without a loss), in both simulators
            under, st = ns3["size_bytes"].to_numpy() < 100e3, stalled(ns3)
            small = under & ~st
            ours_fct = runs[key][0].flows["fct_s"].to_numpy()
            rows[-1].update({"small stalled": int((under & st).sum()),
                             "small not stalled": float(ns3["fct_s"].to_numpy()[small].mean() * 1e6),
                             "flowsched, same flows": float(ours_fct[small].mean() * 1e6)})
    df = pd.DataFrame(rows).set_index("run")
    print("mean FCT (us) by flow size; ps over dctcp with packet spraying")
    print(df.drop(columns=[c for c in df.columns if c.startswith(("small", "flowsched"))]).round(1).to_string())
    if any(c.startswith("small") for c in df.columns):
        print("\nflows under 100 KB with and without a fast recovery (mean FCT, us); ns-3 outputs made with "
              "--counters=1")
        print(df[[c for c in df.columns if c.startswith("small") and "stalled" not in c]].round(3).to_string())
    if "small stalled" in df.columns:
        print("\nflows under 100 KB but those ns-3 stalled (a timeout without a segment resent: a window under one "
              "segment, ns-3's DCTCP cut having no floor), mean FCT (us) in ns-3 and in flowsched on the same flows")
        print(df[["small stalled", "small not stalled", "flowsched, same flows"]].dropna().round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
