"""Adversarial instances of the aSCC theorems (FIFO, PIAS, LAS), with their expected completions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from flowsched.workloads._common import PACKET_PAYLOAD_BYTES, _check_pos
from flowsched.workloads.arrivals import _make_trace
from flowsched.workloads.pias import pias_thresholds


def _slot_s(packet_bytes: float, link_gbps: float) -> float:
    return packet_bytes * 8.0 / (link_gbps * 1e9)


def _expected(
    arrival_s: np.ndarray, completion_s: dict[str, np.ndarray]
) -> tuple[dict[str, list[float]], dict[str, float], dict[str, float]]:
    comp = {k: [float(x) for x in v] for k, v in completion_s.items()}
    fct = {k: float(np.sum(v - arrival_s)) for k, v in completion_s.items()}
    fpt = {k: float(np.sum(v)) for k, v in completion_s.items()}
    return comp, fct, fpt


def _instance(
    arrival: np.ndarray, size: np.ndarray, source: str, attrs: dict[str, Any]
) -> pd.DataFrame:
    n = arrival.size
    df = _make_trace(arrival, np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), size, None, 2, source)
    df.attrs.update(attrs)
    return df


def fifo_adversarial_instance(
    n: int = 10,
    l_packets: int | None = None,
    *,
    link_gbps: float = 10.0,
    packet_bytes: float = PACKET_PAYLOAD_BYTES,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """aSCC Theorem 3: FIFO's competitive ratio w.r.t. FPT is unbounded.

    Theorem 3 (aSCC, section IV): "For any n > 0, there exists a set of
    flows F such that FPT(FIFO, F) >= n/2 * FPT(OPT, F)." Instance from the
    proof: "f_1 consists of l >> n^2 packets arriving to S_1 in the first
    time slot; the other (n-1) flows in F have one packet each and arrive to
    S_1 in the second time slot. FIFO transmits all packets in f_1 before
    the transmission of a packet in any other flow."

    Fluid version on one link (all flows host 0 -> host 1, a single
    bottleneck = the paper's single-ingress switch S_1), with slot
    T = packet_bytes * 8 / C: flow 0 has l packets and arrives at 0; flows
    1..n-1 have one packet each and arrive at T (flow k at
    T + (k-1) * stagger_s: a tiny stagger that fixes the order of ties so
    that FIFO and SRPT do not depend on tie-breaking).

    Expected completion times (``attrs["expected_completion_s"]``):

    * FIFO: flow 0 at l T, flow k at (l + k) T;
    * SRPT (= OPT: SRPT is optimal for gapless flows on S_1): flow k at
      (1 + k) T, flow 0 at (l + n - 1) T.

    So sum FCT(FIFO) ~ n l T and sum FCT(OPT) ~ (l + n^2/2) T: the ratio
    tends to n for l >> n^2 (``attrs["ratio_fct"]``; the paper's bound
    n/2 is on FPT, the sum of end times, ``attrs["ratio_fpt"]``).

    Parameters
    ----------
    n : int
        Number of flows (>= 2).
    l_packets : int or None
        Size of the elephant in packets (default 10 n^2, at least 3).
    link_gbps : float
        Link rate.
    packet_bytes : float
        Bytes per packet (one time slot).
    stagger_s : float or None
        Gap between consecutive small-flow arrivals (default T/(100 n);
        0 for the paper's simultaneous arrivals).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs``: ``theorem``, ``slot_s``,
        ``expected_completion_s`` / ``expected_fct_sum_s`` /
        ``expected_fpt_s`` per policy (``"fifo"``, ``"srpt"``),
        ``ratio_fct``, ``ratio_fpt`` (FIFO over SRPT).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    n = int(n)
    ell = 10 * n * n if l_packets is None else int(l_packets)
    if ell < 3:
        raise ValueError(f"l_packets must be >= 3, got {l_packets!r}")
    T = _slot_s(_check_pos("packet_bytes", packet_bytes), _check_pos("link_gbps", link_gbps))
    eps = T / (100.0 * n) if stagger_s is None else float(stagger_s)
    if not (0 <= eps and (n - 2) * eps < T):
        raise ValueError("stagger_s must be >= 0 and keep all small arrivals within one slot")
    k = np.arange(1, n, dtype=np.float64)
    arrival = np.concatenate([[0.0], T + (k - 1) * eps])
    size = np.concatenate([[ell * packet_bytes], np.full(n - 1, float(packet_bytes))])
    fifo = np.concatenate([[ell * T], (ell + k) * T])
    srpt = np.concatenate([[(ell + n - 1) * T], (1 + k) * T])
    comp, fct, fpt = _expected(arrival, {"fifo": fifo, "srpt": srpt})
    return _instance(
        arrival,
        size,
        "fifo_adversarial_instance",
        {
            "theorem": "aSCC Theorem 3: FPT(FIFO) >= n/2 * FPT(OPT) for any n",
            "slot_s": T,
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["fifo"] / fct["srpt"],
            "ratio_fpt": fpt["fifo"] / fpt["srpt"],
        },
    )


def pias_adversarial_instance(
    n: int = 10,
    thresholds_bytes: Sequence[float] | None = None,
    l: int | None = None,  # noqa: E741  (the paper's name; a public keyword)
    *,
    link_gbps: float = 10.0,
    packet_bytes: float = PACKET_PAYLOAD_BYTES,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """aSCC Theorem 6: PIAS with any fixed thresholds has an unbounded ratio.

    Theorem 6 (aSCC, section IV): "For any n > 0 and any fixed set of k
    thresholds alpha_1, ..., alpha_k, there exists a set of flows F such
    that FPT(PIAS, F) >= n/2 * FPT(OPT, F)." Proof: "Multiplying the sizes
    of flows in the proof of Theorem 3 by alpha_k ... the relaxed packet
    number equals k for alpha_k(l-1) packets in f_1 and the last packets in
    all other flows." PIAS = strict priority between the queues, FIFO
    inside a queue ("breaking ties by FIFO").

    Fluid version (all flows host 0 -> host 1). With T_k the largest
    threshold (bytes) and the PIAS rule of ``flowsched/data/README.md``
    ("priority i while bytes_sent <= thresh_i"), a flow is in the lowest
    queue once it has sent more than T_k. Let s = T_k + packet_bytes (one
    packet past the last threshold). Flow 0 has L = l * s bytes and arrives
    at 0; flows 1..n-1 have s bytes each and arrive at t0 = s * 8 / C (flow
    k at t0 + (k-1) stagger_s), when flow 0 has just been demoted. PIAS
    serves their first T_k bytes ahead of flow 0, then their last packet
    waits in the lowest queue behind flow 0 (FIFO). With C the link rate:

    * PIAS: flow 0 ends at (L + (n-1) T_k) * 8/C, flow k at
      (L + (n-1) T_k + k * packet_bytes) * 8/C;
    * SRPT (= OPT): flow k ends at t0 + k s * 8/C, flow 0 at
      (L + (n-1) s) * 8/C.

    The FCT ratio tends to n for l >> n^2. These PIAS values hold for any
    discipline inside the higher queues, as long as the lowest queue is
    FIFO by arrival; a simulator that shares the lowest queue fairly will
    not show the bad ratio.

    Parameters
    ----------
    n : int
        Number of flows (>= 2).
    thresholds_bytes : sequence of float or None
        PIAS thresholds (default :func:`pias_thresholds` ``("websearch", 0.8)``);
        only the largest matters.
    l : int or None
        Elephant size in units of s (default 10 n^2).
    link_gbps, packet_bytes, stagger_s
        As in :func:`fifo_adversarial_instance` (default stagger: one
        hundredth of a packet time divided by n).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs`` as in
        :func:`fifo_adversarial_instance`, policies ``"pias"`` and
        ``"srpt"``, plus ``thresholds_bytes``; ratios are PIAS over SRPT.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    n = int(n)
    thr = list(pias_thresholds("websearch", 0.8) if thresholds_bytes is None else thresholds_bytes)
    if len(thr) == 0 or any(not (math.isfinite(t) and t > 0) for t in thr):
        raise ValueError(f"thresholds_bytes must be positive numbers, got {thresholds_bytes!r}")
    Tk = float(max(thr))
    pkt = _check_pos("packet_bytes", packet_bytes)
    rate_Bps = _check_pos("link_gbps", link_gbps) * 1e9 / 8.0
    ell = 10 * n * n if l is None else int(l)
    if ell < 3:
        raise ValueError(f"l must be >= 3, got {l!r}")
    s = Tk + pkt
    L = ell * s
    t0 = s / rate_Bps
    eps = pkt / rate_Bps / (100.0 * n) if stagger_s is None else float(stagger_s)
    if not (0 <= eps and (n - 2) * eps < pkt / rate_Bps):
        raise ValueError("stagger_s must be >= 0 and keep all small arrivals within one packet time")
    k = np.arange(1, n, dtype=np.float64)
    arrival = np.concatenate([[0.0], t0 + (k - 1) * eps])
    size = np.concatenate([[L], np.full(n - 1, s)])
    pias = np.concatenate([[(L + (n - 1) * Tk) / rate_Bps], (L + (n - 1) * Tk + k * pkt) / rate_Bps])
    srpt = np.concatenate([[(L + (n - 1) * s) / rate_Bps], t0 + k * s / rate_Bps])
    comp, fct, fpt = _expected(arrival, {"pias": pias, "srpt": srpt})
    return _instance(
        arrival,
        size,
        "pias_adversarial_instance",
        {
            "theorem": "aSCC Theorem 6: FPT(PIAS) >= n/2 * FPT(OPT) for any n and any fixed thresholds",
            "slot_s": pkt / rate_Bps,
            "thresholds_bytes": [float(t) for t in thr],
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["pias"] / fct["srpt"],
            "ratio_fpt": fpt["pias"] / fpt["srpt"],
        },
    )


def las_starvation_instance(
    m: int = 3,
    size_bytes: float = 5 * PACKET_PAYLOAD_BYTES,
    fraction: float = 0.8,
    *,
    link_gbps: float = 10.0,
    stagger_s: float | None = None,
) -> pd.DataFrame:
    """LAS starves elephants of similar size (aSCC Fig. 2 and section I).

    aSCC, section IV (Fig. 2): "fair policies do not schedule elephant flows
    of similar sizes efficiently ... LAS has the largest FPT among all
    policies that transmit a packet on each of the first 20 time slots;
    even FIFO significantly outperforms LAS. Here LAS transmits 4 packets
    from flows f_1, f_2, f_3 during the first 12 time slots ... LAS finishes
    the transmission of the first three flows only after the transmission
    of four packets from f_4." Section I: "consider two elephant flows ...
    the second flow arrives only after the transmission of 99% packets in
    the first flow. In this case, LAS sends 99% packets in the second flow
    before it finishes transmission of the first flow." (LAS is 3-competitive,
    Theorem 5, so the ratio here is bounded: it tends to 2 as m grows.)

    Fluid version (all flows host 0 -> host 1, link rate C, E = size_bytes):
    m flows of E bytes arrive at 0 (flow k at k * stagger_s); flow m (one
    more of E bytes) arrives at t1 = m * fraction * E * 8/C, when LAS has
    given each early flow fraction * E. The defaults m=3, E=5 packets,
    fraction=0.8 are Fig. 2 (t1 = 12 slots); m=1, fraction=0.99 is section
    I's example.

    * LAS (least attained service first, ties shared equally): the late
      flow runs alone until it has fraction * E, then all m+1 share; all
      finish together at (m+1) E * 8/C.
    * FIFO = SRPT (= OPT): flow k (0-based) ends at (k+1) E * 8/C, the late
      flow at (m+1) E * 8/C.

    For Fig. 2 in slots: completions LAS 20,20,20,20 (sum FCT 68, FPT 80),
    FIFO/SRPT 5,10,15,20 (sum FCT 38, FPT 50).

    Parameters
    ----------
    m : int
        Number of early elephants (>= 1).
    size_bytes : float
        Size of every elephant.
    fraction : float
        Share of each early elephant served when the late one arrives, in
        (0, 1).
    link_gbps : float
        Link rate.
    stagger_s : float or None
        Gap between the early arrivals (default 1e-4 * E * 8/C / m; 0 for
        simultaneous arrivals).

    Returns
    -------
    pandas.DataFrame
        The trace (hosts = 2) with ``attrs`` as in
        :func:`fifo_adversarial_instance`, policies ``"las"``, ``"fifo"``,
        ``"srpt"``; ratios are LAS over SRPT.
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    m = int(m)
    E = _check_pos("size_bytes", size_bytes)
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    rate_Bps = _check_pos("link_gbps", link_gbps) * 1e9 / 8.0
    tE = E / rate_Bps
    eps = 1e-4 * tE / m if stagger_s is None else float(stagger_s)
    t1 = m * fraction * tE
    if not (0 <= eps and (m - 1) * eps < min(t1, tE) / m):
        raise ValueError("stagger_s is too large for this instance")
    k = np.arange(m, dtype=np.float64)
    arrival = np.concatenate([k * eps, [t1]])
    size = np.full(m + 1, E)
    las = np.full(m + 1, (m + 1) * tE)
    fifo = np.concatenate([(k + 1) * tE, [(m + 1) * tE]])
    comp, fct, fpt = _expected(arrival, {"las": las, "fifo": fifo, "srpt": fifo.copy()})
    return _instance(
        arrival,
        size,
        "las_starvation_instance",
        {
            "theorem": "aSCC Fig. 2 / section I: LAS starves concurrent elephants of similar size",
            "slot_s": PACKET_PAYLOAD_BYTES / rate_Bps,
            "expected_completion_s": comp,
            "expected_fct_sum_s": fct,
            "expected_fpt_s": fpt,
            "ratio_fct": fct["las"] / fct["srpt"],
            "ratio_fpt": fpt["las"] / fpt["srpt"],
        },
    )
