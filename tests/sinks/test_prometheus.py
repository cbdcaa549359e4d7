"""The Prometheus exporter: scraped over loopback, bounded labels, options and failures."""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from straggler import Detector
from straggler.options import to_options
from straggler.sinks.observers import PrometheusSink
from straggler.sinks.prometheus import (
    MAX_SECTIONS,
    TOP_K,
    PrometheusExporter,
    PrometheusOptions,
)
from straggler.sinks.record import SCHEMA, SCHEMA_VERSION

from _fresh import fresh_python


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for key in ("STRAGGLER_DISABLE", "STRAGGLER_REPORT_LOG", "STRAGGLER_PROMETHEUS_PORT",
                "STRAGGLER_PROMETHEUS_ADDR"):
        monkeypatch.delenv(key, raising=False)
    Detector.shutdown()
    yield
    Detector.shutdown()


def _scrape(port: int) -> dict:
    """{metric name: [(labels, value), ...]} from one bounded request to 127.0.0.1.

    The bound catches a hung exporter, not a slow one: the 16k-rank scrape (4 MB, ~1.5 s of
    CPU) took over 10 s of wall time on the 2 shared cores during a full suite run.
    """
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as resp:
        text = resp.read().decode()
    out: dict = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def _record(n_ranks: int, n_sections: int = 2, flagged=(), confirmed=()) -> dict:
    ranks = list(range(n_ranks))
    rel = [0.5 if r in flagged else 1.0 for r in ranks]
    return {
        "schema": SCHEMA, "version": SCHEMA_VERSION, "time": 1.7e9, "iteration": 100,
        "window_iterations": 10, "window_s": 2.0, "reporting_rank": 0, "threshold": 0.75,
        "ranks": ranks, "nodes": [f"n{r // 8}" for r in ranks],
        "gpu": {"relative": rel, "individual": [1.0] * n_ranks},
        "sections": {f"s{i}": {"relative": rel, "individual": [None] * n_ranks,
                               "median_ms": [10.0] * n_ranks} for i in range(n_sections)},
        "flagged": [{"rank": r, "metrics": ["gpu:relative"]} for r in flagged],
        "confirmed": list(confirmed), "policy": {},
        "causes": [{"rank": r, "cause": "gpu_thermal_throttling", "evidence": "hot",
                    "values": {}, "gpu": None} for r in flagged],
        "telemetry": {"gpu_temp_c_max": {"min": 50.0, "median": 55.0, "max": 92.0,
                                         "ranks": n_ranks}},
        "telemetry_flagged": {str(r): {"gpu_temp_c_max": 92.0, "power_w_mean": 450.0}
                              for r in flagged},
        "overhead": {"report_ms": 20.0, "scores_ms": 12.0, "sections": n_sections,
                     "gpu_timers": 3},
    }


def test_a_detector_serves_its_reports_on_loopback():
    Detector.initialize(report_time_interval=0, telemetry=False,
                        prometheus=PrometheusOptions(0))
    for _ in range(3):
        with Detector.detection_section("forward", profile_cuda=False):
            sum(range(1000))
        Detector.generate_report_if_interval_elapsed()
    exporter = Detector.core().observers.sink(PrometheusSink).exporter
    assert exporter.options.addr == "127.0.0.1"
    assert exporter.wait_rendered()
    metrics = _scrape(exporter.port)
    assert metrics["straggler_reports_total"] == [({}, 3.0)]
    assert metrics["straggler_rank_info"][0][0]["rank"] == "0"
    assert metrics["straggler_section_relative_score_min"] == [({"rank": "0"}, 1.0)]
    assert metrics["straggler_report_iteration"] == [({}, 3.0)]
    assert metrics["straggler_report_duration_seconds"][0][1] > 0
    assert metrics["straggler_detector_sections"] == [({}, 1.0)]
    port = exporter.port
    Detector.shutdown()  # releases the port
    with socket.socket() as s:  # no listener is left (REUSEADDR: TIME_WAIT ones may be)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_flagged_confirmed_cause_and_telemetry_series():
    exporter = PrometheusExporter(PrometheusOptions(0))
    try:
        metrics = _scrape(exporter.port)
        assert metrics["straggler_reports_total"] == [({}, 0.0)]  # nothing before a report
        exporter.update(_record(8, flagged=(2, 5), confirmed=(2,)))
        assert exporter.wait_rendered()
        metrics = _scrape(exporter.port)
    finally:
        exporter.close()
    assert sorted(labels["rank"] for labels, _ in metrics["straggler_flagged"]) == ["2", "5"]
    assert metrics["straggler_confirmed"] == [({"rank": "2"}, 1.0)]
    assert metrics["straggler_confirmed_ranks"] == [({}, 1.0)]
    assert ({"rank": "5", "cause": "gpu_thermal_throttling"}, 1.0) in metrics["straggler_cause"]
    assert ({"rank": "2", "field": "gpu_temp_c_max"}, 92.0) in \
        metrics["straggler_flagged_telemetry"]
    assert ({"field": "gpu_temp_c_max", "stat": "max"}, 92.0) in metrics["straggler_telemetry"]
    assert ({"section": "s0"}, 2.0) in metrics["straggler_section_worst_rank"]
    assert ({"section": "s1", "kind": "relative", "stat": "min"}, 0.5) in \
        metrics["straggler_section_score"]
    assert math.isclose(metrics["straggler_report_overhead_ratio"][0][1], 0.01)
    assert ({"section": "s0", "stat": "median"}, 0.01) in \
        metrics["straggler_section_median_seconds"]


