"""Parametric flow-size distributions and their base class, :class:`SizeDistribution`."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from flowsched.workloads._common import _check_n, _num, _open_unit, _positive


class SizeDistribution(ABC):
    """A flow-size distribution in bytes.

    Subclasses implement :meth:`sample`, :attr:`mean_bytes` and
    :attr:`second_moment_bytes2` exactly (closed forms, no Monte Carlo).

    The survival function :meth:`sf` and the partial moments
    :meth:`partial_moment` (what :mod:`flowsched.queueing`'s M/G/1 model
    needs) come from three hooks on float64 arrays that a subclass gives in
    closed form, as ``scipy.stats`` distributions give ``_sf`` and ``_cdf``:
    ``_sf(t)`` = P(S > t), computed directly (not as 1 - P(S <= t), which
    loses the tail to rounding); ``_cum(p, t)`` = E[S^p; S <= t] for p in
    {0, 1, 2} (``t`` may be inf); ``_inv(a, b)`` = E[1/S; a < S <= b] (may be
    inf). A subclass without them still samples and has its moments; only
    the model refuses it (TypeError). :attr:`atoms_bytes` and
    :attr:`lattice_bytes` describe a discrete part (where a threshold
    optimizer should look).
    """

    @abstractmethod
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` flow sizes.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness (the only one used).
        n : int
            Number of sizes.

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``(n,)``, sizes in bytes, all > 0.
        """

    @property
    @abstractmethod
    def mean_bytes(self) -> float:
        """E[S] in bytes (``inf`` if it diverges)."""

    @property
    @abstractmethod
    def second_moment_bytes2(self) -> float:
        """E[S^2] in bytes^2 (``inf`` if it diverges)."""

    @property
    def variance_bytes2(self) -> float:
        """Var[S] in bytes^2 (``inf`` if it diverges)."""
        m2 = self.second_moment_bytes2
        if math.isinf(m2):
            return math.inf
        return max(m2 - self.mean_bytes**2, 0.0)

    # -- survival function and partial moments --------------------------------

    def sf(self, x_bytes: npt.ArrayLike) -> Any:
        """Survival function P(S > x).

        Parameters
        ----------
        x_bytes : float or array_like
            Sizes in bytes (``inf`` allowed).

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar ``x_bytes``, else an array of its shape.
        """
        x = np.asarray(x_bytes, dtype=np.float64)
        return _like(self._sf(x), x)

    def partial_moment(self, p: int, a_bytes: npt.ArrayLike = 0.0, b_bytes: npt.ArrayLike = math.inf) -> Any:
        """E[S^p; a < S <= b] in bytes^p, exactly (closed forms per distribution).

        Parameters
        ----------
        p : {-1, 0, 1, 2}
            The power; p = 0 is P(a < S <= b), p = -1 gives the E[1/S] terms of
            a mean slowdown.
        a_bytes, b_bytes : float or array_like
            Interval ends (broadcast together), ``a >= 0``; ``b`` may be
            ``inf``. Where ``b <= a`` the moment is 0.

        Returns
        -------
        float or numpy.ndarray
            A float when both ends are scalars, else an array of their
            broadcast shape. ``inf`` where the moment diverges (E[S^2] of a
            heavy tail, E[1/S] of a density > 0 at 0).
        """
        if p not in (-1, 0, 1, 2):
            raise ValueError(f"partial_moment: p must be -1, 0, 1 or 2, got {p!r}")
        b = np.asarray(b_bytes, np.float64)
        if p != -1 and isinstance(a_bytes, (int, float)) and a_bytes == 0:
            # E[S^p; S <= b], the M/G/1 model's hot path: no broadcasting needed
            if np.isnan(b).any():
                raise ValueError(f"partial_moment: b must not be NaN, got {b_bytes!r}")
            return _like(np.where(b > 0.0, self._cum(p, b), 0.0), b)
        a = np.asarray(a_bytes, np.float64)
        if a.shape != b.shape:
            a, b = np.broadcast_arrays(a, b)
        if not np.all(a >= 0) or np.isnan(b).any():
            raise ValueError(f"partial_moment: need a >= 0 and b not NaN, got a={a_bytes!r}, b={b_bytes!r}")
        return _like(self._partial(p, a, b), a)

    @property
    def atoms_bytes(self) -> np.ndarray:
        """Sizes with a positive probability of their own (point masses), sorted; empty if none."""
        return np.zeros(0)

    @property
    def lattice_bytes(self) -> float | None:
        """``u`` when part of the mass is spread evenly over whole multiples ``k u`` (ns-2's
        integer packet counts), else None."""
        return None

    def _partial(self, p: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """E[S^p; a < S <= b] on broadcast float64 arrays, 0 where b <= a."""
        if p == -1:
            out = self._inv(a, b)
        elif not a.any():
            out = self._cum(p, b)  # E[S^p; S <= 0] = 0: sizes are > 0
        else:
            out = self._cum(p, b) - self._cum(p, a)
        return np.where(b > a, out, 0.0)

    def _no_moments(self) -> TypeError:
        return TypeError(
            f"{type(self).__name__} has no closed-form sf/partial moments (the SizeDistribution hooks "
            "_sf, _cum and _inv); the built-in distributions all have them"
        )

    def _sf(self, t: np.ndarray) -> np.ndarray:
        raise self._no_moments()

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        raise self._no_moments()

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise self._no_moments()


def _like(out: Any, ref: np.ndarray) -> Any:
    """``out`` as a float when ``ref`` is a scalar (0-d), else as an array."""
    return float(out) if ref.ndim == 0 else np.asarray(out, dtype=np.float64)


def _clip(t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip(np.asarray(t, np.float64), lo, hi)


def _powerlaw(p: int, alpha: float, xm: float, norm: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """norm * alpha xm^alpha int_a^b x^(p - alpha - 1) dx, xm <= a <= b (b may be inf)."""
    e = p - alpha
    ra, rb = a / xm, b / xm
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if abs(e) < 1e-12:
            val = np.log(rb) - np.log(ra)
        else:
            val = (rb**e - ra**e) / e
    return norm * alpha * xm**p * val


class _ParetoTail:
    """Hooks of a density proportional to x^(-alpha-1) on [lo, hi] (hi = inf: ClassicPareto)."""

    def _tail(self) -> tuple[float, float, float]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _norm(self) -> float:
        alpha, lo, hi = self._tail()
        return 1.0 / (1.0 - (lo / hi) ** alpha) if math.isfinite(hi) else 1.0

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        alpha, lo, hi = self._tail()
        tt = _clip(t, lo, hi)
        return _powerlaw(p, alpha, lo, self._norm(), np.full_like(tt, lo), tt)

    def _sf(self, t: np.ndarray) -> np.ndarray:
        alpha, lo, hi = self._tail()
        tt = _clip(t, lo, hi)
        top = (lo / hi) ** alpha if math.isfinite(hi) else 0.0
        return np.maximum(self._norm() * ((lo / tt) ** alpha - top), 0.0)

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        alpha, lo, hi = self._tail()
        aa, bb = _clip(a, lo, hi), _clip(b, lo, hi)
        return np.where(bb > aa, _powerlaw(-1, alpha, lo, self._norm(), aa, bb), 0.0)


@dataclass(frozen=True)
class Fixed(SizeDistribution):
    """Every flow has the same size.

    Parameters
    ----------
    size_bytes : float
        The size, > 0.
    """

    size_bytes: float

    def __post_init__(self) -> None:
        _positive("Fixed", size_bytes=self.size_bytes)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(_check_n(n), float(self.size_bytes))

    @property
    def mean_bytes(self) -> float:
        return float(self.size_bytes)

    @property
    def second_moment_bytes2(self) -> float:
        return float(self.size_bytes) ** 2

    @property
    def atoms_bytes(self) -> np.ndarray:
        return np.array([float(self.size_bytes)])

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        s = float(self.size_bytes)
        return np.where(np.asarray(t) >= s, s**p, 0.0)

    def _sf(self, t: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(t) < float(self.size_bytes), 1.0, 0.0)

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        s = float(self.size_bytes)
        return np.where((a < s) & (s <= b), 1.0 / s, 0.0)

    def __repr__(self) -> str:
        return f"Fixed(size_bytes={_num(self.size_bytes)})"


class Exponential(SizeDistribution):
    """Exponential sizes, P(S > x) = exp(-x / mean).

    Parameters
    ----------
    mean_bytes : float
        The mean, > 0.

    Notes
    -----
    E[S^2] = 2 mean^2.
    """

    def __init__(self, mean_bytes: float) -> None:
        _positive("Exponential", mean_bytes=mean_bytes)
        self._mean = float(mean_bytes)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return -self._mean * np.log(_open_unit(rng, _check_n(n)))

    @property
    def mean_bytes(self) -> float:
        return self._mean

    @property
    def second_moment_bytes2(self) -> float:
        return 2.0 * self._mean**2

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        from scipy import special

        z = np.asarray(t, np.float64) / self._mean
        if p == 0:
            return -np.expm1(-z)
        # int_0^t x^p e^{-x/m}/m dx = m^p Gamma(p+1) P(p+1, t/m)
        return self._mean**p * math.gamma(p + 1) * special.gammainc(p + 1, z)

    def _sf(self, t: np.ndarray) -> np.ndarray:
        return np.exp(-np.asarray(t, np.float64) / self._mean)

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        from scipy import special

        a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
        with np.errstate(invalid="ignore"):
            out = (special.exp1(a / self._mean) - special.exp1(b / self._mean)) / self._mean
        # exp1(0) is returned as the largest float, not inf
        return np.where(b <= a, 0.0, np.where(a <= 0, math.inf, out))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exponential) and other._mean == self._mean

    def __hash__(self) -> int:
        return hash(("Exponential", self._mean))

    def __repr__(self) -> str:
        return f"Exponential(mean_bytes={_num(self._mean)})"


@dataclass(frozen=True)
class Pareto(SizeDistribution):
    """Pareto of the second kind (Lomax): P(S > x) = (1 + x/scale)^-alpha, x >= 0.

    This is the form used by SCHED_TCP (Ayesta et al., section 5,
    "P(S > x) = 1/(1+cx)^alpha" with c = 1/scale; alpha = 3, c = 1e-7 gives
    E[S] = 5 MB). Support starts at 0 (every size > 0 has positive density).

    Parameters
    ----------
    alpha : float
        Shape, > 0. The mean is finite for alpha > 1, the second moment for
        alpha > 2.
    scale_bytes : float
        Scale (1/c), > 0.

    Notes
    -----
    E[S] = scale/(alpha-1); E[S^2] = 2 scale^2/((alpha-1)(alpha-2)).
    Use :meth:`from_mean` to fix the mean instead of the scale.
    """

    alpha: float
    scale_bytes: float

    def __post_init__(self) -> None:
        _positive("Pareto", alpha=self.alpha, scale_bytes=self.scale_bytes)

    @classmethod
    def from_mean(cls, alpha: float, mean_bytes: float) -> Pareto:
        """Lomax with shape ``alpha`` (> 1) and the given mean."""
        if not alpha > 1:
            raise ValueError(f"Pareto.from_mean: alpha must be > 1 for a finite mean, got {alpha!r}")
        _positive("Pareto.from_mean", mean_bytes=mean_bytes)
        return cls(float(alpha), float(mean_bytes) * (float(alpha) - 1.0))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        e = -np.log(_open_unit(rng, _check_n(n)))  # Exp(1), > 0
        return float(self.scale_bytes) * np.expm1(e / float(self.alpha))

    @property
    def mean_bytes(self) -> float:
        a = float(self.alpha)
        return self.scale_bytes / (a - 1.0) if a > 1 else math.inf

    @property
    def second_moment_bytes2(self) -> float:
        a = float(self.alpha)
        return 2.0 * self.scale_bytes**2 / ((a - 1.0) * (a - 2.0)) if a > 2 else math.inf

    # partial moments from E[min(S,t)^p] = int_0^t p x^(p-1) P(S > x) dx
    def _g(self, p: int, t: np.ndarray) -> np.ndarray:
        a, s = float(self.alpha), float(self.scale_bytes)
        L = np.log1p(np.asarray(t, np.float64) / s)

        def h(c: float) -> np.ndarray:  # int_1^Y y^(c-1) dy with Y = 1 + t/s = e^L
            return L if abs(c) < 1e-12 else np.expm1(c * L) / c

        if p == 1:
            return s * h(1.0 - a)
        return 2.0 * s * s * (h(2.0 - a) - h(1.0 - a))

    def _sf(self, t: np.ndarray) -> np.ndarray:
        return np.exp(-float(self.alpha) * np.log1p(np.asarray(t, np.float64) / float(self.scale_bytes)))

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        a, s = float(self.alpha), float(self.scale_bytes)
        t = np.asarray(t, np.float64)
        sf = self._sf(t)
        if p == 0:
            return -np.expm1(-a * np.log1p(t / s))
        fin = np.isfinite(t)
        ts = np.where(fin, t, 0.0)
        with np.errstate(invalid="ignore", over="ignore"):
            g = self._g(p, ts)
            out = g - ts**p * sf
        mom = s**p * math.gamma(p + 1) * math.gamma(a - p) / math.gamma(a) if a > p else math.inf
        return np.where(fin, out, mom)

    def _inv(self, a_: np.ndarray, b_: np.ndarray) -> np.ndarray:
        from scipy import integrate

        alpha, s = float(self.alpha), float(self.scale_bytes)
        a, b = np.broadcast_arrays(np.asarray(a_, np.float64), np.asarray(b_, np.float64))
        out = np.empty(a.shape)
        for i, (x, y) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
            if y <= x:
                out.flat[i] = 0.0
            elif x <= 0:
                out.flat[i] = math.inf  # the density is alpha/s > 0 at 0
            else:
                f = lambda u: alpha / s * (1 + u / s) ** (-alpha - 1) / u  # noqa: E731
                out.flat[i] = integrate.quad(f, x, y, limit=200, epsrel=1e-10)[0]
        return out

    def __repr__(self) -> str:
        return (
            f"Pareto(alpha={_num(self.alpha)}, scale_bytes={_num(self.scale_bytes)}, "
            f"mean_bytes={_num(self.mean_bytes)})"
        )


@dataclass(frozen=True)
class ClassicPareto(_ParetoTail, SizeDistribution):
    """Classic Pareto (type I): P(S > x) = (min/x)^alpha for x >= min.

    This is ns-2's ``Pareto`` random variable (shape and mean), e.g. SDC's
    benchmark traffic "Pareto distributed with shape parameter 1.2 and
    average response size of 25KB" (Munir, section 3.5.3).

    Parameters
    ----------
    alpha : float
        Shape, > 0 (finite mean for alpha > 1, finite E[S^2] for alpha > 2).
    min_bytes : float
        Smallest size, > 0.

    Notes
    -----
    E[S] = alpha min/(alpha-1); E[S^2] = alpha min^2/(alpha-2).
    """

    alpha: float
    min_bytes: float

    def __post_init__(self) -> None:
        _positive("ClassicPareto", alpha=self.alpha, min_bytes=self.min_bytes)

    @classmethod
    def from_mean(cls, alpha: float, mean_bytes: float) -> ClassicPareto:
        """Classic Pareto with shape ``alpha`` (> 1) and the given mean."""
        if not alpha > 1:
            raise ValueError(f"ClassicPareto.from_mean: alpha must be > 1 for a finite mean, got {alpha!r}")
        _positive("ClassicPareto.from_mean", mean_bytes=mean_bytes)
        return cls(float(alpha), float(mean_bytes) * (float(alpha) - 1.0) / float(alpha))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        e = -np.log(_open_unit(rng, _check_n(n)))
        return float(self.min_bytes) * np.exp(e / float(self.alpha))

    @property
    def mean_bytes(self) -> float:
        a = float(self.alpha)
        return a * self.min_bytes / (a - 1.0) if a > 1 else math.inf

    @property
    def second_moment_bytes2(self) -> float:
        a = float(self.alpha)
        return a * self.min_bytes**2 / (a - 2.0) if a > 2 else math.inf

    def _tail(self) -> tuple[float, float, float]:
        return float(self.alpha), float(self.min_bytes), math.inf

    def __repr__(self) -> str:
        return (
            f"ClassicPareto(alpha={_num(self.alpha)}, min_bytes={_num(self.min_bytes)}, "
            f"mean_bytes={_num(self.mean_bytes)})"
        )


@dataclass(frozen=True)
class BoundedPareto(_ParetoTail, SizeDistribution):
    """Bounded Pareto on [low, high]: density alpha low^a x^(-a-1) / (1 - (low/high)^a).

    Parameters
    ----------
    alpha : float
        Shape, > 0.
    low_bytes, high_bytes : float
        Support, 0 < low < high.

    Notes
    -----
    E[S^k] = alpha low^a / (1-(low/high)^a) * (high^(k-a) - low^(k-a)) / (k-a),
    or ... * ln(high/low) when k == alpha.
    """

    alpha: float
    low_bytes: float
    high_bytes: float

    def __post_init__(self) -> None:
        _positive("BoundedPareto", alpha=self.alpha, low_bytes=self.low_bytes, high_bytes=self.high_bytes)
        if not self.high_bytes > self.low_bytes:
            raise ValueError(f"BoundedPareto: need low_bytes < high_bytes, got {self.low_bytes!r}, {self.high_bytes!r}")

    def _moment(self, k: int) -> float:
        a, lo, hi = float(self.alpha), float(self.low_bytes), float(self.high_bytes)
        # work in units of `lo` for numerical stability
        r = hi / lo
        norm = a / (1.0 - r**-a)
        if abs(k - a) < 1e-12:
            return lo**k * norm * math.log(r)
        return lo**k * norm * (r ** (k - a) - 1.0) / (k - a)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        a, lo, hi = float(self.alpha), float(self.low_bytes), float(self.high_bytes)
        u = _open_unit(rng, _check_n(n))
        tail = (lo / hi) ** a
        x = lo * (1.0 - u * (1.0 - tail)) ** (-1.0 / a)
        return np.clip(x, lo, hi)

    @property
    def mean_bytes(self) -> float:
        return self._moment(1)

    @property
    def second_moment_bytes2(self) -> float:
        return self._moment(2)

    def _tail(self) -> tuple[float, float, float]:
        return float(self.alpha), float(self.low_bytes), float(self.high_bytes)

    def __repr__(self) -> str:
        return (
            f"BoundedPareto(alpha={_num(self.alpha)}, low_bytes={_num(self.low_bytes)}, "
            f"high_bytes={_num(self.high_bytes)}, mean_bytes={self.mean_bytes:.6g})"
        )


class Lognormal(SizeDistribution):
    """Lognormal sizes with a given mean: S = exp(mu + sigma Z), mu = ln(mean) - sigma^2/2.

    Parameters
    ----------
    mean_bytes : float
        E[S], > 0.
    sigma : float
        Standard deviation of ln S, > 0.

    Notes
    -----
    E[S^2] = mean^2 exp(sigma^2).
    """

    def __init__(self, mean_bytes: float, sigma: float) -> None:
        _positive("Lognormal", mean_bytes=mean_bytes, sigma=sigma)
        self._mean = float(mean_bytes)
        self.sigma = float(sigma)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        mu = math.log(self._mean) - 0.5 * self.sigma**2
        return np.exp(mu + self.sigma * rng.standard_normal(_check_n(n)))

    @property
    def mean_bytes(self) -> float:
        return self._mean

    @property
    def second_moment_bytes2(self) -> float:
        return self._mean**2 * math.exp(self.sigma**2)

    def _c(self, p: int, t: np.ndarray) -> np.ndarray:
        from scipy import special

        mu = math.log(self._mean) - 0.5 * self.sigma**2
        with np.errstate(divide="ignore"):
            z = (np.log(np.asarray(t, np.float64)) - mu - p * self.sigma**2) / self.sigma
        return math.exp(p * mu + 0.5 * p * p * self.sigma**2) * special.ndtr(z)

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        return self._c(p, t)

    def _sf(self, t: np.ndarray) -> np.ndarray:
        from scipy import special

        mu = math.log(self._mean) - 0.5 * self.sigma**2
        with np.errstate(divide="ignore"):
            z = (np.log(np.asarray(t, np.float64)) - mu) / self.sigma
        return special.ndtr(-z)

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._c(-1, b) - self._c(-1, a)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lognormal) and (other._mean, other.sigma) == (self._mean, self.sigma)

    def __hash__(self) -> int:
        return hash(("Lognormal", self._mean, self.sigma))

    def __repr__(self) -> str:
        return f"Lognormal(mean_bytes={_num(self._mean)}, sigma={_num(self.sigma)})"


@dataclass(frozen=True)
class Uniform(SizeDistribution):
    """Continuous uniform sizes on (low, high).

    Parameters
    ----------
    low_bytes : float
        Lower end, >= 0.
    high_bytes : float
        Upper end, > low.

    Notes
    -----
    E[S^2] = (low^2 + low high + high^2)/3. SDC's short/long mix uses
    response sizes "uniformly distributed across [2KB, 50KB]" (Munir,
    section 3.5.2).
    """

    low_bytes: float
    high_bytes: float

    def __post_init__(self) -> None:
        lo, hi = self.low_bytes, self.high_bytes
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo < hi):
            raise ValueError(f"Uniform: need 0 <= low_bytes < high_bytes (finite), got {lo!r}, {hi!r}")

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        lo, hi = float(self.low_bytes), float(self.high_bytes)
        return lo + (hi - lo) * _open_unit(rng, _check_n(n))

    @property
    def mean_bytes(self) -> float:
        return 0.5 * (self.low_bytes + self.high_bytes)

    @property
    def second_moment_bytes2(self) -> float:
        lo, hi = float(self.low_bytes), float(self.high_bytes)
        return (lo * lo + lo * hi + hi * hi) / 3.0

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        lo, hi = float(self.low_bytes), float(self.high_bytes)
        tt = _clip(t, lo, hi)
        return (tt ** (p + 1) - lo ** (p + 1)) / ((p + 1) * (hi - lo))

    def _sf(self, t: np.ndarray) -> np.ndarray:
        lo, hi = float(self.low_bytes), float(self.high_bytes)
        return (hi - _clip(t, lo, hi)) / (hi - lo)

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        lo, hi = float(self.low_bytes), float(self.high_bytes)
        aa, bb = _clip(a, lo, hi), _clip(b, lo, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (np.log(bb) - np.log(aa)) / (hi - lo)
        return np.where(bb > aa, out, 0.0)

    def __repr__(self) -> str:
        return f"Uniform(low_bytes={_num(self.low_bytes)}, high_bytes={_num(self.high_bytes)})"

