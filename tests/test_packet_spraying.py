"""Packet spraying (``load_balancing="packet"``) and the fast-retransmit threshold
(``dupack_threshold``) of the packet model through the Python API and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import simulate
from flowsched.cli import main


def spine_bytes(r: flowsched.Results, prefix: str = "tor0-spine") -> np.ndarray:
    links = r.links
    return links.loc[links["link"].str.startswith(prefix), "bytes"].to_numpy()


def test_one_flow_sprayed_over_the_spines():
    topo = flowsched.LeafSpine(tors=2, hosts_per_tor=2, spines=4, host_gbps=10, core_gbps=10)
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [2], "size_bytes": [2_920_000.0]})  # 2,000 packets
    per_flow = spine_bytes(simulate(tr, topo, "ps", model="packet"))
    assert (per_flow > 0).sum() == 1
    r = simulate(tr, topo, "ps", model="packet", load_balancing="packet")
    sprayed = spine_bytes(r)
    assert sprayed.sum() == 2_920_000.0  # each payload byte over one spine, once
    assert (np.abs(sprayed / sprayed.sum() - 0.25) < 0.04).all(), sprayed  # 2,000 packets: sd 0.0097
    # spine s -> tor 0, spine s -> tor 1: the bytes that went up to spine s come down to tor 1
    np.testing.assert_array_equal(spine_bytes(r, "spine"), np.repeat(sprayed, 2) * np.tile([0, 1], 4))
    again = simulate(tr, topo, "ps", model="packet", load_balancing="packet")
    np.testing.assert_array_equal(again.flows["fct_s"], r.flows["fct_s"])
    np.testing.assert_array_equal(spine_bytes(again), sprayed)
    other = spine_bytes(simulate(tr, topo, "ps", model="packet", load_balancing="packet", seed=3))
    assert not np.array_equal(other, sprayed)  # the seed keys the packets' hash


def test_the_big_switch_has_one_path():
    rng = np.random.default_rng(0)
    n = 200
    tr = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 2e-3, n)), "src": rng.integers(0, 4, n),
                       "size_bytes": rng.choice([3e3, 5e4, 4e5], n)})
    tr["dst"] = (tr["src"] + rng.integers(1, 4, n)) % 4
    topo = flowsched.BigSwitch(4, 10)
    a = simulate(tr, topo, "srpt", model="packet")
    b = simulate(tr, topo, "srpt", model="packet", load_balancing="packet")
    np.testing.assert_array_equal(a.flows["fct_s"], b.flows["fct_s"])


def test_bad_values_say_what_is_wrong():
    topo = flowsched.LeafSpine(tors=2, hosts_per_tor=2, spines=2, host_gbps=10, core_gbps=10)
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [2], "size_bytes": [1e5]})
    with pytest.raises(ValueError, match="unknown load_balancing 'spray'; known: flow, packet"):
        simulate(tr, topo, "ps", model="packet", load_balancing="spray")
    with pytest.raises(ValueError, match="dupack_threshold must be an integer >= 0"):
        simulate(tr, topo, "ps", model="packet", dupack_threshold=-1)
    with pytest.raises(ValueError, match="dupack_threshold is read by the tcp and dctcp senders"):
        simulate(tr, topo, "srpt", model="packet", dupack_threshold=0)
    with pytest.raises(Exception, match="packet spraying .* with rcp"):
        simulate(tr, topo, "ps", model="packet", transport="rcp", load_balancing="packet")


def test_cli_flags(tmp_path, capsys):
    tr = tmp_path / "t.csv"
    pd.DataFrame({"id": [0, 1], "arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [2, 3],
                  "size_bytes": [3e5, 3e5]}).to_csv(tr, index=False)
    args = ["simulate", "--trace", str(tr), "--topology", "leafspine", "--tors", "2", "--hosts-per-tor", "2",
            "--spines", "2", "--scheduler", "ps", "--model", "packet", "-q"]
    assert main(args + ["--load-balancing", "packet", "--dupack-threshold", "0"]) == 0
    assert "packet model, dctcp:" in capsys.readouterr().out
    assert main(args + ["--dupack-threshold", "-2"]) == 2
    assert "dupack_threshold must be an integer >= 0" in capsys.readouterr().err


def test_within_ten_percent_of_ns3_spraying():
    """benchmarks/references/ns3_spray: 1,500 web-search flows on a 4 x 8 leaf-spine with 4 spines (all links
    10 Gbps), dctcp as ns-3's TcpDctcp runs it (RED's step at K = 65 packets and 240 packets of buffer, ACKs
    counted; no growth after a cut, growth by the segments an ACK covers, no floor under the cut:
    compare.NS3_DCTCP), packets sprayed;
    ns-3 3.44 with RandomEcmpRouting, two seeds of its draws. Without fast retransmit the mean FCT of every
    size bucket is within 10% of ns-3's (mean of the seeds), the small flows' on the flows ns-3 did not
    stall (a timeout without a segment resent: ns-3's DCTCP cut has no floor, and a window under one segment
    waits for the timer; 2 to 6 small flows a seed); with the default threshold the overall, medium and large
    flows' are, and both simulators lose 20-30% of their mean to the spurious fast retransmits of the
    reordering. Their counters agree: about as many fast recoveries, and without fast retransmit the same mean
    queue at the ToR ports towards the hosts."""
    import importlib.util
    import lzma
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "benchmarks" / "references" / "ns3_spray"
    spec = importlib.util.spec_from_file_location("ns3_spray_compare", here / "compare.py")
    cmp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cmp)
    trace = pd.read_csv(here / "ws32_n1500_seed1.csv.xz")
    topo = flowsched.LeafSpine(tors=4, hosts_per_tor=8, spines=4, host_gbps=10, core_gbps=10)
    means = {}
    for dup, ns3_dup in ((0, 1000000), (3, 3)):
        r = simulate(trace, topo, "ps", model="packet", transport="dctcp", delay_us=0.2, load_balancing="packet",
                     dupack_threshold=dup, min_rto_s=1e-3, ecn_threshold_packets=65, buffer_packets=240,
                     **cmp.NS3_DCTCP)
        ours = cmp.buckets(trace["size_bytes"], r.flows["fct_s"])
        paths = [here / f"ns3_spray1_d{ns3_dup}_s{s}.csv.xz" for s in (1, 2)]
        runs = [pd.read_csv(p, comment="#") for p in paths]
        theirs = {k: np.mean([cmp.buckets(x["size_bytes"], x["fct_s"])[k] for x in runs]) for k in ours}
        checked = ["all", "100 KB - 10 MB", ">= 10 MB"]
        for k in checked:
            assert abs(ours[k] / theirs[k] - 1) < 0.10, (dup, k, ours[k], theirs[k])
        if dup == 0:
            small = [(trace["size_bytes"].to_numpy() < 100e3) & ~cmp.stalled(x) for x in runs]
            assert all(1 <= (trace["size_bytes"].to_numpy() < 100e3).sum() - s.sum() <= 10 for s in small)
            theirs_small = np.mean([x["fct_s"].to_numpy()[s].mean() for x, s in zip(runs, small, strict=True)])
            ours_small = np.mean([r.flows["fct_s"].to_numpy()[s].mean() for s in small])
            assert abs(ours_small / theirs_small - 1) < 0.10, (ours_small, theirs_small)
        means[dup] = (ours["all"], theirs["all"])
        # the runs' counters (leafspine_fct --counters=1): as many fast recoveries, and without fast
        # retransmit the same mean queue at the ToR ports towards the hosts
        recoveries = np.mean([x["recoveries"].sum() for x in runs])
        ours_fr = r.packet_flows["fast_retransmits"].sum()
        assert (ours_fr == 0) if dup == 0 else abs(ours_fr / recoveries - 1) < 0.20, (dup, ours_fr, recoveries)
        if dup == 0:
            queue = np.mean([float(cmp.QUEUE.search(lzma.open(p, "rt").read()).group(1)) for p in paths])
            down = r.ports[r.ports["link"].str.startswith("down")]["mean_queue_bytes"].mean()
            assert abs(down / queue - 1) < 0.10, (down, queue)
    for i in (0, 1):
        assert 0.70 < means[0][i] / means[3][i] < 0.80, means
