"""RLlib (new API stack) support: RLModules for the token and switch envs, a PPO
config builder, Ray start-up, a predictor that plugs a trained module into the
same ``predict()`` protocol as every other policy (:class:`RLlibPolicy`), and the
RLlib implementation of the training loop's trainer (:class:`RLlibTrainer`; the loop
itself is :func:`flowsched.agents.training.train`, which this module does not import).

Both modules read the env's ``Dict`` observation directly and are
permutation-equivariant: one shared network scores each request (token env) or flow
(switch env), so the same item gets the same score in any slot, and the critic reads
a pooled summary of the set.
"""
from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

try:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as e:  # pragma: no cover - ray is an optional dependency
    raise ImportError("flowsched.agents.rllib needs ray[rllib]: pip install 'flowsched[ray]'") from e

from torch import nn

from flowsched.agents.policies import (
    RequestScorer,
    slots_and_features,
    space_shape,
    symlog as _squash,  # features in MB and ms span orders of magnitude
)
from flowsched.baselines.types import Observation, PolicyState, Prediction


def _hidden(model_config: Any) -> list[int]:
    """The ``hidden`` widths of a module's ``model_config`` (default ``[64, 64]``). RLlib
    passes the dict given to ``RLModuleSpec``, or its ``DefaultModelConfig`` dataclass when
    none was given (which has no ``hidden``; ``.get`` on it raised AttributeError)."""
    if isinstance(model_config, dict) and model_config.get("hidden"):
        return [int(h) for h in model_config["hidden"]]
    return [64, 64]


class MaskedTokenModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic RLModule for ``flowsched/TokenScheduling-v1``: the same network as
    the SB3 agent ``scorer_ppo`` (:class:`flowsched.agents.policies.RequestScorer`: one
    shared network scores each waiting request, the critic reads the pooled requests and
    the active summary); masked slots get logit ``FLOAT_MIN`` (``model_config``:
    ``hidden`` widths, default ``[64, 64]``)."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or not {"requests", "active", "action_mask"} <= set(space.spaces):
            raise ValueError(f"MaskedTokenModule needs the token env's Dict observation, got {space}")
        window, n_req = slots_and_features(space["requests"].shape, space["action_mask"].shape)
        n_act = space_shape(space["active"])[0]
        if not isinstance(self.action_space, gym.spaces.Discrete) or self.action_space.n != window:
            raise ValueError(f"action space {self.action_space} does not match the window of {window} requests")
        hidden = _hidden(self.model_config)
        self._net = RequestScorer(int(window), int(n_req), int(n_act), hidden)
        self._value_head = nn.Linear(self._net.latent_dim_vf, 1)

    def _features(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        return RequestScorer.flatten(obs["requests"], obs["active"], obs["action_mask"]), obs["action_mask"]

    def _logits(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        x, mask = self._features(batch)
        logits = self._net.forward_actor(x) + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return logits, x

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch)[0]}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        logits, x = self._logits(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: x}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        x = self._features(batch)[0] if embeddings is None else embeddings
        return self._value_head(self._net.forward_critic(x)).squeeze(-1)


