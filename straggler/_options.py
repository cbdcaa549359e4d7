"""One way to take an options object: the dataclass itself, or a mapping of its fields.

As cuda.core's ``check_or_create_options``: a caller may pass ``Options(...)``, a ``dict`` with
the same keys, or None (the defaults); the dataclass validates its fields when it is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from ._checks import OptionTypeError

__all__ = ["check_or_create_options"]

T = TypeVar("T")


def check_or_create_options(cls: type[T], options: Any, name: str) -> T:
    """`options` as a `cls` (a dataclass): itself, ``cls(**options)`` for a mapping, or ``cls()``.

    Raises ValueError naming `name` for unknown keys, `OptionTypeError` (a TypeError) for a
    value of another type; the fields' own checks (in ``cls.__post_init__``) raise for bad
    values.
    """
    if isinstance(options, cls):
        return options
    if options is None:
        return cls()
    if isinstance(options, Mapping):
        known = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(f"`{name}={dict(options)!r}` has unknown keys {unknown}; "
                             f"known: {known}")
        return cls(**options)
    raise OptionTypeError(f"`{name}={options!r}` must be a {cls.__name__}, a dict or None")
