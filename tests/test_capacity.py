"""Rates read from the running simulator, on a time grid, on a big switch with mixed host
rates: no link ever carries more than its capacity, and every scheduler but gtcp is
work-conserving in the sense of its allocation: each active flow either runs at its cap
or crosses a saturated link (a bottleneck)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched.sim import native_simulator

RATES = [10.0, 25.0, 10.0, 40.0, 10.0]
SCHEDULERS = [
    "fifo",
    "ps",
    "wps",
    "srpt",
    "asrpt",
    "las",
    "pias",
    "edf",
    "ssdf",
    "lsdf",
    "fair",
    "racs",
    "sdc",
    "random",
]


def trace(rng: np.random.Generator, n: int = 40) -> pd.DataFrame:
    hosts = len(RATES)
    src = rng.integers(0, hosts, n)
    dst = (src + 1 + rng.integers(0, hosts - 1, n)) % hosts
    return flowsched.validate_trace(pd.DataFrame({
        "arrival_s": np.sort(rng.uniform(0, 5e-4, n)), "src": src, "dst": dst, "size_bytes": rng.uniform(1e3, 4e5, n),
        "deadline_s": np.where(rng.random(n) < 0.5, rng.uniform(1e-4, 2e-3, n), np.nan),
        "weight": rng.choice([1.0, 3.0], n),
    }), hosts=hosts)


@pytest.mark.parametrize("sched", SCHEDULERS)
def test_no_link_over_capacity_and_every_flow_has_a_bottleneck(sched):
    rng = np.random.default_rng(11)
    topo = flowsched.BigSwitch(len(RATES), RATES)
    cap = np.asarray(RATES) * 1e9 / 8
    samples = 0
    for _ in range(5):
        tr = trace(rng)
        sim = native_simulator(tr, topo, sched, pias_thresholds_bytes=[2e4, 2e5] if sched.endswith("pias") else None)
        src, dst = tr["src"].to_numpy(), tr["dst"].to_numpy()
        for t in np.linspace(1e-6, 2e-3, 80):
            kind, _ = sim.step(float(t))
            act = sim.active()
            if act.size == 0:
                if kind == "done":
                    break
                continue
            rates = sim.rates()
            assert (rates[np.setdiff1d(np.arange(len(tr)), act)] == 0).all()  # only active flows send
            r = rates[act]
            up = np.bincount(src[act], weights=r, minlength=len(RATES))
            down = np.bincount(dst[act], weights=r, minlength=len(RATES))
            assert (up <= cap * (1 + 1e-9)).all() and (down <= cap * (1 + 1e-9)).all(), (sched, t)
            saturated_up, saturated_down = up >= cap * (1 - 1e-9), down >= cap * (1 - 1e-9)
            # no data spans here: a flow's only cap is its path, so it must be bottlenecked somewhere
            ok = saturated_up[src[act]] | saturated_down[dst[act]]
            assert ok.all(), (sched, t, act[~ok], r[~ok])
            samples += 1
    assert samples > 100
