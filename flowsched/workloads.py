"""Flow-size distributions, arrival processes and trace generators.

Everything here returns plain numbers or validated traces (see
:mod:`flowsched.traces`); all randomness comes from a
:class:`numpy.random.Generator` built from an explicit ``seed`` (never the
global RNGs), so a generator called twice with the same arguments returns
the same trace.

Size distributions
------------------
Every distribution has ``sample(rng, n) -> float64 bytes``, an exact
``mean_bytes`` and ``second_moment_bytes2`` (E[S^2], ``inf`` where it
diverges) and a readable ``repr``:

* :class:`EmpiricalCDF` -- the shipped ``.cdf`` files (web search, data
  mining, Facebook, Google, Alibaba, Homa W1-W5) under the three sampling
  rules ``ns2int``, ``linear`` and ``step`` (``flowsched/data/README.md``);
* :class:`Exponential`, :class:`Pareto` (Lomax, SCHED_TCP's form),
  :class:`ClassicPareto`, :class:`BoundedPareto`, :class:`Lognormal`,
  :class:`Fixed`, :class:`Uniform`;
* :class:`Mixture` of any of these, optionally with one deadline per class
  (:func:`artemis_workload_a`).

:func:`get_distribution` builds any of them from a short string.

Traces
------
:func:`poisson_all_to_all` (PIAS/pFabric/aSCC style load), :func:`gather_bursts`
(Artemis workload A), :func:`incast` and :func:`background_plus_queries`
(SDC/RACS), the modifiers :func:`add_deadlines`, :func:`add_weights`,
:func:`add_data_span` (aSCC's alpha), and the adversarial instances of the
aSCC theorems (:func:`fifo_adversarial_instance`,
:func:`pias_adversarial_instance`, :func:`las_starvation_instance`).
:func:`pias_thresholds` gives PIAS's demotion thresholds.

Units are in the names: ``_bytes``, ``_s``, ``_hz``, ``_gbps`` (10^9 bit/s).
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
import pandas as pd

from flowsched.traces import MAX_FLOWS, validate_trace

__all__ = [
    "PACKET_PAYLOAD_BYTES",
    "PACKET_WIRE_BYTES",
    "HEADER_FACTOR",
    "SAMPLING_RULES",
    "SizeDistribution",
    "CDFFormatError",
    "EmpiricalCDF",
    "Exponential",
    "Pareto",
    "ClassicPareto",
    "BoundedPareto",
    "Lognormal",
    "Fixed",
    "Uniform",
    "Mixture",
    "artemis_workload_a",
    "shipped_cdf_names",
    "distribution_names",
    "get_distribution",
    "arrival_rate_per_host_hz",
    "poisson_all_to_all",
    "gather_bursts",
    "incast",
    "background_plus_queries",
    "merge_traces",
    "add_deadlines",
    "add_weights",
    "add_data_span",
    "fifo_adversarial_instance",
    "pias_adversarial_instance",
    "las_starvation_instance",
    "PIAS_THRESHOLDS_PACKETS",
    "pias_thresholds",
]

PACKET_PAYLOAD_BYTES = 1460
"""Payload bytes per packet (TCP MSS) used by ns-2/PIAS/aSCC and the ``ns2int`` rule."""

PACKET_WIRE_BYTES = 1500
"""Bytes on the wire per full packet (payload + headers)."""

HEADER_FACTOR = PACKET_WIRE_BYTES / PACKET_PAYLOAD_BYTES
"""1500/1460: PIAS/aSCC convert the mean flow size to wire bytes with this factor."""

SamplingRule = Literal["ns2int", "linear", "step"]
SAMPLING_RULES: tuple[str, ...] = ("ns2int", "linear", "step")
"""The three ways the simulators read the same CDF points (see ``flowsched/data/README.md``)."""

DistLike = Union["SizeDistribution", str, float, int]


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _check_n(n: int, what: str = "n") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {n!r}")
    return int(n)


def _open_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniform draws in the open interval (0, 1) (a 0.0 from ``rng.random`` is replaced)."""
    u = rng.random(n)
    u[u == 0.0] = 2.0**-54
    return u


