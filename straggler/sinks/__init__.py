"""Where a finished report goes besides the caller: the JSON-lines report log and the
Prometheus exporter, both behind `observers.ReportObservers`.

The names below are the sub-package's API. prometheus_client and the exporter's HTTP server
(`metrics_server`, ``http.server``) are imported only when an exporter is built.
"""

from __future__ import annotations

from .observers import PrometheusSink, ReportLogSink, ReportObservers, ReportSink, make_observers
from .prometheus import PrometheusExporter, PrometheusOptions
from .record import SCHEMA, SCHEMA_VERSION, ReportContext, report_record
from .reportlog import LogFormatError, ReportLog, ReportLogOptions, log_files, read_records

__all__ = ["ReportObservers", "make_observers", "ReportSink", "ReportLogSink", "PrometheusSink",
           "ReportLog", "ReportLogOptions", "log_files",
           "read_records", "LogFormatError", "PrometheusExporter", "PrometheusOptions",
           "SCHEMA", "SCHEMA_VERSION", "ReportContext", "report_record"]
