"""What ``evaluate.py`` runs: the grid, its files, the table, figures and report.md."""
from __future__ import annotations

import logging
import time
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched.agents.config_checks import ConfigError, unknown_name
from flowsched.agents.evaluation import (
    BUCKET_METRICS,
    baseline_kwargs,
    bucket_episode_metrics,
    draw_figures,
    evaluate_grid,
    format_paired_table,
    format_table,
    higher_is_better,
    paired_differences,
    resolve_policies,
    resolve_reference,
    short_labels,
    summarize,
)
from flowsched.agents.runlog import emit
from flowsched.metrics import DEADLINE_RTOL

log = logging.getLogger(__name__)


def _log(msg: str) -> None:
    emit(log, msg)  # evaluate.log and the console under Hydra; printed when logging is not set up


EPISODE_METRICS = ("deadline_hit_ratio", "mean_fct_ms", "p99_fct_ms", "mean_slowdown", "p99_slowdown", "return",
                   "masked_action_rate")
#: metrics shown in the paired table of the console and report.md (besides cfg.metric); summary.csv has all
PAIRED_SHOWN = ("mean_fct_ms", "p99_fct_ms", "mean_slowdown", "p99_slowdown")
#: metrics drawn as paired dot-and-whisker and against load, besides cfg.metric
FIGURE_METRICS = ("p99_fct_ms",)


def settings_text(cfg: DictConfig) -> str:
    """Topology and model of an evaluate config, as every figure's title and report.md state
    them (the workload and effective load are per cell): e.g. ``BigSwitch 11 hosts x 1 Gb/s,
    fluid model (ps), flowsched/TokenScheduling-v1``."""
    topo = cfg.get("topology")
    if topo is not None and topo.get("_target_"):
        t = str(topo._target_).rsplit(".", 1)[-1]
        hosts, gbps = topo.get("hosts"), topo.get("link_gbps")
        t += (f" {hosts} hosts" if hosts is not None else "") + (f" x {gbps:g} Gb/s" if gbps is not None else "")
    else:
        t = "env's topology"
    # the id's registered defaults, overridden by the config's (TokenScheduling-Artemis-v0 is
    # the packet model by default)
    kw = {**(gym.spec(cfg.env.id).kwargs or {}), **cfg.env.kwargs}
    model, sched, transport = kw.get("model", "fluid"), kw.get("scheduler"), kw.get("transport")
    detail = transport if model == "packet" and transport else sched
    return f"{t}, {model} model" + (f" ({detail})" if detail else "") + f", {cfg.env.id}"


def workload_config(name: str) -> DictConfig:
    """``configs/workload/<name>.yaml`` from the installed package."""
    f = resources.files("flowsched.configs") / "workload" / f"{name}.yaml"
    if not f.is_file():
        known = sorted(p.name[:-5] for p in (resources.files("flowsched.configs") / "workload").iterdir()
                       if p.name.endswith(".yaml"))
        raise ConfigError(unknown_name("workload", name, known))
    return OmegaConf.create(f.read_text())  # type: ignore[return-value]


def evaluate(cfg: DictConfig, out_dir: Path) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    family = cfg.env.family
    specs = resolve_policies([str(p) for p in cfg.policies], family, cfg.device, baseline_kwargs=baseline_kwargs(cfg))
    reference = resolve_reference(cfg.get("reference"), specs)
    cells = []
    for wname in cfg.workloads:
        wcfg = cfg.workload if wname == cfg.workload.name else workload_config(str(wname))
        fams = wcfg.get("env_families")
        if fams is not None and family not in fams:
            raise ConfigError(f"workloads: workload {wname!r} is for env {list(fams)}, not {family!r}")
        for load in cfg.loads:
            cells.append((str(wname), wcfg, None if load is None else float(load)))
    seeds = list(range(int(cfg.seed), int(cfg.seed) + int(cfg.seeds)))
    _log(f"Evaluating {len(specs)} policies x {len(cells)} cells x {len(seeds)} seeds on {cfg.env.id}")
    t0 = time.time()
    results, flows = evaluate_grid(specs, cfg, cells, seeds, per_flow=bool(cfg.per_flow), log=_log,
                                   launcher=str(cfg.get("launcher", "local")))
    results.to_parquet(out_dir / "results.parquet", index=False)
    if flows is not None:
        flows.to_parquet(out_dir / "flows.parquet", index=False)
    metrics = [m for m in (cfg.metric, *EPISODE_METRICS) if m in results]
    metrics = list(dict.fromkeys(metrics))
    summary = summarize(results, metrics)
    paired = paired_differences(results, metrics, reference)
    full = summary.merge(paired, on=["policy", "workload", "load"], how="left")
    full.insert(3, "bucket", "all")
    by_size = None
    if flows is not None:
        bm = bucket_episode_metrics(flows)
        if not bm.empty:
            bmet = list(BUCKET_METRICS)
            by = ("policy", "workload", "load", "bucket")
            bs = summarize(bm, bmet, by=by).merge(
                paired_differences(bm, bmet, reference, by=by), on=list(by), how="left"
            )
            bs["bucket"] = pd.Categorical(bs["bucket"], categories=bm["bucket"].cat.categories, ordered=True)
            by_size = bs.sort_values(["workload", "load", "bucket"], kind="stable")
            by_size["bucket"] = by_size["bucket"].astype(str)
            full = pd.concat([full, by_size], ignore_index=True)
    full.to_csv(out_dir / "summary.csv", index=False)
    table = format_table(summary, metrics)
    shown = [m for m in (cfg.metric, *PAIRED_SHOWN) if m in metrics]
    shown = list(dict.fromkeys(shown))
    _log(f"\n{len(seeds)} seeds per cell, mean ± 95% CI across seeds ({time.time() - t0:.1f} s)")
    _log(table)
    _log(f"\nPaired by seed: each policy minus {reference} on the same episodes, mean ± 95% CI (Student t on the "
         f"{len(seeds)} per-episode differences); W/T/L: episodes better/equal/worse than {reference} "
         "(better: higher, or lower where 'better' says lower)")
    _log(format_paired_table(paired, shown, reference))
    settings = settings_text(cfg)
    figs = draw_figures(results, flows, out_dir / "figures", cfg.metric, reference=reference, settings=settings,
                        metrics=[m for m in FIGURE_METRICS if m != cfg.metric]) if cfg.figures else []
    _write_report(cfg, specs, summary, metrics, figs, out_dir, seeds, reference=reference, paired=paired,
                  shown=shown, by_size=by_size, settings=settings, results=results)
    _log(f"\nwrote {out_dir}/results.parquet, summary.csv, report.md" + (", figures/" if figs else ""))
    return {"results": results, "summary": summary, "paired": paired, "by_size": by_size, "reference": reference,
            "figures": figs}


