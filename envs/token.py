"""Destination-side token scheduling (the Artemis thesis), single and vectorized."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, SupportsFloat

import gymnasium as gym
import numpy as np
import pandas as pd
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flowsched import _fabric, workloads as wl
from flowsched.checks import check_flag, check_int, check_number
from flowsched.envs._common import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    RED,
    RENDER_FPS,
    RENDER_MODES,
    Canvas,
    Feature,
    NativeVecMixin,
    check_obs_format,
    check_render_mode,
    env_fabric,
    feature_bounds,
    fmt,
    log_frac,
)
from flowsched.sim import (
    MODELS,
    PACKET_OPTIONS,
    env_flow_table,
    is_pias,
    native_packet_options,
    prepare_columns,
    prepare_trace,
)
from flowsched.topology import Topology
from flowsched.workloads.arrivals import fixed_classes

REQ_FEATURES, ACTIVE_FEATURES, STAT_NAMES = _fabric.token_layout()
#: The features of each request of the window: they build the Box bounds, and the
#: docstring's observation table is their rendering (``feature_rows``; a test checks it).
REQUEST_TABLE = (
    Feature("size_mb", "MB", 0, "S", "size of the j-th waiting request (oldest first; zeros past the waiting ones)"),
    Feature("deadline_ms", "ms", 0, "H", "relative deadline (0 = none)"),
    Feature("time_left_ms", "ms", "-H", "H", "time left to the deadline (negative once missed; 0 = none)"),
    Feature("waited_ms", "ms", 0, "H", "time waited"),
    Feature("ideal_fct_ms", "ms", 0, "H", "ideal FCT alone on the idle fabric, with the path delay"),
    Feature("has_deadline", "0/1", 0, 1, "has a deadline"),
    Feature("fair_fct_ms", "ms", 0, "H", "fair-share time to completion: the time from now until it would finish if "
            "admitted now and the destination link were shared fairly with the flows active there, with no later "
            "admission (with the path delay; compare it with time_left_ms; exact for ``scheduler=\"ps\"`` on a big "
            "switch until the next admission or arrival when only the destination link is shared, as in gather "
            "bursts: a sender link busy with flows to other destinations makes it short)"),
)
#: The features of the summary of the destination's active flows (as ``REQUEST_TABLE``).
ACTIVE_TABLE = (
    Feature("active_over_k", "-", 0, 1, "the destination's active flows / k"),
    Feature("remaining_mb", "MB", 0, "S", "their remaining bytes"),
    Feature("least_time_left_ms", "ms", "-H", "H", "least time left to a deadline among them (0 if none)"),
    Feature("drain_ms", "ms", 0, "H", "time to drain them at the link rate"),
    Feature("waiting", "requests", 0, "C", "waiting requests (window included)"),
)
REQUEST_FEATURES = tuple(f.name for f in REQUEST_TABLE)
ACTIVE_SUMMARY = tuple(f.name for f in ACTIVE_TABLE)
REWARDS = ("deadline", "neg_fct", "neg_slowdown")
assert len(REQUEST_FEATURES) == REQ_FEATURES and len(ACTIVE_SUMMARY) == ACTIVE_FEATURES

OBS_FORMATS = ("dict", "flat", "rllib")
MASKED_ACTIONS = ("oldest", "raise")
#: default saturation of the time features (ms): +-100 s
MAX_TIME_MS = 100_000.0
#: default saturation of the byte features (MB): 1 GB
MAX_SIZE_MB = 1000.0
#: saturation of the count features (waiting requests, flows at a host)
MAX_COUNT = 1_000_000


def obs_limits(max_size_mb: float, max_time_ms: float) -> tuple[float, float, float]:
    """Where the native cores saturate the observation: (MB, ms, count), checked."""
    for name, v in (("max_size_mb", max_size_mb), ("max_time_ms", max_time_ms)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return float(np.float32(max_size_mb)), float(np.float32(max_time_ms)), float(MAX_COUNT)


class TokenBounds:
    """The finite bounds of the observation: bytes up to ``size_mb``, times within
    +-``time_ms``, counts up to ``MAX_COUNT``; values past a bound saturate at it. They
    do not depend on the workload, so that a policy trained on one configuration can be
    evaluated on another of the same window (the spaces are equal)."""

    def __init__(self, window: int, k: int, size_mb: float, time_ms: float) -> None:
        obs_limits(size_mb, time_ms)
        self.window, self.k = window, k
        self.req_low, self.req_high = feature_bounds(REQUEST_TABLE, window, size_mb, time_ms, MAX_COUNT)
        self.act_low, self.act_high = feature_bounds(ACTIVE_TABLE, 1, size_mb, time_ms, MAX_COUNT)
        self.size_mb, self.time_ms = float(np.float32(size_mb)), float(np.float32(time_ms))

    def spaces(self) -> dict[str, gym.spaces.Space]:
        return {
            "requests": spaces.Box(self.req_low, self.req_high, dtype=np.float32),
            "active": spaces.Box(self.act_low, self.act_high, dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (self.window,), dtype=np.float32),
        }

    def observation_space(self, obs_format: str) -> gym.spaces.Space:
        sp = self.spaces()
        if obs_format == "dict":
            return spaces.Dict(sp)
        features = spaces.Box(
            np.concatenate([self.act_low, self.req_low]),
            np.concatenate([self.act_high, self.req_high]),
            dtype=np.float32,
        )
        if obs_format == "rllib":
            return spaces.Dict({"action_mask": sp["action_mask"], "observations": features})
        return spaces.Box(np.concatenate([np.zeros(self.window, np.float32), features.low]),
                          np.concatenate([np.ones(self.window, np.float32), features.high]), dtype=np.float32)



def format_obs(obs_format: str, req: np.ndarray, act: np.ndarray, mask: np.ndarray) -> Any:
    """The observation in ``obs_format`` from flat requests, active summary and mask
    (single or batched, leading axis); "dict" returns the arrays themselves."""
    if obs_format == "dict":
        return {"requests": req, "active": act, "action_mask": mask}
    if obs_format == "rllib":
        return {"action_mask": mask, "observations": np.concatenate([act, req], axis=-1)}
    return np.concatenate([mask, act, req], axis=-1)


def _classes(workload: Any) -> tuple[list[float], list[float], list[float]]:
    """(weights, sizes, deadlines) of a mixture of fixed sizes, the native generator's input."""
    classes = fixed_classes(wl.get_distribution(workload) if isinstance(workload, str) else workload)
    if classes is None:
        raise ValueError(
            f"workload {workload!r}: the token env draws gather bursts natively from classes of fixed size "
            "(a Mixture of Fixed sizes, e.g. 'artemis_a1'); for other size distributions generate a trace "
            "(flowsched.workloads.gather_bursts) and pass trace=..."
        )
    return classes


