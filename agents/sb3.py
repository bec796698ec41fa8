"""The Stable-Baselines3 implementation of the training loop's :class:`~flowsched.agents.training.Trainer`
(``agent.kind: sb3``, ``trainer._target_: flowsched.agents.sb3.SB3Trainer``).

The model is ``agent.model`` (a ``_target_`` such as ``sb3_contrib.MaskablePPO``) on the
SB3 VecEnv of :func:`flowsched.agents.envs.make_vec_env`. The loop reaches SB3's
``learn`` through one callback (:class:`LoopCallback`) at every env step: periodic
evaluation and checkpoints, then whether to stop (a signal, the time budget).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from stable_baselines3.common.callbacks import BaseCallback

from flowsched.agents.callbacks import EpisodeCharts, LinearEpsilon
from flowsched.agents.checkpoints import load_newest_readable, save_sb3, sb3_candidates


def load_for_resume(run_dir: Path, model_cls: Any, env: Any, device: str) -> tuple[Any, Any, Path]:
    """The newest readable SB3 checkpoint of ``run_dir`` (``model.zip``, then
    ``checkpoints/step_<n>.zip`` newest first) with its VecNormalize statistics; a
    damaged one is skipped with a warning naming it. Returns (model, env, path)."""

    def load(ckpt: Path) -> tuple[Any, Any]:
        model = model_cls.load(str(ckpt), env=env, device=device)
        stats = ckpt.with_suffix(".vecnormalize.pkl")
        e = env
        from stable_baselines3.common.vec_env import VecNormalize

        if isinstance(env, VecNormalize):
            if stats.exists():
                e = VecNormalize.load(str(stats), env.venv)
                model.set_env(e)
            else:
                # runs saved before 2026-11-29 have none (the statistics were not saved)
                warnings.warn(f"{stats} (the reward normalization of {ckpt.name}) is missing: the resumed run "
                              "starts its reward statistics afresh", stacklevel=2)
        return model, e

    candidates = sb3_candidates(run_dir)
    if not candidates:
        raise FileNotFoundError(f"no model.zip and no checkpoints/step_*.zip to resume in {run_dir}")
    (model, env), ckpt = load_newest_readable(candidates, load, "checkpoint")
    return model, env, ckpt


class LoopCallback(BaseCallback):
    """The training loop inside SB3's ``learn``: at every env step, ``loop.progress`` (periodic
    evaluation, checkpoints), then stop when ``loop.stop_requested()``.

    ``rollout_start_timesteps`` is the step count when the current rollout began, i.e.
    right after the last completed update: a rollout cut by a stop is not trained on, so
    the model's weights are those of that step."""

    def __init__(self, loop: Any) -> None:
        super().__init__()
        self.loop = loop
        self.stopped = False
        self.rollout_start_timesteps = 0

    def _on_rollout_start(self) -> None:
        self.rollout_start_timesteps = self.num_timesteps

    def _on_step(self) -> bool:
        self.loop.progress(self.num_timesteps)
        self.stopped = self.loop.stop_requested()
        return not self.stopped


class SB3Trainer:
    """An SB3 (or sb3-contrib) model from ``cfg.agent.model`` on ``cfg.env``'s lanes.

    Checkpoints: ``run_dir/checkpoints/step_<n>.zip`` (periodic, and on a signal) and
    ``run_dir/model.zip`` (finished), each with its ``.vecnormalize.pkl`` when the reward
    is normalized; written atomically (:func:`flowsched.agents.checkpoints.save_sb3`)."""

    learns = True

    def __init__(self, cfg: DictConfig, run_dir: Path) -> None:
        self.cfg, self.run_dir = cfg, Path(run_dir)
        self.uses_masks = bool(cfg.agent.get("masked", False))
        self.model: Any = None
        self.env: Any = None
        self._resumed = False

    @property
    def num_timesteps(self) -> int:
        return 0 if self.model is None else int(self.model.num_timesteps)

    def _make_env(self) -> Any:
        from flowsched.agents.envs import make_vec_env

        gamma = float(self.cfg.agent.model.get("gamma", 0.99))
        return make_vec_env(self.cfg, int(self.cfg.env.num_envs), masked=self.uses_masks, gamma=gamma)

    def _attach(self, logger: Any) -> None:
        self.model.set_logger(logger)
        self.env.seed(int(self.cfg.seed) + int(self.model.num_timesteps))  # a resumed run sees new training episodes

    def start(self, logger: Any) -> None:
        from hydra.utils import instantiate

        self.env = self._make_env()
        self.model = instantiate(self.cfg.agent.model, env=self.env, seed=int(self.cfg.seed),
                                 device=self.cfg.get("device", "cpu"), verbose=0, _convert_="all")
        self._attach(logger)

    def load(self, logger: Any) -> Path:
        from hydra.utils import get_class

        env = self._make_env()
        self.model, self.env, ckpt = load_for_resume(self.run_dir, get_class(self.cfg.agent.model._target_), env,
                                                     self.cfg.get("device", "cpu"))
        self._resumed = True
        self._attach(logger)
        return ckpt

    def learn(self, total_timesteps: int, loop: Any) -> None:
        cb = LoopCallback(loop)
        callbacks: list[BaseCallback] = [cb, EpisodeCharts([self.cfg.env.metric])]
        eps = self.cfg.agent.get("epsilon")
        if eps:
            callbacks.append(LinearEpsilon(eps.start, eps.end, eps.fraction, int(self.cfg.total_timesteps)))
        self.model.learn(total_timesteps - self.model.num_timesteps, callback=callbacks,
                         progress_bar=bool(self.cfg.progress_bar), reset_num_timesteps=not self._resumed)
        if cb.stopped:
            self.model.num_timesteps = cb.rollout_start_timesteps  # the cut rollout was not trained on

    def save(self, final: bool = False) -> Path:
        path = (
            self.run_dir / "model.zip"
            if final
            else self.run_dir / "checkpoints" / f"step_{self.model.num_timesteps}.zip"
        )
        save_sb3(self.model, path)  # atomic: temporary file, fsync, rename
        return path

    def policy(self) -> Any:
        return self.model

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


__all__ = ["LoopCallback", "SB3Trainer", "load_for_resume"]
