"""Test helpers shared by the env tests: equality of nested observations and steps, and a
vector env's lanes against single envs."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def assert_same(a: Any, b: Any) -> None:
    """``a`` and ``b`` equal bit for bit, through dicts (same keys), tuples and lists (same length)
    down to arrays and numbers."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


def assert_lanes_are_single_envs(venv: Any, make_env: Callable[[], Any], steps: Sequence[Sequence[Any]],
                                 seed: int) -> None:
    """Lane i of ``venv`` is a single env from ``make_env()`` seeded ``seed + i``: the same
    observations, rewards and terminations at every step of ``steps`` (each the lanes'
    actions), a lane that terminated resetting at the next step (Gymnasium's next-step
    autoreset)."""
    n = len(steps[0])
    obs, _ = venv.reset(seed=seed)
    lanes = [make_env() for _ in range(n)]
    sobs = [e.reset(seed=seed + i)[0] for i, e in enumerate(lanes)]
    need = np.zeros(n, bool)
    for actions in steps:
        for i in range(n):
            np.testing.assert_array_equal(obs[i], sobs[i])
        obs, r, t, _, _ = venv.step(np.stack(actions))
        for i, e in enumerate(lanes):
            if need[i]:
                sobs[i], _ = e.reset()
                continue
            sobs[i], ri, ti, _, _ = e.step(actions[i])
            assert r[i] == ri and t[i] == ti
        need = t.copy()
