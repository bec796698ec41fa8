"""Property tests of the fluid simulator on small random traces (hypothesis).

Traces have 1-15 flows on a BigSwitch of 2-6 hosts or a LeafSpine(2, 2, 2, 10, 10)
(4 hosts, 2 ToRs, 2 spines, every link 10 Gbps), random arrivals (with deliberate
ties), sizes, and optionally deadlines, weights, data spans and hidden sizes.

Sizes are >= 1 KB and arrivals <= 1 ms: the simulator stalls on flows whose size is
below about C * t * 2e-7 bytes at time t (see ``test_tiny_late_flow_does_not_stall``
and tests/test_queueing.py), which these traces stay far from.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import flowsched

C = 10e9 / 8  # every link of both topologies is 10 Gbps
PIAS_TH = [5e3, 5e4, 5e5]
SCHEDULERS = [
    "fifo", "ps", "wps", "srpt", "asrpt", "ga:ssdf", "ga:lsdf", "las", "pias", "edf", "ssdf",
    "lsdf", "fair", "racs", "sdc", "random",
    "gtcp:srpt", "gtcp:las", "gtcp:fifo", "gtcp:ps", "gtcp:edf", "gtcp:pias", "gtcp:asrpt",
]
# Schedulers that read the size of incomplete flows (refuse size_known=False).
# gtcp reads sizes whatever its inner policy: its shadow fair-sharing run times completions by them
SIZE_READERS = {"srpt", "ssdf", "lsdf", "fair", "racs", "sdc"} | {s for s in SCHEDULERS if s.startswith("gtcp:")}
ADMISSIONS = ["fifo", "edf", "ssdf", "lsdf", "srpt", "random"]
SIZE_READING_ADMISSIONS = {"ssdf", "lsdf", "srpt"}
LEAFSPINE = flowsched.LeafSpine(2, 2, 2, 10, 10)

# FLOWSCHED_PROPERTY_EXAMPLES=N runs N examples per test with fresh random draws (a
# deeper search); by default the examples are few and fixed (derandomized), so the
# file is quick and reproducible.
_DEEP = int(os.environ.get("FLOWSCHED_PROPERTY_EXAMPLES", "0"))


def examples(n: int) -> settings:
    return settings(
        deadline=None,
        max_examples=_DEEP or n,
        derandomize=not _DEEP,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def rel_tol(x, r=1e-9):
    return r * np.maximum(1.0, np.abs(x))


# --------------------------------------------------------------------------- paths
M64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def path_of(topo, row: int, src: int, dst: int) -> tuple[str, ...]:
    """The links of the path of trace row `row` (mirrors fabric/core/src/topology.rs)."""
    if isinstance(topo, flowsched.BigSwitch):
        return (f"up{src}", f"down{dst}")
    ts, td = src // topo.hosts_per_tor, dst // topo.hosts_per_tor
    if ts == td:
        return (f"up{src}", f"down{dst}")
    h = _mix64(topo.ecmp_seed ^ _mix64(((row * 0x9E3779B97F4A7C15) & M64) ^ ((src << 32) | dst)))
    s = h % topo.spines
    return (f"up{src}", f"tor{ts}-spine{s}", f"spine{s}-tor{td}", f"down{dst}")


def paths(topo, trace: pd.DataFrame) -> list[tuple[str, ...]]:
    return [path_of(topo, i, int(s), int(d)) for i, (s, d) in enumerate(zip(trace["src"], trace["dst"], strict=True))]


# --------------------------------------------------------------------------- strategies
TIMES = st.one_of(st.sampled_from([0.0, 1e-4, 2.5e-4]), st.floats(0.0, 1e-3))
SIZES = st.one_of(st.sampled_from([1e3, 1.25e4, 1e5, 1.25e5, 1e6]), st.floats(1e3, 2e6))


@st.composite
def topologies(draw):
    if draw(st.booleans()):
        return LEAFSPINE
    return flowsched.BigSwitch(draw(st.integers(2, 6)), 10)


@st.composite
def traces(draw, hosts: int, *, extras: bool = True, spans: bool = True, hidden: bool = True,
           single_link: bool = False, max_flows: int = 15):
    n = draw(st.integers(1, max_flows))
    rows = []
    for _ in range(n):
        if single_link:
            src, dst = 0, 1
        else:
            src = draw(st.integers(0, hosts - 1))
            dst = draw(st.integers(0, hosts - 2))
            dst += dst >= src
        row = {"arrival_s": draw(TIMES), "src": src, "dst": dst, "size_bytes": draw(SIZES)}
        if extras:
            row["deadline_s"] = draw(st.one_of(st.just(math.nan), st.floats(5e-6, 5e-3)))
            row["weight"] = draw(st.one_of(st.just(1.0), st.floats(0.1, 10.0)))
        row["data_span_s"] = draw(st.one_of(st.just(0.0), st.floats(0.0, 2e-3))) if spans else 0.0
        row["size_known"] = draw(st.booleans()) if hidden else True
        rows.append(row)
    return pd.DataFrame(rows)


@st.composite
def cases(draw, **kw):
    topo = draw(topologies())
    return topo, draw(traces(topo.n_hosts, **kw))


def run(trace, topo, scheduler, **kw):
    if scheduler.endswith("pias"):  # refused for schedulers without PIAS queues
        kw.setdefault("pias_thresholds_bytes", PIAS_TH)
    return flowsched.simulate(trace, topo, scheduler, **kw)


def expected_error(trace, scheduler, admission=None, terminate_missed=False) -> str | None:
    """The ValueError message fragment a combination must raise, or None if it runs."""
    hidden = not trace["size_known"].all()
    if scheduler in SIZE_READERS and hidden:
        return "reads flow sizes"
    if admission in SIZE_READING_ADMISSIONS and hidden:
        return "reads flow sizes"
    if scheduler.startswith("gtcp:"):
        if admission is not None or terminate_missed:
            return "gtcp with destination admission"
        if (trace["data_span_s"] > 0).any():
            return "data_span_s > 0"
    return None


# --------------------------------------------------------------------------- invariants
def check_invariants(trace, topo, res, *, delay_us=0.0, terminate_missed=False):
    f = res.flows
    n = len(trace)
    assert len(f) == n
    size = trace["size_bytes"].to_numpy()
    arr = trace["arrival_s"].to_numpy()
    span = trace["data_span_s"].to_numpy()
    dl = trace["deadline_s"].to_numpy()
    fin = f["finish_s"].to_numpy()
    fct = f["fct_s"].to_numpy()
    sent = f["bytes_sent"].to_numpy()
    term = f["terminated"].to_numpy(dtype=bool)
    pth = paths(topo, trace)
    hops = np.array([len(p) for p in pth])
    delay = delay_us * 1e-6 * hops

    if not terminate_missed:
        assert not term.any()
    ok = ~term
    # every flow finishes with all its bytes, unless terminated
    assert np.isfinite(fin[ok]).all()
    assert (sent[ok] == size[ok]).all()
    # never faster than alone on an idle fabric, never before its data is there
    ideal = np.maximum(size / C, span) + delay
    np.testing.assert_allclose(f["ideal_fct_s"].to_numpy(), ideal, rtol=1e-12)
    assert (fct[ok] >= ideal[ok] * (1 - 1e-9)).all()
    assert (fin[ok] >= arr[ok] + span[ok] - rel_tol(arr[ok] + span[ok])).all()
    np.testing.assert_allclose(fct[ok], fin[ok] - arr[ok] + delay[ok], rtol=1e-12, atol=1e-18)
    # terminated flows: had a deadline, no finish, sent at most what fit before it
    if term.any():
        assert np.isfinite(dl[term]).all()
        assert np.isnan(fin[term]).all() and np.isnan(fct[term]).all()
        window = np.maximum(dl[term] - delay[term], 0.0)
        avail = np.where(
            span[term] > 0, size[term] * np.minimum(1.0, window / np.where(span[term] > 0, span[term], 1)), size[term]
        )
        assert (sent[term] <= np.minimum(C * window, avail) * (1 + 1e-9) + 1e-6).all()
        assert (sent[term] <= size[term]).all()
        assert not f["deadline_met"][term].any()
    # deadline_met: NA without a deadline; with termination every survivor met its deadline
    met = f["deadline_met"]
    assert met[np.isnan(dl)].isna().all()
    has = np.isfinite(dl)
    want = (fct <= dl * (1 + 1e-9)) & ok
    assert (met[has].to_numpy(dtype=bool) == want[has]).all()
    if terminate_missed:
        assert met[has & ok].all()

    # links: bytes conserved along paths, never more than capacity allows up to the end
    # of the last transfer (a terminated flow sends until its deadline minus the path
    # delay, which may come after the last finish); the run lasts until then
    end = np.where(ok, fin, arr + np.maximum(dl - delay, 0.0))
    busy = end.max() - arr.min()
    assert res.duration_s == pytest.approx(busy, rel=1e-9, abs=1e-15)
    on_link = defaultdict(lambda: np.zeros(n, dtype=bool))
    for i, p in enumerate(pth):
        for link in p:
            on_link[link][i] = True
    names = res.links["link"].tolist()
    assert len(set(names)) == len(names)
    for link, cap, carried in zip(names, res.links["capacity_Bps"], res.links["bytes"], strict=True):
        on = on_link[link]
        assert cap == C
        assert carried == pytest.approx(sent[on].sum(), rel=1e-9, abs=1e-6), link
        assert carried <= cap * busy * (1 + 1e-9) + 1e-6, link
        # capacity over every window [t1, t2]: the flows that arrived >= t1 and
        # finished <= t2 sent all their bytes inside it
        on = on & ok
        if on.sum() >= 2:
            t1 = np.unique(arr[on])[:, None, None]
            t2 = np.unique(fin[on])[None, :, None]
            inside = on & (arr >= t1) & (fin <= t2)
            load = (inside * size).sum(axis=2)
            room = C * (t2 - t1)[:, :, 0] * (1 + 1e-9) + 1e-6
            assert ((load <= room) | (t2 <= t1)[:, :, 0]).all(), link


def test_duration_covers_terminated_flows():
    """A terminated flow sends until its deadline passes: Results.duration_s must cover
    that time, or the link carries more than capacity * duration and summary() reports
    a utilization above 100 % (a regression: duration once ended at the last finish)."""
    trace = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1],
                          "size_bytes": [1e6, 1e3], "deadline_s": [5e-4, math.nan]})
    res = run(trace, flowsched.BigSwitch(2, 10), "fifo", terminate_missed=True)
    # fifo breaks the arrival tie by trace row: the 1 MB flow sends alone until it is
    # terminated at 0.5 ms (625 KB sent), then the 1 KB flow takes 0.8 us
    assert res.flows["terminated"].tolist() == [True, False]
    assert res.flows["bytes_sent"].iat[0] == pytest.approx(625e3, rel=1e-9)
    assert res.flows["finish_s"].iat[1] == pytest.approx(5e-4 + 0.8e-6, rel=1e-9)
    assert res.links.set_index("link")["bytes"]["up0"] == pytest.approx(626e3, rel=1e-9)
    # the run lasts until the 1 KB flow finishes, and the link was busy all along
    assert res.duration_s == pytest.approx(5e-4 + 0.8e-6, rel=1e-9)
    assert res.summary().overall["max_link_utilization"] == pytest.approx(1.0, rel=1e-9)

    # terminated last: the run lasts until the termination, not the last finish
    trace = trace.iloc[::-1].reset_index(drop=True)
    res = run(trace, flowsched.BigSwitch(2, 10), "fifo", terminate_missed=True)
    assert res.flows["finish_s"].iat[0] == pytest.approx(0.8e-6, rel=1e-9)
    assert res.duration_s == pytest.approx(5e-4, rel=1e-9)
    assert res.summary().overall["max_link_utilization"] <= 1.0 + 1e-9


@examples(40)  # x 23 schedulers each
@given(cases(), st.sampled_from([0.0, 1.0]), st.booleans(), st.integers(0, 3))
def test_invariants_all_schedulers(case, delay_us, terminate_missed, seed):
    topo, trace = case
    for sched in SCHEDULERS:
        err = expected_error(trace, sched, terminate_missed=terminate_missed)
        if err is not None:
            with pytest.raises(ValueError, match=err):
                run(trace, topo, sched, delay_us=delay_us, terminate_missed=terminate_missed, seed=seed)
            continue
        res = run(trace, topo, sched, delay_us=delay_us, terminate_missed=terminate_missed, seed=seed)
        check_invariants(trace, topo, res, delay_us=delay_us, terminate_missed=terminate_missed)


@examples(80)
@given(cases(), st.sampled_from(ADMISSIONS), st.integers(1, 3), st.sampled_from([None, 1, 2]),
       st.sampled_from(["fifo", "ps", "srpt", "las", "edf", "gtcp:srpt"]), st.booleans())
def test_invariants_with_admission(case, admission, k, window, sched, terminate_missed):
    topo, trace = case
    kw = dict(admission=admission, k=k, window=window, terminate_missed=terminate_missed, seed=3)
    err = expected_error(trace, sched, admission, terminate_missed)
    if err is not None:
        with pytest.raises(ValueError, match=err):
            run(trace, topo, sched, **kw)
        return
    check_invariants(trace, topo, run(trace, topo, sched, **kw), terminate_missed=terminate_missed)


# --------------------------------------------------------------------------- work conservation
def busy_period_ends(arrival: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each flow, the end of its busy period on a single server of rate C."""
    order = np.argsort(arrival, kind="stable")
    period = np.empty(len(arrival), dtype=int)
    ends: list[float] = []
    end = -math.inf
    for i in order:
        if arrival[i] > end:  # idle before: a new busy period
            ends.append(arrival[i])
        end = ends[-1] = max(end, arrival[i]) + size[i] / C
        period[i] = len(ends) - 1
    return period, np.array(ends)


