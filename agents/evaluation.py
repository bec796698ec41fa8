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

import contextlib
import difflib
import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched import baselines, metrics as flow_metrics
from flowsched.agents.checkpoints import dir_candidates, load_newest_readable, sb3_candidates
from flowsched.agents.config_checks import ConfigError
from flowsched.agents.envs import check_env_id, check_model_spaces, effective_load, make_env
from flowsched.baselines.types import MaskablePolicy, Policy
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


def load_checkpoint(path: str | Path, device: str = "cpu") -> tuple[PolicySpec, DictConfig]:
    """A trained agent and the config it was trained with (from the run's ``.hydra/config.yaml``):
    an SB3 model, or the RLModule of an RLlib run (``rllib_checkpoint/``)."""
    from hydra.utils import get_class

    p = Path(path).expanduser().resolve()
    rl = (
        p / "rllib_checkpoint"
        if dir_candidates(p / "rllib_checkpoint")
        else (p if p.name == "rllib_checkpoint" else None)
    )
    if rl is not None:
        from flowsched.agents.rllib import RLlibPolicy

        cfg = run_config(rl.parent)
        check_env_id(cfg.env.id, str(rl.parent))  # a -v0 run: refused, naming the successor
        policy, used = load_newest_readable(dir_candidates(rl), lambda c: RLlibPolicy.from_checkpoint(str(c)),
                                            "RLlib checkpoint")
        return PolicySpec(f"{cfg.agent.name}@{rl.parent.name}", policy, False, str(used)), cfg
    ckpts, run_dir = checkpoint_candidates(path)
    cfg = run_config(run_dir)
    check_env_id(cfg.env.id, str(run_dir))  # a -v0 run: refused, naming the successor
    cls: Any = get_class(cfg.agent.model._target_)  # an SB3 algorithm class (its load is a classmethod)
    model, ckpt = load_newest_readable(ckpts, lambda c: cls.load(str(c), device=device), "checkpoint")
    check_model_spaces(model, cfg, str(ckpt))  # saved against other spaces: refused, naming both
    label = f"{cfg.agent.name}@{run_dir.name}" + ("" if ckpt.name == "model.zip" else f":{ckpt.stem}")
    return PolicySpec(label, model, bool(cfg.agent.get("masked", False)), str(ckpt)), cfg


