"""Runtime control of straggler detection over HTTP: Megatron's ``--straggler-ctrlr-port``, safe.

The reporting rank runs a tiny HTTP server in daemon threads. It listens on 127.0.0.1 unless the
user names another address. Requests never act directly: a valid ``POST`` only records the wanted
state, and the training loop picks it up at the next report point, where one broadcast carries
it to every rank (see :class:`straggler.integrations.megatron.StragglerDetectionManager`).

Endpoints (all answers are JSON)::

    GET  /           current state, the state waiting to be applied, and the last report summary
    POST /           JSON object with any of: enabled (bool), gpu_relative_perf_threshold and
                     gpu_individual_perf_threshold (numbers in [0, 1]), report_time_interval
                     (seconds, >= MIN_REPORT_INTERVAL_S)
    POST /toggle     flip ``enabled`` (what any request did in Megatron-LM)

Bad requests get a 4xx answer with ``{"error": reason}``; nothing a request sends is executed,
and only the validated values above are kept. The server cannot harm the job it lives in: a
fixed pool of worker threads, a bounded queue of accepted connections (beyond it: 503), an idle
timeout per connection and a deadline per request, and no traceback on the job's stderr when a
client misbehaves or goes away (one debug line instead).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import queue
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from .._checks import check_fraction, check_int, check_seconds

logger = logging.getLogger("straggler")

DEFAULT_HOST = "127.0.0.1"
MAX_BODY_BYTES = 4096
# A request body nests no deeper than this (a valid one is a flat object: depth 1).
MAX_JSON_DEPTH = 8
# Integers in a request body have at most this many digits (larger ones cannot be a setting, and
# converting them to float overflows).
MAX_INT_DIGITS = 20
# The shortest report interval a request may ask for: shorter makes nearly every step a report.
MIN_REPORT_INTERVAL_S = 1.0
# Server limits (constructor defaults of StragglerController).
WORKERS = 4
MAX_PENDING = 16
IDLE_TIMEOUT_S = 5.0
REQUEST_DEADLINE_S = 10.0
LISTEN_BACKLOG = 64


@dataclass(frozen=True)
class ControlState:
    """What the controller can change at run time."""

    enabled: bool
    gpu_relative_perf_threshold: float
    gpu_individual_perf_threshold: float
    report_time_interval: float

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            check_control_value(name, value)

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON-ready dict."""
        return dataclasses.asdict(self)


_FIELDS = tuple(f.name for f in dataclasses.fields(ControlState))