# On one link every scheduler is work conserving (priority ones fill the link from the
# top group down, sharing ones split all of it, gtcp hands out what ps would).
WORK_CONSERVING = SCHEDULERS


@examples(40)  # x 23 schedulers each
@given(traces(2, spans=False, hidden=False, single_link=True),
       st.one_of(st.none(), st.tuples(st.sampled_from(ADMISSIONS), st.integers(1, 2))))
def test_single_link_work_conservation(trace, admission):
    """All flows 0 -> 1: one bottleneck. Without data spans every scheduler keeps the
    link busy while a flow is present, so each busy period ends exactly when the
    busy-period recursion says; and SRPT minimises the total FCT."""
    topo = flowsched.BigSwitch(2, 10)
    period, ends = busy_period_ends(trace["arrival_s"].to_numpy(), trace["size_bytes"].to_numpy())
    totals = {}
    for sched in WORK_CONSERVING:
        kw = {}
        if admission is not None:
            if sched.startswith("gtcp:"):
                continue
            kw = dict(admission=admission[0], k=admission[1])
        res = run(trace, topo, sched, **kw)
        fin = res.flows["finish_s"].to_numpy()
        last = pd.Series(fin).groupby(period).max().to_numpy()
        np.testing.assert_allclose(last, ends, rtol=1e-9, err_msg=sched)
        assert (fin <= ends[period] * (1 + 1e-9)).all(), sched
        totals[sched] = res.flows["fct_s"].sum()
    if trace["size_bytes"].nunique() == len(trace):
        # strict SRPT is sample-path optimal; with distinct sizes no ties arise at arrivals
        for sched, tot in totals.items():
            assert totals["srpt"] <= tot * (1 + 1e-9), (sched, totals["srpt"], tot)


