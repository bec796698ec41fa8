"""Evaluation of policies (baselines and trained checkpoints, mixed) on identical traces.

Every policy plays the same episodes: episode ``j`` of a (workload, load) cell is the
single env reset with seed ``seed + j``, and the envs draw their whole episode from
that seed, so all policies see the same arrivals, sizes and deadlines.

Metrics are :mod:`flowsched.metrics`' (as SB3's ``evaluate_policy``, this module plays
episodes and collects raw per-flow outcomes; it defines no metric of its own): per-flow
``slowdown`` and ``deadline_met``, FCT and slowdown means and tails
(:func:`flowsched.metrics.summarize`), size buckets (:func:`flowsched.metrics.assign_buckets`).
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched import baselines
from flowsched import metrics as flow_metrics
from flowsched.baselines.types import Policy
from flowsched.agents.checkpoints import dir_candidates, load_newest_readable, sb3_candidates
from flowsched.agents.config_checks import ConfigError
from flowsched.agents.envs import effective_load, make_env
from flowsched.sim import FLOW_COLUMNS


@dataclass
class PolicySpec:
    """A policy to evaluate: anything with SB3's ``predict`` (:class:`flowsched.baselines.Policy`)."""

    label: str
    policy: Policy
    uses_masks: bool  # pass ``action_masks=env.action_masks()`` to predict
    source: str  # baseline name or checkpoint path


def find_checkpoint(path: str | Path) -> tuple[Path, Path]:
    """(checkpoint .zip, run dir) for a run directory (its final ``model.zip``, else its
    latest checkpoint) or a checkpoint path inside a run directory."""
    ckpts, run_dir = checkpoint_candidates(path)
    return ckpts[0], run_dir


def checkpoint_candidates(path: str | Path) -> tuple[list[Path], Path]:
    """([checkpoints newest first], run dir) for a run directory (``model.zip``, then
    ``checkpoints/step_<n>.zip`` by decreasing n) or ([that checkpoint], run dir) for a
    checkpoint path inside a run directory."""
    p = Path(path).expanduser().resolve()
    if p.is_dir():
        ckpts = sb3_candidates(p)
        if not ckpts:
            raise FileNotFoundError(f"no model.zip and no checkpoints/step_*.zip in {p}")
        return ckpts, p
    if not p.exists():
        raise FileNotFoundError(f"no such checkpoint or run directory: {path}")
    run_dir = p.parent.parent if p.parent.name == "checkpoints" else p.parent
    return [p], run_dir


def baseline_kwargs(cfg: DictConfig) -> dict[str, Any]:
    """The env config's ``baseline_kwargs`` (e.g. the workload a threshold rule is tuned for)."""
    kw = cfg.env.get("baseline_kwargs")
    return {} if kw is None else OmegaConf.to_container(kw, resolve=True)  # type: ignore[return-value]


def run_config(run_dir: Path) -> DictConfig:
    f = run_dir / ".hydra" / "config.yaml"
    if not f.exists():
        raise FileNotFoundError(f"{run_dir} has no .hydra/config.yaml (not a flowsched training run directory)")
    return OmegaConf.load(f)  # type: ignore[return-value]


def load_checkpoint(path: str | Path, device: str = "auto") -> tuple[PolicySpec, DictConfig]:
    """A trained agent and the config it was trained with (from the run's ``.hydra/config.yaml``):
    an SB3 model, or the RLModule of an RLlib run (``rllib_checkpoint/``)."""
    from hydra.utils import get_class

    p = Path(path).expanduser().resolve()
    rl = p / "rllib_checkpoint" if dir_candidates(p / "rllib_checkpoint") else (p if p.name == "rllib_checkpoint" else None)
    if rl is not None:
        from flowsched.agents.rllib import RLlibPolicy

        cfg = run_config(rl.parent)
        policy, used = load_newest_readable(dir_candidates(rl), lambda c: RLlibPolicy.from_checkpoint(str(c)),
                                            "RLlib checkpoint")
        return PolicySpec(f"{cfg.agent.name}@{rl.parent.name}", policy, False, str(used)), cfg
    ckpts, run_dir = checkpoint_candidates(path)
    cfg = run_config(run_dir)
    cls = get_class(cfg.agent.model._target_)
    model, ckpt = load_newest_readable(ckpts, lambda c: cls.load(str(c), device=device), "checkpoint")
    label = f"{cfg.agent.name}@{run_dir.name}" + ("" if ckpt.name == "model.zip" else f":{ckpt.stem}")
    return PolicySpec(label, model, bool(cfg.agent.get("masked", False)), str(ckpt)), cfg


