"""RLlib sampling throughput (env steps/s) against the number of env runners.

Builds PPO with flowsched's masked RLModule on TokenScheduling-v1 and times
``synchronous_parallel_sample`` (the sampling half of a training iteration) for 1, 2,
... env runners (each a Ray actor with its own CPU), after a warm-up round.

    python benchmarks/bench_rllib.py                       # 1, 2 and all CPUs
    python benchmarks/bench_rllib.py --runners 1 2 4 8 16 --envs-per-runner 8
"""
from __future__ import annotations

import argparse
import os
import platform
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runners", type=int, nargs="+", default=None)
    ap.add_argument("--envs-per-runner", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40_000, help="env steps per measurement")
    a = ap.parse_args()
    import ray
    from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

    from flowsched.agents.rllib import init_ray, ppo_config

    ncpu = os.cpu_count() or 1
    runners = a.runners or sorted({1, 2, ncpu})
    init_ray(num_cpus=max(ncpu, max(runners) + 1))
    print(f"# {platform.machine()}, {ncpu} CPUs, TokenScheduling-v1, {a.envs_per_runner} envs per runner")
    print("| env runners | env steps/s | speed-up |")
    print("|---|---|---|")
    base = None
    for n in runners:
        algo = ppo_config(num_env_runners=n, num_envs_per_env_runner=a.envs_per_runner,
                                train_batch_size=a.steps, minibatch_size=128, num_epochs=1).build_algo()
        kw = {"worker_set": algo.env_runner_group, "_uses_new_env_runners": True, "concat": False}
        synchronous_parallel_sample(max_env_steps=a.steps // 4, **kw)  # warm-up
        t0 = time.perf_counter()
        episodes = synchronous_parallel_sample(max_env_steps=a.steps, **kw)
        dt = time.perf_counter() - t0
        steps = sum(e.env_steps() for group in episodes for e in (group if isinstance(group, list) else [group]))
        rate = steps / dt
        base = base or rate
        print(f"| {n} | {rate:,.0f} | {rate / base:.2f}x |", flush=True)
        algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