# --------------------------------------------------------------------------- determinism
@examples(80)
@given(
    cases(),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["random", "ps", "srpt", "las", "fair", "gtcp:las", "racs", "pias"]),
)
def test_determinism(case, seed, sched):
    topo, trace = case
    trace = trace.assign(size_known=True)
    if sched.startswith("gtcp:"):
        trace = trace.assign(data_span_s=0.0)
    a = run(trace, topo, sched, seed=seed)
    b = run(trace, topo, sched, seed=seed)
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    pd.testing.assert_frame_equal(a.links, b.links, check_exact=True)
    assert a.duration_s == b.duration_s
    if sched.startswith("gtcp:"):
        return
    # random admission, k = 1
    a = run(trace, topo, sched, k=1, admission="random", seed=seed)
    b = run(trace, topo, sched, k=1, admission="random", seed=seed)
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    pd.testing.assert_frame_equal(a.links, b.links, check_exact=True)


# --------------------------------------------------------------------------- gtcp
def emptying_times(arrival, finish, rtol=1e-9) -> np.ndarray:
    """Times at which a group of flows has no remaining work: finishes after which no
    earlier-arrived flow of the group is still unfinished (tolerance relative to t)."""
    out = []
    for t in np.unique(finish):
        tol = rtol * abs(t)
        before = arrival < t - tol
        if (finish[before] <= t + tol).all():
            out.append(t)
    return np.array(out)


