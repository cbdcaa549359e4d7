"""The HTTP controller, driven over loopback: state, toggle, settings, bad input, bind address."""

from __future__ import annotations

import http.client
import json
import socket

import pytest

from straggler.integrations.controller import (
    ControlState,
    StragglerController,
    check_control_value,
    parse_update,
)

INITIAL = ControlState(enabled=True, gpu_relative_perf_threshold=0.7,
                       gpu_individual_perf_threshold=0.7, report_time_interval=300.0)


@pytest.fixture
def controller():
    with StragglerController(INITIAL, port=0) as ctl:
        yield ctl


def _request(ctl, method, path="/", body=None, headers=None):
    host, port = ctl.address
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
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
        try:
            found.update(socket.gethostbyname_ex(socket.gethostname())[2])
        except OSError:
            pass
    return sorted(a for a in found if not a.startswith("127."))
