"""The HTTP controller, driven over loopback: state, toggle, settings, bad input, bind address."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import shutil
import socket
import stat
import struct
import subprocess
import threading
import time

import pytest
from straggler.integrations.controller import (
    ENV_TOKEN,
    ENV_TOKEN_DIR,
    LISTEN_BACKLOG,
    MIN_REPORT_INTERVAL_S,
    ControlState,
    StragglerController,
    check_control_value,
    json_depth,
    parse_update,
)

from _clock import FakeClock

INITIAL = ControlState(enabled=True, gpu_relative_perf_threshold=0.7,
                       gpu_individual_perf_threshold=0.7, report_time_interval=300.0)


@pytest.fixture(autouse=True)
def _private_token_dir(tmp_path, monkeypatch):
    """Generated token files go to a fresh private directory, not the user's."""
    monkeypatch.delenv(ENV_TOKEN, raising=False)
    monkeypatch.setenv(ENV_TOKEN_DIR, str(tmp_path / "tokens"))


@pytest.fixture
def controller():
    with StragglerController(INITIAL, port=0) as ctl:
        yield ctl


def _request(ctl, method, path="/", body=None, headers=None, token=True):
    host, port = ctl.address
    conn = http.client.HTTPConnection(host, port, timeout=10)
    headers = dict(headers or {})
    if token:
        headers.setdefault("Authorization", f"Bearer {ctl.token}")
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, (json.loads(data) if data else None)
    finally:
        conn.close()


def _post_json(ctl, payload, path="/"):
    body = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
    return _request(ctl, "POST", path, body=body, headers={"Content-Type": "application/json"})


def test_get_returns_state_pending_and_last_report(controller):
    status, data = _request(controller, "GET")
    assert status == 200
    assert data["state"] == INITIAL.to_json()
    assert data["pending"] == INITIAL.to_json()
    assert data["last_report"] is None


def test_toggle_is_pending_until_applied(controller):
    status, data = _request(controller, "POST", "/toggle")
    assert status == 200 and data["pending"]["enabled"] is False
    assert controller.wanted().enabled is False
    # Nothing changes for the ranks until the training loop applies it at a report point.
    assert _request(controller, "GET")[1]["state"]["enabled"] is True
    controller.applied(controller.wanted(), {"iteration": 10, "score": float("nan")})
    data = _request(controller, "GET")[1]
    assert data["state"]["enabled"] is False
    assert data["last_report"] == {"iteration": 10, "score": None}  # NaN is not JSON
    assert _request(controller, "POST", "/toggle")[1]["pending"]["enabled"] is True


def test_post_changes_thresholds_and_interval(controller):
    status, data = _post_json(controller, {"gpu_relative_perf_threshold": 0.9,
                                           "report_time_interval": 5})
    assert status == 200
    wanted = controller.wanted()
    assert wanted.gpu_relative_perf_threshold == 0.9
    assert wanted.report_time_interval == 5.0
    assert wanted.gpu_individual_perf_threshold == 0.7 and wanted.enabled is True
    assert data["pending"] == wanted.to_json()


@pytest.mark.parametrize("payload, reason", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ({}, "names no setting"),
    ({"enabled": "yes"}, "`enabled='yes'`"),
    ({"enabled": 1}, "`enabled=1`"),
    ({"gpu_relative_perf_threshold": 1.5}, "`gpu_relative_perf_threshold=1.5`"),
    ({"gpu_individual_perf_threshold": -0.1}, "`gpu_individual_perf_threshold=-0.1`"),
    ({"gpu_relative_perf_threshold": True}, "`gpu_relative_perf_threshold=True`"),
    ({"gpu_relative_perf_threshold": "0.5"}, "`gpu_relative_perf_threshold='0.5'`"),
    ({"report_time_interval": 0}, "`report_time_interval=0`"),
    ({"report_time_interval": -3}, "`report_time_interval=-3`"),
    ("{\"report_time_interval\": Infinity}", "`report_time_interval=inf`"),
    ("{\"report_time_interval\": NaN}", "`report_time_interval=nan`"),
    ({"rm -rf": 1}, "unknown setting"),
    ({"enabled": False, "exec": "import os"}, "unknown setting"),
])
def test_bad_settings_are_rejected_with_a_reason(controller, payload, reason):
    status, data = _post_json(controller, payload)
    assert status == 400
    assert reason in data["error"]
    assert controller.wanted() == INITIAL  # a rejected request changes nothing, even partly