def resolve_policies(names: Sequence[str], family: str, device: str = "cpu",
                     baseline_kwargs: dict[str, Any] | None = None) -> list[PolicySpec]:
    """Baseline names of env family ``family`` (built with ``baseline_kwargs``, the env
    config's ``baseline_kwargs``) and checkpoint paths/run dirs, in order."""
    out = []
    valid = list(baselines.BASELINES.get(family, ()))  # the registry's names for this env family
    names = [str(n) for n in names]
    for name in names:
        if name in valid:
            out.append(PolicySpec(name, baselines.make(family, name, **(baseline_kwargs or {})), False, name))
        elif Path(name).expanduser().exists():
            try:
                spec, run_cfg = load_checkpoint(name, device)
            except FileNotFoundError as e:  # a run directory without a checkpoint (a rule agent's, a refused run's)
                raise ConfigError(f"policies: {name} holds no trained policy to evaluate: {e}") from e
            if run_cfg.env.family != family:
                raise ConfigError(f"policies: {name} was trained on env {run_cfg.env.family!r}, evaluating on "
                                  f"{family!r}")
            out.append(spec)
        else:
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
            raise ConfigError(f"unknown policy {name!r}: not a {family} baseline ({', '.join(valid)}) and no "
                              "checkpoint "
                              "or run directory at that path" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return _unique_labels(out, names)


def _unique_labels(specs: list[PolicySpec], names: list[str]) -> list[PolicySpec]:
    """``specs`` with a label of their own each: a policy listed twice is an error, and
    checkpoints of different runs whose labels read alike (two sweeps' job directories
    share their names) take their path as listed (``names``), in parentheses. The results
    are grouped by label, so two policies under one would be merged: their episodes counted
    together, their confidence intervals too narrow."""
    sources = [s.source for s in specs]
    for i, (src, name) in enumerate(zip(sources, names, strict=True)):
        if src in sources[:i]:
            raise ConfigError(f"{name!r} is listed twice among the policies to evaluate")
    labels = [s.label for s in specs]
    return [PolicySpec(s.label if labels.count(s.label) == 1 else f"{s.label} ({name})", s.policy, s.uses_masks,
                       s.source) for s, name in zip(specs, names, strict=True)]


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


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """Runs torch on one thread inside (when torch is loaded): a network's outputs depend
    on its thread count in their last bits (the order of its sums), which can flip an argmax
    between two equal requests; evaluations run here and in Ray tasks (one CPU each) on one
    thread alike, so both give the same flows."""
    torch = sys.modules.get("torch")
    prev = torch.get_num_threads() if torch is not None else 1
    if prev != 1:
        torch.set_num_threads(1)  # type: ignore[union-attr]
    try:
        yield
    finally:
        if prev != 1:
            torch.set_num_threads(prev)  # type: ignore[union-attr]


def run_episodes(spec: PolicySpec, cfg: DictConfig, seeds: Sequence[int], *, workload: DictConfig | None = None,
                 load: float | None = None, per_flow: bool = True,
                 fct_metrics: bool = True) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """Plays one episode per seed; returns one row of metrics per episode and the flows
    (``per_flow``: kept and returned; ``fct_metrics``: each episode's FCT and slowdown
    metrics from its flows, whether or not they are kept)."""
    with one_torch_thread():
        return _run_episodes(spec, cfg, seeds, workload, load, per_flow, fct_metrics)


def _run_episodes(spec: PolicySpec, cfg: DictConfig, seeds: Sequence[int], workload: DictConfig | None,
                  load: float | None, per_flow: bool,
                  fct_metrics: bool) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    env = make_env(cfg, evaluation=True, workload=workload, load=load)
    rows, flows = [], []
    from flowsched.progress import track  # episodes of the cell: terminals only, after 2 s

    for seed in track(seeds, f"evaluate {spec.label}", "episode"):
        if hasattr(spec.policy, "seed_episode"):  # randomized rules replay the same way
            spec.policy.seed_episode(int(seed))
        obs, _ = env.reset(seed=int(seed))
        done, ret, steps, masked = False, 0.0, 0, 0
        info: dict[str, Any] = {}
        while not done:
            if spec.uses_masks:
                masks = cast(Any, env).action_masks()  # the token env's (sb3-contrib's protocol)
                action, _ = cast(MaskablePolicy, spec.policy).predict(obs, deterministic=True, action_masks=masks)
            else:
                action, _ = spec.policy.predict(obs, deterministic=True)
            obs, r, terminated, truncated, info = env.step(action)
            ret += float(r)
            steps += 1
            masked += bool(info.get("masked_action", False))
            done = terminated or truncated
        row: dict[str, Any] = {
            "seed": int(seed),
            "return": ret,
            "steps": steps,
            "masked_action_rate": masked / max(steps, 1),
        }
        row.update(
            {k: float(v) for k, v in info.items() if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)}
        )
        f = episode_flows(env) if per_flow or fct_metrics else None
        if f is not None:
            if fct_metrics:
                row.update(episode_metrics(f))
            if per_flow:
                f.insert(0, "seed", int(seed))
                flows.append(f)
        rows.append(row)
    env.close()
    return rows, (pd.concat(flows, ignore_index=True) if flows else None)


