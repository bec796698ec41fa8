"""benchmarks/reproduce/: each paper's script in --quick mode produces its claims table, and
the quick numbers obey what queueing theory (or the scheduler's definition) guarantees."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"reproduce_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(HERE))
    return mod


def _run(name: str, tmp_path: Path, capsys, *extra: str) -> tuple[dict, str]:
    out = tmp_path / f"{name}.json"
    rc = _load(name).main(["--quick", "--no-figures", "--json", str(out), *extra])
    text = capsys.readouterr().out
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["mode"] == "quick" and data["claims"]
    for c in data["claims"]:
        assert c["source"] and c["text"] and c["paper"]
    # the printed claims table: a header and one row per claim
    assert "claims (quick grid" in text
    assert sum(line.startswith("| ") for line in text.splitlines()) > len(data["claims"])
    return data, text


def _frame(d: dict) -> pd.DataFrame:
    return pd.DataFrame(d["data"], columns=d["columns"])


def _verdicts(data: dict, model: str = "fluid") -> list:
    return [c[model]["ok"] for c in data["claims"]]


def test_ascc_seeds_pool_the_flows(tmp_path, capsys):
    """--seeds N: each point's AFCT is over the flows of N seeds together (every flow
    finishes on the fluid model, and every seed has as many flows, so the mean of the
    seeds' AFCTs), and each claim says in how many seeds alone it holds."""
    both, _ = _run("ascc", tmp_path, capsys, "--seeds", "2")
    one = [_frame(_run("ascc", tmp_path, capsys, "--seed", str(s))[0]["numbers"]["fluid"]) for s in (0, 1)]
    pooled = _frame(both["numbers"]["fluid"])
    assert len(pooled) == len(one[0]) == len(one[1])
    np.testing.assert_allclose(pooled["all"], (one[0]["all"] + one[1]["all"]) / 2, rtol=1e-8)  # JSON: 10 digits
    # a bucket's mean pools its flows: between the seeds' means, not their plain average
    lo, hi = np.minimum(one[0]["mice"], one[1]["mice"]), np.maximum(one[0]["mice"], one[1]["mice"])
    assert ((pooled["mice"] >= lo * (1 - 1e-8)) & (pooled["mice"] <= hi * (1 + 1e-8))).all()
    assert not np.allclose(one[0]["all"], one[1]["all"])  # two seeds, two traces
    assert all(c["fluid"]["measured"].endswith("of 2 seeds alone") for c in both["claims"])
    mod = _load("ascc")
    for bad, msg in ((["--seeds", "0"], "--seeds must be >= 1"), (["--packet-flows", "10"], "add --model packet")):
        with pytest.raises(SystemExit):
            mod.main(["--quick", *bad])
        assert msg in capsys.readouterr().err