def _num(x: float) -> str:
    """Short readable number for reprs."""
    x = float(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


# ============================================================================
# size distributions
# ============================================================================


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


def _positive(name: str, **values: float) -> None:
    for k, v in values.items():
        if not (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}: {k} must be a finite number > 0, got {v!r}")


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


# ----------------------------------------------------------------------------
# mixtures (optionally class-aware, with one deadline per class)
# ----------------------------------------------------------------------------


def _as_distribution(d: DistLike) -> SizeDistribution:
    if isinstance(d, SizeDistribution):
        return d
    if isinstance(d, str):
        return get_distribution(d)
    if isinstance(d, (int, float, np.integer, np.floating)) and not isinstance(d, bool):
        return Fixed(float(d))
    raise TypeError(f"expected a SizeDistribution, a distribution name or a size in bytes, got {d!r}")


class Mixture(SizeDistribution):
    """A finite mixture of size distributions; each component is a *class*.

    Parameters
    ----------
    components : sequence of tuples
        ``(weight, dist_or_size)`` or ``(weight, dist_or_size, deadline_s)``.
        ``weight`` > 0 (normalized to sum to 1); ``dist_or_size`` is a
        :class:`SizeDistribution`, a name for :func:`get_distribution`, or a
        number (a :class:`Fixed` size in bytes); ``deadline_s`` (> 0, or
        None/NaN for none) is the deadline, relative to arrival, of every
        flow of that class.
    names : sequence of str, optional
        One label per class (default ``"class0"``, ...).

    Notes
    -----
    E[S] and E[S^2] are the weighted sums of the components' moments.
    Generators (:func:`poisson_all_to_all`, :func:`gather_bursts`) copy the
    class deadline into the trace's ``deadline_s``.
    """

    def __init__(
        self,
        components: Sequence[tuple[float, DistLike] | tuple[float, DistLike, float | None]],
        names: Sequence[str] | None = None,
    ) -> None:
        if len(components) == 0:
            raise ValueError("Mixture: needs at least one component")
        weights, dists, deadlines = [], [], []
        for k, comp in enumerate(components):
            if not isinstance(comp, tuple) or len(comp) not in (2, 3):
                raise ValueError(
                    f"Mixture: component {k} must be (weight, dist_or_size) or (weight, dist_or_size, deadline_s), got {comp!r}"
                )
            w = float(comp[0])
            if not (math.isfinite(w) and w > 0):
                raise ValueError(f"Mixture: component {k} weight must be finite and > 0, got {comp[0]!r}")
            raw_dl: Any = comp[2] if len(comp) == 3 else None  # type: ignore[misc, unused-ignore]
            if raw_dl is None or (isinstance(raw_dl, float) and math.isnan(raw_dl)):
                dl = math.nan
            else:
                dl = float(raw_dl)
                if not (math.isfinite(dl) and dl > 0):
                    raise ValueError(f"Mixture: component {k} deadline_s must be > 0 or None, got {raw_dl!r}")
            weights.append(w)
            dists.append(_as_distribution(comp[1]))
            deadlines.append(dl)
        w_arr = np.asarray(weights, dtype=np.float64)
        self._weights = w_arr / w_arr.sum()
        self._dists: tuple[SizeDistribution, ...] = tuple(dists)
        self._deadlines = np.asarray(deadlines, dtype=np.float64)
        if names is None:
            names = [f"class{k}" for k in range(len(dists))]
        if len(names) != len(dists):
            raise ValueError(f"Mixture: {len(names)} names for {len(dists)} components")
        self._names = tuple(str(x) for x in names)

    @property
    def weights(self) -> np.ndarray:
        """Normalized class probabilities (a copy)."""
        return self._weights.copy()

    @property
    def components(self) -> tuple[SizeDistribution, ...]:
        """The class size distributions."""
        return self._dists

    @property
    def deadlines_s(self) -> np.ndarray:
        """Deadline of each class in seconds (NaN = none; a copy)."""
        return self._deadlines.copy()

    @property
    def names(self) -> tuple[str, ...]:
        """Class labels."""
        return self._names

    @property
    def has_deadlines(self) -> bool:
        """True if at least one class carries a deadline."""
        return bool(np.any(~np.isnan(self._deadlines)))

    def sample_classes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw ``n`` i.i.d. class indices (int64) with the mixture weights."""
        u = rng.random(_check_n(n))
        cls = np.searchsorted(np.cumsum(self._weights), u, side="right")
        return np.minimum(cls, len(self._weights) - 1).astype(np.int64)

    def sample_sizes_for_classes(self, rng: np.random.Generator, classes: np.ndarray) -> np.ndarray:
        """Draw one size per entry of ``classes`` from that class's distribution."""
        classes = np.asarray(classes, dtype=np.int64)
        out = np.empty(classes.size, dtype=np.float64)
        for k, dist in enumerate(self._dists):
            idx = np.flatnonzero(classes == k)
            if idx.size:
                out[idx] = dist.sample(rng, idx.size)
        return out

    def sample_with_classes(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` (size_bytes, class index) pairs."""
        cls = self.sample_classes(rng, n)
        return self.sample_sizes_for_classes(rng, cls), cls

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.sample_with_classes(rng, n)[0]

    @property
    def mean_bytes(self) -> float:
        return float(sum(w * d.mean_bytes for w, d in zip(self._weights, self._dists, strict=True)))

    @property
    def second_moment_bytes2(self) -> float:
        return float(sum(w * d.second_moment_bytes2 for w, d in zip(self._weights, self._dists, strict=True)))

    def __repr__(self) -> str:
        parts = []
        for name, w, d, dl in zip(self._names, self._weights, self._dists, self._deadlines, strict=True):
            dl_s = "" if math.isnan(dl) else f", deadline_s={_num(dl)}"
            parts.append(f"{name}: {w:.6g} x {d!r}{dl_s}")
        return "Mixture(" + "; ".join(parts) + ")"


def artemis_workload_a(variant: int = 1, *, kb_bytes: int = 1000) -> Mixture:
    """Artemis gather workload A: two (size, deadline) classes.

    Naouach, "Towards A Workload-Driven Flow Scheduler For Modern
    Datacenters" (the Artemis thesis), section 4.1.2: "Each burst is
    composed of a group of 10 flows ...: 5 flows, each one of them has a
    size of 350KB and a deadline of 40ms; 5 flows, each one of them has a
    size of 250KB and a deadline of 50ms" (variant 1, section 4.2), and
    section 4.3: "The variant 2 of workload A is composed of 60% of (350KB,
    40ms) flows and 40% of (250KB, 50ms) flows ... each burst is now
    composed of 6 flows of (350KB, 40ms) and 4 flows of (250KB, 50ms)".

    Parameters
    ----------
    variant : {1, 2}
        1: 50% (350 KB, 40 ms) + 50% (250 KB, 50 ms); 2: 60% (350 KB, 40 ms)
        + 40% (250 KB, 50 ms).
    kb_bytes : int
        Bytes per "KB". The thesis never defines KB; its size/deadline
        ratios (section 4.2.2: the 50ms-flows have "5MBps", the 40ms-flows
        "8.78MBps", i.e. 250KB/50ms and 350KB/40ms = 8.75 with MB = 1000 KB)
        are decimal, so the default is 1000 (350 KB = 350,000 B). Pass 1024
        for KiB.

    Returns
    -------
    Mixture
        Classes ``"350KB/40ms"`` and ``"250KB/50ms"`` (in that order) with
        :class:`Fixed` sizes and their deadlines. Use with
        :func:`gather_bursts` (10-to-1 bursts, 10 bursts/s, 1 Gbps links in
        the thesis, section 4.1).
    """
    if variant not in (1, 2):
        raise ValueError(f"artemis_workload_a: variant must be 1 or 2, got {variant!r}")
    w_big = 0.5 if variant == 1 else 0.6
    return Mixture(
        [(w_big, Fixed(350.0 * kb_bytes), 0.040), (1.0 - w_big, Fixed(250.0 * kb_bytes), 0.050)],
        names=["350KB/40ms", "250KB/50ms"],
    )


# ----------------------------------------------------------------------------
# empirical CDFs
# ----------------------------------------------------------------------------


class CDFFormatError(ValueError):
    """A ``.cdf`` file (or point list) is malformed; the message names the file and line."""


# Native sampling rule of each shipped file, from the table in
# flowsched/data/README.md (copied from /work/shared/workloads/README.md,
# column "native"). Used only when a file's header does not say it.
_NATIVE_SAMPLING_TABLE: dict[str, str] = {
    "websearch": "ns2int",
    "datamining": "ns2int",
    "websearch_hpcc": "linear",
    "fb_hadoop": "linear",
    "google_rpc_hpcc": "linear",
    "alistorage": "linear",
    "homa_w1_fb_memcached": "step",
    "homa_w2_google_search_rpc": "step",
    "homa_w3_google_all_rpc": "step",
    "homa_w4_fb_hadoop": "step",
    "homa_w5_websearch": "step",
    "fb_cache_follower": "step",
    "fb_web_server": "step",
}

_RULE_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("ns2int", r"ns-?2|interpolation_\s*=\s*2|\bns2int\b"),
    ("linear", r"\blinear\b"),
    ("step", r"\bstep\b"),
)


def _rule_from_text(text: str) -> str | None:
    """The sampling rule whose keyword appears first in ``text`` (None if none does)."""
    best: tuple[int, str] | None = None
    for rule, pattern in _RULE_KEYWORDS:
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), rule)
    return None if best is None else best[1]


def _native_from_header(header_lines: Sequence[str]) -> str | None:
    """Parse the native rule from the header.

    First the "verified stats, native sampling (<rule>)" line, then the
    "how the source simulator samples it:" line (the rule whose keyword
    comes first: "ns-2 ... interpolation_=2" -> ns2int, "linear" -> linear,
    "step" -> step).
    """
    for line in header_lines:
        m = re.search(r"native sampling\s*\((ns2int|linear|step)\)", line, flags=re.IGNORECASE)
        if m:
            return m.group(1).lower()
    for line in header_lines:
        if "how the source simulator samples it" in line.lower():
            return _rule_from_text(line.split(":", 1)[1] if ":" in line else line)
    return None


@dataclass(frozen=True)
class _Pieces:
    """A distribution on sizes as atoms + uniform pieces + uniform integer ranges.

    atoms: value_bytes, prob
    cont: uniform on (a_bytes, b_bytes) with total prob p
    ranges: integers k in [k_lo, k_hi], each with prob q, value k * unit_bytes
    """

    atom_v: np.ndarray
    atom_p: np.ndarray
    cont_a: np.ndarray
    cont_b: np.ndarray
    cont_p: np.ndarray
    rng_lo: np.ndarray  # int64
    rng_hi: np.ndarray  # int64
    rng_q: np.ndarray
    unit: float

    def moment(self, k: int) -> float:
        total = float(np.sum(self.atom_p * self.atom_v**k))
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if k == 1:
            total += float(np.sum(p * (a + b) / 2.0))
        else:
            total += float(np.sum(p * (a * a + a * b + b * b) / 3.0))
        for lo, hi, q in zip(self.rng_lo.tolist(), self.rng_hi.tolist(), self.rng_q.tolist(), strict=True):
            total += q * self.unit**k * _power_sum(lo, hi, k)
        return total

    def prob_below(self, t: float, inclusive: bool) -> float:
        """P(S < t), or P(S <= t) when ``inclusive``."""
        below = self.atom_v <= t if inclusive else self.atom_v < t
        total = float(self.atom_p[below].sum())
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if a.size:
            total += float(np.sum(p * np.clip((t - a) / (b - a), 0.0, 1.0)))
        if self.rng_lo.size:
            r = t / self.unit
            kmax = math.floor(r) if inclusive else math.ceil(r) - 1
            cnt = np.clip(np.minimum(self.rng_hi, kmax) - self.rng_lo + 1, 0, None)
            total += float(np.sum(cnt * self.rng_q))
        return min(total, 1.0)

    def mean_above(self, t: float) -> float:
        """E[S 1{S > t}]."""
        total = float(np.sum((self.atom_p * self.atom_v)[self.atom_v > t]))
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if a.size:
            lo = np.clip(t, a, b)
            total += float(np.sum(p / (b - a) * (b * b - lo * lo) / 2.0))
        if self.rng_lo.size:
            kmin = math.floor(t / self.unit) + 1
            for lo_k, hi_k, q in zip(self.rng_lo.tolist(), self.rng_hi.tolist(), self.rng_q.tolist(), strict=True):
                lo2 = max(lo_k, kmin)
                if lo2 <= hi_k:
                    total += q * self.unit * _power_sum(lo2, hi_k, 1)
        return total


def _power_sum(lo: int, hi: int, k: int) -> float:
    """sum_{i=lo}^{hi} i^k for k in {1, 2}, exactly (Python ints)."""
    if hi < lo:
        return 0.0

    def s(m: int) -> int:
        return m * (m + 1) // 2 if k == 1 else m * (m + 1) * (2 * m + 1) // 6

    return float(s(hi) - s(lo - 1))


def _resolve_cdf(name_or_path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """Return (name, source label, text) for a shipped short name or a path."""
    shipped = shipped_cdf_names()
    if isinstance(name_or_path, str):
        short = name_or_path[:-4] if name_or_path.endswith(".cdf") else name_or_path
        if short in shipped and "/" not in name_or_path and os.sep not in name_or_path:
            res = resources.files("flowsched.data").joinpath(f"{short}.cdf")
            return short, f"flowsched/data/{short}.cdf", res.read_text(encoding="utf-8")
    p = Path(name_or_path)
    if not p.is_file():
        raise FileNotFoundError(
            f"no CDF file {str(name_or_path)!r}: not a shipped name ({', '.join(shipped)}) and not an existing path"
        )
    return p.stem, str(p), p.read_text(encoding="utf-8")


def _parse_cdf_text(text: str, source: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Parse ``# header`` lines and ``size_bytes cdf`` lines; returns (header, x, c, line numbers)."""
    header: list[str] = []
    xs: list[float] = []
    cs: list[float] = []
    lines: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            header.append(raw)
            continue
        fields = line.split()
        if len(fields) != 2:
            raise CDFFormatError(
                f"{source}: line {lineno}: expected 2 fields 'size_bytes cdf', got {len(fields)}: {raw!r}"
            )
        try:
            x, c = float(fields[0]), float(fields[1])
        except ValueError:
            raise CDFFormatError(f"{source}: line {lineno}: not a number: {raw!r}") from None
        xs.append(x)
        cs.append(c)
        lines.append(lineno)
    return header, np.asarray(xs, dtype=np.float64), np.asarray(cs, dtype=np.float64), np.asarray(lines, dtype=np.int64)


def _check_points(x: np.ndarray, c: np.ndarray, lines: np.ndarray | None, source: str) -> np.ndarray:
    """Validate CDF points; returns ``c`` with a last value within 1e-9 of 1 set to exactly 1."""

    def where(i: int) -> str:
        return f"line {int(lines[i])}" if lines is not None else f"point {i}"

    if x.ndim != 1 or x.shape != c.shape:
        raise CDFFormatError(f"{source}: sizes and cdf values must be 1-D arrays of the same length")
    if x.size == 0:
        raise CDFFormatError(f"{source}: no data points")
    for i in range(x.size):
        if not math.isfinite(x[i]) or x[i] < 0:
            raise CDFFormatError(f"{source}: {where(i)}: size must be finite and >= 0, got {x[i]!r}")
        if not (math.isfinite(c[i]) and 0.0 <= c[i] <= 1.0):
            raise CDFFormatError(f"{source}: {where(i)}: cdf must be in [0, 1], got {c[i]!r}")
        if i > 0 and x[i] < x[i - 1]:
            raise CDFFormatError(
                f"{source}: {where(i)}: sizes must be non-decreasing, got {x[i]!r} after {x[i - 1]!r}"
            )
        if i > 0 and c[i] < c[i - 1]:
            raise CDFFormatError(
                f"{source}: {where(i)}: cdf must be non-decreasing, got {c[i]!r} after {c[i - 1]!r}"
            )
    if abs(c[-1] - 1.0) > 1e-9:
        raise CDFFormatError(f"{source}: {where(x.size - 1)}: the last cdf value must be 1, got {c[-1]!r}")
    c = c.copy()
    c[-1] = 1.0
    return c


class EmpiricalCDF(SizeDistribution):
    """A flow-size distribution given by CDF points and a sampling rule.

    The points ``(size_bytes[i], cdf[i])`` are non-decreasing in both
    coordinates and end at cdf = 1. A draw takes u ~ U(0, 1] and maps it to a
    size by one of the three rules of ``flowsched/data/README.md``:

    ``"ns2int"``
        ns-2 ``RandomVariable/Empirical`` with ``interpolation_ 2`` (PIAS,
        pFabric, aSCC): if u <= cdf[0] the size is size[0]; otherwise, with
        i the first point with cdf[i] >= u, interpolate linearly on the
        PACKET count v = size/packet_bytes between points i-1 and i, take
        the ceiling and multiply by packet_bytes. A segment v1 < v2 (whole
        packets) therefore gives the integers v1+1..v2 with equal
        probability; a flat segment v1 == v2 is a point mass.
    ``"linear"``
        Piecewise linear in bytes between points (HPCC
        ``traffic_gen/custom_rand.py``); u <= cdf[0] gives size[0].
    ``"step"``
        The first point with cdf >= u (Homa ``MsgSizeDistributions``,
        YAPS ``CDFRandomVariable``, NetSys ideal-simulator).

    ``mean_bytes``, ``second_moment_bytes2``, :meth:`cdf`,
    :meth:`prob_less_than` and :meth:`bytes_share_above` are exact for the
    chosen rule (closed forms over the segments).

    Parameters
    ----------
    size_bytes, cdf : array_like
        The points.
    sampling : {"ns2int", "linear", "step"}
        The rule.
    name : str
        Label for the repr.
    header : str
        Free text (the file's ``#`` lines).
    packet_bytes : float
        Packet payload for ``ns2int`` (1460, the ns-2 MSS of the shipped files).
    native_sampling : str or None
        The rule the source simulator uses, if known.
    source : str or None
        File the points came from, for messages.
    """

    def __init__(
        self,
        size_bytes: Sequence[float] | np.ndarray,
        cdf: Sequence[float] | np.ndarray,
        sampling: str,
        *,
        name: str = "custom",
        header: str = "",
        packet_bytes: float = PACKET_PAYLOAD_BYTES,
        native_sampling: str | None = None,
        source: str | None = None,
        _lines: np.ndarray | None = None,
    ) -> None:
        if sampling not in SAMPLING_RULES:
            raise ValueError(f"EmpiricalCDF: sampling must be one of {list(SAMPLING_RULES)}, got {sampling!r}")
        if native_sampling is not None and native_sampling not in SAMPLING_RULES:
            raise ValueError(f"EmpiricalCDF: native_sampling must be one of {list(SAMPLING_RULES)} or None")
        _positive("EmpiricalCDF", packet_bytes=packet_bytes)
        src = source or name
        x = np.asarray(size_bytes, dtype=np.float64)
        c = _check_points(x, np.asarray(cdf, dtype=np.float64), _lines, src)
        self._x = x
        self._c = c
        self._sampling = sampling
        self._name = name
        self._header = header
        self._packet = float(packet_bytes)
        self._native = native_sampling
        self._source = src
        self._lines = _lines
        self._pieces = self._build_pieces()
        zero = (self._pieces.atom_v <= 0) & (self._pieces.atom_p > 0)
        if zero.any():
            raise CDFFormatError(
                f"{src}: under sampling {sampling!r} the size 0 has probability "
                f"{float(self._pieces.atom_p[zero].sum())!r}; flow sizes must be > 0"
            )

    # -- construction -------------------------------------------------------

    @classmethod
    def from_file(
        cls,
        name_or_path: str | os.PathLike[str],
        sampling: str | None = None,
        *,
        packet_bytes: float = PACKET_PAYLOAD_BYTES,
    ) -> EmpiricalCDF:
        """Load a ``.cdf`` file: a shipped short name (``"websearch"``) or a path.

        Parameters
        ----------
        name_or_path : str or os.PathLike
            One of :func:`shipped_cdf_names` (with or without ``.cdf``) or a
            file with ``#`` header lines and ``size_bytes cdf`` data lines.
        sampling : {"ns2int", "linear", "step"} or None
            Sampling rule; default the file's native rule (parsed from the
            header line "verified stats, native sampling (...)" or "how the
            source simulator samples it: ...", else the README table for the
            shipped names). A file without a parseable native rule needs an
            explicit ``sampling``.
        packet_bytes : float
            Payload bytes per packet for ``ns2int`` (default 1460).

        Raises
        ------
        CDFFormatError
            Malformed file (non-monotone sizes or cdf, cdf outside [0, 1],
            last cdf != 1, bad line), with the file and line number.
        FileNotFoundError
            Unknown name / missing file (the message lists the shipped names).
        """
        name, source, text = _resolve_cdf(name_or_path)
        header, x, c, lines = _parse_cdf_text(text, source)
        native = _native_from_header(header) or _NATIVE_SAMPLING_TABLE.get(name)
        if sampling is None:
            if native is None:
                raise ValueError(
                    f"{source}: the header does not say how to sample the points; pass sampling= one of {list(SAMPLING_RULES)}"
                )
            sampling = native
        return cls(
            x,
            c,
            sampling,
            name=name,
            header="\n".join(header),
            packet_bytes=packet_bytes,
            native_sampling=native,
            source=source,
            _lines=lines,
        )

    def with_sampling(self, sampling: str) -> EmpiricalCDF:
        """The same points read with another rule."""
        return EmpiricalCDF(
            self._x,
            self._c,
            sampling,
            name=self._name,
            header=self._header,
            packet_bytes=self._packet,
            native_sampling=self._native,
            source=self._source,
            _lines=self._lines,
        )

    def _build_pieces(self) -> _Pieces:
        x, c, rule = self._x, self._c, self._sampling
        dc = np.diff(c)
        atom_v: list[np.ndarray] = []
        atom_p: list[np.ndarray] = []
        empty = np.zeros(0)
        cont_a, cont_b, cont_p = empty, empty, empty
        r_lo: list[int] = []
        r_hi: list[int] = []
        r_q: list[float] = []
        if rule == "step":
            atom_v.append(x)
            atom_p.append(np.concatenate([[c[0]], dc]))
        elif rule == "linear":
            atom_v.append(x[:1])
            atom_p.append(c[:1])
            pos = dc > 0
            a, b, p = x[:-1][pos], x[1:][pos], dc[pos]
            flat = a == b
            atom_v.append(a[flat])
            atom_p.append(p[flat])
            cont_a, cont_b, cont_p = a[~flat], b[~flat], p[~flat]
        else:  # ns2int
            u = self._packet
            atom_v.append(x[:1])
            atom_p.append(c[:1])
            v = x / u
            for i in np.flatnonzero(dc > 0).tolist():
                v1, v2, mass = float(v[i]), float(v[i + 1]), float(dc[i])
                if v1 == v2:
                    atom_v.append(np.array([math.ceil(v1) * u]))
                    atom_p.append(np.array([mass]))
                    continue
                q = mass / (v2 - v1)  # probability per unit of packet count
                k_lo, k_hi = math.floor(v1) + 1, math.ceil(v2)
                if k_lo == k_hi:
                    atom_v.append(np.array([k_lo * u]))
                    atom_p.append(np.array([mass]))
                    continue
                # partial first and last buckets (length 1 when v1, v2 are whole packets)
                atom_v.append(np.array([k_lo * u, k_hi * u]))
                atom_p.append(np.array([q * (k_lo - v1), q * (v2 - (k_hi - 1))]))
                if k_hi - 1 >= k_lo + 1:
                    r_lo.append(k_lo + 1)
                    r_hi.append(k_hi - 1)
                    r_q.append(q)
        av = np.concatenate(atom_v) if atom_v else empty
        ap = np.concatenate(atom_p) if atom_p else empty
        keep = ap > 0
        return _Pieces(
            atom_v=av[keep],
            atom_p=ap[keep],
            cont_a=cont_a,
            cont_b=cont_b,
            cont_p=cont_p,
            rng_lo=np.asarray(r_lo, dtype=np.int64),
            rng_hi=np.asarray(r_hi, dtype=np.int64),
            rng_q=np.asarray(r_q, dtype=np.float64),
            unit=self._packet,
        )

    # -- properties ----------------------------------------------------------

    @property
    def name(self) -> str:
        """Short name (file stem)."""
        return self._name

    @property
    def source(self) -> str:
        """Where the points came from."""
        return self._source

    @property
    def sampling(self) -> str:
        """The sampling rule in use."""
        return self._sampling

    @property
    def native_sampling(self) -> str | None:
        """The rule the source simulator uses (from the header or the README table)."""
        return self._native

    @property
    def header(self) -> str:
        """The file's ``#`` header lines, verbatim."""
        return self._header

    @property
    def packet_bytes(self) -> float:
        """Payload bytes per packet for ``ns2int``."""
        return self._packet

    @property
    def size_points_bytes(self) -> np.ndarray:
        """The sizes of the points (a copy)."""
        return self._x.copy()

    @property
    def cdf_points(self) -> np.ndarray:
        """The cdf values of the points (a copy)."""
        return self._c.copy()

    @property
    def mean_bytes(self) -> float:
        return self._pieces.moment(1)

    @property
    def second_moment_bytes2(self) -> float:
        return self._pieces.moment(2)

    def cdf(self, x_bytes: float) -> float:
        """P(S <= x_bytes) under the sampling rule."""
        return self._pieces.prob_below(float(x_bytes), inclusive=True)

    def prob_less_than(self, x_bytes: float) -> float:
        """P(S < x_bytes) under the sampling rule (README's "P(flow < 100 KB)")."""
        return self._pieces.prob_below(float(x_bytes), inclusive=False)

    def bytes_share_above(self, x_bytes: float) -> float:
        """E[S; S > x] / E[S]: the share of bytes in flows larger than ``x_bytes``."""
        return self._pieces.mean_above(float(x_bytes)) / self.mean_bytes

    def declared_stats(self) -> dict[str, float]:
        """Statistics written in the file's header (for cross-checks).

        Returns
        -------
        dict
            Keys ``"mean_<rule>"`` for every rule the header gives a mean
            for, and, for the native rule, ``"p_below_1e5"`` and
            ``"share_above_1e7"`` when present.
        """
        out: dict[str, float] = {}
        for line in self._header.splitlines():
            m = re.search(r"native sampling\s*\((\w+)\):\s*mean\s*=\s*([\d.]+)\s*B", line)
            if m:
                out[f"mean_{m.group(1)}"] = float(m.group(2))
                m2 = re.search(r"P\(size < 100 KB = 1e5 B\)\s*=\s*([\d.]+)", line)
                if m2:
                    out["p_below_1e5"] = float(m2.group(1))
                m3 = re.search(r"flows > 10 MB \(1e7 B\)\s*=\s*([\d.]+)", line)
                if m3:
                    out["share_above_1e7"] = float(m3.group(1))
            if "mean under other readings" in line:
                for rule, val in re.findall(r"\b(ns2int|linear|step)\s+([\d.]+)\s*B", line):
                    out[f"mean_{rule}"] = float(val)
        return out

    # -- sampling ------------------------------------------------------------

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_n(n)
        return self.size_at(1.0 - rng.random(n))  # u in (0, 1]

    def size_at(self, u: np.ndarray | float) -> np.ndarray:
        """The size the sampling rule maps a uniform draw ``u`` in (0, 1] to (the quantile map).

        Parameters
        ----------
        u : array_like
            Values in (0, 1].

        Returns
        -------
        numpy.ndarray
            float64 sizes in bytes, same shape as ``u``.
        """
        u = np.asarray(u, dtype=np.float64)
        shape = u.shape
        u = u.reshape(-1)
        if u.size and not (np.all(u > 0) and np.all(u <= 1)):
            raise ValueError("size_at: u must be in (0, 1]")
        n = u.size
        x, c = self._x, self._c
        idx = np.searchsorted(c, u, side="left")  # first point with cdf >= u
        if self._sampling == "step":
            return x[idx].reshape(shape)
        out = np.empty(n, dtype=np.float64)
        first = idx == 0
        out[first] = x[0]
        rest = ~first
        j = idx[rest]
        uu = u[rest]
        c1, c2 = c[j - 1], c[j]  # c1 < u <= c2, so c2 > c1
        frac = (uu - c1) / (c2 - c1)
        if self._sampling == "linear":
            out[rest] = x[j - 1] + frac * (x[j] - x[j - 1])
            return out.reshape(shape)
        # ns2int
        unit = self._packet
        v1, v2 = x[j - 1] / unit, x[j] / unit
        val = np.ceil(v1 + frac * (v2 - v1)) * unit
        exact = uu >= c2  # ns-2 returns the table value itself when u hits a point
        val[exact] = x[j][exact]
        out[rest] = val
        return out.reshape(shape)

    def __repr__(self) -> str:
        return (
            f"EmpiricalCDF({self._name!r}, sampling={self._sampling!r}, native={self._native!r}, "
            f"points={self._x.size}, mean_bytes={self.mean_bytes:.1f})"
        )


# ============================================================================
# names -> distributions
# ============================================================================


def shipped_cdf_names() -> tuple[str, ...]:
    """Short names of the ``.cdf`` files shipped in ``flowsched.data`` (sorted)."""
    names = [
        p.name[:-4]
        for p in resources.files("flowsched.data").iterdir()
        if p.name.endswith(".cdf") and p.is_file()
    ]
    return tuple(sorted(names))


def _f(s: str) -> float:
    return float(s)


# spec prefix -> (builder taking the ':'-separated numbers, usage)
_SPEC_BUILDERS: dict[str, tuple[Callable[..., SizeDistribution], str]] = {
    "exp": (lambda mean: Exponential(_f(mean)), "exp:<mean_bytes>"),
    "pareto": (
        lambda alpha, mean: Pareto.from_mean(_f(alpha), _f(mean)),
        "pareto:<alpha>:<mean_bytes>  (Lomax, P(S>x) = (1+x/scale)^-alpha)",
    ),
    "lomax": (
        lambda alpha, scale: Pareto(_f(alpha), _f(scale)),
        "lomax:<alpha>:<scale_bytes>",
    ),
    "classic_pareto": (
        lambda alpha, mean: ClassicPareto.from_mean(_f(alpha), _f(mean)),
        "classic_pareto:<alpha>:<mean_bytes>  (P(S>x) = (min/x)^alpha)",
    ),
    "bpareto": (
        lambda alpha, lo, hi: BoundedPareto(_f(alpha), _f(lo), _f(hi)),
        "bpareto:<alpha>:<low_bytes>:<high_bytes>",
    ),
    "lognormal": (lambda mean, sigma: Lognormal(_f(mean), _f(sigma)), "lognormal:<mean_bytes>:<sigma>"),
    "fixed": (lambda size: Fixed(_f(size)), "fixed:<size_bytes>"),
    "uniform": (lambda lo, hi: Uniform(_f(lo), _f(hi)), "uniform:<low_bytes>:<high_bytes>"),
}

# fixed names -> factory
_NAMED_BUILDERS: dict[str, tuple[Callable[[], SizeDistribution], str]] = {
    "artemis_a1": (lambda: artemis_workload_a(1), "Artemis workload A variant 1 (50% 350KB/40ms, 50% 250KB/50ms)"),
    "artemis_a2": (lambda: artemis_workload_a(2), "Artemis workload A variant 2 (60% 350KB/40ms, 40% 250KB/50ms)"),
    "sdc_pareto": (
        lambda: ClassicPareto.from_mean(1.2, 25_000.0),
        "SDC/RACS benchmark: classic Pareto, shape 1.2, mean 25 KB (Munir, 3.5.3)",
    ),
    "sdc_uniform": (
        lambda: Uniform(2_000.0, 50_000.0),
        "SDC/RACS short/long mix: responses uniform on [2 KB, 50 KB] (Munir, 3.5.2)",
    ),
}


def distribution_names() -> list[str]:
    """Every accepted name and spec form of :func:`get_distribution`."""
    out = list(shipped_cdf_names())
    out += [f"{n}:<ns2int|linear|step>" for n in ("<cdf name>",)]
    out += list(_NAMED_BUILDERS)
    out += [usage for _, usage in _SPEC_BUILDERS.values()]
    return out


def get_distribution(name_or_spec: str | SizeDistribution) -> SizeDistribution:
    """Build a size distribution from a name or a short spec string.

    Parameters
    ----------
    name_or_spec : str or SizeDistribution
        * a shipped CDF name (``"websearch"``, ``"datamining"``, ... see
          :func:`shipped_cdf_names`), optionally with a sampling rule:
          ``"websearch:step"``; or a path to a ``.cdf`` file;
        * ``"artemis_a1"``, ``"artemis_a2"``, ``"sdc_pareto"``, ``"sdc_uniform"``;
        * ``"exp:<mean>"``, ``"pareto:<alpha>:<mean>"`` (Lomax),
          ``"lomax:<alpha>:<scale>"``, ``"classic_pareto:<alpha>:<mean>"``,
          ``"bpareto:<alpha>:<low>:<high>"``, ``"lognormal:<mean>:<sigma>"``,
          ``"fixed:<bytes>"``, ``"uniform:<low>:<high>"`` (all sizes in bytes);
        * a :class:`SizeDistribution` (returned as is).

    Returns
    -------
    SizeDistribution

    Raises
    ------
    ValueError
        Unknown name or malformed spec; the message lists the valid forms.
    """
    if isinstance(name_or_spec, SizeDistribution):
        return name_or_spec
    if not isinstance(name_or_spec, str):
        raise TypeError(f"get_distribution: expected a string or a SizeDistribution, got {name_or_spec!r}")
    spec = name_or_spec.strip()
    shipped = shipped_cdf_names()
    head, _, rest = spec.partition(":")
    if head in shipped or head.endswith(".cdf"):
        if rest and rest not in SAMPLING_RULES:
            raise ValueError(
                f"get_distribution({spec!r}): unknown sampling {rest!r}; use one of {list(SAMPLING_RULES)}"
            )
        if head in shipped or Path(head).is_file():
            return EmpiricalCDF.from_file(head, sampling=rest or None)
    if spec in _NAMED_BUILDERS:
        return _NAMED_BUILDERS[spec][0]()
    if head in _SPEC_BUILDERS:
        builder, usage = _SPEC_BUILDERS[head]
        args = rest.split(":") if rest else []
        try:
            return builder(*args)
        except TypeError:
            raise ValueError(f"get_distribution({spec!r}): expected {usage}") from None
        except ValueError as exc:
            raise ValueError(f"get_distribution({spec!r}): {exc} (expected {usage})") from None
    raise ValueError(f"unknown distribution {spec!r}; valid names and forms: {', '.join(distribution_names())}")


# ============================================================================
# arrival processes
# ============================================================================


def _check_hosts(hosts: int, minimum: int = 2) -> int:
    if isinstance(hosts, bool) or not isinstance(hosts, (int, np.integer)) or hosts < minimum:
        raise ValueError(f"hosts must be an integer >= {minimum}, got {hosts!r}")
    return int(hosts)


def _check_pos(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return float(value)


def _draw_sizes(dist: SizeDistribution, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and per-flow deadlines (NaN unless ``dist`` is a Mixture with class deadlines)."""
    if isinstance(dist, Mixture):
        sizes, cls = dist.sample_with_classes(rng, n)
        return sizes, dist.deadlines_s[cls]
    return dist.sample(rng, n), np.full(n, np.nan)


def _make_trace(
    arrival_s: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    size_bytes: np.ndarray,
    deadline_s: np.ndarray | None,
    hosts: int,
    source: str,
) -> pd.DataFrame:
    n = arrival_s.size
    df = pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "arrival_s": arrival_s,
            "src": src.astype(np.int64),
            "dst": dst.astype(np.int64),
            "size_bytes": size_bytes,
            "deadline_s": deadline_s if deadline_s is not None else np.full(n, np.nan),
        }
    )
    return validate_trace(df, hosts, source=source)


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
    seed: int | None = 0,
    header_factor: bool = False,
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
    seed : int or None
        Seed of the generator (``numpy.random.default_rng(seed)``).
    header_factor : bool
        Compute the rate with mean * 1500/1460 (PIAS/aSCC convention): the
        payload load is then load * 1460/1500.

    Returns
    -------
    pandas.DataFrame
        A validated trace sorted by ``arrival_s``, ids 0..n-1 in arrival
        order; ``attrs["rate_per_host_hz"]`` holds lambda.
    """
    d = _as_distribution(dist)
    hosts = _check_hosts(hosts)
    n = _check_n(n_flows, "n_flows")
    if n == 0:
        raise ValueError("poisson_all_to_all: n_flows must be >= 1")
    if n > MAX_FLOWS:
        raise ValueError(f"poisson_all_to_all: n_flows must be at most MAX_FLOWS = {MAX_FLOWS} (the trace contract), got {n}")
    mean = d.mean_bytes
    if not math.isfinite(mean):
        raise ValueError(f"poisson_all_to_all: {d!r} has an infinite mean; no load can be set")
    lam = arrival_rate_per_host_hz(mean, load, link_gbps, header_factor=header_factor)
    rng = _rng(seed)
    gaps = rng.exponential(1.0 / (hosts * lam), n)
    arrival = np.cumsum(gaps)
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    sizes, deadlines = _draw_sizes(d, rng, n)
    df = _make_trace(arrival, src, dst, sizes, deadlines, hosts, "poisson_all_to_all")
    df.attrs["rate_per_host_hz"] = lam
    return df


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
    """Gather (many-to-one) bursts, Artemis workload A.

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
    seed : int or None
        Seed of the generator.
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
    rng = _rng(seed)
    t_burst = np.cumsum(rng.exponential(1.0 / rate, nb))
    senders = _distinct_senders(rng, nb, burst_size, hosts, dst)
    n = nb * burst_size
    arrival = np.repeat(t_burst, burst_size)
    if isinstance(d, Mixture) and composition == "exact":
        counts_f = d.weights * burst_size
        counts = np.rint(counts_f).astype(np.int64)
        if np.any(np.abs(counts_f - counts) > 1e-9) or counts.sum() != burst_size:
            raise ValueError(
                f"composition='exact' needs burst_size * weight to be whole numbers, got {counts_f.tolist()}; "
                "use composition='random'"
            )
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
        raise ValueError(f"hosts={hosts} is too few for a receiver, {n_background} background senders and a query sender")
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


# ============================================================================
# trace modifiers
# ============================================================================


def add_deadlines(
    trace: pd.DataFrame,
    *,
    fixed_s: float | None = None,
    slack: tuple[float, float] | None = None,
    link_gbps: float | None = None,
    base_rtt_s: float = 0.0,
    seed: int | None = 0,
    only_missing: bool = False,
) -> pd.DataFrame:
    """Give flows deadlines (relative to arrival).

    Exactly one of:

    * ``fixed_s``: every flow gets this deadline;
    * ``slack=(lo, hi)``: deadline = U(lo, hi) * ideal FCT, with ideal FCT
      = size_bytes * 8 / (link_gbps * 1e9) + base_rtt_s (the flow alone on
      an idle path). ``lo >= 1`` makes every deadline feasible in
      isolation; D3/D2TCP-style experiments draw slack in about [1, 4].

    Parameters
    ----------
    trace : DataFrame
        A trace (validated).
    fixed_s : float, optional
        Deadline in seconds (> 0).
    slack : (float, float), optional
        0 < lo <= hi.
    link_gbps : float, optional
        Needed with ``slack``.
    base_rtt_s : float
        Added to the ideal FCT (>= 0).
    seed : int or None
        Seed of the U(lo, hi) draws.
    only_missing : bool
        Keep the flows' existing deadlines and fill only the NaN ones.

    Returns
    -------
    pandas.DataFrame
        A validated copy.
    """
    df = validate_trace(trace, source="add_deadlines")
    if (fixed_s is None) == (slack is None):
        raise ValueError("add_deadlines: give exactly one of fixed_s and slack")
    n = len(df)
    if fixed_s is not None:
        new = np.full(n, _check_pos("fixed_s", fixed_s))
    else:
        lo, hi = (float(v) for v in slack)  # type: ignore[union-attr]
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ValueError(f"add_deadlines: slack must satisfy 0 < lo <= hi, got {slack!r}")
        if link_gbps is None:
            raise ValueError("add_deadlines: slack needs link_gbps")
        rate_bps = _check_pos("link_gbps", link_gbps) * 1e9
        if not (math.isfinite(base_rtt_s) and base_rtt_s >= 0):
            raise ValueError(f"base_rtt_s must be >= 0, got {base_rtt_s!r}")
        ideal = df["size_bytes"].to_numpy() * 8.0 / rate_bps + base_rtt_s
        factor = lo + (hi - lo) * _rng(seed).random(n)
        new = factor * ideal
    old = df["deadline_s"].to_numpy()
    df["deadline_s"] = np.where(np.isnan(old), new, old) if only_missing else new
    return validate_trace(df, source="add_deadlines")


def add_weights(
    trace: pd.DataFrame,
    weights: float | Sequence[float] | np.ndarray | None = None,
    *,
    uniform: tuple[float, float] | None = None,
    choices: Sequence[tuple[float, float]] | None = None,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Set flow weights (for weighted FCT, aSCC's WFPT, weighted sharing).

    Exactly one of:

    * ``weights``: a scalar or one value per flow (> 0);
    * ``uniform=(lo, hi)``: i.i.d. U(lo, hi), 0 < lo <= hi;
    * ``choices=[(prob, weight), ...]``: i.i.d. discrete weights (e.g. QoS
      classes); probabilities are normalized.

    Parameters
    ----------
    trace : DataFrame
        A trace.
    weights : float or array_like, optional
        The weights.
    uniform : (float, float), optional
        Bounds of i.i.d. uniform weights.
    choices : sequence of (float, float), optional
        (probability, weight) pairs.
    seed : int or None
        Seed of the random draws.

    Returns
    -------
    pandas.DataFrame
        A validated copy.
    """
    df = validate_trace(trace, source="add_weights")
    given = sum(x is not None for x in (weights, uniform, choices))
    if given != 1:
        raise ValueError("add_weights: give exactly one of weights, uniform and choices")
    n = len(df)
    if weights is not None:
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64), (n,)).copy()
    elif uniform is not None:
        lo, hi = (float(v) for v in uniform)
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ValueError(f"add_weights: uniform must satisfy 0 < lo <= hi, got {uniform!r}")
        w = lo + (hi - lo) * _rng(seed).random(n)
    else:
        probs = np.asarray([float(p) for p, _ in choices], dtype=np.float64)  # type: ignore[union-attr]
        vals = np.asarray([float(v) for _, v in choices], dtype=np.float64)  # type: ignore[union-attr]
        if probs.size == 0 or np.any(probs <= 0) or not np.all(np.isfinite(probs)):
            raise ValueError(f"add_weights: choices need probabilities > 0, got {choices!r}")
        cum = np.cumsum(probs / probs.sum())
        idx = np.minimum(np.searchsorted(cum, _rng(seed).random(n), side="right"), vals.size - 1)
        w = vals[idx]
    df["weight"] = w
    return validate_trace(df, source="add_weights")


def add_data_span(
    trace: pd.DataFrame, alpha: float, link_gbps: float, *, header_factor: bool = False
) -> pd.DataFrame:
    """Spread each flow's data over time, aSCC's alpha model.

    aSCC (Davydow et al.), section VIII "Workloads": "Let Delta t_i be the
    minimum possible time that it takes to send all packets of a flow f_i
    out of the sender's host interface. We distribute arrival times of
    f_i's packets uniformly in [a_i, a_i + alpha Delta t_i], where alpha >= 0
    is a parameter reflecting the spacing between arrival times of f_i's
    packets." The evaluation varies alpha from 0 to 2. Here

        data_span_s = alpha * size_bytes * 8 / (link_gbps * 1e9)

    and the simulator makes the flow's bytes available uniformly over
    ``[arrival_s, arrival_s + data_span_s]`` (for alpha <= 1 data arrives
    at least as fast as the link can send it). With ``header_factor`` the
    wire time of whole packets is used: ceil(size/1460) * 1500 * 8 / C.

    Parameters
    ----------
    trace : DataFrame
        A trace.
    alpha : float
        >= 0.
    link_gbps : float
        Sender's host link rate.
    header_factor : bool
        Use whole 1500-byte packets for Delta t.

    Returns
    -------
    pandas.DataFrame
        A validated copy with ``data_span_s`` set.
    """
    df = validate_trace(trace, source="add_data_span")
    if not (isinstance(alpha, (int, float, np.integer, np.floating)) and math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"add_data_span: alpha must be finite and >= 0, got {alpha!r}")
    rate_bps = _check_pos("link_gbps", link_gbps) * 1e9
    size = df["size_bytes"].to_numpy()
    wire = np.ceil(size / PACKET_PAYLOAD_BYTES) * PACKET_WIRE_BYTES if header_factor else size
    df["data_span_s"] = float(alpha) * wire * 8.0 / rate_bps
    return validate_trace(df, source="add_data_span")


# ============================================================================
# adversarial instances (aSCC theorems)
# ============================================================================


def _slot_s(packet_bytes: float, link_gbps: float) -> float:
    return packet_bytes * 8.0 / (link_gbps * 1e9)


def _expected(
    arrival_s: np.ndarray, completion_s: dict[str, np.ndarray]
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, float]]:
    comp = {k: [float(x) for x in v] for k, v in completion_s.items()}
    fct = {k: float(np.sum(v - arrival_s)) for k, v in completion_s.items()}
    fpt = {k: float(np.sum(v)) for k, v in completion_s.items()}
    return comp, fct, fpt


def _instance(
    arrival: np.ndarray, size: np.ndarray, source: str, attrs: dict[str, Any]
) -> pd.DataFrame:
    n = arrival.size
    df = _make_trace(arrival, np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), size, None, 2, source)
    df.attrs.update(attrs)
    return df


def fifo_adversarial_instance(
    n: int = 10,
    l_packets: int | None = None,
    *,
    link_gbps: float = 10.0,
    packet_bytes: float = PACKET_PAYLOAD_BYTES,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """aSCC Theorem 3: FIFO's competitive ratio w.r.t. FPT is unbounded.

    Theorem 3 (aSCC, section IV): "For any n > 0, there exists a set of
    flows F such that FPT(FIFO, F) >= n/2 * FPT(OPT, F)." Instance from the
    proof: "f_1 consists of l >> n^2 packets arriving to S_1 in the first
    time slot; the other (n-1) flows in F have one packet each and arrive to
    S_1 in the second time slot. FIFO transmits all packets in f_1 before
    the transmission of a packet in any other flow."

    Fluid version on one link (all flows host 0 -> host 1, a single
    bottleneck = the paper's single-ingress switch S_1), with slot
    T = packet_bytes * 8 / C: flow 0 has l packets and arrives at 0; flows
    1..n-1 have one packet each and arrive at T (flow k at
    T + (k-1) * stagger_s: a tiny stagger that fixes the order of ties so
    that FIFO and SRPT do not depend on tie-breaking).

    Expected completion times (``attrs["expected_completion_s"]``):

    * FIFO: flow 0 at l T, flow k at (l + k) T;
    * SRPT (= OPT: SRPT is optimal for gapless flows on S_1): flow k at
      (1 + k) T, flow 0 at (l + n - 1) T.

    So sum FCT(FIFO) ~ n l T and sum FCT(OPT) ~ (l + n^2/2) T: the ratio
    tends to n for l >> n^2 (``attrs["ratio_fct"]``; the paper's bound
    n/2 is on FPT, the sum of end times, ``attrs["ratio_fpt"]``).

    Parameters
    ----------
    n : int
        Number of flows (>= 2).
    l_packets : int or None
        Size of the elephant in packets (default 10 n^2, at least 3).
    link_gbps : float
        Link rate.
    packet_bytes : float
        Bytes per packet (one time slot).
    stagger_s : float or None
        Gap between consecutive small-flow arrivals (default T/(100 n);
        0 for the paper's simultaneous arrivals).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs``: ``theorem``, ``slot_s``,
        ``expected_completion_s`` / ``expected_fct_sum_s`` /
        ``expected_fpt_s`` per policy (``"fifo"``, ``"srpt"``),
        ``ratio_fct``, ``ratio_fpt`` (FIFO over SRPT).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    n = int(n)
    ell = 10 * n * n if l_packets is None else int(l_packets)
    if ell < 3:
        raise ValueError(f"l_packets must be >= 3, got {l_packets!r}")
    T = _slot_s(_check_pos("packet_bytes", packet_bytes), _check_pos("link_gbps", link_gbps))
    eps = T / (100.0 * n) if stagger_s is None else float(stagger_s)
    if not (0 <= eps and (n - 2) * eps < T):
        raise ValueError("stagger_s must be >= 0 and keep all small arrivals within one slot")
    k = np.arange(1, n, dtype=np.float64)
    arrival = np.concatenate([[0.0], T + (k - 1) * eps])
    size = np.concatenate([[ell * packet_bytes], np.full(n - 1, float(packet_bytes))])
    fifo = np.concatenate([[ell * T], (ell + k) * T])
    srpt = np.concatenate([[(ell + n - 1) * T], (1 + k) * T])
    comp, fct, fpt = _expected(arrival, {"fifo": fifo, "srpt": srpt})
    return _instance(
        arrival,
        size,
        "fifo_adversarial_instance",
        {
            "theorem": "aSCC Theorem 3: FPT(FIFO) >= n/2 * FPT(OPT) for any n",
            "slot_s": T,
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["fifo"] / fct["srpt"],
            "ratio_fpt": fpt["fifo"] / fpt["srpt"],
        },
    )


def pias_adversarial_instance(
    n: int = 10,
    thresholds_bytes: Sequence[float] | None = None,
    l: int | None = None,
    *,
    link_gbps: float = 10.0,
    packet_bytes: float = PACKET_PAYLOAD_BYTES,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """aSCC Theorem 6: PIAS with any fixed thresholds has an unbounded ratio.

    Theorem 6 (aSCC, section IV): "For any n > 0 and any fixed set of k
    thresholds alpha_1, ..., alpha_k, there exists a set of flows F such
    that FPT(PIAS, F) >= n/2 * FPT(OPT, F)." Proof: "Multiplying the sizes
    of flows in the proof of Theorem 3 by alpha_k ... the relaxed packet
    number equals k for alpha_k(l-1) packets in f_1 and the last packets in
    all other flows." PIAS = strict priority between the queues, FIFO
    inside a queue ("breaking ties by FIFO").

    Fluid version (all flows host 0 -> host 1). With T_k the largest
    threshold (bytes) and the PIAS rule of ``flowsched/data/README.md``
    ("priority i while bytes_sent <= thresh_i"), a flow is in the lowest
    queue once it has sent more than T_k. Let s = T_k + packet_bytes (one
    packet past the last threshold). Flow 0 has L = l * s bytes and arrives
    at 0; flows 1..n-1 have s bytes each and arrive at t0 = s * 8 / C (flow
    k at t0 + (k-1) stagger_s), when flow 0 has just been demoted. PIAS
    serves their first T_k bytes ahead of flow 0, then their last packet
    waits in the lowest queue behind flow 0 (FIFO). With C the link rate:

    * PIAS: flow 0 ends at (L + (n-1) T_k) * 8/C, flow k at
      (L + (n-1) T_k + k * packet_bytes) * 8/C;
    * SRPT (= OPT): flow k ends at t0 + k s * 8/C, flow 0 at
      (L + (n-1) s) * 8/C.

    The FCT ratio tends to n for l >> n^2. These PIAS values hold for any
    discipline inside the higher queues, as long as the lowest queue is
    FIFO by arrival; a simulator that shares the lowest queue fairly will
    not show the bad ratio.

    Parameters
    ----------
    n : int
        Number of flows (>= 2).
    thresholds_bytes : sequence of float or None
        PIAS thresholds (default :func:`pias_thresholds` ``("websearch", 0.8)``);
        only the largest matters.
    l : int or None
        Elephant size in units of s (default 10 n^2).
    link_gbps, packet_bytes, stagger_s
        As in :func:`fifo_adversarial_instance` (default stagger: one
        hundredth of a packet time divided by n).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs`` as in
        :func:`fifo_adversarial_instance`, policies ``"pias"`` and
        ``"srpt"``, plus ``thresholds_bytes``; ratios are PIAS over SRPT.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    n = int(n)
    thr = list(pias_thresholds("websearch", 0.8) if thresholds_bytes is None else thresholds_bytes)
    if len(thr) == 0 or any(not (math.isfinite(t) and t > 0) for t in thr):
        raise ValueError(f"thresholds_bytes must be positive numbers, got {thresholds_bytes!r}")
    Tk = float(max(thr))
    pkt = _check_pos("packet_bytes", packet_bytes)
    rate_Bps = _check_pos("link_gbps", link_gbps) * 1e9 / 8.0
    ell = 10 * n * n if l is None else int(l)
    if ell < 3:
        raise ValueError(f"l must be >= 3, got {l!r}")
    s = Tk + pkt
    L = ell * s
    t0 = s / rate_Bps
    eps = pkt / rate_Bps / (100.0 * n) if stagger_s is None else float(stagger_s)
    if not (0 <= eps and (n - 2) * eps < pkt / rate_Bps):
        raise ValueError("stagger_s must be >= 0 and keep all small arrivals within one packet time")
    k = np.arange(1, n, dtype=np.float64)
    arrival = np.concatenate([[0.0], t0 + (k - 1) * eps])
    size = np.concatenate([[L], np.full(n - 1, s)])
    pias = np.concatenate([[(L + (n - 1) * Tk) / rate_Bps], (L + (n - 1) * Tk + k * pkt) / rate_Bps])
    srpt = np.concatenate([[(L + (n - 1) * s) / rate_Bps], t0 + k * s / rate_Bps])
    comp, fct, fpt = _expected(arrival, {"pias": pias, "srpt": srpt})
    return _instance(
        arrival,
        size,
        "pias_adversarial_instance",
        {
            "theorem": "aSCC Theorem 6: FPT(PIAS) >= n/2 * FPT(OPT) for any n and any fixed thresholds",
            "slot_s": pkt / rate_Bps,
            "thresholds_bytes": [float(t) for t in thr],
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["pias"] / fct["srpt"],
            "ratio_fpt": fpt["pias"] / fpt["srpt"],
        },
    )


def las_starvation_instance(
    m: int = 3,
    size_bytes: float = 5 * PACKET_PAYLOAD_BYTES,
    fraction: float = 0.8,
    *,
    link_gbps: float = 10.0,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """LAS starves elephants of similar size (aSCC Fig. 2 and section I).

    aSCC, section IV (Fig. 2): "fair policies do not schedule elephant flows
    of similar sizes efficiently ... LAS has the largest FPT among all
    policies that transmit a packet on each of the first 20 time slots;
    even FIFO significantly outperforms LAS. Here LAS transmits 4 packets
    from flows f_1, f_2, f_3 during the first 12 time slots ... LAS finishes
    the transmission of the first three flows only after the transmission
    of four packets from f_4." Section I: "consider two elephant flows ...
    the second flow arrives only after the transmission of 99% packets in
    the first flow. In this case, LAS sends 99% packets in the second flow
    before it finishes transmission of the first flow." (LAS is 3-competitive,
    Theorem 5, so the ratio here is bounded: it tends to 2 as m grows.)

    Fluid version (all flows host 0 -> host 1, link rate C, E = size_bytes):
    m flows of E bytes arrive at 0 (flow k at k * stagger_s); flow m (one
    more of E bytes) arrives at t1 = m * fraction * E * 8/C, when LAS has
    given each early flow fraction * E. The defaults m=3, E=5 packets,
    fraction=0.8 are Fig. 2 (t1 = 12 slots); m=1, fraction=0.99 is section
    I's example.

    * LAS (least attained service first, ties shared equally): the late
      flow runs alone until it has fraction * E, then all m+1 share; all
      finish together at (m+1) E * 8/C.
    * FIFO = SRPT (= OPT): flow k (0-based) ends at (k+1) E * 8/C, the late
      flow at (m+1) E * 8/C.

    For Fig. 2 in slots: completions LAS 20,20,20,20 (sum FCT 68, FPT 80),
    FIFO/SRPT 5,10,15,20 (sum FCT 38, FPT 50).

    Parameters
    ----------
    m : int
        Number of early elephants (>= 1).
    size_bytes : float
        Size of every elephant.
    fraction : float
        Share of each early elephant served when the late one arrives, in
        (0, 1).
    link_gbps : float
        Link rate.
    stagger_s : float or None
        Gap between the early arrivals (default 1e-4 * E * 8/C / m; 0 for
        simultaneous arrivals).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs`` as in
        :func:`fifo_adversarial_instance`, policies ``"las"``, ``"fifo"``,
        ``"srpt"``; ratios are LAS over SRPT.
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    m = int(m)
    E = _check_pos("size_bytes", size_bytes)
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    rate_Bps = _check_pos("link_gbps", link_gbps) * 1e9 / 8.0
    tE = E / rate_Bps
    eps = 1e-4 * tE / m if stagger_s is None else float(stagger_s)
    t1 = m * fraction * tE
    if not (0 <= eps and (m - 1) * eps < min(t1, tE) / m):
        raise ValueError("stagger_s is too large for this instance")
    k = np.arange(m, dtype=np.float64)
    arrival = np.concatenate([k * eps, [t1]])
    size = np.full(m + 1, E)
    las = np.full(m + 1, (m + 1) * tE)
    fifo = np.concatenate([(k + 1) * tE, [(m + 1) * tE]])
    comp, fct, fpt = _expected(arrival, {"las": las, "fifo": fifo, "srpt": fifo.copy()})
    return _instance(
        arrival,
        size,
        "las_starvation_instance",
        {
            "theorem": "aSCC Fig. 2 / section I: LAS starves concurrent elephants of similar size",
            "slot_s": PACKET_PAYLOAD_BYTES / rate_Bps,
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["las"] / fct["srpt"],
            "ratio_fpt": fpt["las"] / fpt["srpt"],
        },
    )


# ============================================================================
# PIAS thresholds
# ============================================================================

PIAS_THRESHOLDS_PACKETS: dict[str, dict[float, tuple[int, ...]]] = {
    # HKUST-SING/PIAS-NS2 scripts/run_pias_dctcp.py @5fb5867c (web-search values
    # last changed in d9eecc95); same values in pschuprikov/ascc scripts/config.toml.
    # flowsched/data/README.md, "PIAS demotion thresholds". Units: 1460-byte packets.
    "websearch": {
        0.9: (759, 1132, 1456, 1737, 2010, 2199, 2325),
        0.8: (909, 1329, 1648, 1960, 2143, 2337, 2484),
        0.7: (999, 1305, 1564, 1763, 1956, 2149, 2309),
        0.6: (956, 1381, 1718, 2028, 2297, 2551, 2660),
        0.5: (1059, 1412, 1643, 1869, 2008, 2115, 2184),
    },
    # scripts/run_pias_vl2.py @5fb5867c
    "datamining": {
        0.9: (750, 1083, 1416, 13705, 14952, 21125, 28253),
        0.8: (745, 1083, 1391, 13689, 14936, 21149, 27245),
        0.7: (907, 1301, 1619, 12166, 12915, 21313, 26374),
        0.6: (840, 1232, 1617, 11950, 12238, 21494, 25720),
        0.5: (805, 1106, 1401, 10693, 11970, 21162, 22272),
    },
}
"""PIAS demotion thresholds in packets (8 queues, 7 thresholds) per workload and load."""

_PIAS_ALIASES = {
    "websearch": "websearch",
    "web_search": "websearch",
    "web-search": "websearch",
    "dctcp": "websearch",
    "ws": "websearch",
    "datamining": "datamining",
    "data_mining": "datamining",
    "data-mining": "datamining",
    "vl2": "datamining",
    "dm": "datamining",
}


def pias_thresholds(workload: str, load: float, *, nearest: bool = False) -> list[float]:
    """PIAS demotion thresholds in bytes (packets * 1460) from the PIAS-NS2 scripts.

    A flow gets priority i while bytes_sent <= thresh_i (8 queues, so 7
    thresholds, increasing). Values: ``flowsched/data/README.md``, "PIAS
    demotion thresholds" (HKUST-SING/PIAS-NS2 ``run_pias_dctcp.py`` /
    ``run_pias_vl2.py``; the same in aSCC's ``config.toml``).

    Parameters
    ----------
    workload : str
        ``"websearch"`` or ``"datamining"`` (aliases: ``web_search``,
        ``dctcp``, ``ws``, ``data_mining``, ``vl2``, ``dm``). Other
        workloads have no published thresholds: ValueError.
    load : float
        One of 0.5, 0.6, 0.7, 0.8, 0.9. Any other load is an error unless
        ``nearest=True``.
    nearest : bool
        Use the nearest tabulated load instead (ties go to the higher load);
        loads outside [0.45, 0.95] are still an error.

    Returns
    -------
    list of float
        7 thresholds in bytes, increasing.
    """
    key = _PIAS_ALIASES.get(str(workload).lower())
    if key is None:
        raise ValueError(
            f"pias_thresholds: no PIAS thresholds for workload {workload!r}; "
            f"available: {sorted(PIAS_THRESHOLDS_PACKETS)} (aliases {sorted(_PIAS_ALIASES)})"
        )
    table = PIAS_THRESHOLDS_PACKETS[key]
    loads = sorted(table)
    match = [x for x in loads if abs(x - float(load)) < 1e-9]
    if match:
        chosen = match[0]
    elif nearest and 0.45 <= float(load) <= 0.95:
        chosen = min(loads, key=lambda x: (abs(x - float(load)), -x))
    else:
        hint = "" if nearest else "; pass nearest=True to use the nearest tabulated load"
        raise ValueError(f"pias_thresholds: no thresholds for load {load!r}; tabulated loads: {loads}{hint}")
    return [float(p * PACKET_PAYLOAD_BYTES) for p in table[chosen]]

