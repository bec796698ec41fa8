"""The simulator against the papers it models: the aSCC theorem instances (exact
completion times and the ratios the theorems derive) and the aSCC competitiveness
bounds on random single-link instances, where SRPT is the optimum (Schrage 1968)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import flowsched
from flowsched import workloads

SWITCH = flowsched.BigSwitch(2, 10.0)  # slot of 1460 B at 10 Gbps = 1.168 us, as in the instances


def _check_instance(tr: pd.DataFrame, **sim_kwargs) -> dict[str, np.ndarray]:
    out = {}
    for policy, expected in tr.attrs["expected_completion_s"].items():
        kw = {k: v for k, v in sim_kwargs.items() if k != "pias_thresholds_bytes" or policy.endswith("pias")}
        r = flowsched.simulate(tr, SWITCH, policy, **kw).flows
        np.testing.assert_allclose(r["finish_s"], expected, rtol=1e-9, err_msg=f"{tr.attrs['theorem']}: {policy}")
        out[policy] = r["finish_s"].to_numpy()
    return out


@pytest.mark.parametrize("n", [4, 10, 20])
def test_theorem3_fifo_is_not_competitive(n):
    tr = workloads.fifo_adversarial_instance(n=n)
    fin = _check_instance(tr)
    # FPT = sum of end times (aSCC section III); Theorem 3: FPT(FIFO) >= n/2 FPT(OPT).
    assert fin["fifo"].sum() >= n / 2 * fin["srpt"].sum()


@pytest.mark.parametrize("n", [4, 10])
def test_theorem6_pias_is_not_competitive(n):
    tr = workloads.pias_adversarial_instance(n=n)
    fin = _check_instance(tr, pias_thresholds_bytes=tr.attrs["thresholds_bytes"])
    assert fin["pias"].sum() >= n / 2 * fin["srpt"].sum()


def test_fig2_las_starves_similar_elephants():
    tr = workloads.las_starvation_instance()
    fin = _check_instance(tr)
    # The paper's Fig. 2 point: even FIFO beats LAS on elephants of similar sizes.
    assert fin["las"].sum() > fin["fifo"].sum()
    assert fin["las"].sum() / fin["srpt"].sum() == pytest.approx(80 / 50)


single_link_traces = st.lists(
    st.tuples(st.floats(0, 10), st.floats(0.05, 5)), min_size=1, max_size=12
).map(lambda rows: pd.DataFrame({"arrival_s": [a for a, _ in rows], "src": 0, "dst": 1,
                                  "size_bytes": [s for _, s in rows]}))


@settings(max_examples=60, deadline=None)
@given(single_link_traces)
def test_competitive_bounds_on_one_link(tr):
    sw = flowsched.BigSwitch(2, 8e-9)  # 1 byte/s: sizes are service times
    fpt = {p: flowsched.simulate(tr, sw, p).flows["finish_s"].sum()
           for p in ("srpt", "las", "ps", "fifo", "asrpt", "fair")}
    opt = fpt["srpt"]  # SRPT minimizes total completion time on one link (Schrage 1968)
    for p, v in fpt.items():
        assert v >= opt * (1 - 1e-9), p
    assert fpt["las"] <= 3 * opt * (1 + 1e-9)  # Theorem 5
    assert fpt["ps"] <= 3 * opt * (1 + 1e-9)  # Theorem 4 (fluid BRR)
    assert fpt["asrpt"] == pytest.approx(opt, rel=1e-9)  # sizes known at arrival: ASRPT is SRPT


@settings(max_examples=40, deadline=None)
@given(single_link_traces, st.floats(0.1, 4.0))
def test_asrpt_two_competitive_with_data_spacing(tr, alpha):
    """Theorem 7: ASRPT <= 2 OPT. OPT is unknown with spaced data, but it is at least the
    sum over flows of max(arrival + data span, arrival + size/C) (each flow alone)."""
    sw = flowsched.BigSwitch(2, 8e-9)
    tr = tr.assign(data_span_s=alpha * tr["size_bytes"])
    r = flowsched.simulate(tr, sw, "asrpt").flows
    lower = (tr["arrival_s"] + np.maximum(tr["data_span_s"], tr["size_bytes"])).sum()
    srpt_alone = flowsched.simulate(tr.assign(data_span_s=0.0), sw, "srpt").flows["finish_s"].sum()
    opt_lower = max(lower, srpt_alone)
    assert r["finish_s"].sum() <= 2 * (opt_lower + tr["data_span_s"].sum()) * (1 + 1e-9)
