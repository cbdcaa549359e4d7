"""Who may talk to the controller: a bearer token, and no browser (``Host`` and ``Origin`` checks).

Every request must carry ``Authorization: Bearer <token>``. The token is the user's
(``token=`` or ``$STRAGGLER_CONTROLLER_TOKEN``) or generated per controller with `secrets` and
written to a file only the job's user can read (mode 0600 in a 0700 directory, see
`token_file_path`); the file is removed when the controller closes.

Two checks keep browsers out, whatever a web page tries: a request with an ``Origin`` header
(browsers send it with every cross-origin request and every ``POST``, so a cross-origin form
``POST /toggle`` carries one) is refused, and so is a ``Host`` header naming anything but this
machine (a DNS-rebinding page reaches 127.0.0.1 under its own host name, which it cannot hide).
Pure except `write_token_file` and `token_file_path`.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import os
import secrets
import socket
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ... import _env
from http import HTTPStatus
from pathlib import Path

__all__ = ["ENV_TOKEN", "ENV_TOKEN_DIR", "Denied", "RequestGuard", "new_token", "remove_token_file",
           "token_file_path", "write_token_file"]

ENV_TOKEN = _env.CONTROLLER_TOKEN.name
"""A token chosen by the user (every rank may have it; only the reporting rank serves)."""
ENV_TOKEN_DIR = _env.CONTROLLER_TOKEN_DIR.name
"""Where generated token files go (default: ``$XDG_RUNTIME_DIR/straggler``, else
``~/.cache/straggler``)."""
MIN_TOKEN_CHARS = 16


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def check_token(token: str, source: str) -> str:
    """`token` if it is long enough and printable ASCII without spaces, else ValueError."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS \
            or not all("!" <= ch <= "~" for ch in token):
        shown = f"{len(token)} characters" if isinstance(token, str) else repr(token)
        raise ValueError(f"`{source}` ({shown}) must be at least {MIN_TOKEN_CHARS} printable "
                         "ASCII characters without spaces")
    return token


def token_file_path(port: int, directory: str | os.PathLike[str] | None = None) -> Path:
    """Where the generated token of the controller on `port` is written."""
    if directory is None:
        directory = _env.CONTROLLER_TOKEN_DIR.read()
    if directory is None:
        runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
        directory = (Path(runtime) / "straggler" if runtime and os.path.isdir(runtime)
                     else Path.home() / ".cache" / "straggler")
    return Path(directory) / f"controller-{port}.token"


def write_token_file(path: Path, token: str) -> None:
    """Write `token` to `path`, readable by this user only (0600 in a 0700 directory).

    Raises OSError when the directory is not this user's or others can enter it: the token
    would not be private there.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(path.parent)
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise PermissionError(f"{path.parent}: the token directory must belong to this user "
                              f"with mode 0700 (it has {stat.filemode(info.st_mode)}, uid "
                              f"{info.st_uid})")
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def remove_token_file(path: Path, token: str) -> None:
    """Remove `path` if it still holds `token` (a newer controller's file is left alone)."""
    with contextlib.suppress(OSError):
        if path.read_text().strip() == token:
            path.unlink()


class Headers(Protocol):
    """Request headers as `http.server` gives them (``email.message.Message``) or a dict."""

    def get(self, name: str, default: None = None) -> str | None:
        """The header's value, or None."""
        ...


@dataclass(frozen=True)
class Denied:
    """Why a request is refused: the status and the reason the client reads."""

    status: HTTPStatus
    reason: str
    headers: Mapping[str, str] | None = None


def _host_name(host_header: str) -> str:
    """The host of a ``Host`` header, without port or IPv6 brackets, lower case."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    return name == "localhost" or (_is_ip(name) and ipaddress.ip_address(name).is_loopback)


class RequestGuard:
    """The checks every request passes before an endpoint runs: Host, Origin, token."""

    def __init__(self, token: str, bound_host: str) -> None:
        self._token = token.encode()
        bound = _host_name(bound_host)
        self._loopback_only = _is_loopback(bound)
        names = {"localhost", "127.0.0.1", "::1", bound}
        if not self._loopback_only:
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.allowed_hosts = frozenset(n for n in names if n)

    def host_allowed(self, host_header: str | None) -> bool:
        """Whether a request with this ``Host`` header addresses this machine.

        No header (HTTP/1.0 clients) passes: browsers always send one. Bound to loopback, only
        loopback names pass; bound to another address, also IP literals and this host's names.
        """
        if host_header is None:
            return True
        name = _host_name(host_header)
        if name in self.allowed_hosts:
            return True
        return _is_loopback(name) if self._loopback_only else _is_ip(name)

    def check(self, headers: Headers | Mapping[str, str]) -> Denied | None:
        """None when the request may go on, else why not."""
        host = headers.get("Host")
        if not self.host_allowed(host):
            return Denied(HTTPStatus.MISDIRECTED_REQUEST,
                          f"`Host: {str(host)[:60]}` does not name this machine; use the "
                          "address the controller listens on")
        origin = headers.get("Origin")
        if origin is not None:
            return Denied(HTTPStatus.FORBIDDEN,
                          f"browser requests are refused (`Origin: {origin[:60]}`); use curl or "
                          "a script with the token")
        auth = headers.get("Authorization") or ""
        scheme, _, given = auth.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                                 self._token):
            return Denied(HTTPStatus.UNAUTHORIZED,
                          "missing or wrong token: send `Authorization: Bearer <token>` "
                          "(docs/integrations.md, \"Runtime control\")",
                          {"WWW-Authenticate": 'Bearer realm="straggler"'})
        return None