def native_trace(trace: pd.DataFrame | str | Mapping[str, np.ndarray], topo: Topology | None,
                 link_gbps: float, *, validate: bool = True) -> tuple[_fabric.Trace, Topology, float]:
    """A trace (DataFrame, path, or columns as :func:`flowsched.traces.validate_columns`
    takes them, with a topology), validated for the topology, as the env cores take it,
    with the fabric and the trace's time origin (the whole seconds the simulator's clock is
    shifted by: :func:`flowsched.sim.time_origin_s`; the envs' ``results()`` add it back).
    ``validate=False``: columns a generator built valid by construction, checked by the
    core alone (:func:`flowsched.sim.prepare_columns`)."""
    tr: pd.DataFrame | dict[str, np.ndarray]
    if isinstance(trace, Mapping) and topo is not None:
        tr, origin = prepare_columns(trace, topo, validate=validate)
    else:
        tr, topo = prepare_trace(trace, topo, link_gbps)  # type: ignore[arg-type]
        origin = float(tr.attrs.get("time_origin_s", 0.0))
    if "path" in tr and pd.Series(tr["path"]).notna().any():
        raise ValueError("the token and switch envs route every flow by ECMP: a trace that pins routes (a 'path' "
                         "column, flowsched.traces) runs in flowsched.simulate only")
    native = _fabric.Trace(*(np.asarray(tr[c], dtype) for c, dtype in _NATIVE_COLUMNS))
    return native, topo, origin


#: The columns of a trace that the native ``Trace`` takes, in its arguments' order, with their dtypes.
_NATIVE_COLUMNS = (("arrival_s", np.float64), ("src", np.int64), ("dst", np.int64), ("size_bytes", np.float64),
                   ("deadline_s", np.float64), ("weight", np.float64), ("data_span_s", np.float64),
                   ("size_known", bool))


class TokenSetup(NamedTuple):
    """What :func:`token_config` builds: the native config, the native fixed trace (or
    None), the fabric, the delay per link (µs) and the fixed trace's time origin (s)."""

    config: _fabric.TokenConfig
    trace: _fabric.Trace | None
    topology: Topology
    delay_us: float
    time_origin_s: float = 0.0


