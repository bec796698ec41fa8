"""Graph topologies (issue 21): networkx graphs, fat-trees and parking lots in the
simulator, checked against the native big switch and leaf-spine and against the exact
max-min answer."""
from __future__ import annotations

import pickle

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import BigSwitch, FatTree, Graph, LeafSpine, ParkingLot, from_networkx, simulate
from flowsched.workloads import poisson_all_to_all


def star(n: int, gbps: float = 10.0) -> nx.Graph:
    g = nx.Graph()
    for h in range(n):
        g.add_edge(f"h{h}", "sw", gbps=gbps)
    return g


def leaf_spine_graph(tors: int, hpt: int, spines: int, host_gbps: float, core_gbps: float) -> nx.Graph:
    g = nx.Graph()
    for h in range(tors * hpt):
        g.add_edge(f"h{h}", f"tor{h // hpt}", gbps=host_gbps)
    for t in range(tors):
        for s in range(spines):  # in spine order: the graph's ECMP order is the native one's
            g.add_edge(f"tor{t}", f"spine{s}", gbps=core_gbps)
    return g


@pytest.fixture(scope="module")
def trace16():
    return poisson_all_to_all("websearch", 0.7, 16, 10.0, 3000, seed=3)


@pytest.mark.parametrize("scheduler", ["ps", "srpt", "fifo", "las", "pias", "wps"])
def test_star_graph_equals_big_switch(trace16, scheduler):
    g = from_networkx(star(16), [f"h{h}" for h in range(16)])
    a = simulate(trace16, g, scheduler).flows
    b = simulate(trace16, BigSwitch(16, 10.0), scheduler).flows
    np.testing.assert_allclose(a["finish_s"], b["finish_s"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(a["slowdown"], b["slowdown"], rtol=1e-9, atol=0)


@pytest.mark.parametrize("scheduler", ["ps", "srpt", "pias"])
def test_leaf_spine_graph_equals_leaf_spine(trace16, scheduler):
    g = from_networkx(leaf_spine_graph(4, 4, 2, 10.0, 15.0), [f"h{h}" for h in range(16)], ecmp_seed=5)
    native = LeafSpine(4, 4, 2, 10.0, 15.0, ecmp_seed=5)
    a = simulate(trace16, g, scheduler, delay_us=1.0).flows
    b = simulate(trace16, native, scheduler, delay_us=1.0).flows
    np.testing.assert_allclose(a["fct_s"], b["fct_s"], rtol=1e-9, atol=0)
    np.testing.assert_array_equal(a["path_delay_s"], b["path_delay_s"])


def test_fat_tree_shape():
    t = FatTree(4)
    assert t.n_hosts == 16 and len(t.nodes) == 16 + 4 * 2 + 4 * 2 + 4
    # Every undirected edge is two links: 16 host links, 4 pods x (4 edge-agg + 4 agg-core).
    assert t.n_links == 2 * (16 + 4 * 8)
    assert t.n_paths(0, 15) == 4 and t.n_paths(0, 1) == 1 and t.n_paths(0, 2) == 2
    assert t.path(0, 0, 1) == ["h0->edge0_0", "edge0_0->h1"]
    assert len(t.path(7, 0, 15)) == 6
    big = FatTree(8, oversubscription=2)
    assert big.n_hosts == 8**3 // 4 * 2
    assert big.host_gbps().tolist() == [10.0] * big.n_hosts
    with pytest.raises(ValueError, match="even integer"):
        FatTree(5)
    with pytest.raises(ValueError, match="whole number of hosts"):
        FatTree(4, oversubscription=1.25)


def test_path_links_match_path_delay():
    t = FatTree(4)
    tr = poisson_all_to_all("websearch", 0.5, 16, 10.0, 300, seed=1)
    r = simulate(tr, t, "ps", delay_us=2.0)
    hops = flowsched.sim.path_links(t, tr["src"].to_numpy(), tr["dst"].to_numpy())
    assert set(hops.tolist()) <= {2, 4, 6}
    np.testing.assert_allclose(r.flows["path_delay_s"], hops * 2e-6, rtol=1e-12)
    # Results.links names the graph's links.
    assert r.links["link"].tolist()[:2] == ["h0->edge0_0", "edge0_0->h0"]


def test_parking_lot_ps_is_max_min(trace16):
    """ps on the parking lot against max-min fairness computed here with networkx paths and
    progressive filling at every event (an independent event loop)."""
    lot = ParkingLot(4, 10.0, 15.0)
    tr = poisson_all_to_all("websearch", 0.6, 4, 10.0, 150, seed=9)
    got = simulate(tr, lot, "ps").flows["fct_s"].to_numpy()
    # The reference: each flow's links from the line's geometry.
    cap = {}
    for i in range(4):
        cap[("up", i)] = cap[("down", i)] = 10e9 / 8
    for i in range(3):
        cap[("r", i)] = cap[("l", i)] = 15e9 / 8

    def links(s: int, d: int) -> list[tuple[str, int]]:
        mid = [("r", i) for i in range(s, d)] if s < d else [("l", i) for i in range(d, s)]
        return [("up", s), *mid, ("down", d)]

    arr, src, dst = tr["arrival_s"].to_numpy(), tr["src"].to_numpy(), tr["dst"].to_numpy()
    left = tr["size_bytes"].to_numpy().astype(float).copy()
    finish = np.full(len(tr), np.nan)
    t, nxt, active = 0.0, 0, []
    while nxt < len(tr) or active:
        # max-min rates by progressive filling
        rate, frozen, res = {}, set(), dict(cap)
        while len(frozen) < len(active):
            counts: dict = {}
            for f in active:
                if f not in frozen:
                    for link in links(src[f], dst[f]):
                        counts[link] = counts.get(link, 0) + 1
            inc = min(res[link] / c for link, c in counts.items())
            for f in active:
                if f not in frozen:
                    rate[f] = rate.get(f, 0.0) + inc
                    for link in links(src[f], dst[f]):
                        res[link] -= inc
            full = {link for link in counts if res[link] <= 1e-9 * cap[link]}
            frozen |= {f for f in active if f not in frozen and any(link in full for link in links(src[f], dst[f]))}
        t_done = min((t + left[f] / rate[f] for f in active), default=np.inf)
        t_arr = arr[nxt] if nxt < len(tr) else np.inf
        t_new = min(t_done, t_arr)
        for f in active:
            left[f] -= rate[f] * (t_new - t)
        t = t_new
        done = [f for f in active if left[f] <= 1e-6]
        for f in done:
            finish[f] = t
        active = [f for f in active if f not in done]
        while nxt < len(tr) and arr[nxt] <= t:
            active.append(nxt)
            nxt += 1
    np.testing.assert_allclose(got, finish - arr, rtol=1e-6)


def test_graph_errors_name_what_is_wrong():
    g = star(3)
    with pytest.raises(ValueError, match="host 1 is 'nope', which is not a node"):
        from_networkx(g, ["h0", "nope"])
    with pytest.raises(ValueError, match="node 'h0' is listed as host 0 and host 1"):
        from_networkx(g, ["h0", "h0"])
    bad = star(3)
    del bad["h1"]["sw"]["gbps"]
    with pytest.raises(ValueError, match=r"edge \('sw', 'h1'\) has no 'gbps' attribute"):
        from_networkx(bad, ["h0", "h1"])
    bad = star(3)
    bad["h1"]["sw"]["gbps"] = -1
    with pytest.raises(ValueError, match="rates must be positive"):
        from_networkx(bad, ["h0", "h1"])
    with pytest.raises(ValueError, match="weights are integers from 1 to 2"):
        g2 = star(3)
        nx.set_edge_attributes(g2, 1.5, "w")
        from_networkx(g2, ["h0", "h1"], weight="w")
    split = star(2)
    split.add_edge("h9", "other", gbps=10.0)
    with pytest.raises(ValueError, match="no path from host 0 \\(node 'h0'\\) to host 2 \\(node 'h9'\\)"):
        from_networkx(split, ["h0", "h1", "h9"])
    # Hosts do not forward: a line of hosts is not a fabric.
    line = nx.path_graph(["a", "b", "c"])
    nx.set_edge_attributes(line, 10.0, "gbps")
    with pytest.raises(ValueError, match="no path"):
        from_networkx(line, ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"host out of range \(hosts=3"):
        simulate(poisson_all_to_all("websearch", 0.5, 4, 10.0, 20, seed=0), from_networkx(star(3), ["h0", "h1", "h2"]))


def test_directed_graph_gives_asymmetric_links():
    g = nx.DiGraph()
    g.add_edge("a", "s", gbps=10.0)
    g.add_edge("s", "a", gbps=1.0)
    g.add_edge("b", "s", gbps=10.0)
    g.add_edge("s", "b", gbps=10.0)
    t = from_networkx(g, ["a", "b"])
    assert t.n_links == 4
    import pandas as pd
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e6, 1e6]})
    f = simulate(tr, t, "ps").flows
    # a->b at 10 Gbps, b->a through the 1 Gbps link into a: ten times slower.
    assert f["fct_s"].iloc[1] == pytest.approx(10 * f["fct_s"].iloc[0], rel=1e-12)


