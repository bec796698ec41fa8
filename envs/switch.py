"""Priority scheduling in the switch (pFabric / aSCC), single and vectorized."""
from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import pandas as pd
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from flowsched import _fabric
from flowsched import workloads as wl
from flowsched.envs.token import lane_seeds, native_trace
from flowsched.topology import BigSwitch, Topology

FLOW_FEATURES, SWITCH_STATS = _fabric.switch_layout()
FLOW_FEATURE_NAMES = ("sent_mb", "remaining_mb", "size_visible", "age_ms", "complete", "flows_at_src", "flows_at_dst",
                      "time_left_ms", "has_deadline")
REWARDS = ("fct", "slowdown")
assert len(FLOW_FEATURE_NAMES) == FLOW_FEATURES

_INF = np.float32(np.inf)


def _observation_space(max_flows: int) -> spaces.Dict:
    low = np.tile(np.array([0, 0, 0, 0, 0, 0, 0, -_INF, 0], np.float32), (max_flows, 1))
    high = np.tile(np.array([_INF, _INF, 1, _INF, 1, _INF, _INF, _INF, 1], np.float32), (max_flows, 1))
    return spaces.Dict({
        "flows": spaces.Box(low, high, dtype=np.float32),
        "flow_mask": spaces.Box(0.0, 1.0, (max_flows,), dtype=np.float32),
    })


class _EpisodeSource:
    """Draws each episode's trace: Poisson all-to-all arrivals of ``workload`` at ``load``."""

    def __init__(self, workload: Any, load: float, n_flows: int, topology: Topology, link_gbps: float,
                 size_known: bool, alpha: float, trace: pd.DataFrame | str | None) -> None:
        self.topology = topology
        self.fixed = None if trace is None else native_trace(trace, topology, link_gbps)[0]
        if self.fixed is None:
            if not 0 < load < 1:
                raise ValueError(f"load must be in (0, 1), got {load!r}")
            if isinstance(n_flows, bool) or not isinstance(n_flows, (int, np.integer)) or n_flows < 1:
                raise ValueError(f"n_flows must be an integer >= 1, got {n_flows!r}")
            if not (np.isfinite(alpha) and alpha >= 0):
                raise ValueError(f"alpha must be >= 0, got {alpha!r}")
            self.dist = wl.get_distribution(workload)
        self.load, self.n_flows, self.link_gbps = load, int(n_flows), link_gbps
        self.size_known, self.alpha = bool(size_known), float(alpha)

    def draw(self, rng: np.random.Generator) -> _fabric.Trace:
        if self.fixed is not None:
            return self.fixed
        tr = wl.poisson_all_to_all(self.dist, self.load, self.topology.n_hosts, self.link_gbps, self.n_flows, seed=rng)
        if self.alpha > 0:
            tr = wl.add_data_span(tr, self.alpha, self.link_gbps)
        if not self.size_known:
            tr = tr.assign(size_known=False)
        return native_trace(tr, self.topology, self.link_gbps)[0]


def switch_config(
    workload: Any = "websearch",
    load: float = 0.8,
    n_flows: int = 500,
    hosts: int = 16,
    link_gbps: float = 10.0,
    topology: Topology | None = None,
    max_flows: int = 128,
    decision_interval_s: float | None = None,
    reward: str = "fct",
    size_known: bool = True,
    alpha: float = 0.0,
    delay_us: float = 0.0,
    terminate_missed: bool = False,
    trace: pd.DataFrame | str | None = None,
) -> tuple[_fabric.SwitchConfig, _EpisodeSource]:
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; known: {', '.join(REWARDS)}")
    if isinstance(max_flows, bool) or not isinstance(max_flows, (int, np.integer)) or max_flows < 1:
        raise ValueError(f"max_flows must be an integer >= 1, got {max_flows!r}")
    if not (np.isfinite(delay_us) and delay_us >= 0):
        raise ValueError(f"delay_us must be >= 0, got {delay_us!r}")
    topology = BigSwitch(hosts, link_gbps) if topology is None else topology
    source = _EpisodeSource(workload, load, n_flows, topology, link_gbps, size_known, alpha, trace)
    cfg = _fabric.SwitchConfig(
        **topology._native(), max_flows=int(max_flows),
        decision_interval_s=None if decision_interval_s is None else float(decision_interval_s), reward=reward,
        delay_per_hop_s=float(delay_us) * 1e-6, terminate_missed=bool(terminate_missed),
    )
    return cfg, source


