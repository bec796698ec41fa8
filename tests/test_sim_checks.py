"""simulate()'s options as outside code passes them: an option the run would ignore is
refused, a value the models cannot honour is refused before the run (naming it), and a
long run stops at Ctrl-C.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import flowsched

ONE = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e6]})
THREE = pd.DataFrame({"arrival_s": [0.0] * 3, "src": [0, 1, 2], "dst": [3, 3, 3], "size_bytes": [1.25e6] * 3})


@pytest.mark.parametrize("gbps", [1e-6, 1e-20, 2e6])
def test_the_packet_model_refuses_link_rates_its_picosecond_clock_cannot_hold(gbps):
    # 1e-6 Gbps ran past the u64 clock (2**64 ps) and wrapped: a 2.5 GB flow alone got a
    # slowdown of 0.23; 1e-20 Gbps never returned
    with pytest.raises(ValueError, match=r"link 0 \(up0\) runs at .* Gbps; the packet model takes link rates from"):
        flowsched.simulate(ONE, flowsched.BigSwitch(2, gbps), "ps", model="packet")
    flowsched.simulate(ONE, flowsched.BigSwitch(2, gbps), "ps")  # the fluid model takes them


def test_an_infinite_capacity_is_named_with_its_link():
    with pytest.raises(ValueError, match=r"link 0 \(up0\) has a capacity of inf bytes/s"):
        flowsched.simulate(ONE, flowsched.BigSwitch(2, 1e300), "ps")


@pytest.mark.parametrize("iv", [1e-300, 1e-12, 0.0])
def test_max_interval_below_a_nanosecond_is_refused(iv):
    # 1e-300 s crept forward 1e-300 s an event and never returned
    with pytest.raises(ValueError, match="max_interval_s must be at least 1e-9 s"):
        flowsched.simulate(THREE, flowsched.BigSwitch(4), "racs", max_interval_s=iv)
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "racs", max_interval_s=1e-9)


def test_a_max_interval_below_the_clock_s_resolution_is_named_in_the_stall_error():
    tr = pd.DataFrame({"arrival_s": [0.0, 1e8], "src": [0, 1], "dst": [3, 3], "size_bytes": [1.25e6] * 2})
    with pytest.raises(RuntimeError, match="max_interval_s = 1e-9 s is below the resolution of the simulated clock"):
        flowsched.simulate(tr, flowsched.BigSwitch(4), "ps", max_interval_s=1e-9)


@pytest.mark.parametrize("seed", [1.99, True, "1", -1, 2**64])
@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_seeds_are_integers_in_the_cores_range(seed, model):
    # 1.99 ran as seed 1, True and "1" were taken; -1 and 2**64 gave an OverflowError
    sched = "random" if model == "fluid" else "ps"
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*64\)"):
        flowsched.simulate(THREE, flowsched.BigSwitch(4), sched, seed=seed, model=model)
    flowsched.simulate(THREE, flowsched.BigSwitch(4), sched, seed=2**64 - 1, model=model)


@pytest.mark.parametrize("kw,match", [
    ({"pias_thresholds_bytes": [1e3]}, "scheduler 'srpt' has no PIAS queues"),
    ({"racs": {"w_min": 1.0}}, "scheduler 'srpt' does not read them"),
    ({"sdc": {"weights": (1, 2, 3)}}, "scheduler 'srpt' does not read them"),
    ({"window": 1}, "it needs admission"),
    ({"link_gbps": 40.0}, "with a topology, its links' rates are the ones given to it"),
])
def test_options_the_run_would_ignore_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(THREE, flowsched.BigSwitch(4), "srpt", **kw)


def test_the_options_still_apply_where_they_belong():
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "pias", pias_thresholds_bytes=[1e3])
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "racs", racs={"w_min": 1.0})
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "sdc", sdc={"weights": (1, 2, 3)})
    flowsched.simulate(THREE, None, "srpt", link_gbps=40.0)
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "srpt", k=1, window=1)
    sim = flowsched.Simulation(THREE, flowsched.BigSwitch(4), "srpt")
    with pytest.raises(ValueError, match="set_pias_thresholds: scheduler 'srpt' has no PIAS queues"):
        sim.set_pias_thresholds([1e4])


RUN = textwrap.dedent("""
    import sys, time
    import flowsched
    from flowsched import workloads
    model = sys.argv[1]
    tr = workloads.poisson_all_to_all("websearch", 0.8, 144, 10.0, 200_000 if model == "fluid" else 20_000, seed=0)
    print("start", flush=True)
    t = time.time()
    try:
        flowsched.simulate(tr, flowsched.BigSwitch(144), "las" if model == "fluid" else "ps", model=model)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_ctrl_c_stops_a_long_run(model):
    # the run takes about 20 s on this project's machines; Ctrl-C went unheard until its end
    p = subprocess.Popen([sys.executable, "-c", RUN, model], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "start"
        time.sleep(0.5)
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        assert out.strip() == "interrupted"
        assert time.monotonic() - t < 5.0
    finally:
        p.kill()


@pytest.mark.parametrize("kw,match", [
    ({"delay_us": "1"}, "delay_us must be a finite number >= 0, got '1'"),
    ({"model": "packet", "mss_bytes": float("nan")}, r"mss_bytes must be an integer >= 1 \(below 2\*\*32\), got nan"),
    ({"model": "packet", "mss_bytes": 10**30}, "mss_bytes must be an integer >= 1"),
])
def test_bad_numbers_are_named(kw, match):
    # numpy's "ufunc 'isfinite' not supported", "cannot convert float NaN to integer" before
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(ONE, flowsched.BigSwitch(2), "ps", **kw)


def test_a_csv_header_with_a_column_twice_is_named(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("arrival_s,src,dst,size_bytes,size_bytes\n0,0,1,100,100\n")
    with pytest.raises(flowsched.TraceError, match=r"line 1 \(header\): column\(s\) \['size_bytes'\] appear more"):
        flowsched.read_trace(p)


@pytest.mark.parametrize("kw,match", [
    ({"init_cwnd_packets": "2"}, "init_cwnd_packets must be a finite number, got '2'"),
    ({"init_cwnd_packets": True}, "init_cwnd_packets must be a finite number, got True"),
    ({"min_rto_s": [1]}, r"min_rto_s must be a finite number, got \[1\]"),
    ({"queue_sample_us": True}, "queue_sample_us must be a finite number, got True"),
    ({"mss_bytes": 10**400}, "mss_bytes must be an integer >= 1"),
    ({"queue_sample_us": 10, "sample_links": "down0"}, "sample_links must be a list of link names or indices"),
    ({"queue_sample_us": 10, "sample_links": [True]}, "sample_links: True is neither a link name nor a link index"),
    ({"queue_sample_us": 10, "sample_links": ["down0", "down0"]}, "sample_links names link 'down0' twice"),
])
def test_packet_options_of_the_wrong_kind_are_named(kw, match):
    # '2' ran as 2 and True as 1; [1] and 10**400 gave Python's float() errors; 'down0'
    # was read letter by letter, and a link named twice was sampled twice
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(ONE, flowsched.BigSwitch(2), "ps", model="packet", transport="tcp", **kw)


@pytest.mark.parametrize("model", ["fluid", "packet"])
@pytest.mark.parametrize("kw,match", [
    ({"terminate_missed": "False"}, "terminate_missed must be True or False, got 'False'"),
    ({"k": True}, "an integer >= 1, got True"),
    ({"k": 2**70}, "an integer >= 1, got 1180591620717411303424"),
])
def test_shared_options_of_the_wrong_kind_are_named(model, kw, match):
    # terminate_missed="False" terminated flows; k=True was 1; k=2**70 overflowed
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(ONE, flowsched.BigSwitch(2), "ps", model=model, **kw)


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_both_models_can_be_stepped_to_a_time_before_the_first_arrival(model):
    # the packet model's clock started at the first arrival: step(0.1) raised "lies before now"
    tr = pd.DataFrame({"arrival_s": [0.5], "src": [1], "dst": [0], "size_bytes": [1e5]})
    s = flowsched.Simulation(tr, flowsched.BigSwitch(4), "ps", model=model)
    assert s.now == 0.0
    s.step(0.1)
    assert s.now == 0.1
    s.run()
    whole = flowsched.simulate(tr, flowsched.BigSwitch(4), "ps", model=model)
    assert s.results().flows["finish_s"].tolist() == whole.flows["finish_s"].tolist()


@pytest.mark.parametrize("sched,transport,kw", [
    ("ps", "tcp", {"ecn_threshold_bytes": 3000}), ("srpt", "pfabric", {"ecn_threshold_bytes": 3000}),
    ("ps", "rcp", {"init_cwnd_packets": 1}), ("racs", "racs", {"max_cwnd_packets": 11}),
    ("sdc", "sdc", {"max_cwnd_packets": 3}), ("srpt", "pfabric", {"limited_transmit": True}),
])
def test_packet_options_the_transport_would_ignore_are_refused(sched, transport, kw):
    # each ran, with results identical to the run without it
    (name,) = kw
    with pytest.raises(ValueError, match=f"{name} is read by the .* only; this run's transport is '{transport}'"):
        flowsched.simulate(THREE, flowsched.BigSwitch(4), sched, model="packet", transport=transport, **kw)
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "ps", model="packet", transport="dctcp",
                       ecn_threshold_bytes=3000, init_cwnd_packets=1, max_cwnd_packets=11, limited_transmit=True)


@pytest.mark.parametrize("sched,transport,kw,match", [
    ("srpt", "pfabric", {"clock_granularity_s": 1e-3}, "clock_granularity_s is RFC 6298's G in the estimated RTO; pf"),
    ("ps", "tcp", {"clock_granularity_s": 1e-3, "fixed_rto": True}, "clock_granularity_s .* fixed_rto"),
    ("ps", "dctcp", {"syn_timeout_s": 3.0}, "syn_timeout_s is the handshake's SYN timer: give handshake=True"),
    ("ps", "tcp", {"delayed_ack_timeout_s": 0.05}, "ack_every_segments=1 .* never holds: give ack_every_segments >= 2"),
])
def test_timer_options_nothing_reads_are_refused(sched, transport, kw, match):
    # each ran, with the results of the run without it
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(THREE, flowsched.BigSwitch(4), sched, model="packet", transport=transport, **kw)


def test_the_timer_options_run_where_they_are_read():
    a = flowsched.simulate(THREE, flowsched.BigSwitch(4), "ps", model="packet", transport="tcp", handshake=True,
                           syn_timeout_s=3.0, ack_every_segments=2, delayed_ack_timeout_s=0.05,
                           clock_granularity_s=1e-3)
    assert a.flows["fct_s"].notna().all()


@pytest.mark.parametrize("name,value", [("ecn_threshold_bytes", 3000), ("init_cwnd_packets", 3),
                                        ("max_cwnd_packets", 20), ("limited_transmit", True)])
@pytest.mark.parametrize("transport", flowsched.sim.TRANSPORTS)
def test_transport_options_agree_with_the_core(name, value, transport):
    # flowsched.sim.TRANSPORT_OPTIONS (documented; the CLI reads it) says which transports
    # read an option; the core refuses it for the others ("invalid configuration": the
    # core's words, so the envs' packet path refuses it too)
    sched = {"pfabric": "srpt", "sdc": "sdc", "racs": "racs"}.get(transport, "ps")
    run = lambda: flowsched.simulate(THREE, flowsched.BigSwitch(4), sched, model="packet",  # noqa: E731
                                     transport=transport, **{name: value})
    if transport in flowsched.sim.TRANSPORT_OPTIONS[name]:
        assert run().flows["fct_s"].notna().all()
    else:
        with pytest.raises(ValueError, match=f"invalid configuration: {name} is read by the .* only; this run's "
                                             f"transport is '{transport}'"):
            run()


@pytest.mark.parametrize("transport,kw", [("tcp", {"ecn_threshold_bytes": 3000}), ("rcp", {"limited_transmit": True}),
                                          ("rcp", {"max_cwnd_packets": 20}), ("dctcp", {"syn_timeout_s": 3.0})])
def test_the_token_env_s_packet_path_refuses_options_its_transport_ignores(transport, kw):
    import gymnasium as gym

    from flowsched.envs import ENV_IDS
    # made, and run, without a word before
    with pytest.raises(ValueError, match=f"{next(iter(kw))} is"):
        gym.make(ENV_IDS[0], model="packet", transport=transport, **kw)


@pytest.mark.parametrize("model", ["fluid", "packet"])
def test_results_before_the_end_leave_undecided_deadlines_out(model):
    # flows not yet arrived (or running, before their deadline) were counted as missed: a
    # hit ratio of 0.15 halfway through a run whose full hit ratio was 0.91
    import flowsched.workloads as wl
    tr = wl.add_deadlines(wl.poisson_all_to_all("websearch", 0.5, 8, 10.0, 400, seed=0), slack=(2.0, 4.0),
                          link_gbps=10.0, seed=0)
    sim = flowsched.Simulation(tr, flowsched.BigSwitch(8), "edf", model=model)
    sim.step(float(tr["arrival_s"].median()))
    f = sim.results().flows
    later = f["arrival_s"] > sim.now
    assert later.sum() > 100 and f.loc[later, "deadline_met"].isna().all()
    decided = f["deadline_met"].notna()
    assert (decided <= (f["fct_s"].notna() | (sim.now - f["arrival_s"] > f["deadline_s"]))).all()
    overall = sim.results().summary().overall
    assert overall["deadline_flows"] == decided.sum()
    assert overall["deadline_met"] == f["deadline_met"].fillna(False).sum()
    sim.run()
    end = sim.results()
    assert end.flows["deadline_met"].notna().all()
    whole = flowsched.simulate(tr, flowsched.BigSwitch(8), "edf", model=model)
    assert end.summary().overall == whole.summary().overall


def test_every_listed_scheduler_name_is_one_simulate_takes():
    # SCHEDULERS held the placeholder 'gtcp:<inner>', which code looping over it could not run
    weights = THREE.assign(deadline_s=[1.0, 2.0, 3.0])
    for name in flowsched.SCHEDULERS:
        if name == "external":  # its scores come from a driver (the switch env)
            continue
        assert flowsched.simulate(weights, flowsched.BigSwitch(4), name).flows["fct_s"].notna().all(), name
    assert flowsched.sim.SCHEDULER_PATTERNS == ("gtcp:<inner>",)
    flowsched.simulate(THREE, flowsched.BigSwitch(4), "gtcp:srpt")


@pytest.mark.parametrize("model", ["fluid", "packet"])
@pytest.mark.parametrize("scheduler", [None, 3])
def test_a_scheduler_that_is_not_a_name_is_a_type_error(model, scheduler):
    # AttributeError: 'NoneType' object has no attribute 'strip'
    with pytest.raises(TypeError, match="scheduler must be a scheduler's name"):
        flowsched.simulate(ONE, flowsched.BigSwitch(2), scheduler, model=model)


def test_links_so_slow_that_a_flow_never_ends_are_refused_naming_the_flow():
    # 1e15 bytes at 1e-305 Gbps: "simulation stalled ... no rate" (and numpy's overflow warning)
    import warnings

    tr = ONE.assign(size_bytes=[1e15])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"row 0, column 'size_bytes': 1e15 bytes over its slowest link .* would "
                                             r"take inf s alone"):
            flowsched.simulate(tr, flowsched.BigSwitch(2, 1e-305), "ps")