#: The packet model's options the token env takes (``model="packet"``): those of
#: :func:`flowsched.simulate` except the queue sampling (``queue_sample_us``, ``sample_links``)
#: and ``gtcp:fair``'s ``fair_projection`` (no env runs ``gtcp``).
ENV_PACKET_OPTIONS = tuple(k for k in PACKET_OPTIONS if k not in ("queue_sample_us", "sample_links", "fair_projection"))


def packet_native(model: str, topology: Topology, transport: str | None, options: dict[str, Any], *,
                  env: str = "token", admission: bool = True) -> dict[str, Any] | None:
    """The native packet options of an env (None for the fluid model), checked: packet
    options with the fluid model, unknown names and bad values raise naming them and the
    env (``env``: its name in messages; ``admission``: whether it has destination admission)."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    unknown = sorted(set(options) - set(ENV_PACKET_OPTIONS))
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} of the {env} env; its packet options (model='packet'): "
                        f"transport, {', '.join(ENV_PACKET_OPTIONS)}")
    if model == "fluid":
        if transport is not None or options:
            given = (["transport"] if transport is not None else []) + sorted(options)
            raise ValueError(f"{', '.join(given)}: options of the packet model; pass model='packet'")
        return None
    native = native_packet_options(topology, transport, admission, **options)
    del native["queue_sample_s"], native["sample_ports"], native["fair_projection"]
    return native


def token_config(
    variant: int = 1,
    workload: Any = None,
    k: int = 10,
    window: int = 5,
    burst_size: int = 10,
    burst_rate_hz: float = 10.0,
    n_bursts: int = 20,
    hosts: int | None = None,
    link_gbps: float | None = None,
    topology: Topology | None = None,
    delay_us: float = 250.0,
    scheduler: str = "ps",
    reward: str = "deadline",
    terminate_missed: bool = False,
    exact_composition: bool = True,
    trace: pd.DataFrame | str | None = None,
    obs_limits: tuple[float, float, float] = (np.inf, np.inf, np.inf),
    masked_action: str = "oldest",
    model: str = "fluid",
    transport: str | None = None,
    **packet_options: Any,
) -> TokenSetup:
    """The native config (and the native trace, when a fixed trace is given) of the token env;
    ``obs_limits`` are where the observation saturates: (MB, ms, count); ``masked_action``
    is what a masked action does (``"oldest"`` or ``"raise"``, checked by the core);
    ``model``, ``transport`` and ``packet_options`` choose the simulator (:func:`packet_native`)."""
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; known: {', '.join(REWARDS)}")
    k, window = check_int("k", k), check_int("window", window)
    burst_size, n_bursts = check_int("burst_size", burst_size), check_int("n_bursts", n_bursts)
    burst_rate_hz = check_number("burst_rate_hz", burst_rate_hz, low=0.0, low_open=True)
    delay_us = check_number("delay_us", delay_us, low=0.0)
    terminate_missed = check_flag("terminate_missed", terminate_missed)
    exact_composition = check_flag("exact_composition", exact_composition)
    if isinstance(scheduler, str) and is_pias(scheduler):
        raise ValueError(f"scheduler={scheduler!r}: the token env takes no PIAS thresholds, so it cannot run pias; "
                         "for PIAS with destination admission use flowsched.simulate (admission=, "
                         "pias_thresholds_bytes=)")
    fixed, origin = None, 0.0
    if trace is not None and topology is None and hosts is None:
        fixed, topology, origin = native_trace(trace, None, 1.0 if link_gbps is None else link_gbps)
    else:
        topology, _ = env_fabric("the token env", hosts, link_gbps, topology, burst_size + 1, 1.0)
        if trace is not None:
            fixed, topology, origin = native_trace(trace, topology, 1.0)
    packet = packet_native(model, topology, transport, packet_options)
    weights, sizes, deadlines = _classes(wl.artemis_workload_a(variant) if workload is None else workload)
    if fixed is not None:
        # the trace replaces the gather generator (set_trace): its burst shape is unused
        burst_size, exact_composition, weights = 1, False, [1.0] * len(weights)
    cfg = _fabric.TokenConfig(
        **topology.native_config(), scheduler=scheduler, k=k, window=window,
        delay_per_hop_s=delay_us * 1e-6, terminate_missed=terminate_missed, reward=reward,
        class_weights=weights, class_sizes_bytes=sizes, class_deadlines_s=deadlines, exact=exact_composition,
        burst_size=burst_size, burst_rate_hz=burst_rate_hz, n_bursts=n_bursts, dst=0,
        obs_max_mb=float(obs_limits[0]), obs_max_ms=float(obs_limits[1]), obs_max_count=float(obs_limits[2]),
        masked_action=masked_action, packet=packet,
    )
    return TokenSetup(cfg, fixed, topology, float(delay_us), origin)


def lane_seeds(seed: int | list[int] | None, num_envs: int) -> list[int | None]:
    """The seed of each lane of a vector env's ``reset(seed=...)``: ``seed + i`` for an
    integer (Gymnasium's convention), one per lane for a list (its length is checked),
    None (continue each lane's stream) for None."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        return [int(seed) + i for i in range(num_envs)]
    if not isinstance(seed, (list, tuple, np.ndarray)):
        raise ValueError(f"seed must be None, an integer or a list of {num_envs} integers, got {seed!r}")
    if len(seed) != num_envs:
        raise ValueError(f"expected {num_envs} seeds, got {len(seed)}")
    return [int(x) for x in seed]


def native_seed(seed: int) -> int:
    """A seed as the core takes it, an unsigned 64-bit integer: the seed itself below
    2**64, else a 64-bit hash of it (numpy's ``SeedSequence``), since Gymnasium accepts any
    integer >= 0; a negative seed raises, as Gymnasium's seeding does."""
    s = int(seed)
    if s < 0:
        raise ValueError(f"Seed must be greater or equal to zero, got {seed!r}")
    return s if s < 2**64 else int(np.random.SeedSequence(s).generate_state(1, np.uint64)[0])


def _as_action(action: Any) -> int:
    if type(action) is int or type(action) is np.int64:  # the common cases, without an array
        return int(action)
    a = np.asarray(action)
    if a.size != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"action must be one integer (a position in the window), got {action!r}")
    return int(a.reshape(()))


class TokenSchedulingEnv(gym.Env[Any, np.int64]):
    """Destination-side token scheduling (Artemis).

    Sources ask a destination for a token before they send a flow; the agent, at the
    destination, picks which of the first ``window`` (f) waiting requests to admit next.
    At most ``k`` admitted flows per destination are active at once, and they share the
    fabric under ``scheduler`` (fair sharing, the thesis' TCP, by default). A decision is
    asked for only when a slot is free and a request waits (event-driven: no idle
    steps). The fabric is flowsched's fluid simulator (``flowsched.simulate``), or with
    ``model="packet"`` its packet model (``flowsched.simulate(model="packet")``; the id
    ``flowsched/TokenScheduling-Artemis-v0`` is the thesis' setting on it: docs/envs/token.md
    says what each feature means on packets and where the packet model and ns-3 differ).

    The defaults reproduce Artemis workload A, variant 1 (Naouach, "Towards A
    Workload-Driven Flow Scheduler For Modern Datacenters", section 4.1): a big switch
    with 1 Gbps host links and 250 us delay per link, Poisson gather bursts (10 bursts/s)
    of 10 flows from 10 distinct senders to host 0, half (350 KB, 40 ms deadline) and
    half (250 KB, 50 ms), ``k = 10``, ``f = 5``.

    ## Action Space
    ``Discrete(window)``: the position, in the window, of the request to admit (0 is
    the oldest). Every action of the space is valid input: positions holding a waiting
    request are the unmasked ones (``observation["action_mask"]``, :meth:`action_masks`);
    a masked position (past the waiting requests) admits the oldest waiting request,
    and ``info["masked_action"]`` is True (False on the other steps; the vector env's
    infos carry it, with ``_masked_action``, on steps where a lane's action was masked;
    the evaluation counts these as
    ``masked_action_rate``). With ``masked_action="raise"`` (strict mode) a masked
    action raises ``ValueError`` instead. An integer outside the space (not 0 to
    ``window - 1``) always raises ``ValueError``.

    ## Observation Space
    ``obs_format="dict"`` (default): a ``Dict`` of 1-D float32 Boxes. ``S`` is
    ``max_size_mb`` (1,000 MB by default), ``H`` is ``max_time_ms`` (100,000 ms) and ``C``
    is ``MAX_COUNT`` (10^6). Values past a bound saturate at it (in practice only a
    request waiting longer than H can). The bounds do not depend on the workload, so
    policies move between configurations of the same ``window``.

    | key | index | feature | unit | range |
    |---|---|---|---|---|
    | ``requests`` | ``7 * j + 0`` | size of the j-th waiting request (oldest first; zeros past the waiting ones) | MB | [0, S] |
    | | ``7 * j + 1`` | relative deadline (0 = none) | ms | [0, H] |
    | | ``7 * j + 2`` | time left to the deadline (negative once missed; 0 = none) | ms | [-H, H] |
    | | ``7 * j + 3`` | time waited | ms | [0, H] |
    | | ``7 * j + 4`` | ideal FCT alone on the idle fabric, with the path delay | ms | [0, H] |
    | | ``7 * j + 5`` | has a deadline | 0/1 | [0, 1] |
    | | ``7 * j + 6`` | fair-share time to completion: the time from now until it would finish if admitted now and the destination link were shared fairly with the flows active there, with no later admission (with the path delay; compare it with time_left_ms; exact for ``scheduler="ps"`` on a big switch until the next admission or arrival when only the destination link is shared, as in gather bursts: a sender link busy with flows to other destinations makes it short) | ms | [0, H] |
    | ``active`` | 0 | the destination's active flows / k | - | [0, 1] |
    | | 1 | their remaining bytes | MB | [0, S] |
    | | 2 | least time left to a deadline among them (0 if none) | ms | [-H, H] |
    | | 3 | time to drain them at the link rate | ms | [0, H] |
    | | 4 | waiting requests (window included) | requests | [0, C] |
    | ``action_mask`` | j | 1 where a request waits at position j | 0/1 | [0, 1] |

    ``requests`` is ``(window * 7,)``, row-major: ``obs["requests"].reshape(window, 7)``
    gives one row per request (columns ``REQUEST_FEATURES``). The terminal observation
    (no decision pending) has zero requests and repeats the last decision's mask.

    ``obs_format="flat"``: one float32 Box of ``window + 5 + 7 * window`` values, in
    the order Gymnasium's ``FlattenObservation`` gives the Dict (keys sorted):
    ``flat[:window]`` is the action mask, ``flat[window:window + 5]`` the active
    summary, ``flat[window + 5:]`` the requests. Normalize only ``flat[window:]``
    (:class:`flowsched.envs.wrappers.NormalizeFeatures` does).
    ``obs_format="rllib"``: RLlib's action-masking convention, ``Dict(action_mask=(window,),
    observations=(5 + 7 * window,))`` with ``observations = flat[window:]``.

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
    * ``hosts``, ``link_gbps``, ``topology``: the fabric (default ``BigSwitch(burst_size + 1, link_gbps)``, 1 Gbps unless given;
      any ``BigSwitch``/``LeafSpine``); with a ``topology``, leave ``hosts`` and ``link_gbps`` out
      or give values that agree with it.
    * ``delay_us``: fixed delay per link, added to FCT (250 us in the thesis).
    * ``scheduler``: how admitted flows share the fabric (a native scheduler name that runs with
      destination admission: not ``pias``, whose thresholds the env does not take, nor ``gtcp:*``
      on the fluid model; refused when the env is made).
    * ``reward``: ``"deadline"``, ``"neg_fct"`` or ``"neg_slowdown"``.
    * ``terminate_missed``: terminate a flow when its deadline passes.
    * ``exact_composition``: every burst holds exactly ``burst_size * weight`` flows of each class.
    * ``trace``: a fixed trace (DataFrame or path) replayed every episode, instead of
      drawn bursts; decisions are then made at every destination in turn.
    * ``masked_action``: ``"oldest"`` (default) or ``"raise"`` (see Action Space).
    * ``model``: ``"fluid"`` (default) or ``"packet"``; ``transport`` and the packet options
      (``ENV_PACKET_OPTIONS``: ``mss_bytes``, ``buffer_bytes``, ``init_cwnd_packets``,
      ``min_rto_s``, ``ack_every_segments``, ``handshake``, ``request_delay_us``, ...; the
      names and defaults of ``flowsched.simulate(model="packet")``) need ``model="packet"``.
    * ``obs_format``: ``"dict"`` (default), ``"flat"`` or ``"rllib"`` (see Observation Space).
    * ``max_size_mb``, ``max_time_ms``: where the byte and time features saturate (S,
      default 1,000 MB; H, default 100,000 ms).
    * ``render_mode``: ``None``, ``"ansi"`` (a text table of the window) or
      ``"rgb_array"`` (an image: one row per window position, the bar's length the
      request's size, green if its fair-share FCT meets its deadline, red if not, grey
      without a deadline; then the active flows / k in orange and the waiting requests).

    Randomness: all of it comes from ``reset(seed=...)``; the same seed gives the same
    episode, and ``reset()`` without a seed continues the seeded stream.

    ## Version History
    * v1, later: ``model="packet"`` and the packet options (the fluid model's episodes are
      unchanged, bit for bit), and the id ``flowsched/TokenScheduling-Artemis-v0`` (before a
      release, its defaults gained RFC 3042 limited transmit, then a 100 ns link jitter:
      ``flowsched.envs.ARTEMIS_PACKET``; ``link_jitter_ns=0`` gives the episodes of
      2026-11-27).
    * v1: every action of the space is valid (a masked action admits the oldest request
      by default; raising is the opt-in ``masked_action="raise"``); finite observation
      bounds (the table above; bytes and times saturate at ``max_size_mb`` and
      +-``max_time_ms``); ``requests`` is
      flat ``(window * 7,)``; the fair-share FCT feature is documented; the terminal
      observation repeats the last decision's mask instead of all zeros;
      ``obs_format``; ``render_mode="rgb_array"`` and ``metadata["render_fps"]``.
    * v0 (removed): ``requests`` of shape ``(window, 6)`` at release (the fair-share FCT
      feature was added later without a version change), unbounded Boxes, a masked
      action raised unless ``masked_action="oldest"``. ``gym.make`` of the v0 id raises
      Gymnasium's ``DeprecatedEnv`` naming v1.

    Example
    -------
    >>> import gymnasium as gym, flowsched
    >>> env = gym.make("flowsched/TokenScheduling-v1")
    >>> obs, info = env.reset(seed=0)
    >>> obs["requests"].shape, int(obs["action_mask"].sum())
    ((35,), 5)
    >>> total, done = 0.0, False
    >>> while not done:
    ...     obs, r, done, trunc, info = env.step(0)   # FIFO
    ...     total += r
    >>> total == info["deadlines_met"]
    True
    """  # noqa: E501  (the docstring's Markdown tables: one row per line, rendered in the docs)

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}

    def __init__(self, *, render_mode: str | None = None, masked_action: str = "oldest", obs_format: str = "dict",
                 max_size_mb: float = MAX_SIZE_MB, max_time_ms: float = MAX_TIME_MS, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        self.obs_format = check_obs_format(type(self).__name__, obs_format, OBS_FORMATS)
        setup = token_config(**kwargs, obs_limits=obs_limits(max_size_mb, max_time_ms), masked_action=masked_action)
        self.masked_action = masked_action
        #: ``"fluid"`` or ``"packet"``: the simulator behind the env.
        self.model: str = kwargs.get("model", "fluid")
        self._cfg, fixed, self._topology, self._delay_us, self._time_origin_s = setup
        # the single env is the native vector env's one-lane form (no autoreset): one
        # code path for both, and its output buffers are bound once, here
        self._native = _fabric.TokenVecEnv(self._cfg, 1, single=True)
        if fixed is not None:
            self._native.set_trace(fixed)
        req, act, mask, self._reward, self._terminated, _, self._masked, stats = self._native.buffers
        self._req, self._act, self._mask, self._stats = req[0], act[0], mask[0], stats[0]  # lane 0's views
        self.window, self.k = self._cfg.window, int(kwargs.get("k", 10))
        self.bounds = TokenBounds(self.window, self.k, float(max_size_mb), float(max_time_ms))
        self.observation_space = self.bounds.observation_space(self.obs_format)
        self.action_space = spaces.Discrete(self.window)
        self._seeded = False

    def _obs(self) -> Any:
        # copies: the buffers are overwritten by the next step (saturated at the bounds by the core)
        if self.obs_format == "dict":
            return {"requests": self._req.copy(), "active": self._act.copy(), "action_mask": self._mask.copy()}
        return format_obs(self.obs_format, self._req, self._act, self._mask.copy())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and not self._seeded:
            seed = int(self.np_random.integers(2**63))
        self._seeded = True
        self._native.reset(None if seed is None else np.array([native_seed(seed)], np.uint64))
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        # range, episode state and masked actions are checked by the core (masked_action)
        a = _as_action(action)
        if not -(2**63) <= a < 2**63:  # past int64: out of range, before the core reads it
            raise ValueError(f"action {a} is out of range of the action space Discrete({self.window}): expected 0 to "
                             f"{self.window - 1} (a position in the window)")
        self._native.step_one(a)
        info: dict[str, Any] = {"masked_action": bool(self._masked[0])}  # on every step: False when unmasked
        terminated = bool(self._terminated[0])
        if terminated:
            info.update(episode_info(dict(zip(STAT_NAMES, self._stats.tolist(), strict=True))))
        return self._obs(), float(self._reward[0]), terminated, False, info

    @property
    def decision_dst(self) -> int:
        """The destination whose admission the pending decision makes."""
        return int(self._native.decision_dst(0))

    def action_masks(self) -> np.ndarray:
        """Valid actions of the pending decision (for sb3-contrib's MaskablePPO); after
        the episode's end, those of its last decision."""
        return self._mask > 0

    def results(self) -> pd.DataFrame:
        """The current episode's flows and their outcome so far, one row per flow, in the
        columns, units and dtypes of :attr:`flowsched.Results.flows` (``FLOW_COLUMNS``;
        times on the trace's clock, as in :func:`flowsched.simulate`; see
        :func:`flowsched.sim.env_flow_table` for ``id``, ``weight``, ``bytes_sent`` and
        ``path_delay_s``)."""
        return env_flow_table(self._native.episode(0), self._topology, self._delay_us, self._time_origin_s)

    def episode(self) -> pd.DataFrame:
        """The same as :meth:`results` (its earlier name)."""
        return self.results()

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium: an unbound RenderFrame TypeVar
        if self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.bounds, self._req, self._act, self._mask)
        head = f"t = {self._native.now(0) * 1e3:.3f} ms, destination {self._native.decision_dst(0)}: "
        return head + render_text(self.bounds, self._req, self._act, self._mask)


