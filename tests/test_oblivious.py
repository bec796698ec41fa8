"""Size-oblivious schedulers never read a hidden size: scaling a hidden flow's size and
data span together (its data keeps arriving at the same rate, so it looks the same
until its data is complete) must not change anything before that moment."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flowsched

OBLIVIOUS = ["fifo", "ps", "wps", "las", "pias", "edf", "random", "asrpt", "ga:ssdf", "ga:lsdf"]


def random_trace(rng: np.random.Generator, n: int = 12, hosts: int = 4) -> pd.DataFrame:
    src = rng.integers(0, hosts, n)
    dst = (src + 1 + rng.integers(0, hosts - 1, n)) % hosts
    return pd.DataFrame(
        {
            "arrival_s": np.sort(rng.uniform(0, 2e-3, n)),
            "src": src,
            "dst": dst,
            "size_bytes": rng.uniform(1e3, 1e6, n),
            "deadline_s": np.where(rng.random(n) < 0.5, rng.uniform(1e-3, 5e-3, n), np.nan),
            "weight": rng.choice([1.0, 2.0, 0.5], n),
            "data_span_s": np.where(rng.random(n) < 0.6, rng.uniform(1e-4, 2e-3, n), 0.0),
            "size_known": rng.random(n) < 0.3,
        }
    )


@pytest.mark.parametrize("sched", OBLIVIOUS)
def test_a_hidden_size_changes_nothing_before_the_data_is_complete(sched):
    rng = np.random.default_rng(7)
    topo = flowsched.BigSwitch(4, [10.0, 10.0, 25.0, 10.0])
    checked = 0
    for _ in range(25):
        tr = random_trace(rng)
        hidden = np.flatnonzero(~tr["size_known"].to_numpy() & (tr["data_span_s"].to_numpy() > 0))
        if hidden.size == 0:
            continue
        h = int(rng.choice(hidden))
        scaled = tr.copy()
        factor = float(rng.choice([0.5, 3.0]))
        scaled.loc[h, ["size_bytes", "data_span_s"]] *= factor
        th = [2e4, 2e5] if sched.endswith("pias") else None
        a = flowsched.simulate(tr, topo, sched, pias_thresholds_bytes=th).flows["finish_s"].to_numpy()
        b = flowsched.simulate(scaled, topo, sched, pias_thresholds_bytes=th).flows["finish_s"].to_numpy()
        t_known = tr["arrival_s"][h] + min(tr["data_span_s"][h], scaled["data_span_s"][h])
        before = np.flatnonzero((a < t_known) & (np.arange(len(tr)) != h))
        np.testing.assert_allclose(b[before], a[before], rtol=1e-9, err_msg=f"{sched}: flow {h} scaled by {factor}")
        checked += before.size
    assert checked >= 20  # the property was exercised on enough flows


@pytest.mark.parametrize("sched", ["srpt", "fair", "gtcp:las", "racs"])
def test_size_readers_refuse_hidden_sizes(sched):
    tr = pd.DataFrame({"arrival_s": [0.0], "src": [0], "dst": [1], "size_bytes": [1e5], "data_span_s": [1e-3],
                       "size_known": [False]})
    with pytest.raises(ValueError, match="reads flow sizes"):
        flowsched.simulate(tr, flowsched.BigSwitch(2, 10), sched)
