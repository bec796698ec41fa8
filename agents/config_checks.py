"""Early, readable checks of ``train.py`` / ``evaluate.py`` configs: unknown config names
(with the valid ones and a did-you-mean), values of the wrong type or range, unknown keys
where a typo would otherwise be ignored, and the overrides that may (or may not) be
given with ``resume=``; then the env families of the agent and workloads
(:func:`check_families`), and the topology and envs, built once (:func:`check_train_envs`,
:func:`check_evaluate_envs`: their own argument checks, as a config error). Every error
names the key and the value."""
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

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

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
    global _SWEEP_JOB
    with initialize_config_module("flowsched.configs", version_base="1.3"):
        for combo in itertools.islice(itertools.product(*sweeps), SWEEP_CHECK_JOBS):
            try:
                cfg = compose(config_name, overrides=[*fixed, *combo], return_hydra_config=True)
            except Exception:  # noqa: BLE001 - what Hydra cannot compose, its own run reports
                continue
            # the job's Hydra node (its group choices and overrides), as HydraConfig gives it in the job
            _SWEEP_JOB = cfg.hydra
            with open_dict(cfg):
                del cfg["hydra"]
            try:
                check(cfg)
            except ConfigError as e:
                errors.append(f"sweep job {' '.join(combo)}: {e}")
            finally:
                _SWEEP_JOB = None
    if errors:
        raise ConfigError("\n".join(errors))


#: the Hydra node of the sweep job that :func:`check_sweep` is checking (HydraConfig is set
#: only inside a job)
_SWEEP_JOB: Any = None


