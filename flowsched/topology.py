"""Fabric topologies.

Link rates are in Gbps here (``link_gbps``); the simulator works in bytes/s.
``native_config()`` gives a topology's native form: the keyword arguments that describe it
to the Rust core (``flowsched._fabric``), for code that builds native objects directly.

:class:`BigSwitch` and :class:`LeafSpine` are the two built-in fabrics with closed-form
routes. Any other fabric is a :class:`Graph`, made from a networkx graph with
:func:`from_networkx`, or by :class:`FatTree` and :class:`ParkingLot`.
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flowsched.traces import MAX_HOSTS


def _host_rates(hosts: int, rate: float | Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(rate, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(hosts, float(arr))
    if arr.shape != (hosts,):
        raise ValueError(f"{what}: expected one rate or {hosts} per-host rates, got shape {arr.shape}")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        raise ValueError(f"{what}: host {bad[0]} has link rate {arr[bad[0]]!r} Gbps; rates must be positive and finite")
    return arr


@dataclass(frozen=True)
class BigSwitch:
    """A non-blocking switch: every host has one uplink and one downlink.

    Parameters
    ----------
    hosts : number of hosts (>= 2, at most ``flowsched.traces.MAX_HOSTS`` = 2**24).
    link_gbps : one rate for all hosts, or one rate per host (heterogeneous hosts).
    """

    hosts: int
    link_gbps: float | Sequence[float] = 10.0

    def __post_init__(self) -> None:
        if int(self.hosts) != self.hosts or self.hosts < 2:
            raise ValueError(f"BigSwitch: hosts must be an integer >= 2, got {self.hosts!r}")
        if self.hosts > MAX_HOSTS:
            raise ValueError(f"BigSwitch: hosts = {int(self.hosts)} is above the largest fabric flowsched simulates "
                             f"(MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)")
        _host_rates(self.hosts, self.link_gbps, "BigSwitch")

    @property
    def n_hosts(self) -> int:
        return int(self.hosts)

    def host_gbps(self) -> np.ndarray:
        return _host_rates(self.hosts, self.link_gbps, "BigSwitch")

    def native_config(self) -> dict[str, Any]:
        """The keyword arguments that describe this fabric to the native core
        (``flowsched._fabric.Simulator``, ``TokenConfig``, ``SwitchConfig``):
        ``topology="bigswitch"`` and ``host_gbps`` (one rate per host, Gbps)."""
        return {"topology": "bigswitch", "host_gbps": self.host_gbps()}

    _native = native_config  # the old private name, kept for now


@dataclass(frozen=True)
class LeafSpine:
    """A two-tier leaf-spine (Clos) fabric with per-flow ECMP over the spines.

    Host ``h`` sits under ToR ``h // hosts_per_tor``. An inter-ToR flow takes the spine
    chosen by a hash of (flow row, src, dst) seeded with ``ecmp_seed``. The
    pFabric/PIAS/aSCC evaluation fabric is ``LeafSpine(9, 16, 4, 10, 40)``.
    """

    tors: int = 9
    hosts_per_tor: int = 16
    spines: int = 4
    host_gbps: float | Sequence[float] = 10.0
    core_gbps: float = 40.0
    ecmp_seed: int = 0
    _rates: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("tors", "hosts_per_tor", "spines"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"LeafSpine: {name} must be an integer >= 1, got {v!r}")
        if self.tors * self.hosts_per_tor < 2:
            raise ValueError("LeafSpine: needs at least 2 hosts")
        if self.tors * self.hosts_per_tor > MAX_HOSTS:
            raise ValueError(f"LeafSpine: tors x hosts_per_tor = {int(self.tors * self.hosts_per_tor)} hosts is above "
                             "the largest fabric "
                             f"flowsched simulates (MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)")
        if self.tors * self.spines > MAX_HOSTS:
            raise ValueError(f"LeafSpine: tors x spines = {int(self.tors * self.spines)} ToR-spine link pairs is above "
                             f"2**24 = {MAX_HOSTS} (the same bound as MAX_HOSTS)")
        if not (np.isfinite(self.core_gbps) and self.core_gbps > 0):
            raise ValueError(f"LeafSpine: core_gbps must be positive, got {self.core_gbps!r}")
        object.__setattr__(self, "_rates", _host_rates(self.n_hosts, self.host_gbps, "LeafSpine"))

    @property
    def n_hosts(self) -> int:
        return int(self.tors * self.hosts_per_tor)

    def native_config(self) -> dict[str, Any]:
        """The keyword arguments that describe this fabric to the native core
        (``flowsched._fabric.Simulator``, ``TokenConfig``, ``SwitchConfig``):
        ``topology="leafspine"``, ``host_gbps`` (one rate per host, Gbps), ``tors``,
        ``hosts_per_tor``, ``spines``, ``core_gbps`` and ``ecmp_seed``."""
        return {
            "topology": "leafspine",
            "host_gbps": self._rates,
            "tors": int(self.tors),
            "hosts_per_tor": int(self.hosts_per_tor),
            "spines": int(self.spines),
            "core_gbps": float(self.core_gbps),
            "ecmp_seed": int(self.ecmp_seed),
        }

    _native = native_config  # the old private name, kept for now


class Graph:
    """A fabric given as a graph: nodes joined by unidirectional links, with the trace's
    hosts at some of the nodes and switches at every other node.

    Build it with :func:`from_networkx` (or :class:`FatTree`, :class:`ParkingLot`). Routing:
    a flow takes one of the equal-cost shortest paths from its source host to its
    destination host (path length: the sum of the links' integer weights, 1 per link by
    default), chosen by a seeded hash of (flow row, src, dst) uniformly among all of them:
    per-flow ECMP, with the leaf-spine's hash. Hosts never forward: a path enters and leaves
    switches only. The routing tables are built once, in the core, when the graph is made.

    Attributes
    ----------
    nodes : the node labels, in node order.
    hosts : the node index of each host (host ``h`` of a trace is node ``hosts[h]``).
    link_from, link_to : each link's end nodes (indices into ``nodes``).
    link_gbps : each link's rate (Gbps); ``link_weight`` its routing weight (int >= 1).
    link_names : ``"<from label>-><to label>"`` per link (the ``link`` column of
        ``Results.links``).
    link_delay_us : each link's own propagation delay (us), added to a run's ``delay_us``
        per hop in the fixed path delay (zeros when not given).
    ecmp_seed : seeds the per-flow path choice.
    """

    def __init__(
        self,
        nodes: Sequence[Hashable],
        hosts: Sequence[int],
        link_from: Sequence[int] | np.ndarray,
        link_to: Sequence[int] | np.ndarray,
        link_gbps: Sequence[float] | np.ndarray,
        link_weight: Sequence[int] | np.ndarray | None = None,
        ecmp_seed: int = 0,
        link_names: Sequence[str] | None = None,
        link_delay_us: Sequence[float] | None = None,
    ) -> None:
        from flowsched import _fabric

        self.nodes: tuple[Hashable, ...] = tuple(nodes)
        self.hosts: tuple[int, ...] = tuple(int(h) for h in hosts)
        self.link_from = np.asarray(link_from, np.int64)
        self.link_to = np.asarray(link_to, np.int64)
        self.link_gbps = np.asarray(link_gbps, np.float64)
        n = len(self.link_from)
        self.link_weight = np.ones(n, np.int64) if link_weight is None else np.asarray(link_weight, np.int64)
        self.link_delay_us = np.zeros(n) if link_delay_us is None else np.asarray(link_delay_us, np.float64)
        if int(ecmp_seed) != ecmp_seed or ecmp_seed < 0:
            raise ValueError(f"Graph: ecmp_seed must be an integer >= 0, got {ecmp_seed!r}")
        self.ecmp_seed = int(ecmp_seed)
        for name, arr in (("link_to", self.link_to), ("link_gbps", self.link_gbps), ("link_weight", self.link_weight),
                          ("link_delay_us", self.link_delay_us)):
            if arr.shape != (n,):
                raise ValueError(f"Graph: {name} has shape {arr.shape}, expected ({n},) (one per link)")
        if len(self.hosts) > MAX_HOSTS:
            raise ValueError(f"Graph: {len(self.hosts)} hosts is above MAX_HOSTS = 2**24")
        for name, arr in (("link_from", self.link_from), ("link_to", self.link_to)):
            bad = np.flatnonzero((arr < 0) | (arr >= len(self.nodes)))
            if bad.size:
                raise ValueError(
                    f"Graph: {name}[{bad[0]}] = {arr[bad[0]]} is not a node index (0..{len(self.nodes) - 1})"
                )
        bad = np.flatnonzero((self.link_weight < 1) | (self.link_weight > 2**32 - 1))
        if bad.size:
            raise ValueError(f"Graph: link {self._label(int(bad[0]))} has weight {self.link_weight[bad[0]]}; "
                             "weights are integers from 1 to 2**32 - 1")
        self.link_names: tuple[str, ...] = (
            tuple(link_names) if link_names is not None
            else tuple(f"{self.nodes[a]}->{self.nodes[b]}" for a, b in zip(self.link_from, self.link_to, strict=True)))
        try:
            self._native = _fabric.Graph(
                len(self.nodes), self.link_from.astype(np.uint32).tolist(), self.link_to.astype(np.uint32).tolist(),
                self.link_gbps.tolist(), self.link_weight.astype(np.uint32).tolist(), list(self.hosts),
                list(self.link_names), (self.link_delay_us * 1e-6).tolist())
        except ValueError as e:
            raise ValueError(self._relabel(str(e))) from None

    def _label(self, link: int) -> str:
        return f"{link} ({self.nodes[self.link_from[link]]!r} -> {self.nodes[self.link_to[link]]!r})"

    def _relabel(self, msg: str) -> str:
        """The core names nodes by index: add their labels."""
        return re.sub(r"node (\d+)", lambda m: f"node {self.nodes[int(m.group(1))]!r}"
                      if int(m.group(1)) < len(self.nodes) else m.group(0), msg)

    @property
    def n_hosts(self) -> int:
        return len(self.hosts)

    @property
    def n_links(self) -> int:
        return len(self.link_from)

    def host_gbps(self) -> np.ndarray:
        """Each host's rate: the sum of its outgoing links (Gbps)."""
        return np.asarray(self._native.host_rates_gbps(), np.float64)

    def n_paths(self, src: int, dst: int) -> int:
        """The number of equal-cost shortest paths from host ``src`` to host ``dst``."""
        return int(self._native.n_paths(int(src), int(dst)))

    def path(self, row: int, src: int, dst: int) -> list[str]:
        """The names of the links that the flow at trace row ``row`` from ``src`` to ``dst``
        crosses (the simulator's ECMP choice)."""
        return [self.link_names[i] for i in self._native.path(int(row), int(src), int(dst), self.ecmp_seed)]

    def path_delay_s(self, src: np.ndarray, dst: np.ndarray, delay_us: float = 0.0) -> np.ndarray:
        """Each flow's fixed path delay (flow i is trace row i): ``delay_us`` per link of its
        path plus the links' own ``link_delay_us``, as the simulator adds it to FCTs."""
        return np.asarray(self._native.path_delay_s(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                                                    self.ecmp_seed, float(delay_us) * 1e-6), np.float64)

    def path_links(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """How many links each flow's path crosses (flow i is trace row i)."""
        return np.asarray(self._native.path_links(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                                                  self.ecmp_seed), np.int64)

    def native_config(self) -> dict[str, Any]:
        """The keyword arguments that describe this fabric to the native core
        (``flowsched._fabric.Simulator``, ``TokenConfig``, ``SwitchConfig``): ``topology``
        (a ``flowsched._fabric.Graph`` with the routing tables), ``host_gbps`` and
        ``ecmp_seed``."""
        return {"topology": self._native, "host_gbps": self.host_gbps(), "ecmp_seed": self.ecmp_seed}

    def __repr__(self) -> str:
        return f"Graph({len(self.nodes)} nodes, {self.n_hosts} hosts, {self.n_links} links, ecmp_seed={self.ecmp_seed})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Graph, (self.nodes, self.hosts, self.link_from, self.link_to, self.link_gbps, self.link_weight,
                        self.ecmp_seed, self.link_names, self.link_delay_us))


