"""RLlib (new API stack) smoke test: PPO with the project's masked RLModule trains one
iteration on 2 CPUs, checkpoints, restores with its step count, and the trained
module drives the env through the predict() protocol without a masked action."""
from __future__ import annotations

import os

import numpy as np
import pytest

from flowsched.agents.rllib import (
    MaskedTokenModule,
    RLlibPolicy,
    SwitchScoreModule,
    init_ray,
    ppo_config,
    ray_logs_to_run_log,
)
from flowsched.envs import TokenSchedulingEnv, TokenSchedulingVecEnv


@pytest.fixture(scope="module")
def local_ray():
    import ray

    init_ray(num_cpus=2)  # a fresh local instance, never an existing cluster
    yield
    ray.shutdown()


def test_ray_loggers_write_to_the_run_log(tmp_path):
    """Ray's loggers have their own console handlers and do not propagate, so their records
    missed the root's file handler (train.log); init_ray now adds it to them (no Ray started)."""
    import logging

    log = tmp_path / "train.log"
    h = logging.FileHandler(log)
    root = logging.getLogger()
    root.addHandler(h)
    names: list[str] = []
    try:
        logging.getLogger("ray.rllib").warning("before the call")
        names = ray_logs_to_run_log()
        assert {"ray", "ray.rllib"} <= set(names)
        ray_logs_to_run_log()  # a second call adds nothing
        logging.getLogger("ray.rllib").warning("from rllib")
        logging.getLogger("ray._private.worker").info("from ray")
        h.flush()
        text = log.read_text()
        assert text.count("from rllib") == 1 and "from ray" in text
        assert "before the call" not in text  # what Ray's loggers did before: nothing in the file
        assert any(type(x).__name__ != "FileHandler" for x in logging.getLogger("ray").handlers)  # console kept
    finally:
        root.removeHandler(h)
        for n in names:
            logging.getLogger(n).removeHandler(h)
        h.close()


def test_module_masks_and_is_permutation_equivariant():
    env = TokenSchedulingEnv()
    m = MaskedTokenModule(observation_space=env.observation_space, action_space=env.action_space,
                          model_config={"hidden": [16]})
    venv = TokenSchedulingVecEnv(8, n_bursts=3, burst_rate_hz=40.0)
    obs, _ = venv.reset(seed=0)
    for _ in range(30):  # reach observations with masked slots
        obs, *_ = venv.step(np.zeros(8, np.int64))
    import torch
    from ray.rllib.core.columns import Columns

    t = {k: torch.as_tensor(v) for k, v in obs.items()}
    logits = m.forward_inference({Columns.OBS: t})[Columns.ACTION_DIST_INPUTS].detach().numpy()
    assert (obs["action_mask"] == 0).any()
    assert (logits[obs["action_mask"] == 0] < -1e30).all()
    # swapping two requests swaps their logits
    perm = {k: v.copy() for k, v in obs.items()}
    req = perm["requests"].reshape(
        perm["requests"].shape[0], perm["action_mask"].shape[1], -1
    )  # a view: one row per slot
    req[:, [0, 1]] = req[:, [1, 0]]
    perm["action_mask"][:, [0, 1]] = perm["action_mask"][:, [1, 0]]
    lp = m.forward_inference({Columns.OBS: {k: torch.as_tensor(v) for k, v in perm.items()}})[
        Columns.ACTION_DIST_INPUTS
    ]
    np.testing.assert_allclose(lp.detach().numpy()[:, [1, 0]], logits[:, [0, 1]], rtol=1e-5)


def test_ppo_trains_checkpoints_and_restores(local_ray, tmp_path):
    from ray.rllib.algorithms.algorithm import Algorithm

    cfg = ppo_config("flowsched/TokenScheduling-v1", {"n_bursts": 5}, train_batch_size=256, minibatch_size=64,
                     num_epochs=1, hidden=(16,))
    algo = cfg.build_algo()
    first = algo.train()["env_runners"]["num_env_steps_sampled_lifetime"]
    assert first >= 256
    algo.save_to_path(str(tmp_path))
    algo.stop()
    restored = Algorithm.from_checkpoint(str(tmp_path))
    second = restored.train()["env_runners"]["num_env_steps_sampled_lifetime"]
    assert second >= 2 * 256 and second > first  # the step count continues
    restored.stop()

    policy = RLlibPolicy.from_checkpoint(str(tmp_path))
    env = TokenSchedulingEnv(n_bursts=5)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:  # a masked action would raise
        a, _ = policy.predict(obs)
        obs, _, done, _, info = env.step(a)
    assert info["flows_finished"] == 50


