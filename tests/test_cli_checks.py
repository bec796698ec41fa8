"""The command line's argument checks: a bad or inapplicable option is refused before any
run, with one line on stderr naming it and exit status 2; nothing is silently ignored."""
from __future__ import annotations

import subprocess
import sys

import pytest

from flowsched.cli import main
from flowsched.traces import write_trace
from flowsched.workloads import poisson_all_to_all


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "t.csv"
    write_trace(poisson_all_to_all("websearch", 0.5, 8, 10.0, 200, seed=1), path)
    return str(path)


def refused(capsys, argv, *needles):
    """``argv`` exits with 2, prints nothing on stdout (nothing ran) and one error line that
    holds every needle; returns that line."""
    capsys.readouterr()
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"flowsched {argv[0]}: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.mark.parametrize("seed", ["-3", "-1", str(2**64), "99999999999999999999999"])
def test_simulate_seed_out_of_range(trace, capsys, seed):
    refused(capsys, ["simulate", "--trace", trace, "--scheduler", "srpt", "--seed", seed, "-q"],
            "--seed", "[0, 2**64)", seed)


def test_simulate_seed_range_ends(trace, capsys):
    for seed in ("0", str(2**64 - 1)):
        assert main(["simulate", "--trace", trace, "--seed", seed, "--topology", "leafspine", "--tors", "2",
                     "--hosts-per-tor", "4", "-q"]) == 0


def test_generate_negative_seed(tmp_path, capsys):
    refused(capsys, ["generate", "--load", "0.5", "--hosts", "8", "--flows", "10", "--seed", "-1", "--out",
                     str(tmp_path / "t.csv"), "-q"], "--seed must be >= 0, got -1")
    assert not (tmp_path / "t.csv").exists()


