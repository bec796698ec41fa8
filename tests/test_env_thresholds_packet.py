"""The thresholds env on the packet model (issue 20): the agent's thresholds tag the
packets PIAS sends from each step on. Checkers; determinism and vector lane i == single
env seeded seed + i; a fixed-threshold episode == ``flowsched.simulate(model="packet")``
flow for flow and bit for bit (merged thresholds too); the PIAS table beats one queue on
small flows; the threshold baselines drive it; option errors."""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from nested import assert_lanes_are_single_envs, assert_same
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import flowsched
from flowsched import baselines
from flowsched.envs import QueueThresholdsEnv, QueueThresholdsVecEnv
from flowsched.envs.thresholds import thresholds_from_action
from flowsched.sim import FLOW_COLUMNS

ID = "flowsched/QueueThresholds-v1"
# 1 ms minimum RTO (the datacenter setting of the references; the TCP default of 1 s lets a
# few timeouts decide every mean, docs/envs/thresholds.md)
KW = {"model": "packet", "n_flows": 300, "hosts": 8, "interval_flows": 50, "min_rto_s": 1e-3}


def run(env, policy, seed):
    obs, _ = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        obs, r, done, _, info = env.step(policy(obs))
        rewards.append(r)
    return np.array(rewards), info


def test_checkers_on_the_packet_thresholds_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = {**KW, "n_flows": 100, "interval_flows": 20}
        gym_check_env(gym.make(ID, **small).unwrapped)
        sb3_check_env(gym.make(ID, **small), warn=True)
        gym_check_env(gym.make(ID, **small, transport="tcp", buffer_bytes=100_000,
                               queue_reserve_bytes=6_000, interval_s=5e-4).unwrapped)


def test_same_seed_same_episode_and_lanes_are_single_envs_seeded_seed_plus_i():
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (20, 7)).astype(np.float32)
    acts[3, 2:5] = acts[3, 1]  # equal positions: merged thresholds (padded on packets)
    kw = {**KW, "n_flows": 150, "interval_flows": 25}

    def single(seed):
        env = gym.make(ID, **kw)
        out = [env.reset(seed=seed)[0]]
        for a in acts[:8]:
            obs, r, done, _, info = env.step(a)
            out.append((obs, r, done, info["thresholds_bytes"]))
            if done:
                out.append(env.reset()[0])
        return out

    a, b = single(5), single(5)
    assert_same(a, b)
    assert not np.array_equal(a[2][0], single(6)[2][0]), "another seed, another episode"
    venv = gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point", **kw)
    assert isinstance(venv, QueueThresholdsVecEnv)
    # 150 flows in steps of 25: lanes end at step 6 and reset at step 7
    assert_lanes_are_single_envs(venv, lambda: QueueThresholdsEnv(**kw), [[a, -a] for a in acts[:9]], seed=5)
    assert venv.call("model") == ("packet", "packet")


@pytest.mark.parametrize("action", [
    "pias",  # the PIAS table through the float32 action: rounded back to its whole bytes
    # merged: 4 thresholds (the last 4 MB, below the largest flows), 3 padded above every flow
    np.array([-0.6, -0.2, -0.2, 0.1, 0.1, 0.1, 0.2], np.float32),
])
def test_fixed_thresholds_are_the_packet_models_pias_bit_for_bit(action):
    """An episode with one fixed action is ``simulate(..., "pias", model="packet")`` with
    that action's thresholds, in every column, bit for bit: the interval pauses, the
    thresholds re-set at every step and the padding of merged ones (K queues, the lowest
    empty) against the core run with fewer queues change nothing. It fails if a pause moved
    an event, or if the padded queues caught a flow."""
    env = QueueThresholdsEnv(**KW)
    if isinstance(action, str):
        rule = baselines.make("thresholds", "pias_static", workload="websearch", load=0.8)
        action = rule.predict(np.zeros(20, np.float32))[0]
    rewards, info = run(env, lambda obs: action, seed=3)
    th = info["thresholds_bytes"]
    want_th = [float(x) for x in np.unique(np.round(thresholds_from_action(action, env.lo, env.hi)))]
    assert th == want_th and len(th) == len(np.unique(action))
    assert len(th) == 7 or env._trace["size_bytes"].max() > th[-1], "the padded queues must matter"
    got = env.results()
    assert list(got.columns) == [*FLOW_COLUMNS, "reference_fct_s"]
    want = flowsched.simulate(env._trace, env.topology, "pias", model="packet", pias_thresholds_bytes=th,
                              min_rto_s=1e-3).flows
    pd.testing.assert_frame_equal(got[list(FLOW_COLUMNS)], want, check_exact=True)
    if len(th) == 7 and th == env.reference:  # the reference itself: every reward exactly -1
        assert (rewards == -1.0).all() and info["mean_fct_s"] == info["reference_mean_fct_s"]
        assert got["reference_fct_s"].equals(got["fct_s"])
    else:
        assert not got["reference_fct_s"].equals(got["fct_s"])


