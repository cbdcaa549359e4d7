"""The report log: one JSON line per report, appended atomically, rotated by size.

Writer: `ReportLog` queues each record (`straggler.sinks.record`) for a writer thread, so
the training thread never waits for the file system (a bounded queue: when it is full, records
are dropped and counted, with a warning). The thread encodes a record as one line and hands it
to the kernel in a single ``os.write`` on a file opened with ``O_APPEND``, so a reader (or a
second writer) never sees half a line; a write that fails part-way (a full disk) is cut back
off the file. (The standard ``logging.handlers.RotatingFileHandler`` writes through a buffered
text stream that splits long lines into several writes, and prints errors to stderr on every
record.) When the file would pass ``max_bytes`` it is rotated as logging does: ``LOG.1`` ..
``LOG.<backups>``, oldest dropped; when the path is deleted or renamed under it, the file is
reopened. An ``OSError`` (a full disk, a read-only directory) is logged once per run of
failures; it never reaches the detector.

Reader: `read_records` yields ``(path, line_number, record)`` from the rotated files oldest
first and raises `LogFormatError` naming ``FILE:LINE`` for a line that is not a record (or,
with ``on_bad``, hands it over and goes on).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Union

from .. import _env
from .._checks import check_int, check_name
from ..options import switched_by_environment

__all__ = ["ENV_PATH", "LogFormatError", "ReportLog", "ReportLogOptions", "encode_line",
           "log_files", "read_records"]

log = logging.getLogger("straggler")

ENV_PATH = _env.REPORT_LOG.name
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_BACKUPS = 5


@dataclass(frozen=True)
class ReportLogOptions:
    """Where and how the reporting rank writes the report log (docs/reportlog.md).

    ``path`` may contain ``{rank}``, replaced by the writer's global rank (useful with
    ``gather_on_rank0=False``, where every rank writes its own reports).

    ``initialize(report_log=...)`` (converted by `straggler.options.to_options`): None reads
    ``$STRAGGLER_REPORT_LOG`` (unset: off), False is off whatever the environment says, a path
    (str or os.PathLike) or a dict gives the fields. ``$STRAGGLER_REPORT_LOG_MAX_BYTES`` and
    ``$STRAGGLER_REPORT_LOG_BACKUPS`` set the rotation a path or a dict leaves out; an instance
    says it in full.
    """

    _SHORTHANDS: ClassVar[str] = "a path, False, None"

    path: str
    max_bytes: int = DEFAULT_MAX_BYTES
    """Rotate before a line would make the file larger than this (bytes)."""
    backups: int = DEFAULT_BACKUPS
    """Rotated files kept (``LOG.1`` newest .. ``LOG.<backups>`` oldest); 0: truncate instead."""

    def __post_init__(self) -> None:
        check_name("report_log", self.path)
        check_int("max_bytes", self.max_bytes)
        check_int("backups", self.backups, low=0)

    @classmethod
    def _from_shorthand(cls, value: Any, name: str,
                        environ: Mapping[str, str] | None) -> dict[str, Any] | None:
        """A path: the fields; None: the environment's path (else off); False: off."""
        if isinstance(value, (str, os.PathLike)):
            return {"path": os.fspath(value)}
        return switched_by_environment(value, _env.REPORT_LOG, environ)

    @classmethod
    def _from_environment(cls, environ: Mapping[str, str] | None) -> dict[str, Any]:
        """``$STRAGGLER_REPORT_LOG``, ``_MAX_BYTES`` and ``_BACKUPS``, those that are set."""
        values = {"path": _env.REPORT_LOG.read(environ),
                  "max_bytes": _env.REPORT_LOG_MAX_BYTES.read(environ),
                  "backups": _env.REPORT_LOG_BACKUPS.read(environ)}
        return {k: v for k, v in values.items() if v is not None}


_CHUNK = 512
"""List items encoded per ``json.dumps`` call by `encode_line` (about 1 ms of floats on a loaded
machine)."""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False, default=str)


def _size(value: Any) -> int:
    """About how many values `value` holds (a list's items are counted, not walked)."""
    if isinstance(value, dict):
        return len(value) + sum(_size(v) for v in value.values())
    return len(value) if isinstance(value, list) else 1


