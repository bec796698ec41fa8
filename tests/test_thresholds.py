"""Tests of flowsched.queueing (formerly flowsched.baselines.thresholds): the M/G/1 priority-queue model of PIAS /
multi-level-feedback demotion thresholds (pFabric, section 6.1) and its optimiser.

What is checked, and against what (everything "independent" is computed here, from
the workloads module's own moments/CDF or by quadrature of a density written here):

* partial moments: the module's piecewise view of every shipped empirical CDF under
  every sampling rule against ``EmpiricalCDF.cdf``/``mean_bytes``/``second_moment_bytes2``;
  ns-2 integer sampling against an enumeration of the packet lattice; parametric laws
  against quadrature;
* the model: no thresholds (or thresholds above every size) is Pollaczek-Khinchine;
  dense thresholds tend to Kleinrock's FB/LAS mean; the two-queue normalized FCT is the
  paper's FCT_n(t) equation written out with integrals; exponential sizes make every
  set of demotion thresholds exactly as good as FIFO (memorylessness), bounded Pareto
  sizes make them much better, fixed sizes make them worse;
* the optimiser: global on a brute-force scan for one threshold, never worse with more
  queues, a local minimum, at least as good as the PIAS-NS2 table on the model,
  deterministic; input validation;
* the simulator: ``flowsched.simulate(..., scheduler="pias")`` on one link (Poisson
  arrivals, replications) agrees with the model's mean FCT, mean slowdown and per-queue
  conditional FCTs, including the tie rule (a flow of exactly a threshold's size
  finishes in the upper queue);
* the paper: Fig. 16's optimal threshold at 10% load (about 880 KB) and its growth with
  load, the sensitivity remark, and the model analogue of the Fig. 17(c) remark.
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

import flowsched
from flowsched import queueing as th, workloads as wl

LINK_GBPS = 10.0
C = LINK_GBPS * 1e9 / 8  # bytes/s
PKT = 1460.0

BP = wl.BoundedPareto(1.2, 1e4, 1e6)  # SCV ~3.4, decreasing hazard rate (as in test_queueing)


def _pk(dist: wl.SizeDistribution, rho: float) -> float:
    """Pollaczek-Khinchine mean response time (s), from the distribution's own moments."""
    lam = rho * C / dist.mean_bytes
    return dist.mean_bytes / C + lam * dist.second_moment_bytes2 / C**2 / (2 * (1 - rho))


def _bp_pdf(d: wl.BoundedPareto):
    a, lo, hi = d.alpha, d.low_bytes, d.high_bytes
    c = a * lo**a / (1 - (lo / hi) ** a)
    return lambda x: c * x ** (-a - 1) if lo <= x <= hi else 0.0


def _quad(g, a: float, b: float) -> float:
    """int_a^b g over log-spaced pieces (the integrands are power laws)."""
    if b <= a:
        return 0.0
    pts = np.geomspace(a, b, 25)
    return sum(integrate.quad(g, x, y, epsrel=1e-12, epsabs=0, limit=200)[0] for x, y in pairwise(pts))


# ============================================================================
# partial moments
# ============================================================================


