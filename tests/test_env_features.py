"""Each env's table of observation features builds its ``Box`` bounds, and its
docstring's observation table is that table's rendering (issue 18, item 3)."""
from __future__ import annotations

import numpy as np

from flowsched.envs import switch, token
from flowsched.envs._common import feature_rows


def test_token_docstring_table_is_the_feature_table():
    doc = token.TokenSchedulingEnv.__doc__
    for key, table, per_row in (("requests", token.REQUEST_TABLE, True), ("active", token.ACTIVE_TABLE, False)):
        rows = feature_rows(key, table, per_row)
        assert rows in "\n".join(line.strip() for line in doc.splitlines()), (
            f"docstring table of {key!r} differs from:\n{rows}"
        )
    assert len(token.REQUEST_TABLE) == token.REQ_FEATURES and len(token.ACTIVE_TABLE) == token.ACTIVE_FEATURES


def test_switch_docstring_table_is_the_feature_table():
    rows = feature_rows("flows", switch.FLOW_TABLE, True)
    doc = "\n".join(line.strip() for line in switch.SwitchSchedulingEnv.__doc__.splitlines())
    assert rows in doc, f"docstring table differs from:\n{rows}"
    assert len(switch.FLOW_TABLE) == switch.FLOW_FEATURES


def test_bounds_come_from_the_tables():
    b = token.TokenBounds(window=3, k=10, size_mb=10.0, time_ms=50.0)
    np.testing.assert_array_equal(b.req_low.reshape(3, -1)[1], [0, 0, -50, 0, 0, 0, 0])
    np.testing.assert_array_equal(b.req_high.reshape(3, -1)[2], [10, 50, 50, 50, 50, 1, 50])
    np.testing.assert_array_equal(b.act_high, [1, 10, 50, 50, token.MAX_COUNT])
    s = switch.SwitchBounds(2, 10.0, 50.0)
    np.testing.assert_array_equal(s.high.reshape(2, -1)[1], [10, 10, 1, 50, 1, token.MAX_COUNT, token.MAX_COUNT, 50, 1])
    np.testing.assert_array_equal(s.low.reshape(2, -1)[0], [0, 0, 0, 0, 0, 0, 0, -50, 0])
