"""The one training loop behind ``train.py``, and the small interface its trainers implement.

:func:`train` owns what every run needs, whatever learns: the config checks, ``resume=``,
seeding, signals (SIGINT and SIGTERM stop training and save a checkpoint to resume
from; ``train.py`` then exits 130 or 143), the wall-clock budget, periodic checkpoints
and evaluations against the baselines (the learning curve: ``learning_curve.csv`` and
``learning_curve.png``, :class:`flowsched.agents.logs.LearningCurve`), the final save,
the held-out evaluation, ``report.md`` and ``run.json``. Its messages are records of
this module's logger (``train.log`` and the console under Hydra:
:mod:`flowsched.agents.runlog`). What learns is a :class:`Trainer`, built by Hydra from the agent config's
``trainer._target_``:

* :class:`flowsched.agents.sb3.SB3Trainer` (``kind: sb3``): a Stable-Baselines3 or
  sb3-contrib model; the loop reaches it through one SB3 callback at every env step;
* :class:`flowsched.agents.rllib.RLlibTrainer` (``kind: rllib``): RLlib PPO with the
  project's RLModule; the loop runs between training iterations;
* :class:`RuleTrainer` (``kind: baseline``): a rule of :mod:`flowsched.baselines`,
  nothing to learn: the run is its held-out evaluation.

A saved config without ``agent.trainer`` (runs saved before it existed) gets the trainer
of its ``agent.kind`` (:data:`DEFAULT_TRAINERS`).
"""
from __future__ import annotations

import json
import logging
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched.agents.checkpoints import atomic_write_text
from flowsched.agents.config_checks import (
    ConfigError,
    check_families,
    check_fresh_run_dir,
    check_train_config,
    check_train_envs,
    merge_resume_overrides,
    saved_choices,
)
from flowsched.agents.evaluation import (
    PolicySpec,
    baseline_kwargs,
    format_table,
    resolve_policies,
    run_config,
    run_episodes,
    summarize,
)
from flowsched.agents.runlog import also_log_to, emit
from flowsched.baselines.types import Policy

log = logging.getLogger(__name__)


def _log(msg: str) -> None:
    # this module's logger (train.log and the console under Hydra); printed as before
    # when logging is not set up (train() called from a script of your own)
    emit(log, msg)


# ---------------------------------------------------------------- the trainer interface


@runtime_checkable
class Trainer(Protocol):
    """What learns in a run; the loop (:func:`train`) owns everything else.

    A trainer is built as ``instantiate(cfg.agent.trainer, cfg=cfg, run_dir=run_dir)``
    (cheap: nothing is built yet), then either :meth:`start` or :meth:`load`."""

    #: False for a rule: the loop evaluates :meth:`policy` and trains nothing
    learns: bool
    #: evaluation passes ``action_masks=env.action_masks()`` to the policy's ``predict``
    uses_masks: bool

    @property
    def num_timesteps(self) -> int:
        """Env steps trained on so far (a resumed run's count included)."""
        ...

    def start(self, logger: Any) -> None:
        """Builds a fresh model (scalars go to ``logger``, an SB3 ``Logger``)."""
        ...

    def load(self, logger: Any) -> Path:
        """Continues the run in ``run_dir``: loads its newest readable checkpoint (a
        damaged one is skipped with a warning naming it) and returns its path."""
        ...

    def learn(self, total_timesteps: int, loop: LoopControl) -> None:
        """Trains until ``num_timesteps`` reaches ``total_timesteps`` or ``loop.stop_requested()``,
        calling ``loop.progress(num_timesteps)`` as it goes (at its own granularity: an
        env step, an iteration). When stopped early, ``num_timesteps`` is the count the
        weights were trained on (a cut rollout does not count)."""
        ...

    def save(self, final: bool = False) -> Path:
        """Writes a checkpoint atomically (``final``: the finished run's) and returns its path."""
        ...

    def policy(self) -> Policy:
        """The current policy, behind SB3's ``predict`` (:class:`flowsched.baselines.Policy`)."""
        ...

    def close(self) -> None:
        """Releases envs, workers, Ray."""
        ...


#: the trainer of an agent config without ``trainer`` (a run saved before it existed), by ``kind``
DEFAULT_TRAINERS = {
    "sb3": "flowsched.agents.sb3.SB3Trainer",
    "rllib": "flowsched.agents.rllib.RLlibTrainer",
    "baseline": "flowsched.agents.training.RuleTrainer",
}