def test_wrong_content_type_path_method_and_size_are_4xx(controller):
    status, data = _request(controller, "POST", "/", body='{"enabled": false}',
                            headers={"Content-Type": "text/plain"})
    assert status == 415 and "application/json" in data["error"]
    assert _request(controller, "GET", "/admin")[0] == 404
    assert _post_json(controller, {"enabled": False}, path="/shutdown")[0] == 404
    status, data = _request(controller, "PUT", "/", body="{}")
    assert status == 405
    assert _request(controller, "DELETE", "/")[0] == 405
    status, data = _post_json(controller, b"{" + b" " * 5000 + b"}")
    assert status == 413
    status, data = _request(controller, "POST", "/toggle", body="x")
    assert status == 400 and "no body" in data["error"]
    assert controller.wanted() == INITIAL


def test_binds_loopback_by_default():
    ctl = StragglerController(INITIAL, port=0)
    assert ctl.address[0] == "127.0.0.1"
    with ctl:
        host, port = ctl.address
        assert host == "127.0.0.1" and port > 0
        for address in _non_loopback_ipv4_addresses():
            with pytest.raises(OSError):  # refused: nothing listens there
                socket.create_connection((address, port), timeout=2).close()


def test_other_address_only_when_asked():
    addresses = _non_loopback_ipv4_addresses()
    host = addresses[0] if addresses else "127.0.0.2"  # loopback alias if no interface
    with StragglerController(INITIAL, host=host, port=0) as ctl:
        assert ctl.address[0] == host
        assert _request(ctl, "GET")[0] == 200


def test_port_in_use_raises_oserror(controller):
    other = StragglerController(INITIAL, port=controller.address[1])
    with pytest.raises(OSError):
        other.start()


@pytest.mark.parametrize("kwargs, match", [
    ({"port": -1}, "`port=-1`"), ({"port": 70000}, "`port=70000`"), ({"port": "80"}, "`port='80'`"),
    ({"port": True}, "`port=True`"), ({"host": ""}, "`host=''`"), ({"host": None}, "`host=None`"),
])
def test_constructor_rejects_bad_address(kwargs, match):
    with pytest.raises(ValueError, match=match):
        StragglerController(INITIAL, **kwargs)


def test_control_state_validates_and_parse_update_keeps_other_fields():
    with pytest.raises(ValueError, match="`enabled=None`"):
        ControlState(None, 0.5, 0.5, 1.0)
    with pytest.raises(ValueError, match="unknown setting"):
        check_control_value("profiling_interval", 3)
    new = parse_update(b'{"enabled": false}', INITIAL)
    assert new == ControlState(False, 0.7, 0.7, 300.0)


def test_close_releases_the_port():
    ctl = StragglerController(INITIAL, port=0).start()
    port = ctl.address[1]
    ctl.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    ctl.close()  # idempotent


def _non_loopback_ipv4_addresses() -> list[str]:
    """IPv4 addresses of this machine's interfaces other than 127.0.0.0/8."""
    found: set[str] = set()
    try:
        import psutil

        for addrs in psutil.net_if_addrs().values():
            found.update(a.address for a in addrs if a.family == socket.AF_INET)
    except ImportError:
        with contextlib.suppress(OSError):
            found.update(socket.gethostbyname_ex(socket.gethostname())[2])
    return sorted(a for a in found if not a.startswith("127."))


# -- hardening: limits, timeouts, JSON for every answer, a quiet stderr --------------------------

