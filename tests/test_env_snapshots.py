"""Snapshot of the envs' seeded rollouts: a hash per env, single and vector.

Each case resets an env with a fixed seed and steps it with actions drawn from a seeded
generator (a valid position of the mask for the token env, uniform in the action
``Box`` otherwise), then hashes every observation, reward, terminated and truncated
flag and the numeric ``info`` entries, and the single env's per-flow outcome
(``FLOW_COLUMNS`` of its ``episode()`` or ``results()`` table). The
vector cases cover 1 and 2 threads, ``max_episode_steps`` truncation, the flat
observation and the SB3 adapter's same-step autoreset. The hashes were taken before the
batched-env redesign (issue 18, item 3) and are compared with
``tests/data/env_rollout_hashes.json``: a refactor must keep every one.

A change that is meant to move episodes regenerates the file, in a commit of its own
that says why:

    FLOWSCHED_UPDATE_SNAPSHOTS=1 pytest tests/test_env_snapshots.py
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import flowsched  # noqa: F401  (registers the envs)
from flowsched.envs.sb3 import SB3VecEnv
from flowsched.envs.token import TokenSchedulingVecEnv

SNAPSHOT = os.path.join(os.path.dirname(__file__), "data", "env_rollout_hashes.json")
TOKEN, SWITCH, THRESH = "flowsched/TokenScheduling-v1", "flowsched/SwitchScheduling-v1", "flowsched/QueueThresholds-v1"

# (name, id, kind, kwargs, steps, seed): kind is "single", "vec" or "sb3"
CASES = [
    ("token/single", TOKEN, "single", {}, 600, 0),
    ("token/single_flat_neg_fct", TOKEN, "single", {"obs_format": "flat", "reward": "neg_fct"}, 300, 5),
    ("token/vec4_t1", TOKEN, "vec", {"num_envs": 4, "threads": 1}, 300, 3),
    ("token/vec5_t2_limit", TOKEN, "vec", {"num_envs": 5, "threads": 2, "max_episode_steps": 70}, 300, 11),
    ("token/vec3_rllib", TOKEN, "vec", {"num_envs": 3, "obs_format": "rllib", "reward": "neg_slowdown"}, 200, 2),
    ("token/sb3_4", TOKEN, "sb3", {"num_envs": 4}, 300, 4),
    ("switch/single", SWITCH, "single", {"n_flows": 100}, 500, 0),
    (
        "switch/single_interval",
        SWITCH,
        "single",
        {"n_flows": 60, "decision_interval_s": 2e-4, "reward": "slowdown"},
        300,
        1,
    ),
    ("switch/vec3_t1", SWITCH, "vec", {"num_envs": 3, "threads": 1, "n_flows": 80}, 400, 3),
    (
        "switch/vec4_t2_limit",
        SWITCH,
        "vec",
        {"num_envs": 4, "threads": 2, "n_flows": 80, "max_episode_steps": 90},
        300,
        9,
    ),
    ("switch/vec2_flat", SWITCH, "vec", {"num_envs": 2, "obs_format": "flat", "n_flows": 50}, 200, 6),
    ("thresholds/single", THRESH, "single", {}, 4, 0),
    ("thresholds/vec2", THRESH, "vec", {"num_envs": 2}, 3, 1),
]
# the per-flow columns hashed: those every env's table has had since before the redesign
# (the tables gained the other columns of Results.flows since)
FLOW_COLUMNS = ("arrival_s", "size_bytes", "deadline_s", "fct_s", "ideal_fct_s", "terminated")
_UPDATE = os.environ.get("FLOWSCHED_UPDATE_SNAPSHOTS") == "1"
_computed: dict[str, str] = {}


def _update(h: Any, x: Any) -> None:
    """Feeds x (observation, reward, flags, info) into the hash, in a fixed order."""
    if isinstance(x, dict):
        for k in sorted(x):
            v = x[k]
            if isinstance(v, (dict, np.ndarray, np.generic, bool, int, float, list, tuple)):
                h.update(str(k).encode())
                _update(h, v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _update(h, v)
    else:
        a = np.asarray(x)
        if a.dtype == object:
            for v in a.reshape(-1):
                _update(h, v)
            return
        if a.dtype.kind == "f":
            a = a.astype(np.float64)
        elif a.dtype.kind in "iub":
            a = a.astype(np.int64)
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())


def _single_action(rng: np.random.Generator, space: spaces.Space, obs: Any) -> Any:
    if isinstance(space, spaces.Discrete):
        mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else None
        if mask is None:  # the flat token observation: the mask comes first
            mask = np.asarray(obs)[: space.n]
        valid = np.flatnonzero(np.asarray(mask) > 0)
        return int(rng.choice(valid)) if len(valid) else 0
    assert isinstance(space, spaces.Box)
    return rng.uniform(space.low, space.high).astype(space.dtype)


def _vec_actions(rng: np.random.Generator, space: spaces.Space, mask: np.ndarray | None, n: int) -> np.ndarray:
    if isinstance(space, spaces.MultiDiscrete):
        assert mask is not None
        valid = np.maximum((mask > 0).sum(axis=1), 1)
        return (rng.random(n) * valid).astype(np.int64)  # the valid positions lead the window
    assert isinstance(space, spaces.Box)
    return rng.uniform(space.low, space.high).astype(space.dtype)


def _rollout(env_id: str, kind: str, kwargs: dict[str, Any], steps: int, seed: int) -> str:
    h = hashlib.sha256()
    rng = np.random.default_rng(seed + 1000)
    if kind == "single":
        env = gym.make(env_id, **kwargs)
        obs, info = env.reset(seed=seed)
        _update(h, (obs, info))
        for _ in range(steps):
            obs, r, term, trunc, info = env.step(_single_action(rng, env.action_space, obs))
            _update(h, (obs, float(r), bool(term), bool(trunc), info))
            if term or trunc:
                obs, info = env.reset()
                _update(h, (obs, info))
        inner = env.unwrapped
        table = inner.episode() if hasattr(inner, "episode") else inner.results() if hasattr(inner, "results") else None
        if table is not None:
            _update(h, {k: table[k].to_numpy() for k in FLOW_COLUMNS})
        env.close()
        return h.hexdigest()[:16]
    if kind == "sb3":
        kw = dict(kwargs)
        venv = SB3VecEnv(TokenSchedulingVecEnv(kw.pop("num_envs"), **kw))
        venv.seed(seed)
        obs = venv.reset()
        _update(h, obs)
        for _ in range(steps):
            mask = np.stack(venv.env_method("action_masks")).astype(np.float32)
            venv.step_async(_vec_actions(rng, venv.venv.action_space, mask, venv.num_envs))
            obs, r, done, infos = venv.step_wait()
            _update(h, (obs, r, done, list(infos)))
        return h.hexdigest()[:16]
    kw = dict(kwargs)
    n = kw.pop("num_envs")
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kw)
    obs, info = venv.reset(seed=seed)
    _update(h, (obs, info))
    for _ in range(steps):
        mask = None
        if isinstance(venv.action_space, spaces.MultiDiscrete):
            mask = (
                obs["action_mask"]
                if isinstance(obs, dict) and "action_mask" in obs
                else np.asarray(obs)[:, : venv.single_action_space.n]
            )
        obs, r, term, trunc, info = venv.step(
            _vec_actions(rng, venv.action_space, np.asarray(mask) if mask is not None else None, n)
        )
        _update(h, (obs, r, term, trunc, info))
    venv.close()
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name,env_id,kind,kwargs,steps,seed", CASES, ids=[c[0] for c in CASES])
def test_rollouts_match_snapshot(name, env_id, kind, kwargs, steps, seed):
    got = _rollout(env_id, kind, kwargs, steps, seed)
    assert got == _rollout(env_id, kind, kwargs, steps, seed), "the rollout is not deterministic"
    if _UPDATE:
        _computed[name] = got
        if len(_computed) == len(CASES):
            with open(SNAPSHOT, "w") as f:
                f.write(json.dumps(dict(sorted(_computed.items())), indent=1) + "\n")
        return
    with open(SNAPSHOT) as f:
        want = json.load(f)
    assert got == want[name], f"{name}: rollout hash {got} != snapshot {want[name]} (episodes changed)"
