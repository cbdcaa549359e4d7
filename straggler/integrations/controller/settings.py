"""What the controller can change, and the checks a request body passes before it is kept.

Pure: no sockets, no threads. :func:`parse_update` turns a request body into a new
:class:`ControlState` or raises ``ValueError`` with the reason the client reads.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..._checks import check_fraction, check_seconds

__all__ = ["ControlState", "check_control_value", "check_requested_value", "json_depth",
           "parse_update", "json_safe", "MAX_JSON_DEPTH", "MAX_INT_DIGITS",
           "MIN_REPORT_INTERVAL_S"]

# A request body nests no deeper than this (a valid one is a flat object: depth 1).
MAX_JSON_DEPTH = 8
# Integers in a request body have at most this many digits (larger ones cannot be a setting, and
# converting them to float overflows).
MAX_INT_DIGITS = 20
# The shortest report interval a request may ask for: shorter makes nearly every step a report.
MIN_REPORT_INTERVAL_S = 1.0


@dataclass(frozen=True)
class ControlState:
    """What the controller can change at run time."""

    enabled: bool
    gpu_relative_perf_threshold: float
    gpu_individual_perf_threshold: float
    report_time_interval: float

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            check_control_value(name, value)

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON-ready dict."""
        return dataclasses.asdict(self)


_FIELDS = tuple(f.name for f in dataclasses.fields(ControlState))


def check_control_value(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` and echoing ``value`` unless ``value`` is valid."""
    if name == "enabled":
        if not isinstance(value, bool):
            raise ValueError(f"`enabled={value!r}` must be true or false")
    elif name in ("gpu_relative_perf_threshold", "gpu_individual_perf_threshold"):
        check_fraction(name, value, allow_zero=True)
    elif name == "report_time_interval":
        check_seconds(name, value)
    else:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(_FIELDS)}")


def check_requested_value(name: str, value: Any) -> None:
    """:func:`check_control_value` plus the limits on what a request may ask for.

    A request may not set ``report_time_interval`` below :data:`MIN_REPORT_INTERVAL_S`: a
    report on nearly every step would slow the job down (the configuration itself may).
    """
    check_control_value(name, value)
    if name == "report_time_interval" and value < MIN_REPORT_INTERVAL_S:
        raise ValueError(f"`report_time_interval={value!r}` must be at least "
                         f"{MIN_REPORT_INTERVAL_S:g} s when set through the controller")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"number {text[:12]}... ({len(text)} characters) is too large: at most "
                         f"{MAX_INT_DIGITS} digits")
    return int(text)


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in ``text`` (brackets inside strings excluded)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_update(body: bytes, current: ControlState) -> ControlState:
    """Validate a JSON request body and return ``current`` with its settings applied.

    Raises ``ValueError`` with the reason for anything but a JSON object of known, valid settings
    (including bodies nested deeper than :data:`MAX_JSON_DEPTH` and oversized integers).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"body nests {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted")
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    except RecursionError:  # not reached below MAX_JSON_DEPTH; kept so it can never escape
        raise ValueError("body nests too deep") from None
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    if not data:
        raise ValueError(f"body names no setting; known: {', '.join(_FIELDS)}")
    for name, value in data.items():
        try:
            check_requested_value(name, value)
        except OverflowError:
            raise ValueError(f"`{name}` is too large a number") from None
    # Checked above: `enabled` is a bool, every other name a finite number.
    values: dict[str, Any] = {k: (v if k == "enabled" else float(v)) for k, v in data.items()}
    return dataclasses.replace(current, **values)


def json_safe(value: Any) -> Any:
    """Replace NaN and infinities (not JSON) with None, recursively; keys become strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    return value