def _write_report(cfg: DictConfig, specs: list, summary: pd.DataFrame, metrics: list[str], figs: list[Path],
                  out_dir: Path, seeds: list[int], reference: str | None = None, paired: pd.DataFrame | None = None,
                  shown: list[str] | None = None, by_size: pd.DataFrame | None = None, settings: str = "",
                  results: pd.DataFrame | None = None) -> None:
    eff = ("default" if results is None else
           ", ".join("workload's own" if pd.isna(x) else f"{x:.3g}" for x in dict.fromkeys(results["load"])))
    names = short_labels([sp.label for sp in specs])
    lines = [
        f"# Evaluation on {cfg.env.id}", "",
        f"- policies: {', '.join(f'`{s.label}` ({s.source})' for s in specs)}",
        f"- workloads: {', '.join(map(str, cfg.workloads))}; effective loads: {eff} (requested: "
        f"{', '.join('the workload default' if x is None else str(x) for x in cfg.loads)})",
        f"- settings (every figure's title states them with its workload and effective load): {settings}",
        f"- seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} episodes per policy and cell; every policy plays the same "
        "traces)",
        f"- env arguments: `{OmegaConf.to_container(cfg.env.kwargs, resolve=True)}`; topology: "
        f"`{cfg.topology.get('_target_') if cfg.get('topology') else 'env default'}`",
        "", "Mean ± 95% confidence half-width (Student t) across seeds:", "",
        format_table(summary, metrics, markdown=True), "",
    ]
    if paired is not None and reference is not None:
        lower = [m for m in (shown or metrics) if not higher_is_better(m)]
        lines += [
            f"## Paired differences to the reference `{reference}`", "",
            f"Every policy plays the same {len(seeds)} episodes (seeds), so each policy is compared with the reference "
            f"`{reference}` episode by episode: Δ is the mean of the per-episode differences (policy minus "
            f"`{reference}`) with its 95% confidence half-width from a paired Student t test (t quantile with "
            f"{len(seeds) - 1} degrees of freedom on the per-episode differences); a CI that excludes 0 is a "
            "difference significant at the 5% level. W/T/L counts the episodes where the policy is better than, "
            "exactly equal to, or worse than the reference"
            + (f"; for {', '.join(lower)} lower is better, so a win is a negative difference." if lower else "."), "",
            format_paired_table(paired, shown or metrics, reference, markdown=True), "",
        ]
    if by_size is not None and not by_size.empty:
        bm = [m for m in BUCKET_METRICS if f"{m}_mean" in by_size]
        lines += ["## By flow size", "",
                  "The same metrics over the flows of each size bucket (`flowsched.metrics` buckets, left-closed; "
                  "smallest first), mean ± 95% CI across episodes; `summary.csv` has these rows (column `bucket`) "
                  f"with their paired differences to `{reference}` too.", "",
                  format_table(by_size, bm, by=("policy", "workload", "load", "bucket"), markdown=True), ""]
    if any(k != v for k, v in names.items()):
        lines += ["Figure labels of the policies:", "", "| in figures | policy |", "|---|---|"]
        lines += [f"| {v} | `{k}` |" for k, v in names.items()] + [""]
    for f in figs:
        lines += [f"![{f.stem}](figures/{f.name})", ""]
    lines += [f"Metrics as `flowsched.metrics` defines them: a flow meets its deadline when fct <= deadline x (1 + "
              f"{DEADLINE_RTOL:g}), as the envs count it; slowdown = fct / ideal fct; FCT and slowdown means and "
              "p99 per episode over its finished flows (`flowsched.metrics.summarize`).", "",
              "Files: `results.parquet` (one row per episode), `flows.parquet` (one row per flow, the columns of "
              "`flowsched.Results.flows` the env gives), `summary.csv` (one row per policy, cell and size bucket, "
              "`bucket` = all for the whole episode: `<metric>_mean/_std/_n/_ci95` across episodes, "
              "`<metric>_diff_mean/_diff_ci95/_diff_n` paired to the reference, `<metric>_wins/_ties/_losses`)."]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n")
