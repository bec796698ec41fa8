"""benchmarks/compare_packet.py: the comparison with packet-level references (issue 19's evidence).

The comparison code on hand-made fixtures (bucket edges, flows finished in both, criteria, the
peers' output formats, the command line), the stored CI references in tests/data/packet_refs/,
and, once flowsched has ``simulate(..., model="packet")``, the small version of each comparison
(mean FCT within 10% of ns-3 tcp, ns-3 dctcp and YAPS pfabric on a 300-flow trace).
"""
from __future__ import annotations

import importlib.util
import lzma
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flowsched

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "packet_refs"

_spec = importlib.util.spec_from_file_location("compare_packet", ROOT / "benchmarks" / "compare_packet.py")
cp = importlib.util.module_from_spec(_spec)
sys.modules["compare_packet"] = cp  # dataclasses look their module up there
assert _spec.loader is not None
_spec.loader.exec_module(cp)


def ref_frame(sizes, fcts):
    """A reference in compare_packet's format; an fct of None is a flow the reference did not finish."""
    fin = [f is not None for f in fcts]
    return pd.DataFrame({"id": np.arange(len(sizes), dtype=np.int64), "size_bytes": np.asarray(sizes, np.int64),
                         "fct_s": [np.nan if f is None else f for f in fcts], "finished": fin})


def ours_frame(fcts):
    return pd.DataFrame({"id": np.arange(len(fcts)), "fct_s": [np.nan if f is None else f for f in fcts]})


# ----------------------------------------------------------------------------- buckets


def test_bucket_edges_are_flowsched_metrics_left_closed():
    sizes = [99_999, 100_000, 9_999_999, 10_000_000, 1_460]
    ref = ref_frame(sizes, [1.0, 2.0, 3.0, 4.0, 5.0])
    c = cp.compare(ours_frame([1.0, 2.0, 3.0, 4.0, 5.0]), ref)
    labels = flowsched.metrics.bucket_labels(flowsched.metrics.DEFAULT_BUCKETS_BYTES)
    assert [b.label for b in c.buckets] == labels
    assert [b.n_flows for b in c.buckets] == [2, 2, 1]
    assert c.buckets[0].ref_mean_s == pytest.approx(3.0)  # 99,999 B and 1,460 B
    assert c.buckets[1].ref_mean_s == pytest.approx(2.5)  # exactly 100 KB goes in the middle bucket
    assert c.buckets[2].ref_mean_s == pytest.approx(4.0)  # exactly 10 MB goes in the top bucket


def test_buckets_use_reference_sizes_and_count_mismatches():
    ref = ref_frame([50_000, 200_000], [1.0, 1.0])
    ours = ours_frame([1.0, 1.0]).assign(size_bytes=[50_000.0, 20_000_000.0])
    c = cp.compare(ours, ref)
    assert [b.n_flows for b in c.buckets] == [1, 1, 0]
    assert c.size_mismatches == 1


# ----------------------------------------------------------------------------- finished in both


def test_means_and_ratios_are_over_flows_finished_in_both():
    #        ours:  1    2     None  4   ; reference: 2  None  3   4
    ref = ref_frame([1_000] * 4, [2.0, None, 3.0, 4.0])
    c = cp.compare(ours_frame([1.0, 2.0, None, 4.0]), ref)
    o = c.overall
    assert (o.n_flows, o.n_both, o.ours_finished, o.ref_finished) == (4, 2, 3, 3)
    assert o.ours_mean_s == pytest.approx(2.5) and o.ref_mean_s == pytest.approx(3.0)
    assert o.ratio == pytest.approx(2.5 / 3.0)


def test_missing_and_extra_ids_and_terminated_flows():
    ref = ref_frame([1_000] * 3, [1.0, 1.0, 1.0])
    ours = pd.DataFrame({"id": [0, 1, 7], "fct_s": [1.0, 2.0, 1.0], "terminated": [False, True, False]})
    c = cp.compare(ours, ref)
    assert c.missing_in_ours == 1 and c.extra_in_ours == 1
    assert c.overall.ours_finished == 1 and c.overall.n_both == 1  # the terminated flow is not finished


def test_empty_group_gives_nan_not_an_error():
    c = cp.compare(ours_frame([1.0]), ref_frame([1_000], [None]))
    assert c.overall.n_both == 0 and math.isnan(c.overall.ratio)


# ----------------------------------------------------------------------------- criteria


