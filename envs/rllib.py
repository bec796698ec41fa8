"""RLlib action masking for flowsched's envs, on RLlib's own default PPO module.

RLlib's convention for action masking is an observation ``Dict(action_mask=Box(0, 1,
(n,)), observations=...)``, which the token env gives with ``obs_format="rllib"``.
RLlib's example module for it subclasses a deprecated class; :class:`ActionMaskingPPOModule`
does the same on ``DefaultPPOTorchRLModule``: RLlib's default encoder (an MLP, built
by the catalog from ``model_config``) sees ``observations``, and masked actions get
logit ``FLOAT_MIN``::

    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from flowsched.envs.rllib import ActionMaskingPPOModule

    config = (PPOConfig()
              .environment("flowsched:flowsched/TokenScheduling-v1", env_config={"obs_format": "rllib"})
              .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingPPOModule)))

Without masking, RLlib's default module runs on ``obs_format="flat"`` (a masked
action then admits the oldest request, as the env documents).
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym

try:
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as e:  # pragma: no cover - ray is an optional dependency
    raise ImportError("flowsched.envs.rllib needs ray[rllib]: pip install 'flowsched[ray]'") from e


class ActionMaskingPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module (encoder, policy and value heads from the catalog and
    ``model_config``) on ``observation["observations"]``, with the logits of actions
    whose ``observation["action_mask"]`` is 0 set to ``FLOAT_MIN``. The value function
    reads the same features (the mask is not an input)."""

    def __init__(self, *args: Any, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not (isinstance(observation_space, gym.spaces.Dict)
                and {"action_mask", "observations"} <= set(observation_space.spaces)):
            raise ValueError("ActionMaskingPPOModule needs RLlib's masking observation Dict(action_mask=Box(0, 1, "
                             "(n,)), "
                             f"observations=...) (the token env's obs_format='rllib'), got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(*args, observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        super().setup()  # the catalog builds the encoder for observations only
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor | None, dict[str, Any]]:
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):  # already split (e.g. compute_values after a forward pass)
            return batch.get("action_mask"), batch
        inner = dict(batch)
        inner[Columns.OBS] = obs["observations"]
        return obs["action_mask"], inner

    @staticmethod
    def _mask(out: dict[str, Any], mask: torch.Tensor | None) -> dict[str, Any]:
        if mask is None:
            raise ValueError("ActionMaskingPPOModule: the batch has no action_mask (neither in its observations nor "
                             "beside them)")
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:  # the parent's TensorType
        return super().compute_values(self._split(batch)[1], embeddings)
