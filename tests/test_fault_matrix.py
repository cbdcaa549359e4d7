"""The fault matrix: what a failure on one rank costs the others (spawned gloo ranks).

Each cell runs a short job loop (host-timed sections, a report every iteration) and checks that
the detector never crashes, hangs or stalls the job: peers of a rank that failed spend at most one
short wait, never ``comm_timeout_s`` (set large here so that a wait for it would stand out), unless
the rank is dead or stopped, and the training's own collectives keep working afterwards.
No test asserts a speed: the only time bounds compare with ``comm_timeout_s``, by a wide margin.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest

from _multirank import run_ranks

pytestmark = [pytest.mark.multirank, pytest.mark.timeout(240)]

LONG_TIMEOUT_S = 60.0  # a peer that waited for it would blow every bound below
STEPS = 12


def _loop(rank, fail_at=None, how=None, comm_timeout_s=LONG_TIMEOUT_S, sleep_s=0.01, **init):
    """A job loop: sections, a report every iteration, a training all_reduce every step.

    ``how`` injects a failure on this rank at iteration ``fail_at``: "driver" (the simulated
    driver fails the next event record), "exception" (an internal error outside a report),
    "mid_report" (an error in the middle of a report's collectives), "exit_before",
    "exit_during", "stop" (SIGSTOP in a report). Returns what the caller checks.
    """
    import torch
    import torch.distributed as dist
    from straggler import Detector

    # gpu_sample_interval=1: every entry records events, so "driver" fails at its iteration.
    Detector.initialize(report_time_interval=0, profiling_interval=1, comm_timeout_s=comm_timeout_s,
                        node_name=f"n{rank}", telemetry=False, gpu_sample_interval=1, **init)
    core = Detector.core()
    reports, start = [], time.monotonic()
    for it in range(STEPS):
        if it == fail_at:
            if how == "driver":
                from sim.simcuda import CUDA_ERROR_LAUNCH_FAILED, SimCuda

                SimCuda().fail("cuEventRecord", CUDA_ERROR_LAUNCH_FAILED, count=1)
            elif how == "exception":
                core.fail(RuntimeError("injected"))
            elif how == "mid_report":
                def broken(report):
                    raise RuntimeError("injected in a report")
                core.cycle.annotator = broken
            elif how == "exit_before":
                os._exit(0)
            elif how == "exit_during":
                def die(report):
                    os._exit(0)
                core.cycle.annotator = die
            elif how == "stop":
                def stop(report):
                    os.kill(os.getpid(), signal.SIGSTOP)
                    return report
                core.cycle.annotator = stop
        with Detector.detection_section("step", profile_cuda=how == "driver"):
            time.sleep(sleep_s)
        if rank == 0:
            with Detector.detection_section("rank0-only", profile_cuda=False):
                time.sleep(0.001)
        t = torch.ones(1)
        dist.all_reduce(t)  # the training's own collective: must never fail because of us
        assert t.item() == dist.get_world_size()
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:
            reports.append(it)
    elapsed = time.monotonic() - start
    state = (core.enabled, core.lifecycle.done)
    Detector.shutdown()
    return {"elapsed": elapsed, "reports": reports, "enabled": state[0], "done": state[1]}


def _cell(rank, world_size, how, fail_rank, fail_at, comm_timeout_s=LONG_TIMEOUT_S):
    return _loop(rank, fail_at if rank == fail_rank else None,
                 how if rank == fail_rank else None, comm_timeout_s=comm_timeout_s)


FAILURES = ("driver", "exception", "mid_report")


def _healthy_then_failures(rank, world_size):
    """One job, one detector lifetime after the other: a healthy loop, then a loop with each
    of `FAILURES` injected on rank 1 at iteration 3 (each lifetime ends with shutdown(), and
    the next initialize() starts afresh: the cells stay independent at a third of the spawns).
    """
    out = {"healthy": _loop(rank)}
    for how in FAILURES:
        out[how] = _cell(rank, world_size, how, 1, 3)
    return out


@pytest.fixture(scope="module")
def cells():
    return run_ranks(_healthy_then_failures, 3, timeout_s=240)


@pytest.fixture(scope="module")
def healthy(cells):
    return [c["healthy"] for c in cells]


def test_healthy_loop_reports_on_every_rank_and_stays_on(healthy):
    for result in healthy:
        assert result["enabled"] and not result["done"]
    assert healthy[0]["reports"]  # rank 0 gathers


@pytest.mark.parametrize("how", FAILURES)
def test_a_failure_on_one_rank_turns_every_rank_off_without_waiting_for_the_timeout(
        cells, healthy, how):
    results = [c[how] for c in cells]
    for rank, result in enumerate(results):
        assert not result["enabled"] and result["done"], (rank, result)
        # About a healthy loop, far from one comm_timeout_s (60 s) more: the peers agreed.
        assert result["elapsed"] < healthy[rank]["elapsed"] + LONG_TIMEOUT_S / 3, (rank, result)
    assert results[0]["reports"] and max(results[0]["reports"]) <= 3


@pytest.mark.parametrize("how, fail_at", [("exit_before", 3), ("exit_during", 3),
                                          ("exit_before", 9), ("sigkill_in_gather", 3)])
def test_a_rank_killed_before_or_during_a_report_costs_its_peers_no_timeout(healthy, how,
                                                                             fail_at):
    # The training all_reduce of the survivors fails too once a rank is dead (gloo): the job
    # itself cannot go on, so this cell runs only the detector's part after the death.
    results = run_ranks(_dead_cell, 3, how, fail_at, timeout_s=150, may_die=[2])
    for rank in (0, 1):
        report_s, enabled = results[rank]
        assert not enabled
        assert report_s < LONG_TIMEOUT_S / 3, (rank, report_s)


def _dead_cell(rank, world_size, how, fail_at):
    from straggler import Detector

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    for it in range(fail_at + 2):
        if rank == 2 and it == fail_at:
            if how == "exit_before":
                os._exit(0)
            if how == "sigkill_in_gather":  # killed between the report's collectives
                core.comm.gather_to_first = lambda t: os.kill(os.getpid(), signal.SIGKILL)
            else:
                core.cycle.annotator = lambda report: os._exit(0)
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.01)
        start = time.monotonic()
        Detector.generate_report()
        took = time.monotonic() - start
        if not core.enabled:
            break
    enabled = core.enabled
    Detector.shutdown()
    return took, enabled


def _stopped(rank, world_size):
    import torch.distributed as dist
    from straggler import Detector

    pids = [None] * world_size
    dist.all_gather_object(pids, os.getpid())
    Detector.initialize(report_time_interval=0, comm_timeout_s=3, telemetry=False)
    core = Detector.core()
    with Detector.detection_section("step", profile_cuda=False):
        time.sleep(0.01)
    Detector.generate_report()  # one good report
    if rank == 2:  # stopped inside the next report, before its first collective
        agree = core.cycle.gate.agree

        def stop_then_agree(on):
            os.kill(os.getpid(), signal.SIGSTOP)
            return agree(on)

        core.cycle.gate.agree = stop_then_agree
    with Detector.detection_section("step", profile_cuda=False):
        time.sleep(0.01)
    start = time.monotonic()
    Detector.generate_report()
    took = time.monotonic() - start
    if rank == 0:
        os.kill(pids[2], signal.SIGCONT)  # let the stopped rank finish
    enabled = core.enabled
    Detector.shutdown()
    return took, enabled


def test_a_stopped_rank_costs_its_peers_at_most_comm_timeout_s():
    results = run_ranks(_stopped, 3, timeout_s=150)
    for rank in (0, 1):
        took, _ = results[rank]
        # Rank 2 is stopped before the report's first collective: its peers wait there at most
        # comm_timeout_s=3 (bounded; generous slack for a loaded machine), then turn off.
        assert took < 3 + 20, results
    assert not results[0][1] and not results[1][1]  # they gave up on it: detection is off


def test_sections_on_some_ranks_only_keep_detection_on(healthy):
    # "rank0-only" exists on rank 0 alone in every healthy loop; nothing turns off.
    assert all(r["enabled"] for r in healthy)


def _nvml_failing(rank, world_size):
    from straggler import Detector
    from straggler.telemetry import TelemetryOptions

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S,
                        telemetry=TelemetryOptions(period_s=0.01))
    got = []
    for _ in range(3):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.03)
        got.append(Detector.generate_report() is not None)
    enabled = Detector.core().enabled
    Detector.shutdown()
    return got, enabled


@pytest.mark.parametrize("spec", ["init_error=9", "fail_from=1;fail_code=15"])
def test_nvml_failures_on_one_rank_leave_reports_on(spec):
    results = run_ranks(_nvml_failing, 2, timeout_s=120, rank_env={1: {"SIMNVML_SCENARIO": spec}})
    assert results[0] == ([True, True, True], True)
    assert results[1] == ([False, False, False], True)


def _disabled(rank, world_size):
    import torch
    import torch.distributed as dist
    from straggler import Detector

    Detector.initialize(report_time_interval=0)
    with Detector.detection_section("step"):
        t = torch.ones(1)
        dist.all_reduce(t)
    import sys
    return Detector.generate_report(), Detector.core(), "straggler._core" in sys.modules, t.item()


def test_straggler_disable_makes_every_rank_a_no_op():
    results = run_ranks(_disabled, 2, timeout_s=90, env={"STRAGGLER_DISABLE": "1"})
    assert results == [(None, None, False, 2.0)] * 2


# -- #22 item 6: ranks restored with different iteration counts --------------------------------


def _restored(rank, world_size, states):
    import torch
    import torch.distributed as dist
    from straggler import Detector

    Detector.initialize(report_time_interval=0, profiling_interval=3,
                        comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    saved = Detector.state_dict()
    if states[rank] is not None:  # None: a rank the checkpoint does not know (fresh)
        saved["interval"] = {"current_iter": states[rank], "iter_interval": 3}
        Detector.load_state_dict(saved)
    reports, start = [], time.monotonic()
    for _ in range(12):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)  # the training's own collective
        Detector.generate_report_if_interval_elapsed()
        if Detector.is_interval_elapsed():
            reports.append(core.cycle.tracker.current_iter)
    result = {"elapsed": time.monotonic() - start, "reports": reports, "enabled": core.enabled,
              "iteration": core.cycle.tracker.current_iter, "sum": t.item()}
    Detector.shutdown()
    return result


RESTORED = [(100, 37, None), (None, None, 5)]


def _restored_each(rank, world_size):
    """`_restored` for each of `RESTORED`, one detector lifetime after the other in one job."""
    return [_restored(rank, world_size, states) for states in RESTORED]


@pytest.fixture(scope="module")
def restored():
    return run_ranks(_restored_each, 3, timeout_s=200)


@pytest.mark.parametrize("index", range(len(RESTORED)))
def test_ranks_restored_with_different_iterations_report_together(restored, index):
    states = RESTORED[index]
    results = [r[index] for r in restored]
    first = max(s for s in states if s is not None)
    for result in results:
        assert result["enabled"] and result["sum"] == 3.0, results
        assert result["iteration"] == first + 12  # the largest restored count, on every rank
        assert result["elapsed"] < LONG_TIMEOUT_S / 3, results  # nobody waited for a peer
    assert results[0]["reports"] and results[0]["reports"] == results[1]["reports"] \
        == results[2]["reports"]


# -- #22 item 7: a BaseException inside a report -----------------------------------------------


def _interrupted(rank, world_size):
    import torch
    import torch.distributed as dist
    from straggler import Detector

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S,
                        telemetry=False)
    core = Detector.core()
    caught, took = [], []
    for it in range(6):
        if rank == 1 and it == 2:
            def interrupt(report):
                raise KeyboardInterrupt
            core.cycle.annotator = interrupt
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)
        start = time.monotonic()
        try:  # a graceful-stop script catching Ctrl-C and going on
            Detector.generate_report_if_interval_elapsed()
        except KeyboardInterrupt:
            caught.append(it)
        took.append(time.monotonic() - start)
    result = {"caught": caught, "took": max(took), "enabled": core.enabled,
              "done": core.lifecycle.done, "sum": t.item()}
    Detector.shutdown()
    return result


def test_a_keyboard_interrupt_in_a_report_turns_every_rank_off_at_once_and_is_re_raised():
    results = run_ranks(_interrupted, 3, timeout_s=150)
    assert results[1]["caught"] == [2]
    assert [r["caught"] for r in (results[0], results[2])] == [[], []]
    for result in results:
        assert not result["enabled"] and result["done"], results
        assert result["sum"] == 3.0  # training went on
        assert result["took"] < LONG_TIMEOUT_S / 3, results  # no peer waited comm_timeout_s


# -- the sinks cannot harm the job (#22): a hung report log, scrapers, a log moved away --------

def _hostile_sinks(rank, world_size, log_path, scrapers):
    """The job loop with a report log whose open blocks (a FIFO: a hung mount) and, on the
    reporting rank, `scrapers` idle connections plus one client scraping non-stop."""
    import socket
    import threading
    import urllib.request

    import torch
    import torch.distributed as dist
    from straggler import Detector
    from straggler.sinks.observers import PrometheusSink, ReportLogSink
    from straggler.sinks.prometheus import PrometheusOptions

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False,
                        report_log=log_path, prometheus=PrometheusOptions(0))
    core = Detector.core()
    reports, total, socks, stop, scraped = 0, 0.0, [], threading.Event(), []
    start = time.monotonic()
    peak_threads = threading.active_count()
    for it in range(STEPS):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.01)
        t = torch.ones(1)
        dist.all_reduce(t)
        total += t.item()
        report = Detector.generate_report_if_interval_elapsed()
        reports += report is not None
        exporter = core.observers.sink(PrometheusSink).exporter if core.observers else None
        if it == 1 and exporter is not None:  # the reporting rank, once its exporter runs
            port = exporter.port
            for _ in range(scrapers):  # past the paced accepts and the kernel's backlog, the
                with contextlib.suppress(OSError):  # kernel refuses them, at no cost to us
                    socks.append(socket.create_connection(("127.0.0.1", port), timeout=0.2))

            def scrape(port=port):
                while not stop.is_set():
                    try:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                    timeout=5) as resp:
                            scraped.append(resp.status)
                    except OSError:  # 503 while the idle ones hold the queue: expected
                        pass

            threading.Thread(target=scrape, daemon=True).start()
        peak_threads = max(peak_threads, threading.active_count())
    elapsed = time.monotonic() - start
    stop.set()
    state = {"enabled": core.enabled, "done": core.lifecycle.done}
    log = core.observers.sink(ReportLogSink).report_log if core.observers else None
    written = None if log is None else log.lines_written
    Detector.shutdown()
    for s in socks:
        s.close()
    left = [t.name for t in threading.enumerate() if t.name.startswith("straggler-prometheus")]
    return {"elapsed": elapsed, "reports": reports, "total": total, "left": left,
            "peak_threads": peak_threads, "written": written, "scraped": len(scraped),
            **state}


def test_a_hung_report_log_and_a_scraper_flood_cost_the_job_nothing(tmp_path, healthy):
    fifo = tmp_path / "hung.jsonl"
    os.mkfifo(fifo)
    try:
        results = run_ranks(_hostile_sinks, 3, str(fifo), 200, timeout_s=150)
    finally:  # unblock the writers left behind (they are in processes that have ended)
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    for rank, r in enumerate(results):
        # The job's normal result: every step's all_reduce, detection on, a report per step.
        assert r["total"] == 3.0 * STEPS and r["enabled"] and not r["done"], (rank, r)
        # Nowhere near one comm_timeout_s: nobody waited for the hung file or the scrapers.
        assert r["elapsed"] < healthy[rank]["elapsed"] + LONG_TIMEOUT_S / 3, (rank, r)
        assert r["left"] == [], (rank, r)  # Detector.shutdown() ended every exporter thread
    assert results[0]["reports"] == STEPS and results[0]["written"] == 0  # open never returned
    # 200 connections, a few threads: the exporter's 4, the log writer and the test's scraper
    # on top of what a rank runs anyway (the old exporter had one thread per connection).
    assert results[0]["peak_threads"] < results[1]["peak_threads"] + 10 < 200


def _moving_log(rank, world_size, pattern):
    """Every rank writes its own log (gather_on_rank0=False); rank 0's is deleted, rank 1's
    renamed, mid-run."""
    import torch
    import torch.distributed as dist
    from straggler import Detector
    from straggler.sinks.observers import ReportLogSink

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False,
                        gather_on_rank0=False, report_log=pattern)
    core = Detector.core()
    path = pattern.replace("{rank}", str(rank))
    total = 0.0
    for it in range(STEPS):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.01)
        t = torch.ones(1)
        dist.all_reduce(t)
        total += t.item()
        Detector.generate_report_if_interval_elapsed()
        if it == STEPS // 2:
            assert core.observers.sink(ReportLogSink).report_log.flush()
            if rank == 0:
                os.unlink(path)
            elif rank == 1:
                os.rename(path, path + ".moved")
    state = {"enabled": core.enabled,
             "reopened": core.observers.sink(ReportLogSink).report_log.reopened}
    Detector.shutdown()
    return {"total": total, **state}


def test_a_report_log_deleted_or_renamed_mid_run_is_recreated_and_runs_stay_one(tmp_path):
    from straggler.sinks.reportlog import read_records

    pattern = str(tmp_path / "log-{rank}.jsonl")
    results = run_ranks(_moving_log, 3, pattern, timeout_s=150,
                        env={"STRAGGLER_RUN_ID": "job-7"})
    assert [r["total"] for r in results] == [3.0 * STEPS] * 3
    assert all(r["enabled"] for r in results)
    assert [r["reopened"] for r in results] == [1, 1, 0]
    half = STEPS // 2 + 1
    counts = [len(list(read_records(tmp_path / f"log-{r}.jsonl"))) for r in range(3)]
    assert counts == [STEPS - half, STEPS - half, STEPS]  # after the move: all in the new file
    assert len(list(read_records(tmp_path / "log-1.jsonl.moved", rotated=False))) == half
    runs = {rec["run_id"] for r in range(3)
            for _, _, rec in read_records(tmp_path / f"log-{r}.jsonl")}
    assert runs == {"job-7"}


# -- a rank that skips a report (its loop did not make the call) -------------------------------

def _log_records(level):
    """The `straggler` logger's records at `level` and above, as (level name, message)."""
    import logging

    got = []

    class Keep(logging.Handler):
        def emit(self, record):
            got.append((record.levelname, record.getMessage()))

    logging.getLogger("straggler").addHandler(Keep(level))
    return got


def _skipping(rank, world_size, skip_rank, skip_at, via_interval):
    import logging

    import torch
    import torch.distributed as dist
    from straggler import Detector

    logged = _log_records(logging.WARNING)
    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    took, total = [], 0.0
    start = time.monotonic()
    for it in range(8):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)  # the training's own collective: the skipper waits here for the others
        total += t.item()
        if rank == skip_rank and it == skip_at:
            continue  # this rank's loop skips the report
        began = time.monotonic()
        if via_interval:
            Detector.generate_report_if_interval_elapsed()
        else:
            Detector.generate_report()
        took.append(time.monotonic() - began)
    result = {"took": max(took), "elapsed": time.monotonic() - start, "total": total,
              "enabled": core.enabled, "logged": list(logged)}
    Detector.shutdown()
    return result


