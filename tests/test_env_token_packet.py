"""The token env on the packet model and ``flowsched/TokenScheduling-Artemis-v0`` (issue 20):
rule baselines driving the env == the packet model's own admission rule, flow for flow
and bit for bit; determinism; vector lane i == single env seeded seed + i; masked
actions; option errors. (Gymnasium's and SB3's checkers, random rollouts in every
vectorization mode: tests/test_env_compliance.py, over every registered id.)"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from nested import assert_same
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import flowsched
from flowsched import baselines, workloads
from flowsched.envs import ARTEMIS_KWARGS, ARTEMIS_PACKET, TokenSchedulingEnv, TokenSchedulingVecEnv
from flowsched.sim import FLOW_COLUMNS

ARTEMIS = "flowsched/TokenScheduling-Artemis-v0"


def drive(env: gym.Env, policy, seed: int) -> tuple[float, dict]:
    obs, _ = env.reset(seed=seed)
    done, ret, info = False, 0.0, {}
    while not done:
        a, _ = policy.predict(obs)
        obs, r, done, _, info = env.step(a)
        ret += r
    return ret, info


@pytest.mark.parametrize("rule", ["fifo", "edf", "ssdf", "lsdf", "srpt"])
@pytest.mark.parametrize("variant,k,terminate", [(1, 10, False), (2, 3, True)])
def test_a_rule_driving_the_packet_env_is_the_packet_models_admission_rule(rule, variant, k, terminate):
    trace = workloads.gather_bursts(f"artemis_a{variant}", burst_size=10, burst_rate_hz=20.0, n_bursts=15,
                                    seed=variant)
    env = gym.make(ARTEMIS, variant=variant, k=k, terminate_missed=terminate, trace=trace).unwrapped
    ret, info = drive(env, baselines.make("token", rule), seed=0)
    got = env.results()
    opts = {key: v for key, v in ARTEMIS_PACKET.items() if key != "transport"}
    want = flowsched.simulate(trace, flowsched.BigSwitch(11, 1.0), "ps", model="packet", transport="tcp",
                              admission=rule, k=k, window=5, delay_us=250.0, terminate_missed=terminate, **opts).flows
    # the same columns, the same flows, the same finish times bit for bit
    assert list(got.columns) == list(want.columns) == list(FLOW_COLUMNS)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    met = int((want["deadline_met"] & ~want["terminated"]).sum())
    assert info["deadlines_met"] == met and ret == met
    assert terminate or info["flows_finished"] == len(trace)


def test_the_artemis_id_is_the_benchmarks_setting():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce"))
    try:
        import artemis
    finally:
        sys.path.pop(0)
    assert ARTEMIS_PACKET == artemis.NS3_ERA
    assert (ARTEMIS_KWARGS["k"], ARTEMIS_KWARGS["window"], ARTEMIS_KWARGS["delay_us"]) == (
        artemis.K, artemis.WINDOW, artemis.DELAY_US)
    env = gym.make(ARTEMIS).unwrapped
    assert env._cfg.model == "packet" and env._topology.n_hosts == artemis.HOSTS
    assert gym.make("flowsched/TokenScheduling-v1").unwrapped._cfg.model == "fluid"
    # variant 2: 6 of every 10 flows are the 350 KB class
    two = gym.make(ARTEMIS, variant=2, n_bursts=3).unwrapped
    two.reset(seed=0)
    assert (two.results()["size_bytes"] > 3e5).sum() == 18


def test_checkers_on_the_packet_env_with_other_options():
    kw = {"model": "packet", "n_bursts": 4, "burst_rate_hz": 40.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(gym.make("flowsched/TokenScheduling-v1", transport="dctcp", ack_every_segments=2, **kw).unwrapped)
        sb3_check_env(gym.make("flowsched/TokenScheduling-v1", **kw), warn=True)


def _episode(env: gym.Env, seed: int) -> list:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out, done = [obs], False
    while not done:
        obs, r, done, _, _ = env.step(int(rng.integers(5)))
        out.append((obs, r))
    return out


def test_same_seed_same_episode_and_lanes_are_single_envs_seeded_seed_plus_i():
    env = gym.make(ARTEMIS, n_bursts=5).unwrapped
    a, b, c = _episode(env, 4), _episode(env, 4), _episode(env, 5)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert_same(x, y)
    assert not np.array_equal(a[0]["requests"], c[0]["requests"]), "another seed, another episode"
    _assert_lanes_are_single_envs(3, n_bursts=5)


def _assert_lanes_are_single_envs(n: int, steps: int = 40, **kw: object) -> list:
    """Steps a vector env of ``n`` lanes and ``n`` single envs seeded 10 + i with the same random
    actions and asserts the same observations, rewards and ends; returns lane 0's
    (observation, reward) after each step."""
    venv = gym.make_vec(ARTEMIS, num_envs=n, vectorization_mode="vector_entry_point", **kw)
    assert isinstance(venv, TokenSchedulingVecEnv)
    singles = [gym.make(ARTEMIS, **kw).unwrapped for _ in range(n)]
    obs, _ = venv.reset(seed=10)
    sobs = [e.reset(seed=10 + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    lane0 = []
    for _ in range(steps):
        for i in range(n):
            assert_same({key: v[i] for key, v in obs.items()}, sobs[i])
        acts = rng.integers(0, 5, n)
        obs, rew, term, _, _ = venv.step(acts)
        for i, e in enumerate(singles):
            sobs[i], r, t, _, _ = e.step(int(acts[i]))
            assert rew[i] == r and term[i] == t
            assert not t  # 5 bursts of 10 flows: 50 decisions per episode
        lane0.append((sobs[0], rew[0]))
    return lane0


def test_link_jitter_is_the_default_and_lanes_equal_single_envs_without_it():
    """The id's defaults have a 100 ns link jitter (seeded by each episode's seed); without it
    (``link_jitter_ns=0``) a vector lane is still the single env seeded seed + i, and the episode
    differs from the default's."""
    assert ARTEMIS_PACKET["link_jitter_ns"] == 100.0
    plain = _assert_lanes_are_single_envs(2, n_bursts=5, link_jitter_ns=0.0)
    jittered = gym.make(ARTEMIS, n_bursts=5).unwrapped
    jittered.reset(seed=10)
    rng = np.random.default_rng(0)
    differs = 0
    for pobs, pr in plain:
        jobs, jr, *_ = jittered.step(int(rng.integers(0, 5, 2)[0]))
        differs += pr != jr or any(not np.array_equal(pobs[k], jobs[k]) for k in pobs)
    assert differs > 0


