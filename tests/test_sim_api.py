"""The Python API of the simulator: simulate(), Results, errors, the CLI and the native stub."""
from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowsched
import flowsched.sim
from flowsched import workloads

UNIT_GBPS = 8e-9  # 1 byte/s


def small_trace() -> pd.DataFrame:
    return workloads.poisson_all_to_all("websearch", 0.7, 8, 10.0, 400, seed=3)


def test_docstring_examples():
    assert doctest.testmod(flowsched.sim, raise_on_error=False).failed == 0


def test_results_columns_and_units():
    tr = small_trace()
    r = flowsched.simulate(tr, flowsched.BigSwitch(8, 10.0), "srpt")
    assert list(r.flows.columns) == [
        "id", "arrival_s", "src", "dst", "size_bytes", "deadline_s", "weight", "finish_s", "fct_s",
        "ideal_fct_s", "slowdown", "deadline_met", "terminated", "bytes_sent", "path_delay_s",
    ]
    f = r.flows
    np.testing.assert_array_equal(f["id"], tr["id"])
    # Alone on an idle 10 Gbps path a flow takes size / 1.25e9 s.
    np.testing.assert_allclose(f["ideal_fct_s"], tr["size_bytes"] / 1.25e9, rtol=1e-12)
    assert (f["slowdown"] >= 1 - 1e-9).all()
    np.testing.assert_allclose(f["bytes_sent"], f["size_bytes"], rtol=1e-12)
    assert f["deadline_met"].isna().all()
    assert len(r.links) == 16 and set(r.links.columns) == {"link", "capacity_Bps", "bytes"}
    s = r.summary()
    assert s.overall["count"] == len(tr)


def test_delay_is_added_per_hop():
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1.0]})
    r = flowsched.simulate(tr, flowsched.BigSwitch(2, UNIT_GBPS), "ps", delay_us=5.0)
    assert r.flows["fct_s"].iloc[0] == pytest.approx(1.0 + 2 * 5e-6, rel=1e-12)
    ls = flowsched.LeafSpine(2, 1, 1, UNIT_GBPS, UNIT_GBPS)
    r = flowsched.simulate(tr, ls, "ps", delay_us=5.0)  # host 0 -> host 1 crosses a spine: 4 hops
    assert r.flows["fct_s"].iloc[0] == pytest.approx(1.0 + 4 * 5e-6, rel=1e-12)


def test_deadlines_met_and_terminated():
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1.0, 3.0],
                       "deadline_s": [1.5, 2.0]})
    r = flowsched.simulate(tr, flowsched.BigSwitch(2, UNIT_GBPS), "edf", terminate_missed=True)
    assert r.flows["deadline_met"].tolist() == [True, False]
    assert r.flows["terminated"].tolist() == [False, True]
    assert np.isnan(r.flows["fct_s"].iloc[1])
    assert r.summary().overall["deadline_hit_ratio"] == 0.5


def test_admission_k_and_window_from_python():
    tr = pd.DataFrame({"arrival_s": [0.0] * 3, "src": [1, 2, 3], "dst": [0, 0, 0], "size_bytes": [3.0, 2.0, 1.0]})
    r = flowsched.simulate(tr, flowsched.BigSwitch(4, UNIT_GBPS), "ps", admission="srpt", k=1, window=2)
    np.testing.assert_allclose(r.flows["fct_s"], [6.0, 2.0, 3.0])


def test_same_seed_same_results_leafspine_random():
    tr = small_trace()
    topo = flowsched.LeafSpine(2, 4, 2, 10.0, 10.0, ecmp_seed=7)
    a = flowsched.simulate(tr, topo, "random", seed=1).flows
    b = flowsched.simulate(tr, topo, "random", seed=1).flows
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = flowsched.simulate(tr, topo, "random", seed=2).flows
    assert not np.array_equal(a["fct_s"], c["fct_s"])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"scheduler": "bogus"}, "unknown scheduler 'bogus'"),
        ({"scheduler": "srpt", "admission": "nope", "k": 1}, "unknown admission policy"),
        ({"scheduler": "srpt", "admission": "fifo"}, "needs k"),
        ({"scheduler": "pias", "pias_thresholds_bytes": [5.0, 2.0]}, "strictly increasing"),
        ({"scheduler": "racs", "racs": {"speed": 1}}, "unknown racs parameter"),
        ({"scheduler": "gtcp:srpt", "k": 2}, "gtcp with destination admission"),
        ({"scheduler": "srpt", "delay_us": -1.0}, "delay_us"),
        ({"scheduler": "sdc", "sdc": {"thresholds_bytes": (1e5,)}}, r"sdc\['thresholds_bytes'\] must have 2 values"),
        ({"scheduler": "sdc", "sdc": {"weights": (4.0, 3.0, 2.0, 1.0)}}, r"sdc\['weights'\] must have 3 values"),
    ],
)
def test_bad_options_say_what_is_wrong(kwargs, match):
    with pytest.raises(ValueError, match=match):
        flowsched.simulate(small_trace(), flowsched.BigSwitch(8, 10.0), **kwargs)