def from_networkx(
    graph: Any,
    hosts: Sequence[Hashable],
    capacity: str = "gbps",
    weight: str | None = None,
    ecmp_seed: int = 0,
    delay: str = "delay_us",
) -> Graph:
    """A :class:`Graph` fabric from a networkx graph.

    Parameters
    ----------
    graph : a connected ``networkx.Graph`` (each edge a full-duplex link: two links, one per
        direction, each at the edge's capacity), ``DiGraph`` (each edge one link: asymmetric
        fabrics), or their ``Multi*`` forms (parallel links).
    hosts : the nodes that are the trace's hosts 0..n-1, in that order; every other node is
        a switch. Hosts never forward traffic.
    capacity : the edge attribute with the link rate in Gbps (required on every edge,
        positive and finite).
    weight : the edge attribute with an integer routing weight >= 1; None: hop count.
    ecmp_seed : seeds the per-flow choice among equal-cost paths.
    delay : the edge attribute with a link's own propagation delay in microseconds (finite,
        >= 0), added to a run's ``delay_us`` per hop; either on every edge or on none.

    Notes
    -----
    Links are numbered in ``graph.edges`` order (u->v, then v->u for an undirected edge).
    Errors name the node or edge: an unknown or repeated host, a missing or bad capacity or
    weight, a host that cannot reach another through switches.
    """
    return Graph(**_networkx_arguments(graph, hosts, capacity, weight, delay), ecmp_seed=ecmp_seed)


