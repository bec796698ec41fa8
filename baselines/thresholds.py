"""Deprecated location of the M/G/1 threshold model: use :mod:`flowsched.queueing`.

The model of PIAS / multi-level-feedback demotion thresholds (pFabric section 6.1)
is queueing theory, not a baseline, so it moved to :mod:`flowsched.queueing`
(issue 18, item 5), and the parallel ``_Backend`` hierarchy of the size
distributions that it kept here is gone: the distributions give their own
``sf`` and ``partial_moment`` (:class:`flowsched.workloads.SizeDistribution`).
The rule that uses the model is :class:`flowsched.baselines.ThresholdRule`
(``baselines/queues.py``).

The names below are the same objects as in :mod:`flowsched.queueing`, kept here
for at least one release so that code and configs written against
``flowsched.baselines.thresholds`` keep working; ``flowsched.baselines.optimal_thresholds``
(and the other names ``flowsched.baselines`` re-exports) stays the public path.
"""

from __future__ import annotations

from flowsched.queueing import (
    mean_fct_mlfq,
    mean_slowdown_mlfq,
    mlfq_flow_fct,
    optimal_thresholds,
    partial_moment,
)

__all__ = [
    "mean_fct_mlfq",
    "mean_slowdown_mlfq",
    "mlfq_flow_fct",
    "optimal_thresholds",
    "partial_moment",
]
