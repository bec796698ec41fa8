"""Type stub of the native simulator (fabric/py/src/lib.rs); checked by mypy.stubtest in tests."""
from typing import final

import numpy as np
import numpy.typing as npt

__all__ = ["Simulator", "scheduler_names"]

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
        topology: str,
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
        racs: tuple[float, float, float, float] = ...,
        sdc_thresholds_bytes: tuple[float, float] = ...,
        sdc_weights: tuple[float, float, float] = ...,
        max_interval_s: float | None = None,
        pause_on_flow_change: bool = False,
    ) -> Simulator: ...
    def run(self) -> None: ...
    def step(self, until: float = ...) -> tuple[str, int]: ...
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

def scheduler_names() -> list[str]: ...