@pytest.mark.parametrize("via_interval", [True, False])
def test_a_rank_that_skips_a_report_costs_its_peers_no_timeout(via_interval):
    # Rank 1 skips the report of iteration 2 and goes on to its next training all_reduce, where
    # it waits for its peers, who wait for it in the report: before, a deadlock of
    # comm_timeout_s (60 s here) for the whole job. Its record in the hang watchdog's store
    # shows it past the report; the peers ask it to leave, and its watchdog closes its group.
    results = run_ranks(_skipping, 3, 1, 2, via_interval, timeout_s=200)
    for rank, r in enumerate(results):
        assert r["total"] == 3.0 * 8, (rank, r)  # the training went on, every step
        assert not r["enabled"], (rank, r)  # every rank turned off ...
        assert len(r["logged"]) == 1, (rank, r)  # ... and said so once
        assert r["took"] < LONG_TIMEOUT_S / 3, (rank, r)  # nobody waited comm_timeout_s
        assert r["elapsed"] < LONG_TIMEOUT_S / 3, (rank, r)
    for rank in (0, 2):
        level, message = results[rank]["logged"][0]
        assert level == "ERROR" and "rank 1 is past it" in message, message
        assert message.startswith("straggler: the detector's group failed,"), message  # not ours
    level, message = results[1]["logged"][0]
    assert level == "WARNING" and "did not join" in message, message