def resolve_policies(names: Sequence[str], family: str, device: str = "auto",
                     baseline_kwargs: dict[str, Any] | None = None) -> list[PolicySpec]:
    """Baseline names of env family ``family`` (built with ``baseline_kwargs``, the env
    config's ``baseline_kwargs``) and checkpoint paths/run dirs, in order."""
    out = []
    valid = list(baselines.BASELINES.get(family, ()))  # the registry's names for this env family
    for name in names:
        name = str(name)
        if name in valid:
            out.append(PolicySpec(name, baselines.make(family, name, **(baseline_kwargs or {})), False, name))
        elif Path(name).expanduser().exists():
            spec, run_cfg = load_checkpoint(name, device)
            if run_cfg.env.family != family:
                raise ConfigError(f"policies: {name} was trained on env {run_cfg.env.family!r}, evaluating on {family!r}")
            out.append(spec)
        else:
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
            raise ConfigError(f"unknown policy {name!r}: not a {family} baseline ({', '.join(valid)}) and no checkpoint "
                              "or run directory at that path" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return out


def episode_flows(env: Any) -> pd.DataFrame | None:
    """Per-flow outcome of the env's finished episode: its ``results()`` (every flowsched
    env gives the columns of :attr:`flowsched.Results.flows`), None for an env without one.

    ``slowdown`` and ``deadline_met`` are recomputed with :func:`flowsched.metrics.slowdown`
    and :func:`flowsched.metrics.deadline_met` (the one deadline test, with the tolerance
    the env's ``info["deadlines_met"]`` uses too), so that an env of another package with
    only ``arrival_s, size_bytes, deadline_s, fct_s, ideal_fct_s, terminated`` works too
    (``weight`` then defaults to 1 and ``finish_s`` to ``arrival_s + fct_s``)."""
    if hasattr(env, "results"):
        df = env.results()
    elif hasattr(env, "episode"):  # the token env's earlier name
        df = env.episode()
    else:
        return None
    out = pd.DataFrame({c: df[c] for c in FLOW_COLUMNS if c in df})
    fct = out["fct_s"].to_numpy(np.float64)
    if "weight" not in out:
        out["weight"] = 1.0
    if "finish_s" not in out:
        out["finish_s"] = out["arrival_s"].to_numpy(np.float64) + fct
    out["slowdown"] = flow_metrics.slowdown(fct, out["ideal_fct_s"])
    out["deadline_met"] = flow_metrics.deadline_met(fct, out["deadline_s"], out["terminated"])
    return out[[c for c in FLOW_COLUMNS if c in out]]


def episode_metrics(flows: pd.DataFrame) -> dict[str, float]:
    """Mean and p99 of the FCT (ms) and of the slowdown over an episode's finished flows, by
    :func:`flowsched.metrics.summarize` (its finished-flow and quantile conventions)."""
    o = flow_metrics.summarize(flows, quantiles=(0.99,)).overall
    return {"mean_fct_ms": o["fct_mean_s"] * 1e3, "p99_fct_ms": o["fct_p99_s"] * 1e3,
            "mean_slowdown": o["slowdown_mean"], "p99_slowdown": o["slowdown_p99"]}


def run_episodes(spec: PolicySpec, cfg: DictConfig, seeds: Sequence[int], *, workload: DictConfig | None = None,
                 load: float | None = None, per_flow: bool = True) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """Plays one episode per seed; returns one row of metrics per episode and the flows."""
    env = make_env(cfg, evaluation=True, workload=workload, load=load)
    rows, flows = [], []
    for seed in seeds:
        if hasattr(spec.policy, "seed_episode"):  # randomized rules replay the same way
            spec.policy.seed_episode(int(seed))
        obs, _ = env.reset(seed=int(seed))
        done, ret, steps, masked = False, 0.0, 0, 0
        info: dict[str, Any] = {}
        while not done:
            if spec.uses_masks:
                action, _ = spec.policy.predict(obs, deterministic=True, action_masks=env.action_masks())
            else:
                action, _ = spec.policy.predict(obs, deterministic=True)
            obs, r, terminated, truncated, info = env.step(action)
            ret += float(r)
            steps += 1
            masked += bool(info.get("masked_action", False))
            done = terminated or truncated
        row: dict[str, Any] = {"seed": int(seed), "return": ret, "steps": steps, "masked_action_rate": masked / max(steps, 1)}
        row.update({k: float(v) for k, v in info.items() if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)})
        f = episode_flows(env) if per_flow else None
        if f is not None:
            row.update(episode_metrics(f))
            f.insert(0, "seed", int(seed))
            flows.append(f)
        rows.append(row)
    env.close()
    return rows, (pd.concat(flows, ignore_index=True) if flows else None)


