"""Shared pieces of the paper reproductions in ``benchmarks/reproduce/`` (issue 20, part 2).

Each script (``ascc.py``, ``sched_tcp.py``, ``munir.py``, ``pfabric.py``) sets up one
paper's experiment, runs it with :func:`flowsched.simulate` on the fluid model and, when
this flowsched has it, on the packet model, and prints the paper's values beside
flowsched's with every claim marked reproduced or not. This module holds what they
share: the command line (``--quick`` / default / ``--full``, ``--model``), running one
simulation on a model, the AFCT per aSCC size bucket, the claims table, the JSON dump the
tests read, and optional matplotlib figures.

Only public flowsched API is used here.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import flowsched
from flowsched import metrics

MODELS = ("fluid", "packet")
# aSCC section VIII's buckets: mice < 100 KB, medium 100 KB to 10 MB, elephants > 10 MB.
BUCKET_EDGES = (100e3, 10e6)
BUCKET_NAMES = ("mice", "medium", "elephant")


# ============================================================================
# command line
# ============================================================================


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="CI grid (well under a minute)")
    g.add_argument("--full", action="store_true", help="the paper's whole grid (long)")
    p.add_argument("--model", choices=("fluid", "packet", "both"), default="fluid",
                   help="fluid (default), packet (needs flowsched.simulate(model='packet')), or both")
    p.add_argument("--out", default="reproduce-out", help="folder for figures (default: ./reproduce-out)")
    p.add_argument("--no-figures", action="store_true", help="do not write figures")
    p.add_argument("--json", default=None, type=json_path,
                   help="also write the numbers and the claims to this JSON file")
    p.add_argument("--seed", type=seed_arg, default=0, help="first seed")
    return p


def seed_arg(text: str) -> int:
    """``--seed``: an integer in [0, 2**32), checked before the run (not after its tables)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= v < 2**32:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**32), got {v}")
    return v


def json_path(text: str) -> str:
    """``--json``: a file that can be written after the run (not a directory)."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; give a file name")
    return text


def existing_file(text: str) -> str:
    """An input file that exists (checked before the run)."""
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return text


def mode(args: argparse.Namespace) -> str:
    return "quick" if args.quick else "full" if args.full else "default"


def models(args: argparse.Namespace) -> list[str]:
    return ["fluid", "packet"] if args.model == "both" else [args.model]


# ============================================================================
# running a simulation on a model
# ============================================================================


_PACKET: list[str | None] = []  # cached probe: [None] = available, [reason] = not


def packet_unavailable_reason() -> str | None:
    """None when this flowsched runs the packet model (issue 19), else why not. Checked at run
    time: ``simulate`` must take ``model=`` and a one-flow packet run must work (a checkout whose
    compiled core predates the packet model has the keyword but not the simulator)."""
    if not _PACKET:
        if "model" not in inspect.signature(flowsched.simulate).parameters:
            _PACKET.append("no packet model in this flowsched (flowsched.simulate has no 'model' parameter)")
        else:
            tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [15000.0]})
            try:
                flowsched.simulate(tr, flowsched.BigSwitch(2, 10.0), "ps", model="packet")
                _PACKET.append(None)
            except Exception as e:  # noqa: BLE001 - any failure means: no usable packet model
                _PACKET.append(f"the packet model does not run here ({type(e).__name__}: {e})")
    return _PACKET[0]


def packet_available() -> bool:
    return packet_unavailable_reason() is None


class Unavailable(Exception):
    """A run that this flowsched cannot do (the reason is the message)."""


def simulate(trace: pd.DataFrame, topology: Any, scheduler: str, model: str = "fluid",
             transport: str | None = None, **kwargs: Any) -> flowsched.Results:
    """:func:`flowsched.simulate` on ``model``; raises :class:`Unavailable` (with the reason)
    when the packet model is missing or refuses the combination."""
    if model == "fluid":
        return flowsched.simulate(trace, topology, scheduler, **kwargs)
    if not packet_available():
        raise Unavailable(packet_unavailable_reason())
    extra = {"model": "packet"}
    if transport is not None:
        extra["transport"] = transport
    try:
        return flowsched.simulate(trace, topology, scheduler, **extra, **kwargs)
    except (ValueError, NotImplementedError, TypeError) as e:
        msg = str(e)
        if "unsupported" in msg or "does not run" in msg:  # keep the table short: the first clause
            msg = msg.split(";")[0]
        elif "data_span_s" in msg:
            msg = "the packet model refuses data_span_s > 0 (data arriving over time)"
        raise Unavailable(msg) from None


def afct_by_bucket(flows: pd.DataFrame, edges: Sequence[float] = BUCKET_EDGES) -> dict[str, float]:
    """Mean FCT (s) of finished flows, overall ('all') and per aSCC bucket (mice, medium, elephant)."""
    f = flows[~flows["terminated"] & np.isfinite(flows["fct_s"])]
    out = {"all": float(f["fct_s"].mean()) if len(f) else math.nan}
    b = metrics.assign_buckets(f["size_bytes"].to_numpy(), edges)
    means = f["fct_s"].groupby(b, observed=False).mean()
    for name, v in zip(BUCKET_NAMES, means.to_numpy(), strict=True):
        out[name] = float(v)
    return out


class Timer:
    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.t0:.1f} s"


# ============================================================================
# claims
# ============================================================================


@dataclass
class Verdict:
    """One model's answer to one claim: ``ok`` is True (reproduced), False (not), or None
    (not run: ``measured`` says why)."""

    ok: bool | None
    measured: str

    def __post_init__(self) -> None:
        if self.ok is not None:
            self.ok = bool(self.ok)  # numpy booleans too


@dataclass
class Claim:
    source: str  # where in the paper: "Fig. 5(f)", "Table 2"
    text: str  # the paper's statement, as flowsched checks it
    paper: str  # the paper's numbers
    check: Callable[[dict], Verdict]  # one model's results -> verdict
    why_not: str = ""  # the reason, printed where the fluid model does not reproduce it
    why_not_packet: str = ("the packet model with its defaults (not the paper's buffers, RTO or transport "
                           "settings); not investigated further")
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def verdict_of(claim: Claim, results: dict[str, Any]) -> None:
    """Fill ``claim.verdicts`` for every model in ``results`` (model -> its results, or an
    :class:`Unavailable` / a string saying why it did not run)."""
    for m, r in results.items():
        if isinstance(r, (Unavailable, str)):
            claim.verdicts[m] = Verdict(None, f"n/a ({r})" if isinstance(r, str) else "n/a")
            continue
        try:
            claim.verdicts[m] = claim.check(r)
        except Unavailable as e:
            claim.verdicts[m] = Verdict(None, f"n/a ({e})")
        except KeyError as e:  # a point the grid did not run
            claim.verdicts[m] = Verdict(None, f"not in this grid ({e})")


def _mark(v: Verdict | None) -> str:
    if v is None:
        return "-"
    return v.measured if v.ok is None else {True: "yes", False: "NO"}[v.ok] + f": {v.measured}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-markdown table (pipes in cells escaped)."""
    def cell(s: str) -> str:
        return str(s).replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def print_frame(title: str, df: pd.DataFrame, floatfmt: str = "{:.4g}") -> None:
    """Print a numbers table (markdown) under a title."""
    print(f"\n### {title}\n")
    header = [df.index.name or ""] + [str(c) for c in df.columns]
    rows = [[str(i)] + [floatfmt.format(v) if isinstance(v, (float, np.floating)) else str(v) for v in r]
            for i, r in zip(df.index, df.itertuples(index=False), strict=True)]
    print(_table(header, rows))


