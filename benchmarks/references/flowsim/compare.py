"""Compare flowsched's per-flow FCTs on a parking lot with flowSim's (``flowsim.py``'s output).

flowSim inflates every size to ``size + ceil(size / 1000) * 48`` bytes and reports the fluid
transmission time alone; so flowsched runs the same inflated sizes (``--no-headers``: the
trace's own sizes, for a comparison of the two as each is normally run) on
``ParkingLot(hosts, host_gbps, switch_gbps)`` with no path delay (``delay_us = 0``, the
default), and both FCTs are then the same quantity: exact max-min fair fluid completion
time minus arrival.

    python benchmarks/references/flowsim/compare.py --trace ws.csv --flowsim fct_flowsim.csv \\
        [--switch-gbps 40] [--scheduler ps] [--json summary.json]

Prints the mean FCT of both, the relative difference |ours - flowSim| / flowSim per flow
(max, mean, median, counts above 1e-9 and 1e-6) and the CPU and wall time of flowsched's
``Simulation(...).run()`` alone (and of building the simulation).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--flowsim", required=True, help="flowsim.py's output: id,fct_ns")
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--host-gbps", type=float, default=10.0)
    ap.add_argument("--switch-gbps", type=float, default=40.0)
    ap.add_argument("--scheduler", default="ps")
    ap.add_argument("--no-headers", action="store_true", help="do not inflate the sizes as flowSim does")
    ap.add_argument("--allocator", default="auto", help="auto (default), incremental or full")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    import flowsched
    from flowsched.topology import ParkingLot

    tr = pd.read_parquet(a.trace) if a.trace.endswith(".parquet") else pd.read_csv(a.trace)
    if not a.no_headers:
        tr["size_bytes"] = tr["size_bytes"] + np.ceil(tr["size_bytes"] / 1000.0) * 48.0
    topo = ParkingLot(a.hosts, a.host_gbps, a.switch_gbps)
    c0, t0 = time.process_time(), time.perf_counter()
    sim = flowsched.Simulation(tr, topo, a.scheduler, allocator=a.allocator)
    c1, t1 = time.process_time(), time.perf_counter()
    sim.run(progress=False)
    c2, t2 = time.process_time(), time.perf_counter()
    ours = sim.results().flows.set_index("id")["fct_s"]
    ref = pd.read_csv(a.flowsim).set_index("id")["fct_ns"] * 1e-9
    ids = ref.index.intersection(ours.index)
    if len(ids) != len(ref) or len(ids) != len(ours):
        raise SystemExit(f"flow ids differ: {len(ours)} simulated, {len(ref)} in {a.flowsim}, {len(ids)} in both")
    x, y = ours.loc[ids].to_numpy(), ref.loc[ids].to_numpy()
    rel = np.abs(x - y) / y
    out = {
        "trace": Path(a.trace).name, "flows": len(ids), "topology": repr(topo), "scheduler": a.scheduler,
        "allocator": a.allocator,
        "headers": not a.no_headers,
        "mean_fct_ms_flowsched": float(x.mean() * 1e3), "mean_fct_ms_flowsim": float(y.mean() * 1e3),
        "rel_max": float(rel.max()), "rel_mean": float(rel.mean()), "rel_median": float(np.median(rel)),
        "n_rel_above_1e-9": int((rel > 1e-9).sum()), "n_rel_above_1e-6": int((rel > 1e-6).sum()),
        "id_of_max": int(ids[rel.argmax()]),
        "init_cpu_s": round(c1 - c0, 4), "init_wall_s": round(t1 - t0, 4),
        "run_cpu_s": round(c2 - c1, 4), "run_wall_s": round(t2 - t1, 4),
        "events": int(sim.stats()["events"]),
    }
    print(json.dumps(out))
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