def _run_task(
    source: str,
    family: str,
    bkw: dict[str, Any],
    device: str,
    cfg: dict,
    seeds: list[int],
    wcfg: dict | None,
    load: float | None,
    per_flow: bool,
) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
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
        plain = cast(dict, OmegaConf.to_container(cfg, resolve=True))
        bkw = baseline_kwargs(cfg)
        for ci, (_, wcfg, load) in enumerate(cells):
            w = None if wcfg is None else cast(dict, OmegaConf.to_container(wcfg, resolve=True))
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
    """Student-t quantile with n - 1 degrees of freedom."""
    if n < 2:
        return float("nan")
    from scipy import stats  # a core dependency (imported here: it is slow to import)

    return float(stats.t.ppf(q, n - 1))


def summarize(
    results: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("policy", "workload", "load")
) -> pd.DataFrame:
    """Mean, std, n and 95% confidence half-width (Student t) across seeds of each metric."""
    rows = []
    for key, g in results.groupby(list(by), sort=False, dropna=False):
        row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
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


def draw_figures(results: pd.DataFrame, flows: pd.DataFrame | None, out_dir: Path, metric: str, *,
                 reference: str | None = None, settings: str = "", metrics: Sequence[str] | None = None) -> list[Path]:
    """PNG figures (matplotlib Agg, :data:`FIG_STYLE`), each titled with its settings
    (workload, effective load, and ``settings``: topology and model): per cell, the paired
    difference of ``metric`` (and ``metrics``) to ``reference`` (default: the first policy) as
    dot and whisker, the FCT CDF (log x with labelled minor ticks, p99 marked) and FCT and
    slowdown by size bucket (smallest first); per workload with several loads, the metrics
    against load, one line per policy (``vs_load_<workload>.png``), and mean FCT, p99 FCT and
    mean slowdown against load per size bucket (``vs_load_by_size_<workload>.png``). Long
    policy labels are shortened (:func:`short_labels`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    policies = list(dict.fromkeys(results["policy"]))
    reference = policies[0] if reference is None else reference
    mets = [m for m in dict.fromkeys([metric, *(metrics or ())]) if m in results]
    paths: list[Path] = []

    def save(fig: Any, name: str) -> None:
        paths.append(out_dir / name)
        fig.savefig(paths[-1], dpi=FIG_STYLE["dpi"])
        plt.close(fig)

    paired = paired_differences(results, mets, reference) if mets else None
    bucket_rows = bucket_episode_metrics(flows) if flows is not None else None
    for wname, load in results[["workload", "load"]].drop_duplicates().itertuples(index=False):
        tag = f"{wname}" + ("" if pd.isna(load) else f"_load{load:g}")
        title = cell_title(wname, load, settings)
        if paired is not None:
            cell = paired[(paired.workload == wname) & _same_load(paired.load, load)]
            for m in mets:
                save(fig_paired(cell, m, reference, title), f"{m}_paired_{tag}.png")
        if flows is not None:
            sel = flows[(flows.workload == wname) & _same_load(flows.load, load)]
            save(fig_fct_cdf(sel, title), f"fct_cdf_{tag}.png")
            if bucket_rows is not None and not bucket_rows.empty:
                b = bucket_rows[(bucket_rows.workload == wname) & _same_load(bucket_rows.load, load)]
                save(fig_by_size(b, title), f"by_size_{tag}.png")
    for wname, rw in results.groupby("workload", sort=False):
        if rw["load"].nunique() > 1:
            lt = "effective loads " + ", ".join(f"{x:.3g}" for x in sorted(rw["load"].dropna().unique()))
            wtitle = cell_title(str(wname), None, settings, load_text=lt)
            save(fig_vs_load(rw, mets, reference, wtitle), f"vs_load_{wname!s}.png")
            if bucket_rows is not None and not bucket_rows.empty:
                b = bucket_rows[bucket_rows.workload == wname]
                if b["load"].nunique() > 1:
                    save(fig_vs_load_by_size(b, wtitle), f"vs_load_by_size_{wname!s}.png")
    return paths


#: the one style of the evaluation figures
FIG_STYLE = {"dpi": 110, "font_size": 9, "width": 6.4, "height": 4.0, "grid_alpha": 0.3}


def _same_load(col: pd.Series, load: float | None) -> pd.Series:
    return col.isna() if load is None or pd.isna(load) else col == load


def cell_title(workload: str, load: float | None, settings: str = "", load_text: str | None = None) -> str:
    """The settings line every figure carries: workload, effective load, then ``settings``."""
    lt = load_text if load_text is not None else ("load: workload's own" if load is None or pd.isna(load)
                                                  else f"effective load {load:.3g}")
    return ", ".join(x for x in (f"workload {workload}", lt, settings) if x)


def short_labels(labels: Sequence[str], width: int = 14) -> dict[str, str]:
    """Figure labels for policy labels: a label up to ``width`` characters as it is, a longer
    one (a checkpoint's ``agent@run-dir:step``) as ``<agent>#<i>`` (the agent name cut to
    ``width - 2``), ``i`` counting the shortened labels; figures with a shortened label
    list the mapping under the plot and report.md has it as a table."""
    out: dict[str, str] = {}
    k = 0
    for lab in dict.fromkeys(labels):
        if len(lab) <= width:
            out[lab] = lab
        else:
            k += 1
            out[lab] = f"{lab.split('@')[0][:width - 2]}#{k}"
    return out


def _style(ax: Any, title: str, heading: str) -> None:
    """An axes' heading and grid; ``title`` (the settings) goes once per figure, see :func:`_finish`."""
    ax.set_title(heading, fontsize=FIG_STYLE["font_size"])
    ax.grid(alpha=FIG_STYLE["grid_alpha"])


