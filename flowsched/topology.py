"""Fabric topologies.

Link rates are in Gbps here (``link_gbps``); the simulator works in bytes/s.
``native_config()`` gives a topology's native form: the keyword arguments that describe it
to the Rust core (``flowsched._fabric``), for code that builds native objects directly.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flowsched.traces import MAX_HOSTS


def _host_rates(hosts: int, rate: float | Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(rate, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(hosts, float(arr))
    if arr.shape != (hosts,):
        raise ValueError(f"{what}: expected one rate or {hosts} per-host rates, got shape {arr.shape}")
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        raise ValueError(f"{what}: host {bad[0]} has link rate {arr[bad[0]]!r} Gbps; rates must be positive and finite")
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
        if int(self.hosts) != self.hosts or self.hosts < 2:
            raise ValueError(f"BigSwitch: hosts must be an integer >= 2, got {self.hosts!r}")
        if self.hosts > MAX_HOSTS:
            raise ValueError(f"BigSwitch: hosts = {int(self.hosts)} is above the largest fabric flowsched simulates "
                             f"(MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)")
        _host_rates(self.hosts, self.link_gbps, "BigSwitch")

    @property
    def n_hosts(self) -> int:
        return int(self.hosts)

    def host_gbps(self) -> np.ndarray:
        return _host_rates(self.hosts, self.link_gbps, "BigSwitch")

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
            if int(v) != v or v < 1:
                raise ValueError(f"LeafSpine: {name} must be an integer >= 1, got {v!r}")
        if self.tors * self.hosts_per_tor < 2:
            raise ValueError("LeafSpine: needs at least 2 hosts")
        if self.tors * self.hosts_per_tor > MAX_HOSTS:
            raise ValueError(f"LeafSpine: tors x hosts_per_tor = {int(self.tors * self.hosts_per_tor)} hosts is above the "
                             f"largest fabric flowsched simulates (MAX_HOSTS = 2**24 = {MAX_HOSTS} hosts)")
        if self.tors * self.spines > MAX_HOSTS:
            raise ValueError(f"LeafSpine: tors x spines = {int(self.tors * self.spines)} ToR-spine link pairs is above "
                             f"2**24 = {MAX_HOSTS} (the same bound as MAX_HOSTS)")
        if not (np.isfinite(self.core_gbps) and self.core_gbps > 0):
            raise ValueError(f"LeafSpine: core_gbps must be positive, got {self.core_gbps!r}")
        object.__setattr__(self, "_rates", _host_rates(self.n_hosts, self.host_gbps, "LeafSpine"))

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


Topology = BigSwitch | LeafSpine