def test_bad_trace_names_row_and_column():
    tr = small_trace()
    tr.loc[5, "dst"] = 99
    with pytest.raises(flowsched.TraceError, match=r"row 5.*dst|dst.*row 5"):
        flowsched.simulate(tr, flowsched.BigSwitch(8, 10.0), "srpt")


def test_hidden_sizes_refused_by_size_based_schedulers_only():
    tr = small_trace()
    tr["size_known"] = False
    with pytest.raises(ValueError, match="size_known = false"):
        flowsched.simulate(tr, flowsched.BigSwitch(8, 10.0), "srpt")
    for s in ("las", "asrpt", "fifo", "ps"):
        flowsched.simulate(tr, flowsched.BigSwitch(8, 10.0), s)


def test_heterogeneous_host_rates():
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1.25e6]})
    r = flowsched.simulate(tr, flowsched.BigSwitch(2, [10.0, 1.0]), "ps")
    assert r.flows["fct_s"].iloc[0] == pytest.approx(0.01)  # bottleneck: 1 Gbps downlink
    with pytest.raises(ValueError, match="host 1"):
        flowsched.BigSwitch(2, [10.0, -1.0])


def test_cli_generate_and_simulate(tmp_path: Path):
    trace = tmp_path / "t.csv"
    out = tmp_path / "r.parquet"

    def run(*a):
        return subprocess.run([sys.executable, "-m", "flowsched.cli", *a], capture_output=True, text=True)

    g = run("generate", "--workload", "websearch", "--load", "0.5", "--hosts", "4", "--flows", "200",
            "--seed", "1", "--out", str(trace))
    assert g.returncode == 0, g.stderr
    s = run("simulate", "--trace", str(trace), "--scheduler", "srpt", "--hosts", "4", "--out", str(out))
    assert s.returncode == 0, s.stderr
    assert "FCT mean (ms)" in s.stdout
    res = pd.read_parquet(out)
    direct = flowsched.simulate(flowsched.read_trace(trace), flowsched.BigSwitch(4, 10.0), "srpt").flows
    np.testing.assert_array_equal(res["fct_s"].to_numpy(), direct["fct_s"].to_numpy())
    bad = run("simulate", "--trace", str(trace), "--scheduler", "nope", "--hosts", "4")
    assert bad.returncode == 2 and "unknown scheduler 'nope'" in bad.stderr
    bad = run("simulate", "--trace", str(trace), "--topology", "leafspine", "--hosts", "4")
    assert bad.returncode == 2 and "--hosts applies to the big switch" in bad.stderr
    bad = run("simulate", "--trace", str(trace), "--hosts", "4", "--out", str(tmp_path / "r.txt"))
    assert bad.returncode == 2 and "--out must end in .csv or .parquet" in bad.stderr
    # the Table-2 comparison against another scheduler on the same trace
    c = run("simulate", "--trace", str(trace), "--scheduler", "srpt", "--hosts", "4", "--compare", "ps")
    assert c.returncode == 0, c.stderr
    want = direct.pipe(lambda d: flowsched.compare(
        d, flowsched.simulate(flowsched.read_trace(trace), flowsched.BigSwitch(4, 10.0), "ps").flows))["overall"]
    assert f"{want['faster_pct']:.1f}% of flows faster, {want['slower_pct']:.1f}% slower" in c.stdout


def test_simulate_takes_the_keywords_of_simulation_and_progress():
    """simulate() is a short use of Simulation: its signature is Simulation's (names, order,
    defaults) plus ``progress``, so an option added to one cannot be forgotten in the other."""
    import inspect

    def params(f, drop=()):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values() if p.name not in drop]

    assert params(flowsched.simulate, drop=("progress",)) == params(flowsched.Simulation.__init__, drop=("self",))
    assert "progress" in inspect.signature(flowsched.simulate).parameters


def test_simulate_refuses_external_admission_without_a_driver():
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e3]})
    with pytest.raises(ValueError, match="needs a driver"):
        flowsched.simulate(tr, flowsched.BigSwitch(2, 10), "ps", admission="external", k=1)


def test_native_stub_matches_the_extension():
    cfg = Path(__file__).with_name("stubtest.ini")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "flowsched._fabric", "--mypy-config-file", str(cfg)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
