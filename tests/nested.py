"""Test helper shared by the env tests: equality of nested observations and steps."""
from __future__ import annotations

from typing import Any

import numpy as np


def assert_same(a: Any, b: Any) -> None:
    """``a`` and ``b`` equal bit for bit, through dicts (same keys), tuples and lists (same length)
    down to arrays and numbers."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        np.testing.assert_array_equal(a, b)
