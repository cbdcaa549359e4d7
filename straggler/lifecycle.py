"""`Lifecycle`: how one detector stops: fail open, after a fork, and at shutdown.

Fail open: an exception raised inside the detector (a driver error, a dead peer, a bug) is
logged once on the ``straggler`` logger and the detector disables itself: sections stop timing,
reports return None, and the training loop never sees it. The ranks turn off together
(straggler/dist/failopen.py): outside a report a failed rank keeps joining the report protocol
(`leaving`) and says "off" at the next report; inside one (its collectives started) it closes
its communicator at once, so that the peers' pending collective fails now instead of after
``comm_timeout_s``. A forked child's detector is inert (straggler/forksafe.py).

At interpreter exit a detector that was never shut down closes itself (local steps only, no
collective): its daemon threads (hang watchdog, report deadline, exporter) must not be inside a
store call or a gloo wait when Python finalizes, because a daemon thread that returns from C++
then is ended by ``pthread_exit``, whose unwinding through C++ frames aborts the process
("terminate called without an active exception", exit code -6): a job that finished its work
would fail.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._log import WarnOnce

__all__ = ["Lifecycle"]

log = logging.getLogger("straggler")


class Lifecycle:
    """The on/off state of one detector and the ways it ends.

    Args:
        disable: turns timing off everywhere (sections, op observer); called on every stop.
        agree_by_comm: whether reports communicate, so that a failed rank must say "off" at
            the next report rather than leave silently.
    """

    def __init__(self, disable: Callable[[], None], agree_by_comm: bool) -> None:
        self._disable = disable
        self.agree_by_comm = agree_by_comm
        self.comm: Any = None  # the detector's communicator, closed when it leaves for good
        self.leaving = False  # failed: not timing, but still joins the next report to say "off"
        self.done = False  # left the report protocol for good
        self.forked = False  # in a forked child: inert, nothing of the parent's is stopped
        self.failed = False
        # `warn_once(key, msg, *args)`: a warning logged the first time `key` is seen.
        self.warn_once = WarnOnce(log)
        # Run (best effort) when this rank leaves the report protocol: other groups to close.
        self.on_stop: list[Callable[[], None]] = []

    def in_reports(self, enabled: bool) -> bool:
        """Whether this rank still takes part in reports (`enabled`: the sections' state)."""
        return not self.done and (enabled or self.leaving)

    def fail(self, exc: BaseException, *, in_report: bool = False) -> None:
        """Log once, then disable: sections stop timing and reports return None.

        Outside a report, the rank keeps joining the report protocol and says "off" at the next
        report, where every rank turns off together. Inside a report (its collectives started),
        the communicator is closed at once so that the peers' pending collective fails now.
        """
        self._disable()
        if in_report or not (self.agree_by_comm and not self.done):
            self.stop_reporting()
        else:
            self.leaving = True
        if not self.failed:
            self.failed = True
            if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not our error
                log.warning("straggler: %s inside the detector; straggler detection is off on "
                            "this rank for the rest of this run", type(exc).__name__)
                return
            # A collective that failed is the group's doing (a peer skipped, left, died or
            # stalled; its message says which), not a fault inside this rank's detector.
            what = "the detector's group failed" if _is_comm_error(exc) else "internal error"
            log.error("straggler: %s, straggler detection is disabled for the rest of this run "
                      "(training continues): %s: %s", what, type(exc).__name__, exc,
                      exc_info=exc)

    def stop_reporting(self) -> None:
        """Leave the report protocol for good; peers blocked on us fail at once (gloo)."""
        self._disable()
        self.leaving = False
        self.done = True
        comm = self.comm
        if comm is not None and not self.forked:
            with contextlib.suppress(Exception):  # best effort: we are leaving anyway
                comm.close()
        if not self.forked:
            for stop in self.on_stop:
                with contextlib.suppress(Exception):
                    stop()

    def forget_after_fork(self, native: Iterable[Any]) -> None:
        """In a forked child: inert; the `native` objects are kept, never stopped."""
        from .forksafe import keep_forever

        self.forked = True
        self.leaving = False
        self.done = True
        self._disable()
        for obj in native:
            keep_forever(obj)

    @staticmethod
    def close_at_exit(close: Callable[[], None]) -> Callable[[], None]:
        """Run `close` (a bound method, held weakly) at interpreter exit; returns the hook.

        atexit runs after the main thread's work and before finalization stops daemon threads,
        so the detector's threads are joined while joining them is still safe.
        """
        method = weakref.WeakMethod(close)

        def hook() -> None:
            target = method()
            if target is not None:
                with contextlib.suppress(Exception):  # the job is exiting: never fail it
                    target()

        atexit.register(hook)
        return hook

    @staticmethod
    def forget_exit_hook(hook: Callable[[], None] | None) -> None:
        """Drop a hook of `close_at_exit` (the detector was closed before exit)."""
        if hook is not None:
            atexit.unregister(hook)

    def close(self, steps: Sequence[tuple[str, Callable[[], Any]]]) -> None:
        """Stop for good, then run each closing step (`(what, call)`); a failing one is logged.

        Only stops in a forked child (the parent's threads and contexts are not ours to stop).
        """
        self.leaving = False
        self._disable()
        if not self.forked:
            self.close_quietly(steps)

    @staticmethod
    def close_quietly(steps: Sequence[tuple[str, Callable[[], Any]]]) -> None:
        """Run every closing step; one that raises is logged and the next ones still run."""
        for what, step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - shutdown must finish
                log.warning("straggler: closing the %s failed: %s", what, exc)


def _is_comm_error(exc: BaseException) -> bool:
    """Whether `exc` is the communicator's `CommError` (without importing torch for it)."""
    return any(cls.__name__ == "CommError" and cls.__module__ == "straggler.dist.comm"
               for cls in type(exc).__mro__)
