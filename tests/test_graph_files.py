"""Graph topology files (``read_graph``: GraphML and networkx node-link JSON): a malformed
file, a bad value or a structure that networkx would smooth over (a node made up, two nodes
or two edges merged, a list ignored) is a ValueError naming the file and the node, edge or
attribute; valid files read exactly as ``from_networkx`` builds the graph they came from."""
from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

import flowsched
from flowsched.cli import main
from flowsched.topology import from_networkx, read_graph
from flowsched.workloads import poisson_all_to_all

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
        '<key id="h" for="node" attr.name="host" attr.type="int"/>\n')


def graphml(tmp_path, body, keys='<key id="g" for="edge" attr.name="gbps" attr.type="double"/>',
            edgedefault="undirected", name="g.graphml"):
    """A GraphML file of ``body`` (nodes and edges) with a host key ``h`` and ``keys``."""
    path = tmp_path / name
    path.write_text(f'{HEAD}{keys}\n<graph edgedefault="{edgedefault}">\n{body}\n</graph>\n</graphml>\n')
    return path


# hosts a, b under switch s
NODES = '<node id="a"><data key="h">0</data></node><node id="b"><data key="h">1</data></node><node id="s"/>'
EDGES = ('<edge source="a" target="s"><data key="g">10</data></edge>'
         '<edge source="b" target="s"><data key="g">10</data></edge>')


def node_link(tmp_path, nodes=None, links=None, name="g.json", **top):
    """A node-link JSON file; by default hosts h0, h1 under switch s."""
    data = {"directed": False, "multigraph": False, "graph": {}, **top,
            "nodes": [{"id": "h0", "host": 0}, {"id": "h1", "host": 1}, {"id": "s"}] if nodes is None else nodes,
            "links": [{"source": "h0", "target": "s", "gbps": 10}, {"source": "h1", "target": "s", "gbps": 10}]
            if links is None else links}
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def star(cls=nx.Graph, hosts=4):
    g = cls()
    for h in range(hosts):
        g.add_node(f"h{h}", host=h)
        g.add_edge(f"h{h}", "s", gbps=10.0)
        if g.is_directed():
            g.add_edge("s", f"h{h}", gbps=10.0)
    return g


# 1. malformed files: a ValueError naming the file, never a parser's traceback

@pytest.mark.parametrize("text", ["", "<graphml><graph><node id='a'/></grap", '{"nodes": []}'])
def test_graphml_not_xml(tmp_path, text):
    path = tmp_path / "bad.graphml"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"bad\.graphml: not a GraphML file \(not well-formed XML: "):
        read_graph(path)


def test_graphml_without_a_graph(tmp_path):
    path = tmp_path / "bad.graphml"
    path.write_text('<?xml version="1.0"?><svg><g/></svg>')
    with pytest.raises(ValueError, match=r"bad\.graphml: not a GraphML file \(no <graph> element"):
        read_graph(path)


@pytest.mark.parametrize("text, needle", [
    ("[1, 2, 3]", "the file holds an array"),
    ('{"nodes": {"a": 1}, "links": []}', "'nodes' is an object"),
    ('"graph"', "the file holds a string"),
])
def test_node_link_not_an_object_of_lists(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"bad\.json: node-link JSON needs an object with a 'nodes' array") as e:
        read_graph(path)
    assert needle in str(e.value)


@pytest.mark.parametrize("nodes, links, needle", [
    ([1, {"id": "h1"}], [], "nodes[0] is a number (1), not an object with an 'id'"),
    ([{"id": "h0", "host": 0}, {"host": 1}], [], "nodes[1] has no 'id'"),
    ([{"id": {"x": 1}}], [], "nodes[0] has id {'x': 1}"),
    (None, [["h0", "s"]], "links[0] is an array (['h0', 's']), not an object with a 'source' and a 'target'"),
    (None, [{"source": "h0", "gbps": 10}], "links[0] has no 'target'"),
])
def test_node_link_bad_items(tmp_path, nodes, links, needle):
    with pytest.raises(ValueError) as e:
        read_graph(node_link(tmp_path, nodes, links))
    assert needle in str(e.value) and "g.json: " in str(e.value)


@pytest.mark.parametrize("kind, text, needle", [
    ("int", "abc",
     "edge ('a', 's') has gbps = 'abc', which is not a GraphML int (the type that <key id='g'> declares)"),
    ("double", "ten", "edge ('a', 's') has gbps = 'ten', which is not a GraphML double"),
    ("boolean", "yes", "edge ('a', 's') has gbps = 'yes', which is not a GraphML boolean"),
])
def test_graphml_bad_typed_value(tmp_path, kind, text, needle):
    keys = f'<key id="g" for="edge" attr.name="gbps" attr.type="{kind}"/>'
    path = graphml(tmp_path, NODES + f'<edge source="a" target="s"><data key="g">{text}</data></edge>', keys)
    with pytest.raises(ValueError) as e:
        read_graph(path)
    assert str(e.value).startswith(f"{path}: {needle}")


