"""The one training loop behind ``train.py``, and the small interface its trainers implement.

:func:`train` owns what every run needs, whatever learns: the config checks, ``resume=``,
seeding, signals (SIGINT and SIGTERM stop training and save a checkpoint to resume
from; ``train.py`` then exits 130 or 143), the wall-clock budget, periodic checkpoints
and evaluations against the baselines, the final save, the held-out evaluation and
``run.json``. What learns is a :class:`Trainer`, built by Hydra from the agent config's
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
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from flowsched.agents.checkpoints import atomic_write_text
from flowsched.agents.config_checks import (
    ConfigError, check_fresh_run_dir, check_train_config, merge_resume_overrides, saved_choices,
)
from flowsched.agents.evaluation import (
    PolicySpec, baseline_kwargs, format_table, resolve_policies, run_config, run_episodes, summarize,
)
from flowsched.baselines.types import Policy


def _log(msg: str) -> None:
    try:
        from tqdm import tqdm

        tqdm.write(msg)
    except ImportError:  # pragma: no cover
        print(msg, flush=True)


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
        raise ConfigError(f"agent.trainer._target_={target!r}: must name a trainer class (flowsched.agents.training.Trainer)")
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


def _episode_means(rows: list[dict[str, Any]]) -> dict[str, float]:
    df = pd.DataFrame(rows)
    return {k: float(df[k].mean()) for k in df.columns if k not in ("seed",) and df[k].dtype.kind in "fi"}


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


class _PeriodicEval:
    """Every ``eval.every`` steps: the policy on ``eval.episodes`` held-out seeds, logged as
    ``eval/<metric>`` beside the baselines' values (``eval/baseline/<name>``, computed
    once on the same seeds) and the gap to the best one (``eval/gap_to_best_baseline``)."""

    def __init__(self, cfg: DictConfig, trainer: Trainer, label: str, baseline_specs: list[PolicySpec],
                 logger: Any, start: int) -> None:
        self.cfg, self.trainer, self.label, self.logger = cfg, trainer, label, logger
        self.schedule = Every(int(cfg.eval.every), start)
        self.metric = cfg.env.metric
        self.sign = 1.0 if cfg.env.metric_mode == "max" else -1.0
        self.seeds = eval_seeds(cfg, cfg.eval.episodes)
        self.baselines = {b.label: self._means(b).get(self.metric, float("nan")) for b in baseline_specs} \
            if self.schedule.every > 0 else {}
        self.history: list[tuple[int, float]] = []

    def _means(self, spec: PolicySpec) -> dict[str, float]:
        return _episode_means(run_episodes(spec, self.cfg, self.seeds, per_flow=False)[0])

    def __call__(self, n: int) -> None:
        if not self.schedule.due(n):
            return
        vals = self._means(PolicySpec(self.label, self.trainer.policy(), self.trainer.uses_masks, "training"))
        for k, v in vals.items():
            self.logger.record(f"eval/{k}", v)
        for name, v in self.baselines.items():
            self.logger.record(f"eval/baseline/{name}", v)
        if self.baselines and self.metric in vals:
            best = max(self.baselines.values(), key=lambda v: self.sign * v)
            self.logger.record("eval/gap_to_best_baseline", self.sign * (vals[self.metric] - best))
        self.history.append((n, vals.get(self.metric, float("nan"))))
        _log(f"[eval] step {n}: {self.metric} = {vals.get(self.metric, float('nan')):.4f}")
        self.logger.dump(n)


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
    baseline_specs = resolve_policies(list(cfg.eval.baselines), cfg.env.family, baseline_kwargs=baseline_kwargs(cfg))
    trainer = build_trainer(cfg, run_dir)
    status: dict[str, Any] = {"run_dir": str(run_dir)}

    if not trainer.learns:  # a rule: evaluate it on the held-out seeds
        spec = PolicySpec(agent.name, trainer.policy(), trainer.uses_masks, agent.name)
        summary = final_evaluation(cfg, [spec, *[b for b in baseline_specs if b.label != agent.name]], run_dir)
        status.update(num_timesteps=0, status="finished", summary=summary.to_dict("records"))
        _write_status(run_dir, status)
        return status

    from flowsched.agents.logs import make_logger

    logger, wandb_run = make_logger(cfg, run_dir, f"{cfg.env.family}/{cfg.workload.name}/{agent.name}/seed{cfg.seed}")
    if resume:
        ckpt = trainer.load(logger)
        _log(f"Loaded {ckpt} at step {trainer.num_timesteps}")
    else:
        trainer.start(logger)

    total = int(cfg.total_timesteps)
    start = int(trainer.num_timesteps)
    periodic_eval = _PeriodicEval(cfg, trainer, agent.name, baseline_specs, logger, start)
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
    if applied:
        status["resume_overrides"] = applied
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
        spec = PolicySpec(agent.name, trainer.policy(), trainer.uses_masks, str(path))
        summary = final_evaluation(cfg, [spec, *baseline_specs], run_dir)
        status["summary"] = summary.to_dict("records")
        row = summary[summary.policy == agent.name].iloc[0]
        for k in cfg.env.report_metrics:
            if f"{k}_mean" in row:
                logger.record(f"eval/final_{k}", float(row[f"{k}_mean"]))
        logger.dump(steps)
    _write_status(run_dir, status)
    trainer.close()
    logger.close()
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
