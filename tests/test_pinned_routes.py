"""Pinned routes (issue 21): a trace's optional ``path`` column pins a flow's route on a
graph topology. Pinning a flow to the path ECMP gives it changes nothing, bit for bit;
two flows pinned onto one core link of a fat-tree share it exactly; the packet model's
FCT follows the pinned route's delays; every bad route is an error naming the row; the
column survives CSV and Parquet files and the CLI."""
from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import BigSwitch, FatTree, LeafSpine, Simulation, from_networkx, simulate
from flowsched.sim import FLOW_COLUMNS
from flowsched.traces import PATH_SEPARATOR, TraceError, read_trace, validate_trace, write_trace
from flowsched.workloads import poisson_all_to_all

# FatTree(4): host 0 under edge0_0, host 2 under edge0_1 (pod 0); hosts 4 and 6 under
# edge1_0 and edge1_1 (pod 1); aggregation switch j of a pod joins core2j and core2j+1.
VIA_CORE0_A = ["h0", "edge0_0", "agg0_0", "core0", "agg1_0", "edge1_0", "h4"]
VIA_CORE0_B = ["h2", "edge0_1", "agg0_0", "core0", "agg1_0", "edge1_1", "h6"]
VIA_CORE1_B = ["h2", "edge0_1", "agg0_0", "core1", "agg1_0", "edge1_1", "h6"]


def two_flows(paths=None) -> pd.DataFrame:
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 2], "dst": [4, 6], "size_bytes": [1.25e6, 1.25e6]})
    if paths is not None:
        tr["path"] = pd.Series(paths, dtype=object)
    return tr


@pytest.fixture(scope="module")
def fat_trace():
    return poisson_all_to_all("websearch", 0.6, 16, 10.0, 400, seed=5)


@pytest.mark.parametrize("scheduler", ["ps", "srpt", "pias", "las", "fifo", "gtcp:srpt"])
def test_pinning_the_ecmp_path_is_bit_identical(fat_trace, scheduler):
    topo = FatTree(4, ecmp_seed=3)
    free = simulate(fat_trace, topo, scheduler)
    ecmp = Simulation(fat_trace, topo, scheduler).routes()
    assert all(len(r) in (3, 5, 7) for r in ecmp)  # same edge switch, same pod, across pods
    pinned = fat_trace.copy()
    pinned["path"] = [list(r) if i % 2 == 0 else None for i, r in enumerate(ecmp)]
    res = simulate(pinned, topo, scheduler)
    for col in FLOW_COLUMNS:
        pd.testing.assert_series_equal(res.flows[col], free.flows[col], check_exact=True)
    # The routes reported, checked independently: each a shortest path of the graph (by
    # networkx), and together they account for every link's bytes in the unpinned run.
    assert list(res.flows["path"]) == list(ecmp)  # ECMP's route for the unpinned rows too
    g = nx.DiGraph([(topo.nodes[a], topo.nodes[b]) for a, b in zip(topo.link_from, topo.link_to, strict=True)])
    carried = dict.fromkeys(free.links["link"], 0.0)
    for (s, d, size), route in zip(fat_trace[["src", "dst", "size_bytes"]].to_numpy(), ecmp, strict=True):
        assert route[0] == f"h{int(s)}" and route[-1] == f"h{int(d)}"
        assert len(route) - 1 == nx.shortest_path_length(g, route[0], route[-1])
        for a, b in zip(route[:-1], route[1:], strict=True):
            carried[f"{a}->{b}"] += size
    assert free.flows["finish_s"].notna().all()
    np.testing.assert_allclose(free.links["bytes"], [carried[lk] for lk in free.links["link"]], rtol=1e-9)
    pd.testing.assert_frame_equal(res.links, free.links, check_exact=True)
    assert "path" not in free.flows  # no path column in, none out: FLOW_COLUMNS as before
    assert list(free.flows.columns) == list(FLOW_COLUMNS)


