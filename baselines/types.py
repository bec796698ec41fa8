"""Shared type aliases and the predictor protocol of flowsched's policies.

Modelled on Stable-Baselines3's ``stable_baselines3/common/type_aliases.py``: anything
with SB3's ``predict(observation, state=None, episode_start=None, deterministic=False)
-> (action, state)`` is a :class:`Policy`, so SB3 and sb3-contrib models, RLlib
modules behind :class:`flowsched.agents.rllib.RLlibPolicy`, the rule-based baselines
and your own classes are interchangeable in evaluation, reports and ``train.py``.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

#: one observation or a batch (leading axis): an array, or a Dict space's mapping of arrays
Observation = np.ndarray | dict[str, np.ndarray]
#: a recurrent policy's hidden state (passed through unchanged by stateless policies)
PolicyState = tuple[np.ndarray, ...] | None
#: ``(action, state)``, what ``predict`` returns
Prediction = tuple[np.ndarray, Any]


@runtime_checkable
class Policy(Protocol):
    """Stable-Baselines3's predictor: ``predict(observation, state=None,
    episode_start=None, deterministic=False) -> (action, state)``.

    ``observation`` is one observation or a batch; the action has the same batch shape.
    SB3 models satisfy it as they are; so do the rule-based baselines
    (:func:`flowsched.baselines.make`). ``isinstance(x, Policy)`` checks that ``x`` has
    a ``predict`` (a runtime-checkable protocol checks names, not signatures).

    Two optional extensions are used when present (see :class:`MaskablePolicy` and
    :class:`EpisodeSeeded`): an ``action_masks=`` keyword of ``predict`` (sb3-contrib's
    MaskablePPO) and a ``seed_episode(seed)`` method (randomized rules).
    """

    def predict(self, observation: Observation, state: PolicyState = None, episode_start: np.ndarray | None = None,
                deterministic: bool = False) -> Prediction:
        ...


@runtime_checkable
class MaskablePolicy(Protocol):
    """A :class:`Policy` whose ``predict`` also takes ``action_masks`` (booleans of shape
    ``(n_actions,)`` or ``(batch, n_actions)``), as sb3-contrib's ``MaskablePPO``."""

    def predict(self, observation: Observation, state: PolicyState = None, episode_start: np.ndarray | None = None,
                deterministic: bool = False, action_masks: np.ndarray | None = None) -> Prediction:
        ...


@runtime_checkable
class EpisodeSeeded(Protocol):
    """A policy that draws random numbers: evaluation calls ``seed_episode(seed)`` before
    each episode so that it plays that episode the same way whatever it played before."""

    def seed_episode(self, seed: int) -> None:
        ...


__all__ = ["EpisodeSeeded", "MaskablePolicy", "Observation", "Policy", "PolicyState", "Prediction"]
