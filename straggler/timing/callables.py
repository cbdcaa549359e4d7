"""`CallableId` and the wrapping of callables in detection sections.

`CallableId(obj, name)` names an attribute of a module, a class or an object. Wrapping
replaces that attribute with a function that runs the original inside a detection section
named `str(callable_id)`; restoring puts the original attribute back exactly as it was
(an attribute the object only inherited is deleted again rather than copied onto it).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from .._checks import OptionTypeError

__all__ = ["CallableId", "CallableWrapper"]

_MISSING = object()


@dataclasses.dataclass(frozen=True)
class CallableId:
    """Names the callable `obj.<name>` (NVRx-compatible).

    `obj` is a module, a class or an instance. `arg_filter_fn`, `extra_args_fn` and
    `ignored_args` are accepted for compatibility with NVRx, which ignores them too.
    """

    obj: Any
    name: str
    arg_filter_fn: Callable[..., Any] | None = None
    extra_args_fn: Callable[..., Any] | None = None
    ignored_args: Sequence[str] | None = None

    def __str__(self) -> str:
        if isinstance(self.obj, types.ModuleType):
            return f"{self.obj.__name__}.{self.name}"
        if isinstance(self.obj, type):
            return f"{self.obj.__module__}.{self.obj.__name__}.{self.name}"
        return f"{type(self.obj).__name__}.{self.name}"


@dataclasses.dataclass
class _Wrapped:
    obj: Any
    name: str
    own_attr: Any  # what obj.__dict__ held before wrapping; _MISSING when it was inherited
    wrapper: Any   # what we installed, to notice if somebody replaced it since


def _section_wrapper(func: Callable[..., Any],
                     section: AbstractContextManager[Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with section:
            return func(*args, **kwargs)

    return wrapper


def _own_attr(obj: Any, name: str) -> Any:
    try:
        return vars(obj).get(name, _MISSING)
    except TypeError:  # no __dict__ (e.g. __slots__): we could not have shadowed anything
        return _MISSING


class CallableWrapper:
    """Installs and removes section wrappers; every `wrap` call adds to the previous ones."""

    def __init__(self, section_for: Callable[[str, bool], AbstractContextManager[Any]]) -> None:
        self._section_for = section_for
        self._wrapped: list[_Wrapped] = []

    def __len__(self) -> int:
        return len(self._wrapped)

    def is_wrapped(self, obj: Any, name: str) -> bool:
        """Whether `obj.<name>` is currently wrapped by this wrapper."""
        return any(w.obj is obj and w.name == name for w in self._wrapped)

    def wrap(self, callable_ids: Sequence[CallableId], profile_cuda: bool = True) -> None:
        """Wrap each callable; one already wrapped is left as it is. All are checked first."""
        if isinstance(callable_ids, (CallableId, str, bytes)) or not isinstance(
                callable_ids, Iterable):
            raise OptionTypeError(f"`callable_ids={callable_ids!r}` must be a list of "
                                  "CallableId objects")
        callable_ids = list(callable_ids)
        for cid in callable_ids:
            if not isinstance(cid, CallableId):
                raise ValueError(f"`callable_ids` must hold CallableId objects, got {cid!r}")
            attr = getattr(cid.obj, cid.name, _MISSING)
            if attr is _MISSING or not callable(attr):
                raise ValueError(f"`{cid!r}` does not name a callable attribute")
        for cid in callable_ids:
            if self.is_wrapped(cid.obj, cid.name):
                continue
            section = self._section_for(str(cid), bool(profile_cuda))
            self._wrapped.append(self._install(cid.obj, cid.name, section))

    @staticmethod
    def _install(obj: Any, name: str, section: AbstractContextManager[Any]) -> _Wrapped:
        own = _own_attr(obj, name)
        if isinstance(obj, type):
            static = inspect.getattr_static(obj, name)
            if isinstance(static, staticmethod):
                new: Any = staticmethod(_section_wrapper(static.__func__, section))
            elif isinstance(static, classmethod):
                new = classmethod(_section_wrapper(static.__func__, section))
            elif inspect.isfunction(static):
                new = _section_wrapper(static, section)  # stays an instance method
            else:
                new = _section_wrapper(getattr(obj, name), section)
        else:  # a module or an instance: wrap the bound attribute as it is looked up
            new = _section_wrapper(getattr(obj, name), section)
        setattr(obj, name, new)
        return _Wrapped(obj, name, own, new)

    def restore(self) -> None:
        """Put every original attribute back, newest first."""
        while self._wrapped:
            w = self._wrapped.pop()
            if w.own_attr is _MISSING:
                if _own_attr(w.obj, w.name) is not _MISSING:
                    delattr(w.obj, w.name)
            else:
                setattr(w.obj, w.name, w.own_attr)