@pytest.mark.parametrize(
    "transport, overall, ok",
    [("dctcp", 1.09, True), ("dctcp", 1.11, False), ("tcp", 0.91, True), ("tcp", 0.89, False),
     ("pfabric", 1.049, True), ("pfabric", 1.051, False), ("pfabric", 0.951, True)],
)
def test_overall_criterion(transport, overall, ok):
    ref = ref_frame([1_000, 2_000], [1.0, 1.0])
    c = cp.compare(ours_frame([overall, overall]), ref, criteria=transport)
    assert c.passed is ok
    assert c.criteria == cp.CRITERIA[transport]


def test_bucket_criterion_and_empty_buckets_are_skipped():
    # overall ratio 1.0 but the small bucket is 25% fast and the middle one 25% slow (the mean is
    # dominated by equal weights here); no flow is over 10 MB, so that bucket cannot fail
    ref = ref_frame([1_000, 1_000_000], [1.0, 1.0])
    c = cp.compare(ours_frame([0.75, 1.25]), ref, criteria="dctcp")
    assert c.overall.ratio == pytest.approx(1.0)
    assert len(c.failures) == 2 and all("outside 1 +- 0.2" in f for f in c.failures)
    assert cp.compare(ours_frame([0.85, 1.15]), ref, criteria="dctcp").passed
    assert not cp.compare(ours_frame([0.85, 1.15]), ref, criteria="pfabric").passed  # 10% per bucket
    assert cp.compare(ours_frame([0.85, 1.15]), ref, criteria=(0.1, 0.15)).passed


def test_every_flow_must_finish_in_ours_but_not_in_the_reference():
    ref = ref_frame([1_000] * 3, [1.0, 1.0, None])
    assert cp.compare(ours_frame([1.0, 1.0, 5.0]), ref, criteria="tcp").passed  # reference's own loss: reported
    c = cp.compare(ours_frame([1.0, 1.0, None]), ref, criteria="tcp")
    assert not c.passed and "1 of 3 flows not finished" in c.failures[0]
    assert cp.compare(ours_frame([1.0, 1.0, None]), ref, criteria="tcp", require_all_finished=False).passed


# ----------------------------------------------------------------------------- formats


NS3_RAW = """# ns-3 ns3::TcpDctcp on a 4-host big switch, ...
id,size_bytes,src,dst,arrival_s,connected_s,finish_s,fct_s,fct_with_handshake_s
0,8760,0,1,0.000001000,0.000002000,0.000012000,0.000010000,0.000011000
1,2000000,2,3,0.000002000,0.000003000,-1.000000000,-1.000000000,-1.000000000
"""

YAPS_RAW = """Flow 0 1e-06 8760 0 1
Flow 1 2e-06 2000000 2 3
0 8760 0 1 1.0000 11.0000 10.0000 9.2640 1.0794 6/6//6 0/0/0 0.0000
2026-11-26.12:00:00 Simulator ended. Execution time: 1.000000000 seconds
"""


def test_reads_ns3_raw_output(tmp_path):
    p = tmp_path / "ns3.csv"
    p.write_text(NS3_RAW)
    ref = cp.load_reference(p)
    assert ref["finished"].tolist() == [True, False]
    assert ref["fct_s"].iloc[0] == pytest.approx(1e-5) and math.isnan(ref["fct_s"].iloc[1])
    # ns-3's FCT from the arrival, its handshake included, comes along (run --handshake compares with it)
    assert ref[cp.HANDSHAKE_COLUMN].iloc[0] == pytest.approx(1.1e-5) and math.isnan(ref[cp.HANDSHAKE_COLUMN].iloc[1])
    hs = cp.with_handshake(ref)
    assert list(hs.columns) == cp.REF_COLUMNS
    assert hs["fct_s"].iloc[0] == pytest.approx(1.1e-5) and hs["finished"].tolist() == [True, False]


def test_reads_yaps_raw_output_with_the_trace(tmp_path):
    p = tmp_path / "yaps.out"
    p.write_text(YAPS_RAW)
    trace = pd.DataFrame({"id": [0, 1], "arrival_s": [1e-6, 2e-6], "src": [0, 2], "dst": [1, 3],
                          "size_bytes": [8760, 2_000_000]})
    ref = cp.load_reference(p, trace=trace)
    assert ref["id"].tolist() == [0, 1] and ref["finished"].tolist() == [True, False]
    assert ref["fct_s"].iloc[0] == pytest.approx(10e-6)
    assert ref["size_bytes"].tolist() == [8760, 2_000_000]
    assert len(cp.load_reference(p)) == 1  # without the trace the unfinished flow is unknown


