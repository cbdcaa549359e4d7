"""A launcher stopped by a signal ends by that signal, without a traceback.

torchrun (``torch.distributed.run``) turns SIGTERM, SIGINT, SIGHUP and SIGQUIT into a
``SignalException``: it stops its workers, then lets the exception end the process, which
prints a traceback of the launcher's own frames and exits with status 1. In an attached job
(`straggler run`, ``STRAGGLER_AUTO=1``) `install` puts a ``sys.excepthook`` in every Python
process that ends such a process the conventional way instead: the ``atexit`` handlers run, then
the process dies by the same signal (a shell shows 128 + N, 143 for SIGTERM). Any other
exception goes to the previous hook unchanged. torch is not imported: the exception is known by
its class name.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
from types import TracebackType
from typing import Any

__all__ = ["install", "signal_of"]

_SIGNAL_EXCEPTIONS = frozenset({"torch.distributed.elastic.multiprocessing.api.SignalException"})


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
