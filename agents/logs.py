"""Scalar logging: SB3's keys renamed into CleanRL-style namespaces, to TensorBoard
(and to W&B through ``sync_tensorboard``)."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat


def namespaced(key: str) -> str | None:
    """SB3 key -> flowsched key (None: dropped).

    ``train/learning_rate`` -> ``charts/learning_rate``; other ``train/*`` (losses,
    entropy, KL, clip fraction, explained variance) -> ``losses/*``; ``rollout/*`` and
    ``time/fps`` -> ``charts/*``; ``charts/``, ``eval/`` are kept; other ``time/*`` dropped.
    """
    ns, _, name = key.partition("/")
    if ns == "train":
        return f"charts/{name}" if name == "learning_rate" else f"losses/{name}"
    if ns == "rollout":
        return f"charts/{name}"
    if key == "time/fps":
        return "charts/SPS"
    if ns in ("charts", "eval", "losses"):
        return key
    return None


class NamespacedOutput(KVWriter):
    """Renames keys with :func:`namespaced` and passes them to another writer."""

    def __init__(self, inner: KVWriter) -> None:
        self.inner = inner

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
        kv, ex = {}, {}
        for k, v in key_values.items():
            new = namespaced(k)
            if new is not None:
                kv[new], ex[new] = v, key_excluded.get(k, ())
        self.inner.write(kv, ex, step)

    def close(self) -> None:
        self.inner.close()


def make_logger(cfg: DictConfig, run_dir: Path, run_name: str) -> tuple[Logger, Any]:
    """The SB3 logger of a run and the W&B run (or None), as chosen by ``cfg.logger``."""
    lg = cfg.logger
    wandb_run = None
    if lg.get("wandb"):
        import wandb

        w = lg.wandb
        wandb_run = wandb.init(
            project=w.project, entity=w.get("entity"), group=w.get("group"), name=run_name, mode=w.mode,
            dir=str(run_dir), config=OmegaConf.to_container(cfg, resolve=True),  # type: ignore[arg-type]
            # one W&B run per run directory: a resumed run continues it
            sync_tensorboard=True, resume="allow", id=w.get("id") or hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:16],
        )
    formats: list[KVWriter] = []
    if lg.get("tensorboard"):
        formats.append(NamespacedOutput(TensorBoardOutputFormat(str(run_dir / "tb"))))
    return Logger(str(run_dir), formats), wandb_run
