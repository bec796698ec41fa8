"""gtcp:<inner> (SCHED_TCP's non-intrusive mode) never changes any source-destination
pair's cumulative bytes against fair sharing, at any time: checked on a time grid."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched
from flowsched.sim import native_simulator


def pair_bytes(trace: pd.DataFrame, topo, scheduler: str, times: np.ndarray) -> np.ndarray:
    trace = flowsched.validate_trace(trace, hosts=topo.n_hosts)
    th = [2e4, 2e5] if scheduler.endswith("pias") else None  # refused for schedulers without PIAS queues
    sim = native_simulator(trace, topo, scheduler, pias_thresholds_bytes=th)
    pair = trace["src"].to_numpy() * 1000 + trace["dst"].to_numpy()
    keys, inv = np.unique(pair, return_inverse=True)
    out = np.zeros((len(times), len(keys)))
    for j, t in enumerate(times):
        sim.step(float(t))
        out[j] = np.bincount(inv, weights=sim.results()["bytes_sent"], minlength=len(keys))
    return out


@pytest.mark.parametrize("inner", ["srpt", "las", "fifo", "pias", "asrpt", "edf", "ps"])
def test_gtcp_keeps_every_pairs_cumulative_bytes(inner):
    rng = np.random.default_rng(3)
    for topo in (flowsched.BigSwitch(5, [10.0, 10.0, 40.0, 10.0, 25.0]), flowsched.LeafSpine(2, 3, 2, 10.0, 15.0)):
        hosts = topo.n_hosts
        for _ in range(4):
            n = 40
            src = rng.integers(0, hosts, n)
            # few pairs, so that pairs hold several flows at once
            dst = (src + 1 + rng.integers(0, 2, n)) % hosts
            tr = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 1e-3, n)), "src": src, "dst": dst,
                               "size_bytes": rng.uniform(1e3, 5e5, n),
                               "deadline_s": np.where(rng.random(n) < 0.5, rng.uniform(1e-4, 2e-3, n), np.nan)})
            end = flowsched.simulate(tr, topo, "ps").flows["finish_s"].max()
            times = np.linspace(0, end * 1.01, 60)[1:]
            ps = pair_bytes(tr, topo, "ps", times)
            g = pair_bytes(tr, topo, f"gtcp:{inner}", times)
            np.testing.assert_allclose(g, ps, rtol=1e-9, atol=1e-6)
            assert ps[-1].sum() == pytest.approx(tr["size_bytes"].sum(), rel=1e-12)
