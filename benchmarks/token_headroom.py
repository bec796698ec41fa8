"""How much room does a token-scheduling rule leave? A clairvoyant one-step rollout.

At each admission decision of an episode, every waiting request of the window is tried
in turn: the episode is replayed from its seed up to the decision, that request is
admitted, and the base rule (``fair_slack`` by default) decides the rest of the episode.
The request whose rollout meets the most deadlines is admitted (the base rule's own
choice on ties). Because the replays run on the same seed, the rollout knows every
future arrival, an advantage no real policy has. Rollout does at least as well as its
base policy on every episode (policy improvement, the environment being deterministic
given the seed), and the best schedule that knows the future does at least as well as
the rollout: the gap between rollout and base rule is a lower bound on how far the rule
is from that schedule, and a yardstick for what a learned agent might still gain.

The episode is replayed for every candidate, so the cost grows with the square of the
episode length: about 5 s per 200-flow episode here (30 episodes in 2 to 3 minutes).

    python benchmarks/token_headroom.py --variant 1 --load 0.72 --episodes 30
    python benchmarks/token_headroom.py --variant 2 --base ssdf   # the thesis' 10 bursts/s
    python benchmarks/token_headroom.py --env-id flowsched/TokenScheduling-Artemis-v0  # packet model
"""
from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from hostinfo import host  # benchmarks/hostinfo.py, beside this script

import flowsched  # noqa: F401  (registers the envs)
from flowsched import baselines, workloads as wl

FIRST_EVAL_SEED = 1_000_000  # train.py's held-out evaluation seeds start here


def _act(rule: baselines.Policy, obs: dict[str, np.ndarray]) -> int:
    return int(rule.predict({k: v[None] for k, v in obs.items()})[0][0])


def _finish(env: gym.Env, rule: baselines.Policy, seed: int, actions: list[int]) -> float:
    """Deadlines met when ``actions`` are taken first and ``rule`` takes the rest."""
    obs, _ = env.reset(seed=seed)
    k = 0
    while True:
        a = actions[k] if k < len(actions) else _act(rule, obs)
        k += 1
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            return float(info["deadlines_met"])


def episode(env: gym.Env, replay: gym.Env, rule: baselines.Policy, seed: int) -> tuple[float, float]:
    """(base rule's hit ratio, rollout's hit ratio) on the episode of ``seed``."""
    obs, _ = env.reset(seed=seed)
    taken: list[int] = []
    base_met = _finish(replay, rule, seed, [])
    while True:
        cands = np.flatnonzero(obs["action_mask"] > 0)
        a = _act(rule, obs)
        if len(cands) > 1:
            met = {int(c): _finish(replay, rule, seed, taken + [int(c)]) for c in cands}
            best = max(met.values())
            if met[a] < best:
                a = min(c for c, m in met.items() if m == best)
        taken.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            n = info["flows_with_deadline"]
            return base_met / n, info["deadlines_met"] / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env-id", default="flowsched/TokenScheduling-v1",
                    choices=("flowsched/TokenScheduling-v1", "flowsched/TokenScheduling-Artemis-v0"),
                    help="the token env: the fluid model (-v1) or the thesis' setting on the packet model")
    ap.add_argument("--variant", type=int, default=1, choices=(1, 2), help="Artemis workload A variant")
    ap.add_argument("--load", type=float, default=None,
                    help="offered load of the destination link, as train.py's workload.load (default: --burst-rate-hz)")
    ap.add_argument("--burst-rate-hz", type=float, default=10.0, help="gather bursts per second (the thesis: 10)")
    ap.add_argument("--episodes", type=int, default=30)
    ap.add_argument("--base", default="fair_slack", help="base rule (a token baseline name)")
    args = ap.parse_args()
    kwargs = dict(k=10, window=5, burst_size=10, link_gbps=1.0)
    mean_bytes = wl.get_distribution(f"artemis_a{args.variant}").mean_bytes
    bits_per_burst = kwargs["burst_size"] * mean_bytes * 8
    rate = args.burst_rate_hz if args.load is None else args.load * kwargs["link_gbps"] * 1e9 / bits_per_burst
    load = rate * bits_per_burst / (kwargs["link_gbps"] * 1e9)
    make = lambda: gym.make(args.env_id, variant=args.variant, burst_rate_hz=rate,  # noqa: E731
                            masked_action="raise", **kwargs).unwrapped
    env, replay = make(), make()
    rule = baselines.make("token", args.base)
    t0 = time.perf_counter()
    res = np.array([episode(env, replay, rule, FIRST_EVAL_SEED + i) for i in range(args.episodes)])
    wall = time.perf_counter() - t0
    diff = res[:, 1] - res[:, 0]
    ci = 1.96 * diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
    print(f"# {host()}, {wall:.0f} s")
    print(f"{args.env_id}: Artemis workload A variant {args.variant}, load {load:.3f} ({rate:.2f} bursts/s), "
          f"seeds {FIRST_EVAL_SEED}..{FIRST_EVAL_SEED + args.episodes - 1}")
    print(f"{args.base:>12}: {res[:, 0].mean():.4f}")
    print(f"{'rollout':>12}: {res[:, 1].mean():.4f}  ({diff.mean() * 100:+.2f} ± {ci * 100:.2f} points, 95% CI across "
          "episodes)")


if __name__ == "__main__":
    main()
