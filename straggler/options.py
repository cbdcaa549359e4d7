"""The option types users pass, and the one way to take them (`to_options`).

Each option type is a dataclass (frozen, except the Megatron config, which Megatron-Bridge's
code sets field by field) defined beside the code it configures and validated when built; this
module gathers them under one name and converts what a caller passes:

- `DetectorOptions` (detector_options.py): ``Detector.initialize(...)``'s arguments;
- `ReportOptions` (detector_options.py, a TypedDict): ``report_options=``;
- `TelemetryOptions` (telemetry/options.py): ``telemetry=``; its ``rules``, `CauseRules`
  (analysis/causes.py);
- `PolicyConfig` (analysis/policy_config.py): ``policy=``;
- `ReportLogOptions` (sinks/reportlog.py): ``report_log=``;
- `PrometheusOptions` (sinks/prometheus.py): ``prometheus=``;
- `HangOptions` (hang/options.py): ``hang_timeout_s=``, with ``hang_action=``;
- `FTOptions` (integrations/ft/options.py): ``ft_options=``;
- `CallbackOptions` (integrations/callback_options.py): Lightning's callback;
- `StragglerDetectionConfig` (integrations/megatron/config.py): the Megatron manager;
- `AttachSettings` (attach/settings.py): ``straggler run``.

``from straggler.options import TelemetryOptions`` imports the type's module on first use:
this list (`_HOMES` below) is the one place where option types are loaded lazily, so that
``from straggler import Detector`` stays free of torch (the FT and Lightning types live in
packages that import it) until options are built.

`to_options` is the one conversion (as cuda.core's ``check_or_create_options``): an instance
is taken as it is, a mapping is its fields, anything else is a *shorthand* the type declares
(``telemetry=False``, ``prometheus=9400``, ``report_log="r.jsonl"``, ``policy=True``), None
included. A type declares its shorthands with three optional class attributes:

- ``_from_shorthand(value, name, environ)``: the fields a shorthand stands for, None for
  "off", or `NOT_A_SHORTHAND` (then `OptionTypeError` names the value and the accepted forms).
  Without it, None means the defaults and nothing else is a shorthand.
- ``_SHORTHANDS``: the accepted shorthands in words, for that message ("True, False").
- ``_from_environment(environ)``: the fields the ``STRAGGLER_*`` environment sets (read by
  `straggler._env`); they fill what a mapping or a shorthand leaves out. An instance says its
  fields in full: the environment is not read for it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, is_typeddict

from ._checks import OptionTypeError
from ._env import EnvVar

__all__ = ["NOT_A_SHORTHAND", "OptionTypeError", "to_options", "switched_by_environment",
           "OPTION_TYPES",
           "AttachSettings", "CallbackOptions", "CauseRules", "DetectorOptions", "FTOptions",
           "HangOptions", "PolicyConfig", "PrometheusOptions", "ReportLogOptions", "ReportOptions",
           "StragglerDetectionConfig", "TelemetryOptions"]

T = TypeVar("T")

# Name -> the module that defines it (loaded on first use: see the module docstring).
_HOMES = {
    "DetectorOptions": "straggler.detector_options",
    "TelemetryOptions": "straggler.telemetry.options",
    "CauseRules": "straggler.analysis.causes",
    "PolicyConfig": "straggler.analysis.policy_config",
    "ReportLogOptions": "straggler.sinks.reportlog",
    "PrometheusOptions": "straggler.sinks.prometheus",
    "HangOptions": "straggler.hang.options",
    "FTOptions": "straggler.integrations.ft.options",
    "CallbackOptions": "straggler.integrations.callback_options",
    "StragglerDetectionConfig": "straggler.integrations.megatron.config",
    "AttachSettings": "straggler.attach.settings",
    "ReportOptions": "straggler.detector_options",
}
OPTION_TYPES: tuple[str, ...] = tuple(_HOMES)
"""The names of every option type (tests convert each one through `to_options`)."""

if TYPE_CHECKING:  # pragma: no cover
    from .analysis.causes import CauseRules
    from .analysis.policy_config import PolicyConfig
    from .attach.settings import AttachSettings
    from .detector_options import DetectorOptions, ReportOptions
    from .hang.options import HangOptions
    from .integrations.callback_options import CallbackOptions
    from .integrations.ft.options import FTOptions
    from .integrations.megatron.config import StragglerDetectionConfig
    from .sinks.prometheus import PrometheusOptions
    from .sinks.reportlog import ReportLogOptions
    from .telemetry.options import TelemetryOptions


class _NotAShorthand:
    def __repr__(self) -> str:
        return "NOT_A_SHORTHAND"


NOT_A_SHORTHAND: Any = _NotAShorthand()
"""What ``_from_shorthand`` returns for a value that is none of its type's shorthands."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'straggler.options' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _no_shorthand(value: Any, name: str, environ: Mapping[str, str] | None) -> Any:
    return {} if value is None else NOT_A_SHORTHAND


