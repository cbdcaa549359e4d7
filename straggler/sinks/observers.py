"""What the reporting rank does with each report besides returning it: the report log and the
Prometheus exporter (docs/reportlog.md, docs/metrics.md).

`ReportObservers.emit` turns the report into one record (`straggler.sinks.record`) and hands
it to each observer that is on. An observer that fails (a full disk, a port in use, a bug) is
logged once and turned off; the detector and the training loop never see the error, and
detection goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .prometheus import PrometheusExporter, PrometheusOptions, prometheus_options
from .record import ReportContext, report_record
from .reportlog import ReportLog, ReportLogOptions, report_log_options

__all__ = ["ReportObservers", "make_observers"]

log = logging.getLogger("straggler")


class ReportObservers:
    """The report log and the Prometheus exporter of one detector lifetime."""

    def __init__(self, log_options: ReportLogOptions | None,
                 prom_options: PrometheusOptions | None, threshold: float = 0.75,
                 clock: Callable[[], float] = time.time) -> None:
        self.log_options = log_options
        self.prom_options = prom_options
        self.threshold = threshold
        self.report_log: ReportLog | None = None
        self.exporter: PrometheusExporter | None = None
        self._clock = clock
        self._last_time = clock()
        self._last_iteration = 0

    def emit(self, report: Any, *, iteration: int, report_ms: float, sections: int,
             gpu_timers: int) -> None:
        """Log and export `report` (on the rank that received it); never raises."""
        now = self._clock()
        context = ReportContext(time_s=now, iteration=iteration,
                                window_iterations=max(0, iteration - self._last_iteration),
                                window_s=now - self._last_time, report_ms=report_ms,
                                threshold=self.threshold, sections=sections,
                                gpu_timers=gpu_timers)
        self._last_time, self._last_iteration = now, iteration
        try:
            record = report_record(report, context)
        except Exception as exc:
            log.error("straggler: the report could not be turned into a log record (%s); the "
                      "report log and exporter are off for the rest of this run", exc,
                      exc_info=exc)
            self.log_options = self.prom_options = None
            return
        if self.log_options is not None:
            if self.report_log is None:
                self.report_log = ReportLog(self.log_options, rank=report.rank or 0)
            if not self.report_log.write(record):
                self.log_options = None
        if self.prom_options is not None:
            self._export(record, self.prom_options)

    def emit_hang(self, record: dict[str, Any]) -> None:
        """Log and export a hang finding (`straggler.hang.hang_record`); never raises."""
        if self.log_options is not None:
            if self.report_log is None:
                self.report_log = ReportLog(self.log_options, rank=int(record.get("reporter", 0)))
            if not self.report_log.write(record):
                self.log_options = None
        if self.prom_options is not None:
            self._export(record, self.prom_options, hang=True)

    def clear_hang(self) -> None:
        """The job progresses again: the exporter's ``straggler_hang`` gauge goes to 0."""
        if self.exporter is not None:
            self.exporter.clear_hang()

    def _export(self, record: dict[str, Any], options: PrometheusOptions,
                hang: bool = False) -> None:
        try:
            if self.exporter is None:
                self.exporter = PrometheusExporter(options)
                log.info("straggler: Prometheus metrics on http://%s:%d/metrics",
                         options.addr, self.exporter.port)
            if hang:
                self.exporter.update_hang(record)
            else:
                self.exporter.update(record)
        except Exception as exc:  # noqa: BLE001 - e.g. the port is in use
            log.error("straggler: the Prometheus exporter on %s:%s failed (%s); it is off for "
                      "the rest of this run, detection and training go on",
                      options.addr, options.port, exc)
            self.prom_options = None
            self._close_exporter()

    def _close_exporter(self) -> None:
        exporter, self.exporter = self.exporter, None
        if exporter is not None:
            exporter.close()

    def close(self) -> None:
        """Close the log file and stop the exporter."""
        if self.report_log is not None:
            self.report_log.close()
        self._close_exporter()


def make_observers(report_log: Any = None, prometheus: Any = None,
                   threshold: float = 0.75) -> ReportObservers | None:
    """Validated observers for `initialize(report_log=..., prometheus=...)`; None when both off.

    None for an option means "use the environment" (``STRAGGLER_REPORT_LOG``,
    ``STRAGGLER_PROMETHEUS_PORT``); False means off.
    """
    log_options = report_log_options(report_log)
    prom_options = prometheus_options(prometheus)
    if log_options is None and prom_options is None:
        return None
    return ReportObservers(log_options, prom_options, threshold)