def test_pinning_the_ecmp_path_is_bit_identical_in_the_packet_model(fat_trace):
    topo = FatTree(4, ecmp_seed=3)
    tr = fat_trace.iloc[:120].copy()
    tr["size_bytes"] = np.ceil(tr["size_bytes"])
    free = simulate(tr, topo, "ps", model="packet", delay_us=0.5)
    pinned = tr.copy()
    pinned["path"] = list(Simulation(tr, topo, "ps").routes())
    res = simulate(pinned, topo, "ps", model="packet", delay_us=0.5)
    np.testing.assert_array_equal(res.flows["fct_s"].to_numpy(), free.flows["fct_s"].to_numpy())
    assert res.packet == free.packet


def test_two_flows_pinned_onto_one_core_link_halve_their_rates():
    # An ECMP seed that puts the two flows on paths with no link in common: 1 ms each.
    for seed in range(100):
        topo = FatTree(4, 10.0, 10.0, ecmp_seed=seed)
        a, b = Simulation(two_flows(), topo, "ps").routes()
        links = [set(zip(r[:-1], r[1:], strict=True)) for r in (a, b)]
        if not links[0] & links[1]:
            break
    free = simulate(two_flows(), topo, "ps").flows
    assert free["fct_s"].tolist() == [1e-3, 1e-3]
    # Both through core0: the aggregation-core links run at 10 Gbps, halved: 2 ms each.
    sim = Simulation(two_flows([VIA_CORE0_A, VIA_CORE0_B]), topo, "ps")
    sim.step(1e-4)
    assert sim.rates().tolist() == [6.25e8, 6.25e8]
    sim.run()
    f = sim.results().flows
    np.testing.assert_allclose(f["fct_s"], [2e-3, 2e-3], rtol=1e-12)
    assert f["ideal_fct_s"].tolist() == [1e-3, 1e-3]
    assert f["path"].tolist() == [tuple(VIA_CORE0_A), tuple(VIA_CORE0_B)]
    links = sim.results().links.set_index("link")["bytes"]
    assert links["agg0_0->core0"] == links["core0->agg1_0"] == 2.5e6
    assert links["agg0_0->core1"] == 0.0
    # Through core0 and core1 of the same aggregation switches: nothing shared, 1 ms each.
    apart = simulate(two_flows([VIA_CORE0_A, VIA_CORE1_B]), topo, "ps").flows
    assert apart["fct_s"].tolist() == [1e-3, 1e-3]


def detours() -> flowsched.topology.Graph:
    """h0 and h1 on switches s0 and s1, joined through m (no delay of its own), through
    slow (3 us on each of its links) and through the chain x -> y (one link longer)."""
    g = nx.Graph()
    for a, b, d in [("h0", "s0", 0.0), ("h1", "s1", 0.0), ("s0", "m", 0.0), ("m", "s1", 0.0), ("s0", "slow", 3.0),
                    ("slow", "s1", 3.0), ("s0", "x", 0.0), ("x", "y", 0.0), ("y", "s1", 0.0)]:
        g.add_edge(a, b, gbps=10.0, delay_us=d)
    return from_networkx(g, ["h0", "h1"])


@pytest.mark.parametrize(("scheduler", "transport"), [("ps", "dctcp"), ("srpt", "pfabric"), ("ps", "tcp")])
def test_packet_fct_follows_the_pinned_route(scheduler, transport):
    topo = detours()
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [5 * 1460.0]})

    def run(mid: list[str]) -> pd.Series:
        t = tr.assign(path=[["h0", "s0", *mid, "s1", "h1"]])
        return simulate(t, topo, scheduler, model="packet", transport=transport, delay_us=1.0).flows.iloc[0]

    fast, slow, longer = run(["m"]), run(["slow"]), run(["x", "y"])
    # Five packets fit in the first window: on an idle network the FCT grows by exactly the
    # slow links' 2 x 3 us (times are integer picoseconds in the packet model).
    assert round((slow["fct_s"] - fast["fct_s"]) * 1e12) == 6_000_000
    assert slow["path_delay_s"] - fast["path_delay_s"] == pytest.approx(6e-6, abs=1e-18)
    assert slow["ideal_fct_s"] - fast["ideal_fct_s"] == pytest.approx(6e-6, abs=1e-15)
    # One link more: one more hop's propagation (1 us) and one packet's serialization.
    wire = (1460 + 40) / 1.25e9
    assert longer["fct_s"] - fast["fct_s"] == pytest.approx(1e-6 + wire, abs=2e-12)
    assert longer["path"] == ("h0", "s0", "x", "y", "s1", "h1")


