"""Arrival processes: Poisson all-to-all, gather bursts, incast, background plus queries."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from flowsched import _fabric
from flowsched.traces import MAX_FLOWS, validate_columns, validate_trace
from flowsched.workloads._common import HEADER_FACTOR, _check_hosts, _check_n, _check_pos, _rng
from flowsched.workloads.mixture import DistLike, Mixture, _as_distribution
from flowsched.workloads.sizes import Fixed, SizeDistribution


def _draw_sizes(dist: SizeDistribution, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and per-flow deadlines (NaN unless ``dist`` is a Mixture with class deadlines)."""
    if isinstance(dist, Mixture):
        sizes, cls = dist.sample_with_classes(rng, n)
        return sizes, dist.deadlines_s[cls]
    return dist.sample(rng, n), np.full(n, np.nan)


def _make_columns(
    arrival_s: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    size_bytes: np.ndarray,
    deadline_s: np.ndarray | None,
    hosts: int,
    source: str,
    validate: bool = True,
) -> dict[str, np.ndarray]:
    n = arrival_s.size
    columns = {
        "id": np.arange(n, dtype=np.int64),
        "arrival_s": arrival_s,
        "src": src.astype(np.int64),
        "dst": dst.astype(np.int64),
        "size_bytes": size_bytes,
        "deadline_s": deadline_s if deadline_s is not None else np.full(n, np.nan),
    }
    return validate_columns(columns, hosts, source=source) if validate else columns


def _make_trace(
    arrival_s: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    size_bytes: np.ndarray,
    deadline_s: np.ndarray | None,
    hosts: int,
    source: str,
) -> pd.DataFrame:
    return pd.DataFrame(_make_columns(arrival_s, src, dst, size_bytes, deadline_s, hosts, source))


def arrival_rate_per_host_hz(
    mean_bytes: float, load: float, link_gbps: float, *, header_factor: bool = False
) -> float:
    """Flow arrival rate per source host for a target load.

    lambda = load * C / (8 * mean), C = link_gbps * 1e9 bit/s; with
    ``header_factor`` the mean is converted to wire bytes,
    mean * 1500/1460, as in PIAS, aSCC, YAPS and the ideal simulator
    (``flowsched/data/README.md``, "Load -> arrival rate"). Without it this
    is HPCC's ``1/(bandwidth*load/8/avg)`` inter-arrival.

    Parameters
    ----------
    mean_bytes : float
        Mean flow size (payload bytes).
    load : float
        Target load of each host link, > 0.
    link_gbps : float
        Host link rate in Gbit/s.
    header_factor : bool
        Convert the mean to wire bytes (x 1500/1460) first.

    Returns
    -------
    float
        Flows per second per source host.
    """
    _check_pos("mean_bytes", mean_bytes)
    _check_pos("load", load)
    _check_pos("link_gbps", link_gbps)
    wire_mean = mean_bytes * (HEADER_FACTOR if header_factor else 1.0)
    return load * link_gbps * 1e9 / (8.0 * wire_mean)


