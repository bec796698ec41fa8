"""Rule-based switch-scheduling policies: one priority score per flow (lower first).

Each rule reads only the observation of :class:`flowsched.envs.SwitchSchedulingEnv`
and outputs the rank of every flow under its key (ties broken towards the older flow,
as the simulator's native schedulers do), scaled into the action space [-1, 1). Rules
whose order is fixed between two decisions (``fifo``, ``edf``; ``srpt`` and ``asrpt``
on a single link) reproduce the native scheduler of the same name exactly. Rules
whose keys move continuously (``las``, ``pias``, and ``srpt`` when a lower-priority
flow can overtake on another link) are re-evaluated only at decisions, so they
approach the native ones as ``decision_interval_s`` shrinks.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flowsched.baselines.base import MaskedRule
from flowsched.baselines.registry import rules

SENT, REMAINING, VISIBLE, AGE, COMPLETE, AT_SRC, AT_DST, LEFT, HAS_DL = range(9)


@rules("switch", "switch-scheduling")
class SwitchRule(MaskedRule):
    """Scores flows by ``rule``:

    * ``fifo``: oldest first;
    * ``srpt``: least remaining bytes first (needs visible sizes);
    * ``asrpt``: aSCC's ASRPT: flows with all their data by remaining bytes, then the
      others in arrival order;
    * ``las``: least bytes sent first; equal attained service shares (equal scores);
    * ``pias``: the queue given by bytes sent and ``thresholds_bytes``, FIFO within a queue;
    * ``edf``: earliest deadline first, flows without one last (FIFO);
    * ``fair``: contention-weighted SRPT, remaining * max(flows at its source, flows at
      its destination): the flow that would finish first at its fair share if every flow
      kept its remaining bytes. It is not SCHED_TCP's FAIR, which orders flows by their
      finish in a shadow fair-sharing run (bytes left under fair sharing, which the
      observation does not hold): on one bottleneck this rule is SRPT and can finish a
      flow later than fair sharing would (docs/envs/switch.md); the native ``fair``
      scheduler runs the shadow simulation.
    """

    RULES = ("fifo", "srpt", "asrpt", "las", "pias", "edf", "fair")
    #: The rules that read flow sizes: they refuse observations with sizes hidden
    #: (``hide_sizes=True``; ``srpt`` and ``fair`` also ``size_known=False``).
    READS_SIZES = ("srpt", "asrpt", "fair")
    mask_key = "flow_mask"
    obs_keys = ("flows",)
    needs_valid_action = False  # no flow in the system: any scores do

    def __init__(self, rule: str, thresholds_bytes: Sequence[float] | None = None) -> None:
        if rule not in self.RULES:
            raise ValueError(f"unknown switch-scheduling baseline {rule!r}; known: {', '.join(self.RULES)}")
        self.rule = rule
        if rule == "pias":
            if thresholds_bytes is None:
                from flowsched.sim import default_pias_thresholds

                thresholds_bytes = default_pias_thresholds()
            th = np.asarray(thresholds_bytes, np.float64)
            ok = th.ndim == 1 and th.size >= 1 and bool(np.isfinite(th).all() and (th > 0).all())
            if not (ok and (np.diff(th) > 0).all()):
                raise ValueError(f"switch baseline 'pias': thresholds_bytes must be positive, finite and strictly "
                                 f"increasing byte counts, got {list(thresholds_bytes)!r}")
            self.thresholds_mb = th * 1e-6

    def _keys(self, f: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
        """Sort keys, most significant first (the slot index, oldest first, breaks ties)."""
        r = self.rule
        if r == "fifo":
            return []
        if r in ("srpt", "fair"):
            if not ((f[..., VISIBLE] > 0) | ~mask).all():
                raise ValueError(f"switch baseline {r!r} reads sizes, but some flows hide theirs "
                                 "(size_known=False, or hide_sizes=True)")
            if r == "srpt":
                return [f[..., REMAINING]]
            return [f[..., REMAINING].astype(np.float64) * np.maximum(f[..., AT_SRC], f[..., AT_DST])]
        if r == "asrpt":
            done = f[..., COMPLETE] > 0
            if not ((f[..., VISIBLE] > 0) | ~done | ~mask).all():
                raise ValueError("switch baseline 'asrpt' reads the sizes of flows with all their data, but some "
                                 "hide theirs (hide_sizes=True)")
            return [~done, np.where(done, f[..., REMAINING], 0)]
        if r == "las":
            return [f[..., SENT]]
        if r == "pias":
            q = np.searchsorted(self.thresholds_mb, f[..., SENT].astype(np.float64), side="right")
            return [q]
        if r == "edf":
            has = f[..., HAS_DL] > 0
            return [~has, np.where(has, f[..., LEFT], 0)]
        raise AssertionError(r)

    def _act(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        batch, m = mask.shape
        f = np.asarray(observation["flows"]).reshape(batch, m, -1)  # (batch, max_flows, 9)
        keys = self._keys(np.where(mask[..., None], f, 0), mask)
        scores = np.zeros((batch, m), np.float32)
        for b in range(batch):
            valid = np.flatnonzero(mask[b])
            cols = [k[b, valid] for k in keys]
            order = np.lexsort([valid, *cols[::-1]]) if cols else np.arange(valid.size)
            rank = np.empty(valid.size, np.int64)
            rank[order] = np.arange(valid.size)
            if self.rule == "las":  # equal attained service shares: equal scores
                sent = cols[0][order]
                rank[order] = np.concatenate([[0], np.cumsum(sent[1:] != sent[:-1])]) if valid.size else rank[order]
            scores[b, valid] = -1.0 + 2.0 * rank / m
        return scores

    def __repr__(self) -> str:
        return f"SwitchRule({self.rule!r})"