def report(paper: str, claims: Sequence[Claim], results: dict[str, Any], args: argparse.Namespace,
           numbers: dict[str, Any] | None = None, grid: str = "") -> int:
    """Evaluate the claims on every model's results, print the claims table (and the
    reasons where a claim is not reproduced), write the JSON if asked. Returns the exit
    code (0: the table was produced; a claim not reproduced is a finding, not an error)."""
    ms = list(results)
    for c in claims:
        verdict_of(c, results)
    print(f"\n## {paper}: claims ({mode(args)} grid{': ' + grid if grid else ''})\n")
    header = ["#", "source", "claim", "paper"] + [f"{m} (reproduced: measured)" for m in ms]
    rows = [[str(i), c.source, c.text, c.paper] + [_mark(c.verdicts.get(m)) for m in ms]
            for i, c in enumerate(claims, 1)]
    print(_table(header, rows))
    for m, r in results.items():
        if isinstance(r, (Unavailable, str)):
            print(f"\n{m}: not run: {r}")
    # one line per (model, reason), naming the claims (by their number in the table) it explains
    why_not: dict[tuple[str, str], list[int]] = {}
    for m in ms:
        for i, c in enumerate(claims, 1):
            if c.verdicts[m].ok is False:
                why = (c.why_not if m == "fluid" else c.why_not_packet) or "see the measured values"
                why_not.setdefault((m, why), []).append(i)
    if why_not:
        print("\nWhy not reproduced:")
        for (m, why), nums in why_not.items():
            print(f"- {'claim' if len(nums) == 1 else 'claims'} {', '.join(map(str, nums))} on {m}: {why}")
    n_ok = {m: sum(c.verdicts[m].ok is True for c in claims) for m in ms}
    n_run = {m: sum(c.verdicts[m].ok is not None for c in claims) for m in ms}
    print("\n" + "; ".join(f"{m}: {n_ok[m]} of {n_run[m]} claims checked reproduced ({len(claims)} in all)"
                            for m in ms))
    if args.json:
        out = {
            "paper": paper, "mode": mode(args), "grid": grid, "models": ms,
            "claims": [{"source": c.source, "text": c.text, "paper": c.paper, "why_not": c.why_not,
                        **{m: {"ok": c.verdicts[m].ok, "measured": c.verdicts[m].measured} for m in ms}}
                       for c in claims],
            "numbers": _jsonable(numbers or {}),
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


def _jsonable(x: Any) -> Any:
    if isinstance(x, pd.DataFrame):
        return json.loads(x.to_json(orient="split"))
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def fmt_ms(s: float) -> str:
    return f"{s:.3g} s" if abs(s) >= 1 else f"{s * 1e3:.3g} ms"


def ratio(a: float, b: float) -> float:
    return a / b if b else math.inf


# ============================================================================
# figures
# ============================================================================


def pyplot(args: argparse.Namespace):
    """matplotlib.pyplot (Agg), or None when figures are off or matplotlib is missing."""
    if args.no_figures:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no figures; pip install matplotlib, or flowsched[train])")
        return None
    return plt


def save(fig: Any, args: argparse.Namespace, name: str) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print(f"figure: {path}")


def header(paper: str, args: argparse.Namespace) -> None:
    print(f"# {paper}: flowsched {getattr(flowsched, '__version__', '?')}, {mode(args)} grid, "
          f"models {', '.join(models(args))} (packet model available: {packet_available()})")
    sys.stdout.flush()