def test_ascc_fabric_and_fct_are_the_authors():
    """The aSCC runs use the link delays of the authors' ns-2 setup (pschuprikov/ascc: 20.2 us
    a host link, 0.2 us a ToR-spine link) and time a flow until its sender has the last ACK,
    one more one-way trip than flowsched's fct_s; --zero-delay keeps the old fabric."""
    import flowsched

    mod = _load("ascc")
    topo = mod.paper_fabric()
    np.testing.assert_allclose(topo.path_delay_s(np.array([0, 0]), np.array([1, 16])), [40.4e-6, 40.8e-6], rtol=1e-12)
    # packets sprayed over the 4 spines of 40 Gbps: one 160 Gbps link per ToR
    assert topo.n_hosts == 144 and sorted(set(topo.link_gbps.tolist())) == [10.0, 160.0]
    # a flow alone across the spine: 1 MB at 10 Gbps, then the trip there and the ACK's back
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [16], "size_bytes": [1e6]})
    f = mod.paper_fct(flowsched.simulate(tr, topo, "srpt").flows)
    np.testing.assert_allclose(f["fct_s"].iloc[0], 8e6 / 10e9 + 2 * 40.8e-6, rtol=1e-9)
    assert mod.paper_fabric(delays=False) == flowsched.LeafSpine()
    assert mod.PACKET_OPTS["min_rto_s"] == 0.002 and mod.PACKET_OPTS["init_cwnd_packets"] == 70
    # ns-2's DCTCP (alpha from 0) for every CC; the switches mark as its code's: PIAS's per port on
    # arrival, the others' the lowest-priority packet waiting
    opts = {cc: mod.packet_options(cc) for cc in mod.CCS}
    assert all(o["dctcp_alpha_init"] == 0.0 and o["min_rto_s"] == 0.002 for o in opts.values())
    assert opts["pias"]["pias_port_ecn"] and opts["pias"]["ecn_marking"] == "enqueue"
    assert all("pias_port_ecn" not in opts[cc] and opts[cc]["ecn_marking"] == "worst"
               for cc in ("srpt", "asrpt", "las"))
    assert mod.packet_options("srpt", delays=False)["ecn_marking"] == "sojourn"  # --zero-delay: the paper's text
    # --spray: the 4 spines of 40 Gbps themselves, packets sprayed over them, no fast retransmit
    sprayed = mod.paper_fabric(spines=True)
    assert sorted(set(sprayed.link_gbps.tolist())) == [10.0, 40.0] and len(sprayed.link_gbps) == 2 * (144 + 36)
    np.testing.assert_allclose(sprayed.path_delay_s(np.array([0]), np.array([16])), [40.8e-6], rtol=1e-12)
    assert mod.PACKET_OPTS_SPRAY == {"load_balancing": "packet", "dupack_threshold": 0}


def test_ascc_spray_is_a_packet_setting(capsys):
    mod = _load("ascc")
    for extra in (["--spray"], ["--spray", "--model", "packet", "--zero-delay"]):
        with pytest.raises(SystemExit):
            mod.main(["--quick", *extra])
        assert "--spray is a setting of the packet model" in capsys.readouterr().err


def test_ascc_packet_options_reach_every_packet_run(capsys):
    """--packet-option KEY=VALUE (e.g. sack=true, the authors' senders' SACK) is passed to every CC's packet
    run over the setting's options: a bad value fails in the simulator's own check, a good one runs; the fluid
    model refuses the flag."""
    mod = _load("ascc")
    with pytest.raises(ValueError, match="sack must be True or False"):
        mod.run_model("packet", 40, [0.8], [1.0], [0], spray=True, mintcp=True, packet_extra={"sack": 1})
    r = mod.run_model("packet", 40, [0.8], [1.0], [0], spray=True, mintcp=True, packet_extra={"sack": True})
    assert len(r) == len(mod.WLS) * len(mod.CCS)
    with pytest.raises(SystemExit):
        mod.main(["--quick", "--packet-option", "sack=true"])
    assert "--packet-option sets options of the packet model" in capsys.readouterr().err


def test_ascc_quick(tmp_path, capsys):
    data, _ = _run("ascc", tmp_path, capsys)
    df = _frame(data["numbers"]["fluid"])
    assert len(_verdicts(data)) == 12 and all(v is not None for v in _verdicts(data))
    # every FCT holds a round trip of the paper's fabric (at least 80.8 us, inside a rack)
    assert (df[["all", "mice", "medium", "elephant"]] >= 80.8e-3).all().all()
    k = ["workload", "load", "alpha"]
    srpt = df[df.cc == "SRPT"].set_index(k)
    ascc = df[df.cc == "ASCC"].set_index(k)
    pias = df[df.cc == "PIAS"].set_index(k)
    # alpha = 0: every byte is there at arrival, so ASCC knows every size at once: it is SRPT
    a0 = [i for i in srpt.index if i[2] == 0.0]
    assert a0
    np.testing.assert_allclose(ascc.loc[a0, "all"], srpt.loc[a0, "all"], rtol=1e-9)
    # hiding the sizes or delaying the data never helps SRPT's order on mice
    assert (srpt["mice"] <= ascc["mice"] * (1 + 1e-9)).all()
    assert (srpt["mice"] < pias["mice"]).all()
    # data arriving later (alpha 2 against 1) cannot make SRPT faster
    s = srpt.xs(0.8, level="load")
    assert (s.xs(2.0, level="alpha")["all"] >= s.xs(1.0, level="alpha")["all"]).all()