def _encode_parts(value: Any, out: list[str]) -> None:
    """Append `value`'s JSON text to `out`, in calls of about `_CHUNK` values at most."""
    if _size(value) <= _CHUNK:  # small: one call (a call per small dict costs more)
        out.append(_dumps(value))
    elif isinstance(value, list):
        out.append("[")
        for start in range(0, len(value), _CHUNK):
            if start:
                out.append(",")
            out.append(_dumps(value[start:start + _CHUNK])[1:-1])
        out.append("]")
    elif isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + _dumps(key) + ":")
            _encode_parts(item, out)
        out.append("}")
    else:  # a large dict with keys json converts (not str): one call
        out.append(_dumps(value))


def encode_line(record: Mapping[str, Any]) -> bytes:
    """`record` as one JSON line: the same bytes as ``json.dumps`` (compact, no NaN), encoded
    piece by piece.

    One ``json.dumps`` of a 16,384-rank record (3.4 MB) holds the GIL for its whole 0.1-0.3 s,
    and the training thread with it; between pieces the writer thread lets it run
    (benchmarks/record_cost.py).
    """
    out: list[str] = []
    _encode_parts(record, out)
    out.append("\n")
    return "".join(out).encode()


def _write_all(fd: int, data: bytes) -> None:
    """One write of the whole line (a seam: tests inject ENOSPC here)."""
    written = os.write(fd, data)
    if written != len(data):  # a short write: only on a full disk; report it as one
        raise OSError(28, f"short write ({written} of {len(data)} bytes)")