def test_step_takes_a_number_of_seconds():
    # step("1") ran to 1 s
    s = flowsched.Simulation(ONE, flowsched.BigSwitch(2), "ps")
    with pytest.raises(TypeError, match="until must be a time in seconds"):
        s.step("1")
    s.step(np.float32(1e-4))  # numpy numbers are numbers
    assert s.now == pytest.approx(1e-4)


@pytest.mark.parametrize("name", ["ack_every_segments", "buffer_packets", "ecn_threshold_packets", "dupack_threshold",
                                  "mss_bytes", "header_bytes"])
def test_packet_counts_beyond_the_core_s_32_bits_name_the_bound(name):
    # "packet option dupack_threshold: OverflowError: out of range integral type conversion attempted"
    with pytest.raises(ValueError, match=rf"{name} must be an integer >= \d \(below 2\*\*32\), got 1099511627776"):
        flowsched.simulate(ONE, flowsched.BigSwitch(2), "ps", model="packet", **{name: 2**40})


def test_graph_host_indices_outside_the_nodes_are_named():
    # OverflowError: out of range integral type conversion attempted
    from flowsched.topology import Graph
    for h in (-1, 2**40):
        with pytest.raises(ValueError, match=rf"Graph: hosts\[1\] = {h} is not a node index \(0..2\)"):
            Graph(["a", "b", "s"], [0, h], [0, 2, 2, 1], [2, 0, 1, 2], [1.0] * 4)
