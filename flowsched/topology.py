"""Fabric topologies.

Link rates are in Gbps here (``link_gbps``); the simulator works in bytes/s.
``native_config()`` gives a topology's native form: the keyword arguments that describe it
to the Rust core (``flowsched._fabric``), for code that builds native objects directly.

:class:`BigSwitch` and :class:`LeafSpine` are the two built-in fabrics with closed-form
routes. Any other fabric is a :class:`Graph`, made from a networkx graph with
:func:`from_networkx`, or by :class:`FatTree` and :class:`ParkingLot`.
"""
from __future__ import annotations

import itertools
import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from flowsched.checks import is_finite_number, number_kind
from flowsched.traces import MAX_HOSTS

if TYPE_CHECKING:
    from flowsched import _fabric


def _positive_finite(x: Any) -> bool:
    """Whether ``x`` is a number (not a bool, not a string), finite and > 0."""
    return is_finite_number(x) and x > 0


def _whole(x: Any) -> bool:
    """Whether ``x`` is a whole number (an integer, or a float with an integer value; not a
    bool, not a string)."""
    return is_finite_number(x) and int(x) == x


def _rate(x: Any, what: str) -> float:
    """A link rate in Gbps: a positive finite number (``what`` names the argument)."""
    if not _positive_finite(x):
        raise ValueError(f"{what} must be a positive finite number (Gbps), got {x!r}")
    return float(x)


def _ecmp_seed(x: Any, what: str) -> int:
    """An ECMP seed: an integer from 0 to 2**64 - 1 (the core's u64), not a bool."""
    if number_kind(x) != "integer" or not 0 <= x < 2**64:
        raise ValueError(f"{what}: ecmp_seed must be an integer from 0 to 2**64 - 1 (not a bool), got {x!r}")
    return int(x)