def _hydra_node() -> Any:
    """The running Hydra job's config node (``hydra.runtime.choices``, ``hydra.overrides``),
    that of the sweep job being checked, or None (a config composed by a script)."""
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get() if HydraConfig.initialized() else _SWEEP_JOB


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
               none: bool = False, hint: str = "") -> None:
        v = self.get(key)
        if v is _BAD or (v is None and none):
            return
        want = (
            "must be a finite number"
            + (f" > {gt}" if gt is not None else "")
            + (f" >= {ge}" if ge is not None else "")
            + (f" <= {le}" if le is not None else "")
            + (" or null" if none else "")
            + hint
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

    def mapping(self, key: str, none: bool = False) -> None:
        v = self.get(key)
        if v is not _BAD and not isinstance(v, dict) and not (v is None and none):
            self.fail(key, v, "must be a mapping" + (" or null" if none else ""))

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


#: the numbers of every episode's row of an evaluation (:func:`flowsched.agents.evaluation.run_episodes`)
#: besides the env's ``info``
EPISODE_ROW_METRICS = ("return", "steps", "masked_action_rate")
#: the row's metrics computed from the episode's flows (:func:`flowsched.agents.evaluation.episode_metrics`):
#: in the final table of train.py and in evaluate.py, not in train.py's periodic evaluation (the learning curve)
FLOW_METRICS = ("mean_fct_ms", "p99_fct_ms", "mean_slowdown", "p99_slowdown")
#: the numbers of each env family's ``info`` at an episode's end, which the rows take too
#: (tests/test_config_values.py plays an episode of every env config to keep this true);
#: the metrics of an env family not listed here are not checked
ENV_INFO_METRICS = {
    "token": ("deadline_hit_ratio", "deadlines_met", "flows_finished", "flows_with_deadline", "mean_fct_s"),
    "switch": ("flow_time_s", "flows_finished", "flows_in_system", "mean_fct_s"),
    "thresholds": ("flows_ended", "mean_fct_s", "reference_mean_fct_s"),
}


def episode_metrics(family: str, flows: bool = True) -> list[str] | None:
    """The metrics an evaluation episode of env family ``family`` has (``flows``: with those
    computed from its flows, :data:`FLOW_METRICS`); None for a family this does not know."""
    info = ENV_INFO_METRICS.get(family)
    if info is None:
        return None
    return list(dict.fromkeys([*EPISODE_ROW_METRICS, *info, *(FLOW_METRICS if flows else ())]))


def _metric(c: _Checker, key: str, flows: bool) -> None:
    """``key`` (a metric name, or a list of them): metrics an episode of the env has (an
    unknown one gave an all-NaN learning curve, or was left out of the tables without a word)."""
    v, family = c.get(key), c.get("env.family")
    if v is _BAD or not isinstance(family, str):
        return
    valid = episode_metrics(family, flows)
    names = v if isinstance(v, list) else [v]
    for i, m in enumerate(names):
        k = f"{key}[{i}]" if isinstance(v, list) else key
        if not isinstance(m, str):
            c.fail(k, m, "must be a metric name")
        elif valid is not None and m not in valid:
            note = ""
            if m in FLOW_METRICS and not flows:
                note = (f" ({m} is computed from the episodes' flows for the final table only, not in the periodic "
                        "evaluation of the learning curve)")
            c.errors.append(f"{k}={m!r}: " + unknown_name(f"{family} metric", m, valid) + note)


def _common(c: _Checker) -> None:
    c.keys("env", ENV_KEYS)
    # read by name everywhere (the env's registry id, the baselines' family, the run's paths)
    c.string("env.family")
    c.string("env.id")
    c.mapping("env.kwargs")
    env = c.cfg.get("env")
    for k in ("unmasked_kwargs", "eval_kwargs", "baseline_kwargs"):
        if isinstance(env, DictConfig) and k in env:
            c.mapping(f"env.{k}", none=True)
    _topology_keys(c)
    c.keys("workload", ("name", "load", "env_families"))
    c.string("workload.name")
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
        if c.get("logger.tensorboard") is False and c.get("logger.wandb.mode") != "disabled":
            c.errors.append("logger.tensorboard=False with logger.wandb: W&B receives the run's scalars only by "
                            "syncing its TensorBoard files (sync_tensorboard), so the W&B run would have none; keep "
                            "logger.tensorboard=true (as logger=wandb has it), or use logger=tensorboard or "
                            "logger=none")
    c.integer("env.num_envs", lo=1)
    _common(c)
    _metric(c, "env.metric", flows=False)  # the periodic evaluation's (the learning curve's)
    c.string("env.metric_mode", ("min", "max"))
    c.str_list("env.report_metrics", nonempty=False)
    if isinstance(c.get("env.report_metrics"), list):
        _metric(c, "env.report_metrics", flows=True)  # the final table's
    agent = cfg.get("agent")
    kind = agent.get("kind") if isinstance(agent, DictConfig) else None
    if kind not in AGENT_KEYS:
        c.fail("agent.kind", kind, f"must be one of {', '.join(AGENT_KEYS)}")
    else:
        c.keys("agent", AGENT_KEYS[kind])
        if not (kind == "baseline" and OmegaConf.is_missing(agent, "rule")):  # that one: _rule says it
            c.string("agent.name")
            _agent_name(c, kind)
        if kind == "sb3":
            if isinstance(agent.get("model"), DictConfig):
                _model_keys(c, agent.model)
                _sb3_model(c, agent.model)
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
            _rllib_algo(c)
    c.raise_errors("train")


def _agent_name(c: _Checker, kind: str) -> None:
    """agent.name may not be a baseline's of eval.baselines: the final table and the learning
    curve group by name, so the agent's rows would be merged with the baseline's. A rule agent
    named as its rule is that baseline (train.py evaluates it once)."""
    name, baselines = c.get("agent.name"), c.get("eval.baselines")
    if not isinstance(name, str) or not isinstance(baselines, list) or name not in baselines:
        return
    if kind == "baseline" and c.cfg.agent.get("rule", name) == name:
        return
    keep = [b for b in baselines if b != name]
    c.errors.append(f"agent.name={name!r}: also the name of a baseline of eval.baselines ({', '.join(baselines)}); "
                    "the results are grouped by name, so the agent's rows would be merged with the baseline's: give "
                    f"the agent another name, or leave {name} out (eval.baselines=[{','.join(keep)}])")


#: SB3 on-policy hyperparameters (PPO, MaskablePPO, A2C) checked when agent.model gives them:
#: the bounds of :meth:`_Checker.number` (as SB3 documents them, and asserts for clip_range_vf)
SB3_NUMBERS: dict[str, dict[str, Any]] = {
    "learning_rate": {"gt": 0},
    "ent_coef": {"ge": 0},
    "vf_coef": {"ge": 0},
    "clip_range": {"gt": 0},
    "clip_range_vf": {"gt": 0, "none": True},
    "gae_lambda": {"ge": 0, "le": 1},
    "max_grad_norm": {"gt": 0},
    "target_kl": {"gt": 0, "none": True},
    "rms_prop_eps": {"gt": 0},
}
#: SB3 takes a schedule (a callable of the remaining progress) for these: from a config, a mapping with _target_
SB3_SCHEDULES = ("learning_rate", "clip_range", "clip_range_vf")
SB3_BOOLEANS = ("normalize_advantage", "use_sde", "use_rms_prop")


def _sb3_model(c: _Checker, model: DictConfig) -> None:
    """The hyperparameters of an SB3 model config (a wrong type failed inside SB3 after the
    first rollout, or at Hydra's instantiate; an out-of-range value trained silently)."""
    for k in ("n_steps", "batch_size", "n_epochs"):
        if k in model:
            c.integer(f"agent.model.{k}", lo=1)
    if "gamma" in model:
        c.number("agent.model.gamma", gt=0, le=1)
    for k, bounds in SB3_NUMBERS.items():
        if k not in model:
            continue
        if k in SB3_SCHEDULES:
            v = c.get(f"agent.model.{k}")
            if isinstance(v, dict) and "_target_" in v:
                continue  # a schedule built by Hydra
            c.number(f"agent.model.{k}", **bounds, hint=" (or a schedule: a mapping with _target_)")
        else:
            c.number(f"agent.model.{k}", **bounds)
    for k in SB3_BOOLEANS:
        if k in model:
            c.boolean(f"agent.model.{k}")
    if "batch_size" in model and c.get("agent.model.batch_size") == 1:
        normalize = c.get("agent.model.normalize_advantage") if "normalize_advantage" in model else _default(
            model, "normalize_advantage")
        if normalize is True:
            c.fail("agent.model.batch_size", 1, "must be > 1 with normalize_advantage=true (the advantages are "
                                                 "normalized per minibatch; SB3 refuses it)")


def _default(node: DictConfig, arg: str) -> Any:
    """The default of argument ``arg`` of the ``_target_`` class of ``node`` (None if unknown)."""
    try:
        from hydra.utils import get_class

        p = inspect.signature(get_class(str(node.get("_target_"))).__init__).parameters.get(arg)  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - an unimportable target is reported by _target_keys
        return None
    return None if p is None or p.default is inspect.Parameter.empty else p.default


def _rllib_algo(c: _Checker) -> None:
    """agent.algo of an RLlib agent (flowsched.agents.rllib.ppo_config's arguments): a bad
    value failed inside RLlib after Ray had started, or trained with nan."""
    for k in ("train_batch_size", "minibatch_size", "num_epochs"):
        c.integer(f"agent.algo.{k}", lo=1)
    c.number("agent.algo.lr", gt=0)
    c.number("agent.algo.gamma", gt=0, le=1)
    algo = c.cfg.agent.get("algo")
    if not isinstance(algo, DictConfig):
        return
    if "gae_lambda" in algo:
        c.number("agent.algo.gae_lambda", ge=0, le=1)
    for k in ("entropy_coeff", "vf_loss_coeff"):
        if k in algo:
            c.number(f"agent.algo.{k}", ge=0)
    if "use_kl_loss" in algo:
        c.boolean("agent.algo.use_kl_loss")
    hidden = c.get("agent.algo.hidden")
    if hidden is not _BAD and (not isinstance(hidden, list) or not hidden or not all(
            isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden)):
        c.fail("agent.algo.hidden", hidden, "must be a non-empty list of layer widths (integers >= 1), e.g. [64,64]")
    tb, mb = c.get("agent.algo.train_batch_size"), c.get("agent.algo.minibatch_size")
    if all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in (tb, mb)) and mb > tb:
        c.fail("agent.algo.minibatch_size", mb, f"must be <= agent.algo.train_batch_size={tb} (RLlib's "
                                                  "train_batch_size_per_learner: each minibatch is a part of it)")


