"""benchmarks/reproduce/artemis.py's calibration against the ns-3 program (issue 20, section 1):
reading the program's per-flow CSVs, the committed run summaries and bursts, the confidence
intervals, and the packet model on the committed bursts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce"
sys.path.insert(0, str(HERE))
try:
    import artemis as A
    import reproduce_common as C
finally:
    sys.path.remove(str(HERE))

HEADER = ("# rule {rule} k 10 f 5 bursts 2 rate 10 seed {seed} order random | ns3::TcpNewReno, 10 senders+1 dst, "
          "1 Gbps, 250 us/link, queue dev devQ 100 qdQ 1000, mss {mss}, initCwnd 1, delAck 2 (200 ms), minRto 1 s, "
          "clockGran 1 ms, sack {sack}, ts 1, classicRecovery 1, snd/rcvBuf 131072/131072, reqDelay 500 us, "
          "tokDelay 500 us, admitGap 0 us | drops: device 1 qdisc 2 tclayer 30 (switch 30) at dst port 0")
COLS = "burst,idx,src,size,deadline_s,arrival_s,admit_s,start_s,connected_s,finish_s,fct_s,met,rto,frx,retx"
# two bursts of two flows: flow 2 waits 10 ms for its token and has an RTO, flow 3 a SYN timeout and
# never finishes
FLOWS = ["0,0,3,350000,0.040,0.100000000,0.100500000,0.101000000,0.102000000,0.130000000,0.030000000,1,0,0,0",
         "0,1,5,250000,0.050,0.100000000,0.100500000,0.101000000,0.102000000,0.160000000,0.060000000,0,0,1,4",
         "1,0,2,350000,0.040,0.200000000,0.210500000,0.211000000,0.212000000,1.230000000,1.030000000,0,1,2,9",
         "1,1,7,250000,0.050,0.200000000,0.200500000,0.201000000,3.201000000,-1,-1,0,0,0,0"]


def write_run(path: Path, rule: str = "fifo", seed: int = 1, sack: int = 0, mss: int = 1448,
              flows: list[str] = FLOWS) -> Path:
    path.write_text("\n".join([HEADER.format(rule=rule, seed=seed, sack=sack, mss=mss), COLS, *flows]) + "\n")
    return path


def test_run_summary_from_a_per_flow_csv(tmp_path):
    s = A.ns3_run_summary(write_run(tmp_path / "a.csv"))
    assert (s["rule"], s["seed"], s["sack"], s["bursts"], s["flows"]) == ("fifo", 1, 0, 2, 4)
    assert s["hit_pct"] == 25 and s["hit_350KB_pct"] == 50 and s["hit_250KB_pct"] == 0
    assert s["unfinished"] == 1 and s["max_ms"] == np.inf
    assert s["median_ms"] == pytest.approx(545.0) and s["mean_ms"] == pytest.approx(1120 / 3)
    # an RTO (flow 2) and a SYN timeout (flow 3): 2 of 4 flows; only flow 2 entered CA_LOSS
    assert s["timeout_flows_pct"] == 50 and s["rto_flows_pct"] == 25 and s["syn_timeout_flows"] == 1
    assert (s["rto_events"], s["fast_recoveries"], s["retransmissions"]) == (1, 3, 13)
    assert s["drops"] == 33 and s["drops_dst_port"] == 0
    # the token wait leaves out the request's 0.5 ms: only flow 2 waited (10 ms)
    assert s["token_wait_mean_ms"] == pytest.approx(2.5) and s["waited_pct"] == 25
    assert np.isnan(s["cpu_s"])


def test_build_and_read(tmp_path):
    runs = [write_run(tmp_path / f"{r}{sd}.csv", r, sd) for r in ("fifo", "edf") for sd in (1, 2)]
    nolt = [write_run(tmp_path / "nolt.csv", "fifo", 1)]
    out = tmp_path / "out"
    got, bursts = A.build_calibration([("-", [str(p) for p in runs]), ("LimitedTransmit=false", [str(nolt[0])])],
                                      out)
    assert len(got) == 5 and list(bursts.columns) == A.BURST_COLUMNS and sorted(bursts["seed"].unique()) == [1, 2]
    assert (out / "runs.csv").read_text().startswith("# ns-3 program")
    r, b = A.read_calibration(out / "runs.csv", out / "bursts.csv.xz")
    assert len(r) == 5 and set(r["ns3_extra"]) == {"", "LimitedTransmit=false"}
    assert {A.ns3_model(x) for x in r.to_dict("records")} == {"ns-3 sack0", "ns-3 sack0 LimitedTransmit=false"}
    pd.testing.assert_frame_equal(b, bursts)
    tr = A.ns3_trace(b[b["seed"] == 1])
    # ns-3's senders 0-9 are hosts 1-10, the destination host 0, in arrival then request order
    assert tr["src"].tolist() == [4, 6, 3, 8] and (tr["dst"] == 0).all()
    assert tr["size_bytes"].tolist() == [350000.0, 250000.0, 350000.0, 250000.0]


def test_build_refuses_mixed_runs(tmp_path):
    a = write_run(tmp_path / "a.csv")
    with pytest.raises(ValueError, match="differ in more than rule, seed and SACK"):
        A.build_calibration([("-", [str(a), str(write_run(tmp_path / "b.csv", "edf", mss=536))])], tmp_path / "o")
    other = FLOWS[:3] + [FLOWS[3].replace(",7,", ",8,")]
    with pytest.raises(ValueError, match="other bursts"):
        A.build_calibration([("-", [str(a), str(write_run(tmp_path / "c.csv", "edf", flows=other))])], tmp_path / "o")
    with pytest.raises(ValueError, match="same rule, seed and SACK"):
        A.build_calibration([("-", [str(a), str(write_run(tmp_path / "d.csv"))])], tmp_path / "o")
    (tmp_path / "e.csv").write_text("burst,idx\n")
    with pytest.raises(ValueError, match="not an artemis_tokens per-flow CSV"):
        A.ns3_run_header(tmp_path / "e.csv")
    with pytest.raises(FileNotFoundError, match="missing"):
        A.read_calibration(tmp_path / "none.csv", tmp_path / "none.csv.xz")


def test_mean_ci_and_pairs():
    m, h, n = A.mean_ci([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3) and h == pytest.approx(4.302653 / np.sqrt(3), rel=1e-6)  # t(0.975, 2) s / sqrt(n)
    assert np.isnan(A.mean_ci([5.0])[1]) and A.mean_ci([np.nan, 4.0, 6.0])[:1] == (5.0,)
    rows = []
    for seed, (a, b) in enumerate([(60, 70), (65, 74), (55, 66)], start=1):
        rows += [{"model": "ns-3 sack0", "rule": "fifo", "seed": seed, "hit_pct": a},
                 {"model": "ns-3 sack0", "rule": "edf", "seed": seed, "hit_pct": a + 1},
                 {"model": "packet", "rule": "fifo", "seed": seed, "hit_pct": b},
                 {"model": "packet", "rule": "edf", "seed": seed, "hit_pct": b}]
    t = A.calibration_tables(pd.DataFrame(rows))
    # packet - ns-3 per seed: 10, 9, 11 (fifo): mean 10, half-width t(0.975, 2) / sqrt(3)
    assert t["hit"].loc["FIFO", "packet - ns-3 sack0"] == f"10.0 ± {4.302653 / np.sqrt(3):.1f}"
    assert t["hit"].loc["FIFO", "packet within 5 of ns-3 sack0"] == "no"
    pairs = t["pairs"].reset_index()
    ns3 = pairs[(pairs["model"] == "ns-3 sack0") & (pairs["pair"] == "FIFO - EDF")].iloc[0]
    # the same difference (-1) on every seed: no spread, beyond noise
    assert ns3["mean ± 95% CI"] == "-1.00 ± 0.00" and ns3["beyond noise (95%)"] == "yes"


def test_committed_calibration_set():
    runs, bursts = A.read_calibration()
    base = runs[runs["ns3_extra"] == ""]
    for sack in (0, 1):
        per_rule = base[base["sack"] == sack].groupby("rule")["seed"].nunique()
        assert sorted(per_rule.index) == sorted(A.RULES) and (per_rule >= 20).all()
    assert set(runs["seed"]) <= set(bursts["seed"])
    # every burst: 5 x (350 KB, 40 ms) + 5 x (250 KB, 50 ms), one flow per sender, requests 0-9
    for (_, _), g in bursts.groupby(["seed", "burst"]):
        assert sorted(g["idx"]) == list(range(10)) and sorted(g["src"]) == list(range(10))
        assert (g["size"] == 350000).sum() == 5 and set(g.loc[g["size"] == 350000, "deadline_s"]) == {0.04}


@pytest.mark.skipif(not C.packet_available(), reason="no packet model in this flowsched")
def test_packet_model_on_the_committed_bursts_of_one_seed():
    _, bursts = A.read_calibration()
    tr = A.ns3_trace(bursts[bursts["seed"] == 1])
    a, r = A.flowsched_on(tr, "packet", "fifo")
    b, _ = A.flowsched_on(tr, "packet", "fifo")
    assert a == b  # deterministic
    assert len(r.flows) == len(tr) and r.flows["finish_s"].notna().all()
    # the admission: never more than k flows holding tokens
    adm = r.packet_flows["admitted_s"].to_numpy()
    fin = r.flows["finish_s"].to_numpy()
    for t in adm:
        assert ((adm <= t) & (fin > t)).sum() <= A.K
    assert 0 < a["waited_pct"] < 100 and a["drops"] > 0


def test_k_sweep_build_reads_k_and_refuses_other_bursts(tmp_path):
    """--calibration-k-build: a run's k goes into its row; a run whose bursts are not the committed
    ones of its seed, or whose setting differs in more than k, rule and seed, is refused by name."""
    A.build_calibration([("-", [str(write_run(tmp_path / "x.csv", seed=1))])], tmp_path)  # runs.csv, bursts
    k31 = tmp_path / "k31.csv"
    k31.write_text(write_run(tmp_path / "y.csv", seed=1).read_text().replace(" k 10 ", " k 31 ", 1))
    runs = A.build_k_sweep([str(k31)], tmp_path / "runs_k.csv", tmp_path / "bursts.csv.xz")
    assert list(runs["k"]) == [31] and runs["hit_pct"].iloc[0] == 25.0
    assert pd.read_csv(tmp_path / "runs_k.csv", comment="#")["k"].tolist() == [31]
    with pytest.raises(ValueError, match="seed 2's bursts .* are not those of"):
        A.build_k_sweep([str(write_run(tmp_path / "s2.csv", seed=2))], tmp_path / "out.csv", tmp_path / "bursts.csv.xz")
    other = tmp_path / "mss.csv"
    other.write_text(write_run(tmp_path / "z.csv", seed=1).read_text().replace("mss 1448", "mss 536", 1))
    with pytest.raises(ValueError, match="in more than k, rule and seed"):
        A.build_k_sweep([str(other)], tmp_path / "out.csv", tmp_path / "bursts.csv.xz")


@pytest.mark.skipif(not C.packet_available(), reason="no packet model in this flowsched")
def test_the_artemis_id_defaults_are_within_5_points_of_ns3():
    """The calibration target that ``flowsched/TokenScheduling-Artemis-v0``'s defaults are chosen
    for (README, docs/papers.md): on the committed bursts of the ns-3 program (20 seeds x 60
    bursts), each rule's deadline hit ratio under the id's packet defaults is within 5 points of
    ns-3's (SACK off) on average, paired by seed (about 3 s)."""
    runs, bursts = A.read_calibration()
    ns3 = runs[(runs["sack"] == 0) & (runs["ns3_extra"].fillna("").astype(str) == "")]
    d = A.calibration_runs(ns3, bursts, {"packet": {}})
    for rule in A.RULES:
        a = d[(d["model"] == "packet") & (d["rule"] == rule)]
        b = d[(d["model"] == "ns-3 sack0") & (d["rule"] == rule)]
        m, h, n = A.mean_ci(A.paired(a, b))
        assert n >= 20 and abs(m) < 5, (rule, m, h, n)