def _run_task(source: str, family: str, bkw: dict[str, Any], device: str, cfg: dict, seeds: list[int],
              wcfg: dict | None, load: float | None, per_flow: bool) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """One (policy, cell) of the grid inside a Ray task: the policy is rebuilt from its source."""
    import flowsched  # noqa: F401  (registers the envs in the worker)

    (spec,) = resolve_policies([source], family, device, baseline_kwargs=bkw)
    return run_episodes(spec, OmegaConf.create(cfg), seeds, workload=None if wcfg is None else OmegaConf.create(wcfg),
                        load=load, per_flow=per_flow)


def evaluate_grid(specs: Sequence[PolicySpec], cfg: DictConfig, cells: Sequence[tuple[str, DictConfig, float | None]],
                  seeds: Sequence[int], per_flow: bool = True, log: Any = None,
                  launcher: str = "local") -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Every policy on every (workload name, workload config, load) cell and seed.

    ``launcher="ray"`` runs each (policy, cell) as a Ray task (a local Ray, or the cluster
    of ``cfg.ray.address``); every task replays the same seeds, so the results are
    identical to the sequential run's."""
    outs: dict[tuple[int, int], Any] = {}
    if launcher == "ray":
        import ray

        from flowsched.agents.rllib import init_ray

        rcfg = cfg.get("ray") or {}
        init_ray(rcfg.get("address"), rcfg.get("num_cpus"))
        task = ray.remote(num_cpus=1)(_run_task)
        plain = OmegaConf.to_container(cfg, resolve=True)
        bkw = baseline_kwargs(cfg)
        for ci, (_, wcfg, load) in enumerate(cells):
            w = None if wcfg is None else OmegaConf.to_container(wcfg, resolve=True)
            for si, spec in enumerate(specs):
                outs[ci, si] = task.remote(spec.source, cfg.env.family, bkw, str(cfg.get("device", "cpu")), plain,
                                           list(seeds), w, load, per_flow)
    elif launcher != "local":
        raise ValueError(f"unknown launcher {launcher!r}; known: local, ray")
    results, flows = [], []
    for ci, (wname, wcfg, load) in enumerate(cells):
        eff_load = effective_load(cfg, wcfg, load)
        for si, spec in enumerate(specs):
            if launcher == "ray":
                rows, f = ray.get(outs[ci, si])
            else:
                rows, f = run_episodes(spec, cfg, seeds, workload=wcfg, load=load, per_flow=per_flow)
            tag = {"policy": spec.label, "workload": wname, "load": np.nan if eff_load is None else float(eff_load)}
            results += [{**tag, **r} for r in rows]
            if f is not None:
                for k, v in reversed(tag.items()):
                    f.insert(0, k, v)
                flows.append(f)
            if log is not None:
                log(f"  {spec.label:<28} {wname} load={eff_load:.3g}: {len(rows)} episodes" if eff_load is not None
                    else f"  {spec.label:<28} {wname}: {len(rows)} episodes")
    return pd.DataFrame(results), (pd.concat(flows, ignore_index=True) if flows else None)


def t_quantile(n: int, q: float = 0.975) -> float:
    """Student-t quantile with n - 1 degrees of freedom (normal for n > 30)."""
    if n < 2:
        return float("nan")
    try:
        from scipy import stats

        return float(stats.t.ppf(q, n - 1))
    except ImportError:  # pragma: no cover
        return 1.959964


def summarize(results: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("policy", "workload", "load")) -> pd.DataFrame:
    """Mean, std, n and 95% confidence half-width (Student t) across seeds of each metric."""
    rows = []
    for key, g in results.groupby(list(by), sort=False, dropna=False):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        for m in metrics:
            if m not in g:
                continue
            v = g[m].dropna().to_numpy(float)
            n = v.size
            std = float(v.std(ddof=1)) if n > 1 else float("nan")
            row.update({f"{m}_mean": float(v.mean()) if n else float("nan"), f"{m}_std": std, f"{m}_n": n,
                        f"{m}_ci95": t_quantile(n) * std / math.sqrt(n) if n > 1 else float("nan")})
        rows.append(row)
    return pd.DataFrame(rows)