def _open(path: Path) -> int:
    """Open `path` for appending (a seam: tests make it block, as a hung mount does)."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def _last_byte(path: Path, info: os.stat_result) -> bytes:
    """The last byte of the regular file `path` (b"" when empty or not a regular file)."""
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return b""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, 1, info.st_size - 1)
    finally:
        os.close(fd)


MAX_QUEUED = 64
"""Records waiting for the writer thread; a record that finds the queue full is dropped."""
CLOSE_TIMEOUT_S = 2.0
"""How long `ReportLog.close` (and the interpreter's exit) waits for queued records."""


class ReportLog:
    """Appends one JSON line per record to ``options.path`` from a writer thread.

    `write` (the training thread) only queues the record: encoding, opening, rotating and
    writing happen on the writer thread, so a slow or hung file system costs the job nothing.
    At most ``max_queued`` records wait; more are dropped and counted (`dropped`), with a
    warning. A write that fails (a full disk) is undone (`os.ftruncate` back to where the line
    began: never half a line), counted in `failed` and logged once per run of failures; later
    records are tried again. When the path no longer names the open file (deleted, renamed,
    replaced), the writer reopens it.
    """

    def __init__(self, options: ReportLogOptions, rank: int = 0,
                 max_queued: int = MAX_QUEUED) -> None:
        self.options = options
        self.path = Path(options.path.replace("{rank}", str(rank)))
        self.lines_written = 0
        self.dropped = 0
        """Records dropped because the queue was full (the writer is slow or stuck)."""
        self.failed = 0
        """Records whose write failed (an OSError, logged)."""
        self.reopened = 0
        """Times the path was found deleted or replaced and opened again."""
        self._fd: int | None = None
        self._failing = False
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(max_queued)
        self._thread: threading.Thread | None = None
        self._closed = False

    def write(self, record: dict[str, Any]) -> bool:
        """Queue `record` (not changed afterwards) for writing; never blocks.

        False when it was dropped: the queue is full (logged at the first drop and at every
        power of two) or the log is closed.
        """
        if self._closed:
            return False
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="straggler-report-log",
                                            daemon=True)
            self._thread.start()
            atexit.register(self.close)
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:  # 1, 2, 4, 8, ...
                log.warning("straggler: the report log %s is not keeping up (its file system "
                            "is slow or hung); %d record(s) dropped so far, detection and "
                            "training go on", self.path, self.dropped)
            return False
        return True

    def flush(self, timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
        """Wait until every queued record is written (or failed); False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._queue.all_tasks_done.wait(left)
        return True

    def _run(self) -> None:
        while True:
            record = self._queue.get()
            try:
                if record is None:
                    return
                self._write_line(record)
            finally:
                self._queue.task_done()

    def _write_line(self, record: dict[str, Any]) -> None:
        try:
            line = encode_line(record)
            fd = self._current_fd()
            size = os.fstat(fd).st_size
            if size and size + len(line) > self.options.max_bytes:
                fd = self._rotate()
                size = 0
            try:
                _write_all(fd, line)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)  # undo our part of the line: never half a line
                raise
        except (OSError, ValueError) as exc:
            self.failed += 1
            self._close_fd()
            if not self._failing:
                log.error("straggler: cannot write the report log %s (%s); the record is "
                          "lost, later ones are tried again; detection and training go on",
                          self.path, exc)
            self._failing = True
            return
        if self._failing:
            log.warning("straggler: the report log %s is written again (%d record(s) lost)",
                        self.path, self.failed)
        self._failing = False
        self.lines_written += 1

    def _current_fd(self) -> int:
        """The open file, reopened when the path names another file or none."""
        if self._fd is not None:
            try:
                same = os.path.samestat(os.stat(self.path), os.fstat(self._fd))
            except FileNotFoundError:
                same = False
            if not same:
                self.reopened += 1
                log.warning("straggler: the report log %s was deleted or replaced; writing a "
                            "new file there", self.path)
                self._close_fd()
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = _open(self.path)
            try:
                if _last_byte(self.path, os.fstat(fd)) not in (b"", b"\n"):
                    # A line someone left unfinished: end it, so ours starts a line of its own
                    # (readers report, or with skip_bad skip, the broken one).
                    _write_all(fd, b"\n")
            except OSError:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _rotate(self) -> int:
        self._close_fd()
        n = self.options.backups
        if n == 0:
            os.truncate(self.path, 0)
        else:
            for i in range(n - 1, 0, -1):
                src = self.path.with_name(f"{self.path.name}.{i}")
                if src.exists():
                    os.replace(src, self.path.with_name(f"{self.path.name}.{i + 1}"))
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        return self._current_fd()

    def _close_fd(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """Write what is queued (waiting at most `timeout_s`), stop the writer; idempotent.

        A writer stuck in the file system (a hung mount) is left behind (a daemon thread) with
        a warning naming the records not written.
        """
        if self._closed:
            return
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        atexit.unregister(self.close)
        deadline = time.monotonic() + timeout_s
        stop = 0
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout_s)
            stop = 1
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if thread.is_alive():  # unfinished: queued, and the one the writer holds
            log.warning("straggler: the report log %s is stuck in the file system; %d "
                        "record(s) not written, the writer thread is left behind",
                        self.path, self._queue.unfinished_tasks - stop)
            return
        self._close_fd()

    def thread_alive(self) -> bool:
        """Whether the writer thread runs (False before the first record and after `close`)."""
        return self._thread is not None and self._thread.is_alive()


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


def read_records(paths: Sequence[PathLike] | PathLike, rotated: bool = True,
                 on_bad: Callable[[LogFormatError], None] | None = None,
                 on_hang: Callable[[Path, int, dict[str, Any]], None] | None = None
                 ) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """Yield ``(file, line number, record)`` of every record, oldest first.

    With ``rotated``, each path stands for itself and its rotated files. A last line without
    its newline is a line being written: skipped. Anything else that is not a JSON object of
    schema ``straggler.report`` in a version this reader knows (`READ_VERSIONS`) raises
    `LogFormatError` naming ``FILE:LINE``; with ``on_bad``, the error is handed to it instead
    and reading goes on (``straggler summarize --skip-bad``). Hang findings (schema
    ``straggler.hang``, docs/hang.md) share the file and are skipped: they are not reports;
    with ``on_hang`` each is handed to it as ``(file, line number, record)``, oldest first.
    """
    from .record import READ_VERSIONS, SCHEMA

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
                if b'"schema":"straggler.hang"' in raw[:40]:
                    if on_hang is not None:  # a hang finding (docs/hang.md), not a report
                        try:
                            on_hang(f, number, _parse_line(f, number, raw, "straggler.hang",
                                                           (1,)))
                        except LogFormatError as exc:
                            if on_bad is None:
                                raise
                            on_bad(exc)
                    continue
                try:
                    yield f, number, _parse_line(f, number, raw, SCHEMA, READ_VERSIONS)
                except LogFormatError as exc:
                    if on_bad is None:
                        raise
                    on_bad(exc)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse_line(f: Path, number: int, raw: bytes, schema: str,
                versions: tuple[int, ...]) -> dict[str, Any]:
    try:
        record = json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise LogFormatError(f"{f}:{number}: not a report record (nested too deep)") from None
    except ValueError as exc:
        raise LogFormatError(f"{f}:{number}: not a JSON line ({exc})") from None
    if not isinstance(record, dict) or record.get("schema") != schema:
        raise LogFormatError(f"{f}:{number}: not a straggler report record "
                             f"(no \"schema\": \"{schema}\")")
    version = record.get("version")
    if isinstance(version, bool) or version not in versions:
        known = " and ".join(map(str, versions))
        raise LogFormatError(f"{f}:{number}: report record version {str(version)[:20]}; this "
                             f"straggler reads version {known}")
    return record
