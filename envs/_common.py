"""What the three envs share: action checks with closed ranges, finite observation
bounds, flat layouts, the Gymnasium vector-env conveniences of the native vector envs
(``call``, ``get_attr``, step limits, rendering) and a dependency-free RGB drawer."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from flowsched.checks import check_int, check_number
from flowsched.topology import BigSwitch, Topology

RENDER_MODES = ["ansi", "rgb_array"]
RENDER_FPS = 4
OBS_FORMATS = ("dict", "flat")


def check_render_mode(cls_name: str, render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"{cls_name}: render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r}")
    return render_mode


def check_obs_format(cls_name: str, obs_format: str, allowed: tuple[str, ...] = OBS_FORMATS) -> str:
    if obs_format not in allowed:
        raise ValueError(f"{cls_name}: obs_format must be one of {', '.join(map(repr, allowed))}, got {obs_format!r}")
    return obs_format


def env_fabric(env: str, hosts: Any, link_gbps: Any, topology: Topology | None, default_hosts: int,
               default_gbps: float) -> tuple[Topology, float]:
    """An env's fabric and the host-link rate (Gbps) that its ``load`` and data spans are
    relative to. Without ``topology``: ``BigSwitch(hosts, link_gbps)``, each defaulting to
    ``default_hosts`` and ``default_gbps``. With one: ``hosts``, if given, must be its host
    count, and the rate is its host links' (``link_gbps`` may then be left out, or give
    that rate again; a fabric whose hosts run at several rates needs ``link_gbps``, the
    rate the load is relative to). A conflict raises: neither argument is ignored."""
    if hosts is not None:
        hosts = check_int("hosts", hosts, 2)
    if link_gbps is not None:
        link_gbps = check_number("link_gbps", link_gbps, low=0.0, low_open=True)
    if topology is None:
        gbps = default_gbps if link_gbps is None else link_gbps
        return BigSwitch(default_hosts if hosts is None else hosts, gbps), gbps
    n = int(topology.n_hosts)
    if hosts is not None and hosts != n:
        raise ValueError(f"{env}: hosts={hosts} conflicts with the topology's {n} hosts ({topology!r}): "
                         "leave hosts out when you give a topology")
    rates = np.unique(np.asarray(topology.native_config()["host_gbps"], dtype=np.float64))
    if link_gbps is None:
        if rates.size != 1:
            raise ValueError(f"{env}: the topology's host links run at several rates ({rates.min():g} to "
                             f"{rates.max():g} Gbps): give link_gbps=, the host-link rate that the load is relative to")
        return topology, float(rates[0])
    if rates.size == 1 and float(rates[0]) != link_gbps:
        raise ValueError(f"{env}: link_gbps={link_gbps:g} conflicts with the topology's host links ({rates[0]:g} "
                         "Gbps); leave link_gbps out (the load is then relative to the topology's host links)")
    return topology, link_gbps


def check_box_action(action: Any, space: spaces.Box, what: str) -> np.ndarray:
    """``action`` as a contiguous float32 array if it lies in ``space`` (shape, finite,
    within the bounds), else a ``ValueError`` that names the bounds and the first
    offending element. Nothing is clipped."""
    a = np.asarray(action)
    if a.shape != space.shape or a.dtype.kind not in "fiu":
        raise ValueError(f"{what} must be numbers of shape {space.shape} (the action space {space}), "
                         f"got dtype {a.dtype} and shape {a.shape}")
    bad = ~((a >= space.low) & (a <= space.high))  # in the given precision; NaN fails both
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = idx[0] if len(idx) == 1 else idx
        lo, hi = float(np.asarray(space.low)[idx]), float(np.asarray(space.high)[idx])
        raise ValueError(f"{what}: element {where} is {float(a[idx])!r}; actions must be within [{lo:g}, {hi:g}], "
                         f"the action space's bounds ({int(bad.sum())} element(s) outside); nothing is clipped: clip "
                         "or rescale actions before stepping (SB3 and gymnasium.wrappers.ClipAction do)")
    return np.ascontiguousarray(a, dtype=np.float32)


def check_lane_actions(actions: Any, space: spaces.Box, live: np.ndarray, what: str) -> np.ndarray:
    """A batch of Box actions (``space`` is the batched space) checked lane by lane:
    the lanes in ``live`` must lie in the single space (the error names the lane), the
    others (about to reset) are ignored and zeroed. Contiguous float32."""
    a = np.asarray(actions)
    if a.shape != space.shape or a.dtype.kind not in "fiu":
        raise ValueError(f"actions must be numbers of shape {space.shape} (one row per lane), "
                         f"got dtype {a.dtype} and shape {a.shape}")
    bad = ~((a >= space.low) & (a <= space.high)).reshape(a.shape[0], -1).all(axis=1) & live
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        single = spaces.Box(space.low[lane], space.high[lane], dtype=np.float32)  # the actions are read as float32
        check_box_action(a[lane], single, f"env {lane}: {what}")
    out = np.ascontiguousarray(a, dtype=np.float32)
    if not live.all():
        out[~live] = 0.0
    return out


def flat_space(parts: list[spaces.Box]) -> spaces.Box:
    """One float32 Box concatenating 1-D Boxes (in order)."""
    return spaces.Box(np.concatenate([p.low for p in parts]).astype(np.float32),
                      np.concatenate([p.high for p in parts]).astype(np.float32), dtype=np.float32)


class NativeVecMixin:
    """Gymnasium vector-env conveniences for the native vector envs, whose lanes have
    no Python env objects: ``call`` and ``get_attr`` (per-lane tuples, as
    ``SyncVectorEnv`` returns them), ``set_attr`` (refused: lanes share attributes),
    ``render`` (a tuple of per-lane frames) and a per-lane step limit."""

    num_envs: int
    render_mode: str | None
    _limit: int | None
    _steps: np.ndarray

    def _lane_call(self, name: str, lane: int, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls ``name`` on every lane (``action_masks``, ``render``) or reads the shared
        attribute ``name`` (called if callable) once per lane; a tuple of num_envs results."""
        if name in ("action_masks", "render"):
            return tuple(self._lane_call(name, i, *args, **kwargs) for i in range(self.num_envs))
        attr = getattr(self, name)
        value = attr(*args, **kwargs) if callable(attr) else attr
        return tuple(value for _ in range(self.num_envs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        raise AttributeError(f"{type(self).__name__}: the lanes of a native vector env share their attributes; "
                             f"cannot set {name!r} per lane")

    def render(self) -> tuple[Any, ...] | None:
        if self.render_mode is None:
            return None
        return self.call("render")

    def _init_limit(self, max_episode_steps: int | None) -> None:
        self._limit = None if max_episode_steps is None else check_int("max_episode_steps", max_episode_steps)
        self._steps = np.zeros(self.num_envs, np.int64)

    def _count_steps(self, was_reset: np.ndarray, terminated: np.ndarray) -> np.ndarray:
        """Advances the lanes' step counters; the lanes the step limit truncates now."""
        if self._limit is None:  # no counting needed
            return np.zeros(self.num_envs, bool)
        self._steps = np.where(was_reset, 0, self._steps + 1)
        return (self._steps >= self._limit) & ~terminated


# -- rendering -----------------------------------------------------------------------

BG = (24, 24, 28)
GRID = (60, 60, 68)
GREY = (110, 110, 120)
BLUE = (70, 130, 220)
GREEN = (70, 190, 100)
RED = (220, 70, 70)
ORANGE = (235, 160, 50)


class Canvas:
    """A tiny RGB drawer on a numpy array (no plotting library): horizontal bars in rows."""

    def __init__(self, rows: int, width: int = 320, row_h: int = 12, pad: int = 2) -> None:
        self.w, self.row_h, self.pad = width, row_h, pad
        self.img = np.empty((rows * row_h, width, 3), np.uint8)
        self.img[:] = BG
        self.img[::row_h, :] = GRID

    def bar(self, row: int, x0: float, x1: float, color: tuple[int, int, int], thin: bool = False) -> None:
        """Fills [x0, x1] (fractions of the width, clipped to [0, 1]) of ``row``."""
        a = int(round(min(max(x0, 0.0), 1.0) * (self.w - 1)))
        b = int(round(min(max(x1, 0.0), 1.0) * (self.w - 1)))
        if b < a:
            a, b = b, a
        top = row * self.row_h + self.pad + (self.row_h // 3 if thin else 0)
        bottom = (row + 1) * self.row_h - self.pad
        self.img[top:bottom, a:b + 1] = color

    def tick(self, row: int, x: float, color: tuple[int, int, int]) -> None:
        a = int(round(min(max(x, 0.0), 1.0) * (self.w - 1)))
        self.img[row * self.row_h + 1:(row + 1) * self.row_h, max(a - 1, 0):a + 1] = color


def log_frac(x: float | np.ndarray, hi: float, lo: float = 1e-3) -> Any:
    """Position of ``x`` in [0, 1] on a log scale from ``lo`` to ``hi`` (0 below ``lo``)."""
    x = np.maximum(np.asarray(x, np.float64), lo)
    return np.log(x / lo) / np.log(max(hi, lo * 10) / lo)


def fmt(x: float, spec: str) -> str:
    """``format(x, spec)`` without a negative zero ("-0.000")."""
    s = format(float(x), spec)
    return s.replace("-", " ", 1) if s.lstrip().startswith("-") and float(s) == 0.0 else s


class Feature(NamedTuple):
    """One observation feature: its name, unit, bounds and meaning. A bound is a number
    or a symbol of the env's saturation limits: ``"S"`` (``max_size_mb``), ``"H"``
    (``max_time_ms``), ``"-H"`` or ``"C"`` (``MAX_COUNT``)."""

    name: str
    unit: str
    low: float | str
    high: float | str
    doc: str


def _bound(b: float | str, limits: dict[str, np.float32]) -> np.float32:
    if isinstance(b, str):
        return -limits[b[1:]] if b.startswith("-") else limits[b]
    return np.float32(b)


def feature_bounds(table: tuple[Feature, ...], rows: int, size_mb: float, time_ms: float,
                   count: float) -> tuple[np.ndarray, np.ndarray]:
    """The float32 (low, high) of ``rows`` repetitions of ``table``, flat and row-major."""
    limits = {"S": np.float32(size_mb), "H": np.float32(time_ms), "C": np.float32(count)}
    low = np.array([_bound(f.low, limits) for f in table], np.float32)
    high = np.array([_bound(f.high, limits) for f in table], np.float32)
    return np.tile(low, rows), np.tile(high, rows)


def feature_rows(key: str, table: tuple[Feature, ...], per_row: bool) -> str:
    """The rows of ``table`` in an env docstring's observation table (``| key | index |
    feature | unit | range |``); ``per_row``: the features repeat per window slot j."""
    lines = []
    for i, f in enumerate(table):
        index = f"``{len(table)} * j + {i}``" if per_row else str(i)
        lines.append(f"| {f'``{key}``' if i == 0 else ''} | {index} | {f.doc} | {f.unit} | [{f.low}, {f.high}] |"
                     .replace("|  |", "| |"))
    return "\n".join(lines)
