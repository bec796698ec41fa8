"""The packet-level model through the Python API: the same Results as the fluid model,
timing that a hand computation gives, the packet counters and queue samples, refusals,
determinism, stepping, and the CLI."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import _fabric, workloads
from flowsched.cli import main
from flowsched.sim import FLOW_COLUMNS, PACKET_OPTIONS, Simulation, simulate

T_PKT = 1.2e-6  # 1500 B at 10 Gbps


def one(size: float, **kw) -> pd.DataFrame:
    return pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [size], **kw})


def mixed(n: int = 120, hosts: int = 8, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    return pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 2e-3, n)), "src": src, "dst": dst,
                         "size_bytes": rng.choice([2_000.0, 30_000.0, 400_000.0, 2e6], n)})


@pytest.mark.parametrize("scheduler, transport", [("ps", "tcp"), ("ps", "dctcp"), ("srpt", "pfabric")])
def test_one_flow_on_an_idle_path_takes_exactly_serialization_and_propagation(scheduler, transport):
    # 10 packets (the initial window): the last leaves the NIC at 10 T, the switch at 11 T,
    # and arrives 2 x 0.2 us later. FCT counts that once (no path delay added on top).
    r = simulate(one(14_600.0), flowsched.BigSwitch(2, 10), scheduler, model="packet", transport=transport,
                 delay_us=0.2)
    f = r.flows.iloc[0]
    assert f["fct_s"] == pytest.approx(11 * T_PKT + 0.4e-6, abs=1e-15)
    assert f["finish_s"] - f["arrival_s"] == pytest.approx(f["fct_s"], abs=1e-15)
    # the fluid model's ideal: payload at the bottleneck rate plus propagation
    fluid = simulate(one(14_600.0), flowsched.BigSwitch(2, 10), "srpt", delay_us=0.2)
    assert f["ideal_fct_s"] == fluid.flows["ideal_fct_s"].iloc[0]
    assert f["path_delay_s"] == pytest.approx(0.4e-6)
    assert f["slowdown"] == pytest.approx(f["fct_s"] / f["ideal_fct_s"])
    assert r.model == "packet" and r.packet["transport"] == transport
    assert r.packet["data_packets"] == 10 and r.packet["retransmissions"] == 0


def test_results_have_the_fluid_columns_and_summary():
    tr = mixed()
    for topo in (flowsched.BigSwitch(8, 10), flowsched.LeafSpine(2, 4, 2, 10, 40)):
        r = simulate(tr, topo, "pias", model="packet", delay_us=1.0)
        assert list(r.flows.columns) == list(FLOW_COLUMNS)
        assert {c: str(t) for c, t in r.flows.dtypes.items()} == FLOW_COLUMNS
        assert r.flows["fct_s"].notna().all() and not r.flows["terminated"].any()
        assert (r.flows["bytes_sent"] == tr["size_bytes"]).all()
        assert (r.flows["fct_s"] >= r.flows["ideal_fct_s"] * 0.97).all()  # headers make packets slower than payload
        s = r.summary()
        assert s.to_dict()
        assert list(r.ports["link"]) == list(r.links["link"])
        assert (r.links["bytes"] > 0).any()
        assert r.queue_samples is None
        assert r.packet["transport"] == "dctcp"


def test_packet_counters_and_queue_samples():
    tr = pd.DataFrame({"arrival_s": [0.0] * 6, "src": [1, 2, 3, 4, 5, 6], "dst": [0] * 6, "size_bytes": [3e5] * 6})
    r = simulate(tr, flowsched.BigSwitch(7, 10), "ps", model="packet", transport="tcp", buffer_bytes=30_000,
                 min_rto_s=1e-3, delay_us=1.0, queue_sample_us=5, sample_links=["down0"])
    p = r.packet
    assert p["drops_overflow"] > 0 and p["retransmissions"] > 0
    # every data packet sent arrived, was dropped (and counted), or was still in flight at the end
    in_flight = p["data_packets"] - p["data_arrived"] - p["data_dropped"]
    assert 0 <= in_flight < 60
    # the per-flow counters add up to the run's, and each flow of the incast has its share
    pf = r.packet_flows
    for col in ("retransmissions", "fast_retransmits", "timeouts"):
        assert pf[col].sum() == p[col], col
    assert (pf["retransmissions"] > 0).all() and (pf["retransmissions"] >= pf["fast_retransmits"]).all()
    assert (pf["duplicates"] <= pf["retransmissions"]).all()  # a duplicate is a copy sent again
    assert r.ports.set_index("link").loc["down0", "drops_overflow"] == p["drops_overflow"] - r.ports[
        r.ports["link"] != "down0"]["drops_overflow"].sum()
    q = r.queue_samples
    assert set(q["link"]) == {"down0"}
    assert np.allclose(np.diff(q["time_s"]), 5e-6)
    assert q["queue_bytes"].max() <= 30_000
    assert q["queue_bytes"].max() == r.ports.set_index("link").loc["down0", "peak_queue_bytes"]


@pytest.mark.parametrize("transport", ["tcp", "dctcp"])
def test_counting_acked_segments_speeds_slow_start_under_delayed_acks(transport):
    """With an ACK per 2 segments, RFC 5681's slow start adds one segment per ACK (x1.5 per round
    trip) and Linux's, counting the acknowledged segments, two (x2): a 1 MB flow alone on a path
    with long delays needs fewer round trips. With an ACK per segment the two are the same."""
    tr = one(1e6)
    kw = dict(model="packet", transport=transport, delay_us=50.0, init_cwnd_packets=2, min_rto_s=1.0)
    fct = {}
    for every in (1, 2):
        for count in (False, True):
            r = simulate(tr, flowsched.BigSwitch(2, 10), "ps", ack_every_segments=every,
                         count_acked_segments=count, **kw)
            assert r.packet["retransmissions"] == 0
            fct[every, count] = float(r.flows["fct_s"].iloc[0])
    assert fct[1, False] == fct[1, True]
    rtt = 4 * 50e-6  # two links each way
    assert fct[2, False] - fct[2, True] > rtt  # at least one round trip saved
    assert fct[2, True] == pytest.approx(fct[1, True], rel=0.2)


def test_fixed_rto_waits_the_minimum_after_every_timeout():
    """An incast into a 30 KB port: some flows time out more than once. RFC 6298 doubles the
    1 ms RTO on a repeated timeout; with fixed_rto (pFabric's minimal TCP) every timeout waits
    1 ms. The run is otherwise the same, and the last flow to finish waits one doubled RTO of
    2 ms less long: it ends exactly 1 ms sooner."""
    tr = pd.DataFrame({"arrival_s": [0.0] * 8, "src": list(range(1, 9)), "dst": [0] * 8, "size_bytes": [3e5] * 8})
    runs = [simulate(tr, flowsched.BigSwitch(9, 10), "ps", model="packet", transport="tcp", buffer_bytes=30_000,
                     min_rto_s=1e-3, delay_us=1.0, fixed_rto=fixed) for fixed in (False, True)]
    assert runs[0].packet["timeouts"] == runs[1].packet["timeouts"] > 0
    assert runs[0].packet_flows["timeouts"].max() >= 2
    assert runs[0].flows["fct_s"].max() - runs[1].flows["fct_s"].max() == pytest.approx(1e-3, rel=1e-9)


def test_dctcp_alpha_init_zero_cuts_less_at_first_as_ns2():
    """A 4-to-1 incast of 300 KB flows under dctcp, K = 15 KB. DCTCP's alpha starts at 1 by
    default (Linux, ns-3): the first marked window halves cwnd. ns-2's DCTCP starts it at 0, so
    the first marks cut by 1/32 and the queue stays longer: more marks, a longer mean queue
    (about 4 times here). The default is alpha 1 exactly."""
    tr = pd.DataFrame({"arrival_s": [0.0] * 4, "src": [1, 2, 3, 4], "dst": [0] * 4, "size_bytes": [3e5] * 4})
    run = lambda **kw: simulate(tr, flowsched.BigSwitch(5, 10), "ps", model="packet", transport="dctcp",  # noqa: E731
                                ecn_threshold_bytes=15_000, init_cwnd_packets=20, delay_us=2.0, **kw)
    default, one_, zero = run(), run(dctcp_alpha_init=1.0), run(dctcp_alpha_init=0.0)
    assert default.flows["finish_s"].tolist() == one_.flows["finish_s"].tolist()
    assert zero.packet["ecn_marks"] > 1.5 * default.packet["ecn_marks"] > 0
    queue = lambda r: r.ports["mean_queue_bytes"].max()  # noqa: E731
    assert queue(zero) > 3 * queue(default)


def test_dctcp_hold_in_cwr_and_no_floor_stall_windows_under_a_packet_as_ns3():
    """A 40-to-1 incast of 200 KB flows under dctcp, K = 15 KB, a buffer that never fills.
    Without growth in the window after a cut (Linux's CWR state, ns-3's CA_CWR), the queue is
    shorter. ns-3's TcpDctcp also has no floor under its cut: the windows fall below one packet,
    and a sender with nothing in flight and less than a packet of window waits for its 1 ms
    timer, so there are timeouts without a single drop or retransmission. The defaults are the
    hold and a floor of 2 packets, as Linux."""
    n = 40
    tr = pd.DataFrame({"arrival_s": [0.0] * n, "src": range(1, n + 1), "dst": [0] * n, "size_bytes": [2e5] * n})
    run = lambda **kw: simulate(tr, flowsched.BigSwitch(n + 1, 10), "ps", model="packet", transport="dctcp",  # noqa: E731
                                buffer_bytes=10_000_000, ecn_threshold_bytes=15_000, init_cwnd_packets=10,
                                delay_us=2.0, min_rto_s=1e-3, **kw)
    hold = run()
    explicit = run(dctcp_hold_in_cwr=True, dctcp_min_cwnd_packets=2.0)
    assert hold.flows["finish_s"].tolist() == explicit.flows["finish_s"].tolist()
    grow, ns3 = run(dctcp_hold_in_cwr=False), run(dctcp_min_cwnd_packets=0.0)
    queue = lambda r: r.ports["mean_queue_bytes"].max()  # noqa: E731
    assert queue(hold) < 0.97 * queue(grow)
    for r in (grow, hold):
        assert r.packet["timeouts"] == r.packet["drops_overflow"] == 0
    assert ns3.packet["drops_overflow"] == ns3.packet["retransmissions"] == 0
    assert ns3.packet["timeouts"] > n  # each flow waits for its timer, most more than once
    assert ns3.flows["fct_s"].mean() > 1.1 * hold.flows["fct_s"].mean()


def test_dctcp_ignore_dupack_ece_only_matters_with_duplicate_acks():
    """ns-3 reacts to an ECN echo only on an ACK of new data. With no loss and no reordering (an
    incast on a big switch) there is no duplicate ACK and the option changes nothing, bit for bit;
    with packets sprayed over a leaf-spine's 4 spines the reordering's duplicate ACKs carry echoes
    that the default lets cut the window: ignoring them leaves longer queues and more marks."""
    tr = pd.DataFrame({"arrival_s": [0.0] * 4, "src": [1, 2, 3, 4], "dst": [0] * 4, "size_bytes": [3e5] * 4})
    runs = [simulate(tr, flowsched.BigSwitch(5, 10), "ps", model="packet", transport="dctcp",
                     ecn_threshold_bytes=15_000, init_cwnd_packets=20, delay_us=2.0, dctcp_ignore_dupack_ece=x)
            for x in (False, True)]
    assert runs[0].packet["drops_overflow"] == 0
    assert runs[0].flows["finish_s"].tolist() == runs[1].flows["finish_s"].tolist()
    ref = Path(__file__).resolve().parents[1] / "benchmarks" / "references" / "ns3_spray" / "ws32_n1500_seed1.csv.xz"
    sprayed = pd.read_csv(ref).head(300)
    topo = flowsched.LeafSpine(tors=4, hosts_per_tor=8, spines=4, host_gbps=10, core_gbps=10)
    a, b = [simulate(sprayed, topo, "ps", model="packet", transport="dctcp", load_balancing="packet",
                     dupack_threshold=0, delay_us=0.2, ecn_threshold_packets=65, dctcp_ignore_dupack_ece=x)
            for x in (False, True)]
    assert b.ports["mean_queue_bytes"].mean() > a.ports["mean_queue_bytes"].mean()
    assert b.packet["ecn_marks"] > a.packet["ecn_marks"]


def test_buffer_packets_counts_acks_and_data_alike():
    """A 4-to-1 incast of 300 KB tcp flows into a 1 MB buffer: no drop when the buffer counts
    bytes only; at most 20 packets waiting, the destination's port drops (a drop-tail queue of
    20 packets). Each flow's ACKs share its source's port with nothing else, so the limit bites
    only where the data meet."""
    tr = pd.DataFrame({"arrival_s": [0.0] * 4, "src": [1, 2, 3, 4], "dst": [0] * 4, "size_bytes": [3e5] * 4})
    run = lambda **kw: simulate(tr, flowsched.BigSwitch(5, 10), "ps", model="packet", transport="tcp",  # noqa: E731
                                buffer_bytes=1_000_000, init_cwnd_packets=10, delay_us=2.0, **kw)
    plain, twenty = run(), run(buffer_packets=20)
    assert plain.packet["drops_overflow"] == 0
    assert twenty.packet["drops_overflow"] > 0
    assert twenty.ports.set_index("link").loc["down0", "drops_overflow"] == twenty.packet["drops_overflow"]
    assert run(buffer_packets=10_000).flows["finish_s"].tolist() == plain.flows["finish_s"].tolist()


def test_dctcp_marks_and_pfabric_evicts():
    tr = mixed(200)
    d = simulate(tr, flowsched.BigSwitch(8, 10), "ps", model="packet", ecn_threshold_bytes=15_000)
    assert d.packet["transport"] == "dctcp" and d.packet["ecn_marks"] > 0
    p = simulate(tr, flowsched.BigSwitch(8, 10), "srpt", model="packet", buffer_bytes=12_000)
    assert p.packet["drops_evicted"] > 0 and p.flows["fct_s"].notna().all()
    # the priority schedulers' queues under dctcp: the lowest-priority packet waiting takes the marks
    kw = dict(model="packet", transport="dctcp", ecn_threshold_bytes=15_000)
    w = simulate(tr, flowsched.BigSwitch(8, 10), "srpt", ecn_marking="worst", **kw)
    e = simulate(tr, flowsched.BigSwitch(8, 10), "srpt", **kw)
    assert w.packet["ecn_marks"] > 0 and w.flows["fct_s"].notna().all()
    assert w.ports["ecn_marks"].sum() == w.packet["ecn_marks"] != e.packet["ecn_marks"]


def test_ecn_threshold_in_packets_counts_the_acks_waiting():
    """K in packets (ns-2's and ns-3's RED in packet mode): the ACKs waiting in a port count as packets, so
    where flows both ways share ports a queue reaches 65 packets sooner than 65 x 1,500 B and marks more data
    packets; with no ACK sharing a data queue the two are the same (a one-way incast of whole 1,500 B packets)."""
    tr = flowsched.workloads.poisson_all_to_all("websearch", 0.8, 16, 10.0, 600, seed=2)
    topo = flowsched.BigSwitch(16, 10)
    by_bytes = simulate(tr, topo, "ps", model="packet", transport="dctcp")
    by_packets = simulate(tr, topo, "ps", model="packet", transport="dctcp", ecn_threshold_packets=65)
    assert by_packets.packet["ecn_marks"] > by_bytes.packet["ecn_marks"] > 0
    incast = pd.DataFrame({"arrival_s": 0.0, "src": range(1, 9), "dst": 0, "size_bytes": 1370 * 1460})
    kw = dict(model="packet", transport="dctcp", ecn_threshold_bytes=20 * 1500)
    a = simulate(incast, flowsched.BigSwitch(9, 10), "ps", **kw)
    b = simulate(incast, flowsched.BigSwitch(9, 10), "ps", ecn_threshold_packets=20, **kw)
    assert a.flows.equals(b.flows) and a.packet["ecn_marks"] == b.packet["ecn_marks"] > 0


def test_sojourn_marking_is_enqueue_marking_in_fifos_and_not_in_priority_queues():
    """ecn_marking="sojourn" (the aSCC paper's DCTCP marking: on departure, by the bytes the
    port sent while the packet waited): in a first-in-first-out queue those are the bytes
    waiting when it arrived, so ps over dctcp gives the same bits as the default marking on
    arrival; pFabric's priority queues under DCTCP mark other packets (the ones that wait
    behind higher priorities, not the ones that pass a long queue)."""
    tr = flowsched.workloads.poisson_all_to_all("websearch", 0.8, 16, 10.0, 600, seed=2)
    topo = flowsched.BigSwitch(16, 10)
    runs = {(s, m): simulate(tr, topo, s, model="packet", transport="dctcp", ecn_marking=m)
            for s in ("ps", "srpt") for m in ("enqueue", "sojourn")}
    assert runs["ps", "enqueue"].packet["ecn_marks"] > 0
    assert runs["ps", "sojourn"].flows.equals(runs["ps", "enqueue"].flows)
    assert runs["ps", "sojourn"].packet["ecn_marks"] == runs["ps", "enqueue"].packet["ecn_marks"]
    assert not runs["srpt", "sojourn"].flows["fct_s"].equals(runs["srpt", "enqueue"].flows["fct_s"])
    with pytest.raises(ValueError, match=r"ecn_marking 'sojourn' is an option of the queues that mark ECN \(transport "
                                         r"dctcp\), not of 'srpt' over pfabric"):
        simulate(tr, topo, "srpt", model="packet", ecn_marking="sojourn")
    with pytest.raises(ValueError, match=r"unknown ecn_marking 'dequeue'; known: enqueue, sojourn"):
        simulate(tr, topo, "ps", model="packet", ecn_marking="dequeue")


def test_link_jitter_is_seeded_off_by_default_and_checked():
    """link_jitter_ns: 0 (the default) is the model without jitter, bit for bit; a jitter gives
    the same results for the same seed and other ones for another seed or none; a bad value is
    refused naming the option; the CLI takes it."""
    tr = flowsched.workloads.poisson_all_to_all("websearch", 0.8, 16, 10.0, 300, seed=4)
    topo = flowsched.BigSwitch(16, 10)

    def run(**kw):
        return simulate(tr, topo, "ps", model="packet", transport="tcp", progress=False, **kw)

    base = run()
    pd.testing.assert_frame_equal(run(link_jitter_ns=0.0).flows, base.flows)
    a, b = run(link_jitter_ns=100.0), run(link_jitter_ns=100.0)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert a.packet == b.packet
    assert not a.flows["fct_s"].equals(base.flows["fct_s"])
    assert not run(link_jitter_ns=100.0, seed=1).flows["fct_s"].equals(a.flows["fct_s"])
    # (a jitter only delays packets, but the drops move, so a flow can end earlier than without
    # it; every flow still takes at least its ideal time)
    assert (a.flows["fct_s"] >= a.flows["ideal_fct_s"] * (1 - 1e-9)).all()
    for bad in (-1.0, float("nan"), 2e6, True):
        with pytest.raises(ValueError, match="link_jitter_ns must be"):
            run(link_jitter_ns=bad)


def test_tx_complete_events_option():
    """tx_complete_events: a flow alone gives the same times (only same-instant arrivals are
    ordered otherwise, here every packet's arrival at the switch ties with the end of the one
    before), with more events; the flag must be a bool; the CLI takes it."""
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [300_000.0]})
    topo = flowsched.BigSwitch(2, 10)
    a = simulate(tr, topo, "ps", model="packet", transport="tcp", progress=False)
    b = simulate(tr, topo, "ps", model="packet", transport="tcp", tx_complete_events=True, progress=False)
    assert a.flows["fct_s"].equals(b.flows["fct_s"])
    assert b.packet["events"] > a.packet["events"]
    with pytest.raises(ValueError, match="tx_complete_events must be True or False"):
        simulate(tr, topo, "ps", model="packet", tx_complete_events=1, progress=False)


def test_same_seed_same_results_and_stepping_changes_nothing():
    tr = mixed(150, seed=3)
    a = simulate(tr, flowsched.LeafSpine(2, 4, 2, 10, 40), "srpt", model="packet", delay_us=0.5)
    b = simulate(tr, flowsched.LeafSpine(2, 4, 2, 10, 40), "srpt", model="packet", delay_us=0.5)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    assert a.packet == b.packet
    sim = Simulation(tr, flowsched.LeafSpine(2, 4, 2, 10, 40), "srpt", model="packet", delay_us=0.5)
    for t in np.linspace(1e-4, 3e-3, 7):
        sim.step(t)
        assert sim.now == pytest.approx(t) or sim.done
    sim.run()
    pd.testing.assert_frame_equal(sim.results().flows, a.flows)


def test_pias_thresholds_change_during_a_packet_run():
    sim = Simulation(mixed(), flowsched.BigSwitch(8, 10), "pias", model="packet", pias_thresholds_bytes=[1e4, 1e5])
    sim.step(2e-4)
    sim.set_pias_thresholds([5e3, 5e4])
    with pytest.raises(ValueError, match="3 queues"):
        sim.set_pias_thresholds([5e3])
    sim.run()
    changed = sim.results().flows
    assert changed["fct_s"].notna().all()

    def run(switch_to: list[float] | None) -> pd.DataFrame:
        s = Simulation(mixed(), flowsched.BigSwitch(8, 10), "pias", model="packet", pias_thresholds_bytes=[1e4, 1e5])
        s.step(2e-4)
        if switch_to is not None:
            s.set_pias_thresholds(switch_to)
        s.run()
        return s.results().flows

    same = run(None)
    # Setting the thresholds it already has changes nothing, bit for bit; new ones take effect
    # from then on: flows that ended before the change keep their times, later ones move.
    assert run([1e4, 1e5])["fct_s"].equals(same["fct_s"])
    before = same["finish_s"] <= 2e-4  # step(2e-4): the change happens at 2e-4 s of the trace's clock
    assert before.sum() >= 3
    assert changed.loc[before, "fct_s"].equals(same.loc[before, "fct_s"])
    assert not changed["fct_s"].equals(same["fct_s"])


def test_terminate_missed_in_the_packet_model():
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1e7, 1e4],
                       "deadline_s": [1e-3, 1e-3]})
    r = simulate(tr, flowsched.BigSwitch(2, 10), "edf", model="packet", terminate_missed=True)
    assert r.flows["terminated"].tolist() == [True, False]
    assert r.flows["deadline_met"].tolist() == [False, True]
    assert r.duration_s == pytest.approx(1e-3)


@pytest.mark.parametrize("kwargs, match", [
    ({"scheduler": "srpt", "transport": "tcp"},
     r"does not run scheduler 'srpt' with transport 'tcp' .*is gtcp:srpt\); supported: ps"),
    ({"scheduler": "wps"}, "does not run scheduler 'wps'"),
    ({"scheduler": "ps", "transport": "quic"}, "unknown transport 'quic'"),
    ({"scheduler": "ps", "request_delay_us": 5.0}, "request_delay_us is a delay of destination admission"),
    ({"scheduler": "racs", "racs": {"w_min": 1.0}}, "racs: not supported by the packet model"),
    ({"scheduler": "ps", "buffer_bytes": 100}, "buffer_bytes must hold at least one packet"),
    ({"scheduler": "ps", "min_rto_s": 0.0}, "min_rto_s"),
    ({"scheduler": "ps", "sample_links": ["down0"]}, "sample_links needs queue_sample_us"),
    ({"scheduler": "ps", "queue_sample_us": 1, "sample_links": ["nowhere"]}, "unknown link 'nowhere'"),
    ({"scheduler": "ps", "queue_reserve_bytes": 1500}, "queue_reserve_bytes is read only by the pias scheduler"),
    ({"scheduler": "pias", "pias_thresholds_bytes": [1e4], "buffer_bytes": 3000, "queue_reserve_bytes": 1501},
     "queue_reserve_bytes x 2 queues = 3002 B exceeds buffer_bytes"),
    ({"scheduler": "pias", "queue_reserve_bytes": -1}, "queue_reserve_bytes must be an integer >= 0"),
    ({"scheduler": "srpt", "count_acked_segments": True}, "count_acked_segments is read by the tcp and dctcp"),
    ({"scheduler": "ps", "count_acked_segments": 1}, "count_acked_segments must be True or False"),
    ({"scheduler": "srpt", "fixed_rto": True}, "fixed_rto is read by the tcp and dctcp"),
    ({"scheduler": "ps", "pias_port_ecn": True}, "pias_port_ecn is read only by the pias scheduler's priority queues"),
    ({"scheduler": "pias", "transport": "tcp", "pias_port_ecn": True},
     "pias_port_ecn .* over dctcp, not 'pias' over tcp"),
    ({"scheduler": "pias", "pias_port_ecn": "yes"}, "pias_port_ecn must be True or False"),
    ({"scheduler": "ps", "dctcp_alpha_init": 1.5}, r"dctcp_alpha_init must be in \[0, 1\], got 1.5"),
    ({"scheduler": "ps", "dctcp_alpha_init": float("nan")}, "dctcp_alpha_init must be a finite number"),
    ({"scheduler": "ps", "ecn_marking": "worst"}, "ecn_marking 'worst' marks the pFabric queues of the priority"),
    ({"scheduler": "pias", "ecn_marking": "worst"}, "not the queues of 'pias'"),
    ({"scheduler": "ps", "transport": "tcp", "dctcp_alpha_init": 0.0},
     "dctcp_alpha_init is read by the dctcp senders .*, not by tcp"),
    ({"scheduler": "ps", "dctcp_min_cwnd_packets": -1}, "dctcp_min_cwnd_packets must be >= 0, got -1"),
    ({"scheduler": "ps", "dctcp_min_cwnd_packets": float("inf")}, "dctcp_min_cwnd_packets must be a finite number"),
    ({"scheduler": "ps", "transport": "tcp", "dctcp_min_cwnd_packets": 0.0},
     "dctcp_min_cwnd_packets is read by the dctcp senders .*, not by tcp"),
    ({"scheduler": "ps", "transport": "tcp", "dctcp_hold_in_cwr": False},
     "dctcp_hold_in_cwr is read by the dctcp senders .*, not by tcp"),
    ({"scheduler": "ps", "dctcp_hold_in_cwr": 1}, "dctcp_hold_in_cwr must be True or False"),
    ({"scheduler": "ps", "transport": "tcp", "dctcp_ignore_dupack_ece": True},
     "dctcp_ignore_dupack_ece is read by the dctcp senders .*, not by tcp"),
    ({"scheduler": "ps", "buffer_packets": 0}, "buffer_packets must be an integer >= 1"),
    ({"scheduler": "pias", "buffer_packets": 240}, "buffer_packets counts the packets of one FIFO queue per port"),
    ({"scheduler": "srpt", "transport": "pfabric", "buffer_packets": 240}, "this run: pfabric with srpt"),
    ({"scheduler": "ps", "ecn_threshold_packets": 0}, "ecn_threshold_packets must be an integer >= 1"),
    ({"scheduler": "ps", "transport": "tcp", "ecn_threshold_packets": 65},
     r"ecn_threshold_packets counts the packets of one FIFO queue .* \(this run: tcp with ps"),
    ({"scheduler": "srpt", "transport": "dctcp", "ecn_threshold_packets": 65}, "dctcp with ps or gtcp"),
    ({"scheduler": "ps", "ecn_threshold_packets": 65, "ecn_marking": "sojourn"}, 'ecn_marking "sojourn"'),
])
def test_refusals(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate(one(1e4), flowsched.BigSwitch(2, 10), model="packet", **kwargs)


def test_native_packet_options_are_one_dict_named_once():
    """The native simulator and the env configs take the packet options as one ``packet=``
    dict with the core's names (one list in the bindings); ``native_packet_options`` makes
    it from :data:`PACKET_OPTIONS`, and a name the bindings do not know is refused naming
    the known ones."""
    from flowsched.sim import native_packet_options
    topo = flowsched.BigSwitch(2, 10)
    native = native_packet_options(topo, "tcp", False, min_rto_s=0.01, limited_transmit=True)
    assert native["min_rto_s"] == 0.01 and native["limited_transmit"] is True and native["transport"] == "tcp"
    res = simulate(one(1e5), topo, "ps", model="packet", transport="tcp", min_rto_s=0.01)
    assert res.packet["transport"] == "tcp"
    cfg = topo.native_config()
    arrays = (np.zeros(1), np.array([0]), np.array([1]), np.full(1, 1e5), np.full(1, np.nan), np.ones(1),
              np.zeros(1), np.ones(1, bool))
    with pytest.raises(ValueError, match="unknown packet option 'mss_byte' of PacketSimulator; known: transport, "
                                         "mss_bytes, header_bytes"):
        _fabric.PacketSimulator(*arrays, **cfg, packet={"mss_byte": 1000})
    with pytest.raises(ValueError, match="packet option mss_bytes: "):
        _fabric.PacketSimulator(*arrays, **cfg, packet={"mss_bytes": "big"})
    with pytest.raises(ValueError, match="packet option 'queue_sample_s' is not one of the token and switch envs'"):
        _fabric.SwitchConfig(**cfg, max_flows=4, packet={"queue_sample_s": 1e-5})


def test_refusals_of_trace_columns_and_options():
    with pytest.raises(ValueError, match="'weight'"):
        simulate(one(1e4, weight=[2.0]), flowsched.BigSwitch(2, 10), "ps", model="packet")
    with pytest.raises(ValueError, match="column 'data_span_s'.*SCHED_TCP's scheduling at the sender"):
        simulate(one(1e4, data_span_s=[1e-3]), flowsched.BigSwitch(2, 10), "gtcp:srpt", model="packet")
    with pytest.raises(ValueError, match="size_known"):
        simulate(one(1e4, size_known=[False]), flowsched.BigSwitch(2, 10), "srpt", model="packet")
    with pytest.raises(TypeError, match="unknown packet option"):
        simulate(one(1e4), flowsched.BigSwitch(2, 10), "ps", model="packet", buffer=1)
    with pytest.raises(ValueError, match="options of the packet model; pass model='packet'"):
        simulate(one(1e4), flowsched.BigSwitch(2, 10), "ps", transport="tcp")
    with pytest.raises(ValueError, match="unknown model"):
        simulate(one(1e4), flowsched.BigSwitch(2, 10), "ps", model="packets")
    sim = Simulation(one(1e4), flowsched.BigSwitch(2, 10), "ps", model="packet")
    with pytest.raises(ValueError, match="no per-flow rate"):
        sim.rates()
    with pytest.raises(RuntimeError, match="event budget"):
        simulate(one(1e6), flowsched.BigSwitch(2, 10), "ps", model="packet", max_events=10)
    assert set(PACKET_OPTIONS) >= {"mss_bytes", "buffer_bytes", "min_rto_s", "queue_sample_us"}
    assert "PacketSimulator" in dir(_fabric)


def test_pias_queue_reserve_protects_the_first_queue_in_an_incast():
    """pFabric section 6.1's buffer split (a reserve per priority queue, the rest shared): long
    flows demoted to queue 1 fill the receiver's port; with 20 of its 60 packets reserved per
    queue the short flows (queue 0) still find room. A reserve of 0 is the shared buffer."""
    long = pd.DataFrame({"arrival_s": 0.0, "src": range(1, 9), "dst": 0, "size_bytes": 2e6})
    short = pd.DataFrame({"arrival_s": 20e-6 + 25e-6 * np.arange(40), "src": 1 + np.arange(40) % 8, "dst": 0,
                          "size_bytes": 4380.0})
    tr = pd.concat([long, short], ignore_index=True)
    kw = dict(model="packet", transport="tcp", pias_thresholds_bytes=[1e4], buffer_bytes=60 * 1500, min_rto_s=1e-3,
              delay_us=0.2)
    shared = simulate(tr, flowsched.BigSwitch(9, 10), "pias", **kw)
    zero = simulate(tr, flowsched.BigSwitch(9, 10), "pias", queue_reserve_bytes=0, **kw)
    reserved = simulate(tr, flowsched.BigSwitch(9, 10), "pias", queue_reserve_bytes=20 * 1500, **kw)
    pd.testing.assert_frame_equal(shared.flows, zero.flows)
    a, b = shared.flows["fct_s"].iloc[8:].mean(), reserved.flows["fct_s"].iloc[8:].mean()
    assert shared.packet["drops_overflow"] > 0 and b < 0.5 * a, (a, b)
    assert reserved.flows["fct_s"].notna().all()


def test_pias_per_port_ecn_reaches_the_ports():
    """``pias_port_ecn`` reaches the ports (what it marks is the unit test
    ``pias_marks_per_queue_or_per_port`` in port.rs): long flows demoted to queue 1 keep the
    receiver's port above K while short flows pass in queue 0; marking by the port's bytes marks
    differently from marking by each queue's, and every flow still ends."""
    long = pd.DataFrame({"arrival_s": 0.0, "src": range(1, 5), "dst": 0, "size_bytes": 3e6})
    short = pd.DataFrame({"arrival_s": 0.5e-3 + 50e-6 * np.arange(20), "src": 1 + np.arange(20) % 4, "dst": 0,
                          "size_bytes": 8760.0})
    tr = pd.concat([long, short], ignore_index=True)
    kw = dict(model="packet", transport="dctcp", pias_thresholds_bytes=[1e4], delay_us=0.2, init_cwnd_packets=20)
    per_queue = simulate(tr, flowsched.BigSwitch(5, 10), "pias", **kw)
    per_port = simulate(tr, flowsched.BigSwitch(5, 10), "pias", pias_port_ecn=True, **kw)
    assert per_port.packet["ecn_marks"] != per_queue.packet["ecn_marks"]
    assert per_port.flows["fct_s"].notna().all() and per_queue.flows["fct_s"].notna().all()


