"""The Prometheus exporter's HTTP side: ``/metrics`` answered from the exporter's snapshot.

Imported when a `PrometheusExporter` is built, so that a detector without an exporter loads
neither ``http.server`` nor the pooled server (`straggler._http`): about 0.7 MiB of a rank's
first ``Detector.initialize`` (benchmarks/init_cost.py).
"""

from __future__ import annotations

from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .._http import PooledHTTPServer, ServerLimits

if TYPE_CHECKING:
    from .prometheus import PrometheusExporter

__all__ = ["EXPORTER_LIMITS", "MetricsServer"]

EXPORTER_LIMITS = ServerLimits(workers=2, max_pending=8, idle_timeout_s=2.0,
                               request_deadline_s=10.0, max_accept_per_s=20.0)
"""The exporter's server: 2 workers, 8 queued connections (more: 503), 2 s idle, 10 s per
connection, 20 connections accepted per second (Prometheus scrapes every 15-60 s). With the
accepting and the rendering thread: 4 threads, whatever scrapers do."""


class MetricsServer(PooledHTTPServer):
    """The package's pooled server (`straggler._http`) answering with `exporter`'s snapshot."""

    def __init__(self, address: tuple[str, int], exporter: PrometheusExporter,
                 limits: ServerLimits) -> None:
        self.exporter = exporter
        super().__init__(address, MetricsHandler, limits, name="prometheus")


class MetricsHandler(BaseHTTPRequestHandler):
    """``GET /metrics`` (or ``/``): the ready-made snapshot; nothing is computed per scrape."""

    server: MetricsServer
    server_version = "straggler-prometheus"
    sys_version = ""
    protocol_version = "HTTP/1.0"  # one request per connection

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's parameter name
        pass  # a scrape is not worth a line; errors are answered, not logged

    def _answer(self, body: bool) -> None:
        if self.path.split("?", 1)[0] not in ("/metrics", "/"):
            self.send_error(HTTPStatus.NOT_FOUND, "no such path; use GET /metrics")
            return
        data = self.server.exporter.snapshot()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.server.exporter.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_GET(self) -> None:
        """The snapshot."""
        self._answer(body=True)

    def do_HEAD(self) -> None:
        """The snapshot's headers."""
        self._answer(body=False)

