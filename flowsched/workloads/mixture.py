"""Mixtures of size distributions (optionally one deadline per class) and Artemis workload A."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from flowsched.workloads._common import _check_n, _num
from flowsched.workloads.sizes import Fixed, SizeDistribution

DistLike = Union["SizeDistribution", str, float, int]


def _as_distribution(d: DistLike) -> SizeDistribution:
    if isinstance(d, SizeDistribution):
        return d
    if isinstance(d, str):
        from flowsched.workloads.names import get_distribution  # names imports this module

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
                    f"Mixture: component {k} must be (weight, dist_or_size) or (weight, dist_or_size, deadline_s), got "
                    f"{comp!r}"
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

    # a mixture's sf and partial moments are the weighted sums of its components'
    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        return sum(float(w) * d._cum(p, t) for w, d in zip(self._weights, self._dists, strict=True))  # type: ignore[return-value]

    def _sf(self, t: np.ndarray) -> np.ndarray:
        return sum(float(w) * d._sf(t) for w, d in zip(self._weights, self._dists, strict=True))  # type: ignore[return-value]

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return sum(float(w) * d._partial(-1, a, b) for w, d in zip(self._weights, self._dists, strict=True))  # type: ignore[return-value]

    @property
    def atoms_bytes(self) -> np.ndarray:
        return np.unique(np.concatenate([np.zeros(0)] + [d.atoms_bytes for d in self._dists]))

    @property
    def lattice_bytes(self) -> float | None:
        units = {d.lattice_bytes for d in self._dists} - {None}
        return units.pop() if len(units) == 1 else None

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