def poisson_all_to_all(
    dist: DistLike,
    load: float,
    hosts: int,
    link_gbps: float,
    n_flows: int,
    seed: int | np.random.Generator | None = 0,
    header_factor: bool = False,
    *,
    on_phase: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Poisson all-to-all traffic at a target per-host load (pFabric/PIAS/aSCC setup).

    Every host is a Poisson source of rate lambda = load * C / (8 * mean)
    (see :func:`arrival_rate_per_host_hz`), and each flow goes to a uniformly
    random other host. The superposition of the ``hosts`` sources is one
    Poisson process of rate hosts * lambda whose flows have a uniformly
    random source; that is what is generated (vectorized, exactly
    ``n_flows`` flows, starting at t = 0 with the first arrival after an
    exponential gap). Each ordered pair (src, dst) is then a Poisson process
    of rate lambda/(hosts-1), the README's formula.

    Parameters
    ----------
    dist : SizeDistribution or str
        Flow sizes (a name goes through :func:`get_distribution`). A
        :class:`Mixture` with class deadlines fills ``deadline_s``.
    load : float
        Offered load per host link, > 0 (fraction of the link rate; values
        >= 1 overload the fabric and are allowed).
    hosts : int
        Number of hosts, >= 2.
    link_gbps : float
        Host link rate in Gbit/s.
    n_flows : int
        Number of flows.
    seed : int, numpy.random.Generator or None
        Seed of the generator (``numpy.random.default_rng(seed)``), or the generator to draw from.
    header_factor : bool
        Compute the rate with mean * 1500/1460 (PIAS/aSCC convention): the
        payload load is then load * 1460/1500.
    on_phase : callable or None
        Called with the name of each drawing phase as it starts (``"arrivals"``,
        ``"sources"``, ``"destinations"``, ``"sizes"``, ``"trace"``): what a progress
        display shows while millions of flows are drawn. Each phase is one vectorized
        draw, so the trace is the same with or without it.

    Returns
    -------
    pandas.DataFrame
        A validated trace sorted by ``arrival_s``, ids 0..n-1 in arrival
        order; ``attrs["rate_per_host_hz"]`` holds lambda.
    """
    d = _as_distribution(dist)
    df = pd.DataFrame(poisson_all_to_all_columns(d, load, hosts, link_gbps, n_flows, seed, header_factor,
                                                 on_phase=on_phase))
    df.attrs["rate_per_host_hz"] = arrival_rate_per_host_hz(d.mean_bytes, load, link_gbps, header_factor=header_factor)
    return df


def poisson_all_to_all_columns(
    dist: DistLike,
    load: float,
    hosts: int,
    link_gbps: float,
    n_flows: int,
    seed: int | np.random.Generator | None = 0,
    header_factor: bool = False,
    *,
    on_phase: Callable[[str], None] | None = None,
    validate: bool = True,
) -> dict[str, np.ndarray]:
    """:func:`poisson_all_to_all`'s trace as numpy columns, validated by
    :func:`flowsched.traces.validate_columns`: the same draws from the same generator, so
    ``pandas.DataFrame(poisson_all_to_all_columns(...))`` equals ``poisson_all_to_all(...)``
    bit for bit (but for ``attrs``), without a DataFrame's cost (what the switch env draws
    at each autoreset). The other arguments are :func:`poisson_all_to_all`'s.

    ``validate=False`` returns the drawn columns (``id``, ``arrival_s``, ``src``, ``dst``,
    ``size_bytes``, ``deadline_s``) unchecked: ``validate_columns`` of them is the
    validated trace. For a caller that validates them next against its topology
    (:func:`flowsched.sim.prepare_columns`), or that hands them to the core, which checks
    every field itself (the switch env at each autoreset: ``prepare_columns(...,
    validate=False)``); the checks cost more than the draw."""
    d = _as_distribution(dist)
    hosts = _check_hosts(hosts)
    n = _check_n(n_flows, "n_flows")
    if n == 0:
        raise ValueError("poisson_all_to_all: n_flows must be >= 1")
    if n > MAX_FLOWS:
        raise ValueError(f"poisson_all_to_all: n_flows must be at most MAX_FLOWS = {MAX_FLOWS} (the trace contract), "
                         f"got {n}")
    mean = d.mean_bytes
    if not math.isfinite(mean):
        raise ValueError(f"poisson_all_to_all: {d!r} has an infinite mean; no load can be set")
    lam = arrival_rate_per_host_hz(mean, load, link_gbps, header_factor=header_factor)
    rng = _rng(seed)
    phase = on_phase if on_phase is not None else (lambda name: None)
    phase("arrivals")
    gaps = rng.exponential(1.0 / (hosts * lam), n)
    arrival = np.cumsum(gaps)
    phase("sources")
    src = rng.integers(0, hosts, n)
    phase("destinations")
    dst = (src + rng.integers(1, hosts, n)) % hosts
    phase("sizes")
    sizes, deadlines = _draw_sizes(d, rng, n)
    phase("trace")
    return _make_columns(arrival, src, dst, sizes, deadlines, hosts, "poisson_all_to_all", validate=validate)


def _distinct_senders(
    rng: np.random.Generator, n_groups: int, group_size: int, hosts: int, dst: np.ndarray | int
) -> np.ndarray:
    """(n_groups, group_size) distinct random hosts per row, none equal to that row's dst."""
    cand = hosts - 1
    if group_size > cand:
        raise ValueError(f"need {group_size} distinct senders but only {cand} hosts besides the destination")
    out = np.empty((n_groups, group_size), dtype=np.int64)
    chunk = max(1, 4_000_000 // max(cand, 1))
    dst_arr = np.broadcast_to(np.asarray(dst, dtype=np.int64), (n_groups,))
    for start in range(0, n_groups, chunk):
        stop = min(n_groups, start + chunk)
        keys = rng.random((stop - start, cand))
        if group_size < cand:
            idx = np.argpartition(keys, group_size - 1, axis=1)[:, :group_size]
        else:
            idx = np.argsort(keys, axis=1)
        d = dst_arr[start:stop, None]
        out[start:stop] = idx + (idx >= d)
    return out


def fixed_classes(d: SizeDistribution) -> tuple[list[float], list[float], list[float]] | None:
    """(weights, sizes, deadlines) of the classes when every size is fixed (what the native
    generator takes: :func:`gather_bursts` and the token env), else None."""
    if isinstance(d, Fixed):
        return [1.0], [float(d.size_bytes)], [math.nan]
    if isinstance(d, Mixture) and all(isinstance(c, Fixed) for c in d.components):
        return (
            [float(w) for w in d.weights],
            [float(c.size_bytes) for c in d.components],  # type: ignore[attr-defined]
            [float(x) for x in d.deadlines_s],
        )
    return None


def _native_seed(seed: int | np.random.Generator | None) -> int:
    """The native generator's 64-bit seed."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**64, dtype=np.uint64))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError("gather_bursts: seed must be an integer in [0, 2**64), a numpy Generator or None, got "
                         f"{seed!r}")
    return int(seed)


def gather_bursts(
    dist_or_mixture: DistLike = "artemis_a1",
    burst_size: int = 10,
    burst_rate_hz: float = 10.0,
    dst: int = 0,
    hosts: int | None = None,
    *,
    n_bursts: int | None = None,
    n_flows: int | None = None,
    seed: int | None = 0,
    composition: Literal["exact", "random"] = "exact",
) -> pd.DataFrame:
    """Gather (many-to-one) bursts, Artemis workload A: the token env's generator.

    Artemis thesis, section 4.1.2: "Workload A is composed of 10-to-1 gather
    task flows arriving in bursts that follow a Poisson distribution with an
    arrival-rate equals to 10 bursts/sec. Each burst is composed of a group
    of 10 flows" (5 + 5 of the two classes in variant 1, "6 flows of (350KB,
    40ms) and 4 flows of (250KB, 50ms)" in variant 2, section 4.3); "each of
    the flows is requesting to acquire a token from a single destination"
    (section 4.2). Here: burst times are a Poisson process of rate
    ``burst_rate_hz`` (first burst after an exponential gap from t = 0);
    every burst has ``burst_size`` flows that all arrive at the burst
    instant, from ``burst_size`` distinct senders drawn uniformly at random
    among the hosts other than ``dst``, all to ``dst``. The thesis does not
    say which hosts send; with the default ``hosts = burst_size + 1`` every
    other host sends one flow per burst (in random order).

    When every flow size is fixed (a :class:`Fixed` size, or a :class:`Mixture`
    of them such as ``"artemis_a1"``), the trace comes from the native
    generator that ``flowsched/TokenScheduling-v1`` draws its episodes with
    (``flowsched._fabric.gather_bursts``, SplitMix64): with the same seed and
    parameters it is that env's episode, flow for flow (the env uses
    ``dst=0``; ``composition="exact"`` is its ``exact_composition=True``).
    Other size distributions, which the native generator cannot express, are
    drawn in Python with :func:`numpy.random.default_rng` (same burst shape,
    another stream).

    Parameters
    ----------
    dist_or_mixture : SizeDistribution or str
        Flow sizes. For a :class:`Mixture` the class deadlines go to
        ``deadline_s``.
    burst_size : int
        Flows per burst (10 in the thesis).
    burst_rate_hz : float
        Poisson rate of bursts (10/s in the thesis).
    dst : int
        The gathering host.
    hosts : int or None
        Number of hosts (default ``burst_size + 1``).
    n_bursts, n_flows : int
        How many bursts, or how many flows (a multiple of ``burst_size``);
        exactly one of them.
    seed : int, numpy.random.Generator or None
        Seed of the generator. For fixed sizes (the native generator) an int
        in [0, 2**64) is the env's ``reset(seed=...)``; a Generator gives one
        64-bit seed from its stream; None a fresh one from the OS.
    composition : {"exact", "random"}
        For a Mixture: ``"exact"`` gives every burst exactly
        ``burst_size * weight`` flows of each class, as in the thesis
        (raises if that is not an integer); ``"random"`` draws each flow's
        class independently.

    Returns
    -------
    pandas.DataFrame
        Validated trace, ids in burst order: flow ``i`` belongs to burst
        ``i // burst_size``; ``attrs["burst_size"]`` holds ``burst_size``.
    """
    d = _as_distribution(dist_or_mixture)
    if isinstance(burst_size, bool) or not isinstance(burst_size, (int, np.integer)) or burst_size < 1:
        raise ValueError(f"burst_size must be an integer >= 1, got {burst_size!r}")
    burst_size = int(burst_size)
    rate = _check_pos("burst_rate_hz", burst_rate_hz)
    hosts = _check_hosts(burst_size + 1 if hosts is None else hosts)
    if not 0 <= dst < hosts:
        raise ValueError(f"dst must be in 0..{hosts - 1}, got {dst!r}")
    if (n_bursts is None) == (n_flows is None):
        raise ValueError("gather_bursts: give exactly one of n_bursts and n_flows")
    if n_flows is not None:
        nf = _check_n(n_flows, "n_flows")
        if nf % burst_size:
            raise ValueError(f"n_flows={nf} is not a multiple of burst_size={burst_size}")
        nb = nf // burst_size
    else:
        nb = _check_n(n_bursts, "n_bursts")  # type: ignore[arg-type]
    if nb == 0:
        raise ValueError("gather_bursts: need at least one burst")
    if composition not in ("exact", "random"):
        raise ValueError(f"composition must be 'exact' or 'random', got {composition!r}")
    if isinstance(d, Mixture) and composition == "exact":
        counts_f = d.weights * burst_size
        counts = np.rint(counts_f).astype(np.int64)
        if np.any(np.abs(counts_f - counts) > 1e-9) or counts.sum() != burst_size:
            raise ValueError(
                f"composition='exact' needs burst_size * weight to be whole numbers, got {counts_f.tolist()}; "
                "use composition='random'"
            )
    classes = fixed_classes(d)
    if classes is not None:
        weights, sizes_c, deadlines_c = classes
        arrival, src, dst_col, sizes, deadlines = _fabric.gather_bursts(
            seed=_native_seed(seed),
            class_weights=weights,
            class_sizes_bytes=sizes_c,
            class_deadlines_s=deadlines_c,
            exact=composition == "exact",
            burst_size=burst_size,
            burst_rate_hz=rate,
            n_bursts=nb,
            dst=int(dst),
            hosts=hosts,
        )
        df = _make_trace(arrival, src, dst_col, sizes, deadlines, hosts, "gather_bursts")
        df.attrs["burst_size"] = burst_size
        return df
    rng = _rng(seed)
    t_burst = np.cumsum(rng.exponential(1.0 / rate, nb))
    senders = _distinct_senders(rng, nb, burst_size, hosts, dst)
    n = nb * burst_size
    arrival = np.repeat(t_burst, burst_size)
    if isinstance(d, Mixture) and composition == "exact":
        base = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        order = np.argsort(rng.random((nb, burst_size)), axis=1)
        cls = base[order].reshape(-1)
        sizes = d.sample_sizes_for_classes(rng, cls)
        deadlines = d.deadlines_s[cls]
    else:
        sizes, deadlines = _draw_sizes(d, rng, n)
    df = _make_trace(arrival, senders.reshape(-1), np.full(n, dst), sizes, deadlines, hosts, "gather_bursts")
    df.attrs["burst_size"] = burst_size
    return df


def incast(
    n_senders: int,
    query_bytes: float = 25_000.0,
    dst: int = 0,
    hosts: int | None = None,
    n_queries: int = 500,
    interval_s: float | None = None,
    rate_hz: float | None = None,
    seed: int | None = 0,
    *,
    split: bool = False,
) -> pd.DataFrame:
    """Synchronized many-to-one responses (incast), SDC/RACS style.

    Munir (SDC/RACS thesis), section 3.5.2 "Incast Scenario" (and 4.3.2):
    "Each client requests 25 KB queries from n different servers, and each
    server responds with the requested amount of data. This pattern is
    repeated 500 times." So by default every one of the ``n_senders``
    servers sends ``query_bytes`` (25 KB = 25,000 B; the thesis does not
    define KB, decimal is assumed) to ``dst``, all at the query instant.
    With ``split=True`` each sends ``query_bytes / n_senders`` instead
    (a fixed total response, the DCTCP-paper variant). Links are 1 Gbps,
    300 us in the thesis.

    In the thesis a query is issued when the previous one is answered (a
    closed loop a static trace cannot express); here queries start at fixed
    intervals (``interval_s``: query k at ``k * interval_s``) or as a
    Poisson process (``rate_hz``). Give exactly one.

    Parameters
    ----------
    n_senders : int
        Servers answering each query (>= 1).
    query_bytes : float
        Response size per server (or total, with ``split``), bytes.
    dst : int
        The client.
    hosts : int or None
        Number of hosts (default ``n_senders + 1``). Each query picks
        ``n_senders`` distinct random servers other than ``dst``.
    n_queries : int
        Number of queries (500 in the thesis).
    interval_s, rate_hz : float or None
        Query spacing, or Poisson query rate. Exactly one.
    seed : int or None
        Seed of the generator.
    split : bool
        Divide ``query_bytes`` among the senders.

    Returns
    -------
    pandas.DataFrame
        Validated trace; flow ``i`` answers query ``i // n_senders``.
    """
    if isinstance(n_senders, bool) or not isinstance(n_senders, (int, np.integer)) or n_senders < 1:
        raise ValueError(f"n_senders must be an integer >= 1, got {n_senders!r}")
    n_senders = int(n_senders)
    q = _check_pos("query_bytes", query_bytes)
    hosts = _check_hosts(n_senders + 1 if hosts is None else hosts)
    if not 0 <= dst < hosts:
        raise ValueError(f"dst must be in 0..{hosts - 1}, got {dst!r}")
    nq = _check_n(n_queries, "n_queries")
    if nq == 0:
        raise ValueError("incast: n_queries must be >= 1")
    if (interval_s is None) == (rate_hz is None):
        raise ValueError("incast: give exactly one of interval_s and rate_hz")
    rng = _rng(seed)
    if interval_s is not None:
        step = _check_pos("interval_s", interval_s)
        t_query = np.arange(nq, dtype=np.float64) * step
    else:
        t_query = np.cumsum(rng.exponential(1.0 / _check_pos("rate_hz", rate_hz), nq))  # type: ignore[arg-type]
    senders = _distinct_senders(rng, nq, n_senders, hosts, dst)
    n = nq * n_senders
    size = q / n_senders if split else q
    df = _make_trace(
        np.repeat(t_query, n_senders), senders.reshape(-1), np.full(n, dst), np.full(n, size), None, hosts, "incast"
    )
    df.attrs["n_senders"] = n_senders
    return df


def background_plus_queries(
    query_dist: DistLike = "sdc_uniform",
    query_rate_hz: float = 1000.0,
    n_queries: int = 1000,
    *,
    n_background: int = 2,
    hosts: int = 4,
    receiver: int = 0,
    link_gbps: float = 1.0,
    background_bytes: float | None = None,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Long-lived background flows plus short query responses to one receiver (SDC/RACS mix).

    Munir, section 3.5.2 "Mix of Short and Long Flows" (and 4.3.2): "we
    connect four hosts to a switch. Two hosts generate long-lived background
    traffic. One host acts as a receiver and one host generates the
    response flow lengths uniformly distributed across [2KB, 50KB]."
    Section 3.5.3 ("Benchmark Traffic") uses "Pareto distributed traffic
    with shape parameter 1.2 and average response size of 25KB" with "two
    long flows in the background" and arrival rates up to 2000 flows/s
    (``query_dist="sdc_pareto"``).

    Layout: host ``receiver`` receives everything; the next
    ``n_background`` hosts (in increasing id order, skipping the receiver)
    each start one background flow at t = 0; the remaining hosts send the
    query responses (each from a uniformly random one of them), arriving as
    a Poisson process of rate ``query_rate_hz``. The thesis does not give
    the query rate of the 3.5.2 scenario; 1000/s is a default.

    Parameters
    ----------
    query_dist : SizeDistribution or str
        Response sizes (default uniform on [2000, 50000] B).
    query_rate_hz : float
        Poisson rate of responses.
    n_queries : int
        Number of responses.
    n_background : int
        Number of long-lived flows (2 in the thesis).
    hosts : int
        Number of hosts (4 in the thesis); needs ``hosts >= n_background + 2``.
    receiver : int
        The receiving host.
    link_gbps : float
        Link rate, used only for the default ``background_bytes``.
    background_bytes : float or None
        Size of each background flow. "Long-lived" flows must outlast the
        queries: the default is what one flow alone at line rate would send
        until 1 s after the last query arrives,
        ``link_gbps * 1e9 / 8 * (t_last_query + 1)``.
    seed : int or None
        Seed of the generator.

    Returns
    -------
    pandas.DataFrame
        Validated trace: background flows first (ids 0..n_background-1, at
        t = 0), then the queries in arrival order.
    """
    d = _as_distribution(query_dist)
    hosts = _check_hosts(hosts, 3)
    if isinstance(n_background, bool) or not isinstance(n_background, (int, np.integer)) or n_background < 0:
        raise ValueError(f"n_background must be an integer >= 0, got {n_background!r}")
    if hosts < n_background + 2:
        raise ValueError(f"hosts={hosts} is too few for a receiver, {n_background} background senders and a query "
                         "sender")
    if not 0 <= receiver < hosts:
        raise ValueError(f"receiver must be in 0..{hosts - 1}, got {receiver!r}")
    rate = _check_pos("query_rate_hz", query_rate_hz)
    link = _check_pos("link_gbps", link_gbps)
    nq = _check_n(n_queries, "n_queries")
    others = [h for h in range(hosts) if h != receiver]
    bg_hosts = np.asarray(others[:n_background], dtype=np.int64)
    q_hosts = np.asarray(others[n_background:], dtype=np.int64)
    rng = _rng(seed)
    t_q = np.cumsum(rng.exponential(1.0 / rate, nq))
    q_src = q_hosts[rng.integers(0, q_hosts.size, nq)]
    q_size, q_deadline = _draw_sizes(d, rng, nq)
    if background_bytes is None:
        t_last = float(t_q[-1]) if nq else 0.0
        bg = link * 1e9 / 8.0 * (t_last + 1.0)
    else:
        bg = _check_pos("background_bytes", background_bytes)
    nb = int(n_background)
    df = _make_trace(
        np.concatenate([np.zeros(nb), t_q]),
        np.concatenate([bg_hosts, q_src]),
        np.full(nb + nq, receiver),
        np.concatenate([np.full(nb, bg), q_size]),
        np.concatenate([np.full(nb, np.nan), q_deadline]),
        hosts,
        "background_plus_queries",
    )
    df.attrs["n_background"] = nb
    return df


def merge_traces(traces: Sequence[pd.DataFrame], hosts: int | None = None) -> pd.DataFrame:
    """Concatenate traces, stable-sort by arrival and renumber ids 0..n-1.

    Parameters
    ----------
    traces : sequence of DataFrame
        Traces (each is validated first).
    hosts : int or None
        Checked against every flow.

    Returns
    -------
    pandas.DataFrame
        The validated merged trace.
    """
    if len(traces) == 0:
        raise ValueError("merge_traces: no traces")
    parts = [validate_trace(t, hosts, source=f"merge_traces[{i}]") for i, t in enumerate(traces)]
    df = pd.concat(parts, ignore_index=True)
    df = df.iloc[np.argsort(df["arrival_s"].to_numpy(), kind="stable")].reset_index(drop=True)
    df["id"] = np.arange(len(df), dtype=np.int64)
    return validate_trace(df, hosts, source="merge_traces")
