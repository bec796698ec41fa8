"""Shared pieces of :mod:`flowsched.workloads`: packet constants, seeding and argument checks."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

PACKET_PAYLOAD_BYTES = 1460
"""Payload bytes per packet (TCP MSS) used by ns-2/PIAS/aSCC and the ``ns2int`` rule."""

PACKET_WIRE_BYTES = 1500
"""Bytes on the wire per full packet (payload + headers)."""

HEADER_FACTOR = PACKET_WIRE_BYTES / PACKET_PAYLOAD_BYTES
"""1500/1460: PIAS/aSCC convert the mean flow size to wire bytes with this factor."""

SamplingRule = Literal["ns2int", "linear", "step"]
SAMPLING_RULES: tuple[str, ...] = ("ns2int", "linear", "step")
"""The three ways the simulators read the same CDF points (see ``flowsched/data/README.md``)."""


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """The generator of a ``seed`` argument: an integer >= 0 (not a bool), a numpy
    ``Generator`` (drawn from), a ``SeedSequence`` or ``BitGenerator``, or None (fresh
    entropy); anything else is a ``ValueError`` naming ``seed``."""
    if isinstance(seed, np.random.Generator):
        return seed
    ok = seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)) or (
        isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0)
    if not ok:
        raise ValueError(f"seed must be an integer >= 0, a numpy Generator or None, got {seed!r}")
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


def _positive(name: str, **values: float) -> None:
    for k, v in values.items():
        if not (isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}: {k} must be a finite number > 0, got {v!r}")


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
