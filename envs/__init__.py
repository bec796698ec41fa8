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

ENV_IDS = ("flowsched/TokenScheduling-v1", "flowsched/SwitchScheduling-v1", "flowsched/QueueThresholds-v1",
           "flowsched/TokenScheduling-Artemis-v0")
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

#: The packet model in the Artemis thesis' setting (Naouach's ns-3 runs, as measured by the
#: ns-3 program in shared/peers/ns3/artemis; benchmarks/reproduce/artemis.py's ``NS3_ERA``):
#: NewReno TCP without SACK, MSS 1448 B with 52 B of IPv4 + TCP + timestamp headers,
#: initial window 1, 100-packet drop-tail buffers (150,000 B), min RTO 1 s with RFC 6298's
#: G = 1 ms, delayed ACKs every 2 segments (200 ms timer), RFC 3042 limited transmit (ns-3's
#: default), a handshake per flow (ns-3's 3 s SYN timeout), the token request and grant
#: each travelling one one-way delay (500 us), and a link jitter of 100 ns (``link_jitter_ns``:
#: packets of synchronized senders that reach a port at the same instant no longer tie, which
#: brings every rule within 5 points of the ns-3 program on average; docs/papers.md).
ARTEMIS_PACKET: dict[str, Any] = {
    "transport": "tcp", "mss_bytes": 1448, "header_bytes": 52, "init_cwnd_packets": 1,
    "buffer_bytes": 100 * 1500, "min_rto_s": 1.0, "clock_granularity_s": 1e-3, "ack_every_segments": 2,
    "delayed_ack_timeout_s": 0.2, "limited_transmit": True, "handshake": True, "syn_timeout_s": 3.0,
    "request_delay_us": 500.0, "grant_delay_us": 500.0, "link_jitter_ns": 100.0,
}
#: The defaults of ``flowsched/TokenScheduling-Artemis-v0``: the thesis' fabric and workload
#: (one non-blocking switch of 11 hosts, 1 Gbps links with 250 us each, 10-to-1 gather bursts
#: at 10 bursts/s, workload A variant 1, k = 10, f = 5) on the packet model (``ARTEMIS_PACKET``).
ARTEMIS_KWARGS: dict[str, Any] = {
    "model": "packet", "variant": 1, "k": 10, "window": 5, "burst_size": 10, "burst_rate_hz": 10.0,
    "link_gbps": 1.0, "delay_us": 250.0, "scheduler": "ps", **ARTEMIS_PACKET,
}

gym.register(
    id="flowsched/TokenScheduling-Artemis-v0",
    entry_point="flowsched.envs.token:TokenSchedulingEnv",
    vector_entry_point="flowsched.envs.token:TokenSchedulingVecEnv",
    kwargs=ARTEMIS_KWARGS,
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
    "ARTEMIS_KWARGS", "ARTEMIS_PACKET", "ENV_IDS", "REMOVED_IDS", "QueueThresholdsEnv", "QueueThresholdsVecEnv",
    "SwitchSchedulingEnv", "SwitchSchedulingVecEnv", "TokenSchedulingEnv", "TokenSchedulingVecEnv",
]