def build_trainer(cfg: DictConfig, run_dir: Path) -> Trainer:
    """The trainer named by ``cfg.agent.trainer._target_`` (the default trainer of
    ``cfg.agent.kind`` when the config has no ``trainer``), called as
    ``target(cfg=cfg, run_dir=run_dir, **other keys of agent.trainer)``.

    ``cfg`` is passed as it is, not through ``hydra.utils.instantiate`` (which would merge
    a copy of the whole config into the trainer's node and resolve its interpolations
    against the wrong root)."""
    from hydra.utils import get_object

    spec = cfg.agent.get("trainer")
    if spec is None:
        spec = OmegaConf.create({"_target_": DEFAULT_TRAINERS[str(cfg.agent.kind)]})
    target = spec.get("_target_")
    if not isinstance(target, str):
        raise ConfigError(f"agent.trainer._target_={target!r}: must name a trainer class "
                          "(flowsched.agents.training.Trainer)")
    extra = {str(k): v for k, v in spec.items() if not (str(k).startswith("_") and str(k).endswith("_"))}
    return get_object(target)(cfg=cfg, run_dir=Path(run_dir), **extra)


class RuleTrainer:
    """The trainer of a rule-based agent (``kind: baseline``): nothing to learn; its
    policy is ``agent.policy`` (a ``_target_``, e.g. :func:`flowsched.baselines.from_config`)."""

    learns = False
    uses_masks = False
    num_timesteps = 0

    def __init__(self, cfg: DictConfig, run_dir: Path) -> None:
        self.cfg, self.run_dir = cfg, Path(run_dir)
        self._policy: Policy | None = None

    def start(self, logger: Any) -> None:
        pass

    def load(self, logger: Any) -> Path:
        return self.run_dir

    def learn(self, total_timesteps: int, loop: LoopControl) -> None:
        pass

    def save(self, final: bool = False) -> Path:
        return self.run_dir

    def policy(self) -> Policy:
        if self._policy is None:
            from hydra.utils import instantiate

            self._policy = instantiate(self.cfg.agent.policy)
        return self._policy

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- what the loop owns


class SignalStop:
    """Records SIGINT or SIGTERM while installed, so that training stops at the trainer's
    next check; a second signal restores the previous handler's behaviour (a second
    Ctrl-C ends the process at once)."""

    def __init__(self, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> None:
        self.signals = list(signals)
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            signal.signal(signum, self._previous.get(signum, signal.SIG_DFL))
            signal.raise_signal(signum)
            return
        self.received = signum

    def install(self) -> None:
        for s in self.signals:
            self._previous[s] = signal.signal(s, self._handler)

    def uninstall(self) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)
        self._previous = {}


class Every:
    """Due every ``every`` steps counted from the last time it was due (from the start of
    training at first); ``every <= 0``: never."""

    def __init__(self, every: int, start: int) -> None:
        self.every, self.last = int(every), int(start)

    def due(self, n: int) -> bool:
        if self.every > 0 and n - self.last >= self.every:
            self.last = n
            return True
        return False


class LoopControl:
    """The loop's side of :meth:`Trainer.learn`: whether to stop (a signal, the time
    budget) and what to do as steps go by (periodic evaluation, then checkpoint)."""

    def __init__(self, signals: SignalStop, started: float, budget_s: float | None,
                 on_progress: Callable[[int], None]) -> None:
        self.signals, self.started, self.budget_s = signals, started, budget_s
        self.out_of_time = False
        self._on_progress = on_progress

    @property
    def signal(self) -> int | None:
        """The signal that asked training to stop, or None."""
        return self.signals.received

    def check_time(self) -> bool:
        """Whether the time budget (counted from the run's start, setup included) is spent."""
        self.out_of_time = self.budget_s is not None and time.monotonic() - self.started >= self.budget_s
        return self.out_of_time

    def stop_requested(self) -> bool:
        """A signal arrived or the time budget is spent (checked now)."""
        out_of_time = self.check_time()
        return self.signal is not None or out_of_time

    def progress(self, num_timesteps: int) -> None:
        self._on_progress(int(num_timesteps))


def eval_seeds(cfg: DictConfig, n: int) -> list[int]:
    """Held-out evaluation seeds: ``eval.seed, eval.seed + 1, ...`` (training lanes use
    ``seed + lane`` and continue their own streams, far below ``eval.seed``)."""
    return list(range(int(cfg.eval.seed), int(cfg.eval.seed) + int(n)))


def _write_status(run_dir: Path, status: dict[str, Any]) -> None:
    atomic_write_text(run_dir / "run.json", json.dumps({k: v for k, v in status.items() if k != "summary"}, indent=1))


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


