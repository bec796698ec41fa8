"""Packet-level model throughput and accuracy on the shared reference traces (issue 19).

Runs the packet model on a trace under each transport, each run in a fresh process (so
its peak memory, ru_maxrss, is its own), and prints wall time, CPU time, events/s, data
packets/s, peak RSS and mean FCT overall and by size bucket. With ``--yaps BINARY`` it also
runs YAPS (pfabric.conf, and dctcp.conf for speed only) on the same trace in the same run,
and with ``--ns3 BINARY`` the ns-3 runner (``trace_fct``, for tcp and dctcp), and prints the
wall-time ratios and the mean FCTs side by side. ``--ref-yaps``/``--ref-ns3`` compare with
stored outputs instead of running the reference.

The settings are the references' (../shared/peers/ns3/README.md, ../shared/peers/yaps/pfabric.conf):
144-host big switch, 10 Gbps, 0.2 us per link, MSS 1460 + 40 B headers; tcp/dctcp: 360,000 B
buffers, K = 65 packets, initial window 10, min RTO 1 ms; pfabric (scheduler srpt): 36,864 B
buffers, initial window 12, maximum 15, RTO 45 us.

    python benchmarks/bench_packet.py --trace ../shared/peers/yaps/ws_h144_n10000_seed2.csv \\
        --transports pfabric dctcp --yaps /tmp/yaps/simulator
    python benchmarks/bench_packet.py --trace ../shared/peers/ns3/ws_h144_n1500_seed2.csv --transports tcp dctcp \\
        --ref-ns3 ../shared/peers/ns3/ns3_{transport}_ws_h144_n1500_seed2.csv.xz
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SETTINGS = {
    "tcp": {"scheduler": "ps", "transport": "tcp", "buffer_bytes": 360_000, "init_cwnd_packets": 10, "min_rto_s": 1e-3},
    "dctcp": {"scheduler": "ps", "transport": "dctcp", "buffer_bytes": 360_000, "ecn_threshold_bytes": 97_500,
              "init_cwnd_packets": 10, "min_rto_s": 1e-3},
    "pfabric": {"scheduler": "srpt", "transport": "pfabric", "buffer_bytes": 36_864, "init_cwnd_packets": 12,
                "max_cwnd_packets": 15, "min_rto_s": 45e-6},
}
BUCKETS = (("< 100 KB", 0, 1e5), ("100 KB - 10 MB", 1e5, 1e7), ("> 10 MB", 1e7, np.inf))
PEERS = Path(__file__).resolve().parents[2] / "shared" / "peers"


def one(trace: str, transport: str, hosts: int, out: str) -> dict:
    """One packet-model run (in its own process): timings, counters and per-flow FCTs."""
    import flowsched

    tr = pd.read_csv(trace)
    opts = dict(SETTINGS[transport])
    scheduler = opts.pop("scheduler")
    t0, c0 = time.perf_counter(), time.process_time()
    res = flowsched.simulate(tr, flowsched.BigSwitch(hosts, 10.0), scheduler, model="packet", delay_us=0.2,
                             progress=False, **opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    res.flows[["id", "size_bytes", "fct_s"]].to_csv(out, index=False)
    p = res.packet
    return {"transport": transport, "scheduler": scheduler, "flows": len(tr), "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3), "events": p["events"], "events_per_s": round(p["events"] / wall),
            "data_packets": p["data_packets"], "packets_per_s": round((p["data_packets"] + p["ack_packets"]) / wall),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "finished": int(res.flows["fct_s"].notna().sum()),
            **{k: p[k] for k in ("retransmissions", "timeouts", "drops_overflow", "drops_evicted", "ecn_marks")}}


def run_reference(kind: str, binary: str, trace: str, transport: str, hosts: int, out: str) -> dict:
    """Runs YAPS or the ns-3 runner on the trace (its own settings) and writes id,fct_s to out."""
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if kind == "yaps":
        conf = {"pfabric": "pfabric.conf", "dctcp": "dctcp.conf", "tcp": "tcp.conf"}[transport]
        with tempfile.TemporaryDirectory() as d:
            sys.path.insert(0, str(PEERS / "yaps"))
            import yaps_io  # the references' converter (../shared/peers/yaps/yaps_io.py)

            yaps_io.to_yaps(trace, os.path.join(d, "trace.yaps.txt"))
            n = len(pd.read_csv(trace))
            lines = (PEERS / "yaps" / conf).read_text().splitlines()
            lines = [("flow_trace: ./trace.yaps.txt" if ln.startswith("flow_trace:") else
                      f"num_flow: {n}" if ln.startswith("num_flow:") else ln) for ln in lines]
            Path(d, conf).write_text("\n".join(lines) + "\n")
            r = subprocess.run([binary, "1", conf], cwd=d, capture_output=True, text=True, check=True)
            Path(d, "out.txt").write_text(r.stdout)
            yaps_io.from_yaps(os.path.join(d, "out.txt"), out)
    else:
        name = {"tcp": "ns3::TcpNewReno", "dctcp": "ns3::TcpDctcp"}[transport]
        queue = "ecn" if transport == "dctcp" else "droptail"
        r = subprocess.run([binary, f"--trace={trace}", f"--hosts={hosts}", f"--transport={name}", f"--queue={queue}"],
                           capture_output=True, text=True, check=True)
        Path(out).write_text("\n".join(ln for ln in r.stdout.splitlines() if not ln.startswith("#")) + "\n")
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru.ru_utime + ru.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return {"reference": kind, "transport": transport, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "peak_rss_mb_children": round(ru.ru_maxrss / 1024, 1)}


def read_ref(path: str) -> pd.DataFrame:
    """Per-flow reference FCTs: a YAPS output (.out[.xz]) or a CSV with id and fct_s ([.xz])."""
    if ".out" in Path(path).name:
        sys.path.insert(0, str(PEERS / "yaps"))
        import yaps_io

        with tempfile.TemporaryDirectory() as d:
            yaps_io.from_yaps(path, os.path.join(d, "o.csv"))
            return pd.read_csv(os.path.join(d, "o.csv"))
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        df = pd.read_csv(f, comment="#")
    return df


def compare(ours: pd.DataFrame, ref: pd.DataFrame) -> list[dict]:
    """Mean FCT overall and per bucket, on the flows that finished in both (ns-3 marks -1)."""
    m = ours.merge(ref[["id", "fct_s"]], on="id", suffixes=("", "_ref"))
    m = m[np.isfinite(m["fct_s"]) & (m["fct_s_ref"] > 0)]
    rows = []
    for name, lo, hi in (("all", 0, np.inf), *BUCKETS):
        g = m[(m["size_bytes"] >= lo) & (m["size_bytes"] < hi)]
        a, b = g["fct_s"].mean() * 1e6, g["fct_s_ref"].mean() * 1e6
        rows.append({"bucket": name, "flows": len(g), "ours_us": round(a, 1), "ref_us": round(b, 1),
                     "ratio": round(a / b, 4)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default=str(PEERS / "yaps" / "ws_h144_n10000_seed2.csv"))
    ap.add_argument("--hosts", type=int, default=144)
    ap.add_argument("--transports", nargs="+", default=["pfabric", "dctcp", "tcp"], choices=list(SETTINGS))
    ap.add_argument("--yaps", default=None, help="YAPS binary: run it on the same trace (pfabric, dctcp, tcp confs)")
    ap.add_argument("--ns3", default=None, help="the ns-3 runner trace_fct: run it on the same trace (tcp, dctcp)")
    ap.add_argument("--ref-yaps", default=None, help="stored YAPS output; {transport} is replaced")
    ap.add_argument("--ref-ns3", default=None, help="stored ns-3 output; {transport} is replaced")
    ap.add_argument("--json", default=None, help="also write every row as JSON here")
    ap.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._one:
        print(json.dumps(one(a.trace, a._one[0], a.hosts, a._one[1])))
        return
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        for t in a.transports:
            out = os.path.join(d, f"ours_{t}.csv")
            r = subprocess.run([sys.executable, __file__, "--trace", a.trace, "--hosts", str(a.hosts),
                                "--_one", t, out, "x"], capture_output=True, text=True, check=True)
            row = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"packet {t:8s} {row['flows']} flows: {row['wall_s']:.2f} s wall, {row['cpu_s']:.2f} s CPU, "
                  f"{row['events_per_s']:,} events/s, {row['packets_per_s']:,} packets/s (data + ACK), "
                  f"peak RSS {row['peak_rss_mb']} MB; {row['finished']} finished, {row['timeouts']} timeouts, "
                  f"{row['drops_overflow'] + row['drops_evicted']} drops")
            rows.append(row)
            ours = pd.read_csv(out)
            refs: list[tuple[str, str]] = []
            if a.yaps and t in ("pfabric", "dctcp", "tcp"):
                ref_out = os.path.join(d, f"yaps_{t}.csv")
                rr = run_reference("yaps", a.yaps, a.trace, t, a.hosts, ref_out)
                print(f"  YAPS {t}: {rr['wall_s']:.2f} s wall, {rr['cpu_s']:.2f} s CPU: packet model "
                      f"{rr['wall_s'] / row['wall_s']:.1f}x faster in wall time, "
                      f"{rr['cpu_s'] / row['cpu_s']:.1f}x in CPU time")
                rows.append(rr)
                refs.append(("YAPS", ref_out))
            if a.ns3 and t in ("tcp", "dctcp"):
                ref_out = os.path.join(d, f"ns3_{t}.csv")
                rr = run_reference("ns3", a.ns3, a.trace, t, a.hosts, ref_out)
                print(f"  ns-3 {t}: {rr['wall_s']:.2f} s wall, {rr['cpu_s']:.2f} s CPU (PyPI build, logging compiled "
                      f"in): packet model {rr['wall_s'] / row['wall_s']:.1f}x faster in wall time, "
                      f"{rr['cpu_s'] / row['cpu_s']:.1f}x in CPU time")
                rows.append(rr)
                refs.append(("ns-3", ref_out))
            if a.ref_yaps and t == "pfabric":
                refs.append(("YAPS (stored)", a.ref_yaps.format(transport=t)))
            if a.ref_ns3 and t in ("tcp", "dctcp"):
                refs.append(("ns-3 (stored)", a.ref_ns3.format(transport=t)))
            for name, path in refs:
                cmp = compare(ours, read_ref(path))
                print(f"  mean FCT against {name}:")
                for c in cmp:
                    print(f"    {c['bucket']:15s} {c['flows']:6d} flows  packet {c['ours_us']:10.1f} us  "
                          f"{name} {c['ref_us']:10.1f} us  ratio {c['ratio']:.3f}")
                rows.append({"transport": t, "against": name, "comparison": cmp})
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
