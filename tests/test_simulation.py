"""flowsched.Simulation: the public stepping API, and simulate() as a use of it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
import flowsched.sim
from flowsched import workloads
from flowsched.sim import FLOW_COLUMNS, Simulation, flow_table, native_simulator, prepare_trace

BS = flowsched.BigSwitch(8, 10)
LS = flowsched.LeafSpine(2, 4, 2, 10, 10)  # oversubscribed: the core links matter


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    tr = workloads.poisson_all_to_all("websearch", load=0.7, hosts=8, link_gbps=10, n_flows=400, seed=3)
    tr["deadline_s"] = np.where(np.arange(len(tr)) % 3 == 0, 0.005, np.nan)
    return tr


def assert_same_results(a: flowsched.Results, b: flowsched.Results) -> None:
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    pd.testing.assert_frame_equal(a.links, b.links, check_exact=True)
    assert (a.duration_s, a.scheduler, a.stats) == (b.duration_s, b.scheduler, b.stats)


@pytest.mark.parametrize("topo", [BS, LS], ids=["bigswitch", "leafspine"])
@pytest.mark.parametrize("scheduler", ["srpt", "ps", "las", "pias", "fair", "edf", "gtcp:srpt"])
def test_run_gives_what_simulate_gives(trace, topo, scheduler):
    sim = Simulation(trace, topo, scheduler, delay_us=1.0)
    sim.run()
    assert sim.done
    assert_same_results(sim.results(), flowsched.simulate(trace, topo, scheduler, delay_us=1.0))


def test_run_gives_what_the_native_core_gives(trace):
    """simulate() is Simulation(...).run(): both equal the core driven directly."""
    tr, topo = prepare_trace(trace, LS)
    native = native_simulator(tr, topo, "pias", admission="edf", k=2, terminate_missed=True)
    native.run()
    sim = Simulation(trace, LS, "pias", admission="edf", k=2, terminate_missed=True)
    sim.run()
    expect = flowsched.sim._collect(tr, native, "pias")
    assert_same_results(sim.results(), expect)


def test_results_columns_and_dtypes_are_the_contract(trace):
    flows = flowsched.simulate(trace, BS, "srpt").flows
    assert {c: str(t) for c, t in flows.dtypes.items()} == FLOW_COLUMNS


def test_step_speaks_the_trace_clock(trace):
    epoch = trace.assign(arrival_s=trace["arrival_s"] + 1.7e9)
    sim = Simulation(epoch, BS, "srpt")
    assert sim.time_origin_s == 1.7e9 and sim.now == 1.7e9
    t = float(epoch["arrival_s"].iloc[50])
    sim.step(t)
    assert sim.now == t and not sim.done
    assert set(sim.active()["id"]) <= set(epoch["id"].iloc[:51])
    with pytest.raises(ValueError, match="before now"):
        sim.step(t - 1e-3)
    sim.run()
    r, ref = sim.results(), flowsched.simulate(epoch, BS, "srpt")
    assert r.flows["finish_s"].min() >= 1.7e9
    np.testing.assert_allclose(r.flows["fct_s"], ref.flows["fct_s"], rtol=1e-9)


def test_active_and_rates_are_consistent(trace):
    sim = Simulation(trace, LS, "ps")
    size = trace["size_bytes"].to_numpy()
    cap = 10e9 / 8
    for t in np.linspace(0.0, float(trace["arrival_s"].max()), 7)[1:]:
        sim.step(t)
        act = sim.active()
        assert list(act.columns) == ["id", "src", "dst", "size_bytes", "bytes_sent", "remaining_bytes", "rate_Bps"]
        assert act.index.is_monotonic_increasing
        np.testing.assert_array_equal(act["size_bytes"], size[act.index])
        np.testing.assert_allclose(act["bytes_sent"] + act["remaining_bytes"], act["size_bytes"], rtol=1e-12)
        assert (act["remaining_bytes"] > 0).all() and (act["bytes_sent"] >= 0).all()
        rates = sim.rates()
        assert rates.shape == (len(trace),)
        np.testing.assert_array_equal(rates[act.index], act["rate_Bps"])
        inactive = np.ones(len(trace), bool)
        inactive[act.index] = False
        assert (rates[inactive] == 0).all()
        # fair sharing: every host link is within capacity, and a flow that has a rate uses some
        for col in ("src", "dst"):
            load = act.groupby(col)["rate_Bps"].sum()
            assert (load <= cap * (1 + 1e-9)).all()
        if len(act):
            assert (act["rate_Bps"] > 0).all()
    sim.run()
    assert sim.active().empty and not sim.rates().any()


def test_stepping_in_pieces_ends_where_run_ends(trace):
    ref = flowsched.simulate(trace, BS, "srpt")
    sim = Simulation(trace, BS, "srpt")
    for t in np.linspace(0.0, 2 * ref.duration_s, 40):
        sim.step(t)
    assert sim.done and sim.now <= 2 * ref.duration_s
    r = sim.results()
    np.testing.assert_allclose(r.flows["fct_s"], ref.flows["fct_s"], rtol=1e-9)
    pd.testing.assert_series_equal(r.flows["deadline_met"], ref.flows["deadline_met"])
    sim.step(10 * ref.duration_s)  # done: nothing moves
    assert sim.done


def test_results_before_the_end_show_what_finished(trace):
    sim = Simulation(trace, BS, "srpt")
    sim.step(float(trace["arrival_s"].median()))
    r = sim.results()
    fin = r.flows["finish_s"].notna()
    assert 0 < fin.sum() < len(trace)
    assert (r.flows.loc[fin, "finish_s"] <= sim.now).all()
    assert r.flows.loc[~fin, "fct_s"].isna().all()


def test_set_pias_thresholds(trace):
    default = flowsched.sim.default_pias_thresholds()
    with pytest.raises(ValueError, match="unknown allocator"):
        Simulation(trace, BS, "pias", allocator="fast")
    ref = flowsched.simulate(trace, BS, "pias")
    half = float(trace["arrival_s"].median())

    def run(thresholds, allocator):
        sim = Simulation(trace, BS, "pias", allocator=allocator)
        sim.step(half)
        sim.set_pias_thresholds(thresholds)
        sim.run()
        return sim.results().flows["fct_s"].to_numpy()

    for allocator in ("auto", "full"):
        np.testing.assert_allclose(run(default, allocator), ref.flows["fct_s"], rtol=1e-9)  # same thresholds
        fct = run([1e3, 2e3], allocator)  # far lower thresholds from half-way on: later flows finish differently
        late = trace["arrival_s"].to_numpy() > half
        assert not np.allclose(fct[late], ref.flows["fct_s"].to_numpy()[late], rtol=1e-6)
        before = ~late & (ref.flows["finish_s"].to_numpy() < half)
        np.testing.assert_allclose(fct[before], ref.flows["fct_s"].to_numpy()[before],
                                   rtol=1e-9)  # flows done before the change are untouched
    # the incremental allocator ends where the full recomputation does, lower or higher thresholds
    for th in ([1e3, 2e3], [5e5, 5e6, 5e7]):
        np.testing.assert_allclose(run(th, "auto"), run(th, "full"), rtol=1e-9)
    with pytest.raises(ValueError, match="strictly increasing"):
        Simulation(trace, BS, "pias").set_pias_thresholds([2e3, 1e3])


def test_simulation_refuses_external_admission(trace):
    with pytest.raises(ValueError, match="external"):
        Simulation(trace, BS, "ps", admission="external", k=1)


def test_public_builders_and_their_old_private_names(trace):
    for topo in (BS, LS):
        assert topo._native().keys() == topo.native_config().keys()
    assert flowsched.sim._prepare is prepare_trace
    assert flowsched.sim._make_native is native_simulator
    assert flowsched.sim._default_pias_thresholds is flowsched.sim.default_pias_thresholds
    tr, topo = prepare_trace(trace.assign(arrival_s=trace["arrival_s"] + 5.0))
    assert tr.attrs["time_origin_s"] == 5.0 and isinstance(topo, flowsched.BigSwitch) and topo.n_hosts == 8
    sim = native_simulator(tr, topo)  # defaults: srpt, no admission
    sim.run()
    flows = flow_table(tr, sim.results(), tr.attrs["time_origin_s"])
    assert list(flows.columns) == list(FLOW_COLUMNS)
    assert flows["arrival_s"].min() >= 5.0


def test_flow_table_deadline_uses_the_one_tolerance():
    tr, _ = prepare_trace(pd.DataFrame({"arrival_s": [0.0] * 3, "src": [0, 0, 0], "dst": [1, 1, 1],
                                        "size_bytes": [1.0] * 3, "deadline_s": [1.0, 1.0, np.nan]}), BS)
    outcome = {"finish_s": [1.0 + 5e-10, 1.0 + 2e-9, 0.5], "fct_s": [1.0 + 5e-10, 1.0 + 2e-9, 0.5],
               "ideal_fct_s": [0.5, 0.5, 0.5], "terminated": [False] * 3, "bytes_sent": [1.0] * 3,
               "path_delay_s": [0.0] * 3}
    met = flow_table(tr, outcome)["deadline_met"]
    assert bool(met.iloc[0]) is True
    assert bool(met.iloc[1]) is False and met.isna().tolist() == [False, False, True]


@pytest.mark.parametrize("topo", [BS, LS], ids=["bigswitch", "leafspine"])
def test_env_flow_table_completes_what_the_env_bindings_give(trace, topo):
    """From the columns the env cores give, env_flow_table rebuilds Results.flows exactly
    (path delay as the core computes it, bytes_sent of finished flows)."""
    tr, topo = prepare_trace(trace, topo)
    sim = native_simulator(tr, topo, "srpt", delay_us=3.7)
    sim.run()
    res = sim.results()
    episode = {c: tr[c].to_numpy() for c in ("arrival_s", "src", "dst", "size_bytes", "deadline_s")}
    episode.update({c: res[c] for c in ("finish_s", "fct_s", "ideal_fct_s", "terminated")})
    got = flowsched.sim.env_flow_table(episode, topo, 3.7)
    pd.testing.assert_frame_equal(got, flow_table(tr, res), check_exact=True)


def _episode(env):
    from flowsched import baselines

    family = {"TokenSchedulingEnv": "token", "SwitchSchedulingEnv": "switch", "QueueThresholdsEnv": "thresholds"}
    policy = baselines.make(family[type(env).__name__], {"token": "edf", "switch": "srpt"}.get(
        family[type(env).__name__], "pias_static"))
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        action, _ = policy.predict(obs)
        obs, _, done, _, _ = env.step(action)
    return env.results()


@pytest.mark.parametrize("make", [
    lambda: flowsched.envs.TokenSchedulingEnv(n_bursts=3, burst_rate_hz=30.0),
    lambda: flowsched.envs.TokenSchedulingEnv(n_bursts=3, topology=flowsched.LeafSpine(3, 4, 2, 1, 1), delay_us=7.0),
    lambda: flowsched.envs.SwitchSchedulingEnv(n_flows=60, delay_us=3.0),
    lambda: flowsched.envs.SwitchSchedulingEnv(n_flows=60, topology=LS, delay_us=3.0),
    lambda: flowsched.envs.QueueThresholdsEnv(n_flows=300, hosts=8, interval_flows=100),
], ids=["token", "token-leafspine", "switch", "switch-leafspine", "thresholds"])
def test_every_env_results_has_the_results_flows_columns(make):
    """Names, order and dtypes of Results.flows (the thresholds env adds reference_fct_s after them)."""
    res = _episode(make())
    extra = ["reference_fct_s"] if "reference_fct_s" in res else []
    assert list(res.columns) == [*FLOW_COLUMNS, *extra]
    assert {c: str(t) for c, t in res.dtypes.items() if c in FLOW_COLUMNS} == FLOW_COLUMNS
    finished = res["finish_s"].notna() & ~res["terminated"]
    assert finished.all()
    np.testing.assert_array_equal(res["bytes_sent"], res["size_bytes"])
    np.testing.assert_allclose(res["fct_s"], res["finish_s"] - res["arrival_s"] + res["path_delay_s"], rtol=1e-9)
    np.testing.assert_array_equal(res["slowdown"], res["fct_s"] / res["ideal_fct_s"])
    assert (res["path_delay_s"] >= 0).all() and (res["path_delay_s"] < res["ideal_fct_s"]).all()


def test_env_results_equal_the_simulator_on_the_same_trace():
    """The switch env driven by fifo scores gives the native fifo schedule: Results.flows of
    simulate() and the env's results() agree column by column (path delay exactly)."""
    tr = workloads.poisson_all_to_all("websearch", load=0.6, hosts=8, link_gbps=10, n_flows=80, seed=5)
    env = flowsched.envs.SwitchSchedulingEnv(trace=tr, hosts=8, delay_us=3.0)
    from flowsched import baselines

    policy = baselines.make("switch", "fifo")
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(policy.predict(obs)[0])
    got = env.results()
    ref = flowsched.simulate(tr, flowsched.BigSwitch(8, 10), "fifo", delay_us=3.0).flows
    for c in ("id", "src", "dst", "size_bytes", "terminated", "bytes_sent", "path_delay_s", "ideal_fct_s"):
        pd.testing.assert_series_equal(got[c], ref[c], check_exact=True)
    np.testing.assert_allclose(got["fct_s"], ref["fct_s"], rtol=1e-12)
    pd.testing.assert_series_equal(got["deadline_met"], ref["deadline_met"])