def test_graph_pickles_and_is_deterministic(trace16):
    t = FatTree(4, ecmp_seed=3)
    u = pickle.loads(pickle.dumps(t))
    assert repr(u) == repr(t) and u.link_names == t.link_names
    a = simulate(trace16, t, "srpt").flows["finish_s"].to_numpy()
    b = simulate(trace16, u, "srpt").flows["finish_s"].to_numpy()
    assert np.array_equal(a, b)
    c = simulate(trace16, FatTree(4, ecmp_seed=4), "srpt").flows["finish_s"].to_numpy()
    assert not np.array_equal(a, c)  # another ECMP seed, other paths


@pytest.mark.parametrize("env_id", ["flowsched/TokenScheduling-v1", "flowsched/SwitchScheduling-v1"])
def test_envs_take_a_graph(env_id):
    import gymnasium as gym

    kwargs = {"topology": ParkingLot(11)} if "Token" in env_id else {"topology": FatTree(4)}
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    for _ in range(20):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            break
    env.close()


@pytest.mark.parametrize(("choice", "cls", "hosts"), [("parkinglot", ParkingLot, 11), ("fattree", FatTree, 16)])
def test_hydra_topology_group_builds_graphs(choice, cls, hosts):
    import gymnasium as gym
    from hydra import compose, initialize_config_module

    from flowsched.agents.envs import env_kwargs

    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose("train", overrides=[f"topology={choice}", f"env.hosts={hosts}"])
    kw = env_kwargs(cfg)
    assert isinstance(kw["topology"], cls) and kw["topology"].n_hosts == hosts
    env = gym.make(cfg.env.id, **kw)
    env.reset(seed=1)
    env.step(env.action_space.sample())
    env.close()


