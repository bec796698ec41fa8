"""Destination-side token scheduling (the Artemis thesis), single and vectorized."""
from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import pandas as pd
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flowsched import _fabric
from flowsched import workloads as wl
from flowsched.sim import _prepare
from flowsched.topology import BigSwitch, Topology

REQ_FEATURES, ACTIVE_FEATURES, STAT_NAMES = _fabric.token_layout()
REQUEST_FEATURES = ("size_mb", "deadline_ms", "time_left_ms", "waited_ms", "ideal_fct_ms", "has_deadline", "fair_fct_ms")
ACTIVE_SUMMARY = ("active_over_k", "remaining_mb", "least_time_left_ms", "drain_ms", "waiting")
REWARDS = ("deadline", "neg_fct", "neg_slowdown")
assert len(REQUEST_FEATURES) == REQ_FEATURES and len(ACTIVE_SUMMARY) == ACTIVE_FEATURES

_INF = np.float32(np.inf)


def _observation_space(window: int) -> spaces.Dict:
    low = np.tile(np.array([0, 0, -_INF, 0, 0, 0, 0], np.float32), (window, 1))
    high = np.tile(np.array([_INF, _INF, _INF, _INF, _INF, 1, _INF], np.float32), (window, 1))
    return spaces.Dict(
        {
            "requests": spaces.Box(low, high, dtype=np.float32),
            "active": spaces.Box(
                np.array([0, 0, -_INF, 0, 0], np.float32), np.array([1, _INF, _INF, _INF, _INF], np.float32), dtype=np.float32
            ),
            "action_mask": spaces.Box(0.0, 1.0, (window,), dtype=np.float32),
        }
    )


def _classes(workload: Any) -> tuple[list[float], list[float], list[float]]:
    """(weights, sizes, deadlines) of a mixture of fixed sizes, the native generator's input."""
    mix = wl.get_distribution(workload) if isinstance(workload, str) else workload
    comps = mix.components if isinstance(mix, wl.Mixture) else (mix,)
    if not all(isinstance(c, wl.Fixed) for c in comps):
        raise ValueError(
            f"workload {workload!r}: the token env draws gather bursts natively from classes of fixed size "
            "(a Mixture of Fixed sizes, e.g. 'artemis_a1'); for other size distributions generate a trace "
            "(flowsched.workloads.gather_bursts) and pass trace=..."
        )
    if isinstance(mix, wl.Mixture):
        return [float(w) for w in mix.weights], [c.size_bytes for c in comps], [float(d) for d in mix.deadlines_s]
    return [1.0], [comps[0].size_bytes], [float("nan")]


def native_trace(trace: pd.DataFrame | str, topo: Topology | None, link_gbps: float) -> tuple[_fabric.Trace, Topology]:
    """A trace (DataFrame or path), validated for the topology, as the env cores take it."""
    tr, topo = _prepare(trace, topo, link_gbps)
    native = _fabric.Trace(
        tr["arrival_s"].to_numpy(np.float64), tr["src"].to_numpy(np.int64), tr["dst"].to_numpy(np.int64),
        tr["size_bytes"].to_numpy(np.float64), tr["deadline_s"].to_numpy(np.float64), tr["weight"].to_numpy(np.float64),
        tr["data_span_s"].to_numpy(np.float64), tr["size_known"].to_numpy(bool),
    )
    return native, topo