@pytest.mark.skipif(not C.packet_available(), reason="no packet model in this flowsched")
def test_without_the_jitter_small_incasts_are_ns3():
    """docs/papers.md, the k sweep against ns-3: at k = 3 (incasts of up to 3 flows) the packet model
    without the link jitter meets the deadlines ns-3 meets on the same bursts, to a point on average
    under EDF and FIFO, with ns-3's median FCT (within 0.5 ms) and share of flows with a timeout
    (within 0.1 point); 20 runs of 60 bursts, about 1 s."""
    runs = pd.read_csv(A.CALIB_K_RUNS, comment="#")
    _, bursts = A.read_calibration()
    d = A.calibration_runs(runs[runs["k"] == 3], bursts, {"packet no jitter": {"link_jitter_ns": 0.0}}, fluid=False)
    for rule in ("edf", "fifo"):
        ns3 = d[(d["model"] == "ns-3 sack0") & (d["rule"] == rule)]
        ours = d[(d["model"] == "packet no jitter") & (d["rule"] == rule)]
        assert len(ns3) == 10
        m, h, n = A.mean_ci(A.paired(ours, ns3))
        assert n == 10 and abs(m) < 1, (rule, m, h)
        assert abs(ours["median_ms"].mean() - ns3["median_ms"].mean()) < 0.5
        assert abs(ours["timeout_flows_pct"].mean() - ns3["timeout_flows_pct"].mean()) < 0.1


