"""Argument checks of the topologies (flowsched.topology): bool capacities refused, link
names that would collide refused, ecmp_seed checked alike by every topology that takes
one, and rates and oversubscription errors that name the argument, for non-numbers too."""
from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest

import flowsched
from flowsched import BigSwitch, FatTree, Graph, LeafSpine, ParkingLot, from_networkx
from flowsched.topology import read_graph


def star(n: int, gbps: float = 10.0) -> nx.Graph:
    g = nx.Graph()
    for h in range(n):
        g.add_edge(f"h{h}", "s", gbps=gbps)
    return g


# ---------------------------------------------------------------- bool capacities


@pytest.mark.parametrize("flag", [True, np.True_, False])
def test_bool_capacity_is_refused(flag):
    g = star(2)
    g["h0"]["s"]["gbps"] = flag
    with pytest.raises(ValueError, match=rf"from_networkx: edge \('h0', 's'\) has gbps = {flag!r}; rates must be "
                                         "positive finite Gbps"):
        from_networkx(g, ["h0", "h1"])


def test_bool_capacity_is_refused_under_another_attribute_name():
    g = nx.Graph()
    g.add_edge("h0", "s", rate=True)
    g.add_edge("h1", "s", rate=1)
    with pytest.raises(ValueError, match=r"edge \('h0', 's'\) has rate = True; rates must be positive finite Gbps"):
        from_networkx(g, ["h0", "h1"], capacity="rate")


def test_numeric_capacities_still_pass():
    g = star(3)
    g["h0"]["s"]["gbps"] = 1
    g["h1"]["s"]["gbps"] = np.float32(2.5)
    g["h2"]["s"]["gbps"] = np.int64(4)
    np.testing.assert_array_equal(from_networkx(g, ["h0", "h1", "h2"]).host_gbps(), [1.0, 2.5, 4.0])


# ---------------------------------------------------------------- link names


def colliding() -> nx.Graph:
    g = nx.Graph()
    g.add_edge("a", "b->c", gbps=10)
    g.add_edge("a->b", "c", gbps=1)
    g.add_edge("a", "a->b", gbps=10)
    g.add_edge("b->c", "c", gbps=10)
    return g


def test_colliding_link_names_are_refused():
    with pytest.raises(ValueError) as e:
        from_networkx(colliding(), ["a", "c"])
    msg = str(e.value)
    assert "edge ('a', 'b->c') and edge ('a->b', 'c') both give a link named 'a->b->c'" in msg
    assert "relabel the nodes" in msg and "networkx.relabel_nodes" in msg


def test_relabelled_graph_is_accepted():
    g = nx.relabel_nodes(colliding(), {"a->b": "ab", "b->c": "bc"})
    t = from_networkx(g, ["a", "c"])
    assert len(set(t.link_names)) == t.n_links == 8
    assert "a->bc" in t.link_names and "ab->c" in t.link_names


def test_labels_that_read_the_same_are_refused():
    """Nodes 1 and "1" give links named alike."""
    g = nx.Graph()
    g.add_edge(1, "s", gbps=10)
    g.add_edge("1", "s", gbps=10)
    # networkx lists the second edge from "s", as ("s", "1"): its link s->1 has the name of
    # the reverse link of edge (1, "s")
    with pytest.raises(ValueError, match=r"edge \(1, 's'\) and edge \('s', '1'\) both give a link named 's->1'"):
        from_networkx(g, [1, "1"])


def test_directed_colliding_link_names_are_refused():
    g = nx.DiGraph(colliding())
    with pytest.raises(ValueError, match="both give a link named 'a->b->c'"):
        from_networkx(g, ["a", "c"])


def test_multigraph_parallel_links_keep_their_own_names():
    g = nx.MultiGraph()
    g.add_edge("h0", "s", gbps=10)
    g.add_edge("h0", "s", gbps=10)
    g.add_edge("h1", "s", gbps=10)
    t = from_networkx(g, ["h0", "h1"])
    assert len(set(t.link_names)) == t.n_links == 6


