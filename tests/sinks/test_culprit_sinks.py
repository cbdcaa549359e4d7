"""Culprits everywhere users look: the table, the report log record (versions 3 and 4) and its
readers (summarize, plot --waits), the Prometheus series and the integrations' log line. Built
from an attributed report (straggler.analysis.waits) and a rank confirmed on its own time
between collectives (straggler.analysis.own_time), no process group."""

from __future__ import annotations

import dataclasses
import json
import logging

import numpy as np
import pytest
from straggler.analysis import own_time
from straggler.analysis.policy import RankState
from straggler.analysis.waits import attribute, pack
from straggler.sinks.record import SCHEMA_VERSION, ReportContext, report_record

from _reports import make_report


def _culprit_report():
    rng = np.random.default_rng(0)
    rows = []
    for rank in range(4):  # rank 2 arrives 50 ms late at 100 all-reduces in a 10 s window
        waits = rng.uniform(1e-4, 2e-4, 100) + (0.0 if rank == 2 else 0.05)
        hist = np.bincount(np.minimum(1 + np.floor(np.log2(waits * 1e6)), 31).astype(int),
                           minlength=32)
        rows.append(pack([("0", 100, waits.sum(), waits.min(), hist)], 10.0))
    waits, culprits = attribute(np.stack(rows), [0, 1, 2, 3], {"0": "world"})
    return dataclasses.replace(make_report(), waits=waits, culprits=culprits)


def _context():
    return ReportContext(run_id="run", time_s=1000.0, iteration=100, window_iterations=100,
                         window_s=10.0, threshold=0.75, report_ms=5.0, sections=1, gpu_timers=0)


def test_the_table_and_the_culprit_line_name_the_rank_the_job_waits_for():
    report = _culprit_report()
    table = report.format_table()
    assert "lost s" in table and "waited s" in table
    # Seconds at one precision (milliseconds) in every row, not 4 significant digits (which
    # printed 15 and 0 here, and 0.02266 beside 0.8297 in a real run).
    rows = {line.split()[0]: line.split()[-2:] for line in table.splitlines()[2:6]}
    assert table.splitlines()[1].endswith("lost s  waited s"), table
    assert rows["2"] == [f"{report.waits[2].time_lost_s:.3f}", "0.000"], table
    assert rows["0"] == ["-", f"{report.waits[0].waited_s:.3f}"], table
    line = report.format_culprits()
    assert line.startswith("the job waited 15 s (37.5%) for rank 2 (node2) at collectives")
    assert "at collectives: world: 15 s" in line and line in table
    assert report.culprit_ranks == frozenset({2})


def test_the_record_carries_waits_and_culprits_and_summarize_and_plot_read_them(tmp_path,
                                                                               capsys):
    from straggler.cli import main

    record = report_record(_culprit_report(), _context())
    assert SCHEMA_VERSION == 4 and record["version"] == 4
    assert record["culprits"][0]["rank"] == 2
    assert record["culprits"][0]["groups"][0]["ranks"] == [0, 1, 2, 3]
    assert record["culprits"][0]["groups"][0]["name"] == "world"
    assert record["waits"]["time_lost_s"][2] == pytest.approx(15.0, rel=0.02)
    log = tmp_path / "report.jsonl"
    log.write_text("\n".join(json.dumps(dict(record, time=1000.0 + 10 * i)) for i in range(3))
                   + "\n")
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert "the job waited 45.0 s (37.5 %) for rank 2 (node2) at its collectives (world: " \
           "45.0 s), named in 3 report(s)" in out
    assert main(["plot", str(log), "--waits", "-o", str(tmp_path / "waits.png")]) == 0
    assert (tmp_path / "waits.png").stat().st_size > 1000


def _slow_between_report():
    """4 ranks with their own time per step (2 ms, rank 3: 2.5 ms, 500 steps in a 10 s window),
    rank 3 confirmed on it."""
    rows = np.stack([own_time.summarize(np.full(500, ms / 1e3)) for ms in (2.0, 2.0, 2.0, 2.5)])
    return dataclasses.replace(
        make_report(), own_time=own_time.OwnTimeTable([0, 1, 2, 3], rows), waits_window_s=10.0,
        straggler_states={3: RankState(3, True, {own_time.METRIC: "relative"}, {}, 0)})


