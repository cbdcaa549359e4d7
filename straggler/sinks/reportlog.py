"""The report log: one JSON line per report, appended atomically, rotated by size.

Writer: `ReportLog` encodes a record (`straggler.sinks.record`) as one line and hands it to
the kernel in a single ``os.write`` on a file opened with ``O_APPEND``, so a reader (or a
second writer) never sees half a line; there is no user-space buffer to flush. (The standard
``logging.handlers.RotatingFileHandler`` writes through a buffered text stream that splits long
lines into several writes, and prints errors to stderr on every record.) When the file would
pass ``max_bytes`` it is rotated as logging does: ``LOG.1`` .. ``LOG.<backups>``, oldest
dropped. Any ``OSError`` (a full disk, a read-only directory) is logged once and the log stops
writing; it never raises into the detector.

Reader: `read_records` yields ``(path, line_number, record)`` from the rotated files oldest
first and raises `LogFormatError` naming ``FILE:LINE`` for a line that is not a record.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from .. import _env
from .._checks import OptionTypeError, check_int, check_name

__all__ = ["ENV_PATH", "LogFormatError", "ReportLog", "ReportLogOptions", "log_files",
           "read_records", "report_log_options"]

log = logging.getLogger("straggler")

ENV_PATH = _env.REPORT_LOG.name
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_BACKUPS = 5


@dataclass(frozen=True)
class ReportLogOptions:
    """Where and how the reporting rank writes the report log (docs/reportlog.md).

    ``path`` may contain ``{rank}``, replaced by the writer's global rank (useful with
    ``gather_on_rank0=False``, where every rank writes its own reports).
    """

    path: str
    max_bytes: int = DEFAULT_MAX_BYTES
    """Rotate before a line would make the file larger than this (bytes)."""
    backups: int = DEFAULT_BACKUPS
    """Rotated files kept (``LOG.1`` newest .. ``LOG.<backups>`` oldest); 0: truncate instead."""

    def __post_init__(self) -> None:
        check_name("report_log", self.path)
        check_int("max_bytes", self.max_bytes)
        check_int("backups", self.backups, low=0)


def report_log_options(value: Any) -> ReportLogOptions | None:
    """The `initialize(report_log=...)` option, else ``$STRAGGLER_REPORT_LOG``, else None.

    ``value``: None (use the environment), False (off, whatever the environment says), a path
    (str or os.PathLike) or a `ReportLogOptions`. For a path, from the code or the environment,
    ``$STRAGGLER_REPORT_LOG_MAX_BYTES`` and ``$STRAGGLER_REPORT_LOG_BACKUPS`` set the rotation;
    a `ReportLogOptions` says it in full. Raises TypeError for a value of another type.
    """
    if value is False:
        return None
    if isinstance(value, ReportLogOptions):
        return value
    if value is None:
        value = _env.REPORT_LOG.read()
        if value is None:
            return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise OptionTypeError(f"`report_log={value!r}` must be a path, a "
                              "straggler.sinks.ReportLogOptions, False or None")
    max_bytes = _env.REPORT_LOG_MAX_BYTES.read()
    backups = _env.REPORT_LOG_BACKUPS.read()
    return ReportLogOptions(value, DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
                            DEFAULT_BACKUPS if backups is None else backups)


def _write_all(fd: int, data: bytes) -> None:
    """One write of the whole line (a seam: tests inject ENOSPC here)."""
    written = os.write(fd, data)
    if written != len(data):  # a short write: only on a full disk; report it as one
        raise OSError(28, f"short write ({written} of {len(data)} bytes)")


class ReportLog:
    """Appends one JSON line per record to ``options.path``, rotating by size."""

    def __init__(self, options: ReportLogOptions, rank: int = 0) -> None:
        self.options = options
        self.path = Path(options.path.replace("{rank}", str(rank)))
        self.failed = False
        self.lines_written = 0
        self._fd: int | None = None

    def write(self, record: dict[str, Any]) -> bool:
        """Append `record` as one line; False (and logged once) when the log has failed."""
        if self.failed:
            return False
        try:
            line = (json.dumps(record, separators=(",", ":"), allow_nan=False,
                               default=str) + "\n").encode()
            fd = self._open()
            size = os.fstat(fd).st_size
            if size and size + len(line) > self.options.max_bytes:
                fd = self._rotate()
            _write_all(fd, line)
            self.lines_written += 1
            return True
        except (OSError, ValueError) as exc:
            self.failed = True
            self.close()
            log.error("straggler: cannot write the report log %s (%s); it is off for the rest "
                      "of this run, detection and training go on", self.path, exc)
            return False

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self._fd

    def _rotate(self) -> int:
        self.close()
        n = self.options.backups
        if n == 0:
            os.truncate(self.path, 0)
        else:
            for i in range(n - 1, 0, -1):
                src = self.path.with_name(f"{self.path.name}.{i}")
                if src.exists():
                    os.replace(src, self.path.with_name(f"{self.path.name}.{i + 1}"))
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        return self._open()

    def close(self) -> None:
        """Close the file (a later `write` reopens it unless the log has failed)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


# -- reading -------------------------------------------------------------------------------------
class LogFormatError(ValueError):
    """A line of a report log that is not a record; the message starts with ``FILE:LINE:``."""


PathLike = Union[str, "os.PathLike[str]"]


def log_files(path: PathLike) -> list[Path]:
    """``path`` and its rotated files, oldest first (``LOG.5``, ..., ``LOG.1``, ``LOG``).

    Raises FileNotFoundError naming ``path`` when neither it nor a rotated file exists.
    """
    base = Path(path)
    rotated = []
    for p in base.parent.glob(base.name + ".*"):
        suffix = p.name[len(base.name) + 1:]
        if suffix.isdigit():
            rotated.append((int(suffix), p))
    files = [p for _, p in sorted(rotated, reverse=True)]
    if base.exists():
        files.append(base)
    if not files:
        raise FileNotFoundError(f"{base}: no such report log (nor rotated {base.name}.N files)")
    return files


def read_records(paths: Sequence[PathLike] | PathLike, rotated: bool = True
                 ) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """Yield ``(file, line number, record)`` of every record, oldest first.

    With ``rotated``, each path stands for itself and its rotated files. A last line without
    its newline is a line being written: skipped. Anything else that is not a JSON object of
    schema ``straggler.reporting.report`` version 1 raises `LogFormatError` naming ``FILE:LINE``.
    """
    from .record import SCHEMA, SCHEMA_VERSION

    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[Path] = []
    for p in items:
        files += log_files(p) if rotated else [Path(p)]
    for f in files:
        with open(f, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.endswith(b"\n"):
                    break  # the writer's line in flight
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except ValueError as exc:
                    raise LogFormatError(f"{f}:{number}: not a JSON line ({exc})") from None
                if not isinstance(record, dict) or record.get("schema") != SCHEMA:
                    raise LogFormatError(f"{f}:{number}: not a straggler report record "
                                         f"(no \"schema\": \"{SCHEMA}\")")
                if record.get("version") != SCHEMA_VERSION:
                    raise LogFormatError(f"{f}:{number}: report record version "
                                         f"{record.get('version')!r}; this straggler reads "
                                         f"version {SCHEMA_VERSION}")
                yield f, number, record