def test_the_pias_table_beats_one_queue_on_small_flows():
    """Small flows (< 100 KB) finish sooner under the PIAS table's thresholds than with
    every threshold at 1 GB (one queue in practice: plain DCTCP), on every seed (measured:
    0.07-0.09 ms against 0.16-0.19 ms mean; the M/G/1-optimal thresholds 0.03 ms)."""
    env = QueueThresholdsEnv(**KW)
    pias = baselines.make("thresholds", "pias_static", workload="websearch", load=0.8)
    for seed in range(2):
        small = {}
        for name, pol in (("top", lambda obs: np.ones(7, np.float32)), ("pias", lambda obs: pias.predict(obs)[0])):
            run(env, pol, seed)
            res = env.results()
            small[name] = res["fct_s"][res["size_bytes"] < 1e5].mean()
        assert small["pias"] < 0.7 * small["top"], (seed, small)


@pytest.mark.parametrize("rule", ["pias_static", "pias_optimal"])
def test_threshold_baselines_drive_the_packet_env(rule):
    env = QueueThresholdsEnv(**KW)
    policy = baselines.make("thresholds", rule, workload="websearch", load=0.8, n_queues=8, link_gbps=10.0)
    rewards, info = run(env, lambda obs: policy.predict(obs)[0], seed=1)
    assert len(rewards) == 6 and np.isfinite(rewards).all() and (rewards < 0).all()
    res = env.results()
    assert res["finish_s"].notna().all() and (res["bytes_sent"] == res["size_bytes"]).all()
    assert info["mean_fct_s"] == pytest.approx(res["fct_s"].mean(), rel=1e-12)


def test_option_errors_name_the_option():
    with pytest.raises(ValueError, match="transport, min_rto_s: options of the packet model; pass model='packet'"):
        QueueThresholdsEnv(transport="dctcp", min_rto_s=1.0)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['min_rto'\] of the thresholds env"):
        QueueThresholdsEnv(model="packet", min_rto=1.0)
    with pytest.raises(TypeError, match="queue_sample_us"):
        QueueThresholdsVecEnv(2, model="packet", queue_sample_us=10.0)
    for t in ("pfabric", "rcp"):
        with pytest.raises(ValueError, match=f"transport '{t}': .* K strict-priority queues"):
            QueueThresholdsEnv(model="packet", transport=t)
    with pytest.raises(ValueError, match="pias_sharing='fair' is a fluid-model option"):
        QueueThresholdsEnv(model="packet", pias_sharing="fair")
    with pytest.raises(ValueError, match="request_delay_us"):
        QueueThresholdsEnv(model="packet", request_delay_us=5.0)
    with pytest.raises(ValueError, match="unknown model"):
        QueueThresholdsEnv(model="packets")
    with pytest.raises(ValueError, match="mss_bytes must be in 536..=9000"):
        QueueThresholdsEnv(model="packet", mss_bytes=100)
    with pytest.raises(ValueError, match="exceeds buffer_bytes"):
        QueueThresholdsEnv(model="packet", buffer_bytes=100_000, queue_reserve_bytes=20_000)
    assert QueueThresholdsEnv().pias_sharing == "fifo"  # the fluid default is unchanged


def test_time_interval_and_render_on_packets():
    env = QueueThresholdsEnv(**{**KW, "interval_flows": 10_000, "interval_s": 1e-3}, render_mode="ansi")
    env.reset(seed=2)
    assert env._sim.now == 0.0  # the packet core's clock starts at 0, as the fluid core's
    t0 = env._trace["arrival_s"].min()  # the first control interval starts at the first arrival
    _, _, done, _, info = env.step(np.zeros(7, np.float32))
    assert not done and env._sim.now == pytest.approx(t0 + 1e-3, abs=1e-12)  # picosecond clock
    assert 0 < info["flows_ended"] < KW["n_flows"]
    assert env.render().startswith("t = 1.027 ms, ")
    frame = QueueThresholdsEnv(**KW, render_mode="rgb_array")
    frame.reset(seed=2)
    frame.step(np.zeros(7, np.float32))
    img = frame.render()
    assert img.ndim == 3 and img.dtype == np.uint8 and img.any()
