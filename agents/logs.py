"""What a run records besides checkpoints: scalars (SB3's keys renamed into CleanRL-style
namespaces, to TensorBoard and to W&B through ``sync_tensorboard``), and the learning
curve of the periodic evaluation (``learning_curve.csv`` and ``learning_curve.png``,
:class:`LearningCurve`). The run's text log (``train.log``) is Python ``logging``
configured by Hydra: :mod:`flowsched.agents.runlog`."""
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
            project=w.project,
            entity=w.get("entity"),
            group=w.get("group"),
            name=run_name,
            mode=w.mode,
            dir=str(run_dir),
            config=OmegaConf.to_container(cfg, resolve=True),  # type: ignore[arg-type]
            # one W&B run per run directory: a resumed run continues it
            sync_tensorboard=True,
            resume="allow",
            id=w.get("id") or hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:16],
        )
    formats: list[KVWriter] = []
    if lg.get("tensorboard"):
        formats.append(NamespacedOutput(TensorBoardOutputFormat(str(run_dir / "tb"))))
    return Logger(str(run_dir), formats), wandb_run


# ---------------------------------------------------------------- the learning curve

#: files of a run directory: the periodic evaluation, one row per evaluation; the baselines
#: on the same episodes, one row per baseline; the figure of both
CURVE_CSV, CURVE_BASELINES_CSV, CURVE_PNG = "learning_curve.csv", "learning_curve_baselines.csv", "learning_curve.png"


def episode_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean and 95% confidence half-width (Student t, :func:`flowsched.agents.evaluation.summarize`)
    across episodes of every numeric episode metric (``seed`` aside): ``episodes``, then
    ``<metric>_mean``, ``<metric>_ci95`` for each."""
    import pandas as pd

    from flowsched.agents.evaluation import summarize

    df = pd.DataFrame(rows)
    metrics = [k for k in df.columns if k != "seed" and df[k].dtype.kind in "fi"]
    s = summarize(df.assign(_run=0), metrics, by=("_run",)).iloc[0]
    out: dict[str, float] = {"episodes": float(len(df))}
    for m in metrics:
        out[f"{m}_mean"], out[f"{m}_ci95"] = float(s[f"{m}_mean"]), float(s[f"{m}_ci95"])
    return out


def learning_curve_figure(curve: Any, baselines: Any, metric: str, agent: str, title: str) -> Any:
    """The learning curve: ``metric`` of the periodic evaluation against env steps, with its
    95% CI band, and each baseline on the same episodes as a horizontal dashed line with its
    band. ``curve`` and ``baselines`` are the frames of ``learning_curve.csv`` and
    ``learning_curve_baselines.csv``. A matplotlib ``Figure`` on the Agg canvas (no pyplot,
    no backend switch)."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    fig = Figure(figsize=(8.5, 4.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = [f"C{i}" for i in range(10)]
    mean, ci = f"{metric}_mean", f"{metric}_ci95"
    band_alpha = max(0.03, 0.24 / max(1, len(baselines)))  # stacked bands of many baselines stay light
    for i, (_, b) in enumerate(baselines.iterrows()):
        c = colors[(i + 1) % 10]
        m, h = float(b[mean]), float(b[ci]) if np.isfinite(b[ci]) else 0.0
        ax.axhline(m, color=c, ls="--", lw=1.2, label=f"{b['policy']} {m:.4g} ± {h:.2g}")
        if h > 0:
            ax.axhspan(m - h, m + h, color=c, alpha=band_alpha, lw=0)
    if len(curve):
        x, y = curve["step"].to_numpy(float), curve[mean].to_numpy(float)
        h = np.nan_to_num(curve[ci].to_numpy(float))
        last = f"{y[-1]:.4g} ± {h[-1]:.2g}"
        ax.plot(x, y, color=colors[0], marker="o", ms=3.5, lw=2, label=f"{agent} (last: {last})")
        ax.fill_between(x, y - h, y + h, color=colors[0], alpha=0.2, lw=0)
    if metric.endswith(("ratio", "rate")):  # a fraction: the CI bands do not push the axis past [0, 1]
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, -0.005), min(hi, 1.005))
    n = int(curve["episodes"].iloc[-1]) if len(curve) else (int(baselines["episodes"].iloc[0]) if len(baselines) else 0)
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"{metric} (mean of {n} held-out episodes)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, title="mean ± 95% CI", title_fontsize=8,
              frameon=False)
    fig.tight_layout()
    return fig


