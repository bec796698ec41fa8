"""What the benchmarks print about the machine they ran on.

The machines this project runs on differ by about 2x in speed per thread from one day to
the next (and 2-thread runs also depend on what the host's other tenants do), so a figure
compares only with others measured on the same host: every benchmark prints :func:`host`
first, and ``bench_envs.py`` the hypervisor's steal time of each run (:func:`steal_ticks`).
"""
from __future__ import annotations

import os
import platform


def host() -> str:
    """The CPU model, the CPUs and the load average, e.g. ``AMD EPYC, 2 CPUs, load average 0.83``."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return f"{model}, {os.cpu_count()} CPUs{load}"


def steal_ticks() -> int | None:
    """CPU time the hypervisor gave to others (the ``steal`` column of /proc/stat, in clock
    ticks; None where there is none): a 2-thread run that loses its second CPU this way
    measures the host, not the code."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8])
    except (OSError, IndexError, ValueError):
        return None
