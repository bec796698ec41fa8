"""flowsched: the reference toolkit for learning datacenter flow scheduling.

The core is a fluid, event-driven, flow-level fabric simulator written in Rust
(``flowsched._fabric``); this package wraps it with workloads, traces, metrics and a CLI.
"""
from flowsched.metrics import Summary, compare, summarize
from flowsched.sim import ADMISSION_POLICIES, SCHEDULERS, Results, Simulation, simulate
from flowsched.topology import BigSwitch, LeafSpine
from flowsched.traces import TimeResolutionWarning, TraceError, read_trace, validate_trace, write_trace

__version__ = "0.1.0"

import flowsched.envs  # noqa: E402,F401  (registers the Gymnasium envs)

__all__ = [
    "ADMISSION_POLICIES",
    "SCHEDULERS",
    "BigSwitch",
    "LeafSpine",
    "Results",
    "Simulation",
    "Summary",
    "TimeResolutionWarning",
    "TraceError",
    "compare",
    "read_trace",
    "simulate",
    "summarize",
    "validate_trace",
    "write_trace",
]