class SwitchScoreModule(TorchRLModule, ValueFunctionAPI):
    """Actor-critic RLModule for ``flowsched/SwitchScheduling-v1``: a shared per-flow
    encoder, context from the masked mean and max of the flows' embeddings, a per-flow
    head giving the mean of that flow's score (a diagonal Gaussian with one learned
    log-std shared by all slots), and a critic on the pooled set (``model_config``:
    ``hidden``, default ``[64, 64]``)."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or not {"flows", "flow_mask"} <= set(space.spaces):
            raise ValueError(f"SwitchScoreModule needs the switch env's Dict observation, got {space}")
        m, f = slots_and_features(space["flows"].shape, space["flow_mask"].shape)
        self._m, self._f = m, f
        if getattr(self.action_space, "shape", None) != (m,):
            raise ValueError(f"action space {self.action_space} does not match {m} flow slots")
        hidden = _hidden(self.model_config)
        h = hidden[-1]
        layers: list[nn.Module] = []
        inp = f
        for width in hidden:
            layers += [nn.Linear(inp, width), nn.Tanh()]
            inp = width
        self._encoder = nn.Sequential(*layers)
        self._head = nn.Sequential(nn.Linear(3 * h, h), nn.Tanh(), nn.Linear(h, 1))
        self._critic = nn.Sequential(nn.Linear(2 * h, h), nn.Tanh(), nn.Linear(h, 1))
        self._log_std = nn.Parameter(torch.full((1,), -0.5))

    def _embed(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        mask = obs["flow_mask"].unsqueeze(-1)
        flows = obs["flows"].reshape(*obs["flows"].shape[:-1 if obs["flows"].dim() == 2 else -2], self._m, self._f)
        e = self._encoder(_squash(flows)) * mask
        n = mask.sum(1).clamp(min=1.0)
        ctx = torch.cat([e.sum(1) / n, (e + (mask - 1.0) * 1e9).max(1).values.clamp(min=-1e3) * (mask.sum(1) > 0)], -1)
        return e, ctx

    def _dist_inputs(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        e, ctx = self._embed(batch)
        mean = self._head(torch.cat([e, ctx.unsqueeze(1).expand(-1, e.shape[1], -1)], -1)).squeeze(-1)
        return torch.cat([mean, self._log_std.expand_as(mean)], -1), ctx

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._dist_inputs(batch)[0]}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        d, ctx = self._dist_inputs(batch)
        return {Columns.ACTION_DIST_INPUTS: d, Columns.EMBEDDINGS: ctx}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            _, embeddings = self._embed(batch)
        return self._critic(embeddings).squeeze(-1)


#: the project's RLModule for each env id
MODULES = {"flowsched/TokenScheduling-v1": MaskedTokenModule, "flowsched/TokenScheduling-Artemis-v0": MaskedTokenModule,
           "flowsched/SwitchScheduling-v1": SwitchScoreModule}


def module_for(env_id: str) -> type:
    """The RLModule of ``env_id``, whatever its version suffix (``-v0``, ``-v1``, ...):
    a new version of an env keeps its observation layout's module."""
    base = env_id.rsplit("-v", 1)[0]
    for k, m in MODULES.items():
        if k.rsplit("-v", 1)[0] == base:
            return m
    raise ValueError(f"no RLModule for {env_id!r}; known: {', '.join(MODULES)} (any version)")


