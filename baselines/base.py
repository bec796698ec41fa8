"""The predictor protocol shared by rule-based baselines and trained agents."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np


class Policy(ABC):
    """A rule-based policy with the agents' interface: ``predict`` is a superset of
    Stable-Baselines3's, so evaluation code cannot tell a baseline from a trained agent.

    ``observation`` is one observation or a batch (leading axis); the valid actions come
    from ``action_masks`` when given, else from ``observation["action_mask"]``. Rules are
    deterministic unless they say otherwise; ``state`` is passed through (no recurrence).
    """

    #: the observation key that marks valid actions (or slots)
    mask_key = "action_mask"
    #: whether an observation must have at least one valid action
    needs_valid_action = True

    def predict(
        self,
        observation: dict[str, np.ndarray],
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, Any]:
        mask = np.asarray(observation[self.mask_key] if action_masks is None else action_masks) > 0
        single = mask.ndim == 1
        if single:
            observation = {k: np.asarray(v)[None] for k, v in observation.items()}
            mask = mask[None]
        empty = ~mask.any(axis=-1)
        if self.needs_valid_action and empty.any():
            raise ValueError(f"no valid action in observation(s) {np.flatnonzero(empty).tolist()}: every action is masked")
        actions = np.asarray(self._act(observation, mask))
        return (actions[0] if single else actions), state

    def seed_episode(self, seed: int) -> None:
        """Called by evaluation before each episode so that a randomized rule plays an
        episode the same way whatever it played before (deterministic rules ignore it)."""

    @abstractmethod
    def _act(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        """Actions for a batch of observations (mask: (batch, n_actions) booleans)."""
