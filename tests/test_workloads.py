"""Tests of flowsched.workloads: size distributions, generators, modifiers, theorem instances."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from flowsched.traces import TRACE_COLUMNS, TraceError, validate_columns, validate_trace
from flowsched.workloads import (
    HEADER_FACTOR,
    PIAS_THRESHOLDS_PACKETS,
    SAMPLING_RULES,
    BoundedPareto,
    CDFFormatError,
    ClassicPareto,
    EmpiricalCDF,
    Exponential,
    Fixed,
    Lognormal,
    Mixture,
    Pareto,
    Uniform,
    add_data_span,
    add_deadlines,
    add_weights,
    arrival_rate_per_host_hz,
    artemis_workload_a,
    background_plus_queries,
    data_spans,
    distribution_names,
    fifo_adversarial_instance,
    gather_bursts,
    get_distribution,
    incast,
    las_starvation_instance,
    merge_traces,
    pias_adversarial_instance,
    pias_thresholds,
    poisson_all_to_all,
    poisson_all_to_all_columns,
    shipped_cdf_names,
)

# ----------------------------------------------------------------------------
# the README table (flowsched/data/README.md, "Main table"): native rule, mean
# under the native rule, P(S < 1e5), share of bytes in flows > 1e7, means under
# the other rules, and the same two fractions at 102400 / 10485760 B
# ----------------------------------------------------------------------------

README_TABLE = {
    "websearch": ("ns2int", 1666451, 0.5431, 0.3480, {"linear": 1665831, "step": 2369492}, 0.5449, 0.3434),
    "datamining": ("ns2int", 7470601, 0.8235, 0.9828, {"linear": 7470236, "step": 13821966}, 0.8242, 0.9826),
    "websearch_hpcc": ("linear", 1711250, 0.5417, 0.3506, {"step": 2434900}, 0.5431, 0.3463),
    "fb_hadoop": ("linear", 120421, 0.8850, 0.0, {"step": 183897}, 0.8868, 0.0),
    "google_rpc_hpcc": ("linear", 2892, 0.9959, 0.0401, {"step": 2929}, 0.9960, 0.0365),
    "alistorage": ("linear", 40870, 0.9535, 0.0, {"step": 67050}, 0.9547, 0.0),
    "homa_w1_fb_memcached": ("step", 188, 1.0, 0.0, {"linear": 185}, 1.0, 0.0),
    "homa_w2_google_search_rpc": ("step", 441, 0.9997, 0.0, {"linear": 423}, 0.9997, 0.0),
    "homa_w3_google_all_rpc": ("step", 2927, 0.9959, 0.0439, {"linear": 2890}, 0.9960, 0.0439),
    "homa_w4_fb_hadoop": ("step", 127797, 0.8868, 0.0, {"linear": 121849}, 0.8885, 0.0),
    "homa_w5_websearch": ("step", 2547268, 0.5431, 0.7738, {"linear": 2510778}, 0.5449, 0.7637),
    "fb_cache_follower": ("step", 692976, 0.5320, 0.0, {"linear": 686866}, 0.5335, 0.0),
    "fb_web_server": ("step", 62874, 0.8141, 0.0, {"linear": 62229}, 0.8148, 0.0),
}


def test_all_shipped_files_in_table() -> None:
    assert set(shipped_cdf_names()) == set(README_TABLE)


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_readme_table(name: str) -> None:
    native, mean, p_small, share_big, other, p_small_kib, share_big_mib = README_TABLE[name]
    d = EmpiricalCDF.from_file(name)
    assert d.native_sampling == native
    assert d.sampling == native
    assert d.name == name
    # the README rounds means to whole bytes and fractions to 4 decimals
    assert abs(d.mean_bytes - mean) <= 0.5 + 1e-6
    assert abs(d.prob_less_than(1e5) - p_small) <= 5e-5 + 1e-12
    assert abs(d.bytes_share_above(1e7) - share_big) <= 5e-5 + 1e-12
    assert abs(d.prob_less_than(102400) - p_small_kib) <= 5e-5 + 1e-12
    assert abs(d.bytes_share_above(10485760) - share_big_mib) <= 5e-5 + 1e-12
    for rule, m in other.items():
        assert abs(d.with_sampling(rule).mean_bytes - m) <= 0.5 + 1e-6, rule


def test_readme_headline_numbers() -> None:
    ws = EmpiricalCDF.from_file("websearch")
    assert round(ws.mean_bytes) == 1_666_451
    assert ws.mean_bytes / 1460 == pytest.approx(1141.405, abs=1e-9)  # README: 1141.405 pkts
    assert round(EmpiricalCDF.from_file("websearch", "linear").mean_bytes) == 1_665_831
    assert round(EmpiricalCDF.from_file("websearch", "step").mean_bytes) == 2_369_492
    assert round(ws.prob_less_than(1e5), 4) == 0.5431
    dm = EmpiricalCDF.from_file("datamining")
    assert round(dm.mean_bytes) == 7_470_601
    assert dm.mean_bytes / 1460 == pytest.approx(5116.85, abs=1e-9)
    assert round(dm.with_sampling("step").mean_bytes) == 13_821_966
    assert round(EmpiricalCDF.from_file("fb_hadoop").mean_bytes) == 120_421
    assert round(EmpiricalCDF.from_file("homa_w5_websearch").mean_bytes) == 2_547_268
    # Homa files' first line (dropped) was the step mean: 1744.70 packets for W5
    assert EmpiricalCDF.from_file("homa_w5_websearch").mean_bytes / 1460 == pytest.approx(1744.70, abs=0.005)
    # README: at 1500 B per packet the web-search mean is 1,712,108 B (ns2int)
    ws1500 = EmpiricalCDF(ws.size_points_bytes / 1460 * 1500, ws.cdf_points, "ns2int", packet_bytes=1500)
    assert round(ws1500.mean_bytes) == 1_712_108
    assert round(ws1500.prob_less_than(1e5), 4) == 0.5414


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_header_declared_stats_match(name: str) -> None:
    d = EmpiricalCDF.from_file(name)
    declared = d.declared_stats()
    assert f"mean_{d.native_sampling}" in declared
    for key, value in declared.items():
        if key.startswith("mean_"):
            assert abs(d.with_sampling(key[5:]).mean_bytes - value) <= 0.5 + 1e-6, key
    assert abs(d.prob_less_than(1e5) - declared["p_below_1e5"]) <= 5e-5 + 1e-12
    assert abs(d.bytes_share_above(1e7) - declared["share_above_1e7"]) <= 5e-5 + 1e-12
    assert d.header.startswith("# workload:")


@pytest.mark.parametrize("name", sorted(README_TABLE))
@pytest.mark.parametrize("rule", SAMPLING_RULES)
def test_exact_moments_match_quadrature_of_the_sampling_map(name: str, rule: str) -> None:
    """The closed-form moments equal the integral of the quantile map used by sample()."""
    d = EmpiricalCDF.from_file(name, rule)
    n = 400_000
    u = (np.arange(n) + 0.5) / n
    v = d.size_at(u)
    # tail atoms smaller than the grid spacing limit the agreement
    assert v.mean() == pytest.approx(d.mean_bytes, rel=2e-3)
    assert (v**2).mean() == pytest.approx(d.second_moment_bytes2, rel=6e-2)
    assert np.mean(v < 1e5) == pytest.approx(d.prob_less_than(1e5), abs=5e-6)


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("websearch", "ns2int"),
        ("websearch", "linear"),
        ("websearch", "step"),
        ("datamining", "ns2int"),
        ("datamining", "step"),
        ("fb_hadoop", "linear"),
        ("homa_w5_websearch", "step"),
        ("homa_w1_fb_memcached", "step"),
    ],
)
def test_sample_mean_converges(name: str, rule: str) -> None:
    d = EmpiricalCDF.from_file(name, rule)
    n = 200_000
    x = d.sample(np.random.default_rng(12345), n)
    assert x.dtype == np.float64 and x.shape == (n,)
    assert np.all(x > 0)
    sd = math.sqrt(d.variance_bytes2 / n)
    assert abs(x.mean() - d.mean_bytes) < 5 * sd
    # and the variance (loose: heavy tails)
    assert x.var() == pytest.approx(d.variance_bytes2, rel=0.25)


def test_ns2int_sampling_details() -> None:
    ws = EmpiricalCDF.from_file("websearch")
    x = ws.sample(np.random.default_rng(1), 200_000)
    pk = x / 1460
    assert np.all(pk == np.round(pk))  # whole packets
    assert pk.min() == 6  # the 15% point mass at 6 packets
    assert np.mean(pk == 6) == pytest.approx(0.15, abs=0.005)
    # segment 6 -> 13 packets (cdf 0.15 -> 0.2): integers 7..13 equally likely, 0.05/7 each
    assert ws.cdf(13 * 1460) - ws.cdf(6 * 1460) == pytest.approx(0.05)
    assert ws.cdf(7 * 1460) - ws.cdf(6 * 1460) == pytest.approx(0.05 / 7)
    assert np.mean(pk == 7) == pytest.approx(0.05 / 7, abs=0.001)
    assert pk.max() <= 20000
    dm = EmpiricalCDF.from_file("datamining")
    y = dm.sample(np.random.default_rng(2), 100_000) / 1460
    assert np.mean(y == 1) == pytest.approx(0.5, abs=0.01)  # 50% point mass at 1 packet


def test_step_and_linear_sampling_details() -> None:
    ws = EmpiricalCDF.from_file("websearch", "step")
    x = ws.sample(np.random.default_rng(3), 50_000)
    assert set(np.unique(x)) <= set(ws.size_points_bytes)
    lin = EmpiricalCDF.from_file("websearch", "linear")
    y = lin.sample(np.random.default_rng(3), 50_000)
    assert np.mean(y == 8760) == pytest.approx(0.15, abs=0.01)
    assert len(np.unique(y)) > 40_000  # continuous elsewhere


def test_empirical_from_points_and_small_cases() -> None:
    # two points: 1 packet w.p. 0.5, then 1..3 packets linear in cdf 0.5..1
    d = EmpiricalCDF([1460, 1460, 4380], [0.0, 0.5, 1.0], "ns2int")
    # ns2int: point mass 0.5 at 1 pkt; integers 2, 3 with 0.25 each
    assert d.mean_bytes == pytest.approx(1460 * (0.5 * 1 + 0.25 * 2 + 0.25 * 3))
    assert d.second_moment_bytes2 == pytest.approx(1460**2 * (0.5 + 0.25 * 4 + 0.25 * 9))
    lin = d.with_sampling("linear")
    assert lin.mean_bytes == pytest.approx(0.5 * 1460 + 0.5 * (1460 + 4380) / 2)
    step = d.with_sampling("step")
    assert step.mean_bytes == pytest.approx(0.5 * 1460 + 0.5 * 4380)
    # non-integer packet counts under ns2int: buckets (k-1, k] get their share of the segment
    f = EmpiricalCDF([730, 2190], [0.0, 1.0], "ns2int")  # 0.5 -> 1.5 pkts: 1 and 2 w.p. 0.5 each
    assert f.mean_bytes == pytest.approx(1.5 * 1460)
    assert set(np.unique(f.sample(np.random.default_rng(0), 1000))) == {1460.0, 2920.0}


def test_native_rule_parsed_from_header_or_required(tmp_path: Path) -> None:
    p = tmp_path / "mine.cdf"
    p.write_text("# how the source simulator samples it: ns-2 Empirical, interpolation_=2\n1460 0\n14600 1\n")
    assert EmpiricalCDF.from_file(p).native_sampling == "ns2int"
    p.write_text("# how the source simulator samples it: Homa step CDF, then *1442\n1460 0.5\n14600 1\n")
    d = EmpiricalCDF.from_file(str(p))
    assert d.native_sampling == "step" and d.name == "mine" and d.mean_bytes == pytest.approx(0.5 * 1460 + 0.5 * 14600)
    p.write_text("# how the source simulator samples it: HPCC custom_rand.py, linear (Homa: step)\n0 0\n100 1\n")
    assert EmpiricalCDF.from_file(p).native_sampling == "linear"
    p.write_text("100 0\n200 1\n")
    with pytest.raises(ValueError, match="sampling"):
        EmpiricalCDF.from_file(p)
    assert EmpiricalCDF.from_file(p, "linear").mean_bytes == pytest.approx(150)


@pytest.mark.parametrize(
    ("body", "line", "text"),
    [
        ("100 0\n300 0.5\n200 1\n", 3, "sizes must be non-decreasing"),
        ("100 0\n200 0.6\n300 0.5\n400 1\n", 3, "cdf must be non-decreasing"),
        ("100 0\n200 1.2\n", 2, "cdf must be in [0, 1]"),
        ("100 -0.1\n200 1\n", 1, "cdf must be in [0, 1]"),
        ("100 0\n200 0.9\n", 2, "last cdf value must be 1"),
        ("100 0\n200 x\n300 1\n", 2, "not a number"),
        ("100 0 7\n200 1\n", 1, "expected 2 fields"),
        ("-5 0\n200 1\n", 1, ">= 0"),
    ],
)
def test_malformed_cdf_files(tmp_path: Path, body: str, line: int, text: str) -> None:
    p = tmp_path / "bad.cdf"
    p.write_text("# header line\n# how the source simulator samples it: linear\n" + body)
    with pytest.raises(CDFFormatError) as err:
        EmpiricalCDF.from_file(p)
    msg = str(err.value)
    assert str(p) in msg
    assert f"line {line + 2}:" in msg
    assert text in msg


def test_cdf_zero_size_with_mass_rejected_and_unknown_name() -> None:
    with pytest.raises(CDFFormatError, match="size 0 has probability"):
        EmpiricalCDF([0, 100], [0.1, 1.0], "linear")
    with pytest.raises(FileNotFoundError, match="websearch"):
        EmpiricalCDF.from_file("no_such_workload")
    with pytest.raises(ValueError, match="sampling"):
        EmpiricalCDF.from_file("websearch", "cubic")


# ----------------------------------------------------------------------------
# parametric distributions
# ----------------------------------------------------------------------------


def _bp_moment(a: float, lo: float, hi: float, k: int) -> float:
    norm = a * lo**a / (1 - (lo / hi) ** a)
    return integrate.quad(lambda x: x**k * norm * x ** (-a - 1), lo, hi, limit=200)[0]


PARAMETRIC = [
    (Exponential(1e5), 1e5, 2e10),
    (Pareto(3.0, 1e7), stats.lomax(c=3.0, scale=1e7).mean(), stats.lomax(c=3.0, scale=1e7).moment(2)),
    (Pareto.from_mean(2.5, 1e5), 1e5, stats.lomax(c=2.5, scale=1.5e5).moment(2)),
    (ClassicPareto(3.0, 1000.0), stats.pareto(b=3.0, scale=1000.0).mean(), stats.pareto(b=3.0, scale=1000.0).moment(2)),
    (BoundedPareto(1.1, 1e3, 1e7), _bp_moment(1.1, 1e3, 1e7, 1), _bp_moment(1.1, 1e3, 1e7, 2)),
    (BoundedPareto(2.0, 1e3, 1e6), _bp_moment(2.0, 1e3, 1e6, 1), _bp_moment(2.0, 1e3, 1e6, 2)),
    (BoundedPareto(1.0, 1e3, 1e6), _bp_moment(1.0, 1e3, 1e6, 1), _bp_moment(1.0, 1e3, 1e6, 2)),
    (Lognormal(1e5, 1.0), 1e5, stats.lognorm(s=1.0, scale=1e5 * math.exp(-0.5)).moment(2)),
    (Fixed(1460.0), 1460.0, 1460.0**2),
    (Uniform(2000.0, 50000.0), 26000.0, stats.uniform(2000, 48000).moment(2)),
    (Mixture([(1, Fixed(100.0)), (3, Exponential(1000.0))]), 0.25 * 100 + 0.75 * 1000, 0.25 * 1e4 + 0.75 * 2e6),
]


@pytest.mark.parametrize(("dist", "mean", "m2"), PARAMETRIC, ids=[repr(p[0])[:40] for p in PARAMETRIC])
def test_parametric_moments_and_sampling(dist, mean: float, m2: float) -> None:
    assert dist.mean_bytes == pytest.approx(mean, rel=1e-9)
    assert dist.second_moment_bytes2 == pytest.approx(m2, rel=1e-6)
    n = 200_000
    x = dist.sample(np.random.default_rng(7), n)
    assert x.shape == (n,) and x.dtype == np.float64 and np.all(x > 0)
    sd = math.sqrt(dist.variance_bytes2 / n)
    assert abs(x.mean() - mean) <= 5 * sd + 1e-9 * mean
    assert repr(dist).startswith(type(dist).__name__ + "(")


def test_pareto_forms_and_infinite_moments() -> None:
    p = Pareto(3.0, 1e7)  # SCHED_TCP: alpha = 3, c = 1e-7 -> E[S] = 5 MB
    assert p.mean_bytes == 5e6
    x = p.sample(np.random.default_rng(0), 100_000)
    # tail: P(S > x) = (1 + x/scale)^-alpha
    for q in (1e6, 1e7):
        assert np.mean(x > q) == pytest.approx((1 + q / 1e7) ** -3, abs=0.005)
    assert Pareto(1.5, 1.0).second_moment_bytes2 == math.inf
    assert Pareto(0.9, 1.0).mean_bytes == math.inf
    c = ClassicPareto.from_mean(1.2, 25_000)  # SDC benchmark
    assert c.mean_bytes == pytest.approx(25_000)
    assert c.second_moment_bytes2 == math.inf
    assert c.sample(np.random.default_rng(0), 1000).min() >= c.min_bytes
    b = BoundedPareto(1.2, 1e3, 1e5).sample(np.random.default_rng(0), 10_000)
    assert b.min() >= 1e3 and b.max() <= 1e5
    with pytest.raises(ValueError):
        Pareto.from_mean(1.0, 10)
    with pytest.raises(ValueError):
        Uniform(5, 5)
    with pytest.raises(ValueError):
        Fixed(0)


def test_mixture_classes_and_artemis() -> None:
    v1 = artemis_workload_a(1)
    assert v1.names == ("350KB/40ms", "250KB/50ms")
    assert v1.weights.tolist() == [0.5, 0.5]
    assert [c.mean_bytes for c in v1.components] == [350_000.0, 250_000.0]
    assert v1.deadlines_s.tolist() == [0.040, 0.050]
    assert v1.mean_bytes == 300_000.0
    v2 = artemis_workload_a(2)
    assert v2.weights.tolist() == pytest.approx([0.6, 0.4])  # section 4.3: 60% are (350KB, 40ms)
    assert v2.mean_bytes == pytest.approx(0.6 * 350_000 + 0.4 * 250_000)
    assert artemis_workload_a(1, kb_bytes=1024).components[0].mean_bytes == 350 * 1024
    sizes, cls = v2.sample_with_classes(np.random.default_rng(0), 100_000)
    assert np.mean(cls == 0) == pytest.approx(0.6, abs=0.01)
    assert np.all(sizes[cls == 0] == 350_000) and np.all(sizes[cls == 1] == 250_000)
    with pytest.raises(ValueError):
        artemis_workload_a(3)
    with pytest.raises(ValueError, match="deadline"):
        Mixture([(1.0, 100.0, -1.0)])


def test_get_distribution() -> None:
    assert isinstance(get_distribution("websearch"), EmpiricalCDF)
    ws_step = get_distribution("websearch:step")
    assert isinstance(ws_step, EmpiricalCDF) and ws_step.sampling == "step"
    assert get_distribution("datamining").mean_bytes == pytest.approx(7_470_601, abs=0.5)
    assert get_distribution("exp:1e5") == Exponential(1e5)
    assert get_distribution("pareto:3:5e6").mean_bytes == pytest.approx(5e6)
    lomax = get_distribution("pareto:3:5e6")
    assert isinstance(lomax, Pareto) and lomax.scale_bytes == pytest.approx(1e7)
    assert get_distribution("lomax:3:1e7").mean_bytes == pytest.approx(5e6)
    assert get_distribution("classic_pareto:1.2:25000").mean_bytes == pytest.approx(25_000)
    assert get_distribution("bpareto:1.1:1000:1e6") == BoundedPareto(1.1, 1000, 1e6)
    assert get_distribution("lognormal:1e5:2").mean_bytes == 1e5
    assert get_distribution("fixed:1460") == Fixed(1460)
    assert get_distribution("uniform:2000:50000") == Uniform(2000, 50000)
    a2 = get_distribution("artemis_a2")
    assert isinstance(a2, Mixture) and a2.weights.tolist() == pytest.approx([0.6, 0.4])
    d = Fixed(5.0)
    assert get_distribution(d) is d
    with pytest.raises(ValueError) as err:
        get_distribution("websearch2")
    for name in ("websearch", "datamining", "fb_hadoop", "exp:<mean_bytes>", "artemis_a1"):
        assert name in str(err.value)
    with pytest.raises(ValueError, match="expected pareto"):
        get_distribution("pareto:3")
    with pytest.raises(ValueError, match="unknown sampling"):
        get_distribution("websearch:cubic")
    assert "websearch" in distribution_names()


# ----------------------------------------------------------------------------
# Poisson all-to-all
# ----------------------------------------------------------------------------


def _load_tolerance(dist, n: int, sigmas: float = 5.0) -> float:
    cv2 = dist.variance_bytes2 / dist.mean_bytes**2
    return sigmas * math.sqrt((cv2 + 1.0) / n)  # size sum and Poisson duration


@pytest.mark.parametrize(
    ("dist", "load", "hosts", "gbps", "header"),
    [
        (Exponential(1e5), 0.7, 16, 10.0, False),
        ("websearch", 0.5, 144, 10.0, True),
        ("datamining", 0.8, 32, 40.0, False),
        ("artemis_a1", 0.3, 4, 1.0, False),
    ],
)
def test_poisson_offered_load(dist, load: float, hosts: int, gbps: float, header: bool) -> None:
    d = get_distribution(dist) if isinstance(dist, str) else dist
    n = 300_000
    df = poisson_all_to_all(dist, load, hosts, gbps, n, seed=11, header_factor=header)
    assert len(df) == n and tuple(df.columns) == TRACE_COLUMNS
    dur = df["arrival_s"].iloc[-1]
    measured = df["size_bytes"].sum() * 8 / (dur * gbps * 1e9 * hosts)
    target = load / HEADER_FACTOR if header else load
    assert abs(measured / target - 1) < _load_tolerance(d, n)
    lam = arrival_rate_per_host_hz(d.mean_bytes, load, gbps, header_factor=header)
    assert df.attrs["rate_per_host_hz"] == pytest.approx(lam)
    assert n / dur / hosts == pytest.approx(lam, rel=5 / math.sqrt(n))
    a = df["arrival_s"].to_numpy()
    assert np.all(np.diff(a) >= 0) and a[0] > 0
    assert np.all(df["src"] != df["dst"])
    assert df["id"].tolist() == list(range(n))
    assert df["src"].between(0, hosts - 1).all() and df["dst"].between(0, hosts - 1).all()
    # sources and destinations uniform
    for col in ("src", "dst"):
        counts = np.bincount(df[col], minlength=hosts)
        assert stats.chisquare(counts).pvalue > 1e-4
    if dist == "artemis_a1":
        assert set(df["deadline_s"].unique()) == {0.04, 0.05}
    else:
        assert df["deadline_s"].isna().all()


def test_poisson_interarrivals_exponential_and_pairs() -> None:
    df = poisson_all_to_all(Fixed(1e4), 0.5, 4, 10.0, 50_000, seed=5)
    gaps = np.diff(np.concatenate([[0.0], df["arrival_s"].to_numpy()]))
    rate = 4 * df.attrs["rate_per_host_hz"]
    assert stats.kstest(gaps * rate, "expon").pvalue > 1e-4
    # README: each (src, dst) pair is Poisson at lambda/(N-1)
    pairs = df.groupby(["src", "dst"]).size()
    assert len(pairs) == 12
    assert stats.chisquare(pairs.to_numpy()).pvalue > 1e-4


def test_poisson_deterministic_for_seed() -> None:
    a = poisson_all_to_all("websearch", 0.6, 16, 10.0, 10_000, seed=42)
    b = poisson_all_to_all("websearch", 0.6, 16, 10.0, 10_000, seed=42)
    c = poisson_all_to_all("websearch", 0.6, 16, 10.0, 10_000, seed=43)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert not a["arrival_s"].equals(c["arrival_s"])
    # the global RNG is not used
    np.random.seed(0)
    s1 = np.random.random()
    np.random.seed(0)
    poisson_all_to_all("websearch", 0.6, 16, 10.0, 100, seed=1)
    assert np.random.random() == s1


@pytest.mark.parametrize("dist", ["websearch", "artemis_a1"])
def test_poisson_columns_are_the_frames_columns(dist: str) -> None:
    """poisson_all_to_all_columns: the same draws (class deadlines included), the
    validated columns of the same frame, bit for bit; data_spans is add_data_span's column."""
    df = poisson_all_to_all(dist, 0.6, 8, 10.0, 2_000, seed=7)
    cols = poisson_all_to_all_columns(dist, 0.6, 8, 10.0, 2_000, seed=7)
    assert list(cols) == list(TRACE_COLUMNS)
    pd.testing.assert_frame_equal(pd.DataFrame(cols), df, check_exact=True)
    # unchecked (validate=False, for a caller that validates next): the same draws, and
    # validating them gives the same columns
    raw = poisson_all_to_all_columns(dist, 0.6, 8, 10.0, 2_000, seed=7, validate=False)
    assert list(raw) == ["id", "arrival_s", "src", "dst", "size_bytes", "deadline_s"]
    pd.testing.assert_frame_equal(pd.DataFrame(validate_columns(raw, 8)), df, check_exact=True)
    for header in (False, True):
        spans = data_spans(cols["size_bytes"], 1.5, 10.0, header_factor=header)
        assert np.array_equal(spans, add_data_span(df, 1.5, 10.0, header_factor=header)["data_span_s"].to_numpy())


