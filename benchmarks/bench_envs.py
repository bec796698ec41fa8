"""Environment throughput: steps per second with random legal actions.

Single env through ``gym.make`` (wrappers included) and the native vector env
(``gym.make_vec(..., vectorization_mode="vector_entry_point")``) with a batch of 256,
with 1 and 2 threads. Random legal actions: drawn from the action mask for the token
env, uniformly over the (bounded) action space for the others, by numpy in one call
per batch (Gymnasium's ``Box.sample()`` of the switch env's 256 x 128 scores takes about
0.9 ms, more than the 2-thread step); the cost of drawing them is included, as an agent's
would be. QueueThresholds-v1 steps simulate a whole control
interval (500 flows by default), so its rates are in steps per second of a much
coarser step, with a smaller batch. The packet model's env (``TokenScheduling-Artemis-v0``)
runs a fiftieth of the steps (it steps a few hundred times more slowly) and has no target.

    python benchmarks/bench_envs.py
    python benchmarks/bench_envs.py --steps 200000 --batch 256
    python benchmarks/bench_envs.py --repeat 5    # 1 and 2 threads alternately, 5 times each
    python benchmarks/bench_envs.py --repeat 5 --env TokenScheduling-v1    # one env only

On a machine shared with other work, one run of each is noise: ``--repeat N`` measures
the vector env with 1 and 2 threads alternately N times, prints every pair's ratio
(2 threads / 1 thread) and the CPU time per env-step of each run (process time, all
threads: a 2-thread run that burns much more CPU per step than a 1-thread run pays for
synchronization or contention, not for lane work), and reports the medians and the
issue's targets (2 threads at least 1.7x one thread for both vector envs, and 3.5M
env-steps/s for the token env on 2 threads).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import gymnasium as gym
import numpy as np
from hostinfo import host, steal_ticks  # benchmarks/hostinfo.py, beside this script

import flowsched  # noqa: F401  (registers the envs)
from flowsched.envs import ENV_IDS

#: The packet model's envs run ``--steps`` divided by this: they step much more slowly (the
#: Artemis id: about 8,000 steps/s single and 6,000 env-steps/s as a 256-lane vector env on
#: one thread, against about 95,000 and 1.7M for the fluid token env).
PACKET_STEPS_DIVISOR = 50


def single(env_id: str, steps: int) -> float:
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    masked = isinstance(obs, dict) and "action_mask" in obs
    t0 = time.perf_counter()
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(obs["action_mask"]))) if masked else env.action_space.sample()
        obs, _, done, trunc, _ = env.step(a)
        if done or trunc:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - t0)


def vector(env_id: str, steps: int, batch: int, threads: int) -> tuple[float, float, float]:
    """(env-steps/s, CPU ns per env-step, share of the machine's CPU time the hypervisor
    stole during the run (NaN where the system does not say)) of the vector env with
    random legal actions."""
    kw = {} if "Thresholds" in env_id else {"threads": threads, "copy": False}
    venv = gym.make_vec(env_id, num_envs=batch, vectorization_mode="vector_entry_point", **kw)
    rng = np.random.default_rng(0)
    venv.action_space.seed(0)
    obs, _ = venv.reset(seed=0)
    masked = isinstance(obs, dict) and "action_mask" in obs
    if masked:
        ones = np.ones(obs["action_mask"].shape[1], obs["action_mask"].dtype)
    space = venv.action_space
    if isinstance(space, gym.spaces.Box) and np.isfinite(space.low).all() and np.isfinite(space.high).all():
        # uniform over the box, as Box.sample() draws a bounded box, but drawn by numpy in one
        # call: Box.sample() of the switch env's 256 x 128 scores takes about 0.9 ms, more than
        # half of a 1-thread step, and the benchmark would measure Gymnasium's sampler
        lo, span = space.low, space.high - space.low

        def draw() -> np.ndarray:
            return (rng.random(space.shape, dtype=np.float32) * span + lo).astype(space.dtype, copy=False)
    else:
        draw = space.sample
    n = 0
    s0 = steal_ticks()
    t0, c0 = time.perf_counter(), time.process_time()
    while n < steps:
        if masked:
            # uniform among the valid (leading) positions: floor(u * count) with u uniform in
            # [0, 1) as float32 (u * count stays below count: float32 rounds (1 - 2^-24) * c
            # below c for every integer c >= 1); the count as a matrix-vector product, which
            # takes a third of the time of `mask.sum(axis=1)` over rows of a few entries
            valid = (obs["action_mask"] @ ones).astype(np.float32, copy=False)
            np.maximum(valid, 1, out=valid)
            valid *= rng.random(batch, dtype=np.float32)
            a = valid.astype(np.int64)
        else:
            a = draw()
        obs, *_ = venv.step(a)
        n += batch
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    s1 = steal_ticks()
    venv.close()
    steal = float("nan")
    if s0 is not None and s1 is not None:
        steal = (s1 - s0) / os.sysconf("SC_CLK_TCK") / (wall * (os.cpu_count() or 1))
    return n / wall, cpu / n * 1e9, steal


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200_000, help="steps per measurement (single env)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=1, help="vector runs with 1 and 2 threads, alternately (medians "
                                                          "reported)")
    ap.add_argument("--env", action="append", default=None, metavar="SUBSTRING",
                    help="only the env ids containing SUBSTRING (repeatable; default: every env)")
    a = ap.parse_args()
    for name in ("steps", "batch", "repeat"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(a, name)}")
    env_ids = [e for e in ENV_IDS if a.env is None or any(k in e for k in a.env)]
    if not env_ids:
        ap.error(f"--env {a.env}: no env id matches; ids: {', '.join(ENV_IDS)}")
    print(f"# {host()}, python {platform.python_version()}, random legal actions")
    print(f"| env | single env (gym.make), steps/s | vector x{a.batch}, 1 thread, env-steps/s | vector x{a.batch}, 2 "
          "threads, env-steps/s |")
    print("|---|---|---|---|")
    verdicts: list[str] = []
    for env_id in env_ids:
        if "Thresholds" in env_id:  # coarse steps: fewer of them, a batch of 8, no threads option
            s = single(env_id, 200)
            v, *_ = vector(env_id, 400, 8, 1)
            print(f"| {env_id} | {s:,.0f} | {v:,.0f} (batch of 8, lanes in turn) | n/a |", flush=True)
            continue
        # the packet model's envs (the Artemis id) step much more slowly: fewer steps
        packet = gym.spec(env_id).kwargs.get("model") == "packet"
        steps = max(a.steps // PACKET_STEPS_DIVISOR, 1) if packet else a.steps
        s = single(env_id, steps)
        ones, twos = [], []
        for _ in range(a.repeat):
            ones.append(vector(env_id, 20 * steps, a.batch, 1))
            twos.append(vector(env_id, 20 * steps, a.batch, 2))
            if a.repeat > 1:
                (r1, c1, s1), (r2, c2, s2) = ones[-1], twos[-1]
                print(f"#   {env_id}: 1 thread {r1:,.0f} ({c1:,.0f} CPU ns/step), 2 threads {r2:,.0f} ({c2:,.0f} CPU "
                      f"ns/step), ratio {r2 / r1:.2f}; steal {s1:.1%} and {s2:.1%}", flush=True)
        v1, v2 = statistics.median(r for r, *_ in ones), statistics.median(r for r, *_ in twos)
        ratio = statistics.median(t[0] / o[0] for o, t in zip(ones, twos, strict=True))
        note = f" ({ratio:.2f}x, median of {a.repeat})" if a.repeat > 1 else ""
        print(f"| {env_id}{' (packet model)' if packet else ''} | {s:,.0f} | {v1:,.0f} | {v2:,.0f}{note} |", flush=True)
        if packet:  # the targets are the fluid envs'
            continue
        c1, c2 = statistics.median(c for _, c, _ in ones), statistics.median(c for _, c, _ in twos)
        verdicts.append(f"# {env_id}: 2 threads / 1 thread = {ratio:.2f}x (target 1.7x: "
                        f"{'met' if ratio >= 1.7 else 'NOT met'}); CPU ns per env-step, medians: 1 thread "
                        f"{c1:,.0f}, 2 threads {c2:,.0f}")
        if "Token" in env_id:
            verdicts.append(f"# {env_id}: 2 threads {v2:,.0f} env-steps/s (target 3,500,000: "
                            f"{'met' if v2 >= 3.5e6 else 'NOT met'})")
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
