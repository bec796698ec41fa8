"""Regenerate the traces that the packet-level references in this folder were run on.

Every trace is web search (ns-2 integral sampling, whole 1460 B packets), Poisson all-to-all,
10 Gbps host links, load on payload bytes; the references were run on the 5-column form
``id,arrival_s,src,dst,size_bytes`` (arrival printed with 12 decimals, sizes as integers), which
is what this script writes, and what ``compare_packet.py --run`` feeds flowsched.

    python benchmarks/references/make_traces.py --out /tmp/traces            # all of TRACES, checked
    python benchmarks/references/make_traces.py --out /tmp/traces --yaps     # also YAPS flow traces

Two recipes draw the same distribution of traces from one seed:

* ``flowsched``: ``flowsched.workloads.poisson_all_to_all`` (``flowsched generate``): gaps,
  then source, then a destination offset ``dst = (src + U{1..hosts-1}) % hosts``, then sizes
  from ``1 - u``. The traces seeded 3 and 4 (load 0.8) and 2 (load 0.5) here use it.
* ``shared``: how the shared trace ``ws_h144_n10000_seed2.csv`` of shared/peers/yaps/ (beside the repository) was drawn
  (found by replaying numpy's generator; it matches that file byte for byte): the same gaps,
  then sizes from ``u`` (not ``1 - u``), then source, then ``dst = v + (v >= src)`` with
  ``v = U{0..hosts-2}``. ``flowsched generate`` with the same seed gives the same arrival
  times but other sources, destinations and sizes.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

MSS = 1460

#: name -> (recipe, seed, load, hosts, n_flows, head, sha256 of the 5-column CSV).
#: ``head`` keeps the first rows of the n_flows-flow trace (the ns-3 traces are the first 1,500
#: flows of the 10,000-flow ones, as the shared ns-3 trace is of the shared YAPS trace).
TRACES: dict[str, tuple[str, int, float, int, int, int | None, str]] = {}


def _add(name: str, recipe: str, seed: int, load: float, hosts: int, n: int, head: int | None, sha: str) -> None:
    TRACES[name] = (recipe, seed, load, hosts, n, head, sha)


def generate(recipe: str, seed: int, load: float, hosts: int, n_flows: int, link_gbps: float = 10.0) -> pd.DataFrame:
    """A trace as a DataFrame with columns id, arrival_s, src, dst, size_bytes (int64 sizes)."""
    from flowsched import workloads

    if recipe == "flowsched":
        df = workloads.poisson_all_to_all("websearch", load=load, hosts=hosts, link_gbps=link_gbps,
                                          n_flows=n_flows, seed=seed)
        out = df[["id", "arrival_s", "src", "dst"]].copy()
        out["size_bytes"] = df["size_bytes"].round().astype(np.int64)
        return out
    if recipe == "shared":
        d = workloads.get_distribution("websearch")
        lam = workloads.arrival_rate_per_host_hz(d.mean_bytes, load, link_gbps)
        rng = np.random.default_rng(seed)
        arrival = np.cumsum(rng.exponential(1.0 / (hosts * lam), n_flows))
        u = rng.random(n_flows)
        sizes = d.size_at(np.where(u > 0, u, 1.0))  # u == 0 has probability 2**-53 per draw
        src = rng.integers(0, hosts, n_flows)
        v = rng.integers(0, hosts - 1, n_flows)
        dst = v + (v >= src)
        return pd.DataFrame({"id": np.arange(n_flows), "arrival_s": arrival, "src": src, "dst": dst,
                             "size_bytes": np.round(sizes).astype(np.int64)})
    raise ValueError(f"unknown recipe {recipe!r} (flowsched or shared)")


def to_csv_text(df: pd.DataFrame) -> str:
    lines = ["id,arrival_s,src,dst,size_bytes"]
    lines += [f"{i},{a:.12f},{s},{d},{b}" for i, a, s, d, b in
              zip(df["id"], df["arrival_s"], df["src"], df["dst"], df["size_bytes"], strict=True)]
    return "\n".join(lines) + "\n"


def to_yaps_text(df: pd.DataFrame) -> str:
    """YAPS's flow trace: ``id start_s 0 0 packets 0 0 src dst`` (sizes in whole MSS packets)."""
    return "".join(f"{i} {a:.12f} 0 0 {max(1, math.ceil(b / MSS))} 0 0 {s} {d}\n" for i, a, s, d, b in
                   zip(df["id"], df["arrival_s"], df["src"], df["dst"], df["size_bytes"], strict=True))