def ray_logs_to_run_log() -> list[str]:
    """Ray sets up its loggers (``ray``, ``ray.rllib``, ``ray.data``) with their own console
    handlers and ``propagate = False``, so their records (Ray's start and shutdown messages,
    RLlib's warnings) never reached the root logger's file handler: ``train.log`` and
    ``evaluate.log`` did not have them. This adds the root logger's file handlers to each
    such logger (their console output is unchanged) and returns the loggers' names.
    Called by :func:`init_ray` before Ray starts; a no-op without a file handler."""
    import logging

    files = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    names = []
    for name, lg in list(logging.Logger.manager.loggerDict.items()):
        if not (name == "ray" or name.startswith("ray.")) or not isinstance(lg, logging.Logger) or lg.propagate:
            continue
        names.append(name)
        for h in files:
            if h not in lg.handlers:
                lg.addHandler(h)
    return sorted(names)


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connects to the Ray cluster at ``address`` ("host:port"; Ray 2.60 clients use token
    authentication, ``RAY_AUTH_MODE=token`` with the cluster's token), or starts a fresh
    local Ray with ``num_cpus`` (default: the machine's) that never attaches to a running
    cluster by accident. Before a local start, leftovers of a local Ray whose driver was
    killed with SIGKILL are stopped (:mod:`flowsched.agents.ray_cleanup`). Ray's loggers also
    write to the run's log file (:func:`ray_logs_to_run_log`)."""
    import logging
    import os

    import ray

    from flowsched.agents.runlog import emit

    if ray.is_initialized():
        return
    ray_logs_to_run_log()  # Ray's own log lines into train.log / evaluate.log too
    if address:
        os.environ.setdefault("RAY_AUTH_MODE", "token")
        ray.init(address=address, log_to_driver=False)
    else:
        from flowsched.agents.ray_cleanup import cleanup_stale_ray

        # processes of a local Ray whose driver was killed with SIGKILL (their raylet is gone)
        for pid, cmd in cleanup_stale_ray():
            emit(logging.getLogger(__name__), f"stopped a leftover Ray process of a killed driver: {pid} {cmd[:60]}",
                 logging.WARNING)
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        ray.init(address="local", num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False)


def ppo_config(
    env_id: str = "flowsched/TokenScheduling-v1",
    env_config: dict[str, Any] | None = None,
    *,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 1,
    train_batch_size: int = 4000,
    minibatch_size: int = 128,
    num_epochs: int = 10,
    lr: float = 3e-4,
    gamma: float = 0.99,
    gae_lambda: float = 1.0,
    entropy_coeff: float = 0.0,
    use_kl_loss: bool = True,
    vf_loss_coeff: float = 1.0,
    hidden: tuple[int, ...] = (64, 64),
    seed: int = 0,
) -> Any:
    """A PPOConfig for ``env_id`` with the project's RLModule for it (:data:`MODULES`).

    The env is created inside every env runner from its Gymnasium id (the ``flowsched:``
    prefix imports the package, which registers it) with ``env_config`` as kwargs.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    module = module_for(env_id)
    return (
        PPOConfig()
        .environment(f"flowsched:{env_id}", env_config=dict(env_config or {}))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs,
                  lr=lr, gamma=gamma, lambda_=gae_lambda, entropy_coeff=entropy_coeff, use_kl_loss=use_kl_loss,
                  vf_loss_coeff=vf_loss_coeff)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=module, model_config={"hidden": list(hidden)}))
        .debugging(seed=seed)
    )


class RLlibPolicy:
    """A trained RLModule behind the ``predict()`` protocol of flowsched's baselines and
    SB3 models (greedy over the masked logits when ``deterministic``, sampled otherwise)."""

    def __init__(self, module: RLModule, seed: int | None = 0) -> None:
        self.module = module
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_checkpoint(cls, path: str, seed: int | None = 0) -> RLlibPolicy:
        """Loads the default module of an ``Algorithm.save_to_path`` checkpoint."""
        import os

        from ray.rllib.core.rl_module.rl_module import RLModule

        sub = os.path.join(path, "learner_group", "learner", "rl_module", "default_policy")
        return cls(RLModule.from_checkpoint(sub if os.path.isdir(sub) else path), seed=seed)

    def predict(self, observation: Observation, state: PolicyState = None, episode_start: np.ndarray | None = None,
                deterministic: bool = True, action_masks: np.ndarray | None = None) -> Prediction:
        if not isinstance(observation, dict):
            raise TypeError(f"RLlibPolicy reads the env's Dict observation, got {type(observation).__name__}")
        if "flows" in observation:
            return self._predict_scores(observation, deterministic), state
        single = np.asarray(observation["action_mask"]).ndim == 1
        obs = {k: torch.as_tensor(np.asarray(v, np.float32)[None] if single else np.asarray(v, np.float32))
               for k, v in observation.items()}
        if action_masks is not None:
            m = np.asarray(action_masks, np.float32)
            obs["action_mask"] = torch.as_tensor(m[None] if single else m)
        with torch.no_grad():
            logits = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS].numpy()
        if deterministic:
            a = logits.argmax(-1)
        else:
            p = np.exp(logits - logits.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            a = np.array([self.rng.choice(p.shape[-1], p=row) for row in p])
        a = a.astype(np.int64)
        return (a[0] if single else a), state

    def _predict_scores(self, observation: dict[str, np.ndarray], deterministic: bool) -> np.ndarray:
        single = np.asarray(observation["flow_mask"]).ndim == 1
        obs = {k: torch.as_tensor(np.asarray(v, np.float32)[None] if single else np.asarray(v, np.float32))
               for k, v in observation.items()}
        with torch.no_grad():
            d = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS].numpy()
        m = d.shape[-1] // 2
        mean, std = d[..., :m], np.exp(d[..., m:])
        a = mean if deterministic else mean + std * self.rng.standard_normal(mean.shape)
        a = a.astype(np.float32)
        return a[0] if single else a


class RLlibTrainer:
    """The RLlib implementation of the training loop's :class:`~flowsched.agents.training.Trainer`
    (``agent.kind: rllib``, ``trainer._target_: flowsched.agents.rllib.RLlibTrainer``):
    PPO with the project's RLModule on ``cfg.env`` (:func:`ppo_config` from ``agent.algo``).

    The loop runs between training iterations: periodic evaluation, checkpoints, and the
    stop checks (a signal, the time budget) come after each ``algo.train()``, so a run
    always trains at least one iteration. The checkpoint is one directory,
    ``run_dir/rllib_checkpoint`` (its previous version kept as ``rllib_checkpoint.prev``
    while the new one is written: :func:`flowsched.agents.checkpoints.replace_dir`), saved
    as often as the loop asks, on a signal and at the end; :meth:`load` restores it with
    its step count."""

    learns = True
    uses_masks = False  # the module applies the mask itself (from the observation)

    def __init__(self, cfg: Any, run_dir: Any) -> None:
        from pathlib import Path

        self.cfg, self.run_dir = cfg, Path(run_dir)
        self.ckpt = self.run_dir / "rllib_checkpoint"
        self.algo: Any = None
        self.logger: Any = None
        self.steps = 0

    @property
    def num_timesteps(self) -> int:
        return self.steps

    def _init_ray(self) -> None:
        ray_cfg = self.cfg.get("ray") or {}
        init_ray(ray_cfg.get("address"), ray_cfg.get("num_cpus"))

    def start(self, logger: Any) -> None:
        from flowsched.agents.envs import env_kwargs

        self._init_ray()
        a, cfg = self.cfg.agent, self.cfg
        self.algo = ppo_config(
            cfg.env.id, env_kwargs(cfg, masked=True), num_env_runners=int(a.num_env_runners),
            num_envs_per_env_runner=int(a.num_envs_per_env_runner), train_batch_size=int(a.algo.train_batch_size),
            minibatch_size=int(a.algo.minibatch_size), num_epochs=int(a.algo.num_epochs), lr=float(a.algo.lr),
            gamma=float(a.algo.gamma), hidden=tuple(a.algo.hidden), seed=int(cfg.seed),
            # optional in the agent config; absent ones keep ppo_config's defaults
            **{k: a.algo[k] for k in ("gae_lambda", "entropy_coeff", "use_kl_loss", "vf_loss_coeff") if k in a.algo},
        ).build_algo()
        self.logger, self.steps = logger, 0

    def load(self, logger: Any) -> Any:
        from ray.rllib.algorithms.algorithm import Algorithm

        from flowsched.agents.checkpoints import dir_candidates, load_newest_readable

        self._init_ray()
        # the newest readable of rllib_checkpoint/ and rllib_checkpoint.prev/ (a damaged one is named in a warning)
        if not dir_candidates(self.ckpt):
            raise FileNotFoundError(f"no RLlib checkpoint to resume in {self.ckpt}")
        self.algo, used = load_newest_readable(dir_candidates(self.ckpt),
                                               lambda p: Algorithm.from_checkpoint(str(p)), "RLlib checkpoint")
        self.logger = logger
        self.steps = int(self.algo.metrics.peek(("env_runners", "num_env_steps_sampled_lifetime"), default=0))
        return used

    def learn(self, total_timesteps: int, loop: Any) -> None:
        out_of_time = False
        while self.steps < total_timesteps and loop.signal is None and not out_of_time:
            before, t0 = self.steps, time.perf_counter()
            r = self.algo.train()
            runners = r.get("env_runners", {})
            self.steps = int(runners.get("num_env_steps_sampled_lifetime", self.steps))
            # env steps per second of the iteration (sampling and learning), as SB3's charts/SPS
            self.logger.record("charts/SPS", (self.steps - before) / max(time.perf_counter() - t0, 1e-9))
            for key, name in (("episode_return_mean", "charts/episode_return_mean"),
                              ("episode_len_mean", "charts/episode_len_mean")):
                if key in runners:
                    self.logger.record(name, float(runners[key]))
            learner = r.get("learners", {}).get("default_policy", {})
            for key in ("policy_loss", "vf_loss", "entropy"):
                if key in learner:
                    self.logger.record(f"losses/{key}", float(learner[key]))
            self.logger.dump(self.steps)
            loop.progress(self.steps)
            out_of_time = loop.check_time()

    def save(self, final: bool = False) -> Any:
        from flowsched.agents.checkpoints import replace_dir

        replace_dir(self.ckpt, lambda d: self.algo.save_to_path(str(d)))
        return self.ckpt

    def policy(self) -> RLlibPolicy:
        return RLlibPolicy(self.algo.get_module(), seed=int(self.cfg.seed))

    def close(self) -> None:
        if self.algo is not None:
            self.algo.stop()
