"""Runtime control of straggler detection over HTTP: Megatron's ``--straggler-ctrlr-port``, safe.

The reporting rank runs a tiny HTTP server in a daemon thread. It listens on 127.0.0.1 unless the
user names another address. Requests never act directly: a valid ``POST`` only records the wanted
state, and the training loop picks it up at the next report point, where one broadcast carries
it to every rank (see :class:`straggler.integrations.megatron.StragglerDetectionManager`).

Endpoints (all answers are JSON)::

    GET  /           current state, the state waiting to be applied, and the last report summary
    POST /           JSON object with any of: enabled (bool), gpu_relative_perf_threshold and
                     gpu_individual_perf_threshold (numbers in [0, 1]), report_time_interval
                     (seconds, > 0)
    POST /toggle     flip ``enabled`` (what any request did in Megatron-LM)

Bad requests get a 4xx answer with ``{"error": reason}``; nothing a request sends is executed,
and only the validated values above are kept.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .._checks import check_fraction, check_seconds

logger = logging.getLogger("straggler")

DEFAULT_HOST = "127.0.0.1"
MAX_BODY_BYTES = 4096


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


def parse_update(body: bytes, current: ControlState) -> ControlState:
    """Validate a JSON request body and return ``current`` with its settings applied.

    Raises ``ValueError`` with the reason for anything but a JSON object of known, valid settings.
    """
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    if not data:
        raise ValueError(f"body names no setting; known: {', '.join(_FIELDS)}")
    for name, value in data.items():
        check_control_value(name, value)
    values = {k: (float(v) if k != "enabled" else v) for k, v in data.items()}
    return dataclasses.replace(current, **values)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "straggler-controller"
    sys_version = ""
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("controller: %s - %s", self.address_string(), format % args)

    def _send(self, status: HTTPStatus, payload: Mapping[str, Any],
              headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(payload, allow_nan=False, default=str).encode("utf-8") + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: HTTPStatus, reason: str) -> None:
        self._send(status, {"error": reason[:300]})

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.split("?", 1)[0] not in ("/", "/status"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use GET / or POST / or POST /toggle")
            return
        self._send(HTTPStatus.OK, self.server.controller.status())

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0]
        if path not in ("/", "/toggle"):
            self._error(HTTPStatus.NOT_FOUND, "no such path; use POST / or POST /toggle")
            return
        length_text = self.headers.get("Content-Length", "0")
        try:
            length = int(length_text)
        except ValueError:
            self._error(HTTPStatus.BAD_REQUEST, "Content-Length must be an integer")
            return
        if length < 0 or length > MAX_BODY_BYTES:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                        f"body must be at most {MAX_BODY_BYTES} bytes")
            return
        body = self.rfile.read(length) if length else b""
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
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use GET or POST"},
                   headers={"Allow": "GET, POST"})

    do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _not_allowed  # noqa: N815


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], controller: StragglerController) -> None:
        self.controller = controller
        super().__init__(address, _Handler)


class StragglerController:
    """HTTP control of one detection run; owned by the reporting rank.

    ``start()`` binds ``host:port`` (port 0 picks a free port; see :attr:`address`) and serves
    in a daemon thread. The training loop calls :meth:`wanted` at a report point, broadcasts the
    result, and then calls :meth:`applied` with what every rank now uses.
    """

    def __init__(self, initial: ControlState, host: str = DEFAULT_HOST, port: int = 65535) -> None:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ValueError(f"`port={port!r}` must be an integer between 0 and 65535")
        if not isinstance(host, str) or not host:
            raise ValueError(f"`host={host!r}` must be a non-empty address string")
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
        """Bind and serve in a daemon thread. Raises ``OSError`` when the address is taken."""
        if self._server is not None:
            return self
        self._server = _Server((self._host, self._port), self)
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
