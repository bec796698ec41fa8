"""Priority scheduling in the switch (pFabric / aSCC), single and vectorized."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np
import pandas as pd
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flowsched import _fabric, workloads as wl
from flowsched.checks import check_flag, check_int, check_number
from flowsched.envs._common import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    RENDER_FPS,
    RENDER_MODES,
    Canvas,
    Feature,
    NativeVecMixin,
    check_box_action,
    check_lane_actions,
    check_obs_format,
    check_render_mode,
    env_fabric,
    feature_bounds,
    fmt,
    log_frac,
)
from flowsched.envs.token import (
    MAX_COUNT,
    MAX_SIZE_MB,
    MAX_TIME_MS,
    lane_seeds,
    native_trace,
    obs_limits,
    packet_native,
)
from flowsched.sim import env_flow_table
from flowsched.topology import Topology

FLOW_FEATURES, SWITCH_STATS = _fabric.switch_layout()
#: The features of each flow slot: they build the Box bounds, and the docstring's
#: observation table is their rendering (``feature_rows``; a test checks it).
FLOW_TABLE = (
    Feature("sent_mb", "MB", 0, "S", "bytes sent by the j-th flow in the system (oldest first; zeros past them)"),
    Feature("remaining_mb", "MB", 0, "S", "remaining bytes (0 while the size is hidden)"),
    Feature("size_visible", "0/1", 0, 1, "size visible"),
    Feature("age_ms", "ms", 0, "H", "age"),
    Feature("complete", "0/1", 0, 1, "all its data available"),
    Feature("flows_at_src", "flows", 0, "C", "flows in the system at its source host"),
    Feature("flows_at_dst", "flows", 0, "C", "flows in the system at its destination host"),
    Feature("time_left_ms", "ms", "-H", "H", "time left to its deadline (0 = none)"),
    Feature("has_deadline", "0/1", 0, 1, "has a deadline"),
)
FLOW_FEATURE_NAMES = tuple(f.name for f in FLOW_TABLE)
REWARDS = ("fct", "slowdown")
assert len(FLOW_FEATURE_NAMES) == FLOW_FEATURES

OBS_FORMATS = ("dict", "flat")


class SwitchBounds:
    """Finite bounds of the switch env's observation: bytes up to ``size_mb``, times
    within +-``time_ms``, counts up to ``MAX_COUNT``; values past a bound saturate. They
    do not depend on the workload (policies move between configurations)."""

    def __init__(self, max_flows: int, size_mb: float, time_ms: float) -> None:
        obs_limits(size_mb, time_ms)
        self.max_flows = max_flows
        self.low, self.high = feature_bounds(FLOW_TABLE, max_flows, size_mb, time_ms, MAX_COUNT)
        self.size_mb, self.time_ms = float(np.float32(size_mb)), float(np.float32(time_ms))

    def observation_space(self, obs_format: str) -> spaces.Space:
        flows = spaces.Box(self.low, self.high, dtype=np.float32)
        mask = spaces.Box(0.0, 1.0, (self.max_flows,), dtype=np.float32)
        if obs_format == "dict":
            return spaces.Dict({"flows": flows, "flow_mask": mask})
        return spaces.Box(
            np.concatenate([mask.low, self.low]), np.concatenate([mask.high, self.high]), dtype=np.float32
        )



def _format(obs_format: str, flows: np.ndarray, mask: np.ndarray) -> Any:
    if obs_format == "dict":
        return {"flows": flows, "flow_mask": mask}
    return np.concatenate([mask, flows], axis=-1)


class _EpisodeSource:
    """Draws each episode's trace: Poisson all-to-all arrivals of ``workload`` at ``load``."""

    def __init__(self, workload: Any, load: float, n_flows: int, topology: Topology, link_gbps: float,
                 size_known: bool, alpha: float, trace: pd.DataFrame | str | None) -> None:
        self.topology = topology
        self.fixed, self.time_origin_s = None, 0.0  # generated traces start within the first second
        if trace is not None:
            self.fixed, _, self.time_origin_s = native_trace(trace, topology, link_gbps)
        if self.fixed is None:
            load = check_number("load", load, low=0.0, low_open=True, high=1.0, high_open=True)
            n_flows = check_int("n_flows", n_flows)
            alpha = check_number("alpha", alpha, low=0.0)
            self.dist = wl.get_distribution(workload)
        self.load, self.n_flows, self.link_gbps = load, int(n_flows), link_gbps
        self.size_known, self.alpha = bool(size_known), float(alpha)

    def draw(self, rng: np.random.Generator) -> _fabric.Trace:
        if self.fixed is not None:
            return self.fixed
        # as numpy columns, and not checked in Python: the generator's columns are valid by
        # construction (its parameters were checked above) and the core checks every field
        # again when the lane takes them. A DataFrame's construction and validation cost ten
        # times the draw, and the columns' checks more than the draw, on the calling thread
        # at every autoreset: the serial part of a threaded vector env's step
        tr = wl.poisson_all_to_all_columns(self.dist, self.load, self.topology.n_hosts, self.link_gbps, self.n_flows,
                                           seed=rng, validate=False)
        if self.alpha > 0:
            tr["data_span_s"] = wl.data_spans(tr["size_bytes"], self.alpha, self.link_gbps)
        if not self.size_known:
            tr["size_known"] = np.zeros(self.n_flows, bool)
        return native_trace(tr, self.topology, self.link_gbps, validate=False)[0]


