"""Rule-based token-scheduling policies (which waiting request a destination admits).

Each rule reads only the observation of :class:`flowsched.envs.TokenSchedulingEnv`
(the request features, oldest first) and breaks ties towards the oldest request, as
the simulator's native admission policies do: ``fifo``, ``edf``, ``ssdf``, ``lsdf``
and ``srpt`` driving the env give the same per-flow results as
``flowsched.simulate(..., admission=<name>)`` on the same trace (the env's features
are float32: two keys closer than float32 resolution may tie here and not there).
"""
from __future__ import annotations

import numpy as np

from flowsched.baselines.base import MaskedRule
from flowsched.baselines.registry import rules

# Column indices of the request features (flowsched.envs.token.REQUEST_FEATURES).
SIZE, DEADLINE, LEFT, WAITED, IDEAL, HAS_DL, FAIR = range(7)


def _size_over_deadline(req: np.ndarray) -> np.ndarray:
    """The size/deadline ratio of SSDF and LSDF (NaN or inf for requests without a deadline)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return req[..., SIZE] / req[..., DEADLINE]


def _keys(rule: str, req: np.ndarray) -> np.ndarray:
    """Per-request sort key (smaller first), shape (..., window)."""
    has = req[..., HAS_DL] > 0
    inf = np.float32(np.inf)
    if rule == "fifo":
        return np.zeros(req.shape[:-1], np.float32)  # the oldest (first) request
    if rule == "edf":
        return np.where(has, req[..., LEFT], inf)  # earliest absolute deadline
    if rule in ("ssdf", "lsdf"):
        ratio = _size_over_deadline(req)
        return np.where(has, ratio if rule == "ssdf" else -ratio, inf)
    if rule == "srpt":
        return req[..., SIZE]
    if rule == "llf":
        return np.where(has, req[..., LEFT] - req[..., IDEAL], inf)  # least laxity
    if rule == "fair_slack":
        slack = req[..., LEFT] - req[..., FAIR]  # time to spare if admitted now and shared fairly
        # most slack first among those that can still make it; the others after them, by SSDF
        return np.where(has, np.where(slack >= 0, -slack, np.float32(1e9) + _size_over_deadline(req)), inf)
    raise ValueError(f"unknown token rule {rule!r}")


@rules("token", "token-scheduling")
class TokenRule(MaskedRule):
    """Admits the waiting request with the smallest key of ``rule``:

    * ``fifo``: the oldest request;
    * ``edf``: earliest absolute deadline (requests without one last);
    * ``ssdf`` / ``lsdf``: smallest / largest size-to-deadline ratio (Artemis' SSDF, LSDF);
    * ``srpt``: smallest size;
    * ``llf``: least laxity (time left to the deadline minus the ideal FCT);
    * ``fair_slack``: among the requests that would still meet their deadline if admitted
      now and the destination link were shared fairly (the ``fair_fct_ms`` feature), the
      one with the most time to spare; the others after them, smallest size/deadline
      first. It is not from a paper: a feasibility-aware rule that shows how much the
      order can gain at high load;
    * ``random``: uniformly among the waiting requests (seeded by ``seed``).
    """

    RULES = ("fifo", "edf", "ssdf", "lsdf", "srpt", "llf", "fair_slack", "random")
    obs_keys = ("requests",)

    def __init__(self, rule: str, seed: int | None = 0) -> None:
        if rule not in self.RULES:
            raise ValueError(f"unknown token-scheduling baseline {rule!r}; known: {', '.join(self.RULES)}")
        self.rule, self.seed = rule, 0 if seed is None else int(seed)
        self.rng = np.random.default_rng(seed)

    def seed_episode(self, seed: int) -> None:
        self.rng = np.random.default_rng([self.seed, seed])

    def _act(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        req = np.asarray(observation["requests"]).reshape(*mask.shape, -1)  # (batch, window, 7)
        if self.rule == "random":
            u = self.rng.random(mask.shape)
            return np.argmax(np.where(mask, u, -1.0), axis=-1).astype(np.int64)
        key = np.where(mask, _keys(self.rule, req), np.float32(np.inf))
        # argmin takes the first (oldest) of equal keys; a request with an infinite key
        # is still valid, so fall back to the first valid request when all are infinite
        best = np.argmin(key, axis=-1)
        first_valid = np.argmax(mask, axis=-1)
        return np.where(np.isfinite(np.take_along_axis(key, best[..., None], -1)[..., 0]), best, first_valid).astype(
            np.int64
        )

    def __repr__(self) -> str:
        return f"TokenRule({self.rule!r})"