@pytest.mark.slow
def test_k_sweep_against_ns3_as_documented(capsys):
    """docs/papers.md: on the ns-3 program's k sweep (k = 3, 10, 31, 63; EDF and FIFO; 10 seeds) the
    id's defaults are within 5 points of ns-3 at k = 10 and 5 to 7 points above it at k >= 31, where
    the model without the jitter is within 2 points (and more than 5 above at k = 10); the id's
    defaults have ns-3's rise of EDF's hit ratio from k = 3 to 10 to 31 (about 7 s)."""
    if not C.packet_available():
        pytest.skip("no packet model in this flowsched")
    d = A.calibration_k().attrs["runs"]
    assert "k sweep against the ns-3 program" in capsys.readouterr().out

    def diff(model: str, k: int, rule: str) -> float:
        sel = lambda m: d[(d["model"] == m) & (d["k"] == k) & (d["rule"] == rule)]  # noqa: E731
        return A.mean_ci(A.paired(sel(model), sel("ns-3 sack0")))[0]

    for rule in ("edf", "fifo"):
        assert abs(diff("packet", 10, rule)) < 5 and diff("packet no jitter", 10, rule) > 5
        for k in (31, 63):
            assert 5 < diff("packet", k, rule) < 7 and abs(diff("packet no jitter", k, rule)) < 2
    hit = {k: d[(d["model"] == "packet") & (d["k"] == k) & (d["rule"] == "edf")]["hit_pct"].mean() for k in (3, 10, 31)}
    assert hit[3] < hit[10] < hit[31], hit