def test_graphml_bad_host_value_and_keys(tmp_path):
    path = graphml(tmp_path, '<node id="a"><data key="h">zero</data></node>' + NODES[NODES.index("</node>") + 7:])
    with pytest.raises(ValueError, match=r"node 'a' has host = 'zero', which is not a GraphML int"):
        read_graph(path)
    path = graphml(tmp_path, NODES, '<key id="g" for="edge" attr.name="gbps" attr.type="decimal"/>')
    with pytest.raises(ValueError, match=r"<key id='g'> \('gbps'\) has attr.type='decimal'; GraphML's types are"):
        read_graph(path)
    path = graphml(tmp_path, NODES + '<edge source="a" target="s"><data key="zz">1</data></edge>')
    with pytest.raises(ValueError, match=r"edge \('a', 's'\) has <data key='zz'>, but no <key> has that id"):
        read_graph(path)
    path = graphml(tmp_path, NODES, '<key id="g" for="edge" attr.name="gbps" attr.type="double"><default/></key>')
    with pytest.raises(ValueError, match=r"the <default> of <key id='g'> \('gbps'\) is empty, not a GraphML double"):
        read_graph(path)


@pytest.mark.parametrize("attr", ["gbps", "delay_us"])
def test_node_link_integers_beyond_floats(tmp_path, attr):
    """An integer rate or delay past 2**64 is a number like any other: read when a float can
    hold it (numpy's isfinite failed on it), refused naming the edge when it cannot."""
    links = [{"source": "h0", "target": "s", "gbps": 10, "delay_us": 1},
             {"source": "h1", "target": "s", "gbps": 10, "delay_us": 1}]
    links[1][attr] = 2**70
    topo = read_graph(node_link(tmp_path, links=links))
    assert getattr(topo, "link_gbps" if attr == "gbps" else "link_delay_us")[2] == float(2**70)
    links[1][attr] = 10**400
    with pytest.raises(ValueError, match=rf"g\.json: from_networkx: edge \('h1', 's'\) has {attr} = an integer near "
                                         r"10\*\*400; "):
        read_graph(node_link(tmp_path, links=links))


def test_from_networkx_integer_beyond_floats():
    g = star()
    g.edges["h0", "s"]["gbps"] = 2**70
    assert from_networkx(g, [f"h{h}" for h in range(4)]).link_gbps[0] == float(2**70)
    g.edges["h0", "s"]["gbps"] = 10**400
    with pytest.raises(ValueError, match=r"edge \('h0', 's'\) has gbps = an integer near 10\*\*400; rates must be"):
        from_networkx(g, [f"h{h}" for h in range(4)])


# 2. no hosts: say how a file marks them, and name the attributes that look like it

def test_no_hosts_says_how_hosts_are_marked(tmp_path):
    g = star()
    for h in range(4):
        del g.nodes[f"h{h}"]["host"]
    nx.write_graphml(g, tmp_path / "g.graphml")
    with pytest.raises(ValueError, match=r"g\.graphml: needs at least 2 hosts, got 0: in a graph file, the hosts are "
                                         r"the nodes with an integer 'host' attribute \(the host's index, 0\.\.n-1\)"):
        read_graph(tmp_path / "g.graphml")


@pytest.mark.parametrize("attr", ["hosts", "Host", "host_id"])
@pytest.mark.parametrize("suffix", ["graphml", "json"])
def test_near_miss_host_attribute_named(tmp_path, attr, suffix):
    g = star()
    for h in range(4):
        g.nodes[f"h{h}"][attr] = g.nodes[f"h{h}"].pop("host")
    path = tmp_path / f"g.{suffix}"
    if suffix == "graphml":
        nx.write_graphml(g, path)
    else:
        path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    with pytest.raises(ValueError, match=rf"needs at least 2 hosts, got 0: .*\(node 'h0' has an attribute '{attr}': "
                                         r"not read; hosts are marked by the node attribute 'host'"):
        read_graph(path)


def test_near_miss_named_when_a_host_is_missing(tmp_path):
    g = star()
    g.nodes["h2"]["Host"] = g.nodes["h2"].pop("host")
    nx.write_graphml(g, tmp_path / "g.graphml")
    with pytest.raises(ValueError, match=r"3 nodes have a host attribute, but host 2 is not among them .*"
                                         r"node 'h2' has an attribute 'Host'"):
        read_graph(tmp_path / "g.graphml")


