"""The controller's HTTP endpoints: each request answered in JSON, nothing a request sends run.

``GET /`` reads the state, ``POST /`` asks for settings, ``POST /toggle`` flips ``enabled``; any
other method or path, and every error the standard library detects, gets a JSON 4xx answer.
Every ``GET`` and ``POST`` first passes the `RequestGuard` (``Host``, ``Origin``, the token).
What a request asks for is handed to a :class:`ControlTarget` (the `StragglerController`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from ..._http import PooledHTTPServer, ServerLimits, quiet_debug
from .auth import RequestGuard
from .settings import MAX_INT_DIGITS, ControlState

__all__ = ["ControlTarget", "ControlServer", "ControlRequestHandler", "MAX_BODY_BYTES"]

log = logging.getLogger("straggler")

MAX_BODY_BYTES = 4096


class ControlTarget(Protocol):
    """What the endpoints act on."""

    def status(self) -> dict[str, Any]:
        """What ``GET /`` answers."""
        ...

    def request(self, body: bytes) -> ControlState:
        """Validate a ``POST /`` body and record it (``ValueError`` with the reason if bad)."""
        ...

    def toggle(self) -> ControlState:
        """Ask for ``enabled`` to be flipped."""
        ...


class ControlServer(PooledHTTPServer):
    """A pooled server whose requests, once `guard` lets them through, act on `target`."""

    def __init__(self, address: tuple[str, int], target: ControlTarget, limits: ServerLimits,
                 guard: RequestGuard, clock: Callable[[], float] = time.monotonic) -> None:
        self.target = target
        self.guard = guard
        super().__init__(address, ControlRequestHandler, limits, clock, name="controller")


class ControlRequestHandler(BaseHTTPRequestHandler):
    """One connection, one request (HTTP/1.0), answered in JSON."""

    server: ControlServer
    server_version = "straggler-controller"
    sys_version = ""
    protocol_version = "HTTP/1.0"  # one request per connection

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":  # its answers have no headers: not JSON
            self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 is not supported; use HTTP/1.x")
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's parameter name
        log.debug("controller: %s - %s", self.address_string(), format % args)

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

    def _guarded(self, method: Callable[[], None]) -> None:
        """Run a do_X body; a bug in it answers 500 in JSON instead of leaving the client hung."""
        try:
            method()
        except OSError as exc:  # the client went away, or timed out while we answered
            quiet_debug(f"request from {self.address_string()} ended", exc, "controller")
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - never a traceback into the job's stderr
            quiet_debug("internal error", exc, "controller")
            try:
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {exc!r}")
            except OSError as send_exc:  # the client is gone too
                quiet_debug("the 500 answer was not delivered", send_exc, "controller")

    def do_GET(self) -> None:
        """``GET /`` (or ``/status``): the state."""
        self._guarded(self._get)

    def do_POST(self) -> None:
        """``POST /`` (settings) or ``POST /toggle``."""
        self._guarded(self._post)

    def _denied(self) -> bool:
        """Answer and return True when the guard refuses the request."""
        denied = self.server.guard.check(self.headers)
        if denied is None:
            return False
        quiet_debug(f"refused {self.command} from {self.address_string()}: {denied.reason}",
                    who="controller")
        self.close_connection = True
        self._error(denied.status, denied.reason, denied.headers)
        return True

    def _get(self) -> None:
        if self._denied():
            return
        if self.path.split("?", 1)[0] not in ("/", "/status"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use GET / or POST / or POST /toggle")
            return
        self._send(HTTPStatus.OK, self.server.target.status())

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
            quiet_debug(f"{self.address_string()} disconnected mid-body "
                        f"({len(body)} of {length} bytes)", who="controller")
            self.close_connection = True
            return None
        return body

    def _post(self) -> None:
        if self._denied():
            return
        path = self.path.split("?", 1)[0]
        if path not in ("/", "/toggle"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use POST / or POST /toggle")
            return
        body = self._read_body()
        if body is None:
            return
        target = self.server.target
        if path == "/toggle":
            if body.strip():
                self._error(HTTPStatus.BAD_REQUEST, "POST /toggle takes no body")
                return
            state = target.toggle()
        else:
            ctype = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                            "Content-Type must be application/json")
                return
            try:
                state = target.request(body)
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

    do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _guarded_not_allowed