@pytest.mark.slow
def test_calibration_tables_as_documented(capsys):
    """docs/papers.md: with the Artemis id's defaults (a 100 ns link jitter, limited transmit on)
    every rule's mean hit ratio is within 5 points of ns-3's (SACK off), and without limited
    transmit within 5 points of ns-3 without it; the jitter and limited transmit each lower every
    rule's hit ratio beyond noise; without the jitter the packet model meets more deadlines than
    ns-3 under every rule, with ns-3's share of flows with a timeout (within half a point), and
    with it that share is less than a point above ns-3's."""
    if not C.packet_available():
        pytest.skip("no packet model in this flowsched")
    t = A.calibration()
    assert "Calibration against the ns-3 program" in capsys.readouterr().out
    d = t["runs"]

    def sel(model: str, rule: str) -> pd.DataFrame:
        return d[(d["model"] == model) & (d["rule"] == rule)]

    def diff(a: str, b: str, rule: str, key: str = "hit_pct") -> tuple[float, float, int]:
        return A.mean_ci(A.paired(sel(a, rule), sel(b, rule), key=key))

    for rule in A.RULES:
        m, h, n = diff("packet", "ns-3 sack0", rule)
        assert n >= 20 and abs(m) < 5, (rule, m, h)
        m, h, n = diff("packet no-LT", "ns-3 sack0 LimitedTransmit=false", rule)
        assert n >= 19 and abs(m) < 5, (rule, m, h)
        m, h, n = diff("packet", "packet no-LT", rule)
        assert n >= 20 and m + h < 0, (rule, m, h)  # limited transmit costs deadlines
        m, h, n = diff("packet", "packet no jitter", rule)
        assert m + h < 0, (rule, m, h)  # so do the orders of same-instant arrivals that the jitter draws
        m, h, n = diff("packet no jitter", "ns-3 sack0", rule)
        assert m - h > 0, (rule, m, h)  # without the jitter: more forgiving than ns-3
        assert abs(diff("packet no jitter", "ns-3 sack0", rule, "timeout_flows_pct")[0]) < 0.5
        assert 0 < diff("packet", "ns-3 sack0", rule, "timeout_flows_pct")[0] < 1
