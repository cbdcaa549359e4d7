"""Checks of user-given values, shared by every constructor that validates its arguments.

Each check returns the value (converted where said) or raises naming the parameter and echoing
the value, e.g. ``"`profiling_interval=0` must be a positive integer"``: `OptionTypeError` (a
TypeError, as cuda-python raises) for a value of the wrong type, ValueError for a value of the
right type out of range. Booleans are never accepted as numbers.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from numbers import Real
from typing import Any, TypeVar

from ._constants import SCORE_KINDS

__all__ = ["OptionTypeError", "check_bool", "check_choice", "check_fraction", "check_int",
           "check_name", "check_names", "check_number", "check_process_group", "check_roles",
           "check_scores_to_compute", "check_seconds"]

T = TypeVar("T")


class OptionTypeError(TypeError, ValueError):
    """An option of the wrong type. A TypeError, as cuda-python raises; also a ValueError, which
    every bad option raised before (docs/detector.md), so existing ``except ValueError`` holds."""


def check_bool(name: str, value: Any) -> bool:
    """`value` if it is True or False."""
    if not isinstance(value, bool):
        raise OptionTypeError(f"`{name}={value!r}` must be True or False")
    return value


def check_int(name: str, value: Any, low: int = 1, high: int | None = None) -> int:
    """`value` if it is an int >= `low` (1: "a positive integer", 0: "a non-negative integer")
    and, with `high`, <= `high` ("an integer between 0 and 65535")."""
    wrong_type = isinstance(value, bool) or not isinstance(value, int)
    if wrong_type or value < low or (high is not None and value > high):
        if high is not None:
            kind = f"an integer between {low} and {high}"
        else:
            kind = {1: "a positive integer", 0: "a non-negative integer"}.get(
                low, f"an integer >= {low}")
        error = OptionTypeError if wrong_type else ValueError
        raise error(f"`{name}={value!r}` must be {kind}")
    return value


def _is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _error(number: Any) -> type[ValueError]:
    """The error for a bad number: of the wrong type, or out of range."""
    return ValueError if _is_real(number) else OptionTypeError


def check_seconds(name: str, value: Any, allow_zero: bool = False) -> float:
    """`value` as a float if it is a finite number of seconds > 0 (>= 0 with `allow_zero`)."""
    ok = _is_real(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        what = "a finite number of seconds >= 0" if allow_zero else "a positive number of seconds"
        raise _error(value)(f"`{name}={value!r}` must be {what}")
    return float(value)


def check_fraction(name: str, value: Any, allow_zero: bool = False) -> float:
    """`value` as a float if it is in (0, 1] ([0, 1] with `allow_zero`)."""
    ok = _is_real(value) and (0.0 <= value <= 1.0 if allow_zero else 0.0 < value <= 1.0)
    if not ok:
        what = "a number between 0 and 1" if allow_zero else "a number in (0, 1]"
        raise _error(value)(f"`{name}={value!r}` must be {what}")
    return float(value)


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                 low_open: bool = False, unit: str = "") -> float:
    """`value` as a float if it is a finite number in [low, high] ((low, high] with `low_open`).

    ``unit`` names what is counted in the message: "a positive number of reports".
    """
    ok = _is_real(value) and math.isfinite(value) and value <= high \
        and (value > low if low_open else value >= low)
    if not ok:
        if math.isfinite(high):
            what = f"a number in {'(' if low_open else '['}{low:g}, {high:g}]"
        elif low == 0 and low_open:
            what = "a positive number"
        else:
            what = f"a number {'>' if low_open else '>='} {low:g}"
        if unit:
            what = what.replace("number", f"number of {unit}", 1)
        raise _error(value)(f"`{name}={value!r}` must be {what}")
    return float(value)


def check_choice(name: str, value: T, choices: Collection[T]) -> T:
    """`value` if it is one of `choices` (strings are compared as they are)."""
    try:
        ok = value in choices
    except TypeError:  # an unhashable value against a set
        ok = False
    if not ok:
        raise ValueError(f"`{name}={value!r}` must be one of {list(choices)}")
    return value


def check_name(name: str, value: Any, *, optional: bool = False,
               strip: bool = False, printable: bool = False) -> str | None:
    """`value` if it is a non-empty string (or None with `optional`).

    With `strip`, surrounding whitespace does not count: a blank string is refused ("a non-blank
    string") and the stripped string is returned. With `printable`, a string holding a line
    break, a tab or another character that `str.isprintable` refuses is refused: such a name
    (a node name) would split the report table and the log lines it is written into.
    """
    if value is None and optional:
        return None
    text = value.strip() if strip and isinstance(value, str) else value
    if not isinstance(text, str) or not text:
        what = "a non-blank string" if strip else "a non-empty string"
        error = ValueError if isinstance(text, str) else OptionTypeError
        raise error(f"`{name}={value!r}` must be {what}" + (" or None" if optional else ""))
    if printable and not text.isprintable():
        bad = next(ch for ch in text if not ch.isprintable())
        raise ValueError(f"`{name}={value!r}` holds {bad!r}: it must be printable, without line "
                         "breaks, tabs or other control characters (it is written into report "
                         "tables and log lines)")
    return text


def check_names(name: str, value: Any, *, distinct: bool = False) -> tuple[str, ...]:
    """`value` as a tuple if it is an iterable (not a string) of non-empty strings."""
    names = tuple(value) if isinstance(value, Iterable) and not isinstance(value, str) else None
    wrong_type = names is None or any(not isinstance(n, str) for n in names)
    if names is None or wrong_type or any(not n for n in names) \
            or (distinct and len(set(names)) != len(names)):
        what = "distinct non-empty strings" if distinct else "non-empty strings"
        error = OptionTypeError if wrong_type else ValueError
        raise error(f"`{name}={value!r}` must be a sequence of {what}")
    return names


def check_scores_to_compute(value: Any, allow_name: bool = True) -> list[str]:
    """The score kinds a ``scores_to_compute`` option asks for, without repeats, in its order.

    ``"all"`` or a non-empty list of `SCORE_KINDS`; with ``allow_name`` a single kind's name
    too (``Detector.initialize`` keeps NVRx's stricter "all" or a list). ``ValueError`` names
    the parameter and echoes the value otherwise.
    """
    if value == "all":
        return list(SCORE_KINDS)
    kinds: Any = [value] if allow_name and isinstance(value, str) else value
    wrong_type = not isinstance(kinds, (list, tuple, set, frozenset)) \
        or any(not isinstance(k, str) for k in kinds)
    if wrong_type or not kinds or any(k not in SCORE_KINDS for k in kinds):
        error = OptionTypeError if wrong_type and not isinstance(value, str) else ValueError
        raise error(f"`scores_to_compute={value!r}` must be 'all' or a non-empty list of "
                    f"{list(SCORE_KINDS)}")
    return list(dict.fromkeys(kinds))


def check_process_group(name: str, value: Any) -> Any:
    """`value` if it is None or a ``torch.distributed.ProcessGroup``.

    torch is imported only for a value that is not None: a process group means the caller has
    torch loaded already, and `import straggler` stays free of it.
    """
    if value is None:
        return None
    import torch.distributed as dist

    if (dist.is_available() and isinstance(value, int) and not isinstance(value, bool)
            and value == dist.GroupMember.NON_GROUP_MEMBER):
        # What dist.new_group() returns on the ranks it leaves out (-100).
        who = f"global rank {dist.get_rank()}" if dist.is_initialized() else "this process"
        raise ValueError(f"`{name}={value!r}` is torch's GroupMember.NON_GROUP_MEMBER: {who} "
                         "is not a member of the group; only the group's members call "
                         "Detector.initialize() with it")
    if not (dist.is_available() and isinstance(value, dist.ProcessGroup)):
        raise OptionTypeError(f"`{name}={value!r}` must be a torch.distributed.ProcessGroup or "
                              "None")
    return value


def check_roles(roles: Any, group_ranks: Sequence[int]) -> None:
    """Raise unless `roles` (None or a mapping) has only global ranks of the group as keys."""
    if roles is None:
        return
    if not isinstance(roles, Mapping):
        raise OptionTypeError(f"`roles={roles!r}` must be a mapping global rank -> role")
    members = set(group_ranks)
    bad = [r for r in roles if isinstance(r, bool) or not isinstance(r, int) or r not in members]
    if bad:
        more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
        shown = ", ".join(map(repr, bad[:8])) + more
        raise ValueError(f"`roles` names {shown}, not global rank(s) of the detector's process "
                         f"group ({_ranks_text(group_ranks)})")


def _ranks_text(ranks: Sequence[int]) -> str:
    """"ranks 0-3" for a contiguous range, else the first few ranks and the count."""
    ranks = sorted(ranks)
    if ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks[0]}-{ranks[-1]}"
    head = ", ".join(map(str, ranks[:8]))
    return f"ranks {head}" + (f", ... ({len(ranks)} ranks)" if len(ranks) > 8 else "")
