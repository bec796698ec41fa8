"""SCHED_TCP's scheduling at the sender on the packet model (``gtcp:<inner>`` over tcp and
dctcp; docs/packet.md#sched_tcp-at-the-sender), through :func:`flowsched.simulate`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import workloads

SW = flowsched.BigSwitch(2, 10)


def two() -> pd.DataFrame:
    """A 3 MB flow and, 0.5 ms later, a 300 kB one, host 0 to host 1 (one path)."""
    return pd.DataFrame({"arrival_s": [0.0, 500e-6], "src": [0, 0], "dst": [1, 1], "size_bytes": [3e6, 3e5]})


def run(trace, scheduler, transport="tcp", topo=SW, **kw):
    return flowsched.simulate(trace, topo, scheduler, model="packet", transport=transport, delay_us=2,
                              buffer_bytes=10_000_000, **kw)


def counters(r) -> dict:
    return {k: v for k, v in r.packet.items() if k != "transport"}


@pytest.mark.parametrize("transport", ["tcp", "dctcp"])
def test_srpt_at_the_sender_serves_the_short_flow_first_without_touching_the_network(transport):
    ps = run(two(), "ps", transport)
    g = run(two(), "gtcp:srpt", transport)
    f, p = g.flows, ps.flows
    assert f.finish_s[1] < f.finish_s[0]
    assert f.fct_s[1] < p.fct_s[1] / 2  # the short flow's data goes out in every connection's segments
    # non-intrusive: the packets plain tcp sends, at the same times; the last byte at the same time
    assert counters(g) == counters(ps)
    assert f.finish_s.max() == p.finish_s.max()
    np.testing.assert_array_equal(f.bytes_sent, f.size_bytes)


@pytest.mark.parametrize("inner", ["las", "fair"])
def test_las_serves_the_newcomer_and_fair_the_flow_tcp_finishes_first(inner):
    ps = run(two(), "ps")
    g = run(two(), f"gtcp:{inner}")
    if inner == "las":
        assert g.flows.fct_s[1] < ps.flows.fct_s[1]
    else:
        # under tcp the long flow, in full swing, ends first (the newcomer starts from 10
        # packets behind its queue): FAIR serves it, and delays nobody (SCHED_TCP
        # Proposition 2, without losses)
        assert ps.flows.finish_s[0] < ps.flows.finish_s[1]
        assert g.flows.finish_s[0] < ps.flows.finish_s[0]
        assert (g.flows.finish_s <= ps.flows.finish_s).all()


def test_gtcp_ps_is_ps_and_runs_are_deterministic():
    tr = workloads.poisson_all_to_all("websearch", load=0.7, hosts=4, link_gbps=10, n_flows=200, seed=3)
    topo = flowsched.BigSwitch(4, 10)
    kw = dict(buffer_bytes=60_000)  # losses
    ps = flowsched.simulate(tr, topo, "ps", model="packet", transport="tcp", **kw)
    assert ps.packet["retransmissions"] > 0
    same = flowsched.simulate(tr, topo, "gtcp:ps", model="packet", transport="tcp", **kw)
    np.testing.assert_array_equal(same.flows.finish_s, ps.flows.finish_s)
    a = flowsched.simulate(tr, topo, "gtcp:srpt", model="packet", transport="tcp", **kw)
    b = flowsched.simulate(tr, topo, "gtcp:srpt", model="packet", transport="tcp", **kw)
    np.testing.assert_array_equal(a.flows.finish_s, b.flows.finish_s)
    assert counters(a) == counters(ps)
    # every byte of every flow delivered (once: the core credits a byte when its segment is
    # delivered in order, which happens once)
    np.testing.assert_array_equal(a.flows.bytes_sent, np.ceil(a.flows.size_bytes))
    # (no claim on the mean here: with losses and the 1 s minimum RTO a flow's data spread
    # over several connections waits for the slowest of them, docs/packet.md)


def test_default_transport_is_ps_s():
    r = flowsched.simulate(two(), SW, "gtcp:las", model="packet")
    assert r.packet["transport"] == "dctcp"


@pytest.mark.parametrize("scheduler, kwargs, match", [
    ("srpt", {"transport": "tcp"}, r"'srpt' on packets is pFabric's priority queues.*is gtcp:srpt"),
    ("las", {"transport": "tcp"}, r"'las' on packets is pFabric's priority queues, over pfabric or dctcp.*is gtcp:las"),
    ("fair", {"transport": "tcp"}, r"FAIR at the sender, per route, over tcp or dctcp is gtcp:fair"),
    ("fair", {}, r"gtcp:fair"),
    ("gtcp:edf", {"transport": "tcp"}, r"takes ps, fifo, srpt, las, fair, not 'edf'"),
    ("gtcp:srpt", {"transport": "pfabric"}, r"does not run scheduler 'gtcp:srpt' with transport 'pfabric'"),
    ("gtcp:las", {"terminate_missed": True}, r"with terminate_missed"),
    ("gtcp:las", {"admission": "fifo", "k": 1}, r"with destination admission"),
])
def test_refusals(scheduler, kwargs, match):
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(two(), SW, scheduler, model="packet", **kwargs)


def test_the_fluid_model_refuses_gtcp_fair():
    with pytest.raises(ValueError, match="gtcp:fair is SCHED_TCP's FAIR at the sender on the packet model"):
        flowsched.simulate(two(), SW, "gtcp:fair")


def one_path_lomax(n: int, seed: int) -> pd.DataFrame:
    """SCHED_TCP's Table 2 setting, shortened: one 96 Mb/s path, Lomax(3, 1e7) sizes, load 0.9."""
    return workloads.poisson_all_to_all("lomax:3:10000000", 0.9, 2, 0.096, n, seed=seed)


