"""Building environments from a composed Hydra config (groups ``env``, ``workload``, ``topology``).

The env config names the registered Gymnasium id; the env class and its native vector
class are looked up in Gymnasium's registry, so a new env family needs only its config
file (``configs/env/<name>.yaml``), no code here.
"""
from __future__ import annotations

import math
from typing import Any, cast

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

import flowsched  # noqa: F401  (registers the envs)
from flowsched import workloads as wl


def env_kwargs(cfg: DictConfig, *, evaluation: bool = False, masked: bool = True,
               workload: DictConfig | None = None, load: float | None = None) -> dict[str, Any]:
    """Constructor kwargs of the env for ``cfg`` (a composed train/evaluate config).

    * ``cfg.env.kwargs``: the env's own arguments;
    * the workload (``cfg.workload`` unless ``workload`` is given): its ``name`` becomes
      ``workload=``; its ``load`` (or ``load``) becomes ``load=`` for envs that take one
      (``env.load_arg: load``) or is converted to ``burst_rate_hz`` for the token env
      (``env.load_arg: burst_rate_hz``: load = rate * burst_size * mean size * 8 / link rate);
      a null load keeps the env config's own;
    * the topology (``cfg.topology``, built with ``_target_``; null: the env's default);
    * ``env.unmasked_kwargs`` when the agent does not use action masks, and
      ``env.eval_kwargs`` for evaluation envs.
    """
    e = cfg.env
    w = cfg.workload if workload is None else workload
    kw: dict[str, Any] = OmegaConf.to_container(e.kwargs, resolve=True)  # type: ignore[assignment]
    if w is not None and w.get("name") is not None and e.get("workload_arg"):
        kw[e.workload_arg] = w.name
    load = w.get("load") if load is None and w is not None else load
    if load is not None:
        if isinstance(load, bool) or not isinstance(load, (int, float)) or not math.isfinite(load) or load <= 0:
            raise ValueError(f"workload load must be a number > 0 (or null for the env's default), got load={load!r}")
        if e.get("load_arg") == "burst_rate_hz":
            mean_bytes = wl.get_distribution(w.name).mean_bytes
            bits_per_burst = kw.get("burst_size", 10) * mean_bytes * 8
            kw["burst_rate_hz"] = float(load) * e.link_gbps * 1e9 / bits_per_burst
        elif e.get("load_arg"):
            kw[e.load_arg] = float(load)
        else:
            raise ValueError(f"env {e.id} takes no load; got load={load}")
    if cfg.get("topology") is not None:
        kw["topology"] = instantiate(cfg.topology)
    if not masked:
        kw.update(_container(e.get("unmasked_kwargs")))
    if evaluation:
        kw.update(_container(e.get("eval_kwargs")))
    return kw


def _container(c: Any) -> dict[str, Any]:
    return {} if c is None else OmegaConf.to_container(c, resolve=True)  # type: ignore[return-value]


def effective_load(cfg: DictConfig, workload: DictConfig | None = None, load: float | None = None) -> float | None:
    """The offered load of an env config: the given or workload load, else (token env)
    the load of ``env.kwargs.burst_rate_hz``; None when unknown."""
    w = cfg.workload if workload is None else workload
    if load is None and w is not None:
        load = w.get("load")
    if load is not None:
        return float(load)
    e = cfg.env
    if e.get("load_arg") == "burst_rate_hz" and w is not None:
        bits = e.kwargs.get("burst_size", 10) * wl.get_distribution(w.name).mean_bytes * 8
        return float(e.kwargs.burst_rate_hz) * bits / (float(e.link_gbps) * 1e9)
    return None


def check_env_id(env_id: str, what: str = "the config") -> str:
    """``env_id`` if it is registered; for a removed id (the ``-v0`` envs), a
    ``ValueError`` that names its successor and says why (what is ``what``, e.g. a run
    directory, for the message)."""
    from flowsched.envs import REMOVED_IDS

    if env_id in REMOVED_IDS:
        raise ValueError(
            f"{what} uses {env_id}, which was removed: {REMOVED_IDS[env_id]} changed its observation space (finite "
            "bounds, 1-D Boxes) and made every action valid, so policies trained on it do not fit the new env; "
            f"set env.id to {REMOVED_IDS[env_id]} and retrain (checkpoints trained on {env_id} cannot be loaded)")
    gym.spec(env_id)  # Gymnasium's own error for an unknown id
    return env_id


def check_model_spaces(model: Any, cfg: DictConfig, source: str) -> None:
    """Raises ``ValueError`` when an SB3 model's observation or action space differs
    from the env's of ``cfg`` (e.g. a checkpoint saved against an older env version:
    SB3 loads it without an env and only fails, obscurely, at the first predict)."""
    check_env_id(cfg.env.id, f"{source} (trained with env.id {cfg.env.id})")
    env = make_env(cfg)
    for name in ("observation_space", "action_space"):
        want, got = getattr(env, name), getattr(model, name, None)
        if got is not None and got != want:
            env.close()
            what = "bounds" if _describe(got) == _describe(want) else "shapes"
            raise ValueError(f"{source} was saved with the {name} {_describe(got)}, but {cfg.env.id} now has "
                             f"{_describe(want)} (the {what} differ): it was trained on an older version of the env "
                             "or another configuration; retrain it")
    env.close()


def _describe(space: Any) -> str:
    """A one-line summary of a space: its type and shapes (per key for a Dict)."""
    if isinstance(space, gym.spaces.Dict):
        return "Dict(" + ", ".join(f"{k}: {_describe(v)}" for k, v in space.spaces.items()) + ")"
    if isinstance(space, gym.spaces.Discrete):
        return f"Discrete({space.n})"
    return f"{type(space).__name__}{tuple(space.shape)}"


def make_env(cfg: DictConfig, **kwargs: Any) -> gym.Env:
    """One (unwrapped-by-TimeLimit) single env, for evaluation (per-flow results)."""
    spec = gym.spec(check_env_id(cfg.env.id))
    if spec.entry_point is None:
        raise ValueError(f"{cfg.env.id} has no entry point")
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    # the id's registered kwargs first, as gym.make applies them (TokenScheduling-Artemis-v0's
    # packet model and TCP settings live there), then the config's
    return cast(gym.Env, creator(**{**(spec.kwargs or {}), **env_kwargs(cfg, **kwargs)}))


def make_vec_env(cfg: DictConfig, num_envs: int, *, masked: bool = True, normalize_reward: bool | None = None,
                 gamma: float = 0.99) -> Any:
    """The env's native vector env as an SB3 ``VecEnv`` (``VecMonitor`` on top, and
    ``VecNormalize`` of the reward only when ``env.normalize_reward``)."""
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize

    from flowsched.envs.sb3 import SB3VecEnv

    spec = gym.spec(check_env_id(cfg.env.id))
    if spec.vector_entry_point is None:
        raise ValueError(f"{cfg.env.id} has no native vector env")
    ep = spec.vector_entry_point
    creator = load_env_creator(ep) if isinstance(ep, str) else ep
    venv = creator(num_envs=int(num_envs), **{**(spec.kwargs or {}), **env_kwargs(cfg, masked=masked)})
    env: VecEnv = VecMonitor(SB3VecEnv(venv))
    if normalize_reward if normalize_reward is not None else cfg.env.get("normalize_reward", False):
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=gamma)
    return env
