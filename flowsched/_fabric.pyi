"""Type stub of the native simulator (fabric/py/src/lib.rs); checked by mypy.stubtest in tests."""
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Graph",
    "PacketSimulator",
    "PinnedRoutes",
    "Simulator",
    "SwitchConfig",
    "Trace",
    "SwitchVecEnv",
    "TokenConfig",
    "TokenVecEnv",
    "gather_bursts",
    "scheduler_names",
    "switch_layout",
    "token_layout",
]

@final
class Graph:
    """A graph topology's links and hosts with its routing tables (``flowsched.topology.Graph``)."""
    def __new__(
        cls,
        n_nodes: int,
        link_from: list[int],
        link_to: list[int],
        link_gbps: list[float],
        link_weight: list[int],
        host_nodes: list[int],
        link_names: list[str],
        link_delay_s: list[float] | None = None,
    ) -> Graph: ...
    @property
    def n_hosts(self) -> int: ...
    @property
    def n_links(self) -> int: ...
    def host_rates_gbps(self) -> npt.NDArray[np.float64]: ...
    def n_paths(self, src: int, dst: int) -> int: ...
    def path(self, flow_id: int, src: int, dst: int, ecmp_seed: int) -> list[int]: ...
    def path_nodes(
        self, src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], ecmp_seed: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
    def path_links(
        self, src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], ecmp_seed: int
    ) -> npt.NDArray[np.int64]: ...
    def path_delay_s(
        self, src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], ecmp_seed: int, delay_per_hop_s: float
    ) -> npt.NDArray[np.float64]: ...
    def check_route(self, src: int, dst: int, nodes: list[int]) -> str | None: ...
    def pin(
        self,
        src: npt.NDArray[np.int64],
        dst: npt.NDArray[np.int64],
        node_off: npt.NDArray[np.int64],
        nodes: npt.NDArray[np.int64],
    ) -> PinnedRoutes: ...

@final
class PinnedRoutes:
    """Routes pinned to the flows of one trace on a graph (``Graph.pin``): the ``topology`` of a
    ``Simulator`` or ``PacketSimulator`` of that trace (the env configs refuse it)."""
    @property
    def n_flows(self) -> int: ...
    @property
    def graph(self) -> Graph: ...
    def links(self, i: int) -> list[int]: ...

@final
class Simulator:
    def __new__(
        cls,
        arrival_s: npt.NDArray[np.float64],
        src: npt.NDArray[np.int64],
        dst: npt.NDArray[np.int64],
        size_bytes: npt.NDArray[np.float64],
        deadline_s: npt.NDArray[np.float64],
        weight: npt.NDArray[np.float64],
        data_span_s: npt.NDArray[np.float64],
        size_known: npt.NDArray[np.bool_],
        *,
        topology: str | Graph | PinnedRoutes,
        host_gbps: npt.NDArray[np.float64],
        tors: int = 0,
        hosts_per_tor: int = 0,
        spines: int = 0,
        core_gbps: float = 0.0,
        ecmp_seed: int = 0,
        scheduler: str = "ps",
        admission: str | None = None,
        k: int = 0,
        window: int = 0,
        terminate_missed: bool = False,
        delay_per_hop_s: float = 0.0,
        seed: int = 0,
        pias_thresholds_bytes: list[float] = ...,
        pias_sharing: str = "fifo",
        incomplete_sharing: str = "fifo",
        racs: tuple[float, float, float, float] = ...,
        sdc_thresholds_bytes: tuple[float, float] = ...,
        sdc_weights: tuple[float, float, float] = ...,
        max_interval_s: float | None = None,
        pause_on_flow_change: bool = False,
        allocator: str = "auto",
        inject_stall_at_s: float | None = None,  # test only: forces the progress guard's error
    ) -> Simulator: ...
    def run(self) -> None: ...
    def step(self, until: float = ..., max_times: int | None = None) -> tuple[str, int]: ...
    def run_until_ended(self, n: int, until: float = ...) -> tuple[str, npt.NDArray[np.int64]]: ...
    def set_pias_thresholds(self, thresholds_bytes: list[float]) -> None: ...
    def admit(self, dst: int, position: int) -> None: ...
    def window(self, dst: int) -> npt.NDArray[np.int64]: ...
    def set_scores(self, flows: npt.NDArray[np.int64], scores: npt.NDArray[np.float64]) -> None: ...
    @property
    def now(self) -> float: ...
    def active(self) -> npt.NDArray[np.int64]: ...
    def rates(self) -> npt.NDArray[np.float64]: ...
    def results(self) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.bool_]]: ...
    def links(self) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
    def stats(self) -> dict[str, int]: ...

