"""A launcher stopped by a signal ends by that signal, without a traceback.

torchrun (``torch.distributed.run``) turns SIGTERM, SIGINT, SIGHUP and SIGQUIT into a
``SignalException``: it stops its workers, then lets the exception end the process, which
prints a traceback of the launcher's own frames and exits with status 1. In an attached job
(`straggler run`, ``STRAGGLER_AUTO=1``) `install` puts a ``sys.excepthook`` in every Python
process that ends such a process the conventional way instead: the ``atexit`` handlers run, then
the process dies by the same signal (a shell shows 128 + N, 143 for SIGTERM). Any other
exception goes to the previous hook unchanged. torch is not imported: the exception is known by
its class name.

A stop often reaches torchrun twice (a signal to the whole process group, then `straggler run`
passing it on); the second raised again in the middle of the workers' shutdown.
`patch_elastic_api` (run by the attach's import hook when torchrun imports its process module)
makes a repeat within `REPEAT_WINDOW_S` do nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
import time
from types import ModuleType, TracebackType
from typing import Any

__all__ = ["ELASTIC_API", "install", "patch_elastic_api", "signal_of"]

ELASTIC_API = "torch.distributed.elastic.multiprocessing.api"
"""torchrun's process module: its ``_terminate_process_handler`` raises the exception."""
REPEAT_WINDOW_S = 2.0
"""A stop signal this soon after the first is the same stop delivered twice: to the job's process
group (``timeout``, a scheduler signalling every process) and forwarded by `straggler run`."""

_SIGNAL_EXCEPTIONS = frozenset({f"{ELASTIC_API}.SignalException"})


def signal_of(exc: BaseException) -> int | None:
    """The signal number a launcher's ``SignalException`` carries, else None."""
    for cls in type(exc).__mro__:
        if f"{cls.__module__}.{cls.__qualname__}" in _SIGNAL_EXCEPTIONS:
            try:
                return int(exc.sigval)  # type: ignore[attr-defined]
            except (TypeError, ValueError, AttributeError):
                return None
    return None


def _hook(previous: Any) -> Any:
    def excepthook(exc_type: type[BaseException], exc: BaseException,
                   tb: TracebackType | None) -> None:
        signum = signal_of(exc)
        if signum is None:
            previous(exc_type, exc, tb)
            return
        # Its workers are stopped (torchrun did that before raising); end as the signal would.
        with contextlib.suppress(Exception):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
            os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal whose default action does not end the process

    excepthook.__straggler_previous__ = previous  # type: ignore[attr-defined]
    return excepthook


def install() -> None:
    """Put the hook in ``sys.excepthook`` (once per process)."""
    if not hasattr(sys.excepthook, "__straggler_previous__"):
        sys.excepthook = _hook(sys.excepthook)


def patch_elastic_api(module: ModuleType) -> None:
    """Make torchrun's stop handler raise once per stop: the same signal (or another stop
    signal) within `REPEAT_WINDOW_S` of the first is ignored. A second delivery raised again in
    the middle of the workers' shutdown (a "--- Logging error ---" traceback from inside
    torch's logging); a later one (a second Ctrl-C) still cuts the shutdown short, as before."""
    original = getattr(module, "_terminate_process_handler", None)
    if original is None or hasattr(original, "__straggler_original__"):
        return
    first: list[float] = []

    @functools.wraps(original)
    def handler(signum: int, frame: Any) -> None:
        now = time.monotonic()
        if first and now - first[0] < REPEAT_WINDOW_S:
            return
        first[:] = [now]
        original(signum, frame)

    handler.__straggler_original__ = original  # type: ignore[attr-defined]
    module._terminate_process_handler = handler  # type: ignore[attr-defined]
