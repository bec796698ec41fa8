"""Actor-critic agents, their training loop and evaluation (``flowsched.agents``).

* :mod:`flowsched.agents.policies`: SB3 policies and feature extractors (symlog
  features, the Artemis epsilon-greedy actor-critic, the permutation-equivariant
  switch policy);
* :mod:`flowsched.agents.envs`: envs from a composed Hydra config;
* :mod:`flowsched.agents.training`: what ``train.py`` runs;
* :mod:`flowsched.agents.evaluation`: what ``evaluate.py`` runs (baselines and
  checkpoints, mixed, on identical traces);
* :mod:`flowsched.agents.cli`: the Hydra entry points (``flowsched-train``, ``flowsched-evaluate``).
"""
from __future__ import annotations

import math

from omegaconf import OmegaConf

if not OmegaConf.has_resolver("flowsched.mul"):
    # ${flowsched.mul:a,b,...}: product of numbers (e.g. a batch size of n_steps * lanes)
    OmegaConf.register_new_resolver("flowsched.mul", lambda *xs: math.prod(xs))
