"""The one training loop (flowsched.agents.training.train) and its Trainer interface:
signals, the time budget, checkpoints, periodic and final evaluation are the loop's,
whatever trainer learns (a fake one here; SB3 and RLlib in test_train_smoke.py and
test_rllib.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

import flowsched.agents  # noqa: F401  (resolvers)
from flowsched import baselines
from flowsched.agents.training import DEFAULT_TRAINERS, RuleTrainer, Trainer, build_trainer, train


class FakeTrainer:
    """Learns nothing in 100-step "iterations"; its policy is the token rule fifo. Sends
    itself ``signal_at=(step, signum)`` when asked to."""

    learns = True
    uses_masks = False

    def __init__(self, cfg, run_dir, signal_at=None, step=100):
        self.cfg, self.run_dir, self.signal_at, self.step = cfg, Path(run_dir), signal_at, int(step)
        self.steps, self.saves, self.events = 0, [], []

    @property
    def num_timesteps(self):
        return self.steps

    def start(self, logger):
        self.events.append("start")

    def load(self, logger):
        self.steps = json.loads((self.run_dir / "fake.json").read_text())["steps"]
        return self.run_dir / "fake.json"

    def learn(self, total_timesteps, loop):
        while self.steps < total_timesteps:
            self.steps += self.step
            if self.signal_at and self.steps == self.signal_at[0]:
                os.kill(os.getpid(), self.signal_at[1])
            loop.progress(self.steps)
            if loop.stop_requested():
                break

    def save(self, final=False):
        path = self.run_dir / ("final.json" if final else "fake.json")
        path.write_text(json.dumps({"steps": self.steps}))
        self.saves.append((self.steps, final))
        return path

    def policy(self):
        return baselines.make("token", "fifo")

    def close(self):
        self.events.append("close")


FAKE = f"{__name__}.FakeTrainer"
TINY = ["env.kwargs.n_bursts=2", "eval.final_episodes=1", "eval.episodes=1", "eval.baselines=[edf]", "logger=none",
        "progress_bar=false"]


def cfg_of(*overrides, fake=True):
    """maskable_ppo's config with the fake trainer as its agent.trainer."""
    with initialize_config_module(version_base="1.3", config_module="flowsched.configs"):
        return compose(config_name="train", overrides=[*TINY, *([f"agent.trainer._target_={FAKE}"] if fake else []),
                                                       *overrides])


def test_trainers_satisfy_the_interface(tmp_path):
    cfg = cfg_of("total_timesteps=100")
    assert isinstance(build_trainer(cfg, tmp_path), FakeTrainer)
    from flowsched.agents.sb3 import SB3Trainer

    assert isinstance(SB3Trainer(cfg, tmp_path), Trainer) and isinstance(FakeTrainer(cfg, tmp_path), Trainer)
    rule = cfg_of("agent=edf", fake=False)
    assert isinstance(build_trainer(rule, tmp_path), RuleTrainer) and isinstance(RuleTrainer(rule, tmp_path), Trainer)
    assert set(DEFAULT_TRAINERS) == {"sb3", "rllib", "baseline"}


def test_loop_checkpoints_evaluates_and_finishes(tmp_path, capsys):
    cfg = cfg_of("total_timesteps=1000", "checkpoint.every=300", "eval.every=500")
    status = train(cfg, tmp_path)
    assert status["status"] == "finished" and status["num_timesteps"] == 1000
    assert status["checkpoint"] == str(tmp_path / "final.json")
    out = capsys.readouterr().out
    assert "[eval] step 500: deadline_hit_ratio" in out and "[eval] step 1000" in out
    assert [r["policy"] for r in status["summary"]] == ["maskable_ppo", "edf"]
    assert json.loads((tmp_path / "run.json").read_text())["status"] == "finished"


def test_loop_checkpoint_schedule_counts_from_the_start(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(FakeTrainer, "save", lambda self, final=False: seen.append((self.steps, final)) or tmp_path)
    train(cfg_of("total_timesteps=1000", "checkpoint.every=300", "eval.every=0"), tmp_path)
    assert seen == [(300, False), (600, False), (900, False), (1000, True)]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_loop_stops_on_a_signal_and_saves(tmp_path, sig, code):
    cfg = cfg_of("total_timesteps=1000", "checkpoint.every=0", "eval.every=0",
                 f"+agent.trainer.signal_at=[300,{int(sig)}]")
    status = train(cfg, tmp_path)
    assert status["status"] == "interrupted" and status["signal"] == sig and status["num_timesteps"] == 300
    assert json.loads((tmp_path / "fake.json").read_text()) == {"steps": 300}
    assert 128 + status["signal"] == code
    assert signal.getsignal(sig) is not None  # the previous handler is back


def test_loop_time_budget(tmp_path, capsys):
    status = train(cfg_of("total_timesteps=100000", "time_budget_s=1e-9", "checkpoint.every=0", "eval.every=0"),
                   tmp_path)
    assert status["status"] == "finished" and status["stopped_by"] == "time_budget"
    assert status["num_timesteps"] == 100  # the trainer's own granularity: one iteration
    assert "Time budget of 1e-09 s reached at step 100" in capsys.readouterr().out


def test_no_import_cycle_between_the_loop_and_its_trainers():
    code = ("import sys, flowsched.agents.training as t; "
            "assert 'flowsched.agents.rllib' not in sys.modules and 'flowsched.agents.sb3' not in sys.modules; "
            "import flowsched.agents.sb3; assert 'flowsched.agents.rllib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    pytest.importorskip("ray")
    code = "import sys, flowsched.agents.rllib; assert 'flowsched.agents.training' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_load_for_resume_keeps_its_old_import_path():
    from flowsched.agents import sb3

    with pytest.deprecated_call():
        from flowsched.agents.training import load_for_resume
    assert load_for_resume is sb3.load_for_resume
