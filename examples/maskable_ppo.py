"""sb3-contrib's MaskablePPO on a registered flowsched env, with sb3-contrib's own tools only.

MaskablePPO reads the valid actions from the env's ``action_masks()``, which
``make_vec_env``'s wrappers reach (``env_method("action_masks")``), and its evaluation
(``sb3_contrib.common.maskable.evaluation.evaluate_policy``) masks too. A single env
made with ``gym.make`` hands its mask to ``predict`` through
``get_action_masks(env)``.

    python examples/maskable_ppo.py
    python examples/maskable_ppo.py --timesteps 512 --eval-episodes 1
"""
from __future__ import annotations

import argparse

import gymnasium as gym
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

ENV_ID = "flowsched:flowsched/TokenScheduling-v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timesteps", type=int, default=20_000)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--n-envs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    n_steps = max(8, min(2048, a.timesteps // a.n_envs))
    env = make_vec_env(ENV_ID, n_envs=a.n_envs, seed=a.seed)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=n_steps, batch_size=min(64, n_steps * a.n_envs),
                        seed=a.seed, verbose=0)
    model.learn(total_timesteps=a.timesteps)
    mean, std = evaluate_policy(model, make_vec_env(ENV_ID, n_envs=1, seed=a.seed + 1000),
                                n_eval_episodes=a.eval_episodes, deterministic=True)
    print(f"MaskablePPO: {mean:.1f} +- {std:.1f} deadlines met per episode ({a.timesteps} training steps)")

    single = gym.make(ENV_ID)  # one episode by hand: the mask through gym.make's wrappers
    obs, _ = single.reset(seed=a.seed + 2000)
    done, met, masked = False, 0.0, 0
    while not done:
        action, _ = model.predict(obs, action_masks=get_action_masks(single), deterministic=True)
        obs, reward, terminated, truncated, info = single.step(action)
        met += float(reward)
        masked += bool(info.get("masked_action", False))
        done = terminated or truncated
    assert masked == 0, "a masked policy never picks a masked action"
    print(f"one episode by hand: {met:.0f} of {info['flows_with_deadline']:.0f} deadlines met, no masked action")


if __name__ == "__main__":
    main()