@final
class PacketSimulator:
    def __new__(
        cls,
        arrival_s: npt.NDArray[np.float64],
        src: npt.NDArray[np.int64],
        dst: npt.NDArray[np.int64],
        size_bytes: npt.NDArray[np.float64],
        deadline_s: npt.NDArray[np.float64],
        weight: npt.NDArray[np.float64],
        data_span_s: npt.NDArray[np.float64],
        size_known: npt.NDArray[np.bool_],
        *,
        topology: str | Graph | PinnedRoutes,
        host_gbps: npt.NDArray[np.float64],
        tors: int = 0,
        hosts_per_tor: int = 0,
        spines: int = 0,
        core_gbps: float = 0.0,
        ecmp_seed: int = 0,
        scheduler: str = "ps",
        packet: dict[str, Any] | None = None,
        delay_per_hop_s: float = 0.0,
        pias_thresholds_bytes: list[float] = ...,
        terminate_missed: bool = False,
        admission: str | None = None,
        k: int = 0,
        window: int = 0,
        seed: int = 0,
        pause_on_flow_change: bool = False,
    ) -> PacketSimulator: ...
    def run(self) -> None: ...
    def step(self, until: float) -> bool: ...
    def run_until_ended(self, n: int, until: float = ...) -> tuple[str, npt.NDArray[np.int64]]: ...
    @property
    def now(self) -> float: ...
    @property
    def done(self) -> bool: ...
    @property
    def transport(self) -> str: ...
    def results(self) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.bool_] | npt.NDArray[np.uint32]]: ...
    def stats(self) -> dict[str, int]: ...
    def port_stats(self) -> dict[str, list[str] | npt.NDArray[np.uint64] | npt.NDArray[np.float64]]: ...
    def queue_samples(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
    def windows(self) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.uint32]]: ...
    @property
    def mss_bytes(self) -> int: ...
    def set_score(self, i: int, score: float) -> None: ...
    def set_scores(self, flows: npt.NDArray[np.int64], scores: npt.NDArray[np.float64]) -> None: ...
    def set_pias_thresholds(self, thresholds_bytes: list[float]) -> None: ...
    def links(self) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
    @property
    def peak_tokens(self) -> npt.NDArray[np.uint32]: ...

def scheduler_names() -> list[str]: ...
def gather_bursts(
    *,
    seed: int,
    class_weights: list[float],
    class_sizes_bytes: list[float],
    class_deadlines_s: list[float],
    exact: bool,
    burst_size: int,
    burst_rate_hz: float,
    n_bursts: int,
    dst: int,
    hosts: int,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]: ...

@final
class Trace:
    def __new__(
        cls,
        arrival_s: npt.NDArray[np.float64],
        src: npt.NDArray[np.int64],
        dst: npt.NDArray[np.int64],
        size_bytes: npt.NDArray[np.float64],
        deadline_s: npt.NDArray[np.float64],
        weight: npt.NDArray[np.float64],
        data_span_s: npt.NDArray[np.float64],
        size_known: npt.NDArray[np.bool_],
    ) -> Trace: ...
    def __len__(self) -> int: ...