def test_cli_reads_graph_files(tmp_path, capsys):
    from flowsched.cli import main
    from flowsched.traces import write_trace

    g = star(6)
    for h in range(6):
        g.nodes[f"h{h}"]["host"] = h
    nx.write_graphml(g, tmp_path / "star.graphml")
    tr = poisson_all_to_all("websearch", 0.5, 6, 10.0, 200, seed=2)
    write_trace(tr, tmp_path / "t.csv")
    out = {}
    for topo in (str(tmp_path / "star.graphml"), "bigswitch"):
        assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", topo, "--scheduler", "srpt",
                     "--out", str(tmp_path / "f.csv")]) == 0
        out[topo] = pd.read_csv(tmp_path / "f.csv")["fct_s"].to_numpy()
        capsys.readouterr()
    np.testing.assert_allclose(out["bigswitch"], out[str(tmp_path / "star.graphml")], rtol=1e-9)
    del g.nodes["h3"]["host"]
    nx.write_graphml(g, tmp_path / "bad.graphml")
    assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / "bad.graphml")]) != 0
    assert "host 3 is not among them" in capsys.readouterr().err
    assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", "ring"]) != 0
    assert "--topology: expected bigswitch, leafspine, fattree, parkinglot" in capsys.readouterr().err


