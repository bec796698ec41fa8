"""Fixed-threshold policies for the queue-threshold env (QueueThresholds-v1)."""
from __future__ import annotations

from typing import Any

import numpy as np

from flowsched import workloads as wl
from flowsched.baselines.registry import rules
from flowsched.baselines.thresholds import optimal_thresholds
from flowsched.baselines.types import Prediction


@rules("thresholds", "threshold")
class ThresholdRule:
    """A :class:`~flowsched.baselines.types.Policy` that sets the same demotion thresholds at every step:

    * ``pias_static``: the PIAS-NS2 table of ``workload`` at the nearest tabulated load
      (8 queues; ``flowsched.workloads.pias_thresholds``);
    * ``pias_optimal``: the thresholds that minimize the mean FCT of ``workload`` at
      ``load`` under the M/G/1 priority-queue model of the pFabric paper
      (:func:`flowsched.baselines.thresholds.optimal_thresholds`, demotion reading).

    ``n_queues``, ``min_threshold_bytes`` and ``max_threshold_bytes`` must be the env's.
    """

    RULES = ("pias_static", "pias_optimal")

    def __init__(self, rule: str, workload: Any = "websearch", load: float = 0.8, n_queues: int = 8,
                 link_gbps: float = 10.0, min_threshold_bytes: float = 1e3, max_threshold_bytes: float = 1e9) -> None:
        from flowsched.envs.thresholds import action_from_thresholds

        if rule not in self.RULES:
            raise ValueError(f"unknown threshold baseline {rule!r}; known: {', '.join(self.RULES)}")
        if rule == "pias_static":
            th = list(wl.pias_thresholds(workload, load, nearest=True))
            if len(th) != n_queues - 1:
                raise ValueError(f"the PIAS tables have 8 queues (7 thresholds); the env has {n_queues} queues")
        else:
            th = optimal_thresholds(workload, load, n_queues, link_gbps)
        self.rule, self.thresholds_bytes = rule, [float(x) for x in th]
        self.action = action_from_thresholds(self.thresholds_bytes, min_threshold_bytes, max_threshold_bytes)

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False,
                action_masks: Any = None) -> Prediction:
        """The fixed action (one per observation of a batch); ``action_masks`` is
        accepted for interchangeability and ignored (every action is valid)."""
        obs = np.asarray(observation)
        if obs.ndim == 1:
            return self.action.copy(), state
        return np.tile(self.action, (obs.shape[0], 1)), state

    def __repr__(self) -> str:
        return f"ThresholdRule({self.rule!r}, thresholds_bytes={self.thresholds_bytes})"