def test_data_arriving_over_time_on_packets():
    """``data_span_s`` on the packet model: no flow ends before its last byte has arrived,
    every byte is delivered, and the ideal FCT is the fluid model's (the span included)."""
    topo = flowsched.BigSwitch(8, 10)
    tr = workloads.add_data_span(mixed(120), 1.0, 10.0)
    fluid = simulate(tr, topo, "srpt")
    for sched, transport in (("ps", "tcp"), ("asrpt", "pfabric"), ("pias", "dctcp")):
        t = tr.assign(size_known=False) if sched != "ps" else tr
        res = simulate(t, topo, sched, model="packet", transport=transport)
        f = res.flows
        assert (f["fct_s"] >= tr["data_span_s"]).all()
        np.testing.assert_array_equal(f["bytes_sent"], np.ceil(f["size_bytes"]))
        np.testing.assert_allclose(f["ideal_fct_s"], fluid.flows["ideal_fct_s"], rtol=1e-12)
        assert (f["slowdown"] >= 1 - 1e-9).all()


def test_cli_packet_model(tmp_path, capsys):
    tr = tmp_path / "t.csv"
    mixed(60).assign(id=range(60))[["id", "arrival_s", "src", "dst", "size_bytes"]].to_csv(tr, index=False)
    q, o = tmp_path / "q.csv", tmp_path / "o.csv"
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--transport", "tcp", "--min-rto-s", "1e-3", "--delay-us", "0.2", "--queue-sample-us", "10",
                 "--sample-links", "down0,down1", "--queue-samples-out", str(q), "--out", str(o), "-q"]) == 0
    out = capsys.readouterr().out
    assert "packet model, tcp:" in out
    assert set(pd.read_csv(q)["link"]) == {"down0", "down1"}
    # --out: each flow's row with its packet counters, as the API's packet_flows
    res = simulate(pd.read_csv(tr), flowsched.BigSwitch(8, 10), "ps", model="packet", transport="tcp",
                   min_rto_s=1e-3, delay_us=0.2)
    rows = pd.read_csv(o)
    assert rows["id"].tolist() == res.packet_flows["id"].tolist()
    for c in ("timeouts", "retransmissions", "fast_retransmits", "duplicates"):
        assert rows[c].tolist() == res.packet_flows[c].tolist(), c
        assert rows[c].sum() > 0, c  # this run loses packets
    assert f"{res.packet['fast_retransmits']} fast retransmits" in out
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "pias", "--model", "packet",
                 "--transport", "tcp", "--pias-thresholds", "10000", "--queue-reserve-bytes", "15000", "-q"]) == 0
    assert "packet model, tcp:" in capsys.readouterr().out
    assert main(["simulate", "--trace", str(tr), "--transport", "tcp", "-q"]) == 2
    assert "add --model packet" in capsys.readouterr().err
    # gtcp:fair's projection: the estimate by window, or refused with another scheduler
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "gtcp:fair", "--model", "packet",
                 "--transport", "tcp", "--fair-projection", "window", "-q"]) == 0
    assert "packet model, tcp:" in capsys.readouterr().out
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--fair-projection", "window", "-q"]) == 2
    assert "is an option of gtcp:fair" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--link-jitter-ns", "50", "-q"]) == 0
    assert "packet model, dctcp:" in capsys.readouterr().out
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--link-jitter-ns", "-5", "-q"]) == 2
    assert "link_jitter_ns must be" in capsys.readouterr().err
    # DCTCP's alpha from 0 (ns-2's): the same run as the API's
    o0 = tmp_path / "o0.csv"
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--dctcp-alpha-init", "0", "--out", str(o0), "-q"]) == 0
    r0 = simulate(pd.read_csv(tr), flowsched.BigSwitch(8, 10), "ps", model="packet", dctcp_alpha_init=0.0)
    np.testing.assert_array_equal(pd.read_csv(o0)["finish_s"].to_numpy(), r0.flows["finish_s"].to_numpy())
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--dctcp-alpha-init", "2", "-q"]) == 2
    assert "dctcp_alpha_init must be in [0, 1]" in capsys.readouterr().err
    # the hold after DCTCP's cut is the default; --no-dctcp-hold-in-cwr is the API's dctcp_hold_in_cwr=False
    o1 = tmp_path / "o1.csv"
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--no-dctcp-hold-in-cwr", "--out", str(o1), "-q"]) == 0
    r1 = simulate(pd.read_csv(tr), flowsched.BigSwitch(8, 10), "ps", model="packet", dctcp_hold_in_cwr=False)
    np.testing.assert_array_equal(pd.read_csv(o1)["finish_s"].to_numpy(), r1.flows["finish_s"].to_numpy())
    assert not np.array_equal(pd.read_csv(o0)["finish_s"].to_numpy(), simulate(
        pd.read_csv(tr), flowsched.BigSwitch(8, 10), "ps", model="packet", dctcp_alpha_init=0.0,
        dctcp_hold_in_cwr=False).flows["finish_s"].to_numpy())  # the flag changes the run
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--transport", "tcp", "--no-dctcp-hold-in-cwr", "-q"]) == 2
    assert "dctcp_hold_in_cwr is read by the dctcp senders" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(tr), "--hosts", "8", "--scheduler", "ps", "--model", "packet",
                 "--tx-complete-events", "-q"]) == 0
    assert "packet model, dctcp:" in capsys.readouterr().out