def _networkx_arguments(graph: Any, hosts: Sequence[Hashable], capacity: str = "gbps", weight: str | None = None,
                        delay: str = "delay_us") -> dict[str, Any]:
    """:class:`Graph`'s arguments (all but ``ecmp_seed``) from a networkx graph, checked as
    :func:`from_networkx` says; the routing tables are built once, by ``Graph``."""
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"from_networkx: expected a networkx graph, got {type(graph).__name__}")
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    host_idx: list[int] = []
    seen: dict[int, int] = {}
    for h, v in enumerate(hosts):
        if v not in index:
            raise ValueError(f"from_networkx: host {h} is {v!r}, which is not a node of the graph")
        i = index[v]
        if i in seen:
            raise ValueError(f"from_networkx: node {v!r} is listed as host {seen[i]} and host {h}")
        seen[i] = h
        host_idx.append(i)
    if len(host_idx) < 2:
        raise ValueError(f"from_networkx: needs at least 2 hosts, got {len(host_idx)}")
    directed = graph.is_directed()
    lf: list[int] = []
    lt: list[int] = []
    gbps: list[float] = []
    wts: list[int] = []
    delays: list[float] = []
    with_delay = [delay in data for _, _, data in graph.edges(data=True)]
    if any(with_delay) and not all(with_delay):
        u, v, _ = list(graph.edges(data=True))[with_delay.index(False)]
        raise ValueError(f"from_networkx: edge ({u!r}, {v!r}) has no {delay!r} attribute but other edges do; give "
                         "every edge a delay or none")
    for u, v, data in graph.edges(data=True):
        where = f"edge ({u!r}, {v!r})"
        if u == v:
            raise ValueError(f"from_networkx: {where} is a self-loop")
        if capacity not in data:
            raise ValueError(f"from_networkx: {where} has no {capacity!r} attribute (its rate in Gbps)")
        c = data[capacity]
        if not isinstance(c, (int, float, np.integer, np.floating)) or not (np.isfinite(c) and c > 0):
            raise ValueError(f"from_networkx: {where} has {capacity} = {c!r}; rates must be positive finite Gbps")
        w = 1
        if weight is not None:
            if weight not in data:
                raise ValueError(f"from_networkx: {where} has no {weight!r} attribute (its routing weight)")
            w = data[weight]
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 1 <= w <= 2**32 - 1:
                raise ValueError(f"from_networkx: {where} has {weight} = {w!r}; weights are integers from 1 to "
                                 "2**32 - 1 (equal-cost paths are compared exactly)")
        d = 0.0
        if delay in data:
            d = data[delay]
            if isinstance(d, bool) or not isinstance(d, (int, float, np.integer, np.floating)) or \
                    not (np.isfinite(d) and d >= 0):
                raise ValueError(f"from_networkx: {where} has {delay} = {d!r}; delays are finite microseconds >= 0")
        pairs = [(u, v)] if directed else [(u, v), (v, u)]
        for a, b in pairs:
            lf.append(index[a])
            lt.append(index[b])
            gbps.append(float(c))
            wts.append(int(w))
            delays.append(float(d))
    return {"nodes": nodes, "hosts": host_idx, "link_from": lf, "link_to": lt, "link_gbps": gbps, "link_weight": wts,
            "link_delay_us": delays}


