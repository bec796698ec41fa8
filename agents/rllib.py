"""RLlib (new API stack) support: an RLModule for the masked token-scheduling env, a
PPO config builder, and a predictor that plugs a trained module into the same
``predict()`` protocol as every other policy.

The module reads the env's ``Dict`` observation directly (``requests``, ``active``,
``action_mask``): a shared per-request scorer (the request's features plus the
destination's summary) gives one logit per window slot, masked slots get the most
negative logit, and a critic reads the pooled requests and the summary. It is
permutation-equivariant over the window: the same request gets the same logit in
any slot.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

try:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as e:  # pragma: no cover - ray is an optional dependency
    raise ImportError("flowsched.agents.rllib needs ray[rllib]: pip install 'flowsched[ray]'") from e

from torch import nn


def _squash(x: torch.Tensor) -> torch.Tensor:
    """sign(x) log(1 + |x|): features in MB and ms span orders of magnitude."""
    return torch.sign(x) * torch.log1p(torch.abs(x))


class MaskedTokenModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic RLModule for ``flowsched/TokenScheduling-v0`` (``model_config``:
    ``hidden`` units per layer, default ``[64, 64]``)."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or not {"requests", "active", "action_mask"} <= set(space.spaces):
            raise ValueError(f"MaskedTokenModule needs the token env's Dict observation, got {space}")
        window, n_req = space["requests"].shape
        n_act = space["active"].shape[0]
        if self.action_space.n != window:
            raise ValueError(f"action space {self.action_space} does not match the window of {window} requests")
        hidden = list(self.model_config.get("hidden", [64, 64])) if self.model_config else [64, 64]

        def mlp(inp: int, out: int) -> nn.Sequential:
            layers: list[nn.Module] = []
            for h in hidden:
                layers += [nn.Linear(inp, h), nn.Tanh()]
                inp = h
            layers.append(nn.Linear(inp, out))
            return nn.Sequential(*layers)

        self._scorer = mlp(n_req + n_act, 1)
        self._critic = mlp(n_req + n_act, 1)

    def _parts(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        req, act, mask = _squash(obs["requests"]), _squash(obs["active"]), obs["action_mask"]
        return req, act, mask

    def _logits(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        req, act, mask = self._parts(batch)
        x = torch.cat([req, act.unsqueeze(1).expand(-1, req.shape[1], -1)], dim=-1)
        logits = self._scorer(x).squeeze(-1)
        logits = logits + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        pooled = (req * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1.0)
        return logits, torch.cat([pooled, act], dim=-1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, _ = self._logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, emb = self._logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: emb}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            _, embeddings = self._logits(batch)
        return self._critic(embeddings).squeeze(-1)


def token_ppo_config(
    env_config: dict[str, Any] | None = None,
    *,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 1,
    train_batch_size: int = 4000,
    minibatch_size: int = 128,
    num_epochs: int = 10,
    lr: float = 3e-4,
    gamma: float = 0.99,
    hidden: tuple[int, ...] = (64, 64),
    seed: int = 0,
) -> Any:
    """A PPOConfig for ``flowsched/TokenScheduling-v0`` with :class:`MaskedTokenModule`.

    The env is created inside every env runner from its Gymnasium id (the ``flowsched:``
    prefix imports the package, which registers it) with ``env_config`` as kwargs.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return (
        PPOConfig()
        .environment("flowsched:flowsched/TokenScheduling-v0", env_config=dict(env_config or {}))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs,
                  lr=lr, gamma=gamma)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=MaskedTokenModule, model_config={"hidden": list(hidden)}))
        .debugging(seed=seed)
    )


class RLlibPolicy:
    """A trained RLModule behind the ``predict()`` protocol of flowsched's baselines and
    SB3 models (greedy over the masked logits when ``deterministic``, sampled otherwise)."""

    def __init__(self, module: TorchRLModule, seed: int | None = 0) -> None:
        self.module = module
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_checkpoint(cls, path: str, seed: int | None = 0) -> RLlibPolicy:
        """Loads the default module of an ``Algorithm.save_to_path`` checkpoint."""
        import os

        from ray.rllib.core.rl_module.rl_module import RLModule

        sub = os.path.join(path, "learner_group", "learner", "rl_module", "default_policy")
        return cls(RLModule.from_checkpoint(sub if os.path.isdir(sub) else path), seed=seed)

    def predict(self, observation: dict[str, np.ndarray], state: Any = None, episode_start: Any = None,
                deterministic: bool = True, action_masks: np.ndarray | None = None) -> tuple[np.ndarray, Any]:
        single = np.asarray(observation["action_mask"]).ndim == 1
        obs = {k: torch.as_tensor(np.asarray(v, np.float32)[None] if single else np.asarray(v, np.float32))
               for k, v in observation.items()}
        if action_masks is not None:
            m = np.asarray(action_masks, np.float32)
            obs["action_mask"] = torch.as_tensor(m[None] if single else m)
        with torch.no_grad():
            logits = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS].numpy()
        if deterministic:
            a = logits.argmax(-1)
        else:
            p = np.exp(logits - logits.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            a = np.array([self.rng.choice(p.shape[-1], p=row) for row in p])
        a = a.astype(np.int64)
        return (a[0] if single else a), state
