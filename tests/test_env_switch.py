"""SwitchScheduling-v1: the library checkers, determinism, vector == single, return ==
minus the total flow time, baselines == the simulator's native schedulers, bad input."""
from __future__ import annotations

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
from flowsched.envs.sb3 import SB3VecEnv

ID = "flowsched/SwitchScheduling-v1"
SMALL = {"n_flows": 60, "hosts": 6, "max_flows": 32}


def drive(env, policy, seed):
    obs, _ = env.reset(seed=seed)
    total, done, steps = 0.0, False, 0
    while not done:
        a, _ = policy.predict(obs)
        obs, r, done, trunc, info = env.step(a)
        total += r
        steps += 1
    return total, info, steps


def test_gymnasium_env_checker():
    gym_check_env(gym.make(ID, **SMALL).unwrapped)


def test_sb3_env_checker():
    sb3_check_env(gym.make(ID, **SMALL).unwrapped, warn=True)


def test_same_seed_same_episode():
    def roll(seed):
        env = gym.make(ID, **SMALL)
        rng = np.random.default_rng(0)
        out = [env.reset(seed=seed)[0]]
        for _ in range(150):
            obs, r, done, _, _ = env.step(rng.uniform(-1, 1, 32).astype(np.float32))
            out.append((obs, r, done))
            if done:
                out.append(env.reset()[0])
        return out

    assert_same(roll(3), roll(3))
    a, b = SwitchSchedulingEnv(**SMALL), SwitchSchedulingEnv(**SMALL)
    a.reset(seed=3)
    b.reset(seed=4)
    assert not np.array_equal(a.results()["ideal_fct_s"], b.results()["ideal_fct_s"])


@pytest.mark.parametrize("alpha,size_known", [(0.0, True), (0.7, False)])
def test_drawn_episode_is_the_dataframe_generators_trace(alpha, size_known):
    """The env draws each episode's trace as numpy columns (no DataFrame at autoreset);
    it is the trace the public DataFrame generators give for the same generator:
    poisson_all_to_all, add_data_span, size_known=False, run as a fixed trace."""
    from gymnasium.utils import seeding

    kw = {**SMALL, "alpha": alpha, "size_known": size_known}
    tr = workloads.poisson_all_to_all("websearch", 0.8, 6, 10.0, 60, seed=seeding.np_random(5)[0])
    if alpha:
        tr = workloads.add_data_span(tr, alpha, 10.0)
    fixed = SwitchSchedulingEnv(**{**SMALL, "trace": tr.assign(size_known=size_known)})
    drawn = SwitchSchedulingEnv(**kw)
    actions = np.random.default_rng(1).uniform(-1, 1, (2000, 32)).astype(np.float32)  # the same for both
    out = {}
    for name, env in (("drawn", drawn), ("fixed", fixed)):
        obs, _ = env.reset(seed=5)
        steps, done = [obs], False
        for a in actions:
            obs, r, done, _, _ = env.step(a)
            steps.append((obs, r))
            if done:
                break
        assert done
        out[name] = (steps, env.results())
    assert_same(out["drawn"][0], out["fixed"][0])
    pd.testing.assert_frame_equal(out["drawn"][1], out["fixed"][1], check_exact=True)


@pytest.mark.parametrize("reward", ["fct", "slowdown"])
def test_return_is_minus_total_flow_time_or_slowdown(reward):
    env = SwitchSchedulingEnv(reward=reward, n_flows=200, hosts=8, alpha=0.5)
    total, info, _ = drive(env, baselines.make("switch", "las"), seed=1)
    res = env.results()
    flow_time = res["fct_s"].to_numpy()  # no path delay by default
    assert info["flows_finished"] == 200
    if reward == "fct":
        assert total == pytest.approx(-flow_time.sum() * 1e3, rel=1e-9)
        assert info["flow_time_s"] == pytest.approx(flow_time.sum(), rel=1e-9)
    else:
        assert total == pytest.approx(-(flow_time / res["ideal_fct_s"].to_numpy()).sum(), rel=1e-9)


def _native(env: SwitchSchedulingEnv, trace: pd.DataFrame, scheduler: str, topo) -> np.ndarray:
    ep = env.results()  # the episode's flows are the trace's, in its order
    np.testing.assert_array_equal(ep["arrival_s"].to_numpy(), trace["arrival_s"].to_numpy())
    np.testing.assert_array_equal(ep[["src", "dst"]].to_numpy(), trace[["src", "dst"]].to_numpy())
    return flowsched.simulate(trace, topo, scheduler).flows["finish_s"].to_numpy()