def test_reference_format_round_trip(tmp_path):
    ref = ref_frame([1_000, 2_000_000, 30_000_000], [1.25e-5, None, 0.0312345678])
    p = tmp_path / "r.csv.xz"
    cp.write_reference(ref, p)
    assert lzma.decompress(p.read_bytes()).decode().splitlines()[0] == "id,size_bytes,fct_s,finished"
    back = cp.load_reference(p)
    pd.testing.assert_series_equal(back["finished"], ref["finished"], check_names=False)
    np.testing.assert_allclose(back["fct_s"], ref["fct_s"], rtol=1e-9)


def test_reference_format_keeps_the_handshake_column(tmp_path):
    ref = ref_frame([1_000, 2_000_000], [1.25e-5, None]).assign(**{cp.HANDSHAKE_COLUMN: [2.5e-5, np.nan]})
    p = tmp_path / "r.csv.xz"
    cp.write_reference(ref, p)
    header = lzma.decompress(p.read_bytes()).decode().splitlines()[0]
    assert header == f"id,size_bytes,fct_s,finished,{cp.HANDSHAKE_COLUMN}"
    back = cp.load_reference(p)
    np.testing.assert_allclose(back[cp.HANDSHAKE_COLUMN], [2.5e-5, np.nan], rtol=1e-9)
    assert cp.with_handshake(back)["fct_s"].iloc[0] == pytest.approx(2.5e-5)
    # a reference without it (YAPS's, ns-3's stored before the column) is refused, saying what is missing
    with pytest.raises(ValueError, match=cp.HANDSHAKE_COLUMN):
        cp.with_handshake(ref_frame([1_000], [1e-5]))


def test_accepts_results_frames_and_csv(tmp_path):
    tr = pd.DataFrame({"arrival_s": [0.0, 0.0], "src": [0, 0], "dst": [1, 1], "size_bytes": [1.25e6, 2.5e6]})
    res = flowsched.simulate(tr, flowsched.BigSwitch(2, 10), "srpt", progress=False)
    ref = ref_frame([1_250_000, 2_500_000], [0.001, 0.003])
    for ours in (res, res.flows):
        c = cp.compare(ours, ref, criteria="pfabric")
        assert c.overall.ratio == pytest.approx(1.0) and c.passed
    csv = tmp_path / "ours.csv"
    res.flows[["id", "fct_s"]].to_csv(csv, index=False)
    assert cp.compare(csv, ref).overall.ratio == pytest.approx(1.0)


def test_summarize_reference():
    s = cp.summarize_reference(ref_frame([1_000, 1_000, 200_000, 20_000_000], [1.0, 3.0, 5.0, None]))
    assert s["finished"] == 3 and s["mean_s"] == pytest.approx(3.0)
    assert s["buckets"]["< 100 KB"]["mean_s"] == pytest.approx(2.0)
    assert s["buckets"][">= 10 MB"]["finished"] == 0
    assert s["small_p99_s"] == pytest.approx(np.quantile([1.0, 3.0], 0.99))


# ----------------------------------------------------------------------------- command line


