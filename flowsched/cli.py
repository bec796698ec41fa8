"""The ``flowsched`` command line: generate traces and simulate them.

Examples::

    flowsched generate --workload websearch --load 0.8 --hosts 144 --flows 1000000 --seed 0 --out trace.parquet
    flowsched simulate --trace trace.parquet --scheduler srpt --hosts 144 --link-gbps 10 --out results.csv
    flowsched simulate --trace trace.parquet --scheduler pias --topology leafspine --tors 9 --hosts-per-tor 16 \\
        --spines 4 --link-gbps 10 --core-gbps 40
    flowsched simulate --trace trace.parquet --scheduler ps --hosts 144 --model packet --transport dctcp --delay-us 0.2
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from flowsched import progress, workloads
from flowsched.metrics import Summary
from flowsched.sim import (
    ADMISSION_POLICIES,
    ECN_MARKINGS,
    FAIR_PROJECTIONS,
    LOAD_BALANCINGS,
    MODELS,
    PACKET_OPTIONS,
    PIAS_SHARING,
    SCHEDULER_PATTERNS,
    SCHEDULERS,
    TRANSPORTS,
    Results,
    Simulation,
    is_ga_transform,
    is_pias,
)
from flowsched.topology import BigSwitch, FatTree, Graph, LeafSpine, ParkingLot, Topology, read_graph
from flowsched.traces import (
    MAX_FLOWS,
    PATH_COLUMN,
    TRACE_SUFFIXES,
    TimeResolutionWarning,
    TraceError,
    check_hosts,
    path_name_problem,
    path_strings,
    read_trace,
    write_trace,
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="flowsched",
        description="Datacenter fabric simulator: fluid flow-level (default) and packet-level models.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="generate a Poisson all-to-all trace (CSV or Parquet)")
    g.add_argument("--workload", default="websearch", help="size distribution: a shipped CDF name or a spec "
                   f"like exp:<mean_bytes>; known: {', '.join(workloads.distribution_names())}")
    g.add_argument("--sampling", choices=("ns2int", "linear", "step"), default=None,
                   help="how to read an empirical CDF (default: the file's native rule)")
    g.add_argument("--load", type=float, required=True,
                   help="offered load per host link, in (0, 1) (with --allow-overload: any load > 0)")
    g.add_argument("--allow-overload", action="store_true",
                   help="accept --load >= 1: the fabric is overloaded, queues grow without bound and FCTs "
                        "grow with the trace length (no steady state)")
    g.add_argument("--hosts", type=int, required=True)
    g.add_argument("--link-gbps", type=float, default=10.0)
    g.add_argument("--flows", type=int, required=True)
    g.add_argument("--seed", type=int, default=0, help="seed of the draws, >= 0 (0)")
    g.add_argument("--header-factor", action="store_true",
                   help="count 1500 wire bytes per 1460 payload bytes in the load (PIAS/aSCC)")
    g.add_argument("--out", required=True, help="output path ending in .csv or .parquet")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress display (shown on stderr only when "
                   "stdout and stderr are terminals and the work lasts more than 2 s)")

    s = sub.add_parser("simulate", help="simulate a trace and print the summary")
    s.add_argument("--trace", required=True, help="CSV or Parquet trace (a 'path' column pins routes on a graph "
                   "topology: node names joined by '>')")
    s.add_argument("--scheduler", default="srpt", help=f"one of: {', '.join(SCHEDULERS + SCHEDULER_PATTERNS)}")
    s.add_argument("--topology", default="bigswitch",
                   help="bigswitch, leafspine, fattree, parkinglot, or a graph file (.graphml or networkx "
                        "node-link .json; hosts are the nodes with an integer 'host' attribute, link rates the "
                        "edges' 'gbps')")
    # The topology options default to None, so that one given for a topology that does not
    # read it (_TOPOLOGY_OPTIONS) is refused, not ignored; _simulate fills in the defaults.
    s.add_argument("--hosts", type=int, default=None, help="big switch hosts (default: as many as the trace names); "
                   "parking lot hosts (default 8)")
    s.add_argument("--link-gbps", type=float, default=None, help="host link rate (10; not with a graph file)")
    s.add_argument("--tors", type=int, default=None, help="leaf-spine: top-of-rack switches (9)")
    s.add_argument("--hosts-per-tor", type=int, default=None, help="leaf-spine: hosts per top-of-rack switch (16)")
    s.add_argument("--spines", type=int, default=None, help="leaf-spine: spine switches (4)")
    s.add_argument("--core-gbps", type=float, default=None,
                   help="leaf-spine and parking lot: switch-to-switch rate (default 40); fat-tree: default "
                        "--link-gbps")
    s.add_argument("--fattree-k", type=int, default=None, help="fat-tree arity k (4; k^3/4 hosts)")
    s.add_argument("--oversubscription", type=float, default=None,
                   help="fat-tree: hosts per edge switch / (k/2) (1)")
    s.add_argument("--delay-us", type=float, default=0.0, help="fixed delay per hop added to FCT")
    s.add_argument("--admission", choices=[a for a in ADMISSION_POLICIES if a != "external"], default=None)
    s.add_argument("-k", "--k", type=int, default=None, help="max active flows per destination")
    s.add_argument("--window", type=int, default=None, help="with --k: admit among the first WINDOW waiting (f)")
    s.add_argument("--terminate-missed", action="store_true", help="terminate flows past their deadline")
    s.add_argument("--pias-thresholds", default=None,
                   help="comma-separated PIAS thresholds in bytes (default: web search, load 0.8); applies to "
                        "the pias and gtcp:pias runs (also --compare's, if it is one)")
    s.add_argument("--pias-sharing", choices=PIAS_SHARING, default=None,
                   help="fluid pias: how the flows of one queue share it: fifo (default, one after another) or "
                        "fair (max-min fair sharing, as under PIAS's DCTCP); applies to the pias runs (also "
                        "--compare's, if it is one)")
    s.add_argument("--incomplete-sharing", choices=PIAS_SHARING, default=None,
                   help="fluid asrpt and ga:<inner>: how the incomplete flows (data still arriving) share their "
                        "class: fifo (default, one after another by arrival) or fair (max-min fair sharing, as in "
                        "ASCC's one queue for them); applies to the GA runs (also --compare's, if it is one)")
    s.add_argument("--seed", type=int, default=0,
                   help="seeds random priorities, random admission and ECMP, in [0, 2**64) (0)")
    s.add_argument("--out", default=None, help="per-flow results (.csv or .parquet; on the packet model with each "
                   "flow's timeouts, retransmissions, fast_retransmits and duplicates)")
    s.add_argument("--summary-json", default=None, help="write the summary as JSON here (NaN as null)")
    s.add_argument("--compare", default=None, metavar="SCHEDULER",
                   help="also run SCHEDULER on the same trace and print the share of flows faster/slower "
                        "than under it, with the mean gain and loss (SCHED_TCP Table 2)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress display (shown on stderr only when "
                   "stdout and stderr are terminals and the run lasts more than 2 s)")
    pk = s.add_argument_group("packet model (--model packet; docs/packet.md gives each default and its source)")
    pk.add_argument("--model", choices=MODELS, default="fluid", help="fluid (default) or packet")
    pk.add_argument("--transport", choices=TRANSPORTS, default=None,
                    help="default: dctcp for ps and pias, pfabric for the priority schedulers, sdc for sdc, "
                         "racs for racs; rcp (RCP) with ps")
    pk.add_argument("--mss-bytes", type=int, default=None, help="payload per packet (1460)")
    pk.add_argument("--header-bytes", type=int, default=None, help="headers per packet; an ACK's size (40)")
    pk.add_argument("--buffer-bytes", type=int, default=None,
                    help="buffer of every output port (360000 for tcp/dctcp/rcp, 36864 for pfabric)")
    pk.add_argument("--ecn-threshold-bytes", type=int, default=None, help="DCTCP's marking threshold K (97500)")
    pk.add_argument("--ecn-threshold-packets", type=int, default=None,
                    help="K in packets waiting, ACKs included, as ns-2's and ns-3's RED in packet mode "
                    "(dctcp with ps or gtcp; replaces --ecn-threshold-bytes)")
    pk.add_argument("--buffer-packets", type=int, default=None,
                    help="at most this many packets waiting at a port, ACKs included, beside --buffer-bytes, as "
                    "ns-2's and ns-3's queues in packet mode (one FIFO per port: tcp, or dctcp with ps or gtcp)")
    pk.add_argument("--ecn-marking", choices=ECN_MARKINGS, default=None,
                    help="dctcp's queues mark on arrival by the bytes waiting (enqueue; default) or on departure by "
                         "the bytes sent while the packet waited (sojourn; the aSCC paper's), or, in the priority "
                         "schedulers' queues, mark the waiting packet of the lowest priority (worst; the aSCC authors' "
                         "ns-2)")
    pk.add_argument("--queue-reserve-bytes", type=int, default=None,
                    help="pias: buffer bytes reserved per priority queue, the rest shared (0; pFabric 6.1: 15000)")
    pk.add_argument("--pias-port-ecn", action="store_const", const=True, default=None,
                    help="pias over dctcp: mark by the bytes waiting in all of a port's queues (per-port ECN, the aSCC "
                         "authors' PIAS) instead of the packet's own queue's (per-queue, default)")
    pk.add_argument("--init-cwnd-packets", type=float, default=None, help="initial window (10; pfabric 12, sdc 2)")
    pk.add_argument("--max-cwnd-packets", type=float, default=None, help="window bound (none; pfabric 15)")
    pk.add_argument("--min-rto-s", type=float, default=None,
                    help="tcp/dctcp/rcp: minimum RTO (1 s, RFC 6298); pfabric: the fixed RTO (45e-6)")
    pk.add_argument("--link-jitter-ns", type=float, default=None,
                    help="each packet reaches the far end of each link up to this much later (uniform, seeded; "
                         "links stay first in first out): breaks same-instant ties of synchronized senders (0)")
    pk.add_argument("--ack-every-segments", type=int, default=None,
                    help="acknowledge every N in-order segments (1; 2 = RFC 1122/5681 delayed ACKs)")
    pk.add_argument("--delayed-ack-timeout-s", type=float, default=None,
                    help="delayed-ACK timer (0.2 s, ns-3's DelAckTimeout; RFC 1122: < 0.5 s)")
    pk.add_argument("--handshake", action="store_const", const=True, default=None,
                    help="open each connection with SYN / SYN-ACK before the first data")
    pk.add_argument("--limited-transmit", action="store_const", const=True, default=None,
                    help="tcp/dctcp: RFC 3042 limited transmit (a new segment on each of the first two "
                         "duplicate ACKs; off; ns-3: on)")
    pk.add_argument("--dupack-threshold", type=int, default=None,
                    help="tcp/dctcp: duplicate ACKs that trigger fast retransmit (3, RFC 5681's DupThresh; "
                         "0: never, losses wait for the RTO)")
    pk.add_argument("--count-acked-segments", action="store_const", const=True, default=None,
                    help="tcp/dctcp: grow the window by the segments each ACK acknowledges, as Linux and ns-3's "
                         "TcpLinuxReno/TcpDctcp (off: RFC 5681, at most one per ACK in slow start)")
    pk.add_argument("--fixed-rto", action="store_const", const=True, default=None,
                    help="tcp/dctcp: every retransmission timeout is --min-rto-s, without RTT estimate or backoff, as "
                         "pFabric's minimal TCP (off: RFC 6298)")
    pk.add_argument("--sack", action="store_const", const=True, default=None,
                    help="tcp/dctcp/pfabric: selective acknowledgments (RFC 2018; tcp/dctcp recover as RFC 6675; "
                         "after a timeout the senders skip what was SACKed); off: NewReno, as before; Linux, ns-3: on")
    pk.add_argument("--prr", action="store_const", const=True, default=None,
                    help="tcp/dctcp with --sack: fast recovery's window as RFC 6937's proportional rate reduction, "
                         "as Linux and ns-3 (off: RFC 6675's cwnd = ssthresh)")
    pk.add_argument("--dctcp-alpha-init", type=float, default=None,
                    help="dctcp: DCTCP's alpha when a connection starts, in [0, 1] (1, as Linux and ns-3: the first "
                         "marked window halves cwnd; 0 as ns-2's DCTCP, which the pFabric, PIAS and aSCC papers ran)")
    pk.add_argument("--dctcp-min-cwnd-packets", type=float, default=None,
                    help="dctcp: the least window DCTCP's cut leaves, packets (2, as Linux); below 1 no floor, as "
                         "ns-3's TcpDctcp: a window under one packet waits for an ACK or the retransmission timer")
    pk.add_argument("--dctcp-hold-in-cwr", action=argparse.BooleanOptionalAction, default=None,
                    help="dctcp: no window growth in the window after an ECN cut, as Linux's CWR state and ns-3's "
                         "CA_CWR (the default; --no-dctcp-hold-in-cwr: the echo's ACK grows the window before the "
                         "cut and additive increase goes on after it)")
    pk.add_argument("--dctcp-ignore-dupack-ece", action="store_const", const=True, default=None,
                    help="dctcp: the ECN echo of a duplicate ACK does not cut the window, as ns-3 (off: any echo may)")
    pk.add_argument("--load-balancing", choices=LOAD_BALANCINGS, default=None,
                    help="flow: every packet of a flow on its ECMP path (default); packet: packet spraying, "
                         "each packet on an equal-cost path of its own")
    pk.add_argument("--tx-complete-events", action="store_const", const=True, default=None,
                    help="a port stays busy until its transmission's end is handled, as ns-3's point-to-point "
                         "devices (one event per transmission; off)")
    pk.add_argument("--syn-timeout-s", type=float, default=None,
                    help="first SYN retransmission timeout, doubled per retry (1 s, RFC 6298; ns-3: 3 s)")
    pk.add_argument("--clock-granularity-s", type=float, default=None,
                    help="RFC 6298's G: RTO = SRTT + max(G, 4 RTTVAR) (0 = 1 ps; ns-3: 1e-3)")
    pk.add_argument("--request-delay-us", type=float, default=None,
                    help="with --admission/--k: the token request's travel to the destination (0)")
    pk.add_argument("--grant-delay-us", type=float, default=None,
                    help="with --admission/--k: the grant's travel back to the sender (0)")
    pk.add_argument("--fair-projection", choices=FAIR_PROJECTIONS, default=None,
                    help="gtcp:fair: exact (runs plain tcp first; default) or window (an estimate)")
    pk.add_argument("--queue-sample-us", type=float, default=None, help="sample the queues this often")
    pk.add_argument("--sample-links", default=None, help="comma-separated link names to sample (default: all)")
    pk.add_argument("--queue-samples-out", default=None, help="write the queue samples here (.csv or .parquet)")
    return p


#: The packet model's options on the command line: every key of PACKET_OPTIONS (as
#: ``--key-with-dashes``) but ``max_events``, a bound for tests; ``sample_links`` is a
#: comma-separated list there. A new packet option needs its argument in the parser above.
_PACKET_CLI = tuple(k for k in PACKET_OPTIONS if k != "max_events")


#: The topologies of ``simulate --topology`` by name, in words ("graph": a graph file).
_TOPOLOGIES = {"bigswitch": "the big switch", "leafspine": "the leaf-spine", "fattree": "the fat-tree",
               "parkinglot": "the parking lot"}

#: The topology options of ``simulate`` and the topologies that read them: one given for
#: another topology is refused (the parser's default None means not given).
_TOPOLOGY_OPTIONS = {
    "hosts": ("bigswitch", "parkinglot"),
    "link_gbps": ("bigswitch", "leafspine", "fattree", "parkinglot"),
    "core_gbps": ("leafspine", "fattree", "parkinglot"),
    "tors": ("leafspine",),
    "hosts_per_tor": ("leafspine",),
    "spines": ("leafspine",),
    "fattree_k": ("fattree",),
    "oversubscription": ("fattree",),
}


#: The scheduler options of ``simulate`` (given: not None), each with the test of the
#: schedulers that read it and their names in words: one that neither --scheduler nor
#: --compare reads is refused; a run gets it only if its scheduler reads it.
_SCHEDULER_OPTIONS = {
    "pias_thresholds": (is_pias, "pias and gtcp:pias"),
    "pias_sharing": (is_pias, "the pias scheduler (and gtcp:pias)"),
    "incomplete_sharing": (is_ga_transform, "the GA transform (asrpt, ga:<inner>)"),
}


def _option(name: str) -> str:
    """The command-line spelling of an argument's name: ``--hosts-per-tor``."""
    return f"--{name.replace('_', '-')}"


