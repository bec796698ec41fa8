"""Actor-critic agents, their training loop and evaluation (``flowsched.agents``).

* :mod:`flowsched.agents.policies`: SB3 policies and feature extractors (symlog
  features, the Artemis epsilon-greedy actor-critic, the permutation-equivariant
  switch policy);
* :mod:`flowsched.agents.envs`: envs from a composed Hydra config;
* :mod:`flowsched.agents.training`: what ``train.py`` runs: the one training loop and
  the ``Trainer`` interface it drives; :mod:`flowsched.agents.sb3` and
  :mod:`flowsched.agents.rllib` implement it (``agent.trainer._target_``);
* :mod:`flowsched.agents.evaluation`: what ``evaluate.py`` runs (baselines and
  checkpoints, mixed, on identical traces);
* :mod:`flowsched.agents.cli`: the Hydra entry points (``flowsched-train``, ``flowsched-evaluate``).
"""
from __future__ import annotations

import importlib.util
import math

#: what ``flowsched.agents`` (train.py, evaluate.py, flowsched-train/-evaluate) needs beyond
#: the core install: the ``[train]`` extra
_TRAIN_MODULES = {"omegaconf": "omegaconf", "hydra": "hydra-core", "torch": "torch",
                  "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib"}
_missing = [dist for mod, dist in _TRAIN_MODULES.items() if importlib.util.find_spec(mod) is None]
if _missing:
    raise ImportError(f"flowsched.agents (training and evaluation) needs {', '.join(_missing)}, which the core "
                      'install does not bring: pip install "flowsched[train]" (or, in a clone, pip install -e '
                      '".[train]")')

from omegaconf import OmegaConf  # noqa: E402

if not OmegaConf.has_resolver("flowsched.mul"):
    # ${flowsched.mul:a,b,...}: product of numbers (e.g. a batch size of n_steps * lanes)
    OmegaConf.register_new_resolver("flowsched.mul", lambda *xs: math.prod(xs))


def unique_dir(path: str) -> str:
    """Creates the directory ``path`` and returns it, or ``path-2``, ``path-3``, ... when it
    exists: ``os.mkdir`` is atomic, so two runs started at the same moment (same
    timestamp in the name) never get the same directory. Used by train.yaml and
    evaluate.yaml's ``hydra.run.dir`` and ``hydra.sweep.dir`` as
    ``${flowsched.unique_dir:outputs/...}``; cached, so Hydra resolves it once per run
    (a multirun's jobs share their sweep directory and get their own subdirectories)."""
    import os

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    candidate, n = path, 1
    while True:
        try:
            os.mkdir(candidate)
            return candidate
        except FileExistsError:
            n += 1
            candidate = f"{path}-{n}"


def baseline_families(rule: str) -> list[str]:
    """The env families that have the rule-based baseline ``rule`` (from the registry of
    :mod:`flowsched.baselines`): ``${flowsched.baseline_families:${.rule}}`` in
    ``configs/agent/rule.yaml``, so no rule config lists them by hand."""
    from flowsched import baselines

    return baselines.families(str(rule))


if not OmegaConf.has_resolver("flowsched.baseline_families"):
    OmegaConf.register_new_resolver("flowsched.baseline_families", baseline_families)

if not OmegaConf.has_resolver("flowsched.unique_dir"):
    OmegaConf.register_new_resolver("flowsched.unique_dir", unique_dir, use_cache=True)