class LearningCurve:
    """``learning_curve.csv`` (one row per periodic evaluation: ``step``, ``wall_s`` (the run's
    wall-clock seconds, resumed sessions summed), ``episodes``, then mean and 95% CI of each
    episode metric, ``metric`` first), ``learning_curve_baselines.csv`` (the baselines on
    the same episodes) and ``learning_curve.png`` (:func:`learning_curve_figure`) in
    ``run_dir``, rewritten atomically at each evaluation.

    A resumed run (``keep_until``: the step of the checkpoint it continues from) keeps the
    rows up to that step and continues them; rows past it (evaluated after the last
    checkpoint, whose weights were not kept) are dropped, so steps stay increasing and
    unique."""

    def __init__(self, run_dir: Path, metric: str, agent: str, title: str, keep_until: int | None = None) -> None:
        import pandas as pd

        self.run_dir, self.metric, self.agent, self.title = Path(run_dir), metric, agent, title
        self.csv, self.png = self.run_dir / CURVE_CSV, self.run_dir / CURVE_PNG
        self.curve = pd.DataFrame()
        self.baselines = pd.DataFrame()
        if keep_until is not None and self.csv.is_file():
            old = pd.read_csv(self.csv)
            if "step" in old:
                self.curve = old[old["step"] <= keep_until].reset_index(drop=True)

    @property
    def last_wall_s(self) -> float:
        return float(self.curve["wall_s"].iloc[-1]) if len(self.curve) and "wall_s" in self.curve else 0.0

    def set_baselines(self, summaries: dict[str, dict[str, float]]) -> None:
        import pandas as pd

        from flowsched.agents.checkpoints import atomic_path

        first = ["episodes", f"{self.metric}_mean", f"{self.metric}_ci95"]
        self.baselines = pd.DataFrame(
            [
                {"policy": k, **{c: v[c] for c in first if c in v}, **{c: x for c, x in v.items() if c not in first}}
                for k, v in summaries.items()
            ]
        )
        if "episodes" in self.baselines:
            self.baselines["episodes"] = self.baselines["episodes"].astype(int)
        with atomic_path(self.run_dir / CURVE_BASELINES_CSV) as tmp:
            self.baselines.to_csv(tmp, index=False)

    def add(self, step: int, wall_s: float, summary: dict[str, float]) -> None:
        """A row for the evaluation at ``step`` (replacing one at the same step), then both files."""
        import pandas as pd

        first = [f"{self.metric}_mean", f"{self.metric}_ci95"]
        row = {"step": int(step), "wall_s": round(float(wall_s), 3), "episodes": int(summary.get("episodes", 0)),
               **{k: summary[k] for k in first if k in summary},
               **{k: v for k, v in summary.items() if k not in first and k != "episodes"}}
        kept = self.curve[self.curve["step"] != step] if len(self.curve) else self.curve
        self.curve = pd.concat([kept, pd.DataFrame([row])], ignore_index=True).sort_values("step", ignore_index=True)
        self.write()

    def write(self) -> None:
        from flowsched.agents.checkpoints import atomic_path

        if not len(self.curve):
            return
        with atomic_path(self.csv) as tmp:
            self.curve.to_csv(tmp, index=False)
        if f"{self.metric}_mean" in self.curve:
            fig = learning_curve_figure(self.curve, self.baselines, self.metric, self.agent, self.title)
            with atomic_path(self.png) as tmp:
                fig.savefig(tmp, dpi=120, bbox_inches="tight")