def _experiment_chosen() -> bool:
    """Whether the running Hydra app (or the sweep job being checked) composed an experiment
    preset (``experiment=<name>``)."""
    hc = _hydra_node()
    return hc is not None and hc.runtime.choices.get("experiment") not in (None, "null")


def _agent_overrides() -> list[str]:
    """The command line's overrides of the running Hydra job that set ``agent`` or a key under it."""
    hc = _hydra_node()
    task = [] if hc is None else list(hc.overrides.task)
    return [str(o) for o in task if re.match(r"^\+{0,2}agent([.@=]|$)", str(o))]


def _evaluate_agent(c: _Checker) -> None:
    """evaluate.py reads no ``agent``: what it evaluates is ``policies``. An agent given on the
    command line (``agent=maskable_ppo``), or without an experiment preset (which may set one,
    as it sets the training keys), would be silently ignored."""
    agent = c.cfg.get("agent")
    given = _agent_overrides()
    if agent is None and not given:
        return
    if given or not _experiment_chosen():
        what = " ".join(given) if given else f"agent={agent.get('name') if isinstance(agent, DictConfig) else agent!r}"
        c.errors.append(f"{what}: evaluate.py does not read an agent config; choose what is evaluated with "
                        "policies=[...] (baseline names of the env, training run directories or checkpoints, "
                        "e.g. policies=[fifo,outputs/<run dir>])")


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
    _metric(c, "metric", flows=True)
    _evaluate_agent(c)
    c.raise_errors("evaluate")


