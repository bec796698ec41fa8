"""Parametric flow-size distributions and their base class, :class:`SizeDistribution`."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from flowsched.workloads._common import _check_n, _num, _open_unit, _positive


class SizeDistribution(ABC):
    """A flow-size distribution in bytes.

    Subclasses implement :meth:`sample`, :attr:`mean_bytes` and
    :attr:`second_moment_bytes2` exactly (closed forms, no Monte Carlo).
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

    def __repr__(self) -> str:
        return f"Pareto(alpha={_num(self.alpha)}, scale_bytes={_num(self.scale_bytes)}, mean_bytes={_num(self.mean_bytes)})"


@dataclass(frozen=True)
class ClassicPareto(SizeDistribution):
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

    def __repr__(self) -> str:
        return (
            f"ClassicPareto(alpha={_num(self.alpha)}, min_bytes={_num(self.min_bytes)}, "
            f"mean_bytes={_num(self.mean_bytes)})"
        )


@dataclass(frozen=True)
class BoundedPareto(SizeDistribution):
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

    def __repr__(self) -> str:
        return f"Uniform(low_bytes={_num(self.low_bytes)}, high_bytes={_num(self.high_bytes)})"

