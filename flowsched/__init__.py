"""flowsched: the reference toolkit for learning datacenter flow scheduling.

The core is a fluid, event-driven, flow-level fabric simulator written in Rust
(``flowsched._fabric``); this package wraps it with workloads, traces, metrics and a CLI.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names below are imported on first use (PEP 562), so that ``import flowsched``,
# which must register the environments, need not import pandas and the simulator's Python
# side before they are used; ``from flowsched import simulate`` works as before.
_LAZY = {
    "Summary": "metrics", "compare": "metrics", "summarize": "metrics",
    "ADMISSION_POLICIES": "sim", "SCHEDULERS": "sim", "Results": "sim", "Simulation": "sim", "simulate": "sim",
    "BigSwitch": "topology", "LeafSpine": "topology", "Graph": "topology", "FatTree": "topology",
    "ParkingLot": "topology", "from_networkx": "topology",
    "TimeResolutionWarning": "traces", "TraceError": "traces", "read_trace": "traces",
    "validate_trace": "traces", "write_trace": "traces",
}
#: submodules reachable as attributes after ``import flowsched``, as they were when it imported them
_SUBMODULES = ("metrics", "sim", "topology", "traces", "workloads", "queueing", "baselines", "cli")

if TYPE_CHECKING:
    from flowsched.metrics import Summary, compare, summarize
    from flowsched.sim import ADMISSION_POLICIES, SCHEDULERS, Results, Simulation, simulate
    from flowsched.topology import BigSwitch, FatTree, Graph, LeafSpine, ParkingLot, from_networkx
    from flowsched.traces import TimeResolutionWarning, TraceError, read_trace, validate_trace, write_trace


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"flowsched.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"flowsched.{name}")
    raise AttributeError(f"module 'flowsched' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


import flowsched.envs  # noqa: E402,F401  (registers the Gymnasium envs)

__all__ = [
    "ADMISSION_POLICIES",
    "SCHEDULERS",
    "BigSwitch",
    "FatTree",
    "Graph",
    "LeafSpine",
    "ParkingLot",
    "Results",
    "Simulation",
    "Summary",
    "TimeResolutionWarning",
    "TraceError",
    "compare",
    "from_networkx",
    "read_trace",
    "simulate",
    "summarize",
    "validate_trace",
    "write_trace",
]