def test_seed_error_is_one_line_without_traceback(trace):
    p = subprocess.run([sys.executable, "-m", "flowsched.cli", "simulate", "--trace", trace, "--seed", "-3"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and "--seed" in p.stderr


@pytest.mark.parametrize("names", [("srpt", "srtp"), ("srtp", "ps"), ("ga:las", None), ("gtcp:wps", "srpt")])
def test_scheduler_names_checked_before_any_run(trace, capsys, names):
    scheduler, compare = names
    argv = ["simulate", "--trace", trace, "--scheduler", scheduler, "-q"]
    if compare is not None:
        argv += ["--compare", compare]
    bad = scheduler if compare is None or compare in ("ps", "srpt") else compare
    refused(capsys, argv, bad)


def test_empty_compare_is_refused(trace, capsys):
    refused(capsys, ["simulate", "--trace", trace, "--compare", "", "-q"], "unknown scheduler ''")


@pytest.mark.parametrize("extra, needles", [
    (["--topology", "fattree", "--tors", "3", "--spines", "7", "--hosts-per-tor", "2"],
     ["--tors, --hosts-per-tor and --spines apply to the leaf-spine", "--topology fattree"]),
    (["--topology", "bigswitch", "--tors", "2"], ["--tors applies to the leaf-spine", "--topology bigswitch"]),
    (["--tors", "2"], ["--tors", "--topology bigswitch"]),
    (["--topology", "bigswitch", "--core-gbps", "40"], ["--core-gbps", "the big switch"]),
    (["--topology", "bigswitch", "--fattree-k", "4"], ["--fattree-k applies to the fat-tree", "bigswitch"]),
    (["--topology", "leafspine", "--oversubscription", "1"], ["--oversubscription", "--topology leafspine"]),
    (["--topology", "leafspine", "--hosts", "8"], ["--hosts applies to the big switch and the parking lot",
                                                   "--topology leafspine"]),
    (["--topology", "fattree", "--hosts", "8"], ["--hosts", "--topology fattree"]),
    (["--topology", "parkinglot", "--spines", "2"], ["--spines", "--topology parkinglot"]),
    (["--topology", "fattree", "--hosts", "8", "--tors", "2"], ["--hosts applies to the big switch",
                                                                "--tors applies to the leaf-spine", "fattree"]),
])
def test_topology_options_for_another_topology(trace, capsys, extra, needles):
    refused(capsys, ["simulate", "--trace", trace, *extra, "-q"], *needles)


def test_topology_options_at_their_default_value_are_still_refused(trace, capsys):
    """Given explicitly is given: the default value is no excuse."""
    refused(capsys, ["simulate", "--trace", trace, "--topology", "leafspine", "--fattree-k", "4", "-q"],
            "--fattree-k")


def test_parking_lot_hosts_bounded(trace, capsys):
    refused(capsys, ["simulate", "--trace", trace, "--topology", "parkinglot", "--hosts", str(2**40), "-q"],
            "--hosts", "MAX_HOSTS")


@pytest.mark.parametrize("extra, needles", [
    (["--scheduler", "srpt", "--pias-thresholds", "1000"], ["--pias-thresholds applies to pias", "'srpt'"]),
    (["--scheduler", "srpt", "--compare", "ps", "--pias-thresholds", "1000"],
     ["--pias-thresholds", "--scheduler 'srpt' nor --compare 'ps'"]),
    (["--scheduler", "srpt", "--pias-thresholds", ""], ["--pias-thresholds", "'srpt'"]),
    (["--scheduler", "las", "--pias-sharing", "fair"], ["--pias-sharing applies to the pias scheduler", "'las'"]),
    (["--scheduler", "srpt", "--compare", "ps", "--pias-sharing", "fifo"], ["--pias-sharing", "'ps'"]),
    (["--scheduler", "srpt", "--incomplete-sharing", "fair"], ["--incomplete-sharing applies to the GA transform",
                                                               "'srpt'"]),
    (["--scheduler", "srpt", "--model", "packet", "--pias-thresholds", "1000"], ["--pias-thresholds", "'srpt'"]),
])
def test_scheduler_options_for_another_scheduler(trace, capsys, extra, needles):
    refused(capsys, ["simulate", "--trace", trace, *extra, "-q"], *needles)


def test_malformed_pias_thresholds(trace, capsys):
    refused(capsys, ["simulate", "--trace", trace, "--scheduler", "pias", "--pias-thresholds", "", "-q"],
            "--pias-thresholds: expected comma-separated numbers")


@pytest.mark.parametrize("extra, needles", [
    (["--window", "2"], ["--window", "--k"]),
    (["--admission", "edf"], ["--admission", "--k"]),
    (["--k", str(2**64)], ["--k must be an integer in [1, 2**64)"]),
    (["--k", "2", "--window", "99999999999999999999999"], ["--window must be an integer in [1, 2**64)"]),
    (["--k", "2", "--window", "0"], ["--window"]),
])
def test_admission_options(trace, capsys, extra, needles):
    refused(capsys, ["simulate", "--trace", trace, *extra, "-q"], *needles)


@pytest.mark.parametrize("extra", [
    [],
    ["--scheduler", "pias", "--pias-thresholds", "1000,100000", "--pias-sharing", "fair"],
    ["--scheduler", "gtcp:pias", "--pias-thresholds", "1000,100000"],
    # the option goes to the run that reads it, whether --scheduler or --compare
    ["--scheduler", "srpt", "--compare", "pias", "--pias-thresholds", "1000", "--pias-sharing", "fair"],
    ["--scheduler", "asrpt", "--compare", "srpt", "--incomplete-sharing", "fair"],
    ["--k", "2", "--window", "3"],
    ["--admission", "edf", "--k", "2"],
    ["--topology", "bigswitch", "--hosts", "8", "--link-gbps", "10"],
    ["--topology", "leafspine", "--tors", "2", "--hosts-per-tor", "4", "--spines", "2", "--core-gbps", "40"],
    ["--topology", "fattree", "--fattree-k", "4", "--oversubscription", "1", "--core-gbps", "10"],
    ["--topology", "parkinglot", "--hosts", "8", "--link-gbps", "10", "--core-gbps", "20"],
    ["--model", "packet", "--scheduler", "pias", "--compare", "ps", "--pias-thresholds", "10000"],
])
def test_valid_commands_still_run(trace, capsys, extra):
    capsys.readouterr()
    assert main(["simulate", "--trace", trace, *extra, "-q"]) == 0
    out, err = capsys.readouterr()
    assert "FCT mean (ms)" in out and "error" not in err
    if "--compare" in extra:
        assert " against " in out


def test_compare_with_thresholds_only_for_the_pias_run(trace, capsys):
    """--compare srpt with --scheduler pias --pias-thresholds: the pias run reads the thresholds,
    srpt's run is the plain srpt."""
    import flowsched

    tr = flowsched.read_trace(trace)
    topo = flowsched.BigSwitch(8, 10.0)
    capsys.readouterr()
    assert main(["simulate", "--trace", trace, "--scheduler", "pias", "--pias-thresholds", "1000",
                 "--compare", "srpt", "-q"]) == 0
    out = capsys.readouterr().out
    want = flowsched.compare(flowsched.simulate(tr, topo, "pias", pias_thresholds_bytes=[1000.0]).flows,
                             flowsched.simulate(tr, topo, "srpt").flows)["overall"]
    assert f"{want['faster_pct']:.1f}% of flows faster, {want['slower_pct']:.1f}% slower" in out


def test_simulate_refuses_to_overwrite_its_trace_or_one_output_with_another(trace, tmp_path, capsys):
    # --out on the trace replaced it with the results (exit 0); --summary-json on --out
    # left JSON where the per-flow results were meant to be
    before = open(trace).read()
    refused(capsys, ["simulate", "--trace", trace, "--out", trace, "-q"], "--out and --trace name the same file")
    assert open(trace).read() == before
    out = str(tmp_path / "r.csv")
    refused(capsys, ["simulate", "--trace", trace, "--out", out, "--summary-json", str(tmp_path / "." / "r.csv"),
                     "-q"], "--summary-json and --out name the same file")


def test_simulate_summary_json_is_json_without_nan(trace, tmp_path):
    # a trace without deadlines: the hit ratio is NaN, which json.dumps wrote as NaN
    path = tmp_path / "s.json"
    assert main(["simulate", "--trace", trace, "--summary-json", str(path), "-q"]) == 0
    text = path.read_text()
    import json

    summary = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert summary["overall"]["deadline_hit_ratio"] is None
    assert summary["overall"]["count"] == 200


def test_simulate_output_suffixes_are_case_insensitive(trace, tmp_path):
    assert main(["simulate", "--trace", trace, "--out", str(tmp_path / "R.CSV"), "-q"]) == 0
    assert (tmp_path / "R.CSV").read_text().startswith("id,")


def test_simulate_pins_on_the_default_big_switch_name_the_file_and_line(tmp_path, capsys):
    path = tmp_path / "pin.csv"
    path.write_text("arrival_s,src,dst,size_bytes,path\n0,0,1,100,\n0,1,0,100,1>0\n")
    refused(capsys, ["simulate", "--trace", str(path), "-q"], f"{path}, line 3, column 'path'")


def test_simulate_writes_its_files_when_stdout_closes_early(trace, tmp_path):
    # `... | head` (a reader that closes the pipe): the run ended in "error: [Errno 32]
    # Broken pipe", exit 2, with neither --out nor --summary-json written
    out, js = tmp_path / "o.csv", tmp_path / "s.json"
    p = subprocess.Popen([sys.executable, "-m", "flowsched.cli", "simulate", "--trace", trace, "--out", str(out),
                          "--summary-json", str(js), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # before the run prints anything
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141, err
    assert err == ""
    assert len(out.read_text().splitlines()) == 201 and js.read_text().startswith("{")


def test_simulate_writes_parquet_for_an_upper_case_suffix(trace, tmp_path):
    import pandas as pd
    assert main(["simulate", "--trace", trace, "--out", str(tmp_path / "R.PARQUET"), "-q"]) == 0
    assert len(pd.read_parquet(tmp_path / "R.PARQUET")) == 200


def test_compare_passes_a_packet_option_to_the_run_that_reads_it(trace, tmp_path, capsys):
    # --queue-reserve-bytes went to both runs, and the srpt run refused it (naming the Python
    # name), so pias could not be compared with srpt under it at all
    out = tmp_path / "o.csv"
    assert main(["simulate", "--trace", trace, "--model", "packet", "--scheduler", "pias", "--compare", "srpt",
                 "--queue-reserve-bytes", "3000", "--out", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "note: --queue-reserve-bytes applies to the pias run only, not to srpt" in err
    alone = tmp_path / "alone.csv"
    assert main(["simulate", "--trace", trace, "--model", "packet", "--scheduler", "pias",
                 "--queue-reserve-bytes", "3000", "--out", str(alone), "-q"]) == 0
    assert out.read_text() == alone.read_text()  # the pias run did read it
    refused(capsys, ["simulate", "--trace", trace, "--model", "packet", "--scheduler", "srpt", "--compare", "las",
                     "--queue-reserve-bytes", "3000", "-q"], "--queue-reserve-bytes: refused for both runs")
    refused(capsys, ["simulate", "--trace", trace, "--model", "packet", "--scheduler", "ps", "--transport", "tcp",
                     "--ecn-threshold-bytes", "3000", "-q"], "--ecn-threshold-bytes: ", "dctcp transport(s) only")