# -- the detector used from two threads ------------------------------------------------------

def _two_threads(rank, world_size):
    import logging
    import threading

    import torch
    import torch.distributed as dist
    from straggler import Detector

    logged = _log_records(logging.WARNING)
    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    other = {}
    if rank == 0:  # inside its report 3, a second thread of rank 0 asks for a report too
        annotate = core.cycle.annotator

        def annotate_and_call_from_a_thread(report):
            def call():
                began = time.monotonic()
                other["report"] = Detector.generate_report()
                other["took"] = time.monotonic() - began

            if core.cycle._calls == 3:
                thread = threading.Thread(target=call)
                thread.start()
                thread.join(timeout=2 * LONG_TIMEOUT_S)
                other["alive"] = thread.is_alive()
            return annotate(report)

        core.cycle.annotator = annotate_and_call_from_a_thread
    took, total = [], 0.0
    for _ in range(6):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)
        total += t.item()
        began = time.monotonic()
        Detector.generate_report()
        took.append(time.monotonic() - began)
    result = {"took": max(took), "total": total, "enabled": core.enabled,
              "logged": list(logged), "other": other}
    Detector.shutdown()
    return result


def test_a_report_called_from_a_second_thread_during_a_report_is_ignored_and_costs_nothing():
    # Before: the second thread's collectives interleaved with the report's on rank 0 only;
    # the group mismatched, every rank waited comm_timeout_s and turned off.
    results = run_ranks(_two_threads, 3, timeout_s=200)
    other = results[0]["other"]
    assert other["report"] is None and not other["alive"], other
    assert other["took"] < LONG_TIMEOUT_S / 3, other  # refused at once, not queued
    for rank, r in enumerate(results):
        assert r["enabled"] and r["total"] == 3.0 * 6, (rank, r)
        assert r["took"] < LONG_TIMEOUT_S / 3, (rank, r)
    assert len(results[0]["logged"]) == 1, results[0]["logged"]
    assert "called in thread" in results[0]["logged"][0][1], results[0]["logged"]
    assert "runs in thread 'MainThread'" in results[0]["logged"][0][1], results[0]["logged"]
    assert results[1]["logged"] == results[2]["logged"] == []


