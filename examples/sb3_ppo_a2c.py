"""Stable-Baselines3 PPO and A2C on a registered flowsched env, with SB3's own tools only.

Nothing here is flowsched-specific: ``make_vec_env`` creates the env from its id (the
``flowsched:`` prefix imports the package, which registers it). These agents know
nothing of the action mask: a masked action (a position past the waiting requests)
admits the oldest waiting request, as the env documents, and ``info["masked_action"]``
says so.

    python examples/sb3_ppo_a2c.py                      # 20,000 steps each
    python examples/sb3_ppo_a2c.py --timesteps 512 --eval-episodes 1
"""
from __future__ import annotations

import argparse

from stable_baselines3 import A2C, PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.evaluation import evaluate_policy

ENV_ID = "flowsched:flowsched/TokenScheduling-v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timesteps", type=int, default=20_000, help="training steps per algorithm")
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--n-envs", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    n_steps = max(8, min(2048, a.timesteps // a.n_envs))  # one update even with a tiny budget
    for name, algo, kwargs in (
        ("PPO", PPO, {"n_steps": n_steps, "batch_size": min(64, n_steps * a.n_envs)}),
        ("A2C", A2C, {"n_steps": min(n_steps, 5)}),
    ):
        env = make_vec_env(ENV_ID, n_envs=a.n_envs, seed=a.seed)
        model = algo("MultiInputPolicy", env, seed=a.seed, verbose=0, **kwargs)
        model.learn(total_timesteps=a.timesteps)
        eval_env = make_vec_env(ENV_ID, n_envs=1, seed=a.seed + 1000)
        mean, std = evaluate_policy(model, eval_env, n_eval_episodes=a.eval_episodes, deterministic=True)
        print(f"{name}: {mean:.1f} +- {std:.1f} deadlines met per episode ({a.timesteps} training steps)")


if __name__ == "__main__":
    main()
