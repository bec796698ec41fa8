"""The base class of the mask-reading rules (token and switch envs).

The contract every policy satisfies is the :class:`~flowsched.baselines.types.Policy`
protocol (re-exported here); :class:`MaskedRule` is only code reuse: it reads the
valid actions, batches a single observation, and calls the rule's ``_act``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

import numpy as np

from flowsched.baselines.types import Observation, Policy, PolicyState, Prediction


class MaskedRule(ABC):
    """A rule-based policy with SB3's ``predict`` (a :class:`Policy`; the ``action_masks``
    keyword makes it a :class:`~flowsched.baselines.types.MaskablePolicy` too).

    ``observation`` is one observation or a batch (leading axis); the valid actions come
    from ``action_masks`` when given, else from ``observation[mask_key]``. Rules are
    deterministic unless they say otherwise (``deterministic`` is accepted and ignored);
    ``state`` is passed through (no recurrence). Subclasses implement ``_act``.

    Before the registry (issue 18) this class was ``flowsched.baselines.Policy``, an ABC;
    ``Policy`` is now the protocol, and a rule of your own subclasses ``MaskedRule``.
    """

    #: the observation key that marks valid actions (or slots)
    mask_key = "action_mask"
    #: whether an observation must have at least one valid action
    needs_valid_action = True
    #: the keys of the Dict observation (``obs_format="dict"``) that the rule reads
    obs_keys: tuple[str, ...] = ()

    def predict(
        self,
        observation: Observation,
        state: PolicyState = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> Prediction:
        if not isinstance(observation, Mapping):
            raise TypeError(f"{type(self).__name__} reads the env's Dict observation (a mapping of arrays), "
                            f"got {type(observation).__name__}")
        missing = [k for k in (*self.obs_keys, *(() if action_masks is not None else (self.mask_key,)))
                   if k not in observation]
        if missing:
            raise TypeError(f"{type(self).__name__} reads the env's Dict observation (obs_format='dict', keys "
                            f"{sorted({*self.obs_keys, self.mask_key})}), got a mapping without {missing} (keys "
                            f"{sorted(observation)}): make the env with obs_format='dict' for the rules")
        mask = np.asarray(observation[self.mask_key] if action_masks is None else action_masks) > 0
        single = mask.ndim == 1
        if single:
            observation = {k: np.asarray(v)[None] for k, v in observation.items()}
            mask = mask[None]
        empty = ~mask.any(axis=-1)
        if self.needs_valid_action and empty.any():
            raise ValueError(f"no valid action in observation(s) {np.flatnonzero(empty).tolist()}: every action is "
                             "masked")
        actions = np.asarray(self._act(observation, mask))
        return (actions[0] if single else actions), state

    def seed_episode(self, seed: int) -> None:  # noqa: B027  (an optional hook, a no-op by default)
        """Called by evaluation before each episode so that a randomized rule plays an
        episode the same way whatever it played before (deterministic rules ignore it)."""

    @abstractmethod
    def _act(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        """Actions for a batch of observations (mask: (batch, n_actions) booleans)."""


__all__ = ["MaskedRule", "Policy"]