def run_title(cfg: DictConfig) -> str:
    """The settings a run's figures state: env, workload, effective load, topology, agent, seed."""
    from flowsched.agents.envs import effective_load

    load = effective_load(cfg)
    topo = cfg.get("topology")
    topo_name = str(topo.get("_target_", "env default")).rsplit(".", 1)[-1] if topo is not None else "env default"
    return (f"{cfg.env.id}, workload {cfg.workload.name}, load {'?' if load is None else f'{load:.3g}'}, "
            f"topology {topo_name}\nagent {cfg.agent.name}, seed {cfg.seed}")


class _PeriodicEval:
    """Every ``eval.every`` steps: the policy on ``eval.episodes`` held-out seeds, logged as
    ``eval/<metric>`` beside the baselines' values (``eval/baseline/<name>``, computed
    once on the same seeds) and the gap to the best one (``eval/gap_to_best_baseline``),
    and added to the run's learning curve (:class:`flowsched.agents.logs.LearningCurve`)."""

    def __init__(self, cfg: DictConfig, trainer: Trainer, label: str, baseline_specs: list[PolicySpec],
                 logger: Any, start: int, run_dir: Path | None = None, resumed: bool = False,
                 wall_offset_s: float = 0.0, started: float | None = None) -> None:
        self.cfg, self.trainer, self.label, self.logger = cfg, trainer, label, logger
        self.schedule = Every(int(cfg.eval.every), start)
        self.metric = cfg.env.metric
        self.sign = 1.0 if cfg.env.metric_mode == "max" else -1.0
        self.seeds = eval_seeds(cfg, cfg.eval.episodes)
        self.started = time.monotonic() if started is None else started
        self.history: list[tuple[int, float]] = []
        self.curve = None
        self.baseline_summaries: dict[str, dict[str, float]] = {}
        if self.schedule.every > 0:
            self.baseline_summaries = {b.label: self._summary(b) for b in baseline_specs}
        self.baselines = {k: v.get(f"{self.metric}_mean", float("nan")) for k, v in self.baseline_summaries.items()}
        if self.schedule.every > 0 and run_dir is not None:
            from flowsched.agents.logs import LearningCurve

            self.curve = LearningCurve(
                run_dir, self.metric, label, run_title(cfg), keep_until=start if resumed else None
            )
            # the run's wall clock: earlier sessions' (run.json, else the curve's last row) plus this one's
            self.wall_offset_s = max(float(wall_offset_s), self.curve.last_wall_s)
            self.curve.set_baselines(self.baseline_summaries)
        if self.baseline_summaries:
            _log(f"[eval] baselines on {len(self.seeds)} held-out episodes (seeds {self.seeds[0]}..{self.seeds[-1]}): "
                 + ", ".join(f"{k} {self._fmt(v)}" for k, v in self.baseline_summaries.items()))

    def _summary(self, spec: PolicySpec) -> dict[str, float]:
        from flowsched.agents.logs import episode_summary

        return episode_summary(run_episodes(spec, self.cfg, self.seeds, per_flow=False, fct_metrics=False)[0])

    def _fmt(self, s: dict[str, float]) -> str:
        mean, ci = s.get(f"{self.metric}_mean", float("nan")), s.get(f"{self.metric}_ci95", float("nan"))
        return f"{mean:.4f}" + (f" ± {ci:.4f}" if ci == ci else "")

    def __call__(self, n: int) -> None:
        if self.schedule.due(n):
            self.evaluate(n)

    def evaluate(self, n: int) -> None:
        """Evaluates now, at step ``n`` (also off the schedule: the start and the end of a run)."""
        summary = self._summary(PolicySpec(self.label, self.trainer.policy(), self.trainer.uses_masks, "training"))
        vals = {k[:-5]: v for k, v in summary.items() if k.endswith("_mean")}
        for k, v in vals.items():
            self.logger.record(f"eval/{k}", v)
        for name, v in self.baselines.items():
            self.logger.record(f"eval/baseline/{name}", v)
        best = ""
        if self.baselines and self.metric in vals:
            name, v = max(self.baselines.items(), key=lambda kv: self.sign * kv[1])
            self.logger.record("eval/gap_to_best_baseline", self.sign * (vals[self.metric] - v))
            best = f" (best baseline: {name} {v:.4f})"
        self.history.append((n, vals.get(self.metric, float("nan"))))
        if self.curve is not None:
            self.curve.add(n, self.wall_offset_s + time.monotonic() - self.started, summary)
        _log(f"[eval] step {n}: {self.metric} = {self._fmt(summary)}{best}")
        self.logger.dump(n)

    @property
    def last_step(self) -> int | None:
        return self.history[-1][0] if self.history else None


