"""Prometheus exporter of the latest report, on the reporting rank (docs/metrics.md).

`PrometheusExporter` serves ``/metrics`` (127.0.0.1 by default) from the package's pooled HTTP
server (`straggler._http`: a fixed number of threads and connections, idle and request
deadlines, nothing left after `close`). The training thread only hands each report record
(`straggler.sinks.record`) over; a renderer thread turns it into the exposition text once with
``prometheus_client`` (its own registry), and scrapes send those bytes: a scrape computes
nothing. Series of ranks that are no longer flagged simply disappear.
Label cardinality is bounded by the number of ranks: per-rank metrics carry the ``rank`` label
only; per-section metrics are aggregated over ranks (labels ``section`` and ``stat``), sections
are capped at `MAX_SECTIONS`, and per-rank telemetry is exported for at most `TOP_K` flagged
ranks. ``prometheus_client`` and the HTTP side (`straggler.sinks.metrics_server`, with
``http.server``) are imported when an exporter is built, never by ``import straggler`` or by a
``Detector.initialize`` without an exporter.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .. import _env
from .._checks import check_int, check_name
from ..options import switched_by_environment

if TYPE_CHECKING:
    from .._http import ServerLimits
    from .metrics_server import MetricsServer

log = logging.getLogger("straggler")

__all__ = ["ENV_ADDR", "ENV_PORT", "MAX_SECTIONS", "PrometheusExporter", "PrometheusOptions",
           "TOP_K"]

ENV_PORT = _env.PROMETHEUS_PORT.name
ENV_ADDR = _env.PROMETHEUS_ADDR.name
DEFAULT_ADDR = "127.0.0.1"
TOP_K = 16
"""Flagged ranks (lowest score first) whose telemetry is exported per rank."""
MAX_SECTIONS = 64
"""Sections exported per report (those with the lowest minimum relative score first)."""



@dataclass(frozen=True)
class PrometheusOptions:
    """Where the exporter listens; port 0 picks a free port (see `PrometheusExporter.port`).

    ``initialize(prometheus=...)`` (converted by `straggler.options.to_options`): None reads
    ``$STRAGGLER_PROMETHEUS_PORT`` (unset: off), False is off, a port (int) or a dict gives the
    fields. ``$STRAGGLER_PROMETHEUS_ADDR`` sets the address a port or a dict leaves out
    (default 127.0.0.1); an instance says it in full.
    """

    _SHORTHANDS: ClassVar[str] = "a port number, False, None"

    port: int
    addr: str = DEFAULT_ADDR

    def __post_init__(self) -> None:
        check_int("prometheus_port", self.port, low=0, high=65535)
        check_name("prometheus_addr", self.addr)

    @classmethod
    def _from_shorthand(cls, value: Any, name: str,
                        environ: Mapping[str, str] | None) -> dict[str, Any] | None:
        """A port: the fields; None: the environment's port (else off); False: off."""
        if isinstance(value, int) and not isinstance(value, bool):
            return {"port": check_int(name, value, low=0, high=65535)}
        return switched_by_environment(value, _env.PROMETHEUS_PORT, environ)

    @classmethod
    def _from_environment(cls, environ: Mapping[str, str] | None) -> dict[str, Any]:
        """``$STRAGGLER_PROMETHEUS_PORT`` and ``_ADDR``, those that are set."""
        values = {"port": _env.PROMETHEUS_PORT.read(environ),
                  "addr": _env.PROMETHEUS_ADDR.read(environ)}
        return {k: v for k, v in values.items() if v is not None}


def _nan(x: Any) -> float:
    """``x`` as a float, NaN when it is None (null in the record)."""
    return math.nan if x is None else float(x)


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _values(xs: Any) -> Any:
    """``xs`` as a float64 numpy array with every non-finite entry (None, NaN, inf) as NaN.

    Scrapes of large jobs (16k ranks x 200 sections) stay in numpy: a Python test per value
    took seconds per scrape, holding the GIL on the reporting rank.
    """
    import numpy as np

    try:
        a = np.array(xs, dtype=np.float64)  # None -> NaN
    except (TypeError, ValueError):  # an entry that is no number: skipped, as _finite does
        a = np.array([float(x) if _finite(x) else math.nan for x in xs], dtype=np.float64)
    if a.ndim != 1:
        a = np.array([float(x) if _finite(x) else math.nan for x in xs], dtype=np.float64)
    a[~np.isfinite(a)] = math.nan
    return a


