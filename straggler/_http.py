"""The package's one HTTP server: it cannot harm the process it lives in (a fixed pool of
worker threads, a bounded queue of accepted connections, an idle timeout per connection and a
deadline per request, and nothing left running after `close`).

It knows nothing of what it serves: the request handler class is given to it. The controller
(`straggler.integrations.controller`) serves its JSON API with it, the Prometheus exporter
(`straggler.sinks.prometheus`) its ready-made snapshot of the latest report.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from ._checks import check_int, check_seconds

__all__ = ["PooledHTTPServer", "ServerLimits", "quiet_debug", "WORKERS", "MAX_PENDING",
           "IDLE_TIMEOUT_S", "REQUEST_DEADLINE_S", "LISTEN_BACKLOG"]

log = logging.getLogger("straggler")

# Server limits (constructor defaults of StragglerController).
WORKERS = 4
MAX_PENDING = 16
IDLE_TIMEOUT_S = 5.0
REQUEST_DEADLINE_S = 10.0
LISTEN_BACKLOG = 64


@dataclass(frozen=True)
class ServerLimits:
    """How much a server may take on; validated when built (the bad value is named)."""

    workers: int = WORKERS
    """Threads answering requests."""
    max_pending: int = MAX_PENDING
    """Accepted connections waiting for a worker; more are answered 503."""
    idle_timeout_s: float = IDLE_TIMEOUT_S
    """A connection that sends nothing for this long is closed."""
    request_deadline_s: float = REQUEST_DEADLINE_S
    """A connection still open this long after it was accepted is closed."""
    max_accept_per_s: float | None = None
    """Connections accepted per second at most (None: no cap); more wait in the kernel's
    listen backlog, then are refused by it, at no cost to this process."""

    def __post_init__(self) -> None:
        check_int("workers", self.workers)
        check_int("max_pending", self.max_pending)
        check_seconds("idle_timeout_s", self.idle_timeout_s)
        check_seconds("request_deadline_s", self.request_deadline_s)
        if self.max_accept_per_s is not None:
            check_seconds("max_accept_per_s", self.max_accept_per_s)


def quiet_debug(what: str, exc: BaseException | None = None, who: str = "http") -> None:
    """One debug line, never a traceback: a client's misbehaviour is not the job's problem."""
    if exc is None:
        log.debug("%s: %s", who, what)
    else:
        log.debug("%s: %s: %s: %s", who, what, type(exc).__name__, exc)


class PooledHTTPServer(HTTPServer):
    """An HTTP server with a fixed pool of daemon workers and a bounded connection queue.

    The accepting thread only queues a connection (or, when the queue is full, answers 503 and
    closes it); ``limits.workers`` threads serve the queue. Every connection gets a deadline
    (read from ``clock``, seconds) when it is accepted; the accepting thread's poll loop shuts
    down the sockets past theirs, which also frees a worker stuck on a client that trickles
    bytes. The idle timeout is the sockets' own (real time). ``name`` names the threads
    (``straggler-<name>``, ``straggler-<name>-<i>``) and the debug lines.

    `start` runs the accepting loop in its own daemon thread; `close` stops it, closes every
    connection and joins every thread it started: nothing is left running afterwards.
    """

    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG  # the listen() backlog

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 limits: ServerLimits, clock: Callable[[], float] = time.monotonic,
                 name: str = "http") -> None:
        self.limits = limits
        self.name = name
        self.idle_timeout_s = limits.idle_timeout_s
        self.request_deadline_s = limits.request_deadline_s
        self._clock = clock
        self._pending: queue.Queue[tuple[socket.socket, Any] | None] = queue.Queue(
            limits.max_pending)
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []  # server_close() runs if binding fails
        self._acceptor: threading.Thread | None = None
        self._all_threads: list[threading.Thread] = []
        self._next_accept_s = 0.0
        super().__init__(address, handler)
        self._workers = [threading.Thread(target=self._work, name=f"straggler-{name}-{i}",
                                          daemon=True) for i in range(limits.workers)]
        for worker in self._workers:
            worker.start()
        self._all_threads = list(self._workers)

    @property
    def port(self) -> int:
        """The bound port (useful after binding port 0)."""
        return int(self.server_address[1])

    def start(self, poll_interval_s: float = 0.2) -> None:
        """Accept connections in a daemon thread (deadlines are checked every poll)."""
        if self._acceptor is None:
            self._acceptor = threading.Thread(target=self.serve_forever,
                                              kwargs={"poll_interval": poll_interval_s},
                                              name=f"straggler-{self.name}", daemon=True)
            self._acceptor.start()
            self._all_threads.append(self._acceptor)

    def close(self) -> None:
        """Stop accepting, close every connection, join every thread; idempotent."""
        acceptor, self._acceptor = self._acceptor, None
        if acceptor is not None:
            self.shutdown()  # returns once serve_forever has left its loop
            acceptor.join(timeout=5.0)
        self.server_close()

    def threads(self) -> list[threading.Thread]:
        """The threads this server started that are still alive (none after `close`)."""
        return [t for t in [*self._all_threads] if t.is_alive()]

    def open_connections(self) -> int:
        """Connections accepted and not yet closed (queued or being answered)."""
        with self._lock:
            return len(self._deadlines)

    def process_request(self, request: Any, client_address: Any) -> None:
        self._pace()
        with self._lock:
            self._deadlines[request] = self._clock() + self.request_deadline_s
        try:
            self._pending.put_nowait((request, client_address))
        except queue.Full:
            self._release(request)
            _reject_busy(request, self.name)
            self.shutdown_request(request)

    def _pace(self) -> None:
        """Sleep (the GIL released) when connections come faster than ``max_accept_per_s``:
        whatever clients do, this process spends at most that many accepts' work per second."""
        rate = self.limits.max_accept_per_s
        if rate is None:
            return
        now = time.monotonic()  # real time: this is a sleep, not a deadline
        self._next_accept_s = max(self._next_accept_s, now - 1.0) + 1.0 / rate  # 1 s of burst
        if self._next_accept_s > now:
            time.sleep(min(self._next_accept_s - now, 1.0 / rate))

    def _work(self) -> None:
        while True:
            item = self._pending.get()
            if item is None:
                return
            request, client_address = item
            try:
                request.settimeout(self.idle_timeout_s)
                self.finish_request(request, client_address)
            except Exception as exc:  # noqa: BLE001 - e.g. a reset while answering
                self.handle_error(request, client_address, exc)
            finally:
                self._release(request)
                self.shutdown_request(request)

    def _release(self, request: Any) -> None:
        # Under the lock, so that service_actions never touches a socket being closed.
        with self._lock:
            self._deadlines.pop(request, None)

    def service_actions(self) -> None:
        """Runs in the accepting thread's loop: end connections past their deadline."""
        now = self._clock()
        with self._lock:
            late = [s for s, deadline in self._deadlines.items() if deadline <= now]
            for sock in late:
                del self._deadlines[sock]
                _shutdown_quietly(sock)
        if late:
            quiet_debug(f"closed {len(late)} connection(s) past the "
                        f"{self.request_deadline_s:g} s deadline", who=self.name)

    def handle_error(self, request: Any, client_address: Any,
                     exc: BaseException | None = None) -> None:
        """One debug line instead of socketserver's traceback on stderr."""
        quiet_debug(f"connection from {client_address} failed", exc, who=self.name)

    def server_close(self) -> None:
        super().server_close()
        workers, self._workers = self._workers, []  # a second call has nothing to stop
        with self._lock:
            for sock in self._deadlines:
                _shutdown_quietly(sock)
            self._deadlines.clear()
        while True:  # connections still queued: never served
            try:
                item = self._pending.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in workers:
            self._pending.put(None)  # a worker takes each: none blocks for long
        for worker in workers:
            worker.join(timeout=5.0)


def _shutdown_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _reject_busy(sock: socket.socket, name: str) -> None:
    """Answer 503 on a connection that will not be served, without ever blocking."""
    body = json.dumps({"error": f"the {name} is busy; try again in a few seconds"}).encode()
    head = (f"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) + 1}\r\nConnection: close\r\n\r\n").encode()
    try:
        sock.setblocking(False)
        sock.send(head + body + b"\n")
    except OSError:
        pass
    quiet_debug("busy: a connection was answered 503", who=name)
