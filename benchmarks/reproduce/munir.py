"""Munir, "Improving Flow Completion Times in Data Center Networks" (SDC and RACS;
shared/papers/003_*): the short-and-long mix (sections 3.5.2 / 4.3.2, Tables 3.4 and 4.2)
and the benchmark traffic (3.5.3 / 4.3.3, Figs. 3.13, 4.10 and 4.12). Incast (Figs. 3.9-3.10,
4.6-4.7) is packet-only: the fluid model has no buffers or losses.

The paper's setting (section 3.5): 1 Gbps links of 300 us, 100-packet router buffers (ns-2).
Mix: four hosts on one switch, two long-lived background flows and query responses uniform on
[2 KB, 50 KB] to one receiver (``workloads.background_plus_queries``; the thesis does not give
the response rate: 1000/s here). Benchmark: the same with Pareto responses (shape 1.2, mean
25 KB, ``sdc_pareto``) at arrival rates from 100 to 2000 flows/s. Paper's values:

    Table 3.4 (mix)   SDC 2.6 ms, TCP SACK 12 ms, SACK with ECN 42.4 ms; utilization 98.1 / 99.99 %
    Table 4.2 (mix)   SDC 2.6 ms, RACS 2.0 ms, RCP 2.67 ms; utilization 98.1 / 98.8 / 98.1 %; no losses
    Fig. 4.10         "comparable at low loads"; RCP's AFCT rises "significantly" with the arrival
                      rate (to about 23-29 ms at 2000/s in the figure's garbled labels), RACS "largely
                      remains same even at arrival rate of 2000 flows/sec" (about 2-2.5 ms)
    Fig. 3.13         the same for SDC against TCP
    Fig. 4.12         "~98% flows complete within 10 ms in case of RACS and ~84% in case of RCP"
                      (the rate is not given: 2000/s, the benchmark's highest, is used)

flowsched (fluid): ``BigSwitch(4, 1 Gbps)``, ``delay_us=300``; TCP and RCP are both ``ps`` (the
fair share TCP converges to and RCP assigns explicitly), SDC ``sdc`` (eq. 3.12's steady-state
weights), RACS ``racs`` (w_min + w_max exp(-a * remaining)), flowsched's defaults. AFCT over
the query responses only (the background flows excluded).

Grids: --quick 500 responses, rates 100, 1000, 2000; default 5,000 responses x 3 seeds, rates
100, 500, 1000, 1300, 2000; --full 20,000 responses x 5 seeds, rates 100 to 2000 by 100.

Packet model: TCP = ``ps`` over ``tcp``, RCP = ``ps`` over ``rcp`` (docs/packet.md#rcp: routers
compute one rate per link, senders pace at the path's minimum), SDC = ``sdc`` over ``sdc``
(docs/packet.md#sdc: the thesis' window law on the routers' load factor), RACS = ``racs`` over
``racs`` (docs/packet.md#racs: routers share capacity by size-based weights). Incast (packet
only): n servers (1 to 64) each send 25 KB at once to one client through the thesis' setting
(1 Gbps, 300 us links, 100-packet buffers of 1,500 B, RTOmin 10 ms), once (the thesis repeats
the pattern 500 times); the loss rate is data packets dropped / data packets sent.
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

PAPER = "Munir (003): SDC and RACS, Tables 3.4 / 4.2, Figs. 3.13 / 4.10 / 4.12"
SCHEDS = ("ps", "sdc", "racs")
LABEL = {"ps": "TCP/RCP (ps)", "sdc": "SDC", "racs": "RACS", "rcp": "RCP"}
INCAST_N = (1, 2, 4, 8, 16, 32, 64)
INCAST_T = ("tcp", "rcp", "sdc", "racs")
MIX_RATE = 1000.0
N_BACKGROUND = 2


def grid(mode: str) -> tuple[int, int, list[float]]:
    if mode == "quick":
        return 500, 1, [100.0, 1000.0, 2000.0]
    if mode == "full":
        return 20_000, 5, [100.0 * i for i in range(1, 21)]
    return 5000, 3, [100.0, 500.0, 1000.0, 1300.0, 2000.0]


def one(model: str, dist: str, rate: float, n: int, seed: int, packet_kw: dict | None = None) -> dict:
    sw = flowsched.BigSwitch(4, 1.0)
    tr = workloads.background_plus_queries(dist, query_rate_hz=rate, n_queries=n, seed=seed)
    out = {}
    # packet model: "ps" is TCP; RCP runs as its own transport (on the fluid model RCP is "ps")
    runs = [(s, s, ("tcp" if s == "ps" else s) if model == "packet" else None) for s in SCHEDS]
    if model == "packet":
        runs.append(("rcp", "ps", "rcp"))
    for s, sched, transport in runs:
        try:
            kw = (packet_kw or {}) if model == "packet" else {}
            r = C.simulate(tr, sw, sched, model, transport=transport, delay_us=300.0, **kw)
        except C.Unavailable as e:
            out[s] = e
            continue
        q = r.flows[r.flows["id"] >= N_BACKGROUND]
        ok = ~q["terminated"] & np.isfinite(q["fct_s"])
        out[s] = {"afct_s": float(q.loc[ok, "fct_s"].mean()), "within_10ms": float((q.loc[ok, "fct_s"] <= 0.01).mean()),
                  "utilization": float(r.summary().overall["max_link_utilization"])}
    return out


def run_model(model: str, n: int, seeds: int, rates: list[float], seed0: int, packet_kw: dict | None = None) -> dict:
    def mean(pts: list[dict]) -> dict:
        res = {}
        for s in pts[0]:
            vals = [p[s] for p in pts]
            if any(isinstance(v, C.Unavailable) for v in vals):
                res[s] = next(v for v in vals if isinstance(v, C.Unavailable))
            else:
                res[s] = {k: float(np.mean([v[k] for v in vals])) for k in vals[0]}
        return res

    mix = mean([one(model, "sdc_uniform", MIX_RATE, n, seed0 + i, packet_kw) for i in range(seeds)])
    bench = {rate: mean([one(model, "sdc_pareto", rate, n, seed0 + i, packet_kw) for i in range(seeds)])
             for rate in rates}
    jitter = (packet_kw or {}).get("link_jitter_ns", 0.0)
    return {"mix": mix, "bench": bench, "incast": incast(model, jitter)}


def incast(model: str, link_jitter_ns: float = 0.0) -> dict:
    """Figs. 3.9-3.10 / 4.6-4.7 on the packet model: per transport, per number of servers, the
    mean FCT and the loss rate; the fluid model has no buffers (Unavailable). ``link_jitter_ns``:
    the packet option (0, the default: none)."""
    if model != "packet":
        return {"unavailable": C.Unavailable("packet-only; the fluid model has no buffers or losses")}
    out: dict = {}
    for t in INCAST_T:
        rows = {}
        for n in INCAST_N:
            tr = pd.DataFrame({"arrival_s": 0.0, "src": np.arange(1, n + 1), "dst": 0, "size_bytes": 25_000.0})
            sched = "ps" if t in ("tcp", "rcp") else t
            r = C.simulate(tr, flowsched.BigSwitch(n + 1, 1.0), sched, model, transport=t, delay_us=300.0,
                           buffer_bytes=150_000, min_rto_s=10e-3, link_jitter_ns=link_jitter_ns)
            p = r.packet
            rows[n] = {"afct_s": float(r.flows["fct_s"].mean()), "loss": p["data_dropped"] / p["data_packets"],
                       "timeouts": int(p["timeouts"])}
        out[t] = rows
    return out


def val(d: dict, s: str, key: str) -> float:
    v = d[s]
    if isinstance(v, C.Unavailable):
        raise v
    return v[key]


def rcp(d: dict) -> str:
    """The key of RCP's runs: its own transport on the packet model, ``ps`` on the fluid model."""
    return "rcp" if "rcp" in d else "ps"


