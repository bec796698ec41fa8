"""M/G/1 priority-queue model of PIAS / multi-level-feedback demotion thresholds.

Moved from ``flowsched.baselines.thresholds`` (issue 18, item 5; that path still works).
It works on any :class:`~flowsched.workloads.SizeDistribution` through the distribution's
own :meth:`~flowsched.workloads.SizeDistribution.sf`,
:meth:`~flowsched.workloads.SizeDistribution.partial_moment`,
:attr:`~flowsched.workloads.SizeDistribution.atoms_bytes` and
:attr:`~flowsched.workloads.SizeDistribution.lattice_bytes`: it never looks at the type.

The model (pFabric, Alizadeh et al., SIGCOMM 2013, section 6.1 and its
equation for ``FCT_n(t)``; ``shared/papers/004_4e7be041b0adcfda.txt``): one
switch port of rate C with K strict-priority queues. A flow starts in queue 1
(the highest) and is demoted to queue k+1 once it has sent ``a_k`` bytes
(``thresholds_bytes = [a_1, ..., a_{K-1}]``, increasing; ``a_0 = 0``,
``a_K = inf``). Queues are FIFO inside, strictly prioritised and preemptive
between each other. Flows arrive as a Poisson process of rate lambda with i.i.d.
sizes S ~ F; the load is rho = lambda E[S] / C. The paper treats each queue as
an M/G/1 queue and applies Pollaczek-Khinchine to the work of each priority
level ("The formula can be generalized for any number of priority queues").

Result (mean sojourn time of a flow of ``x`` bytes with a_{k-1} < x <= a_k,
i.e. a flow that finishes in queue k)::

    T(x) = (W_k + x / C) / (1 - rho_{k-1})

    rho_k = lambda E[min(S, a_k)] / C          (rho_0 = 0, rho_K = rho)
    W_k   = lambda E[min(S, a_k)^2] / (2 C^2 (1 - rho_k))

W_k is the P-K mean unfinished work of the "first a_k bytes of every flow"
system, which is an M/G/1 queue with service min(S, a_k) (those bytes are
served ahead of every byte beyond a_k, so the rest of the traffic does not
affect them). All of it is ahead of the tagged flow: a flow already there has
either priority over the tagged flow's last queue or arrived earlier in the same
FIFO. During the tagged flow's stay, every later arrival's first a_{k-1} bytes
(the load rho_{k-1}) preempt it, hence the 1/(1 - rho_{k-1}) factor. K = 1 is
P-K (FIFO), and thresholds -> every size is Kleinrock's foreground-background
(LAS) formula.

For two queues (one threshold t) and C = 1 the mean of T(x)/x is the paper's
equation::

    FCT_n(t) = F_S(t) + (1 - F_S(t)) / (1 - rho_B(t))
               + lambda E[min(S,t)^2] / (2 (1 - rho_B(t))) * int_0^t f_S(y)/y dy
               + lambda E[S^2] / (2 (1 - rho) (1 - rho_B(t))) * int_t^inf f_S(y)/y dy

with rho_B(t) = lambda E[min(S, t)] the load of the bytes sent in the high
queue. The extraction of the paper in ``shared/papers`` has this equation
garbled (see "Ambiguities" below); the form above is the one the paper's own
derivation gives (P-K in each queue) and is what this module computes.

The paper's metric is the *normalized* FCT (FCT divided by the flow's ideal
time x / C, averaged over flows): :func:`mean_slowdown_mlfq`. The mean FCT in
seconds (the same T(x), averaged without the 1/x weight) is
:func:`mean_fct_mlfq`. :func:`optimal_thresholds` minimises either.

Ambiguities
-----------
* The equation as extracted reads ``... + lambda/(2(1-rho_BS)) int_t^inf x^2 f
  dx + lambda(1-rho)/(2(1-rho_BS)) int_0^inf f(y)/y dy``: the limits and the
  (1 - rho) factor are garbled, and the product structure (second moment times
  int f(y)/y dy) is lost. We use the form derived above; its first two terms
  are as printed.
* ``rho_{B_S}(t)`` is not defined in the extraction. Read as the load of
  B_S(t) = min(S, t), the bytes a flow sends while in the high queue, the
  equation is the PIAS/MLFQ demotion model above (``assignment="demotion"``,
  the default, and what the simulator's ``pias`` does). Read as the load of the
  flows *smaller* than t (whole flows classified by their known size, which is
  pFabric's setting: ``assignment="size"``), rho_B(t) = lambda E[S; S <= t] and
  the third term has E[S^2; S <= t]; T(x) keeps the same form (Kleinrock's
  preemptive-resume priority classes). Fig. 16's numbers point to the size
  reading: on the web-search CDF (ns-2 sampling) the optimal threshold for
  FCT_n at 10% load is 858 KB with ``"size"`` (the paper: "approximately 880";
  881 KB if sizes are counted in 1500-byte wire packets) but 320 KB with
  ``"demotion"``. At 80% load the size reading gives 1.37 MB, not the paper's
  "approximately 1740 KB" (demotion: 0.65 MB); we found no variant of the
  equation that gives both ends (the figure itself is missing from the text).
* The model is fluid and has no packets, buffers, drops or TCP: the paper's
  simulations (Fig. 17) include all of these, so only the model's claims
  (Fig. 16: the optimal threshold for web search) can be reproduced here.

The ``flowsched`` simulator's ``pias`` scheduler on one link matches the model's
assumptions (fluid, work conserving, queue = number of thresholds passed, FIFO
by arrival inside a queue, strict preemptive priority) with its default
``pias_sharing="fifo"``; with ``pias_sharing="fair"`` (processor sharing inside a
queue) its model is :func:`mlps_flow_fct` / :func:`mean_fct_mlps` (at the end of
this module). FIFO by *arrival* and
FIFO by time of *entry into the queue* give the same order (an earlier flow
reaches every queue before a later one), so the two readings agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from flowsched import workloads as wl

__all__ = [
    "mean_fct_mlfq",
    "mean_fct_mlps",
    "mean_slowdown_mlfq",
    "mlfq_flow_fct",
    "mlps_flow_fct",
    "optimal_thresholds",
    "partial_moment",
]

_ASSIGNMENTS = ("demotion", "size")
_OBJECTIVES = ("fct", "slowdown")


# ============================================================================
# partial moments (the distributions' own: SizeDistribution.partial_moment and sf)
# ============================================================================


def _get_dist(dist: wl.SizeDistribution | str) -> wl.SizeDistribution:
    if isinstance(dist, str):
        dist = wl.get_distribution(dist)
    if not isinstance(dist, wl.SizeDistribution):
        raise TypeError(f"dist must be a flowsched.workloads.SizeDistribution or a name, got {dist!r}")
    return dist


def _cum(dist: wl.SizeDistribution, p: int, t: npt.ArrayLike) -> Any:
    """E[S^p; S <= t] (t may be inf)."""
    return dist.partial_moment(p, 0.0, t)


def partial_moment(dist: wl.SizeDistribution | str, p: int, a: float, b: float) -> float:
    """E[S^p; a < S <= b] in bytes^p, exactly (closed forms per distribution).

    The same as ``dist.partial_moment(p, a, b)``
    (:meth:`flowsched.workloads.SizeDistribution.partial_moment`), for a name too.

    Parameters
    ----------
    dist : SizeDistribution or a name for :func:`flowsched.workloads.get_distribution`.
    p : int
        -1, 0, 1 or 2 (p = 0 is P(a < S <= b)).
    a, b : float
        0 <= a <= b; b may be ``inf``.
    """
    if p not in (-1, 0, 1, 2):
        raise ValueError(f"partial_moment: p must be -1, 0, 1 or 2, got {p!r}")
    if not (a >= 0 and b >= a):
        raise ValueError(f"partial_moment: need 0 <= a <= b, got a={a!r}, b={b!r}")
    return float(_get_dist(dist).partial_moment(p, np.float64(a), np.float64(b)))


# ============================================================================
# the model
# ============================================================================


def _check_load(load: float) -> float:
    if not (isinstance(load, (int, float, np.integer, np.floating)) and 0.0 < float(load) < 1.0):
        raise ValueError(f"load must be a number with 0 < load < 1 (the queue is unstable at load >= 1), got {load!r}")
    return float(load)


def _check_link(link_gbps: float) -> float:
    if not (
        isinstance(link_gbps, (int, float, np.integer, np.floating)) and math.isfinite(link_gbps) and link_gbps > 0
    ):
        raise ValueError(f"link_gbps must be a finite number > 0, got {link_gbps!r}")
    return float(link_gbps)


def _check_thresholds(thresholds_bytes: Sequence[float]) -> np.ndarray:
    if isinstance(thresholds_bytes, (str, bytes)):  # a sequence, but of characters
        raise ValueError(f"thresholds_bytes must be a sequence of numbers, got {thresholds_bytes!r}")
    try:
        th = np.asarray([float(x) for x in thresholds_bytes], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"thresholds_bytes must be a sequence of numbers, got {thresholds_bytes!r}") from None
    for i, x in enumerate(th):
        if not (x > 0):  # also catches NaN
            raise ValueError(f"thresholds_bytes[{i}] must be > 0 bytes, got {x!r}")
        if i and not (x > th[i - 1]):
            raise ValueError(
                f"thresholds_bytes must be strictly increasing: thresholds_bytes[{i}] = {x!r} "
                f"<= thresholds_bytes[{i - 1}] = {th[i - 1]!r}"
            )
    return th


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


@dataclass(frozen=True)
class _Pointwise:
    """Quantities at a vector of queue edges t (bytes, C = 1)."""

    sf: np.ndarray  # P(S > t)
    cum1: np.ndarray  # E[S; S <= t]
    rho: np.ndarray  # rho(t): the load served ahead of the bytes beyond t
    wait: np.ndarray  # W(t) = lambda m2(t) / (2 (1 - rho(t))): P-K work of that load
    tail_inv: np.ndarray  # E[1/S; S > t] (only for the slowdown objective)


def _pointwise(dist: wl.SizeDistribution, t: np.ndarray, lam: float, assignment: str, need_inv: bool) -> _Pointwise:
    """lam = lambda / C (arrivals per byte-time), so lam E[S] = rho.

    "demotion": rho(t) = lam E[min(S, t)], m2(t) = E[min(S, t)^2] (the first t bytes of
    every flow); "size": rho(t) = lam E[S; S <= t], m2(t) = E[S^2; S <= t] (whole flows
    smaller than t)."""
    t = np.asarray(t, np.float64)
    sf = dist.sf(t)
    cum1, cum2 = _cum(dist, 1, t), _cum(dist, 2, t)
    if assignment == "demotion":
        fin = np.isfinite(t)
        tf = np.where(fin, t, 0.0)
        m1 = cum1 + np.where(fin, tf * sf, 0.0)
        m2 = cum2 + np.where(fin, tf * tf * sf, 0.0)
    else:
        m1, m2 = cum1, cum2
    rho = lam * m1
    wait = lam * m2 / (2.0 * (1.0 - rho))
    tail_inv = dist.partial_moment(-1, t, np.full_like(t, math.inf)) if need_inv else np.zeros_like(t)
    return _Pointwise(sf=sf, cum1=cum1, rho=rho, wait=wait, tail_inv=tail_inv)


def _terms(pa: _Pointwise, pb: _Pointwise, objective: str) -> np.ndarray:
    """Per-queue terms for lower edges a and upper edges b (broadcast):
    (W(b) P(a < S <= b) + E[S; a < S <= b]) / (1 - rho(a))  for the mean FCT (byte-times),
    (W(b) E[1/S; a < S <= b] + P(a < S <= b)) / (1 - rho(a))  for the mean slowdown;
    0 where the queue gets no flows (b <= a included)."""
    prob = np.maximum(pa.sf - pb.sf, 0.0)
    with np.errstate(invalid="ignore"):
        if objective == "fct":
            num = pb.wait * prob + np.maximum(pb.cum1 - pa.cum1, 0.0)
        else:
            num = pb.wait * np.maximum(pa.tail_inv - pb.tail_inv, 0.0) + prob
        return np.where(prob > 0, num / (1.0 - pa.rho), 0.0)


def _take(p: _Pointwise, idx) -> _Pointwise:
    return _Pointwise(*(getattr(p, f)[idx] for f in ("sf", "cum1", "rho", "wait", "tail_inv")))


def _edges(th: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], th, [math.inf]])


def _objective(dist: wl.SizeDistribution, th: np.ndarray, lam: float, assignment: str, objective: str) -> float:
    """Mean FCT in byte-times (objective 'fct') or mean slowdown ('slowdown')."""
    pw = _pointwise(dist, _edges(th), lam, assignment, need_inv=objective == "slowdown")
    return float(np.sum(_terms(_take(pw, slice(None, -1)), _take(pw, slice(1, None)), objective)))


def _setup(
    dist: wl.SizeDistribution | str, load: float, link_gbps: float
) -> tuple[wl.SizeDistribution, float, float, float]:
    dist = _get_dist(dist)
    load = _check_load(load)
    c_bytes = _check_link(link_gbps) * 1e9 / 8.0
    es = float(_cum(dist, 1, np.float64(math.inf)))
    if not (math.isfinite(es) and es > 0):
        raise ValueError(f"the size distribution needs a finite mean > 0, got E[S] = {es!r} for {dist!r}")
    return dist, load, c_bytes, load / es


def mean_fct_mlfq(
    thresholds_bytes: Sequence[float],
    dist: wl.SizeDistribution | str,
    load: float,
    link_gbps: float = 10.0,
    *,
    assignment: str = "demotion",
) -> float:
    """Mean FCT (seconds) of the pFabric section 6.1 M/G/1 priority-queue model.

    K = len(thresholds_bytes) + 1 strict-priority queues, FIFO inside, preemptive
    between; a flow is demoted to queue k+1 once it has sent thresholds_bytes[k-1]
    bytes. With a_0 = 0, a_K = inf, C = link rate in bytes/s, lambda = load C / E[S]::

        E[T] = sum_k (W_k P(a_{k-1} < S <= a_k) + E[S; a_{k-1} < S <= a_k] / C) / (1 - rho_{k-1})
        rho_k = lambda E[min(S, a_k)] / C,  W_k = lambda E[min(S, a_k)^2] / (2 C^2 (1 - rho_k))

    (the module docstring derives it; the paper's FCT_n(t) is the same T(x)
    averaged as T(x) / (x/C), see :func:`mean_slowdown_mlfq`). No thresholds is
    M/G/1 FIFO (Pollaczek-Khinchine); a threshold at or above every size changes
    nothing.

    Parameters
    ----------
    thresholds_bytes : sequence of float
        Demotion thresholds, > 0 and strictly increasing (``inf`` allowed last).
        Empty: one FIFO queue.
    dist : SizeDistribution or name
        Flow sizes in bytes (any :mod:`flowsched.workloads` distribution with a
        finite mean; E[S^2] = inf gives inf).
    load : float
        rho = lambda E[S] / C, 0 < load < 1.
    link_gbps : float
        Link rate C in Gb/s (sizes are bytes on the wire: no header factor).
    assignment : {"demotion", "size"}
        ``"demotion"`` (PIAS/MLFQ, default): a flow's first a_1 bytes are in queue
        1, and so on. ``"size"``: the whole flow sits in the queue of its size
        (known sizes; preemptive-resume priority classes, Kleinrock).

    Returns
    -------
    float
        Mean flow completion time in seconds (fluid; no propagation delay).
    """
    dist, _, c_bytes, lam = _setup(dist, load, link_gbps)
    th = _check_thresholds(thresholds_bytes)
    _check_choice("assignment", assignment, _ASSIGNMENTS)
    return _objective(dist, th, lam, assignment, "fct") / c_bytes


def mean_slowdown_mlfq(
    thresholds_bytes: Sequence[float],
    dist: wl.SizeDistribution | str,
    load: float,
    *,
    assignment: str = "demotion",
) -> float:
    """The paper's normalized FCT: E[T(S) / (S/C)] under the same model (dimensionless).

    For one threshold this is the pFabric equation FCT_n(t) (section 6.1)::

        F(t) + (1 - F(t))/(1 - rho_B) + lambda E[min(S,t)^2]/(2(1 - rho_B)) E[1/S; S <= t]
             + lambda E[S^2]/(2(1 - rho)(1 - rho_B)) E[1/S; S > t],   rho_B = lambda E[min(S,t)]

    in units where C = 1 (the value does not depend on the link rate). It is
    ``inf`` when E[1/S] diverges (e.g. exponential sizes, density > 0 at 0).
    """
    dist, _, _, lam = _setup(dist, load, 10.0)
    th = _check_thresholds(thresholds_bytes)
    _check_choice("assignment", assignment, _ASSIGNMENTS)
    return _objective(dist, th, lam, assignment, "slowdown")


def mlfq_flow_fct(
    size_bytes: float | np.ndarray,
    thresholds_bytes: Sequence[float],
    dist: wl.SizeDistribution | str,
    load: float,
    link_gbps: float = 10.0,
    *,
    assignment: str = "demotion",
) -> np.ndarray:
    """Model mean FCT (seconds) of a flow of the given size(s):
    T(x) = (W_k + x/C) / (1 - rho_{k-1}) for a_{k-1} < x <= a_k (see :func:`mean_fct_mlfq`)."""
    dist, _, c_bytes, lam = _setup(dist, load, link_gbps)
    th = _check_thresholds(thresholds_bytes)
    _check_choice("assignment", assignment, _ASSIGNMENTS)
    edges = _edges(th)
    pw = _pointwise(dist, edges, lam, assignment, need_inv=False)
    x = np.asarray(size_bytes, np.float64)
    if not np.all(x > 0):  # also NaN: T(x) is defined for sizes > 0
        raise ValueError("size_bytes must be > 0")
    k = np.clip(np.searchsorted(edges, x, side="left") - 1, 0, len(th))  # a_k < x <= a_{k+1}, 0-based
    return (pw.wait[k + 1] + x) / (1.0 - pw.rho[k]) / c_bytes


# ============================================================================
# optimisation
# ============================================================================


def _quantile(dist: wl.SizeDistribution, u: float, lo: float, hi: float) -> float:
    """Smallest t in [lo, hi] (geometric bisection) with P(S <= t) >= u."""
    for _ in range(200):
        if hi / lo < 1 + 1e-12:
            break
        mid = math.sqrt(lo * hi)
        if float(_cum(dist, 0, np.float64(mid))) >= u:
            hi = mid
        else:
            lo = mid
    return hi


def _search_range(dist: wl.SizeDistribution) -> tuple[float, float]:
    """[lo, hi] in bytes holding every threshold worth trying: below lo almost no flow is
    smaller (P < 1e-6), above hi none is larger (P < 1e-12; the top of a bounded support)."""
    if float(dist.sf(np.float64(1e18))) > 1e-12:
        raise ValueError("the size distribution has mass above 1e18 bytes")
    t_lo = _quantile(dist, 1e-6, 1e-3, 1e18)
    t_hi = _quantile(dist, 1 - 1e-12, 1e-3, 1e18)
    return min(t_lo, t_hi) * 0.5, t_hi * (1 + 1e-9)


def _grid(dist: wl.SizeDistribution, lo: float, hi: float, n: int) -> np.ndarray:
    """Candidate thresholds: a log grid, plus the atoms of a discrete part (the optimum of a
    threshold sits on an atom or in a continuous part: in a gap without mass, raising a
    threshold only adds high-priority bytes), with log-grid points also rounded down to
    whole packets for ns-2 style integer ranges."""
    g = [np.geomspace(lo, hi, n)]
    atoms = dist.atoms_bytes
    atoms = atoms[(atoms >= lo) & (atoms <= hi)]
    if atoms.size <= 2000:
        g.append(atoms)
    unit = dist.lattice_bytes
    if unit is not None:
        g.append(np.maximum(np.floor(g[0] / unit), 1.0) * unit)
    out = np.unique(np.concatenate(g))
    return out[(out >= lo) & (out <= hi)]


def _cost(pa: _Pointwise, pb: _Pointwise, objective: str) -> np.ndarray:
    """Matrix of :func:`_terms` for lower edges a (rows) and upper edges b (columns)."""
    col = _take(pa, (slice(None), None))
    row = _take(pb, (None, slice(None)))
    return _terms(col, row, objective)


@overload
def optimal_thresholds(
    dist: wl.SizeDistribution | str, load: float, n_queues: int, link_gbps: float = ..., *, objective: str = ...,
    assignment: str = ..., grid_points: int = ..., return_value: Literal[False] = ...,
) -> list[float]: ...
@overload
def optimal_thresholds(
    dist: wl.SizeDistribution | str, load: float, n_queues: int, link_gbps: float = ..., *, objective: str = ...,
    assignment: str = ..., grid_points: int = ..., return_value: Literal[True],
) -> tuple[list[float], float]: ...
@overload
def optimal_thresholds(
    dist: wl.SizeDistribution | str, load: float, n_queues: int, link_gbps: float = ..., *, objective: str = ...,
    assignment: str = ..., grid_points: int = ..., return_value: bool,
) -> list[float] | tuple[list[float], float]: ...
def optimal_thresholds(
    dist: wl.SizeDistribution | str,
    load: float,
    n_queues: int,
    link_gbps: float = 10.0,
    *,
    objective: str = "fct",
    assignment: str = "demotion",
    grid_points: int = 600,
    return_value: bool = False,
) -> list[float] | tuple[list[float], float]:
    """Thresholds (bytes) minimising the model's mean FCT (or the paper's mean slowdown).

    The model is the per-flow FIFO one (:func:`mean_fct_mlfq`): the flows of a queue are
    served one after another, as by the simulator's default ``pias``. They are not the
    optimum of the processor-sharing model (:func:`mean_fct_mlps`, ``pias`` with
    ``pias_sharing="fair"``, PIAS over DCTCP).

    The objective is a sum over queues of terms that each depend only on the queue's
    two edges a_{k-1}, a_k (the load ahead, rho(a_{k-1}), and the P-K work W(a_k)), so
    a dynamic program over a grid of candidate thresholds finds the global optimum on
    the grid, for every number of queues at once (min-plus products of one cost
    matrix). The grid is ``grid_points`` log-spaced sizes over the support plus the
    distribution's atoms (and whole-packet sizes for ns-2 integer ranges). The grid
    optimum is then polished coordinate by coordinate (bounded Brent steps in log size
    between the neighbouring thresholds). The result is deterministic. Empty queues
    (equal thresholds) are allowed, so the optimum with more queues is never worse;
    the optimum for n_queues - 1 (plus one duplicated threshold) is polished too and
    kept if better.

    Parameters
    ----------
    dist : SizeDistribution or name
    load : float
        0 < load < 1.
    n_queues : int
        K >= 2 (K - 1 thresholds are returned).
    link_gbps : float
        Link rate (only scales the FCT; the optimum does not depend on it).
    objective : {"fct", "slowdown"}
        Mean FCT (:func:`mean_fct_mlfq`) or mean normalized FCT
        (:func:`mean_slowdown_mlfq`, the objective of the paper's Fig. 16).
    assignment : {"demotion", "size"}
        See :func:`mean_fct_mlfq`.
    grid_points : int
        Size of the log grid (>= 50; memory and time grow as its square).
    return_value : bool
        Also return the objective at the optimum (seconds for "fct").

    Returns
    -------
    list of float
        K - 1 strictly increasing thresholds in bytes (or ``(thresholds, value)``).
        Where the optimum leaves a queue empty (two equal thresholds), the upper one
        is raised by a relative 1e-9 to keep them strictly increasing.

    Raises
    ------
    ValueError
        Bad load, n_queues, objective or assignment; or an objective that is infinite
        for every choice of thresholds (E[S^2] = inf, or E[1/S; small flows] = inf for
        the slowdown, e.g. exponential sizes).
    """
    if isinstance(n_queues, bool) or not isinstance(n_queues, (int, np.integer)) or n_queues < 2:
        raise ValueError(f"n_queues must be an integer >= 2 (one threshold or more), got {n_queues!r}")
    n_queues = int(n_queues)
    _check_choice("objective", objective, _OBJECTIVES)
    _check_choice("assignment", assignment, _ASSIGNMENTS)
    if isinstance(grid_points, bool) or not isinstance(grid_points, (int, np.integer)) or grid_points < 50:
        raise ValueError(f"grid_points must be an integer >= 50, got {grid_points!r}")
    dist, load, c_bytes, lam = _setup(dist, load, link_gbps)
    if not math.isfinite(float(_cum(dist, 2, np.float64(math.inf)))):
        raise ValueError(f"E[S^2] is infinite for {dist!r}: the mean FCT is infinite whatever the thresholds")
    need_inv = objective == "slowdown"
    lo, hi = _search_range(dist)
    grid = _grid(dist, lo, hi, int(grid_points))
    # edges: 0 (the top of queue 0's range starts there), the grid, inf
    p0 = _pointwise(dist, np.array([0.0]), lam, assignment, need_inv)
    pg = _pointwise(dist, grid, lam, assignment, need_inv)
    pinf = _pointwise(dist, np.array([math.inf]), lam, assignment, need_inv)
    first = _cost(p0, pg, objective)[0]  # queue 1 = (0, b]
    mid = _cost(pg, pg, objective)  # (a, b]
    last = _cost(pg, pinf, objective)[:, 0]  # (a, inf)
    if need_inv and not np.isfinite(first).any():
        raise ValueError(
            f"the mean slowdown is infinite for {dist!r} whatever the thresholds (E[1/S] diverges at 0)"
        )
    lower = np.tril(np.ones(mid.shape, dtype=bool), k=-1)
    mid[lower] = np.inf  # b < a is not allowed

    f = lambda th: _objective(dist, np.sort(th), lam, assignment, objective)  # noqa: E731
    dlog = float(np.max(np.diff(np.log(grid)))) if grid.size > 1 else 1.0

    value = first.copy()  # best cost of queues 1..k with a_k = grid[j]
    back: list[np.ndarray] = []
    prev_best: np.ndarray | None = None
    best_th, best_v = np.zeros(0), math.inf
    for k in range(1, n_queues):
        if k > 1:
            tot = value[:, None] + mid
            arg = np.argmin(tot, axis=0)
            back.append(arg)
            value = tot[arg, np.arange(grid.size)]
        total = value + last
        j = int(np.argmin(total))
        idx = [j]
        for arg in reversed(back):
            idx.append(int(arg[idx[-1]]))
        cands = [grid[np.array(idx[::-1])]]
        if prev_best is not None:  # the optimum with one queue fewer, one queue left empty
            cands.append(np.sort(np.concatenate([prev_best, prev_best[-1:]])))
        best_th, best_v = np.zeros(0), math.inf
        for th0 in cands:
            th1, v1 = _polish(f, dist, th0, f(th0), lo, hi, dlog)
            if v1 < best_v:
                best_th, best_v = th1, v1
        prev_best = best_th
    out = [float(x) for x in np.sort(best_th)]
    for i in range(1, len(out)):
        if not out[i] > out[i - 1]:
            out[i] = math.nextafter(out[i - 1] * (1 + 1e-9), math.inf)
    val = _objective(dist, np.asarray(out), lam, assignment, objective)
    if objective == "fct":
        val /= c_bytes
    if return_value:
        return out, float(val)
    return out


def _snap(dist: wl.SizeDistribution, t: float) -> list[float]:
    """The largest atoms at or below t (an atom, not a point just above or below it, is
    where a threshold on a discrete part belongs)."""
    out: list[float] = []
    unit = dist.lattice_bytes
    if unit is not None:
        out.append(math.floor(t / unit) * unit)
    atoms = dist.atoms_bytes
    below = atoms[atoms <= t]
    if below.size:
        out.append(float(below.max()))
    return [x for x in out if x > 0]


def _polish(
    f: Callable[[np.ndarray], float], dist: wl.SizeDistribution, th: np.ndarray, v: float, lo: float, hi: float,
    step: float, rounds: int = 4,
) -> tuple[np.ndarray, float]:
    """Coordinate-wise search in log size: a 9-point scan over +-2 grid steps (kept between
    the neighbouring thresholds), a bounded Brent step around the best point, and the atoms
    just below the candidates. Works on the thresholds themselves so that an atom (an exact
    value) is never lost to exp(log(x)) rounding."""
    from scipy import optimize  # here: scipy.optimize takes longer to import than the rest of flowsched

    th = np.asarray(th, np.float64).copy()
    for _ in range(rounds):
        improved = False
        for i in range(len(th)):
            a = max(math.log(th[i - 1]) if i > 0 else math.log(lo), math.log(th[i]) - 2 * step)
            b = min(math.log(th[i + 1]) if i + 1 < len(th) else math.log(hi), math.log(th[i]) + 2 * step)
            if not b > a:
                continue

            def g(x: float, i: int = i) -> float:
                tt = th.copy()
                tt[i] = x
                return f(tt)

            zs = np.linspace(a, b, 9)
            vals = [g(math.exp(z)) for z in zs]
            j = int(np.argmin(vals))
            res = optimize.minimize_scalar(
                lambda z: g(math.exp(z)), bounds=(zs[max(j - 1, 0)], zs[min(j + 1, 8)]), method="bounded",
                options={"xatol": 1e-10},
            )
            cands = [(vals[j], math.exp(zs[j])), (float(res.fun), math.exp(float(res.x)))]
            lo_i = th[i - 1] if i > 0 else 0.0
            hi_i = th[i + 1] if i + 1 < len(th) else math.inf
            for _, x in list(cands):
                for s in _snap(dist, x):
                    if lo_i <= s <= hi_i:
                        cands.append((g(s), s))
            cv, cx = min(cands)
            if cv < v * (1 - 1e-13):
                th[i], v, improved = cx, cv, True
        if not improved:
            break
    return th, v


# ============================================================================
# multilevel processor sharing: PS inside every queue (pias_sharing="fair")
# ============================================================================
#
# The same K strict-priority queues and demotion thresholds as above, but the flows of
# one queue share it equally (processor sharing) instead of FIFO: M/G/1 multilevel
# processor sharing (MLPS) with PS at every level (Kleinrock, Queueing Systems vol. 2,
# 1976, section 4.7; Aalto, Ayesta and Nyberg-Oksanen, "M/G/1/MLPS compared to
# M/G/1/PS", Operations Research Letters 33, 2005). This is the model of the simulator's
# ``pias`` with ``pias_sharing="fair"`` on one link. The derivation (done here, along
# the structure of those sources: a level sees its arrivals in batches, at the end of
# the busy periods of the levels above it, and PS inside a level is an M^X/G/1-PS
# queue) is in :func:`mlps_flow_fct`'s docstring.


def _min_mean(dist: wl.SizeDistribution, t: npt.ArrayLike) -> np.ndarray:
    """E[min(S, t)] (t may be inf)."""
    t = np.asarray(t, np.float64)
    fin = np.isfinite(t)
    tf = np.where(fin, t, 0.0)
    return np.asarray(_cum(dist, 1, t) + np.where(fin, tf * dist.sf(tf), 0.0), np.float64)


@dataclass(frozen=True)
class _PsLevel:
    """One level's solution: T(x) = (head + V(x - b)) / (1 - rho_b) in byte-times for
    b < x <= c, V(y) = int_0^y tau, tau piecewise constant on the cells ``edges``."""

    b: float
    c: float
    rho_b: float
    head: float  # W_b + b
    edges: np.ndarray
    tau: np.ndarray

    def v(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, np.float64)
        e = self.edges
        at_edges = np.concatenate([[0.0], np.cumsum(self.tau[:-1] * np.diff(e[:-1]))])  # V(e_j), j < last
        j = np.clip(np.searchsorted(e, y, side="right") - 1, 0, len(self.tau) - 1)
        return at_edges[j] + self.tau[j] * (y - e[j])


def _sf_below(dist: wl.SizeDistribution, target: float, lo: float) -> float:
    """About the smallest t >= lo with P(S > t) <= target (geometric bisection on the
    survival function itself: no 1 - u rounding for tiny targets)."""
    hi = max(lo, 1.0) * 2.0
    while float(dist.sf(np.float64(hi))) > target:
        hi *= 2.0
        if hi > 1e18:
            raise ValueError("the size distribution has mass above 1e18 bytes")
    for _ in range(200):
        if hi / lo < 1 + 1e-12:
            break
        mid = math.sqrt(lo * hi)
        if float(dist.sf(np.float64(mid))) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def _ps_level(dist: wl.SizeDistribution, lam: float, b: float, c: float, cells: int) -> _PsLevel:
    """The level of the flows with b < S <= c."""
    p = float(dist.sf(np.float64(b)))
    mb = float(_min_mean(dist, np.float64(b)))
    rho_b = lam * mb
    m2b = float(_cum(dist, 2, np.float64(b))) + b * b * p
    wait_b = lam * m2b / (2.0 * (1.0 - rho_b))
    if p <= 0.0:  # no flow reaches the level: a flow there would be alone in it (tau = 1)
        return _PsLevel(b=b, c=c, rho_b=rho_b, head=wait_b + b, edges=np.array([0.0, math.inf]),
                        tau=np.array([1.0]))
    # Batches: the flows with S > b of one busy period of the first b bytes of every flow
    # (a Galton-Watson tree: each flow brings Poisson(lam min(S, b)) more), n per tree.
    en = p / (1.0 - rho_b)
    en2 = (p + 2.0 * lam * b * p * en + lam * lam * m2b * en * en) / (1.0 - rho_b)
    big_lam = lam * en  # flows entering the level per unit of the level's own time
    beta = (en2 - en) / en  # others in the tagged flow's batch: E[n(n-1)] / E[n]
    # R = min(S, c) - b given S > b; H(z) = E[min(R, z)], Gbar(z) = P(R > z)
    if math.isfinite(c):
        top = c - b
    else:
        top = _sf_below(dist, 1e-12 * p, max(b, 1e-3)) * (1 + 1e-9) - b
    tiny = top * 1e-7
    edges = np.concatenate([[0.0], np.geomspace(tiny, top, cells)])

    def h(z: np.ndarray) -> np.ndarray:
        z = np.clip(z, 0.0, top)
        return (_min_mean(dist, np.minimum(b + z, c)) - mb) / p

    lo, hi = edges[:-1], edges[1:]
    mid = 0.5 * (lo + hi)
    gbar = np.where(mid < c - b, dist.sf(b + mid) / p, 0.0)
    u = mid[:, None]
    # tau(u) = 1 + Lam int_0^inf tau(v) Gbar(v + u) dv    (flows there before the batch)
    #            + beta Gbar(u)                            (the others of its batch)
    #            + Lam int_0^u tau(w) Gbar(u - w) dw       (flows that come later)
    a = big_lam * (h(u + hi[None, :]) - h(u + lo[None, :]))
    later = big_lam * (h(u - lo[None, :]) - h(u - np.minimum(hi[None, :], u)))
    a += np.where(lo[None, :] < u, later, 0.0)
    tau = np.linalg.solve(np.eye(len(mid)) - a, 1.0 + beta * gbar)
    return _PsLevel(b=b, c=c, rho_b=rho_b, head=wait_b + b, edges=edges, tau=tau)


def _ps_levels(dist: wl.SizeDistribution, th: np.ndarray, lam: float, cells: int) -> list[_PsLevel]:
    edges = _edges(th)
    if not (lam * float(_min_mean(dist, np.float64(edges[-2]))) < 1.0):
        raise ValueError("the load must be < 1")
    return [_ps_level(dist, lam, float(edges[k]), float(edges[k + 1]), cells) for k in range(len(th) + 1)]


def _check_cells(cells: int) -> int:
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or cells < 8:
        raise ValueError(f"cells must be an integer >= 8, got {cells!r}")
    return int(cells)


def mlps_flow_fct(
    size_bytes: float | np.ndarray,
    thresholds_bytes: Sequence[float],
    dist: wl.SizeDistribution | str,
    load: float,
    link_gbps: float = 10.0,
    *,
    cells: int = 400,
) -> np.ndarray:
    """Model mean FCT (seconds) of a flow of the given size(s) under M/G/1 multilevel
    processor sharing with PS inside every level: PIAS's queues with the flows of one
    queue sharing it equally (the simulator's ``pias`` with ``pias_sharing="fair"`` on
    one link).

    The model: one link of rate C, Poisson arrivals of rate lambda, i.i.d. sizes S,
    load rho = lambda E[S] / C < 1; a flow's bytes up to a_1 are in level 1, those in
    (a_1, a_2] in level 2, ... (``thresholds_bytes = [a_1, ..., a_{K-1}]``, a_0 = 0,
    a_K = inf); strict preemptive priority between levels, processor sharing inside
    one. Sources: Kleinrock, Queueing Systems vol. 2 (1976), section 4.7 (multilevel
    processor sharing); Aalto, Ayesta and Nyberg-Oksanen, "M/G/1/MLPS compared to
    M/G/1/PS", Oper. Res. Letters 33 (2005). Units below: C = 1 (times in byte-times).

    A flow of size x with b = a_{k-1} < x <= c = a_k::

        T(x) = (W_b + b + V_k(x - b)) / (1 - rho_b)
        rho_b = lambda E[min(S, b)],  W_b = lambda E[min(S, b)^2] / (2 (1 - rho_b))

    (W_b + b) / (1 - rho_b) is the mean time until the busy period of the first b bytes
    of every flow that the flow's arrival is in ends (P-K work W_b found, plus its own b
    bytes, plus the b-bytes of the arrivals meanwhile): only then is level k served.
    In level k's own time (real time less those busy periods), the flows reach level k
    in batches, one per busy period of the levels above, at rate lambda: level k is an
    M^X/G/1-PS queue with service R = min(S, c) - b given S > b, and its time is
    stretched by 1 / (1 - rho_b) in real time (the busy periods the arrivals during it
    start). With n the number of flows with S > b in one such busy period (a
    Galton-Watson tree, each flow bringing Poisson(lambda min(S, b)) more)::

        E[n] = P(S > b) / (1 - rho_b)
        E[n^2] = (P(S > b) + 2 lambda b P(S > b) E[n] + lambda^2 E[min(S, b)^2] E[n]^2) / (1 - rho_b)

    V_k(y) = int_0^y tau, where tau(u) = 1 + (mean number of other level-k flows present
    when the flow has u bytes of level-k service): under PS each of them gets what the
    flow gets. Counting the flows there before its batch (by Little's law, a density
    Lam Gbar(v) tau(v) of them with v bytes of level-k service), the others of its
    batch, and the flows that come later::

        tau(u) = 1 + Lam int_0^inf tau(v) Gbar(v + u) dv + beta Gbar(u)
                   + Lam int_0^u tau(w) Gbar(u - w) dw
        Lam = lambda E[n],  beta = E[n(n-1)] / E[n],  Gbar(u) = P(R > u)

    (the M^X/G/1-PS integral equation; Kleinrock, section 4.7). It is solved
    numerically: tau piecewise constant on ``cells`` cells of a geometric grid over R's
    range, collocated at the cells' midpoints, with the integrals of Gbar exact
    (differences of E[min(R, z)]). For level 1 (b = 0: single arrivals) it gives
    tau = 1 / (1 - rho_{a_1}), the M/G/1-PS result, exactly; with no thresholds,
    T(x) = x / (1 - rho) (M/G/1-PS). An unbounded last level is cut where
    P(S > b + u) < 1e-12 P(S > b).

    Parameters
    ----------
    size_bytes : float or array of float
        Flow sizes, > 0.
    thresholds_bytes, dist, load, link_gbps : as :func:`mean_fct_mlfq` (``inf`` not
        allowed in the thresholds; an empty list is one level: PS).
    cells : int
        Cells of the numerical solution per level (default 400).
    """
    dist, _, c_bytes, lam = _setup(dist, load, link_gbps)
    th = _check_thresholds(thresholds_bytes)
    if th.size and not np.isfinite(th[-1]):
        raise ValueError("thresholds_bytes: inf is not allowed here (leave the last level unbounded instead)")
    levels = _ps_levels(dist, th, lam, _check_cells(cells))
    x = np.asarray(size_bytes, np.float64)
    if not np.all(x > 0):
        raise ValueError("size_bytes must be > 0")
    edges = _edges(th)
    k = np.clip(np.searchsorted(edges, x, side="left") - 1, 0, len(th))
    out = np.empty_like(x)
    for j in np.unique(k):
        lv = levels[int(j)]
        sel = k == j
        out[sel] = (lv.head + lv.v(x[sel] - lv.b)) / (1.0 - lv.rho_b)
    return out / c_bytes


def mean_fct_mlps(
    thresholds_bytes: Sequence[float],
    dist: wl.SizeDistribution | str,
    load: float,
    link_gbps: float = 10.0,
    *,
    cells: int = 400,
) -> float:
    """Mean FCT (seconds) over the size distribution of the M/G/1 multilevel processor
    sharing model of :func:`mlps_flow_fct` (PS inside every PIAS queue): E[T(S)], each
    level's part integrated exactly over its cells."""
    dist, _, c_bytes, lam = _setup(dist, load, link_gbps)
    th = _check_thresholds(thresholds_bytes)
    if th.size and not np.isfinite(th[-1]):
        raise ValueError("thresholds_bytes: inf is not allowed here (leave the last level unbounded instead)")
    total = 0.0
    for lv in _ps_levels(dist, th, lam, _check_cells(cells)):
        sf_c = float(dist.sf(np.float64(lv.c))) if math.isfinite(lv.c) else 0.0
        prob = float(dist.sf(np.float64(lv.b))) - sf_c
        if prob <= 0.0:
            continue
        lo, hi = lv.edges[:-1], lv.edges[1:]
        # int over each cell of P(u < S - b, S <= c) du
        w = (_min_mean(dist, np.minimum(lv.b + hi, lv.c)) - _min_mean(dist, np.minimum(lv.b + lo, lv.c))) \
            - (np.minimum(hi, lv.c - lv.b) - np.minimum(lo, lv.c - lv.b)) * sf_c
        total += (prob * lv.head + float(np.sum(lv.tau * w))) / (1.0 - lv.rho_b)
    return total / c_bytes