def test_graph_attribute_hosts_named(tmp_path):
    g = star()
    for h in range(4):
        del g.nodes[f"h{h}"]["host"]
    g.graph["hosts"] = ["h0", "h1", "h2", "h3"]
    (tmp_path / "g.json").write_text(json.dumps(nx.node_link_data(g, edges="links")))
    with pytest.raises(ValueError, match=r"the graph has an attribute 'hosts': not read"):
        read_graph(tmp_path / "g.json")


def test_string_host_index_hint(tmp_path):
    keys = '<key id="g" for="edge" attr.name="gbps" attr.type="double"/>'
    path = tmp_path / "g.graphml"
    path.write_text(graphml(tmp_path, NODES + EDGES, keys).read_text().replace('attr.type="int"', 'attr.type="string"'))
    with pytest.raises(ValueError, match=r"node 'a' has host = '0'; .*declare the GraphML <key> of 'host' with "
                                         r"attr\.type=\"int\""):
        read_graph(path)


# 3. structure that networkx would smooth over

def test_edge_to_undeclared_node(tmp_path):
    path = node_link(tmp_path, links=[{"source": "h0", "target": "s", "gbps": 10},
                                      {"source": "h1", "target": "s2", "gbps": 10}])
    with pytest.raises(ValueError, match=r"g\.json: links\[1\] has target 's2', which is not the id of a node in "
                                         r"'nodes' \(networkx would add it as a switch\)"):
        read_graph(path)
    path = graphml(tmp_path, NODES + EDGES.replace('source="b" target="s"', 'source="b" target="zz"'))
    with pytest.raises(ValueError, match=r"g\.graphml: edge \('b', 'zz'\) ends at node 'zz', which no <node> "
                                         "declares"):
        read_graph(path)


def test_duplicate_node_ids(tmp_path):
    path = node_link(tmp_path, nodes=[{"id": "h0", "host": 0}, {"id": "h1", "host": 1}, {"id": "s"},
                                      {"id": "h0", "host": 2}])
    with pytest.raises(ValueError, match=r"g\.json: nodes\[0\] and nodes\[3\] both have id 'h0'; networkx would merge "
                                         "them"):
        read_graph(path)
    path = node_link(tmp_path, nodes=[{"id": 1, "host": 0}, {"id": 1.0, "host": 1}, {"id": "s"}], links=[])
    with pytest.raises(ValueError, match=r"\(1 and 1\.0 are one node to networkx\)"):
        read_graph(path)
    path = graphml(tmp_path, NODES + '<node id="a"/>' + EDGES)
    with pytest.raises(ValueError, match=r"g\.graphml: node 'a' is declared twice \(networkx would merge"):
        read_graph(path)


def test_duplicate_edge_in_a_simple_graph(tmp_path):
    links = [{"source": "h0", "target": "s", "gbps": 10}, {"source": "h1", "target": "s", "gbps": 10},
             {"source": "s", "target": "h0", "gbps": 1}]
    with pytest.raises(ValueError, match=r"g\.json: links\[0\] \('h0' -> 's'\) and links\[2\] \('s' -> 'h0'\) join "
                                         r"the same nodes, and the file says \"multigraph\": false"):
        read_graph(node_link(tmp_path, links=links))
    # a directed graph's s -> h0 is another link; a multigraph's, a parallel one
    topo = read_graph(node_link(tmp_path, links=links + [{"source": "s", "target": "h1", "gbps": 10}], directed=True))
    assert topo.link_names == ("h0->s", "h1->s", "s->h0", "s->h1")
    topo = read_graph(node_link(tmp_path, links=links, multigraph=True))
    assert topo.n_links == 6 and "h0->s[1]" in topo.link_names


def test_same_key_twice_in_a_multigraph(tmp_path):
    links = [{"source": "h0", "target": "s", "gbps": 10, "key": 0}, {"source": "h1", "target": "s", "gbps": 10},
             {"source": "s", "target": "h0", "gbps": 1, "key": 0}]
    with pytest.raises(ValueError, match=r"links\[0\] \('h0' -> 's'\) and links\[2\] \('s' -> 'h0'\) join the same "
                                         "nodes with the same edge key 0; networkx would merge them"):
        read_graph(node_link(tmp_path, links=links, multigraph=True))
    # an explicit key that networkx gave to an earlier edge without one
    links = [{"source": "h0", "target": "s", "gbps": 10}, {"source": "h1", "target": "s", "gbps": 10},
             {"source": "h0", "target": "s", "gbps": 1, "key": 0}]
    with pytest.raises(ValueError, match=r"same edge key 0"):
        read_graph(node_link(tmp_path, links=links, multigraph=True))
    body = NODES + EDGES + '<edge id="e1" source="s" target="b"/><edge id="e1" source="b" target="s"/>'
    with pytest.raises(ValueError, match=r"edge \('s', 'b'\) and edge \('b', 's'\) join the same nodes with the same "
                                         "edge id 'e1'"):
        read_graph(graphml(tmp_path, body))


