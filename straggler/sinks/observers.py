"""What the reporting rank does with each report besides returning it: hand one record to
each sink (the report log, the Prometheus exporter; docs/reportlog.md, docs/metrics.md).

`ReportObservers.emit` turns the report into one record (`straggler.sinks.record`) and hands
it to each `ReportSink` that is on; both sinks do their I/O on threads of their own (the log's
writer, the exporter's renderer and server), so the training thread only builds the record. A
sink that fails (a port in use, a bug) is logged once and turned off; a report log that cannot
write logs it and tries the next record; the detector and the training loop never see the
error, and detection goes on.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from .prometheus import PrometheusExporter, PrometheusOptions
from .record import ReportContext, default_run_id, report_record, restart_count
from .reportlog import ReportLog, ReportLogOptions

__all__ = ["ReportSink", "ReportLogSink", "PrometheusSink", "ReportObservers", "make_observers"]

log = logging.getLogger("straggler")

S = TypeVar("S")


class ReportSink(Protocol):
    """One place the reporting rank sends each report's record."""

    @property
    def what(self) -> str:
        """The sink in a log message ("the report log build/r.jsonl")."""
        ...

    def write(self, record: dict[str, Any], rank: int) -> bool:
        """Take one record from global rank `rank`; False (having logged why) to be turned off.

        An exception also turns the sink off (`ReportObservers` logs it)."""
        ...

    def close(self) -> None:
        """Release files, sockets and threads; idempotent."""
        ...


class ReportLogSink:
    """The JSON-lines report log, opened at the first record (its path may name the rank)."""

    def __init__(self, options: ReportLogOptions) -> None:
        self.options = options
        self.report_log: ReportLog | None = None

    @property
    def what(self) -> str:
        return f"report log {self.options.path}"

    def write(self, record: dict[str, Any], rank: int) -> bool:
        if self.report_log is None:
            self.report_log = ReportLog(self.options, rank=rank)
        self.report_log.write(record)  # queued for its writer thread: never blocks; a record
        return True  # dropped or not written is counted and logged there, and later ones tried

    def close(self) -> None:
        if self.report_log is not None:
            self.report_log.close()


class PrometheusSink:
    """The Prometheus exporter, listening from the first record on (only the reporting rank)."""

    def __init__(self, options: PrometheusOptions) -> None:
        self.options = options
        self.exporter: PrometheusExporter | None = None

    @property
    def what(self) -> str:
        return f"Prometheus exporter on {self.options.addr}:{self.options.port}"

    def write(self, record: dict[str, Any], rank: int) -> bool:
        if self.exporter is None:
            self.exporter = PrometheusExporter(self.options)
            log.info("straggler: Prometheus metrics on http://%s:%d/metrics",
                     self.options.addr, self.exporter.port)
        if record.get("schema") == "straggler.hang":  # a hang finding (docs/hang.md)
            self.exporter.update_hang(record)
        else:
            self.exporter.update(record)
        return True

    def close(self) -> None:
        exporter, self.exporter = self.exporter, None
        if exporter is not None:
            exporter.close()


class ReportObservers:
    """The sinks of one detector lifetime; `emit` never raises."""

    def __init__(self, sinks: Iterable[ReportSink], threshold: float = 0.75,
                 clock: Callable[[], float] = time.time, run_id: str | None = None) -> None:
        self.sinks: list[ReportSink] = list(sinks)
        self.run_id = run_id if run_id is not None else default_run_id()
        """Every record's ``run_id`` (`record.default_run_id`)."""
        self.pid, self.restart_count = os.getpid(), restart_count()
        """Every record's ``pid`` and ``restart_count``: a restart within a run shows."""
        self.threshold = threshold
        self._clock = clock
        self._last_time = clock()  # until `start_window`: reports made without the loop's calls
        self._last_iteration = 0

    def start_window(self, iteration: int) -> None:
        """The first window begins now, at `iteration`: the loop's first
        `generate_report_if_interval_elapsed` call, with the count a resumed job restored, so
        the first record's ``window_s`` and ``window_iterations`` leave out the start-up (model
        building, data loader workers) and the iterations of earlier runs."""
        self._last_time, self._last_iteration = self._clock(), iteration

    def sink(self, kind: type[S]) -> S | None:
        """The sink of type `kind` that is still on, or None."""
        return next((s for s in self.sinks if isinstance(s, kind)), None)

    def emit(self, report: Any, *, iteration: int, report_ms: float, sections: int,
             gpu_timers: int) -> None:
        """Hand `report`'s record to every sink (on the rank that received it); never raises."""
        now = self._clock()
        context = ReportContext(time_s=now, iteration=iteration,
                                window_iterations=max(0, iteration - self._last_iteration),
                                window_s=now - self._last_time, report_ms=report_ms,
                                threshold=self.threshold, sections=sections,
                                gpu_timers=gpu_timers, run_id=self.run_id, pid=self.pid,
                                restart_count=self.restart_count)
        self._last_time, self._last_iteration = now, iteration
        try:
            record = report_record(report, context)
        except Exception as exc:
            log.error("straggler: the report could not be turned into a log record (%s); the "
                      "report log and exporter are off for the rest of this run", exc,
                      exc_info=exc)
            self.close()
            return
        self._write_all(record, report.rank or 0)

    def emit_hang(self, record: dict[str, Any]) -> None:
        """Hand a hang finding's record (`straggler.hang.hang_record`) to every sink; never
        raises."""
        self._write_all(record, int(record.get("reporter", 0)))

    def _write_all(self, record: dict[str, Any], rank: int) -> None:
        """Write ``record`` to every sink; a sink that fails or turns itself off is dropped."""
        for sink in list(self.sinks):
            try:
                on = sink.write(record, rank)
            except Exception as exc:  # noqa: BLE001 - e.g. the port is in use
                log.error("straggler: the %s failed (%s); it is off for the rest of this run, "
                          "detection and training go on", sink.what, exc)
                on = False
            if not on:
                self._drop(sink)

    def clear_hang(self) -> None:
        """The job progresses again: the exporter's ``straggler_hang`` gauge goes to 0."""
        sink = self.sink(PrometheusSink)
        if sink is not None and sink.exporter is not None:
            sink.exporter.clear_hang()

    def _drop(self, sink: ReportSink) -> None:
        self.sinks.remove(sink)
        try:
            sink.close()
        except Exception as exc:  # noqa: BLE001 - it is off already
            log.warning("straggler: closing the %s failed: %s", sink.what, exc)

    def close(self) -> None:
        """Close every sink (the log file, the exporter's port)."""
        for sink in list(self.sinks):
            self._drop(sink)


def make_observers(log_options: ReportLogOptions | None, prom_options: PrometheusOptions | None,
                   threshold: float = 0.75) -> ReportObservers | None:
    """The observers of `initialize(report_log=..., prometheus=...)` once converted
    (by `straggler.options.to_options`, in `DetectorOptions`); None: both off."""
    sinks: list[ReportSink] = []
    if log_options is not None:
        sinks.append(ReportLogSink(log_options))
    if prom_options is not None:
        sinks.append(PrometheusSink(prom_options))
    return ReportObservers(sinks, threshold) if sinks else None