def test_fluid_path_delay_follows_the_pinned_route():
    topo = detours()
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1250.0, 1250.0],
                       "path": ["h0>s0>slow>s1>h1", "h0 > s0 > x > y > s1 > h1"]})
    f = simulate(tr, topo, "ps", delay_us=0.5).flows
    np.testing.assert_allclose(f["path_delay_s"], [4 * 0.5e-6 + 6e-6, 5 * 0.5e-6], rtol=1e-12)
    # Both share h0's and h1's host links (5 Gbps each: 2 us) and add their own path delays.
    np.testing.assert_allclose(f["fct_s"], 2e-6 + f["path_delay_s"], rtol=1e-9)
    np.testing.assert_allclose(f["ideal_fct_s"], 1e-6 + f["path_delay_s"], rtol=1e-9)


@pytest.mark.parametrize(("path", "message"), [
    (["h0", "edge0_0", "agg0_0", "core9", "agg1_0", "edge1_0", "h4"], "unknown node 'core9' at position 3"),
    (["h0", "edge0_0", "agg0_0", "agg1_0", "edge1_0", "h4"],
     "no link from node 'agg0_0' to node 'agg1_0' (positions 2 and 3)"),
    (["h1", "edge0_0", "agg0_0", "core0", "agg1_0", "edge1_0", "h4"],
     "starts at node 'h1', not at the flow's source host 0 (node 'h0')"),
    (["h0", "edge0_0", "agg0_0", "core0", "agg1_0", "edge1_0", "h5"],
     "ends at node 'h5', not at the flow's destination host 4 (node 'h4')"),
    (["h0", "edge0_0", "h1", "edge0_0", "agg0_0", "core0", "agg1_0", "edge1_0", "h4"],
     "node 'h1' (position 2) is host 1, and hosts do not forward"),
    (["h0", "edge0_0", "agg0_0", "edge0_1", "agg0_1", "edge0_0", "agg0_0", "core0", "agg1_0", "edge1_0", "h4"],
     "node 'edge0_0' appears at positions 1 and 5: a route visits each node once (no loops)"),
    (["h0"], "a route names at least its source and destination hosts"),
    ("h0>>h4", "an empty node name in 'h0>>h4'"),
    (7, "expected a list of node names or a '>'-joined string, got 7"),
])
def test_bad_routes_are_errors_naming_the_row(path, message):
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [2, 0], "dst": [6, 4], "size_bytes": [1e4, 1e4],
                       "path": pd.Series([None, path], dtype=object, index=[10, 11])}, index=[10, 11])
    with pytest.raises(TraceError) as e:
        simulate(tr, FatTree(4), "ps")
    assert "trace, row 11, column 'path': " in str(e.value)
    assert message in str(e.value), str(e.value)


def test_links_have_a_direction():
    g = nx.DiGraph()
    for a, b in [("h0", "s0"), ("s0", "h0"), ("h1", "s1"), ("s1", "h1"), ("s0", "s1"), ("s1", "s0"), ("s0", "t"),
                 ("t", "s1")]:  # s0 -> t -> s1 one way only
        g.add_edge(a, b, gbps=10.0)
    topo = from_networkx(g, ["h0", "h1"])
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e4, 1e4]})
    ok = simulate(tr.assign(path=["h0>s0>t>s1>h1", None]), topo, "ps").flows
    assert ok["path"].tolist() == [("h0", "s0", "t", "s1", "h1"), ("h1", "s1", "s0", "h0")]
    with pytest.raises(TraceError, match=r"row 1, column 'path': no link from node 's1' to node 't'"):
        simulate(tr.assign(path=[None, "h1>s1>t>s0>h0"]), topo, "ps")