def build(name: str) -> str:
    recipe, seed, load, hosts, n, head, _ = TRACES[name]
    df = generate(recipe, seed, load, hosts, n)
    if head is not None:
        df = df.iloc[:head]
    return to_csv_text(df)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="directory for <name>.csv")
    p.add_argument("--only", nargs="*", default=None, help="names from TRACES (default: all)")
    p.add_argument("--yaps", action="store_true", help="also write <name>.yaps.txt (YAPS flow traces)")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in a.only or list(TRACES):
        text = build(name)
        sha = hashlib.sha256(text.encode()).hexdigest()
        (out / f"{name}.csv").write_text(text)
        if a.yaps:
            (out / f"{name}.yaps.txt").write_text(to_yaps_text(pd.read_csv(out / f"{name}.csv")))
        want = TRACES[name][-1]
        ok = sha == want
        bad += not ok
        print(f"{name}.csv  sha256 {sha}  {'ok' if ok else 'MISMATCH, expected ' + want}")
    return 1 if bad else 0


_add("ws_h144_n10000_seed2", "shared", 2, 0.8, 144, 10_000, None,
     "69a32b29f3f211e086c2f8e74d05ea860d4a75f2988f8d90c47e1a960aa6b316")
_add("ws_h144_n1500_seed2", "shared", 2, 0.8, 144, 10_000, 1_500,
     "c5f6ee0fbeff660c1c0c6f180d11d48502006ecb062cea6adf5975887a6dcf79")
_add("ws_h144_n10000_seed3", "flowsched", 3, 0.8, 144, 10_000, None,
     "3cc299a8bdd679b809da2c127deea14d6dd1cfb998874bb3e55687f3dd31be0a")
_add("ws_h144_n1500_seed3", "flowsched", 3, 0.8, 144, 10_000, 1_500,
     "b0bdf3b8a70835376ee0d2ff217db8d36373a3ae78adb4f225e4e88bd5ae147c")
_add("ws_h144_n10000_seed4", "flowsched", 4, 0.8, 144, 10_000, None,
     "170bcf181dcf0a739770cf257377cc7924c745acdcc20b11455a4822a8c4ae5b")
_add("ws_h144_n1500_seed4", "flowsched", 4, 0.8, 144, 10_000, 1_500,
     "5fb23f5caf5e6d8413ac8f27a190478f34a1ba60a8b99abdbb2e9e2e81d9e29b")
_add("ws_h144_n10000_seed2_load0.5", "flowsched", 2, 0.5, 144, 10_000, None,
     "a15d90ebf20b17e9ab843375acdf56a63f31986c242d5145659958fbaad37555")
_add("ws_h144_n1500_seed2_load0.5", "flowsched", 2, 0.5, 144, 10_000, 1_500,
     "d40458d2fa88ea336d8c1dcd14879e540229efb11f8c348cd8c37257167a2f9f")
# the CI fixture (tests/data/packet_refs/): 300 flows over 16 hosts, so that flows meet in the queues
_add("ws_h16_n300_seed2", "flowsched", 2, 0.8, 16, 300, None,
     "01cedc446ad06ad0d01d9fd1f5eb3ec5cba5735217522b0144fd06e283dcc04e")

if __name__ == "__main__":
    sys.exit(main())
