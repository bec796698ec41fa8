"""SB3 callbacks: exploration schedule and episode charts (used by
:class:`flowsched.agents.sb3.SB3Trainer`); periodic evaluation against baselines,
checkpoints, a stop on SIGINT/SIGTERM and a wall-clock budget, which the training loop
(:func:`flowsched.agents.training.train`) now owns for every trainer: those four are kept
for scripts of your own that drive SB3's ``learn`` directly."""
from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback


class LinearEpsilon(BaseCallback):
    """Decays ``model.policy.epsilon`` linearly from ``start`` to ``end`` over the first
    ``fraction`` of ``total_timesteps`` (then keeps ``end``); logs ``charts/epsilon``."""

    def __init__(self, start: float, end: float, fraction: float, total_timesteps: int) -> None:
        super().__init__()
        self.start, self.end, self.fraction, self.total = (
            float(start),
            float(end),
            float(fraction),
            int(total_timesteps),
        )

    def value(self, t: int) -> float:
        progress = min(1.0, t / max(1.0, self.fraction * self.total))
        return self.start + (self.end - self.start) * progress

    def _on_rollout_start(self) -> None:
        epsilon = self.value(self.num_timesteps)
        # epsilon is an attribute of flowsched's masked policies, not of SB3's BasePolicy
        self.model.policy.epsilon = epsilon  # type: ignore[assignment]
        self.logger.record("charts/epsilon", epsilon)

    def _on_step(self) -> bool:
        return True


class EpisodeCharts(BaseCallback):
    """Logs the mean of finished training episodes' return and ``info`` statistics
    (e.g. ``charts/deadline_hit_ratio``) at the end of each rollout."""

    def __init__(self, keys: Sequence[str]) -> None:
        super().__init__()
        self.keys = list(keys)
        self.buf: dict[str, list[float]] = {}

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if not done:
                continue
            if "episode" in info:
                self.buf.setdefault("episode_return", []).append(info["episode"]["r"])
                self.buf.setdefault("episode_length", []).append(info["episode"]["l"])
            for k in self.keys:
                if k in info:
                    self.buf.setdefault(k, []).append(float(info[k]))
        return True

    def _on_rollout_end(self) -> None:
        for k, v in self.buf.items():
            if v:
                self.logger.record(f"charts/{k}", float(np.mean(v)))
        self.buf = {}


class PeriodicEval(BaseCallback):
    """Every ``every`` steps, evaluates the model with ``evaluate(model) -> {metric: value}``
    and logs ``eval/<metric>``, the baselines' values (``eval/baseline/<name>``, computed
    once on the same seeds) and the gap to the best baseline."""

    def __init__(self, every: int, evaluate: Callable[[Any], dict[str, float]], baseline_values: dict[str, float],
                 metric: str, higher_is_better: bool, log: Callable[[str], None] = print) -> None:
        super().__init__()
        self.every, self.evaluate, self.baselines = int(every), evaluate, baseline_values
        self.metric, self.sign, self.log = metric, (1.0 if higher_is_better else -1.0), log
        self.last = 0
        self.history: list[tuple[int, float]] = []

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.every > 0 and self.num_timesteps - self.last >= self.every:
            self.last = self.num_timesteps
            vals = self.evaluate(self.model)
            for k, v in vals.items():
                self.logger.record(f"eval/{k}", v)
            for name, v in self.baselines.items():
                self.logger.record(f"eval/baseline/{name}", v)
            if self.baselines and self.metric in vals:
                best = max(self.baselines.values(), key=lambda v: self.sign * v)
                self.logger.record("eval/gap_to_best_baseline", self.sign * (vals[self.metric] - best))
            self.history.append((self.num_timesteps, vals.get(self.metric, float("nan"))))
            self.log(f"[eval] step {self.num_timesteps}: {self.metric} = {vals.get(self.metric, float('nan')):.4f}")
            self.logger.dump(self.num_timesteps)
        return True


class Checkpoints(BaseCallback):
    """Saves ``<dir>/step_<n>.zip`` every ``every`` steps (``save(path)`` also stores
    whatever the run needs beside the model, e.g. reward-normalization statistics)."""

    def __init__(self, every: int, directory: Path, save: Callable[[Path], None]) -> None:
        super().__init__()
        self.every, self.dir, self.save = int(every), Path(directory), save
        self.last = 0

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps

    def _on_step(self) -> bool:
        if self.every > 0 and self.num_timesteps - self.last >= self.every:
            self.last = self.num_timesteps
            self.save(self.dir / f"step_{self.num_timesteps}.zip")
        return True


class StopOnSignal(BaseCallback):
    """Stops training at the next env step after SIGINT or SIGTERM.

    ``rollout_start_timesteps`` is the step count when the current rollout began, i.e.
    right after the last completed update: the interrupted rollout is not trained on,
    so a checkpoint saved after the stop should carry this count (the model's weights
    are those of that step). A second signal restores the default handler's behaviour.
    """

    def __init__(self, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> None:
        from flowsched.agents.training import SignalStop  # the training loop's signal handling

        super().__init__()
        self._signals = SignalStop(signals)
        self.signals = self._signals.signals
        self.rollout_start_timesteps = 0

    @property
    def stopped_by(self) -> int | None:
        """The signal that stopped training, None while none was received."""
        return self._signals.received

    def install(self) -> None:
        self._signals.install()

    def uninstall(self) -> None:
        self._signals.uninstall()

    def _on_rollout_start(self) -> None:
        self.rollout_start_timesteps = self.num_timesteps

    def _on_step(self) -> bool:
        return self.stopped_by is None


class TimeBudget(BaseCallback):
    """Stops training at the first env step after ``seconds`` of wall-clock time counted
    from ``start`` (a ``time.monotonic()`` value; default: when training starts).

    Like :class:`StopOnSignal`, ``rollout_start_timesteps`` is the step count of the
    last completed update: the cut rollout is not trained on. ``exhausted`` says whether
    the budget ended training.
    """

    def __init__(self, seconds: float, start: float | None = None) -> None:
        super().__init__()
        if not seconds > 0:
            raise ValueError(f"time_budget_s must be > 0, got {seconds!r}")
        self.seconds, self.start = float(seconds), start
        self.exhausted = False
        self.rollout_start_timesteps = 0

    def _on_training_start(self) -> None:
        if self.start is None:
            self.start = time.monotonic()

    def _on_rollout_start(self) -> None:
        self.rollout_start_timesteps = self.num_timesteps

    def _on_step(self) -> bool:
        assert self.start is not None
        self.exhausted = time.monotonic() - self.start >= self.seconds
        return not self.exhausted
