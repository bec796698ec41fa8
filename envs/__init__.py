"""Gymnasium environments on the fabric simulator.

Registered when ``flowsched`` is imported, so that any codebase can create them by id::

    gym.make("flowsched:flowsched/TokenScheduling-v0")
    gym.make_vec("flowsched:flowsched/TokenScheduling-v0", num_envs=256, vectorization_mode="vector_entry_point")
"""
import gymnasium as gym

from flowsched.envs.switch import SwitchSchedulingEnv, SwitchSchedulingVecEnv
from flowsched.envs.thresholds import QueueThresholdsEnv, QueueThresholdsVecEnv
from flowsched.envs.token import TokenSchedulingEnv, TokenSchedulingVecEnv

ENV_IDS = ("flowsched/TokenScheduling-v0", "flowsched/SwitchScheduling-v0", "flowsched/QueueThresholds-v0")

gym.register(
    id="flowsched/TokenScheduling-v0",
    entry_point="flowsched.envs.token:TokenSchedulingEnv",
    vector_entry_point="flowsched.envs.token:TokenSchedulingVecEnv",
)

gym.register(
    id="flowsched/SwitchScheduling-v0",
    entry_point="flowsched.envs.switch:SwitchSchedulingEnv",
    vector_entry_point="flowsched.envs.switch:SwitchSchedulingVecEnv",
)

gym.register(
    id="flowsched/QueueThresholds-v0",
    entry_point="flowsched.envs.thresholds:QueueThresholdsEnv",
    vector_entry_point="flowsched.envs.thresholds:QueueThresholdsVecEnv",
)

__all__ = [
    "ENV_IDS", "QueueThresholdsEnv", "QueueThresholdsVecEnv", "SwitchSchedulingEnv", "SwitchSchedulingVecEnv",
    "TokenSchedulingEnv", "TokenSchedulingVecEnv",
]