def _named_option(message: str, names: Sequence[str]) -> str | None:
    """The option of ``names`` that an error message names first (as a word), or None."""
    found = [(m.start(), n) for n in names if (m := re.search(rf"\b{re.escape(n)}\b", message))]
    return min(found)[1] if found else None


def _words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _check_out_dir(path: str, option: str) -> None:
    """Fail before any work when the output's directory is missing (no directory is created:
    a mistyped path should not leave directories behind)."""
    parent = Path(path).expanduser().parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise ValueError(f"{option} {path}: the directory {str(parent)!r} {what} (create it first)")


def _generate(a: argparse.Namespace) -> int:
    if a.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {a.seed}")
    if not (math.isfinite(a.load) and a.load > 0):
        raise ValueError(f"--load must be {'> 0' if a.allow_overload else 'in (0, 1)'}, got {a.load!r}")
    if a.load >= 1 and not a.allow_overload:
        raise ValueError(f"--load must be in (0, 1), got {a.load!r}; a load >= 1 overloads the fabric (queues and "
                         "FCTs grow with the trace length): pass --allow-overload to generate it anyway")
    check_hosts(a.hosts, "--hosts")
    if a.flows < 1:
        raise ValueError(f"--flows must be >= 1, got {a.flows}")
    if a.flows > MAX_FLOWS:
        raise ValueError(f"--flows must be at most MAX_FLOWS = {MAX_FLOWS}, got {a.flows}")
    if not (math.isfinite(a.link_gbps) and a.link_gbps > 0):
        raise ValueError(f"--link-gbps must be finite and > 0, got {a.link_gbps!r}")
    if Path(a.out).suffix.lower() not in TRACE_SUFFIXES:
        raise ValueError(f"--out must end in .csv or .parquet, got {a.out!r}")
    _check_out_dir(a.out, "--out")
    dist = workloads.get_distribution(a.workload)
    if a.sampling is not None:
        if not isinstance(dist, workloads.EmpiricalCDF):
            raise ValueError(f"--sampling applies to empirical CDFs, not to {a.workload!r}")
        dist = workloads.EmpiricalCDF.from_file(a.workload, sampling=a.sampling)
    t0 = time.perf_counter()
    # Each quantity is one vectorized draw (drawing in pieces would change the random
    # stream): the bar names the phase being drawn, counts the flows once drawn, then says
    # the trace is being written.
    bar = progress.bar(a.flows, "generate", "flow", progress=False if a.quiet else None)

    def phase(name: str) -> None:
        if bar is not None:
            bar.set_postfix_str(f"drawing {name}" if name != "trace" else "checking the trace")

    try:
        tr = workloads.poisson_all_to_all(dist, a.load, a.hosts, a.link_gbps, a.flows, seed=a.seed,
                                          header_factor=a.header_factor, on_phase=phase)
        if bar is not None:
            bar.set_postfix_str(f"writing {a.out}", refresh=False)
            bar.update(len(tr))
        write_trace(tr, a.out)
    finally:
        if bar is not None:
            bar.close()
    print(f"wrote {len(tr)} flows to {a.out} ({dist!r}, load {a.load}, {a.hosts} hosts at {a.link_gbps} Gbps, "
          f"{time.perf_counter() - t0:.1f} s)")
    return 0


