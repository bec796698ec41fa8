"""Early, readable checks of ``train.py`` / ``evaluate.py`` configs: unknown config names
(with the valid ones and a did-you-mean), values of the wrong type or range, unknown keys
where a typo would otherwise be ignored, and the overrides that may (or may not) be
given with ``resume=``. Every error names the key and the value."""
from __future__ import annotations

import copy
import difflib
import inspect
import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

#: the config groups of train.yaml / evaluate.yaml (configs/<group>/<option>.yaml)
GROUPS = ("env", "workload", "topology", "agent", "logger", "experiment")
#: seeds reach numpy's legacy seeding (SB3's set_random_seed), which takes 0 .. 2**32 - 1
SEED_MAX = 2**32 - 1


class ConfigError(ValueError):
    """A config that cannot run; the message names the key, the value and what is allowed."""


def group_options(group: str) -> list[str]:
    """The option names of a config group (``configs/<group>/*.yaml``)."""
    d = resources.files("flowsched.configs") / group
    if not d.is_dir():
        return []
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".yaml"))


def unknown_name(what: str, name: str, valid: Iterable[str]) -> str:
    """``unknown <what> '<name>'; valid: a, b, c (did you mean 'b'?)``."""
    valid = list(valid)
    close = difflib.get_close_matches(str(name), valid, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {what} {name!r}; valid: {', '.join(valid)}{hint}"


_FLAGS_WITH_CONFIG_DIRS = ("-cp", "--config-path", "-cd", "--config-dir")


def check_group_names(args: Sequence[str]) -> None:
    """Raises :class:`ConfigError` for a command-line override that selects a config group
    option that does not exist (``experiment=token_highlaod``, ``agent=a,typo``). Only the
    shipped groups are checked; with ``--config-dir``/``--config-path`` (other search paths)
    Hydra's own check is left to report."""
    if any(a.split("=", 1)[0] in _FLAGS_WITH_CONFIG_DIRS for a in args):
        return
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = None
    errors = []
    for a in args:
        m = re.match(r"^(\+{1,2})?([A-Za-z_]+)(@[\w.]*)?=", a)
        if a.startswith("-") or not m or m.group(2) not in GROUPS:
            continue
        parser = parser or OverridesParser.create()
        try:
            o = parser.parse_override(a)
        except Exception:  # noqa: BLE001 - a malformed override: Hydra's parser reports it
            continue
        group = o.key_or_group
        values: list[str | None]
        if o.is_sweep_override():
            values = list(o.sweep_string_iterator())
        else:
            values = [None if o.value() is None else o.get_value_element_as_str()]
        valid = group_options(group)
        for v in values:
            if v is None and not o.is_delete():
                errors.append(f"{a}: a config group cannot be set to null; leave it out for the default "
                              f"(or ~{group} to select none); valid: {', '.join(valid)}")
            elif v is not None and v not in valid:
                errors.append(unknown_name(group, v, valid))
            elif group == "agent" and v == "rule" and not any(re.match(r"^\+{0,2}agent\.rule=", x) for x in args):
                from flowsched import baselines

                names = "; ".join(f"{f}: {', '.join(n)}" for f, n in baselines.BASELINES.items())
                errors.append(f"{a}: agent=rule needs agent.rule=<name> ({names}), or use agent=<name>")
    if errors:
        raise ConfigError("\n".join(errors))


#: At most this many jobs of a sweep are composed and checked before the sweep starts.
SWEEP_CHECK_JOBS = 256


def check_sweep(args: Sequence[str], check: Callable[[DictConfig], None], config_name: str = "train") -> None:
    """Raises :class:`ConfigError` when a job of a sweep (``-m``/``--multirun``) has a config
    that ``check`` refuses, before any job runs: Hydra composes and runs the jobs one by one,
    so a bad value in the last job was reported after the first ones had trained. The jobs
    are the sweep overrides' combinations (as Hydra's basic sweeper makes them; at most
    :data:`SWEEP_CHECK_JOBS`). An override this cannot parse or compose is left to Hydra."""
    if not any(a in ("-m", "--multirun") for a in args) or any(
            a.split("=", 1)[0] in _FLAGS_WITH_CONFIG_DIRS for a in args):
        return
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    if GlobalHydra.instance().is_initialized():
        return
    parser = OverridesParser.create()
    fixed: list[str] = []
    sweeps: list[list[str]] = []
    for a in args:
        if a.startswith("-"):
            continue
        try:
            o = parser.parse_override(a)
        except Exception:  # noqa: BLE001 - a malformed override: Hydra's parser reports it
            return
        if o.key_or_group.startswith("hydra"):
            continue
        if o.is_sweep_override():
            key = a.split("=", 1)[0]
            sweeps.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            fixed.append(a)
    if not sweeps:
        return
    errors = []
    with initialize_config_module("flowsched.configs", version_base="1.3"):
        for combo in itertools.islice(itertools.product(*sweeps), SWEEP_CHECK_JOBS):
            try:
                cfg = compose(config_name, overrides=[*fixed, *combo])
            except Exception:  # noqa: BLE001 - what Hydra cannot compose, its own run reports
                continue
            try:
                check(cfg)
            except ConfigError as e:
                errors.append(f"sweep job {' '.join(combo)}: {e}")
    if errors:
        raise ConfigError("\n".join(errors))


# ---------------------------------------------------------------- values and keys


class _Checker:
    def __init__(self, cfg: DictConfig) -> None:
        self.cfg = cfg
        self.errors: list[str] = []

    def get(self, key: str) -> Any:
        try:
            v = OmegaConf.select(self.cfg, key, throw_on_missing=True)
        except Exception as e:  # noqa: BLE001 - interpolation and missing-value errors
            self.errors.append(f"{key}: cannot be read ({type(e).__name__}: {e})")
            return _BAD
        return OmegaConf.to_container(v, resolve=True) if isinstance(v, (DictConfig, ListConfig)) else v

    def fail(self, key: str, value: Any, want: str) -> None:
        self.errors.append(f"{key}={value!r}: {want}")

    def integer(self, key: str, lo: int | None = None, hi: int | None = None, none: bool = False) -> None:
        v = self.get(key)
        if v is _BAD or (v is None and none):
            return
        want = "must be an integer" + (f" >= {lo}" if lo is not None and hi is None else "") + (
            f" in [{lo}, {hi}]" if lo is not None and hi is not None else "") + (" or null" if none else "")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            return self.fail(key, v, want)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            self.fail(key, v, want)

    def number(self, key: str, gt: float | None = None, ge: float | None = None, le: float | None = None,
               none: bool = False) -> None:
        v = self.get(key)
        if v is _BAD or (v is None and none):
            return
        want = (
            "must be a finite number"
            + (f" > {gt}" if gt is not None else "")
            + (f" >= {ge}" if ge is not None else "")
            + (f" <= {le}" if le is not None else "")
            + (" or null" if none else "")
        )
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return self.fail(key, v, want)
        if (gt is not None and not v > gt) or (ge is not None and not v >= ge) or (le is not None and not v <= le):
            self.fail(key, v, want)

    def boolean(self, key: str) -> None:
        v = self.get(key)
        if v is not _BAD and not isinstance(v, bool):
            self.fail(key, v, "must be true or false")

    def string(self, key: str, choices: Sequence[str] | None = None, none: bool = False) -> None:
        v = self.get(key)
        if v is _BAD or (v is None and none):
            return
        if not isinstance(v, str):
            return self.fail(key, v, "must be a string" + (" or null" if none else ""))
        if choices is not None and v not in choices:
            self.errors.append(f"{key}={v!r}: " + unknown_name(key, v, choices))

    def str_list(self, key: str, nonempty: bool = True) -> None:
        v = self.get(key)
        if v is _BAD:
            return
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or (nonempty and not v):
            self.fail(key, v, "must be a non-empty list of names" if nonempty else "must be a list of names")

    def keys(self, key: str, allowed: Iterable[str], none: bool = False) -> None:
        """Unknown keys of the mapping at ``key`` ("" for the root): a typo would be ignored."""
        node = self.cfg if key == "" else OmegaConf.select(self.cfg, key)
        if node is None and none:
            return
        if not isinstance(node, DictConfig):
            self.errors.append(f"{key or 'config'}: must be a mapping, got {node!r}")
            return
        allowed = list(allowed)
        for k in node.keys():
            if k not in allowed:
                full = f"{key}.{k!s}" if key else str(k)
                self.errors.append(f"{full}: unknown key ({unknown_name('key', str(k), allowed).split('; ', 1)[1]})")

    def raise_errors(self, what: str) -> None:
        if self.errors:
            raise ConfigError(f"invalid {what} config:\n  " + "\n  ".join(self.errors))


_BAD = object()

TRAIN_KEYS = ("env", "workload", "topology", "agent", "logger", "seed", "device", "torch_threads", "total_timesteps",
              "time_budget_s", "progress_bar", "resume", "ray", "checkpoint", "eval")
EVALUATE_KEYS = ("env", "workload", "topology", "agent", "policies", "workloads", "loads", "seeds", "seed", "device",
                 "figures", "per_flow", "metric", "launcher", "ray", "reference")
#: The training keys an experiment preset (configs/experiment) sets, which evaluate.py
#: takes (and does not read) only when an experiment is chosen: ``evaluate.py
#: experiment=<name>`` evaluates on the preset's env, workload and topology.
PRESET_TRAIN_KEYS = tuple(k for k in TRAIN_KEYS if k not in EVALUATE_KEYS)
AGENT_KEYS = {
    "sb3": ("name", "kind", "masked", "env_families", "trainer", "model", "epsilon"),
    "rllib": (
        "name",
        "kind",
        "masked",
        "env_families",
        "trainer",
        "num_env_runners",
        "num_envs_per_env_runner",
        "algo",
    ),
    # rule: configs/agent/rule.yaml (runs saved before it have policy and env_families only)
    "baseline": ("name", "kind", "rule", "env_families", "policy", "trainer"),
}
#: agent.algo of an RLlib agent: the arguments of flowsched.agents.rllib.ppo_config that RLlibTrainer passes
RLLIB_ALGO_KEYS = ("lr", "gamma", "gae_lambda", "entropy_coeff", "use_kl_loss", "vf_loss_coeff", "train_batch_size",
                   "minibatch_size", "num_epochs", "hidden")
WANDB_KEYS = ("mode", "project", "entity", "group", "id")
#: the keys of an env config (configs/env/*.yaml), as flowsched.agents.envs, training, evaluation and report
#: read them; env.kwargs, env.unmasked_kwargs and env.eval_kwargs are the env's constructor arguments, which
#: the env checks itself; env.baseline_kwargs are the arguments of the env's rule baselines
ENV_KEYS = ("family", "id", "hosts", "link_gbps", "num_envs", "workload_arg", "load_arg", "normalize_reward", "metric",
            "metric_mode", "report_metrics", "baselines", "baseline_kwargs", "kwargs", "unmasked_kwargs",
            "eval_kwargs")


def _common(c: _Checker) -> None:
    c.keys("env", ENV_KEYS)
    _topology_keys(c)
    c.keys("workload", ("name", "load", "env_families"))
    c.number("workload.load", gt=0, none=True)
    c.keys("ray", ("address", "num_cpus"))
    c.string("ray.address", none=True)
    c.integer("ray.num_cpus", lo=1, none=True)
    c.string("device")
    _device(c)


def _device(c: _Checker) -> None:
    """``device``: a torch device that exists here (SB3 would run a ``cuda`` run on the CPU
    without a word where torch sees no GPU)."""
    v = c.get("device")
    if not isinstance(v, str) or v in ("cpu", "auto"):
        return
    import torch

    try:
        dev = torch.device(v)
    except (RuntimeError, ValueError) as e:
        return c.fail("device", v, f"must be cpu, auto or a torch device such as cuda or cuda:0 ({e})")
    if dev.type == "cuda":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if n == 0:
            c.fail("device", v, f"torch {torch.__version__} sees no CUDA GPU here (CUDA build: "
                                f"{torch.version.cuda or 'none'}); use device=cpu or device=auto")
        elif dev.index is not None and dev.index >= n:
            c.fail("device", v, f"torch sees {n} CUDA GPU(s) here (cuda:0..cuda:{n - 1})")
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        c.fail("device", v, "torch's MPS backend is not available here; use device=cpu or device=auto")


def _target_keys(c: _Checker, key: str, node: DictConfig, what: str, skip: Sequence[str] = ()) -> None:
    """The keys of the mapping at ``key`` against the constructor of its ``_target_`` class
    (``what`` it must name, for the message); ``skip``: arguments the caller passes itself.
    Hydra's own keys (``_target_``, ``_recursive_``, ...) are left out; a constructor with
    ``**kwargs`` takes any key."""
    target = node.get("_target_")
    if not isinstance(target, str):
        c.errors.append(f"{key}._target_={target!r}: must name {what}")
        return
    try:
        from hydra.utils import get_class

        cls = get_class(target)
    except Exception as e:  # noqa: BLE001
        c.errors.append(f"{key}._target_={target!r}: cannot be imported ({e})")
        return
    params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]  # cls is a class, not an instance
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [p for p, v in params.items() if p != "self" and p not in skip
               and v.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    for k in node.keys():
        if str(k).startswith("_") and str(k).endswith("_"):
            continue
        if k not in allowed:
            hint = unknown_name("key", str(k), allowed).split("; ", 1)[1]
            c.errors.append(f"{key}.{k!s}: not an argument of {target} ({hint})")


def _model_keys(c: _Checker, model: DictConfig) -> None:
    """agent.model's keys against the SB3 class's constructor (a typo fails here, before
    the envs are built, with the close match)."""
    _target_keys(c, "agent.model", model, "an SB3 model class", skip=("env",))


def _topology_keys(c: _Checker) -> None:
    """topology's keys against its ``_target_`` class's constructor (``flowsched.BigSwitch``,
    ...): an unknown key would otherwise fail only when the envs are built, as Hydra's
    instantiate error. A null topology is the env's default."""
    node = c.cfg.get("topology")
    if node is None:
        return
    if not isinstance(node, DictConfig):
        c.errors.append(f"topology: must be a mapping with _target_ (or null for the env's default), got {node!r}")
        return
    _target_keys(c, "topology", node, "a topology class (e.g. flowsched.BigSwitch)")


def _rule(c: _Checker, cfg: DictConfig) -> None:
    """agent.rule of a rule agent: a baseline of the env's family (from the registry)."""
    from flowsched import baselines

    family = c.get("env.family")
    if OmegaConf.is_missing(cfg.agent, "rule"):
        valid = ", ".join(baselines.BASELINES.get(family, ())) if isinstance(family, str) else "?"
        return c.errors.append(f"agent.rule: missing: agent=rule needs agent.rule=<name> (env {family}: {valid}), "
                               "or use agent=<name>")
    if "rule" not in cfg.agent:
        return
    rule = c.get("agent.rule")
    if rule is _BAD or family is _BAD:
        return
    if not isinstance(rule, str):
        return c.fail("agent.rule", rule, "must be the name of a rule-based baseline")
    rules = list(baselines.BASELINES.get(family, ()))
    if rule not in rules:
        others = baselines.families(rule)
        where = f" ({rule!r} is a baseline of env {', '.join(others)})" if others else ""
        c.errors.append(f"agent.rule={rule!r}: " + unknown_name(f"{family} baseline", rule, rules) + where)


def _hidden_sizes(c: _Checker, key: str) -> None:
    """With ``env.kwargs.hide_sizes=true`` (switch env), the baselines of ``key`` may not be
    rules that read flow sizes: they would fail at the first evaluation, after training."""
    from flowsched.baselines.switch import SwitchRule

    kwargs = c.get("env.kwargs")
    names = c.get(key)
    if c.get("env.family") != "switch" or not isinstance(kwargs, dict) or kwargs.get("hide_sizes") is not True \
            or not isinstance(names, list):
        return
    bad = [n for n in names if n in SwitchRule.READS_SIZES]
    if bad:
        keep = [n for n in names if n not in SwitchRule.READS_SIZES]
        c.errors.append(f"{key}: {', '.join(bad)} read flow sizes, which env.kwargs.hide_sizes=true hides; "
                        f"leave them out (e.g. '{key}=[{','.join(keep)}]')")


def check_train_config(cfg: DictConfig) -> None:
    """Raises :class:`ConfigError` listing every bad value and unknown key of a train config."""
    c = _Checker(cfg)
    c.keys("", TRAIN_KEYS)
    c.integer("seed", 0, SEED_MAX)
    c.integer("total_timesteps", lo=1)
    c.number("time_budget_s", gt=0, none=True)
    c.integer("torch_threads", lo=0, none=True)
    c.boolean("progress_bar")
    c.keys("checkpoint", ("every",))
    c.integer("checkpoint.every", lo=0)
    c.keys("eval", ("every", "episodes", "final_episodes", "seed", "baselines"))
    c.integer("eval.every", lo=0)
    c.integer("eval.episodes", lo=1)
    c.integer("eval.final_episodes", lo=1)
    c.integer("eval.seed", 0, SEED_MAX)
    c.str_list("eval.baselines", nonempty=False)
    _hidden_sizes(c, "eval.baselines")
    c.keys("logger", ("tensorboard", "wandb"))
    c.boolean("logger.tensorboard")
    if cfg.get("logger") is not None and cfg.logger.get("wandb") is not None:
        c.keys("logger.wandb", WANDB_KEYS)
        c.string("logger.wandb.mode", ("offline", "online", "disabled"))
    c.integer("env.num_envs", lo=1)
    _common(c)
    agent = cfg.get("agent")
    kind = agent.get("kind") if isinstance(agent, DictConfig) else None
    if kind not in AGENT_KEYS:
        c.fail("agent.kind", kind, f"must be one of {', '.join(AGENT_KEYS)}")
    else:
        c.keys("agent", AGENT_KEYS[kind])
        if kind == "sb3":
            if isinstance(agent.get("model"), DictConfig):
                _model_keys(c, agent.model)
                for k in ("n_steps", "batch_size", "n_epochs"):
                    if k in agent.model:
                        c.integer(f"agent.model.{k}", lo=1)
                if "gamma" in agent.model:
                    c.number("agent.model.gamma", gt=0, le=1)
            else:
                c.errors.append("agent.model: an SB3 agent needs a model mapping with _target_")
            if agent.get("epsilon") is not None:
                c.keys("agent.epsilon", ("start", "end", "fraction"))
                for k in ("start", "end", "fraction"):
                    c.number(f"agent.epsilon.{k}", ge=0, le=1)
        elif kind == "baseline":
            _rule(c, cfg)
        elif kind == "rllib":
            c.integer("agent.num_env_runners", lo=0)
            c.integer("agent.num_envs_per_env_runner", lo=1)
            c.keys("agent.algo", RLLIB_ALGO_KEYS)
            for k in ("train_batch_size", "minibatch_size", "num_epochs"):
                c.integer(f"agent.algo.{k}", lo=1)
            c.number("agent.algo.lr", gt=0)
            c.number("agent.algo.gamma", gt=0, le=1)
    c.raise_errors("train")


def _experiment_chosen() -> bool:
    """Whether the running Hydra app composed an experiment preset (``experiment=<name>``)."""
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.initialized() and HydraConfig.get().runtime.choices.get("experiment") not in (None, "null")


def check_evaluate_config(cfg: DictConfig) -> None:
    """Raises :class:`ConfigError` listing every bad value and unknown key of an evaluate config."""
    c = _Checker(cfg)
    c.keys("", EVALUATE_KEYS + (PRESET_TRAIN_KEYS if _experiment_chosen() else ()))
    c.integer("seeds", lo=1)
    c.integer("seed", 0, SEED_MAX)
    seed, seeds = c.get("seed"), c.get("seeds")
    if not c.errors and seed + seeds - 1 > SEED_MAX:
        c.errors.append(f"seed={seed!r}, seeds={seeds!r}: the last seed {seed + seeds - 1} is above {SEED_MAX}")
    c.str_list("policies")
    _hidden_sizes(c, "policies")
    c.str_list("workloads")
    c.string("reference", none=True)  # one of policies: checked against the resolved policies (resolve_reference)
    ws = c.get("workloads")
    if isinstance(ws, list):
        valid = group_options("workload")
        c.errors += [
            f"workloads: {unknown_name('workload', w, valid)}" for w in ws if isinstance(w, str) and w not in valid
        ]
    loads = c.get("loads")
    if loads is not _BAD:
        if not isinstance(loads, list) or not loads:
            c.fail("loads", loads, "must be a non-empty list of loads (numbers > 0, or null for the workload's own)")
        else:
            for i, x in enumerate(loads):
                if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float)) or not x > 0
                                      or not math.isfinite(x)):
                    c.fail(f"loads[{i}]", x, "must be a number > 0 or null (the workload's own load)")
    c.boolean("figures")
    c.boolean("per_flow")
    c.string("launcher", ("local", "ray"))
    _common(c)
    c.raise_errors("evaluate")


