"""The one reader of the ``STRAGGLER_*`` environment.

Each variable is one `EnvVar` below: its name, what it holds, its parser and its default.
``DISABLE.read()`` returns the parsed value (the default when unset or blank) or raises
ValueError naming the variable and echoing its value (`` `STRAGGLER_DISABLE='banana'` must be
... ``). `VARIABLES` lists them all for ``straggler doctor`` and docs/detector.md; a new
variable is one more `EnvVar` here, added to `VARIABLES`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["EnvVar", "VARIABLES", "DISABLE", "REPORT_LOG", "REPORT_LOG_MAX_BYTES",
           "REPORT_LOG_BACKUPS", "PROMETHEUS_PORT", "PROMETHEUS_ADDR", "LIBCUDA", "LIBNVML",
           "FT_STATE", "RUN_ID", "CONTROLLER_TOKEN", "CONTROLLER_TOKEN_DIR", "AUTO",
           "REPORT_INTERVAL", "STEP", "QUIET", "COMM_TIMEOUT", "STEP_MODES", "choice", "flag",
           "integer", "seconds", "text", "HANG_TIMEOUT", "seconds_or_word"]

T = TypeVar("T")

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def flag(name: str, raw: str) -> bool:
    """A switch: 1/true/yes/on or 0/false/no/off (any case); anything else is refused."""
    value = raw.lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError(f"`{name}={raw!r}` must be one of {'/'.join(TRUE)} (on) or "
                     f"{'/'.join(FALSE)} (off)")


def integer(low: int, high: int | None = None) -> Callable[[str, str], int]:
    """A parser of a whole number in [low, high]."""
    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            what = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ValueError(f"`{name}={raw!r}` must be an integer {what}")
        return value
    return parse


def seconds(allow_zero: bool = False) -> Callable[[str, str], float]:
    """A parser of a finite number of seconds, > 0 (>= 0 with `allow_zero`)."""
    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            what = "a number of seconds >= 0" if allow_zero else "a positive number of seconds"
            raise ValueError(f"`{name}={raw!r}` must be {what}")
        return value
    return parse


def choice(*options: str) -> Callable[[str, str], str]:
    """A parser of one of `options` (any case)."""
    def parse(name: str, raw: str) -> str:
        value = raw.lower()
        if value not in options:
            raise ValueError(f"`{name}={raw!r}` must be one of {', '.join(options)}")
        return value
    return parse


def text(name: str, raw: str) -> str:
    """Any non-blank string, stripped."""
    return raw


def seconds_or_word(*words: str) -> Callable[[str, str], float | str]:
    """A parser of positive seconds, or one of `words` (any case, returned lower-case)."""
    def parse(name: str, raw: str) -> float | str:
        if raw.lower() in words:
            return raw.lower()
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise ValueError(f"`{name}={raw!r}` must be seconds (> 0) or one of "
                             f"{', '.join(words)}")
        return value
    return parse


@dataclass(frozen=True)
class EnvVar(Generic[T]):
    """One ``STRAGGLER_*`` variable: `read` parses it, `raw` is its text as set."""

    name: str
    parse: Callable[[str, str], T]
    default: T
    help: str
    """What it does, for doctor and the docs."""

    def raw(self, environ: Mapping[str, str] | None = None) -> str:
        """The value as set, stripped; "" when unset."""
        return (os.environ if environ is None else environ).get(self.name, "").strip()

    def is_set(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether it is set to a non-blank value."""
        return bool(self.raw(environ))

    def read(self, environ: Mapping[str, str] | None = None) -> T:
        """The parsed value, or `default` when unset or blank; ValueError when malformed."""
        raw = self.raw(environ)
        return self.parse(self.name, raw) if raw else self.default


DISABLE: EnvVar[bool] = EnvVar(
    "STRAGGLER_DISABLE", flag, False,
    "1/true/yes/on turns the whole API into no-ops (arguments are still checked)")
REPORT_LOG: EnvVar[str | None] = EnvVar(
    "STRAGGLER_REPORT_LOG", text, None,
    "report log path when initialize(report_log=None) (docs/reportlog.md)")
REPORT_LOG_MAX_BYTES: EnvVar[int | None] = EnvVar(
    "STRAGGLER_REPORT_LOG_MAX_BYTES", integer(1), None,
    "rotate the report log before it grows past this many bytes")