def _as_scores(action: Any, shape: tuple[int, ...]) -> np.ndarray:
    a = np.asarray(action)
    if a.shape != shape or a.dtype.kind not in "fiu":
        raise ValueError(f"action must be {shape} numbers (one score per flow slot), got dtype {a.dtype} and shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float32)


class SwitchSchedulingEnv(gym.Env[dict[str, np.ndarray], np.ndarray]):
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
    observation's, oldest flow first). Only the order of the scores matters, so any
    finite scores are accepted as given (none is clipped or rescaled); scores of slots
    past the flows in the system are ignored. A NaN or infinite score of a flow, or a
    wrong shape, raises ``ValueError``. Flows past ``max_flows`` (the youngest, when
    more are in the system) are served after all others, sharing fairly.

    ## Observation Space
    ``Dict`` of float32 arrays:

    | key | shape | feature (unit) |
    |---|---|---|
    | ``flows`` | (max_flows, 9) | per flow in the system, oldest first, zeros past them: bytes sent (MB), remaining bytes (MB; 0 while the size is hidden), size visible (0/1), age (ms), all data available (0/1), flows in the system at its source host, at its destination host, time left to its deadline (ms, 0 = none), has a deadline (0/1) |
    | ``flow_mask`` | (max_flows,) | 1 where a slot holds a flow |

    This is what a switch can know: sizes only when flows announce them (``size_known``)
    or once all their data is there (aSCC's completeness), bytes sent, age, contention.

    ## Rewards
    ``"fct"`` (default): minus the number of flows in the system times the elapsed
    simulated time in ms since the last decision, so an episode's return is minus the
    total flow time, sum of (finish - arrival), in ms. ``"slowdown"``: each flow in the
    system weighs 1 / its ideal FCT (without the path delay), so the return is minus
    the sum of slowdowns.

    ## Episode End
    Terminates when every flow of the episode has finished (or was terminated); no
    truncation unless ``max_episode_steps`` adds a ``TimeLimit``. ``info`` then holds
    ``flows_finished``, ``flow_time_s`` and ``mean_fct_s`` (without path delays).

    ## Arguments
    * ``workload``: flow-size distribution (name or ``SizeDistribution``; default web search).
    * ``load``, ``n_flows``: Poisson all-to-all load and flows per episode.
    * ``hosts``, ``link_gbps``, ``topology``: the fabric (default ``BigSwitch(16, 10)``).
    * ``max_flows``: flow slots in the observation and action.
    * ``decision_interval_s``: also decide at least this often (simulated seconds).
    * ``reward``: ``"fct"`` or ``"slowdown"``.
    * ``size_known``: False hides every size until the flow's data is complete (aSCC).
    * ``alpha``: aSCC's data spacing: a flow's bytes arrive over ``alpha`` times its
      transmission time at line rate.
    * ``delay_us``, ``terminate_missed``: as in ``flowsched.simulate``.
    * ``trace``: a fixed trace replayed every episode instead of drawn ones.

    All randomness comes from ``reset(seed=...)``.

    Example
    -------
    >>> import gymnasium as gym, flowsched
    >>> from flowsched import baselines
    >>> env = gym.make("flowsched/SwitchScheduling-v0", n_flows=100)
    >>> obs, info = env.reset(seed=0)
    >>> policy = baselines.make("switch", "srpt")
    >>> done = False
    >>> while not done:
    ...     scores, _ = policy.predict(obs)
    ...     obs, reward, done, truncated, info = env.step(scores)
    >>> info["flows_finished"]
    100.0
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, *, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        cfg, self._source = switch_config(**kwargs)
        self.max_flows = cfg.max_flows
        self._native = _fabric.SwitchEnv(cfg)
        self.observation_space = _observation_space(self.max_flows)
        self.action_space = spaces.Box(-1.0, 1.0, (self.max_flows,), dtype=np.float32)
        self._last: dict[str, np.ndarray] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._native.set_next_trace(self._source.draw(self.np_random))
        flows, mask = self._native.reset()
        self._last = {"flows": flows, "flow_mask": mask}
        return {"flows": flows.copy(), "flow_mask": mask.copy()}, {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        flows, mask, reward, terminated = self._native.step(_as_scores(action, (self.max_flows,)))
        self._last = {"flows": flows, "flow_mask": mask}
        info = dict(self._native.episode_stats()) if terminated else {}
        return {"flows": flows.copy(), "flow_mask": mask.copy()}, float(reward), bool(terminated), False, info

    def results(self) -> pd.DataFrame:
        """Per-flow outcome of the current episode (trace order): arrival_s, src, dst,
        size_bytes, deadline_s, finish_s, fct_s, ideal_fct_s, terminated."""
        return pd.DataFrame(self._native.results())

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._last is None:
            return None
        f, m = self._last["flows"], self._last["flow_mask"]
        lines = [f"t = {self._native.now * 1e3:.3f} ms, {int(m.sum())} flows in the system",
                 "  slot  sent MB  left MB  age ms  complete  @src  @dst"]
        for j in np.flatnonzero(m):
            r = f[j]
            left = f"{r[1]:7.3f}" if r[2] else "      ?"
            lines.append(f"  {j:4d}  {r[0]:7.3f}  {left}  {r[3]:6.2f}  {int(r[4]):8d}  {int(r[5]):4d}  {int(r[6]):4d}")
        return "\n".join(lines)


class SwitchSchedulingVecEnv(VectorEnv):
    """``num_envs`` switch-scheduling envs stepped together inside the Rust core.

    Same spaces and arguments as :class:`SwitchSchedulingEnv` per lane, next-step
    autoreset, GIL released during the batched step (``threads`` OS threads). Each
    lane draws its episodes' traces with its own generator, seeded ``seed + i`` as a
    single env reset with that seed, so lane ``i`` reproduces that env bit for bit.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 8, *, threads: int = 1, copy: bool = True,
                 max_episode_steps: int | None = None, render_mode: str | None = None, **kwargs: Any) -> None:
        if max_episode_steps is not None:
            raise ValueError(f"SwitchSchedulingVecEnv has no step limit; got max_episode_steps={max_episode_steps!r}")
        if render_mode is not None:
            raise ValueError(f"SwitchSchedulingVecEnv does not render, got render_mode={render_mode!r}")
        cfg, self._source = switch_config(**kwargs)
        self.num_envs, self.max_flows, self.copy = int(num_envs), cfg.max_flows, copy
        self._native = _fabric.SwitchVecEnv(cfg, self.num_envs, threads=int(threads))
        self.single_observation_space = _observation_space(self.max_flows)
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.max_flows,), dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n, m = self.num_envs, self.max_flows
        self._bufs = (np.zeros((n, m, FLOW_FEATURES), np.float32), np.zeros((n, m), np.float32), np.zeros(n, np.float64),
                      np.zeros(n, bool), np.zeros((n, len(SWITCH_STATS)), np.float64))
        self._rngs: list[np.random.Generator] = []

    def _obs(self) -> dict[str, np.ndarray]:
        obs = {"flows": self._bufs[0], "flow_mask": self._bufs[1]}
        return {k: v.copy() for k, v in obs.items()} if self.copy else obs

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None or not self._rngs:
            self._rngs = [seeding.np_random(s)[0] for s in lane_seeds(seed, self.num_envs)]
        for lane, rng in enumerate(self._rngs):
            self._native.set_next_trace(lane, self._source.draw(rng))
        self._native.reset(*self._bufs)
        return self._obs(), {}

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._native.step(_as_scores(actions, (self.num_envs, self.max_flows)), *self._bufs)
        reward, terminated, stats = self._bufs[2], self._bufs[3], self._bufs[4]
        infos: dict[str, Any] = {}
        if terminated.any():
            for j, name in enumerate(SWITCH_STATS):
                infos[name] = np.where(terminated, stats[:, j], 0.0)
                infos["_" + name] = terminated.copy()
            for lane in np.flatnonzero(terminated):  # the trace its autoreset will start
                self._native.set_next_trace(int(lane), self._source.draw(self._rngs[lane]))
        return self._obs(), reward.copy(), terminated.copy(), np.zeros(self.num_envs, bool), infos

    def reset_done(self) -> dict[str, np.ndarray]:
        """Resets now the lanes whose episode just ended (same-step autoreset, for the SB3 adapter)."""
        self._native.reset_done(*self._bufs)
        return self._obs()
