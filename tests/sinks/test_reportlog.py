"""The report log: records from a one-rank detector, atomic lines, rotation, disk errors."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import stat
import threading
import time

import pytest
from straggler import Detector
from straggler.options import to_options
from straggler.sinks import reportlog
from straggler.sinks.record import SCHEMA, SCHEMA_VERSION
from straggler.sinks.reportlog import (
    LogFormatError,
    ReportLog,
    ReportLogOptions,
    log_files,
    read_records,
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for key in ("STRAGGLER_DISABLE", "STRAGGLER_REPORT_LOG", "STRAGGLER_PROMETHEUS_PORT",
                "STRAGGLER_REPORT_LOG_MAX_BYTES", "STRAGGLER_REPORT_LOG_BACKUPS"):
        monkeypatch.delenv(key, raising=False)
    Detector.shutdown()
    yield
    Detector.shutdown()


def _run(iterations: int = 3, **kwargs) -> list:
    Detector.initialize(report_time_interval=0, telemetry=False, **kwargs)
    reports = []
    for _ in range(iterations):
        with Detector.detection_section("forward", profile_cuda=False):
            sum(range(1000))
        with Detector.detection_section("optimizer", profile_cuda=False):
            sum(range(100))
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:
            reports.append(report)
    Detector.shutdown()
    return reports


def test_the_reporting_rank_appends_one_record_per_report(tmp_path):
    path = tmp_path / "logs" / "report.jsonl"  # the directory is created
    reports = _run(3, report_log=str(path))
    lines = path.read_text().splitlines()
    assert len(lines) == len(reports) == 3
    records = [json.loads(line) for line in lines]
    first = records[0]
    assert first["schema"] == SCHEMA and first["version"] == SCHEMA_VERSION
    assert first["ranks"] == [0] and first["reporting_rank"] == 0
    assert set(first["sections"]) == {"forward", "optimizer"}
    fwd = first["sections"]["forward"]
    assert fwd["relative"] == [1.0] and fwd["median_ms"][0] > 0
    assert first["gpu"]["relative"] == [None]  # no GPU timers: NaN is written as null
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert all(r["window_iterations"] == 1 for r in records)
    assert records[1]["time"] >= records[0]["time"]
    overhead = first["overhead"]
    assert overhead["sections"] == 2 and overhead["gpu_timers"] == 0
    assert overhead["report_ms"] >= overhead["scores_ms"] > 0
    assert [rec for _, _, rec in read_records(path)] == records


def test_records_carry_the_reporting_process_and_torchrun_s_restart_count(tmp_path,
                                                                          monkeypatch):
    # what tells a restarted run's starts apart in one log (`straggler summarize`)
    import os

    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "2")
    path = tmp_path / "report.jsonl"
    _run(2, report_log=str(path))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert {(r["pid"], r["restart_count"]) for r in records} == {(os.getpid(), 2)}


def test_the_environment_variable_turns_the_log_on_and_false_keeps_it_off(tmp_path, monkeypatch):
    path = tmp_path / "env.jsonl"
    monkeypatch.setenv("STRAGGLER_REPORT_LOG", str(path))
    _run(2)
    assert len(path.read_text().splitlines()) == 2
    path.unlink()
    _run(2, report_log=False)
    assert not path.exists()


def test_off_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Detector.initialize(report_time_interval=0, telemetry=False)
    assert Detector.core().observers is None
    Detector.shutdown()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", ["", None, 3])
def test_options_refuse_a_path_that_is_no_non_empty_string(path):
    with pytest.raises(ValueError, match=f"^`report_log={path!r}` must be a non-empty string$"):
        ReportLogOptions(path)


@pytest.mark.parametrize("value", [0, "", 3.5, ["x"]])
def test_a_bad_report_log_option_is_named(value):
    with pytest.raises(ValueError, match=r"`report_log="):
        Detector.initialize(report_log=value)
    assert Detector.core() is None


def test_a_bad_environment_size_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("STRAGGLER_REPORT_LOG", str(tmp_path / "x.jsonl"))
    monkeypatch.setenv("STRAGGLER_REPORT_LOG_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match="STRAGGLER_REPORT_LOG_MAX_BYTES='lots'"):
        to_options(ReportLogOptions, None, "report_log")


def test_rotation_keeps_the_newest_files_and_reading_walks_them_oldest_first(tmp_path):
    path = tmp_path / "r.jsonl"
    log = ReportLog(ReportLogOptions(str(path), max_bytes=200, backups=2))
    for i in range(20):
        assert log.write({"schema": SCHEMA, "version": SCHEMA_VERSION, "i": i, "pad": "x" * 60})
    log.close()
    files = log_files(path)
    assert [f.name for f in files] == ["r.jsonl.2", "r.jsonl.1", "r.jsonl"]
    assert all(f.stat().st_size <= 200 for f in files)
    seen = [rec["i"] for _, _, rec in read_records(path)]
    assert seen == list(range(20 - len(seen), 20))  # the newest records, in order
    assert len(seen) < 20  # the oldest were dropped with the oldest file


def test_a_full_disk_logs_once_leaves_no_bytes_and_detection_goes_on(tmp_path, monkeypatch,
                                                                      caplog):
    calls = []

    def full(fd, data):
        calls.append(len(data))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(reportlog, "_write_all", full)
    path = tmp_path / "full.jsonl"
    with caplog.at_level(logging.ERROR, logger="straggler"):
        reports = _run(4, report_log=str(path))
    assert len(reports) == 4  # detection never stopped
    assert len(calls) == 4  # each record is tried (a full disk may free up) ...
    errors = [r for r in caplog.records if "report log" in r.getMessage()]
    assert len(errors) == 1 and "No space left" in errors[0].getMessage()  # ... logged once
    assert path.read_bytes() == b""


def test_a_read_only_directory_logs_once_and_detection_goes_on(tmp_path, monkeypatch, caplog):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    if os.access(ro, os.W_OK):  # root ignores permission bits: answer as a read-only mount does
        real_open = os.open

        def read_only(path, *args, **kwargs):
            if str(path).startswith(str(ro)):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(reportlog.os, "open", read_only)
    try:
        with caplog.at_level(logging.ERROR, logger="straggler"):
            reports = _run(3, report_log=str(ro / "r.jsonl"))
    finally:
        ro.chmod(stat.S_IRWXU)
    assert len(reports) == 3
    errors = [r for r in caplog.records if "report log" in r.getMessage()]
    assert len(errors) == 1 and str(ro / "r.jsonl") in errors[0].getMessage()
    assert not (ro / "r.jsonl").exists()


def test_reading_names_the_file_and_line_of_a_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION})
    path.write_text(good + "\n{not json\n")
    with pytest.raises(LogFormatError, match=rf"^{path}:2: not a JSON line"):
        list(read_records(path))
    path.write_text(good + "\n" + json.dumps({"schema": SCHEMA, "version": 99}) + "\n")
    with pytest.raises(LogFormatError, match=rf"^{path}:2: report record version 99"):
        list(read_records(path))
    path.write_text('{"x": 1}\n')
    with pytest.raises(LogFormatError, match=rf"^{path}:1: not a straggler report record"):
        list(read_records(path))


def test_a_line_being_written_is_not_read(tmp_path):
    path = tmp_path / "partial.jsonl"
    good = json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION})
    path.write_text(good + "\n" + good[:10])
    assert len(list(read_records(path))) == 1


def test_a_missing_log_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.jsonl: no such report log"):
        list(read_records(tmp_path / "nope.jsonl"))


# -- the writer cannot harm the job: off the training thread, whole lines, reopened -------------

def _rec(i: int, pad: int = 40) -> dict:
    return {"schema": SCHEMA, "version": SCHEMA_VERSION, "i": i, "pad": "x" * pad}


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_write_that_fails_part_way_is_cut_back_and_later_lines_are_whole(tmp_path, monkeypatch,
                                                                          caplog):
    path = tmp_path / "short.jsonl"
    real = reportlog._write_all
    state = {"full": False}

    def half_then_full(fd, data):
        if state["full"]:
            os.write(fd, data[: len(data) // 2])  # what a disk filling up mid-line leaves
            raise OSError(errno.ENOSPC, "short write")
        real(fd, data)

    monkeypatch.setattr(reportlog, "_write_all", half_then_full)
    log = ReportLog(ReportLogOptions(str(path)))
    with caplog.at_level(logging.WARNING, logger="straggler"):
        assert log.write(_rec(0)) and log.flush()
        state["full"] = True
        for i in (1, 2):
            assert log.write(_rec(i))
        assert log.flush()
        state["full"] = False  # space again (a restart, or a cleaned disk)
        assert log.write(_rec(3))
        log.close()
    assert [r["i"] for r in _lines(path)] == [0, 3]  # every line parses: no half line stayed
    assert (log.lines_written, log.failed) == (2, 2)
    assert "is written again (2 record(s) lost)" in caplog.text


def test_a_line_left_unfinished_by_someone_else_is_ended_before_ours(tmp_path):
    path = tmp_path / "crashed.jsonl"
    path.write_text(json.dumps(_rec(0)) + "\n" + json.dumps(_rec(1))[:15])
    log = ReportLog(ReportLogOptions(str(path)))
    log.write(_rec(2))
    log.close()
    with pytest.raises(LogFormatError, match=rf"^{path}:2: not a JSON line"):
        list(read_records(path))
    bad = []
    assert [r["i"] for _, _, r in read_records(path, on_bad=bad.append)] == [0, 2]
    assert len(bad) == 1 and str(bad[0]).startswith(f"{path}:2:")


@pytest.mark.parametrize("how", ["deleted", "renamed"])
def test_a_log_deleted_or_renamed_under_the_writer_is_recreated(tmp_path, how, caplog):
    path = tmp_path / "moved.jsonl"
    log = ReportLog(ReportLogOptions(str(path)))
    log.write(_rec(0))
    assert log.flush()
    if how == "deleted":
        path.unlink()
    else:
        path.rename(tmp_path / "old.jsonl")
    with caplog.at_level(logging.WARNING, logger="straggler"):
        for i in (1, 2):
            log.write(_rec(i))
        log.close()
    assert [r["i"] for r in _lines(path)] == [1, 2]  # nothing went to an unlinked or old file
    if how == "renamed":
        assert [r["i"] for r in _lines(tmp_path / "old.jsonl")] == [0]
    assert log.reopened == 1 and "deleted or replaced" in caplog.text


def test_a_full_queue_drops_records_with_a_counted_warning(tmp_path, monkeypatch, caplog):
    release, inside = threading.Event(), threading.Event()
    real_open = reportlog._open

    def stuck(path):
        inside.set()
        release.wait(30)
        return real_open(path)

    monkeypatch.setattr(reportlog, "_open", stuck)
    path = tmp_path / "slow.jsonl"
    log = ReportLog(ReportLogOptions(str(path)), max_queued=4)
    with caplog.at_level(logging.WARNING, logger="straggler"):
        queued = [log.write(_rec(0))]
        assert inside.wait(30)  # the writer holds record 0, stuck opening the file
        queued += [log.write(_rec(i)) for i in range(1, 20)]
    # The first is taken by the stuck writer, 4 wait; the other 15 are dropped.
    assert queued.count(True) == 5 and log.dropped == 15
    warnings = [r.getMessage() for r in caplog.records if "not keeping up" in r.getMessage()]
    assert len(warnings) == 4 and "15 record(s) dropped" not in warnings[-1]  # 1, 2, 4, 8
    assert "8 record(s) dropped so far" in warnings[-1]
    release.set()
    log.close()
    assert [r["i"] for r in _lines(path)] == [0, 1, 2, 3, 4]


def test_an_open_that_blocks_costs_the_report_nothing(tmp_path, caplog):
    fifo = tmp_path / "hung.jsonl"
    os.mkfifo(fifo)  # opening it for writing blocks until a reader comes: a hung mount
    start = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="straggler"):
        reports = _run(5, report_log=str(fifo))  # shutdown waits CLOSE_TIMEOUT_S at most
    elapsed = time.monotonic() - start
    try:
        assert len(reports) == 5
        # Without the writer thread the first report never returns; with it, the run takes
        # the close timeout plus a little (a wide margin for a loaded machine).
        assert elapsed < reportlog.CLOSE_TIMEOUT_S + 20
        assert "is stuck in the file system; 5 record(s) not written" in caplog.text
    finally:  # a reader unblocks the abandoned writer, which then ends
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        deadline = time.monotonic() + 10
        while any(t.name == "straggler-report-log" for t in threading.enumerate()) \
                and time.monotonic() < deadline:
            with contextlib.suppress(BlockingIOError):
                os.read(reader, 1 << 16)
            time.sleep(0.02)
        os.close(reader)
    assert not any(t.name == "straggler-report-log" for t in threading.enumerate())


def test_every_record_carries_the_run_id(tmp_path, monkeypatch):
    monkeypatch.setenv("STRAGGLER_RUN_ID", "job-42")
    path = tmp_path / "r.jsonl"
    _run(2, report_log=str(path))
    assert [r["run_id"] for r in _lines(path)] == ["job-42", "job-42"]
    monkeypatch.delenv("STRAGGLER_RUN_ID")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")  # torchrun's default: not an id
    _run(1, report_log=str(path))
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "rdzv-7")
    _run(1, report_log=str(path))
    runs = [r["run_id"] for r in _lines(path)]
    assert runs[2] not in ("none", "job-42", "") and runs[3] == "rdzv-7"


@pytest.mark.parametrize("line, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ('{"schema": "straggler.report", "version": 1e999}', "number 1e999 is out of range"),
    ('{"schema": "straggler.report", "version": NaN}', "NaN is not a number JSON allows"),
    ('{"schema": "straggler.report", "version": ' + "1" * 31 + "}", "version 1111111111"),
    ('{"schema": "straggler.report", "version": true}', "version True"),
    ("\xff\xfe", "not a JSON line"),
])
def test_crafted_lines_are_named_never_a_traceback(tmp_path, line, reason):
    path = tmp_path / "crafted.jsonl"
    path.write_text(json.dumps(_rec(0)) + "\n" + line + "\n", encoding="latin-1")
    with pytest.raises(LogFormatError, match=rf"^{path}:2: .*{reason}"):
        list(read_records(path))


class _Sink:
    def __init__(self, what, fail=None):
        self.what, self.fail, self.records, self.closed = what, fail, [], 0

    def write(self, record, rank):
        if self.fail is not None:
            raise self.fail
        self.records.append((record["iteration"], rank))
        return True

    def close(self):
        self.closed += 1


def test_observers_hand_each_record_to_every_sink_and_drop_one_that_fails(caplog):
    from straggler.sinks.observers import ReportObservers

    from _reports import make_report

    good, bad = _Sink("good sink"), _Sink("bad sink", fail=OSError("disk full"))
    observers = ReportObservers([bad, good], clock=lambda: 100.0)
    report = dataclasses.replace(make_report(ranks=4), rank=3)
    with caplog.at_level(logging.ERROR, logger="straggler"):
        for iteration in (10, 20):
            observers.emit(report, iteration=iteration, report_ms=1.0, sections=1, gpu_timers=0)
    assert good.records == [(10, 3), (20, 3)]
    assert observers.sinks == [good] and bad.closed == 1
    assert [r.getMessage() for r in caplog.records] == [
        "straggler: the bad sink failed (disk full); it is off for the rest of this run, "
        "detection and training go on"]
    observers.close()
    assert observers.sinks == [] and good.closed == 1


def test_reading_reports_skips_hang_findings_in_the_same_file(tmp_path):
    from straggler.hang import STALL, HangFinding, hang_record

    path = tmp_path / "r.jsonl"
    report = {"schema": SCHEMA, "version": SCHEMA_VERSION, "time": 1.0}
    hang = hang_record(HangFinding(STALL, 4, 5.0, 3.0, sections=(("eval", 4),)), 2.0)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n"
                            for r in (report, hang, report)))
    records = [r for _, _, r in read_records(path)]
    assert records == [report, report]


def test_the_record_lists_the_confirmed_ranks_and_the_suspects():
    from straggler.reporting.report import StragglerId
    from straggler.sinks.record import ReportContext, report_record

    from _reports import make_report

    report = dataclasses.replace(make_report(confirmed=(1,)),
                                 suspects=frozenset({StragglerId(3, "node3")}))
    record = report_record(report, ReportContext(time_s=1.0, iteration=10,
                                                 window_iterations=10, window_s=1.0,
                                                 report_ms=1.0))
    assert record["confirmed"] == [1]
    assert record["suspects"] == [3]


def test_the_first_window_starts_at_the_loops_first_call_not_at_initialize(tmp_path):
    path = tmp_path / "r.jsonl"
    Detector.initialize(report_time_interval=0, telemetry=False, report_log=str(path))
    time.sleep(1.0)  # start-up after initialize: model building, data loader workers
    for _ in range(2):
        with Detector.detection_section("forward", profile_cuda=False):
            sum(range(1000))
        Detector.generate_report_if_interval_elapsed()
    Detector.shutdown()
    first, second = (json.loads(line) for line in path.read_text().splitlines())
    # The first report comes in the first call (interval 0): its window is that call's
    # milliseconds, never the second of start-up (0.5 s: a generous margin for a loaded host).
    assert first["window_s"] < 0.5, first["window_s"]
    assert first["window_iterations"] == first["iteration"] == 1
    assert second["window_iterations"] == 1


def test_a_resumed_jobs_first_window_counts_from_the_restored_iteration(tmp_path):
    Detector.initialize(report_time_interval=0, telemetry=False, report_log=False)
    for _ in range(5):
        with Detector.detection_section("forward", profile_cuda=False):
            sum(range(1000))
        Detector.generate_report_if_interval_elapsed()
    state = Detector.state_dict()
    Detector.shutdown()
    path = tmp_path / "resumed.jsonl"
    Detector.initialize(report_time_interval=0, telemetry=False, report_log=str(path))
    Detector.load_state_dict(state)
    with Detector.detection_section("forward", profile_cuda=False):
        sum(range(1000))
    Detector.generate_report_if_interval_elapsed()
    Detector.shutdown()
    (record,) = (json.loads(line) for line in path.read_text().splitlines())
    assert record["iteration"] == 6 and record["window_iterations"] == 1