REPORT_LOG_BACKUPS: EnvVar[int | None] = EnvVar(
    "STRAGGLER_REPORT_LOG_BACKUPS", integer(0), None, "rotated report log files kept")
PROMETHEUS_PORT: EnvVar[int | None] = EnvVar(
    "STRAGGLER_PROMETHEUS_PORT", integer(0, 65535), None,
    "exporter port when initialize(prometheus=None) (docs/metrics.md)")
PROMETHEUS_ADDR: EnvVar[str | None] = EnvVar(
    "STRAGGLER_PROMETHEUS_ADDR", text, None, "exporter address (default 127.0.0.1)")
LIBCUDA: EnvVar[str | None] = EnvVar(
    "STRAGGLER_LIBCUDA", text, None, "the CUDA driver library to load (read by straggler._core)")
LIBNVML: EnvVar[str | None] = EnvVar(
    "STRAGGLER_LIBNVML", text, None, "the NVML library to load (read by straggler._core)")
FT_STATE: EnvVar[str | None] = EnvVar(
    "STRAGGLER_FT_STATE", text, None, "the FT bridge's state file or directory (docs/ft.md)")
RUN_ID: EnvVar[str | None] = EnvVar(
    "STRAGGLER_RUN_ID", text, None,
    "the run id in every report log record (default: torchrun's TORCHELASTIC_RUN_ID)")
CONTROLLER_TOKEN: EnvVar[str | None] = EnvVar(
    "STRAGGLER_CONTROLLER_TOKEN", text, None,
    "the HTTP controller's token (default: one generated per job, in a private file)")
CONTROLLER_TOKEN_DIR: EnvVar[str | None] = EnvVar(
    "STRAGGLER_CONTROLLER_TOKEN_DIR", text, None,
    "where generated controller tokens are written (default $XDG_RUNTIME_DIR/straggler)")

# The zero-code attach (straggler/attach/, docs/attach.md); `straggler run` sets them.
AUTO: EnvVar[bool] = EnvVar(
    "STRAGGLER_AUTO", flag, False,
    "1: attach the detector to every Python process that calls init_process_group "
    "(docs/attach.md)")
REPORT_INTERVAL: EnvVar[float] = EnvVar(
    "STRAGGLER_REPORT_INTERVAL", seconds(allow_zero=True), 60.0,
    "attached jobs: seconds between reports (0: every step)")
#: The attach's step boundary: the optimizer's step, else (no optimizer stepped yet) every
#: collective on the default group; or only one of the two.
STEP_MODES = ("auto", "optimizer", "collective")
STEP: EnvVar[str] = EnvVar(
    "STRAGGLER_STEP", choice(*STEP_MODES), "auto",
    "attached jobs: the step boundary, auto/optimizer/collective")
QUIET: EnvVar[bool] = EnvVar(
    "STRAGGLER_QUIET", flag, False, "attached jobs: no per-report line on stderr")
COMM_TIMEOUT: EnvVar[float] = EnvVar(
    "STRAGGLER_COMM_TIMEOUT", seconds(), 120.0,
    "attached jobs: timeout of the detector's own collectives (s)")

HANG_TIMEOUT: EnvVar[float | str | None] = EnvVar(
    "STRAGGLER_HANG_TIMEOUT", seconds_or_word("auto", "off"), None,
    "hang timeout (seconds, auto or off) when initialize(hang_timeout_s='auto') (docs/hang.md)")

CACHE_DIR: EnvVar[str | None] = EnvVar(
    "STRAGGLER_CACHE_DIR", text, None, "where the native op observer is built and cached")
BUILD_OPS: EnvVar[bool] = EnvVar(
    "STRAGGLER_BUILD_OPS", flag, True, "0/false/no/off: never build the native op observer")

VARIABLES: tuple[EnvVar[Any], ...] = (
    DISABLE, REPORT_LOG, REPORT_LOG_MAX_BYTES, REPORT_LOG_BACKUPS, PROMETHEUS_PORT,
    PROMETHEUS_ADDR, LIBCUDA, LIBNVML, FT_STATE, CACHE_DIR, BUILD_OPS, RUN_ID, CONTROLLER_TOKEN,
    CONTROLLER_TOKEN_DIR,
    AUTO, REPORT_INTERVAL, STEP, QUIET, COMM_TIMEOUT, HANG_TIMEOUT)
