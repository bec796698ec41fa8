"""Issue 22 item 3: the learning curve of train.py (learning_curve.csv / .png, report.md) and
the run logs (train.log, evaluate.log) through Hydra's job logging.

The fast tests run train.py with a fake trainer (it learns nothing, its policy is the
token rule fifo), so they check the loop, the files and the logging without training; a
real SB3 run is marked slow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from flowsched import baselines
from flowsched.agents.logs import LearningCurve, learning_curve_figure

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true",
       "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
FAKE = "test_learning_curve.FakeTrainer"
TINY = ["env.kwargs.n_bursts=2", "eval.episodes=3", "eval.final_episodes=2", "eval.baselines=[edf,lsdf]", "logger=none",
        "progress_bar=false", f"agent.trainer._target_={FAKE}", "checkpoint.every=100", "eval.every=100"]
COLUMNS = ["step", "wall_s", "episodes", "deadline_hit_ratio_mean", "deadline_hit_ratio_ci95"]


class FakeTrainer:
    """Learns nothing in 100-step iterations; checkpoints its step count in fake.json."""

    learns = True
    uses_masks = False

    def __init__(self, cfg, run_dir):
        self.cfg, self.run_dir, self.steps = cfg, Path(run_dir), 0

    @property
    def num_timesteps(self):
        return self.steps

    def start(self, logger):
        pass

    def load(self, logger):
        self.steps = json.loads((self.run_dir / "fake.json").read_text())["steps"]
        return self.run_dir / "fake.json"

    def learn(self, total_timesteps, loop):
        while self.steps < total_timesteps and not loop.stop_requested():
            self.steps += 100
            loop.progress(self.steps)

    def save(self, final=False):
        path = self.run_dir / ("final.json" if final else "fake.json")
        path.write_text(json.dumps({"steps": self.steps}))
        return path

    def policy(self):
        return baselines.make("token", "fifo")

    def close(self):
        pass


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, str(ROOT / name), *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                       timeout=180)
    assert p.returncode == 0, f"{name} {' '.join(args)} failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    cwd = tmp_path_factory.mktemp("curve")
    p = script("train.py", *TINY, "total_timesteps=300", "hydra.run.dir=run", cwd=cwd)
    return cwd / "run", p


def test_train_writes_the_learning_curve(fake_run):
    rd, _ = fake_run
    curve = pd.read_csv(rd / "learning_curve.csv")
    assert list(curve.columns[:5]) == COLUMNS
    assert {"return_mean", "return_ci95", "masked_action_rate_mean"} <= set(curve.columns)
    assert curve["step"].tolist() == [0, 100, 200, 300]  # from the untrained policy to the final weights
    assert curve["wall_s"].is_monotonic_increasing and (curve["episodes"] == 3).all()
    assert curve["deadline_hit_ratio_ci95"].notna().all()
    base = pd.read_csv(rd / "learning_curve_baselines.csv")
    assert base["policy"].tolist() == ["edf", "lsdf"] and list(base.columns[:4]) == ["policy", *COLUMNS[2:]]
    # the fake trainer plays fifo: on the same episodes its curve is fifo's, flat
    assert curve["deadline_hit_ratio_mean"].nunique() == 1
    assert (rd / "learning_curve.png").stat().st_size > 10_000
    report = (rd / "report.md").read_text()
    assert "![learning curve](learning_curve.png)" in report and "(learning_curve.csv)" in report
    assert "| maskable_ppo |" in report and "| edf |" in report


def test_learning_curve_figure_axes(fake_run):
    rd, _ = fake_run
    from omegaconf import OmegaConf

    from flowsched.agents.training import run_title

    cfg = OmegaConf.load(rd / ".hydra" / "config.yaml")
    title = run_title(cfg)
    for part in ("flowsched/TokenScheduling-v1", "artemis_a1", "load 0.24", "BigSwitch", "maskable_ppo", "seed 0"):
        assert part in title
    curve, base = pd.read_csv(rd / "learning_curve.csv"), pd.read_csv(rd / "learning_curve_baselines.csv")
    fig = learning_curve_figure(curve, base, "deadline_hit_ratio", "maskable_ppo", title)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "env steps"
    assert ax.get_ylabel() == "deadline_hit_ratio (mean of 3 held-out episodes)"
    assert ax.get_title() == title
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [s.split()[0] for s in labels] == ["edf", "lsdf", "maskable_ppo"]
    assert ax.get_legend().get_title().get_text() == "mean ± 95% CI"
    lines = {ln.get_label().split()[0]: ln for ln in ax.get_lines()}
    assert list(lines["maskable_ppo"].get_xdata()) == [0, 100, 200, 300]
    # a baseline is a horizontal line at its mean
    assert set(lines["edf"].get_ydata()) == {base.loc[0, "deadline_hit_ratio_mean"]}
    lo, hi = ax.get_ylim()
    assert -0.005 <= lo < hi <= 1.005  # a ratio's axis stays within [0, 1]
    assert len(ax.collections) >= 1  # the agent's CI band


def test_train_log_and_console(fake_run):
    rd, p = fake_run
    log = (rd / "train.log").read_text()
    assert "[flowsched.agents.training][INFO] - [eval] step 100: deadline_hit_ratio = " in log
    assert "[eval] baselines on 3 held-out episodes" in log and "Held-out evaluation: 2 episodes" in log
    assert "run directory: " in log and "matplotlib" not in log
    # the console shows the bare messages, as the scripts printed them
    assert "\n[eval] step 200: deadline_hit_ratio = " in p.stdout and "[INFO]" not in p.stdout
    assert "Held-out evaluation" in p.stdout and "policy" in p.stdout


def test_resume_continues_the_curve_and_the_log(fake_run, tmp_path):
    rd, _ = fake_run
    import shutil

    run = tmp_path / "run"
    shutil.copytree(rd, run)
    # as if the run had been interrupted after its checkpoint at 200 and had evaluated beyond it
    (run / "fake.json").write_text(json.dumps({"steps": 200}))
    p = script("train.py", f"resume={run}", "total_timesteps=500", "hydra.run.dir=resumed", cwd=tmp_path)
    curve = pd.read_csv(run / "learning_curve.csv")
    assert curve["step"].tolist() == [0, 100, 200, 300, 400, 500]  # rows past the checkpoint replaced, no duplicate
    assert curve["wall_s"].is_monotonic_increasing
    log = (run / "train.log").read_text()
    assert log.count("[eval] step 100:") == 1 and "Resuming" in log and "[eval] step 500:" in log
    assert "Loaded" in p.stdout and json.loads((run / "run.json").read_text())["num_timesteps"] == 500


def test_learning_curve_keeps_rows_up_to_the_checkpoint(tmp_path):
    summary = {"episodes": 2, "deadline_hit_ratio_mean": 0.5, "deadline_hit_ratio_ci95": 0.1, "return_mean": 1.0}
    c = LearningCurve(tmp_path, "deadline_hit_ratio", "agent", "title")
    c.set_baselines({"fifo": summary})
    for step in (0, 100, 200, 300):
        c.add(step, step / 10, summary)
    c = LearningCurve(tmp_path, "deadline_hit_ratio", "agent", "title", keep_until=200)
    assert c.last_wall_s == 20.0
    c.set_baselines({"fifo": summary})
    c.add(250, 30.0, summary)
    c.add(250, 31.0, summary)  # the same step again replaces the row
    curve = pd.read_csv(tmp_path / "learning_curve.csv")
    assert curve["step"].tolist() == [0, 100, 200, 250] and curve["wall_s"].iloc[-1] == 31.0


def test_evaluate_writes_its_log(tmp_path):
    p = script("evaluate.py", "policies=[fifo,edf]", "seeds=2", "env.kwargs.n_bursts=2", "hydra.run.dir=ev",
               cwd=tmp_path)
    log = (tmp_path / "ev" / "evaluate.log").read_text()
    assert "[flowsched.agents.report][INFO] - Evaluating 2 policies x 1 cells x 2 seeds" in log
    assert "mean ± 95% CI across seeds" in log and "\npolicy" in log and "wrote " in log
    assert "matplotlib" not in log and "font" not in log
    assert "Evaluating 2 policies" in p.stdout and "[INFO]" not in p.stdout


@pytest.mark.slow
def test_sb3_smoke_run_learning_curve(tmp_path):
    script("train.py", "experiment=smoke", "eval.baselines=[fifo]", "hydra.run.dir=run", cwd=tmp_path)
    curve = pd.read_csv(tmp_path / "run" / "learning_curve.csv")
    assert curve["step"].tolist() == [0, 1024, 2048] and list(curve.columns[:5]) == COLUMNS
    assert "[eval] step 1024" in (tmp_path / "run" / "train.log").read_text()
    assert (tmp_path / "run" / "learning_curve.png").is_file()


@pytest.mark.slow
def test_rllib_run_learning_curve(tmp_path):
    pytest.importorskip("ray")
    script("train.py", "agent=rllib_ppo", "total_timesteps=400", "agent.algo.train_batch_size=200",
           "agent.algo.minibatch_size=100", "agent.num_env_runners=0", "eval.every=200", "eval.episodes=2",
           "eval.final_episodes=2", "eval.baselines=[fifo]", "env.kwargs.n_bursts=2", "checkpoint.every=0",
           "logger=none", "ray.num_cpus=2", "hydra.run.dir=run", cwd=tmp_path)
    curve = pd.read_csv(tmp_path / "run" / "learning_curve.csv")
    assert curve["step"].iloc[0] == 0 and curve["step"].is_monotonic_increasing and len(curve) >= 2
    assert (tmp_path / "run" / "learning_curve.png").is_file()