# ---------------------------------------------------------------- env families and the envs themselves


def _option(group: str, name: str) -> dict[str, Any]:
    """``configs/<group>/<name>.yaml`` as it is written (interpolations unresolved)."""
    f = resources.files("flowsched.configs") / group / f"{name}.yaml"
    node = OmegaConf.create(f.read_text()) if f.is_file() else None
    out = OmegaConf.to_container(node, resolve=False) if isinstance(node, DictConfig) else None
    return {str(k): v for k, v in out.items()} if isinstance(out, dict) else {}


def _families(v: Any) -> list[str] | None:
    return [str(x) for x in v] if isinstance(v, list) else None


def env_options(families: Iterable[str]) -> list[str]:
    """The env options (configs/env) of these env families."""
    fams = set(families)
    return [e for e in group_options("env") if _option("env", e).get("family") in fams]


def experiments_for(families: Iterable[str]) -> list[str]:
    """The experiment presets (configs/experiment) that choose an env of these env families."""
    envs = set(env_options(families))
    out = []
    for name in group_options("experiment"):
        for d in _option("experiment", name).get("defaults") or ():
            if isinstance(d, dict) and any(str(k).split()[-1] == "/env" and v in envs for k, v in d.items()):
                out.append(name)
    return out


def agents_for(family: str) -> list[str]:
    """The agent options that work with env family ``family``: learning agents whose
    env_families list it, then the rule-based baselines of the family."""
    from flowsched import baselines

    learned = [a for a in group_options("agent")
               if family in (_families(_option("agent", a).get("env_families")) or ())]
    return learned + [r for r in baselines.BASELINES.get(family, ()) if r not in learned]


def workloads_for(family: str) -> list[str]:
    """The workload options for env family ``family`` (those without env_families fit any)."""
    out = []
    for w in group_options("workload"):
        fams = _families(_option("workload", w).get("env_families"))
        if fams is None or family in fams:
            out.append(w)
    return out


def _workload_family_error(key: str, name: Any, fams: Any, family: str) -> str:
    fit = workloads_for(family)
    return (f"{key}: workload {name!r} is for env {list(fams)}, not env.family={family!r}"
            + (f" (workloads for {family}: {', '.join(fit)})" if fit else ""))


def check_families(cfg: DictConfig) -> None:
    """Raises :class:`ConfigError` when a train config's agent or workload is not for its env
    family, with the agents, envs, experiments and workloads that fit (from the config groups)."""
    errors = []
    fam = cfg.env.family
    agent = cfg.agent
    allowed = agent.get("env_families")
    if allowed is not None and fam not in allowed:
        allowed = list(allowed)
        ours = agents_for(fam)
        envs = env_options(allowed)
        exps = experiments_for(allowed)
        hints = ([f"an agent for env {fam}: agent={'|'.join(ours)}"] if ours else []) + (
            [f"an env for agent {agent.name}: env={'|'.join(envs)}"] if envs else []) + (
            [f"an experiment with such an env: experiment={'|'.join(exps)}"] if exps else [])
        errors.append(f"agent {agent.name!r} works with env {allowed}, not env.family={fam!r}"
                      + (f"; choose {', or '.join(hints)}" if hints else ""))
    wf = cfg.workload.get("env_families")
    if wf is not None and fam not in wf:
        errors.append(_workload_family_error("workload", cfg.workload.name, wf, fam))
    if errors:
        raise ConfigError("\n".join(errors))


