"""Reliability of the Rust core seen from Python (issue 16): the pias livelock, the
progress guard's error, and the host-count bound. The Rust side has the same cases in
fabric/core/tests/pias_threshold.rs, progress.rs and fuzz.rs."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched import _fabric

C = 1.25e9  # 10 Gbps in bytes/s


def test_pias_livelock_repro_finishes():
    """Issue 16's repro: incremental pias with one threshold of 1,946,000 B on the leaf-spine
    livelocked at t = 0.229 s. Run in a subprocess under a hard timeout, so a regression
    fails here instead of hanging the suite (it takes about 2 s)."""
    code = (
        "import flowsched, numpy as np; from flowsched import workloads; "
        "r = flowsched.simulate(workloads.poisson_all_to_all('websearch', 0.8, 144, 10, 50_000, seed=11), "
        "flowsched.LeafSpine(9, 16, 4, 10, 40), 'pias', pias_thresholds_bytes=[1_946_000]); "
        "f = r.flows['fct_s'].to_numpy(); print(len(f), bool(np.isfinite(f).all()))"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("pias on the issue-16 trace did not finish within 120 s (the livelock is back)")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["50000", "True"]


def test_pias_flow_stopped_within_tolerance_of_threshold_is_demoted():
    """The root cause, shrunk to 4 flows (fabric/core/tests/pias_threshold.rs): A reaches
    the threshold 5e-7 B short of it (within its tolerance of 1e-3 B) when X stops it, so
    it is in the lower queue from then on, behind W. The old incremental allocator kept A
    ahead of W (A finished at 3.2 ms, W at 3.28 ms)."""
    tr = pd.DataFrame({
        "arrival_s": [0.0, 2e-16, 4e-16, 6e-16],
        "src": [2, 0, 0, 0],
        "dst": [1, 1, 3, 3],
        "size_bytes": [3e6, 1e6, 3e6, 1e5],
    })
    r = flowsched.simulate(tr, flowsched.BigSwitch(4, 10), "pias", pias_thresholds_bytes=[1e6])
    fct = r.flows["fct_s"].to_numpy()
    w_done = 2 * 1e6 / C + 1e5 / C
    assert fct[3] == pytest.approx(w_done - 6e-16, rel=1e-9)
    assert fct[2] == pytest.approx(w_done + 2e6 / C - 4e-16, rel=1e-9)


def _native(scheduler, **kw):
    n = 12
    k = np.arange(n)
    return _fabric.Simulator(
        1e-4 * k, k % 4, (k + 1 + k // 4) % 4, 2e5 + 1e4 * k, np.full(n, np.nan), np.ones(n), np.zeros(n),
        np.ones(n, dtype=bool), topology="bigswitch", host_gbps=np.full(4, 10.0), scheduler=scheduler,
        pias_thresholds_bytes=[1e5], **kw,
    )


def test_progress_guard_error_reaches_python():
    """inject_stall_at_s (test only) makes the allocation never drain, or every event
    re-create itself, from t = 0.5 ms on: the core returns an error naming the scheduler,
    the allocator, the time and the flows, raised in Python as a RuntimeError."""
    sim = _native("pias", inject_stall_at_s=5e-4)
    with pytest.raises(RuntimeError) as e:
        sim.run()
    m = str(e.value)
    assert "simulation stalled: no progress under scheduler 'pias' (incremental priority allocator)" in m
    assert "at simulated time t = 5.00000000000000010e-4 s" in m
    assert "re-evaluations of flows in one allocation" in m
    assert "flows involved (trace rows): [" in m
    assert sim.now == 5e-4

    sim = _native("pias", inject_stall_at_s=5e-4, allocator="full")
    with pytest.raises(RuntimeError, match=r"'pias' \(full recomputation\) at simulated time t = 5\.0+10e-4 s: "
                                           r"\d+ consecutive events at this time"):
        sim.run()

    sim = _native("ps", inject_stall_at_s=5e-4)  # a small fabric: the direct fill
    with pytest.raises(RuntimeError, match=r"'ps' \(fair-sharing allocator, direct fill\)"):
        sim.run()
    sim = _native("ps", inject_stall_at_s=5e-4, allocator="incremental")
    with pytest.raises(RuntimeError, match=r"'ps' \(incremental fair-sharing allocator\)"):
        sim.run()
    # Without the injection the same runs finish.
    for kw in ({}, {"allocator": "full"}):
        sim = _native("pias", **kw)
        sim.run()
        assert np.isfinite(sim.results()["fct_s"]).all()


def test_host_counts_above_the_core_limit_are_errors_not_aborts():
    """More than 2**24 hosts (fabric_core::topology::MAX_HOSTS) or 2**26 links is a
    ValueError from the core, before it allocates anything per host (50,000,000 hosts
    used to abort the process: 'memory allocation of 8 bytes failed')."""
    one = np.ones(1)
    args = (one * 0, np.zeros(1, np.int64), np.ones(1, np.int64), one, one * np.nan, one, one * 0, np.ones(1, bool))
    with pytest.raises(ValueError, match=r"33554432 hosts, above the limit of 16777216"):
        _fabric.Simulator(*args, topology="leafspine", host_gbps=np.full(4, 10.0), tors=2**13, hosts_per_tor=2**12,
                          spines=1, core_gbps=40.0)
    with pytest.raises(ValueError, match=r"more than 67108864 links"):
        _fabric.Simulator(*args, topology="leafspine", host_gbps=np.full(4, 10.0), tors=2, hosts_per_tor=2,
                          spines=2**62, core_gbps=40.0)
    # A size that overflows a 64-bit product is an error too, not a panic.
    with pytest.raises(ValueError, match="above the limit"):
        _fabric.Simulator(*args, topology="leafspine", host_gbps=np.full(4, 10.0), tors=2**40, hosts_per_tor=2**40,
                          spines=1, core_gbps=40.0)
