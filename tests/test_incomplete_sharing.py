"""The GA transform's incomplete flows sharing their class (``incomplete_sharing="fair"``):
cases worked out by hand on one link, what it leaves unchanged, and the option's errors.
The rates along random runs are checked against an independent recomputation in Rust
(``fabric/core/tests/ga_sharing.rs``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import workloads
from flowsched.cli import main as cli_main

C = 10e9 / 8  # bytes/s of a 10 Gb/s link


def two_flows(span_s: float) -> pd.DataFrame:
    """Hosts 0 and 1 each send 1 MB to host 2 at t=0, the data arriving over span_s."""
    return pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [2, 2], "size_bytes": [1e6, 1e6],
                         "data_span_s": [span_s, span_s]})


def fcts(tr: pd.DataFrame, sched: str = "asrpt", **kw) -> list[float]:
    return flowsched.simulate(tr, flowsched.BigSwitch(3, 10), sched, progress=False, **kw).flows["fct_s"].tolist()


def test_by_hand_on_one_link():
    # Data over 0.4 ms (2.5e9 bytes/s, faster than the link): under FIFO the first flow takes
    # the link (0.5 MB sent when its data is complete, then the shorter remaining: done at
    # 0.8 ms) and the second waits; sharing, each sends 0.25 MB by 0.4 ms, when both are
    # complete with 0.75 MB left, and SRPT's tie goes to trace order.
    fast = two_flows(4e-4)
    assert fcts(fast) == fcts(fast, incomplete_sharing="fifo") == pytest.approx([1e6 / C, 2e6 / C], rel=1e-12)
    assert fcts(fast, incomplete_sharing="fair") == pytest.approx([4e-4 + 7.5e5 / C, 4e-4 + 1.5e6 / C], rel=1e-12)
    # Data over 2 ms (40% of the link each): each flow is held to its data rate either way.
    slow = two_flows(2e-3)
    assert fcts(slow, incomplete_sharing="fair") == fcts(slow) == pytest.approx([2e-3, 2e-3], rel=1e-12)
    # ga:ssdf: the same incomplete class (no deadlines: complete flows go by arrival)
    assert fcts(fast, "ga:ssdf", incomplete_sharing="fair") == pytest.approx([4e-4 + 7.5e5 / C, 4e-4 + 1.5e6 / C],
                                                                             rel=1e-12)


def test_without_data_spans_nothing_is_incomplete():
    # every flow's data is there at arrival: ASRPT is SRPT, whatever the sharing
    tr = workloads.poisson_all_to_all("websearch", load=0.7, hosts=8, link_gbps=10, n_flows=500, seed=3)
    topo = flowsched.BigSwitch(8, 10)
    srpt = flowsched.simulate(tr, topo, "srpt", allocator="full", progress=False).flows["finish_s"].to_numpy()
    fair = flowsched.simulate(tr.assign(size_known=False), topo, "asrpt", incomplete_sharing="fair",
                              progress=False).flows["finish_s"].to_numpy()
    np.testing.assert_array_equal(fair, srpt)


def test_option_errors():
    tr = two_flows(4e-4)
    topo = flowsched.BigSwitch(3, 10)
    with pytest.raises(ValueError, match=r"unknown incomplete_sharing 'ps'; known: fifo, fair"):
        flowsched.simulate(tr, topo, "asrpt", incomplete_sharing="ps")
    for sched in ("srpt", "pias", "gtcp:asrpt"):  # given, it is not ignored
        with pytest.raises(ValueError, match="applies to the GA transform"):
            flowsched.simulate(tr.drop(columns="data_span_s"), topo, sched, incomplete_sharing="fifo")
    with pytest.raises(ValueError, match="incomplete_sharing.*fluid-model options"):
        flowsched.Simulation(tr, topo, "asrpt", incomplete_sharing="fair", model="packet")
    # the full recomputation runs it under "auto" and "full", bit for bit; "incremental" refuses it
    a = flowsched.Simulation(tr, topo, "asrpt", incomplete_sharing="fair", allocator="full")
    a.run()
    assert a.results().flows["fct_s"].tolist() == fcts(tr, incomplete_sharing="fair")
    with pytest.raises(ValueError, match="'ga:srpt' with incomplete_sharing='fair' has no incremental allocator"):
        flowsched.Simulation(tr, topo, "asrpt", incomplete_sharing="fair", allocator="incremental")


def test_cli_flag(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    two_flows(4e-4).to_csv(trace, index=False)
    out = {}
    for sh in ("fifo", "fair"):
        path = tmp_path / f"{sh}.csv"
        assert cli_main(["simulate", "--trace", str(trace), "--scheduler", "asrpt", "--incomplete-sharing", sh,
                         "--out", str(path), "-q"]) == 0
        out[sh] = pd.read_csv(path)["fct_s"].tolist()
    assert out["fifo"] == pytest.approx([1e6 / C, 2e6 / C])
    assert out["fair"] == pytest.approx([4e-4 + 7.5e5 / C, 4e-4 + 1.5e6 / C])
    capsys.readouterr()
    assert cli_main(["simulate", "--trace", str(trace), "--scheduler", "srpt", "--incomplete-sharing", "fair",
                     "-q"]) != 0
    assert "--incomplete-sharing applies to the GA transform" in capsys.readouterr().err