class _RecordCollector:
    """Renders the latest record as metric families at scrape time."""

    def __init__(self) -> None:
        self.record: dict[str, Any] | None = None
        self.reports = 0
        self.hang: dict[str, Any] | None = None  # the latest hang finding (straggler.hang)
        self.hang_active = False

    def describe(self) -> list:
        return []  # no fixed set of series: rendered from the latest record

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        record, reports = self.record, self.reports
        yield CounterMetricFamily("straggler_reports", "Reports exported so far.", value=reports)
        yield from self._hang(self.hang, self.hang_active)
        if record is None:
            return
        ranks = record["ranks"]

        def gauge(name: str, doc: str, labels: list[str]) -> Any:
            return GaugeMetricFamily(name, doc, labels=labels)

        info = gauge("straggler_rank_info", "1 per rank of the report; labels give its node.",
                     ["rank", "node"])
        for r, node in zip(ranks, record["nodes"], strict=True):
            info.add_metric([str(r), str(node)], 1.0)
        yield info
        for kind in ("relative", "individual"):
            g = gauge(f"straggler_gpu_{kind}_score",
                      f"GPU {kind} score per rank (1 = as fast as the reference).", ["rank"])
            for r, v in zip(ranks, _values(record["gpu"][kind]).tolist(), strict=True):
                if not math.isnan(v):
                    g.add_metric([str(r)], v)
            yield g
        # Per rank, the worst section score: one series per rank whatever the section count.
        sections = record["sections"]
        for kind in ("relative", "individual"):
            g = gauge(f"straggler_section_{kind}_score_min",
                      f"Lowest section {kind} score of each rank over its sections.", ["rank"])
            if sections:
                import numpy as np

                # fmin ignores NaN: NaN only where a rank has no finite score in any section.
                worst = np.fmin.reduce([_values(s[kind]) for s in sections.values()], axis=0)
                for r, v in zip(ranks, worst.tolist(), strict=True):
                    if not math.isnan(v):
                        g.add_metric([str(r)], v)
            yield g
        yield from self._sections(record)
        yield from self._decisions(record)
        yield from self._culprits(record)
        yield from self._telemetry(record)
        yield from self._overhead(record)

    @staticmethod
    def _hang(hang: dict[str, Any] | None, active: bool) -> Iterator[Any]:
        """``straggler_hang`` (1 while a hang found is unresolved) and its culprits."""
        from prometheus_client.core import GaugeMetricFamily

        g = GaugeMetricFamily("straggler_hang", "1 from a hang finding (culprits named) until "
                              "the job makes progress again, else 0 (docs/hang.md).",
                              labels=["kind"])
        kind = hang["kind"] if hang is not None else "hang"
        g.add_metric([kind], 1.0 if active else 0.0)
        yield g
        if hang is None:
            return
        c = GaugeMetricFamily("straggler_hang_culprit", "1 per rank named by the latest hang "
                              "finding, labels say its node and state.",
                              labels=["rank", "node", "state"])
        for culprit in hang.get("culprits", []):
            c.add_metric([str(culprit["rank"]), str(culprit.get("node", "")),
                          str(culprit["state"])], 1.0)
        yield c
        yield GaugeMetricFamily("straggler_hang_stalled_seconds", "How long the job had made "
                                "no progress at the latest hang finding.",
                                value=float(hang.get("stalled_s", 0.0)))

    @staticmethod
    def _sections(record: dict[str, Any]) -> Iterator[Any]:
        import numpy as np
        from prometheus_client.core import GaugeMetricFamily

        def lowest(item: tuple[str, dict]) -> float:
            a = _values(item[1]["relative"])
            low = float(np.fmin.reduce(a)) if a.size else math.nan
            return math.inf if math.isnan(low) else low

        kept = sorted(record["sections"].items(), key=lowest)[:MAX_SECTIONS]
        score = GaugeMetricFamily("straggler_section_score",
                                  "Section score over ranks: stat min, median or max.",
                                  labels=["section", "kind", "stat"])
        worst = GaugeMetricFamily("straggler_section_worst_rank",
                                  "The rank with the lowest relative score of the section.",
                                  labels=["section"])
        median_ms = GaugeMetricFamily("straggler_section_median_seconds",
                                      "Section median time over ranks: stat min, median, max.",
                                      labels=["section", "stat"])
        for name, sec in kept:
            for kind in ("relative", "individual"):
                a = _values(sec[kind])
                a = a[~np.isnan(a)]
                if a.size:
                    for stat, v in (("min", a.min()), ("median", np.median(a)), ("max", a.max())):
                        score.add_metric([name, kind, stat], float(v))
            rel = _values(sec["relative"])
            if not np.isnan(rel).all():
                at_min = np.flatnonzero(rel == np.nanmin(rel))  # ties: the lowest rank
                worst.add_metric([name], float(min(record["ranks"][i] for i in at_min)))
            a = _values(sec["median_ms"])
            a = a[~np.isnan(a)]
            if a.size:
                for stat, v in (("min", a.min()), ("median", np.median(a)), ("max", a.max())):
                    median_ms.add_metric([name, stat], float(v) / 1e3)
        yield score
        yield worst
        yield median_ms

    @staticmethod
    def _decisions(record: dict[str, Any]) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        flagged = GaugeMetricFamily("straggler_flagged",
                                    "1 for each rank flagged by this report (NVRx's rule).",
                                    labels=["rank"])
        for f in record["flagged"]:
            flagged.add_metric([str(f["rank"])], 1.0)
        confirmed = GaugeMetricFamily("straggler_confirmed",
                                      "1 for each rank the policy confirmed as a straggler.",
                                      labels=["rank"])
        for r in record["confirmed"]:
            confirmed.add_metric([str(r)], 1.0)
        cause = GaugeMetricFamily("straggler_cause", "1 per diagnosed rank, its cause label.",
                                  labels=["rank", "cause"])
        for c in record["causes"]:
            cause.add_metric([str(c["rank"]), str(c["cause"])], 1.0)
        yield flagged
        yield confirmed
        yield cause
        yield GaugeMetricFamily("straggler_flagged_ranks", "Ranks flagged by the latest report.",
                                value=len(record["flagged"]))
        yield GaugeMetricFamily("straggler_confirmed_ranks",
                                "Ranks confirmed as stragglers after the latest report.",
                                value=len(record["confirmed"]))

    @staticmethod
    def _culprits(record: dict[str, Any]) -> Iterator[Any]:
        """Who the job waits for (docs/culprits.md): at most `TOP_K` culprit ranks, and the
        job's total wait, with no per-group labels."""
        from prometheus_client.core import GaugeMetricFamily

        culprits = record.get("culprits", [])[:TOP_K]
        lost = GaugeMetricFamily("straggler_culprit_time_lost_seconds",
                                 "Time the other ranks lost waiting at collectives for each "
                                 "culprit rank in the latest window.", labels=["rank"])
        share = GaugeMetricFamily("straggler_culprit_share",
                                  "That time over the job's rank-time in the window.",
                                  labels=["rank"])
        for c in culprits:
            lost.add_metric([str(c["rank"])], _nan(c.get("time_lost_s")))
            share.add_metric([str(c["rank"])], _nan(c.get("share")))
        yield lost
        yield share
        yield GaugeMetricFamily("straggler_culprit_ranks",
                                "Ranks the job waited for in the latest window.",
                                value=len(record.get("culprits", [])))
        waited = [v for v in record.get("waits", {}).get("waited_s", []) if v is not None]
        yield GaugeMetricFamily("straggler_collective_wait_seconds",
                                "Time all ranks together waited for others at collectives in "
                                "the latest window.", value=float(sum(waited)))

    @staticmethod
    def _telemetry(record: dict[str, Any]) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        summary = GaugeMetricFamily("straggler_telemetry",
                                    "Telemetry field over ranks: stat min, median or max.",
                                    labels=["field", "stat"])
        for name, stats in record["telemetry"].items():
            for stat in ("min", "median", "max"):
                if _finite(stats.get(stat)):
                    summary.add_metric([name, stat], stats[stat])
        yield summary
        per_rank = GaugeMetricFamily("straggler_flagged_telemetry",
                                     f"Telemetry of flagged or confirmed ranks (at most {TOP_K}).",
                                     labels=["rank", "field"])
        flagged = {f["rank"] for f in record["flagged"]} | set(record["confirmed"])
        gpu = dict(zip(record["ranks"], record["gpu"]["relative"], strict=True))
        order = sorted(flagged, key=lambda r: (gpu.get(r) if _finite(gpu.get(r)) else 2.0, r))
        for r in order[:TOP_K]:
            for name, v in record["telemetry_flagged"].get(str(r), {}).items():
                if _finite(v):
                    per_rank.add_metric([str(r), name], v)
        yield per_rank

    @staticmethod
    def _overhead(record: dict[str, Any]) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        o = record["overhead"]

        def g(name: str, doc: str, value: Any, scale: float = 1.0) -> Any:
            return GaugeMetricFamily(name, doc, value=value * scale if _finite(value) else math.nan)

        yield g("straggler_report_duration_seconds",
                "Duration of the latest generate_report call on the reporting rank.",
                o.get("report_ms"), 1e-3)
        yield g("straggler_report_scores_seconds",
                "Part of it spent scoring and exchanging scores.", o.get("scores_ms"), 1e-3)
        yield g("straggler_detector_sections", "Sections timed in the latest window.",
                o.get("sections"))
        yield g("straggler_detector_gpu_timers", "GPU timers feeding GPU scores.",
                o.get("gpu_timers"))
        yield g("straggler_report_overhead_ratio",
                "Report duration over the window's wall time (detector cost share).",
                (o["report_ms"] / 1e3 / record["window_s"])
                if _finite(o.get("report_ms")) and _finite(record.get("window_s"))
                and record["window_s"] > 0 else math.nan)
        yield g("straggler_report_timestamp_seconds", "Unix time of the latest report.",
                record.get("time"))
        yield g("straggler_report_iteration", "Training iteration of the latest report.",
                record.get("iteration"))
        yield g("straggler_ranks", "Ranks in the latest report.", len(record["ranks"]))