def test_per_link_delays_add_to_the_path_delay():
    """Edge delay_us adds to FCT and ideal FCT in the simulator and in every env's results."""
    g = nx.Graph()
    for h in range(4):
        g.add_edge(f"h{h}", "s0" if h < 2 else "s1", gbps=10.0, delay_us=1.0)
    g.add_edge("s0", "s1", gbps=10.0, delay_us=50.0)  # a long cable between two rooms
    t = from_networkx(g, ["h0", "h1", "h2", "h3"])
    tr = pd.DataFrame({"arrival_s": [0.0, 1.0], "src": [0, 0], "dst": [1, 3], "size_bytes": [1250.0, 1250.0]})
    f = simulate(tr, t, "ps", delay_us=0.5).flows
    # h0 -> h1: 2 links (1 us each + 0.5 per hop); h0 -> h3: 3 links (1 + 50 + 1 us + 3 x 0.5)
    np.testing.assert_allclose(f["path_delay_s"], [3e-6, 53.5e-6], rtol=1e-12)
    np.testing.assert_allclose(f["fct_s"], 1e-6 + f["path_delay_s"], rtol=1e-9)  # 1250 B at 10 Gbps = 1 us
    np.testing.assert_allclose(f["ideal_fct_s"], f["fct_s"], rtol=1e-9)
    np.testing.assert_allclose(t.path_delay_s(tr["src"], tr["dst"], 0.5), f["path_delay_s"], rtol=0, atol=0)
    bad = g.copy()
    del bad["s0"]["s1"]["delay_us"]
    with pytest.raises(ValueError, match=r"has no 'delay_us' attribute but other edges do"):
        from_networkx(bad, ["h0", "h1", "h2", "h3"])
    bad["s0"]["s1"]["delay_us"] = -1.0
    with pytest.raises(ValueError, match="delays are finite microseconds >= 0"):
        from_networkx(bad, ["h0", "h1", "h2", "h3"])
    u = pickle.loads(pickle.dumps(t))
    np.testing.assert_array_equal(u.link_delay_us, t.link_delay_us)


@pytest.mark.parametrize(("scheduler", "transport"), [("ps", "dctcp"), ("srpt", "pfabric")])
def test_packet_model_on_a_graph_equals_the_native_big_switch(scheduler, transport):
    tr = poisson_all_to_all("websearch", 0.6, 8, 10.0, 150, seed=4)
    g = from_networkx(star(8), [f"h{h}" for h in range(8)])
    a = simulate(tr, g, scheduler, model="packet", transport=transport, delay_us=0.2).flows
    b = simulate(tr, BigSwitch(8, 10.0), scheduler, model="packet", transport=transport, delay_us=0.2).flows
    np.testing.assert_array_equal(a["fct_s"].to_numpy(), b["fct_s"].to_numpy())


def test_packet_model_adds_a_graphs_link_delays():
    """One flow alone: its packet FCT grows by exactly the one-way delays added on its path."""
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [3], "size_bytes": [14600.0]})

    def fct(extra_us: float) -> float:
        g = nx.Graph()
        for h in range(4):
            g.add_edge(f"h{h}", "s0" if h < 2 else "s1", gbps=10.0, delay_us=0.0)
        g.add_edge("s0", "s1", gbps=10.0, delay_us=extra_us)
        r = simulate(tr, from_networkx(g, ["h0", "h1", "h2", "h3"]), "ps", model="packet", transport="tcp")
        return float(r.flows["fct_s"].iloc[0]), float(r.flows["path_delay_s"].iloc[0])

    (f0, d0), (f1, d1) = fct(0.0), fct(5.0)
    assert d0 == 0.0 and d1 == pytest.approx(5e-6, rel=1e-12)
    # 10 packets, initial window 10: one window, so the data crosses the long link once.
    assert f1 - f0 == pytest.approx(5e-6, rel=1e-9)



def test_packet_model_limits_on_graphs():
    """Routes beyond 255 links and link delays beyond 1 s are refused by the packet model
    (a packet counts hops in a byte; times are u64 picoseconds), not looped or wrapped."""
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [299], "size_bytes": [3000.0]})
    with pytest.raises(ValueError, match="route has 301 links; the packet model takes routes of at most 255"):
        simulate(tr, ParkingLot(300), "ps", model="packet")
    assert simulate(tr, ParkingLot(300), "ps").flows["fct_s"].notna().all()  # the fluid model takes it
    g = star(2)
    nx.set_edge_attributes(g, 1e14, "delay_us")
    t = from_networkx(g, ["h0", "h1"])
    two = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [3000.0]})
    with pytest.raises(ValueError, match="at most 1 s per link"):
        simulate(two, t, "ps", model="packet")
    with pytest.raises(ValueError, match="weights are integers from 1 to 2"):
        Graph(["a", "b", "s"], [0, 1], [0, 2, 1, 2], [2, 0, 2, 1], [10.0] * 4, [2**32 + 1, 1, 1, 1])


