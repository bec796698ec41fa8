"""aSCC (Davydow et al., "SRPT-based Congestion Control for Flows with Unknown Sizes";
shared/papers/000_*), section VIII, Figs. 4 (data mining, DM) and 5 (web search, WS).

The paper's setting: the pFabric/PIAS leaf-spine (9 ToRs x 16 hosts = 144 hosts, 4 spines,
10 Gbps host links, 40 Gbps ToR-spine) with the link delays of the authors' ns-2 runs (20.2 us
per host link, 0.2 us per ToR-spine link: an unloaded round trip of about 82 us; the paper
does not give them, its simulation code does) and its packets sprayed over the spines (each
ToR's uplinks as one link of 160 Gbps: ``paper_fabric``), FCTs until the sender has
the last ACK, as the authors' scripts time them (``paper_fct``; ``--zero-delay`` for the
fabric without delays and FCTs to the last byte), Poisson all-to-all arrivals at load L (of
wire bytes, 1500 per 1460 of payload, as its code computes the rate), sizes from
the web-search and data-mining CDFs, packet arrival times of a flow spread uniformly over
[a_i, a_i + alpha * Delta t_i] (flowsched: ``workloads.add_data_span``; on the packet model
Delta t of whole 1500-byte packets, as its code, on the fluid model size / rate). Four CCs: SRPT
(clairvoyant: knows the size when the first packet arrives), ASCC (flowsched ``asrpt``:
the size is known only once all of the flow's data has arrived, ``size_known=False``),
PIAS (its 8-queue thresholds for the workload at the load, ``workloads.pias_thresholds``;
on the fluid model with ``pias_sharing="fair"``: the flows of one queue share it, as PIAS's
DCTCP senders share a switch queue) and LAS. The fluid ASCC's incomplete flows share their
class likewise (``incomplete_sharing="fair"``; ``--incomplete-fifo`` for Algorithm 1's FIFO).
AFCT over all flows, mice (< 100 KB), medium (100 KB - 10 MB), elephants (> 10 MB);
Figs. 4/5 (a-d) vary alpha from 0 to 2, (e-h) vary L from 0.5 to 0.9 at alpha = 1 (the
text: "In Fig. 5(f), where we set alpha = 1"). The text does not give the load of the
alpha sweeps; 0.8 is used here (PIAS's default load).

Grids (flows per point; one seed unless ``--seeds N``: the AFCTs then pool the flows of N
seeds, and each claim says in how many of the seeds alone it holds):
  --quick    2,000 flows, loads 0.5, 0.8, 0.9, alpha 0, 1, 2 (alpha sweep at 0.8)
  default   10,000 flows, loads 0.5, 0.6, 0.7, 0.8, 0.9, alpha 0, 0.5, 1, 1.5, 2
  --full    50,000 flows, loads 0.5 to 0.9 by 0.1, alpha 0 to 2 by 0.2
The packet model runs 300 (quick) and 1,000 (default) flows per point on the same points
(``--packet-flows N`` for more: traces of a few thousand flows last a few elephant FCTs, so
their AFCTs are transient; 20,000 flows per point, about an hour of CPU, reproduced 8 of the
12 claims on packets, and 9 with the authors' senders' SACK, ``--packet-option sack=true``, about
77 min of CPU; docs/papers.md).
The paper's runs are longer (its figures are averages over long ns-2 runs); the quick grid is
a smoke test whose elephant numbers rest on a few dozen flows.

Packet model (--model packet/both): every CC over DCTCP end hosts as in the paper ("all four
CCs use DCTCP-based control logic at end hosts"), with the switches' priorities from the
scheduler (``srpt``, ``asrpt``, ``las``: pFabric's priority queues marking ECN under DCTCP
senders, and ``asrpt`` over ``dctcp`` is ASCC with its rules when a flow becomes complete;
``pias``: PIAS's queues); where the packet model refuses that combination the run
falls back to its default transport for the scheduler and says so. The paper's buffers
and minimum RTO: "We set buffer sizes bs and rt_min following PIAS's evaluations: bs = 240
pkts ... and rt_min ~ 24 RTT"; its code: 240 packets, a minimum RTO of 2 ms (24.5 round
trips of its fabric) and an initial window of 70 packets (``PACKET_OPTS``). Its DCTCP: its
code's K (65 packets) and g (1/16), the packet model's defaults, and alpha from 0 (ns-2's
DCTCP; ``dctcp_alpha_init=0``). The paper defines the marking by the packets a switch sent
while a packet waited (``ecn_marking="sojourn"``, ``--zero-delay``'s); its code's switches
mark otherwise, and the packet model does as they do (``packet_options``): PIAS's
(``Queue/Priority`` with per-port ECN) on arrival by the bytes of all the port's queues
(``pias_port_ecn=True``, ``ecn_marking="enqueue"``), the others' (``DropTail::mark_ecn``) the
waiting packet of the lowest priority at each arrival to a queue of K or more
(``ecn_marking="worst"``). Data arriving over time
(alpha > 0) is the packet model's ``data_span_s`` (docs/packet.md). ``--spray``: packets
sprayed over the 4 spines of 40 Gbps and no fast retransmit, as its code routes and
retransmits (``PACKET_OPTS_SPRAY``); by default one 160 Gbps link per ToR and fast
retransmit at 3 duplicate ACKs. ``--mintcp``: the senders' timer of the authors' code (always
the 2 ms minimum, no backoff; ``PACKET_OPTS_MINTCP``). ``--chunks`` (both models): each flow's
data complete at the last of its chunks as the authors' code draws them (``CHUNKS``,
``workloads.add_data_span(chunks=...)``), instead of at the end of alpha Delta t.
``--packet-option KEY=VALUE`` (repeatable): a packet option over the setting's for every CC, e.g.
``sack=true`` for the SACK of the authors' senders (``MinTCP-Sack``; docs/papers.md, "aSCC against its
authors' ns-2").
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import reproduce_common as C  # noqa: E402
from compare_packet import parse_overrides  # noqa: E402

import flowsched  # noqa: E402
from flowsched import workloads  # noqa: E402

PAPER = "aSCC (000), section VIII, Figs. 4-5"
CCS = ("srpt", "asrpt", "pias", "las")
LABEL = {"srpt": "SRPT", "asrpt": "ASCC", "pias": "PIAS", "las": "LAS"}
WLS = {"WS": "websearch", "DM": "datamining"}
ALPHA_SWEEP_LOAD = 0.8
LOAD_SWEEP_ALPHA = 1.0
# the most chunks a flow's data comes in, in the authors' runs (--chunks): max_num_chunks per workload in their
# scripts/config.toml
CHUNKS = {"WS": 20_000, "DM": 100}


def grid(mode: str) -> tuple[int, list[float], list[float]]:
    if mode == "quick":
        return 2000, [0.5, 0.8, 0.9], [0.0, 1.0, 2.0]
    if mode == "full":
        return 50_000, [0.5, 0.6, 0.7, 0.8, 0.9], [round(0.2 * i, 1) for i in range(11)]
    return 10_000, [0.5, 0.6, 0.7, 0.8, 0.9], [0.0, 0.5, 1.0, 1.5, 2.0]


def packet_flows(mode: str, n: int) -> int:
    """The packet model runs fewer flows per point (about 200,000 packets/s here): 300 (quick),
    1,000 (default), the fluid count (full)."""
    return {"quick": 300, "default": 1000}.get(mode, n)


def points(loads: list[float], alphas: list[float]) -> list[tuple[float, float]]:
    pts = [(ALPHA_SWEEP_LOAD, a) for a in alphas] + [(load, LOAD_SWEEP_ALPHA) for load in loads]
    return sorted(set(pts))


def _rtt0_s(topo) -> float:
    """The unloaded round trip across the spine on the packet model (a full data packet out,
    its ACK back): the RTT the paper's rt_min is a multiple of."""
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [topo.n_hosts - 1], "size_bytes": [1e6]})
    sim = flowsched.Simulation(tr, topo, "ps", model="packet", transport="dctcp")
    sim.step(0.0)
    return float(sim.active()["srtt_s"].iloc[0])