SCORED = pd.DataFrame({"arrival_s": [0.0, 0.0, 1e-4], "src": [0, 0, 2], "dst": [1, 1, 1],
                       "size_bytes": [1e6, 2e6, 5e5]})


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_set_scores_drives_the_external_scheduler_like_edf(model):
    """Scores are priorities (lower first): the same order as EDF with deadlines in the
    scores' order gives the same run, bit for bit, on both models."""
    sim = flowsched.Simulation(SCORED, flowsched.BigSwitch(3, 10), "external", model=model)
    sim.set_scores([1.0, 0.0, 2.0])
    sim.run()
    edf = flowsched.simulate(SCORED.assign(deadline_s=[1.0, 0.5, 2.0]), flowsched.BigSwitch(3, 10), "edf", model=model)
    assert sim.results().flows["finish_s"].tolist() == edf.flows["finish_s"].tolist()
    if model == "fluid":  # the 2 MB flow first at 10 Gbps, then the 1 MB one, then the 0.5 MB one
        assert sim.results().flows["finish_s"].to_numpy() == pytest.approx([2.4e-3, 1.6e-3, 2.8e-3], rel=1e-12)


def test_set_scores_mid_run_reorders_from_then_on():
    sim = flowsched.Simulation(SCORED, flowsched.BigSwitch(3, 10), "external")
    sim.set_scores([1.0, 0.0, 2.0])
    sim.step(0.8e-3)  # the 2 MB flow is half through
    assert sim.active()["rate_Bps"].tolist() == [0.0, 1.25e9, 0.0]
    sim.set_scores([-1.0], rows=[0])  # now the 1 MB flow goes first
    sim.run()
    assert sim.results().flows["finish_s"].to_numpy() == pytest.approx([1.6e-3, 2.4e-3, 2.8e-3], rel=1e-12)