def test_label_cardinality_stays_bounded_at_16k_ranks():
    n = 16384
    exporter = PrometheusExporter(PrometheusOptions(0))
    try:
        exporter.update(_record(n, n_sections=200, flagged=range(0, n, 2)))
        assert exporter.wait_rendered(timeout_s=120)  # seconds of CPU on a loaded machine
        metrics = _scrape(exporter.port)
    finally:
        exporter.close()
    for name, samples in metrics.items():
        labels = {k for labels, _ in samples for k in labels}
        # Per-rank series: one per rank (8,192 flagged here); nothing is per rank x section.
        assert len(samples) <= n, name
        assert not ({"rank", "section"} <= labels), name
    assert len(metrics["straggler_gpu_relative_score"]) == n
    sections = {lab["section"] for lab, _ in metrics["straggler_section_worst_rank"]}
    assert len(sections) == MAX_SECTIONS
    ranks = {lab["rank"] for lab, _ in metrics["straggler_flagged_telemetry"]}
    assert len(ranks) == TOP_K


def prometheus_options(value):
    """What ``initialize(prometheus=value)`` makes of it."""
    return to_options(PrometheusOptions, value, "prometheus")


def test_options_and_environment(monkeypatch):
    assert prometheus_options(None) is None
    assert prometheus_options(9400) == PrometheusOptions(9400, "127.0.0.1")
    monkeypatch.setenv("STRAGGLER_PROMETHEUS_PORT", "9401")
    monkeypatch.setenv("STRAGGLER_PROMETHEUS_ADDR", "0.0.0.0")
    assert prometheus_options(None) == PrometheusOptions(9401, "0.0.0.0")
    assert prometheus_options(False) is None
    monkeypatch.setenv("STRAGGLER_PROMETHEUS_PORT", "ninety")
    with pytest.raises(ValueError, match="STRAGGLER_PROMETHEUS_PORT='ninety'"):
        prometheus_options(None)
    for bad in (-1, 70000, "9400", True):
        with pytest.raises(ValueError, match=f"^`prometheus={bad!r}` must be"):
            Detector.initialize(prometheus=bad)
    assert Detector.core() is None
    monkeypatch.setenv("STRAGGLER_PROMETHEUS_PORT", "70000")
    with pytest.raises(ValueError, match=r"^`STRAGGLER_PROMETHEUS_PORT='70000'` must be an integer "
                                         r"between 0 and 65535$"):
        prometheus_options(None)


@pytest.mark.parametrize("kwargs, message", [
    ({"port": -1}, r"`prometheus_port=-1` must be an integer between 0 and 65535"),
    ({"port": 70000}, r"`prometheus_port=70000` must be an integer between 0 and 65535"),
    ({"port": 0, "addr": ""}, r"`prometheus_addr=''` must be a non-empty string"),
    ({"port": 0, "addr": None}, r"`prometheus_addr=None` must be a non-empty string"),
])
def test_bad_options_are_named_with_the_shared_wording(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        PrometheusOptions(**kwargs)


def test_a_port_in_use_logs_once_and_detection_goes_on(caplog):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with caplog.at_level(logging.ERROR, logger="straggler"):
            Detector.initialize(report_time_interval=0, telemetry=False, prometheus=port)
            reports = []
            for _ in range(3):
                with Detector.detection_section("forward", profile_cuda=False):
                    sum(range(100))
                reports.append(Detector.generate_report_if_interval_elapsed())
    assert all(r is not None for r in reports)
    errors = [r for r in caplog.records if "Prometheus exporter" in r.getMessage()]
    assert len(errors) == 1 and str(port) in errors[0].getMessage()


# -- the exporter cannot harm the job: bounded threads, deadlines, nothing per scrape ------------

def _exporter_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("straggler-prometheus")]


