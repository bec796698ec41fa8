"""Hydra entry points: ``train.py`` / ``flowsched-train`` and ``evaluate.py`` / ``flowsched-evaluate``."""
from __future__ import annotations

from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

import flowsched.agents  # noqa: F401  (registers the config resolvers)


@hydra.main(version_base="1.3", config_path="pkg://flowsched.configs", config_name="train")
def train_main(cfg: DictConfig) -> None:
    """Train ``agent`` on ``env``/``workload``/``topology``, then evaluate it against the baselines."""
    from flowsched.agents.training import main_config_check, train

    if not cfg.get("resume"):
        main_config_check(cfg)
    status = train(cfg, Path(HydraConfig.get().runtime.output_dir))
    print(f"run directory: {status['run_dir']} ({status['status']}, {status['num_timesteps']} steps)")
    if status["status"] == "interrupted":
        raise SystemExit(130)


@hydra.main(version_base="1.3", config_path="pkg://flowsched.configs", config_name="evaluate")
def evaluate_main(cfg: DictConfig) -> None:
    """Evaluate policies (baselines and checkpoints) over workloads x loads x seeds."""
    from flowsched.agents.report import evaluate

    evaluate(cfg, Path(HydraConfig.get().runtime.output_dir))