def test_the_record_carries_the_own_time_and_summarize_names_the_rank_slow_between(tmp_path,
                                                                                  capsys):
    from straggler.cli import main

    record = report_record(_slow_between_report(), _context())
    own = record["own_time"]
    assert sorted(own) == ["low_ms", "median_ms", "q25_ms", "q75_ms", "sections_ms", "steps",
                           "trimmed_ms"]
    assert own["sections_ms"] == [None] * 4  # summarised without the sections' time
    assert own["steps"] == [500.0] * 4
    assert own["median_ms"] == pytest.approx([2.0, 2.0, 2.0, 2.5])
    assert own["trimmed_ms"] == pytest.approx([2.0, 2.0, 2.0, 2.5])  # what the policy judges
    # Reports made without a table (OwnTime objects) give the same columns.
    table = _slow_between_report().own_time
    objects = dataclasses.replace(_slow_between_report(),
                                  own_time={r: table[r] for r in range(4)})
    assert report_record(objects, _context())["own_time"] == own
    (slow,) = record["slow_between"]
    # 0.5 ms a step more, 500 steps, 3 ranks waiting: 0.75 s of 40 rank-seconds.
    assert slow == pytest.approx({"rank": 3, "own_ms": 2.5, "peers_ms": 2.0, "lost_s": 0.75,
                                  "share": 0.75 / 40})
    log = tmp_path / "report.jsonl"
    log.write_text("\n".join(json.dumps(dict(record, time=1000.0 + 10 * i)) for i in range(2))
                   + "\n")
    assert main(["summarize", str(log)]) == 0
    assert "rank 3 (node3) was slow between collectives in 2 report(s): 25% more time of its " \
           "own a step than its peers, the others waited about 1.5 s for it" \
        in capsys.readouterr().out
    assert main(["plot", str(log), "--waits", "-o", str(tmp_path / "waits.png")]) == 0


def test_version_3_records_without_own_time_are_still_read(tmp_path, capsys):
    from straggler.cli import main

    record = report_record(_culprit_report(), _context())
    old = {k: v for k, v in record.items() if k not in ("own_time", "slow_between")}
    log = tmp_path / "v3.jsonl"
    log.write_text(json.dumps(dict(old, version=3)) + "\n")
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert "for rank 2 (node2) at its collectives" in out and "between collectives" not in out
    assert main(["plot", str(log), "--waits", "-o", str(tmp_path / "w.png")]) == 0
    assert main(["plot", str(log), "-o", str(tmp_path / "h.png")]) == 0


def test_prometheus_exports_the_culprits_with_the_rank_label_only():
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families
    from straggler.sinks.prometheus import _RecordCollector

    collector = _RecordCollector()
    collector.record = report_record(_culprit_report(), _context())
    collector.reports = 1

    class _Registry:
        def collect(self):
            return collector.collect()

    text = generate_latest(_Registry()).decode()  # type: ignore[arg-type]
    metrics = {m.name: [(s.labels, s.value) for s in m.samples]
               for m in text_string_to_metric_families(text)}
    lost = metrics["straggler_culprit_time_lost_seconds"]
    assert [labels for labels, _ in lost] == [{"rank": "2"}]
    assert lost[0][1] == pytest.approx(15.0, rel=0.02)
    assert metrics["straggler_culprit_ranks"] == [({}, 1.0)]
    assert metrics["straggler_collective_wait_seconds"][0][1] == pytest.approx(15.0, rel=0.02)


def test_the_integrations_log_the_culprit_line(caplog):
    from straggler.integrations import _common

    with caplog.at_level(logging.WARNING, logger="straggler-test"):
        _common.evaluate_report(_culprit_report(), 0.75, 0.75, None,
                                logging.getLogger("straggler-test"), 0)
    assert "the job waited 15 s (37.5%) for rank 2" in caplog.text