# -- waits that are no skip; the job's group destroyed before the detector ---------------------

def _late_peers_then_destroy(rank, world_size):
    import logging

    import torch
    import torch.distributed as dist
    from straggler import Detector

    logged = _log_records(logging.WARNING)
    sub = dist.new_group([1, 2])
    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    took, total = [], 0.0
    for it in range(6):
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)
        total += t.item()
        if rank in (1, 2):
            if rank == 2 and it == 4:
                time.sleep(2.5)  # rank 1 waits for it in the subgroup, rank 0 in the report
            dist.all_reduce(torch.ones(1), group=sub)
        if rank == 2 and it == 2:
            time.sleep(2.5)  # a straggler late for the report, past the 1 s grace
        began = time.monotonic()
        Detector.generate_report()
        took.append(time.monotonic() - began)
    waits = {"enabled": core.enabled, "took": took, "total": total}
    # The job destroys its process group first; the detector's group is its own.
    dist.destroy_process_group()
    dist.destroy_process_group = lambda *args, **kwargs: None  # run_ranks would call it again
    with Detector.detection_section("step", profile_cuda=False):
        time.sleep(0.005)
    after = Detector.generate_report()
    enabled_after = core.enabled
    began = time.monotonic()
    Detector.shutdown()
    return {**waits, "report_after": after is not None, "enabled_after": enabled_after,
            "shutdown_s": time.monotonic() - began, "logged": list(logged)}


