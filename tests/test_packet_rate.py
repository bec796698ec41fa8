"""The rate transports on the packet model (docs/packet.md#rcp): ``transport="rcp"`` through
simulate(), the CLI and the refusals; the core's checks are in fabric/core/tests/packet_rate.rs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import simulate
from flowsched.cli import main
from flowsched.sim import TRANSPORTS


def incast(n: int, transport: str) -> flowsched.Results:
    tr = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, n + 1), "dst": 0, "size_bytes": 25_000.0})
    return simulate(tr, flowsched.BigSwitch(33, 10), "ps", model="packet", transport=transport,
                    buffer_bytes=64_000, min_rto_s=10e-3, delay_us=1.0)


def test_rcp_one_flow_reaches_the_link_rate():
    # 1000 packets, 5 us links: first packet alone for one unloaded RTT (2 x 1.2 us + 2 x 32 ns
    # + 4 x 5 us), then paced at C (1.2 us per packet), the last one's two hops: 1,232.464 us
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1000 * 1460.0]})
    r = simulate(tr, flowsched.BigSwitch(2, 10), "ps", model="packet", transport="rcp", delay_us=5.0)
    fct = float(r.flows["fct_s"].iloc[0])
    assert r.packet["transport"] == "rcp" and r.packet["timeouts"] == 0 and r.packet["drops_overflow"] == 0
    assert 1232.464e-6 <= fct <= 1232.464e-6 * 1.01


def test_rcp_incast_stays_near_one_rto_where_tcp_collapses():
    tcp, rcp = incast(32, "tcp"), incast(32, "rcp")
    assert (rcp.flows["fct_s"].notna()).all() and (rcp.flows["size_bytes"] == 25_000.0).all()
    assert rcp.flows["fct_s"].mean() < tcp.flows["fct_s"].mean() / 2
    assert rcp.flows["fct_s"].mean() < 15e-3
    assert rcp.packet["transport"] == "rcp"


def test_rcp_is_refused_with_other_schedulers_and_listed():
    assert "rcp" in TRANSPORTS
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e4]})
    with pytest.raises(Exception, match="ps with rcp"):
        simulate(tr, flowsched.BigSwitch(2, 10), "srpt", model="packet", transport="rcp")


def test_cli_rcp(tmp_path, capsys):
    tr = tmp_path / "t.csv"
    pd.DataFrame({"id": range(4), "arrival_s": 0.0, "src": [1, 2, 3, 4], "dst": 0, "size_bytes": 25_000.0}).to_csv(
        tr, index=False)
    assert main(["simulate", "--trace", str(tr), "--hosts", "5", "--scheduler", "ps", "--model", "packet",
                 "--transport", "rcp", "--delay-us", "1", "-q"]) == 0
    assert "packet model, rcp:" in capsys.readouterr().out


@pytest.mark.parametrize("n", [1, 3])
def test_sdc_long_flows_keep_the_link_busy(n):
    """Munir Fig. 3.7: long-lived flows under SDC keep their bottleneck busy ("at least 95%" of
    the link in ns-2). Here n flows of 125 MB into one host (1 Gbps, 300 us links, no losses)
    send at about 90% of the payload rate (92% of the wire); cutting again on the load factor
    of intervals before a cut took effect (once per window, not once per overload) held them
    at 84.5-86%."""
    tr = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, n + 1), "dst": 0, "size_bytes": 125e6})
    r = simulate(tr, flowsched.BigSwitch(4, 1.0), "sdc", model="packet", transport="sdc", delay_us=300.0)
    assert r.packet["drops_overflow"] == 0 and r.packet["timeouts"] == 0
    util = n * 125e6 * 8 / 1e9 / float(r.flows["fct_s"].max())
    assert 0.88 <= util <= 1460 / 1500, util


def test_sdc_incast_is_lossless_at_16_and_beats_tcp_at_32():
    tr = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, 17), "dst": 0, "size_bytes": 25_000.0})
    r = simulate(tr, flowsched.BigSwitch(33, 10), "sdc", model="packet", buffer_bytes=64_000, min_rto_s=10e-3,
                 delay_us=1.0)
    assert r.packet["transport"] == "sdc"  # the sdc scheduler's default transport
    assert r.packet["drops_overflow"] == 0 and r.packet["timeouts"] == 0
    tr32 = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, 33), "dst": 0, "size_bytes": 25_000.0})
    sdc = simulate(tr32, flowsched.BigSwitch(33, 10), "sdc", model="packet", transport="sdc", buffer_bytes=64_000,
                   min_rto_s=10e-3, delay_us=1.0)
    assert sdc.flows["fct_s"].notna().all()
    assert sdc.flows["fct_s"].mean() < incast(32, "tcp").flows["fct_s"].mean() * 0.7
    with pytest.raises(Exception, match="sdc with sdc"):
        simulate(tr, flowsched.BigSwitch(33, 10), "ps", model="packet", transport="sdc")


def test_racs_incast_is_lossless():
    tr = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, 33), "dst": 0, "size_bytes": 25_000.0})
    r = simulate(tr, flowsched.BigSwitch(33, 10), "racs", model="packet", buffer_bytes=64_000, min_rto_s=10e-3,
                 delay_us=1.0)
    assert r.packet["transport"] == "racs"
    assert r.packet["drops_overflow"] == 0 and r.packet["timeouts"] == 0
    assert r.flows["fct_s"].mean() < incast(32, "tcp").flows["fct_s"].mean() / 10
    with pytest.raises(Exception, match="racs with racs"):
        simulate(tr, flowsched.BigSwitch(33, 10), "ps", model="packet", transport="racs")