#: what a fresh run refuses to write over (a run directory given twice with hydra.run.dir=)
RUN_FILES = ("run.json", "model.zip", "checkpoints", "rllib_checkpoint")


#: what a fresh evaluation refuses to write over (its report would mix with the old figures)
EVALUATION_FILES = ("results.parquet", "summary.csv", "report.md", "figures")


def check_fresh_run_dir(run_dir: Path) -> None:
    """Raises :class:`ConfigError` when a new run's directory already holds a run's files
    (an explicit ``hydra.run.dir`` given twice): they would be overwritten."""
    taken = [f for f in RUN_FILES if (Path(run_dir) / f).exists()]
    if taken:
        raise ConfigError(f"{run_dir} already holds a run ({', '.join(taken)}); give a new hydra.run.dir, "
                          f"or continue that run with resume={run_dir}")


def check_fresh_evaluation_dir(out_dir: Path) -> None:
    """Raises :class:`ConfigError` when an evaluation's directory already holds one (an
    explicit ``hydra.run.dir`` given twice): its files would be overwritten, and figures
    of the old cells left beside the new report."""
    taken = [f for f in EVALUATION_FILES if (Path(out_dir) / f).exists()]
    if taken:
        raise ConfigError(f"{out_dir} already holds an evaluation ({', '.join(taken)}); give a new hydra.run.dir")


