"""The switch env's reward normalization (``env.normalize_reward``) is saved beside every
checkpoint and restored on resume: a VecNormalize of the reward alone has no ``obs_rms``,
which the save once looked for, so no statistics were saved and a resumed run restarted
them from nothing."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omegaconf import OmegaConf
from stable_baselines3 import PPO

from flowsched.agents.envs import make_vec_env
from flowsched.agents.sb3 import load_for_resume

ROOT = Path(__file__).resolve().parents[1]


def test_reward_statistics_are_saved_with_each_checkpoint_and_restored_on_resume(tmp_path):
    env = {**os.environ, "WANDB_MODE": "offline"}
    p = subprocess.run([sys.executable, str(ROOT / "train.py"), "logger=none", "env=switch", "workload=websearch",
                        "agent=equivariant_ppo", "total_timesteps=512", "agent.model.n_steps=64",
                        "agent.model.batch_size=64", "checkpoint.every=256", "eval.every=0", "eval.final_episodes=1",
                        f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    run = tmp_path / "run"
    for stem in ("model", "checkpoints/step_256", "checkpoints/step_512"):
        assert (run / f"{stem}.vecnormalize.pkl").exists(), stem
    cfg = OmegaConf.load(run / ".hydra" / "config.yaml")
    _, venv, ckpt = load_for_resume(run, PPO, make_vec_env(cfg, 4, masked=False, gamma=0.99), "cpu")
    assert ckpt.name == "model.zip"
    assert venv.ret_rms.count > 500  # the 512 steps' statistics, not a fresh 1e-4