def test_masked_actions_behave_as_on_the_fluid_model():
    env = gym.make(ARTEMIS, n_bursts=6).unwrapped
    obs, _ = env.reset(seed=3)
    masked, done = 0, False
    while not done:
        free = np.flatnonzero(obs["action_mask"] == 0)
        obs, _, done, _, info = env.step(int(free[0]) if free.size else 0)
        masked += bool(info.get("masked_action", False))
    assert masked > 0
    strict = gym.make(ARTEMIS, n_bursts=6, masked_action="raise").unwrapped
    obs, _ = strict.reset(seed=3)
    while obs["action_mask"].all():
        obs, *_ = strict.step(0)
    with pytest.raises(ValueError, match="masked_action='raise'"):
        strict.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    with pytest.raises(ValueError, match="expected 0 to 4"):
        strict.step(5)


def test_option_errors_name_the_option():
    with pytest.raises(ValueError, match="transport, min_rto_s: options of the packet model; pass model='packet'"):
        TokenSchedulingEnv(transport="tcp", min_rto_s=1.0)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['min_rto'\] of the token env"):
        TokenSchedulingEnv(model="packet", min_rto=1.0)
    with pytest.raises(TypeError, match="queue_sample_us"):
        TokenSchedulingEnv(model="packet", queue_sample_us=10.0)
    with pytest.raises(ValueError, match="unknown model 'ns3'"):
        TokenSchedulingEnv(model="ns3")
    with pytest.raises(ValueError, match="mss_bytes must be in 536..=9000"):
        gym.make(ARTEMIS, mss_bytes=100)
    with pytest.raises(ValueError, match="min_rto_s must be a finite number, got nan"):
        gym.make(ARTEMIS, min_rto_s=float("nan"))
    with pytest.raises(ValueError, match="unknown transport 'udp'"):
        gym.make(ARTEMIS, transport="udp")
    with pytest.raises(Exception, match="the packet model does not run scheduler 'srpt' with transport 'tcp'"):
        gym.make(ARTEMIS, scheduler="srpt")
