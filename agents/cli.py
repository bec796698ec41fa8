"""Hydra entry points: ``train.py`` / ``flowsched-train`` and ``evaluate.py`` / ``flowsched-evaluate``.

Before Hydra composes the config, an override that names an unknown option of a config
group (``experiment=token_highlaod``) stops with the valid options; after composing,
the config is checked (types, ranges, unknown keys, env families; the topology and env
built once) before anything is trained or evaluated, for every job of a sweep before the
first one starts. A config error exits 1 with a one-paragraph message, without a traceback.

Exit codes of ``train.py``: 0 finished; 1 a config or runtime error; 130 stopped by
SIGINT and 143 stopped by SIGTERM (128 + the signal number, as a shell reports a
process killed by the signal), both after saving a checkpoint to resume from.
"""
from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

import flowsched.agents  # noqa: F401  (registers the config resolvers)
from flowsched.agents.config_checks import (
    ConfigError,
    check_evaluate_config,
    check_evaluate_envs,
    check_fresh_run_dir,
    check_group_names,
    check_sweep,
    check_train_config,
)
from flowsched.agents.runlog import emit

log = logging.getLogger(__name__)


def _config_error(script: str, e: ConfigError, out_dir: str | None = None) -> SystemExit:
    """The exit of a refused config; ``out_dir`` (the run's directory, made by Hydra for
    this invocation) is removed when it holds nothing but Hydra's record and an empty log,
    so that refused runs leave no directories behind (nor anything evaluate.py could take
    for a run)."""
    if out_dir is not None:
        d = Path(out_dir)
        names = {p.name for p in d.iterdir()} if d.is_dir() else {"?"}
        logs = [d / n for n in names if n.endswith(".log")]
        if names <= {".hydra", "train.log", "evaluate.log"} and all(p.stat().st_size == 0 for p in logs):
            shutil.rmtree(d, ignore_errors=True)
    return SystemExit(f"{script}: error: {e}")


@hydra.main(version_base="1.3", config_path="pkg://flowsched.configs", config_name="train")
def _train(cfg: DictConfig) -> None:
    hc = HydraConfig.get()
    try:
        if not cfg.get("resume"):  # before the heavy imports: refused at once
            check_fresh_run_dir(Path(hc.runtime.output_dir))
        from flowsched.agents.training import main_config_check, train

        if not cfg.get("resume"):
            main_config_check(cfg)
        status = train(cfg, Path(hc.runtime.output_dir), overrides=list(hc.overrides.task),
                       choices=dict(hc.runtime.choices))
    except ConfigError as e:
        raise _config_error("train.py", e, None if cfg.get("resume") else hc.runtime.output_dir) from None
    emit(log, f"run directory: {status['run_dir']} ({status['status']}, {status['num_timesteps']} steps)")
    if status["status"] == "interrupted":
        raise SystemExit(128 + int(status.get("signal", 2)))


@hydra.main(version_base="1.3", config_path="pkg://flowsched.configs", config_name="evaluate")
def _evaluate(cfg: DictConfig) -> None:
    from flowsched.agents.config_checks import check_fresh_evaluation_dir
    from flowsched.agents.report import evaluate

    try:
        check_fresh_evaluation_dir(Path(HydraConfig.get().runtime.output_dir))
        _check_evaluate_job(cfg)
        evaluate(cfg, Path(HydraConfig.get().runtime.output_dir))
    except ConfigError as e:
        raise _config_error("evaluate.py", e, HydraConfig.get().runtime.output_dir) from None


def _check_train_job(cfg: DictConfig) -> None:
    """What a train.py job checks before it starts (:func:`flowsched.agents.training.main_config_check`
    for a new run; a resumed run's saved config is checked when it is loaded)."""
    if cfg.get("resume"):
        check_train_config(cfg)
        return
    from flowsched.agents import training

    training.main_config_check(cfg)


def _check_evaluate_job(cfg: DictConfig) -> None:
    """What an evaluate.py job checks before it starts: the values and keys, then the
    workloads' env families and the envs of its cells, built once."""
    check_evaluate_config(cfg)
    check_evaluate_envs(cfg)


def train_main() -> None:
    """Train ``agent`` on ``env``/``workload``/``topology``, then evaluate it against the baselines."""
    try:
        check_group_names(sys.argv[1:])
        check_sweep(sys.argv[1:], _check_train_job)
    except ConfigError as e:
        raise _config_error("train.py", e) from None
    _train()


def evaluate_main() -> None:
    """Evaluate policies (baselines and checkpoints) over workloads x loads x seeds."""
    try:
        check_group_names(sys.argv[1:])
        check_sweep(sys.argv[1:], _check_evaluate_job, "evaluate")
    except ConfigError as e:
        raise _config_error("evaluate.py", e) from None
    _evaluate()
