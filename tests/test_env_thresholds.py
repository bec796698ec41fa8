"""QueueThresholds-v1: checkers, determinism, vector == single, the PIAS reference
reproduced exactly by fixed PIAS thresholds, threshold changes take effect, bad input."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from nested import assert_lanes_are_single_envs, assert_same
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import flowsched
from flowsched import baselines
from flowsched.envs import QueueThresholdsEnv
from flowsched.envs.thresholds import action_from_thresholds, thresholds_from_action

ID = "flowsched/QueueThresholds-v1"
SMALL = {"n_flows": 600, "hosts": 8, "interval_flows": 100}


def run(env, policy, seed):
    obs, _ = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        a, _ = policy.predict(obs)
        obs, r, done, _, info = env.step(a)
        rewards.append(r)
    return np.array(rewards), info


def test_checkers():
    gym_check_env(gym.make(ID, **SMALL).unwrapped)
    sb3_check_env(gym.make(ID, **SMALL).unwrapped, warn=True)


def test_action_mapping_round_trip_sorts_and_merges():
    th = [2e4, 1.5e5, 1e6]
    a = action_from_thresholds(th, 1e3, 1e9)
    np.testing.assert_allclose(thresholds_from_action(a, 1e3, 1e9), th, rtol=1e-6)
    # positions are sorted, and equal positions merge (an empty queue)
    assert thresholds_from_action(np.array([0.5, -1.0, 0.5], np.float32), 1e3, 1e9) == pytest.approx([1e3, 10 ** 7.5])
    with pytest.raises(ValueError, match=r"within \[-1, 1\]"):
        thresholds_from_action(np.array([1.5, 0.0]), 1e3, 1e9)
    with pytest.raises(ValueError, match="outside"):
        action_from_thresholds([10.0], 1e3, 1e9)


def test_pias_thresholds_reproduce_the_reference_run():
    """Fixed PIAS-table thresholds through the env (full recomputation, interval pauses)
    give the reference run's FCTs: every reward is -1 up to the float32 rounding of the
    action (thresholds within 1e-7 relative, so crossings move by as little)."""
    env = QueueThresholdsEnv(**SMALL)
    rewards, info = run(env, baselines.make("thresholds", "pias_static"), seed=0)
    assert len(rewards) == 6
    np.testing.assert_allclose(rewards, -1.0, rtol=1e-6)
    assert info["mean_fct_s"] == pytest.approx(info["reference_mean_fct_s"], rel=1e-6)


def test_thresholds_take_effect_and_the_model_optimum_beats_pias_on_web_search():
    """The M/G/1-optimal 8-queue thresholds (a 16% lower mean FCT than the PIAS table on
    this trace) must show up in the rewards; thresholds that put everything in one
    queue (FIFO) must do worse than PIAS on this heavy-tailed workload."""
    env = QueueThresholdsEnv(n_flows=3000, hosts=16, interval_flows=500)
    opt, info = run(env, baselines.make("thresholds", "pias_optimal", workload="websearch", load=0.8), seed=0)
    assert info["mean_fct_s"] < 0.95 * info["reference_mean_fct_s"]
    assert opt.mean() > -0.97

    class Fifo:
        def predict(self, obs):
            return np.ones(7, np.float32), None  # every threshold at 1 GB: one queue in practice

    fifo, info = run(env, Fifo(), seed=0)
    assert info["mean_fct_s"] > 1.05 * info["reference_mean_fct_s"]


def test_same_seed_same_episode_and_vector_equals_single():
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (30, 7)).astype(np.float32)

    def single(seed):
        env = gym.make(ID, **SMALL)
        out = [env.reset(seed=seed)[0]]
        for a in acts[:12]:
            obs, r, done, _, _ = env.step(a)
            out.append((obs, r, done))
            if done:
                out.append(env.reset()[0])
        return out

    assert_same(single(5), single(5))
    venv = gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point", **SMALL)
    assert_lanes_are_single_envs(venv, lambda: QueueThresholdsEnv(**SMALL), [[a, -a] for a in acts[:14]], seed=5)


def test_time_based_interval_and_load_range():
    env = QueueThresholdsEnv(n_flows=400, hosts=8, interval_flows=10_000, interval_s=2e-3, load=(0.5, 0.9))
    obs, _ = env.reset(seed=1)
    first = float(env.unwrapped._trace["arrival_s"].min())  # the first interval starts at the first arrival
    obs, r, done, _, info = env.step(np.zeros(7, np.float32))
    assert env.unwrapped._sim.now == pytest.approx(first + 2e-3) or done
    assert 0 < info["flows_ended"] < 400


def test_bad_input():
    with pytest.raises(ValueError, match="reference"):
        QueueThresholdsEnv(n_queues=4)
    with pytest.raises(ValueError, match="load"):
        QueueThresholdsEnv(load=1.0)
    with pytest.raises(ValueError, match=r"a range \(low, high\)"):  # was read as (0.3, 0.5), 0.7 ignored
        QueueThresholdsEnv(load=(0.3, 0.5, 0.7))
    with pytest.raises(ValueError, match="interval_flows"):
        QueueThresholdsEnv(interval_flows=0)
    env = QueueThresholdsEnv(**SMALL)
    with pytest.raises(ValueError, match="call reset"):
        env.step(np.zeros(7, np.float32))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(6, np.float32))
    with pytest.raises(ValueError, match=r"within \[-1, 1\]"):
        env.step(np.full(7, np.nan, np.float32))
    with pytest.raises(ValueError, match="8 queues"):
        baselines.make("thresholds", "pias_static", n_queues=4)
    sim = flowsched.sim.native_simulator(env.unwrapped._trace, flowsched.BigSwitch(8, 10), "pias")
    with pytest.raises(ValueError, match="strictly increasing"):
        sim.set_pias_thresholds([1e4, 1e3])


def test_the_first_interval_starts_at_the_first_arrival():
    # on the fluid model the first interval started at the simulator's clock origin (the
    # whole second at or below the first arrival): a trace starting at 0.5 s spent its
    # first 0.5 s of interval_s before any flow, and the load feature read 40 times low
    import pandas as pd

    from flowsched.envs import QueueThresholdsEnv
    base = pd.DataFrame({"arrival_s": [0.0, 0.001, 0.002], "src": [1, 2, 3], "dst": [0, 0, 0],
                         "size_bytes": [2e5, 2e5, 2e5]})
    obs = []
    for shift in (0.0, 0.5):
        env = QueueThresholdsEnv(trace=base.assign(arrival_s=base["arrival_s"] + shift),
                                 topology=flowsched.BigSwitch(4, 1.0), interval_s=0.0128)
        env.reset(seed=0)
        o, *_ = env.step(np.zeros(env.action_space.shape, np.float32))
        obs.append(o)
    np.testing.assert_allclose(obs[0], obs[1], rtol=1e-9)