#: The link delays of the paper's ns-2 runs, which the paper does not state; its simulation
#: code (the paper's reference [21], github.com/pschuprikov/ascc at eff325e) gives them:
#: ``scripts/config.toml`` sets ``mean_link_delay = 0.0000002`` and ``host_delay = 0.000020``
#: (seconds), and ``scripts/spine_empirical.tcl`` gives each host link ``host_delay +
#: mean_link_delay`` and each ToR-spine link ``mean_link_delay``: 40.8 us one way across the
#: spine (40.4 us inside a rack), an unloaded round trip of about 82 us.
HOST_LINK_DELAY_US = 20.2
CORE_LINK_DELAY_US = 0.2


def paper_fabric(delays: bool = True, spines: bool = False):
    """The paper's fabric: the pFabric/PIAS leaf-spine (9 ToRs x 16 hosts at 10 Gbps, 4 spines
    at 40 Gbps) with its link delays (``HOST_LINK_DELAY_US``, ``CORE_LINK_DELAY_US``), as a
    graph topology. The authors' runs spray packets over the spines (``config.toml``:
    ``enable_multi_path = 1``, ``per_flow_mp = 0``: ns-2's multipath classifier, packet by
    packet), so a ToR's 4 uplinks (and downlinks) carry equal shares: here they are one link of
    4 x 40 = 160 Gbps to one spine node, as the fluid model routes a flow on one path.
    ``spines=True``: the 4 spines of 40 Gbps each, for the packet model's packet spraying
    (``load_balancing="packet"``). Without the delays: flowsched's ``LeafSpine()`` (per-flow
    ECMP over the 4 spines)."""
    if not delays:
        return flowsched.LeafSpine()
    import networkx as nx

    g = nx.Graph()
    hosts = []
    for t in range(9):
        for j in range(16):
            hosts.append(f"h{16 * t + j}")
            g.add_edge(hosts[-1], f"tor{t}", gbps=10.0, delay_us=HOST_LINK_DELAY_US)
        if spines:
            for s in range(4):
                g.add_edge(f"tor{t}", f"spine{s}", gbps=40.0, delay_us=CORE_LINK_DELAY_US)
        else:
            g.add_edge(f"tor{t}", "spines", gbps=4 * 40.0, delay_us=CORE_LINK_DELAY_US)
    return flowsched.from_networkx(g, hosts)