#: The packet model's per-flow counters that ``simulate --out`` adds to each flow's row.
PACKET_FLOW_COUNTERS = ("timeouts", "retransmissions", "fast_retransmits", "duplicates")


def _simulate(a: argparse.Namespace) -> int:
    if a.out and Path(a.out).suffix.lower() not in (".csv", ".parquet"):
        raise ValueError(f"--out must end in .csv or .parquet, got {a.out!r}")
    for option, path in (("--out", a.out), ("--summary-json", a.summary_json)):
        if path:
            _check_out_dir(path, option)
    files: dict[Path, str] = {}  # each file the run reads or writes, once: --out must not overwrite the trace
    for option, path in (("--trace", a.trace), ("--out", a.out), ("--summary-json", a.summary_json),
                         ("--queue-samples-out", a.queue_samples_out)):
        if path:
            where = Path(path).resolve()
            if where in files:
                raise ValueError(f"{option} and {files[where]} name the same file ({path}): the run would overwrite "
                                 f"{'its trace' if files[where] == '--trace' else 'one output with the other'}")
            files[where] = option
    if not 0 <= a.seed < 2**64:
        raise ValueError(f"--seed must be in [0, 2**64) (an unsigned 64-bit seed), got {a.seed}")
    if a.topology not in _TOPOLOGIES and Path(a.topology).suffix.lower() not in (".graphml", ".json"):
        raise ValueError(f"--topology: expected bigswitch, leafspine, fattree, parkinglot or a .graphml/.json graph "
                         f"file, got {a.topology!r}")
    kind = a.topology if a.topology in _TOPOLOGIES else "graph"
    wrong: dict[tuple[str, ...], list[str]] = {}  # options given for a topology that does not read them, by readers
    for name, kinds in _TOPOLOGY_OPTIONS.items():
        if getattr(a, name) is not None and kind not in kinds:
            wrong.setdefault(kinds, []).append(_option(name))
    if wrong and kind == "graph":
        raise ValueError(f"{', '.join(o for opts in wrong.values() for o in opts)}: options that do not apply to a "
                         f"graph file ({a.topology}): its nodes give the hosts and its edges' 'gbps' attributes the "
                         "rates")
    if wrong:
        raise ValueError("; ".join(f"{_words(opts)} appl{'ies' if len(opts) == 1 else 'y'} to "
                                   f"{_words([_TOPOLOGIES[t] for t in kinds])}" for kinds, opts in wrong.items())
                         + f", not to {_TOPOLOGIES[kind]} (--topology {a.topology})")
    schedulers = [a.scheduler] + ([a.compare] if a.compare is not None else [])
    for name, (reads, which) in _SCHEDULER_OPTIONS.items():
        if getattr(a, name) is not None and not any(reads(s) for s in schedulers):
            runs = f"--scheduler {a.scheduler!r}" + (f" nor --compare {a.compare!r}" if a.compare is not None else "")
            raise ValueError(f"{_option(name)} applies to {which}, not to {runs}")
    for name in ("k", "window"):  # the core's counts are unsigned 64-bit
        if getattr(a, name) is not None and not 1 <= getattr(a, name) < 2**64:
            raise ValueError(f"{_option(name)} must be an integer in [1, 2**64), got {getattr(a, name)}")
    if a.window is not None and a.k is None:
        raise ValueError("--window applies to destination admission: give --k (max active flows per destination) too")
    if a.admission is not None and a.k is None:
        raise ValueError(f"--admission {a.admission} needs --k (max active flows per destination)")
    if a.hosts is not None:
        check_hosts(a.hosts, "--hosts")
    topo: Topology
    link = 10.0 if a.link_gbps is None else a.link_gbps
    if kind == "bigswitch":
        tr = read_trace(a.trace, hosts=a.hosts, infer_hosts=a.hosts is None)
        hosts = a.hosts if a.hosts is not None else max(int(max(tr["src"].max(), tr["dst"].max())) + 1, 2)
        topo = BigSwitch(hosts, link)
        if PATH_COLUMN in tr.columns:  # checked against the fabric, naming the file's line
            tr = read_trace(a.trace, topology=topo)
    else:
        core = 40.0 if a.core_gbps is None else a.core_gbps
        if kind == "leafspine":
            topo = LeafSpine(9 if a.tors is None else a.tors, 16 if a.hosts_per_tor is None else a.hosts_per_tor,
                             4 if a.spines is None else a.spines, link, core, ecmp_seed=a.seed)
        elif kind == "fattree":
            topo = FatTree(4 if a.fattree_k is None else a.fattree_k, link, link if a.core_gbps is None else core,
                           1.0 if a.oversubscription is None else a.oversubscription, ecmp_seed=a.seed)
        elif kind == "parkinglot":
            topo = ParkingLot(8 if a.hosts is None else a.hosts, link, core)
        else:
            topo = read_graph(a.topology, ecmp_seed=a.seed)
        tr = read_trace(a.trace, topology=topo)
    if a.out and PATH_COLUMN in tr.columns and isinstance(topo, Graph):
        # --out writes each flow's route as node names joined by '>': check that every node's
        # name can be, before the run rather than after it.
        for v in topo.nodes:
            problem = path_name_problem(v)
            if problem is not None:
                raise ValueError(f"--out: the trace has a {PATH_COLUMN!r} column, so --out writes each flow's route, "
                                 f"but {problem}: rename the graph's node, or drop the trace's {PATH_COLUMN!r} "
                                 "column")
    thresholds = None
    if a.pias_thresholds is not None:
        try:
            thresholds = [float(x) for x in a.pias_thresholds.split(",")]
        except ValueError:
            raise ValueError(
                f"--pias-thresholds: expected comma-separated numbers of bytes, got {a.pias_thresholds!r}"
            ) from None
    packet: dict = {}
    if a.model == "packet":
        for name in _PACKET_CLI:
            value = getattr(a, name)
            if value is not None:
                packet[name] = value.split(",") if name == "sample_links" else value
        if a.transport is not None:
            packet["transport"] = a.transport
    else:
        given = [f"--{n.replace('_', '-')}" for n in ("transport", *_PACKET_CLI, "queue_samples_out")
                 if getattr(a, n) is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: options of the packet model; add --model packet")
    if a.queue_samples_out:
        if Path(a.queue_samples_out).suffix.lower() not in (".csv", ".parquet"):
            raise ValueError(f"--queue-samples-out must end in .csv or .parquet, got {a.queue_samples_out!r}")
        if a.queue_sample_us is None:
            raise ValueError("--queue-samples-out needs --queue-sample-us")
        _check_out_dir(a.queue_samples_out, "--queue-samples-out")

    def simulation(scheduler: str, options: dict) -> Simulation:
        """The run of ``scheduler``, with the scheduler options that it reads (_SCHEDULER_OPTIONS)."""
        reads = {name: test(scheduler) for name, (test, _) in _SCHEDULER_OPTIONS.items()}
        return Simulation(tr, topo, scheduler, admission=a.admission, k=a.k, window=a.window,
                          terminate_missed=a.terminate_missed, delay_us=a.delay_us, seed=a.seed,
                          pias_thresholds_bytes=thresholds if reads["pias_thresholds"] else None, model=a.model,
                          pias_sharing=a.pias_sharing if reads["pias_sharing"] else None,
                          incomplete_sharing=a.incomplete_sharing if reads["incomplete_sharing"] else None, **options)

    def build(scheduler: str) -> tuple[Simulation, dict[str, str]]:
        """The run of ``scheduler`` and the packet options it does not read (with the core's
        reason): with ``--compare`` an option is passed to the run(s) that read it."""
        options, skipped = dict(packet), dict[str, str]()
        while True:
            try:
                return simulation(scheduler, options), skipped
            except ValueError as e:
                name = _named_option(str(e), [n for n in options if n != "transport"])
                if name is None:
                    raise
                if a.compare is None:
                    raise ValueError(f"{_option(name)}: {e}") from None
                skipped[name] = str(e)
                del options[name]

    # Both simulations are made, which checks the scheduler names and every option, before either runs.
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # read_trace above already warned about the arrival column, if at all
        warnings.filterwarnings("ignore", message=r".*column 'arrival_s'", category=TimeResolutionWarning)
        sim, skipped = build(a.scheduler)
    wall = time.perf_counter() - t0
    other = None
    if a.compare is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimeResolutionWarning)  # said for the first run
            other, skipped_other = build(a.compare)
        for name in sorted(skipped.keys() & skipped_other.keys()):  # the first in name order
            raise ValueError(f"{_option(name)}: refused for both runs ({skipped[name]})")
        for name, (run, reads) in {**{n: (a.scheduler, a.compare) for n in skipped},
                                   **{n: (a.compare, a.scheduler) for n in skipped_other}}.items():
            print(f"flowsched simulate: note: {_option(name)} applies to the {reads} run only, not to {run} "
                  f"({(skipped.get(name) or skipped_other[name]).removeprefix('invalid configuration: ')})",
                  file=sys.stderr)
    t0 = time.perf_counter()
    sim.run(progress=False if a.quiet else None)
    res = sim.results()
    del sim  # the native simulator's memory, before the second run
    wall += time.perf_counter() - t0
    summ = res.summary()
    _write_outputs(a, res, summ)  # before printing: a reader that closes stdout early (| head) loses no file
    print(f"{len(tr)} flows, scheduler {a.scheduler}, {topo}: {wall:.2f} s wall, {res.stats['events']} events")
    print(summ)
    if res.packet is not None:
        p = res.packet
        print(f"packet model, {p['transport']}: {p['data_packets']} data packets, {p['retransmissions']} "
              f"retransmissions, {p['fast_retransmits']} fast retransmits, {p['timeouts']} timeouts, "
              f"{p['drops_overflow']} overflow drops, "
              f"{p['drops_evicted']} pFabric evictions, {p['ecn_marks']} ECN marks"
              + (f", {p['drops_stale']} stale ASCC packets dropped" if p["drops_stale"] else "")
              + (f", {p['syn_timeouts']} SYN timeouts" if p.get("syn_packets") else ""))
    if other is not None:
        other.run(progress=False if a.quiet else None)
        cmp = res.compare(other.results())
        o = cmp["overall"]
        print(f"\n{a.scheduler} against {a.compare} (same trace; SCHED_TCP Table 2): {o['faster_pct']:.1f}% of flows "
              f"faster, {o['slower_pct']:.1f}% slower, {o['equal_pct']:.1f}% equal; mean gain "
              f"{o['mean_gain_s'] * 1e3:.3f} ms, mean loss {o['mean_loss_s'] * 1e3:.3f} ms")
        cols = ["compared", "faster_pct", "slower_pct", "equal_pct", "mean_gain_s", "mean_loss_s"]
        print(cmp["by_bucket"][cols].to_string(float_format=lambda x: f"{x:.4g}"))
    return 0


