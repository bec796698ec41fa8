"""Gymnasium environments on the fabric simulator.

Registered when ``flowsched`` is imported, so that any codebase can create them by id::

    gym.make("flowsched:flowsched/TokenScheduling-v1")
    gym.make_vec("flowsched:flowsched/TokenScheduling-v1", num_envs=256, vectorization_mode="vector_entry_point")

Version history (each env's docstring has the details): the ``-v0`` ids were removed
when v1 changed the spaces (finite bounds, 1-D Boxes) and made every action valid;
``gym.make`` of a ``-v0`` id raises Gymnasium's ``DeprecatedEnv`` naming its ``-v1``.
"""
import importlib
from typing import TYPE_CHECKING, Any

import gymnasium as gym

if TYPE_CHECKING:
    from flowsched.envs.switch import SwitchSchedulingEnv, SwitchSchedulingVecEnv
    from flowsched.envs.thresholds import QueueThresholdsEnv, QueueThresholdsVecEnv
    from flowsched.envs.token import TokenSchedulingEnv, TokenSchedulingVecEnv

# the classes are imported on first use (PEP 562): registering by entry-point strings needs
# only gymnasium, so ``import flowsched`` does not import pandas and the simulator
_CLASSES = {"SwitchSchedulingEnv": "switch", "SwitchSchedulingVecEnv": "switch",
            "QueueThresholdsEnv": "thresholds", "QueueThresholdsVecEnv": "thresholds",
            "TokenSchedulingEnv": "token", "TokenSchedulingVecEnv": "token"}


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        return getattr(importlib.import_module(f"flowsched.envs.{_CLASSES[name]}"), name)
    if name in ("switch", "thresholds", "token", "wrappers"):  # as before, when this module imported them
        return importlib.import_module(f"flowsched.envs.{name}")
    raise AttributeError(f"module 'flowsched.envs' has no attribute {name!r}")

ENV_IDS = ("flowsched/TokenScheduling-v1", "flowsched/SwitchScheduling-v1", "flowsched/QueueThresholds-v1")
#: removed ids and their successors
REMOVED_IDS = {
    "flowsched/TokenScheduling-v0": "flowsched/TokenScheduling-v1",
    "flowsched/SwitchScheduling-v0": "flowsched/SwitchScheduling-v1",
    "flowsched/QueueThresholds-v0": "flowsched/QueueThresholds-v1",
}

gym.register(
    id="flowsched/TokenScheduling-v1",
    entry_point="flowsched.envs.token:TokenSchedulingEnv",
    vector_entry_point="flowsched.envs.token:TokenSchedulingVecEnv",
)

gym.register(
    id="flowsched/SwitchScheduling-v1",
    entry_point="flowsched.envs.switch:SwitchSchedulingEnv",
    vector_entry_point="flowsched.envs.switch:SwitchSchedulingVecEnv",
)

gym.register(
    id="flowsched/QueueThresholds-v1",
    entry_point="flowsched.envs.thresholds:QueueThresholdsEnv",
    vector_entry_point="flowsched.envs.thresholds:QueueThresholdsVecEnv",
)

__all__ = [
    "ENV_IDS", "REMOVED_IDS", "QueueThresholdsEnv", "QueueThresholdsVecEnv", "SwitchSchedulingEnv",
    "SwitchSchedulingVecEnv", "TokenSchedulingEnv", "TokenSchedulingVecEnv",
]