@pytest.mark.parametrize("rule", ["fifo", "edf"])
def test_static_order_baselines_equal_native_on_a_big_switch(rule):
    trace = workloads.add_deadlines(
        workloads.poisson_all_to_all("websearch", 0.8, 8, 10.0, 300, seed=5), slack=(1.5, 4.0), link_gbps=10.0, seed=6)
    env = SwitchSchedulingEnv(trace=trace, hosts=8, max_flows=128)
    drive(env, baselines.make("switch", rule), seed=0)
    # the same schedule; the last bits differ because the native fifo/edf advance flows
    # with the incremental allocator's arithmetic
    np.testing.assert_allclose(
        env.results()["finish_s"].to_numpy(), _native(env, trace, rule, flowsched.BigSwitch(8, 10.0)), rtol=1e-12
    )


@pytest.mark.parametrize("rule,alpha", [("srpt", 0.0), ("asrpt", 0.0), ("asrpt", 1.0), ("fifo", 1.0)])
def test_size_based_baselines_equal_native_on_one_link(rule, alpha):
    """On one link (every flow 0 -> 1) the served flow's key only falls, so no
    overtaking happens between decisions: the env driven by the rule must give the
    native scheduler's finish times."""
    tr = workloads.poisson_all_to_all("datamining", 0.7, 2, 10.0, 300, seed=2)
    if alpha:
        tr = workloads.add_data_span(tr, alpha, 10.0)
    env = SwitchSchedulingEnv(trace=tr, hosts=2, max_flows=256)
    drive(env, baselines.make("switch", rule), seed=0)
    np.testing.assert_allclose(
        env.results()["finish_s"].to_numpy(), _native(env, tr, rule, flowsched.BigSwitch(2, 10.0)), rtol=1e-12
    )


def test_las_and_pias_baselines_approach_native_with_a_decision_interval():
    tr = workloads.poisson_all_to_all("websearch", 0.7, 2, 10.0, 200, seed=3)
    for rule in ("las", "pias"):
        native = flowsched.simulate(tr, flowsched.BigSwitch(2, 10.0), rule).flows["fct_s"].mean()
        errs = []
        for dt in (None, 20e-6):
            env = SwitchSchedulingEnv(trace=tr, hosts=2, max_flows=256, decision_interval_s=dt)
            drive(env, baselines.make("switch", rule), seed=0)
            errs.append(abs(env.results()["fct_s"].mean() - native) / native)
        assert errs[1] < 0.02, (rule, errs)
        assert errs[1] <= errs[0] + 1e-12, (rule, errs)


def test_srpt_baseline_beats_fifo_and_refuses_hidden_sizes():
    env = SwitchSchedulingEnv(n_flows=300, hosts=8)
    srpt, _, _ = drive(env, baselines.make("switch", "srpt"), seed=0)
    fifo, _, _ = drive(env, baselines.make("switch", "fifo"), seed=0)
    assert -srpt * 1.5 < -fifo  # returns are minus the total flow time: srpt's is far smaller
    hidden = SwitchSchedulingEnv(n_flows=50, hosts=4, size_known=False, alpha=1.0)
    obs, _ = hidden.reset(seed=0)
    assert (obs["flows"].reshape(-1, 9)[obs["flow_mask"] > 0, 2] == 0).all()  # sizes are hidden until complete
    with pytest.raises(ValueError, match="hide"):
        baselines.make("switch", "srpt").predict(obs)
    drive(hidden, baselines.make("switch", "asrpt"), seed=0)  # the GA transform needs no hidden size


