"""`ReportDeadline`: a report on time whatever the step time does, without a collective per step.

The report interval is counted in iterations (`ReportIntervalTracker`), so that every rank reports
on the same iteration at no communication cost. When steps slow down, that count arrives late
by the same factor. The deadline bounds it in time: each rank's watcher thread, once its own
clock passes the window's deadline, starts one non-blocking all_reduce(MAX) of the iteration the
rank is at, on a gloo group that carries nothing else (so it can never be interleaved with the
report's collectives). Its result P, the same on every rank, makes the report due on iteration
``P + margin``: no rank can have passed it, because a rank that started the reduction at
iteration ``p <= P`` and has no result by iteration ``p + margin`` waits for it there. That wait
is for peers' watcher threads, never for their training loop, so it cannot deadlock with a
training collective; in lockstep training it is as short as the ranks' clock skew, at most once
per window.

Each window (report to report) posts exactly one reduction on every rank: a report ends the
window by posting it if the clock had not (`finish_window`, inside the report, where every rank
is anyway) and waiting for it, so the group's sequence stays matched.

The training thread only reads a few attributes per step (`due`); the clock and the reduction
are injected, so the logic is tested without a process group.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["ReportDeadline", "DEADLINE_FACTOR", "MARGIN_ITERS"]

log = logging.getLogger("straggler")

#: A window's deadline is this multiple of its interval: the iteration count comes first where
#: steps are steady; the deadline catches it when the step time grew by more than 5 %. On a busy
#: host the step rate drifts by more than that over a window: at 1.2, 5 s windows ran 6 s, and
#: the first report of a straggler came 0.2 intervals late (benchmarks/README.md, "Report
#: schedule"). Each window posts its one reduction anyway, at the deadline or at the report.
DEADLINE_FACTOR = 1.05
#: Iterations between the agreed iteration and the report (room for the result to arrive).
MARGIN_ITERS = 2
# The watcher polls a posted reduction (ReportDeadline._await): first after 1 ms (in lockstep
# the peers' posts are that close), then less often, up to every 20 ms.
_POLL_FIRST_S = 0.001
_POLL_MAX_S = 0.02


class _Pending(Protocol):
    def done(self) -> bool: ...

    def wait(self) -> Any: ...


class ReportDeadline:
    """Agrees on a report iteration once a window's deadline has passed (see the module doc).

    Args:
        post: starts the reduction of a float (the iteration) over the group and returns a
            handle with ``done()`` and ``wait()`` (the MAX, as a 1-element tensor or sequence);
            None when this process is alone (or reports need no agreement): the deadline is
            then this rank's own clock.
        read_iter: the current iteration (read by the watcher thread when it posts).
        clock: seconds (default `time.monotonic`).
        margin_iters: iterations between the agreed iteration and the report.
        wait_s: longest wait for a result in the training thread (the group's timeout).
    """

    def __init__(self, post: Callable[[float], _Pending] | None, read_iter: Callable[[], int],
                 clock: Callable[[], float] = time.monotonic, margin_iters: int = MARGIN_ITERS,
                 wait_s: float = 120.0) -> None:
        self._post_fn = post
        self._read_iter = read_iter
        self._clock = clock
        self.margin_iters = margin_iters
        self.wait_s = wait_s
        self._cond = threading.Condition()
        self._deadline_at: float | None = None  # None: no window open
        self._handle: _Pending | None = None
        self._posted_iter: int | None = None
        self._result: int | None = None
        self._error: BaseException | None = None
        self._stop = False
        self._thread: threading.Thread | None = None
        self.windows = 0  # windows started
        self.triggered = 0  # windows whose deadline made the report due

    # -- the training thread ----------------------------------------------------------------
    def start_window(self, interval_s: float) -> None:
        """Open a window whose deadline is `DEADLINE_FACTOR * interval_s` from now."""
        with self._cond:
            self._deadline_at = self._clock() + DEADLINE_FACTOR * interval_s
            self._handle = None
            self._posted_iter = self._result = None
            self.windows += 1
            if self._post_fn is not None and self._thread is None and not self._stop:
                self._thread = threading.Thread(target=self._watch, name="straggler-deadline",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def due(self, current_iter: int) -> int | None:
        """The iteration the deadline made a report due on (>= `current_iter`), or None.

        Waits only when this rank's reduction started `margin_iters` iterations ago and its
        result is not in yet (bounded by `wait_s`); raises the reduction's error.
        """
        if self._deadline_at is None:
            return None
        if self._post_fn is None:  # alone: no agreement needed
            if self._clock() >= self._deadline_at:
                self.triggered += 1
                self._deadline_at = None
                return current_iter
            return None
        if self._error is not None:
            raise self._error
        if self._result is None:
            posted = self._posted_iter
            if posted is None or current_iter < posted + self.margin_iters:
                return None
            self._wait_result()
        assert self._result is not None
        return self._result + self.margin_iters

    def finish_window(self) -> None:
        """Inside a report (every rank): post this window's reduction if the clock did not,
        wait for it, and close the window. Raises the reduction's error."""
        if self._post_fn is None or self._deadline_at is None:
            self._deadline_at = None
            return
        with self._cond:
            if self._handle is None:
                self._post_locked()
        self._wait_result()
        with self._cond:
            if self._result is not None and self._result + self.margin_iters \
                    <= self._read_iter():
                self.triggered += 1
            self._deadline_at = None
            self._handle = None

    def poke(self) -> None:
        """Wake the watcher to re-read the clock (for an injected clock that jumps)."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """Stop the watcher thread, also while its reduction is pending (it polls: `_await`)."""
        with self._cond:
            self._stop = True
            self._deadline_at = None
            self._cond.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)

    # -- internals ---------------------------------------------------------------------------
    def _wait_result(self) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._result is not None or self._error
                                       is not None or self._stop, timeout=self.wait_s):
                raise TimeoutError(f"straggler: the report deadline's reduction did not finish "
                                   f"within {self.wait_s:g} s")
            if self._error is not None:
                raise self._error
            if self._result is None:
                raise RuntimeError("straggler: the report deadline was closed")

    def _post_locked(self) -> None:
        assert self._post_fn is not None
        it = int(self._read_iter())
        self._posted_iter = it
        self._handle = self._post_fn(float(it))
        self._cond.notify_all()

    def _await(self, handle: _Pending) -> bool:
        """Wait until `handle` is done, polling, never inside its blocking ``wait()``; False
        when closed first.

        A daemon thread that returns from a torch call (which releases the GIL) during the
        interpreter's finalization aborts the process (lifecycle.py, "at interpreter exit"); a
        reduction a peer never joins can last ``comm_timeout_s``. Polling keeps this thread in
        Python, so that `close` (at exit too) stops it within one poll.
        """
        poll_s = _POLL_FIRST_S
        while not handle.done():
            with self._cond:
                if self._stop:
                    return False
                self._cond.wait(timeout=poll_s)
            poll_s = min(2 * poll_s, _POLL_MAX_S)
        return True

    def _watch(self) -> None:
        """The watcher thread: post at the deadline, then wait for the result."""
        while True:
            with self._cond:
                while True:
                    if self._stop:
                        return
                    if self._handle is not None and self._result is None \
                            and self._error is None:
                        handle = self._handle
                        break
                    at = self._deadline_at
                    # After a failed post, wait (the training thread raises the error): a
                    # retry would fail again at once, spinning with the lock held, and `close`
                    # (at destroy_process_group) would wait for the lock forever.
                    if at is not None and self._handle is None and self._error is None:
                        left = at - self._clock()
                        if left <= 0:
                            try:
                                self._post_locked()
                            except BaseException as exc:  # noqa: BLE001 - the main thread raises it
                                self._error = exc
                                self._cond.notify_all()
                            continue
                        self._cond.wait(timeout=left)
                    else:
                        self._cond.wait()
            try:
                if not self._await(handle):
                    return  # closed while the reduction was pending
                value: Any = handle.wait()  # done: returns (or raises) at once
                result, error = int(float(value[0])), None
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                result, error = None, exc
            with self._cond:
                if self._handle is handle:
                    self._result, self._error = result, error
                    self._cond.notify_all()
                elif error is not None and not self._stop:
                    self._error = error
                    self._cond.notify_all()
