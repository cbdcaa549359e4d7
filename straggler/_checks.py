"""Checks of user-given values, shared by every constructor that validates its arguments.

Each check returns the value (converted where said) or raises ``ValueError`` naming the
parameter and echoing the value, e.g. ``"`profiling_interval=0` must be a positive integer"``.
Booleans are never accepted as numbers.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

__all__ = ["check_bool", "check_fraction", "check_int", "check_seconds"]


def check_bool(name: str, value: Any) -> bool:
    """`value` if it is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"`{name}={value!r}` must be True or False")
    return value


def check_int(name: str, value: Any, low: int = 1) -> int:
    """`value` if it is an int >= `low` (1: "a positive integer", 0: "a non-negative integer")."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        kind = {1: "a positive integer", 0: "a non-negative integer"}.get(low,
                                                                           f"an integer >= {low}")
        raise ValueError(f"`{name}={value!r}` must be {kind}")
    return value


def _is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def check_seconds(name: str, value: Any, allow_zero: bool = False) -> float:
    """`value` as a float if it is a finite number of seconds > 0 (>= 0 with `allow_zero`)."""
    ok = _is_real(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        what = "a finite number of seconds >= 0" if allow_zero else "a positive number of seconds"
        raise ValueError(f"`{name}={value!r}` must be {what}")
    return float(value)


def check_fraction(name: str, value: Any, allow_zero: bool = False) -> float:
    """`value` as a float if it is in (0, 1] ([0, 1] with `allow_zero`)."""
    ok = _is_real(value) and (0.0 <= value <= 1.0 if allow_zero else 0.0 < value <= 1.0)
    if not ok:
        what = "a number between 0 and 1" if allow_zero else "a number in (0, 1]"
        raise ValueError(f"`{name}={value!r}` must be {what}")
    return float(value)
