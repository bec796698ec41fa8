"""Selective acknowledgments on the packet model (``sack``: RFC 2018's scoreboard, RFC 6675's loss
recovery; the exact steps are the core's unit tests in ``fabric/core/src/packet/tcp.rs``)."""

from __future__ import annotations

import pandas as pd
import pytest

import flowsched
from flowsched import simulate

#: a 10-to-1 incast of 300 KB flows into a 150 KB buffer at 1 Gbps: hundreds of drops
INCAST = pd.DataFrame({"arrival_s": [0.0] * 10, "src": range(1, 11), "dst": [0] * 10, "size_bytes": [3e5] * 10})
TOPO = flowsched.BigSwitch(11, 1)
BASE = dict(model="packet", delay_us=250, buffer_bytes=150_000, init_cwnd_packets=1, min_rto_s=0.01)


@pytest.mark.parametrize("transport", ["tcp", "dctcp"])
@pytest.mark.parametrize("dupack_threshold", [3, 0])
def test_sack_resends_exactly_what_was_lost(transport, dupack_threshold):
    """Without SACK a sender goes back to its first hole after a timeout and sends again packets its receiver
    already holds; with SACK it sends only the holes: on a lossy incast every retransmission replaces a dropped
    packet, the receivers get no duplicate, and every flow finishes with its bytes. With fast retransmit the
    scoreboard also lets a window with several losses recover without the timer."""
    kw = dict(BASE, transport=transport, dupack_threshold=dupack_threshold)
    off = simulate(INCAST, TOPO, "ps", **kw)
    on = simulate(INCAST, TOPO, "ps", sack=True, **kw)
    for r in (off, on):
        assert r.flows["fct_s"].notna().all()
        assert (r.flows["bytes_sent"] == INCAST["size_bytes"]).all()
    assert off.packet["retransmissions"] >= off.packet["drops_overflow"] > 0
    if (transport, dupack_threshold) != ("dctcp", 0):
        assert off.packet["duplicates"] > 0 and off.packet["retransmissions"] > off.packet["drops_overflow"]
    # (dctcp's windows, held after its cuts, lose only the ends of their windows here: after a timeout the
    # first hole's resend is all a receiver lacks, with SACK or without)
    assert on.packet["duplicates"] == 0
    assert on.packet["retransmissions"] == on.packet["drops_overflow"] > 0
    if dupack_threshold:
        assert on.packet["timeouts"] < off.packet["timeouts"]
        assert on.flows["fct_s"].mean() < off.flows["fct_s"].mean()
    # deterministic
    again = simulate(INCAST, TOPO, "ps", sack=True, **kw)
    assert again.flows["fct_s"].equals(on.flows["fct_s"]) and again.packet == on.packet


def test_sack_off_is_the_default_and_changes_nothing_where_nothing_is_lost():
    tr = pd.DataFrame({"arrival_s": [0.0, 1e-4], "src": [1, 2], "dst": [0, 0], "size_bytes": [2e5, 5e4]})
    kw = dict(model="packet", transport="dctcp", delay_us=1)
    plain, off, on = (simulate(tr, flowsched.BigSwitch(3, 10), "ps", **kw, **o)
                      for o in ({}, {"sack": False}, {"sack": True}))
    assert plain.packet["drops_overflow"] == 0
    assert off.flows["fct_s"].equals(plain.flows["fct_s"]) and on.flows["fct_s"].equals(plain.flows["fct_s"])


def test_sack_refusals():
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e4]})
    topo = flowsched.BigSwitch(2, 10)
    with pytest.raises(ValueError, match="sack must be True or False"):
        simulate(tr, topo, "ps", model="packet", sack=1)
    with pytest.raises(ValueError, match="sack is read by the tcp, dctcp and pfabric senders"):
        simulate(tr, topo, "ps", model="packet", transport="rcp", sack=True)
    with pytest.raises(ValueError, match="prr is the fast recovery of the tcp and dctcp senders with sack"):
        simulate(tr, topo, "ps", model="packet", transport="tcp", prr=True)
    with pytest.raises(ValueError, match="transport tcp or dctcp, not pfabric"):
        simulate(tr, topo, "srpt", model="packet", transport="pfabric", sack=True, prr=True)


def test_prr_changes_only_how_fast_recovery_paces_its_packets():
    """RFC 6937 (its exact steps: the core's unit test) over SACK: on the lossy incast it changes when packets
    go in recovery, not what is sent again: still only the lost packets, no duplicates."""
    kw = dict(BASE, transport="tcp", sack=True)
    plain, prr = simulate(INCAST, TOPO, "ps", **kw), simulate(INCAST, TOPO, "ps", prr=True, **kw)
    assert prr.packet["fast_retransmits"] > 0 and prr.packet["duplicates"] == 0
    assert prr.packet["retransmissions"] == prr.packet["drops_overflow"]
    assert not prr.flows["fct_s"].equals(plain.flows["fct_s"])


def test_sack_on_the_command_line(tmp_path):
    from flowsched.cli import main

    trace = tmp_path / "t.csv"
    INCAST.to_csv(trace, index=False)
    outs = {}
    for flag in ([], ["--sack"]):
        out = tmp_path / f"o{len(flag)}.csv"
        assert main(["simulate", "--trace", str(trace), "--hosts", "11", "--link-gbps", "1",
                     "--scheduler", "ps", "--model", "packet", "--transport", "tcp", "--delay-us", "250",
                     "--buffer-bytes", "150000", "--init-cwnd-packets", "1", "--min-rto-s", "0.01",
                     "--out", str(out), *flag]) == 0
        outs[len(flag)] = pd.read_csv(out)
    api = simulate(INCAST, TOPO, "ps", sack=True, transport="tcp", **BASE)
    assert outs[1]["fct_s"].to_numpy() == pytest.approx(api.flows["fct_s"].to_numpy(), rel=1e-12)
    assert not outs[0]["fct_s"].equals(outs[1]["fct_s"])
