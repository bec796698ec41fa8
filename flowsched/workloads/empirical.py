"""Empirical flow-size CDFs: the shipped ``.cdf`` files under the three sampling rules."""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from flowsched.workloads._common import PACKET_PAYLOAD_BYTES, SAMPLING_RULES, _check_n, _positive
from flowsched.workloads.sizes import SizeDistribution


class CDFFormatError(ValueError):
    """A ``.cdf`` file (or point list) is malformed; the message names the file and line."""


# Native sampling rule of each shipped file, from the table in
# flowsched/data/README.md (copied from /work/shared/workloads/README.md,
# column "native"). Used only when a file's header does not say it.
_NATIVE_SAMPLING_TABLE: dict[str, str] = {
    "websearch": "ns2int",
    "datamining": "ns2int",
    "websearch_hpcc": "linear",
    "fb_hadoop": "linear",
    "google_rpc_hpcc": "linear",
    "alistorage": "linear",
    "homa_w1_fb_memcached": "step",
    "homa_w2_google_search_rpc": "step",
    "homa_w3_google_all_rpc": "step",
    "homa_w4_fb_hadoop": "step",
    "homa_w5_websearch": "step",
    "fb_cache_follower": "step",
    "fb_web_server": "step",
}

_RULE_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("ns2int", r"ns-?2|interpolation_\s*=\s*2|\bns2int\b"),
    ("linear", r"\blinear\b"),
    ("step", r"\bstep\b"),
)


def _rule_from_text(text: str) -> str | None:
    """The sampling rule whose keyword appears first in ``text`` (None if none does)."""
    best: tuple[int, str] | None = None
    for rule, pattern in _RULE_KEYWORDS:
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), rule)
    return None if best is None else best[1]


def _native_from_header(header_lines: Sequence[str]) -> str | None:
    """Parse the native rule from the header.

    First the "verified stats, native sampling (<rule>)" line, then the
    "how the source simulator samples it:" line (the rule whose keyword
    comes first: "ns-2 ... interpolation_=2" -> ns2int, "linear" -> linear,
    "step" -> step).
    """
    for line in header_lines:
        m = re.search(r"native sampling\s*\((ns2int|linear|step)\)", line, flags=re.IGNORECASE)
        if m:
            return m.group(1).lower()
    for line in header_lines:
        if "how the source simulator samples it" in line.lower():
            return _rule_from_text(line.split(":", 1)[1] if ":" in line else line)
    return None


@dataclass(frozen=True)
class _Pieces:
    """A distribution on sizes as atoms + uniform pieces + uniform integer ranges.

    atoms: value_bytes, prob
    cont: uniform on (a_bytes, b_bytes) with total prob p
    ranges: integers k in [k_lo, k_hi], each with prob q, value k * unit_bytes
    """

    atom_v: np.ndarray
    atom_p: np.ndarray
    cont_a: np.ndarray
    cont_b: np.ndarray
    cont_p: np.ndarray
    rng_lo: np.ndarray  # int64
    rng_hi: np.ndarray  # int64
    rng_q: np.ndarray
    unit: float

    def moment(self, k: int) -> float:
        total = float(np.sum(self.atom_p * self.atom_v**k))
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if k == 1:
            total += float(np.sum(p * (a + b) / 2.0))
        else:
            total += float(np.sum(p * (a * a + a * b + b * b) / 3.0))
        for lo, hi, q in zip(self.rng_lo.tolist(), self.rng_hi.tolist(), self.rng_q.tolist(), strict=True):
            total += q * self.unit**k * _power_sum(lo, hi, k)
        return total

    def prob_below(self, t: float, inclusive: bool) -> float:
        """P(S < t), or P(S <= t) when ``inclusive``."""
        below = self.atom_v <= t if inclusive else self.atom_v < t
        total = float(self.atom_p[below].sum())
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if a.size:
            total += float(np.sum(p * np.clip((t - a) / (b - a), 0.0, 1.0)))
        if self.rng_lo.size:
            r = t / self.unit
            kmax = math.floor(r) if inclusive else math.ceil(r) - 1
            cnt = np.clip(np.minimum(self.rng_hi, kmax) - self.rng_lo + 1, 0, None)
            total += float(np.sum(cnt * self.rng_q))
        return min(total, 1.0)

    def mean_above(self, t: float) -> float:
        """E[S 1{S > t}]."""
        total = float(np.sum((self.atom_p * self.atom_v)[self.atom_v > t]))
        a, b, p = self.cont_a, self.cont_b, self.cont_p
        if a.size:
            lo = np.clip(t, a, b)
            total += float(np.sum(p / (b - a) * (b * b - lo * lo) / 2.0))
        if self.rng_lo.size:
            kmin = math.floor(t / self.unit) + 1
            for lo_k, hi_k, q in zip(self.rng_lo.tolist(), self.rng_hi.tolist(), self.rng_q.tolist(), strict=True):
                lo2 = max(lo_k, kmin)
                if lo2 <= hi_k:
                    total += q * self.unit * _power_sum(lo2, hi_k, 1)
        return total


