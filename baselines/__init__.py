"""Rule-based scheduling policies with the agents' ``predict()`` protocol.

A baseline drives an environment exactly as a trained agent does::

    policy = flowsched.baselines.make("token", "edf")
    action, _ = policy.predict(obs)
"""
from __future__ import annotations

from flowsched.baselines.base import Policy
from flowsched.baselines.token import TokenRule

BASELINES: dict[str, tuple[str, ...]] = {"token": TokenRule.RULES}


def make(env: str, name: str, seed: int | None = 0) -> Policy:
    """The baseline ``name`` for the environment family ``env`` (``"token"``)."""
    if env == "token":
        return TokenRule(name, seed=seed)
    raise ValueError(f"no baselines for env {env!r}; known: {', '.join(BASELINES)}")


__all__ = ["BASELINES", "Policy", "TokenRule", "make"]
