"""flowsched's ``ps`` on a parking lot against m3's flowSim (exact max-min fair fluid FCTs).

The stored reference (benchmarks/references/flowsim/, provenance in its README.md):
200 web-search flows at load 0.4 on 8 hosts, and flowSim's FCT of each on its two-layer
parking lot with 10 Gbps host links and 10 Gbps between switches (``ParkingLot(8, 10, 10)``).
flowSim adds 48 B of headers per started 1,000 B to every size and reports the fluid
transmission time alone, so flowsched runs the same inflated sizes with no path delay.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import flowsched
from flowsched.topology import BigSwitch, ParkingLot

REF = Path(__file__).resolve().parents[1] / "benchmarks" / "references" / "flowsim" / "pl8_sw10_ws_l04_n200_seed3.csv"


def _trace() -> tuple[pd.DataFrame, np.ndarray]:
    ref = pd.read_csv(REF)
    tr = ref[["id", "arrival_s", "src", "dst", "size_bytes"]].copy()
    tr["size_bytes"] = tr["size_bytes"] + np.ceil(tr["size_bytes"] / 1000.0) * 48.0  # flowSim's headers
    return tr, ref["fct_ns"].to_numpy() * 1e-9


def test_ps_on_parking_lot_matches_flowsim_per_flow():
    tr, want = _trace()
    res = flowsched.simulate(tr, ParkingLot(8, 10.0, 10.0), "ps", progress=False)
    got = res.flows.set_index("id").loc[tr["id"], "fct_s"].to_numpy()
    rel = np.abs(got - want) / want
    # Both are exact max-min fluid FCTs: they differ by rounding only (5.5e-13 at most when
    # stored). flowSim's own grouping tolerance (1e-4 Gbps, see the README) does not bite here.
    i = int(rel.argmax())
    assert rel[i] < 1e-9, f"flow {tr['id'].iloc[i]}: {got[i]} s, flowSim {want[i]} s"


def test_reference_needs_the_switch_links():
    # The check above means something only if the switch-to-switch links limit some flows:
    # the big switch (host links alone) gives clearly different FCTs on the same flows.
    tr, want = _trace()
    big = flowsched.simulate(tr, BigSwitch(8, 10.0), "ps", progress=False).flows.set_index("id")
    got = big.loc[tr["id"], "fct_s"].to_numpy()
    assert (np.abs(got - want) / want > 0.01).sum() >= 20
    assert want.mean() > 1.2 * got.mean()