def test_sched_tcp_quick(tmp_path, capsys):
    data, _ = _run("sched_tcp", tmp_path, capsys)
    tab = data["numbers"]["fluid"]["table"]
    t = pd.DataFrame(tab["data"], columns=tab["columns"], index=tab["index"])
    np.testing.assert_allclose(t[["faster_pct", "slower_pct", "equal_pct"]].sum(axis=1), 100.0)
    m = data["numbers"]["fluid"]["mean_fct"]
    # one link: SRPT minimises the mean FCT (Schrage), fair sharing is M/G/1-PS, LAS beats PS on
    # Lomax sizes (decreasing hazard rate)
    assert m["srpt"] < min(m["fair"], m["las"], m["tcp"])
    assert m["las"] < m["tcp"]
    # FAIR (fair sojourn protocol) never finishes a flow later than fair sharing
    assert t.loc["FAIR", "slower_pct"] == 0.0
    assert t.loc["SRPT", "mean_gain_s"] < 0 < t.loc["SRPT", "mean_loss_s"]


def test_sched_tcp_quick_packet(tmp_path, capsys):
    """The packet column: LAS, SRPT and FAIR at the sender (gtcp:*) over tcp against ps over tcp."""
    sys.path.insert(0, str(HERE))
    try:
        import reproduce_common as C
    finally:
        sys.path.remove(str(HERE))
    if not C.packet_available():
        pytest.skip(C.packet_unavailable_reason())
    data, text = _run("sched_tcp", tmp_path, capsys, "--model", "packet")
    num = data["numbers"]["packet"]
    # SCHED_TCP's gtcp is non-intrusive: every policy's run sent exactly tcp's packets
    assert num["same_packets_as_tcp"] == {"las": True, "srpt": True, "fair": True}
    assert "non-intrusive" in text
    t = pd.DataFrame(num["table"]["data"], columns=num["table"]["columns"], index=num["table"]["index"])
    np.testing.assert_allclose(t[["faster_pct", "slower_pct", "equal_pct"]].sum(axis=1), 100.0)
    m = num["mean_fct"]
    assert max(m["srpt"], m["fair"]) < m["tcp"]
    assert all(c["packet"]["ok"] is not None for c in data["claims"])


def test_munir_quick(tmp_path, capsys):
    data, _ = _run("munir", tmp_path, capsys)
    df = _frame(data["numbers"]["fluid"]).set_index("scenario")
    # size-aware weights give the short responses more than the fair share
    for col in ("SDC AFCT ms", "RACS AFCT ms"):
        assert (df[col] < df["TCP/RCP (ps) AFCT ms"]).all()
    # the incast claim is packet-only: not checked on the fluid model
    inc = [c for c in data["claims"] if c["source"].startswith("Figs. 3.9")]
    assert inc and inc[0]["fluid"]["ok"] is None


def test_munir_packet_rto_sets_tcps_mix_afct(tmp_path, capsys):
    """docs/papers.md: on the thesis' 100-packet buffers, TCP's AFCT in the mix is set by the
    minimum RTO (10 ms: below SDC's; 1 s: far above), SDC's much less."""
    afct = {}
    for rto in ("0.01", "1"):
        data, text = _run("munir", tmp_path, capsys, "--model", "packet", "--packet-buffer-bytes", "150000",
                          "--packet-min-rto-s", rto)
        assert f"'min_rto_s': {float(rto)}" in text
        mix = _frame(data["numbers"]["packet"]).set_index("scenario").loc["mix (1000/s)"]
        afct[rto] = (mix["TCP/RCP (ps) AFCT ms"], mix["SDC AFCT ms"])
    assert afct["0.01"][0] < afct["0.01"][1] and afct["1"][0] > 10 * afct["1"][1]
    assert afct["1"][0] > 10 * afct["0.01"][0] and afct["1"][1] < 2 * afct["0.01"][1]