def _one_line(e: BaseException) -> str:
    """The original error of ``e`` (through Hydra's InstantiationException), on one line."""
    from hydra.errors import InstantiationException

    while isinstance(e, InstantiationException) and e.__cause__ is not None:
        e = e.__cause__
    return " ".join(str(e).split())


def _build_errors() -> tuple[type[BaseException], ...]:
    import gymnasium as gym
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    return (ValueError, TypeError, KeyError, IndexError, OverflowError, gym.error.Error, HydraException,
            OmegaConfBaseException)


def _check_builds(cfg: DictConfig, builds: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """Builds the topology, then the env once per ``(keys, what, make_env kwargs)`` (``keys``:
    the config keys its arguments come from, ``what``: which env it is): an error of the
    env's or the topology's own checks (a bad env.kwargs or topology value) is a
    :class:`ConfigError` naming them, before anything is trained or evaluated (it came as a
    traceback when the envs were built). Envs are built in milliseconds."""
    from hydra.utils import instantiate

    from flowsched.agents.envs import check_env_id, make_env

    errors = _build_errors()
    try:
        check_env_id(str(cfg.env.id))
    except errors as e:
        raise ConfigError(f"env.id={cfg.env.id!r}: {_one_line(e)}") from None
    topo = cfg.get("topology")
    if topo is not None:
        try:
            instantiate(topo)
        except errors as e:
            try:
                plain = OmegaConf.to_container(topo, resolve=True)
            except Exception:  # noqa: BLE001 - an interpolation that cannot be resolved: the error says it
                plain = {}
            args = ", ".join(f"{k!s}={v!r}" for k, v in (plain.items() if isinstance(plain, dict) else ())
                             if not (str(k).startswith("_") and str(k).endswith("_")))
            raise ConfigError(f"topology: {topo.get('_target_')}({args}) cannot be built: {_one_line(e)}") from None
    for keys, what, kwargs in builds:
        try:
            make_env(cfg, **kwargs).close()
        except errors as e:
            raise ConfigError(f"{keys}: {cfg.env.id} cannot be built{what}: {_one_line(e)}") from None


def check_train_envs(cfg: DictConfig) -> None:
    """Raises :class:`ConfigError` when the topology or the envs of a train config (its
    training env, as the agent uses masks or not, and its evaluation env) cannot be built."""
    load = cfg.workload.get("load") if cfg.get("workload") is not None else None
    keys = "env.kwargs" + ("" if load is None else f" / workload.load={load!r}")
    builds: list[tuple[str, str, dict[str, Any]]] = [(keys, "", {"evaluation": True})]
    if cfg.agent.get("kind") != "baseline":
        builds.insert(0, (keys, " for training", {"masked": bool(cfg.agent.get("masked", True))}))
    _check_builds(cfg, builds)


def check_evaluate_envs(cfg: DictConfig) -> None:
    """Raises :class:`ConfigError` when a workload of ``workloads`` is not for the env family,
    or the topology or the env of a (workload, load) cell cannot be built."""
    family = cfg.env.family
    builds: list[tuple[str, str, dict[str, Any]]] = []
    errors = []
    for wname in cfg.workloads:
        wcfg = cfg.workload if wname == cfg.workload.name else OmegaConf.create(_option("workload", str(wname)))
        fams = wcfg.get("env_families")
        if fams is not None and family not in fams:
            errors.append(_workload_family_error("workloads", wname, fams, family))
        for load in cfg.loads:
            keys = "env.kwargs" + (" / loads" if load is not None else "" if wcfg.get("load") is None
                                   else f" / workload.load={wcfg.load!r}")
            builds.append((keys, f" for workload {wname}" + ("" if load is None else f" at load {load}"),
                           {"evaluation": True, "workload": wcfg, "load": None if load is None else float(load)}))
    if errors:
        raise ConfigError("\n".join(errors))
    _check_builds(cfg, builds)


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
    "check_evaluate_envs",
    "check_families",
    "check_group_names",
    "check_train_config",
    "check_train_envs",
    "episode_metrics",
    "group_options",
    "merge_resume_overrides",
    "saved_choices",
    "unknown_name",
]