def test_cli_compare_exit_codes(tmp_path, capsys):
    ref = tmp_path / "ns3_dctcp_toy.csv.xz"
    cp.write_reference(ref_frame([1_000, 2_000], [1.0, 1.0]), ref)
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    ours_frame([1.05, 1.05]).to_csv(good, index=False)
    ours_frame([1.5, 1.5]).to_csv(bad, index=False)
    assert cp.main(["compare", str(good), str(ref), "--criteria"]) == 0
    assert cp.main(["compare", str(bad), str(ref)]) == 0  # no criteria: report only
    assert cp.main(["compare", str(bad), str(ref), "--criteria"]) == 1
    assert cp.main(["compare", str(good), str(ref), "--criteria", "0.01,0.01"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_cli_run_says_when_there_is_no_packet_model(capsys):
    if cp.has_packet_model():
        pytest.skip("flowsched has the packet model")
    assert cp.main(["run", "ns3_dctcp_ws_h144_n1500_seed2"]) == 2
    assert "no model= argument yet" in capsys.readouterr().out


# ----------------------------------------------------------------------------- stored CI references


FIXTURE_TRACE = "ws_h16_n300_seed2"
FIXTURES = {"ns3_tcp": "tcp", "ns3_dctcp": "dctcp", "yaps_pfabric": "pfabric", "ns3_tcpsack": "tcp",
            "ns3_dctcpsack": "dctcp"}


def fixture_trace() -> pd.DataFrame:
    return cp.read_trace(DATA / f"{FIXTURE_TRACE}.csv.xz")


def test_stored_references_cover_the_fixture_trace():
    trace = fixture_trace()
    assert len(trace) == 300
    for key in FIXTURES:
        ref = cp.load_reference(DATA / f"{key}_{FIXTURE_TRACE}.csv.xz")
        assert ref["id"].tolist() == trace["id"].tolist()
        assert ref["size_bytes"].tolist() == trace["size_bytes"].tolist()
        assert ref["finished"].all()
        c = cp.compare(ref.assign(fct_s=ref["fct_s"] * 1.01), ref, criteria=FIXTURES[key])
        assert c.passed and c.overall.ratio == pytest.approx(1.01)


def test_fluid_model_against_the_stored_references():
    # for scale, and so that the fluid model's side of the comparison keeps working: the fluid
    # model is the ideal, below every packet-level reference on this trace
    trace = fixture_trace()
    for key in FIXTURES:
        setting = cp.SETTINGS[key]
        res = cp.run_flowsched(trace, setting, model="fluid", hosts=16)
        c = cp.compare(res, cp.load_reference(DATA / f"{key}_{FIXTURE_TRACE}.csv.xz"))
        assert c.overall.n_both == 300
        assert 0.3 < c.overall.ratio < 1.0


#: A known deviation (docs/packet.md, "Against ns-3 and YAPS"): the packet model's RFC 5681 / 6582 NewReno
#: finishes flows above 100 KB 20 to 30% sooner than ns-3's TcpNewReno without SACK, whose SACK blocks guessed
#: from duplicate ACKs start fast recoveries on a single duplicate ACK and cut ssthresh to as little as 2
#: segments, then time out (on this fixture: 4,486.7 against 5,595.4 us). Strict: the mark must go when a
#: change makes the packet model pass.
_KNOWN_DEVIATIONS = {"ns3_tcp": "packet tcp ends ~20% below ns-3 NewReno (ns-3's guessed-SACK NewReno re-enters "
                                "fast recovery on one duplicate ACK and times out; docs/packet.md)"}


@pytest.mark.skipif(not cp.has_packet_model(), reason="flowsched has no packet model yet (issue 19)")
@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=_KNOWN_DEVIATIONS[k]))
                                 if k in _KNOWN_DEVIATIONS else k for k in sorted(FIXTURES)])
def test_packet_model_within_10_percent_of_the_references(key):
    trace = fixture_trace()
    res = cp.run_flowsched(trace, cp.SETTINGS[key], model="packet", hosts=16)
    c = cp.compare(res, cp.load_reference(DATA / f"{key}_{FIXTURE_TRACE}.csv.xz"), criteria=(0.10, math.inf))
    assert c.passed, c.format()


@pytest.mark.skipif(not cp.has_packet_model(), reason="flowsched has no packet model yet (issue 19)")
@pytest.mark.parametrize("key", ["ns3_tcpsack", "ns3_dctcpsack", "ns3_dctcp"])
def test_packet_model_with_handshakes_meets_the_criteria_against_ns3(key):
    # both sides with their handshake and the FCT from the flow's arrival: the comparison of the same experiment
    # (ns-3's fct_s starts at its connection, one round trip after the flow's arrival)
    trace = fixture_trace()
    res = cp.run_flowsched(trace, cp.SETTINGS[key], model="packet", hosts=16, overrides=cp.HANDSHAKE_OPTIONS)
    assert res.packet["syn_packets"] >= len(trace)
    ref = cp.with_handshake(cp.load_reference(DATA / f"{key}_{FIXTURE_TRACE}.csv.xz"))
    c = cp.compare(res, ref, criteria=FIXTURES[key])
    assert c.passed, c.format()


def test_cli_run_with_handshakes_needs_the_column(capsys):
    # YAPS reports no handshake: its reference has no such column
    with pytest.raises(SystemExit, match="fct_handshake_s"):
        cp.main(["run", str(DATA / f"yaps_pfabric_{FIXTURE_TRACE}.csv.xz"), "--handshake",
                 "--trace", str(DATA / f"{FIXTURE_TRACE}.csv.xz")])


def test_make_traces_regenerates_the_fixture_trace():
    # the references' traces are regenerated, not stored (benchmarks/references/make_traces.py): if
    # flowsched's generator changes its draws, this fails; then store the traces or pin the old draw
    spec = importlib.util.spec_from_file_location("make_traces", ROOT / "benchmarks" / "references" / "make_traces.py")
    mt = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mt)
    text = mt.build(FIXTURE_TRACE)
    assert text == lzma.decompress((DATA / f"{FIXTURE_TRACE}.csv.xz").read_bytes()).decode()
    first = mt.to_yaps_text(pd.read_csv(DATA / f"{FIXTURE_TRACE}.csv.xz").head(1)).split()
    assert first[1:4] == [f"{fixture_trace()['arrival_s'][0]:.12f}", "0", "0"] and len(first) == 9