def claims(rates: list[float]) -> list[C.Claim]:
    lo, hi = min(rates), max(rates)

    def sdc_beats_tcp(r):
        s, t = val(r["mix"], "sdc", "afct_s"), val(r["mix"], "ps", "afct_s")
        return C.Verdict(s < t, f"SDC {C.fmt_ms(s)}, TCP {C.fmt_ms(t)} ({t / s:.2f}x)")

    def tcp_ratio(r):
        s, t = val(r["mix"], "sdc", "afct_s"), val(r["mix"], "ps", "afct_s")
        return C.Verdict(t / s >= 3.0, f"TCP/SDC {t / s:.2f}x")

    def tcp_level(r):
        t = val(r["mix"], "ps", "afct_s")
        return C.Verdict(6e-3 <= t <= 18e-3, f"TCP {C.fmt_ms(t)}")

    def racs_sdc_rcp_order(r):
        a, s, p = (val(r["mix"], x, "afct_s") for x in ("racs", "sdc", rcp(r["mix"])))
        return C.Verdict(a < s < p, f"RACS {C.fmt_ms(a)}, SDC {C.fmt_ms(s)}, RCP {C.fmt_ms(p)}")

    def sdc_close_to_rcp(r):
        s, p = val(r["mix"], "sdc", "afct_s"), val(r["mix"], rcp(r["mix"]), "afct_s")
        return C.Verdict(abs(p / s - 1) <= 0.05, f"RCP/SDC {p / s:.2f}")

    def utilization(r):
        u = {x: val(r["mix"], x, "utilization") for x in SCHEDS}
        return C.Verdict(min(u.values()) >= 0.98, ", ".join(f"{LABEL[k]} {100 * v:.1f}%" for k, v in u.items()))

    def comparable_low(r):
        a = [val(r["bench"][lo], x, "afct_s") for x in (rcp(r["bench"][lo]), "sdc", "racs")]
        return C.Verdict(max(a) / min(a) <= 1.25, f"at {lo:.0f}/s: max/min {max(a) / min(a):.2f} "
                         f"({', '.join(C.fmt_ms(x) for x in a)})")

    def rcp_rises(r):
        k = rcp(r["bench"][hi])
        p = val(r["bench"][hi], k, "afct_s") / val(r["bench"][lo], k, "afct_s")
        return C.Verdict(p >= 2.0, f"RCP {p:.2f}x from {lo:.0f} to {hi:.0f}/s")

    def flat(name):
        def f(r):
            x = val(r["bench"][hi], name, "afct_s") / val(r["bench"][lo], name, "afct_s")
            return C.Verdict(x <= 1.25, f"{LABEL[name]} {x:.2f}x from {lo:.0f} to {hi:.0f}/s")
        return f

    def within_10ms(r):
        a, p = val(r["bench"][hi], "racs", "within_10ms"), val(r["bench"][hi], rcp(r["bench"][hi]), "within_10ms")
        return C.Verdict(a >= 0.95 and p <= 0.90, f"at {hi:.0f}/s: RACS {100 * a:.1f}%, RCP {100 * p:.1f}%")

    def incast(r):
        if "unavailable" in r["incast"]:
            raise r["incast"]["unavailable"]
        lo_n, hi_n = min(INCAST_N), max(INCAST_N)
        t = r["incast"]["tcp"]
        grow = t[hi_n]["loss"] > t[lo_n]["loss"] and t[hi_n]["afct_s"] > t[lo_n]["afct_s"]
        lossless = {x: all(r["incast"][x][n]["loss"] == 0 for n in INCAST_N) for x in ("sdc", "racs")}
        return C.Verdict(grow and all(lossless.values()),
                         f"TCP AFCT {C.fmt_ms(t[lo_n]['afct_s'])} -> {C.fmt_ms(t[hi_n]['afct_s'])}, loss "
                         f"{t[lo_n]['loss']:.3f} -> {t[hi_n]['loss']:.3f} ({lo_n} -> {hi_n} servers); lossless: "
                         + ", ".join(f"{x.upper()} {'yes' if v else 'no'}" for x, v in lossless.items()))

    def incast_sdc(r):
        if "unavailable" in r["incast"]:
            raise r["incast"]["unavailable"]
        t, s = r["incast"]["tcp"], r["incast"]["sdc"]
        lossless = [n for n in INCAST_N if s[n]["loss"] == 0]
        big = [n for n in INCAST_N if n >= 16]
        ok = all(s[n]["loss"] == 0 for n in INCAST_N) and all(s[n]["afct_s"] < t[n]["afct_s"] for n in big)
        return C.Verdict(ok, f"SDC lossless up to {max(lossless) if lossless else 0} servers (loss "
                             f"{s[max(INCAST_N)]['loss']:.3f} at {max(INCAST_N)}); AFCT SDC/TCP at "
                             + ", ".join(f"{n}: {s[n]['afct_s'] / t[n]['afct_s']:.2f}" for n in big))

    def incast_losses_rise(r):
        if "unavailable" in r["incast"]:
            raise r["incast"]["unavailable"]
        lo_n, hi_n = min(INCAST_N), max(INCAST_N)
        t, p = r["incast"]["tcp"], r["incast"]["rcp"]
        ok = t[hi_n]["loss"] > t[lo_n]["loss"] and p[hi_n]["loss"] > p[lo_n]["loss"]
        return C.Verdict(ok, f"loss rate at {lo_n} -> {hi_n} servers: TCP {t[lo_n]['loss']:.3f} -> "
                             f"{t[hi_n]['loss']:.3f}, RCP {p[lo_n]['loss']:.3f} -> {p[hi_n]['loss']:.3f}; AFCT TCP "
                             f"{C.fmt_ms(t[hi_n]['afct_s'])}, RCP {C.fmt_ms(p[hi_n]['afct_s'])} at {hi_n}")

    startup = ("start-up: the mix's 2-50 KB responses last a few 1.2 ms round trips, and one 25 KB response "
               "alone (the incast table's first row) takes 2.03 ms under RCP (data at the link's rate from the "
               "SYN-ACK on), 3.22 ms under RACS (two header round trips first), 4.32 ms under SDC (windows of 2 "
               "packets, doubling per round trip); the mix keeps that order once RCP's rate has settled (its "
               "responses of the first 0.5 s, the whole --quick mix, average 12 ms while the two background flows "
               "start, 2.7-3.0 ms afterwards)")
    no_queues = ("the fluid model has no queues or losses: TCP's 12 ms in the mix is queueing in 100-packet "
                 "drop-tail buffers behind the long flows and losses (loss rate 0.134 in Table 3.4)")
    return [
        C.Claim("Table 3.4", "mix: SDC's AFCT below TCP's", "2.6 vs 12 ms", sdc_beats_tcp, no_queues),
        C.Claim("Table 3.4", "mix: TCP at least 3x SDC", "4.6x", tcp_ratio, no_queues),
        C.Claim("Table 3.4", "mix: TCP's AFCT about 12 ms (6-18 ms)", "12 ms", tcp_level, no_queues),
        C.Claim("Table 4.2", "mix: RACS < SDC < RCP (AFCT)", "2.0 < 2.6 < 2.67 ms", racs_sdc_rcp_order,
                "see the measured values", startup),
        C.Claim("Table 4.2", "mix: SDC and RCP within 5%", "2.6 vs 2.67 ms", sdc_close_to_rcp,
                "the fluid sdc applies eq. 3.12's steady-state weights (10:1 against the background) from a "
                "response's first byte; in ns-2 a 2-50 KB response lives a few RTTs, too short for SDC's AIMD "
                "classes to reach that share, and RCP's explicit rate is not the ideal fair share at once", startup),
        C.Claim("Tables 3.4, 4.2", "mix: utilization >= 98% for every protocol", "98.1-99.99%", utilization,
                "see the measured values"),
        C.Claim("Fig. 4.10", f"benchmark: comparable AFCTs at {lo:.0f} flows/s (max/min <= 1.25)",
                "about 2.0-2.5 ms each", comparable_low,
                "the fluid model gives the short responses their steady-state weighted share from the first "
                "byte, so RACS's and SDC's advantage over fair sharing shows even at low rates",
                "start-up: at 100/s responses seldom overlap, so each protocol's AFCT is about a lone response's: "
                "a 25 KB one takes 2.03 ms under RCP, 3.22 ms under RACS (two header round trips first), 4.32 ms "
                "under SDC (windows of 2 packets, doubling per round trip)"),
        C.Claim("Fig. 4.10", f"benchmark: RCP's AFCT rises >= 2x from {lo:.0f} to {hi:.0f} flows/s",
                "about 2 to 23-29 ms", rcp_rises,
                "the paper ascribes RCP's rise to 'large queue buildups and increased loss rate', not modelled"),
        C.Claim("Fig. 4.10", f"benchmark: RACS stays about the same up to {hi:.0f}/s (<= 1.25x)", "about 2-2.5 ms",
                flat("racs"), "see the measured values",
                "the large responses: one of 500 KB or more has about the weight w_min of the background flows "
                "and asks once per round trip for w_c C / W, with W counting every short response present "
                "(weight 60 to 100, those in their two header round trips included); at 2000/s one almost always "
                "is, so the large ones crawl at about C/80 per round while the link idles (its busiest link 79% "
                "busy): on the default grid responses >= 500 KB take 1.10 s at 2000/s against 64 ms at 100/s, "
                "those under 50 KB 3.75 against 3.14 ms (docs/papers.md)"),
        C.Claim("Fig. 3.13", f"benchmark: SDC stays about the same up to {hi:.0f}/s (<= 1.25x)",
                "'largely remains same'", flat("sdc"), "see the measured values"),
        C.Claim("Fig. 4.12", f"benchmark at {hi:.0f}/s: >= 95% within 10 ms with RACS, <= 90% with RCP",
                "~98% vs ~84%", within_10ms,
                "without queueing delay almost every response finishes within 10 ms under fair sharing too"),
        C.Claim("Figs. 3.9-3.10, 4.6-4.7", "incast: TCP's AFCT and losses grow with the senders; SDC, RACS lossless",
                "TCP losses grow; SDC, RACS zero loss", incast, "packet-only: the fluid model has no buffers or losses",
                "SDC's first windows (2 packets, then doubling per RTT) overflow the 100-packet port beyond 16 "
                "servers in this single round (the thesis repeats the pattern 500 times); RACS is lossless"),
        C.Claim("Figs. 3.9-3.10", "incast: SDC has zero losses and, with many servers, a lower AFCT than TCP",
                "zero loss; AFCT improves as servers increase", incast_sdc,
                "packet-only: the fluid model has no buffers or losses",
                "SDC's first windows (2 packets, then doubling per RTT) overflow the 100-packet port "
                "beyond 16 servers in this single round (the thesis repeats the pattern 500 times)"),
        C.Claim("Figs. 3.10, 4.7", "incast: TCP's and RCP's loss rates rise with the number of servers",
                "both rise", incast_losses_rise, "packet-only: the fluid model has no buffers or losses",
                "see the measured values"),
    ]