def test_equal_scores_share_in_the_fluid_model():
    sim = flowsched.Simulation(SCORED.iloc[:2], flowsched.BigSwitch(2, 10), "external")
    sim.set_scores([0.0, 0.0])
    sim.step(1e-4)
    assert sim.active()["rate_Bps"].tolist() == [6.25e8, 6.25e8]


def test_set_scores_errors():
    sim = flowsched.Simulation(SCORED, flowsched.BigSwitch(3, 10), "srpt")
    with pytest.raises(ValueError, match="needs the 'external' scheduler, not 'srpt'"):
        sim.set_scores([0.0, 1.0, 2.0])
    for model in ("fluid", "packet"):
        sim = flowsched.Simulation(SCORED, flowsched.BigSwitch(3, 10), "external", model=model)
        with pytest.raises(ValueError, match=r"one score per flow \(3 flows\)"):
            sim.set_scores([0.0, 1.0])
        with pytest.raises(ValueError, match="score 1 is nan"):
            sim.set_scores([0.0, np.nan, 1.0])
        with pytest.raises(ValueError, match=r"rows must be trace row numbers in \[0, 3\)"):
            sim.set_scores([0.0], rows=[3])


def test_allocator_choice_and_the_old_keyword(trace):
    ref = flowsched.simulate(trace, BS, "srpt").flows["fct_s"].to_numpy()
    for allocator in ("incremental", "full"):
        sim = Simulation(trace, BS, "srpt", allocator=allocator)
        sim.run()
        np.testing.assert_allclose(sim.results().flows["fct_s"], ref, rtol=1e-9)
    with pytest.raises(ValueError, match="no incremental allocator"):
        Simulation(trace, BS, "racs", allocator="incremental")
    # las: `incremental` is its own allocator (not `auto`'s records fast path), within 1e-9 of full.
    las = {}
    for allocator in ("auto", "incremental", "full"):
        sim = Simulation(trace, BS, "las", allocator=allocator)
        sim.run()
        las[allocator] = sim.results().flows["fct_s"].to_numpy()
    np.testing.assert_array_equal(las["auto"], las["full"])
    np.testing.assert_allclose(las["incremental"], las["full"], rtol=1e-9)
    tr, topo = prepare_trace(trace, BS)
    with pytest.warns(DeprecationWarning, match="allocator='full'"):
        old = native_simulator(tr, topo, "srpt", force_full_recompute=True)
    old.run()
    np.testing.assert_allclose(old.results()["fct_s"], ref, rtol=1e-9)
    with pytest.raises(ValueError, match="unknown allocator 'fast'"):
        native_simulator(tr, topo, "srpt", allocator="fast")
