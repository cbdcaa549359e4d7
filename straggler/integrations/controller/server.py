"""An HTTP server that cannot harm the process it lives in: a fixed pool of worker threads, a
bounded queue of accepted connections, an idle timeout per connection and a deadline per request.

It knows nothing of what it serves: the request handler class is given to it.
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

from ..._checks import check_int, check_seconds

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

    def __post_init__(self) -> None:
        check_int("workers", self.workers)
        check_int("max_pending", self.max_pending)
        check_seconds("idle_timeout_s", self.idle_timeout_s)
        check_seconds("request_deadline_s", self.request_deadline_s)


def quiet_debug(what: str, exc: BaseException | None = None) -> None:
    """One debug line, never a traceback: a client's misbehaviour is not the job's problem."""
    if exc is None:
        log.debug("controller: %s", what)
    else:
        log.debug("controller: %s: %s: %s", what, type(exc).__name__, exc)


class PooledHTTPServer(HTTPServer):
    """An HTTP server with a fixed pool of daemon workers and a bounded connection queue.

    The accepting thread only queues a connection (or, when the queue is full, answers 503 and
    closes it); ``limits.workers`` threads serve the queue. Every connection gets a deadline
    (read from ``clock``, seconds) when it is accepted; the accepting thread's poll loop shuts
    down the sockets past theirs, which also frees a worker stuck on a client that trickles
    bytes. The idle timeout is the sockets' own (real time).
    """

    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG  # the listen() backlog

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 limits: ServerLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.idle_timeout_s = limits.idle_timeout_s
        self.request_deadline_s = limits.request_deadline_s
        self._clock = clock
        self._pending: queue.Queue[tuple[socket.socket, Any] | None] = queue.Queue(
            limits.max_pending)
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []  # server_close() runs if binding fails
        super().__init__(address, handler)
        self._workers = [threading.Thread(target=self._work, name=f"straggler-controller-{i}",
                                          daemon=True) for i in range(limits.workers)]
        for worker in self._workers:
            worker.start()

    def open_connections(self) -> int:
        """Connections accepted and not yet closed (queued or being answered)."""
        with self._lock:
            return len(self._deadlines)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._deadlines[request] = self._clock() + self.request_deadline_s
        try:
            self._pending.put_nowait((request, client_address))
        except queue.Full:
            self._release(request)
            _reject_busy(request)
            self.shutdown_request(request)

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
                        f"{self.request_deadline_s:g} s deadline")

    def handle_error(self, request: Any, client_address: Any,
                     exc: BaseException | None = None) -> None:
        """One debug line instead of socketserver's traceback on stderr."""
        quiet_debug(f"connection from {client_address} failed", exc)

    def server_close(self) -> None:
        super().server_close()
        with self._lock:
            for sock in self._deadlines:
                _shutdown_quietly(sock)
            self._deadlines.clear()
        for _ in self._workers:
            try:
                self._pending.put(None, timeout=1.0)
            except queue.Full:
                break
        for worker in self._workers:
            worker.join(timeout=1.0)


def _shutdown_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _reject_busy(sock: socket.socket) -> None:
    """Answer 503 on a connection that will not be served, without ever blocking."""
    body = json.dumps({"error": "the controller is busy; try again in a few seconds"}).encode()
    head = (f"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) + 1}\r\nConnection: close\r\n\r\n").encode()
    try:
        sock.setblocking(False)
        sock.send(head + body + b"\n")
    except OSError:
        pass
    quiet_debug("busy: a connection was answered 503")
