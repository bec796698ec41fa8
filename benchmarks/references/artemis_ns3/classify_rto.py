"""Classify the RTOs of ns-3 artemis_tokens runs from ns-3's own log (docs/papers.md, "Why ns-3 times out more").

Each run is logged as (the program's stderr, filtered; the per-flow CSV is unchanged by the log)::

    NS_LOG="TcpSocketBase=logic|debug|info|prefix_time|prefix_node" artemis_tokens ... --out=RUN.csv 2>&1 >/dev/null \\
        | grep -E "RTO\\. Reset|CA_[A-Z]+ -> CA_|ACK of [0-9]+ SND" > RUN.log

    python classify_rto.py RUN.log [RUN2.log ...]

ns-3's ACK lines name the sender's node, not its socket, so an RTO is matched to its socket by sequence number: the
RTO restarts from X = that socket's SND.UNA; the ACK that moved SND.UNA to X and the duplicate ACKs of X before the RTO
tell the sender's state. Classes: the fast retransmission of X lost (duplicate ACKs of X in CA_RECOVERY, X reached
before recovery), a later hole's retransmission lost (X reached by a partial ACK in CA_RECOVERY), fewer than three
duplicate ACKs (none, or one or two: no fast retransmit), no data acknowledged yet, again after an RTO.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\+(\d+\.\d+)s -?\d+\s+\[node (\d+)\] (.*)$")
ACK = re.compile(r"ACK of (\d+) SND.UNA=(\d+) SND.NXT=(\d+) in state: (CA_[A-Z]+)")
RTO = re.compile(r"RTO\. Reset cwnd to (\d+), ssthresh to (\d+), restart from seqnum (\d+)")


def classify(log: str) -> list[tuple[float, int, int, str, int]]:
    """(time s, node, sequence number X, class, duplicate ACKs of X seen) per RTO of one logged run."""
    acks: dict[int, list[tuple[float, int, int, str]]] = defaultdict(list)
    rtos = []
    with open(log) as fh:
        for line in fh:
            m = LINE.match(line.strip())
            if not m:
                continue
            t, node, msg = float(m.group(1)), int(m.group(2)), m.group(3)
            if a := ACK.match(msg):
                acks[node].append((t, int(a.group(1)), int(a.group(2)), a.group(4)))
            elif r := RTO.match(msg):
                rtos.append((t, node, int(r.group(3))))
    out = []
    for t, node, x in rtos:
        seen = [a for a in acks[node] if a[0] <= t]
        reached = [a for a in seen if a[1] == x and a[2] < x]
        dup = [a for a in seen if a[1] == x and a[2] == x]
        if x == 1 or not reached:
            c = "no data acknowledged yet"
        elif not dup:
            c = "fewer than 3 duplicate ACKs: none (the rest of the window lost)"
        elif dup[-1][3] == "CA_RECOVERY":
            c = ("lost retransmission: a later hole's, after a partial ACK" if reached[-1][3] == "CA_RECOVERY"
                 else "lost retransmission: the fast retransmission itself")
        elif dup[-1][3] == "CA_LOSS":
            c = "again after an RTO (a go-back-N retransmission lost)"
        else:
            c = "fewer than 3 duplicate ACKs: one or two"
        out.append((t, node, x, c, len(dup)))
    return out


def main(logs: list[str]) -> int:
    if not logs:
        print(__doc__)
        return 2
    counts: dict[str, int] = defaultdict(int)
    for log in logs:
        for *_, c, _ in classify(log):
            counts[c] += 1
    print(f"{sum(counts.values())} RTOs in {len(logs)} run(s)")
    for c, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{n:5d}  {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