def test_exact_fair_delays_no_flow_where_the_window_estimate_does():
    # SCHED_TCP's Proposition 2: without losses or reordering, T_i^FAIR <= T_i^tcp for every
    # flow; the default projection knows tcp's finish times (a plain tcp run first), the
    # window estimate guesses them from the windows and, on this trace, delays a few flows
    topo = flowsched.BigSwitch(2, 0.096)
    tr = one_path_lomax(120, seed=2)
    kw = dict(model="packet", transport="tcp", buffer_bytes=2**36, min_rto_s=5.0)
    tcp = flowsched.simulate(tr, topo, "ps", **kw)
    assert tcp.packet["retransmissions"] == 0 and tcp.packet["timeouts"] == 0
    exact = flowsched.simulate(tr, topo, "gtcp:fair", **kw)
    assert flowsched.simulate(tr, topo, "gtcp:fair", fair_projection="exact", **kw).flows.equals(exact.flows)
    window = flowsched.simulate(tr, topo, "gtcp:fair", fair_projection="window", **kw)
    for r in (exact, window):
        assert counters(r) == counters(tcp)  # the same network run
        np.testing.assert_array_equal(r.flows.bytes_sent, np.ceil(r.flows.size_bytes))
    assert (exact.flows.finish_s <= tcp.flows.finish_s).all()
    assert (exact.flows.finish_s < tcp.flows.finish_s).mean() > 0.9
    assert (window.flows.finish_s > tcp.flows.finish_s).any()


@pytest.mark.parametrize("scheduler, kwargs, match", [
    ("gtcp:fair", {"fair_projection": "oracle"}, r"unknown fair_projection 'oracle'; known: exact, window"),
    ("gtcp:srpt", {"fair_projection": "window"}, r"fair_projection 'window' is an option of gtcp:fair.*'gtcp:srpt'"),
    ("ps", {"fair_projection": "window"}, r"fair_projection 'window' is an option of gtcp:fair.*'ps'"),
])
def test_fair_projection_refusals(scheduler, kwargs, match):
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(two(), SW, scheduler, model="packet", transport="tcp", **kwargs)


def test_fair_projection_is_not_an_env_option():
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['fair_projection'\] of the token env"):
        flowsched.envs.TokenSchedulingEnv(model="packet", fair_projection="window")
