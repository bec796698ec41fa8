"""The training run behind ``train.py``: build env and agent from the composed config,
learn with charts, periodic evaluation, checkpoints and a clean stop on signals, then
evaluate against the rule-based baselines on held-out seeds."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig

from flowsched.agents.checkpoints import atomic_write_text, load_newest_readable, save_sb3, sb3_candidates
from flowsched.agents.config_checks import (
    ConfigError, check_fresh_run_dir, check_train_config, merge_resume_overrides, saved_choices,
)
from flowsched.agents.callbacks import Checkpoints, EpisodeCharts, LinearEpsilon, PeriodicEval, StopOnSignal, TimeBudget
from flowsched.agents.envs import make_vec_env
from flowsched.agents.evaluation import (
    PolicySpec, baseline_kwargs, format_table, resolve_policies, run_config, run_episodes, summarize,
)
from flowsched.agents.logs import make_logger


def _log(msg: str) -> None:
    try:
        from tqdm import tqdm

        tqdm.write(msg)
    except ImportError:  # pragma: no cover
        print(msg, flush=True)


def eval_seeds(cfg: DictConfig, n: int) -> list[int]:
    """Held-out evaluation seeds: ``eval.seed, eval.seed + 1, ...`` (training lanes use
    ``seed + lane`` and continue their own streams, far below ``eval.seed``)."""
    return list(range(int(cfg.eval.seed), int(cfg.eval.seed) + int(n)))


def _episode_means(rows: list[dict[str, Any]]) -> dict[str, float]:
    df = pd.DataFrame(rows)
    return {k: float(df[k].mean()) for k in df.columns if k not in ("seed",) and df[k].dtype.kind in "fi"}


def _save(model: Any, path: Path) -> None:
    save_sb3(model, path)  # atomic: temporary file, fsync, rename


def _write_status(run_dir: Path, status: dict[str, Any]) -> None:
    atomic_write_text(run_dir / "run.json", json.dumps({k: v for k, v in status.items() if k != "summary"}, indent=1))


def load_for_resume(run_dir: Path, model_cls: Any, env: Any, device: str) -> tuple[Any, Any, Path]:
    """The newest readable SB3 checkpoint of ``run_dir`` (``model.zip``, then
    ``checkpoints/step_<n>.zip`` newest first) with its VecNormalize statistics; a
    damaged one is skipped with a warning naming it. Returns (model, env, path)."""

    def load(ckpt: Path) -> tuple[Any, Any]:
        model = model_cls.load(str(ckpt), env=env, device=device)
        stats = ckpt.with_suffix(".vecnormalize.pkl")
        e = env
        if hasattr(env, "obs_rms"):
            if not stats.exists():
                raise FileNotFoundError(f"{stats} (the reward normalization of {ckpt.name}) is missing")
            from stable_baselines3.common.vec_env import VecNormalize

            e = VecNormalize.load(str(stats), env.venv)
            model.set_env(e)
        return model, e

    candidates = sb3_candidates(run_dir)
    if not candidates:
        raise FileNotFoundError(f"no model.zip and no checkpoints/step_*.zip to resume in {run_dir}")
    (model, env), ckpt = load_newest_readable(candidates, load, "checkpoint")
    return model, env, ckpt


def _resume_config(cfg: DictConfig, run_dir: Path, overrides: list[str] | None,
                   choices: dict[str, Any] | None) -> tuple[DictConfig, list[str]]:
    if not run_dir.is_dir():
        raise ConfigError(f"resume={cfg.resume}: no such run directory")
    try:
        saved = run_config(run_dir)
    except FileNotFoundError as e:
        raise ConfigError(f"resume={cfg.resume}: {e}") from None
    if not overrides:
        return saved, []
    merged, applied = merge_resume_overrides(saved, cfg, overrides, choices, saved_choices(run_dir))
    if applied:
        from omegaconf import OmegaConf

        # the run's config now carries the change, so a later resume keeps it
        atomic_write_text(run_dir / ".hydra" / "config.yaml", OmegaConf.to_yaml(merged))
    return merged, applied


def final_evaluation(cfg: DictConfig, specs: list[PolicySpec], out_dir: Path) -> pd.DataFrame:
    """Agent and baselines on the held-out seeds; writes eval_results.csv and eval_summary.csv."""
    seeds = eval_seeds(cfg, cfg.eval.final_episodes)
    rows = []
    for spec in specs:
        r, _ = run_episodes(spec, cfg, seeds)
        rows += [{"policy": spec.label, **x} for x in r]
    results = pd.DataFrame(rows)
    metrics = list(cfg.env.report_metrics)
    summary = summarize(results, metrics, by=("policy",))
    results.to_csv(out_dir / "eval_results.csv", index=False)
    summary.to_csv(out_dir / "eval_summary.csv", index=False)
    _log(f"\nHeld-out evaluation: {len(seeds)} episodes (seeds {seeds[0]}..{seeds[-1]}), mean ± 95% CI across seeds")
    _log(format_table(summary, metrics, by=("policy",)))
    return summary


def train(cfg: DictConfig, run_dir: Path, overrides: list[str] | None = None,
          choices: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs ``cfg`` in ``run_dir`` (the Hydra output dir). With ``cfg.resume`` set, the
    run directory, config and step count are those of the run to resume; ``overrides``
    (the command line's, e.g. ``total_timesteps=250000``) are applied to its saved config
    where that is safe and refused otherwise (:func:`merge_resume_overrides`;
    ``choices``: the command line's group options).

    Raises :class:`ConfigError` for a config that cannot run (checked before anything
    is built)."""
    import torch

    started = time.monotonic()  # the time budget counts from here: setup (and Ray's start) included
    resume = cfg.get("resume")
    applied: list[str] = []
    if resume:
        run_dir = Path(resume).expanduser().resolve()
        cfg, applied = _resume_config(cfg, run_dir, overrides, choices)
        _log(f"Resuming {run_dir} with its saved config" + (f"; applied: {'; '.join(applied)}" if applied else ""))
    run_dir = Path(run_dir)
    check_train_config(cfg)
    if not resume:
        check_fresh_run_dir(run_dir)
    if cfg.get("torch_threads"):
        torch.set_num_threads(int(cfg.torch_threads))
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(int(cfg.seed))
    agent = cfg.agent
    family = cfg.env.family
    higher = cfg.env.metric_mode == "max"
    metric = cfg.env.metric
    baselines_specs = resolve_policies(list(cfg.eval.baselines), family, baseline_kwargs=baseline_kwargs(cfg))

    if agent.kind == "baseline":  # nothing to learn: evaluate the rule on the held-out seeds
        policy = instantiate(agent.policy)
        spec = PolicySpec(agent.name, policy, False, agent.name)
        summary = final_evaluation(cfg, [spec, *[b for b in baselines_specs if b.label != agent.name]], run_dir)
        status = {"run_dir": str(run_dir), "num_timesteps": 0, "status": "finished", "summary": summary.to_dict("records")}
        _write_status(run_dir, status)
        return status

    if agent.kind == "rllib":
        from flowsched.agents.rllib import train_rllib

        status = train_rllib(cfg, run_dir, resume=bool(resume), baseline_specs=baselines_specs, log=_log, started=started)
        if applied:
            status["resume_overrides"] = applied
        _write_status(run_dir, status)
        return status

    masked = bool(agent.get("masked", False))
    gamma = float(agent.model.get("gamma", 0.99))
    env = make_vec_env(cfg, int(cfg.env.num_envs), masked=masked, gamma=gamma)
    device = cfg.get("device", "auto")
    if resume:
        model, env, ckpt = load_for_resume(run_dir, get_class(agent.model._target_), env, device)
        _log(f"Loaded {ckpt} at step {model.num_timesteps}")
    else:
        model = instantiate(agent.model, env=env, seed=int(cfg.seed), device=device, verbose=0, _convert_="all")
    run_name = f"{family}/{cfg.workload.name}/{agent.name}/seed{cfg.seed}"
    logger, wandb_run = make_logger(cfg, run_dir, run_name)
    model.set_logger(logger)
    env.seed(int(cfg.seed) + int(model.num_timesteps))  # a resumed run sees new training episodes

    spec = PolicySpec(agent.name, model, masked, "training")
    seeds = eval_seeds(cfg, cfg.eval.episodes)
    base_vals = {b.label: _episode_means(run_episodes(b, cfg, seeds, per_flow=False)[0]).get(metric, float("nan"))
                 for b in baselines_specs}
    stop = StopOnSignal()
    total = int(cfg.total_timesteps)
    callbacks = [
        stop,
        EpisodeCharts([metric]),
        PeriodicEval(int(cfg.eval.every), lambda m: _episode_means(run_episodes(spec, cfg, seeds, per_flow=False)[0]),
                     base_vals, metric, higher, _log),
        Checkpoints(int(cfg.checkpoint.every), run_dir / "checkpoints", lambda p: _save(model, p)),
    ]
    budget = TimeBudget(float(cfg.time_budget_s), started) if cfg.get("time_budget_s") is not None else None
    if budget is not None:
        callbacks.append(budget)
    if agent.get("epsilon"):
        e = agent.epsilon
        callbacks.append(LinearEpsilon(e.start, e.end, e.fraction, total))
    remaining = total - int(model.num_timesteps)
    if resume and remaining <= 0:
        _log(f"The run is at step {model.num_timesteps}, total_timesteps={total}: nothing left to train")
    t0 = time.time()
    stop.install()
    try:
        if remaining > 0:
            model.learn(remaining, callback=callbacks, progress_bar=bool(cfg.progress_bar),
                        reset_num_timesteps=not resume)
    finally:
        stop.uninstall()
    status: dict[str, Any] = {"run_dir": str(run_dir), "wall_s": time.time() - t0}
    if applied:
        status["resume_overrides"] = applied
    if stop.stopped_by is not None:
        model.num_timesteps = stop.rollout_start_timesteps  # the partial rollout was not trained on
        path = run_dir / "checkpoints" / f"step_{model.num_timesteps}.zip"
        _save(model, path)
        status.update(status="interrupted", signal=int(stop.stopped_by), num_timesteps=int(model.num_timesteps),
                      checkpoint=str(path))
        _log(f"\nStopped by signal {stop.stopped_by} at step {model.num_timesteps}; saved {path}.\n"
             f"Resume with: python train.py resume={run_dir}")
    else:
        if budget is not None and budget.exhausted:
            model.num_timesteps = budget.rollout_start_timesteps  # the cut rollout was not trained on
            status["stopped_by"] = "time_budget"
            _log(f"\nTime budget of {cfg.time_budget_s} s reached at step {model.num_timesteps}")
        _save(model, run_dir / "model.zip")
        status.update(status="finished", num_timesteps=int(model.num_timesteps), checkpoint=str(run_dir / "model.zip"))
        summary = final_evaluation(cfg, [spec, *baselines_specs], run_dir)
        status["summary"] = summary.to_dict("records")
        row = summary[summary.policy == agent.name].iloc[0]
        for k in cfg.env.report_metrics:
            if f"{k}_mean" in row:
                logger.record(f"eval/final_{k}", float(row[f"{k}_mean"]))
        logger.dump(model.num_timesteps)
    _write_status(run_dir, status)
    logger.close()
    env.close()
    if wandb_run is not None:
        wandb_run.finish()
    return status


def main_config_check(cfg: DictConfig) -> None:
    """Early, readable errors for combinations that cannot work."""
    check_train_config(cfg)
    fam = cfg.env.family
    allowed = cfg.agent.get("env_families")
    if allowed is not None and fam not in allowed:
        raise SystemExit(f"agent {cfg.agent.name!r} works with env {list(allowed)}, not {fam!r} "
                         f"(try experiment={fam} or another agent=...)")
    budget = cfg.get("time_budget_s")
    if budget is not None and (isinstance(budget, bool) or not (isinstance(budget, (int, float)) and budget > 0)):
        raise SystemExit(f"time_budget_s must be a number of seconds > 0 (or null), got {budget!r}")
    wf = cfg.workload.get("env_families")
    if wf is not None and fam not in wf:
        raise SystemExit(f"workload {cfg.workload.name!r} is for env {list(wf)}, not {fam!r}")


def resolve_device(device: str) -> str:
    import torch

    return ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device


__all__ = ["eval_seeds", "final_evaluation", "main_config_check", "train"]