@pytest.mark.parametrize(("topology", "why"), [
    (BigSwitch(8), "not on a BigSwitch (a big switch has one path per host pair)"),
    (LeafSpine(2, 4, 2), "not on a LeafSpine (a leaf-spine's spine is drawn by ECMP; to pin spines, build"),
    (None, "and none was given (the default is a big switch)"),
])
def test_closed_form_fabrics_refuse_pinned_routes(topology, why):
    with pytest.raises(TraceError, match="row 0, column 'path': routes are pinned on a Graph topology only") as e:
        simulate(two_flows([VIA_CORE0_A, None]), topology, "ps")
    assert why in str(e.value)
    # A path column with no route pinned is ECMP everywhere (and says so: None per flow).
    res = simulate(two_flows([None, ""]), topology, "ps")
    assert res.flows["path"].tolist() == [None, None]
    assert res.flows["fct_s"].tolist() == simulate(two_flows(), topology, "ps").flows["fct_s"].tolist()


def test_csv_and_parquet_round_trip(tmp_path):
    tr = validate_trace(two_flows([VIA_CORE0_A, None]))
    assert tr["path"].tolist() == [tuple(VIA_CORE0_A), None]
    write_trace(tr, tmp_path / "t.csv")
    text = (tmp_path / "t.csv").read_text().splitlines()
    assert text[0].endswith(",path") and text[1].endswith(",h0>edge0_0>agg0_0>core0>agg1_0>edge1_0>h4")
    assert text[2].endswith(",")
    for name in ("t.csv", "t.parquet"):
        write_trace(tr, tmp_path / name)
        back = read_trace(tmp_path / name)
        pd.testing.assert_frame_equal(back, tr)
        np.testing.assert_array_equal(simulate(back, FatTree(4), "ps").flows["fct_s"],
                                      simulate(tr, FatTree(4), "ps").flows["fct_s"])
    # Integer node labels: written as strings, matched back to the labels against the topology.
    g = nx.Graph([(0, 10), (1, 11), (10, 12), (12, 11), (10, 13), (13, 11)])
    nx.set_edge_attributes(g, 10.0, "gbps")
    topo = from_networkx(g, [0, 1])
    ints = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e4], "path": [[0, 10, 13, 11, 1]]})
    write_trace(ints, tmp_path / "i.csv")
    assert read_trace(tmp_path / "i.csv")["path"].tolist() == [("0", "10", "13", "11", "1")]
    assert read_trace(tmp_path / "i.csv", topology=topo)["path"].tolist() == [(0, 10, 13, 11, 1)]
    # A bad route in a file names its line (the header is line 1).
    bad = tr.assign(path=[None, "h2>edge0_1>agg0_1>core0>agg1_0>edge1_1>h6"])
    write_trace(bad, tmp_path / "b.csv")
    with pytest.raises(TraceError, match=r"b.csv, line 3, column 'path': no link from node 'agg0_1' to node 'core0'"):
        read_trace(tmp_path / "b.csv", topology=FatTree(4))
    # A name that would not read back is refused when writing.
    with pytest.raises(TraceError, match=r"node name 'a>b' cannot be written"):
        write_trace(tr.assign(path=[["h0", "a>b", "h4"], None]), tmp_path / "x.csv")
    assert PATH_SEPARATOR == ">"


def test_cli_simulates_a_trace_with_routes(tmp_path, capsys):
    from flowsched.cli import main

    g = nx.Graph()
    for a, b in [("h0", "s0"), ("h1", "s0"), ("h2", "s1"), ("h3", "s1"), ("s0", "a"), ("a", "s1"), ("s0", "b"),
                 ("b", "s1")]:
        g.add_edge(a, b, gbps=10.0)
    for h in range(4):
        g.nodes[f"h{h}"]["host"] = h
    nx.write_graphml(g, tmp_path / "two.graphml")
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [2, 3], "size_bytes": [1.25e6, 1.25e6],
                       "path": ["h0>s0>a>s1>h2", "h1>s0>a>s1>h3"]})
    write_trace(tr, tmp_path / "t.csv")
    args = ["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / "two.graphml"),
            "--scheduler", "ps", "--out", str(tmp_path / "f.csv")]
    assert main(args) == 0
    out = pd.read_csv(tmp_path / "f.csv")
    assert out["path"].tolist() == ["h0>s0>a>s1>h2", "h1>s0>a>s1>h3"]
    np.testing.assert_allclose(out["fct_s"], [2e-3, 2e-3], rtol=1e-12)  # both over s0 -> a -> s1
    write_trace(tr.assign(path=["h0>s0>a>s1>h2", "h1>s0>a>b>s1>h3"]), tmp_path / "bad.csv")
    capsys.readouterr()
    assert main([*args[:2], str(tmp_path / "bad.csv"), *args[3:]]) == 2
    assert "bad.csv, line 3, column 'path': no link from node 'a' to node 'b'" in capsys.readouterr().err