def switched_by_environment(value: Any, variable: EnvVar[Any],
                            environ: Mapping[str, str] | None) -> dict[str, Any] | None:
    """The shorthands of an output that the code or the environment turns on (the report log,
    the exporter): False is off; None is on (the environment's fields) when `variable` is set,
    else off; anything else is `NOT_A_SHORTHAND` (for the type to try its own)."""
    if value is False:
        return None
    if value is None:
        return {} if variable.is_set(environ) else None
    return NOT_A_SHORTHAND


def to_options(cls: type[T], value: Any, name: str,
               environ: Mapping[str, str] | None = None, **given: Any) -> T | None:
    """`value` as a `cls`: itself, its fields from a mapping, or what a shorthand stands for.

    Args:
        cls: the option type (one of `OPTION_TYPES`, or any dataclass).
        value: an instance of `cls`, a mapping of its constructor's keywords, or a shorthand
            (None: the defaults, unless `cls` says otherwise).
        name: the parameter's name, for messages (`` `telemetry='yes'` must be ... ``).
        environ: the environment to read (default ``os.environ``; tests pass a dict).
        given: fields the caller sets when `value` does not (``Detector.initialize``'s
            ``hang_action`` beside ``hang_timeout_s``).

    Returns:
        The options, or None when a shorthand means "off" (``report_log=False``).

    Raises:
        OptionTypeError: (a TypeError and a ValueError) for a value of no accepted form or a
            mapping with keys that are not strings.
        ValueError: for unknown or missing keys of a mapping; the type's own checks raise for
            bad field values, naming the field.
    """
    if not is_typeddict(cls) and isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        fields = _mapping_fields(cls, value, name)
    else:
        from_shorthand = getattr(cls, "_from_shorthand", _no_shorthand)
        fields = from_shorthand(value, name, environ)
        if fields is NOT_A_SHORTHAND:
            shorthands = getattr(cls, "_SHORTHANDS", "None")
            raise OptionTypeError(f"`{name}={value!r}` must be {shorthands}, a dict or a "
                                  f"straggler.options.{cls.__name__}")
        if fields is None:
            return None
    from_environment = getattr(cls, "_from_environment", None)
    if from_environment is not None:
        fields = {**from_environment(environ), **given, **fields}
    else:
        fields = {**given, **fields}
    missing = [p for p, parameter in _parameters(cls).items()
               if parameter.default is inspect.Parameter.empty and p not in fields]
    if missing:
        raise ValueError(f"`{name}={value!r}` lacks the required keys {missing}")
    return cls(**fields)


def _parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The keyword parameters of `cls`'s constructor (a dataclass's fields, its __init__, or a
    TypedDict's keys)."""
    if is_typeddict(cls):
        required: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
        return {key: inspect.Parameter(
            key, inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if key in required else None)
            for key in cls.__annotations__}
    return {p.name: p for p in inspect.signature(cls).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _mapping_fields(cls: type, value: Mapping[Any, Any], name: str) -> dict[str, Any]:
    """The mapping's items, once every key is a string naming a parameter of `cls`."""
    if any(not isinstance(key, str) for key in value):
        raise OptionTypeError(f"`{name}={dict(value)!r}` must have string keys (the fields of "
                              f"straggler.options.{cls.__name__})")
    known = list(_parameters(cls))
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise ValueError(f"`{name}={dict(value)!r}` has unknown keys {unknown}; known: {known}")
    return dict(value)