def same_times(a: np.ndarray, b: np.ndarray, rtol=1e-9) -> bool:
    """Every time of a is within rtol of one of b and vice versa."""
    def covered(x, y):
        return all(np.any(np.abs(y - t) <= rtol * abs(t)) for t in x)

    return covered(a, b) and covered(b, a)


@examples(80)
@given(cases(spans=False, hidden=False))
def test_gtcp_preserves_per_path_service(case):
    """gtcp:<inner> gives each path exactly the aggregate rate ps gives it, so each path's
    cumulative service is the same function of time: it empties at the same instants
    and finishes last at the same time; gtcp:ps is ps; gtcp:srpt has a total FCT per
    path no larger than ps."""
    topo, trace = case
    pth = paths(topo, trace)
    groups = defaultdict(list)
    for i, p in enumerate(pth):
        groups[p].append(i)
    arr = trace["arrival_s"].to_numpy()
    ps = run(trace, topo, "ps").flows
    fin_ps = ps["finish_s"].to_numpy()
    fct_ps = ps["fct_s"].to_numpy()
    np.testing.assert_allclose(run(trace, topo, "gtcp:ps").flows["finish_s"], fin_ps, rtol=1e-9)
    for inner in ("srpt", "las", "fifo", "asrpt", "edf"):
        g = run(trace, topo, f"gtcp:{inner}").flows
        fin = g["finish_s"].to_numpy()
        fct = g["fct_s"].to_numpy()
        for p, rows in groups.items():
            rows = np.array(rows)
            assert fin[rows].max() == pytest.approx(fin_ps[rows].max(), rel=1e-9), (inner, p)
            e_g, e_ps = emptying_times(arr[rows], fin[rows]), emptying_times(arr[rows], fin_ps[rows])
            assert same_times(e_g, e_ps), (inner, p, e_g, e_ps)
            if inner == "srpt":
                assert fct[rows].sum() <= fct_ps[rows].sum() * (1 + 1e-9), (p, fct[rows], fct_ps[rows])