def test_graph_refuses_duplicate_link_names_given_directly():
    nodes = ["h0", "s", "h1"]
    args = dict(nodes=nodes, hosts=[0, 2], link_from=[0, 1, 2, 1], link_to=[1, 0, 1, 2], link_gbps=[10.0] * 4)
    Graph(**args, link_names=["u0", "d0", "u1", "d1"])
    with pytest.raises(ValueError, match=r"Graph: links 0 \('h0' -> 's'\) and 2 \('h1' -> 's'\) are both named 'up'.*"
                                         "relabel"):
        Graph(**args, link_names=["up", "d0", "up", "d1"])
    with pytest.raises(ValueError, match=r"Graph: 3 link_names for 4 links"):
        Graph(**args, link_names=["u0", "d0", "u1"])


def test_graph_refuses_colliding_default_link_names():
    nodes = ["a", "b->c", "a->b", "c"]
    with pytest.raises(ValueError, match=r"links 0 \('a' -> 'b->c'\) and 1 \('a->b' -> 'c'\) are both named "
                                         "'a->b->c'"):
        Graph(nodes, [0, 3], [0, 2, 0, 1], [1, 3, 2, 3], [10.0] * 4)


def test_read_graph_refuses_colliding_link_names(tmp_path):
    g = colliding()
    g.nodes["a"]["host"] = 0
    g.nodes["c"]["host"] = 1
    path = tmp_path / "g.graphml"
    nx.write_graphml(g, path)
    with pytest.raises(ValueError, match=r"g.graphml: from_networkx: edge .* both give a link named 'a->b->c'"):
        read_graph(path)


# ---------------------------------------------------------------- ecmp_seed


def graph(ecmp_seed):
    return from_networkx(star(2), ["h0", "h1"], ecmp_seed=ecmp_seed)


MAKERS = {
    "LeafSpine": lambda s: LeafSpine(2, 2, 2, 10, 10, ecmp_seed=s),
    "FatTree": lambda s: FatTree(4, ecmp_seed=s),
    "ParkingLot": lambda s: ParkingLot(3, ecmp_seed=s),
    "from_networkx": graph,
}
SEED_ERROR = r"ecmp_seed must be an integer from 0 to 2\*\*64 - 1 \(not a bool\), got "


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("seed", [1.5, -1, True, np.True_, 2**64, "1", None, 2.0, float("nan")])
def test_bad_ecmp_seed_is_refused(maker, seed):
    with pytest.raises(ValueError, match=SEED_ERROR):
        MAKERS[maker](seed)


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1, np.uint64(2**64 - 1), np.int32(3)])
def test_good_ecmp_seed_is_kept(maker, seed):
    t = MAKERS[maker](seed)
    assert int(t.ecmp_seed) == int(seed)
    assert t.native_config()["ecmp_seed"] == int(seed)


def test_leafspine_ecmp_seed_names_the_class():
    with pytest.raises(ValueError, match="LeafSpine: ecmp_seed must be an integer"):
        LeafSpine(2, 2, 2, 10, 10, ecmp_seed=1.5)
    with pytest.raises(ValueError, match="LeafSpine: ecmp_seed must be an integer .* got -1"):
        LeafSpine(2, 2, 2, 10, 10, ecmp_seed=-1)
    with pytest.raises(ValueError, match="FatTree: ecmp_seed"):
        FatTree(4, ecmp_seed=-1)
    with pytest.raises(ValueError, match="ParkingLot: ecmp_seed"):
        ParkingLot(3, ecmp_seed=-1)


# ---------------------------------------------------------------- rates and oversubscription


@pytest.mark.parametrize("value", ["10", None, True, [10.0], 0, -1.0, float("inf"), float("nan"), 10**400])
@pytest.mark.parametrize(("maker", "name"), [
    (lambda v: FatTree(4, host_gbps=v), "FatTree: host_gbps"),
    (lambda v: FatTree(4, core_gbps=v), "FatTree: core_gbps"),
    (lambda v: ParkingLot(3, host_gbps=v), "ParkingLot: host_gbps"),
    (lambda v: ParkingLot(3, switch_gbps=v), "ParkingLot: switch_gbps"),
    (lambda v: LeafSpine(2, 2, 2, 10.0, v), "LeafSpine: core_gbps"),
])
def test_scalar_rates_name_the_argument(maker, name, value):
    with pytest.raises(ValueError, match=rf"^{name} must be a positive finite number \(Gbps\), got "):
        maker(value)


