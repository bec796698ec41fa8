"""Naouach, "Towards A Workload-Driven Flow Scheduler For Modern Datacenters" (the Artemis
thesis; shared/papers/002_*): destination token scheduling of 10-to-1 gather bursts, the
rule-based baselines EDF, SSDF and LSDF (Tables 4.5 / 4.6, Figs. 4.9 / 4.13).

The thesis' setting (section 4.1): one non-blocking switch, 1 Gbps links with 250 us delay
each; workload A: Poisson bursts at 10/s of 10 flows to one destination, variant 1 = 5 x
(350 KB, 40 ms) + 5 x (250 KB, 50 ms), variant 2 = 6 + 4 (``workloads.gather_bursts`` with
``"artemis_a1"`` / ``"artemis_a2"``: the token env's generator); a flow sends only once the
destination granted it a token; "10 flows served concurrently" (k = 10) and the rule looks at
the first f = 5 waiting requests. Paper's values (ns-3):

    Table 4.5 (variant 1)   deadline hit EDF 51.6 %, SSDF 56.0 %, LSDF 67.0 %; median FCT
                            45.35 / 38.46 / 34.06 ms, mean 66.0 / 45.6 / 150.2 ms
    Table 4.6 (variant 1)   p99 FCT 440 / 106 / 4808 ms, max 1039 / 1030 / 4847 ms
    Fig. 4.13 (variant 2)   EDF 45.8 %; SSDF and LSDF "around 58 %" (Artemis 67.94 % is +16.34 %
                            over SSDF and +16.74 % over LSDF: 58.4 and 58.2 %)

flowsched: ``BigSwitch(11, 1 Gbps)``, ``delay_us=250``, ``admission=rule, k=10, window=5``,
scheduler ``ps`` (the flows holding tokens share the destination's link). Fluid model: as is.
Packet model with the ns-3-era choices of the measured ns-3 program
(shared/peers/ns3/artemis/README.md): ``tcp`` (NewReno, no SACK), MSS 1448 B with 52 B of
IPv4 + TCP + timestamp headers, initial window 1, 100-packet drop-tail ports (150,000 B),
min RTO 1 s, RFC 6298 G = 1 ms, delayed ACKs every 2 segments with a 200 ms timer, a handshake
per flow with ns-3's 3 s SYN timeout, and the request and the grant each travelling one
one-way delay (500 us). The reference numbers of that ns-3 program (ns-3.44; its
``results_table.txt``) are printed beside flowsched's.

Grids: --quick 100 bursts, 1 seed; default 300 bursts (the ns-3 program's run) x 2 seeds,
plus the packet model with an initial window of 10 and with 1000-packet buffers (the ns-3
program's c4 and c5 rows); --full 1000 bursts x 5 seeds and the same variations.

``--ns3-csv FILE ...`` also runs both models on the very bursts of ns-3 program runs (their
per-flow CSVs: ``artemis_tokens --out=FILE``; rule, k, f, MSS and initial window are read from
the CSV's header line), flow for flow in the same request order, and prints flowsched's
numbers beside ns-3's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reproduce_common as C  # noqa: E402

import flowsched  # noqa: E402
from flowsched import workloads  # noqa: E402

PAPER = "Artemis thesis (002): token scheduling of gather bursts, Tables 4.5 / 4.6, Fig. 4.13"
RULES = ("fifo", "edf", "ssdf", "lsdf")
HOSTS = 11
K, WINDOW = 10, 5
DELAY_US = 250.0
ONE_WAY_US = 2 * DELAY_US  # sender -> switch -> destination

#: The packet model with the ns-3-era choices (see the module docstring).
NS3_ERA = dict(
    transport="tcp", mss_bytes=1448, header_bytes=52, init_cwnd_packets=1, buffer_bytes=100 * 1500,
    min_rto_s=1.0, clock_granularity_s=1e-3, ack_every_segments=2, delayed_ack_timeout_s=0.2,
    handshake=True, syn_timeout_s=3.0, request_delay_us=ONE_WAY_US, grant_delay_us=ONE_WAY_US,
)
#: Variations of the packet setting (the ns-3 program's c4 and c5 rows change the same thing).
VARIATIONS = {
    "ns-3 era": {},
    "icw 10": {"init_cwnd_packets": 10},
    "1000-packet buffers": {"buffer_bytes": 1000 * 1500},
}

#: The thesis' numbers (ns-3, one run each), variant -> rule -> value.
THESIS_HIT = {1: {"edf": 51.6, "ssdf": 56.0, "lsdf": 67.0}, 2: {"edf": 45.8, "ssdf": 58.4, "lsdf": 58.2}}
THESIS_MEDIAN_MS = {"edf": 45.350, "ssdf": 38.461, "lsdf": 34.061}
THESIS_P99_MS = {"edf": 439.984, "ssdf": 106.022, "lsdf": 4807.770}
#: The ns-3 program's measured deadline hit % (shared/peers/ns3/artemis/README.md, "Results"; MSS
#: 1448, icw 1, 100-packet device queue, SACK on, 300 bursts): config -> rule -> %.
NS3_PROGRAM_HIT = {
    "c2 seed 1": {"fifo": 63.4, "edf": 62.7, "ssdf": 67.7, "lsdf": 63.4},
    "c2 seed 2": {"fifo": 59.9, "edf": 57.2, "ssdf": 58.0, "lsdf": 57.4},
    "c4 icw 10 (150 bursts)": {"fifo": 82.5, "edf": 83.1, "ssdf": 82.2, "lsdf": 81.7},
    "c5 1000+100 p buffers, MSS 536 (150 bursts)": {"fifo": 78.8, "edf": 76.9, "ssdf": 81.9, "lsdf": 77.5},
}
NS3_PROGRAM_NOTE = ("ns-3 program (README.md): c2 median FCT 34-38 ms, p99 ~1230 ms, ~4.8 % of flows with an RTO, "
                    "18-21k drops per 300 bursts")


def grid(mode: str) -> tuple[int, int, list[str]]:
    if mode == "quick":
        return 100, 1, ["ns-3 era"]
    if mode == "full":
        return 1000, 5, list(VARIATIONS)
    return 300, 2, list(VARIATIONS)


def one(model: str, variant: int, rule: str, n_bursts: int, seed: int, variation: str = "ns-3 era") -> dict:
    tr = workloads.gather_bursts(f"artemis_a{variant}", burst_size=10, burst_rate_hz=10.0, n_bursts=n_bursts,
                                 seed=seed)
    sw = flowsched.BigSwitch(HOSTS, 1.0)
    extra = {**NS3_ERA, **VARIATIONS[variation]} if model == "packet" else {}
    transport = extra.pop("transport", None)
    r = C.simulate(tr, sw, "ps", model, transport=transport, admission=rule, k=K, window=WINDOW,
                   delay_us=DELAY_US, **extra)
    f = r.flows
    fct = f["fct_s"].to_numpy()
    out = {
        "hit": float(f["deadline_met"].astype(float).mean()) * 100,
        "median_ms": float(np.nanmedian(fct)) * 1e3,
        "mean_ms": float(np.nanmean(fct)) * 1e3,
        "p99_ms": float(np.nanpercentile(fct, 99)) * 1e3,
        "max_ms": float(np.nanmax(fct)) * 1e3,
        "hit_350KB": float(f.loc[f["size_bytes"] > 3e5, "deadline_met"].astype(float).mean()) * 100,
        "hit_250KB": float(f.loc[f["size_bytes"] < 3e5, "deadline_met"].astype(float).mean()) * 100,
        "timeout_pct": np.nan, "drops": np.nan, "waited_pct": np.nan,
    }
    if r.packet_flows is not None:
        pf = r.packet_flows
        out["timeout_pct"] = float((pf["timeouts"] > 0).mean()) * 100
        out["drops"] = float(r.packet["drops_overflow"])
        waited = pf["admitted_s"].to_numpy() - f["arrival_s"].to_numpy() - ONE_WAY_US * 1e-6 > 1e-9
        out["waited_pct"] = float(waited.mean()) * 100
    return out


def run_model(model: str, n_bursts: int, seeds: int, variations: list[str], seed0: int) -> dict:
    """(variant, variation) -> rule -> the mean over seeds of each number."""
    res: dict = {}
    cases = [(1, v) for v in (variations if model == "packet" else ["ns-3 era"])] + [(2, "ns-3 era")]
    for variant, variation in cases:
        res[(variant, variation)] = {}
        for rule in RULES:
            pts = [one(model, variant, rule, n_bursts, seed0 + s, variation) for s in range(seeds)]
            res[(variant, variation)][rule] = {k: float(np.mean([p[k] for p in pts])) for k in pts[0]}
            res[(variant, variation)][rule]["hit_by_seed"] = [p["hit"] for p in pts]
    return res


def val(r: dict, variant: int, rule: str, key: str) -> float:
    return r[(variant, "ns-3 era")][rule][key]


def claims() -> list[C.Claim]:
    def hit_near(variant: int, rule: str):
        def f(r):
            h, want = val(r, variant, rule, "hit"), THESIS_HIT[variant][rule]
            return C.Verdict(abs(h - want) <= 10, f"{h:.1f}% (thesis {want}%)")
        return f

    def order(variant: int):
        def f(r):
            h = {x: val(r, variant, x, "hit") for x in ("edf", "ssdf", "lsdf")}
            ok = h["edf"] < h["ssdf"] < h["lsdf"] if variant == 1 else h["edf"] < min(h["ssdf"], h["lsdf"])
            return C.Verdict(ok, ", ".join(f"{k.upper()} {v:.1f}%" for k, v in h.items()))
        return f

    def spread(r):
        h = [val(r, 1, x, "hit") for x in ("edf", "ssdf", "lsdf")]
        return C.Verdict(max(h) - min(h) >= 10, f"{max(h) - min(h):.1f} points")

    def medians(r):
        m = {x: val(r, 1, x, "median_ms") for x in ("edf", "ssdf", "lsdf")}
        shown = ", ".join(f"{k.upper()} {v:.1f} ms" for k, v in m.items())
        return C.Verdict(all(25 <= v <= 55 for v in m.values()), shown)

    def tail(r):
        m = {x: val(r, 1, x, "max_ms") for x in ("edf", "ssdf", "lsdf")}
        return C.Verdict(all(v >= 1000 for v in m.values()), ", ".join(f"{k.upper()} {v:.0f} ms" for k, v in m.items()))

    fluid_why = ("the fluid model has no losses, RTOs, slow start or handshake: every admitted flow gets its "
                 "share of the destination link at once, so ~94% of deadlines are met under every rule; the "
                 "packet model with the ns-3-era TCP shows the thesis' level (RTO-stalled flows hold tokens)")
    order_why = ("the rules differ by less than the run-to-run noise here (as in the ns-3 program: seeds move "
                 "every rule by 4-10 points); the thesis' order looks like single-run noise")
    cl = [
        C.Claim("Table 4.5", "variant 1: EDF meets about 51.6% of deadlines (within 10 points)", "51.6%",
                hit_near(1, "edf"), fluid_why),
        C.Claim("Table 4.5", "variant 1: SSDF meets about 56.0% (within 10 points)", "56.0%", hit_near(1, "ssdf"),
                fluid_why),
        C.Claim("Table 4.5", "variant 1: LSDF meets about 67.0% (within 10 points)", "67.0%", hit_near(1, "lsdf"),
                fluid_why),
        C.Claim("Table 4.5", "variant 1: EDF < SSDF < LSDF (deadline hit)", "51.6 < 56.0 < 67.0", order(1), order_why),
        C.Claim("Table 4.5", "variant 1: the rules spread by >= 10 points", "15.4 points", spread, order_why),
        C.Claim("Table 4.5", "variant 1: median FCT 25-55 ms under EDF, SSDF, LSDF", "45.4 / 38.5 / 34.1 ms",
                medians, "the fluid model has no slow start or handshake: a flow alone finishes in ~3 ms"),
        C.Claim("Table 4.6", "variant 1: the slowest flow takes >= 1 s (one min RTO) under every rule",
                "max 1039 / 1030 / 4847 ms", tail, "no losses, so no RTO in the fluid model"),
        C.Claim("Fig. 4.13", "variant 2: EDF meets about 45.8% (within 10 points)", "45.8%", hit_near(2, "edf"),
                fluid_why),
        C.Claim("Fig. 4.13", "variant 2: SSDF about 58.4% (within 10 points)", "58.4% (derived)",
                hit_near(2, "ssdf"), fluid_why),
        C.Claim("Fig. 4.13", "variant 2: LSDF about 58.2% (within 10 points)", "58.2% (derived)",
                hit_near(2, "lsdf"), fluid_why),
        C.Claim("Fig. 4.13", "variant 2: EDF below SSDF and LSDF", "45.8 < ~58", order(2), order_why),
    ]
    for c in cl:
        c.why_not_packet = {"Table 4.5": order_why, "Fig. 4.13": order_why}.get(c.source, c.why_not_packet)
        if "within 10 points" in c.text:
            c.why_not_packet = ("fewer flows hit an RTO here (about 1-2% against 2.6-4.8% in the ns-3 program), so "
                                "fewer tokens are held by stalled flows: on the ns-3 program's own bursts (SACK "
                                "off) ns-3 meets 62-70% per rule, the packet model 79-82% "
                                "(docs/papers.md); the "
                                "difference is in TCP loss recovery, not in the admission")
    return cl


def frame(r: dict) -> pd.DataFrame:
    rows = []
    for (variant, variation), per_rule in r.items():
        for rule, v in per_rule.items():
            rows.append({"case": f"A{variant} {variation} {rule}", "hit %": v["hit"],
                         "hit 350KB/40ms %": v["hit_350KB"], "hit 250KB/50ms %": v["hit_250KB"],
                         "median ms": v["median_ms"], "mean ms": v["mean_ms"], "p99 ms": v["p99_ms"],
                         "max ms": v["max_ms"], "flows with timeout %": v["timeout_pct"],
                         "waited for token %": v["waited_pct"], "drops": v["drops"],
                         "hit by seed": " / ".join(f"{x:.1f}" for x in v["hit_by_seed"])})
    return pd.DataFrame(rows).set_index("case")


def references() -> pd.DataFrame:
    rows = [{"source": "thesis Table 4.5, variant 1", **{r.upper(): THESIS_HIT[1].get(r, np.nan) for r in RULES}},
            {"source": "thesis Fig. 4.13, variant 2 (SSDF, LSDF derived)",
             **{r.upper(): THESIS_HIT[2].get(r, np.nan) for r in RULES}}]
    rows += [{"source": f"ns-3 program {k}", **{r.upper(): v[r] for r in RULES}} for k, v in NS3_PROGRAM_HIT.items()]
    return pd.DataFrame(rows).set_index("source")


def figure(results: dict, args) -> None:
    plt = C.pyplot(args)
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 3.6))
    x = np.arange(len(RULES))
    width = 0.8 / (len(results) + 1)
    thesis = [THESIS_HIT[1].get(r, np.nan) for r in RULES]
    ax.bar(x, thesis, width, label="thesis (ns-3)")
    for i, (m, r) in enumerate(results.items()):
        if isinstance(r, C.Unavailable):
            continue
        ax.bar(x + (i + 1) * width, [val(r, 1, rule, "hit") for rule in RULES], width, label=m)
    ax.set_xticks(x + width * len(results) / 2, [r.upper() for r in RULES])
    ax.set(ylabel="deadline hit %", title="Artemis workload A variant 1 (k = 10, f = 5)", ylim=(0, 100))
    ax.legend(fontsize=8)
    fig.tight_layout()
    C.save(fig, args, "artemis_hit.png")
    plt.close(fig)


def ns3_same_bursts(paths: list[str]) -> pd.DataFrame:
    """Both models on the bursts of ns-3 program runs (their per-flow CSVs), beside ns-3's numbers."""
    rows = []
    for path in paths:
        head = Path(path).read_text().splitlines()[0]
        words = head.lstrip("# ").replace(",", " ").split()
        after = {key: words[words.index(key) + 1] for key in ("rule", "k", "f", "mss", "initCwnd")}
        rule, k, f = after["rule"], int(after["k"]), int(after["f"])
        d = pd.read_csv(path, comment="#").sort_values(["arrival_s", "burst", "idx"]).reset_index(drop=True)
        # ns-3: senders 0-9 and the destination; here the destination is host 0
        tr = pd.DataFrame({"arrival_s": d["arrival_s"], "src": d["src"] + 1, "dst": 0,
                           "size_bytes": d["size"].astype(float), "deadline_s": d["deadline_s"]})
        row = {"run": f"{Path(path).name} ({rule})", "ns-3 hit %": 100 * d["met"].mean(),
               "ns-3 median ms": 1e3 * d["fct_s"].median(), "ns-3 p99 ms": 1e3 * d["fct_s"].quantile(0.99),
               "ns-3 RTO flows %": 100 * (d["rto"] > 0).mean()}
        for m in ("fluid", "packet"):
            extra = {**NS3_ERA, "mss_bytes": int(after["mss"]), "init_cwnd_packets": int(after["initCwnd"])} \
                if m == "packet" else {}
            t = extra.pop("transport", None)
            r = C.simulate(tr, flowsched.BigSwitch(HOSTS, 1.0), "ps", m, transport=t, admission=rule, k=k,
                           window=f, delay_us=DELAY_US, **extra)
            row[f"{m} hit %"] = 100 * float(r.flows["deadline_met"].astype(float).mean())
            row[f"{m} median ms"] = 1e3 * float(r.flows["fct_s"].median())
            if m == "packet":
                row["packet p99 ms"] = 1e3 * float(r.flows["fct_s"].quantile(0.99))
                row["packet RTO flows %"] = 100 * float((r.packet_flows["timeouts"] > 0).mean())
        rows.append(row)
    return pd.DataFrame(rows).set_index("run")


