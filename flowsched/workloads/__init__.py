"""Flow-size distributions, arrival processes and trace generators.

Everything here returns plain numbers or validated traces (see
:mod:`flowsched.traces`); all randomness comes from a
:class:`numpy.random.Generator` built from an explicit ``seed`` (never the
global RNGs), so a generator called twice with the same arguments returns
the same trace. :func:`gather_bursts` on classes of fixed sizes draws with the
token env's native generator instead (same seed, same episode).

The package is split by concern; every name is importable from
``flowsched.workloads`` itself (the submodules are where the code lives):

* :mod:`~flowsched.workloads.sizes` -- :class:`SizeDistribution` (the
  interface: ``sample``, exact ``mean_bytes`` and ``second_moment_bytes2``,
  the survival function ``sf`` and ``partial_moment``) and the parametric
  laws :class:`Exponential`, :class:`Pareto` (Lomax, SCHED_TCP's form),
  :class:`ClassicPareto`, :class:`BoundedPareto`, :class:`Lognormal`,
  :class:`Fixed`, :class:`Uniform`;
* :mod:`~flowsched.workloads.mixture` -- :class:`Mixture` of any of these,
  optionally with one deadline per class (:func:`artemis_workload_a`);
* :mod:`~flowsched.workloads.empirical` -- :class:`EmpiricalCDF`: the shipped
  ``.cdf`` files (web search, data mining, Facebook, Google, Alibaba, Homa
  W1-W5) under the three sampling rules ``ns2int``, ``linear`` and ``step``
  (``flowsched/data/README.md``);
* :mod:`~flowsched.workloads.names` -- :func:`get_distribution` builds any of
  them from a short string;
* :mod:`~flowsched.workloads.arrivals` -- :func:`poisson_all_to_all`
  (PIAS/pFabric/aSCC style load; :func:`poisson_all_to_all_columns` draws the same
  trace as numpy columns), :func:`gather_bursts` (Artemis workload A),
  :func:`incast` and :func:`background_plus_queries` (SDC/RACS),
  :func:`merge_traces`;
* :mod:`~flowsched.workloads.modifiers` -- :func:`add_deadlines`,
  :func:`add_weights`, :func:`add_data_span` (aSCC's alpha; :func:`data_spans`
  for columns);
* :mod:`~flowsched.workloads.adversarial` -- the instances of the aSCC
  theorems (:func:`fifo_adversarial_instance`,
  :func:`pias_adversarial_instance`, :func:`las_starvation_instance`);
* :mod:`~flowsched.workloads.pias` -- :func:`pias_thresholds`, PIAS's demotion
  thresholds.

The M/G/1 priority-queue model that uses the distributions' partial moments
is :mod:`flowsched.queueing`.

Units are in the names: ``_bytes``, ``_s``, ``_hz``, ``_gbps`` (10^9 bit/s).
"""

from __future__ import annotations

# Re-exported for code written against the single-module flowsched.workloads
# (not part of __all__): the trace contract it imported, its type aliases, and
# _Pieces, so that EmpiricalCDF objects pickled before the split still load.
from flowsched.traces import MAX_FLOWS as MAX_FLOWS, validate_trace as validate_trace
from flowsched.workloads._common import (
    HEADER_FACTOR,
    PACKET_PAYLOAD_BYTES,
    PACKET_WIRE_BYTES,
    SAMPLING_RULES,
    SamplingRule as SamplingRule,
)
from flowsched.workloads.adversarial import (
    fifo_adversarial_instance,
    las_starvation_instance,
    pias_adversarial_instance,
)
from flowsched.workloads.arrivals import (
    arrival_rate_per_host_hz,
    background_plus_queries,
    gather_bursts,
    incast,
    merge_traces,
    poisson_all_to_all,
    poisson_all_to_all_columns,
)
from flowsched.workloads.empirical import CDFFormatError, EmpiricalCDF, _Pieces as _Pieces, shipped_cdf_names
from flowsched.workloads.mixture import DistLike as DistLike, Mixture, artemis_workload_a
from flowsched.workloads.modifiers import add_data_span, add_deadlines, add_weights, data_spans
from flowsched.workloads.names import distribution_names, get_distribution
from flowsched.workloads.pias import PIAS_THRESHOLDS_PACKETS, pias_thresholds
from flowsched.workloads.sizes import (
    BoundedPareto,
    ClassicPareto,
    Exponential,
    Fixed,
    Lognormal,
    Pareto,
    SizeDistribution,
    Uniform,
)

__all__ = [
    "PACKET_PAYLOAD_BYTES",
    "PACKET_WIRE_BYTES",
    "HEADER_FACTOR",
    "SAMPLING_RULES",
    "SizeDistribution",
    "CDFFormatError",
    "EmpiricalCDF",
    "Exponential",
    "Pareto",
    "ClassicPareto",
    "BoundedPareto",
    "Lognormal",
    "Fixed",
    "Uniform",
    "Mixture",
    "artemis_workload_a",
    "shipped_cdf_names",
    "distribution_names",
    "get_distribution",
    "arrival_rate_per_host_hz",
    "poisson_all_to_all",
    "poisson_all_to_all_columns",
    "gather_bursts",
    "incast",
    "background_plus_queries",
    "merge_traces",
    "add_deadlines",
    "add_weights",
    "add_data_span",
    "data_spans",
    "fifo_adversarial_instance",
    "pias_adversarial_instance",
    "las_starvation_instance",
    "PIAS_THRESHOLDS_PACKETS",
    "pias_thresholds",
]