# --------------------------------------------------------------------------- admission
def admission_key(policy, trace, i):
    r = trace.iloc[i]
    has_dl = np.isfinite(r["deadline_s"])
    if policy == "edf":
        return (0.0, r["arrival_s"] + r["deadline_s"]) if has_dl else (1.0, r["arrival_s"])
    if policy == "ssdf":
        return (0.0 if has_dl else 1.0, r["size_bytes"] / r["deadline_s"] if has_dl else math.inf)
    if policy == "lsdf":
        return (0.0 if has_dl else 1.0, -(r["size_bytes"] / r["deadline_s"]) if has_dl else -math.inf)
    if policy == "srpt":
        return (r["size_bytes"], r["arrival_s"])
    raise ValueError(policy)


@examples(80)
@given(cases(hidden=False), st.sampled_from(ADMISSIONS), st.sampled_from([None, 1, 2, 3]),
       st.sampled_from(["ps", "fifo", "srpt", "las", "random"]), st.integers(0, 5))
def test_admission_k1_one_active_per_destination(case, admission, window, sched, seed):
    """k = 1: a destination serves one flow at a time. So at each destination the flows
    finish one after the other; the m-th to finish was admitted at
    tau_m = max(arrival, previous finish) and needs size / C after that; and it is the
    one the admission policy picks among the first `window` flows waiting at tau_m
    (in arrival order). FIFO admission therefore finishes them in arrival order."""
    topo, trace = case
    res = run(trace, topo, sched, admission=admission, k=1, window=window, seed=seed)
    f = res.flows
    fin = f["finish_s"].to_numpy()
    arr = trace["arrival_s"].to_numpy()
    size = trace["size_bytes"].to_numpy()
    assert np.isfinite(fin).all()
    arrival_order = np.lexsort((np.arange(len(trace)), arr))  # the simulator's queue order
    for dst in trace["dst"].unique():
        queue = [i for i in arrival_order if trace["dst"].iat[i] == dst]
        by_finish = sorted(queue, key=lambda i: fin[i])
        prev = -math.inf
        admitted: set[int] = set()
        for i in by_finish:
            assert fin[i] > prev, "two flows of one destination finished together with k = 1"
            tau = max(arr[i], prev)
            assert fin[i] - tau >= size[i] / C * (1 - 1e-9)
            waiting = [j for j in queue if j not in admitted and arr[j] <= tau]
            win = waiting if window is None else waiting[:window]
            assert i in win, (dst, i, win)
            if admission == "fifo":
                assert i == win[0]
            elif admission != "random":
                best = min(win, key=lambda j: (admission_key(admission, trace, j), win.index(j)))
                assert admission_key(admission, trace, i) == admission_key(admission, trace, best), (i, best, win)
                assert i == best
            admitted.add(i)
            prev = fin[i]
        if admission == "fifo":
            assert by_finish == queue