# ---------------------------------------------------------------- overrides at resume

#: keys that may change at ``resume=``: budgets, logging, evaluation and checkpoint
#: frequency, where it runs. Everything else would change the experiment.
SAFE_AT_RESUME = ("total_timesteps", "time_budget_s", "progress_bar", "device", "torch_threads", "logger",
                  "eval.every", "eval.episodes", "eval.final_episodes", "eval.baselines", "checkpoint.every", "ray")


def _safe(key: str) -> bool:
    return any(key == s or key.startswith(s + ".") for s in SAFE_AT_RESUME)


def _plain(v: Any) -> Any:
    return OmegaConf.to_container(v, resolve=True) if isinstance(v, (DictConfig, ListConfig)) else v


def saved_choices(run_dir: Path) -> dict[str, Any] | None:
    """The group options a run was started with (its ``.hydra/hydra.yaml``), or None."""
    f = Path(run_dir) / ".hydra" / "hydra.yaml"
    if not f.exists():
        return None
    try:
        ch = OmegaConf.select(OmegaConf.load(f), "hydra.runtime.choices")
    except Exception:  # noqa: BLE001
        return None
    return None if ch is None else dict(OmegaConf.to_container(ch))  # type: ignore[arg-type]


def merge_resume_overrides(saved: DictConfig, current: DictConfig, overrides: Sequence[str],
                           choices: Mapping[str, Any] | None, saved_choice: Mapping[str, Any] | None
                           ) -> tuple[DictConfig, list[str]]:
    """The saved config of a run with the command line's overrides applied where that is
    safe (:data:`SAFE_AT_RESUME`); ``current`` is the config composed from the resume
    command line. An override that would change the experiment (env, workload, topology,
    agent or its hyperparameters, seed, ...) is refused with a :class:`ConfigError`
    naming it, unless it equals the saved value (then it changes nothing).

    Returns the merged config and one line per applied change."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    merged = copy.deepcopy(saved)
    applied, refused = [], []
    for text in overrides:
        o = parser.parse_override(text)
        key = o.key_or_group
        if key == "resume":
            continue
        if o.is_delete():
            refused.append(f"{text}: deleting a key at resume is not supported")
            continue
        if key in GROUPS:
            now = None if choices is None else choices.get(key)
            then = None if saved_choice is None else saved_choice.get(key)
            if _safe(key):
                merged[key] = _plain(current[key])
                applied.append(f"{key}: {then} -> {now}")
            elif saved_choice is None or now != then:
                refused.append(f"{text}: the run was started with {key}={then}")
            continue
        new = _plain(OmegaConf.select(current, key))
        try:
            old = _plain(OmegaConf.select(saved, key))
        except Exception:  # noqa: BLE001
            old = "<unreadable>"
        if new == old:
            continue
        if _safe(key):
            OmegaConf.update(merged, key, new, merge=False, force_add=True)
            applied.append(f"{key}: {old!r} -> {new!r}")
        else:
            refused.append(f"{text}: the run has {key}={old!r}")
    if refused:
        raise ConfigError(
            "resume: these overrides would change the experiment, so they are refused (start a new run instead):\n  "
            + "\n  ".join(refused) + f"\nAt resume you may override: {', '.join(SAFE_AT_RESUME)}.")
    return merged, applied


__all__ = [
    "ConfigError",
    "ENV_KEYS",
    "GROUPS",
    "RUN_FILES",
    "check_fresh_evaluation_dir",
    "check_sweep",
    "check_fresh_run_dir",
    "SAFE_AT_RESUME",
    "SEED_MAX",
    "check_evaluate_config",
    "check_group_names",
    "check_train_config",
    "group_options",
    "merge_resume_overrides",
    "saved_choices",
    "unknown_name",
]
