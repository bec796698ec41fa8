"""Gymnasium's standard wrappers on a registered flowsched env: TimeLimit,
RecordEpisodeStatistics, FlattenObservation, NormalizeObservation, and the vector
versions on the native vector env.

``FlattenObservation`` lays the token env's Dict out with its keys sorted:
``flat[:window]`` is the action mask, then the active summary, then the requests
(``obs_format="flat"`` gives the same vector directly). ``NormalizeObservation``
rescales every entry, the mask included; ``flowsched.envs.wrappers.NormalizeFeatures``
leaves the mask as 0/1. Actions here come from the mask kept by the env
(``get_wrapper_attr("action_masks")``, which works through any wrapper stack).

    python examples/gymnasium_wrappers.py
    python examples/gymnasium_wrappers.py --steps 200
"""
from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

from flowsched.envs.wrappers import NormalizeFeatures

ENV_ID = "flowsched:flowsched/TokenScheduling-v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)

    env = gym.make(ENV_ID, max_episode_steps=50)  # gym.make adds TimeLimit
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env = gym.wrappers.FlattenObservation(env)
    env = gym.wrappers.NormalizeObservation(env)
    obs, _ = env.reset(seed=a.seed)
    window = env.get_wrapper_attr("window")
    print(f"flat observation: {obs.shape[0]} values; the mask is flat[:{window}] before normalization")
    episodes = []
    for _ in range(a.steps):
        valid = np.flatnonzero(env.get_wrapper_attr("action_masks")())
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(valid)))
        if terminated or truncated:
            episodes.append((info["episode"]["r"], info["episode"]["l"], bool(truncated)))
            obs, _ = env.reset()
    print(f"{len(episodes)} episodes (TimeLimit of 50 decisions), first: return {episodes[0][0]:.0f} "
          f"in {episodes[0][1]} steps, truncated: {episodes[0][2]}" if episodes else "no episode ended")

    keep = NormalizeFeatures(gym.make(ENV_ID, obs_format="flat"))
    obs, _ = keep.reset(seed=a.seed)
    for _ in range(20):
        obs, *_ = keep.step(0)
    print(f"NormalizeFeatures: mask {obs[:window]} (unchanged), features rescaled to |x| <= "
          f"{np.abs(obs[window:]).max():.2f}")

    venv = gym.make_vec(ENV_ID, num_envs=8, vectorization_mode="vector_entry_point", max_episode_steps=50)
    venv = gym.wrappers.vector.RecordEpisodeStatistics(gym.wrappers.vector.FlattenObservation(venv))
    obs, _ = venv.reset(seed=a.seed)
    finished = 0
    for _ in range(max(1, a.steps // 8)):
        masks = np.stack(venv.unwrapped.call("action_masks"))  # vector wrappers do not forward call()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, terminated, truncated, infos = venv.step(actions)
        finished += int(infos.get("_episode", np.zeros(8, bool)).sum())
    print(f"native vector env x8 with vector wrappers: {finished} episodes ended, observation batch {obs.shape}")


if __name__ == "__main__":
    main()