def paper_fct(flows: pd.DataFrame) -> pd.DataFrame:
    """The flows with ``fct_s`` as the paper measures it: until the sender receives the last
    ACK (its ns-2 scripts time a flow from its start to ``done_data``, the sender's callback on
    the last ACK: ``tcp-common-opt.tcl``), one trip more than flowsched's ``fct_s`` (the last
    byte at the receiver). The ACK's trip back is counted as the path's propagation delay
    (``path_delay_s``): its serialization (40 B, 32 ns a hop at 10 Gbps) and any queueing on
    the way back are left out."""
    return flows.assign(fct_s=flows["fct_s"] + flows["path_delay_s"])


#: ``--zero-delay`` (the setting before the paper's delays were found) keeps the buffers and
#: the marking only: no link delays, the default initial window, and the minimum RTO
#: ``RTO_RTTS`` unloaded round trips.
#: Its TCP is ns-2's, which grows the window on every new ACK without an echo (the authors'
#: ``EcnProcessor::can_open_cwnd``), not Linux's or ns-3's hold after a cut (the packet model's
#: default since 2026-11-29): ``dctcp_hold_in_cwr=False``. Against the authors' ns-2 on their
#: 3,000-flow web-search runs (``ascc_ns2/compare.py --opt sack=true``), ns-2's own rule (a scratch
#: build) gave what False gives (SRPT 1.008 overall, LAS 0.955 / 0.956), the hold SRPT 1.040, LAS 1.015.
PACKET_OPTS_ZERO_DELAY: dict = {"buffer_bytes": 240 * 1500, "ecn_marking": "sojourn", "dctcp_hold_in_cwr": False}
#: The paper's buffers ("following PIAS's evaluations: bs = 240 pkts"): 240 packets of
#: 1,500 B per port. Its minimum RTO ("rt_min ~ 24 RTT") and initial window, from its
#: simulation code (``scripts/config.toml``, every ``[control.*]`` section): ``min_rto =
#: 0.002`` s (24.5 of the round trips above) and ``init_window = 70`` packets (about one
#: bandwidth-delay product). Its DCTCP marks a packet "if ... the number of packets
#: transmitted by this element between p's enqueue and p's deque exceeds a certain
#: threshold" (section VII): ``ecn_marking="sojourn"``; the threshold is the packet model's
#: K, 65 packets of 1,500 B, the code's ``dctcp_k = 65.0``.
#: Its DCTCP is ns-2's, whose alpha starts at 0 (``ecnhat_alpha_ 0.0`` in ns-2's
#: ``ns-default.tcl``; Linux and ns-3, and the packet model's default, start at 1): the first
#: marks of a flow cut its window by 1/32 instead of by half. Played flow for flow against the
#: authors' ns-2 (``benchmarks/references/ascc_ns2``), alpha 1 left WS SRPT's medium flows 8%
#: and DM ASCC's 7% slower than theirs; alpha 0 brings both within 1% and 5%.
PACKET_OPTS: dict = {**PACKET_OPTS_ZERO_DELAY, "min_rto_s": 0.002, "init_cwnd_packets": 70, "dctcp_alpha_init": 0.0}
#: PIAS's switches in the authors' code (ns-2's ``Queue/Priority``, ``marking_scheme_ = 2``):
#: a packet is marked on arrival when the bytes of all the port's queues exceed K.
PACKET_OPTS_PIAS: dict = {"pias_port_ecn": True, "ecn_marking": "enqueue"}
#: The other CCs' switches in the authors' code (their ``DropTail::mark_ecn``): on each arrival at
#: a queue of K or more, the waiting packet of the lowest priority is marked (``ecn_marking="worst"``)
#: rather than, as the paper's text defines, a packet that waited while K were sent (sojourn).
PACKET_OPTS_PRIO: dict = {"ecn_marking": "worst"}
#: The options above that only dctcp reads (a run that falls back to another transport drops them).
DCTCP_ONLY = ("dctcp_alpha_init", "pias_port_ecn", "ecn_marking", "dctcp_hold_in_cwr")
#: ``--spray``: the packet model sprays packets over the 4 spines (``paper_fabric(spines=True)``)
#: as the authors' code does, and its senders, like the code's (``enable_dupack = false``: the
#: spraying reorders packets), never retransmit on duplicate ACKs.
PACKET_OPTS_SPRAY: dict = {"load_balancing": "packet", "dupack_threshold": 0}
# --mintcp: its senders' retransmission timer (pFabric's minimal TCP, MinTcpAgent::rtt_timeout in
# ns2/tcp/tcp-full.cc: always min_rto, no RTT estimate, no backoff)
PACKET_OPTS_MINTCP: dict = {"fixed_rto": True}
RTO_RTTS = 24