def test_links_and_edges_both_given(tmp_path):
    path = node_link(tmp_path, edges=[{"source": "h1", "target": "s", "gbps": 10}],
                     links=[{"source": "h0", "target": "s", "gbps": 10}])
    with pytest.raises(ValueError, match=r"g\.json: has both 'links' and 'edges'; networkx reads only one"):
        read_graph(path)
    data = json.loads(path.read_text())
    del data["links"], data["edges"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"the file has neither 'links' nor 'edges'"):
        read_graph(path)


@pytest.mark.parametrize("flag", ["directed", "multigraph"])
def test_node_link_flags_are_booleans(tmp_path, flag):
    with pytest.raises(ValueError, match=rf"g\.json: '{flag}' is 'false'; it must be true or false"):
        read_graph(node_link(tmp_path, **{flag: "false"}))


def test_graphml_structure(tmp_path):
    two = f'{HEAD}<key id="g" for="edge" attr.name="gbps" attr.type="double"/>' + \
        f'<graph edgedefault="undirected">{NODES}{EDGES}</graph>' * 2 + "</graphml>"
    (tmp_path / "two.graphml").write_text(two)
    with pytest.raises(ValueError, match=r"two\.graphml: 2 <graph> elements; a topology file holds one graph"):
        read_graph(tmp_path / "two.graphml")
    nested = NODES + '<node id="t"><graph edgedefault="undirected"><node id="c"/></graph></node>' + EDGES
    with pytest.raises(ValueError, match=r"node 't' holds a nested <graph>, which networkx does not read"):
        read_graph(graphml(tmp_path, nested))
    with pytest.raises(ValueError, match=r"<node> number 4 has no id"):
        read_graph(graphml(tmp_path, NODES + "<node/>" + EDGES))
    with pytest.raises(ValueError, match=r"edge \('b', 's'\) has directed='true' in a graph whose edgedefault is "
                                         "undirected"):
        read_graph(graphml(tmp_path, NODES + EDGES.replace('source="b"', 'directed="true" source="b"')))
    with pytest.raises(ValueError, match=r"edge \('a', 's'\) has two <data> for 'gbps'"):
        read_graph(graphml(tmp_path, NODES + EDGES.replace("</data></edge>", '</data><data key="g">1</data></edge>')))


def test_graphml_defaults(tmp_path):
    """A key's <default> is the value of every edge without its own (GraphML's rule; networkx
    only records it); a default host index would make every other node that host."""
    keys = ('<key id="g" for="edge" attr.name="gbps" attr.type="double"><default>10</default></key>'
            '<key id="d" for="edge" attr.name="delay_us" attr.type="double"><default>2.5</default></key>')
    body = NODES + '<edge source="a" target="s"/><edge source="b" target="s"><data key="g">40</data></edge>'
    topo = read_graph(graphml(tmp_path, body, keys))
    assert topo.link_gbps.tolist() == [10.0, 10.0, 40.0, 40.0]
    assert topo.link_delay_us.tolist() == [2.5] * 4
    keys = ('<key id="g" for="edge" attr.name="gbps" attr.type="double"/>'
            '<key id="x" for="node" attr.name="host" attr.type="int"><default>0</default></key>')
    with pytest.raises(ValueError, match=r"<key id='x'> \('host'\) has a <default>: every node without its own 'host' "
                                         "data would be that host"):
        read_graph(graphml(tmp_path, NODES + EDGES, keys))


# 4. a rate whose bytes/s overflow

def test_rate_past_float_bytes(tmp_path):
    g = star()
    hosts = [f"h{h}" for h in range(4)]
    g.edges["h0", "s"]["gbps"] = 1.7e299
    assert from_networkx(g, hosts).link_gbps[0] == 1.7e299
    g.edges["h0", "s"]["gbps"] = 1e300  # 1e300 * 1e9 / 8 bytes/s is inf (the simulator's capacity)
    with pytest.raises(ValueError, match=r"from_networkx: edge \('h0', 's'\) has gbps = 1e\+300; rates must be "
                                         r"positive finite Gbps, at most about 1\.7e299"):
        from_networkx(g, hosts)
    (tmp_path / "g.json").write_text(json.dumps(nx.node_link_data(g, edges="links")))
    with pytest.raises(ValueError, match=r"g\.json: from_networkx: edge \('h0', 's'\) has gbps = 1e\+300"):
        read_graph(tmp_path / "g.json")