def test_late_peers_are_waited_for_and_a_destroyed_job_group_leaves_the_detector_working():
    # Peers 2.5 s late (a straggler at the report; a partner late in a subgroup collective the
    # reporting rank is not in) are waited for: the absent check (past its 1 s grace) must not
    # take them for ranks that skipped. Then destroy_process_group() before shutdown().
    results = run_ranks(_late_peers_then_destroy, 3, timeout_s=200)
    for rank, r in enumerate(results):
        assert r["enabled"] and r["total"] == 3.0 * 6, (rank, r)
        assert r["logged"] == [], (rank, r)
        assert max(r["took"]) < LONG_TIMEOUT_S / 3, (rank, r)
        assert r["enabled_after"] and r["shutdown_s"] < LONG_TIMEOUT_S / 3, (rank, r)
    assert results[0]["report_after"]  # the gathering rank still got its report
    # The waits were real (the check ran): the reporting rank waited for the straggler and
    # for rank 1, stuck behind its late partner.
    assert results[0]["took"][2] > 1.5 and results[0]["took"][4] > 1.5, results[0]["took"]


# -- a process forked while the detector runs (a DataLoader worker) ---------------------------

def _forking(rank, world_size):
    import torch
    import torch.distributed as dist
    from straggler import Detector

    Detector.initialize(report_time_interval=0, comm_timeout_s=LONG_TIMEOUT_S, telemetry=False)
    core = Detector.core()
    statuses, total = [], 0.0
    for it in range(6):
        if it == 2:  # a worker forked mid-run (as a fork DataLoader's), with every thread live
            pid = os.fork()
            if pid == 0:
                with Detector.detection_section("step", profile_cuda=False):
                    pass
                code = 0 if Detector.generate_report() is None else 3  # inert
                Detector.shutdown()
                # As a DataLoader worker ends: a forked child of a gloo rank that finalizes
                # hangs or crashes in torch itself, with or without straggler (2 of 2 plain
                # 2-rank jobs hung in their children's sys.exit).
                os._exit(code)
            deadline = time.monotonic() + LONG_TIMEOUT_S
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    statuses.append(os.waitstatus_to_exitcode(status))
                    break
                time.sleep(0.02)
            else:
                os.kill(pid, signal.SIGKILL)
                statuses.append("hung")
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(0.005)
        t = torch.ones(1)
        dist.all_reduce(t)
        total += t.item()
        Detector.generate_report()
    result = {"statuses": statuses, "enabled": core.enabled, "total": total,
              "hang": core.hang is not None and core.hang.running}
    Detector.shutdown()
    return result


def test_a_child_forked_on_every_rank_mid_run_exits_cleanly_and_the_ranks_stay_on():
    # The child inherits the live detector (report group, hang watchdog's store connection,
    # collective observer) without its threads: inert, its shutdown neither aborts nor hangs;
    # the parents go on reporting with hang detection running.
    results = run_ranks(_forking, 3, timeout_s=200)
    for rank, r in enumerate(results):
        assert r == {"statuses": [0], "enabled": True, "total": 3.0 * 6, "hang": True}, (rank, r)