def test_prepare_columns_unchecked_gives_the_checked_columns() -> None:
    """prepare_columns(validate=False), as the switch env prepares each episode's trace:
    the generator's raw columns come out as the validated ones, bit for bit (defaults
    added, the contract's order); an unknown column still raises."""
    from flowsched.sim import prepare_columns
    from flowsched.topology import BigSwitch

    topo = BigSwitch(8, 10.0)
    raw = poisson_all_to_all_columns("websearch", 0.6, 8, 10.0, 2_000, seed=7, validate=False)
    raw["size_known"] = np.arange(2_000) % 3 > 0
    checked, origin = prepare_columns(raw, topo)
    fast, fast_origin = prepare_columns(raw, topo, validate=False)
    assert list(fast) == list(checked) == list(TRACE_COLUMNS) and fast_origin == origin == 0.0
    for name in TRACE_COLUMNS:
        assert fast[name].dtype == checked[name].dtype, name
        assert np.array_equal(fast[name], checked[name], equal_nan=fast[name].dtype.kind == "f"), name
    with pytest.raises(TraceError, match=r"unknown column\(s\) \['sizes'\]"):
        prepare_columns({**raw, "sizes": raw["size_bytes"]}, topo, validate=False)


def test_poisson_million_flows() -> None:
    """A million-flow trace (the benchmarks' scale) comes out whole and at the load asked for:
    ids in order, arrivals sorted, no flow to itself, every host used, and the bytes offered
    per host link over the trace's span within 1% of load x capacity (web search's sizes are
    bounded, so a million of them pin the mean to about 0.2%). Its speed is not asserted here
    (timed tests fail on a busy machine): 0.3 s on this project's 2-core machine, 2026-11-27."""
    hosts, gbps, load = 144, 10.0, 0.8
    df = poisson_all_to_all("websearch", load, hosts, gbps, 1_000_000, seed=0)
    assert len(df) == 1_000_000
    assert np.array_equal(df["id"].to_numpy(), np.arange(1_000_000))
    arrival = df["arrival_s"].to_numpy()
    assert np.all(np.diff(arrival) >= 0)
    assert (df["src"] != df["dst"]).all()
    assert set(df["src"].unique()) == set(range(hosts)) == set(df["dst"].unique())
    offered = df["size_bytes"].sum() * 8 / (arrival[-1] * hosts * gbps * 1e9)
    assert offered == pytest.approx(load, rel=0.01)