def _finish(fig: Any, title: str, names: dict[str, str]) -> None:
    """The settings as the figure's title (wrapped to the figure's width), then the layout and
    the note mapping shortened labels."""
    import textwrap

    width = int(fig.get_figwidth() * 13)
    fig.suptitle("\n".join(textwrap.wrap(title, width)), fontsize=FIG_STYLE["font_size"])
    fig.tight_layout()
    _label_note(fig, names)


def _label_note(fig: Any, names: dict[str, str]) -> None:
    long = [f"{s} = {lab}" for lab, s in names.items() if s != lab]
    if long:
        fig.text(0.01, 0.005, "; ".join(long), fontsize=6, ha="left", va="bottom", wrap=True)
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.12 + 0.03 * len(long)))


def _new_fig(ncols: int = 1, nrows: int = 1, **kw: Any) -> tuple[Any, Any]:
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": FIG_STYLE["font_size"]}):
        return plt.subplots(nrows, ncols, figsize=(FIG_STYLE["width"] * ncols, FIG_STYLE["height"] * nrows), **kw)


def fig_paired(cell: pd.DataFrame, metric: str, reference: str, title: str) -> Any:
    """Dot and whisker: each policy's mean paired difference of ``metric`` to ``reference``
    with its 95% CI (Student t), a vertical zero line (the reference), policies top to
    bottom in the order listed, W/T/L beside each dot."""
    names = short_labels(cell["policy"].tolist())
    fig, ax = _new_fig()
    y = np.arange(len(cell))[::-1]
    mean = cell[f"{metric}_diff_mean"].to_numpy(float)
    ci = np.nan_to_num(cell[f"{metric}_diff_ci95"].to_numpy(float))
    ax.axvline(0.0, color="0.3", lw=1, ls="--", label=f"reference: {names.get(reference, reference)}")
    ax.errorbar(mean, y, xerr=ci, fmt="o", color="C0", ecolor="C0", capsize=4, label="mean paired Δ, 95% CI")
    for yi, (_, r) in zip(y, cell.iterrows(), strict=True):
        if r["policy"] != reference:
            ax.annotate(f"W/T/L {r[f'{metric}_wins']}/{r[f'{metric}_ties']}/{r[f'{metric}_losses']}",
                        (r[f"{metric}_diff_mean"], yi), textcoords="offset points", xytext=(0, 7), ha="center",
                        fontsize=7)
    ax.set_yticks(y, [names[p] + (" (ref)" if p == reference else "") for p in cell["policy"]])
    span = float(np.nanmax(np.abs(np.concatenate([mean - ci, mean + ci, [0.0]])))) or 1.0
    ax.set_xlim(-1.15 * span, 1.15 * span)  # symmetric about zero: the zero line in the middle
    ax.set_ylim(-0.7, len(cell) - 0.3)
    better = "higher" if higher_is_better(metric) else "lower"
    ax.set_xlabel(f"Δ {metric} vs {names.get(reference, reference)} (per-episode, paired; {better} is better)")
    _style(ax, title, f"{metric}: paired difference to {names.get(reference, reference)}")
    ax.legend(fontsize=7, loc="lower right")
    _finish(fig, title, names)
    return fig


