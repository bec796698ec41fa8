"""A CleanRL-style single-file PPO (plain PyTorch) on a registered flowsched env.

Read top to bottom: the config, the env factory, the network, the loop. The env is
created by id with Gymnasium's own tools: ``obs_format="flat"`` gives one vector whose
first ``window`` values are the action mask (the layout of ``FlattenObservation`` on
the Dict observation); ``NormalizeFeatures`` normalizes the rest and leaves the mask
as 0/1, so the policy masks its logits with ``obs[:, :window]``. The vector env resets
finished lanes within the same step (``AutoresetMode.SAME_STEP``), as CleanRL's loop
expects.

    python examples/cleanrl_ppo.py
    python examples/cleanrl_ppo.py --total-timesteps 512
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from flowsched.envs.wrappers import NormalizeFeatures

ENV_ID = "flowsched:flowsched/TokenScheduling-v1"


@dataclass
class Args:
    total_timesteps: int = 20_000
    """environment steps in all"""
    num_envs: int = 4
    """parallel envs (a sync vector env)"""
    num_steps: int = 128
    """steps per env per rollout"""
    learning_rate: float = 2.5e-4
    """Adam's step size"""
    gamma: float = 0.99
    """discount"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    update_epochs: int = 4
    """epochs over each rollout"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    clip_coef: float = 0.2
    """PPO's clipping"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    seed: int = 0
    """seeds the envs, torch and numpy"""


def make_envs(args: Args) -> gym.vector.VectorEnv:
    return gym.make_vec(
        ENV_ID, num_envs=args.num_envs, vectorization_mode="sync", obs_format="flat",
        wrappers=[NormalizeFeatures, gym.wrappers.RecordEpisodeStatistics],
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )


class Agent(nn.Module):
    def __init__(self, n_obs: int, n_actions: int) -> None:
        super().__init__()
        self.n_actions = n_actions
        self.critic = nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor = nn.Sequential(
            nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, n_actions)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, action: torch.Tensor | None = None):
        mask = x[:, : self.n_actions] > 0.5  # the flat layout: the mask comes first, never normalized
        logits = self.actor(x).masked_fill(~mask, -1e8)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    args = Args(**vars(ap.parse_args()))
    args.num_steps = max(4, min(args.num_steps, args.total_timesteps // args.num_envs))
    batch = args.num_envs * args.num_steps
    minibatch = max(1, batch // args.num_minibatches)
    iterations = max(1, args.total_timesteps // batch)
    run_name = f"TokenScheduling-v1__cleanrl_ppo__{args.seed}__{int(time.time())}"

    # seeding, in one place
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    envs = make_envs(args)
    n_actions = int(envs.single_action_space.n)
    agent = Agent(int(np.prod(envs.single_observation_space.shape)), n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, *envs.single_observation_space.shape))
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((args.num_steps, args.num_envs)) for _ in range(4))
    next_obs = torch.as_tensor(envs.reset(seed=args.seed)[0], dtype=torch.float32)
    next_done = torch.zeros(args.num_envs)
    returns_seen: list[float] = []

    for _ in range(iterations):
        for step in range(args.num_steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs)
            actions[step], logprobs[step], values[step] = action, logprob, value
            o, r, term, trunc, infos = envs.step(action.numpy())
            rewards[step] = torch.as_tensor(r, dtype=torch.float32)
            next_obs = torch.as_tensor(o, dtype=torch.float32)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32)
            if "episode" in infos:
                returns_seen += [float(x) for x in infos["episode"]["r"][infos["_episode"]]]

        with torch.no_grad():  # GAE
            next_value = agent.value(next_obs)
            adv = torch.zeros_like(rewards)
            last = torch.zeros(args.num_envs)
            for t in reversed(range(args.num_steps)):
                nonterminal = 1.0 - (next_done if t == args.num_steps - 1 else dones[t + 1])
                nv = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nv * nonterminal - values[t]
                adv[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            ret = adv + values

        b_obs, b_act = obs.reshape(batch, -1), actions.reshape(batch)
        b_logp, b_adv, b_ret = logprobs.reshape(batch), adv.reshape(batch), ret.reshape(batch)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch).split(minibatch):
                _, logp, entropy, value = agent.act(b_obs[idx], b_act[idx])
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8) if len(idx) > 1 else a
                pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * ((value - b_ret[idx]) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

    envs.close()
    recent = returns_seen[-20:]
    mean = f"{np.mean(recent):.1f}" if recent else "n/a (no episode finished)"
    print(f"{run_name}: {iterations} iterations of {batch} steps, charts/episodic_return (last {len(recent)}): {mean}")


if __name__ == "__main__":
    main()