def test_poisson_argument_errors() -> None:
    with pytest.raises(ValueError, match="hosts"):
        poisson_all_to_all("websearch", 0.5, 1, 10.0, 10)
    with pytest.raises(ValueError, match="load"):
        poisson_all_to_all("websearch", 0.0, 4, 10.0, 10)
    with pytest.raises(ValueError, match="infinite mean"):
        poisson_all_to_all(Pareto(0.9, 1.0), 0.5, 4, 10.0, 10)


# ----------------------------------------------------------------------------
# gather bursts, incast, background + queries
# ----------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "n_big"), [(1, 5), (2, 6)])
def test_gather_bursts_artemis(variant: int, n_big: int) -> None:
    nb = 2000
    df = gather_bursts(artemis_workload_a(variant), n_bursts=nb, seed=3)
    assert len(df) == 10 * nb
    assert (df["dst"] == 0).all()
    burst = np.arange(len(df)) // 10
    g = df.groupby(burst)
    assert (g["arrival_s"].nunique() == 1).all()  # all flows of a burst at the same instant
    assert (g["src"].nunique() == 10).all()  # 10 distinct senders
    assert set(df["src"]) == set(range(1, 11))  # hosts = 11 by default
    # exact composition in every burst (thesis 4.2: 5 + 5; 4.3: 6 + 4)
    assert (g["size_bytes"].apply(lambda s: int((s == 350_000).sum())) == n_big).all()
    big = df["size_bytes"] == 350_000
    assert (df.loc[big, "deadline_s"] == 0.040).all() and (df.loc[~big, "deadline_s"] == 0.050).all()
    # Poisson bursts at 10/s
    t = g["arrival_s"].first().to_numpy()
    gaps = np.diff(np.concatenate([[0.0], t]))
    assert gaps.mean() == pytest.approx(0.1, rel=5 / math.sqrt(nb))
    assert stats.kstest(gaps / 0.1, "expon").pvalue > 1e-4
    # class placement among senders is random: sender 1 gets the big class about n_big/10 of the time
    share = big[df["src"] == 1].mean()
    assert share == pytest.approx(n_big / 10, abs=0.05)