@pytest.mark.parametrize("name", wl.shipped_cdf_names())
def test_empirical_rebuild_matches_workloads(name):
    """The module's partial moments of an EmpiricalCDF (from its atoms, uniform pieces
    and integer ranges): CDF, tail and moments must equal the class's own under every rule."""
    for rule in wl.SAMPLING_RULES:
        d = wl.get_distribution(f"{name}:{rule}")
        x = d.size_points_bytes
        xs = np.unique(np.concatenate([x, x * (1 + 1e-6), x * (1 - 1e-6), np.geomspace(1.0, 2 * x.max(), 200)]))
        ref = np.array([d.cdf(v) for v in xs])
        np.testing.assert_allclose(d.partial_moment(0, 0.0, xs), ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(d.sf(xs), 1 - ref, rtol=0, atol=1e-12)
        assert th.partial_moment(d, 1, 0, math.inf) == pytest.approx(d.mean_bytes, rel=1e-12)
        assert th.partial_moment(d, 2, 0, math.inf) == pytest.approx(d.second_moment_bytes2, rel=1e-12)
        assert th.partial_moment(d, 0, 0, math.inf) == pytest.approx(1.0, abs=1e-12)


def test_ns2int_partial_moments_by_lattice_enumeration():
    """Web search (ns-2 sampling) lives on whole packets 1..20000: enumerate the pmf with
    the class's cdf and compare E[S^p; a < S <= b] for p = -1..2, with interval ends on
    atoms (PIAS thresholds: the atom at b counts, the one at a does not) and between."""
    d = wl.get_distribution("websearch")
    k = np.arange(1, 20001)
    cdf = np.array([d.cdf(v * PKT) for v in k])
    pmf = np.diff(np.concatenate([[0.0], cdf]))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    x = k * PKT
    pias = wl.pias_thresholds("websearch", 0.8)
    cases = [(0.0, pias[0]), (pias[0], pias[3]), (pias[3], math.inf), (0.0, math.inf),
             (1e5, 2.5e6), (1333 * PKT, 1334 * PKT), (1333.5 * PKT, 1e7)]
    for a, b in cases:
        sel = (x > a) & (x <= b)
        for p in (-1, 0, 1, 2):
            want = float(np.sum(pmf[sel] * x[sel] ** float(p)))
            got = th.partial_moment(d, p, a, b)
            assert got == pytest.approx(want, rel=1e-9, abs=1e-300), (a, b, p)


# name: (distribution, density, lower end of the support, density > 0 at 0)
PARAMETRIC = {
    "exp": (wl.Exponential(1e5), lambda x: math.exp(-x / 1e5) / 1e5, 0.0, True),
    "bpareto": (BP, _bp_pdf(BP), 1e4, False),
    "classic_pareto": (wl.ClassicPareto(2.5, 1e4), lambda x: 2.5 * 1e4**2.5 * x**-3.5 if x >= 1e4 else 0.0, 1e4, False),
    "lomax": (wl.Pareto(3.0, 2e5), lambda x: 3.0 / 2e5 * (1 + x / 2e5) ** -4.0, 0.0, True),
    "lognormal": (
        wl.Lognormal(1e5, 1.2),
        lambda x: (
            math.exp(-((math.log(x) - (math.log(1e5) - 0.72)) ** 2) / (2 * 1.44)) / (x * 1.2 * math.sqrt(2 * math.pi))
            if x > 0
            else 0.0
        ),
        0.0,
        False,
    ),
    "uniform": (wl.Uniform(2e3, 5e4), lambda x: 1 / 4.8e4 if 2e3 <= x <= 5e4 else 0.0, 2e3, False),
}


@pytest.mark.parametrize("case", list(PARAMETRIC))
def test_parametric_partial_moments_vs_quadrature(case):
    d, pdf, lo, at_zero = PARAMETRIC[case]
    for a, b in [(0.0, 3e4), (3e4, 2e5), (2e5, 2e6), (1.5e4, 4.5e4)]:
        for p in (-1, 0, 1, 2):
            got = th.partial_moment(d, p, a, b)
            if p == -1 and a == 0.0 and at_zero:
                assert got == math.inf  # density > 0 at 0: E[1/S] diverges
                continue
            want = _quad(lambda x, p=p: x**p * pdf(x), max(a, lo, 1e-300), b)
            assert got == pytest.approx(want, rel=1e-7, abs=1e-14 * max(1.0, want)), (a, b, p)
    # a mixture is the weighted sum of its parts
    mix = wl.Mixture([(0.3, d), (0.7, BP)])
    for p in (0, 1, 2):
        want = 0.3 * th.partial_moment(d, p, 2e4, 3e5) + 0.7 * th.partial_moment(BP, p, 2e4, 3e5)
        assert th.partial_moment(mix, p, 2e4, 3e5) == pytest.approx(want, rel=1e-12)


# ============================================================================
# the model
# ============================================================================

DISTS = {
    "exp": wl.Exponential(1e5),
    "bpareto": BP,
    "websearch": wl.get_distribution("websearch"),
    "datamining": wl.get_distribution("datamining"),
    "fixed": wl.Fixed(5e4),
    "mixture": wl.Mixture([(0.8, 2e4), (0.2, BP)]),
    "lognormal": wl.Lognormal(1e5, 1.5),
}


@pytest.mark.parametrize("name", list(DISTS))
@pytest.mark.parametrize("rho", [0.3, 0.8])
def test_one_queue_is_pollaczek_khinchine(name, rho):
    d = DISTS[name]
    want = _pk(d, rho)
    for assignment in ("demotion", "size"):
        assert th.mean_fct_mlfq([], d, rho, assignment=assignment) == pytest.approx(want, rel=1e-12)
        # a threshold no flow reaches changes nothing
        assert th.mean_fct_mlfq([math.inf], d, rho, assignment=assignment) == pytest.approx(want, rel=1e-12)
    top = {"bpareto": 1e6, "websearch": 20000 * PKT, "fixed": 5e4, "mixture": 1e6}.get(name)
    if top is not None:  # bounded support: a threshold at the largest size is no threshold
        assert th.mean_fct_mlfq([top], d, rho) == pytest.approx(want, rel=1e-12)
        assert th.mean_fct_mlfq([top, 2 * top, math.inf], d, rho) == pytest.approx(want, rel=1e-12)
    # and the model depends on the link only through time units
    assert th.mean_fct_mlfq([], d, rho, link_gbps=40.0) == pytest.approx(want / 4, rel=1e-12)


def test_dense_thresholds_tend_to_las():
    """Thresholds at every size make MLFQ foreground-background (LAS); Kleinrock:
    E[T(x)] = lambda m2(x) / (2 (1 - rho_x)^2) + x / (1 - rho_x), rho_x = lambda E[min(S,x)]."""
    rho = 0.7
    pdf = _bp_pdf(BP)
    lam = rho * C / BP.mean_bytes

    def m(k, x):  # E[min(S, x)^k] by quadrature
        return _quad(lambda t: t**k * pdf(t), 1e4, x) + x**k * _quad(pdf, x, 1e6)

    def t_of_x(x):
        r = lam / C * m(1, x)
        return (lam / C**2 * m(2, x) / (2 * (1 - r) ** 2) + x / C / (1 - r)) * pdf(x)

    las = integrate.quad(t_of_x, 1e4, 1e6, limit=400, epsrel=1e-10)[0]
    errs = [abs(th.mean_fct_mlfq(np.geomspace(1e4, 1e6, n), BP, rho) / las - 1) for n in (30, 300, 3000)]
    assert errs[2] < 1e-6 and errs[0] > errs[1] > errs[2]


@pytest.mark.parametrize("assignment", ["demotion", "size"])
@pytest.mark.parametrize("rho", [0.2, 0.8])
def test_two_queues_is_paper_equation(assignment, rho):
    """pFabric section 6.1, FCT_n(t) (C = 1), with every integral done by quadrature here:
    F(t) + (1-F(t))/(1-rho_B) + lambda M2/(2(1-rho_B)) int_0^t f/y + lambda E[S^2]/(2(1-rho)(1-rho_B)) int_t^inf f/y.
    'demotion': rho_B = lambda E[min(S,t)], M2 = E[min(S,t)^2]; 'size': rho_B = lambda E[S; S<=t],
    M2 = E[S^2; S<=t]."""
    pdf = _bp_pdf(BP)
    lam = rho / BP.mean_bytes
    es2 = _quad(lambda x: x * x * pdf(x), 1e4, 1e6)
    for t in (1.5e4, 1e5, 5e5):
        F = _quad(pdf, 1e4, t)
        if assignment == "demotion":
            rb = lam * (_quad(lambda x: x * pdf(x), 1e4, t) + t * (1 - F))
            m2 = _quad(lambda x: x * x * pdf(x), 1e4, t) + t * t * (1 - F)
        else:
            rb = lam * _quad(lambda x: x * pdf(x), 1e4, t)
            m2 = _quad(lambda x: x * x * pdf(x), 1e4, t)
        fct_n = (F + (1 - F) / (1 - rb)
                 + lam * m2 / (2 * (1 - rb)) * _quad(lambda y: pdf(y) / y, 1e4, t)
                 + lam * es2 / (2 * (1 - rho) * (1 - rb)) * _quad(lambda y: pdf(y) / y, t, 1e6))
        assert th.mean_slowdown_mlfq([t], BP, rho, assignment=assignment) == pytest.approx(fct_n, rel=1e-8)


def test_exponential_sizes_demotion_never_beats_fifo():
    """Memoryless sizes: attained service says nothing about the remaining size, so every
    size-blind work-conserving policy (MLFQ with any thresholds) has the M/M/1 mean
    E[S]/(C(1 - rho)). Size classes (known sizes) do help."""
    d = wl.Exponential(1e5)
    rng = np.random.default_rng(3)
    for rho in (0.3, 0.9):
        mm1 = 1e5 / C / (1 - rho)
        for k in (1, 2, 4, 7):
            t = np.sort(rng.uniform(1e3, 5e5, k))
            assert th.mean_fct_mlfq(t, d, rho) == pytest.approx(mm1, rel=1e-12)
        best, val = th.optimal_thresholds(d, rho, 4, return_value=True, grid_points=200)
        assert val == pytest.approx(mm1, rel=1e-12)
        assert th.mean_fct_mlfq([1e5], d, rho, assignment="size") < 0.9 * mm1
    assert th.mean_slowdown_mlfq([1e5], d, 0.5) == math.inf  # E[1/S] = inf
    with pytest.raises(ValueError, match="infinite"):
        th.optimal_thresholds(d, 0.5, 2, objective="slowdown")


def test_heavy_tail_thresholds_help_fixed_sizes_hurt():
    """Decreasing hazard rate (bounded Pareto, support 10 KB..1 MB): a threshold from 15 KB
    to 900 KB beats FIFO and the best one more than halves the mean FCT (a threshold just
    above the smallest size demotes almost every flow at once: worse than FIFO). Fixed
    sizes: demoting a flow before it ends only lets later flows preempt it; the optimum
    is no demotion."""
    rho = 0.7
    fifo = _pk(BP, rho)
    for t in np.geomspace(1.5e4, 9e5, 40):
        assert th.mean_fct_mlfq([t], BP, rho) < fifo
    assert th.mean_fct_mlfq([1.01e4], BP, rho) > fifo
    _, best = th.optimal_thresholds(BP, rho, 2, return_value=True)
    assert best < 0.5 * fifo
    fx = wl.Fixed(5e4)
    for t in (1e3, 2e4, 4.99e4):
        assert th.mean_fct_mlfq([t], fx, rho) > _pk(fx, rho)
    t_opt, v = th.optimal_thresholds(fx, rho, 3, return_value=True)
    assert v == pytest.approx(_pk(fx, rho), rel=1e-12) and t_opt[0] >= 5e4


def test_flow_fct_averages_to_mean():
    """mlfq_flow_fct (T(x)) averaged over the lattice pmf is mean_fct_mlfq."""
    d = wl.get_distribution("websearch")
    x = np.arange(1, 20001) * PKT
    pmf = np.diff(np.concatenate([[0.0], [d.cdf(v) for v in x]]))
    t = wl.pias_thresholds("websearch", 0.6)
    for assignment in ("demotion", "size"):
        want = th.mean_fct_mlfq(t, d, 0.6, assignment=assignment)
        assert np.sum(pmf * th.mlfq_flow_fct(x, t, d, 0.6, assignment=assignment)) == pytest.approx(want, rel=1e-10)
    # the flow at exactly a threshold finishes in the upper queue: no jump just below it
    t0 = t[0]
    lo, at, hi = th.mlfq_flow_fct([t0 - 1e-6, t0, t0 + 1e-6], t, d, 0.6)
    assert at == pytest.approx(lo, rel=1e-9) and hi > 1.01 * at


# ============================================================================
# the optimiser
# ============================================================================


def _scan(dist, rho, objective, assignment, lattice=None):
    """Brute force over one threshold: 800 log-spaced points over the support, then 800
    around the best (for a lattice distribution, every whole packet there)."""
    lo, hi = th._search_range(dist)

    def best(ts):
        if objective == "fct":
            vals = [th.mean_fct_mlfq([t], dist, rho, assignment=assignment) for t in ts]
        else:
            vals = [th.mean_slowdown_mlfq([t], dist, rho, assignment=assignment) for t in ts]
        i = int(np.argmin(vals))
        return ts[i], float(vals[i])

    t0, _ = best(np.geomspace(lo, hi, 800))
    if lattice is None:
        fine = np.geomspace(t0 / 1.03, t0 * 1.03, 800)
    else:
        k0 = t0 / lattice
        fine = np.arange(max(1, math.floor(k0 / 1.03)), math.ceil(k0 * 1.03) + 1) * lattice
    return best(np.concatenate([[t0], fine]))


@pytest.mark.parametrize(
    "name,objective,assignment",
    [("bpareto", "fct", "demotion"), ("bpareto", "slowdown", "size"), ("websearch", "fct", "demotion"),
     ("websearch", "slowdown", "size")],
)
def test_one_threshold_is_global_optimum(name, objective, assignment):
    d = DISTS[name]
    t_scan, v_scan = _scan(d, 0.6, objective, assignment, PKT if name == "websearch" else None)
    (t_opt,), v_opt = th.optimal_thresholds(d, 0.6, 2, objective=objective, assignment=assignment, return_value=True)
    assert v_opt <= v_scan * (1 + 1e-9)
    assert v_opt >= v_scan * (1 - 1e-4)  # the scan is fine enough to come close
    assert t_opt == pytest.approx(t_scan, rel=0.02)


@pytest.mark.parametrize("name,assignment", [("websearch", "demotion"), ("bpareto", "size"), ("mixture", "demotion")])
def test_more_queues_never_worse(name, assignment):
    d = DISTS[name]
    vals = []
    for k in (2, 3, 5):
        t, v = th.optimal_thresholds(d, 0.8, k, assignment=assignment, return_value=True, grid_points=300)
        assert len(t) == k - 1 and t[0] > 0 and all(b > a for a, b in pairwise(t))
        assert v == pytest.approx(th.mean_fct_mlfq(t, d, 0.8, assignment=assignment), rel=1e-9)
        vals.append(v)
    assert all(b <= a * (1 + 1e-8) for a, b in pairwise(vals)), vals  # 1e-8: see the docstring on empty queues
    assert vals[0] < _pk(d, 0.8)


def test_optimum_is_a_local_minimum():
    d = DISTS["websearch"]
    t, v = th.optimal_thresholds(d, 0.7, 4, return_value=True, grid_points=300)
    for i in range(len(t)):
        for f in (0.995, 1.005, 0.9, 1.1):
            tt = list(t)
            tt[i] *= f
            if all(b > a for a, b in pairwise(tt)):
                assert th.mean_fct_mlfq(tt, d, 0.7) >= v * (1 - 1e-12)
        for dk in (-1, 1):  # neighbouring whole packets
            tt = list(t)
            tt[i] = (round(t[i] / PKT) + dk) * PKT
            if all(b > a for a, b in pairwise(tt)):
                assert th.mean_fct_mlfq(tt, d, 0.7) >= v * (1 - 1e-12)


@pytest.mark.parametrize("workload", ["websearch", "datamining"])
def test_optimum_beats_pias_table(workload):
    """The PIAS-NS2 thresholds (8 queues, load 0.8) come from PIAS's own model; on this
    model the optimum with 8 queues is at least as good (here clearly better)."""
    d = wl.get_distribution(workload)
    table = wl.pias_thresholds(workload, 0.8)
    v_table = th.mean_fct_mlfq(table, d, 0.8)
    t, v = th.optimal_thresholds(d, 0.8, 8, return_value=True, grid_points=300)
    assert v <= v_table * (1 + 1e-12)
    assert v < 0.9 * v_table  # websearch: 5.21 vs 6.69 ms; datamining: 20.4 vs 40.7 ms
    assert v_table < _pk(d, 0.8)  # and the table itself beats FIFO


def test_optimiser_deterministic_and_link_invariant():
    d = DISTS["websearch"]
    a, va = th.optimal_thresholds(d, 0.5, 3, return_value=True, grid_points=200)
    b, vb = th.optimal_thresholds(d, 0.5, 3, return_value=True, grid_points=200)
    c, vc = th.optimal_thresholds(d, 0.5, 3, 40.0, return_value=True, grid_points=200)
    assert a == b == c and va == vb and vc == pytest.approx(va / 4, rel=1e-12)


def test_validation_messages():
    d = DISTS["bpareto"]
    for bad in (0, 1, 1.5, -0.1, float("nan"), "0.5"):
        with pytest.raises(ValueError, match="load"):
            th.mean_fct_mlfq([1e5], d, bad)
        with pytest.raises(ValueError, match="load"):
            th.optimal_thresholds(d, bad, 2)
    for bad in (1, 0, 2.0, True, "3"):
        with pytest.raises(ValueError, match="n_queues"):
            th.optimal_thresholds(d, 0.5, bad)
    with pytest.raises(ValueError, match=r"strictly increasing.*\[1\]"):
        th.mean_fct_mlfq([2e5, 1e5], d, 0.5)
    with pytest.raises(ValueError, match="strictly increasing"):
        th.mean_fct_mlfq([1e5, 1e5], d, 0.5)
    for bad in ([0.0], [-1.0, 1e5], [float("nan")]):
        with pytest.raises(ValueError, match=r"> 0"):
            th.mean_fct_mlfq(bad, d, 0.5)
    with pytest.raises(ValueError, match="sequence of numbers"):
        th.mean_fct_mlfq(["x"], d, 0.5)
    with pytest.raises(ValueError, match="link_gbps"):
        th.mean_fct_mlfq([1e5], d, 0.5, link_gbps=0)
    with pytest.raises(ValueError, match="objective"):
        th.optimal_thresholds(d, 0.5, 2, objective="p99")
    with pytest.raises(ValueError, match="assignment"):
        th.mean_fct_mlfq([1e5], d, 0.5, assignment="las")
    with pytest.raises(ValueError, match="E\\[S\\^2\\] is infinite"):
        th.optimal_thresholds(wl.ClassicPareto(1.5, 1e4), 0.5, 2)
    with pytest.raises(TypeError, match="SizeDistribution"):
        th.mean_fct_mlfq([1e5], 12345, 0.5)
    # names are accepted
    assert th.mean_fct_mlfq([], "bpareto:1.2:10000:1000000", 0.5) == pytest.approx(_pk(BP, 0.5), rel=1e-12)


# ============================================================================
# the simulator (flowsched pias on one link) against the model
# ============================================================================

REPS = 30
N_FLOWS = 20_000
# a tenth of the flows is left out at each end of a replication (empty start; no later
# arrivals at the end); the replication means are i.i.d., checks allow Z standard errors
Z = 4.0


def _replications(dist, rho, thresholds, seed, reps=REPS, n_flows=N_FLOWS):
    """Per replication: mean FCT, mean slowdown and, per queue, the mean of
    (simulated FCT - model T(x)) over the measured flows."""
    lam = rho * C / dist.mean_bytes
    topo = flowsched.BigSwitch(2, LINK_GBPS)
    edges = np.concatenate([[0.0], thresholds, [math.inf]])
    out = {"fct": [], "slowdown": [], "resid": []}
    cut = n_flows // 10
    for r in range(reps):
        rng = np.random.default_rng(seed + r)
        arr = np.cumsum(rng.exponential(1 / lam, n_flows))
        size = dist.sample(rng, n_flows)
        tr = pd.DataFrame({"arrival_s": arr, "src": 0, "dst": 1, "size_bytes": size})
        fl = flowsched.simulate(tr, topo, "pias", pias_thresholds_bytes=list(thresholds)).flows.iloc[cut:-cut]
        fct, x = fl["fct_s"].to_numpy(), fl["size_bytes"].to_numpy()
        assert np.isfinite(fct).all()
        out["fct"].append(fct.mean())
        out["slowdown"].append(fl["slowdown"].mean())
        q = np.searchsorted(edges, x, side="left") - 1
        res = fct - th.mlfq_flow_fct(x, thresholds, dist, rho)
        out["resid"].append([res[q == k].mean() if (q == k).any() else 0.0 for k in range(len(edges) - 1)])
    return {k: np.asarray(v) for k, v in out.items()}


def _check(samples, want, what):
    mean, se = samples.mean(axis=0), samples.std(axis=0, ddof=1) / math.sqrt(len(samples))
    assert np.all(np.abs(mean - want) <= Z * se), f"{what}: simulated {mean} +- {se} (SE) vs model {want}"


SIM_CASES = {
    # name: (dist, load, thresholds)
    "bpareto_2q": (BP, 0.7, [1e5]),
    "bpareto_3q": (BP, 0.7, [3e4, 2e5]),
    "websearch_pias_table": (DISTS["websearch"], 0.6, wl.pias_thresholds("websearch", 0.6)),
}


@pytest.mark.parametrize("case", list(SIM_CASES))
def test_simulator_pias_matches_model(case):
    d, rho, t = SIM_CASES[case]
    s = _replications(d, rho, np.asarray(t), seed=7000 + 100 * list(SIM_CASES).index(case))
    _check(s["fct"], th.mean_fct_mlfq(t, d, rho), f"{case} mean FCT")
    if case.startswith("bpareto"):  # E[1/S] finite and the slowdown not dominated by rare tiny flows
        _check(s["slowdown"], th.mean_slowdown_mlfq(t, d, rho), f"{case} mean slowdown")
    _check(s["resid"], 0.0, f"{case} per-queue FCT - T(x)")
    # and the model's prediction is far from FIFO's, so the check has power
    assert abs(th.mean_fct_mlfq(t, d, rho) / _pk(d, rho) - 1) > 0.3


def test_simulator_tie_rule_flow_at_threshold_stays_up():
    """Half the flows are 20 KB, half 200 KB. With the threshold at exactly 20 KB the small
    flows finish in queue 1 (model: 160 us); at 19 KB they are demoted for their last KB
    and wait behind the large flows (model: 221 us). The simulator agrees with both."""
    d = wl.Mixture([(0.5, 2e4), (0.5, 2e5)])
    v_at, v_below = th.mean_fct_mlfq([2e4], d, 0.6), th.mean_fct_mlfq([1.9e4], d, 0.6)
    assert v_below > 1.3 * v_at
    for t, want, seed in (([2e4], v_at, 9100), ([1.9e4], v_below, 9200)):
        s = _replications(d, 0.6, np.asarray(t), seed, reps=15, n_flows=10_000)
        _check(s["fct"], want, f"threshold {t}")


# ============================================================================
# the paper (pFabric section 6.1 and its remarks)
# ============================================================================


def test_fig16_optimal_threshold_web_search():
    """Fig. 16: the FCT_n-optimal threshold for web search 'varies between approximately
    880-1740 KB as the load increases from 10% to 80%'. The size-class reading of the
    model gives 858 KB at 10% (within 3%; 881 KB in 1500-byte wire packets) and grows
    with load; it reaches 1.37 MB at 80%, short of 1740 KB (not reproduced; see the
    module docstring). The demotion reading gives far smaller thresholds (320 KB)."""
    d = DISTS["websearch"]
    loads = (0.1, 0.3, 0.5, 0.8)
    t = [th.optimal_thresholds(d, r, 2, objective="slowdown", assignment="size", grid_points=300)[0] for r in loads]
    assert t[0] == pytest.approx(880e3, rel=0.05)
    assert all(b > a for a, b in pairwise(t))
    assert 1.2e6 < t[-1] < 1.5e6  # the model's value (1.37 MB), recorded: the paper says ~1.74 MB
    t_dem = th.optimal_thresholds(d, 0.1, 2, objective="slowdown", grid_points=300)[0]
    assert t_dem < 0.5 * t[0]


def test_sensitivity_grows_with_load():
    """'performance can be quite sensitive to the chosen threshold, especially at high
    loads': a threshold off by 2x costs a few % of FCT_n at 10% load, tens of % at 80%."""
    d = DISTS["websearch"]
    cost = {}
    for rho in (0.1, 0.8):
        (t,), v = th.optimal_thresholds(d, rho, 2, objective="slowdown", assignment="size", return_value=True,
                                        grid_points=300)
        cost[rho] = max(th.mean_slowdown_mlfq([t * f], d, rho, assignment="size") / v - 1 for f in (0.5, 2.0))
    assert cost[0.1] < 0.1 and cost[0.8] > 0.25


def test_fig17c_optimal_vs_equal_split_model_analogue():
    """Fig. 17(c) (ns-2 simulations, so only the model analogue is checked): with 4
    queues at 80% load, the thresholds optimised as in section 6.1 cut the average FCT
    by more than 30% against splitting flows equally across the queues (model: 44%)."""
    d = DISTS["websearch"]
    equal = [th._quantile(d, k / 4, 1.0, 1e10) for k in (1, 2, 3)]
    opt = th.optimal_thresholds(d, 0.8, 4, objective="slowdown", assignment="size", grid_points=300)
    gain = 1 - th.mean_fct_mlfq(opt, d, 0.8, assignment="size") / th.mean_fct_mlfq(equal, d, 0.8, assignment="size")
    assert gain > 0.3
