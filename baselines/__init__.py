"""Rule-based scheduling policies with the agents' ``predict()`` protocol.

A baseline drives an environment exactly as a trained agent does::

    policy = flowsched.baselines.make("token", "edf")
    action, _ = policy.predict(obs)
"""
from __future__ import annotations

from typing import Any

from flowsched.baselines.base import Policy
from flowsched.baselines.queues import ThresholdRule
from flowsched.baselines.switch import SwitchRule
from flowsched.baselines.thresholds import mean_fct_mlfq, mean_slowdown_mlfq, optimal_thresholds, partial_moment
from flowsched.baselines.token import TokenRule

BASELINES: dict[str, tuple[str, ...]] = {
    "token": TokenRule.RULES, "switch": SwitchRule.RULES, "thresholds": ThresholdRule.RULES,
}


def make(env: str, name: str, seed: int | None = 0, **kwargs: Any) -> Policy:
    """The baseline ``name`` for the environment family ``env`` (``"token"``, ``"switch"``
    or ``"thresholds"``); ``kwargs`` go to the rule (e.g. workload and load for thresholds)."""
    if env == "token":
        return TokenRule(name, seed=seed)
    if env == "switch":
        return SwitchRule(name, **kwargs)
    if env == "thresholds":
        return ThresholdRule(name, **kwargs)
    raise ValueError(f"no baselines for env {env!r}; known: {', '.join(BASELINES)}")


__all__ = [
    "BASELINES", "Policy", "SwitchRule", "ThresholdRule", "TokenRule", "make", "mean_fct_mlfq", "mean_slowdown_mlfq", "optimal_thresholds",
    "partial_moment",
]