def test_gather_bursts_options() -> None:
    df = gather_bursts("artemis_a1", burst_size=4, hosts=50, dst=7, n_flows=400, seed=1, composition="random")
    assert len(df) == 400 and (df["dst"] == 7).all() and (df["src"] != 7).all()
    assert (df.groupby(np.arange(400) // 4)["src"].nunique() == 4).all()
    with pytest.raises(ValueError, match="whole numbers"):
        gather_bursts("artemis_a2", burst_size=4, n_bursts=3)
    with pytest.raises(ValueError, match="exactly one"):
        gather_bursts("artemis_a1", n_bursts=3, n_flows=30)
    with pytest.raises(ValueError, match="multiple"):
        gather_bursts("artemis_a1", n_flows=25)
    plain = gather_bursts(Exponential(1e4), n_bursts=5, seed=0)
    assert plain["deadline_s"].isna().all()
    pd.testing.assert_frame_equal(gather_bursts(n_bursts=5, seed=9), gather_bursts(n_bursts=5, seed=9))


GATHER_COLUMNS = ["arrival_s", "src", "dst", "size_bytes", "deadline_s"]


@pytest.mark.parametrize(
    ("env_kwargs", "gen_kwargs"),
    [
        ({}, {"dist_or_mixture": "artemis_a1", "n_bursts": 20}),
        ({"variant": 2, "n_bursts": 7}, {"dist_or_mixture": "artemis_a2", "n_bursts": 7}),
        (
            {"burst_size": 4, "burst_rate_hz": 25.0, "n_bursts": 30, "hosts": 9, "exact_composition": False},
            {"dist_or_mixture": "artemis_a1", "burst_size": 4, "burst_rate_hz": 25.0, "n_bursts": 30, "hosts": 9,
             "composition": "random"},
        ),
        ({"workload": Fixed(2e5), "n_bursts": 5}, {"dist_or_mixture": Fixed(2e5), "n_bursts": 5}),
    ],
)
def test_gather_bursts_is_the_token_envs_episode(env_kwargs, gen_kwargs) -> None:
    """One generator (issue 18 item 5): the token env's episode after reset(seed=s) is
    gather_bursts(..., seed=s) with the same parameters, bit for bit."""
    from flowsched.envs import TokenSchedulingEnv

    env = TokenSchedulingEnv(**env_kwargs)
    for seed in (0, 1, 12345, 2**64 - 1):
        env.reset(seed=seed)
        ep = env.episode()
        tr = gather_bursts(**gen_kwargs, seed=seed)
        assert len(ep) == len(tr)
        for c in GATHER_COLUMNS:
            np.testing.assert_array_equal(ep[c].to_numpy(), tr[c].to_numpy(), err_msg=c)


def test_gather_bursts_seeds() -> None:
    a = gather_bursts(n_bursts=3, seed=np.random.default_rng(4))
    pd.testing.assert_frame_equal(a, gather_bursts(n_bursts=3, seed=np.random.default_rng(4)))
    assert len(gather_bursts(n_bursts=3, seed=None)) == 30
    assert not gather_bursts(n_bursts=3, seed=1).equals(gather_bursts(n_bursts=3, seed=2))
    for bad in (-1, 2**64, 1.5):
        with pytest.raises(ValueError, match="seed must be"):
            gather_bursts(n_bursts=3, seed=bad)
    # sizes the native generator cannot express stay on numpy's generator (seeds as anywhere else)
    e = gather_bursts(Exponential(1e4), n_bursts=3, seed=5)
    assert e["size_bytes"].nunique() == 30
    pd.testing.assert_frame_equal(e, gather_bursts(Exponential(1e4), n_bursts=3, seed=np.random.default_rng(5)))


def test_incast() -> None:
    df = incast(8, 25_000, dst=0, hosts=20, n_queries=500, interval_s=0.01, seed=2)
    assert len(df) == 4000
    assert (df["size_bytes"] == 25_000).all()  # SDC 3.5.2: each server sends the requested 25 KB
    q = np.arange(4000) // 8
    assert np.allclose(df["arrival_s"], q * 0.01)
    assert (df.groupby(q)["src"].nunique() == 8).all()
    assert (df["src"] != 0).all() and (df["dst"] == 0).all()
    split = incast(8, 25_000, n_queries=3, rate_hz=100.0, seed=2, split=True)
    assert (split["size_bytes"] == 25_000 / 8).all()
    assert split["src"].nunique() == 8  # hosts = n_senders + 1
    with pytest.raises(ValueError, match="exactly one"):
        incast(8, 25_000, n_queries=3)


def test_background_plus_queries() -> None:
    df = background_plus_queries(n_queries=5000, query_rate_hz=1000.0, seed=4)
    assert len(df) == 5002
    bg, q = df.iloc[:2], df.iloc[2:]
    assert (bg["arrival_s"] == 0).all() and sorted(bg["src"]) == [1, 2]
    assert (df["dst"] == 0).all() and (q["src"] == 3).all()
    assert q["size_bytes"].between(2000, 50000).all()
    assert q["size_bytes"].mean() == pytest.approx(26_000, rel=0.02)
    # background flows outlast the queries even alone at line rate
    assert bg["size_bytes"].iloc[0] * 8 / 1e9 > q["arrival_s"].max()
    assert np.diff(q["arrival_s"]).min() >= 0
    pareto = background_plus_queries("sdc_pareto", 2000.0, 100, hosts=6, background_bytes=1e9, seed=0)
    assert set(pareto["src"].iloc[2:]) <= {3, 4, 5} and pareto["size_bytes"].iloc[0] == 1e9


def test_merge_traces() -> None:
    a = incast(3, 1000, n_queries=2, interval_s=1.0, hosts=8, seed=0)
    b = background_plus_queries(n_queries=3, hosts=8, seed=0)
    m = merge_traces([a, b], hosts=8)
    assert len(m) == len(a) + len(b)
    assert m["id"].tolist() == list(range(len(m)))
    assert np.all(np.diff(m["arrival_s"]) >= 0)


# ----------------------------------------------------------------------------
# modifiers
# ----------------------------------------------------------------------------


def test_add_deadlines() -> None:
    base = poisson_all_to_all("websearch", 0.5, 8, 10.0, 2000, seed=0)
    fixed = add_deadlines(base, fixed_s=0.01)
    assert (fixed["deadline_s"] == 0.01).all()
    sl = add_deadlines(base, slack=(1.5, 3.0), link_gbps=10.0, base_rtt_s=1e-5, seed=3)
    ideal = base["size_bytes"] * 8 / 10e9 + 1e-5
    ratio = sl["deadline_s"] / ideal
    assert ratio.min() >= 1.5 and ratio.max() <= 3.0
    assert ratio.mean() == pytest.approx(2.25, abs=0.05)
    pd.testing.assert_frame_equal(sl, add_deadlines(base, slack=(1.5, 3.0), link_gbps=10.0, base_rtt_s=1e-5, seed=3))
    g = gather_bursts("artemis_a1", n_bursts=2, seed=0)
    g.loc[0, "deadline_s"] = np.nan
    kept = add_deadlines(g, fixed_s=1.0, only_missing=True)
    assert kept["deadline_s"].iloc[0] == 1.0 and set(kept["deadline_s"].iloc[1:]) <= {0.04, 0.05}
    with pytest.raises(ValueError, match="exactly one"):
        add_deadlines(base)
    with pytest.raises(ValueError, match="link_gbps"):
        add_deadlines(base, slack=(1, 2))


def test_add_weights() -> None:
    base = poisson_all_to_all(Fixed(1e4), 0.5, 4, 10.0, 1000, seed=0)
    assert (add_weights(base, 2.5)["weight"] == 2.5).all()
    u = add_weights(base, uniform=(1.0, 4.0), seed=1)["weight"]
    assert u.min() >= 1.0 and u.max() <= 4.0
    c = add_weights(base, choices=[(0.2, 10.0), (0.8, 1.0)], seed=1)["weight"]
    assert set(c) == {1.0, 10.0} and (c == 10.0).mean() == pytest.approx(0.2, abs=0.05)
    with pytest.raises(ValueError, match="weight"):
        add_weights(base, 0.0)


def test_add_data_span() -> None:
    base = poisson_all_to_all("websearch", 0.5, 8, 10.0, 500, seed=0)
    for alpha in (0.0, 1.0, 2.0):
        s = add_data_span(base, alpha, 10.0)
        assert np.allclose(s["data_span_s"], alpha * base["size_bytes"] * 8 / 10e9, rtol=1e-15, atol=0)
    h = add_data_span(base, 1.0, 10.0, header_factor=True)
    assert np.allclose(h["data_span_s"], np.ceil(base["size_bytes"] / 1460) * 1500 * 8 / 10e9)
    with pytest.raises(ValueError):
        add_data_span(base, -1.0, 10.0)


def test_add_data_span_chunks_ends_each_span_at_the_last_of_the_authors_chunks() -> None:
    """aSCC's code (app-chunks.cc): m = min(packets, chunks) chunks at uniform times in the span, the
    earliest sent at once, so the span ends at the largest of m uniform draws (CDF x^m), 0 for one chunk."""
    from scipy import stats

    sizes = np.array([1460.0] * 4000 + [2 * 1460.0] * 4000 + [5 * 1460.0] * 4000 + [500 * 1460.0] * 4000)
    tr = pd.DataFrame({"arrival_s": np.arange(sizes.size) * 1e-6, "src": 0, "dst": 1, "size_bytes": sizes})
    full = add_data_span(tr, 1.0, 10.0, header_factor=True)["data_span_s"].to_numpy()
    ch = add_data_span(tr, 1.0, 10.0, header_factor=True, chunks=100, seed=7)["data_span_s"].to_numpy()
    frac = ch / full
    assert (frac[:4000] == 0).all()  # one packet, one chunk: complete at once
    for i, m in ((1, 2), (2, 5), (3, 100)):  # 500 packets: at most 100 chunks
        f = frac[4000 * i:4000 * (i + 1)]
        assert 0 < f.min() and f.max() <= 1
        assert stats.kstest(f, lambda x, m=m: np.clip(x, 0, 1) ** m).pvalue > 1e-3, m
        assert f.mean() == pytest.approx(m / (m + 1), abs=0.01)
    # the same draws at every alpha; the seed draws them; without chunks the span is the whole alpha Delta t
    twice = add_data_span(tr, 2.0, 10.0, header_factor=True, chunks=100, seed=7)["data_span_s"].to_numpy()
    assert np.allclose(twice, 2 * ch, rtol=1e-15, atol=0)
    assert not np.array_equal(ch, add_data_span(tr, 1.0, 10.0, header_factor=True, chunks=100, seed=8)["data_span_s"])
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="chunks"):
            add_data_span(tr, 1.0, 10.0, chunks=bad)


# ----------------------------------------------------------------------------
# theorem instances, checked with an independent single-link fluid simulator
# ----------------------------------------------------------------------------


def fluid_single_link(
    arrival: np.ndarray, size: np.ndarray, rate_Bps: float, policy: str, thresholds: list[float] | None = None
) -> np.ndarray:
    """Completion times on one link of rate ``rate_Bps`` (event driven, exact up to float error)."""
    n = len(arrival)
    rem = size.astype(float).copy()
    att = np.zeros(n)
    done = np.full(n, np.nan)
    order = np.argsort(arrival, kind="stable")
    nxt = 0
    t = 0.0
    active: list[int] = []
    tol = 1e-3  # bytes: attained-service comparisons (far above float rounding, far below sizes)
    while np.isnan(done).any():
        while nxt < n and arrival[order[nxt]] <= t + 1e-15:
            active.append(int(order[nxt]))
            nxt += 1
        if not active:
            t = float(arrival[order[nxt]])
            continue
        rates = {}
        if policy == "fifo":
            i = min(active, key=lambda j: (arrival[j], j))
            rates[i] = rate_Bps
        elif policy == "srpt":
            i = min(active, key=lambda j: (rem[j], arrival[j], j))
            rates[i] = rate_Bps
        elif policy == "pias":
            thr = np.asarray(thresholds)

            def queue(j: int, thr: np.ndarray = thr) -> int:
                return int(np.searchsorted(thr, att[j] + tol, side="left"))

            i = min(active, key=lambda j: (queue(j), arrival[j], j))
            rates[i] = rate_Bps
        elif policy == "las":
            low = min(att[j] for j in active)
            group = [j for j in active if att[j] <= low + tol]
            for j in group:
                rates[j] = rate_Bps / len(group)
        else:
            raise ValueError(policy)
        dt = math.inf
        if nxt < n:
            dt = float(arrival[order[nxt]]) - t
        for j, r in rates.items():
            dt = min(dt, rem[j] / r)
        if policy == "las":
            higher = [att[j] for j in active if j not in rates]
            if higher:
                r = next(iter(rates.values()))
                dt = min(dt, (min(higher) - low) / r)
        if policy == "pias":
            assert thresholds is not None
            ((j, r),) = rates.items()
            q = queue(j)
            if q < len(thresholds):
                dt = min(dt, max(thresholds[q] - att[j], 0.0) / r)
        dt = max(dt, 0.0)
        for j, r in rates.items():
            rem[j] -= r * dt
            att[j] += r * dt
        t += dt
        for j in list(active):
            if rem[j] <= 1e-9 * size[j]:
                done[j] = t
                active.remove(j)
    return done


def _check_instance(df: pd.DataFrame, rate_Bps: float, thresholds: list[float] | None = None) -> None:
    validate_trace(df, hosts=2)
    assert (df["src"] == 0).all() and (df["dst"] == 1).all()
    arr, size = df["arrival_s"].to_numpy(), df["size_bytes"].to_numpy()
    for policy, expected in df.attrs["expected_completion_s"].items():
        got = fluid_single_link(arr, size, rate_Bps, policy, thresholds)
        np.testing.assert_allclose(got, expected, rtol=1e-9, err_msg=policy)
        assert df.attrs["expected_fct_sum_s"][policy] == pytest.approx(float(np.sum(got - arr)), rel=1e-9)


@pytest.mark.parametrize("n", [2, 5, 12])
def test_fifo_instance_theorem3(n: int) -> None:
    df = fifo_adversarial_instance(n, link_gbps=10.0)
    assert len(df) == n
    _check_instance(df, 10e9 / 8)
    assert df.attrs["ratio_fpt"] >= n / 2  # Theorem 3's bound
    assert df.attrs["ratio_fct"] == pytest.approx(n, rel=0.1)  # -> n for l >> n^2
    T = df.attrs["slot_s"]
    assert T == pytest.approx(1460 * 8 / 10e9)
    assert df["size_bytes"].iloc[0] == 10 * n * n * 1460 and (df["size_bytes"].iloc[1:] == 1460).all()


@pytest.mark.parametrize("n", [2, 6])
def test_pias_instance_theorem6(n: int) -> None:
    thr = pias_thresholds("datamining", 0.5)
    df = pias_adversarial_instance(n, thr, link_gbps=10.0)
    _check_instance(df, 10e9 / 8, thr)
    assert df.attrs["ratio_fpt"] >= n / 2
    assert df.attrs["thresholds_bytes"] == thr
    assert (df["size_bytes"].iloc[1:] == max(thr) + 1460).all()
    # the default thresholds are web search at load 0.8
    assert pias_adversarial_instance(3).attrs["thresholds_bytes"] == pias_thresholds("websearch", 0.8)


def test_las_instance_fig2() -> None:
    df = las_starvation_instance()  # Fig. 2: three 5-packet flows, a fourth at slot 12
    rate = 10e9 / 8
    _check_instance(df, rate)
    slot = 1460 / rate
    exp = df.attrs["expected_completion_s"]
    assert np.allclose(np.asarray(exp["las"]) / slot, [20, 20, 20, 20])
    assert np.allclose(np.asarray(exp["fifo"]) / slot, [5, 10, 15, 20])
    assert df["arrival_s"].iloc[-1] / slot == pytest.approx(12)
    assert df.attrs["expected_fpt_s"]["las"] / slot == pytest.approx(80)
    assert df.attrs["expected_fpt_s"]["srpt"] / slot == pytest.approx(50)
    assert df.attrs["expected_fct_sum_s"]["las"] / slot == pytest.approx(68, rel=1e-4)
    assert df.attrs["expected_fct_sum_s"]["fifo"] / slot == pytest.approx(38, rel=1e-4)
    # section I: two elephants, the second after 99% of the first
    two = las_starvation_instance(1, 1e6, 0.99)
    _check_instance(two, rate)
    assert two.attrs["ratio_fct"] == pytest.approx((4 - 0.99) / (3 - 0.99), rel=1e-6)


# ----------------------------------------------------------------------------
# PIAS thresholds
# ----------------------------------------------------------------------------


def test_pias_thresholds() -> None:
    ws = pias_thresholds("websearch", 0.8)
    assert ws[0] == 909 * 1460
    assert ws == [p * 1460.0 for p in (909, 1329, 1648, 1960, 2143, 2337, 2484)]
    assert pias_thresholds("websearch", 0.9)[0] == 759 * 1460
    assert pias_thresholds("websearch", 0.5)[6] == 2184 * 1460
    assert pias_thresholds("datamining", 0.9)[3] == 13705 * 1460
    assert pias_thresholds("datamining", 0.5)[6] == 22272 * 1460
    assert pias_thresholds("vl2", 0.6) == pias_thresholds("datamining", 0.6)
    for wl, table in PIAS_THRESHOLDS_PACKETS.items():
        assert sorted(table) == [0.5, 0.6, 0.7, 0.8, 0.9]
        for load in table:
            t = pias_thresholds(wl, load)
            assert len(t) == 7 and all(a < b for a, b in zip(t, t[1:], strict=False))
    with pytest.raises(ValueError, match="nearest=True"):
        pias_thresholds("websearch", 0.75)
    assert pias_thresholds("websearch", 0.82, nearest=True) == ws
    assert pias_thresholds("websearch", 0.75, nearest=True) == pias_thresholds("websearch", 0.8)
    with pytest.raises(ValueError, match="tabulated loads"):
        pias_thresholds("websearch", 0.3, nearest=True)
    with pytest.raises(ValueError, match="no PIAS thresholds for workload 'fb_hadoop'"):
        pias_thresholds("fb_hadoop", 0.5)


# ----------------------------------------------------------------------------
# sf and partial moments (the interface flowsched.queueing uses; its values are
# checked against quadrature and the packet lattice in tests/test_thresholds.py)
# ----------------------------------------------------------------------------

SF_DISTS = [
    Fixed(3e4), Exponential(1e5), Pareto(3.0, 2e5), ClassicPareto(2.5, 1e4), BoundedPareto(1.2, 1e4, 1e6),
    Lognormal(1e5, 1.2), Uniform(2e3, 5e4), artemis_workload_a(1), Mixture([(0.3, "websearch"), (0.7, 5e5)]),
    get_distribution("websearch"), get_distribution("datamining:step"), get_distribution("fb_hadoop"),
]


@pytest.mark.parametrize("d", SF_DISTS, ids=lambda d: type(d).__name__ + "-" + getattr(d, "name", ""))
def test_sf_and_partial_moments_interface(d) -> None:
    xs = np.array([0.0, 1e3, 3e4, 2e5, 5e6, np.inf])
    sf = d.sf(xs)
    assert isinstance(sf, np.ndarray) and sf.shape == xs.shape
    assert isinstance(d.sf(3e4), float) and d.sf(3e4) == sf[2]
    assert sf[0] == pytest.approx(1.0, abs=1e-12) and sf[-1] == 0.0 and np.all(np.diff(sf) <= 1e-15)
    # P(a < S <= b) = sf(a) - sf(b); the full range gives the moments
    assert d.partial_moment(0) == pytest.approx(1.0, abs=1e-12)
    assert d.partial_moment(1) == pytest.approx(d.mean_bytes, rel=1e-12)
    assert d.partial_moment(2) == pytest.approx(d.second_moment_bytes2, rel=1e-12)
    for a, b in [(1e3, 3e4), (3e4, 5e6)]:
        assert d.partial_moment(0, a, b) == pytest.approx(d.sf(a) - d.sf(b), abs=1e-12)
    # broadcasting; 0 where b <= a
    pm = d.partial_moment(1, 0.0, xs)
    assert pm.shape == xs.shape and pm[0] == 0.0
    assert d.partial_moment(1, 5e6, 1e3) == 0.0
    with pytest.raises(ValueError, match="p must be"):
        d.partial_moment(3)
    with pytest.raises(ValueError, match="a >= 0"):
        d.partial_moment(1, -1.0, 2.0)


def test_mixture_moments_are_weighted_sums_and_atoms() -> None:
    ws, bp = get_distribution("websearch"), BoundedPareto(1.2, 1e4, 1e6)
    mix = Mixture([(0.25, ws), (0.75, bp), (1.0, Fixed(7e5))])
    for p in (-1, 0, 1, 2):
        want = 0.125 * ws.partial_moment(p, 2e4, 3e6) + 0.375 * bp.partial_moment(p, 2e4, 3e6) + 0.5 / 7e5 ** -p
        assert mix.partial_moment(p, 2e4, 3e6) == pytest.approx(want, rel=1e-12)
    assert mix.sf(1e5) == pytest.approx(0.125 * ws.sf(1e5) + 0.375 * bp.sf(1e5) + 0.5, rel=1e-12)
    assert set(Fixed(7e5).atoms_bytes) <= set(mix.atoms_bytes) and set(ws.atoms_bytes) <= set(mix.atoms_bytes)
    assert ws.lattice_bytes == 1460.0 and mix.lattice_bytes == 1460.0 and bp.lattice_bytes is None
    assert bp.atoms_bytes.size == 0 and get_distribution("websearch:linear").lattice_bytes is None


def test_a_distribution_without_the_hooks_samples_but_has_no_partial_moments() -> None:
    from flowsched.workloads import SizeDistribution

    class Twice(SizeDistribution):
        def sample(self, rng, n):
            return 2 * Fixed(1e3).sample(rng, n)

        mean_bytes = 2e3
        second_moment_bytes2 = 4e6

    d = Twice()
    assert d.sample(np.random.default_rng(0), 3).tolist() == [2e3] * 3
    with pytest.raises(TypeError, match="Twice has no closed-form sf"):
        d.sf(1.0)
    from flowsched import queueing

    with pytest.raises(TypeError, match="Twice has no closed-form"):
        queueing.mean_fct_mlfq([1e3], d, 0.5)


@pytest.mark.parametrize("seed", [-1, 2.5, True, "1"])
def test_generators_refuse_a_seed_that_is_not_a_non_negative_integer(seed):
    # numpy's "expected non-negative integer" or SeedSequence's TypeError before; True ran as 1
    import flowsched.workloads as wl

    tr = wl.poisson_all_to_all("websearch", 0.5, 4, 10.0, 10, seed=0)
    for draw in (lambda: wl.poisson_all_to_all("websearch", 0.5, 4, 10.0, 10, seed=seed),
                 lambda: wl.add_weights(tr, uniform=(1.0, 2.0), seed=seed)):
        with pytest.raises(ValueError, match="seed must be an integer >= 0, a numpy Generator or None"):
            draw()


@pytest.mark.parametrize("load,column", [(0.55, 0.6), (0.65, 0.7), (0.75, 0.8), (0.85, 0.9), (0.62, 0.6)])
def test_pias_thresholds_nearest_ties_go_to_the_higher_load(load, column):
    # 0.85 went to 0.8: 0.85 - 0.8 rounds below 0.9 - 0.85 in floats
    import flowsched.workloads as wl

    for w in ("websearch", "datamining"):
        assert wl.pias_thresholds(w, load, nearest=True) == wl.pias_thresholds(w, column)


@pytest.mark.parametrize("call,match", [
    (lambda tr: add_weights(tr, "2"), "weights must be a number or one number per flow, got '2'"),
    (lambda tr: add_weights(tr, True), "weights must be a number or one number per flow, got True"),
    (lambda tr: add_weights(tr, [1.0, 2.0, 3.0]), "weights has 3 values for a trace of 5 flows"),
    (lambda tr: add_weights(tr, uniform=(True, 2.0)), "uniform must be a pair of numbers"),
    (lambda tr: add_weights(tr, choices=[(1.0, "a")]), "each of choices must be a pair of numbers"),
    (lambda tr: add_data_span(tr, True, 10.0), "alpha must be finite and >= 0, got True"),
    (lambda tr: add_deadlines(tr, slack=("1", 2.0), link_gbps=10.0), "slack must be a pair of numbers"),
])
def test_modifiers_refuse_bools_strings_and_wrong_lengths_naming_the_argument(call, match) -> None:
    # each was taken: "2" and True as weights 2 and 1, True as alpha 1, a list of 3 weights
    # for 5 flows failed in numpy's broadcast without naming weights
    tr = poisson_all_to_all("websearch", 0.5, 4, 10.0, 5, seed=0)
    with pytest.raises(ValueError, match=match):
        call(tr)
