"""The scripts in examples/ run as a user would run them (a subprocess each, a tiny
budget), using only the public registered ids and each ecosystem's own tools."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

CASES = {
    "sb3_ppo_a2c": (["--timesteps", "256", "--eval-episodes", "1", "--n-envs", "2"], ["PPO:", "A2C:"]),
    "maskable_ppo": (
        ["--timesteps", "256", "--eval-episodes", "1", "--n-envs", "2"],
        ["MaskablePPO:", "no masked action"],
    ),
    "cleanrl_ppo": (["--total-timesteps", "256", "--num-envs", "2"], ["cleanrl_ppo", "1 iterations"]),
    "gymnasium_wrappers": (
        ["--steps", "200"],
        ["flat observation: 45 values", "truncated: True", "mask [1. 1. 1. 1. 1.]"],
    ),
}
SLOW_CASES = {  # RLlib starts a local Ray: about 30 s each on 2 CPUs
    "rllib_ppo": (["--iterations", "1", "--batch", "256"], ["iteration 1: episode_return_mean", "default module done"]),
    "rllib_ppo --masking": (["--masking", "--iterations", "1", "--batch", "256"],
                            ["iteration 1: episode_return_mean", "masked module done"]),
}


def _run(name: str, args: list[str], expect: list[str], timeout: int) -> None:
    script = EXAMPLES / f"{name.split()[0]}.py"
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    r = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=timeout,
                       cwd=EXAMPLES.parent, env=env)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    for text in expect:
        assert text in r.stdout, f"{name}: {text!r} not in its output:\n{r.stdout}"


def test_every_example_is_tested():
    scripts = {p.stem for p in EXAMPLES.glob("*.py")}
    assert scripts == {n.split()[0] for n in [*CASES, *SLOW_CASES]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_runs(name):
    _run(name, *CASES[name], timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_CASES))
def test_rllib_example_runs(name):
    pytest.importorskip("ray.rllib")
    _run(name, *SLOW_CASES[name], timeout=600)


def test_rllib_masking_module_masks_the_logits():
    pytest.importorskip("ray.rllib")
    import gymnasium as gym
    import torch
    from ray.rllib.core.columns import Columns

    from flowsched.envs.rllib import ActionMaskingPPOModule

    env = gym.make("flowsched/TokenScheduling-v1", obs_format="rllib", n_bursts=2)
    module = ActionMaskingPPOModule(observation_space=env.observation_space, action_space=env.action_space,
                                    model_config={"fcnet_hiddens": [16]})
    obs, _ = env.reset(seed=0)
    mask = np.array([1, 1, 0, 1, 0], np.float32)
    batch = {Columns.OBS: {"action_mask": torch.as_tensor(mask[None]),
                           "observations": torch.as_tensor(obs["observations"][None])}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
        values = module.compute_values({Columns.OBS: {k: v.clone() for k, v in batch[Columns.OBS].items()}})
    assert (
        (logits[mask == 0] < -1e30).all()
        and np.isfinite(logits[mask == 1]).all()
        and (np.abs(logits[mask == 1]) < 1e3).all()
    )
    assert values.shape == (1,)
    with pytest.raises(ValueError, match="obs_format='rllib'"):
        ActionMaskingPPOModule(observation_space=gym.make("flowsched/TokenScheduling-v1").observation_space,
                               action_space=env.action_space)