def figure(results: dict, rates: list[float], args) -> None:
    plt = C.pyplot(args)
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for m, r in results.items():
        if isinstance(r, C.Unavailable):
            continue
        for s in r["mix"]:
            try:
                a = [val(r["bench"][x], s, "afct_s") * 1e3 for x in rates]
                w = [val(r["bench"][x], s, "within_10ms") * 100 for x in rates]
            except C.Unavailable:
                continue
            ls = "-" if m == "fluid" else "--"
            axes[0].plot(rates, a, ls, marker="o", label=f"{LABEL[s]} ({m})")
            axes[1].plot(rates, w, ls, marker="o", label=f"{LABEL[s]} ({m})")
    axes[0].set(xlabel="flow arrival rate (flows/s)", ylabel="AFCT of responses (ms)", title="Fig. 4.10 / 3.13")
    axes[1].set(xlabel="flow arrival rate (flows/s)", ylabel="% within 10 ms", title="Fig. 4.12")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    C.save(fig, args, "munir_benchmark.png")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = C.parser(__doc__)
    ap.add_argument("--packet-buffer-bytes", type=int, default=None,
                    help="packet model, mix and benchmark: every port's buffer (default: the packet model's, "
                         "360,000 B; the thesis' 100 packets: 150000)")
    ap.add_argument("--packet-min-rto-s", type=float, default=None,
                    help="packet model, mix and benchmark: every transport's minimum RTO (default: the packet "
                         "model's, 1 s; the thesis gives RTOmin about 10 ms for its incast only)")
    ap.add_argument("--packet-link-jitter-ns", type=float, default=None,
                    help="packet model, every run (incast too): the link jitter (link_jitter_ns; default 0)")
    args = ap.parse_args(argv)
    C.header(PAPER, args)
    packet_kw = {k: v for k, v in (("buffer_bytes", args.packet_buffer_bytes), ("min_rto_s", args.packet_min_rto_s),
                                   ("link_jitter_ns", args.packet_link_jitter_ns)) if v is not None}
    if packet_kw:
        print(f"packet model, mix and benchmark (incast: its jitter only): {packet_kw}")
    n, seeds, rates = grid(C.mode(args))
    results: dict = {}
    numbers: dict = {}
    for m in C.models(args):
        t = C.Timer()
        if m == "packet" and not C.packet_available():
            results[m] = C.Unavailable(C.packet_unavailable_reason())
            continue
        r = results[m] = run_model(m, n, seeds, rates, args.seed, packet_kw)
        print(f"\n{m}: {(len(rates) + 1) * seeds} traces of {n:,} responses in {t}")
        rows = []
        for name, pts in [("mix (1000/s)", r["mix"])] + [(f"pareto {x:.0f}/s", r["bench"][x]) for x in rates]:
            row = {"scenario": name}
            for s in pts:
                v = pts[s]
                row[f"{LABEL[s]} AFCT ms"] = np.nan if isinstance(v, C.Unavailable) else v["afct_s"] * 1e3
                row[f"{LABEL[s]} <=10ms %"] = np.nan if isinstance(v, C.Unavailable) else v["within_10ms"] * 100
            rows.append(row)
        df = pd.DataFrame(rows).set_index("scenario")
        C.print_frame(f"{m}: responses' AFCT and share within 10 ms", df)
        numbers[m] = df.reset_index()
        if "unavailable" not in r["incast"]:
            ri = r["incast"]
            inc = pd.DataFrame([{"servers": n, **{f"{t.upper()} {k}": ri[t][n][k] * (1e3 if k == "afct_s" else 1)
                                                  for t in INCAST_T for k in ("afct_s", "loss", "timeouts")}}
                                for n in INCAST_N]).set_index("servers")
            inc.columns = [c.replace("afct_s", "AFCT ms") for c in inc.columns]
            C.print_frame(f"{m}: incast, 25 KB per server (1 Gbps, 300 us links, 100-packet buffers, "
                          "RTOmin 10 ms)", inc)
            numbers[m + "_incast"] = inc.reset_index()
    figure(results, rates, args)
    return C.report(PAPER, claims(rates), results, args, numbers,
                    f"{n:,} responses x {seeds} seed(s), mix at {MIX_RATE:.0f}/s, Pareto at {rates} flows/s")


if __name__ == "__main__":
    sys.exit(main())