def test_idle_connections_cannot_grow_threads_and_nothing_is_left_after_close():
    from straggler._http import ServerLimits

    before = threading.active_count()
    limits = ServerLimits(workers=2, max_pending=8, idle_timeout_s=0.5, request_deadline_s=2.0)
    exporter = PrometheusExporter(PrometheusOptions(0), limits=limits)
    try:
        serving = threading.active_count()
        assert serving == before + 4  # accepting, 2 workers, renderer: nothing per connection
        socks = [socket.create_connection(("127.0.0.1", exporter.port), timeout=10)
                 for _ in range(300)]
        try:
            assert threading.active_count() == serving
            for sock in socks:  # each is answered 503, or closed by the idle timeout/deadline
                while sock.recv(4096):
                    pass
        finally:
            for sock in socks:
                sock.close()
        assert threading.active_count() == serving
        exporter.update(_record(4))
        assert exporter.wait_rendered()
        deadline = time.monotonic() + 20
        while True:  # connections left in the listen backlog may still take the queue once
            try:
                metrics = _scrape(exporter.port)
                break
            except urllib.error.HTTPError as exc:
                assert exc.code == 503 and time.monotonic() < deadline
                time.sleep(0.1)
        assert metrics["straggler_reports_total"] == [({}, 1.0)]
    finally:
        exporter.close()
    assert exporter.threads() == [] and _exporter_threads() == []
    assert threading.active_count() == before


def test_a_scrape_sends_the_snapshot_rendered_once_per_report(monkeypatch):
    exporter = PrometheusExporter(PrometheusOptions(0))
    calls = []
    real = exporter._generate
    monkeypatch.setattr(exporter, "_generate", lambda registry: calls.append(1) or real(registry))
    try:
        exporter.update(_record(4, flagged=(1,)))
        assert exporter.wait_rendered()
        first = [_scrape(exporter.port) for _ in range(20)]
        assert len(calls) == 1  # rendered at report time, never per scrape
        assert all(m == first[0] for m in first)
        exporter.update(_record(4, flagged=(2,)))
        assert exporter.wait_rendered()
        flagged = _scrape(exporter.port)["straggler_flagged"]
        assert len(calls) == 2 and [lab["rank"] for lab, _ in flagged] == ["2"]
    finally:
        exporter.close()


def test_update_never_waits_for_rendering():
    exporter = PrometheusExporter(PrometheusOptions(0))
    release = threading.Event()
    real = exporter._generate

    def slow(registry):
        release.wait(30)
        return real(registry)

    exporter._generate = slow
    try:
        start = time.monotonic()
        for i in range(50):  # while the renderer is stuck: the latest record waits, no queue
            exporter.update(_record(4, flagged=(i % 4,)))
        assert time.monotonic() - start < 5.0  # (50 renders would be blocked for 30 s each)
        assert _scrape(exporter.port)["straggler_reports_total"] == [({}, 0.0)]  # the old one
        release.set()
        assert exporter.wait_rendered()
        metrics = _scrape(exporter.port)
        assert metrics["straggler_reports_total"] == [({}, 50.0)]
        assert exporter.renders <= 2  # the first, then only the latest of the other 49
    finally:
        release.set()
        exporter.close()


def test_a_render_failure_keeps_the_previous_snapshot_and_logs_once(caplog, monkeypatch):
    exporter = PrometheusExporter(PrometheusOptions(0))
    try:
        exporter.update(_record(4))
        assert exporter.wait_rendered()

        def broken(registry):
            raise RuntimeError("render bug")

        monkeypatch.setattr(exporter, "_generate", broken)
        with caplog.at_level(logging.ERROR, logger="straggler"):
            for _ in range(3):
                exporter.update(_record(4, flagged=(1,)))
                assert exporter.wait_rendered()
        assert _scrape(exporter.port)["straggler_reports_total"] == [({}, 1.0)]
        assert caplog.text.count("could not render") == 1
    finally:
        exporter.close()