def test_pfabric_default_rto_covers_long_paths():
    """pFabric's fixed 45 us RTO is sized for the paper's fabric (RTT near 14 us); on a path
    whose unloaded RTT is longer, the default becomes 3 of those RTTs, so a flow alone on an
    idle network never times out (with 45 us it timed out 843 times here), while an explicit
    min_rto_s is used as given."""
    topo = flowsched.FatTree(4, 10.0, 10.0)
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [15], "size_bytes": [1e6]})
    res = flowsched.simulate(tr, topo, "srpt", model="packet", delay_us=10.0, progress=False)
    assert res.packet["timeouts"] == 0 and res.packet["retransmissions"] == 0
    fixed = flowsched.simulate(tr, topo, "srpt", model="packet", delay_us=10.0, min_rto_s=45e-6, progress=False)
    assert fixed.packet["timeouts"] > 100  # what the paper's value does on this path
    short = flowsched.simulate(tr, topo, "srpt", model="packet", progress=False)  # RTT < 15 us: 45 us as before
    same = flowsched.simulate(tr, topo, "srpt", model="packet", min_rto_s=45e-6, progress=False)
    assert short.flows["fct_s"].to_numpy().tobytes() == same.flows["fct_s"].to_numpy().tobytes()


def test_active_on_packets_shows_each_senders_window():
    """Simulation.active() on the packet model: the flows whose sender has started and whose
    last byte has not arrived, with each sender's window; before any ACK a tcp sender has
    RFC 6928's 10 packets out and its SRTT is the path's unloaded round trip."""
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0, 1e-4], "src": [0, 2, 0], "dst": [1, 1, 1],
                       "size_bytes": [1e6, 3e4, 5e4]})
    sim = Simulation(tr, flowsched.BigSwitch(3, 10), "ps", model="packet", transport="tcp", delay_us=1.0)
    sim.step(0.0)
    a = sim.active()
    assert a.index.tolist() == [0, 1]  # flow 2 arrives at 0.1 ms
    # a 1,500 B data packet and a 40 B ACK, each serialized at 10 Gbps on two links, plus 1 us per link
    rtt0 = 2 * (1500 * 8 / 10e9 + 1e-6) + 2 * (40 * 8 / 10e9 + 1e-6)
    assert a["srtt_s"].to_numpy() == pytest.approx([rtt0, rtt0], rel=1e-12)
    assert a["cwnd_packets"].tolist() == [10.0, 10.0]
    assert a["in_flight_packets"].tolist() == [10, 10]
    assert a["bytes_sent"].tolist() == [0.0, 0.0]
    assert a["window_rate_Bps"].to_numpy() == pytest.approx(10 * 1460 / rtt0, rel=1e-12)
    assert "rate_Bps" not in a.columns  # the fluid model's column has no packet counterpart
    sim.step(1e-4)
    a = sim.active()
    assert a.index.tolist() == [0, 2]  # the 30 KB flow is done, flow 2 has started
    flows = sim.results().flows
    assert a["bytes_sent"].tolist() == flows["bytes_sent"].iloc[[0, 2]].tolist()
    assert (a["remaining_bytes"] == a["size_bytes"] - a["bytes_sent"]).all()
    assert a.loc[0, "bytes_sent"] > 0 and a.loc[0, "cwnd_packets"] > 10  # slow start has grown it
    sim.run()
    assert sim.active().empty


def test_active_on_packets_waits_for_the_destinations_token():
    """With destination admission, a flow is active only once its sender starts: with one
    token, the second request waits until the first flow has finished."""
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 2], "dst": [1, 1], "size_bytes": [1e5, 1e5]})
    sim = Simulation(tr, flowsched.BigSwitch(3, 10), "ps", model="packet", transport="tcp",
                     admission="fifo", k=1)
    sim.step(2e-5)
    assert sim.active().index.tolist() == [0]
    while 0 in sim.active().index:
        sim.step(sim.now + 1e-5)
    assert sim.results().flows["finish_s"].iloc[0] <= sim.now
    sim.step(sim.now + 1e-5)
    assert sim.active().index.tolist() == [1]