def switch_packet_native(model: str, topology: Topology, transport: str | None,
                         options: dict[str, Any]) -> dict[str, Any] | None:
    """The native packet options of a switch env (None for the fluid model), checked as the
    token env's (:func:`flowsched.envs.token.packet_native`), and besides: transports whose
    queues cannot read the scores and the admission delays raise naming them."""
    if model == "packet":
        if transport is not None and transport not in ("pfabric", "dctcp"):
            raise ValueError(f"transport {transport!r}: the switch env's scores are priority tags, read by pFabric's "
                             "priority queues: transport='pfabric' (the default: pFabric's rate control) or 'dctcp' "
                             "(the same queues marking ECN, DCTCP senders); the other transports' queues would "
                             "ignore them")
        for name in ("request_delay_us", "grant_delay_us"):
            if options.get(name):
                raise ValueError(f"{name} is a delay of destination admission; the switch env has none")
    return packet_native(model, topology, transport, options, env="switch", admission=False)


def switch_config(
    workload: Any = "websearch",
    load: float = 0.8,
    n_flows: int = 500,
    hosts: int | None = None,
    link_gbps: float | None = None,
    topology: Topology | None = None,
    max_flows: int = 128,
    decision_interval_s: float | None = None,
    reward: str = "fct",
    size_known: bool = True,
    alpha: float = 0.0,
    hide_sizes: bool = False,
    delay_us: float = 0.0,
    terminate_missed: bool = False,
    trace: pd.DataFrame | str | None = None,
    obs_limits: tuple[float, float, float] = (np.inf, np.inf, np.inf),
    model: str = "fluid",
    transport: str | None = None,
    **packet_options: Any,
) -> tuple[_fabric.SwitchConfig, _EpisodeSource]:
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; known: {', '.join(REWARDS)}")
    max_flows = check_int("max_flows", max_flows)
    delay_us = check_number("delay_us", delay_us, low=0.0)
    if decision_interval_s is not None:
        decision_interval_s = check_number("decision_interval_s", decision_interval_s, low=0.0, low_open=True)
    hide_sizes, size_known = check_flag("hide_sizes", hide_sizes), check_flag("size_known", size_known)
    terminate_missed = check_flag("terminate_missed", terminate_missed)
    topology, link_gbps = env_fabric("the switch env", hosts, link_gbps, topology, 16, 10.0)
    packet = switch_packet_native(model, topology, transport, packet_options)
    source = _EpisodeSource(workload, load, n_flows, topology, link_gbps, size_known, alpha, trace)
    cfg = _fabric.SwitchConfig(
        **topology.native_config(), max_flows=max_flows, decision_interval_s=decision_interval_s, reward=reward,
        delay_per_hop_s=delay_us * 1e-6, terminate_missed=terminate_missed,
        obs_max_mb=float(obs_limits[0]), obs_max_ms=float(obs_limits[1]), obs_max_count=float(obs_limits[2]),
        hide_sizes=bool(hide_sizes), packet=packet,
    )
    return cfg, source