@final
class TokenConfig:
    def __new__(
        cls,
        *,
        topology: str | Graph,
        host_gbps: npt.NDArray[np.float64],
        tors: int = 0,
        hosts_per_tor: int = 0,
        spines: int = 0,
        core_gbps: float = 0.0,
        ecmp_seed: int = 0,
        scheduler: str = "ps",
        k: int,
        window: int,
        delay_per_hop_s: float = 0.0,
        terminate_missed: bool = False,
        reward: str = "deadline",
        class_weights: list[float],
        class_sizes_bytes: list[float],
        class_deadlines_s: list[float],
        exact: bool = True,
        burst_size: int,
        burst_rate_hz: float,
        n_bursts: int,
        dst: int = 0,
        obs_max_mb: float = ...,
        obs_max_ms: float = ...,
        obs_max_count: float = ...,
        masked_action: str = "oldest",
        packet: dict[str, Any] | None = None,
    ) -> TokenConfig: ...
    @property
    def model(self) -> str: ...
    @property
    def window(self) -> int: ...

_F32 = npt.NDArray[np.float32]
_F64 = npt.NDArray[np.float64]
_Bool = npt.NDArray[np.bool_]
#: (obs part 0, obs part 1, obs part 2, reward, terminated, truncated, masked, stats):
#: numpy arrays allocated once by the native env and written in place by every call.
_Buffers = tuple[_F32, _F32, _F32, _F64, _Bool, _Bool, _Bool, _F64]
#: a lane's episode: its flows and their outcome so far, as columns
_Columns = dict[str, npt.NDArray[np.float64] | npt.NDArray[np.int64] | npt.NDArray[np.bool_]]

@final
class TokenVecEnv:
    def __new__(
        cls, config: TokenConfig, num_envs: int, threads: int = 1, *, single: bool = False,
        max_episode_steps: int | None = None,
    ) -> TokenVecEnv: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def buffers(self) -> _Buffers: ...
    def reset(self, seeds: npt.NDArray[np.uint64] | None = None) -> None: ...
    def step(self, actions: npt.NDArray[np.int64]) -> tuple[bool, bool]: ...
    def step_one(self, action: int) -> None: ...
    def reset_done(self) -> None: ...
    def set_trace(self, trace: Trace) -> None: ...
    def truncate(self, lanes: npt.NDArray[np.bool_]) -> None: ...
    def needs_reset(self) -> _Bool: ...
    def n_choices(self, lane: int) -> int: ...
    def decision_dst(self, lane: int) -> int: ...
    def now(self, lane: int) -> float: ...
    def episode(self, lane: int) -> _Columns: ...

def token_layout() -> tuple[int, int, list[str]]: ...

@final
class SwitchConfig:
    def __new__(
        cls,
        *,
        topology: str | Graph,
        host_gbps: npt.NDArray[np.float64],
        tors: int = 0,
        hosts_per_tor: int = 0,
        spines: int = 0,
        core_gbps: float = 0.0,
        ecmp_seed: int = 0,
        max_flows: int,
        decision_interval_s: float | None = None,
        reward: str = "fct",
        delay_per_hop_s: float = 0.0,
        terminate_missed: bool = False,
        obs_max_mb: float = ...,
        obs_max_ms: float = ...,
        obs_max_count: float = ...,
        hide_sizes: bool = False,
        packet: dict[str, Any] | None = None,
    ) -> SwitchConfig: ...
    @property
    def max_flows(self) -> int: ...
    @property
    def model(self) -> str: ...

@final
class SwitchVecEnv:
    def __new__(
        cls, config: SwitchConfig, num_envs: int, threads: int = 1, *, single: bool = False,
        max_episode_steps: int | None = None,
    ) -> SwitchVecEnv: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def buffers(self) -> _Buffers: ...
    def needs_reset(self) -> _Bool: ...
    def set_next_trace(self, lane: int, trace: Trace) -> None: ...
    def truncate(self, lanes: npt.NDArray[np.bool_]) -> None: ...
    def reset(self) -> None: ...
    def reset_done(self) -> None: ...
    def step(self, scores: npt.NDArray[np.float32]) -> None: ...
    def now(self, lane: int) -> float: ...
    def results(self, lane: int) -> _Columns: ...

def switch_layout() -> tuple[int, list[str]]: ...
