"""`StragglerController`: the wanted and applied state of one detection run, served over HTTP."""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ... import _env
from ..._checks import check_int, check_name
from ..._http import IDLE_TIMEOUT_S, MAX_PENDING, REQUEST_DEADLINE_S, WORKERS, ServerLimits
from .auth import (
    ENV_TOKEN,
    RequestGuard,
    check_token,
    new_token,
    remove_token_file,
    token_file_path,
    write_token_file,
)
from .handler import ControlServer
from .settings import ControlState, json_safe, parse_update

__all__ = ["StragglerController", "DEFAULT_HOST"]

log = logging.getLogger("straggler")

DEFAULT_HOST = "127.0.0.1"


class StragglerController:
    """HTTP control of one detection run; owned by the reporting rank.

    ``start()`` binds ``host:port`` (port 0 picks a free port; see :attr:`address`) and serves
    in daemon threads: one accepts, ``workers`` answer. Every request needs
    ``Authorization: Bearer <token>`` (:attr:`token`): ``token=``, else
    ``$STRAGGLER_CONTROLLER_TOKEN``, else a fresh one that ``start()`` writes to
    :attr:`token_file` (``token_file=``, default `auth.token_file_path`), readable by this user
    only and removed by ``close()``. Requests from browsers (an ``Origin`` header) and ``Host``
    headers not naming this machine are refused (`auth.RequestGuard`). At most ``max_pending``
    accepted connections wait for a worker (more are answered 503); a connection idle for
    ``idle_timeout_s`` is closed, and so is any connection still open ``request_deadline_s``
    after it was accepted (as ``clock`` counts seconds; default ``time.monotonic``). The training
    loop calls :meth:`wanted` at a report point, broadcasts the result, and then calls
    :meth:`applied` with what every rank now uses.
    """

    def __init__(self, initial: ControlState, host: str = DEFAULT_HOST, port: int = 65535, *,
                 workers: int = WORKERS, max_pending: int = MAX_PENDING,
                 idle_timeout_s: float = IDLE_TIMEOUT_S,
                 request_deadline_s: float = REQUEST_DEADLINE_S,
                 token: str | None = None, token_file: str | os.PathLike[str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        check_int("port", port, 0, high=65535)
        check_name("host", host)
        if token is not None:
            self.token = check_token(token, "token")
            self._token_given = True
        elif _env.CONTROLLER_TOKEN.is_set():
            self.token = check_token(_env.CONTROLLER_TOKEN.raw(), ENV_TOKEN)
            self._token_given = True
        else:
            self.token = new_token()
            self._token_given = False
        self._token_file_arg = token_file
        self.token_file: Path | None = None
        """The file holding the generated token while the controller runs (None otherwise)."""
        self._limits = ServerLimits(workers=workers, max_pending=max_pending,
                                    idle_timeout_s=idle_timeout_s,
                                    request_deadline_s=request_deadline_s)
        self._clock = clock
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._applied = initial
        self._wanted = initial
        self._last_report: dict[str, Any] | None = None
        self._server: ControlServer | None = None
        self._started: ControlServer | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port); before :meth:`start`, the requested one."""
        if self._server is None:
            return self._host, self._port
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> StragglerController:
        """Bind, write the token file, serve in daemon threads.

        Raises ``OSError`` when the address is taken or the token file cannot be written
        privately (nothing is left running then).
        """
        if self._server is not None:
            return self
        server = ControlServer((self._host, self._port), self, limits=self._limits,
                               guard=RequestGuard(self.token, self._host), clock=self._clock)
        host, port = str(server.server_address[0]), server.port
        if not self._token_given:
            path = Path(self._token_file_arg) if self._token_file_arg is not None \
                else token_file_path(port)
            try:
                write_token_file(path, self.token)
            except OSError:
                server.server_close()
                raise
            self.token_file = path
        server.start()
        self._server = self._started = server
        where = f"the token in {self.token_file}" if self.token_file else "your token"
        log.info("straggler controller listening on http://%s:%d (state: %s); requests need "
                 "%s: curl -H \"Authorization: Bearer $(cat %s)\" http://%s:%d", host, port,
                 "ON" if self._applied.enabled else "OFF", where,
                 self.token_file or "TOKEN_FILE", host, port)
        return self

    def close(self) -> None:
        """Stop serving, release the port, remove the token file; idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        path, self.token_file = self.token_file, None
        if path is not None:
            remove_token_file(path, self.token)

    def threads(self) -> list[threading.Thread]:
        """The server's threads still alive (none after :meth:`close`)."""
        return self._started.threads() if self._started is not None else []

    def request(self, body: bytes) -> ControlState:
        """Validate a request body and record it as wanted; returns the new wanted state."""
        with self._lock:
            self._wanted = parse_update(body, self._wanted)
            log.info("straggler controller: requested %s", self._wanted)
            return self._wanted

    def toggle(self) -> ControlState:
        """Ask for detection to be switched on if off, off if on."""
        with self._lock:
            self._wanted = dataclasses.replace(self._wanted, enabled=not self._wanted.enabled)
            log.info("straggler controller: will turn detection %s at the next report",
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
                self._last_report = json_safe(last_report)

    def status(self) -> dict[str, Any]:
        """What ``GET /`` answers."""
        with self._lock:
            return {"state": self._applied.to_json(), "pending": self._wanted.to_json(),
                    "last_report": self._last_report}

    def __enter__(self) -> StragglerController:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
