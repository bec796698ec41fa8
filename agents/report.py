"""What ``evaluate.py`` runs: the grid, its files, the table, figures and report.md."""
from __future__ import annotations

import logging
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched.metrics import DEADLINE_RTOL
from flowsched.agents.config_checks import ConfigError, unknown_name
from flowsched.agents.runlog import emit
from flowsched.agents.evaluation import (
    baseline_kwargs, draw_figures, evaluate_grid, format_table, resolve_policies, summarize,
)

log = logging.getLogger(__name__)


def _log(msg: str) -> None:
    emit(log, msg)  # evaluate.log and the console under Hydra; printed when logging is not set up


EPISODE_METRICS = ("deadline_hit_ratio", "mean_fct_ms", "p99_fct_ms", "mean_slowdown", "p99_slowdown", "return",
                   "masked_action_rate")


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
    summary.to_csv(out_dir / "summary.csv", index=False)
    table = format_table(summary, metrics)
    _log(f"\n{len(seeds)} seeds per cell, mean ± 95% CI across seeds ({time.time() - t0:.1f} s)")
    _log(table)
    figs = draw_figures(results, flows, out_dir / "figures", cfg.metric) if cfg.figures else []
    _write_report(cfg, specs, summary, metrics, figs, out_dir, seeds)
    _log(f"\nwrote {out_dir}/results.parquet, summary.csv, report.md" + (", figures/" if figs else ""))
    return {"results": results, "summary": summary, "figures": figs}


def _write_report(cfg: DictConfig, specs: list, summary: pd.DataFrame, metrics: list[str], figs: list[Path],
                  out_dir: Path, seeds: list[int]) -> None:
    lines = [
        f"# Evaluation on {cfg.env.id}", "",
        f"- policies: {', '.join(f'`{s.label}` ({s.source})' for s in specs)}",
        f"- workloads: {', '.join(map(str, cfg.workloads))}; loads: {', '.join('default' if x is None else str(x) for x in cfg.loads)}",
        f"- seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} episodes per policy and cell; every policy plays the same traces)",
        f"- env arguments: `{OmegaConf.to_container(cfg.env.kwargs, resolve=True)}`; topology: `{cfg.topology.get('_target_') if cfg.get('topology') else 'env default'}`",
        "", "Mean ± 95% confidence half-width (Student t) across seeds:", "",
        format_table(summary, metrics, markdown=True), "",
    ]
    for f in figs:
        lines += [f"![{f.stem}](figures/{f.name})", ""]
    lines += [f"Metrics as `flowsched.metrics` defines them: a flow meets its deadline when fct <= deadline x (1 + "
              f"{DEADLINE_RTOL:g}), as the envs count it; slowdown = fct / ideal fct; FCT and slowdown means and "
              "p99 per episode over its finished flows (`flowsched.metrics.summarize`).", "",
              "Files: `results.parquet` (one row per episode), `flows.parquet` (one row per flow, the columns of "
              "`flowsched.Results.flows` the env gives), `summary.csv`."]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n")