def render_text(bounds: TokenBounds, req: np.ndarray, act: np.ndarray, mask: np.ndarray) -> str:
    """The text frame of one observation (flat requests)."""
    k = bounds.k
    req = req.reshape(bounds.window, REQ_FEATURES)
    lines = [
        f"{act[0] * k:.0f}/{k} active ({fmt(act[1], '.3f')} MB left), {act[4]:.0f} waiting",
        "  pos  size MB  deadline ms  left ms  waited ms  ideal ms  fair ms",
    ]
    for j in np.flatnonzero(mask):
        r = req[j]
        lines.append(f"  {j:3d}  {fmt(r[0], '7.3f')}  {fmt(r[1], '11.1f')}  {fmt(r[2], '7.2f')}  {fmt(r[3], '9.2f')}"
                     f"  {fmt(r[4], '8.3f')}  {fmt(r[6], '7.3f')}")
    return "\n".join(lines)


def render_rgb(bounds: TokenBounds, req: np.ndarray, act: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The image of one observation: one row per window position (bar: size on a log
    scale up to S, green if the fair-share FCT meets the deadline, red if not, grey
    without one; a white tick at the share of its deadline left), then the active flows
    / k and the waiting requests / (4 window)."""
    w = bounds.window
    req = req.reshape(w, REQ_FEATURES)
    c = Canvas(w + 2)
    for j in np.flatnonzero(mask):
        r = req[j]
        color = GREY if not r[5] else (GREEN if r[6] <= r[2] else RED)
        c.bar(int(j), 0.0, float(log_frac(r[0], bounds.size_mb)), color)
        if r[5] and r[1] > 0:
            c.tick(int(j), max(float(r[2]), 0.0) / float(r[1]), (235, 235, 235))
    c.bar(w, 0.0, float(act[0]), ORANGE)
    c.bar(w + 1, 0.0, float(act[4]) / (4 * w), BLUE, thin=True)
    return c.img


def episode_info(stats: dict[str, float]) -> dict[str, Any]:
    info = dict(stats)
    n = info["flows_with_deadline"]
    info["deadline_hit_ratio"] = info["deadlines_met"] / n if n else float("nan")
    return info


class TokenSchedulingVecEnv(NativeVecMixin, VectorEnv):
    """``num_envs`` token-scheduling envs stepped together inside the Rust core.

    Same spaces, dynamics and arguments as :class:`TokenSchedulingEnv` (per lane), with
    Gymnasium's next-step autoreset: the call after a lane's episode ended (or was
    truncated by ``max_episode_steps``) resets that lane (its action is ignored) and
    returns the new episode's first observation with reward 0. The whole batch is
    stepped in one native call with the GIL released, split over ``threads`` OS
    threads. Masked actions, the step limit and autoreset are handled in the core, as
    for the single env (which is this env's one-lane form).

    Buffers and ``copy``: observations, rewards, terminated, truncated and masked flags
    are written in place, by every call, into numpy buffers allocated once at
    construction. ``copy=True`` (default) returns copies of the observation arrays;
    ``copy=False`` returns the buffers themselves (``obs_format="dict"`` only; the
    flat formats build a new array each call), valid until the next call overwrites
    them. Rewards, terminated and truncated are always fresh arrays (Gymnasium's
    ``copy`` is about observations).

    Seeding: ``reset(seed=s)`` seeds lane ``i`` with ``s + i`` (a list gives one seed
    per lane); lane ``i`` then follows exactly the episodes of a single env reset with
    the same seed and auto-reset without one. ``infos`` is a dict of arrays: at a
    lane's episode end its ``deadlines_met``, ``flows_with_deadline``,
    ``flows_finished``, ``deadline_hit_ratio`` and ``mean_fct_s``; ``masked_action``
    where a lane's masked action admitted the oldest request (masks ``_<key>``).
    ``call("action_masks")`` and :meth:`action_masks` give the lanes' masks;
    ``render()`` a tuple of per-lane frames (``render_mode`` as the single env's).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 8, *, threads: int = 1, copy: bool = True, masked_action: str = "oldest",
                 obs_format: str = "dict", max_size_mb: float = MAX_SIZE_MB, max_time_ms: float = MAX_TIME_MS,
                 max_episode_steps: int | None = None,
                 render_mode: str | None = None, **kwargs: Any) -> None:
        self.masked_action = masked_action
        #: ``"fluid"`` or ``"packet"``: the simulator behind every lane.
        self.model: str = kwargs.get("model", "fluid")
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        self.obs_format = check_obs_format(type(self).__name__, obs_format, OBS_FORMATS)
        cfg, fixed, _, _, _ = token_config(**kwargs, obs_limits=obs_limits(max_size_mb, max_time_ms),
                                        masked_action=masked_action)
        self.window, self.k = cfg.window, int(kwargs.get("k", 10))
        self.bounds = TokenBounds(self.window, self.k, float(max_size_mb), float(max_time_ms))
        self.num_envs = check_int("num_envs", num_envs)
        self._init_limit(max_episode_steps)
        self._native = _fabric.TokenVecEnv(cfg, self.num_envs, threads=check_int("threads", threads),
                                           max_episode_steps=self._limit)
        if fixed is not None:
            self._native.set_trace(fixed)
        self.copy = check_flag("copy", copy)
        self.single_observation_space = self.bounds.observation_space(self.obs_format)
        self.single_action_space = spaces.Discrete(self.window)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # the buffers the core writes in place, bound once
        (self._req, self._act, self._mask, self._reward, self._terminated, self._truncated, self._masked,
         self._stats) = self._native.buffers
        self._seeded = False

    def _out(self) -> tuple[Any, dict[str, Any]]:
        req, act, mask = self._req, self._act, self._mask  # saturated at the bounds by the core
        if self.obs_format != "dict":
            return format_obs(self.obs_format, req, act, mask.copy()), {}
        if self.copy:
            return {"requests": req.copy(), "active": act.copy(), "action_mask": mask.copy()}, {}
        return {"requests": req, "active": act, "action_mask": mask}, {}

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is None and not self._seeded:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        seeds = None if seed is None else np.asarray(
            [native_seed(x) for x in lane_seeds(seed, self.num_envs) if x is not None], dtype=np.uint64)
        self._seeded = True
        self._native.reset(seeds)
        return self._out()

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers (shape ({self.num_envs},)), got dtype "
                             f"{a.dtype} and shape {a.shape}")
        if a.dtype != np.int64 or not a.flags.c_contiguous:
            a = np.ascontiguousarray(a, dtype=np.int64)
        # range, masked actions (masked_action), autoreset and the step limit: in the core
        any_terminated, any_masked = self._native.step(a)
        obs, _ = self._out()
        terminated, truncated = self._terminated.copy(), self._truncated.copy()
        infos = self._infos(terminated) if any_terminated else {}
        if any_masked:
            infos["masked_action"], infos["_masked_action"] = self._masked.copy(), self._masked.copy()
        return obs, self._reward.copy(), terminated, truncated, infos

    def _infos(self, done: np.ndarray) -> dict[str, Any]:
        stats = self._stats
        infos: dict[str, Any] = {}
        for j, name in enumerate(STAT_NAMES):
            infos[name] = np.where(done, stats[:, j], 0.0)
            infos["_" + name] = done.copy()
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = stats[:, 0] / stats[:, 1]
        infos["deadline_hit_ratio"] = np.where(done, ratio, 0.0)
        infos["_deadline_hit_ratio"] = done.copy()
        return infos

    def reset_done(self) -> Any:
        """Resets now the lanes whose episode just ended or was truncated (same-step
        autoreset, used by the SB3 adapter) and returns the observation of the batch."""
        self._native.reset_done()
        return self._out()[0]

    def action_masks(self) -> np.ndarray:
        """(num_envs, window) booleans: the valid actions of every lane."""
        return self._mask > 0

    def _lane_call(self, name: str, lane: int, *args: Any, **kwargs: Any) -> Any:
        if name == "action_masks":
            return self._mask[lane] > 0
        if self.render_mode is None:
            return None
        req, act, mask = self._req[lane], self._act[lane], self._mask[lane]
        if self.render_mode == "rgb_array":
            return render_rgb(self.bounds, req, act, mask)
        return f"env {lane}: " + render_text(self.bounds, req, act, mask)
