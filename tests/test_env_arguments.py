"""The envs' constructor arguments and seeds as outside code passes them: nothing is
ignored, nothing is reinterpreted (a string "False" is not true, 2.7 lanes are not 2),
and a fabric given as a topology keeps the load the user asked for.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import flowsched  # noqa: F401  (registers the envs)
from flowsched import BigSwitch, LeafSpine, baselines
from flowsched.envs import (
    ENV_IDS,
    QueueThresholdsEnv,
    QueueThresholdsVecEnv,
    SwitchSchedulingVecEnv,
    TokenSchedulingVecEnv,
)

TOKEN, SWITCH, THRESHOLDS, _ = ENV_IDS


def _switch_offered_load(topology, **kw):
    """The switch env's episode: its bytes over its arrival span and the hosts' capacity."""
    env = gym.make(SWITCH, topology=topology, load=0.5, n_flows=300, **kw)
    env.reset(seed=3)
    done = False
    while not done:
        _, _, done, _, _ = env.step(np.zeros(env.action_space.shape, np.float32))
    r = env.unwrapped.results()
    cap = float(np.sum(topology.native_config()["host_gbps"])) * 1e9 / 8
    return r.size_bytes.sum() / (r.arrival_s.max() - r.arrival_s.min()) / cap


def test_a_topology_s_host_rate_sets_the_load_of_the_drawn_traces():
    # the same seed draws the same sizes and exponential gaps; the gaps scale with the
    # host rate, so the offered load is the same on 1 and 10 Gbps hosts (before, the load
    # was always taken relative to link_gbps=10, and the 1 Gbps fabric got ten times it)
    fast = _switch_offered_load(BigSwitch(8, 10.0))
    slow = _switch_offered_load(BigSwitch(8, 1.0))
    leaf = _switch_offered_load(LeafSpine(2, 4, 2, 1.0, 4.0))
    assert slow == pytest.approx(fast, rel=1e-9) and leaf == pytest.approx(fast, rel=1e-9)
    env = QueueThresholdsEnv(topology=BigSwitch(8, 1.0), load=0.5, n_flows=200)
    assert env.link_gbps == 1.0


@pytest.mark.parametrize("env_id", [TOKEN, SWITCH, THRESHOLDS])
def test_hosts_or_link_gbps_that_contradict_the_topology_raise(env_id):
    with pytest.raises(ValueError, match="hosts=32 conflicts with the topology's 12 hosts"):
        gym.make(env_id, topology=BigSwitch(12, 10.0), hosts=32)
    with pytest.raises(ValueError, match="link_gbps=40 conflicts with the topology's host links"):
        gym.make(env_id, topology=BigSwitch(12, 10.0), link_gbps=40.0)
    mixed = BigSwitch(12, [10.0] * 6 + [40.0] * 6)
    with pytest.raises(ValueError, match="several rates .* give link_gbps="):
        gym.make(env_id, topology=mixed)
    gym.make(env_id, topology=mixed, link_gbps=10.0)  # the rate the load refers to
    gym.make(env_id, topology=BigSwitch(12, 10.0), hosts=12, link_gbps=10.0)  # agreeing: fine


@pytest.mark.parametrize("env_id,flag", [(TOKEN, "terminate_missed"), (TOKEN, "exact_composition"),
                                         (SWITCH, "terminate_missed"), (SWITCH, "size_known"),
                                         (SWITCH, "hide_sizes")])
def test_flags_must_be_bools(env_id, flag):
    with pytest.raises(ValueError, match=f"{flag} must be True or False, got 'False'"):
        gym.make(env_id, **{flag: "False"})
    gym.make(env_id, **{flag: np.bool_(True)})


@pytest.mark.parametrize("make", [
    lambda: TokenSchedulingVecEnv(2.7), lambda: TokenSchedulingVecEnv(-1), lambda: SwitchSchedulingVecEnv(0),
    lambda: QueueThresholdsVecEnv(0, n_flows=100), lambda: TokenSchedulingVecEnv(2, threads=0),
    lambda: SwitchSchedulingVecEnv(2, threads=2.5), lambda: SwitchSchedulingVecEnv(2, max_episode_steps=2.5),
    lambda: TokenSchedulingVecEnv(2, copy="no"),
])
def test_vector_env_arguments_are_checked_not_truncated(make):
    with pytest.raises(ValueError, match="must be"):
        make()


@pytest.mark.parametrize("env_id,kw", [(TOKEN, {"delay_us": "5"}), (TOKEN, {"burst_rate_hz": "40"}),
                                       (SWITCH, {"alpha": "1"}), (SWITCH, {"load": "0.5"}),
                                       (SWITCH, {"decision_interval_s": "1e-4"}), (SWITCH, {"n_flows": 2.5}),
                                       (THRESHOLDS, {"load": "0.5"}), (THRESHOLDS, {"load": (0.5, "0.6")}),
                                       (THRESHOLDS, {"interval_s": "1"})])
def test_numbers_given_as_strings_raise_naming_the_argument(env_id, kw):
    (name,) = kw
    with pytest.raises(ValueError, match=f"^{name} must be"):
        gym.make(env_id, **kw)


def test_the_token_env_refuses_pias_when_it_is_made():
    with pytest.raises(ValueError, match="takes no PIAS thresholds"):
        gym.make(TOKEN, scheduler="pias")
    # a scheduler the simulator refuses with destination admission fails now, not at reset
    with pytest.raises(ValueError, match="gtcp with destination admission"):
        gym.make(TOKEN, scheduler="gtcp:srpt")


def test_the_thresholds_env_s_table_error_names_the_reference_argument():
    with pytest.raises(ValueError, match=r"give reference=\[\.\.\.\]"):
        gym.make(THRESHOLDS, load=0.3)
    gym.make(THRESHOLDS, load=0.3, reference=[1e4 * 2**i for i in range(7)])


def _rollout(env, seed):
    obs, _ = env.reset(seed=seed)
    out = [obs["requests"].copy()]
    for _ in range(20):
        obs, *_ = env.step(0)
        out.append(obs["requests"].copy())
    return np.stack(out)


def test_token_env_seeds_beyond_64_bits_work_and_lanes_match_single_envs():
    # Gymnasium takes any integer >= 0; the core seeds with 64 bits
    single = gym.make(TOKEN)
    a, b = _rollout(single, 2**64 + 5), _rollout(single, 2**64 + 5)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, _rollout(single, 2**64 + 6))
    assert np.array_equal(_rollout(single, 7), _rollout(gym.make(TOKEN), 7))  # seeds below 2**64 as before
    vec = TokenSchedulingVecEnv(2)
    obs, _ = vec.reset(seed=2**64 - 1)  # lane 1 gets 2**64
    first = _rollout(gym.make(TOKEN), 2**64)[0]
    assert np.array_equal(obs["requests"][1], first)
    with pytest.raises(ValueError, match="greater or equal to zero"):
        vec.reset(seed=-1)
    with pytest.raises(ValueError, match="seed must be None, an integer or a list"):
        vec.reset(seed=1.5)


def test_rules_refuse_the_rllib_observation_naming_the_format():
    obs, _ = gym.make(TOKEN, obs_format="rllib").reset(seed=0)
    with pytest.raises(TypeError, match="obs_format='dict'"):
        baselines.make("token", "edf").predict(obs)


def test_the_switch_pias_rule_refuses_unsorted_thresholds():
    with pytest.raises(ValueError, match="strictly increasing"):
        baselines.make("switch", "pias", thresholds_bytes=[100_000, 10_000, 1_000_000])


def test_float64_scores_just_outside_the_bounds_raise_before_the_float32_cast():
    env = gym.make(SWITCH, n_flows=20, hosts=4, max_flows=8)
    env.reset(seed=0)
    over = np.full(8, 1 + 1e-8)  # rounds to 1.0 in float32
    with pytest.raises(ValueError, match="element 0 is 1.00000001"):
        env.step(over)
    env.step(np.full(8, 1.0))  # the bound itself, in float64
    vec = SwitchSchedulingVecEnv(2, n_flows=5, hosts=4, max_flows=8)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="env 1: action"):
        vec.step(np.stack([np.zeros(8), over]))
    # a lane whose episode ended is reset by the next step, which ignores its scores
    ended = np.zeros(2, bool)
    while not ended.any():
        _, _, term, trunc, _ = vec.step(np.zeros((2, 8)))
        ended = term | trunc
    vec.step(np.where(ended[:, None], over, 0.0))