def main(argv: list[str] | None = None) -> int:
    p = C.parser(__doc__)
    p.add_argument("--ns3-csv", nargs="+", default=[], metavar="FILE",
                   help="per-flow CSVs of the ns-3 program (shared/peers/ns3/artemis): run both models on their bursts")
    args = p.parse_args(argv)
    C.header(PAPER, args)
    n, seeds, variations = grid(C.mode(args))
    results: dict = {}
    numbers: dict = {}
    C.print_frame("references: deadline hit % (thesis; the ns-3 program of shared/peers/ns3/artemis)", references(),
                  "{:.1f}")
    print(f"\n{NS3_PROGRAM_NOTE}")
    for m in C.models(args):
        t = C.Timer()
        if m == "packet" and not C.packet_available():
            results[m] = C.Unavailable(C.packet_unavailable_reason())
            continue
        try:
            r = results[m] = run_model(m, n, seeds, variations, args.seed)
        except C.Unavailable as e:
            results[m] = e
            continue
        print(f"\n{m}: {n} bursts x {seeds} seed(s) per case in {t}")
        df = frame(r)
        C.print_frame(f"{m}: deadline hit, FCT, timeouts, token waits and drops (mean over seeds)", df, "{:.4g}")
        numbers[m] = df.reset_index()
    if args.ns3_csv:
        same = ns3_same_bursts(args.ns3_csv)
        C.print_frame("the ns-3 program's own bursts: ns-3 beside flowsched", same, "{:.4g}")
        numbers["ns3_same_bursts"] = same.reset_index()
    figure(results, args)
    return C.report(PAPER, claims(), results, args, numbers,
                    f"{n} bursts x {seeds} seed(s), k = {K}, f = {WINDOW}, packet variations {variations}")


if __name__ == "__main__":
    sys.exit(main())
