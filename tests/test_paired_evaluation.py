"""Paired evaluation (issue 22, item 1): each policy's per-episode difference to a
reference policy, with a Student-t 95% CI and wins/ties/losses; per-size-bucket rows."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_module
from scipy import stats

from flowsched.agents.config_checks import ConfigError, check_evaluate_config
from flowsched.agents.evaluation import (
    PolicySpec,
    format_paired_table,
    higher_is_better,
    paired_differences,
    resolve_reference,
)


def cfg_of(*overrides: str):
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name="evaluate", overrides=list(overrides))


def _results() -> pd.DataFrame:
    rows = []
    ref = {0: 0.90, 1: 0.80, 2: 0.70, 3: 0.95}
    other = {0: 0.92, 1: 0.80, 2: 0.75, 3: 0.90}  # +0.02, 0, +0.05, -0.05
    for pol, vals in (("a", ref), ("b", other)):
        for seed in (3, 1, 0, 2) if pol == "b" else (0, 1, 2, 3):  # pairing is by seed, not by row order
            rows.append({"policy": pol, "workload": "w", "load": np.nan, "seed": seed, "deadline_hit_ratio": vals[seed],
                         "mean_fct_ms": 10 * vals[seed]})
    return pd.DataFrame(rows)


def test_paired_difference_ci_and_wins_ties_losses():
    p = paired_differences(_results(), ["deadline_hit_ratio", "mean_fct_ms"], "a")
    b = p[p.policy == "b"].iloc[0]
    d = np.array([0.02, 0.0, 0.05, -0.05])
    assert b["deadline_hit_ratio_diff_mean"] == pytest.approx(d.mean())
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / math.sqrt(4)
    assert b["deadline_hit_ratio_diff_ci95"] == pytest.approx(half)
    assert b["deadline_hit_ratio_diff_n"] == 4
    # higher is better for the hit ratio: 2 wins, 1 tie, 1 loss
    assert (b["deadline_hit_ratio_wins"], b["deadline_hit_ratio_ties"], b["deadline_hit_ratio_losses"]) == (2, 1, 1)
    # lower is better for the FCT: the same differences count the other way
    assert not higher_is_better("mean_fct_ms")
    # the switch env's metric (seconds): srpt beating fifo on it is a win, not a loss
    assert not higher_is_better("mean_fct_s") and not higher_is_better("p99_fct_s")
    assert higher_is_better("deadline_hit_ratio") and higher_is_better("return")
    assert (b["mean_fct_ms_wins"], b["mean_fct_ms_ties"], b["mean_fct_ms_losses"]) == (1, 1, 2)
    a = p[p.policy == "a"].iloc[0]  # the reference against itself: 0, all ties
    assert a["deadline_hit_ratio_diff_mean"] == 0 and a["deadline_hit_ratio_ties"] == 4
    assert pd.isna(p["load"]).all()  # the workload's own load (NaN) is paired and kept as NaN
    table = format_paired_table(p, ["deadline_hit_ratio", "mean_fct_ms"], "a")
    assert "Δ vs a" in table and "2/1/1" in table and "1/1/2" in table and "\na " not in table


def test_reference_default_and_unknown():
    specs = [PolicySpec("fifo", None, False, "fifo"), PolicySpec("edf", None, False, "edf")]  # type: ignore[arg-type]
    assert resolve_reference(None, specs) == "fifo"
    assert resolve_reference("edf", specs) == "edf"
    with pytest.raises(ConfigError, match=r"reference='ssdf' is not one of the evaluated policies: fifo, edf"):
        resolve_reference("ssdf", specs)
    check_evaluate_config(cfg_of("reference=edf"))
    with pytest.raises(ConfigError, match="reference"):
        check_evaluate_config(cfg_of("reference=[a,b]"))


def test_evaluate_writes_paired_summary_and_report(tmp_path):
    from flowsched.agents.report import evaluate

    cfg = cfg_of("policies=[fifo,edf,ssdf]", "reference=ssdf", "seeds=3", "env.kwargs.n_bursts=3", "figures=false")
    out = evaluate(cfg, tmp_path)
    assert out["reference"] == "ssdf"
    s = pd.read_csv(tmp_path / "summary.csv")
    whole = s[s.bucket == "all"]
    assert whole.policy.tolist() == ["fifo", "edf", "ssdf"]
    ref = whole[whole.policy == "ssdf"].iloc[0]
    assert ref["deadline_hit_ratio_diff_mean"] == 0 and ref["deadline_hit_ratio_ties"] == 3
    # the paired mean difference is the difference of the means (same episodes)
    for pol in ("fifo", "edf"):
        r = whole[whole.policy == pol].iloc[0]
        assert r["mean_fct_ms_diff_mean"] == pytest.approx(r["mean_fct_ms_mean"] - ref["mean_fct_ms_mean"])
        assert r["mean_fct_ms_wins"] + r["mean_fct_ms_ties"] + r["mean_fct_ms_losses"] == 3
    buckets = s[s.bucket != "all"]
    assert len(buckets) and set(buckets.policy) == {"fifo", "edf", "ssdf"}
    labels = list(dict.fromkeys(buckets.bucket))
    assert labels[0].startswith("<") and labels[-1].startswith(">=")  # size order, smallest first
    report = (tmp_path / "report.md").read_text()
    assert "Paired differences to the reference `ssdf`" in report and "paired Student t" in report
    assert "lower is better, so a win is a negative difference" in report and "## By flow size" in report


def test_unknown_reference_is_refused_before_running(tmp_path):
    from flowsched.agents.report import evaluate

    with pytest.raises(ConfigError, match=r"not one of the evaluated policies: fifo, edf"):
        evaluate(cfg_of("policies=[fifo,edf]", "reference=lsdf", "seeds=1", "env.kwargs.n_bursts=2"), tmp_path)


def test_evaluate_without_per_flow_outcomes_keeps_the_fct_metrics(tmp_path):
    # per_flow=false left only the env's own metrics (hit ratio, return): mean_fct_ms,
    # p99_fct_ms and the slowdowns were gone from the table and summary.csv
    from flowsched.agents.report import evaluate

    common = ("policies=[fifo,edf]", "seeds=2", "env.kwargs.n_bursts=3", "figures=false")
    evaluate(cfg_of(*common, "per_flow=false"), tmp_path / "a")
    evaluate(cfg_of(*common), tmp_path / "b")
    a = pd.read_csv(tmp_path / "a" / "summary.csv")
    b = pd.read_csv(tmp_path / "b" / "summary.csv")
    assert "mean_fct_ms_mean" in a.columns and "mean_slowdown_mean" in a.columns
    whole = b[b.bucket == "all"].reset_index(drop=True)
    cols = whole.columns.intersection(a.columns)
    pd.testing.assert_frame_equal(a[cols], whole[cols], check_dtype=False)  # (b has the size buckets too)
    assert not (tmp_path / "a" / "flows.parquet").exists() and (tmp_path / "b" / "flows.parquet").exists()