def as_scores(action: Any, shape: tuple[int, ...], what: str, where: str,
              live: Callable[[], np.ndarray] | None = None, what_lane: str = "") -> np.ndarray:
    """``action`` as C-contiguous float32 scores if it has ``shape`` (and numbers), else
    a ``ValueError``. The bounds are checked by the core, on the float32 values; scores of
    another dtype are checked here first, on their own values, since the cast can round a
    value just outside [-1, 1] onto a bound (a batch: only the lanes ``live()`` gives,
    the others are about to reset and their scores are unused; ``what_lane`` names a
    lane's action in the error)."""
    a = np.asarray(action)
    if a.shape != shape or a.dtype.kind not in "fiu":
        raise ValueError(f"{what} must be numbers of shape {shape} {where}, got dtype {a.dtype} and shape {a.shape}")
    if a.dtype == np.float32:
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)
    if a.dtype.kind == "f" and ((a > 1.0) | (a < -1.0)).any():
        box = spaces.Box(-1.0, 1.0, shape, dtype=np.float32)  # bounds exact in float32; the values stay float64
        if live is None:
            check_box_action(a, box, what)
        else:
            check_lane_actions(a, box, live(), what_lane)
    return np.ascontiguousarray(a, dtype=np.float32)


class SwitchSchedulingEnv(gym.Env[Any, np.ndarray]):
    """Priority scheduling of flows in the switch (pFabric, aSCC).

    The agent gives every flow in the system a priority score; the fabric serves flows
    greedily in score order (lowest first): each flow takes the smallest residual
    capacity along its path, in order, and flows with equal scores share max-min
    fairly. This is pFabric's "Ideal" greedy scheduler driven by a learned key, on
    flowsched's fluid simulator. A decision is asked for at every event that changes
    the set of flows or their completeness (an arrival, a completion, a flow's data
    becoming fully available) and, with ``decision_interval_s``, at least that often.

    ## Action Space
    ``Box(-1, 1, (max_flows,), float32)``: one score per flow slot (slot order = the
    observation's, oldest flow first). Every action of the space is valid, and only the
    order of the scores matters; scores of slots past the flows in the system are
    ignored. An action outside the space (a score outside [-1, 1], NaN, or a wrong
    shape) raises ``ValueError`` naming the bounds: nothing is clipped (SB3 and
    ``gymnasium.wrappers.ClipAction`` clip before stepping). Flows past ``max_flows``
    (the youngest, when more are in the system) are served after all others, sharing
    fairly.

    ## Observation Space
    ``obs_format="dict"`` (default): a ``Dict`` of 1-D float32 Boxes. ``S`` is
    ``max_size_mb`` (1,000 MB by default), ``H`` is ``max_time_ms`` (100,000 ms) and
    ``C`` is ``MAX_COUNT`` (10^6). Values past a bound saturate at it. The bounds do
    not depend on the workload, so policies move between configurations of the same
    ``max_flows``.

    | key | index | feature | unit | range |
    |---|---|---|---|---|
    | ``flows`` | ``9 * j + 0`` | bytes sent by the j-th flow in the system (oldest first; zeros past them) | MB | [0, S] |
    | | ``9 * j + 1`` | remaining bytes (0 while the size is hidden) | MB | [0, S] |
    | | ``9 * j + 2`` | size visible | 0/1 | [0, 1] |
    | | ``9 * j + 3`` | age | ms | [0, H] |
    | | ``9 * j + 4`` | all its data available | 0/1 | [0, 1] |
    | | ``9 * j + 5`` | flows in the system at its source host | flows | [0, C] |
    | | ``9 * j + 6`` | flows in the system at its destination host | flows | [0, C] |
    | | ``9 * j + 7`` | time left to its deadline (0 = none) | ms | [-H, H] |
    | | ``9 * j + 8`` | has a deadline | 0/1 | [0, 1] |
    | ``flow_mask`` | j | 1 where slot j holds a flow | 0/1 | [0, 1] |

    ``flows`` is ``(max_flows * 9,)``, row-major: ``obs["flows"].reshape(max_flows, 9)``
    gives one row per slot (columns ``FLOW_FEATURE_NAMES``). ``obs_format="flat"``: one
    Box, ``[flow_mask, flows]`` (the order of ``FlattenObservation`` on the Dict).

    This is what a switch can know: sizes only when flows announce them (``size_known``)
    or once all their data is there (aSCC's completeness), bytes sent, age, contention;
    with ``hide_sizes``, no size ever (what LAS and PIAS know).

    ## Rewards
    ``"fct"`` (default): minus the number of flows in the system times the elapsed
    simulated time in ms since the last decision, so an episode's return is minus the
    total flow time, sum of (finish - arrival), in ms. ``"slowdown"``: each flow in the
    system weighs 1 / its ideal FCT (without the path delay), so the return is minus
    the sum of slowdowns. A flow terminated at its deadline (``terminate_missed``) counts
    for its time in the system until then. The time in the system is the fluid model's
    sending time (the fixed path delay of ``delay_us`` not included, as ``fct_s -
    path_delay_s``) and on the packet model until the last byte reaches the receiver
    (propagation and queueing included).

    ## Episode End
    Terminates at the step where the last flow of the episode finishes (or is
    terminated): a step per flow change, so 2n - 1 steps for n flows whose arrivals and
    ends all fall at different times (the first arrival is the reset's); no
    truncation unless ``max_episode_steps`` adds a ``TimeLimit``. ``info`` then holds
    ``flows_finished``, ``flow_time_s`` (the return's total, terminated flows included)
    and ``mean_fct_s``: the mean time in the system of the finished flows, as the
    return counts it (on the fluid model without the path delay; on the packet model with
    it, as its ``fct_s``).

    ## Arguments
    * ``workload``: flow-size distribution (name or ``SizeDistribution``; default web search).
    * ``load``, ``n_flows``: Poisson all-to-all load and flows per episode.
    * ``hosts``, ``link_gbps``, ``topology``: the fabric (default ``BigSwitch(16, 10)``). With a
      ``topology``, ``load`` (and ``alpha``'s data spans) are relative to its host links: leave
      ``hosts`` and ``link_gbps`` out, or give values that agree with it; a fabric whose hosts run
      at several rates needs ``link_gbps``, the rate the load refers to.
    * ``max_flows``: flow slots in the observation and action.
    * ``decision_interval_s``: also decide at least this often (simulated seconds).
    * ``reward``: ``"fct"`` or ``"slowdown"``.
    * ``size_known``: False hides every size until the flow's data is complete (aSCC).
    * ``hide_sizes``: True hides every size for the flow's whole life, whatever
      ``size_known`` and completeness say (remaining bytes 0, size visible 0): a learner
      gets what LAS and PIAS schedule with. The baselines that read sizes (``srpt``,
      ``fair``, ``asrpt``) refuse such observations.
    * ``alpha``: aSCC's data spacing: a flow's bytes arrive over ``alpha`` times its
      transmission time at line rate.
    * ``delay_us``, ``terminate_missed``: as in ``flowsched.simulate``.
    * ``trace``: a fixed trace replayed every episode instead of drawn ones.
    * ``model``: ``"fluid"`` (default) or ``"packet"`` (the scores become the packets'
      priority tags in pFabric's queues; ``transport`` ``"pfabric"``, the default, or
      ``"dctcp"``: the same queues marking ECN under DCTCP senders); the packet
      options (``ENV_PACKET_OPTIONS`` but the admission delays) need ``model="packet"``.
    * ``obs_format``: ``"dict"`` (default) or ``"flat"``.
    * ``max_size_mb``, ``max_time_ms``: where bytes and times saturate (S, H).
    * ``render_mode``: ``None``, ``"ansi"`` (a table of the flows) or ``"rgb_array"``
      (one row per slot: bytes sent in grey and remaining in blue on a log scale, green
      once all data is there, orange while the size is hidden).

    All randomness comes from ``reset(seed=...)``.

    ## Version History
    * v1: actions outside [-1, 1] raise (v0 accepted any finite score); finite
      observation bounds (the table above); ``flows`` is flat ``(max_flows * 9,)``;
      ``obs_format``; ``render_mode="rgb_array"`` and ``metadata["render_fps"]``.
    * v0 (removed): ``flows`` of shape ``(max_flows, 9)`` with unbounded Boxes.
      ``gym.make`` of the v0 id raises Gymnasium's ``DeprecatedEnv`` naming v1.

    Example
    -------
    >>> import gymnasium as gym, flowsched
    >>> from flowsched import baselines
    >>> env = gym.make("flowsched/SwitchScheduling-v1", n_flows=100)
    >>> obs, info = env.reset(seed=0)
    >>> policy = baselines.make("switch", "srpt")
    >>> done = False
    >>> while not done:
    ...     scores, _ = policy.predict(obs)
    ...     obs, reward, done, truncated, info = env.step(scores)
    >>> info["flows_finished"]
    100.0
    """  # noqa: E501  (the docstring's Markdown tables: one row per line, rendered in the docs)

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}
    action_space: spaces.Box

    def __init__(self, *, render_mode: str | None = None, obs_format: str = "dict", max_size_mb: float = MAX_SIZE_MB,
                 max_time_ms: float = MAX_TIME_MS, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        self.obs_format = check_obs_format(type(self).__name__, obs_format, OBS_FORMATS)
        cfg, self._source = switch_config(**kwargs, obs_limits=obs_limits(max_size_mb, max_time_ms))
        self._delay_us = float(kwargs.get("delay_us", 0.0))  # switch_config's default
        self.max_flows = cfg.max_flows
        self.bounds = SwitchBounds(self.max_flows, float(max_size_mb), float(max_time_ms))
        # the single env is the native vector env's one-lane form (no autoreset): one
        # code path for both, and its output buffers are bound once, here
        self._native = _fabric.SwitchVecEnv(cfg, 1, single=True)
        flows, mask, _, self._reward, self._terminated, _, _, stats = self._native.buffers
        self._flows, self._mask, self._stats = flows[0], mask[0], stats[0]  # lane 0's views
        self.observation_space = self.bounds.observation_space(self.obs_format)
        self.action_space = spaces.Box(-1.0, 1.0, (self.max_flows,), dtype=np.float32)
        self._started = False

    def _obs(self) -> Any:
        # copies: the buffers are overwritten by the next step (saturated at the bounds by the core)
        return _format(self.obs_format, self._flows.copy(), self._mask.copy())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._native.set_next_trace(0, self._source.draw(self.np_random))
        self._native.reset()
        self._started = True
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        # the bounds (nothing is clipped) and the episode state are checked by the core
        self._native.step(as_scores(action, self.action_space.shape, "action (one score per flow slot)",
                                    f"(the action space {self.action_space})"))
        terminated = bool(self._terminated[0])
        info = dict(zip(SWITCH_STATS, self._stats.tolist(), strict=True)) if terminated else {}
        return self._obs(), float(self._reward[0]), terminated, False, info

    def results(self) -> pd.DataFrame:
        """Per-flow outcome of the current episode (trace order), in the columns, units and
        dtypes of :attr:`flowsched.Results.flows` (``FLOW_COLUMNS``; times on the
        trace's clock, as in :func:`flowsched.simulate`; see :func:`flowsched.sim.env_flow_table`
        for ``id``, ``weight``, ``bytes_sent`` and ``path_delay_s``)."""
        return env_flow_table(self._native.results(0), self._source.topology, self._delay_us,
                              self._source.time_origin_s)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium: an unbound RenderFrame TypeVar
        if self.render_mode is None or not self._started:
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.bounds, self._flows, self._mask)
        return f"t = {self._native.now(0) * 1e3:.3f} ms, " + render_text(self._flows, self._mask)