def _write_report(cfg: DictConfig, run_dir: Path, summary: pd.DataFrame, status: dict[str, Any]) -> Path:
    """``run_dir/report.md``: the run's settings, the held-out table and the learning curve."""
    from flowsched.agents.logs import CURVE_BASELINES_CSV, CURVE_CSV, CURVE_PNG

    metrics = list(cfg.env.report_metrics)
    seeds = eval_seeds(cfg, cfg.eval.final_episodes)
    lines = [f"# Training run: {cfg.agent.name} on {cfg.env.id}", "",
             f"- {run_title(cfg).replace(chr(10), ', ')}",
             f"- {status.get('num_timesteps', 0)} env steps ({status.get('status')}"
             + (f", stopped by the {status['stopped_by']}" if status.get("stopped_by") else "") + ")",
             "", f"Held-out evaluation: {len(seeds)} episodes (seeds {seeds[0]}..{seeds[-1]}), the same traces for "
             "every policy; mean ± 95% confidence half-width (Student t) across episodes:", "",
             format_table(summary, metrics, by=("policy",), markdown=True), ""]
    if (run_dir / CURVE_PNG).is_file():
        lines += [f"Learning curve: `{cfg.env.metric}` of the periodic evaluation ({int(cfg.eval.episodes)} held-out "
                  f"episodes every {int(cfg.eval.every)} steps) against env steps, and the baselines on the same "
                  f"episodes ([{CURVE_CSV}]({CURVE_CSV}), [{CURVE_BASELINES_CSV}]({CURVE_BASELINES_CSV})):", "",
                  f"![learning curve]({CURVE_PNG})", ""]
    lines += ["Files: `eval_summary.csv`, `eval_results.csv` (one row per episode), `run.json`, `train.log`."]
    path = run_dir / "report.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


# ---------------------------------------------------------------- the loop