def _write_outputs(a: argparse.Namespace, res: Results, summ: Summary) -> None:
    """The files ``simulate`` writes: ``--out`` (per-flow results, with the packet model's
    counters and the routes as the trace files write them), ``--summary-json`` and
    ``--queue-samples-out``."""
    def write(frame: pd.DataFrame, path: str) -> None:  # Parquet or CSV by the suffix, checked before the run
        if Path(path).suffix.lower() == ".parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)

    if a.out:
        flows = res.flows
        if res.packet_flows is not None:  # the packet model's per-flow counters (both in trace order)
            pf = res.packet_flows
            flows = flows.assign(**{c: pf[c].to_numpy() for c in PACKET_FLOW_COUNTERS})
        if PATH_COLUMN in flows.columns:  # routes as the trace files write them: "h0>s0>h1"
            flows = flows.assign(**{PATH_COLUMN: path_strings(flows[PATH_COLUMN].to_numpy(dtype=object))})
        write(flows, a.out)
    if a.summary_json:
        Path(a.summary_json).write_text(summ.to_json())
    if a.queue_samples_out and res.queue_samples is not None:
        write(res.queue_samples, a.queue_samples_out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code: 0, or 2 with one line
    ``flowsched <command>: error: ...`` on stderr for bad input (a malformed trace, an
    option out of range, a missing file or directory), 130 on Ctrl-C. SIGTERM is left to
    its default action (the process ends by the signal: exit status 143 in a shell)."""
    args = _parser().parse_args(argv)
    prefix = f"flowsched {args.command}"

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        print(f"{prefix}: warning: {message}", file=sys.stderr if file is None else file)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show
            code = _generate(args) if args.command == "generate" else _simulate(args)
            sys.stdout.flush()  # a closed pipe shows here, not after main returned
            return code
    except BrokenPipeError:
        # the reader of stdout went away (| head): the files are written; say nothing more
        # (Python would complain again when it flushes stdout at exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process ended by SIGPIPE
    except (TraceError, ValueError, OSError) as e:
        print(f"{prefix}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