def test_other_paths_and_methods_are_refused():
    exporter = PrometheusExporter(PrometheusOptions(0))
    try:
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(f"http://127.0.0.1:{exporter.port}/nope", timeout=10)
        req = urllib.request.Request(f"http://127.0.0.1:{exporter.port}/metrics", data=b"x")
        with pytest.raises(urllib.error.HTTPError, match="501"):
            urllib.request.urlopen(req, timeout=10)
    finally:
        exporter.close()


def test_detector_shutdown_leaves_no_exporter_thread():
    Detector.initialize(report_time_interval=0, telemetry=False, prometheus=PrometheusOptions(0))
    with Detector.detection_section("forward", profile_cuda=False):
        sum(range(100))
    Detector.generate_report_if_interval_elapsed()
    assert len(_exporter_threads()) == 4
    Detector.shutdown()
    assert _exporter_threads() == []


def test_accepts_are_paced_so_a_flood_costs_a_bounded_amount_of_work():
    from straggler._http import ServerLimits

    rate = 5.0
    limits = ServerLimits(workers=2, max_pending=8, idle_timeout_s=5.0, request_deadline_s=10.0,
                          max_accept_per_s=rate)
    exporter = PrometheusExporter(PrometheusOptions(0), limits=limits)
    server = exporter._server
    accepted = []
    real = server.process_request

    def counting(request, address):
        real(request, address)  # paces first
        accepted.append(time.monotonic())

    server.process_request = counting
    try:
        socks = [socket.create_connection(("127.0.0.1", exporter.port), timeout=10)
                 for _ in range(25)]  # fewer than the listen backlog: all wait there
        for sock in socks:
            sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        for sock in socks:
            while sock.recv(65536):
                pass
            sock.close()
    finally:
        exporter.close()
    assert len(accepted) == 25
    # The k-th accept comes no sooner than the rate allows after one second's burst: an upper
    # bound on the work, which a loaded machine can only lower.
    for k, t in enumerate(accepted):
        assert k <= rate * (t - accepted[0]) + rate + 1, (k, t - accepted[0])
    assert accepted[-1] - accepted[0] >= (25 - rate - 1) / rate * 0.9  # and it did pace


def _scrape_until(port: int, name: str, want: list, timeout_s: float = 10.0) -> dict:
    """Scrape until `name` reads `want` (the renderer redraws on its own thread)."""
    deadline = time.monotonic() + timeout_s
    metrics = _scrape(port)
    while metrics.get(name) != want and time.monotonic() < deadline:
        time.sleep(0.02)
        metrics = _scrape(port)
    return metrics


def test_hang_finding_sets_the_gauge_and_names_the_culprits_until_cleared():
    from straggler.hang import HANG, Culprit, HangFinding, hang_record

    finding = HangFinding(HANG, 4, 12.5, 10.0, culprits=(Culprit(2, "not arrived", "n1"),))
    exporter = PrometheusExporter(PrometheusOptions(0))
    try:
        metrics = _scrape(exporter.port)
        assert metrics["straggler_hang"] == [({"kind": "hang"}, 0.0)]
        exporter.update_hang(hang_record(finding, 1.0))
        metrics = _scrape_until(exporter.port, "straggler_hang", [({"kind": "hang"}, 1.0)])
        assert metrics["straggler_hang"] == [({"kind": "hang"}, 1.0)]
        assert metrics["straggler_hang_culprit"] == [
            ({"rank": "2", "node": "n1", "state": "not arrived"}, 1.0)]
        assert metrics["straggler_hang_stalled_seconds"] == [({}, 12.5)]
        exporter.clear_hang()
        metrics = _scrape_until(exporter.port, "straggler_hang", [({"kind": "hang"}, 0.0)])
        assert metrics["straggler_hang"] == [({"kind": "hang"}, 0.0)]
    finally:
        exporter.close()


_IMPORTS_AFTER_A_REPORT = """
import sys
from straggler import Detector
Detector.initialize(node_name="n", prometheus={prometheus})
with Detector.detection_section("step", profile_cuda=False):
    pass
Detector.generate_report()
print(sorted(m for m in ("prometheus_client", "http.server", "socketserver", "straggler._http",
                         "straggler.sinks.metrics_server") if m in sys.modules))
Detector.shutdown()
"""


@pytest.mark.parametrize("prometheus, expected", [
    ("None", []),
    ("0", ["http.server", "prometheus_client", "socketserver", "straggler._http",
           "straggler.sinks.metrics_server"]),
])
def test_the_http_server_and_prometheus_client_are_imported_only_with_an_exporter(
        prometheus, expected):
    assert fresh_python(_IMPORTS_AFTER_A_REPORT.format(prometheus=prometheus)) == repr(expected)