# 5. suffixes in any case

@pytest.mark.parametrize("suffix", [".GRAPHML", ".GraphML", ".JSON", ".Json"])
def test_suffix_any_case(tmp_path, suffix):
    g = star()
    path = tmp_path / f"g{suffix}"
    if suffix.lower() == ".graphml":
        nx.write_graphml(g, path)
    else:
        path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    assert read_graph(path).link_names == from_networkx(g, [f"h{h}" for h in range(4)]).link_names


# the command line: one line, exit status 2

@pytest.mark.parametrize("name, text, needle", [
    ("e.graphml", "", "e.graphml: not a GraphML file"),
    ("l.json", "[1, 2, 3]", "l.json: node-link JSON needs an object"),
])
def test_cli_one_line(tmp_path, capsys, name, text, needle):
    from flowsched.traces import write_trace

    write_trace(poisson_all_to_all("websearch", 0.5, 4, 10.0, 50, seed=1), tmp_path / "t.csv")
    (tmp_path / name).write_text(text)
    capsys.readouterr()
    assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / name)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("flowsched simulate: error: ") and needle in err


# round trips: graph -> file -> graph simulates bit for bit as the graph

def leafspine(cls):
    g = cls()
    hosts = []
    for t in range(2):
        for j in range(3):
            h = f"h{3 * t + j}"
            hosts.append(h)
            g.add_node(h, host=3 * t + j)
            g.add_edge(h, f"tor{t}", gbps=10, delay_us=0.5)  # an int rate beside float ones
            if g.is_directed():
                g.add_edge(f"tor{t}", h, gbps=10.0, delay_us=1 / 3)
        for s in range(2):
            g.add_edge(f"tor{t}", f"spine{s}", gbps=40 / 3, delay_us=float(s))
            if g.is_directed():
                g.add_edge(f"spine{s}", f"tor{t}", gbps=7.1, delay_us=0.25)
    if g.is_multigraph():
        g.add_edge("tor0", "spine0", gbps=10.0, delay_us=0.0)
        g.add_edge("tor1", "spine1", key="backup", gbps=2.5, delay_us=0.75)
    return g, hosts


@pytest.mark.parametrize("cls", [nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph])
def test_round_trip_bit_identical(tmp_path, cls):
    g, hosts = leafspine(cls)
    ref = from_networkx(g, hosts)
    tr = poisson_all_to_all("websearch", 0.6, len(hosts), 10.0, 300, seed=3)
    runs = {s: flowsched.simulate(tr, ref, s, delay_us=1.0) for s in ("ps", "srpt")}
    nx.write_graphml(g, tmp_path / "g.graphml")
    (tmp_path / "links.json").write_text(json.dumps(nx.node_link_data(g, edges="links")))
    (tmp_path / "edges.json").write_text(json.dumps(nx.node_link_data(g, edges="edges")))
    for name in ("g.graphml", "links.json", "edges.json"):
        topo = read_graph(tmp_path / name)
        assert topo.nodes == ref.nodes and topo.hosts == ref.hosts and topo.link_names == ref.link_names, name
        for attr in ("link_from", "link_to", "link_gbps", "link_weight", "link_delay_us"):
            assert np.array_equal(getattr(topo, attr), getattr(ref, attr)), (name, attr)
        for s, want in runs.items():
            got = flowsched.simulate(tr, topo, s, delay_us=1.0)
            cols = ["finish_s", "fct_s", "ideal_fct_s"]
            assert np.array_equal(got.flows[cols].to_numpy(), want.flows[cols].to_numpy()), (name, s)


def test_the_cli_takes_a_graph_file_suffix_in_any_case(tmp_path):
    import networkx as nx

    from flowsched.cli import main
    g = nx.Graph()
    g.add_node("a", host=0)
    g.add_node("b", host=1)
    g.add_node("s")
    g.add_edge("a", "s", gbps=10.0)
    g.add_edge("b", "s", gbps=10.0)
    nx.write_graphml(g, tmp_path / "g.GRAPHML")
    (tmp_path / "t.csv").write_text("arrival_s,src,dst,size_bytes\n0,0,1,1000\n")
    assert main(["simulate", "--trace", str(tmp_path / "t.csv"), "--topology", str(tmp_path / "g.GRAPHML"), "-q"]) == 0