def packet_options(cc: str, delays: bool = True, spray: bool = False, mintcp: bool = False) -> dict:
    """The packet model's options for ``cc`` in the paper's setting (``PACKET_OPTS``, with the
    switches' marking of the authors' code, ``PACKET_OPTS_PIAS`` or ``PACKET_OPTS_PRIO``), or
    with ``delays=False`` the setting before the paper's code was read (``PACKET_OPTS_ZERO_DELAY``);
    ``spray``, ``mintcp``: ``--spray``, ``--mintcp``. The minimum RTO of ``delays=False`` depends
    on the fabric: ``run_model`` sets it."""
    if not delays:
        return dict(PACKET_OPTS_ZERO_DELAY)
    opts = dict(PACKET_OPTS)
    opts.update(PACKET_OPTS_PIAS if cc == "pias" else PACKET_OPTS_PRIO)
    if spray:
        opts.update(PACKET_OPTS_SPRAY)
    if mintcp:
        opts.update(PACKET_OPTS_MINTCP)
    return opts


class Pooled(dict):
    """{(wl, load, alpha, cc): {'all','mice','medium','elephant'} AFCT in s, or C.Unavailable},
    over the flows of every seed together; ``per_seed`` holds the same dict for each seed
    alone (what tells a claim's verdict from the seeds' noise)."""

    per_seed: list[dict]


def run_model(model: str, n: int, loads: list[float], alphas: list[float], seeds: list[int],
              delays: bool = True, incomplete_sharing: str = "fair", spray: bool = False,
              chunks: bool = False, mintcp: bool = False, jobs: int = 1,
              packet_extra: dict | None = None) -> Pooled:
    """Every point of the grid on ``model``, ``n`` flows per point and seed (one trace per
    seed, workload and load, shared by the CCs and the alphas); with the paper's link delays
    and FCTs (``paper_fabric``, ``paper_fct``) and its load and Delta t with headers, or, with
    ``delays=False``, on a fabric without delays, FCTs to the last byte, without headers.
    ``incomplete_sharing``: the fluid ASCC's (``asrpt``'s). ``spray``: packets sprayed over the
    4 spines (``PACKET_OPTS_SPRAY``; the packet model with the delays only). ``chunks``: each
    flow's data span ends at its last chunk as in the authors' code (``CHUNKS``). ``mintcp``: the
    packet model's senders time out as the authors' (``PACKET_OPTS_MINTCP``). ``jobs``: the
    (seed, workload, load) traces run in that many processes; the results do not depend on it.
    ``packet_extra``: packet options over the setting's, for every CC (``--packet-option``)."""
    extra = dict(packet_extra or {})
    if extra and model == "packet" and C.packet_available():
        # checked once before the grid (a bad option would otherwise turn every run into an n/a row)
        from flowsched.sim import native_packet_options

        topo = paper_fabric(delays, spines=spray)
        for cc in CCS:
            native_packet_options(topo, "dctcp", False, **{**packet_options(cc, delays, spray, mintcp), **extra})
    tasks = [(model, n, loads, alphas, seed, wl, load, delays, incomplete_sharing, spray, chunks, mintcp, extra)
             for seed in seeds for wl in WLS for load in sorted({p[0] for p in points(loads, alphas)})]
    if jobs > 1 and len(tasks) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
            done = list(pool.map(_run_trace, tasks))  # in the tasks' order
    else:
        done = [_run_trace(t) for t in tasks]
    flows: dict = {}
    per_seed: list[dict] = [{} for _ in seeds]
    for task, results in zip(tasks, done, strict=True):
        one = per_seed[seeds.index(task[4])]
        for key, afct, f in results:
            one[key] = afct
            if isinstance(afct, C.Unavailable):
                flows[key] = afct
            elif not isinstance(flows.get(key), C.Unavailable):
                flows.setdefault(key, []).append(f)
    out = Pooled({k: v if isinstance(v, C.Unavailable) else C.afct_by_bucket(pd.concat(v, ignore_index=True))
                  for k, v in flows.items()})
    out.per_seed = per_seed
    return out


def _run_trace(task: tuple) -> list[tuple]:
    """One seed's trace of one workload at one load through every alpha and CC of the grid
    (``run_model``'s unit of work): [(key, AFCT by bucket or C.Unavailable, per-flow FCTs or None)]."""
    model, n, loads, alphas, seed, wl, load, delays, incomplete_sharing, spray, chunks, mintcp, extra = task
    dist = WLS[wl]
    topo = paper_fabric(delays, spines=spray and model == "packet")
    packet_opts = {cc: packet_options(cc, delays, spray, mintcp) for cc in CCS}
    if model == "packet" and C.packet_available() and not delays:
        for opts in packet_opts.values():
            opts["min_rto_s"] = RTO_RTTS * _rtt0_s(topo)
    for opts in packet_opts.values():
        opts.update(extra)
    # the paper's load counts headers (1500 wire bytes per 1460 of payload: its code's
    # arrival rate, congestion_runner/config.py); so does its Delta t, "the minimum
    # possible time that it takes to send all packets of a flow ... out of the sender's
    # host interface" (app-chunks.cc: (1460 + 40) * 8 / rate per packet), which on the
    # fluid model, without headers, is size / rate
    base = workloads.poisson_all_to_all(dist, load=load, hosts=144, link_gbps=10, n_flows=n, seed=seed,
                                        header_factor=delays)
    th = workloads.pias_thresholds(dist, load, nearest=True)
    out: list[tuple] = []
    for (pl, alpha) in points(loads, alphas):
        if pl != load:
            continue
        # with chunks, the same draws at every alpha (the span scales with alpha)
        tr = workloads.add_data_span(base, alpha, 10.0, header_factor=delays and model == "packet",
                                     chunks=CHUNKS[wl] if chunks else None, seed=seed)
        hidden = tr.assign(size_known=False)
        for cc in CCS:
            key = (wl, load, alpha, cc)
            t = tr if cc == "srpt" else hidden  # SRPT is clairvoyant; the others never read sizes
            kw = {"pias_thresholds_bytes": th} if cc == "pias" else {}
            if model == "packet":
                kw.update(packet_opts[cc])
            if cc == "pias" and model == "fluid":
                # PIAS's DCTCP senders share a switch queue: sharing inside a queue
                # (the packet model's transport does that itself)
                kw["pias_sharing"] = "fair"
            if cc == "asrpt" and model == "fluid":
                # ASCC's switches keep the incomplete flows' packets in one FIFO queue,
                # which their DCTCP senders share (the packet model does that itself)
                kw["incomplete_sharing"] = incomplete_sharing
            try:
                try:
                    r = C.simulate(t, topo, cc, model, transport="dctcp" if model == "packet" else None, **kw)
                except C.Unavailable:
                    if model != "packet" or not C.packet_available():
                        raise
                    # the model's default transport, without the options of dctcp's
                    kw = {k: v for k, v in kw.items() if k not in DCTCP_ONLY}
                    r = C.simulate(t, topo, cc, model, **kw)
                f = paper_fct(r.flows) if delays else r.flows
                out.append((key, C.afct_by_bucket(f), f))
            except C.Unavailable as e:
                out.append((key, e, None))
    return out