def _power_sum(lo: int, hi: int, k: int) -> float:
    """sum_{i=lo}^{hi} i^k for k in {1, 2}, exactly (Python ints)."""
    if hi < lo:
        return 0.0

    def s(m: int) -> int:
        return m * (m + 1) // 2 if k == 1 else m * (m + 1) * (2 * m + 1) // 6

    return float(s(hi) - s(lo - 1))


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H(n) = sum_{k=1}^n 1/k for integer n >= 0 (H(0) = 0)."""
    from scipy import special

    n = np.asarray(n, np.float64)
    return np.where(n >= 1, special.digamma(np.maximum(n, 1.0) + 1.0) + np.euler_gamma, 0.0)


def _psum(n: np.ndarray, p: int) -> np.ndarray:
    """sum_{k=1}^n k^p for integer n >= 0, p in {-1, 0, 1, 2} (float64, vectorised)."""
    n = np.maximum(np.asarray(n, np.float64), 0.0)
    if p == -1:
        return _harmonic(n)
    if p == 0:
        return n
    if p == 1:
        return n * (n + 1) / 2
    return n * (n + 1) * (2 * n + 1) / 6


def _resolve_cdf(name_or_path: str | os.PathLike[str]) -> tuple[str, str, str]:
    """Return (name, source label, text) for a shipped short name or a path."""
    shipped = shipped_cdf_names()
    if isinstance(name_or_path, str):
        short = name_or_path[:-4] if name_or_path.endswith(".cdf") else name_or_path
        if short in shipped and "/" not in name_or_path and os.sep not in name_or_path:
            res = resources.files("flowsched.data").joinpath(f"{short}.cdf")
            return short, f"flowsched/data/{short}.cdf", res.read_text(encoding="utf-8")
    p = Path(name_or_path)
    if not p.is_file():
        raise FileNotFoundError(
            f"no CDF file {str(name_or_path)!r}: not a shipped name ({', '.join(shipped)}) and not an existing path"
        )
    return p.stem, str(p), p.read_text(encoding="utf-8")


def _parse_cdf_text(text: str, source: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Parse ``# header`` lines and ``size_bytes cdf`` lines; returns (header, x, c, line numbers)."""
    header: list[str] = []
    xs: list[float] = []
    cs: list[float] = []
    lines: list[int] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            header.append(raw)
            continue
        fields = line.split()
        if len(fields) != 2:
            raise CDFFormatError(
                f"{source}: line {lineno}: expected 2 fields 'size_bytes cdf', got {len(fields)}: {raw!r}"
            )
        try:
            x, c = float(fields[0]), float(fields[1])
        except ValueError:
            raise CDFFormatError(f"{source}: line {lineno}: not a number: {raw!r}") from None
        xs.append(x)
        cs.append(c)
        lines.append(lineno)
    return header, np.asarray(xs, dtype=np.float64), np.asarray(cs, dtype=np.float64), np.asarray(lines, dtype=np.int64)