def test_token_env_refuses_pinned_routes():
    from flowsched.envs.token import native_trace

    with pytest.raises(ValueError, match="route every flow by ECMP"):
        native_trace(two_flows([VIA_CORE0_A, None]), FatTree(4), 10.0)
    native_trace(two_flows([None, None]), FatTree(4), 10.0)  # no route pinned: fine


def test_parallel_links_are_never_pinned_silently():
    # A multigraph: A and B joined by two parallel links (1 and 10 Gbps, equal cost), and a
    # detour through C. ECMP spreads flows over both parallel links, but a route of node
    # names cannot say which one: pinning it is an error naming the two nodes, never a
    # silent choice of one link (which moved flows: their FCTs changed).
    g = nx.MultiGraph()
    for a, b, c in [("h0", "A", 10.0), ("h1", "B", 10.0), ("A", "B", 1.0), ("A", "B", 10.0), ("A", "C", 10.0),
                    ("C", "B", 10.0)]:
        g.add_edge(a, b, gbps=c)
    topo = from_networkx(g, ["h0", "h1"])
    n = 8
    tr = pd.DataFrame({"arrival_s": np.arange(n) * 1.0, "src": [0] * n, "dst": [1] * n, "size_bytes": [1.25e6] * n})
    free = simulate(tr, topo, "ps").flows
    assert set(free["fct_s"].round(6)) == {1e-3, 1e-2}  # both parallel links in use
    routes = Simulation(tr, topo, "ps").routes()
    assert set(routes) == {("h0", "A", "B", "h1")}
    with pytest.raises(TraceError, match=r"trace, row 0, column 'path': 2 parallel links from node 'A' to node 'B' "
                                         r"\(positions 1 and 2\): a route given as nodes cannot say which"):
        simulate(tr.assign(path=list(routes)), topo, "ps")
    with pytest.raises(TraceError, match=r"row 1, column 'path': 2 parallel links from node 'B' to node 'A'"):
        validate_trace(tr.iloc[:2].assign(src=[0, 1], dst=[1, 0], path=[None, "h1>B>A>h0"]), topology=topo)
    # A route around the parallel links is pinned as usual: 10 Gbps, 1 ms.
    res = simulate(tr.assign(path=["h0>A>C>B>h1"] + [None] * (n - 1)), topo, "ps").flows
    assert res["fct_s"].iloc[0] == pytest.approx(1e-3, rel=1e-12)
    assert res["path"].iloc[0] == ("h0", "A", "C", "B", "h1")