def test_switch_module_is_permutation_equivariant_and_trains(local_ray, tmp_path):
    import torch
    from ray.rllib.core.columns import Columns

    from flowsched.envs import SwitchSchedulingEnv

    env = SwitchSchedulingEnv(n_flows=40, hosts=4, max_flows=16)
    m = SwitchScoreModule(observation_space=env.observation_space, action_space=env.action_space,
                          model_config={"hidden": [16]})
    obs, _ = env.reset(seed=0)
    while obs["flow_mask"].sum() < 2:
        obs, *_ = env.step(np.zeros(16, np.float32))

    def means(o):
        t = {k: torch.as_tensor(v[None]) for k, v in o.items()}
        return m.forward_inference({Columns.OBS: t})[Columns.ACTION_DIST_INPUTS].detach().numpy()[0, :16]

    perm = {k: v.copy() for k, v in obs.items()}
    rows = perm["flows"].reshape(perm["flow_mask"].shape[0], -1)  # a view: one row per slot
    rows[[0, 1]] = rows[[1, 0]]
    np.testing.assert_allclose(means(perm)[[1, 0]], means(obs)[[0, 1]], rtol=1e-5, atol=1e-6)

    cfg = ppo_config("flowsched/SwitchScheduling-v1", {"n_flows": 40, "hosts": 4, "max_flows": 16},
                     train_batch_size=128, minibatch_size=64, num_epochs=1, hidden=(16,))
    algo = cfg.build_algo()
    assert algo.train()["env_runners"]["num_env_steps_sampled_lifetime"] >= 128
    algo.save_to_path(str(tmp_path))
    algo.stop()
    policy = RLlibPolicy.from_checkpoint(str(tmp_path))
    obs, _ = env.reset(seed=1)
    done = False
    while not done:
        a, _ = policy.predict(obs)
        obs, _, done, _, info = env.step(a)
    assert info["flows_finished"] == 40


def test_train_py_rllib_interrupt_resume_and_ray_evaluation(tmp_path):
    """train.py agent=rllib_ppo: SIGTERM checkpoints, resume= ends at the same step count
    as an uninterrupted run; evaluate.py launcher=ray gives the sequential results."""
    import json
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    args = [
        "agent=rllib_ppo",
        "total_timesteps=3000",
        "agent.algo.train_batch_size=500",
        "agent.algo.num_epochs=1",
        "agent.algo.hidden=[16]",
        "agent.num_envs_per_env_runner=2",
        "env.kwargs.n_bursts=5",
        "checkpoint.every=500",
        "eval.final_episodes=2",
        "eval.baselines=[fifo]",
        "logger=tensorboard",
        "progress_bar=false",
        "ray.num_cpus=2",
        "hydra.run.dir=run",
    ]
    proc = subprocess.Popen([sys.executable, str(root / "train.py"), *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ckpt = tmp_path / "run" / "rllib_checkpoint"
    t0 = time.time()
    while not ckpt.exists() and proc.poll() is None and time.time() - t0 < 240:
        time.sleep(0.1)
    time.sleep(0.2)  # let the checkpoint write finish before the signal
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=240)
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "interrupted", out[-3000:]
    assert 500 <= status["num_timesteps"] < 3000
    r = subprocess.run([sys.executable, str(root / "train.py"), f"resume={tmp_path / 'run'}"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["status"] == "finished" and status["num_timesteps"] == 3000
    assert "rllib_ppo" in r.stdout and "fifo" in r.stdout
    # Ray's own log lines (its loggers do not propagate) reach the run's log too
    assert "Started a local Ray instance" in (tmp_path / "run" / "train.log").read_text()
    # the scalars under the documented sections (charts/ was missing: no episode ended)
    events = b"".join(p.read_bytes() for p in (tmp_path / "run" / "tb").rglob("events.out.tfevents*"))
    assert b"charts/SPS" in events and b"losses/policy_loss" in events and b"eval/" in events

    outs = {}
    for launcher in ("local", "ray"):
        e = subprocess.run(
            [
                sys.executable,
                str(root / "evaluate.py"),
                f"policies=[fifo,ssdf,{tmp_path / 'run'}]",
                "seeds=2",
                "env.kwargs.n_bursts=5",
                "figures=false",
                f"launcher={launcher}",
                "ray.num_cpus=2",
                f"hydra.run.dir=ev_{launcher}",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert e.returncode == 0, e.stdout[-3000:] + e.stderr[-3000:]
        outs[launcher] = pd.read_parquet(tmp_path / f"ev_{launcher}" / "results.parquet")
        outs[launcher, "flows"] = pd.read_parquet(tmp_path / f"ev_{launcher}" / "flows.parquet")
    pd.testing.assert_frame_equal(outs["local"], outs["ray"])
    # per flow too: the RLlib policy's argmax between equal requests no longer depends on
    # the thread count (two here, one in a Ray task): 8 flows had swapped finish times
    pd.testing.assert_frame_equal(outs["local", "flows"], outs["ray", "flows"])
    assert outs["ray"].policy.nunique() == 3