def with_seed_counts(claim: C.Claim) -> C.Claim:
    """The claim checked on the flows of every seed together, and, with several seeds, on
    each seed alone: the verdict then says in how many seeds it holds."""
    check = claim.check

    def on_seeds(r: dict) -> C.Verdict:
        v = check(r)
        seeds = getattr(r, "per_seed", [])
        if len(seeds) > 1 and v.ok is not None:
            holds = sum(check(s).ok is True for s in seeds)
            v.measured += f"; holds in {holds} of {len(seeds)} seeds alone"
        return v

    claim.check = on_seeds
    return claim


def get(r: dict, wl: str, load: float, alpha: float, cc: str, bucket: str) -> float:
    v = r[(wl, load, alpha, cc)]
    if isinstance(v, C.Unavailable):
        raise v
    return v[bucket]


def claims(loads: list[float], alphas: list[float]) -> list[C.Claim]:
    L, A = ALPHA_SWEEP_LOAD, LOAD_SWEEP_ALPHA
    hi = max(loads)
    a_max = max(alphas)

    def mice_srpt_las_best(r):
        bad = []
        for load in loads:
            g = {cc: get(r, "WS", load, A, cc, "mice") for cc in CCS}
            if not max(g["srpt"], g["las"]) < min(g["pias"], g["asrpt"]):
                bad.append(load)
        g = {cc: get(r, "WS", L, A, cc, "mice") for cc in CCS}
        s = ", ".join(f"{LABEL[c]} {C.fmt_ms(v)}" for c, v in g.items())
        return C.Verdict(not bad, f"L={L}: {s}" + (f"; fails at L={bad}" if bad else f"; holds at every L in {loads}"))

    def ascc_is_srpt_at_alpha0(r):
        a, s, p = (get(r, "WS", L, 0.0, cc, "mice") for cc in ("asrpt", "srpt", "pias"))
        same = abs(a - s) <= 1e-6 * s
        return C.Verdict(same and a < p, f"ASCC/SRPT {a / s:.4f}, ASCC {100 * (a / p - 1):+.0f}% vs PIAS")

    def ascc_above_pias_at_alpha2(r):
        a, p = get(r, "WS", L, a_max, "asrpt", "mice"), get(r, "WS", L, a_max, "pias", "mice")
        return C.Verdict(a > p, f"ASCC {100 * (a / p - 1):+.0f}% vs PIAS at alpha={a_max}")

    def ascc_srpt_same_growth(r):
        da = get(r, "WS", L, a_max, "asrpt", "mice") - get(r, "WS", L, 1.0, "asrpt", "mice")
        ds = get(r, "WS", L, a_max, "srpt", "mice") - get(r, "WS", L, 1.0, "srpt", "mice")
        ok = ds > 0 and da > 0 and 0.75 <= da / ds <= 1.33
        return C.Verdict(ok, f"growth alpha 1->{a_max}: ASCC {C.fmt_ms(da)}, SRPT {C.fmt_ms(ds)}")

    def medium_starvation(r):
        a = get(r, "WS", hi, A, "asrpt", "medium")
        p, las = get(r, "WS", hi, A, "pias", "medium"), get(r, "WS", hi, A, "las", "medium")
        return C.Verdict(p / a >= 1.5 and las / a >= 1.5, f"L={hi}: PIAS {p / a:.2f}x, LAS {las / a:.2f}x ASCC")

    def ascc_near_srpt_medium(r):
        worst = max(get(r, "WS", load, A, "asrpt", "medium") / get(r, "WS", load, A, "srpt", "medium")
                    for load in loads)
        return C.Verdict(worst <= 1.10, f"max ASCC/SRPT over L = {worst:.3f}")

    def las_elephants(r):
        out = []
        for wl in WLS:
            g = {cc: get(r, wl, L, A, cc, "elephant") for cc in CCS}
            out.append((wl, g["las"] > max(g["srpt"], g["asrpt"], g["pias"]), g["las"] / g["srpt"],
                        g["pias"] / g["srpt"]))
        return C.Verdict(all(o[1] for o in out),
                         ", ".join(f"{wl}: LAS/SRPT {x:.2f}, PIAS/SRPT {p:.2f}" for wl, _, x, p in out))

    def pias_elephants(r):
        ws = get(r, "WS", L, A, "pias", "elephant") / get(r, "WS", L, A, "srpt", "elephant")
        dm = get(r, "DM", L, A, "pias", "elephant") / get(r, "DM", L, A, "srpt", "elephant")
        return C.Verdict(ws < 1 and dm > 1, f"PIAS/SRPT: WS {ws:.2f}, DM {dm:.2f}")

    def dm_mice_close(r):
        spread = 0.0
        for load in loads:
            g = [get(r, "DM", load, A, cc, "mice") for cc in CCS]
            spread = max(spread, max(g) / min(g) - 1)
        return C.Verdict(spread <= 0.03, f"max spread over L = {100 * spread:.1f}%")

    def dm_medium_ascc_beats_pias(r):
        rel = {load: get(r, "DM", load, A, "asrpt", "medium") / get(r, "DM", load, A, "pias", "medium") - 1
               for load in loads}
        return C.Verdict(all(v < 0 for v in rel.values()), "ASCC vs PIAS: "
                         + ", ".join(f"L={k}: {100 * v:+.0f}%" for k, v in rel.items() if k in (min(loads), hi)))

    def unchanged_to_alpha1(r):
        worst = {cc: 0.0 for cc in ("srpt", "las", "pias")}
        for wl in WLS:
            for cc in worst:
                a0, a1 = get(r, wl, L, 0.0, cc, "all"), get(r, wl, L, 1.0, cc, "all")
                worst[cc] = max(worst[cc], abs(a1 / a0 - 1))
        return C.Verdict(max(worst.values()) <= 1e-6, "largest change of the AFCT from alpha 0 to 1: "
                         + ", ".join(f"{cc.upper()} {100 * v:.2g}%" for cc, v in worst.items()))

    def srpt_best_overall(r):
        bad = [load for load in loads for wl in WLS
               if get(r, wl, load, A, "srpt", "all") > min(get(r, wl, load, A, cc, "all") for cc in CCS) * (1 + 1e-9)]
        return C.Verdict(not bad, "SRPT lowest AFCT at every (workload, L)" if not bad else f"not lowest at {bad}")

    out = [
        C.Claim("Fig. 5(b,f)", "WS mice: SRPT and LAS below PIAS and ASCC (every L, alpha=1)",
                "SRPT, LAS near-optimal; PIAS, ASCC higher", mice_srpt_las_best,
                "PIAS's mice depend on how the flows of a queue share it: the fluid run shares them (pias_sharing="
                "'fair', as DCTCP does); per-flow FIFO inside a queue makes its mice 7x slower"),
        C.Claim("Fig. 5(b)", "WS mice, alpha=0: ASCC is exactly SRPT and beats PIAS",
                "ASCC = SRPT, 18% below PIAS", ascc_is_srpt_at_alpha0,
                "the fluid PIAS's mice (a queue shared max-min, no DCTCP dynamics) differ from the paper's"),
        C.Claim("Fig. 5(b)", "WS mice, alpha=2: ASCC above PIAS", "ASCC 9% above PIAS", ascc_above_pias_at_alpha2,
                "the fluid PIAS's mice (a queue shared max-min, no DCTCP dynamics) differ from the paper's"),
        C.Claim("Fig. 5(b)", "WS mice: ASCC and SRPT grow alike from alpha 1 to 2 (lack of data dominates)",
                "same rate of growth", ascc_srpt_same_growth, "the growths differ by more than a third"),
        C.Claim("Fig. 5(g)", f"WS medium, L={hi}: PIAS and LAS >= 1.5x ASCC (mutual starvation)",
                "PIAS 2x, LAS 2.3x ASCC at L=0.9", medium_starvation,
                "the fluid PIAS and LAS starve medium flows less than the paper's, which it ascribes to mutual "
                "starvation among concurrent medium flows under DCTCP (drops and timeouts not modelled)"),
        C.Claim("Fig. 5(g)", "WS medium: ASCC never more than 10% above SRPT (alpha=1)", "<= 10%",
                ascc_near_srpt_medium, "ASCC treats a flow as unknown (behind every known flow) until all its data has "
                "arrived; the paper's own explanation of its <= 10% is that its higher (DCTCP) FCTs make that "
                "period of uncertainty short relative to the FCT, and the fluid FCTs are shorter"),
        C.Claim("Figs. 4-5(d,h)", "elephants: LAS worst of the four (WS and DM)", "LAS loses substantially",
                las_elephants, "LAS does lose to SRPT and ASCC, but the fluid PIAS (whose last queue the elephants "
                "share) loses as much on DM elephants"),
        C.Claim("Figs. 4-5(d,h)", "elephants: PIAS below SRPT on WS, above it on DM",
                "WS 10% lower, DM up to 25% higher", pias_elephants,
                "the paper explains PIAS's WS elephants by drops and DCTCP dynamics, not modelled in the fluid model; "
                "the fluid sign follows the sharing inside PIAS's last queue (per-flow FIFO there put WS elephants "
                "3% below SRPT, sharing 15% above)"),
        C.Claim("Fig. 4(b,f)", "DM mice: the four CCs within 3% of each other", "never exceeds 3%", dm_mice_close,
                "the spread is ASCC's: its mice are unknown (behind every known flow) until all their data has "
                "arrived (alpha=1); the paper's round trip of about 82 us in every FCT (its code's link delays) "
                "makes that wait small beside the FCT, and without it (--zero-delay) the spread is about 60%"),
        C.Claim("Fig. 4(g)", "DM medium: ASCC below PIAS at every L", "10% lower at 0.5, 33% at 0.9",
                dm_medium_ascc_beats_pias, "ASCC's medium flows wait as unknown flows behind the known ones for about "
                "their own transmission time (alpha=1), which costs more than PIAS's DM thresholds (its first queue "
                "holds a flow's first 1.1-1.3 MB); the unknown flows sharing their class (as in ASCC's one switch "
                "queue for them) instead of FIFO narrows the gap by a quarter only (docs/papers.md)"),
        C.Claim("Section VIII", "alpha 0 -> 1: SRPT, LAS and PIAS do not change (data arrives faster than the link)",
                "'we expect PIAS, SRPT, and LAS not to change'", unchanged_to_alpha1,
                "data spacing changes flows' service even below alpha = 1"),
        C.Claim("Figs. 4-5(a,e)", "all flows: clairvoyant SRPT has the lowest AFCT (every L, both workloads)",
                "SRPT lowest", srpt_best_overall,
                "SRPT is optimal only on one link; on the leaf-spine greedy SRPT need not be"),
    ]
    for c in out:
        c.why_not_packet = PACKET_WHY
    return [with_seed_counts(c) for c in out]