def test_labels_that_read_alike_are_errors_not_guesses(tmp_path):
    # Nodes 3 and "3" on two routes between hosts a and b (3 is on the slow one; "3" sits
    # between switches s and t, so that no two links share a name such as 'a->3'): a
    # route through 3 written to a file reads back as "3", which both labels read as.
    g = nx.Graph()
    for a, b, c in [("a", 3, 1.0), (3, "b", 1.0), ("a", "s", 10.0), ("s", "3", 10.0), ("3", "t", 10.0),
                    ("t", "b", 10.0)]:
        g.add_edge(a, b, gbps=c)
    topo = from_networkx(g, ["a", "b"])
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1.25e6], "path": [["a", 3, "b"]]})
    res = simulate(tr, topo, "ps").flows
    assert res["path"].tolist() == [("a", 3, "b")] and res["fct_s"].tolist() == [pytest.approx(1e-2, rel=1e-12)]
    write_trace(tr, tmp_path / "m.csv")
    with pytest.raises(TraceError, match=r"m.csv, line 2, column 'path': position 1: '3' is ambiguous: the labels "
                                         r"of nodes 3, '3' all read '3' as strings"):
        simulate(tmp_path / "m.csv", topo, "ps")
    with pytest.raises(TraceError, match=r"row 0, column 'path': position 1: '3' is ambiguous"):
        validate_trace(tr.assign(path=[["a", "3", "b"]]), topology=topo)
    assert topo.node_index("3") is None and topo.node_index(3) == 1
    # Numbers stand only for labels of their own kind: True and 1.0 are not node 1.
    line = nx.path_graph(4)
    nx.set_edge_attributes(line, 10.0, "gbps")
    ints = from_networkx(line, [0, 3])
    one = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1.0]})
    for cell, shown in [([0, True, 2, 3], "True (bool)"), ([0, 1.0, 2, 3], "1.0 (float)"),
                        ([0, np.float64(1.0), 2, 3], "np.float64(1.0) (float64)")]:
        with pytest.raises(TraceError, match=rf"position 1: {re.escape(shown)} is not a node label: it equals node "
                                             r"1 \(int\)"):
            validate_trace(one.assign(path=[cell]), topology=ints)
    assert validate_trace(one.assign(path=[[np.int64(0), 1, 2, "3"]]), topology=ints)["path"].tolist() == [(0, 1, 2, 3)]
    # ... and labels that are bools or floats are named by themselves, or as strings.
    g = nx.Graph()
    for a, b in [("a", True), (True, "b"), ("a", 1.5), (1.5, "b")]:
        g.add_edge(a, b, gbps=10.0)
    other = from_networkx(g, ["a", "b"])
    for cell in (["a", True, "b"], "a>True>b", ["a", np.True_, "b"]):
        assert validate_trace(one.assign(path=[cell]), topology=other)["path"].tolist() == [("a", True, "b")]
    assert validate_trace(one.assign(path=["a>1.5>b"]), topology=other)["path"].tolist() == [("a", 1.5, "b")]
    with pytest.raises(TraceError, match=r"1 \(int\) is not a node label: it equals node True \(bool\)"):
        validate_trace(one.assign(path=[["a", 1, "b"]]), topology=other)


def test_pins_without_a_topology_name_the_index_label_or_line(tmp_path):
    # As every other bad cell: the DataFrame's index label, a CSV file's line (header: 1).
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1e4, 1e4],
                       "path": [None, "h0>s>h1"]}, index=[10, 11])
    tr.to_csv(tmp_path / "b.csv", index=False)
    for trace, where in [(tr, "trace, row 11"), (tmp_path / "b.csv", "b.csv, line 3")]:
        for topology in (None, BigSwitch(2)):
            with pytest.raises(TraceError, match=rf"{where}, column 'path': routes are pinned on a Graph topology"):
                simulate(trace, topology, "ps")


def test_the_type_stub_says_which_native_classes_take_pinned_routes():
    # flowsched/_fabric.pyi's `topology` annotations against what the extension does.
    import ast
    from pathlib import Path

    from flowsched import _fabric

    topo = FatTree(4)
    pinned = topo.pin([VIA_CORE0_A, None], np.array([0, 2]), np.array([4, 6]))
    cfg = {**topo.native_config(), "topology": pinned}
    arrays = (np.zeros(2), np.array([0, 2]), np.array([4, 6]), np.full(2, 1e4), np.full(2, np.nan), np.ones(2),
              np.zeros(2), np.ones(2, bool))
    make = {
        "Simulator": lambda: _fabric.Simulator(*arrays, **cfg),
        "PacketSimulator": lambda: _fabric.PacketSimulator(*arrays, **cfg),
        "TokenConfig": lambda: _fabric.TokenConfig(**cfg, k=2, window=2, class_weights=[1.0],
                                                   class_sizes_bytes=[1e4], class_deadlines_s=[1e-3], burst_size=2,
                                                   burst_rate_hz=10.0, n_bursts=1),
        "SwitchConfig": lambda: _fabric.SwitchConfig(**cfg, max_flows=4),
    }
    stub = ast.parse((Path(_fabric.__file__).parent / "_fabric.pyi").read_text())
    annotations = {}
    for node in stub.body:
        if isinstance(node, ast.ClassDef) and node.name in make:
            new = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__new__")
            arg = next(a for a in new.args.kwonlyargs if a.arg == "topology")
            annotations[node.name] = ast.unparse(arg.annotation)
    assert set(annotations) == set(make)
    for name, build in make.items():
        try:
            build()
            takes = True
        except ValueError as e:
            assert "topology must be" in str(e), (name, e)
            takes = False
        assert takes == (name in ("Simulator", "PacketSimulator")), name
        assert annotations[name] == ("str | Graph | PinnedRoutes" if takes else "str | Graph"), (name, annotations)