def read_graph(path: str | Any, capacity: str = "gbps", weight: str | None = None, ecmp_seed: int = 0,
               delay: str = "delay_us") -> Graph:
    """A :class:`Graph` fabric from a file: GraphML (``.graphml``) or networkx node-link JSON
    (``.json``, as ``networkx.node_link_data`` writes it). The hosts are the nodes with an
    integer ``host`` attribute, which gives each one's host index (0..n-1, each once);
    ``capacity``, ``weight`` and ``delay`` are as in :func:`from_networkx`."""
    import json
    from pathlib import Path

    import networkx as nx

    p = Path(path)
    if p.suffix == ".graphml":
        g = nx.read_graphml(p)
    elif p.suffix == ".json":
        try:
            data = json.loads(p.read_text())
            g = nx.node_link_graph(data, edges="links" if "links" in data else "edges")
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{p}: not networkx node-link JSON ({type(e).__name__}: {e})") from None
    else:
        raise ValueError(f"{p}: a graph file must end in .graphml or .json (node-link data), got {p.suffix!r}")
    index: dict[int, Hashable] = {}
    for v, data in g.nodes(data=True):
        if "host" not in data:
            continue
        h = data["host"]
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 0:
            raise ValueError(f"{p}: node {v!r} has host = {h!r}; the host attribute is a host index, an integer >= 0")
        if int(h) in index:
            raise ValueError(f"{p}: nodes {index[int(h)]!r} and {v!r} are both host {int(h)}")
        index[int(h)] = v
    missing = sorted(set(range(len(index))) - set(index))
    if missing:
        raise ValueError(f"{p}: {len(index)} nodes have a host attribute, but host {missing[0]} is not among them "
                         "(host indices must be 0..n-1)")
    try:
        return from_networkx(g, [index[h] for h in range(len(index))], capacity, weight, ecmp_seed, delay)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


