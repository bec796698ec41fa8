"""Wrappers for agents that take flat vectors (CleanRL-style MLPs).

:class:`NormalizeFeatures` is Gymnasium's ``NormalizeObservation`` that leaves the
action mask alone: with ``obs_format="flat"`` (or ``FlattenObservation`` on the Dict
observation) the mask is ``flat[:window]`` and stays 0/1, so that a policy can still
read it (and :func:`mask_of` can recover it) after normalization.

    env = gym.make("flowsched/TokenScheduling-v1", obs_format="flat")
    env = NormalizeFeatures(env)              # flat[window:] normalized, flat[:window] the mask
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers.utils import RunningMeanStd


def mask_slice(env: gym.Env) -> slice:
    """Where the 0/1 mask sits in the env's flat observation (``flat[:window]`` for the
    token env's action mask, ``flat[:max_flows]`` for the switch env's flow mask; empty
    for the thresholds env, which has none)."""
    base = env.unwrapped
    n = getattr(base, "window", None) or getattr(base, "max_flows", None) or 0
    return slice(0, int(n))


def mask_of(flat_obs: np.ndarray, window: int) -> np.ndarray:
    """The boolean action mask of flat token observations (``(..., window + 5 + 7 * window)``)."""
    return np.asarray(flat_obs)[..., :window] > 0


class NormalizeFeatures(gym.ObservationWrapper[Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Normalizes the features of a flat observation to running mean 0 and variance 1
    (as ``gymnasium.wrappers.NormalizeObservation``) except the mask slice
    (:func:`mask_slice`), which passes through unchanged; with the RLlib format
    (``Dict(action_mask, observations)``) it normalizes ``observations`` only.
    ``update_running_mean = False`` freezes the statistics (for evaluation)."""

    def __init__(self, env: gym.Env, epsilon: float = 1e-8) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        inner = space.spaces.get("observations") if isinstance(space, spaces.Dict) else None
        if isinstance(inner, spaces.Box):
            self._key: str | None = "observations"
            feat, self._mask = inner, slice(0, 0)
        elif isinstance(space, spaces.Box) and len(space.shape) == 1:
            self._key, feat, self._mask = None, space, mask_slice(env)
        else:
            raise TypeError("NormalizeFeatures takes a flat Box observation (obs_format='flat' or FlattenObservation) "
                            f"or the RLlib Dict(action_mask, observations); got {space}")
        n = feat.shape[0]
        self._feat = np.ones(n, bool)
        self._feat[self._mask] = False
        unbounded = spaces.Box(-np.inf, np.inf, (int(self._feat.sum()),), np.float32)
        low, high = feat.low.copy(), feat.high.copy()
        low[self._feat], high[self._feat] = unbounded.low, unbounded.high
        box = spaces.Box(low, high, dtype=np.float32)
        self.observation_space = (
            spaces.Dict({**space.spaces, "observations": box}) if isinstance(space, spaces.Dict) else box
        )
        self.obs_rms = RunningMeanStd(shape=(int(self._feat.sum()),), dtype=np.float64)
        self.epsilon = epsilon
        self.update_running_mean = True

    def observation(self, observation: Any) -> Any:
        x = observation[self._key] if self._key else observation
        x = np.array(x, np.float32)
        f = x[self._feat]
        if self.update_running_mean:
            self.obs_rms.update(f[None].astype(np.float64))
        x[self._feat] = ((f - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)).astype(np.float32)
        return {**observation, self._key: x} if self._key else x