def _host_rates(hosts: int, rate: float | Sequence[float], what: str) -> np.ndarray:
    """One rate per host from one rate or a sequence of them; ``what`` names the argument
    (``"BigSwitch: link_gbps"``). Numbers only: a string or a bool is refused, not converted."""
    if number_kind(rate) == "bool":
        raise ValueError(f"{what}: expected a link rate in Gbps, got {rate!r}; rates are numbers, not bools")
    if number_kind(rate) is None:
        # a list's items one by one (numpy would read [10, True] as [10, 1]); an array (or a
        # pandas Series) by its dtype
        items = rate if isinstance(rate, (list, tuple)) else np.asarray(rate)
        if isinstance(items, np.ndarray) and items.dtype.kind in "iuf":
            pass  # numbers; the shape is checked below
        elif isinstance(items, np.ndarray) and not (items.ndim == 1 and items.dtype.kind == "O"):
            raise ValueError(f"{what}: expected one rate or {hosts} per-host rates (numbers, Gbps), got {rate!r}")
        else:
            for i, x in enumerate(items):
                if number_kind(x) not in ("integer", "float"):
                    raise ValueError(f"{what}: host {i} has link rate {x!r}; rates must be numbers (Gbps), positive "
                                     "and finite")
    arr = np.asarray(rate, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(hosts, float(arr))
    if arr.shape != (hosts,):
        raise ValueError(f"{what}: expected one rate or {hosts} per-host rates, got shape {arr.shape}")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        raise ValueError(f"{what}: host {bad[0]} has link rate {float(arr[bad[0]])!r} Gbps; rates must be positive and "
                         "finite")
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
        if not _whole(self.hosts) or self.hosts < 2:
            raise ValueError(f"BigSwitch: hosts must be an integer >= 2, got {self.hosts!r}")
        if self.hosts > MAX_HOSTS:
            raise ValueError(f"BigSwitch: hosts = {int(self.hosts)} is above the largest fabric flowsched simulates "
                             f"(MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)")
        object.__setattr__(self, "hosts", int(self.hosts))  # 16.0 is 16 hosts
        _host_rates(self.hosts, self.link_gbps, "BigSwitch: link_gbps")

    @property
    def n_hosts(self) -> int:
        return int(self.hosts)

    def host_gbps(self) -> np.ndarray:
        return _host_rates(self.hosts, self.link_gbps, "BigSwitch: link_gbps")

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
            if not _whole(v) or v < 1:
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
        _rate(self.core_gbps, "LeafSpine: core_gbps")
        _ecmp_seed(self.ecmp_seed, "LeafSpine")
        object.__setattr__(self, "_rates", _host_rates(self.n_hosts, self.host_gbps, "LeafSpine: host_gbps"))

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
        ``Results.links``); from a multigraph, parallel links end in ``[<key>]``.
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
        self.ecmp_seed = _ecmp_seed(ecmp_seed, "Graph")
        for name, arr in (("link_to", self.link_to), ("link_gbps", self.link_gbps), ("link_weight", self.link_weight),
                          ("link_delay_us", self.link_delay_us)):
            if arr.shape != (n,):
                raise ValueError(f"Graph: {name} has shape {arr.shape}, expected ({n},) (one per link)")
        if len(self.hosts) > MAX_HOSTS:
            raise ValueError(f"Graph: {len(self.hosts)} hosts is above MAX_HOSTS = 2**24")
        for i, h in enumerate(self.hosts):
            if not 0 <= h < len(self.nodes):  # (an OverflowError of the conversion to the core's ints)
                raise ValueError(f"Graph: hosts[{i}] = {h} is not a node index (0..{len(self.nodes) - 1})")
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
        self._labels: tuple[dict[Hashable, int], dict[str, list[int]], dict[str, int], set[str]] | None = None
        self.link_names: tuple[str, ...] = (
            tuple(link_names) if link_names is not None
            else tuple(f"{self.nodes[a]}->{self.nodes[b]}" for a, b in zip(self.link_from, self.link_to, strict=True)))
        if len(self.link_names) != n:
            raise ValueError(f"Graph: {len(self.link_names)} link_names for {n} links (one per link)")
        first: dict[str, int] = {}
        for i, name in enumerate(self.link_names):
            j = first.setdefault(name, i)
            if j != i:
                raise ValueError(f"Graph: links {self._label(j)} and {self._label(i)} are both named {name!r}; every "
                                 "link needs a name of its own (Results.links, sample_links): relabel the nodes so "
                                 "that no two links read the same (e.g. with networkx.relabel_nodes)")
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
        path plus the links' own ``link_delay_us``, as the simulator adds it to FCTs (ECMP
        paths: for routes a trace pins, ``Results.flows["path_delay_s"]``)."""
        return np.asarray(self._native.path_delay_s(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                                                    self.ecmp_seed, float(delay_us) * 1e-6), np.float64)

    def path_links(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """How many links each flow's ECMP path crosses (flow i is trace row i)."""
        return np.asarray(self._native.path_links(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                                                  self.ecmp_seed), np.int64)

    def node_index(self, name: Hashable) -> int | None:
        """The index of the node that ``name`` names in a route (see :meth:`node_lookup`), or
        None if it names none or is refused."""
        v = self.node_lookup(name)
        return v if isinstance(v, int) else None

    def node_lookup(self, name: Hashable) -> int | str:
        """The index of the node that ``name`` names in a trace's ``path`` cell, or why it
        names none. A string names the node whose label written as a string is ``name`` (a
        route read from a file names node ``3`` as ``"3"``, node ``"s0"`` as ``"s0"``); if
        several labels read as that string (nodes ``3`` and ``"3"``) it is ambiguous and
        names none. Any other name must be a label itself, and a number of the same kind:
        ``True`` or ``1.0`` do not stand for node ``1`` (nor ``1`` for a node ``1.0``)."""
        by_label, by_str, _, _ = self._label_tables()
        if isinstance(name, str):
            found = by_str.get(name, [])
            if len(found) == 1:
                return found[0]
            if found:
                shown = ", ".join(repr(self.nodes[j]) for j in found)
                return (f"{name!r} is ambiguous: the labels of nodes {shown} all read {name!r} as strings, as "
                        "a file writes them (relabel the graph so that no two labels read the same)")
            return f"unknown node {name!r}"
        try:
            i = by_label.get(name)
        except TypeError:  # unhashable
            return f"{name!r} is not a node label"
        if i is None:
            return f"unknown node {name!r}"
        kind, label_kind = number_kind(name), number_kind(self.nodes[i])
        if kind != label_kind:
            return (f"{name!r} ({type(name).__name__}) is not a node label: it equals node {self.nodes[i]!r} "
                    f"({type(self.nodes[i]).__name__}), and a number names a node only when the label is a number "
                    "of the same kind (bool, integer or float)")
        return i

    def _label_tables(self) -> tuple[dict[Hashable, int], dict[str, list[int]], dict[str, int], set[str]]:
        """Node index by label; node indices by label written as a string; the node index of
        each string that names exactly one node (:meth:`node_lookup`'s fast path); and those
        of these strings that are that node's label itself."""
        if self._labels is None:
            by_label: dict[Hashable, int] = {}
            by_str: dict[str, list[int]] = {}
            for k, v in enumerate(self.nodes):
                by_label.setdefault(v, k)
                by_str.setdefault(str(v), []).append(k)
            one = {s: ks[0] for s, ks in by_str.items() if len(ks) == 1}
            self._labels = (by_label, by_str, one, {s for s, k in one.items() if type(self.nodes[k]) is str})
        return self._labels

    def _route_nodes(self, paths: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """The node offsets and indices of a trace's ``path`` cells (tuples of names, None:
        ECMP) as the core takes them (``_fabric.Graph.pin``), and whether every name is a
        string label itself; or None if some name names no node (:meth:`route_problem`
        says which and why). All names at once: one dict look-up each for the usual
        string names."""
        cells = [() if p is None else p for p in paths]
        off = np.zeros(len(cells) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, cells), np.int64, len(cells)), out=off[1:])
        names = list(itertools.chain.from_iterable(cells))
        # A string names one node, or goes the slow way; so does any other name (never a key).
        _, _, one, exact = self._label_tables()
        flat: list[int | None] = list(map(one.get, names))
        missed = None in flat
        for j in (j for j, v in enumerate(flat) if v is None) if missed else ():
            v = self.node_lookup(names[j])
            if isinstance(v, str):
                return None
            flat[j] = v
        labels = not missed and all(map(exact.__contains__, names))
        return off, np.asarray(flat, np.int64), labels

    def resolve(self, paths: Sequence[Any] | np.ndarray, src: np.ndarray, dst: np.ndarray, labels: bool = True
                ) -> tuple[np.ndarray, _fabric.PinnedRoutes | None, tuple[int, str] | None]:
        """A trace's ``path`` cells checked as routes on this graph: the cells with the
        graph's own labels (tuples; None: ECMP; the cells as given when ``labels`` is
        False) and the native pinned routes, or the first bad row and what is wrong with it
        (:meth:`route_problem`)."""
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        found = self._route_nodes(paths)
        if found is not None:
            off, nodes, already = found
            try:
                native = self._native.pin(src, dst, off, nodes)
            except ValueError:
                pass  # the per-row checks below say where and why
            else:
                if not labels or (already and set(map(type, paths)) <= {tuple, type(None)}):
                    return np.asarray(paths, dtype=object), native, None  # tuples of the labels themselves
                out = np.empty(len(paths), dtype=object)
                names = list(map(self.nodes.__getitem__, nodes.tolist()))
                bounds = off.tolist()
                for i in np.flatnonzero(np.diff(off)).tolist():
                    out[i] = tuple(names[bounds[i]:bounds[i + 1]])
                return out, native, None
        for i, p in enumerate(paths):
            if p is not None:
                _, problem = self.route_problem(int(src[i]), int(dst[i]), p)
                if problem is not None:
                    return np.asarray(paths, dtype=object), None, (i, problem)
        raise AssertionError("pinned routes refused by the core but by no per-row check")  # pragma: no cover

    def route_problem(self, src: int, dst: int, names: Sequence[Hashable]) -> tuple[tuple[int, ...] | None, str | None]:
        """The node indices of a route from host ``src`` to host ``dst`` through the nodes
        ``names`` (labels, as a trace's ``path`` cell gives them), or what is wrong with it:
        an unknown or ambiguous node (:meth:`node_lookup`), wrong ends, a host in the
        middle, a loop, consecutive nodes joined by no link or by parallel links in that
        direction (the core's checks, nodes named by label)."""
        idx = []
        for k, name in enumerate(names):
            i = self.node_lookup(name)
            if isinstance(i, str):
                if i.startswith("unknown node"):
                    shown = ", ".join(repr(v) for v in self.nodes[:6]) + (", ..." if len(self.nodes) > 6 else "")
                    return None, f"{i} at position {k} (the graph's nodes are {shown})"
                return None, f"position {k}: {i}"
            idx.append(i)
        problem = self._native.check_route(int(src), int(dst), idx)
        return (None, self._relabel(problem)) if problem is not None else (tuple(idx), None)

    def route_of(self, row: int, src: int, dst: int) -> tuple[Hashable, ...]:
        """The labels of the nodes that the flow at trace row ``row`` from ``src`` to ``dst``
        passes through when ECMP routes it (``path`` gives its links' names). On a graph
        with parallel links, the labels do not say which of them the flow takes."""
        links = self._native.path(int(row), int(src), int(dst), self.ecmp_seed)
        return (self.nodes[self.link_from[links[0]]], *(self.nodes[self.link_to[lk]] for lk in links))

    def ecmp_routes(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """:meth:`route_of` for every flow of a trace at once (flow i is row i): an object
        array of tuples of node labels."""
        off, nodes = self._native.path_nodes(np.asarray(src, np.int64), np.asarray(dst, np.int64), self.ecmp_seed)
        labels = list(map(self.nodes.__getitem__, nodes.tolist()))
        b = off.tolist()
        out = np.empty(len(b) - 1, dtype=object)
        for i in range(len(b) - 1):
            out[i] = tuple(labels[b[i]:b[i + 1]])
        return out

    def pin(self, paths: Sequence[Any] | np.ndarray, src: np.ndarray, dst: np.ndarray) -> _fabric.PinnedRoutes:
        """The native pinned routes of a trace (``flowsched._fabric.PinnedRoutes``, passed to
        the simulators as their ``topology``): ``paths[i]`` is row i's route as node labels
        (None: ECMP); a route that is not valid is a ValueError naming its row."""
        _, native, problem = self.resolve(paths, src, dst, labels=False)
        if native is None:
            row, why = problem if problem is not None else (-1, "refused")
            raise ValueError(f"flow at row {row}, column 'path': {why}")
        return native

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
    Links are numbered in ``graph.edges`` order (u->v, then v->u for an undirected edge)
    and named ``"u->v"`` (the ``link`` column of ``Results.links``, ``sample_links``);
    parallel links of a multigraph carry their networkx key, ``"u->v[0]"``, ``"u->v[1]"``.
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
    multi = graph.is_multigraph()
    names: list[str] = []
    named: dict[str, str] = {}  # link name -> the edge that gave it
    edges = graph.edges(keys=True, data=True) if multi else ((u, v, None, d) for u, v, d in graph.edges(data=True))
    for u, v, key, data in edges:
        where = f"edge ({u!r}, {v!r})" if key is None else f"edge ({u!r}, {v!r}, key={key!r})"
        if u == v:
            raise ValueError(f"from_networkx: {where} is a self-loop")
        if capacity not in data:
            raise ValueError(f"from_networkx: {where} has no {capacity!r} attribute (its rate in Gbps)")
        c = data[capacity]
        if not (is_finite_number(c) and c > 0):
            raise ValueError(f"from_networkx: {where} has {capacity} = {_shown(c)}; rates must be positive finite Gbps")
        if not math.isfinite(float(c) * 1e9 / 8):  # the core's bytes/s (topology.rs: gbps * 1e9 / 8.0)
            raise ValueError(f"from_networkx: {where} has {capacity} = {_shown(c)}; rates must be positive finite "
                             "Gbps, at most about 1.7e299 (the simulator works in bytes/s, gbps * 1e9 / 8, which must "
                             "be a finite float)")
        w = 1
        if weight is not None:
            if weight not in data:
                raise ValueError(f"from_networkx: {where} has no {weight!r} attribute (its routing weight)")
            w = data[weight]
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 1 <= w <= 2**32 - 1:
                raise ValueError(f"from_networkx: {where} has {weight} = {_shown(w)}; weights are integers from 1 to "
                                 "2**32 - 1 (equal-cost paths are compared exactly)")
        d = 0.0
        if delay in data:
            d = data[delay]
            if not (is_finite_number(d) and d >= 0):
                raise ValueError(f"from_networkx: {where} has {delay} = {_shown(d)}; delays are finite microseconds "
                                 ">= 0")
        pairs = [(u, v)] if directed else [(u, v), (v, u)]
        # parallel links are told apart by their networkx key: "s->t[0]", "s->t[1]"
        suffix = f"[{key}]" if multi and graph.number_of_edges(u, v) > 1 else ""
        for a, b in pairs:
            name = f"{a}->{b}{suffix}"
            if name in named:
                raise ValueError(f"from_networkx: {named[name]} and {where} both give a link named {name!r} (links "
                                 "are named '<from>-><to>' with the labels as strings: labels with '->' in them, or "
                                 "that read alike, can collide); every link needs a name of its own (Results.links, "
                                 "sample_links): relabel the nodes, e.g. with networkx.relabel_nodes")
            named[name] = where
            names.append(name)
            lf.append(index[a])
            lt.append(index[b])
            gbps.append(float(c))
            wts.append(int(w))
            delays.append(float(d))
    return {"nodes": nodes, "hosts": host_idx, "link_from": lf, "link_to": lt, "link_gbps": gbps, "link_weight": wts,
            "link_delay_us": delays, "link_names": names}


def _shown(x: Any) -> str:
    """``repr(x)``, but a huge integer by its size (its repr can run to thousands of digits)."""
    if number_kind(x) == "integer" and not -(10**30) < x < 10**30:
        return f"an integer near {'-' if x < 0 else ''}10**{int(abs(int(x)).bit_length() * math.log10(2))}"
    return repr(x)


_HOST = "host"  # the node attribute that marks a graph file's hosts
_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
# GraphML's attr.type values as networkx reads them (GraphMLReader.python_type; "integer": Gephi's)
_GRAPHML_TYPES: dict[str, type] = {"boolean": bool, "int": int, "long": int, "integer": int, "float": float,
                                   "double": float, "string": str, "yfiles": str}
_GRAPHML_BOOLS = {"true": True, "false": False, "0": False, "1": True}  # networkx's, matched in lower case


def read_graph(path: str | Any, capacity: str = "gbps", weight: str | None = None, ecmp_seed: int = 0,
               delay: str = "delay_us") -> Graph:
    """A :class:`Graph` fabric from a file: GraphML (``.graphml``) or networkx node-link JSON
    (``.json``, as ``networkx.node_link_data`` writes it; the suffix in any case). The hosts
    are the nodes with an integer ``host`` attribute, which gives each one's host index
    (0..n-1, each once); every other node is a switch. ``capacity``, ``weight`` and ``delay``
    are as in :func:`from_networkx`.

    The file is checked as written before networkx reads it, so that nothing in it is
    dropped or merged: node ids are unique, every edge joins declared nodes, typed GraphML
    values parse, a node-link file that says ``"multigraph": false`` repeats no edge (a
    multigraph's parallel edges are parallel links; GraphML has no such flag, so repeated
    GraphML edges are parallel links), and no two edges share a multigraph key. A GraphML
    ``<default>`` of the capacity, weight or delay attribute applies to the edges without
    their own value, as GraphML defines it. Errors (``ValueError``) name the file and the
    node, edge or attribute."""
    from pathlib import Path

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".graphml":
        g = _read_graphml(p, [a for a in (capacity, weight, delay) if a is not None])
    elif suffix == ".json":
        g = _read_node_link(p)
    else:
        raise ValueError(f"{p}: a graph file must end in .graphml or .json (node-link data), got {p.suffix!r}")
    hosts = _file_hosts(p, g, suffix == ".graphml")
    try:
        return from_networkx(g, hosts, capacity, weight, ecmp_seed, delay)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


def _file_hosts(p: Any, g: Any, graphml: bool) -> list[Hashable]:
    """The nodes of a graph read from file ``p`` that its ``host`` attributes mark, in host order."""
    index: dict[int, Hashable] = {}
    for v, data in g.nodes(data=True):
        if _HOST not in data:
            continue
        h = data[_HOST]
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 0:
            hint = ""
            if isinstance(h, str):
                hint = (" (a string: declare the GraphML <key> of 'host' with attr.type=\"int\")" if graphml else
                        " (a string: write the index as a JSON number)")
            raise ValueError(f"{p}: node {v!r} has host = {_shown(h)}; the host attribute is a host index, an "
                             f"integer >= 0{hint}")
        if int(h) in index:
            raise ValueError(f"{p}: nodes {index[int(h)]!r} and {v!r} are both host {int(h)}")
        index[int(h)] = v
    missing = sorted(set(range(len(index))) - set(index))
    if missing:
        raise ValueError(f"{p}: {len(index)} nodes have a host attribute, but host {missing[0]} is not among them "
                         f"(host indices must be 0..n-1){_host_hint(g)}")
    if len(index) < 2:
        raise ValueError(f"{p}: needs at least 2 hosts, got {len(index)}: in a graph file, the hosts are the nodes "
                         f"with an integer '{_HOST}' attribute (the host's index, 0..n-1), every other node is a switch"
                         f"{_host_hint(g)}")
    return [index[h] for h in range(len(index))]


def _host_hint(g: Any) -> str:
    """Attributes named like ``host`` that are not it (``hosts``, ``Host``), for an error about
    a file's hosts; "" when there are none."""
    import difflib

    def like(name: Any) -> bool:
        low = str(name).lower()
        return name != _HOST and ("host" in low or bool(difflib.get_close_matches("host", [low], 1, 0.75)))

    found: dict[str, str] = {}
    for v, data in g.nodes(data=True):
        for k in data:
            if like(k) and str(k) not in found:
                found[str(k)] = f"node {v!r} has an attribute {k!r}"
    for k in g.graph if isinstance(g.graph, dict) else ():
        if like(k) and str(k) not in found:
            found[str(k)] = f"the graph has an attribute {k!r}"
    if not found:
        return ""
    return (f" ({'; '.join(list(found.values())[:3])}: not read; hosts are marked by the node attribute "
            f"'{_HOST}', lower case, singular)")


def _claim_edge_key(p: Any, ks: dict[Any, str], key: Any, where: str, what: str) -> None:
    """Records the edge ``where`` under ``key`` among the parallel edges ``ks`` of its two
    nodes (a key networkx would give it when None); two with one key are an error."""
    if key is None:  # networkx's new_edge_key
        key = len(ks)
        while key in ks:
            key += 1
    elif key in ks:
        raise ValueError(f"{p}: {ks[key]} and {where} join the same nodes with the same edge {what} {key!r}; "
                         "networkx would merge them into one link")
    ks[key] = where


def _read_graphml(p: Any, edge_attrs: list[str]) -> Any:
    """The networkx graph in GraphML file ``p``, checked as written (see :func:`read_graph`);
    ``edge_attrs``: the edge attributes read_graph reads."""
    import io
    import xml.etree.ElementTree as ET

    import networkx as nx

    raw = p.read_bytes()
    ns = f"{{{_GRAPHML_NS}}}"

    def parse(text: bytes) -> ET.Element:
        try:
            return ET.fromstring(text)
        except ET.ParseError as e:
            json_like = raw.lstrip()[:1] in (b"{", b"[")
            hint = "; it reads like JSON: a node-link file must end in .json" if json_like else ""
            raise ValueError(f"{p}: not a GraphML file (not well-formed XML: {e}){hint}") from None

    root = parse(raw)
    graphs = root.findall(ns + "graph")
    if not graphs and b"<graphml>" in raw:  # networkx reads a root element without the namespace so
        root = parse(raw.replace(b"<graphml>", f'<graphml xmlns="{_GRAPHML_NS}">'.encode()))
        graphs = root.findall(ns + "graph")
    if not graphs:
        raise ValueError(f"{p}: not a GraphML file (no <graph> element of the GraphML namespace {_GRAPHML_NS} under "
                         f"the root element {root.tag!r})")
    if len(graphs) > 1:
        raise ValueError(f"{p}: {len(graphs)} <graph> elements; a topology file holds one graph (networkx would read "
                         "the first only)")

    def value(text: str | None, kind: str) -> Any:
        """A typed value as networkx reads it; ValueError or KeyError for a bad one."""
        if text is None:
            raise ValueError("empty")
        return _GRAPHML_BOOLS[text.lower()] if _GRAPHML_TYPES[kind] is bool else _GRAPHML_TYPES[kind](text)

    keys: dict[str | None, tuple[str, str]] = {}  # key id -> (attr.name, attr.type)
    defaults: dict[str, tuple[Any, str | None]] = {}  # an edge attribute read -> (its default, the key's id)
    for k in root.findall(ns + "key"):
        kid = k.get("id")
        if kid in keys:
            raise ValueError(f"{p}: two <key> elements have id {kid!r}")
        name, kind = k.get("attr.name"), k.get("attr.type")
        if k.get("yfiles.type") is not None:
            name, kind = k.get("yfiles.type"), "yfiles"
        if name is None:
            raise ValueError(f"{p}: <key id={kid!r}> has no attr.name (the attribute's name)")
        kind = "string" if kind is None else kind
        if kind not in _GRAPHML_TYPES:
            raise ValueError(f"{p}: <key id={kid!r}> ({name!r}) has attr.type={kind!r}; GraphML's types are boolean, "
                             "int, long, float, double and string")
        keys[kid] = (name, kind)
        default = k.find(ns + "default")
        if default is None:
            continue
        read = name == _HOST or name in edge_attrs
        if default.text is None and kind in ("string", "yfiles") and not read:
            continue  # networkx keeps the string "None" as a default it does not apply
        try:
            dv = value(default.text, kind)
        except (ValueError, KeyError):
            shown = "empty" if default.text is None else repr(default.text)
            raise ValueError(f"{p}: the <default> of <key id={kid!r}> ({name!r}) is {shown}, not a GraphML "
                             f"{kind}") from None
        domain = k.get("for", "all")
        if name == _HOST and domain in ("node", "all"):
            raise ValueError(f"{p}: <key id={kid!r}> ({name!r}) has a <default>: every node without its own "
                             f"'{_HOST}' data would be that host; give the host index on the host nodes only")
        if name in edge_attrs and domain in ("edge", "all"):
            if name in defaults and defaults[name][0] != dv:
                raise ValueError(f"{p}: <key id={defaults[name][1]!r}> and <key id={kid!r}> give the edge attribute "
                                 f"{name!r} different defaults ({defaults[name][0]!r} and {dv!r})")
            defaults[name] = (dv, kid)

    def data_of(element: ET.Element, where: str, read: list[str]) -> dict[str, Any]:
        """``element``'s plain <data> values, each checked against its key's type."""
        out: dict[str, Any] = {}
        for d in element.findall(ns + "data"):
            kid = d.get("key")
            if kid not in keys:
                raise ValueError(f"{p}: {where} has <data key={kid!r}>, but no <key> has that id")
            name, kind = keys[kid]
            if name in read and name in out:
                raise ValueError(f"{p}: {where} has two <data> for {name!r}")
            if len(d):
                if name in read:
                    raise ValueError(f"{p}: {where} has <data> for {name!r} with elements inside; expected a plain "
                                     "value")
                continue  # yEd's graphics; networkx takes what it knows from them
            try:
                out[name] = "" if d.text is None else value(d.text, kind)
            except (ValueError, KeyError):
                raise ValueError(f"{p}: {where} has {name} = {d.text!r}, which is not a GraphML {kind} (the type "
                                 f"that <key id={kid!r}> declares)") from None
        return out

    nodes: set[str] = set()
    edges: list[ET.Element] = []

    def walk(graph: ET.Element) -> None:  # networkx reads yEd group nodes' inner graphs into the same graph
        if graph.find(ns + "hyperedge") is not None:
            raise ValueError(f"{p}: has a <hyperedge>; links are edges between two nodes")
        data_of(graph, "the <graph>", [])
        for node in graph.findall(ns + "node"):
            v = node.get("id")
            if v is None:
                raise ValueError(f"{p}: <node> number {len(nodes) + 1} has no id")
            if v in nodes:
                raise ValueError(f"{p}: node {v!r} is declared twice (networkx would merge the two into one node)")
            nodes.add(v)
            data_of(node, f"node {v!r}", [_HOST])
            inner = node.find(ns + "graph")
            if node.get("yfiles.foldertype") == "group":
                if inner is None:
                    raise ValueError(f"{p}: node {v!r} is a yEd group node with no <graph> inside")
                walk(inner)
            elif inner is not None:
                raise ValueError(f"{p}: node {v!r} holds a nested <graph>, which networkx does not read (its nodes "
                                 "and edges would be dropped): flatten the graph")
        edges.extend(graph.findall(ns + "edge"))

    walk(graphs[0])
    directed = graphs[0].get("edgedefault") == "directed"
    keyed: dict[Any, dict[Any, str]] = {}  # node pair -> edge key -> the edge (networkx's multigraph keys)
    for i, edge in enumerate(edges):
        u, v, eid = edge.get("source"), edge.get("target"), edge.get("id")
        for end, x in (("source", u), ("target", v)):
            if x is None:
                raise ValueError(f"{p}: <edge> number {i + 1} ({u!r} -> {v!r}) has no {end}")
        where = f"edge ({u!r}, {v!r})"
        for x in (u, v):
            if x not in nodes:
                raise ValueError(f"{p}: {where} ends at node {x!r}, which no <node> declares (networkx would add it "
                                 "as a switch)")
        if edge.get("directed") == ("false" if directed else "true"):
            raise ValueError(f"{p}: {where} has directed={edge.get('directed')!r} in a graph whose edgedefault is "
                             f"{'directed' if directed else 'undirected'}")
        data = data_of(edge, where, edge_attrs)
        key: Any = data.get("key")
        if eid:
            try:
                key = int(eid)
            except ValueError:
                key = eid
        ks = keyed.setdefault((u, v) if directed else frozenset((u, v)), {})
        _claim_edge_key(p, ks, key, where, "id" if eid else "key")
    try:
        g = nx.read_graphml(io.BytesIO(raw))
    except (nx.NetworkXError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{p}: not a GraphML file networkx can read ({type(e).__name__}: {e})") from None
    if g.number_of_nodes() != len(nodes) or g.number_of_edges() != len(edges):
        raise ValueError(f"{p}: networkx read {g.number_of_nodes()} nodes and {g.number_of_edges()} edges from "
                         f"{len(nodes)} <node> and {len(edges)} <edge> elements")
    if defaults:
        for *_, attrs in g.edges(keys=True, data=True) if g.is_multigraph() else g.edges(data=True):
            for name, (dv, _) in defaults.items():
                attrs.setdefault(name, dv)
    return g


def _json_kind(x: Any) -> str:
    """What a JSON value is, in JSON's words."""
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return kinds.get(type(x), type(x).__name__)


def _read_node_link(p: Any) -> Any:
    """The networkx graph in node-link JSON file ``p``, checked as written (see :func:`read_graph`)."""
    import json

    import networkx as nx

    raw = p.read_bytes()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError, a number too long
        hint = "; it reads like XML: a GraphML file must end in .graphml" if raw.lstrip()[:1] == b"<" else ""
        raise ValueError(f"{p}: not networkx node-link JSON ({type(e).__name__}: {e}){hint}") from None
    need = ("node-link JSON needs an object with a 'nodes' array (objects with an 'id') and a 'links' (or 'edges') "
            "array (objects with a 'source' and a 'target')")
    if not isinstance(data, dict):
        raise ValueError(f"{p}: {need}; the file holds {_json_kind(data)}")
    for flag in ("directed", "multigraph"):
        if flag in data and not isinstance(data[flag], bool):
            raise ValueError(f"{p}: {flag!r} is {data[flag]!r}; it must be true or false")
    directed = data.get("directed", False)
    multigraph = data.get("multigraph", True)  # networkx's defaults

    def node(x: Any) -> Any:  # networkx's _to_tuple: a list id is a tuple
        return tuple(map(node, x)) if isinstance(x, (list, tuple)) else x

    def hashable(x: Any) -> bool:
        try:
            hash(x)
        except TypeError:
            return False
        return True

    if not isinstance(data.get("nodes"), list):
        raise ValueError(f"{p}: {need}; " + (f"'nodes' is {_json_kind(data['nodes'])}" if "nodes" in data
                                             else "the file has no 'nodes'"))
    nodes = data["nodes"]
    ids: dict[Hashable, int] = {}
    for i, d in enumerate(nodes):
        if not isinstance(d, dict):
            raise ValueError(f"{p}: nodes[{i}] is {_json_kind(d)} ({d!r}), not an object with an 'id'")
        if "id" not in d:
            raise ValueError(f"{p}: nodes[{i}] has no 'id' (networkx would make one up)")
        v = node(d["id"])
        if v is None or not hashable(v):
            raise ValueError(f"{p}: nodes[{i}] has id {d['id']!r}; node ids are strings, numbers or arrays")
        if v in ids:
            first = nodes[ids[v]]["id"]
            alike = "" if repr(first) == repr(d["id"]) else f" ({first!r} and {d['id']!r} are one node to networkx)"
            raise ValueError(f"{p}: nodes[{ids[v]}] and nodes[{i}] both have id {d['id']!r}{alike}; networkx would "
                             "merge them into one node")
        ids[v] = i
    given = [k for k in ("links", "edges") if k in data]
    if len(given) == 2:
        raise ValueError(f"{p}: has both 'links' and 'edges'; networkx reads only one of them: give every edge in one")
    if not given or not isinstance(data[given[0]], list):
        raise ValueError(f"{p}: {need}; " + (f"{given[0]!r} is {_json_kind(data[given[0]])}" if given
                                             else "the file has neither 'links' nor 'edges'"))
    name = given[0]
    links = data[name]
    keyed: dict[Any, dict[Any, str]] = {}  # node pair -> edge key -> the link (networkx's multigraph keys)
    for i, d in enumerate(links):
        if not isinstance(d, dict):
            raise ValueError(f"{p}: {name}[{i}] is {_json_kind(d)} ({d!r}), not an object with a 'source' and a "
                             "'target'")
        ends = []
        for end in ("source", "target"):
            if end not in d:
                raise ValueError(f"{p}: {name}[{i}] has no {end!r}")
            x = tuple(d[end]) if isinstance(d[end], list) else d[end]  # as networkx reads it
            if not hashable(x) or x not in ids:
                raise ValueError(f"{p}: {name}[{i}] has {end} {d[end]!r}, which is not the id of a node in 'nodes' "
                                 "(networkx would add it as a switch)")
            ends.append(x)
        where = f"{name}[{i}] ({d['source']!r} -> {d['target']!r})"
        ks = keyed.setdefault(tuple(ends) if directed else frozenset(ends), {})
        if not multigraph:
            if ks:
                raise ValueError(f"{p}: {ks[None]} and {where} join the same nodes, and the file says \"multigraph\": "
                                 "false: networkx would keep one edge, with the last one's attributes (a link would "
                                 "vanish); drop one, or make the file a multigraph for parallel links")
            ks[None] = where
            continue
        key = d.get("key")
        if not hashable(key):
            raise ValueError(f"{p}: {where} has key {key!r}; edge keys are strings or numbers")
        _claim_edge_key(p, ks, key, where, "key")
    try:
        g = nx.node_link_graph(data, edges=name)
    except (nx.NetworkXError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{p}: not networkx node-link JSON ({type(e).__name__}: {e})") from None
    if g.number_of_nodes() != len(nodes) or g.number_of_edges() != len(links):
        raise ValueError(f"{p}: networkx read {g.number_of_nodes()} nodes and {g.number_of_edges()} edges from "
                         f"{len(nodes)} nodes and {len(links)} {name}")
    return g


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
        if not _whole(k) or k < 2 or k % 2:
            raise ValueError(f"FatTree: k must be an even integer >= 2, got {k!r}")
        k = int(k)
        if not _positive_finite(oversubscription):
            raise ValueError(f"FatTree: oversubscription must be a positive finite number, got {oversubscription!r}")
        per_edge = k // 2 * oversubscription
        if int(per_edge) != per_edge:
            raise ValueError(f"FatTree: k/2 * oversubscription must be a whole number of hosts per edge switch, "
                             f"got {k // 2} * {oversubscription!r}")
        for name, g in (("host_gbps", host_gbps), ("core_gbps", core_gbps)):
            _rate(g, f"FatTree: {name}")
        _ecmp_seed(ecmp_seed, "FatTree")
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
        if not _whole(n) or n < 2:
            raise ValueError(f"ParkingLot: n must be an integer >= 2, got {n!r}")
        for name, g in (("host_gbps", host_gbps), ("switch_gbps", switch_gbps)):
            _rate(g, f"ParkingLot: {name}")
        _ecmp_seed(ecmp_seed, "ParkingLot")
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


def resolve_paths(topology: Any, paths: np.ndarray, src: np.ndarray, dst: np.ndarray
                  ) -> tuple[np.ndarray, tuple[int, str] | None]:
    """A trace's ``path`` cells (tuples of node names, None for ECMP) checked against a
    topology, with the graph's own labels; or the first bad row and what is wrong with it
    (see "Pinned routes" in :mod:`flowsched.traces`)."""
    pinned = np.flatnonzero(np.fromiter((p is not None for p in paths), bool, len(paths)))
    if pinned.size == 0:
        return paths, None
    if not isinstance(topology, Graph):
        kind = type(topology).__name__
        why = ("a big switch has one path per host pair" if isinstance(topology, BigSwitch) else
               "a leaf-spine's spine is drawn by ECMP; to pin spines, build the leaf-spine as a graph with "
               "flowsched.from_networkx" if isinstance(topology, LeafSpine) else "not a Graph")
        return paths, (int(pinned[0]), f"routes are pinned on a Graph topology only, not on a {kind} ({why}); "
                                       f"{pinned.size} row(s) pin one")
    out, _, problem = topology.resolve(paths, src, dst)
    return (paths, problem) if problem is not None else (out, None)