def test_admission_fifo_equal_sizes_finish_in_arrival_order():
    """The brief's example, by hand: three equal flows into host 1 from hosts 0, 2, 3
    with k = 1 go one at a time, in arrival order, each taking size / C."""
    trace = pd.DataFrame({"arrival_s": [2e-4, 0.0, 1e-4], "src": [0, 2, 3], "dst": [1, 1, 1],
                          "size_bytes": [1.25e6] * 3})
    f = run(trace, flowsched.BigSwitch(4, 10), "ps", k=1).flows
    assert f["finish_s"].tolist() == pytest.approx([3e-3, 1e-3, 2e-3], rel=1e-12)


# --------------------------------------------------------------------------- errors
@examples(80)
@given(cases(), st.sampled_from(sorted(SIZE_READERS)))
def test_size_readers_refuse_hidden_sizes(case, sched):
    topo, trace = case
    trace = trace.assign(data_span_s=0.0)
    trace.loc[trace.index[-1], "size_known"] = False
    with pytest.raises(ValueError, match="reads flow sizes"):
        run(trace, topo, sched)
    # size-oblivious ones run
    for ok in ("fifo", "ps", "las", "pias", "asrpt", "edf", "random"):
        check_invariants(trace, topo, run(trace, topo, ok))


@pytest.mark.parametrize("sched", ["fifo", "ps", "srpt", "las"])
def test_tiny_late_flow_does_not_stall(sched):
    trace = pd.DataFrame({"arrival_s": [10.0], "src": [0], "dst": [1], "size_bytes": [100.0]})
    res = run(trace, flowsched.BigSwitch(2, 10), sched)
    assert res.flows["finish_s"].iloc[0] == pytest.approx(10.0 + 100.0 / C, rel=1e-12)


def test_mean_active_flows_ends_a_terminated_flow_when_the_simulator_drops_it():
    """With a path delay, a terminated flow is dropped at arrival + deadline - path delay;
    one flow alone is then in the system for the whole run: mean active flows = 1."""
    trace = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e6], "deadline_s": [1e-4]})
    res = flowsched.simulate(trace, flowsched.BigSwitch(2, 10), "ps", delay_us=10.0, terminate_missed=True)
    assert res.flows["terminated"].all() and res.flows["path_delay_s"].iat[0] == pytest.approx(2e-5)
    assert res.duration_s == pytest.approx(8e-5, rel=1e-12)
    overall = res.summary().overall
    assert overall["mean_active_flows"] == pytest.approx(1.0, rel=1e-12)
    assert overall["duration_s"] == pytest.approx(8e-5, rel=1e-12)