def _log_axis(axis: Any, lo: float, hi: float) -> None:
    """Labelled major (powers of 10) and minor ticks: 2..9 over less than 1.5 decades, 2 and 5 otherwise."""
    import matplotlib.ticker as mt

    subs = tuple(range(2, 10)) if hi / max(lo, 1e-300) < 10 ** 1.5 else (2.0, 5.0)
    axis.set_major_locator(mt.LogLocator(base=10))
    axis.set_minor_locator(mt.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(mt.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(mt.FuncFormatter(lambda v, _: f"{v:g}"))


def fig_fct_cdf(sel: pd.DataFrame, title: str) -> Any:
    """CDF of the FCT (ms) over all flows of the cell's episodes, one line per policy, log x
    with labelled major and minor (2, 5) ticks; each policy's p99 marked by a dot at 0.99
    (value in the legend) and a horizontal line at 0.99."""
    names = short_labels(list(dict.fromkeys(sel["policy"])))
    fig, ax = _new_fig()
    fct = sel["fct_s"].dropna().to_numpy(np.float64) * 1e3
    for i, (pol, g) in enumerate(sel.groupby("policy", sort=False)):
        x = np.sort(g["fct_s"].dropna().to_numpy(np.float64) * 1e3)
        if not x.size:
            continue
        p99 = float(np.quantile(x, 0.99))
        ax.plot(x, np.arange(1, x.size + 1) / x.size, color=f"C{i}", label=f"{names[str(pol)]} (p99 {p99:.3g} ms)")
        ax.plot([p99], [0.99], "o", color=f"C{i}", ms=5)
    ax.axhline(0.99, color="0.5", lw=0.8, ls=":", label="p99")
    ax.set_xscale("log")
    if fct.size:
        _log_axis(ax.xaxis, float(fct.min()), float(fct.max()))
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.set(xlabel="FCT (ms, log scale)", ylabel="fraction of flows (CDF)", ylim=(0, 1.01))
    _style(ax, title, "FCT CDF (p99 marked)")
    ax.legend(fontsize=7, loc="lower right")
    _finish(fig, title, names)
    return fig


def fig_by_size(b: pd.DataFrame, title: str) -> Any:
    """Mean FCT and mean slowdown per size bucket (smallest first), grouped bars from zero
    per policy with 95% CIs across episodes."""
    pols = list(dict.fromkeys(b["policy"]))
    names = short_labels(pols)
    buckets = [c for c in b["bucket"].cat.categories if (b["bucket"] == c).any()]
    fig, axes = _new_fig(ncols=2)
    width = 0.8 / max(len(pols), 1)
    for ax, col, lab in ((axes[0], "mean_fct_ms", "mean FCT (ms)"), (axes[1], "mean_slowdown", "mean slowdown")):
        s = summarize(b, [col], by=("policy", "bucket"))
        for i, pol in enumerate(pols):
            sp = s[s.policy == pol].set_index("bucket").reindex(buckets)
            x = np.arange(len(buckets)) + (i - (len(pols) - 1) / 2) * width
            ax.bar(x, sp[f"{col}_mean"], width, yerr=sp[f"{col}_ci95"].fillna(0), capsize=2, color=f"C{i}",
                   label=names[pol])
        ax.set_xticks(np.arange(len(buckets)), buckets)
        ax.set(xlabel="flow size (smallest first)", ylabel=lab)
        ax.set_ylim(bottom=0)
        _style(ax, title, f"{lab} by flow size (95% CI)")
    axes[0].legend(fontsize=7)
    _finish(fig, title, names)
    return fig


#: the per-bucket metrics of :func:`fig_vs_load_by_size` (rows), with their axis labels
VS_LOAD_BY_SIZE_METRICS = (("mean_fct_ms", "mean FCT (ms)"), ("p99_fct_ms", "p99 FCT (ms)"),
                           ("mean_slowdown", "mean slowdown"))


def fig_vs_load_by_size(b: pd.DataFrame, title: str,
                        metrics: Sequence[tuple[str, str]] = VS_LOAD_BY_SIZE_METRICS) -> Any:
    """The papers' figure: per size bucket (columns, smallest first) and metric (rows: mean
    FCT, p99 FCT, mean slowdown), the mean over episodes against the effective load, one line
    per policy, with 95% CIs across episodes. ``b`` is :func:`bucket_episode_metrics` of one
    workload at several loads."""
    import matplotlib.pyplot as plt

    pols = list(dict.fromkeys(b["policy"]))
    names = short_labels(pols)
    buckets = [c for c in b["bucket"].cat.categories if (b["bucket"] == c).any()]
    loads = sorted(b["load"].dropna().unique())
    s = summarize(b, [m for m, _ in metrics], by=("policy", "bucket", "load"))
    with plt.rc_context({"font.size": FIG_STYLE["font_size"]}):
        fig, axes = plt.subplots(len(metrics), len(buckets), squeeze=False,
                                 figsize=(3.4 * len(buckets), 2.9 * len(metrics)))
    for row, (m, lab) in zip(axes, metrics, strict=True):
        for ax, bucket in zip(row, buckets, strict=True):
            for i, pol in enumerate(pols):
                sp = s[(s.policy == pol) & (s.bucket == bucket)].sort_values("load")
                ax.errorbar(sp["load"], sp[f"{m}_mean"], yerr=sp[f"{m}_ci95"].fillna(0), marker="o", ms=3,
                            capsize=2, color=f"C{i}", label=names[pol])
            ax.set(xlabel="effective load", ylabel=lab, xticks=loads)
            ax.set_ylim(bottom=0)
            _style(ax, title, f"{lab}, flows {bucket}")
    axes[0][0].legend(fontsize=7)
    _finish(fig, title, names)
    return fig


def fig_vs_load(rw: pd.DataFrame, metrics: Sequence[str], reference: str, title: str) -> Any:
    """Per metric (rows): its mean against the effective load (left) and the paired
    difference to ``reference`` against load (right, zero line), one line per policy, 95% CIs."""
    pols = list(dict.fromkeys(rw["policy"]))
    names = short_labels(pols)
    fig, axes = _new_fig(ncols=2, nrows=len(metrics), squeeze=False)
    s = summarize(rw, metrics, by=("policy", "load"))
    p = paired_differences(rw, metrics, reference, by=("policy", "load"))
    loads = sorted(rw["load"].dropna().unique())
    for row, m in zip(axes, metrics, strict=True):
        for i, pol in enumerate(pols):
            sp = s[s.policy == pol].sort_values("load")
            row[0].errorbar(sp["load"], sp[f"{m}_mean"], yerr=sp[f"{m}_ci95"].fillna(0), marker="o", capsize=3,
                            color=f"C{i}", label=names[pol])
            pp = p[p.policy == pol].sort_values("load")
            row[1].errorbar(pp["load"], pp[f"{m}_diff_mean"], yerr=pp[f"{m}_diff_ci95"].fillna(0), marker="o",
                            capsize=3, color=f"C{i}", label=names[pol])
        row[1].axhline(0.0, color="0.3", lw=1, ls="--")
        better = "higher" if higher_is_better(m) else "lower"
        row[0].set(xlabel="effective load", ylabel=f"{m} (mean, 95% CI)", xticks=loads)
        row[1].set(xlabel="effective load", ylabel=f"Δ {m} vs {names[reference]} ({better} is better)", xticks=loads)
        _style(row[0], title, f"{m} against load")
        _style(row[1], title, f"{m}: paired difference to {names[reference]}")
    axes[0][0].legend(fontsize=7)
    _finish(fig, title, names)
    return fig


#: episode metrics where a lower value is better (a win for a policy is a negative
#: paired difference), and so is any completion time or slowdown (a name ending in
#: ``_fct_s``, ``_fct_ms`` or ``slowdown``, such as the switch and thresholds envs'
#: ``mean_fct_s``); every other metric (deadline_hit_ratio, return) is higher-better.
LOWER_IS_BETTER = frozenset({"mean_fct_s", "p99_fct_s", "mean_fct_ms", "p99_fct_ms", "mean_slowdown", "p99_slowdown",
                             "masked_action_rate"})


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better (see :data:`LOWER_IS_BETTER`)."""
    lower = metric in LOWER_IS_BETTER or metric.endswith(("_fct_s", "_fct_ms", "slowdown"))
    return not lower


def resolve_reference(reference: str | None, specs: Sequence[PolicySpec]) -> str:
    """The label of the reference policy: ``reference`` as a policy's label or as it was
    listed in ``policies`` (a baseline name, a checkpoint path), the first policy when None.
    Anything else is a :class:`ConfigError` listing the policies."""
    if not specs:
        raise ConfigError("reference: no policies to compare")
    if reference is None:
        return specs[0].label
    ref = str(reference)
    for s in specs:
        if ref in (s.label, s.source) or (
            Path(ref).expanduser().exists()
            and Path(s.source).resolve().is_relative_to(Path(ref).expanduser().resolve())
        ):
            return s.label
    raise ConfigError(f"reference={ref!r} is not one of the evaluated policies: {', '.join(s.label for s in specs)}")


_CELL = ("workload", "load")


def paired_differences(results: pd.DataFrame, metrics: Sequence[str], reference: str,
                       by: Sequence[str] = ("policy", "workload", "load")) -> pd.DataFrame:
    """Each policy's per-episode difference to ``reference`` (policy minus reference, paired
    by ``seed`` within each group of ``by`` other than ``policy``), summarized per group:
    ``{m}_diff_mean``, ``{m}_diff_ci95`` (95% half-width, Student t with n - 1 degrees of
    freedom on the n paired differences), ``{m}_diff_n``, and ``{m}_wins``, ``{m}_ties``,
    ``{m}_losses``: episodes where the policy is better than, equal to (exactly) or worse
    than the reference (better: larger, or smaller for :data:`LOWER_IS_BETTER` metrics).
    The reference's own row has difference 0 and all ties."""
    keys = [b for b in by if b != "policy"]
    r = results.copy()
    if "load" in r:
        r["load"] = r["load"].fillna(-1.0)  # pair the workload's own load (NaN) too
    ref = r[r["policy"] == reference]
    cols = [m for m in metrics if m in r]
    merged = r.merge(ref[[*keys, "seed", *cols]], on=[*keys, "seed"], how="inner", suffixes=("", "__ref"))
    rows = []
    for key, g in merged.groupby(["policy", *keys], sort=False, dropna=False):
        row = dict(zip(["policy", *keys], key if isinstance(key, tuple) else (key,), strict=True))
        for m in cols:
            d = (g[m] - g[f"{m}__ref"]).dropna().to_numpy(np.float64)
            n = d.size
            std = float(d.std(ddof=1)) if n > 1 else float("nan")
            better = d > 0 if higher_is_better(m) else d < 0
            worse = d < 0 if higher_is_better(m) else d > 0
            row.update({f"{m}_diff_mean": float(d.mean()) if n else float("nan"), f"{m}_diff_n": n,
                        f"{m}_diff_ci95": t_quantile(n) * std / math.sqrt(n) if n > 1 else float("nan"),
                        f"{m}_wins": int(better.sum()), f"{m}_ties": int((d == 0).sum()),
                        f"{m}_losses": int(worse.sum())})
        rows.append(row)
    out = pd.DataFrame(rows)
    if "load" in out:
        out["load"] = out["load"].replace(-1.0, np.nan)
    return out


def bucket_edges(sizes: pd.Series) -> tuple[float, ...]:
    """The size-bucket edges :func:`size_buckets` uses for these sizes."""
    uniq = np.unique(sizes.dropna().to_numpy(np.float64))
    return tuple(uniq[1:]) if 1 < uniq.size <= 6 else tuple(flow_metrics.DEFAULT_BUCKETS_BYTES)


#: per-bucket episode metrics: name -> (column of flowsched.metrics.summarize, scale)
BUCKET_METRICS = {"deadline_hit_ratio": ("deadline_hit_ratio", 1.0), "mean_fct_ms": ("fct_mean_s", 1e3),
                  "p99_fct_ms": ("fct_p99_s", 1e3), "mean_slowdown": ("slowdown_mean", 1.0),
                  "p99_slowdown": ("slowdown_p99", 1.0)}


def bucket_episode_metrics(flows: pd.DataFrame) -> pd.DataFrame:
    """One row per (policy, workload, load, seed, size bucket): the episode's metrics over
    the flows of that bucket, by :func:`flowsched.metrics.summarize` (``by_bucket``), with
    the edges of :func:`size_buckets` (per workload, so every policy and load of a workload
    has the same buckets). ``bucket`` is an ordered categorical, smallest sizes first."""
    rows = []
    labels: list[str] = []
    for wname, fw in flows.groupby("workload", sort=False):
        edges = bucket_edges(fw["size_bytes"])
        for lab in flow_metrics.bucket_labels(edges):
            if lab not in labels:
                labels.append(lab)
        for (pol, load, seed), g in fw.groupby(["policy", "load", "seed"], sort=False, dropna=False):
            bb = flow_metrics.summarize(g, quantiles=(0.99,), buckets=edges).by_bucket
            for blab, b in bb.iterrows():
                row = {"policy": pol, "workload": wname, "load": load, "seed": seed, "bucket": str(blab)}
                row.update({m: float(b[c]) * s if c in b else float("nan") for m, (c, s) in BUCKET_METRICS.items()})
                rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        out["bucket"] = pd.Categorical(out["bucket"], categories=labels, ordered=True)
    return out


def format_paired_table(paired: pd.DataFrame, metrics: Sequence[str], reference: str,
                        by: Sequence[str] = ("workload", "load"), markdown: bool = False) -> str:
    """Paired differences to the reference, one row per (metric, policy, cell):
    ``mean ± 95% CI`` and wins/ties/losses (the reference's own rows left out)."""
    by = [b for b in by if b in paired and paired[b].nunique(dropna=False) > 1]
    header = ["metric", "better", "policy", *by, f"Δ vs {reference} ± 95% CI", "W/T/L"]
    lines = []
    for m in metrics:
        if f"{m}_diff_mean" not in paired:
            continue
        for _, r in paired[paired["policy"] != reference].iterrows():
            ci = r[f"{m}_diff_ci95"]
            cells = [m, "higher" if higher_is_better(m) else "lower", str(r["policy"]),
                     *(f"{r[b]:.3g}" if isinstance(r[b], float) else str(r[b]) for b in by),
                     f"{r[f'{m}_diff_mean']:+.4g}" + ("" if not np.isfinite(ci) else f" ± {ci:.2g}"),
                     f"{r[f'{m}_wins']}/{r[f'{m}_ties']}/{r[f'{m}_losses']}"]
            lines.append(cells)
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(out + ["| " + " | ".join(c) + " |" for c in lines])
    widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths)), *(fmt.format(*c) for c in lines)])
