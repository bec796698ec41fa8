"""flowsched.workloads as a package (issue 18, item 5): every name of the single module it
replaced (commit f0ab36b) is still there, at the same path, for imports, pickles and
Hydra ``_target_`` strings."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import flowsched.workloads as wl

# flowsched/workloads.py at f0ab36b: its __all__ ...
OLD_ALL = [
    "PACKET_PAYLOAD_BYTES", "PACKET_WIRE_BYTES", "HEADER_FACTOR", "SAMPLING_RULES", "SizeDistribution",
    "CDFFormatError", "EmpiricalCDF", "Exponential", "Pareto", "ClassicPareto", "BoundedPareto", "Lognormal",
    "Fixed", "Uniform", "Mixture", "artemis_workload_a", "shipped_cdf_names", "distribution_names",
    "get_distribution", "arrival_rate_per_host_hz", "poisson_all_to_all", "gather_bursts", "incast",
    "background_plus_queries", "merge_traces", "add_deadlines", "add_weights", "add_data_span",
    "fifo_adversarial_instance", "pias_adversarial_instance", "las_starvation_instance",
    "PIAS_THRESHOLDS_PACKETS", "pias_thresholds",
]
# ... and the other public names of its dir() that were flowsched's own (its type aliases and
# what it imported from flowsched.traces; the rest of dir() was stdlib, numpy and pandas).
OLD_DIR_EXTRA = ["DistLike", "SamplingRule", "MAX_FLOWS", "validate_trace"]
#: names added since, for traces held as numpy columns (the switch env's per-episode draw)
ADDED = ["poisson_all_to_all_columns", "data_spans"]

SUBMODULES = ["sizes", "mixture", "empirical", "names", "arrivals", "modifiers", "adversarial", "pias"]
#: public in their submodule for the rest of flowsched (the token env), not re-exported by the package
SUBMODULE_ONLY = {"arrivals.fixed_classes"}


def test_all_is_unchanged():
    assert sorted(wl.__all__) == sorted(OLD_ALL + ADDED)
    assert len(set(wl.__all__)) == len(wl.__all__)


@pytest.mark.parametrize("name", OLD_ALL + OLD_DIR_EXTRA)
def test_old_names_resolve(name):
    assert name in dir(wl)
    obj = getattr(wl, name)
    # a class or function is the very object defined in its submodule (one definition)
    mod = getattr(obj, "__module__", None)
    if mod and mod.startswith("flowsched.workloads."):
        import importlib

        assert getattr(importlib.import_module(mod), name) is obj


def test_every_public_submodule_name_is_exported():
    import importlib

    for sub in SUBMODULES:
        m = importlib.import_module(f"flowsched.workloads.{sub}")
        for name, obj in vars(m).items():
            if (
                name.startswith("_")
                or getattr(obj, "__module__", None) != m.__name__
                or f"{sub}.{name}" in SUBMODULE_ONLY
            ):
                continue
            if callable(obj):
                assert name in wl.__all__, f"flowsched.workloads.{sub}.{name} is not re-exported"


@pytest.mark.parametrize("target", ["flowsched.workloads.Exponential", "flowsched.workloads.poisson_all_to_all",
                                    "flowsched.workloads.get_distribution", "flowsched.workloads.artemis_workload_a"])
def test_hydra_targets_resolve(target):
    from hydra.utils import get_object

    assert get_object(target) is getattr(wl, target.rsplit(".", 1)[1])


def test_hydra_instantiate():
    from hydra.utils import instantiate

    d = instantiate({"_target_": "flowsched.workloads.Exponential", "mean_bytes": 1e4})
    assert d == wl.Exponential(1e4)
    mix = instantiate({"_target_": "flowsched.workloads.artemis_workload_a", "variant": 2})
    assert repr(mix) == repr(wl.artemis_workload_a(2))


def test_pickles_of_the_single_module_load():
    """tests/data/workloads_pre_split.pkl: distributions pickled by the single module
    (classes at flowsched.workloads.X, EmpiricalCDF holding a flowsched.workloads._Pieces)."""
    objs = pickle.loads((Path(__file__).parent / "data" / "workloads_pre_split.pkl").read_bytes())
    fresh = {
        "websearch": wl.get_distribution("websearch"),
        "datamining_step": wl.get_distribution("datamining:step"),
        "artemis_a1": wl.artemis_workload_a(1),
        "exp": wl.Exponential(1e5),
        "pareto": wl.Pareto.from_mean(3.0, 1e5),
        "classic_pareto": wl.ClassicPareto(2.5, 1e4),
        "bpareto": wl.BoundedPareto(1.2, 1e4, 1e6),
        "lognormal": wl.Lognormal(1e5, 1.2),
        "uniform": wl.Uniform(2e3, 5e4),
        "fixed": wl.Fixed(3e4),
    }
    assert set(objs) == set(fresh)
    for k, new in fresh.items():
        old = objs[k]
        assert type(old) is type(new), k
        assert repr(old) == repr(new), k
        assert old.mean_bytes == new.mean_bytes and old.second_moment_bytes2 == new.second_moment_bytes2, k
        np.testing.assert_array_equal(
            old.sample(np.random.default_rng(0), 50), new.sample(np.random.default_rng(0), 50)
        )
        assert float(old.sf(3e4)) == float(new.sf(3e4)), k  # the new methods work on unpickled objects
    # a new pickle round-trips too
    again = pickle.loads(pickle.dumps(fresh))
    assert repr(again["websearch"]) == repr(fresh["websearch"])
