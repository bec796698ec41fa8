"""Networks and SB3 policies of flowsched's learned agents.

* :class:`SymlogExtractor`: flattens a ``Dict`` observation and squashes every
  feature with ``symlog(x) = sign(x) log(1 + |x|)``: the envs' features are in MB and
  ms and span orders of magnitude; symlog is stateless, so a checkpoint needs no
  normalization statistics.
* :class:`ArtemisPolicy`: the Artemis thesis' actor-critic (one hidden layer of 16
  units) with masked epsilon-greedy exploration (see :class:`flowsched.agents.callbacks.LinearEpsilon`).
* :class:`EquivariantPolicy`: a permutation-equivariant actor-critic for the switch
  env (one priority score per flow slot).
* :class:`RequestScorerPolicy`: a masked actor-critic for the token env that scores
  each waiting request with one shared network (the logits of the masked categorical).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.policies import MultiInputActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


def symlog(x: th.Tensor) -> th.Tensor:
    return th.sign(x) * th.log1p(th.abs(x))


class SymlogExtractor(BaseFeaturesExtractor):
    """Concatenates the flattened keys of a ``Dict`` observation (sorted by key, as
    SB3's ``CombinedExtractor``), each feature squashed by symlog. Infinite values
    (none occur in flowsched's envs) are clamped to +-1e6 first."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        self.keys = sorted(observation_space.spaces)
        dim = int(sum(int(np.prod(space_shape(observation_space.spaces[k]))) for k in self.keys))
        super().__init__(observation_space, features_dim=dim)

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        flat = [observations[k].flatten(start_dim=1) for k in self.keys]
        return symlog(th.clamp(th.cat(flat, dim=1), -1e6, 1e6))


class ArtemisPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO policy with masked epsilon-greedy exploration.

    While collecting rollouts (``deterministic=False``), with probability
    ``self.epsilon`` an env takes a uniformly random *valid* action instead of one
    drawn from the actor; the stored log-probability is the actor's log-probability of
    the action actually taken (the usual, off-policy-biased, actor-critic update with an
    epsilon-greedy behaviour policy). ``epsilon`` is a plain attribute that a callback
    decays (:class:`flowsched.agents.callbacks.LinearEpsilon`); it is 0 after loading.
    Deterministic prediction (evaluation) never explores.
    """

    def __init__(self, *args: Any, epsilon: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.epsilon = float(epsilon)

    def forward(self, obs: th.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | None = None) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            latent_pi, latent_vf = self.mlp_extractor(features)
        else:
            latent_pi = self.mlp_extractor.forward_actor(features[0])
            latent_vf = self.mlp_extractor.forward_critic(features[1])
        values = self.value_net(latent_vf)
        distribution = self._get_action_dist_from_latent(latent_pi)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        if not deterministic and self.epsilon > 0:
            n = int(self.action_space.n)  # type: ignore[attr-defined]
            if action_masks is None:
                valid = th.ones((actions.shape[0], n), device=actions.device)
            else:
                valid = th.as_tensor(np.asarray(action_masks), device=actions.device).reshape(-1, n).float()
            random_actions = th.multinomial(valid, 1).squeeze(1)
            explore = th.rand(actions.shape[0], device=actions.device) < self.epsilon
            actions = th.where(explore, random_actions, actions)
        log_prob = distribution.log_prob(actions)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob  # type: ignore[misc]


def space_shape(space: spaces.Space) -> tuple[int, ...]:
    """The shape of a space that has one (a ValueError for those that do not, e.g. a Dict)."""
    if space.shape is None:
        raise ValueError(f"{space} has no shape")
    return space.shape


def slots_and_features(shape: tuple[int, ...] | None, mask_shape: tuple[int, ...] | None) -> tuple[int, int]:
    """(slots, features per slot) of a per-slot observation key, laid out ``(slots,
    features)`` or flat ``(slots * features,)`` row-major; the mask has one entry per slot."""
    if shape is None or mask_shape is None:
        raise ValueError(f"a per-slot observation and its mask need shapes, got {shape} and {mask_shape}")
    n = int(mask_shape[0])
    size = int(np.prod(shape))
    if len(shape) == 2 and int(shape[0]) == n:
        return n, int(shape[1])
    if len(shape) == 1 and n > 0 and size % n == 0:
        return n, size // n
    raise ValueError(f"a per-slot observation of shape {tuple(shape)} does not fit a mask of {n} slots")


class SetFeatures(BaseFeaturesExtractor):
    """Flattens the switch env's ``flows`` (symlog) and ``flow_mask`` into one vector
    that :class:`SetActorCritic` unflattens (SB3's policies pass one tensor along)."""

    def __init__(self, observation_space: spaces.Dict, set_key: str = "flows", mask_key: str = "flow_mask") -> None:
        self.set_key, self.mask_key = set_key, mask_key
        n, f = slots_and_features(observation_space.spaces[set_key].shape, observation_space.spaces[mask_key].shape)
        self.n_slots, self.n_features = n, f
        super().__init__(observation_space, features_dim=self.n_slots * (self.n_features + 1))

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        x = symlog(th.clamp(observations[self.set_key], -1e6, 1e6)).flatten(start_dim=1)
        return th.cat([x, observations[self.mask_key].flatten(start_dim=1)], dim=1)


class SetActorCritic(nn.Module):
    """Permutation-equivariant actor and invariant critic over a set of flow slots.

    A shared encoder ``phi`` embeds each flow; the context is the masked mean and max of
    the embeddings (and log(1 + number of flows)). The actor scores each flow with a
    shared head on ``[phi(flow), context]`` (tanh: a score in (-1, 1)), so permuting the
    flows permutes the scores; slots without a flow get score 1 (ignored by the env).
    The critic reads the context only, so its value is invariant to the order.
    """

    def __init__(self, n_slots: int, n_features: int, hidden: int = 64) -> None:
        super().__init__()
        self.n_slots, self.n_features = n_slots, n_features
        self.latent_dim_pi = n_slots
        self.latent_dim_vf = hidden
        self.phi = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.score = nn.Sequential(nn.Linear(3 * hidden + 1, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(2 * hidden + 1, hidden), nn.ReLU())

    def _encode(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        b, n, f = features.shape[0], self.n_slots, self.n_features
        x = features[:, : n * f].reshape(b, n, f)
        mask = features[:, n * f:].reshape(b, n, 1)
        h = self.phi(x) * mask
        count = mask.sum(dim=1)
        mean = h.sum(dim=1) / count.clamp(min=1.0)
        mx = th.where(mask > 0, h, th.full_like(h, -1e9)).max(dim=1).values
        mx = th.where(count > 0, mx, th.zeros_like(mx))
        ctx = th.cat([mean, mx, th.log1p(count)], dim=1)
        return h, mask, ctx

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        h, mask, ctx = self._encode(features)
        z = th.cat([h, ctx[:, None, :].expand(-1, self.n_slots, -1)], dim=2)
        scores = th.tanh(self.score(z).squeeze(2))
        return th.where(mask.squeeze(2) > 0, scores, th.ones_like(scores))

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value(self._encode(features)[2])

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class EquivariantPolicy(MultiInputActorCriticPolicy):
    """SB3 ``ActorCriticPolicy`` for the switch env built on :class:`SetActorCritic`.

    The actor's per-flow scores are the Gaussian means directly (no dense output layer,
    which would mix slots), with one learned log-std shared by all slots; the critic is
    a linear value head on the pooled context. Use with ``PPO``/``A2C``. The Gaussian
    also covers empty slots: their (ignored) dimensions add zero-mean noise to the
    policy-gradient estimate.
    """

    def __init__(self, observation_space: spaces.Dict, action_space: spaces.Box, lr_schedule: Any,
                 hidden: int = 64, **kwargs: Any) -> None:
        self.hidden = hidden
        kwargs.setdefault("features_extractor_class", SetFeatures)
        kwargs.setdefault("log_std_init", -1.0)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        fx = self.features_extractor
        assert isinstance(fx, SetFeatures), "EquivariantPolicy needs the SetFeatures extractor"
        self.mlp_extractor = SetActorCritic(fx.n_slots, fx.n_features, self.hidden)  # type: ignore[assignment]

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()
        self.log_std = nn.Parameter(th.full((1,), float(self.log_std_init)), requires_grad=True)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.hidden
        return data


class TokenFeatures(BaseFeaturesExtractor):
    """Flattens the token env's ``requests`` (symlog), ``active`` (symlog) and
    ``action_mask`` into one vector that :class:`RequestScorer` unflattens."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        w, f = slots_and_features(
            observation_space.spaces["requests"].shape, observation_space.spaces["action_mask"].shape
        )
        self.window, self.n_request, self.n_active = int(w), int(f), space_shape(observation_space.spaces["active"])[0]
        super().__init__(observation_space, features_dim=self.window * (self.n_request + 1) + self.n_active)

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        return RequestScorer.flatten(observations["requests"], observations["active"], observations["action_mask"])


class RequestScorer(nn.Module):
    """Actor: one shared network scores each waiting request from its own features and
    the destination's active summary; the scores are the logits of the masked
    categorical, so the same request gets the same score in any window slot. Critic: an
    MLP on the masked mean and max of the request embeddings and the active summary."""

    def __init__(self, window: int, n_request: int, n_active: int, hidden: int | Sequence[int] = 64) -> None:
        super().__init__()
        widths = [int(hidden)] * 2 if isinstance(hidden, int) else [int(h) for h in hidden]
        if not widths or min(widths) < 1:
            raise ValueError(f"hidden must be a width or a list of widths >= 1, got {hidden!r}")
        self.window, self.n_request, self.n_active = window, n_request, n_active
        h = widths[-1]
        self.latent_dim_pi = window
        self.latent_dim_vf = h
        layers: list[nn.Module] = []
        inp = n_request + n_active
        for width in widths:
            layers += [nn.Linear(inp, width), nn.Tanh()]
            inp = width
        self.phi = nn.Sequential(*layers)
        self.score = nn.Linear(h, 1)
        self.value = nn.Sequential(nn.Linear(2 * h + n_active, h), nn.Tanh())

    @staticmethod
    def flatten(requests: th.Tensor, active: th.Tensor, mask: th.Tensor) -> th.Tensor:
        """The flat features this module reads (what :class:`TokenFeatures` produces)."""
        req = symlog(th.clamp(requests, -1e6, 1e6)).flatten(start_dim=1)
        act = symlog(th.clamp(active, -1e6, 1e6))
        return th.cat([req, act, mask.flatten(start_dim=1)], dim=1)

    def _encode(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        b, w, f, a = features.shape[0], self.window, self.n_request, self.n_active
        req = features[:, : w * f].reshape(b, w, f)
        act = features[:, w * f: w * f + a]
        mask = features[:, w * f + a:].reshape(b, w, 1)
        h = self.phi(th.cat([req, act[:, None, :].expand(-1, w, -1)], dim=2))
        return h, mask, act

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.score(self._encode(features)[0]).squeeze(2)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        h, mask, act = self._encode(features)
        count = mask.sum(dim=1)
        mean = (h * mask).sum(dim=1) / count.clamp(min=1.0)
        mx = th.where(mask > 0, h, th.full_like(h, -2.0)).max(dim=1).values  # tanh > -1: -2 marks none
        mx = th.where(count > 0, mx, th.zeros_like(mx))
        return self.value(th.cat([mean, mx, act], dim=1))

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class RequestScorerPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO policy for the token env built on :class:`RequestScorer`: the
    per-request scores are the logits directly (no dense output layer mixing slots)."""

    def __init__(self, observation_space: spaces.Dict, action_space: spaces.Discrete, lr_schedule: Any,
                 hidden: int | Sequence[int] = 64, **kwargs: Any) -> None:
        self.hidden = hidden
        kwargs.setdefault("features_extractor_class", TokenFeatures)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        fx = self.features_extractor
        assert isinstance(fx, TokenFeatures), "RequestScorerPolicy needs the TokenFeatures extractor"
        self.mlp_extractor = RequestScorer(fx.window, fx.n_request, fx.n_active, self.hidden)  # type: ignore[assignment]

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.hidden
        return data