def _check_points(x: np.ndarray, c: np.ndarray, lines: np.ndarray | None, source: str) -> np.ndarray:
    """Validate CDF points; returns ``c`` with a last value within 1e-9 of 1 set to exactly 1."""

    def where(i: int) -> str:
        return f"line {int(lines[i])}" if lines is not None else f"point {i}"

    if x.ndim != 1 or x.shape != c.shape:
        raise CDFFormatError(f"{source}: sizes and cdf values must be 1-D arrays of the same length")
    if x.size == 0:
        raise CDFFormatError(f"{source}: no data points")
    for i in range(x.size):
        if not math.isfinite(x[i]) or x[i] < 0:
            raise CDFFormatError(f"{source}: {where(i)}: size must be finite and >= 0, got {x[i]!r}")
        if not (math.isfinite(c[i]) and 0.0 <= c[i] <= 1.0):
            raise CDFFormatError(f"{source}: {where(i)}: cdf must be in [0, 1], got {c[i]!r}")
        if i > 0 and x[i] < x[i - 1]:
            raise CDFFormatError(
                f"{source}: {where(i)}: sizes must be non-decreasing, got {x[i]!r} after {x[i - 1]!r}"
            )
        if i > 0 and c[i] < c[i - 1]:
            raise CDFFormatError(
                f"{source}: {where(i)}: cdf must be non-decreasing, got {c[i]!r} after {c[i - 1]!r}"
            )
    if abs(c[-1] - 1.0) > 1e-9:
        raise CDFFormatError(f"{source}: {where(x.size - 1)}: the last cdf value must be 1, got {c[-1]!r}")
    c = c.copy()
    c[-1] = 1.0
    return c


