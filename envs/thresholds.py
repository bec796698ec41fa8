"""Priority-queue threshold tuning (PIAS / multi-level feedback queues)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np
import pandas as pd
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flowsched import workloads as wl
from flowsched.checks import check_int, check_number
from flowsched.envs._common import (
    BLUE,
    GREY,
    ORANGE,
    RED,
    RENDER_FPS,
    RENDER_MODES,
    Canvas,
    NativeVecMixin,
    check_box_action,
    check_lane_actions,
    check_render_mode,
    env_fabric,
)
from flowsched.envs.token import lane_seeds, packet_native
from flowsched.sim import (
    check_sharing,
    flow_table,
    native_packet_simulator,
    native_simulator,
    prepare_trace,
    simulate,
)
from flowsched.topology import Topology

if TYPE_CHECKING:
    from flowsched import _fabric

#: upper edges (bytes) of the size bins of the observation's histogram; the last bin is open
SIZE_BIN_EDGES = (1e4, 1e5, 1e6, 1e7, 1e8)
N_BINS = len(SIZE_BIN_EDGES) + 1
#: where the observation's mean slowdowns and load estimate saturate
MAX_SLOWDOWN = 1000.0
MAX_LOAD = 4.0
#: The packet model's transports the env runs PIAS over: both use the ports' K
#: strict-priority queues that PIAS tags packets for (docs/packet.md); ``dctcp`` is the
#: default (PIAS's own, and the packet model's default for ``pias``).
PACKET_TRANSPORTS = ("dctcp", "tcp")


def thresholds_packet_native(model: str, topology: Topology, transport: str | None,
                             options: dict[str, Any]) -> dict[str, Any] | None:
    """Checks the packet options of a thresholds env as the token env's
    (:func:`flowsched.envs.token.packet_native`: unknown names, bad values, packet options
    with the fluid model) and besides: transports without PIAS's priority queues and the
    admission delays raise naming them. None for the fluid model."""
    if model == "packet":
        if transport is not None and transport not in PACKET_TRANSPORTS:
            raise ValueError(f"transport {transport!r}: the thresholds env sets PIAS's demotion thresholds, which tag "
                             "packets for the ports' K strict-priority queues; only the window transports run "
                             f"those queues under pias: use one of {', '.join(PACKET_TRANSPORTS)} (default dctcp)")
        for name in ("request_delay_us", "grant_delay_us"):
            if options.get(name):
                raise ValueError(f"{name} is a delay of destination admission; the thresholds env has none")
    return packet_native(model, topology, transport, options, env="thresholds", admission=False)


def thresholds_from_action(action: np.ndarray, lo_bytes: float, hi_bytes: float) -> list[float]:
    """Demotion thresholds (bytes, strictly increasing) of an action in [-1, 1]^(K-1).

    Each action value is a position on a log scale from ``lo_bytes`` (-1) to ``hi_bytes``
    (+1); the thresholds are these positions in increasing order. Equal positions mean
    an empty queue between them, which is the same schedule as one threshold: they are
    merged (the simulator takes strictly increasing thresholds).
    """
    a = np.asarray(action, dtype=np.float64)
    if not np.isfinite(a).all() or (np.abs(a) > 1.0).any():
        raise ValueError("threshold actions must be finite and within [-1, 1] (the bounds; nothing is clipped), got "
                         f"{a.tolist()}")
    lo, hi = np.log10(lo_bytes), np.log10(hi_bytes)
    th = 10.0 ** (lo + (hi - lo) * (np.sort(a) + 1.0) / 2.0)
    return [float(x) for x in np.unique(th)]


def action_from_thresholds(thresholds_bytes: list[float] | np.ndarray, lo_bytes: float, hi_bytes: float) -> np.ndarray:
    """The action whose thresholds are ``thresholds_bytes`` (inverse of :func:`thresholds_from_action`)."""
    th = np.asarray(thresholds_bytes, dtype=np.float64)
    if (th < lo_bytes * (1 - 1e-12)).any() or (th > hi_bytes * (1 + 1e-12)).any():
        raise ValueError(f"thresholds {th.tolist()} outside the env's range [{lo_bytes}, {hi_bytes}] bytes")
    lo, hi = np.log10(lo_bytes), np.log10(hi_bytes)
    return np.clip(2.0 * (np.log10(th) - lo) / (hi - lo) - 1.0, -1.0, 1.0).astype(np.float32)  # rounding only


def reference_thresholds(workload: Any, load: float) -> list[float]:
    """PIAS thresholds of the PIAS-NS2 tables (8 queues) for ``workload`` at the nearest load
    (a load the tables do not cover raises, saying to give ``reference=``)."""
    try:
        return list(wl.pias_thresholds(workload, load, nearest=True))
    except ValueError as e:
        raise ValueError(f"{e}; the default reference thresholds come from that table: for another load or "
                         "workload give reference=[...] (n_queues - 1 thresholds in bytes, increasing)") from e


class QueueThresholdsEnv(gym.Env[np.ndarray, np.ndarray]):
    """Tuning the demotion thresholds of K strict-priority queues (PIAS, multi-level
    feedback queues; the threshold problem of the pFabric paper, section 6.1, and AuTO).

    Every port has ``n_queues`` strict-priority queues; a flow starts in the highest and
    is demoted after sending each threshold's bytes, FIFO within a queue (flowsched's
    ``pias`` scheduler). At each step the agent sets the K-1 thresholds for the next
    control interval: ``interval_flows`` flows ending, or ``interval_s`` of simulated
    time, whichever comes first. Performance is sensitive to the thresholds and to the
    load and size distribution, which is what the agent must track.

    ## Action Space
    ``Box(-1, 1, (n_queues - 1,), float32)``: each value is a threshold's position on a
    log scale from ``min_threshold_bytes`` (-1) to ``max_threshold_bytes`` (+1); the
    thresholds are the positions in increasing order (equal ones merge: an empty
    queue). Every action of the space is valid; an action outside it (a value outside
    [-1, 1], NaN, or a wrong shape) raises ``ValueError`` naming the bounds (nothing is
    clipped). :func:`thresholds_from_action` and :func:`action_from_thresholds` convert.

    ## Observation Space
    ``Box(float32)`` of ``2 * 6 + 1 + (n_queues - 1)`` values about the flows that ended
    in the last interval (zeros before the first):

    | index | feature | unit | range |
    |---|---|---|---|
    | 0 to 5 | share of them in each size bin (< 10 KB, < 100 KB, < 1 MB, < 10 MB, < 100 MB, larger) | - | [0, 1] |
    | 6 to 11 | their mean slowdown per bin (0 for an empty bin; saturates at 1,000) | - | [0, 1000] |
    | 12 | the offered load: their bytes over the interval's duration and the hosts' capacity (saturates at 4) | - | [0, 4] |
    | 13 to 13 + K - 2 | the current thresholds' positions on the action's log scale | - | [0, 1] |

    ## Rewards
    Minus the interval's mean FCT divided by the mean FCT of the same flows in a
    reference run of the same trace with fixed PIAS thresholds (``reference``): -1 is
    as good as PIAS, above -1 better. 0 for an interval in which no flow ended.

    ## Episode End
    Terminates when every flow of the episode's trace (``n_flows`` Poisson all-to-all
    flows) has ended. ``info`` then holds ``mean_fct_s`` and ``reference_mean_fct_s``
    over the whole episode.

    ## Arguments
    * ``workload``, ``load``, ``n_flows``: the episode's trace (``load`` may be a
      ``(low, high)`` range, drawn uniformly per episode).
    * ``hosts``, ``link_gbps``, ``topology``: the fabric (default ``BigSwitch(16, 10)``). With a
      ``topology``, ``load`` is relative to its host links: leave ``hosts`` and ``link_gbps``
      out, or give values that agree with it; a fabric whose hosts run at several rates needs
      ``link_gbps``, the rate the load refers to.
    * ``n_queues``: K (default 8, as in PIAS).
    * ``interval_flows``, ``interval_s``: the control interval.
    * ``reference``: thresholds of the reference run (default: the PIAS table of the
      workload at the nearest load, for loads the table covers, 0.45 to 0.95; needs
      ``n_queues = 8`` unless given).
    * ``min_threshold_bytes``, ``max_threshold_bytes``: the action's scale.
    * ``trace``: a fixed trace replayed every episode.
    * ``pias_sharing``: how the flows of one queue share it, in the episode's run and the
      reference run: ``"fifo"`` (default: one after another, the M/G/1 model's assumption
      that ``pias_optimal`` is tuned for) or ``"fair"`` (max-min fair sharing inside a
      queue, as under PIAS's DCTCP); see :func:`flowsched.simulate`. Fluid model only
      (default ``"fifo"``); refused on the packet model.
    * ``model``: ``"fluid"`` (default) or ``"packet"``: the episode and the reference run
      on the packet model (``flowsched.simulate(model="packet")``: PIAS tags each packet at
      its sender by the flow's bytes sent, for the ports' K strict-priority queues).
      ``transport`` (``"dctcp"``, the default, or ``"tcp"``: the transports with PIAS's
      priority queues; others raise saying why) and the packet options
      (``ENV_PACKET_OPTIONS`` but the admission delays: ``mss_bytes``, ``buffer_bytes``,
      ``queue_reserve_bytes``, ``min_rto_s``, ...) need ``model="packet"``. On packets a
      step's thresholds tag the packets sent from then on (packets already queued keep
      their tags); the observation means the same (``ideal_fct_s`` is the fluid model's
      definition, so slowdowns include per-packet headers and serialization); merged
      thresholds leave empty queues (the ports keep K); see docs/envs/thresholds.md.

    * ``render_mode``: ``None``, ``"ansi"`` (one line: time, flows ended, thresholds) or
      ``"rgb_array"`` (the size histogram in blue, the mean slowdowns per bin in red on
      a log scale, the load in orange, the thresholds as ticks on the log scale).

    Stepping simulates ``interval_flows`` flows' worth of the fabric, so steps are
    coarse: the vector env steps its lanes in turn.

    ## Version History
    * v1, later: ``model="packet"``, ``transport`` and the packet options (the fluid
      model's episodes are unchanged; ``pias_sharing`` defaults to None, which is the
      fluid model's ``"fifo"`` as before).
    * v1: finite observation bounds (the table above: slowdowns saturate at 1,000, the
      load at 4); actions outside the bounds raise with the bounds named (as in v0);
      ``render_mode="rgb_array"`` and ``metadata["render_fps"]``; the vector env takes
      ``max_episode_steps`` and ``render_mode``.
    * v0 (removed): ``Box(0, inf)``. ``gym.make`` of the v0 id raises Gymnasium's
      ``DeprecatedEnv`` naming v1.

    Example
    -------
    >>> import gymnasium as gym, flowsched
    >>> from flowsched import baselines
    >>> env = gym.make("flowsched/QueueThresholds-v1", n_flows=1000)
    >>> obs, info = env.reset(seed=0)
    >>> policy = baselines.make("thresholds", "pias_static", workload="websearch", load=0.8)
    >>> done = False
    >>> while not done:
    ...     action, _ = policy.predict(obs)
    ...     obs, reward, done, truncated, info = env.step(action)
    >>> round(reward, 3)   # the PIAS table's own thresholds: as good as the reference
    -1.0
    """  # noqa: E501  (the docstring's Markdown tables: one row per line, rendered in the docs)

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS}
    observation_space: spaces.Box
    action_space: spaces.Box

    def __init__(
        self,
        *,
        workload: Any = "websearch",
        load: float | tuple[float, float] = 0.8,
        n_flows: int = 5000,
        hosts: int | None = None,
        link_gbps: float | None = None,
        topology: Topology | None = None,
        n_queues: int = 8,
        interval_flows: int = 500,
        interval_s: float | None = None,
        reference: list[float] | None = None,
        min_threshold_bytes: float = 1e3,
        max_threshold_bytes: float = 1e9,
        trace: pd.DataFrame | str | None = None,
        pias_sharing: str | None = None,
        render_mode: str | None = None,
        model: str = "fluid",
        transport: str | None = None,
        **packet_options: Any,
    ) -> None:
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        self.topology, link_gbps = env_fabric("the thresholds env", hosts, link_gbps, topology, 16, 10.0)
        thresholds_packet_native(model, self.topology, transport, packet_options)
        #: ``"fluid"`` or ``"packet"``: the simulator behind the env.
        self.model = model
        self.transport = transport
        self.packet_options = dict(packet_options)
        if model == "packet":
            if pias_sharing is not None:
                raise ValueError(f"pias_sharing={pias_sharing!r} is a fluid-model option: on the packet model the "
                                 "flows of one queue share it by their transport's congestion control")
        elif pias_sharing is None:
            pias_sharing = "fifo"
        if pias_sharing is not None:
            pias_sharing = check_sharing("pias_sharing", pias_sharing, "pias")
        self.pias_sharing = pias_sharing
        n_queues, interval_flows = check_int("n_queues", n_queues, 2), check_int("interval_flows", interval_flows)
        n_flows = check_int("n_flows", n_flows)
        if interval_s is not None:
            interval_s = check_number("interval_s", interval_s, low=0.0, low_open=True)
        lo = check_number("min_threshold_bytes", min_threshold_bytes, low=0.0, low_open=True)
        hi = check_number("max_threshold_bytes", max_threshold_bytes, low=0.0, low_open=True)
        if not lo < hi:
            raise ValueError(f"need min_threshold_bytes < max_threshold_bytes, got {min_threshold_bytes!r}, "
                             f"{max_threshold_bytes!r}")
        loads = list(load) if isinstance(load, (tuple, list, np.ndarray)) else [load]
        if len(loads) not in (1, 2):
            raise ValueError(f"load must be a number or a range (low, high), got {load!r}")
        checked = [check_number("load", x, low=0.0, low_open=True, high=1.0, high_open=True) for x in loads]
        self._loads = (checked[0], checked[-1])
        if not self._loads[0] <= self._loads[1]:
            raise ValueError(f"load: a range (low, high) needs low <= high, got {load!r}")
        self.workload = workload
        self.dist = wl.get_distribution(workload) if trace is None else None
        self.link_gbps, self.n_flows, self.n_queues = float(link_gbps), int(n_flows), int(n_queues)
        self.interval_flows, self.interval_s = int(interval_flows), interval_s
        self.lo, self.hi = lo, hi
        if reference is None:
            if n_queues != 8 or not isinstance(workload, str):
                raise ValueError("the default reference is the 8-queue PIAS table of a named workload: give "
                                 "reference=[...]")
            reference = reference_thresholds(workload, float(np.mean(self._loads)))
        if len(reference) != n_queues - 1:
            raise ValueError(f"reference needs {n_queues - 1} thresholds, got {len(reference)}")
        self.reference = [float(x) for x in reference]
        action_from_thresholds(self.reference, self.lo, self.hi)  # in range, or a clear error now
        self.fixed_trace = None if trace is None else prepare_trace(trace, self.topology, self.link_gbps)[0]
        if model == "packet":  # the core's checks of the options (and of the reference), now
            probe = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e3]})
            native_packet_simulator(prepare_trace(probe, self.topology, self.link_gbps)[0], self.topology, "pias",
                                    transport=transport, pias_thresholds_bytes=self.reference, **packet_options)
        n_obs = 2 * N_BINS + 1 + (n_queues - 1)
        high = np.concatenate([np.ones(N_BINS), np.full(N_BINS, MAX_SLOWDOWN), [MAX_LOAD], np.ones(n_queues - 1)])
        self.observation_space = spaces.Box(np.zeros(n_obs, np.float32), high.astype(np.float32), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (n_queues - 1,), dtype=np.float32)
        self._sim: _fabric.Simulator | _fabric.PacketSimulator | None = None
        self._thresholds = self.reference
        self._last_obs = np.zeros(n_obs, np.float32)

    def _draw_trace(self) -> pd.DataFrame:
        if self.fixed_trace is not None:
            return self.fixed_trace
        load = float(self.np_random.uniform(*self._loads)) if self._loads[0] < self._loads[1] else self._loads[0]
        if self.dist is None:  # set whenever no fixed trace is
            raise RuntimeError("QueueThresholdsEnv has neither a trace nor a workload")
        tr = wl.poisson_all_to_all(
            self.dist, load, self.topology.n_hosts, self.link_gbps, self.n_flows, seed=self.np_random
        )
        return prepare_trace(tr, self.topology, self.link_gbps)[0]

    def _obs(self, ended: np.ndarray, dt: float) -> np.ndarray:
        hist, slow = np.zeros(N_BINS), np.zeros(N_BINS)
        load = 0.0
        if ended.size:
            size = self._trace["size_bytes"].to_numpy()[ended]
            sd = self._fct[ended] / self._ideal[ended]
            b = np.searchsorted(SIZE_BIN_EDGES, size, side="right")
            cnt = np.bincount(b, minlength=N_BINS)
            hist = cnt / ended.size
            slow = np.divide(np.bincount(b, weights=sd, minlength=N_BINS), cnt, out=np.zeros(N_BINS), where=cnt > 0)
            cap = float(np.sum(self.topology.native_config()["host_gbps"])) * 1e9 / 8
            load = float(size.sum() / (cap * dt)) if dt > 0 else 0.0
        pos = (np.log10(self._thresholds) - np.log10(self.lo)) / (np.log10(self.hi) - np.log10(self.lo))
        pos = np.pad(pos, (0, self.n_queues - 1 - len(pos)), mode="edge")  # merged thresholds repeat
        obs = np.concatenate([hist, slow, [load], pos]).astype(np.float32)
        np.clip(obs, self.observation_space.low, self.observation_space.high, out=obs)
        self._last_obs = obs.copy()
        return obs

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._trace = self._draw_trace()
        self._thresholds = self.reference
        # the first control interval starts at the first arrival (the trace is on the
        # simulator's clock, which starts at the whole second at or below it: a trace
        # starting at 0.5 s spent its first 0.5 s of interval before any flow)
        self._t_start = float(self._trace["arrival_s"].min())
        if self.model == "packet":
            opts = {"transport": self.transport, **self.packet_options}
            ref = simulate(self._trace, self.topology, "pias", model="packet", pias_thresholds_bytes=self.reference,
                           **opts)
            self._sim = native_packet_simulator(self._trace, self.topology, "pias",
                                                pias_thresholds_bytes=self.reference, pause_on_flow_change=True,
                                                **opts)
            # thresholds above every flow's size never demote: they pad merged ones (below)
            self._pad_from = max(self.hi, float(self._trace["size_bytes"].max()))
        else:
            ref = simulate(self._trace, self.topology, "pias", pias_thresholds_bytes=self.reference,
                           pias_sharing=self.pias_sharing)
            self._sim = native_simulator(self._trace, self.topology, "pias", pias_thresholds_bytes=self.reference,
                                         pias_sharing=self.pias_sharing, pause_on_flow_change=True)
        self._ref_fct = ref.flows["fct_s"].to_numpy()
        self._ideal = ref.flows["ideal_fct_s"].to_numpy()
        self._fct = np.full(len(self._trace), np.nan)
        self._done = False
        return self._obs(np.zeros(0, np.int64), 0.0), {}

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._sim is None or self._done:
            raise ValueError("the episode is over (or never started): call reset()")
        check_box_action(action, self.action_space, "action (one threshold position per queue boundary)")
        a = np.asarray(action)
        self._thresholds = thresholds_from_action(a, self.lo, self.hi)
        if self.model == "packet":  # whole bytes (the packet core counts bytes; see _native_thresholds)
            self._thresholds = [float(x) for x in np.unique(np.round(self._thresholds))]
        self._sim.set_pias_thresholds(self._native_thresholds(self._thresholds))
        t0 = max(self._sim.now, self._t_start)
        until = np.inf if self.interval_s is None else t0 + self.interval_s
        kind, ended = self._sim.run_until_ended(self.interval_flows, until)
        if ended.size:
            self._fct[ended] = self._sim.results()["fct_s"][ended]
        self._done = kind == "done" or bool(np.isfinite(self._fct).all())
        reward = -float(self._fct[ended].mean() / self._ref_fct[ended].mean()) if ended.size else 0.0
        info: dict[str, Any] = {"thresholds_bytes": self._thresholds, "flows_ended": int(ended.size)}
        if self._done:
            info["mean_fct_s"] = float(np.nanmean(self._fct))
            info["reference_mean_fct_s"] = float(self._ref_fct.mean())
        return self._obs(ended, self._sim.now - t0), reward, self._done, False, info

    def _native_thresholds(self, th: list[float]) -> list[float]:
        """The thresholds the simulator takes. On the packet model an action's thresholds
        are first rounded to whole bytes (the core counts whole bytes: without it the
        float32 round trip of :func:`action_from_thresholds` would move a threshold that
        is a whole number of packets, as the PIAS tables' are, one packet later). The
        fluid model takes fewer when equal
        positions merged; the packet model's ports keep their K queues, so merged
        thresholds are padded with ones above every flow's size (2, 4, ... times the
        larger of ``max_threshold_bytes`` and the largest flow): no flow reaches them,
        so the queues they bound stay empty, the same schedule."""
        missing = self.n_queues - 1 - len(th)
        if self.model != "packet" or missing == 0:
            return th
        return th + [self._pad_from * 2.0 ** (j + 1) for j in range(missing)]

    def results(self) -> pd.DataFrame:
        """Per-flow outcome of the current episode so far (trace order), in the columns,
        units and dtypes of :attr:`flowsched.Results.flows` (``FLOW_COLUMNS``, on the
        trace's clock), then ``reference_fct_s``: the flow's FCT in the reference run (PIAS
        with the ``reference`` thresholds)."""
        if self._sim is None:
            raise ValueError("call reset() first")
        out = flow_table(self._trace, self._sim.results(), float(self._trace.attrs.get("time_origin_s", 0.0)))
        out["reference_fct_s"] = self._ref_fct
        return out

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]  # gymnasium: an unbound RenderFrame TypeVar
        if self.render_mode is None or self._sim is None:
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self._last_obs)
        th = ", ".join(f"{x / 1e3:.1f}" for x in self._thresholds)
        done = int(np.isfinite(self._fct).sum())
        return f"t = {self._sim.now * 1e3:.3f} ms, {done}/{len(self._fct)} flows ended, thresholds (KB): {th}"


def render_rgb(obs: np.ndarray) -> np.ndarray:
    """Rows: per size bin its share (blue) and mean slowdown (red, log scale up to
    MAX_SLOWDOWN); the load over MAX_LOAD (orange); the thresholds' positions (ticks)."""
    c = Canvas(2 * N_BINS + 2)
    for b in range(N_BINS):
        c.bar(2 * b, 0.0, float(obs[b]), BLUE)
        sd = float(obs[N_BINS + b])
        if sd > 0:
            c.bar(2 * b + 1, 0.0, float(np.log1p(sd) / np.log1p(MAX_SLOWDOWN)), RED, thin=True)
    c.bar(2 * N_BINS, 0.0, float(obs[2 * N_BINS]) / MAX_LOAD, ORANGE)
    for x in obs[2 * N_BINS + 1:]:
        c.tick(2 * N_BINS + 1, float(x), GREY)
    return c.img


class QueueThresholdsVecEnv(NativeVecMixin, VectorEnv):
    """``num_envs`` :class:`QueueThresholdsEnv` lanes with next-step autoreset, lane ``i``
    seeded ``seed + i`` (so it reproduces a single env with that seed). A step simulates
    a whole control interval per lane, so the lanes are stepped in turn (each lane's
    simulation runs in the Rust core with the GIL released); ``infos`` holds, at a
    lane's episode end, its ``mean_fct_s`` and ``reference_mean_fct_s`` (masks ``_<key>``).
    ``max_episode_steps`` truncates lanes (they reset at the next step); ``call(name)``
    calls every lane's env; ``render()`` gives a tuple of per-lane frames.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": RENDER_FPS, "autoreset_mode": AutoresetMode.NEXT_STEP}
    single_observation_space: spaces.Box
    single_action_space: spaces.Box
    observation_space: spaces.Box
    action_space: spaces.Box

    def __init__(self, num_envs: int = 4, *, max_episode_steps: int | None = None, render_mode: str | None = None,
                 **kwargs: Any) -> None:
        self.render_mode = check_render_mode(type(self).__name__, render_mode)
        n = check_int("num_envs", num_envs)
        self.envs = [QueueThresholdsEnv(render_mode=render_mode, **kwargs) for _ in range(n)]
        self.num_envs = len(self.envs)
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = cast(spaces.Box, batch_space(self.single_observation_space, self.num_envs))
        self.action_space = cast(spaces.Box, batch_space(self.single_action_space, self.num_envs))
        self._needs_reset = np.zeros(self.num_envs, bool)
        self._init_limit(max_episode_steps)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs = np.stack([e.reset(seed=s)[0] for e, s in zip(self.envs, lane_seeds(seed, self.num_envs), strict=True)])
        self._needs_reset[:] = False
        self._steps[:] = 0
        self._obs = obs.copy()
        return obs, {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        check_lane_actions(actions, self.action_space, ~self._needs_reset,  # before any lane moves
                           "action (one threshold position per queue boundary)")
        a = np.asarray(actions)
        obs, rew = np.zeros(self.observation_space.shape, np.float32), np.zeros(self.num_envs)
        term = np.zeros(self.num_envs, bool)
        infos: dict[str, Any] = {}
        was_reset = self._needs_reset.copy()
        for i, e in enumerate(self.envs):
            if self._needs_reset[i]:
                obs[i], _ = e.reset()
                continue
            obs[i], rew[i], term[i], _, info = e.step(a[i])
            for key in ("mean_fct_s", "reference_mean_fct_s"):
                if key in info:
                    infos.setdefault(key, np.zeros(self.num_envs))[i] = info[key]
                    infos.setdefault("_" + key, np.zeros(self.num_envs, bool))[i] = True
        trunc = self._count_steps(was_reset, term)
        self._needs_reset = term | trunc
        self._obs = obs
        return obs.copy(), rew, term, trunc, infos

    def reset_done(self) -> np.ndarray:
        """Resets now the lanes whose episode just ended or was truncated (same-step
        autoreset, for the SB3 adapter) and returns the observation of the batch."""
        for i in np.flatnonzero(self._needs_reset):
            self._obs[i], _ = self.envs[i].reset()
            self._steps[i] = 0
        self._needs_reset[:] = False
        return self._obs.copy()

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Calls ``name`` on every lane's env (or reads the attribute), as ``SyncVectorEnv`` does."""
        out = []
        for e in self.envs:
            attr = getattr(e, name)
            out.append(attr(*args, **kwargs) if callable(attr) else attr)
        return tuple(out)
