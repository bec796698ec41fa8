"""Thread scaling of the native vector envs with fixed actions (nothing drawn per step).

Builds the vector env twice in one process, with 1 and with 2 threads, steps both past
their first episodes' setup, then alternates blocks of calls between them (1 thread
first in even blocks, 2 threads first in odd ones) and prints the median time per call
of each, the env-steps/s and the median and quartiles of the per-block ratio (1-thread
time / 2-thread time of the two blocks measured side by side). On a machine shared with
other work, a ratio of neighbouring blocks is steadier than a ratio of two whole runs:
a burst of other work slows both blocks of a pair. Without the action drawing of
``bench_envs.py``, what it measures is the native step and Gymnasium's wrapper.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_env_threads.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_env_threads.py --env flowsched/SwitchScheduling-v1 --batches 256

``OPENBLAS_NUM_THREADS=1`` keeps numpy's OpenBLAS worker thread off the second core.
"""
from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import flowsched  # noqa: F401  (registers the envs)


def fixed_actions(venv: gym.vector.VectorEnv, seed: int = 0) -> np.ndarray:
    """Action 0 in every lane for a discrete space (admit the oldest request); one draw,
    uniform over the box, reused at every step for a bounded box (the switch env's scores)."""
    space = venv.action_space
    if isinstance(space, gym.spaces.Box):
        rng = np.random.default_rng(seed)
        return (rng.random(space.shape) * (space.high - space.low) + space.low).astype(space.dtype)
    return np.zeros(space.shape, space.dtype)


def measure(env_id: str, batch: int, blocks: int, calls: int) -> dict[str, float]:
    """Median microseconds per call with 1 and 2 threads, and the per-block ratios' quartiles."""
    venvs = {t: gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point", threads=t, copy=False)
             for t in (1, 2)}
    actions = fixed_actions(venvs[1])
    for v in venvs.values():
        v.reset(seed=0)
        for _ in range(max(50, 20_000 // batch)):  # past the first episodes' setup
            v.step(actions)
    us: dict[int, list[float]] = {1: [], 2: []}
    for b in range(blocks):
        for t in (1, 2) if b % 2 == 0 else (2, 1):
            t0 = time.perf_counter()
            for _ in range(calls):
                venvs[t].step(actions)
            us[t].append((time.perf_counter() - t0) / calls * 1e6)
    for v in venvs.values():
        v.close()
    ratios = [a / b for a, b in zip(us[1], us[2], strict=True)]
    q1, q2, q3 = np.percentile(ratios, [25, 50, 75])
    return {"us1": statistics.median(us[1]), "us2": statistics.median(us[2]), "q1": q1, "ratio": q2, "q3": q3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="flowsched/TokenScheduling-v1")
    ap.add_argument("--batches", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--blocks", type=int, default=40, help="blocks per thread count (alternated)")
    ap.add_argument("--env-steps", type=int, default=25_600, help="env-steps per block (calls = this / batch)")
    a = ap.parse_args()
    print(f"# {a.env}, fixed actions, {a.blocks} alternated blocks of {a.env_steps:,} env-steps per thread count")
    print("| lanes | 1 thread, us/call | 2 threads, us/call | 1 thread, env-steps/s | 2 threads, env-steps/s "
          "| ratio (median of blocks) | quartiles |")
    print("|---|---|---|---|---|---|---|")
    for batch in a.batches:
        r = measure(a.env, batch, a.blocks, max(1, a.env_steps // batch))
        print(f"| {batch:,} | {r['us1']:.1f} | {r['us2']:.1f} | {batch / r['us1'] * 1e6:,.0f} | "
              f"{batch / r['us2'] * 1e6:,.0f} | {r['ratio']:.2f} | {r['q1']:.2f}-{r['q3']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