#: Why a claim is not reproduced on the packet model (every claim: not investigated one by one).
PACKET_WHY = ("the packet model with the paper's fabric delays, buffers (240 packets), minimum RTO (2 ms) and initial "
              "window (70 packets) from its simulation code, DCTCP's K (65 packets), g (1/16) and initial alpha (0, "
              "ns-2's DCTCP) as there, and its code's switches' ECN marking (PIAS's by the bytes of all a port's "
              "queues on arrival, the others' the lowest-priority packet waiting); its senders' SACK "
              "(--packet-option sack=true), its data arriving in chunks (--chunks) and its senders' fixed timer "
              "(--mintcp) are options here, off unless given (SACK moves some claims, docs/papers.md; chunks and "
              "the timer changed none); not modelled: its probe mode after timeouts. "
              "ASCC is asrpt over dctcp with the paper's switch queues (incomplete flows' packets first in first out "
              "behind the complete flows', the last of them dropped first; a flow's stale packets dropped where its "
              "copies pass them, as the authors' switches do) and its rules when a flow becomes complete "
              "(docs/packet.md); see docs/papers.md for what was investigated")


def figure(results: dict, loads: list[float], alphas: list[float], args) -> None:
    plt = C.pyplot(args)
    if plt is None:
        return
    for wl in WLS:
        fig, axes = plt.subplots(2, 4, figsize=(14, 6.5))
        for j, bucket in enumerate(("all",) + C.BUCKET_NAMES):
            for m, r in results.items():
                if isinstance(r, C.Unavailable):
                    continue
                ls = "-" if m == "fluid" else "--"
                for cc in CCS:
                    try:
                        ya = [get(r, wl, ALPHA_SWEEP_LOAD, a, cc, bucket) * 1e3 for a in alphas]
                        yl = [get(r, wl, load, LOAD_SWEEP_ALPHA, cc, bucket) * 1e3 for load in loads]
                    except C.Unavailable:
                        continue
                    axes[0, j].plot(alphas, ya, ls, marker="o", label=f"{LABEL[cc]} ({m})")
                    axes[1, j].plot(loads, yl, ls, marker="o", label=f"{LABEL[cc]} ({m})")
            axes[0, j].set_title(f"{wl} {bucket}: vs alpha (L={ALPHA_SWEEP_LOAD})")
            axes[1, j].set_title(f"{wl} {bucket}: vs load (alpha={LOAD_SWEEP_ALPHA})")
            axes[0, j].set_xlabel("alpha")
            axes[1, j].set_xlabel("load")
            axes[0, j].set_ylabel("AFCT (ms)")
            axes[1, j].set_ylabel("AFCT (ms)")
        axes[0, 0].legend(fontsize=7)
        fig.suptitle(f"aSCC Fig. {4 if wl == 'DM' else 5} ({wl}), flowsched")
        fig.tight_layout()
        C.save(fig, args, f"ascc_fig{4 if wl == 'DM' else 5}_{wl.lower()}.png")
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = C.parser(__doc__)
    p.add_argument("--seeds", type=int, default=1,
                   help="seeds per point (--seed, --seed + 1, ...): the AFCTs pool the flows of every seed, and each "
                        "claim also says in how many seeds alone it holds (default 1)")
    p.add_argument("--packet-flows", type=int, default=None,
                   help="flows per point and seed on the packet model (default: 300 quick, 1,000 default, the fluid "
                        "count full)")
    p.add_argument("--zero-delay", action="store_true",
                   help="the setting before the paper's code was read: flowsched's LeafSpine() without delays, "
                        "FCTs to the last byte, load and Delta t without headers, the packet model's default initial "
                        "window and a minimum RTO of 24 unloaded round trips")
    p.add_argument("--incomplete-fifo", action="store_true",
                   help="the fluid ASCC's incomplete flows one after another by arrival (Algorithm 1's FIFO) instead "
                        "of sharing their class (incomplete_sharing='fair', as ASCC's one switch queue for them); with "
                        "--zero-delay, the setting of the tables before 2026-11-28")
    p.add_argument("--spray", action="store_true",
                   help="packet model: spray packets over the 4 spines of 40 Gbps, senders without fast retransmit, "
                        "as the authors' code (the fluid model keeps one 160 Gbps link per ToR, its equivalent)")
    p.add_argument("--chunks", action="store_true",
                   help="each flow's data span ends at its last chunk, as the authors' code draws it (min(packets, "
                        "100) chunks for data mining, min(packets, 20,000) for web search, uniform in the span, the "
                        "earliest at once; workloads.add_data_span(chunks=...)); default: the whole alpha Delta t")
    p.add_argument("--mintcp", action="store_true",
                   help="packet model: every retransmission timeout is the 2 ms minimum, without RTT estimate or "
                        "backoff, as the authors' senders (pFabric's minimal TCP; fixed_rto=True); default: RFC 6298")
    p.add_argument("--jobs", type=int, default=1,
                   help="run the grid's traces (one per seed, workload and load) in this many processes; the "
                        "results are the same (default 1)")
    p.add_argument("--packet-option", action="append", default=[], metavar="KEY=VALUE",
                   help="packet model: an option over the setting's for every CC (JSON values, repeatable), e.g. "
                        "sack=true for the SACK of the authors' senders")
    args = p.parse_args(argv)
    packet_extra = parse_overrides(args.packet_option, "--packet-option")
    if packet_extra and args.model == "fluid":
        p.error("--packet-option sets options of the packet model: add --model packet or both")
    if args.jobs < 1:
        p.error(f"--jobs must be >= 1, got {args.jobs}")
    for flag in ("spray", "mintcp"):
        if getattr(args, flag) and (args.zero_delay or args.model == "fluid"):
            p.error(f"--{flag} is a setting of the packet model with the paper's delays: add --model packet or both, "
                    "without --zero-delay")
    if args.seeds < 1:
        p.error(f"--seeds must be >= 1, got {args.seeds}")
    if args.packet_flows is not None and args.packet_flows < 1:
        p.error(f"--packet-flows must be >= 1, got {args.packet_flows}")
    if args.packet_flows is not None and args.model == "fluid":
        p.error("--packet-flows sets the packet model's flows: add --model packet or --model both")
    C.header(PAPER, args)
    if packet_extra:
        print(f"# packet options over the setting's, every CC: {packet_extra}")
    n, loads, alphas = grid(C.mode(args))
    seeds = list(range(args.seed, args.seed + args.seeds))
    results: dict = {}
    for m in C.models(args):
        t = C.Timer()
        nm = n
        if m == "packet":
            nm = args.packet_flows if args.packet_flows is not None else packet_flows(C.mode(args), n)
        if m == "packet" and not C.packet_available():
            results[m] = C.Unavailable(C.packet_unavailable_reason())
        else:
            results[m] = run_model(m, nm, loads, alphas, seeds, delays=not args.zero_delay,
                                   incomplete_sharing="fifo" if args.incomplete_fifo else "fair", spray=args.spray,
                                   chunks=args.chunks, mintcp=args.mintcp, jobs=args.jobs,
                                   packet_extra=packet_extra if m == "packet" else None)
        print(f"{m}: {len(points(loads, alphas)) * len(WLS) * len(CCS) * len(seeds)} runs of {nm:,} flows in {t}")
    numbers = {}
    for m, r in results.items():
        if isinstance(r, C.Unavailable):
            continue
        rows = []
        for (wl, load, alpha, cc), v in sorted(r.items()):
            if isinstance(v, C.Unavailable):
                continue
            rows.append({"workload": wl, "load": load, "alpha": alpha, "cc": LABEL[cc],
                         **{k: v[k] * 1e3 for k in ("all",) + C.BUCKET_NAMES}})
        df = pd.DataFrame(rows).set_index("workload")
        C.print_frame(f"{m}: AFCT (ms) per bucket (mice < 100 KB, medium 100 KB-10 MB, elephant > 10 MB)", df)
        numbers[m] = df.reset_index()
    figure(results, loads, alphas, args)
    grid_s = f"{len(seeds)} seed(s) from {args.seed}, " if len(seeds) > 1 else ""
    grid_s += f"{n:,} flows/point, loads {loads} at alpha={LOAD_SWEEP_ALPHA}, alphas {alphas} at L={ALPHA_SWEEP_LOAD}"
    return C.report(PAPER, claims(loads, alphas), results, args, numbers, grid_s)


if __name__ == "__main__":
    sys.exit(main())
