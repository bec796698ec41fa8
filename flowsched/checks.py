"""Argument checks shared by the simulator, the topologies and the envs: a value of the
wrong kind is an error naming the argument, never coerced (a string ``"False"`` is not
false, ``2.7`` lanes are not 2, ``True`` is not 1).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def number_kind(x: Any) -> str | None:
    """"bool", "integer" or "float" for a number of that kind (Python's or numpy's), else None."""
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "integer"
    if isinstance(x, (float, np.floating)):
        return "float"
    return None


def is_finite_number(x: Any) -> bool:
    """Whether ``x`` is a finite real number (an integer or a float, Python's or numpy's;
    not a bool, not a string; an integer beyond the range of floats is not finite)."""
    if number_kind(x) not in ("integer", "float"):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool (Python or numpy), else a ``ValueError`` naming ``name``:
    a string such as ``"False"`` would otherwise count as true."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_int(name: str, value: Any, low: int = 1) -> int:
    """``value`` as an int if it is an integer (not a bool, not a float such as 2.5)
    >= ``low``, else a ``ValueError`` naming ``name``."""
    if number_kind(value) != "integer" or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_number(name: str, value: Any, *, low: float = -np.inf, low_open: bool = False,
                 high: float = np.inf, high_open: bool = False) -> float:
    """``value`` as a float if it is a finite real number (not a bool, not a string) within
    ``low``..``high`` (each bound excluded when ``*_open``), else a ``ValueError`` naming
    ``name`` and the range."""
    ok = is_finite_number(value)
    if ok:
        v = float(value)
        ok = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not ok:
        parts = []
        if low > -np.inf:
            parts.append(f"{'>' if low_open else '>='} {low:g}")
        if high < np.inf:
            parts.append(f"{'<' if high_open else '<='} {high:g}")
        what = " and ".join(parts)
        raise ValueError(f"{name} must be a finite number{' ' + what if what else ''}, got {value!r}")
    return float(value)
