"""Simulator throughput: flows/s and events/s per scheduler and topology.

The reference scenario of the fabric-simulator issue is a 144-host big switch at
10 Gbps, web search sizes (ns-2 sampling), load 0.8, 1,000,000 flows. Run it with
``--flows 1000000``; the default is smaller so that the script finishes in minutes.
Each configuration runs in a fresh process so the peak memory (ru_maxrss) is its own.

    python benchmarks/bench_sim.py --flows 100000
    python benchmarks/bench_sim.py --flows 1000000 --schedulers srpt ps --topologies bigswitch

Graph fabrics (issue 21), with the trace drawn on their own hosts, web search at the same
load of the 10 Gbps host links: ``--topology fattree --k 16`` (a k-ary fat-tree, k^3/4 =
1,024 hosts, every link at 10 Gbps) and ``--topology parkinglot`` (8 hosts, each on its
own switch, 40 Gbps between switches: m3's flowSim setting).

    python benchmarks/bench_sim.py --flows 100000 --schedulers srpt ps --topology fattree parkinglot --k 16
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time

from hostinfo import host  # benchmarks/hostinfo.py, beside this script

TOPOLOGIES = ("bigswitch", "leafspine", "fattree", "parkinglot")
PARKING_LOT_HOSTS = 8


def make_topology(topology: str, k: int = 16):
    import flowsched

    if topology == "bigswitch":
        return flowsched.BigSwitch(144, 10.0)
    if topology == "leafspine":
        return flowsched.LeafSpine(9, 16, 4, 10.0, 40.0)
    from flowsched.topology import FatTree, ParkingLot  # graph fabrics (issue 21)

    if topology == "fattree":
        return FatTree(k, 10.0, 10.0)
    if topology == "parkinglot":
        return ParkingLot(PARKING_LOT_HOSTS, 10.0, 40.0)
    raise ValueError(f"unknown topology {topology!r}; known: {', '.join(TOPOLOGIES)}")


def one(flows: int, scheduler: str, topology: str, load: float, seed: int, progress: bool = False,
        k: int = 16) -> dict:
    import flowsched
    from flowsched import workloads

    topo = make_topology(topology, k)
    tr = workloads.poisson_all_to_all("websearch", load, topo.n_hosts, 10.0, flows, seed=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    res = flowsched.simulate(tr, topo, scheduler, progress=progress)  # progress on stderr (captured)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "scheduler": scheduler,
        "topology": topology if topology != "fattree" else f"fattree k={k}",
        "hosts": topo.n_hosts,
        "flows": flows,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),  # less sensitive than wall to other work on the machine
        "flows_per_s": round(flows / wall),
        "events_per_s": round(res.stats["events"] / wall),
        "events": res.stats["events"],
        "mean_active_flows": round(float(res.flows["fct_s"].sum() / res.duration_s), 1),
        "mean_fct_ms": round(float(res.flows["fct_s"].mean() * 1e3), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=20_000)
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--schedulers", nargs="+", default=["fifo", "ps", "srpt", "las", "pias"])
    ap.add_argument("--topologies", "--topology", nargs="+", default=["bigswitch", "leafspine"], choices=TOPOLOGIES,
                    help="bigswitch (144 hosts), leafspine (9x16, 4 spines), fattree (k^3/4 hosts, --k), "
                         f"parkinglot ({PARKING_LOT_HOSTS} hosts, 40 Gbps between switches)")
    ap.add_argument("--k", type=int, default=16, help="fat-tree arity (default 16: 1,024 hosts)")
    ap.add_argument("--progress", choices=("off", "on"), default="off",
                    help="run with the progress display forced on (its cost: compare with off)")
    ap.add_argument("--one", nargs=2, metavar=("SCHEDULER", "TOPOLOGY"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    import flowsched

    if a.flows < 1:
        ap.error(f"--flows must be >= 1, got {a.flows}")
    if not 0 < a.load < 1:
        ap.error(f"--load must be in (0, 1) (a fraction of the host links), got {a.load}")
    if not 0 <= a.seed < 2**32:
        ap.error(f"--seed must be in [0, 2**32), got {a.seed}")
    if a.k < 2 or a.k % 2:
        ap.error(f"--k must be an even fat-tree arity >= 2, got {a.k}")
    unknown = [s for s in a.schedulers if s not in flowsched.SCHEDULERS and not s.startswith(("gtcp:", "ga:"))]
    if unknown:
        ap.error(f"unknown scheduler(s) {unknown}; known: {', '.join(flowsched.SCHEDULERS)}, gtcp:<inner>")
    if a.one:
        print(json.dumps(one(a.flows, a.one[0], a.one[1], a.load, a.seed, a.progress == "on", a.k)))
        return
    fabrics = (", 144 hosts, 10 Gbps hosts (leaf-spine: 9x16, 4 spines, 40 Gbps core)"
               if {"bigswitch", "leafspine"} & set(a.topologies) else ", 10 Gbps hosts")
    print(f"# {host()}, python {platform.python_version()}, "
          f"web search, load {a.load}{fabrics}")
    graphs = {"fattree": f"fattree: k={a.k}, {a.k ** 3 // 4:,} hosts, 10 Gbps links",
              "parkinglot": f"parkinglot: {PARKING_LOT_HOSTS} hosts, 40 Gbps between switches"}
    if any(t in graphs for t in a.topologies):
        print("# " + "; ".join(graphs[t] for t in dict.fromkeys(a.topologies) if t in graphs)
              + "; the trace on each fabric's own hosts")
    print("| topology | scheduler | flows | wall (s) | flows/s | events/s | mean active flows | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    for topo in a.topologies:
        for s in a.schedulers:
            out = subprocess.run(
                [sys.executable, __file__, "--flows", str(a.flows), "--load", str(a.load), "--seed", str(a.seed),
                 "--progress", a.progress, "--k", str(a.k), "--one", s, topo], capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"bench_sim: {s} on {topo} failed (exit {out.returncode}):\n{out.stderr.strip()}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {r['topology']} | {s} | {r['flows']:,} | {r['wall_s']:.2f} | {r['flows_per_s']:,} | "
                  f"{r['events_per_s']:,} | {r['mean_active_flows']} | {r['peak_rss_mb']} |", flush=True)


if __name__ == "__main__":
    main()