@pytest.mark.parametrize("value", ["2", None, True, float("inf"), float("-inf"), float("nan"), 0, -2.0])
def test_oversubscription_names_the_argument(value):
    with pytest.raises(ValueError, match=r"^FatTree: oversubscription must be a positive finite number, got "):
        FatTree(4, oversubscription=value)


def test_oversubscription_must_give_whole_hosts():
    with pytest.raises(ValueError, match=r"k/2 \* oversubscription must be a whole number"):
        FatTree(4, oversubscription=1.25)
    assert FatTree(4, oversubscription=1.5).n_hosts == 24
    assert FatTree(4, oversubscription=np.float64(2.0)).n_hosts == 32


@pytest.mark.parametrize(("maker", "name"), [
    (lambda v: BigSwitch(2, v), "BigSwitch: link_gbps"),
    (lambda v: LeafSpine(1, 2, 1, v, 10.0), "LeafSpine: host_gbps"),
])
@pytest.mark.parametrize(("value", "why"), [
    ("10", r"expected one rate or 2 per-host rates \(numbers, Gbps\), got '10'"),
    (None, r"expected one rate or 2 per-host rates \(numbers, Gbps\), got None"),
    (True, r"expected a link rate in Gbps, got True; rates are numbers, not bools"),
    (np.True_, r"expected a link rate in Gbps, got np.True_|expected a link rate in Gbps, got True"),
    ([10.0, "5"], r"host 1 has link rate '5'; rates must be numbers"),
    ([10.0, True], r"host 1 has link rate True; rates must be numbers"),
    ((None, 10.0), r"host 0 has link rate None; rates must be numbers"),
    (np.array([True, True]), r"expected one rate or 2 per-host rates \(numbers, Gbps\)"),
    (np.array(["1", "2"]), r"expected one rate or 2 per-host rates \(numbers, Gbps\)"),
    ([10.0, -1.0], r"host 1 has link rate -1.0 Gbps; rates must be positive and finite"),
    ([10.0, 10.0, 10.0], r"expected one rate or 2 per-host rates, got shape \(3,\)"),
])
def test_host_rates_name_the_argument(maker, name, value, why):
    with pytest.raises(ValueError, match=rf"^{name}: ({why})"):
        maker(value)


def test_host_rates_take_numbers_in_any_container():
    import pandas as pd

    for rates in ([10, 5.0], (10, 5.0), np.array([10, 5]), np.array([10.0, 5.0], dtype=object), pd.Series([10, 5.0]),
                  [np.float32(10), np.int64(5)]):
        np.testing.assert_array_equal(BigSwitch(2, rates).host_gbps(), [10.0, 5.0])
    assert BigSwitch(2, np.float64(2.5)).host_gbps().tolist() == [2.5, 2.5]
    assert flowsched.LeafSpine(1, 2, 1, [1, 2], 10).native_config()["host_gbps"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("make,match", [
    (lambda: flowsched.BigSwitch("abc"), "BigSwitch: hosts must be an integer >= 2, got 'abc'"),
    (lambda: flowsched.LeafSpine("2", 2, 2), "LeafSpine: tors must be an integer >= 1, got '2'"),
    (lambda: flowsched.LeafSpine(True, 2, 2), "LeafSpine: tors must be an integer >= 1, got True"),
    (lambda: flowsched.FatTree("4"), "FatTree: k must be an even integer >= 2, got '4'"),
    (lambda: flowsched.ParkingLot("8"), "ParkingLot: n must be an integer >= 2, got '8'"),
])
def test_counts_that_are_not_numbers_are_named(make, match):
    # Python's bare "invalid literal for int()" before, or True taken as 1
    with pytest.raises(ValueError, match=re.escape(match)):
        make()
    assert flowsched.BigSwitch(4.0).hosts == 4  # a whole float is a count