def render_text(flows: np.ndarray, mask: np.ndarray) -> str:
    f = flows.reshape(mask.shape[0], FLOW_FEATURES)
    lines = [f"{int(mask.sum())} flows in the system", "  slot  sent MB  left MB  age ms  complete  @src  @dst"]
    for j in np.flatnonzero(mask):
        r = f[j]
        left = fmt(r[1], "7.3f") if r[2] else "      ?"
        lines.append(f"  {j:4d}  {fmt(r[0], '7.3f')}  {left}  {fmt(r[3], '6.2f')}  {int(r[4]):8d}  {int(r[5]):4d}  "
                     f"{int(r[6]):4d}")
    return "\n".join(lines)


def render_rgb(bounds: SwitchBounds, flows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """One row per slot: bytes sent (grey) then remaining (blue, green once all data is
    there, orange while the size is hidden) on a log scale of MB up to S."""
    m = mask.shape[0]
    f = flows.reshape(m, FLOW_FEATURES)
    c = Canvas(m, row_h=4 if m > 32 else 10, pad=1)
    for j in np.flatnonzero(mask):
        sent, left = float(f[j, 0]), float(f[j, 1])
        x_sent = float(log_frac(sent, bounds.size_mb))
        c.bar(int(j), 0.0, x_sent, GREY)
        color = ORANGE if not f[j, 2] else (GREEN if f[j, 4] else BLUE)
        c.bar(
            int(j), x_sent, x_sent + float(log_frac(left, bounds.size_mb)) if f[j, 2] else 1.0, color, thin=not f[j, 2]
        )
    return c.img


class SwitchSchedulingVecEnv(NativeVecMixin, VectorEnv):
    """``num_envs`` switch-scheduling envs stepped together inside the Rust core.

    Same spaces and arguments as :class:`SwitchSchedulingEnv` per lane, next-step
    autoreset (also after a ``max_episode_steps`` truncation), GIL released during the
    batched step (``threads`` OS threads). Each lane draws its episodes' traces with its
    own generator, seeded ``seed + i`` as a single env reset with that seed, so lane
    ``i`` reproduces that env bit for bit. ``render()`` gives a tuple of per-lane frames.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS, "autoreset_mode": AutoresetMode.NEXT_STEP}
    action_space: spaces.Box

    def __init__(self, num_envs: int = 8, *, threads: int = 1, copy: bool = True, obs_format: str = "dict",
                 max_size_mb: float = MAX_SIZE_MB, max_time_ms: float = MAX_TIME_MS,
                 max_episode_steps: int | None = None, render_mode: str | None = None, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        self.obs_format = check_obs_format(type(self).__name__, obs_format, OBS_FORMATS)
        cfg, self._source = switch_config(**kwargs, obs_limits=obs_limits(max_size_mb, max_time_ms))
        self.max_flows = cfg.max_flows
        self.bounds = SwitchBounds(self.max_flows, float(max_size_mb), float(max_time_ms))
        self.num_envs, self.copy = check_int("num_envs", num_envs), check_flag("copy", copy)
        self._init_limit(max_episode_steps)
        self._native = _fabric.SwitchVecEnv(cfg, self.num_envs, threads=check_int("threads", threads),
                                            max_episode_steps=self._limit)
        self.single_observation_space = self.bounds.observation_space(self.obs_format)
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.max_flows,), dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = cast(spaces.Box, batch_space(self.single_action_space, self.num_envs))
        # the buffers the core writes in place, bound once
        self._flows, self._mask, _, self._reward, self._terminated, self._truncated, _, self._stats = \
            self._native.buffers
        self._rngs: list[np.random.Generator] = []

    def _obs(self) -> Any:
        if self.obs_format != "dict":
            return _format(self.obs_format, self._flows, self._mask)
        if self.copy:
            return {"flows": self._flows.copy(), "flow_mask": self._mask.copy()}
        return {"flows": self._flows, "flow_mask": self._mask}

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None or not self._rngs:
            self._rngs = [seeding.np_random(s)[0] for s in lane_seeds(seed, self.num_envs)]
        for lane, rng in enumerate(self._rngs):
            self._native.set_next_trace(lane, self._source.draw(rng))
        self._native.reset()
        return self._obs(), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        # the bounds of the live lanes (nothing is clipped), autoreset and the step limit: in the core
        self._native.step(as_scores(actions, self.action_space.shape, "actions", "(one row per lane)",
                                    live=lambda: ~np.asarray(self._native.needs_reset(), bool),
                                    what_lane="action (one score per flow slot)"))
        reward, terminated, truncated = self._reward.copy(), self._terminated.copy(), self._truncated.copy()
        infos: dict[str, Any] = {}
        if terminated.any():
            for j, name in enumerate(SWITCH_STATS):
                infos[name] = np.where(terminated, self._stats[:, j], 0.0)
                infos["_" + name] = terminated.copy()
        for lane in np.flatnonzero(terminated | truncated):  # the trace its autoreset will start
            self._native.set_next_trace(int(lane), self._source.draw(self._rngs[lane]))
        return self._obs(), reward, terminated, truncated, infos

    def reset_done(self) -> Any:
        """Resets now the lanes whose episode just ended or was truncated (same-step
        autoreset, for the SB3 adapter)."""
        self._native.reset_done()
        return self._obs()

    def _lane_call(self, name: str, lane: int, *args: Any, **kwargs: Any) -> Any:
        if name == "action_masks":
            raise AttributeError("the switch env has no action mask (every score vector is valid); see flow_mask")
        if self.render_mode is None:
            return None
        flows, mask = self._flows[lane], self._mask[lane]
        if self.render_mode == "rgb_array":
            return render_rgb(self.bounds, flows, mask)
        return f"env {lane}: " + render_text(flows, mask)
