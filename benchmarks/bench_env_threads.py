"""Thread scaling of the token vector env with fixed actions (nothing drawn per step).

Steps ``flowsched/TokenScheduling-v1`` through ``gym.make_vec`` with action 0 in every
lane (admit the oldest request), alternately with 1 and 2 threads, for several batch sizes,
and prints the median env-steps/s, the CPU time per env-step (process time, all threads) and
the 2-thread/1-thread ratio. Without the action drawing of ``bench_envs.py``, what it measures
is the native step and Gymnasium's wrapper. Run it on two otherwise idle cores, e.g.

    OPENBLAS_NUM_THREADS=1 taskset -c 2,3 python benchmarks/bench_env_threads.py
"""
from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import flowsched  # noqa: F401  (registers the envs)


def run(batch: int, threads: int, steps: int) -> tuple[float, float]:
    """(env-steps/s, CPU ns per env-step) of ``steps`` calls of a ``batch``-lane vector env."""
    venv = gym.make_vec("flowsched/TokenScheduling-v1", num_envs=batch, vectorization_mode="vector_entry_point",
                        threads=threads, copy=False)
    venv.reset(seed=0)
    actions = np.zeros(batch, np.int64)
    for _ in range(50):  # past the first episodes' setup
        venv.step(actions)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        venv.step(actions)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    venv.close()
    return batch * steps / wall, cpu / (batch * steps) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--env-steps", type=int, default=800_000, help="env-steps per measurement")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    for batch in a.batches:
        steps = max(1, a.env_steps // batch)
        res: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        for _ in range(a.repeat):
            for threads in (1, 2):
                res[threads].append(run(batch, threads, steps))
        rate = {t: statistics.median(r for r, _ in res[t]) for t in res}
        cpu = {t: statistics.median(c for _, c in res[t]) for t in res}
        print(f"batch {batch}: 1 thread {rate[1]:,.0f} env-steps/s ({cpu[1]:.0f} CPU ns each), 2 threads "
              f"{rate[2]:,.0f} ({cpu[2]:.0f} CPU ns each), ratio {rate[2] / rate[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
