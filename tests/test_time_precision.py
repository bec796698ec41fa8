"""Simulated time keeps its precision wherever a trace's clock starts (issue 16, item 2).

The simulator counts time from the whole second at or below the first arrival
(``flowsched.sim.time_origin_s``): shifting a trace by 1.7e9 s (epoch seconds) or 2**32 s
must not change any completion time. Before the rebase, 36% of srpt's FCTs moved by more
than 1% at 1.7e9 s and 51% of them were 0 at 1e12 s.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import flowsched
from flowsched import workloads as wl
from flowsched.envs import SwitchSchedulingEnv
from flowsched.sim import prepare_trace, time_origin_s
from flowsched.traces import MAX_ARRIVAL_S, MAX_ARRIVAL_SPAN_S, TimeResolutionWarning

GRID = 2.0**-20  # offsets 1.7e9 and 2**32 keep multiples of it exact in float64
OFFSETS = [1.7e9, 2.0**32]
SCHEDULERS = ["srpt", "ps", "wps", "fifo", "las", "pias", "edf", "fair", "gtcp:srpt", "asrpt", "racs", "sdc"]


def grid_trace(n: int = 600, seed: int = 3) -> pd.DataFrame:
    tr = wl.poisson_all_to_all("websearch", 0.8, 16, 10, n, seed=seed)
    tr = wl.add_deadlines(tr, slack=(2.0, 4.0), link_gbps=10, seed=1)
    tr = wl.add_weights(tr, uniform=(0.5, 2.0), seed=2)
    tr["arrival_s"] = np.round(tr["arrival_s"].to_numpy() / GRID) * GRID
    return tr


def shifted(tr: pd.DataFrame, offset: float) -> pd.DataFrame:
    out = tr.copy()
    out["arrival_s"] = out["arrival_s"].to_numpy() + offset
    assert np.array_equal(out["arrival_s"].to_numpy() - offset, tr["arrival_s"].to_numpy())  # exact on the grid
    return out


def max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.abs(b)))


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return grid_trace()


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_same_fct_at_epoch_offsets(trace: pd.DataFrame, scheduler: str) -> None:
    topo = flowsched.BigSwitch(16, 10)
    base = flowsched.simulate(trace, topo, scheduler).flows
    for offset in OFFSETS:
        with warnings.catch_warnings():
            warnings.simplefilter("error", TimeResolutionWarning)  # 2.4e-7 and 9.5e-7 s steps: no warning
            res = flowsched.simulate(shifted(trace, offset), topo, scheduler).flows
        assert max_rel_diff(res["fct_s"].to_numpy(), base["fct_s"].to_numpy()) < 1e-9, (scheduler, offset)
        assert max_rel_diff(res["slowdown"].to_numpy(), base["slowdown"].to_numpy()) < 1e-9
        assert (res["slowdown"] >= 1 - 1e-9).all()
        # reported on the trace's own clock: arrivals exactly, finishes to the float64 step there
        np.testing.assert_array_equal(res["arrival_s"].to_numpy(), trace["arrival_s"].to_numpy() + offset)
        step = np.spacing(offset + 10.0)
        assert np.max(np.abs(res["finish_s"].to_numpy() - (base["finish_s"].to_numpy() + offset))) <= step


def test_same_fct_at_offsets_leafspine_admission_termination(trace: pd.DataFrame) -> None:
    topo = flowsched.LeafSpine(4, 4, 2, 10, 20)
    kw = dict(admission="edf", k=2, terminate_missed=True, delay_us=2.0)
    base = flowsched.simulate(trace, topo, "srpt", **kw)
    assert base.flows["terminated"].any() and (~base.flows["terminated"]).any()
    for offset in OFFSETS:
        res = flowsched.simulate(shifted(trace, offset), topo, "srpt", **kw)
        fin = ~base.flows["terminated"].to_numpy()
        np.testing.assert_array_equal(res.flows["terminated"].to_numpy(), base.flows["terminated"].to_numpy())
        assert max_rel_diff(res.flows["fct_s"].to_numpy()[fin], base.flows["fct_s"].to_numpy()[fin]) < 1e-9
        assert res.flows["deadline_met"].equals(base.flows["deadline_met"])
        assert res.duration_s == pytest.approx(base.duration_s, rel=1e-12)


def test_offsets_1e12_warn_and_the_rounded_input_is_simulated_exactly(trace: pd.DataFrame) -> None:
    far = trace.copy()
    far["arrival_s"] = far["arrival_s"].to_numpy() + 1e12  # rounded to 122 us steps
    with pytest.warns(TimeResolutionWarning, match=r"column 'arrival_s'.*resolved to 0\.000122 s"):
        res = flowsched.simulate(far, flowsched.BigSwitch(16, 10), "srpt").flows
    near = far.copy()
    near["arrival_s"] = far["arrival_s"].to_numpy() - 1e12  # exact: the same rounded arrivals near 0
    ref = flowsched.simulate(near, flowsched.BigSwitch(16, 10), "srpt").flows
    assert max_rel_diff(res["fct_s"].to_numpy(), ref["fct_s"].to_numpy()) < 1e-9
    assert (res["fct_s"] > 0).all() and (res["slowdown"] >= 1 - 1e-9).all()


def test_resolution_warning_threshold() -> None:
    tr = pd.DataFrame(
        {"arrival_s": [2.0**33, 2.0**33 + 2.0**-19], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e3, 1e3]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimeResolutionWarning)
        flowsched.validate_trace(tr.assign(arrival_s=tr["arrival_s"] / 2))  # step 9.5e-7 s <= 1 us: silent
    with pytest.warns(TimeResolutionWarning, match=r"row 1.*resolved to 1\.91e-06 s.*smallest gap between distinct "
                      r"arrivals: 1\.91e-06 s"):
        flowsched.validate_trace(tr)  # step 1.9e-6 s


def test_fct_resolution_warning_for_tiny_flows_late_in_a_long_trace() -> None:
    tr = pd.DataFrame({"arrival_s": [0.0, 1e5], "src": [0, 1], "dst": [1, 0], "size_bytes": [1e3, 1.0]})
    with pytest.warns(TimeResolutionWarning, match=r"1 flow\(s\).*row 1, 1\.0 bytes"):
        flowsched.simulate(tr, flowsched.BigSwitch(2, 10), "ps")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimeResolutionWarning)
        flowsched.simulate(tr.assign(size_bytes=[1e3, 1e4]), flowsched.BigSwitch(2, 10), "ps")
        flowsched.simulate(tr.assign(arrival_s=[1.7e9, 1.7e9 + 1.0]), flowsched.BigSwitch(2, 10), "ps")


def test_env_fixed_trace_path_is_rebased(trace: pd.DataFrame) -> None:
    """The envs' fixed-trace option feeds prepare_trace's trace to the core: it is rebased."""
    topo = flowsched.BigSwitch(16, 10)
    base, _ = prepare_trace(trace, topo, 10.0)
    for offset in OFFSETS:
        tr, _ = prepare_trace(shifted(trace, offset), topo, 10.0)
        assert tr.attrs["time_origin_s"] == offset
        assert np.array_equal(tr["arrival_s"].to_numpy(), base["arrival_s"].to_numpy())

    def fcts(tr: pd.DataFrame) -> np.ndarray:
        env = SwitchSchedulingEnv(trace=tr, topology=topo, max_flows=64)
        obs, _ = env.reset(seed=0)
        done = False
        while not done:
            obs, _, done, _, _ = env.step(np.linspace(1, -1, 64, dtype=np.float32))
        return env.results()["fct_s"].to_numpy()

    small = trace.iloc[:80].reset_index(drop=True)
    assert max_rel_diff(fcts(shifted(small, 1.7e9)), fcts(small)) < 1e-9


@settings(max_examples=200, deadline=None)
@given(
    first=st.floats(0, MAX_ARRIVAL_S, allow_nan=False),
    rest=st.lists(st.floats(0, MAX_ARRIVAL_SPAN_S, allow_nan=False), max_size=5),
)
def test_rebase_is_exact(first: float, rest: list[float]) -> None:
    a = np.array([first] + [min(first + r, MAX_ARRIVAL_S) for r in rest])
    origin = time_origin_s(a)
    assert origin == math.floor(first) and origin <= a.min() < origin + 1
    for x in a:
        assert Fraction(float(x - origin)) == Fraction(float(x)) - Fraction(origin)  # no rounding
        assert (x - origin) + origin == x