def test_cli_checks_node_names_for_out_before_the_run(tmp_path, capsys):
    # --out writes routes as names joined by '>': a node named "s>0" cannot be written, and
    # that is an error before the run (which printed its summary, then lost the output).
    from flowsched.cli import main

    g = nx.Graph()
    for h in ("h0", "h1"):
        g.add_edge(h, "s>0", gbps=10.0)
        g.nodes[h]["host"] = int(h[1])
    nx.write_graphml(g, tmp_path / "g.graphml")
    write_trace(pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e4], "path": [None]}),
                tmp_path / "t.csv")
    args = ["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / "g.graphml"),
            "--scheduler", "ps"]
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "f.csv")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not (tmp_path / "f.csv").exists()
    assert "--out: the trace has a 'path' column, so --out writes each flow's route, but node name 's>0' cannot " \
           "be written as a path string" in err
    assert main(args) == 0  # without --out the route is never written


def test_packet_hop_limit_names_the_path_column_for_a_pinned_route():
    # h0 - s0 - s1 - h1, and a detour from s0 to s1 through 300 switches: pinned, the route
    # is over the packet model's 255 links, and the error names the column that made it.
    g = nx.Graph()
    chain = ["s0", *(f"c{i}" for i in range(300)), "s1"]
    for a, b in [("h0", "s0"), ("s0", "s1"), ("s1", "h1"), *zip(chain[:-1], chain[1:], strict=True)]:
        g.add_edge(a, b, gbps=10.0)
    topo = from_networkx(g, ["h0", "h1"])
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1460.0, 1460.0]})
    with pytest.raises(ValueError, match=r"flow at row 1, column 'path': its route has 303 links; the packet model "
                                         r"takes routes of at most 255 links"):
        simulate(tr.assign(path=[None, ["h0", *chain, "h1"]]), topo, "ps", model="packet")
    assert simulate(tr, topo, "ps", model="packet").flows["fct_s"].notna().all()


def test_routes_at_once_are_the_routes_one_by_one(fat_trace):
    # Graph.ecmp_routes (one native call) and Graph.resolve (every cell at once) against
    # their one-row forms, route_of and route_problem.
    topo = FatTree(4, ecmp_seed=7)
    src, dst = fat_trace["src"].to_numpy(), fat_trace["dst"].to_numpy()
    at_once = topo.ecmp_routes(src, dst)
    assert list(at_once) == [topo.route_of(i, s, d) for i, (s, d) in enumerate(zip(src, dst, strict=True))]
    cells = np.array([None if i % 3 else ">".join(r).split(">") for i, r in enumerate(at_once)], dtype=object)
    out, native, problem = topo.resolve(cells, src, dst)
    assert problem is None and native.n_flows == len(cells)
    assert [o for o in out if o is not None] == [tuple(c) for c in cells if c is not None]
    # The first bad row is reported, whatever is wrong with later ones.
    bad = cells.copy()
    bad[3] = [*at_once[3][:-1], "h15" if at_once[3][-1] != "h15" else "h14"]  # row 3: wrong destination
    bad[6] = ["nowhere", *at_once[6][1:]]  # row 6: an unknown node
    assert topo.resolve(bad, src, dst)[2][0] == 3
    bad[3] = None
    assert topo.resolve(bad, src, dst)[2] == (6, topo.route_problem(src[6], dst[6], bad[6])[1])