def test_vector_lanes_equal_single_envs_across_autoresets():
    n, seed = 3, 9
    kw = {"n_flows": 20, "hosts": 4, "max_flows": 16}
    venv = gym.make_vec(ID, num_envs=n, vectorization_mode="vector_entry_point", threads=2, **kw)
    singles = [SwitchSchedulingEnv(**kw) for _ in range(n)]
    vobs, _ = venv.reset(seed=seed)
    sobs = [e.reset(seed=seed + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(1)
    need_reset, ended = np.zeros(n, bool), 0
    for _ in range(200):
        for i in range(n):
            assert_same({k: v[i] for k, v in vobs.items()}, sobs[i])
        acts = rng.uniform(-1, 1, (n, 16)).astype(np.float32)
        vobs, vr, vt, _, vinfo = venv.step(acts)
        for i, e in enumerate(singles):
            if need_reset[i]:
                sobs[i], _ = e.reset()
                continue
            sobs[i], r, t, _, info = e.step(acts[i])
            assert vr[i] == r and vt[i] == t
            if t:
                assert vinfo["flow_time_s"][i] == info["flow_time_s"]
                ended += 1
        need_reset = vt.copy()
    assert ended >= n


def test_sb3_adapter_runs_ppo():
    from stable_baselines3 import PPO

    venv = SB3VecEnv(SwitchSchedulingVecEnv(2, **SMALL))
    model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    assert model.num_timesteps == 64


def test_bad_input_raises_with_a_reason():
    env = SwitchSchedulingEnv(**SMALL)
    with pytest.raises(ValueError, match="call reset"):
        env.step(np.zeros(32, np.float32))
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"\(32,\)"):
        env.step(np.zeros(31, np.float32))
    bad = np.zeros(32, np.float32)
    bad[0] = np.nan
    with pytest.raises(ValueError, match=r"element 0 is nan; actions must be within \[-1, 1\]"):
        env.step(bad)  # v1: NaN is outside the space (v0: "slot 0 must be finite")
    bad[0] = 1.5  # v1: outside the bounds raises (v0 accepted any finite score)
    with pytest.raises(ValueError, match=r"element 0 is 1.5; actions must be within \[-1, 1\]"):
        env.step(bad)
    for kwargs, match in [({"reward": "x"}, "unknown reward"), ({"load": 1.2}, "load"), ({"max_flows": 0}, "max_flows"),
                          ({"workload": "nope"}, "nope"), ({"decision_interval_s": -1.0}, "decision_interval_s"),
                          ({"alpha": -1}, "alpha")]:
        with pytest.raises(ValueError, match=match):
            SwitchSchedulingEnv(**kwargs)


def test_a_bad_draw_of_a_users_distribution_raises_naming_its_row():
    """The env hands its drawn columns to the core unchecked in Python (the serial part of a
    threaded step): the core's own checks still refuse a bad size, naming row and column."""

    class Broken(workloads.SizeDistribution):
        mean_bytes, second_moment_bytes2 = 1e5, 1e10

        def sample(self, rng, n):
            out = np.full(n, 1e5)
            out[3] = 0.0
            return out

    env = SwitchSchedulingEnv(**{**SMALL, "workload": Broken()})
    with pytest.raises(ValueError, match=r"flow at row 3, column 'size_bytes': must be finite and > 0, got 0"):
        env.reset(seed=0)


def test_render_ansi():
    env = gym.make(ID, render_mode="ansi", **SMALL)
    obs, _ = env.reset(seed=0)
    assert len(env.render().splitlines()) == 2 + int(obs["flow_mask"].sum())


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_the_episode_ends_at_the_step_where_the_last_flow_ends(model):
    # on the fluid model the step where the last flow finished was not terminated: a
    # further step (any action, an empty observation, reward -0.0) ended the episode, so
    # an agent bootstrapped its last transition from a state like an idle one
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [1, 2], "dst": [0, 0], "size_bytes": [1e6, 2e6]})
    env = SwitchSchedulingEnv(trace=tr, topology=flowsched.BigSwitch(3, 1.0), model=model)
    obs, _ = env.reset(seed=0)
    rewards, done = [], False
    while not done:
        _, r, done, _, info = env.step(np.zeros(env.action_space.shape, np.float32))
        rewards.append(r)
    # two flows sharing 1 Gbps: 1 MB ends at 16 ms, then 2 MB alone at 24 ms (fluid; the
    # packet model decides at each of the two arrivals, so one step more, of no time)
    assert len(rewards) == (2 if model == "fluid" else 3) and rewards[-1] < 0
    if model == "fluid":
        assert rewards == pytest.approx([-32.0, -8.0], rel=1e-12)
        assert info["mean_fct_s"] == pytest.approx((0.016 + 0.024) / 2, rel=1e-12)
    res = env.results()
    assert info["mean_fct_s"] == pytest.approx(res["fct_s"].mean(), rel=1e-9)  # no path delay here
    assert info["flows_finished"] == 2 and info["flow_time_s"] == pytest.approx(-sum(rewards) / 1e3, rel=1e-9)


def test_mean_fct_counts_the_finished_flows_only():
    # a flow terminated at its deadline added its time in the system to mean_fct_s's sum,
    # which was divided by the finished flows alone: 21 ms for one flow that took 16 ms
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [1, 2], "dst": [0, 0], "size_bytes": [2e6, 1e6],
                       "deadline_s": [np.nan, 0.005]})
    env = SwitchSchedulingEnv(trace=tr, topology=flowsched.BigSwitch(3, 1.0), terminate_missed=True)
    env.reset(seed=0)
    done, ret = False, 0.0
    while not done:
        scores = np.zeros(env.action_space.shape, np.float32)
        scores[1] = 1.0  # the deadline flow last: it misses
        _, r, done, _, info = env.step(scores)
        ret += r
    res = env.results()
    assert res["terminated"].tolist() == [False, True]
    assert info["mean_fct_s"] == pytest.approx(0.016, rel=1e-12)
    # the return counts the terminated flow's 5 ms in the system (documented)
    assert ret == pytest.approx(-(16.0 + 5.0), rel=1e-12) and info["flow_time_s"] == pytest.approx(0.021, rel=1e-12)
