"""Rule-based scheduling policies with the agents' ``predict()`` protocol.

A baseline drives an environment exactly as a trained agent does::

    policy = flowsched.baselines.make("token", "edf")
    action, _ = policy.predict(obs)

Rules register themselves per env family (:mod:`flowsched.baselines.registry`):
``available("switch")`` lists the names of a family, ``make(env, name, **kwargs)``
forwards ``kwargs`` to the rule's constructor and refuses the ones it does not take.
Every baseline, SB3 model and RLlib policy is a :class:`Policy` (a ``typing.Protocol``,
:mod:`flowsched.baselines.types`).
"""
from __future__ import annotations

from flowsched.baselines.base import MaskedRule
from flowsched.baselines.registry import (
    BASELINES,
    accepted_kwargs,
    available,
    families,
    from_config,
    make,
    register,
    rules,
)
from flowsched.baselines.types import EpisodeSeeded, MaskablePolicy, Observation, Policy, PolicyState, Prediction

# the rule modules register their rules on import, in this order: token, switch, thresholds
# isort: off
from flowsched.baselines.token import TokenRule
from flowsched.baselines.switch import SwitchRule
from flowsched.baselines.queues import ThresholdRule
from flowsched.baselines.thresholds import mean_fct_mlfq, mean_slowdown_mlfq, optimal_thresholds, partial_moment
# isort: on

__all__ = [
    "BASELINES", "EpisodeSeeded", "MaskablePolicy", "MaskedRule", "Observation", "Policy", "PolicyState", "Prediction",
    "SwitchRule", "ThresholdRule", "TokenRule", "accepted_kwargs", "available", "families", "from_config", "make",
    "mean_fct_mlfq", "mean_slowdown_mlfq", "optimal_thresholds", "partial_moment", "register", "rules",
]
