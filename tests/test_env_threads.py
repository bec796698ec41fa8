"""The vector envs' own worker threads (fabric/core/src/env.rs, ``Pool``): threads give
the episodes of one thread, and a process forked from one holding a threaded vector env
(multiprocessing's fork start method) steps it and exits without its parent's workers."""
from __future__ import annotations

import multiprocessing as mp
import os
import sys

import numpy as np
import pytest

from flowsched.envs import SwitchSchedulingVecEnv, TokenSchedulingVecEnv


def _run(venv, steps: int) -> list[np.ndarray]:
    obs, _ = venv.reset(seed=5)
    out = []
    for _ in range(steps):
        if isinstance(venv, TokenSchedulingVecEnv):
            a = np.zeros(venv.num_envs, np.int64)
        else:
            a = np.full((venv.num_envs, venv.max_flows), 0.5, np.float32)
        obs, r, term, trunc, _ = venv.step(a)
        out.append(np.concatenate([np.ravel(v) for v in obs.values()] + [r, term]))
    return out


@pytest.mark.parametrize("make", [lambda t: TokenSchedulingVecEnv(9, threads=t),
                                  lambda t: SwitchSchedulingVecEnv(5, threads=t, n_flows=40)])
def test_threads_give_the_episodes_of_one_thread(make):
    one = _run(make(1), 150)
    for t in (2, 4):
        for a, b in zip(one, _run(make(t), 150), strict=True):
            np.testing.assert_array_equal(a, b)


def _child(venv, q) -> None:
    q.put(_run(venv, 50)[-1])
    vars(venv).clear()  # drops the native env and its pool of the parent's workers (must not join them)
    sys.exit(0)


@pytest.mark.skipif(sys.platform != "linux" or "fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_a_forked_child_steps_without_the_parents_workers():
    venv = TokenSchedulingVecEnv(8, threads=2)
    want = _run(venv, 50)[-1]
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(venv, q))
    p.start()
    got = q.get(timeout=60)
    p.join(timeout=60)
    assert p.exitcode == 0, f"child exit code {p.exitcode} (pid {os.getpid()})"
    np.testing.assert_array_equal(got, want)
