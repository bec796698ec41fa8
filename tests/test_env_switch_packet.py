"""The switch env on the packet model (issue 20): the agent's scores are the packets'
pFabric priority tags. Checkers; determinism and vector lane i == single env seeded
seed + i; scores in arrival order == the packet model's own ``fifo`` over pFabric, flow
for flow and bit for bit; srpt-like scores beat fifo-like ones; option errors."""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from nested import assert_same
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import flowsched
from flowsched import baselines, workloads
from flowsched.envs import SwitchSchedulingEnv, SwitchSchedulingVecEnv
from flowsched.sim import FLOW_COLUMNS

ID = "flowsched/SwitchScheduling-v1"
KW = {"model": "packet", "n_flows": 60, "load": 0.7, "max_flows": 32}


def test_checkers_on_the_packet_switch_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(gym.make(ID, **KW).unwrapped)
        sb3_check_env(gym.make(ID, **KW), warn=True)
        gym_check_env(gym.make(ID, **KW, reward="slowdown", decision_interval_s=1e-4, min_rto_s=1e-4).unwrapped)


def _episode(env: gym.Env, seed: int) -> list:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out, done = [obs], False
    while not done:
        obs, r, done, _, _ = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
        out.append((obs, r))
    return out


def test_same_seed_same_episode_and_lanes_are_single_envs_seeded_seed_plus_i():
    env = gym.make(ID, **KW).unwrapped
    a, b, c = _episode(env, 4), _episode(env, 4), _episode(env, 5)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert_same(x, y)
    assert not np.array_equal(a[0]["flows"], c[0]["flows"]), "another seed, another episode"
    n = 3
    venv = gym.make_vec(ID, num_envs=n, vectorization_mode="vector_entry_point", **KW)
    assert isinstance(venv, SwitchSchedulingVecEnv)
    singles = [gym.make(ID, **KW).unwrapped for _ in range(n)]
    obs, _ = venv.reset(seed=10)
    sobs = [e.reset(seed=10 + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for _ in range(60):  # 60 flows: at least 60 arrivals and 59 ends per episode
        for i in range(n):
            assert_same({key: v[i] for key, v in obs.items()}, sobs[i])
        acts = rng.uniform(-1, 1, (n, KW["max_flows"])).astype(np.float32)
        obs, rew, term, _, _ = venv.step(acts)
        for i, e in enumerate(singles):
            sobs[i], r, t, _, _ = e.step(acts[i])
            assert rew[i] == r and term[i] == t
            assert not t


def _trace(n: int, load: float, seed: int) -> pd.DataFrame:
    return workloads.poisson_all_to_all(workloads.get_distribution("websearch"), load, 16, 10.0, n, seed=seed)


@pytest.mark.parametrize("alpha, transport", [(0.0, "pfabric"), (1.0, "pfabric"), (0.0, "dctcp"), (1.0, "dctcp")])
def test_scores_in_arrival_order_are_the_packet_models_fifo_bit_for_bit(alpha, transport):
    """pFabric's queues only compare tags: scores that order flows by arrival at every
    decision (rank / n, the same for a flow at every decision) tag packets in the order of
    the fifo rule's tags (arrival times), so the runs are the same, bit for bit. It fails
    if a decision comes after a flow's first packets left (they would carry the default
    score 0), or if the tags or the pauses changed the run. With ``alpha`` the flows' data
    arrives over time (aSCC's spans), in the env as in ``simulate``."""
    trace = _trace(150, 0.8, 3)
    if alpha:
        trace = workloads.add_data_span(trace, alpha, 10.0)
        assert (trace["data_span_s"] > 0).all()
    arr = trace["arrival_s"].to_numpy()
    assert np.all(np.diff(arr) > 0)
    n, m = len(trace), 128
    env = SwitchSchedulingEnv(trace=trace, max_flows=m, model="packet", delay_us=1.0, hosts=16, link_gbps=10.0,
                              transport=transport)
    obs, _ = env.reset(seed=0)
    done, peak = False, 0
    while not done:
        raw = env._native.results(0)
        now = env._native.now(0)
        inside = np.flatnonzero((raw["arrival_s"] <= now + 1e-12) & np.isnan(raw["finish_s"]))
        k = int(obs["flow_mask"].sum())
        assert len(inside) == k, (len(inside), k, now)
        peak = max(peak, k)
        scores = np.ones(m, np.float32)
        scores[:k] = (-1 + 2 * inside / n).astype(np.float32)  # slots: oldest first
        obs, _, done, _, _ = env.step(scores)
    assert 10 < peak < m
    got = env.results()
    want = flowsched.simulate(trace, flowsched.BigSwitch(16, 10.0), "fifo", model="packet", transport=transport,
                              delay_us=1.0).flows
    assert list(got.columns) == list(want.columns) == list(FLOW_COLUMNS)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # the default score (0 for every flow) is not fifo: the check can fail
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(np.zeros(m, np.float32))
    assert not env.results()["fct_s"].equals(want["fct_s"])


def test_alpha_spreads_each_episodes_data_on_packets():
    env = SwitchSchedulingEnv(model="packet", alpha=1.0, n_flows=40, hosts=8)
    obs, _ = env.reset(seed=2)
    policy, done = baselines.make("switch", "srpt"), False
    while not done:
        obs, _, done, _, info = env.step(policy.predict(obs)[0])
    res = env.results()
    assert info["flows_finished"] == 40 and (res["bytes_sent"] == res["size_bytes"]).all()
    # alpha = 1: a flow's data arrives over its transmission time at the host rate, so no
    # flow ends before that (plus its packets' last hop)
    assert (res["fct_s"] >= res["size_bytes"] * 8 / 10e9).all()
    assert (res["slowdown"] >= 1 - 1e-9).all()


def test_sizes_hidden_until_the_data_has_arrived_on_packets():
    """alpha > 0 with size_known=False: a flow's size shows once all its data has reached its
    sender, as on the fluid model, so asrpt runs and srpt (which needs every size) refuses."""
    env = SwitchSchedulingEnv(model="packet", alpha=2.0, size_known=False, n_flows=40, hosts=8)
    obs, _ = env.reset(seed=1)
    policy, done, seen = baselines.make("switch", "asrpt"), False, np.zeros(2, int)
    while not done:
        m = obs["flow_mask"].astype(bool)
        f = obs["flows"].reshape(len(m), -1)[m]
        visible, complete = f[:, 2] > 0, f[:, 4] > 0
        assert (visible == complete).all()
        seen += [(~complete).sum(), complete.sum()]
        obs, _, done, _, _ = env.step(policy.predict(obs)[0])
    assert seen.min() > 0, seen  # both kinds were observed
    obs, _ = env.reset(seed=1)
    with pytest.raises(ValueError, match="switch baseline 'srpt' reads sizes"):
        for _ in range(50):
            obs, *_ = env.step(baselines.make("switch", "srpt").predict(obs)[0])


@pytest.mark.parametrize("rule", ["srpt", "las", "fifo"])
def test_baselines_drive_the_packet_env(rule):
    env = gym.make(ID, **KW).unwrapped
    obs, _ = env.reset(seed=1)
    policy, done, ret = baselines.make("switch", rule), False, 0.0
    while not done:
        a, _ = policy.predict(obs)
        obs, r, done, _, info = env.step(a)
        ret += r
    assert info["flows_finished"] == KW["n_flows"]
    res = env.results()
    assert res["finish_s"].notna().all() and (res["bytes_sent"] == res["size_bytes"]).all()
    # the return is minus the total flow time in ms (without path delays; none here)
    assert ret == pytest.approx(-res["fct_s"].sum() * 1e3, rel=1e-9)


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_hide_sizes_hides_every_size_and_changes_nothing_else(model):
    """hide_sizes: no flow's remaining bytes or visibility ever shows (the information of
    LAS and PIAS), on both models; driven by the same scores the run is the same; the
    baselines that read sizes refuse it, las and pias drive it."""
    kw = {**KW, "model": model}
    runs = {}
    for hide in (False, True):
        env = SwitchSchedulingEnv(**kw, hide_sizes=hide)
        obs, _ = env.reset(seed=3)
        policy, done, seen, shown = baselines.make("switch", "las"), False, 0, 0
        while not done:
            rows = obs["flows"].reshape(kw["max_flows"], -1)[obs["flow_mask"] > 0]
            seen += len(rows)
            shown += int((rows[:, 1] > 0).sum() + (rows[:, 2] > 0).sum())
            obs, _, done, _, info = env.step(policy.predict(obs)[0])
        runs[hide] = env.results()
        if hide:
            assert seen > 100 and shown == 0
        else:
            assert shown > seen  # every size visible (remaining > 0 and visible = 1)
    assert_same(runs[False].to_dict("list"), runs[True].to_dict("list"))
    env = SwitchSchedulingEnv(**kw, hide_sizes=True)
    obs, _ = env.reset(seed=0)
    env.step(np.zeros(env.action_space.shape, np.float32))
    obs, *_ = env.step(np.zeros(env.action_space.shape, np.float32))
    for rule in ("srpt", "fair", "asrpt"):
        with pytest.raises(ValueError, match="hide_sizes=True"):
            baselines.make("switch", rule).predict(obs)
    baselines.make("switch", "pias").predict(obs)
    with pytest.raises(ValueError, match="hide_sizes must be True or False"):
        SwitchSchedulingEnv(**kw, hide_sizes="yes")


def test_srpt_scores_beat_fifo_scores_on_a_loaded_trace():
    trace = _trace(300, 0.8, 7)
    mean = {}
    for rule in ("srpt", "fifo"):
        env = SwitchSchedulingEnv(trace=trace, max_flows=128, model="packet", hosts=16, link_gbps=10.0)
        obs, _ = env.reset(seed=0)
        policy, done = baselines.make("switch", rule), False
        while not done:
            obs, _, done, _, info = env.step(policy.predict(obs)[0])
        mean[rule] = info["mean_fct_s"]
    assert mean["srpt"] < 0.8 * mean["fifo"], mean


def test_option_errors_name_the_option():
    with pytest.raises(ValueError, match="transport, min_rto_s: options of the packet model; pass model='packet'"):
        SwitchSchedulingEnv(transport="pfabric", min_rto_s=1.0)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['min_rto'\] of the switch env"):
        SwitchSchedulingEnv(model="packet", min_rto=1.0)
    with pytest.raises(TypeError, match="queue_sample_us"):
        SwitchSchedulingVecEnv(2, model="packet", queue_sample_us=10.0)
    with pytest.raises(ValueError, match="transport 'tcp': the switch env's scores are priority tags"):
        SwitchSchedulingEnv(model="packet", transport="tcp")
    with pytest.raises(ValueError, match="mss_bytes must be in 536..=9000"):
        SwitchSchedulingEnv(model="packet", mss_bytes=100)
    with pytest.raises(ValueError, match="request_delay_us"):
        SwitchSchedulingEnv(model="packet", request_delay_us=5.0)