def test_packet_queue_samples_name_a_graphs_links():
    t = ParkingLot(3)
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [2, 2], "size_bytes": [3e5, 3e5]})
    r = simulate(tr, t, "ps", model="packet", queue_sample_us=5.0, sample_links=["s1->s2", "s2->h2"])
    assert set(r.queue_samples["link"]) == {"s1->s2", "s2->h2"}
    with pytest.raises(ValueError, match="up0"):
        simulate(tr, t, "ps", model="packet", queue_sample_us=5.0, sample_links=["up0"])


def test_cli_refuses_rates_with_a_graph_file(tmp_path, capsys):
    from flowsched.cli import main
    from flowsched.traces import write_trace

    g = star(3)
    for h in range(3):
        g.nodes[f"h{h}"]["host"] = h
    nx.write_graphml(g, tmp_path / "star.graphml")
    write_trace(poisson_all_to_all("websearch", 0.5, 3, 10.0, 20, seed=2), tmp_path / "t.csv")
    assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / "star.graphml"),
                 "--core-gbps", "40"]) != 0
    assert "do not apply to a graph file" in capsys.readouterr().err


def test_parallel_links_of_a_multigraph_have_names_of_their_own():
    """Two links between the same switches are told apart by their networkx key, in the
    results' link table and wherever a link is named (the packet model's sample_links)."""
    g = nx.MultiGraph()
    for h in ("h0", "h1"):
        g.add_edge(h, "s", gbps=10)
    g.add_edge("s", "t", gbps=10)
    g.add_edge("s", "t", gbps=10)
    g.add_edge("t", "h2", gbps=10)
    topo = flowsched.topology.from_networkx(g, hosts=["h0", "h1", "h2"])
    assert len(set(topo.link_names)) == topo.n_links
    assert {"s->t[0]", "s->t[1]", "t->s[0]", "t->s[1]", "h0->s", "t->h2"} <= set(topo.link_names)
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [2, 2], "size_bytes": [1e6, 1e6]})
    links = flowsched.simulate(tr, topo, "ps").links.set_index("link")
    parallel = links.loc[["s->t[0]", "s->t[1]"], "bytes"]
    assert parallel.sum() == 2e6  # both flows cross one of the two
    r = flowsched.simulate(tr, topo, "ps", model="packet", queue_sample_us=10, sample_links=["s->t[1]"])
    assert set(r.queue_samples["link"]) == {"s->t[1]"}
    g.add_edge("s", "t", gbps=0)
    with pytest.raises(ValueError, match=r"edge \('s', 't', key=2\) has gbps = 0"):
        flowsched.topology.from_networkx(g, hosts=["h0", "h1", "h2"])


def test_a_directed_graph_whose_ways_back_use_other_switches():
    # a -> s -> b and b -> t -> a: every host reaches the other; refused as "no path from
    # host 0 (node 'a') to host 0 (node 'a')" (the check asked a to reach the switch before itself)
    import networkx as nx
    import pandas as pd

    g = nx.DiGraph()
    for u, v in (("a", "s"), ("s", "b"), ("b", "t"), ("t", "a")):
        g.add_edge(u, v, gbps=10.0)
    topo = flowsched.from_networkx(g, ["a", "b"])
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e6, 1e6]})
    assert flowsched.simulate(tr, topo, "ps").flows["fct_s"].tolist() == pytest.approx([8e-4, 8e-4], rel=1e-12)
    # a host that cannot reach another is still refused, naming the two (c: from s and
    # from t, but s leads only to b)
    g.add_edge("c", "s", gbps=10.0)
    g.add_edge("t", "c", gbps=10.0)
    with pytest.raises(ValueError, match=r"no path from host 0 \(node .*\) to host 2"):
        flowsched.from_networkx(g, ["a", "b", "c"])