def test_pfabric_fig16_model():
    """Fig. 16 alone (the M/G/1 model, seconds): the size reading, its optimum and the readings table."""
    pf = _load("pfabric")
    f16 = pf.fig16()
    assert abs(f16.loc[0.1, "size_KB"] / 880 - 1) < 0.05
    assert np.all(np.diff(f16["size_KB"].to_numpy()) > 0)
    r = pf.fig16_readings()
    base = r.iloc[0]
    # FCT_n is scale-free: counting sizes in 1500-byte packets scales the optimum by 1500/1460
    np.testing.assert_allclose(r.iloc[1][["10% (KB)", "80% (KB)"]].to_numpy(float),
                               base[["10% (KB)", "80% (KB)"]].to_numpy(float) * 1500 / 1460)
    # no reading reaches the paper's 1,740 KB at 80% while keeping about 880 KB at 10%
    ok = r.drop(index="paper (Fig. 16 text)")
    near_both = (abs(ok["10% (KB)"] / 880 - 1) < 0.1) & (abs(ok["80% (KB)"] / 1740 - 1) < 0.1)
    assert not near_both.any()


def test_pfabric_fig16_sweep():
    """The simulated two-queue sweep (seconds on 300 flows): the model's optimum is one of its
    rows; sharing a queue among its flows makes FCT_n far less sensitive to the threshold
    than per-flow FIFO (the packet model's DCTCP shares it too)."""
    pf = _load("pfabric")
    fl = pf.fig16_sweep("fluid", 300, [0.8], (100, 2500), 0)
    assert fl["model_optimum"].sum() == 1 and len(fl) == 3
    s = pf.sweep_summary(fl).droplevel("load")
    assert s.loc["FCT_n (shared queue)", "worst / best"] < s.loc["FCT_n (FIFO in a queue)", "worst / best"] / 3
    pk = pf.sweep_summary(pf.fig16_sweep("packet", 300, [0.8], (100, 2500), 0))
    assert (pk["worst / best"] > 1).all() and (pk["best FCT_n"] >= 1).all()


@pytest.mark.slow
def test_pfabric_quick(tmp_path, capsys):
    data, text = _run("pfabric", tmp_path, capsys)
    f16 = _frame(data["numbers"]["fig16"]).set_index("load")
    # the size reading matches the paper's 10% end; the optimum grows with the load
    assert abs(f16.loc[0.1, "size_KB"] / 880 - 1) < 0.05
    assert np.all(np.diff(f16["size_KB"].to_numpy()) > 0)
    # the optimum is the minimum: moving the threshold either way costs
    assert (f16["FCT_n at t/2 (+%)"] > 0).all() and (f16["FCT_n at 2t (+%)"] > 0).all()
    assert 0.85 < data["numbers"]["load_for_1740KB"] < 0.99
    assert "where 1,740 KB comes from" in text
    fig17 = _frame(data["numbers"]["fluid"])
    for _, g in fig17.groupby("load"):
        g = g.set_index("config")["mean FCT ms"]
        # more queues (each with the optimal thresholds for its count) never hurt in the model's order
        assert g["8 queues"] <= g["2 queues"]