def _raw(ctl, data: bytes, timeout: float = 10.0) -> tuple[int, dict, bytes]:
    """Send raw bytes (with the token after an HTTP/1.0 request line), read until the server
    closes; (status, headers, body)."""
    data = data.replace(b" HTTP/1.0\r\n", b" HTTP/1.0\r\nAuthorization: Bearer "
                        + ctl.token.encode() + b"\r\n", 1)
    with socket.create_connection(ctl.address, timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


def _get_when_free(ctl, timeout_s: float = 20.0) -> int:
    """GET /, retried while the answer is 503: connections still in the listen backlog when a
    burst of clients ended may fill the queue once more (the accepting thread lags on a busy
    machine). The status of the last answer."""
    deadline = time.monotonic() + timeout_s
    status = _request(ctl, "GET")[0]
    while status == 503 and time.monotonic() < deadline:
        time.sleep(0.1)
        status = _request(ctl, "GET")[0]
    return status


def _wait_until_idle(ctl, timeout_s: float = 10.0) -> None:
    """Until the server holds no connection (every one answered or closed, none queued)."""
    server = ctl._server
    deadline = time.monotonic() + timeout_s
    while (server.open_connections() or not server._pending.empty()) \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not server.open_connections() and server._pending.empty()


@pytest.mark.parametrize("raw, status", [
    (b"FOO / HTTP/1.0\r\n\r\n", 405),
    (b"PATCH / HTTP/1.0\r\n\r\n", 405),
    (b"OPTIONS / HTTP/1.0\r\n\r\n", 405),
    (b"GET /nope HTTP/1.0\r\n\r\n", 404),
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET / HTTP/9.9\r\n\r\n", 505),
    (b"GET /" + b"a" * 70000 + b" HTTP/1.0\r\n\r\n", 414),
    (b"GET / HTTP/1.0\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n", 431),
    (b"GET / HTTP/1.0\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", 431),
    (b"POST / HTTP/1.0\r\nContent-Length: abc\r\n\r\n", 400),
    (b"POST / HTTP/1.0\r\nContent-Length: " + b"9" * 400 + b"\r\n\r\n", 413),
    (b"POST / HTTP/1.0\r\nContent-Length: -5\r\n\r\n", 413),
    (b"POST /toggle HTTP/1.0\r\nContent-Length: 100000\r\n\r\n", 413),
])
def test_every_error_answer_is_json(controller, raw, status):
    got, headers, body = _raw(controller, raw)
    assert got == status
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    assert "error" in json.loads(body)
    if status == 405:
        assert headers["allow"] == "GET, POST"


def test_head_gets_json_headers_and_no_body(controller):
    status, headers, body = _raw(controller, b"HEAD / HTTP/1.0\r\n\r\n")
    assert status == 405 and headers["content-type"] == "application/json" and body == b""


@pytest.mark.parametrize("body", [
    "[" * 2000 + "]" * 2000,
    json.dumps({"enabled": [[[[[[[[[[True]]]]]]]]]]}),
    '{"enabled": ' + '{"a": ' * 500 + "1" + "}" * 500 + "}",
])
def test_deeply_nested_body_gets_a_json_400(controller, body):
    status, data = _post_json(controller, body)
    assert status == 400 and "levels deep" in data["error"]
    assert controller.wanted() == INITIAL


def test_json_depth_ignores_brackets_in_strings():
    assert json_depth('{"a": "[[[{{{", "b": [1, {"c": "\\"]]"}]}') == 3
    assert json_depth("1") == 0


@pytest.mark.parametrize("number", ["1" + "0" * 399, "-" + "9" * 400, "123456789012345678901"])
@pytest.mark.parametrize("name", ["report_time_interval", "gpu_relative_perf_threshold"])
def test_huge_integer_gets_a_json_400(controller, name, number):
    status, data = _post_json(controller, f'{{"{name}": {number}}}')
    assert status == 400 and "too large" in data["error"]
    assert controller.wanted() == INITIAL


def test_huge_float_is_rejected_as_infinite(controller):
    status, data = _post_json(controller, '{"report_time_interval": 1' + "0" * 400 + '.5}')
    assert status == 400 and "`report_time_interval=inf`" in data["error"]


@pytest.mark.parametrize("value", [1e-9, 0.5, MIN_REPORT_INTERVAL_S - 1e-6])
def test_report_interval_below_the_floor_is_rejected(controller, value):
    status, data = _post_json(controller, {"report_time_interval": value})
    assert status == 400
    assert f"`report_time_interval={value!r}`" in data["error"]
    assert f"at least {MIN_REPORT_INTERVAL_S:g} s" in data["error"]
    assert controller.wanted() == INITIAL


def test_report_interval_at_the_floor_is_accepted_and_config_may_go_lower(controller):
    assert _post_json(controller, {"report_time_interval": MIN_REPORT_INTERVAL_S})[0] == 200
    assert controller.wanted().report_time_interval == MIN_REPORT_INTERVAL_S
    # The floor is on requests; a configuration with a shorter interval is the user's choice.
    assert ControlState(True, 0.7, 0.7, 0.25).report_time_interval == 0.25


def test_listen_backlog_is_not_the_stdlib_default_of_5(controller):
    assert controller._server.request_queue_size == LISTEN_BACKLOG >= 64


def test_idle_connections_are_closed_and_threads_stay_bounded():
    before = threading.active_count()
    with StragglerController(INITIAL, port=0, workers=4, max_pending=16, idle_timeout_s=0.5,
                             request_deadline_s=2.0) as ctl:
        serving = threading.active_count()
        assert serving == before + 1 + 4  # the accepting thread and the workers, nothing more
        socks = [socket.create_connection(ctl.address, timeout=10) for _ in range(200)]
        try:
            assert threading.active_count() == serving  # no thread per connection
            answers = []
            for sock in socks:  # each is answered 503 or closed; one held raises TimeoutError
                chunks = []
                while chunk := sock.recv(4096):
                    chunks.append(chunk)
                answers.append(b"".join(chunks))
        finally:
            for sock in socks:
                sock.close()
        busy = [a for a in answers if a]
        assert busy and all(a.startswith(b"HTTP/1.0 503") for a in busy)
        assert all("busy" in json.loads(a.partition(b"\r\n\r\n")[2])["error"] for a in busy)
        assert threading.active_count() == serving
        _wait_until_idle(ctl)  # the workers drop the queued connections the deadline closed
        assert _get_when_free(ctl) == 200  # and it still serves
    deadline = time.monotonic() + 5.0
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before  # close() ends every thread it started


def _wait_for_connections(ctl, count: int, timeout_s: float = 10.0) -> None:
    """Until the server has accepted `count` connections (the accepting thread runs on its own)."""
    deadline = time.monotonic() + timeout_s
    while ctl._server.open_connections() != count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ctl._server.open_connections() == count


def test_a_trickling_client_is_cut_off_at_the_deadline():
    # The deadline is read from an injected clock: time passes when the test says so. Both the
    # deadline and the idle timeout (the socket's own, real time) are longer than the test's
    # waits, so only the fake clock passing the deadline can cut the client off.
    clock = FakeClock()
    with StragglerController(INITIAL, port=0, workers=1, idle_timeout_s=60.0,
                             request_deadline_s=30.0, clock=clock) as ctl:
        with socket.create_connection(ctl.address, timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\nX-Slow: aaaa")  # a request that never ends
            _wait_for_connections(ctl, 1)
            clock.advance(20.0)  # before the deadline: still open ...
            sock.settimeout(0.5)  # (more than two poll periods of the accepting thread)
            with pytest.raises(TimeoutError):
                sock.recv(4096)
            sock.sendall(b"a")
            clock.advance(10.0)  # ... at the deadline: closed without an answer
            sock.settimeout(10)
            assert sock.recv(4096) == b""
        assert _request(ctl, "GET")[0] == 200  # the only worker is free again


def _reset(sock: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a killed client does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_clients_that_disconnect_mid_request_leave_stderr_clean(capfd, caplog):
    caplog.set_level(logging.DEBUG, logger="straggler")
    post = (b"POST / HTTP/1.0\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n")
    with StragglerController(INITIAL, port=0, idle_timeout_s=1.0) as ctl:
        for _ in range(20):
            for partial in (b"", b"GET / HT", b"GET / HTTP/1.0\r\nHost: x", post,
                            post + b'{"enabled"', b"GET / HTTP/1.0\r\n\r\n",
                            b"POST /toggle HTTP/1.0\r\n\r\n"):
                sock = socket.create_connection(ctl.address, timeout=10)
                if partial:
                    sock.sendall(partial)
                _reset(sock)
            sock = socket.create_connection(ctl.address, timeout=10)
            # A busy server (every worker on the resets above) answers 503 and closes first,
            # which makes the client's half-close fail: that connection is done either way.
            with contextlib.suppress(OSError):
                sock.sendall(post + b'{"enabled"')
                sock.shutdown(socket.SHUT_WR)  # half-close mid-body: the body never completes
            sock.close()
        assert _get_when_free(ctl) == 200
        _wait_until_idle(ctl)
    out, err = capfd.readouterr()
    assert err == "" and out == ""
    assert all(r.levelno == logging.DEBUG and r.exc_info is None for r in caplog.records
               if r.getMessage().startswith("controller:"))
    assert "Traceback" not in caplog.text
    assert controller_wanted_unchanged_or_toggled(caplog)


def controller_wanted_unchanged_or_toggled(caplog) -> bool:
    """No partial POST / was applied: the only requests logged at INFO are whole toggles."""
    return all("will turn detection" in r.getMessage() for r in caplog.records
               if r.levelno == logging.INFO and "requested" in r.getMessage())


@pytest.mark.parametrize("kwargs, match", [
    ({"workers": 0}, "`workers=0`"), ({"max_pending": 0}, "`max_pending=0`"),
    ({"idle_timeout_s": 0}, "`idle_timeout_s=0`"),
    ({"request_deadline_s": float("inf")}, "`request_deadline_s=inf`"),
])
def test_constructor_rejects_bad_limits(kwargs, match):
    with pytest.raises(ValueError, match=match):
        StragglerController(INITIAL, port=0, **kwargs)


def test_an_internal_error_is_a_json_500_and_no_traceback(controller, monkeypatch, capfd):
    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(controller, "status", broken)
    status, data = _request(controller, "GET")
    assert status == 500 and "boom" in data["error"]
    assert capfd.readouterr().err == ""


# -- who may talk to it: the token, Host and Origin (docs/integrations.md, "Runtime control") --

def test_a_request_without_the_token_is_refused_and_changes_nothing(controller):
    for method, path in (("GET", "/"), ("POST", "/toggle")):
        status, data = _request(controller, method, path, token=False)
        assert status == 401 and "Authorization: Bearer" in data["error"]
    wrong = {"Authorization": "Bearer " + "x" * len(controller.token)}
    assert _request(controller, "POST", "/toggle", headers=wrong)[0] == 401
    assert _request(controller, "POST", "/toggle", headers={"Authorization": controller.token}
                    )[0] == 401  # the scheme is required
    assert controller.wanted() == INITIAL
    status, headers, _ = _raw(controller, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")


def test_the_generated_token_file_is_private_and_removed_at_close(tmp_path):
    ctl = StragglerController(INITIAL, port=0).start()
    try:
        path = ctl.token_file
        assert path == tmp_path / "tokens" / f"controller-{ctl.address[1]}.token"
        assert path.read_text().strip() == ctl.token and len(ctl.token) >= 32
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert _request(ctl, "GET")[0] == 200
    finally:
        ctl.close()
    assert not path.exists()
    other = StragglerController(INITIAL, port=0)
    assert other.token != ctl.token  # one per controller


def test_a_token_given_by_the_user_is_used_and_no_file_is_written(tmp_path, monkeypatch):
    with StragglerController(INITIAL, port=0, token="given-token-of-the-user") as ctl:
        assert ctl.token == "given-token-of-the-user" and ctl.token_file is None
        assert _request(ctl, "GET")[0] == 200
    monkeypatch.setenv(ENV_TOKEN, "token-from-the-environment")
    with StragglerController(INITIAL, port=0) as ctl:
        assert ctl.token == "token-from-the-environment" and ctl.token_file is None
    assert not (tmp_path / "tokens").exists()
    with pytest.raises(ValueError, match="`token` \\(5 characters\\) must be at least 16"):
        StragglerController(INITIAL, token="short")


def test_a_token_directory_others_can_enter_is_refused_and_nothing_runs(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    before = threading.active_count()
    ctl = StragglerController(INITIAL, port=0, token_file=shared / "t.token")
    with pytest.raises(PermissionError, match="mode 0700"):
        ctl.start()
    assert threading.active_count() == before and not (shared / "t.token").exists()
    port_free = StragglerController(INITIAL, port=0).start()  # nothing half-started blocks
    port_free.close()


def test_a_cross_origin_form_post_cannot_toggle(controller):
    form = {"Content-Type": "application/x-www-form-urlencoded",
            "Origin": "http://evil.example"}
    status, data = _request(controller, "POST", "/toggle", headers=form, token=False)
    assert status == 403 and "Origin" in data["error"]
    # Even with the token (a browser cannot send it cross-origin, but the rule holds anyway).
    assert _request(controller, "POST", "/toggle", headers=form)[0] == 403
    assert controller.wanted() == INITIAL


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "rebind.attacker.test.",
                                  "10.1.2.3:{port}"])
def test_dns_rebinding_cannot_read_the_state(controller, host):
    port = controller.address[1]
    status, data = _request(controller, "GET", headers={"Host": host.format(port=port)})
    assert status == 421 and "does not name this machine" in data["error"]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "localhost",
                                  "[::1]:{port}", "LOCALHOST."])
def test_loopback_host_headers_are_served(controller, host):
    port = controller.address[1]
    assert _request(controller, "GET", headers={"Host": host.format(port=port)})[0] == 200


def test_bound_elsewhere_ip_literals_and_this_hosts_names_pass():
    from straggler.integrations.controller import RequestGuard

    guard = RequestGuard("t" * 32, "0.0.0.0")
    assert guard.host_allowed("10.1.2.3:80") and guard.host_allowed(socket.gethostname())
    assert not guard.host_allowed("evil.example")
    loop = RequestGuard("t" * 32, "127.0.0.1")
    assert not loop.host_allowed("10.1.2.3") and loop.host_allowed("127.0.0.5")


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_megatrons_curl_usage_works_with_the_token_file(tmp_path):
    # As docs/integrations.md and examples/megatron_style_train.py show it.
    with StragglerController(INITIAL, port=0) as ctl:
        port = ctl.address[1]
        header = f'Authorization: Bearer $(cat "{ctl.token_file}")'

        def curl(args: str) -> dict:
            out = subprocess.run(f'curl -s -H "{header}" {args}', shell=True, text=True,
                                 capture_output=True, timeout=60, check=True).stdout
            return json.loads(out)

        assert curl(f"localhost:{port}")["state"] == INITIAL.to_json()
        assert curl(f"-X POST localhost:{port}/toggle")["pending"]["enabled"] is False
        assert curl(f"-X POST -H 'Content-Type: application/json' "
                    f"-d '{{\"gpu_relative_perf_threshold\": 0.9}}' localhost:{port}"
                    )["pending"]["gpu_relative_perf_threshold"] == 0.9
        plain = subprocess.run(f"curl -s -X POST localhost:{port}/toggle", shell=True, text=True,
                               capture_output=True, timeout=60, check=True).stdout
        assert "Authorization: Bearer" in json.loads(plain)["error"]
        assert ctl.wanted().enabled is False  # the plain curl changed nothing