def train(cfg: DictConfig, run_dir: Path, overrides: list[str] | None = None,
          choices: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs ``cfg`` in ``run_dir`` (the Hydra output dir). With ``cfg.resume`` set, the
    run directory, config and step count are those of the run to resume; ``overrides``
    (the command line's, e.g. ``total_timesteps=250000``) are applied to its saved config
    where that is safe and refused otherwise (:func:`merge_resume_overrides`;
    ``choices``: the command line's group options).

    Returns the run's status (also written to ``run_dir/run.json``, without the summary):
    ``status`` is ``finished`` or ``interrupted`` (then ``signal`` is the signal's number).

    Raises :class:`ConfigError` for a config that cannot run (checked before anything
    is built).

    Under Hydra the log goes to the console and ``train.log``; a resumed session's log is
    also appended to the resumed run's ``train.log``."""
    resume = cfg.get("resume")
    target = Path(resume).expanduser().resolve() if resume else None
    if target is not None and target.is_dir():
        with also_log_to(target / "train.log"):
            return _train(cfg, run_dir, overrides, choices)
    return _train(cfg, run_dir, overrides, choices)


def _train(cfg: DictConfig, run_dir: Path, overrides: list[str] | None,
           choices: dict[str, Any] | None) -> dict[str, Any]:
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
    baseline_specs = resolve_policies(list(cfg.eval.baselines), cfg.env.family, baseline_kwargs=baseline_kwargs(cfg))
    trainer = build_trainer(cfg, run_dir)
    status: dict[str, Any] = {"run_dir": str(run_dir)}

    if not trainer.learns:  # a rule: evaluate it on the held-out seeds
        spec = PolicySpec(agent.name, trainer.policy(), trainer.uses_masks, agent.name)
        summary = final_evaluation(cfg, [spec, *[b for b in baseline_specs if b.label != agent.name]], run_dir)
        status.update(num_timesteps=0, status="finished", summary=summary.to_dict("records"))
        _write_status(run_dir, status)
        _log(f"wrote {_write_report(cfg, run_dir, summary, status)}")
        return status
    # the run's wall clock so far (earlier sessions of a resumed run), for the learning curve
    previous_s = 0.0
    previous_overrides: list[Any] = []  # every earlier resume's, oldest first
    if resume and (run_dir / "run.json").is_file():
        try:
            before = json.loads((run_dir / "run.json").read_text())
            previous_s = float(before.get("elapsed_s", 0.0))
            previous_overrides = list(before.get("resume_overrides", []))
        except (ValueError, TypeError, AttributeError):
            previous_s = 0.0

    from flowsched.agents.logs import make_logger

    logger, wandb_run = make_logger(cfg, run_dir, f"{cfg.env.family}/{cfg.workload.name}/{agent.name}/seed{cfg.seed}")
    if resume:
        ckpt = trainer.load(logger)
        _log(f"Loaded {ckpt} at step {trainer.num_timesteps}")
    else:
        trainer.start(logger)

    total = int(cfg.total_timesteps)
    start = int(trainer.num_timesteps)
    periodic_eval = _PeriodicEval(cfg, trainer, agent.name, baseline_specs, logger, start, run_dir=run_dir,
                                  resumed=bool(resume), wall_offset_s=previous_s, started=started)
    if not resume and periodic_eval.schedule.every > 0:
        periodic_eval.evaluate(start)  # the learning curve starts from the untrained policy
    checkpoints = Every(int(cfg.checkpoint.every), start)

    def on_progress(n: int) -> None:
        periodic_eval(n)
        if checkpoints.due(n):
            trainer.save()

    budget = cfg.get("time_budget_s")
    signals = SignalStop()
    control = LoopControl(signals, started, None if budget is None else float(budget), on_progress)
    if resume and total - start <= 0:
        _log(f"The run is at step {start}, total_timesteps={total}: nothing left to train")
    t0 = time.time()
    signals.install()
    try:
        if total - start > 0:
            trainer.learn(total, control)
    finally:
        signals.uninstall()
    status["wall_s"] = time.time() - t0
    status["elapsed_s"] = previous_s + time.monotonic() - started  # every session of the run, setup included
    if applied or previous_overrides:
        # every resume's overrides, in order: a later resume does not erase what an earlier
        # one changed in the saved config
        status["resume_overrides"] = previous_overrides + applied
    steps = int(trainer.num_timesteps)
    if control.signal is not None and steps < total:
        path = trainer.save()
        status.update(status="interrupted", signal=int(control.signal), num_timesteps=steps, checkpoint=str(path))
        _log(f"\nStopped by signal {control.signal} at step {steps}; saved {path}.\n"
             f"Resume with: python train.py resume={run_dir}")
    else:
        if control.out_of_time and steps < total:
            status["stopped_by"] = "time_budget"
            _log(f"\nTime budget of {budget} s reached at step {steps}")
        path = trainer.save(final=True)
        status.update(status="finished", num_timesteps=steps, checkpoint=str(path))
        if periodic_eval.schedule.every > 0 and periodic_eval.last_step != steps:
            periodic_eval.evaluate(steps)  # the curve ends at the final weights
        spec = PolicySpec(agent.name, trainer.policy(), trainer.uses_masks, str(path))
        summary = final_evaluation(cfg, [spec, *baseline_specs], run_dir)
        status["summary"] = summary.to_dict("records")
        row = summary[summary.policy == agent.name].iloc[0]
        for k in cfg.env.report_metrics:
            if f"{k}_mean" in row:
                logger.record(f"eval/final_{k}", float(row[f"{k}_mean"]))
        logger.dump(steps)
        status["elapsed_s"] = previous_s + time.monotonic() - started
        report = _write_report(cfg, run_dir, summary, status)
        curve = periodic_eval.curve
        _log(
            f"wrote {report}"
            + (f", {curve.csv.name} and {curve.png.name}" if curve is not None and curve.png.is_file() else "")
        )
    _write_status(run_dir, status)
    trainer.close()
    logger.close()
    if wandb_run is not None:
        wandb_run.finish()
    return status


def main_config_check(cfg: DictConfig) -> None:
    """Early, readable errors for a new run's config, before anything is built: its values
    and keys (:func:`check_train_config`), the agent's and workload's env families
    (:func:`check_families`), and the topology and envs, built once
    (:func:`check_train_envs`). Raises :class:`ConfigError`; train.py runs it for every job of
    a sweep before the first one starts, and for a single run."""
    check_train_config(cfg)
    check_families(cfg)
    check_train_envs(cfg)


def __getattr__(name: str) -> Any:
    # moved to flowsched.agents.sb3 with the SB3 trainer (issue 18); kept for one release
    if name == "load_for_resume":
        import warnings

        from flowsched.agents import sb3

        warnings.warn("flowsched.agents.training.load_for_resume moved to flowsched.agents.sb3.load_for_resume",
                      DeprecationWarning, stacklevel=2)
        return sb3.load_for_resume
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_TRAINERS", "Every", "LoopControl", "RuleTrainer", "SignalStop", "Trainer", "build_trainer",
           "eval_seeds", "final_evaluation", "main_config_check", "train"]
