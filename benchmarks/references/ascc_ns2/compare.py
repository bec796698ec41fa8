"""The aSCC authors' ns-2 (their code behind the paper's Figs. 4-5) against flowsched's packet model, flow for flow.

Reads runs of their runner (``python -m congestion_runner.run ... --results-dir R``: a directory per run, named
``<input>.<buffer>.<control>.<slacks>.<scale>.<load %>.<alpha %>``, with ``stdout.log`` and ``flow.tr``), rebuilds
each run's flows (arrival time, hosts and size from the ``stats: <t> start grp <src> <dst> fid <c> <bytes> bytes``
lines; FCT from the ``fin`` lines, matched per connection in order; timeouts from ``flow.tr``), and runs the same
flows through flowsched's packet model with the CC's scheduler in the authors' setting as
``benchmarks/reproduce/ascc.py`` builds it with ``--spray --chunks --mintcp``: the paper's fabric and link delays,
240-packet buffers, 2 ms minimum RTO, initial window 70, DCTCP with its alpha from 0 as ns-2's and the marking of the
authors' switches with K = 65 packets (``ascc.packet_options``), packets sprayed over the 4 spines without fast
retransmit, the fixed retransmission timer, and each flow's data complete at the last of
its chunks, drawn as their app draws them (the draws are not theirs: same law, other numbers). FCTs as theirs: until
the sender has the last ACK (``ascc.paper_fct``). Prints per run the AFCT per size bucket of both, the median and
quartiles of the per-flow FCT ratio (flowsched / ns-2) per bucket, and the timeouts; given the runs of both
workloads and the four CCs at one load and alpha, also which of the paper's claims hold on those flows in each;
given a run at alpha 0 and one at alpha 1 of the same CC and flows, how much its AFCT changes in each.

    python benchmarks/references/ascc_ns2/compare.py [--seed S] [--store DIR] [--by-ratio] [--opt K=V ...] RUN [RUN ...]

A RUN is their runner's directory or a table stored from one (``--store``; the ``*.csv.xz`` here).

CCs: ``pfabric.pfabric_clairvoyant`` (SRPT, ``srpt``), ``ascc.ascc`` (ASCC, ``asrpt``), ``pias.pias`` (PIAS,
``pias`` with their thresholds, which ``workloads.pias_thresholds(..., nearest=True)`` gives) and ``las.pias`` (LAS,
``las``). See README.md here for how the runs were made and what differs between the two simulators.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reproduce"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import ascc  # noqa: E402
from compare_packet import parse_overrides  # noqa: E402

import flowsched  # noqa: E402
from flowsched import workloads  # noqa: E402

#: (buffer, control) of their runner -> flowsched scheduler
CCS = {("pfabric", "pfabric_clairvoyant"): "srpt", ("ascc", "ascc"): "asrpt", ("pias", "pias"): "pias",
       ("las", "pias"): "las"}
INPUTS = {"web_search": ("WS", "websearch"), "data_mining": ("DM", "datamining")}
START = re.compile(r"^stats: ([\d.e+-]+) start grp (\d+) (\d+) fid (\d+) ([\d.]+) bytes")
FIN = re.compile(r"^stats: ([\d.e+-]+) fin grp (\d+) (\d+) fid (\d+) fldur ([\d.e+-]+) sec")
#: ascc.py's buckets (left-closed: mice under 100 KB, medium up to 10 MB, elephants from 10 MB)
BUCKETS = (("all", 0.0, np.inf), ("mice", 0.0, 100e3), ("medium", 100e3, 10e6), ("elephant", 10e6, np.inf))


def settings(name: str) -> dict:
    """A run's settings from its directory's name (or its stored table's, the same name + ``.csv.xz``)."""
    inp, buf, ctl, _slacks, _scale, load, alpha = name.removesuffix(".csv.xz").split(".")
    return {"input": inp, "cc": CCS[(buf, ctl)], "load": int(load) / 100, "alpha": int(alpha) / 100}


def read_run(d: Path) -> tuple[dict, pd.DataFrame]:
    """A run's settings and its flows in finishing order: arrival_s, src, dst, size_bytes, fct_s (ns-2's, to the
    last ACK), timeouts; from their runner's directory, or from the table ``--store`` wrote."""
    run = settings(d.name)
    if d.name.endswith(".csv.xz"):
        return run, pd.read_csv(d)
    started: dict[int, list] = {}
    rows = []
    with open(d / "stdout.log") as fh:
        for line in fh:
            if not line.startswith("stats:"):
                continue
            m = START.match(line)
            if m:
                t, s, r, c, b = m.groups()
                started.setdefault(int(c), []).append((float(t), int(s), int(r), float(b)))
                continue
            m = FIN.match(line)
            if m:
                t, s, r, c, dur = m.groups()
                t0, s0, r0, b = started[int(c)].pop(0)  # a connection carries one flow at a time, in order
                if (s0, r0) != (int(s), int(r)) or abs(float(t) - float(dur) - t0) > 1e-9:
                    raise ValueError(f"{d}: fin of connection {c} at {t} does not match its start at {t0}")
                rows.append((t0, s0, r0, b, float(dur)))
    tr = np.loadtxt(d / "flow.tr", usecols=(0, 1, 2, 3, 4), ndmin=2)
    if len(tr) != len(rows):
        raise ValueError(f"{d}: {len(rows)} finished flows in stdout.log, {len(tr)} in flow.tr")
    f = pd.DataFrame(rows, columns=["arrival_s", "src", "dst", "size_bytes", "fct_s"])
    # flow.tr: packets, fct, timeouts, src, dst; in the same finishing order
    if not (np.allclose(tr[:, 1], f["fct_s"], rtol=1e-12) and (tr[:, 3] == f["src"]).all()
            and np.allclose(tr[:, 0] * 1460, f["size_bytes"])):
        raise ValueError(f"{d}: flow.tr and stdout.log disagree")
    f["timeouts"] = tr[:, 2].astype(int)
    return run, f


def run_flowsched(run: dict, flows: pd.DataFrame, seed: int, options: dict | None = None) -> pd.DataFrame:
    """The same flows on flowsched's packet model in the authors' setting (module doc), in the same row order,
    with ``fct_s`` to the last ACK and the per-flow ``timeouts``; ``options``: packet options over the setting's
    (e.g. ``{"sack": True}``)."""
    wl, dist = INPUTS[run["input"]]
    tr = flows[["arrival_s", "src", "dst", "size_bytes"]].copy()
    tr["arrival_s"] -= tr["arrival_s"].min()
    tr = workloads.add_data_span(tr, run["alpha"], 10.0, header_factor=True, chunks=ascc.CHUNKS[wl], seed=seed)
    if run["cc"] != "srpt":
        tr = tr.assign(size_known=False)
    kw = ascc.packet_options(run["cc"], spray=True, mintcp=True)
    if run["cc"] == "pias":
        kw["pias_thresholds_bytes"] = workloads.pias_thresholds(dist, run["load"], nearest=True)
    kw.update(options or {})
    res = flowsched.simulate(tr, ascc.paper_fabric(True, spines=True), run["cc"], model="packet", transport="dctcp",
                             **kw)
    out = ascc.paper_fct(res.flows)
    out["timeouts"] = res.packet_flows["timeouts"].to_numpy()
    return out


def summary(ns2: pd.DataFrame, fs: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per bucket (``BUCKETS``): flows, both AFCTs (s), and the per-flow FCT ratio's (flowsched / ns-2) quartiles."""
    size = ns2["size_bytes"].to_numpy()
    a, b = ns2["fct_s"].to_numpy(), fs["fct_s"].to_numpy()
    out = {}
    for name, lo, hi in BUCKETS:
        m = (size >= lo) & (size < hi)
        if m.any():
            q1, med, q3 = np.quantile(b[m] / a[m], [0.25, 0.5, 0.75])
            out[name] = {"n": int(m.sum()), "ns2": float(a[m].mean()), "flowsched": float(b[m].mean()),
                         "q1": float(q1), "median": float(med), "q3": float(q3)}
    return out


def table(run: dict, ns2: pd.DataFrame, fs: pd.DataFrame) -> list[str]:
    lines = [f"{run['input']} {run['cc']} load {run['load']} alpha {run['alpha']}: {len(ns2)} flows; timeouts "
             f"ns-2 {int(ns2['timeouts'].sum())}, flowsched {int(fs['timeouts'].sum())}",
             "  bucket     n   AFCT ns-2 ms  flowsched ms  ratio of AFCTs  per-flow ratio median [q1, q3]"]
    for name, r in summary(ns2, fs).items():
        lines.append(f"  {name:9s}{r['n']:5d}  {r['ns2'] * 1e3:12.4g}  {r['flowsched'] * 1e3:12.4g}  "
                     f"{r['flowsched'] / r['ns2']:14.3f}  {r['median']:.3f} [{r['q1']:.3f}, {r['q3']:.3f}]")
    return lines


#: per-flow ratio groups of ``by_ratio`` (flowsched / ns-2), left-closed
RATIO_GROUPS = ((0.0, 0.9), (0.9, 1.1), (1.1, 2.0), (2.0, np.inf))


def by_ratio(ns2: pd.DataFrame, fs: pd.DataFrame) -> list[str]:
    """Per bucket but mice, the flows grouped by their FCT ratio (flowsched / ns-2): how many, their mean
    timeouts in each simulator, and their share of the difference of the summed FCTs; this tells whether a gap
    comes from every flow a little or from some flows a lot, and whether those are the ones that time out."""
    size = ns2["size_bytes"].to_numpy()
    a, b = ns2["fct_s"].to_numpy(), fs["fct_s"].to_numpy()
    ta, tb = ns2["timeouts"].to_numpy(), fs["timeouts"].to_numpy()
    r = b / a
    lines = ["  bucket    ratio           n  timeouts ns-2  flowsched  FCT sum flowsched - ns-2 ms"]
    for name, lo, hi in BUCKETS[2:]:
        m = (size >= lo) & (size < hi)
        for glo, ghi in RATIO_GROUPS:
            g = m & (r >= glo) & (r < ghi)
            if g.any():
                label = f"[{glo:g}, {ghi:g})"
                lines.append(f"  {name:9s} {label:11s}{int(g.sum()):6d}  {ta[g].mean():13.2f}  "
                             f"{tb[g].mean():9.2f}  {(b[g] - a[g]).sum() * 1e3:12.1f}")
    return lines


def claims(afct: dict) -> list[tuple[str, bool, str]]:
    """The paper's claims (section VIII, Figs. 4-5) that one point (one load and alpha) can test, on
    ``afct[(wl, cc)][bucket]`` (s): (claim, holds, the numbers)."""
    def g(wl, cc, b):
        return afct[(wl, cc)][b]

    out = []
    ws_mice = {cc: g("WS", cc, "mice") for cc in ("srpt", "las", "pias", "asrpt")}
    out.append(("WS mice: SRPT and LAS below PIAS and ASCC", max(ws_mice["srpt"], ws_mice["las"])
                < min(ws_mice["pias"], ws_mice["asrpt"]), ", ".join(f"{k} {v * 1e3:.4g}" for k, v in ws_mice.items())))
    r = g("WS", "asrpt", "medium") / g("WS", "srpt", "medium")
    out.append(("WS medium: ASCC at most 10% above SRPT", r <= 1.10, f"ASCC/SRPT {r:.3f}"))
    for wl in ("WS", "DM"):
        el = {cc: g(wl, cc, "elephant") for cc in ("srpt", "las", "pias", "asrpt")}
        out.append((f"{wl} elephants: LAS worst", max(el, key=el.get) == "las",
                    ", ".join(f"{k} {v * 1e3:.4g}" for k, v in el.items())))
    pw, pd_ = (g(wl, "pias", "elephant") / g(wl, "srpt", "elephant") for wl in ("WS", "DM"))
    out.append(("elephants: PIAS below SRPT on WS, above on DM", pw < 1 < pd_, f"PIAS/SRPT WS {pw:.3f}, DM {pd_:.3f}"))
    dm_mice = [g("DM", cc, "mice") for cc in ("srpt", "las", "pias", "asrpt")]
    spread = max(dm_mice) / min(dm_mice) - 1
    out.append(("DM mice: the four within 3%", spread <= 0.03, f"spread {100 * spread:.1f}%"))
    r = g("DM", "asrpt", "medium") / g("DM", "pias", "medium")
    out.append(("DM medium: ASCC below PIAS", r < 1, f"ASCC/PIAS {r:.3f}"))
    for wl in ("WS", "DM"):
        al = {cc: g(wl, cc, "all") for cc in ("srpt", "las", "pias", "asrpt")}
        out.append((f"{wl} all flows: SRPT lowest", min(al, key=al.get) == "srpt",
                    ", ".join(f"{k} {v * 1e3:.4g}" for k, v in al.items())))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="their runner's result directories")
    p.add_argument("--seed", type=int, default=0, help="the seed of flowsched's chunk draws")
    p.add_argument("--store", type=Path, help="also write each run's flows to STORE/<run>.csv.xz")
    p.add_argument("--by-ratio", action="store_true",
                   help="also print, per run, the medium flows and elephants grouped by their per-flow FCT ratio")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                   help="a packet option over the authors' setting (JSON values), e.g. sack=true; repeatable")
    a = p.parse_args(argv)
    options = parse_overrides(a.opt)
    # afct[simulator][(flows, load, alpha)][(wl, cc)][bucket], s
    afct: dict = {"ns-2": {}, "flowsched": {}}
    for d in a.runs:
        run, ns2 = read_run(d)
        if a.store:
            ns2.to_csv(a.store / f"{d.name.removesuffix('.csv.xz')}.csv.xz", index=False, float_format="%.17g")
        fs = run_flowsched(run, ns2, a.seed, options)
        print("\n".join(table(run, ns2, fs)))
        if a.by_ratio:
            print("\n".join(by_ratio(ns2, fs)))
        point, key = (len(ns2), run["load"], run["alpha"]), (INPUTS[run["input"]][0], run["cc"])
        for name, r in summary(ns2, fs).items():
            afct["ns-2"].setdefault(point, {}).setdefault(key, {})[name] = r["ns2"]
            afct["flowsched"].setdefault(point, {}).setdefault(key, {})[name] = r["flowsched"]
    for point in sorted(afct["ns-2"]):
        if len(afct["ns-2"][point]) == 8:  # both workloads, the four CCs: the claims one point can test
            print(f"\nThe paper's claims on the {point[0]} flows of load {point[1]}, alpha {point[2]} (AFCT ms): "
                  "ns-2 | flowsched")
            for (text, ok, nums), (_, ok2, nums2) in zip(claims(afct["ns-2"][point]), claims(afct["flowsched"][point]),
                                                         strict=True):
                print(f"- {text}: ns-2 {'yes' if ok else 'NO'} ({nums}) | flowsched {'yes' if ok2 else 'NO'} ({nums2})")
    # the paper's "alpha from 0 to 1 changes nothing", where a run at alpha 0 and one at alpha 1 are given
    for (n, load, alpha) in sorted(afct["ns-2"]):
        other = (n, load, 1.0)
        if alpha != 0.0 or other not in afct["ns-2"]:
            continue
        for key in sorted(set(afct["ns-2"][(n, load, alpha)]) & set(afct["ns-2"][other])):
            ch = {sim: afct[sim][other][key]["all"] / afct[sim][(n, load, alpha)][key]["all"] - 1 for sim in afct}
            print(f"alpha 0 to 1, {key[0]} {key[1]}, {n} flows, load {load}: AFCT of all flows "
                  f"ns-2 {100 * ch['ns-2']:+.1f}%, flowsched {100 * ch['flowsched']:+.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