class FatTree(Graph):
    """A k-ary fat-tree (Al-Fares, Loukissas and Vahdat, SIGCOMM 2008): ``k`` pods, each of
    ``k/2`` edge and ``k/2`` aggregation switches, ``(k/2)^2`` core switches; every edge
    switch joins every aggregation switch of its pod, aggregation switch ``j`` of each pod
    joins core switches ``j*k/2 .. j*k/2 + k/2 - 1``.

    Every switch-to-switch link runs at ``core_gbps``, every host link at ``host_gbps``.
    ``oversubscription`` puts ``k/2 * oversubscription`` hosts on each edge switch (an
    integer), so there are ``k/2 * k/2 * k * oversubscription`` hosts (``k^3/4`` at 1.0) and
    the edge layer is oversubscribed ``oversubscription * host_gbps / core_gbps`` to 1.
    Hosts are numbered pod by pod, edge switch by edge switch. Node labels: ``h<i>``,
    ``edge<pod>_<j>``, ``agg<pod>_<j>``, ``core<i>``.
    """

    def __init__(self, k: int = 4, host_gbps: float = 10.0, core_gbps: float = 10.0,
                 oversubscription: float = 1.0, ecmp_seed: int = 0) -> None:
        if int(k) != k or k < 2 or k % 2:
            raise ValueError(f"FatTree: k must be an even integer >= 2, got {k!r}")
        k = int(k)
        per_edge = k // 2 * oversubscription
        if not (oversubscription > 0) or int(per_edge) != per_edge:
            raise ValueError(f"FatTree: k/2 * oversubscription must be a whole number of hosts per edge switch, "
                             f"got {k // 2} * {oversubscription!r}")
        for name, g in (("host_gbps", host_gbps), ("core_gbps", core_gbps)):
            if not (np.isfinite(g) and g > 0):
                raise ValueError(f"FatTree: {name} must be positive and finite, got {g!r}")
        self.k, self.oversubscription = k, oversubscription
        self.host_rate_gbps, self.core_gbps = float(host_gbps), float(core_gbps)
        import networkx as nx

        g = nx.Graph()
        half = k // 2
        hosts: list[str] = []
        for p in range(k):
            for e in range(half):
                for _ in range(int(per_edge)):
                    h = f"h{len(hosts)}"
                    hosts.append(h)
                    g.add_edge(h, f"edge{p}_{e}", gbps=float(host_gbps))
        for p in range(k):
            for e in range(half):
                for a in range(half):
                    g.add_edge(f"edge{p}_{e}", f"agg{p}_{a}", gbps=float(core_gbps))
            for a in range(half):
                for c in range(half):
                    g.add_edge(f"agg{p}_{a}", f"core{a * half + c}", gbps=float(core_gbps))
        super().__init__(**_networkx_arguments(g, hosts), ecmp_seed=ecmp_seed)

    def __repr__(self) -> str:
        return (f"FatTree(k={self.k}, host_gbps={self.host_rate_gbps}, core_gbps={self.core_gbps}, "
                f"oversubscription={self.oversubscription}, ecmp_seed={self.ecmp_seed}: {self.n_hosts} hosts)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FatTree, (self.k, self.host_rate_gbps, self.core_gbps, self.oversubscription, self.ecmp_seed))


class ParkingLot(Graph):
    """The parking lot of the flow-level literature (m3's evaluation topology): ``n`` hosts,
    each on its own switch at ``host_gbps``, the switches in a line joined by
    ``switch_gbps`` links. Node labels ``h<i>`` and ``s<i>``."""

    def __init__(self, n: int = 8, host_gbps: float = 10.0, switch_gbps: float = 40.0, ecmp_seed: int = 0) -> None:
        if int(n) != n or n < 2:
            raise ValueError(f"ParkingLot: n must be an integer >= 2, got {n!r}")
        for name, g in (("host_gbps", host_gbps), ("switch_gbps", switch_gbps)):
            if not (np.isfinite(g) and g > 0):
                raise ValueError(f"ParkingLot: {name} must be positive and finite, got {g!r}")
        self.n, self.host_rate_gbps, self.switch_gbps = int(n), float(host_gbps), float(switch_gbps)
        import networkx as nx

        g = nx.Graph()
        for i in range(self.n):
            g.add_edge(f"h{i}", f"s{i}", gbps=float(host_gbps))
        for i in range(self.n - 1):
            g.add_edge(f"s{i}", f"s{i + 1}", gbps=float(switch_gbps))
        super().__init__(**_networkx_arguments(g, [f"h{i}" for i in range(self.n)]), ecmp_seed=ecmp_seed)

    def __repr__(self) -> str:
        return (f"ParkingLot(n={self.n}, host_gbps={self.host_rate_gbps}, switch_gbps={self.switch_gbps}, "
                f"ecmp_seed={self.ecmp_seed})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ParkingLot, (self.n, self.host_rate_gbps, self.switch_gbps, self.ecmp_seed))


Topology = BigSwitch | LeafSpine | Graph
