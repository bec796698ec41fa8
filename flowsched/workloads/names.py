"""Size distributions by name: :func:`get_distribution` and :func:`distribution_names`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flowsched.workloads._common import SAMPLING_RULES
from flowsched.workloads.empirical import EmpiricalCDF, shipped_cdf_names
from flowsched.workloads.mixture import artemis_workload_a
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


def _f(s: str) -> float:
    return float(s)


# spec prefix -> (builder taking the ':'-separated numbers, usage)
_SPEC_BUILDERS: dict[str, tuple[Callable[..., SizeDistribution], str]] = {
    "exp": (lambda mean: Exponential(_f(mean)), "exp:<mean_bytes>"),
    "pareto": (
        lambda alpha, mean: Pareto.from_mean(_f(alpha), _f(mean)),
        "pareto:<alpha>:<mean_bytes>  (Lomax, P(S>x) = (1+x/scale)^-alpha)",
    ),
    "lomax": (
        lambda alpha, scale: Pareto(_f(alpha), _f(scale)),
        "lomax:<alpha>:<scale_bytes>",
    ),
    "classic_pareto": (
        lambda alpha, mean: ClassicPareto.from_mean(_f(alpha), _f(mean)),
        "classic_pareto:<alpha>:<mean_bytes>  (P(S>x) = (min/x)^alpha)",
    ),
    "bpareto": (
        lambda alpha, lo, hi: BoundedPareto(_f(alpha), _f(lo), _f(hi)),
        "bpareto:<alpha>:<low_bytes>:<high_bytes>",
    ),
    "lognormal": (lambda mean, sigma: Lognormal(_f(mean), _f(sigma)), "lognormal:<mean_bytes>:<sigma>"),
    "fixed": (lambda size: Fixed(_f(size)), "fixed:<size_bytes>"),
    "uniform": (lambda lo, hi: Uniform(_f(lo), _f(hi)), "uniform:<low_bytes>:<high_bytes>"),
}

# fixed names -> factory
_NAMED_BUILDERS: dict[str, tuple[Callable[[], SizeDistribution], str]] = {
    "artemis_a1": (lambda: artemis_workload_a(1), "Artemis workload A variant 1 (50% 350KB/40ms, 50% 250KB/50ms)"),
    "artemis_a2": (lambda: artemis_workload_a(2), "Artemis workload A variant 2 (60% 350KB/40ms, 40% 250KB/50ms)"),
    "sdc_pareto": (
        lambda: ClassicPareto.from_mean(1.2, 25_000.0),
        "SDC/RACS benchmark: classic Pareto, shape 1.2, mean 25 KB (Munir, 3.5.3)",
    ),
    "sdc_uniform": (
        lambda: Uniform(2_000.0, 50_000.0),
        "SDC/RACS short/long mix: responses uniform on [2 KB, 50 KB] (Munir, 3.5.2)",
    ),
}


def distribution_names() -> list[str]:
    """Every accepted name and spec form of :func:`get_distribution`."""
    out = list(shipped_cdf_names())
    out += [f"{n}:<ns2int|linear|step>" for n in ("<cdf name>",)]
    out += list(_NAMED_BUILDERS)
    out += [usage for _, usage in _SPEC_BUILDERS.values()]
    return out


def get_distribution(name_or_spec: str | SizeDistribution) -> SizeDistribution:
    """Build a size distribution from a name or a short spec string.

    Parameters
    ----------
    name_or_spec : str or SizeDistribution
        * a shipped CDF name (``"websearch"``, ``"datamining"``, ... see
          :func:`shipped_cdf_names`), optionally with a sampling rule:
          ``"websearch:step"``; or a path to a ``.cdf`` file;
        * ``"artemis_a1"``, ``"artemis_a2"``, ``"sdc_pareto"``, ``"sdc_uniform"``;
        * ``"exp:<mean>"``, ``"pareto:<alpha>:<mean>"`` (Lomax),
          ``"lomax:<alpha>:<scale>"``, ``"classic_pareto:<alpha>:<mean>"``,
          ``"bpareto:<alpha>:<low>:<high>"``, ``"lognormal:<mean>:<sigma>"``,
          ``"fixed:<bytes>"``, ``"uniform:<low>:<high>"`` (all sizes in bytes);
        * a :class:`SizeDistribution` (returned as is).

    Returns
    -------
    SizeDistribution

    Raises
    ------
    ValueError
        Unknown name or malformed spec; the message lists the valid forms.
    """
    if isinstance(name_or_spec, SizeDistribution):
        return name_or_spec
    if not isinstance(name_or_spec, str):
        raise TypeError(f"get_distribution: expected a string or a SizeDistribution, got {name_or_spec!r}")
    spec = name_or_spec.strip()
    shipped = shipped_cdf_names()
    head, _, rest = spec.partition(":")
    if head in shipped or head.endswith(".cdf"):
        if rest and rest not in SAMPLING_RULES:
            raise ValueError(
                f"get_distribution({spec!r}): unknown sampling {rest!r}; use one of {list(SAMPLING_RULES)}"
            )
        if head in shipped or Path(head).is_file():
            return EmpiricalCDF.from_file(head, sampling=rest or None)
    if spec in _NAMED_BUILDERS:
        return _NAMED_BUILDERS[spec][0]()
    if head in _SPEC_BUILDERS:
        builder, usage = _SPEC_BUILDERS[head]
        args = rest.split(":") if rest else []
        try:
            return builder(*args)
        except TypeError:
            raise ValueError(f"get_distribution({spec!r}): expected {usage}") from None
        except ValueError as exc:
            raise ValueError(f"get_distribution({spec!r}): {exc} (expected {usage})") from None
    raise ValueError(f"unknown distribution {spec!r}; valid names and forms: {', '.join(distribution_names())}")