class PrometheusExporter:
    """Serves the latest report record on ``http://addr:port/metrics``.

    `update` (the training thread, once per report) only hands the record over; a renderer
    thread turns it into the exposition text once, and every scrape sends those bytes. The
    server is the package's pooled one (`straggler._http`; `metrics_server.EXPORTER_LIMITS`),
    imported when an exporter is built, not with this module; `close` stops it and the renderer
    and joins every thread.
    """

    def __init__(self, options: PrometheusOptions, limits: ServerLimits | None = None) -> None:
        try:
            from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
        except ImportError as exc:
            raise ImportError("the Prometheus exporter needs prometheus-client: "
                              "pip install 'prometheus-client>=0.17'") from exc
        from .metrics_server import EXPORTER_LIMITS, MetricsServer

        self.options = options
        self.content_type: str = CONTENT_TYPE_LATEST
        self._generate = generate_latest
        self._collector = _RecordCollector()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self._collector)
        self._snapshot: bytes = generate_latest(self.registry)
        self._wake = threading.Condition()
        self._pending: tuple[dict[str, Any] | None, int] | None = None
        self._reports = self._rendered = 0
        self._stopping = False
        self.renders = 0
        """Snapshots rendered so far (one per report, fewer when reports come faster)."""
        server = MetricsServer((options.addr, options.port), self, limits or EXPORTER_LIMITS)
        server.start()
        self._server: MetricsServer | None = server
        self._started = server
        self.port: int = server.port
        self._renderer = threading.Thread(target=self._render_loop, daemon=True,
                                          name="straggler-prometheus-render")
        self._renderer.start()

    def update(self, record: dict[str, Any]) -> None:
        """Export `record` (a `straggler.sinks.record` dict, not changed afterwards) from now on.

        Constant time: the rendering happens on the renderer thread.
        """
        with self._wake:
            self._reports += 1
            self._pending = (record, self._reports)
            self._wake.notify()

    def snapshot(self) -> bytes:
        """The exposition text of the latest rendered report (what a scrape receives)."""
        return self._snapshot

    def wait_rendered(self, timeout_s: float = 5.0) -> bool:
        """Wait until the latest `update` is rendered (for tests and tools); False on timeout."""
        with self._wake:
            return self._wake.wait_for(lambda: self._rendered == self._reports, timeout_s)

    def _render_loop(self) -> None:
        failed = False
        while True:
            with self._wake:
                while self._pending is None and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                assert self._pending is not None
                (record, reports), self._pending = self._pending, None
            try:
                self._collector.record, self._collector.reports = record, reports
                data = self._generate(self.registry)
            except Exception as exc:  # keep serving the previous snapshot
                if not failed:
                    log.error("straggler: the Prometheus exporter could not render a report "
                              "(%s); it keeps serving the previous one", exc, exc_info=exc)
                failed = True
                data = None
            with self._wake:
                if data is not None:
                    self._snapshot = data
                self._rendered = reports
                self.renders += 1
                self._wake.notify_all()

    def threads(self) -> list[threading.Thread]:
        """The exporter's threads still alive (none after `close`)."""
        alive = self._started.threads()
        return [*alive, self._renderer] if self._renderer.is_alive() else alive

    def update_hang(self, record: dict[str, Any]) -> None:
        """Export a hang finding (`straggler.hang.hang_record`) from now on (rendered with the
        latest report)."""
        with self._wake:
            self._collector.hang = record
            self._collector.hang_active = record.get("kind") == "hang"
            self._render_again()

    def clear_hang(self) -> None:
        """The job progresses again: ``straggler_hang`` reads 0 (the culprits stay)."""
        with self._wake:
            self._collector.hang_active = False
            self._render_again()

    def _render_again(self) -> None:
        """Have the renderer draw the latest report again (hold `_wake`)."""
        latest = self._pending[0] if self._pending is not None else self._collector.record
        self._pending = (latest, self._reports)
        self._wake.notify()

    def close(self) -> None:
        """Stop serving, release the port, stop the renderer; idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self._renderer.join(timeout=5.0)
