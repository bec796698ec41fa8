"""Single-link M/G/1 checks of the fluid simulator against queueing theory.

Every flow goes from host 0 to host 1 of a ``BigSwitch(2, LINK_GBPS)``: the path is
``up0`` then ``down1``, two links of the same rate C in series, so the fabric is one
work-conserving server of rate C bytes/s. Flows arrive as a Poisson process of rate
lambda; a flow of S bytes has service time X = S / C, and the load is rho = lambda E[X].
The simulated mean FCT (sojourn time) is compared with the exact steady-state means:

* ``fifo``: Pollaczek-Khinchine, E[T] = E[X] + lambda E[X^2] / (2 (1 - rho)).
* ``ps``: E[T] = E[X] / (1 - rho).
* ``srpt``: Schrage & Miller (1966),
  E[T(x)] = lambda m2(x) / (2 (1 - rho_x)^2) + int_0^x dt / (1 - rho_t), with
  m2(x) = int_0^x t^2 dF(t) + x^2 (1 - F(x)) and rho_x = lambda int_0^x t dF(t).
  E[T] = int E[T(x)] dF(x); the residence term is integrated by Fubini as
  int_0^inf (1 - F(t)) / (1 - rho_t) dt.
* ``las`` (foreground-background, fluid: equal attained service shares; Kleinrock),
  E[T(x)] = lambda m2(x) / (2 (1 - rho'_x)^2) + x / (1 - rho'_x), with
  rho'_x = lambda E[min(X, x)].

Statistics. Each (distribution, policy) cell runs ``REPS`` independent replications
(own seed, own trace, starting empty) of ``N_FLOWS`` flows. In each replication the
first ``WARMUP`` flows (transient from the empty start) and the last ``COOLDOWN`` flows
(they see no later arrivals, which favours them under ps/srpt/las) are not measured;
the mean FCT of the others is one sample. The replication means are i.i.d., so the
standard error is their sample standard deviation / sqrt(REPS), and every check
allows ``Z`` standard errors. All policies of a distribution run on the same traces,
so policy differences are checked on paired replication differences (much tighter).

Size distributions (both continuous: with atoms, SRPT ties would share, which the
Schrage-Miller formula, derived for FIFO among equal sizes, does not model):

* ``sexp``: shifted exponential, S = 1 KB + Exp(mean 100 KB), rho = 0.6. For pure
  exponential sizes fifo, ps and las all have mean E[X] / (1 - rho) (checked on the
  formulas below, ``test_formulas_exponential``); the shift makes the distribution
  differ from a pure exponential so that the policies are told apart. Tiny flows late
  in a long run (remaining bytes below what t's float resolution can time) are
  covered by ``test_tiny_late_flow_completes``.
* ``bpareto``: bounded Pareto, alpha = 1.2 on [10 KB, 1 MB] (SCV ~3.4), rho = 0.7:
  decreasing hazard rate, so srpt < las < ps < fifo, all clearly apart.

Run ``python tests/test_queueing.py`` for the table of measured vs formula values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from scipy import integrate

import flowsched

LINK_GBPS = 10.0
C = LINK_GBPS * 1e9 / 8  # bytes/s
N_FLOWS = 5_000
WARMUP = 500
COOLDOWN = 500
REPS = 60
Z = 4.0  # allowed standard errors
POLICIES = ("fifo", "ps", "srpt", "las")


# --------------------------------------------------------------------------- theory
class ServiceDist:
    """A service-time (seconds) distribution with a density on [lo, hi]."""

    lo: float
    hi: float

    def cdf(self, x: float) -> float: ...
    def pdf(self, x: float) -> float: ...
    def partial(self, k: int, x: float) -> float:
        """int_0^x t^k dF(t) (closed form)."""
        ...
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray: ...

    def moment(self, k: int) -> float:
        return self.partial(k, self.hi)

    def quad(self, g, a: float, b: float) -> float:
        """int_a^b g(t) dt over the support (split for accuracy)."""
        a, b = max(a, 0.0), min(b, self.hi)
        if b <= a:
            return 0.0
        tail, eps = 0.0, 1e-12 * self.moment(1)  # results are O(E[X]) seconds
        if math.isinf(b):  # finite pieces up to 60 means (relative mass e^-60), then the rest
            b = a + 60 * self.moment(1)
            tail = integrate.quad(g, b, math.inf, epsabs=eps, epsrel=1e-10, limit=400)[0]
        pts = np.geomspace(a, b, 17) if a > 0 else np.linspace(a, b, 17)
        body = sum(integrate.quad(g, lo, hi, epsabs=eps / 16, epsrel=1e-10, limit=400)[0] for lo, hi in pairwise(pts))
        return body + tail


@dataclass(frozen=True)
class ShiftedExp(ServiceDist):
    shift: float  # seconds
    mean_exp: float  # seconds

    @property
    def lo(self) -> float:
        return self.shift

    hi = math.inf

    def cdf(self, x):
        return 0.0 if x <= self.shift else -math.expm1(-(x - self.shift) / self.mean_exp)

    def pdf(self, x):
        return 0.0 if x < self.shift else math.exp(-(x - self.shift) / self.mean_exp) / self.mean_exp

    def partial(self, k, x):
        d, m = self.shift, self.mean_exp
        if x <= d:
            return 0.0
        # E_j = int_0^y u^j e^{-u/m}/m du for the excess u = t - d over the shift
        y = x - d
        if math.isinf(y):
            e0, e1, e2 = 1.0, m, 2 * m * m
        else:
            e = math.exp(-y / m)
            e0 = -math.expm1(-y / m)
            e1 = m * e0 - y * e
            e2 = 2 * m * e1 - y * y * e
        return (e0, e1 + d * e0, e2 + 2 * d * e1 + d * d * e0)[k]

    def sample(self, rng, n):
        return self.shift + rng.exponential(self.mean_exp, n)


@dataclass(frozen=True)
class BoundedPareto(ServiceDist):
    L: float  # seconds
    U: float
    alpha: float

    @property
    def lo(self):
        return self.L

    @property
    def hi(self):
        return self.U

    @property
    def _c(self):
        return self.alpha * self.L**self.alpha / (1 - (self.L / self.U) ** self.alpha)

    def cdf(self, x):
        if x <= self.L:
            return 0.0
        if x >= self.U:
            return 1.0
        return (1 - (self.L / x) ** self.alpha) / (1 - (self.L / self.U) ** self.alpha)

    def pdf(self, x):
        return self._c * x ** (-self.alpha - 1) if self.L <= x <= self.U else 0.0

    def partial(self, k, x):
        x = min(x, self.U)
        if x <= self.L:
            return 0.0
        p = k - self.alpha
        if abs(p) < 1e-12:
            return self._c * math.log(x / self.L)
        return self._c * (x**p - self.L**p) / p

    def sample(self, rng, n):
        u = rng.random(n)
        a = self.alpha
        return self.L * (1 - u * (1 - (self.L / self.U) ** a)) ** (-1 / a)


def et_fifo(d: ServiceDist, lam: float) -> float:
    rho = lam * d.moment(1)
    return d.moment(1) + lam * d.moment(2) / (2 * (1 - rho))


def et_ps(d: ServiceDist, lam: float) -> float:
    return d.moment(1) / (1 - lam * d.moment(1))


def _m2(d: ServiceDist, x: float) -> float:
    """E[min(X, x)^2]."""
    return d.partial(2, x) + x * x * (1 - d.cdf(x))


def et_srpt(d: ServiceDist, lam: float) -> float:
    def wait(x):  # waiting term of E[T(x)], weighted by the density
        r = lam * d.partial(1, x)
        return lam * _m2(d, x) / (2 * (1 - r) ** 2) * d.pdf(x)

    def res(t):  # residence: int_0^inf (1 - F(t)) / (1 - rho_t) dt
        return (1 - d.cdf(t)) / (1 - lam * d.partial(1, t))

    return d.quad(wait, d.lo, d.hi) + d.lo + d.quad(res, d.lo, d.hi)


def et_las(d: ServiceDist, lam: float) -> float:
    def t_of_x(x):
        r = lam * (d.partial(1, x) + x * (1 - d.cdf(x)))
        return (lam * _m2(d, x) / (2 * (1 - r) ** 2) + x / (1 - r)) * d.pdf(x)

    return d.quad(t_of_x, d.lo, d.hi)


THEORY = {"fifo": et_fifo, "ps": et_ps, "srpt": et_srpt, "las": et_las}

# Cases: name -> (service-time distribution in seconds, load).
CASES = {
    "sexp": (ShiftedExp(shift=1e3 / C, mean_exp=100e3 / C), 0.6),
    "bpareto": (BoundedPareto(L=10e3 / C, U=1e6 / C, alpha=1.2), 0.7),
}


# --------------------------------------------------------------------------- simulation
def _trace(d: ServiceDist, rho: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lam = rho / d.moment(1)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, N_FLOWS))
    sizes = d.sample(rng, N_FLOWS) * C
    return pd.DataFrame({"arrival_s": arrivals, "src": 0, "dst": 1, "size_bytes": sizes})


@cache
def replication_means(case: str) -> dict[str, np.ndarray]:
    """Per-replication mean FCT of the measured flows, for each policy (same traces)."""
    d, rho = CASES[case]
    topo = flowsched.BigSwitch(2, LINK_GBPS)
    out = {p: np.empty(REPS) for p in POLICIES}
    for r in range(REPS):
        tr = _trace(d, rho, seed=1000 * (list(CASES).index(case) + 1) + r)
        for p in POLICIES:
            res = flowsched.simulate(tr, topo, p)
            fct = res.flows["fct_s"].to_numpy()
            assert np.isfinite(fct).all()
            out[p][r] = fct[WARMUP : N_FLOWS - COOLDOWN].mean()
    return out


def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))


@cache
def theory(case: str) -> dict[str, float]:
    d, rho = CASES[case]
    lam = rho / d.moment(1)
    return {p: THEORY[p](d, lam) for p in POLICIES}


# --------------------------------------------------------------------------- tests: formulas
@pytest.mark.parametrize("case", list(CASES))
def test_partial_moments_match_quadrature(case):
    d, _ = CASES[case]
    for x in (d.lo * 1.5, d.lo * 7, d.lo * 40):
        for k in (0, 1, 2):
            num = integrate.quad(lambda t, k=k: t**k * d.pdf(t), d.lo, min(x, d.hi), epsrel=1e-12, limit=400)[0]
            assert d.partial(k, x) == pytest.approx(num, rel=1e-9)
    assert d.partial(0, d.hi) == pytest.approx(1.0, rel=1e-12)


def test_formulas_exponential():
    """Exponential service: fifo = ps = las = E[X]/(1-rho) (P-K with E[X^2] = 2 E[X]^2;
    FB has the mean of PS for a constant hazard rate), srpt strictly below; every
    formula tends to E[X] in light traffic."""
    m, rho = 1.0, 0.6
    d = ShiftedExp(shift=0.0, mean_exp=m)
    lam = rho / m
    ps = m / (1 - rho)
    assert et_ps(d, lam) == pytest.approx(ps, rel=1e-12)
    assert et_fifo(d, lam) == pytest.approx(ps, rel=1e-12)
    assert et_las(d, lam) == pytest.approx(ps, rel=1e-7)
    assert et_srpt(d, lam) < 0.9 * ps
    # Light traffic: everything tends to E[X].
    for f in THEORY.values():
        assert f(d, 1e-9) == pytest.approx(m, rel=1e-6)
    # Shifted exponential: E[X] and E[X^2] from the closed forms vs direct values.
    ds = ShiftedExp(shift=0.25, mean_exp=1.0)
    assert ds.moment(1) == pytest.approx(1.25, rel=1e-12)
    assert ds.moment(2) == pytest.approx(1.0 + 1.25**2, rel=1e-12)


def test_formulas_bounded_pareto_ordering():
    d, rho = CASES["bpareto"]
    th = theory("bpareto")
    # decreasing hazard rate: FB beats PS; SRPT beats everything; high variance: PS beats FIFO
    assert th["srpt"] < th["las"] < th["ps"] < th["fifo"]
    # Sizes drawn by sample() have the distribution's moments.
    x = d.sample(np.random.default_rng(0), 2_000_000)
    assert x.mean() == pytest.approx(d.moment(1), rel=3e-3)
    assert x.min() >= d.L and x.max() <= d.U


# --------------------------------------------------------------------------- tests: simulation
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", list(CASES))
def test_mean_fct_matches_theory(case, policy):
    sim, se = _mean_se(replication_means(case)[policy])
    th = theory(case)[policy]
    assert abs(sim - th) <= Z * se, (
        f"{case}/{policy}: simulated mean FCT {sim * 1e6:.3f} us +- {se * 1e6:.3f} (SE) "
        f"vs formula {th * 1e6:.3f} us: {(sim - th) / se:+.1f} SE"
    )


@pytest.mark.parametrize("case", list(CASES))
def test_policy_differences_match_theory(case):
    """Paired (same traces) differences between policies agree with the formulas."""
    means, th = replication_means(case), theory(case)
    for a, b in [("ps", "fifo"), ("las", "ps"), ("srpt", "las"), ("srpt", "ps")]:
        diff, se = _mean_se(means[a] - means[b])
        want = th[a] - th[b]
        assert abs(diff - want) <= Z * se, (
            f"{case}: E[T_{a}] - E[T_{b}] simulated {diff * 1e6:.3f} us +- {se * 1e6:.3f} "
            f"vs formula {want * 1e6:.3f} us"
        )


def test_policy_ordering_bounded_pareto():
    means = replication_means("bpareto")
    for a, b in [("srpt", "las"), ("las", "ps"), ("ps", "fifo")]:
        diff, se = _mean_se(means[a] - means[b])
        assert diff + Z * se < 0, f"expected {a} < {b}: paired difference {diff:.3e} +- {se:.3e}"


def test_srpt_beats_all_every_replication():
    """SRPT minimises the sum of sojourn times on every sample path (Schrage 1968), so
    it wins in each replication, not only on average (the unmeasured flows aside, we
    compare whole-trace sums)."""
    d, rho = CASES["bpareto"]
    topo = flowsched.BigSwitch(2, LINK_GBPS)
    for r in range(3):
        tr = _trace(d, rho, seed=99 + r)
        tot = {p: flowsched.simulate(tr, topo, p).flows["fct_s"].sum() for p in POLICIES}
        assert all(tot["srpt"] <= tot[p] * (1 + 1e-9) for p in POLICIES)


def test_busy_period_and_utilization():
    """All four policies are work conserving: same last finish, and the link carries
    exactly the offered bytes."""
    d, rho = CASES["bpareto"]
    tr = _trace(d, rho, seed=7)
    topo = flowsched.BigSwitch(2, LINK_GBPS)
    ends = []
    for p in POLICIES:
        res = flowsched.simulate(tr, topo, p)
        ends.append(res.flows["finish_s"].max())
        carried = res.links.set_index("link")["bytes"]
        assert carried["up0"] == pytest.approx(tr["size_bytes"].sum(), rel=1e-9)
        assert carried["down1"] == pytest.approx(tr["size_bytes"].sum(), rel=1e-9)
    # Busy-period recursion: end_i = max(end_{i-1}, a_i) + x_i.
    end = 0.0
    for a, s in zip(tr["arrival_s"], tr["size_bytes"], strict=True):
        end = max(end, a) + s / C
    assert ends == pytest.approx([end] * len(POLICIES), rel=1e-9)


def reference_single_link(arrival: np.ndarray, size: np.ndarray, policy: str) -> np.ndarray:
    """Independent event-driven fluid single server of rate C (finish times).

    fifo: the earliest arrival is served; ps: all share equally; srpt: the least
    remaining is served; las: the jobs of least attained service share equally.
    Assumes distinct arrival times and sizes (true for continuous random traces).
    """
    n = len(arrival)
    order = np.argsort(arrival, kind="stable")
    rem = size.astype(float).copy()
    att = np.zeros(n)
    finish = np.full(n, np.nan)
    active: list[int] = []
    t, k = 0.0, 0
    while k < n or active:
        if not active:
            t = max(t, arrival[order[k]])
        while k < n and arrival[order[k]] <= t:
            active.append(int(order[k]))
            k += 1
        if policy == "fifo":
            served = [min(active, key=lambda i: arrival[i])]
        elif policy == "srpt":
            served = [min(active, key=lambda i: rem[i])]
        elif policy == "ps":
            served = list(active)
        elif policy == "las":
            lo = min(att[i] for i in active)
            served = [i for i in active if att[i] <= lo + 1e-9 * max(lo, 1.0)]
        else:
            raise ValueError(policy)
        r = C / len(served)
        dt = min(rem[i] for i in served) / r
        if k < n:
            dt = min(dt, arrival[order[k]] - t)
        if policy == "las":
            above = [att[i] for i in active if i not in served]
            if above:
                dt = min(dt, (min(above) - att[served[0]]) / r)
        t += dt
        for i in served:
            rem[i] -= r * dt
            att[i] += r * dt
        for i in list(active):
            if rem[i] <= 1e-9 * size[i]:
                finish[i] = t
                active.remove(i)
    return finish


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", list(CASES))
def test_per_flow_matches_reference(case, policy):
    """Every flow's finish time equals an independent single-server implementation's."""
    d, rho = CASES[case]
    tr = _trace(d, rho, seed=4242).iloc[:1500]
    fin = flowsched.simulate(tr, flowsched.BigSwitch(2, LINK_GBPS), policy).flows["finish_s"].to_numpy()
    ref = reference_single_link(tr["arrival_s"].to_numpy(), tr["size_bytes"].to_numpy(), policy)
    np.testing.assert_allclose(fin, ref, rtol=1e-9, atol=0)


def test_fifo_matches_lindley_recursion():
    d, rho = CASES["bpareto"]
    tr = _trace(d, rho, seed=17)
    fct = flowsched.simulate(tr, flowsched.BigSwitch(2, LINK_GBPS), "fifo").flows["fct_s"].to_numpy()
    end, want = 0.0, np.empty(len(tr))
    for i, (a, s) in enumerate(zip(tr["arrival_s"], tr["size_bytes"], strict=True)):
        end = max(end, a) + s / C
        want[i] = end - a
    np.testing.assert_allclose(fct, want, rtol=1e-9, atol=1e-15)


def test_tiny_late_flow_completes():
    tr = pd.DataFrame({"arrival_s": [10.0], "src": [0], "dst": [1], "size_bytes": [100.0]})
    res = flowsched.simulate(tr, flowsched.BigSwitch(2, LINK_GBPS), "fifo")
    assert res.flows["fct_s"].iloc[0] == pytest.approx(100.0 / C, rel=1e-6)


def _table() -> str:
    lines = [f"{'case':8s} {'policy':6s} {'formula us':>11s} {'sim us':>9s} {'SE us':>7s} {'z':>6s} {'rel err':>8s}"]
    for case in CASES:
        means, th = replication_means(case), theory(case)
        for p in POLICIES:
            m, se = _mean_se(means[p])
            lines.append(
                f"{case:8s} {p:6s} {th[p] * 1e6:11.3f} {m * 1e6:9.3f} {se * 1e6:7.3f} "
                f"{(m - th[p]) / se:+6.2f} {(m - th[p]) / th[p]:+8.2%}"
            )
    lines.append("paired differences (same traces):")
    for case in CASES:
        means, th = replication_means(case), theory(case)
        for a, b in [("ps", "fifo"), ("las", "ps"), ("srpt", "las"), ("srpt", "ps")]:
            m, se = _mean_se(means[a] - means[b])
            want = th[a] - th[b]
            lines.append(
                f"{case:8s} {a + '-' + b:9s} formula {want * 1e6:9.3f} us  sim {m * 1e6:9.3f} +- {se * 1e6:6.3f} us "
                f"(z {(m - want) / se:+.2f})"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    import time

    t0 = time.time()
    print(_table())
    print(f"{time.time() - t0:.1f} s")


def test_per_size_fct_refuses_sizes_that_are_not_positive():
    # mlfq_flow_fct returned -7.95e-06 s for -10 kB and NaN for NaN (mlps_flow_fct refused them)
    from flowsched import queueing, workloads

    d = workloads.Mixture([(0.9, workloads.Fixed(1e4)), (0.1, workloads.Fixed(1e6))])
    for bad in (np.array([-1e4]), np.array([0.0]), np.array([np.nan])):
        with pytest.raises(ValueError, match="size_bytes must be > 0"):
            queueing.mlfq_flow_fct(bad, [5e3], d, 0.5)


def test_thresholds_given_as_a_string_are_refused():
    # "123" was read character by character, as [1, 2, 3]
    from flowsched import queueing, workloads

    with pytest.raises(ValueError, match="thresholds_bytes must be a sequence of numbers, got '123'"):
        queueing.mean_fct_mlfq("123", workloads.Exponential(1e5), 0.5)