class EmpiricalCDF(SizeDistribution):
    """A flow-size distribution given by CDF points and a sampling rule.

    The points ``(size_bytes[i], cdf[i])`` are non-decreasing in both
    coordinates and end at cdf = 1. A draw takes u ~ U(0, 1] and maps it to a
    size by one of the three rules of ``flowsched/data/README.md``:

    ``"ns2int"``
        ns-2 ``RandomVariable/Empirical`` with ``interpolation_ 2`` (PIAS,
        pFabric, aSCC): if u <= cdf[0] the size is size[0]; otherwise, with
        i the first point with cdf[i] >= u, interpolate linearly on the
        PACKET count v = size/packet_bytes between points i-1 and i, take
        the ceiling and multiply by packet_bytes. A segment v1 < v2 (whole
        packets) therefore gives the integers v1+1..v2 with equal
        probability; a flat segment v1 == v2 is a point mass.
    ``"linear"``
        Piecewise linear in bytes between points (HPCC
        ``traffic_gen/custom_rand.py``); u <= cdf[0] gives size[0].
    ``"step"``
        The first point with cdf >= u (Homa ``MsgSizeDistributions``,
        YAPS ``CDFRandomVariable``, NetSys ideal-simulator).

    ``mean_bytes``, ``second_moment_bytes2``, :meth:`cdf`,
    :meth:`prob_less_than` and :meth:`bytes_share_above` are exact for the
    chosen rule (closed forms over the segments).

    Parameters
    ----------
    size_bytes, cdf : array_like
        The points.
    sampling : {"ns2int", "linear", "step"}
        The rule.
    name : str
        Label for the repr.
    header : str
        Free text (the file's ``#`` lines).
    packet_bytes : float
        Packet payload for ``ns2int`` (1460, the ns-2 MSS of the shipped files).
    native_sampling : str or None
        The rule the source simulator uses, if known.
    source : str or None
        File the points came from, for messages.
    """

    def __init__(
        self,
        size_bytes: Sequence[float] | np.ndarray,
        cdf: Sequence[float] | np.ndarray,
        sampling: str,
        *,
        name: str = "custom",
        header: str = "",
        packet_bytes: float = PACKET_PAYLOAD_BYTES,
        native_sampling: str | None = None,
        source: str | None = None,
        _lines: np.ndarray | None = None,
    ) -> None:
        if sampling not in SAMPLING_RULES:
            raise ValueError(f"EmpiricalCDF: sampling must be one of {list(SAMPLING_RULES)}, got {sampling!r}")
        if native_sampling is not None and native_sampling not in SAMPLING_RULES:
            raise ValueError(f"EmpiricalCDF: native_sampling must be one of {list(SAMPLING_RULES)} or None")
        _positive("EmpiricalCDF", packet_bytes=packet_bytes)
        src = source or name
        x = np.asarray(size_bytes, dtype=np.float64)
        c = _check_points(x, np.asarray(cdf, dtype=np.float64), _lines, src)
        self._x = x
        self._c = c
        self._sampling = sampling
        self._name = name
        self._header = header
        self._packet = float(packet_bytes)
        self._native = native_sampling
        self._source = src
        self._lines = _lines
        self._pieces = self._build_pieces()
        zero = (self._pieces.atom_v <= 0) & (self._pieces.atom_p > 0)
        if zero.any():
            raise CDFFormatError(
                f"{src}: under sampling {sampling!r} the size 0 has probability "
                f"{float(self._pieces.atom_p[zero].sum())!r}; flow sizes must be > 0"
            )

    # -- construction -------------------------------------------------------

    @classmethod
    def from_file(
        cls,
        name_or_path: str | os.PathLike[str],
        sampling: str | None = None,
        *,
        packet_bytes: float = PACKET_PAYLOAD_BYTES,
    ) -> EmpiricalCDF:
        """Load a ``.cdf`` file: a shipped short name (``"websearch"``) or a path.

        Parameters
        ----------
        name_or_path : str or os.PathLike
            One of :func:`shipped_cdf_names` (with or without ``.cdf``) or a
            file with ``#`` header lines and ``size_bytes cdf`` data lines.
        sampling : {"ns2int", "linear", "step"} or None
            Sampling rule; default the file's native rule (parsed from the
            header line "verified stats, native sampling (...)" or "how the
            source simulator samples it: ...", else the README table for the
            shipped names). A file without a parseable native rule needs an
            explicit ``sampling``.
        packet_bytes : float
            Payload bytes per packet for ``ns2int`` (default 1460).

        Raises
        ------
        CDFFormatError
            Malformed file (non-monotone sizes or cdf, cdf outside [0, 1],
            last cdf != 1, bad line), with the file and line number.
        FileNotFoundError
            Unknown name / missing file (the message lists the shipped names).
        """
        name, source, text = _resolve_cdf(name_or_path)
        header, x, c, lines = _parse_cdf_text(text, source)
        native = _native_from_header(header) or _NATIVE_SAMPLING_TABLE.get(name)
        if sampling is None:
            if native is None:
                raise ValueError(
                    f"{source}: the header does not say how to sample the points; pass sampling= one of "
                    f"{list(SAMPLING_RULES)}"
                )
            sampling = native
        return cls(
            x,
            c,
            sampling,
            name=name,
            header="\n".join(header),
            packet_bytes=packet_bytes,
            native_sampling=native,
            source=source,
            _lines=lines,
        )

    def with_sampling(self, sampling: str) -> EmpiricalCDF:
        """The same points read with another rule."""
        return EmpiricalCDF(
            self._x,
            self._c,
            sampling,
            name=self._name,
            header=self._header,
            packet_bytes=self._packet,
            native_sampling=self._native,
            source=self._source,
            _lines=self._lines,
        )

    def _build_pieces(self) -> _Pieces:
        x, c, rule = self._x, self._c, self._sampling
        dc = np.diff(c)
        atom_v: list[np.ndarray] = []
        atom_p: list[np.ndarray] = []
        empty = np.zeros(0)
        cont_a, cont_b, cont_p = empty, empty, empty
        r_lo: list[int] = []
        r_hi: list[int] = []
        r_q: list[float] = []
        if rule == "step":
            atom_v.append(x)
            atom_p.append(np.concatenate([[c[0]], dc]))
        elif rule == "linear":
            atom_v.append(x[:1])
            atom_p.append(c[:1])
            pos = dc > 0
            a, b, p = x[:-1][pos], x[1:][pos], dc[pos]
            flat = a == b
            atom_v.append(a[flat])
            atom_p.append(p[flat])
            cont_a, cont_b, cont_p = a[~flat], b[~flat], p[~flat]
        else:  # ns2int
            u = self._packet
            atom_v.append(x[:1])
            atom_p.append(c[:1])
            v = x / u
            for i in np.flatnonzero(dc > 0).tolist():
                v1, v2, mass = float(v[i]), float(v[i + 1]), float(dc[i])
                if v1 == v2:
                    atom_v.append(np.array([math.ceil(v1) * u]))
                    atom_p.append(np.array([mass]))
                    continue
                q = mass / (v2 - v1)  # probability per unit of packet count
                k_lo, k_hi = math.floor(v1) + 1, math.ceil(v2)
                if k_lo == k_hi:
                    atom_v.append(np.array([k_lo * u]))
                    atom_p.append(np.array([mass]))
                    continue
                # partial first and last buckets (length 1 when v1, v2 are whole packets)
                atom_v.append(np.array([k_lo * u, k_hi * u]))
                atom_p.append(np.array([q * (k_lo - v1), q * (v2 - (k_hi - 1))]))
                if k_hi - 1 >= k_lo + 1:
                    r_lo.append(k_lo + 1)
                    r_hi.append(k_hi - 1)
                    r_q.append(q)
        av = np.concatenate(atom_v) if atom_v else empty
        ap = np.concatenate(atom_p) if atom_p else empty
        keep = ap > 0
        return _Pieces(
            atom_v=av[keep],
            atom_p=ap[keep],
            cont_a=cont_a,
            cont_b=cont_b,
            cont_p=cont_p,
            rng_lo=np.asarray(r_lo, dtype=np.int64),
            rng_hi=np.asarray(r_hi, dtype=np.int64),
            rng_q=np.asarray(r_q, dtype=np.float64),
            unit=self._packet,
        )

    # -- properties ----------------------------------------------------------

    @property
    def name(self) -> str:
        """Short name (file stem)."""
        return self._name

    @property
    def source(self) -> str:
        """Where the points came from."""
        return self._source

    @property
    def sampling(self) -> str:
        """The sampling rule in use."""
        return self._sampling

    @property
    def native_sampling(self) -> str | None:
        """The rule the source simulator uses (from the header or the README table)."""
        return self._native

    @property
    def header(self) -> str:
        """The file's ``#`` header lines, verbatim."""
        return self._header

    @property
    def packet_bytes(self) -> float:
        """Payload bytes per packet for ``ns2int``."""
        return self._packet

    @property
    def size_points_bytes(self) -> np.ndarray:
        """The sizes of the points (a copy)."""
        return self._x.copy()

    @property
    def cdf_points(self) -> np.ndarray:
        """The cdf values of the points (a copy)."""
        return self._c.copy()

    # computed once: the pieces never change, and the switch env's autoreset reads the mean
    # at every episode it draws (8 us each time)
    @functools.cached_property
    def mean_bytes(self) -> float:
        return self._pieces.moment(1)

    @functools.cached_property
    def second_moment_bytes2(self) -> float:
        return self._pieces.moment(2)

    # -- sf and partial moments: vectorised closed forms over the same pieces
    # (the scalar cdf/prob_less_than/bytes_share_above above and below keep their own
    # exact sums; tests/test_thresholds.py checks that the two agree)

    @functools.cached_property
    def _vec(self) -> tuple[np.ndarray, ...]:
        """The pieces as float64 arrays: atoms (v, p), uniform parts (a, b, p), integer ranges (lo, hi, q)."""
        pc = self._pieces
        keep = pc.atom_p > 0
        return (
            pc.atom_v[keep].astype(np.float64), pc.atom_p[keep].astype(np.float64),
            *(np.asarray(z, np.float64) for z in (pc.cont_a, pc.cont_b, pc.cont_p, pc.rng_lo, pc.rng_hi, pc.rng_q)),
        )

    @property
    def atoms_bytes(self) -> np.ndarray:
        return np.sort(self._vec[0])

    @property
    def lattice_bytes(self) -> float | None:
        return float(self._pieces.unit) if self._pieces.rng_lo.size else None

    def _cum(self, p: int, t: np.ndarray) -> np.ndarray:
        av, ap, ca, cb, cp, rlo, rhi, rq = self._vec
        u = float(self._pieces.unit)
        t = np.asarray(t, np.float64)
        tc = t[..., None]
        out = np.sum(ap * av**p * (av <= tc), axis=-1)
        if ca.size:
            hi = np.clip(tc, ca, cb)
            out = out + np.sum(cp / (cb - ca) * (hi ** (p + 1) - ca ** (p + 1)) / (p + 1), axis=-1)
        if rlo.size:
            with np.errstate(invalid="ignore"):
                kmax = np.where(np.isfinite(tc), np.floor(np.where(np.isfinite(tc), tc, 0.0) / u), np.inf)
            top = np.minimum(rhi, kmax)
            cnt = _psum(top, p) - _psum(rlo - 1, p)
            out = out + np.sum(np.where(top >= rlo, rq * u**p * cnt, 0.0), axis=-1)
        return out

    def _sf(self, t: np.ndarray) -> np.ndarray:
        av, ap, ca, cb, cp, rlo, rhi, rq = self._vec
        u = float(self._pieces.unit)
        tc = np.asarray(t, np.float64)[..., None]
        out = np.sum(ap * (av > tc), axis=-1)
        if ca.size:
            out = out + np.sum(cp * (cb - np.clip(tc, ca, cb)) / (cb - ca), axis=-1)
        if rlo.size:
            kmin = np.maximum(rlo, np.floor(np.where(np.isfinite(tc), tc, np.inf) / u) + 1)
            out = out + np.sum(np.where(rhi >= kmin, rq * (rhi - kmin + 1), 0.0), axis=-1)
        return out

    def _inv(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        av, ap, ca, cb, cp, rlo, rhi, rq = self._vec
        u = float(self._pieces.unit)
        ac, bc = np.asarray(a, np.float64)[..., None], np.asarray(b, np.float64)[..., None]
        out = np.sum(ap / av * ((av > ac) & (av <= bc)), axis=-1)
        if ca.size:
            lo, hi = np.clip(ac, ca, cb), np.clip(bc, ca, cb)
            with np.errstate(divide="ignore", invalid="ignore"):
                seg = cp / (cb - ca) * (np.log(hi) - np.log(lo))
            out = out + np.sum(np.where(hi > lo, seg, 0.0), axis=-1)
        if rlo.size:
            fa = np.floor(np.where(np.isfinite(ac), ac, 0.0) / u)
            fb = np.where(np.isfinite(bc), np.floor(np.where(np.isfinite(bc), bc, 0.0) / u), np.inf)
            k1 = np.maximum(rlo, fa + 1)  # first integer k with k u > a
            k2 = np.minimum(rhi, fb)  # last integer k with k u <= b
            seg = rq / u * (_harmonic(k2) - _harmonic(k1 - 1))
            out = out + np.sum(np.where(k2 >= k1, seg, 0.0), axis=-1)
        return out

    def cdf(self, x_bytes: float) -> float:
        """P(S <= x_bytes) under the sampling rule."""
        return self._pieces.prob_below(float(x_bytes), inclusive=True)

    def prob_less_than(self, x_bytes: float) -> float:
        """P(S < x_bytes) under the sampling rule (README's "P(flow < 100 KB)")."""
        return self._pieces.prob_below(float(x_bytes), inclusive=False)

    def bytes_share_above(self, x_bytes: float) -> float:
        """E[S; S > x] / E[S]: the share of bytes in flows larger than ``x_bytes``."""
        return self._pieces.mean_above(float(x_bytes)) / self.mean_bytes

    def declared_stats(self) -> dict[str, float]:
        """Statistics written in the file's header (for cross-checks).

        Returns
        -------
        dict
            Keys ``"mean_<rule>"`` for every rule the header gives a mean
            for, and, for the native rule, ``"p_below_1e5"`` and
            ``"share_above_1e7"`` when present.
        """
        out: dict[str, float] = {}
        for line in self._header.splitlines():
            m = re.search(r"native sampling\s*\((\w+)\):\s*mean\s*=\s*([\d.]+)\s*B", line)
            if m:
                out[f"mean_{m.group(1)}"] = float(m.group(2))
                m2 = re.search(r"P\(size < 100 KB = 1e5 B\)\s*=\s*([\d.]+)", line)
                if m2:
                    out["p_below_1e5"] = float(m2.group(1))
                m3 = re.search(r"flows > 10 MB \(1e7 B\)\s*=\s*([\d.]+)", line)
                if m3:
                    out["share_above_1e7"] = float(m3.group(1))
            if "mean under other readings" in line:
                for rule, val in re.findall(r"\b(ns2int|linear|step)\s+([\d.]+)\s*B", line):
                    out[f"mean_{rule}"] = float(val)
        return out

    # -- sampling ------------------------------------------------------------

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        n = _check_n(n)
        return self.size_at(1.0 - rng.random(n))  # u in (0, 1]

    def size_at(self, u: np.ndarray | float) -> np.ndarray:
        """The size the sampling rule maps a uniform draw ``u`` in (0, 1] to (the quantile map).

        Parameters
        ----------
        u : array_like
            Values in (0, 1].

        Returns
        -------
        numpy.ndarray
            float64 sizes in bytes, same shape as ``u``.
        """
        u = np.asarray(u, dtype=np.float64)
        shape = u.shape
        u = u.reshape(-1)
        if u.size and not (np.all(u > 0) and np.all(u <= 1)):
            raise ValueError("size_at: u must be in (0, 1]")
        n = u.size
        x, c = self._x, self._c
        idx = np.searchsorted(c, u, side="left")  # first point with cdf >= u
        if self._sampling == "step":
            return x[idx].reshape(shape)
        out = np.empty(n, dtype=np.float64)
        first = idx == 0
        out[first] = x[0]
        rest = ~first
        j = idx[rest]
        uu = u[rest]
        c1, c2 = c[j - 1], c[j]  # c1 < u <= c2, so c2 > c1
        frac = (uu - c1) / (c2 - c1)
        if self._sampling == "linear":
            out[rest] = x[j - 1] + frac * (x[j] - x[j - 1])
            return out.reshape(shape)
        # ns2int
        unit = self._packet
        v1, v2 = x[j - 1] / unit, x[j] / unit
        val = np.ceil(v1 + frac * (v2 - v1)) * unit
        exact = uu >= c2  # ns-2 returns the table value itself when u hits a point
        val[exact] = x[j][exact]
        out[rest] = val
        return out.reshape(shape)

    def __repr__(self) -> str:
        return (
            f"EmpiricalCDF({self._name!r}, sampling={self._sampling!r}, native={self._native!r}, "
            f"points={self._x.size}, mean_bytes={self.mean_bytes:.1f})"
        )


def shipped_cdf_names() -> tuple[str, ...]:
    """Short names of the ``.cdf`` files shipped in ``flowsched.data`` (sorted)."""
    names = [
        p.name[:-4]
        for p in resources.files("flowsched.data").iterdir()
        if p.name.endswith(".cdf") and p.is_file()
    ]
    return tuple(sorted(names))
