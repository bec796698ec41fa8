"""Subprocess smoke runs of train.py and evaluate.py with tiny budgets, and resume."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}


def run(script: str, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, str(ROOT / script), *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, f"{script} {' '.join(args)} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def run_dirs(cwd: Path, pattern: str) -> list[Path]:
    return sorted(p.parent.parent for p in cwd.glob(f"{pattern}/.hydra/config.yaml"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path]:
    cwd = tmp_path_factory.mktemp("train")
    p = run("train.py", "experiment=smoke", "eval.baselines=[fifo,edf]", cwd=cwd)
    assert "Held-out evaluation" in p.stdout and "maskable_ppo" in p.stdout and "edf" in p.stdout
    (rd,) = run_dirs(cwd, "outputs/token-artemis_a1-maskable_ppo/*")
    return cwd, rd


def test_train_smoke(trained):
    _, rd = trained
    status = json.loads((rd / "run.json").read_text())
    assert status["status"] == "finished" and status["num_timesteps"] == 2048
    assert (rd / "model.zip").exists() and (rd / "checkpoints" / "step_1024.zip").exists()
    assert list((rd / "tb").glob("events.out.tfevents.*"))
    summary = pd.read_csv(rd / "eval_summary.csv")
    assert list(summary.policy) == ["maskable_ppo", "fifo", "edf"]
    assert summary["deadline_hit_ratio_n"].eq(3).all()


def test_evaluate_mixed(trained, tmp_path):
    _, rd = trained
    run("evaluate.py", f"policies=[fifo,ssdf,{rd}]", "seeds=2", "loads=[null,0.72]", "env.kwargs.n_bursts=5",
        "hydra.run.dir=ev", cwd=tmp_path)
    out = tmp_path / "ev"
    res = pd.read_parquet(out / "results.parquet")
    assert len(res) == 3 * 2 * 2 and res.policy.nunique() == 3
    flows = pd.read_parquet(out / "flows.parquet")
    # the per-flow deadline outcome agrees with the env's own episode statistics
    met = flows.groupby(["policy", "load", "seed"], sort=False)["deadline_met"].sum().to_numpy()
    assert (met == res["deadlines_met"].to_numpy()).all()
    # identical traces: every policy saw the same flows
    sizes = flows.groupby(["policy"])["size_bytes"].apply(lambda s: tuple(s.sort_values()))
    assert sizes.nunique() == 1
    summary = pd.read_csv(out / "summary.csv")
    assert {"deadline_hit_ratio_mean", "deadline_hit_ratio_ci95"} <= set(summary.columns)
    assert (out / "report.md").exists()
    # per cell (2 loads): the paired plots of the metric and of p99 FCT, the FCT CDF and the by-size bars
    figs = [p.name for p in (out / "figures").glob("*.png")]
    assert sum("_paired_" in n for n in figs) == 2 * 2
    assert sum(n.startswith("fct_cdf_") for n in figs) == 2 and sum(n.startswith("by_size_") for n in figs) == 2


def test_train_switch_and_baseline_agent(tmp_path):
    run("train.py", "experiment=switch", "env.kwargs.n_flows=40", "total_timesteps=256", "env.num_envs=2",
        "agent.model.n_steps=128", "agent.model.batch_size=128", "eval.baselines=[srpt]", "eval.every=0",
        "checkpoint.every=0", "eval.final_episodes=2", "logger=none", "progress_bar=false", cwd=tmp_path)
    p = run("train.py", "agent=edf", "experiment=smoke", "eval.baselines=[fifo]", cwd=tmp_path)
    assert "edf" in p.stdout and "fifo" in p.stdout


def test_train_thresholds_ppo_against_the_threshold_rules(tmp_path):
    p = run("train.py", "experiment=thresholds", "env.kwargs.n_flows=600", "env.kwargs.interval_flows=100",
            "total_timesteps=64", "agent.model.n_steps=32", "agent.model.batch_size=32", "eval.every=0",
            "checkpoint.every=0", "eval.final_episodes=2", "logger=none", "progress_bar=false", cwd=tmp_path)
    assert "pias_static" in p.stdout and "pias_optimal" in p.stdout and "ppo_mlp" in p.stdout


def test_resume_same_step_count(tmp_path):
    # 4 lanes x 128 steps: updates every 512 steps, so 5000 steps end at 5120 either way
    args = ["experiment=smoke", "total_timesteps=5000", "checkpoint.every=512", "eval.every=0", "eval.baselines=[fifo]",
            "eval.final_episodes=2", "logger=none", "hydra.run.dir=run"]
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *args], cwd=tmp_path, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ckpt = tmp_path / "run" / "checkpoints" / "step_512.zip"
    t0 = time.time()
    while not ckpt.exists() and proc.poll() is None and time.time() - t0 < 90:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    if status["status"] == "finished":
        pytest.skip("the run finished before the signal arrived")
    assert proc.returncode == 143, out  # 128 + SIGTERM
    assert status["status"] == "interrupted" and status["num_timesteps"] % 512 == 0 and status["num_timesteps"] < 5000
    assert Path(status["checkpoint"]).exists()
    run("train.py", f"resume={tmp_path / 'run'}", "hydra.run.dir=resumed", cwd=tmp_path)
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "finished" and status["num_timesteps"] == 5120
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(tmp_path / "run" / "model.zip").num_timesteps == 5120


def test_time_budget_ends_training_then_evaluates(tmp_path):
    p = run("train.py", "experiment=smoke", "total_timesteps=100000000", "time_budget_s=6", "checkpoint.every=0",
            "eval.every=0", "eval.baselines=[fifo]", "eval.final_episodes=2", "logger=none", "hydra.run.dir=run",
            cwd=tmp_path)
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "finished" and status["stopped_by"] == "time_budget"
    # whole updates only (4 lanes x 128 steps), far short of the step budget
    assert 0 < status["num_timesteps"] < 100000000 and status["num_timesteps"] % 512 == 0
    assert "Time budget of 6 s reached" in p.stdout and "Held-out evaluation" in p.stdout
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(tmp_path / "run" / "model.zip").num_timesteps == status["num_timesteps"]