def test_packet_column_when_missing(tmp_path, capsys):
    """--model both: the packet column says why it is n/a when this flowsched has no packet model,
    and carries verdicts when it has one."""
    data, text = _run("munir", tmp_path, capsys, "--model", "both")
    assert data["models"] == ["fluid", "packet"]
    sys.path.insert(0, str(HERE))
    try:
        import reproduce_common as C
    finally:
        sys.path.remove(str(HERE))
    if not C.packet_available():
        assert all(c["packet"]["ok"] is None and "n/a" in c["packet"]["measured"] for c in data["claims"])
        assert "packet: not run: " in text
    else:
        # TCP, RCP, SDC and RACS all run on the packet core: every claim gets a verdict there, and
        # RACS's incast is lossless (docs/packet.md#racs)
        assert all(c["packet"]["ok"] is not None for c in data["claims"])
        packet = data["numbers"]["packet_incast"]
        inc = pd.DataFrame(packet["data"], columns=packet["columns"])
        assert (inc["RACS loss"] == 0).all() and inc["TCP loss"].iloc[-1] > 0


def test_common_verdict_bool():
    sys.path.insert(0, str(HERE))
    try:
        import reproduce_common as C
    finally:
        sys.path.remove(str(HERE))
    v = C.Verdict(np.bool_(True), "x")
    assert v.ok is True
    flows = pd.DataFrame({"size_bytes": [1e3, 5e5, 2e7, 3e3], "fct_s": [1.0, 2.0, 4.0, 3.0],
                          "terminated": [False, False, False, False]})
    a = C.afct_by_bucket(flows)
    assert a == {"all": 2.5, "mice": 2.0, "medium": 2.0, "elephant": 4.0}


def test_artemis_quick(tmp_path, capsys):
    data, text = _run("artemis", tmp_path, capsys, "--model", "both")
    assert "thesis Table 4.5" in text and "ns-3 program c2 seed 1" in text
    fluid = _frame(data["numbers"]["fluid"]).set_index("case")
    rules = ("fifo", "edf", "ssdf", "lsdf")
    # the fluid model: no losses, every admitted flow at its share at once: most deadlines met and
    # no flow anywhere near a second
    for v in (1, 2):
        for r in rules:
            row = fluid.loc[f"A{v} ns-3 era {r}"]
            assert 80 <= row["hit %"] <= 100 and row["max ms"] < 200
    sys.path.insert(0, str(HERE))
    try:
        import reproduce_common as C
    finally:
        sys.path.remove(str(HERE))
    if not C.packet_available():
        return
    packet = _frame(data["numbers"]["packet"]).set_index("case")
    for v in (1, 2):
        for r in rules:
            p, f = packet.loc[f"A{v} ns-3 era {r}"], fluid.loc[f"A{v} ns-3 era {r}"]
            # slow start from one packet, the handshake and the token signalling make every flow
            # slower; losses into the 100-packet port bring RTOs (1 s) and flows stuck for a second
            assert p["hit %"] < f["hit %"] - 5 and p["median ms"] > f["median ms"] + 3
            assert p["drops"] > 0 and p["flows with timeout %"] > 0 and p["max ms"] >= 1000
            assert 0 < p["waited for token %"] < 100
    assert all(c["packet"]["ok"] is not None for c in data["claims"])
    # Figs. 4.3 / 4.4 (k = 1, 3, 10, 63): one token serializes flows that each pay a handshake, the
    # token signalling and slow start from one packet, so k = 1 meets far fewer deadlines than k = 10
    # and its median FCT is longer; the fluid model (no slow start) has no such cost
    pk = _frame(data["numbers"]["packet_k"]).set_index("case")
    fk = _frame(data["numbers"]["fluid_k"]).set_index("case")
    assert list(pk.index) == list(fk.index) and len(pk) == 8
    for r in ("fifo", "edf"):
        assert pk.loc[f"k=1 {r}", "hit %"] < pk.loc[f"k=10 {r}", "hit %"] - 20
        assert pk.loc[f"k=1 {r}", "median ms"] > pk.loc[f"k=10 {r}", "median ms"]
        assert fk.loc[f"k=1 {r}", "hit %"] >= fk.loc[f"k=10 {r}", "hit %"] - 5
