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


def figures(out: Path) -> None:
    """The incast curve (N senders x 25 KB into one 64 KB or 1 MB drop-tail port, tcp, min RTO 10 ms)
    and one bottleneck port's queue over time under tcp and dctcp (4 long flows into one host)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import flowsched

    out.mkdir(parents=True, exist_ok=True)
    ns = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for buf, label in ((64_000, "64 KB buffer"), (1_000_000, "1 MB buffer")):
        means = []
        for n in ns:
            tr = pd.DataFrame({"arrival_s": [0.0] * n, "src": range(1, n + 1), "dst": [0] * n,
                               "size_bytes": [25_000.0] * n})
            r = flowsched.simulate(tr, flowsched.BigSwitch(33, 10), "ps", model="packet", transport="tcp",
                                   buffer_bytes=buf, min_rto_s=10e-3, delay_us=1.0, progress=False)
            means.append(r.flows["fct_s"].mean() * 1e3)
        ax.plot(ns, means, marker="o", label=label)
    ax.set_xlabel("senders (25 KB each, one receiver)")
    ax.set_ylabel("mean FCT (ms)")
    ax.set_title("Incast, tcp, min RTO 10 ms")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "packet_incast.png", dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    tr = pd.DataFrame({"arrival_s": [0.0] * 4, "src": [1, 2, 3, 4], "dst": [0] * 4, "size_bytes": [3e7] * 4})
    for transport in ("tcp", "dctcp"):
        r = flowsched.simulate(tr, flowsched.BigSwitch(5, 10), "ps", model="packet", transport=transport,
                               buffer_bytes=360_000, min_rto_s=1e-3, delay_us=5.0, queue_sample_us=20,
                               sample_links=["down0"], progress=False)
        q = r.queue_samples
        ax.plot(q["time_s"] * 1e3, q["queue_bytes"] / 1e3, lw=0.8, label=transport)
    ax.axhline(97.5, color="grey", ls="--", lw=0.8, label="K = 97.5 KB")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("queue at down0 (KB)")
    ax.set_title("4 long flows into one host, 360 KB buffer")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(out / "packet_queue.png", dpi=120)
    plt.close(fig)
    print(f"wrote {out / 'packet_incast.png'} and {out / 'packet_queue.png'}")


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
    ap.add_argument("--figures", default=None, metavar="DIR",
                    help="only draw the incast curve and a bottleneck's queue under tcp and dctcp into DIR "
                         "(packet_incast.png, packet_queue.png; needs matplotlib)")
    ap.add_argument("--_one", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._one:
        print(json.dumps(one(a.trace, a._one[0], a.hosts, a._one[1])))
        return
    if a.figures:
        figures(Path(a.figures))
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
