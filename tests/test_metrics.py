"""Tests for flowsched.metrics on small hand-computed frames."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flowsched.metrics import (
    DEFAULT_BUCKETS_BYTES,
    FLOW_COLUMNS_SUMMARY,
    Summary,
    assign_buckets,
    bucket_labels,
    compare,
    format_bytes,
    quantile_label,
    summarize,
)

NA = pd.NA


def make_flows(
    arrival_s,
    finish_s,
    *,
    size_bytes=None,
    deadline_s=None,
    weight=None,
    terminated=None,
    deadline_met=None,
    path_delay_s: float = 0.0,
    ideal_fct_s=None,
    ids=None,
) -> pd.DataFrame:
    """A simulator-shaped flows frame; derived columns follow the documented rules."""
    n = len(arrival_s)
    arrival = np.asarray(arrival_s, dtype=float)
    finish = np.asarray(finish_s, dtype=float)
    term = np.zeros(n, bool) if terminated is None else np.asarray(terminated, bool)
    finish = np.where(term, np.nan, finish)
    size = np.full(n, 1000.0) if size_bytes is None else np.asarray(size_bytes, float)
    dl = np.full(n, np.nan) if deadline_s is None else np.asarray(deadline_s, float)
    w = np.ones(n) if weight is None else np.asarray(weight, float)
    fct = finish - arrival + path_delay_s
    ideal = np.full(n, 0.5) if ideal_fct_s is None else np.asarray(ideal_fct_s, float)
    if deadline_met is None:
        met = [NA if np.isnan(d) else (not t and f <= d) for d, t, f in zip(dl, term, fct, strict=True)]
    else:
        met = list(deadline_met)
    return pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64) if ids is None else np.asarray(ids, np.int64),
            "arrival_s": arrival,
            "src": np.zeros(n, np.int64),
            "dst": np.ones(n, np.int64),
            "size_bytes": size,
            "deadline_s": dl,
            "weight": w,
            "finish_s": finish,
            "fct_s": fct,
            "ideal_fct_s": ideal,
            "slowdown": fct / ideal,
            "deadline_met": pd.array(met, dtype="boolean"),
            "terminated": term,
            "bytes_sent": np.where(term, size / 2, size),
        }
    )


# ---------------------------------------------------------------------------
# buckets
# ---------------------------------------------------------------------------


def test_default_bucket_labels():
    assert DEFAULT_BUCKETS_BYTES == (100_000, 10_000_000)
    assert bucket_labels() == ["< 100 KB", "100 KB - 10 MB", ">= 10 MB"]


def test_custom_bucket_labels_and_formatting():
    assert bucket_labels((1000, 1_500_000, 2e9)) == [
        "< 1 KB",
        "1 KB - 1.5 MB",
        "1.5 MB - 2 GB",
        ">= 2 GB",
    ]
    assert bucket_labels([512]) == ["< 512 B", ">= 512 B"]
    assert bucket_labels(()) == ["all sizes"]
    assert format_bytes(999) == "999 B"
    assert format_bytes(12_345) == "12.345 KB"
    assert format_bytes(3e12) == "3 TB"


@pytest.mark.parametrize("edges", [(10, 10), (100, 10), (0, 10), (-1,), (np.inf,), (np.nan,)])
def test_invalid_bucket_edges(edges):
    with pytest.raises(ValueError):
        bucket_labels(edges)


def test_bucket_boundaries_are_left_closed():
    sizes = [0, 99_999, 100_000, 100_001, 9_999_999, 10_000_000, 5e9]
    cats = assign_buckets(sizes)
    assert list(cats.categories) == bucket_labels()
    assert list(cats) == [
        "< 100 KB",
        "< 100 KB",
        "100 KB - 10 MB",
        "100 KB - 10 MB",
        "100 KB - 10 MB",
        ">= 10 MB",
        ">= 10 MB",
    ]


def test_summary_bucket_counts_boundaries_and_empty_bucket():
    flows = make_flows(
        [0, 0, 0, 0],
        [1, 2, 3, 4],
        size_bytes=[99_999, 100_000, 100_000, 10_000_000],
    )
    s = summarize(flows, buckets=(100_000, 10_000_000, 1e9))
    assert list(s.by_bucket.index) == ["< 100 KB", "100 KB - 10 MB", "10 MB - 1 GB", ">= 1 GB"]
    assert s.by_bucket.index.name == "bucket"
    assert s.by_bucket["count"].tolist() == [1, 2, 1, 0]
    assert s.by_bucket.loc["100 KB - 10 MB", "fct_mean_s"] == pytest.approx(2.5)
    empty = s.by_bucket.loc[">= 1 GB"]
    assert empty["finished"] == 0
    assert math.isnan(empty["fct_mean_s"])
    assert math.isnan(empty["fct_p99_s"])
    assert math.isnan(empty["deadline_hit_ratio"])
    assert empty["fpt_s"] == 0.0
    assert s.by_bucket["count"].sum() == s.overall["count"] == 4


# ---------------------------------------------------------------------------
# FPT / WFPT / total FCT
# ---------------------------------------------------------------------------


def test_fpt_wfpt_and_total_fct_exact():
    # Two finished flows and one terminated one; path delay 0.25 s is in fct_s
    # but not in finish_s (the end time e_i of the aSCC paper).
    flows = make_flows(
        arrival_s=[0.0, 1.0, 0.5],
        finish_s=[2.0, 4.0, np.nan],
        weight=[1.0, 2.0, 10.0],
        deadline_s=[np.nan, np.nan, 1.0],
        terminated=[False, False, True],
        path_delay_s=0.25,
    )
    o = summarize(flows).overall
    assert o["count"] == 3 and o["finished"] == 2 and o["terminated"] == 1
    # FPT = sum e_i = 2 + 4; WFPT = 1*2 + 2*4
    assert o["fpt_s"] == 6.0
    assert o["wfpt_s"] == 10.0
    # total FCT = sum fct_i = 2.25 + 3.25; weighted = 1*2.25 + 2*3.25
    assert o["total_fct_s"] == 5.5
    assert o["weighted_total_fct_s"] == 8.75
    # Theorem 2: FPT - total FCT does not depend on the schedule
    assert o["fpt_s"] - o["total_fct_s"] == pytest.approx((0.0 - 0.25) + (1.0 - 0.25))
    assert o["fct_mean_s"] == 2.75


# ---------------------------------------------------------------------------
# deadlines
# ---------------------------------------------------------------------------


def test_deadline_hit_ratio_with_na_and_terminated():
    flows = make_flows(
        arrival_s=[0, 0, 0, 0, 0, 0],
        finish_s=[1, 3, 1, np.nan, 1, np.nan],
        deadline_s=[2, 2, np.nan, 2, 2, 2],
        terminated=[False, False, False, True, False, True],
        # explicit: met, missed, no deadline, terminated, met, and a terminated
        # flow inconsistently flagged as met: terminated always counts as missed
        deadline_met=[True, False, NA, False, True, True],
    )
    o = summarize(flows).overall
    assert o["deadline_flows"] == 5
    assert o["deadline_met"] == 2
    assert o["deadline_hit_ratio"] == pytest.approx(2 / 5)


def test_deadline_hit_ratio_nan_without_deadlines():
    flows = make_flows([0, 1], [1, 2])
    o = summarize(flows).overall
    assert o["deadline_flows"] == 0
    assert math.isnan(o["deadline_hit_ratio"])


def test_deadline_met_as_object_column():
    flows = make_flows([0, 0, 0], [1, 3, 1], deadline_s=[2, 2, np.nan])
    flows["deadline_met"] = pd.Series([True, False, None], dtype=object)
    assert summarize(flows).overall["deadline_hit_ratio"] == 0.5


# ---------------------------------------------------------------------------
# quantiles
# ---------------------------------------------------------------------------


def test_quantiles_hand_computed():
    flows = make_flows([0, 0, 0, 0], [1, 2, 3, 4], ideal_fct_s=[1, 1, 1, 1])
    o = summarize(flows).overall
    # numpy "linear": position q*(n-1) in the sorted sample
    assert o["fct_p50_s"] == pytest.approx(2.5)
    assert o["fct_p95_s"] == pytest.approx(3.85)
    assert o["fct_p99_s"] == pytest.approx(3.97)
    assert o["fct_p99.9_s"] == pytest.approx(3.997)
    assert o["slowdown_p50"] == pytest.approx(2.5)
    assert o["slowdown_mean"] == pytest.approx(2.5)


def test_quantiles_match_numpy_and_skip_terminated():
    rng = np.random.default_rng(7)
    n = 500
    arrival = rng.uniform(0, 1, n)
    fct = rng.lognormal(-6, 1.5, n)
    term = rng.random(n) < 0.1
    flows = make_flows(
        arrival, arrival + fct, terminated=term, deadline_s=np.where(term, 1.0, np.nan),
        size_bytes=rng.choice([1e3, 1e6, 1e8], n),
    )
    qs = (0.1, 0.5, 0.9, 0.999)
    s = summarize(flows, quantiles=qs)
    kept = fct[~term]
    for q in qs:
        assert s.overall[f"fct_{quantile_label(q)}_s"] == pytest.approx(np.quantile(kept, q), rel=1e-12)
    assert s.overall["fct_mean_s"] == pytest.approx(kept.mean(), rel=1e-12)
    sizes = flows["size_bytes"].to_numpy()
    small = fct[~term & (sizes < 100_000)]
    assert s.by_bucket.loc["< 100 KB", "fct_p90_s"] == pytest.approx(np.quantile(small, 0.9), rel=1e-12)
    assert s.overall["terminated"] == term.sum()


def test_quantile_labels_and_validation():
    assert quantile_label(0.5) == "p50"
    assert quantile_label(0.999) == "p99.9"
    assert quantile_label(0.9999) == "p99.99"
    flows = make_flows([0], [1])
    with pytest.raises(ValueError):
        summarize(flows, quantiles=(1.5,))


# ---------------------------------------------------------------------------
# Little's law, throughput, utilization
# ---------------------------------------------------------------------------


def _time_average_active(intervals, t0, t1, steps=3000):
    """Time average of the number of active flows, on a midpoint grid."""
    t = t0 + (np.arange(steps) + 0.5) * (t1 - t0) / steps
    return float(np.mean([sum(a <= x < b for a, b in intervals) for x in t]))


def test_mean_active_flows_littles_law():
    # A in system [0, 2], B [1, 3], C terminated at its deadline: [0.5, 1.5].
    flows = make_flows(
        arrival_s=[0.0, 1.0, 0.5],
        finish_s=[2.0, 3.0, np.nan],
        deadline_s=[np.nan, np.nan, 1.0],
        terminated=[False, False, True],
        path_delay_s=0.1,  # not counted as time in system
    )
    s = summarize(flows)
    assert s.overall["duration_s"] == 3.0  # first arrival 0 to last finish 3
    # N(t): 1 on [0,0.5), 2 on [0.5,1), 3 on [1,1.5), 2 on [1.5,2), 1 on [2,3)
    # integral = 0.5 + 1 + 1.5 + 1 + 1 = 5 = sum of times in system (2 + 2 + 1)
    assert s.overall["mean_active_flows"] == pytest.approx(5 / 3)
    assert s.overall["mean_active_flows"] == pytest.approx(
        _time_average_active([(0, 2), (1, 3), (0.5, 1.5)], 0.0, 3.0), abs=2e-3
    )
    assert s.overall["finished_per_s"] == pytest.approx(2 / 3)
    # explicit span
    s2 = summarize(flows, duration_s=5.0)
    assert s2.overall["mean_active_flows"] == pytest.approx(1.0)
    assert s2.overall["finished_per_s"] == pytest.approx(0.4)
    # buckets share the run's span, so they add up
    assert s.by_bucket["mean_active_flows"].sum() == pytest.approx(5 / 3)


def test_utilization():
    flows = make_flows([0.0, 0.5], [1.0, 2.0])
    links = pd.DataFrame(
        {"link": ["up0", "tor0-spine1"], "capacity_Bps": [100.0, 300.0], "bytes": [100.0, 60.0]}
    )
    s = summarize(flows, links=links)  # duration inferred: 2 s
    assert s.overall["duration_s"] == 2.0
    assert s.links is not None
    assert s.links["utilization"].tolist() == pytest.approx([0.5, 0.1])
    assert s.links["link"].tolist() == ["up0", "tor0-spine1"]
    assert s.overall["aggregate_utilization"] == pytest.approx(160 / (400 * 2))
    assert s.overall["max_link_utilization"] == pytest.approx(0.5)
    assert "utilization" not in links.columns  # input not modified
    s4 = summarize(flows, links=links, duration_s=4.0)
    assert s4.overall["aggregate_utilization"] == pytest.approx(0.1)
    assert summarize(flows).links is None
    assert "aggregate_utilization" not in summarize(flows).overall


# ---------------------------------------------------------------------------
# Summary object
# ---------------------------------------------------------------------------


def test_summary_frame_dict_and_str():
    flows = make_flows(
        [0, 0, 1],
        [0.002, 0.004, 1.5],
        size_bytes=[1e3, 2e5, 2e7],
        deadline_s=[0.01, 0.01, np.nan],
    )
    links = pd.DataFrame({"link": ["up0"], "capacity_Bps": [1e6], "bytes": [3e5]})
    s = summarize(flows, links=links)
    assert isinstance(s, Summary)

    frame = s.to_frame()
    assert list(frame.index) == ["all", "< 100 KB", "100 KB - 10 MB", ">= 10 MB"]
    assert frame.index.name == "bucket"
    assert frame.loc["all", "count"] == 3
    assert frame["count"].dtype.kind == "i"
    assert math.isnan(frame.loc["< 100 KB", "aggregate_utilization"])
    assert frame.loc["all", "fct_p50_s"] == pytest.approx(0.004)

    d = s.to_dict()
    assert set(d) == {"overall", "by_bucket", "links", "quantiles"}
    assert d["overall"]["count"] == 3 and isinstance(d["overall"]["count"], int)
    assert d["by_bucket"][">= 10 MB"]["fct_mean_s"] == pytest.approx(0.5)
    assert d["links"][0]["link"] == "up0"
    json.dumps(d)  # plain Python types only

    text = str(s)
    assert "FCT p99.9 (ms)" in text
    assert "deadline hit (%)" in text
    assert "aggregate utilization" in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("metric"))
    assert header.rstrip().endswith(">= 10 MB")
    # FCT mean of all = (2 + 4 + 500) / 3 ms, printed in ms
    fct_line = next(line for line in lines if line.startswith("FCT mean (ms)"))
    assert f"{(2 + 4 + 500) / 3:.3f}" in fct_line
    # right-aligned columns: every table row has the same width before rstrip
    table = lines[lines.index(header):]
    assert len({len(line) for line in table}) == 1


def test_empty_flows():
    flows = make_flows([], [])
    s = summarize(flows)
    assert s.overall["count"] == 0
    assert math.isnan(s.overall["fct_mean_s"])
    assert math.isnan(s.overall["mean_active_flows"])
    str(s)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_missing_columns_are_named():
    flows = make_flows([0], [1]).drop(columns=["fct_s", "deadline_met"])
    with pytest.raises(ValueError, match="fct_s.*deadline_met|deadline_met.*fct_s"):
        summarize(flows)
    good = make_flows([0], [1])
    with pytest.raises(ValueError, match="capacity_Bps"):
        summarize(good, links=pd.DataFrame({"link": ["a"], "bytes": [1.0]}))
    with pytest.raises(ValueError, match="reference.*terminated"):
        compare(good, good.drop(columns=["terminated"]))
    assert set(FLOW_COLUMNS_SUMMARY) <= set(good.columns)


# ---------------------------------------------------------------------------
# compare (SCHED_TCP Table 2)
# ---------------------------------------------------------------------------


def _pair(ref_fct, new_fct, *, sizes=None, new_term=None, ref_term=None):
    n = len(ref_fct)
    arrival = np.arange(n, dtype=float)
    ref = make_flows(arrival, arrival + np.asarray(ref_fct), size_bytes=sizes, terminated=ref_term)
    new = make_flows(arrival, arrival + np.asarray(new_fct), size_bytes=sizes, terminated=new_term)
    return new, ref


def test_compare_table2_definitions():
    # 3 flows faster by 1 s, 1 slower by 28 ms, 1 equal within tolerance,
    # 1 terminated under the tested policy (excluded).
    ref_fct = [2.0, 3.0, 4.0, 1.0, 1.0, 1.0]
    new_fct = [1.0, 2.0, 3.0, 1.028, 1.0 + 1e-12, 0.5]
    sizes = [1e3, 1e3, 1e3, 2e7, 2e5, 2e5]
    new, ref = _pair(ref_fct, new_fct, sizes=sizes, new_term=[0, 0, 0, 0, 0, 1])
    ref = ref.sample(frac=1.0, random_state=3)  # matching is by id, not by row
    c = compare(new, ref)
    o = c["overall"]
    assert o["count"] == 6
    assert o["compared"] == 5
    assert o["excluded_terminated"] == 1
    assert o["terminated"] == 1 and o["terminated_reference"] == 0
    assert (o["faster"], o["slower"], o["equal"]) == (3, 1, 1)
    assert o["faster_pct"] == pytest.approx(60.0)
    assert o["slower_pct"] == pytest.approx(20.0)
    assert o["equal_pct"] == pytest.approx(20.0)
    assert o["mean_gain_s"] == pytest.approx(-1.0)
    assert o["mean_loss_s"] == pytest.approx(0.028)
    assert o["mean_diff_s"] == pytest.approx((-3 + 0.028 + 1e-12) / 5)

    b = c["by_bucket"]
    assert list(b.index) == bucket_labels()
    assert b.loc["< 100 KB", "faster_pct"] == 100.0
    assert b.loc["< 100 KB", "mean_gain_s"] == pytest.approx(-1.0)
    assert math.isnan(b.loc["< 100 KB", "mean_loss_s"])
    assert b.loc[">= 10 MB", "slower_pct"] == 100.0
    assert b.loc[">= 10 MB", "mean_loss_s"] == pytest.approx(0.028)
    assert b.loc["100 KB - 10 MB", "equal"] == 1
    assert b.loc["100 KB - 10 MB", "excluded_terminated"] == 1
    assert b["count"].sum() == 6


def test_compare_reproduces_srpt_row_of_table2():
    # SRPT vs tcp in Table 2: 88.8 % faster, 3.2 % slower, 8 % equal,
    # mean gain -1.11 s, mean loss +28 ms.
    ref_fct = np.full(1000, 5.0)
    new_fct = np.concatenate([np.full(888, 5.0 - 1.11), np.full(32, 5.028), np.full(80, 5.0)])
    new, ref = _pair(ref_fct, new_fct)
    o = compare(new, ref)["overall"]
    assert (o["faster_pct"], o["slower_pct"], o["equal_pct"]) == pytest.approx((88.8, 3.2, 8.0))
    assert o["mean_gain_s"] == pytest.approx(-1.11)
    assert o["mean_loss_s"] == pytest.approx(0.028)


def test_compare_tolerances():
    new, ref = _pair([1.0, 1.0], [1.0 + 5e-7, 1.0 - 5e-7])
    assert compare(new, ref)["overall"]["equal"] == 0
    o = compare(new, ref, atol_s=1e-6)["overall"]
    assert o["equal"] == 2 and math.isnan(o["mean_gain_s"])
    assert compare(new, ref, rtol=1e-6, atol_s=0)["overall"]["equal_pct"] == 100.0


def test_compare_reference_terminated_and_all_excluded():
    new, ref = _pair([1.0, 1.0], [0.5, 0.5], ref_term=[1, 1])
    o = compare(new, ref)["overall"]
    assert o["compared"] == 0 and o["terminated_reference"] == 2
    assert math.isnan(o["faster_pct"]) and math.isnan(o["mean_gain_s"])


def test_compare_id_mismatch_names_ids():
    new, ref = _pair([1.0] * 10, [1.0] * 10)
    ref = ref.assign(id=ref["id"] + 3)  # new has 0..9, ref has 3..12
    with pytest.raises(ValueError) as err:
        compare(new, ref)
    msg = str(err.value)
    assert "missing from flows: 10, 11, 12" in msg
    assert "missing from reference: 0, 1, 2" in msg


def test_compare_id_mismatch_truncates_list():
    new, ref = _pair([1.0] * 20, [1.0] * 20)
    with pytest.raises(ValueError, match=r"20 id\(s\) missing from reference: 0, 1, 2, 3, 4 and 15 more"):
        compare(new, ref.assign(id=ref["id"] + 100))


def test_compare_duplicate_ids_and_size_mismatch():
    new, ref = _pair([1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="duplicated"):
        compare(new.assign(id=[0, 0]), ref)
    with pytest.raises(ValueError, match="size_bytes"):
        compare(new.assign(size_bytes=[1.0, 2.0]), ref)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 10),  # arrival
            st.floats(1e-6, 5),  # time in system
            st.sampled_from([1.0, 99_999.0, 100_000.0, 5e6, 1e7, 1e9]),  # size
            st.booleans(),  # terminated
            st.floats(0.1, 3),  # weight
        ),
        min_size=1,
        max_size=30,
    )
)
def test_buckets_partition_overall(rows):
    arrival, dt, size, term, w = (np.array(x) for x in zip(*rows, strict=True))
    term = term.astype(bool)
    flows = make_flows(
        arrival, arrival + dt, size_bytes=size, terminated=term, weight=w,
        deadline_s=np.where(term, dt, np.nan),
    )
    s = summarize(flows)
    for key in ("count", "finished", "terminated", "deadline_flows", "deadline_met"):
        assert s.by_bucket[key].sum() == s.overall[key]
    for key in ("total_fct_s", "weighted_total_fct_s", "fpt_s", "wfpt_s", "mean_active_flows",
                "finished_per_s"):
        assert s.by_bucket[key].sum() == pytest.approx(s.overall[key], rel=1e-9, abs=1e-12)
    # Little's law against a direct time average
    span = np.max(arrival + dt) - arrival.min()  # > 0 since dt > 0
    assert s.overall["duration_s"] == pytest.approx(span)
    assert s.overall["mean_active_flows"] == pytest.approx(dt.sum() / span, rel=1e-9)
    c = compare(flows, flows.assign(fct_s=flows["fct_s"] * 1.5))
    o = c["overall"]
    if o["compared"]:
        assert o["faster_pct"] + o["slower_pct"] + o["equal_pct"] == pytest.approx(100.0)
        assert o["faster"] == o["compared"]


# ---------------------------------------------------------------------------
# one deadline test: evaluation's per-flow hits are the env's info
# ---------------------------------------------------------------------------


def _play(env, policy, seed=None):
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        action, _ = policy.predict(obs)
        obs, _, done, _, info = env.step(action)
    return info


def test_deadline_met_tolerance_and_na():
    from flowsched.metrics import DEADLINE_RTOL, deadline_met

    met = deadline_met([1.0, 1.0 + 0.5 * DEADLINE_RTOL, 1.0 + 2 * DEADLINE_RTOL, np.nan, 0.5, 0.5],
                       [1.0, 1.0, 1.0, 1.0, np.nan, 1.0], [False, False, False, False, False, True])
    assert met.tolist() == [True, True, False, False, pd.NA, False]
    assert str(met.dtype) == "boolean"


def test_evaluation_deadline_hits_equal_the_env_info():
    """agents.evaluation counts a flow's deadline as the env's info does, on the same episodes,
    including a flow that finishes after its deadline by less than the tolerance."""
    from flowsched import baselines
    from flowsched.agents.evaluation import episode_flows, episode_metrics
    from flowsched.envs import TokenSchedulingEnv
    from flowsched.metrics import DEADLINE_RTOL

    policy = baselines.make("token", "edf")
    env = TokenSchedulingEnv(burst_rate_hz=30.0, n_bursts=10)  # load 0.72: deadlines are missed
    for seed in range(5):
        info = _play(env, policy, seed)
        f = episode_flows(env)
        assert int(f["deadline_met"].sum()) == info["deadlines_met"]
        assert int(f["deadline_met"].notna().sum()) == info["flows_with_deadline"]
        assert episode_metrics(f)["mean_fct_ms"] == pytest.approx(info["mean_fct_s"] * 1e3, rel=1e-12)
        assert 0 < info["deadlines_met"] < info["flows_with_deadline"]

    # a fixed trace; then flow 0's deadline is moved just below its FCT, within the tolerance
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0, 0.001, 0.002], "src": [1, 2, 3, 1], "dst": [0, 0, 0, 0],
                       "size_bytes": [3e5, 2e5, 1e5, 4e5], "deadline_s": [0.05, 0.003, 0.04, np.nan]})
    fifo = baselines.make("token", "fifo")
    env = TokenSchedulingEnv(trace=tr, k=2, window=2)
    _play(env, fifo)
    fct0 = float(env.episode()["fct_s"].iloc[0])
    tr.loc[0, "deadline_s"] = fct0 / (1 + DEADLINE_RTOL / 2)
    env = TokenSchedulingEnv(trace=tr, k=2, window=2)
    info = _play(env, fifo)
    f = episode_flows(env)
    assert f["fct_s"].iloc[0] == fct0 and fct0 > tr["deadline_s"].iloc[0]  # late, within the tolerance
    assert f["fct_s"].iloc[1] > 0.003
    assert f["deadline_met"].tolist() == [True, False, True, pd.NA]
    assert (info["deadlines_met"], info["flows_with_deadline"]) == (2, 3)