def format_table(summary: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("policy", "workload", "load"),
                 markdown: bool = False) -> str:
    """The summary as a text (or Markdown) table of ``mean ± 95% CI``."""
    cols = [m for m in metrics if f"{m}_mean" in summary]
    by = [b for b in by if b in summary and summary[b].nunique(dropna=False) > (1 if b != "policy" else 0)]
    header = [*by, *cols]
    lines = []
    for _, r in summary.iterrows():
        cells = [f"{r[b]:.3g}" if isinstance(r[b], float) else str(r[b]) for b in by]
        for m in cols:
            mean, ci = r[f"{m}_mean"], r[f"{m}_ci95"]
            cells.append(f"{mean:.4g}" + ("" if not np.isfinite(ci) else f" ± {ci:.2g}"))
        lines.append(cells)
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(c) + " |" for c in lines]
        return "\n".join(out)
    widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths)), *(fmt.format(*c) for c in lines)])


def size_buckets(sizes: pd.Series) -> pd.Series:
    """Each flow's size bucket, by :func:`flowsched.metrics.assign_buckets` (left-closed,
    labelled by :func:`flowsched.metrics.bucket_labels`): the default edges
    (:data:`flowsched.metrics.DEFAULT_BUCKETS_BYTES`), or, for a workload of at most 6
    distinct sizes (the Artemis classes), edges at its sizes, so that each size is a bucket.
    An ordered categorical: figures show the buckets from small to large."""
    uniq = np.unique(sizes.dropna().to_numpy(np.float64))
    edges = tuple(uniq[1:]) if 1 < uniq.size <= 6 else flow_metrics.DEFAULT_BUCKETS_BYTES
    return pd.Series(flow_metrics.assign_buckets(sizes.to_numpy(np.float64), edges), index=sizes.index)


def draw_figures(results: pd.DataFrame, flows: pd.DataFrame | None, out_dir: Path, metric: str) -> list[Path]:
    """PNG figures: FCT CDF, FCT and slowdown by size bucket, ``metric`` per policy (with 95% CI)."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    cells = results[["workload", "load"]].drop_duplicates().itertuples(index=False)
    for wname, load in cells:
        tag = f"{wname}" + ("" if pd.isna(load) else f"_load{load:g}")
        sel_r = results[(results.workload == wname) & ((results.load == load) | (pd.isna(load) & results.load.isna()))]
        if flows is not None:
            sel = flows[(flows.workload == wname) & ((flows.load == load) | (pd.isna(load) & flows.load.isna()))]
            fig, ax = plt.subplots(figsize=(6, 4))
            for pol, g in sel.groupby("policy", sort=False):
                x = np.sort(g["fct_s"].dropna().to_numpy() * 1e3)
                ax.plot(x, np.arange(1, x.size + 1) / x.size, label=pol)
            ax.set(xlabel="FCT (ms)", ylabel="CDF", title=f"FCT CDF: {tag}")
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # minor labels overlap
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            paths.append(out_dir / f"fct_cdf_{tag}.png")
            fig.savefig(paths[-1], dpi=120)
            plt.close(fig)

            b = sel.assign(bucket=size_buckets(sel["size_bytes"]))
            agg = b.groupby(["bucket", "policy"], sort=False, observed=True).agg(fct_ms=("fct_s", lambda s: s.mean() * 1e3),
                                                                   slowdown=("slowdown", "mean")).reset_index()
            order = list(dict.fromkeys(sel["policy"]))
            fig, axes = plt.subplots(1, 2, figsize=(10, 4.8))
            for ax, col, lab in ((axes[0], "fct_ms", "mean FCT (ms)"), (axes[1], "slowdown", "mean slowdown")):
                piv = agg.pivot(index="bucket", columns="policy", values=col)[order]
                piv.plot.bar(ax=ax, rot=0, legend=False)
                ax.set(ylabel=lab, xlabel="flow size", title=f"{lab} by size: {tag}")
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8)
            fig.tight_layout(rect=(0, 0.06 * ((len(labels) + 2) // 3), 1, 1))
            paths.append(out_dir / f"by_size_{tag}.png")
            fig.savefig(paths[-1], dpi=120)
            plt.close(fig)
        if metric in sel_r:
            s = summarize(sel_r, [metric], by=("policy",))
            fig, ax = plt.subplots(figsize=(6, 4))
            ax.bar(s["policy"], s[f"{metric}_mean"], yerr=s[f"{metric}_ci95"].fillna(0), capsize=4)
            lo = (s[f"{metric}_mean"] - s[f"{metric}_ci95"].fillna(0)).min()
            if metric == "deadline_hit_ratio":
                ax.set_ylim(max(0.0, lo - 0.05), 1.0)
            ax.set(ylabel=metric, title=f"{metric} per policy (95% CI): {tag}")
            ax.tick_params(axis="x", rotation=30)
            fig.tight_layout()
            paths.append(out_dir / f"{metric}_{tag}.png")
            fig.savefig(paths[-1], dpi=120)
            plt.close(fig)
    return paths