def check_control_value(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` and echoing ``value`` unless ``value`` is valid."""
    if name == "enabled":
        if not isinstance(value, bool):
            raise ValueError(f"`enabled={value!r}` must be true or false")
    elif name in ("gpu_relative_perf_threshold", "gpu_individual_perf_threshold"):
        check_fraction(name, value, allow_zero=True)
    elif name == "report_time_interval":
        check_seconds(name, value)
    else:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(_FIELDS)}")


def check_requested_value(name: str, value: Any) -> None:
    """:func:`check_control_value` plus the limits on what a request may ask for.

    A request may not set ``report_time_interval`` below :data:`MIN_REPORT_INTERVAL_S`: a
    report on nearly every step would slow the job down (the configuration itself may).
    """
    check_control_value(name, value)
    if name == "report_time_interval" and value < MIN_REPORT_INTERVAL_S:
        raise ValueError(f"`report_time_interval={value!r}` must be at least "
                         f"{MIN_REPORT_INTERVAL_S:g} s when set through the controller")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"number {text[:12]}... ({len(text)} characters) is too large: at most "
                         f"{MAX_INT_DIGITS} digits")
    return int(text)


def json_depth(text: str) -> int:
    """Deepest nesting of arrays and objects in ``text`` (brackets inside strings excluded)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_update(body: bytes, current: ControlState) -> ControlState:
    """Validate a JSON request body and return ``current`` with its settings applied.

    Raises ``ValueError`` with the reason for anything but a JSON object of known, valid settings
    (including bodies nested deeper than :data:`MAX_JSON_DEPTH` and oversized integers).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"body nests {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted")
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    except RecursionError:  # not reached below MAX_JSON_DEPTH; kept so it can never escape
        raise ValueError("body nests too deep") from None
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    if not data:
        raise ValueError(f"body names no setting; known: {', '.join(_FIELDS)}")
    for name, value in data.items():
        try:
            check_requested_value(name, value)
        except OverflowError:
            raise ValueError(f"`{name}` is too large a number") from None
    values = {k: (float(v) if k != "enabled" else v) for k, v in data.items()}
    return dataclasses.replace(current, **values)


def _quiet_debug(what: str, exc: BaseException | None = None) -> None:
    """One debug line, never a traceback: a client's misbehaviour is not the job's problem."""
    if exc is None:
        logger.debug("controller: %s", what)
    else:
        logger.debug("controller: %s: %s: %s", what, type(exc).__name__, exc)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "straggler-controller"
    sys_version = ""
    protocol_version = "HTTP/1.0"  # one request per connection

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout_s  # applied to the socket by super().setup()
        super().setup()

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":  # its answers have no headers: not JSON
            self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 is not supported; use HTTP/1.x")
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("controller: %s - %s", self.address_string(), format % args)

    def _send(self, status: HTTPStatus, payload: Mapping[str, Any],
              headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(payload, allow_nan=False, default=str).encode("utf-8") + b"\n"
        if self.request_version == "HTTP/0.9":  # a request line too bad to tell: answer as 1.0
            self.request_version = "HTTP/1.0"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":  # a HEAD answer has headers only (RFC 9110)
            self.wfile.write(body)

    def _error(self, status: HTTPStatus, reason: str,
               headers: Mapping[str, str] | None = None) -> None:
        self._send(status, {"error": reason[:300]}, headers)

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The stdlib's errors (bad request line, headers too large, ...) answered in JSON."""
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method we have no do_X for
            self._not_allowed()
            return
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.log_error("code %d, message %s", code, message)
        self._error(status, message or status.phrase)

    def _guarded(self, method: Any) -> None:
        """Run a do_X body; a bug in it answers 500 in JSON instead of leaving the client hung."""
        try:
            method()
        except OSError as exc:  # the client went away, or timed out while we answered
            _quiet_debug(f"request from {self.address_string()} ended", exc)
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - never a traceback into the job's stderr
            _quiet_debug("internal error", exc)
            try:
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {exc!r}")
            except OSError:
                pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._guarded(self._get)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._guarded(self._post)

    def _get(self) -> None:
        if self.path.split("?", 1)[0] not in ("/", "/status"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use GET / or POST / or POST /toggle")
            return
        self._send(HTTPStatus.OK, self.server.controller.status())

    def _read_body(self) -> bytes | None:
        """The request body, or None after answering why it cannot be read."""
        length_text = self.headers.get("Content-Length", "0")
        try:
            length = int(length_text) if len(length_text) <= MAX_INT_DIGITS else -1
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST,
                        f"`Content-Length={length_text[:30]!r}` must be an integer")
            return None
        if length < 0 or length > MAX_BODY_BYTES:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                        f"body must be at most {MAX_BODY_BYTES} bytes "
                        f"(Content-Length: {length_text[:30]})")
            return None
        try:
            body = self.rfile.read(length) if length else b""
        except TimeoutError:
            self._error(HTTPStatus.REQUEST_TIMEOUT,
                        f"the body did not arrive within {self.server.idle_timeout_s:g} s")
            return None
        if len(body) < length:  # the client closed its side mid-body: nobody to answer
            _quiet_debug(f"{self.address_string()} disconnected mid-body "
                         f"({len(body)} of {length} bytes)")
            self.close_connection = True
            return None
        return body

    def _post(self) -> None:
        path = self.path.split("?", 1)[0]
        if path not in ("/", "/toggle"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use POST / or POST /toggle")
            return
        body = self._read_body()
        if body is None:
            return
        controller = self.server.controller
        if path == "/toggle":
            if body.strip():
                self._error(HTTPStatus.BAD_REQUEST, "POST /toggle takes no body")
                return
            state = controller.toggle()
        else:
            ctype = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                            "Content-Type must be application/json")
                return
            try:
                state = controller.request(body)
            except ValueError as exc:
                self._error(HTTPStatus.BAD_REQUEST, str(exc))
                return
        self._send(HTTPStatus.OK, {"pending": state.to_json(),
                                   "message": "applied on every rank at the next report"})

    def _not_allowed(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED,
                    f"method {str(self.command)[:20]!r} is not allowed; use GET or POST",
                    headers={"Allow": "GET, POST"})

    def _guarded_not_allowed(self) -> None:
        self._guarded(self._not_allowed)

    do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _guarded_not_allowed  # noqa: N815


class _Server(HTTPServer):
    """An HTTP server with a fixed pool of daemon workers and a bounded connection queue.

    The accepting thread only queues a connection (or, when the queue is full, answers 503 and
    closes it); ``WORKERS`` threads serve the queue. Every connection gets a deadline when it is
    accepted; the accepting thread's poll loop shuts down the sockets past theirs, which also
    frees a worker stuck on a client that trickles bytes.
    """

    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG  # the listen() backlog

    def __init__(self, address: tuple[str, int], controller: StragglerController, *,
                 workers: int, max_pending: int, idle_timeout_s: float,
                 request_deadline_s: float) -> None:
        self.controller = controller
        self.idle_timeout_s = idle_timeout_s
        self.request_deadline_s = request_deadline_s
        self._pending: queue.Queue[tuple[socket.socket, Any] | None] = queue.Queue(max_pending)
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []  # server_close() runs if binding fails
        super().__init__(address, _Handler)
        self._workers = [threading.Thread(target=self._work, name=f"straggler-controller-{i}",
                                          daemon=True) for i in range(workers)]
        for worker in self._workers:
            worker.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            self._deadlines[request] = time.monotonic() + self.request_deadline_s
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
        now = time.monotonic()
        with self._lock:
            late = [s for s, deadline in self._deadlines.items() if deadline <= now]
            for sock in late:
                del self._deadlines[sock]
                _shutdown_quietly(sock)
        if late:
            _quiet_debug(f"closed {len(late)} connection(s) past the "
                         f"{self.request_deadline_s:g} s deadline")

    def handle_error(self, request: Any, client_address: Any,
                     exc: BaseException | None = None) -> None:
        """One debug line instead of socketserver's traceback on stderr."""
        _quiet_debug(f"connection from {client_address} failed", exc)

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
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


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
    _quiet_debug("busy: a connection was answered 503")


class StragglerController:
    """HTTP control of one detection run; owned by the reporting rank.

    ``start()`` binds ``host:port`` (port 0 picks a free port; see :attr:`address`) and serves
    in daemon threads: one accepts, ``workers`` answer. At most ``max_pending`` accepted
    connections wait for a worker (more are answered 503); a connection idle for
    ``idle_timeout_s`` is closed, and so is any connection still open ``request_deadline_s``
    after it was accepted. The training loop calls :meth:`wanted` at a report point, broadcasts
    the result, and then calls :meth:`applied` with what every rank now uses.
    """

    def __init__(self, initial: ControlState, host: str = DEFAULT_HOST, port: int = 65535, *,
                 workers: int = WORKERS, max_pending: int = MAX_PENDING,
                 idle_timeout_s: float = IDLE_TIMEOUT_S,
                 request_deadline_s: float = REQUEST_DEADLINE_S) -> None:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ValueError(f"`port={port!r}` must be an integer between 0 and 65535")
        if not isinstance(host, str) or not host:
            raise ValueError(f"`host={host!r}` must be a non-empty address string")
        self._limits = {"workers": check_int("workers", workers),
                        "max_pending": check_int("max_pending", max_pending),
                        "idle_timeout_s": check_seconds("idle_timeout_s", idle_timeout_s),
                        "request_deadline_s": check_seconds("request_deadline_s",
                                                            request_deadline_s)}
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._applied = initial
        self._wanted = initial
        self._last_report: dict[str, Any] | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port); before :meth:`start`, the requested one."""
        if self._server is None:
            return self._host, self._port
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> StragglerController:
        """Bind and serve in daemon threads. Raises ``OSError`` when the address is taken."""
        if self._server is not None:
            return self
        self._server = _Server((self._host, self._port), self, **self._limits)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="straggler-controller", daemon=True)
        self._thread.start()
        host, port = self.address
        logger.info("straggler controller listening on http://%s:%d (state: %s)", host, port,
                    "ON" if self._applied.enabled else "OFF")
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None

    def request(self, body: bytes) -> ControlState:
        """Validate a request body and record it as wanted; returns the new wanted state."""
        with self._lock:
            self._wanted = parse_update(body, self._wanted)
            logger.info("straggler controller: requested %s", self._wanted)
            return self._wanted

    def toggle(self) -> ControlState:
        """Ask for detection to be switched on if off, off if on."""
        with self._lock:
            self._wanted = dataclasses.replace(self._wanted, enabled=not self._wanted.enabled)
            logger.info("straggler controller: will turn detection %s at the next report",
                        "ON" if self._wanted.enabled else "OFF")
            return self._wanted

    def wanted(self) -> ControlState:
        """The state the next report point should apply."""
        with self._lock:
            return self._wanted

    def applied(self, state: ControlState, last_report: Mapping[str, Any] | None = None) -> None:
        """Record what every rank uses now, and optionally a summary of the latest report."""
        with self._lock:
            self._applied = state
            if last_report is not None:
                self._last_report = _json_safe(last_report)

    def status(self) -> dict[str, Any]:
        """What ``GET /`` answers."""
        with self._lock:
            return {"state": self._applied.to_json(), "pending": self._wanted.to_json(),
                    "last_report": self._last_report}

    def __enter__(self) -> StragglerController:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_safe(value: Any) -> Any:
    """Replace NaN and infinities (not JSON) with None, recursively; keys become strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    return value
