"""Evaluation figures (issue 22, item 2), checked by their axes, not their pixels: a small
run (3 seeds, 2-burst episodes, two loads) renders every figure."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hydra import compose, initialize_config_module

from flowsched.agents.evaluation import (
    bucket_episode_metrics,
    cell_title,
    draw_figures,
    evaluate_grid,
    fig_by_size,
    fig_fct_cdf,
    fig_paired,
    fig_vs_load,
    fig_vs_load_by_size,
    paired_differences,
    resolve_policies,
    short_labels,
)
from flowsched.agents.report import settings_text

LONG = "maskable_ppo@token-20261126-113000:step_2048"  # a checkpoint's label, too long for a tick


@pytest.fixture(scope="module")
def run():
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        cfg = compose(config_name="evaluate", overrides=["env.kwargs.n_bursts=2"])
    specs = resolve_policies(["fifo", "edf", "ssdf"], "token")
    cells = [("artemis_a1", cfg.workload, 0.5), ("artemis_a1", cfg.workload, 0.72)]
    results, flows = evaluate_grid(specs, cfg, cells, [0, 1, 2])
    # the third policy as a checkpoint would be labelled
    results["policy"] = results["policy"].replace("ssdf", LONG)
    flows["policy"] = flows["policy"].replace("ssdf", LONG)
    return cfg, results, flows


def _texts(labels) -> list[str]:
    return [t.get_text() for t in labels]


def test_settings_in_every_title(run, tmp_path):
    cfg, results, flows = run
    settings = settings_text(cfg)
    assert settings == "BigSwitch 11 hosts x 1 Gb/s, fluid model (ps), flowsched/TokenScheduling-v1"
    artemis = cfg.copy()
    artemis.env.id = "flowsched/TokenScheduling-Artemis-v0"  # the packet model by its registered defaults
    assert settings_text(artemis) == (
        "BigSwitch 11 hosts x 1 Gb/s, packet model (tcp), flowsched/TokenScheduling-Artemis-v0")
    paths = draw_figures(results, flows, tmp_path, "deadline_hit_ratio", settings=settings, metrics=["p99_fct_ms"])
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "deadline_hit_ratio_paired_artemis_a1_load0.5.png",
            "p99_fct_ms_paired_artemis_a1_load0.5.png",
            "fct_cdf_artemis_a1_load0.5.png",
            "by_size_artemis_a1_load0.5.png",
            "deadline_hit_ratio_paired_artemis_a1_load0.72.png",
            "p99_fct_ms_paired_artemis_a1_load0.72.png",
            "fct_cdf_artemis_a1_load0.72.png",
            "by_size_artemis_a1_load0.72.png",
            "vs_load_artemis_a1.png",
            "vs_load_by_size_artemis_a1.png",
        ]
    )
    assert all(p.stat().st_size < 200_000 for p in paths)


def test_paired_dot_and_whisker(run):
    _, results, _ = run
    p = paired_differences(results, ["deadline_hit_ratio", "mean_fct_ms"], "fifo")
    cell = p[p.load == 0.72]
    fig = fig_paired(cell, "mean_fct_ms", "fifo", cell_title("artemis_a1", 0.72, "S"))
    ax = fig.axes[0]
    assert fig._suptitle.get_text() == "workload artemis_a1, effective load 0.72, S"
    ticks = _texts(ax.get_yticklabels())
    assert ticks == ["fifo (ref)", "edf", "maskable_ppo#1"][::-1] or sorted(ticks) == sorted(
        ["fifo (ref)", "edf", "maskable_ppo#1"]
    )
    lo, hi = ax.get_xlim()
    assert lo == pytest.approx(-hi) and hi > 0  # symmetric: zero in the middle
    r = cell.set_index("policy")
    assert hi >= (r["mean_fct_ms_diff_mean"].abs() + r["mean_fct_ms_diff_ci95"].fillna(0)).max()
    zero = [line for line in ax.get_lines() if list(line.get_xdata()) == [0, 0]]
    assert zero, "the zero line (the reference) is drawn"
    assert "lower is better" in ax.get_xlabel()
    assert _texts(ax.get_legend().get_texts()) == ["reference: fifo", "mean paired Δ, 95% CI"]
    assert any(LONG in t.get_text() and "maskable_ppo#1" in t.get_text() for t in fig.texts)  # the label map


def test_fct_cdf_log_ticks_and_p99(run):
    _, results, flows = run
    sel = flows[flows.load == 0.5]
    fig = fig_fct_cdf(sel, "T")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0, 1.01)
    fig.canvas.draw()
    minor = [t for t in _texts(ax.get_xticklabels(minor=True)) if t]
    assert len(minor) >= 2, minor  # readable log ticks: the minor ones are labelled
    legend = _texts(ax.get_legend().get_texts())
    assert legend[-1] == "p99" and len(legend) == 4
    for pol, entry in zip(["fifo", "edf", LONG], legend[:-1], strict=True):
        p99 = np.quantile(sel[sel.policy == pol]["fct_s"].dropna() * 1e3, 0.99)
        assert entry == f"{short_labels([pol])[pol]} (p99 {p99:.3g} ms)"
    assert any(list(line.get_ydata()) == [0.99] for line in ax.get_lines())  # p99 dots


def test_by_size_buckets_in_size_order(run):
    _, _, flows = run
    b = bucket_episode_metrics(flows)
    fig = fig_by_size(b[b.load == 0.5], "T")
    for ax in fig.axes:
        labels = _texts(ax.get_xticklabels())
        assert labels[0].startswith("<") and labels[-1].startswith(">=")
        assert ax.get_ylim()[0] == 0  # bars from zero
    assert _texts(fig.axes[0].get_legend().get_texts()) == ["fifo", "edf", "maskable_ppo#1"]


def test_metric_against_load(run):
    _, results, _ = run
    fig = fig_vs_load(results, ["deadline_hit_ratio"], "fifo", "T")
    left, right = fig.axes
    assert [float(t) for t in left.get_xticks()] == [0.5, 0.72]
    assert _texts(left.get_legend().get_texts()) == ["fifo", "edf", "maskable_ppo#1"]
    assert any(list(line.get_ydata()) == [0, 0] for line in right.get_lines())  # zero line
    assert "higher is better" in right.get_ylabel()
    assert len(left.containers) == 3  # one errorbar line per policy


def test_metric_against_load_by_size(run):
    _, _, flows = run
    b = bucket_episode_metrics(flows)
    buckets = [c for c in b["bucket"].cat.categories if (b["bucket"] == c).any()]
    assert len(buckets) >= 2
    fig = fig_vs_load_by_size(b, "T")
    assert len(fig.axes) == 3 * len(buckets)  # rows: mean FCT, p99 FCT, mean slowdown; a column per bucket
    rows = [fig.axes[i * len(buckets):(i + 1) * len(buckets)] for i in range(3)]
    for row, ylabel in zip(rows, ["mean FCT (ms)", "p99 FCT (ms)", "mean slowdown"], strict=True):
        assert [ax.get_title() for ax in row] == [f"{ylabel}, flows {c}" for c in buckets]  # size order
        for ax in row:
            assert ax.get_ylabel() == ylabel and ax.get_xlabel() == "effective load"
            assert [float(t) for t in ax.get_xticks()] == [0.5, 0.72]
            assert ax.get_ylim()[0] == 0
            assert len(ax.containers) == 3  # one errorbar line per policy
    assert rows[0][0].get_title().startswith("mean FCT (ms), flows <")
    assert rows[0][-1].get_title().startswith("mean FCT (ms), flows >=")
    assert _texts(fig.axes[0].get_legend().get_texts()) == ["fifo", "edf", "maskable_ppo#1"]
    # the points are the per-bucket means over episodes
    one = b[(b.policy == "fifo") & (b.bucket == buckets[0])]
    want = one.groupby("load")["mean_fct_ms"].mean().sort_index().to_numpy()
    line = fig.axes[0].containers[0].lines[0]
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), want)


def test_short_labels():
    assert short_labels(["fifo", LONG, LONG + "x"]) == {"fifo": "fifo", LONG: "maskable_ppo#1",
                                                        LONG + "x": "maskable_ppo#2"}