def token_config(
    variant: int = 1,
    workload: Any = None,
    k: int = 10,
    window: int = 5,
    burst_size: int = 10,
    burst_rate_hz: float = 10.0,
    n_bursts: int = 20,
    hosts: int | None = None,
    link_gbps: float = 1.0,
    topology: Topology | None = None,
    delay_us: float = 250.0,
    scheduler: str = "ps",
    reward: str = "deadline",
    terminate_missed: bool = False,
    exact_composition: bool = True,
    trace: pd.DataFrame | str | None = None,
) -> tuple[_fabric.TokenConfig, _fabric.Trace | None]:
    """The native config (and the native trace, when a fixed trace is given) of the token env."""
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; known: {', '.join(REWARDS)}")
    for name, v in (("k", k), ("window", window), ("burst_size", burst_size), ("n_bursts", n_bursts)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if not (np.isfinite(delay_us) and delay_us >= 0):
        raise ValueError(f"delay_us must be >= 0, got {delay_us!r}")
    fixed = None
    if trace is not None:
        fixed, topology = native_trace(trace, topology, link_gbps)
    if topology is None:
        topology = BigSwitch(burst_size + 1 if hosts is None else hosts, link_gbps)
    weights, sizes, deadlines = _classes(wl.artemis_workload_a(variant) if workload is None else workload)
    if fixed is not None:
        # the trace replaces the gather generator (set_trace): its burst shape is unused
        burst_size, exact_composition, weights = 1, False, [1.0] * len(weights)
    cfg = _fabric.TokenConfig(
        **topology._native(), scheduler=scheduler, k=int(k), window=int(window),
        delay_per_hop_s=float(delay_us) * 1e-6, terminate_missed=bool(terminate_missed), reward=reward,
        class_weights=weights, class_sizes_bytes=sizes, class_deadlines_s=deadlines, exact=bool(exact_composition),
        burst_size=int(burst_size), burst_rate_hz=float(burst_rate_hz), n_bursts=int(n_bursts), dst=0,
    )
    return cfg, fixed


def lane_seeds(seed: int | list[int] | None, num_envs: int) -> list[int | None]:
    """The seed of each lane of a vector env's ``reset(seed=...)``: ``seed + i`` for an
    integer (Gymnasium's convention), one per lane for a list (its length is checked),
    None (continue each lane's stream) for None."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)):
        return [int(seed) + i for i in range(num_envs)]
    if len(seed) != num_envs:
        raise ValueError(f"expected {num_envs} seeds, got {len(seed)}")
    return [int(x) for x in seed]


def _check_masked_action(mode: str) -> str:
    if mode not in ("raise", "oldest"):
        raise ValueError(f"masked_action must be 'raise' or 'oldest', got {mode!r}")
    return mode


def _as_action(action: Any) -> int:
    a = np.asarray(action)
    if a.size != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"action must be one integer (a position in the window), got {action!r}")
    return int(a.reshape(()))


class TokenSchedulingEnv(gym.Env[dict[str, np.ndarray], np.int64]):
    """Destination-side token scheduling (Artemis).

    Sources ask a destination for a token before they send a flow; the agent, at the
    destination, picks which of the first ``window`` (f) waiting requests to admit next.
    At most ``k`` admitted flows per destination are active at once, and they share the
    fabric under ``scheduler`` (fair sharing, the thesis' TCP, by default). A decision is
    asked for only when a slot is free and a request waits (event-driven: no idle
    steps). The fabric is flowsched's fluid simulator (``flowsched.simulate``).

    The defaults reproduce Artemis workload A, variant 1 (Naouach, "Towards A
    Workload-Driven Flow Scheduler For Modern Datacenters", section 4.1): a big switch
    with 1 Gbps host links and 250 us delay per link, Poisson gather bursts (10 bursts/s)
    of 10 flows from 10 distinct senders to host 0, half (350 KB, 40 ms deadline) and
    half (250 KB, 50 ms), ``k = 10``, ``f = 5``.

    ## Action Space
    ``Discrete(window)``: the position, in the window, of the request to admit (0 is
    the oldest). Only positions holding a waiting request are valid: see
    ``observation["action_mask"]`` and :meth:`action_masks`. An action outside
    ``0..window-1`` always raises ``ValueError``. A masked action (a position past the
    waiting requests) raises too, unless ``masked_action="oldest"``: then it admits the
    oldest request and ``info["masked_action"]`` is True (for policies without masking,
    such as plain PPO, and for checkers that sample unmasked actions).

    ## Observation Space
    ``Dict`` of float32 arrays:

    | key | shape | feature (unit) |
    |---|---|---|
    | ``requests`` | (window, 7) | per waiting request, oldest first, zeros past the waiting ones: size (MB), relative deadline (ms, 0 = none), time left to the deadline (ms, may be negative, 0 = none), time waited (ms), ideal FCT alone on the idle fabric with the path delay (ms), has a deadline (0/1), fair-share FCT: the FCT if admitted now and the destination link were shared fairly with the flows active there, with no later admission (ms, with the path delay; exact for ``scheduler='ps'`` on a big switch until the next admission or arrival of data) |
    | ``active`` | (5,) | the destination's active flows: count / k, remaining bytes (MB), least time left to a deadline (ms, 0 if none), time to drain them at the link rate (ms), number of waiting requests (window included) |
    | ``action_mask`` | (window,) | 1 where a request waits |

    This is what a destination knows from the token requests (sizes and deadlines are
    announced, as in the thesis) and from its own link.

    ## Rewards
    After each decision the simulation runs to the next decision; the reward counts the
    flows that finished meanwhile (terminated flows earn nothing):

    * ``"deadline"`` (default): 1 per deadline met, so an episode's return is exactly
      the number of deadlines met;
    * ``"neg_fct"``: minus each finished flow's FCT in ms (the return is minus the total FCT);
    * ``"neg_slowdown"``: minus each finished flow's slowdown.

    ## Episode End
    The episode terminates when every flow of the episode (``n_bursts * burst_size``, or
    the given trace) has finished or was terminated; there is no truncation unless a
    ``TimeLimit`` is added (``max_episode_steps``). ``info`` then holds the episode's
    ``deadlines_met``, ``flows_with_deadline``, ``flows_finished``,
    ``deadline_hit_ratio`` and ``mean_fct_s``.

    ## Arguments
    * ``variant``: Artemis workload A variant (1: 50/50, 2: 60/40), used when ``workload`` is None.
    * ``workload``: a ``flowsched.workloads.Mixture`` of ``Fixed`` sizes with deadlines, or
      its name (``"artemis_a1"``, ``"artemis_a2"``).
    * ``k``, ``window``: max active flows per destination, and f.
    * ``burst_size``, ``burst_rate_hz``, ``n_bursts``: the gather bursts of an episode.
    * ``hosts``, ``link_gbps``, ``topology``: the fabric (default ``BigSwitch(burst_size + 1, link_gbps)``;
      any ``BigSwitch``/``LeafSpine``).
    * ``delay_us``: fixed delay per link, added to FCT (250 us in the thesis).
    * ``scheduler``: how admitted flows share the fabric (any native scheduler name).
    * ``reward``: ``"deadline"``, ``"neg_fct"`` or ``"neg_slowdown"``.
    * ``terminate_missed``: terminate a flow when its deadline passes.
    * ``exact_composition``: every burst holds exactly ``burst_size * weight`` flows of each class.
    * ``trace``: a fixed trace (DataFrame or path) replayed every episode, instead of
      drawn bursts; decisions are then made at every destination in turn.
    * ``masked_action``: ``"raise"`` (default) or ``"oldest"`` (see Action Space).
    * ``render_mode``: ``None`` or ``"ansi"``.

    Randomness: all of it comes from ``reset(seed=...)``; the same seed gives the same
    episode, and ``reset()`` without a seed continues the seeded stream.

    Example
    -------
    >>> import gymnasium as gym, flowsched
    >>> env = gym.make("flowsched/TokenScheduling-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs["requests"].shape, int(obs["action_mask"].sum())
    ((5, 7), 5)
    >>> total, done = 0.0, False
    >>> while not done:
    ...     obs, r, done, trunc, info = env.step(0)   # FIFO
    ...     total += r
    >>> total == info["deadlines_met"]
    True
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, *, render_mode: str | None = None, masked_action: str = "raise", **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.masked_action = _check_masked_action(masked_action)
        self.render_mode = render_mode
        self._cfg, fixed = token_config(**kwargs)
        self._native = _fabric.TokenEnv(self._cfg)
        if fixed is not None:
            self._native.set_trace(fixed)
        self.window = self._cfg.window
        self.k = int(kwargs.get("k", 10))
        self.observation_space = _observation_space(self.window)
        self.action_space = spaces.Discrete(self.window)
        self._mask = np.zeros(self.window, np.float32)
        self._last = (np.zeros((self.window, REQ_FEATURES), np.float32), np.zeros(ACTIVE_FEATURES, np.float32))
        self._seeded = False

    def _obs(self, req: np.ndarray, act: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        self._mask, self._last = mask, (req, act)
        return {"requests": req, "active": act, "action_mask": mask.copy()}  # fresh arrays from the core

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and not self._seeded:
            seed = int(self.np_random.integers(2**63))
        self._seeded = True
        return self._obs(*self._native.reset(None if seed is None else int(seed))), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        a = _as_action(action)
        info: dict[str, Any] = {}
        if self.masked_action == "oldest" and 0 <= a < self.window and not self._mask[a]:
            a, info["masked_action"] = 0, True
        req, act, mask, reward, terminated = self._native.step(a)
        if terminated:
            info.update(episode_info(self._native.episode_stats()))
        return self._obs(req, act, mask), float(reward), bool(terminated), False, info

    @property
    def decision_dst(self) -> int:
        """The destination whose admission the pending decision makes."""
        return int(self._native.decision_dst)

    def action_masks(self) -> np.ndarray:
        """Valid actions of the pending decision (for sb3-contrib's MaskablePPO)."""
        return self._mask > 0

    def episode(self) -> pd.DataFrame:
        """The current episode's flows and their outcome so far (one row per flow): arrival_s,
        src, dst, size_bytes, deadline_s, finish_s, fct_s, ideal_fct_s, terminated."""
        return pd.DataFrame(self._native.episode())

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        req, act = self._last
        lines = [
            f"t = {self._native.now * 1e3:.3f} ms, destination {self._native.decision_dst}: "
            f"{act[0] * self.k:.0f}/{self.k} active ({act[1]:.3f} MB left), {act[4]:.0f} waiting",
            "  pos  size MB  deadline ms  left ms  waited ms  ideal ms",
        ]
        for j in np.flatnonzero(self._mask):
            r = req[j]
            lines.append(f"  {j:3d}  {r[0]:7.3f}  {r[1]:11.1f}  {r[2]:7.2f}  {r[3]:9.2f}  {r[4]:8.3f}")
        return "\n".join(lines)


def episode_info(stats: dict[str, float]) -> dict[str, Any]:
    info = dict(stats)
    n = info["flows_with_deadline"]
    info["deadline_hit_ratio"] = info["deadlines_met"] / n if n else float("nan")
    return info


class TokenSchedulingVecEnv(VectorEnv):
    """``num_envs`` token-scheduling envs stepped together inside the Rust core.

    Same spaces, dynamics and arguments as :class:`TokenSchedulingEnv` (per lane), with
    Gymnasium's next-step autoreset: the call after a lane's episode ended resets that
    lane (its action is ignored) and returns the new episode's first observation with
    reward 0. The whole batch is stepped in one native call with the GIL released,
    split over ``threads`` OS threads, into observation buffers allocated once
    (``copy=False`` returns those buffers themselves, overwritten by the next call).

    Seeding: ``reset(seed=s)`` seeds lane ``i`` with ``s + i`` (a list gives one seed
    per lane); lane ``i`` then follows exactly the episodes of a single env reset with
    the same seed and auto-reset without one. ``infos`` is a dict of arrays: at a
    lane's episode end its ``deadlines_met``, ``flows_with_deadline``,
    ``flows_finished``, ``deadline_hit_ratio`` and ``mean_fct_s`` (masks ``_<key>``).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 8, *, threads: int = 1, copy: bool = True, masked_action: str = "raise",
                 max_episode_steps: int | None = None, render_mode: str | None = None, **kwargs: Any) -> None:
        self.masked_action = _check_masked_action(masked_action)
        if max_episode_steps is not None:
            raise ValueError("TokenSchedulingVecEnv has no step limit (episodes end when their flows are done); "
                             f"got max_episode_steps={max_episode_steps!r}")
        if render_mode is not None:
            raise ValueError(f"TokenSchedulingVecEnv does not render, got render_mode={render_mode!r}")
        cfg, fixed = token_config(**kwargs)
        self._native = _fabric.TokenVecEnv(cfg, int(num_envs), threads=int(threads))
        if fixed is not None:
            self._native.set_trace(fixed)
        self.num_envs = int(num_envs)
        self.window = cfg.window
        self.copy = copy
        self.single_observation_space = _observation_space(self.window)
        self.single_action_space = spaces.Discrete(self.window)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n, w = self.num_envs, self.window
        self._bufs = (
            np.zeros((n, w, REQ_FEATURES), np.float32), np.zeros((n, ACTIVE_FEATURES), np.float32),
            np.zeros((n, w), np.float32), np.zeros(n, np.float64), np.zeros(n, bool), np.zeros((n, len(STAT_NAMES)), np.float64),
        )
        self._truncated = np.zeros(n, bool)
        self._seeded = False

    def _out(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        req, act, mask = self._bufs[:3]
        obs = {"requests": req, "active": act, "action_mask": mask}
        if self.copy:
            obs = {key: v.copy() for key, v in obs.items()}
        return obs, {}

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is None and not self._seeded:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        seeds = None if seed is None else np.asarray(lane_seeds(seed, self.num_envs), dtype=np.uint64)
        self._seeded = True
        self._native.reset(seeds, *self._bufs)
        return self._out()

    def _actions(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers (shape ({self.num_envs},)), got dtype {a.dtype} and shape {a.shape}")
        a = np.ascontiguousarray(a, dtype=np.int64)
        if self.masked_action == "oldest":
            inside = (a >= 0) & (a < self.window)
            masked = inside & (self._bufs[2][np.arange(self.num_envs), np.where(inside, a, 0)] == 0)
            a = np.where(masked, 0, a)
        return a

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._native.step(self._actions(actions), *self._bufs)
        obs, _ = self._out()
        reward, terminated = self._bufs[3], self._bufs[4]
        return obs, reward.copy(), terminated.copy(), self._truncated.copy(), self._infos(terminated)

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        if not done.any():
            return {}
        stats = self._bufs[5]
        infos: dict[str, Any] = {}
        for j, name in enumerate(STAT_NAMES):
            infos[name] = np.where(done, stats[:, j], 0.0)
            infos["_" + name] = done.copy()
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = stats[:, 0] / stats[:, 1]
        infos["deadline_hit_ratio"] = np.where(done, ratio, 0.0)
        infos["_deadline_hit_ratio"] = done.copy()
        return infos

    def reset_done(self) -> dict[str, np.ndarray]:
        """Resets now the lanes whose episode just ended (same-step autoreset, used by
        the SB3 adapter) and returns the observation of the batch."""
        self._native.reset_done(*self._bufs)
        return self._out()[0]

    def action_masks(self) -> np.ndarray:
        """(num_envs, window) booleans: the valid actions of every lane."""
        return self._bufs[2] > 0
