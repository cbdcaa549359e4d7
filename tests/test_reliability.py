"""One-process reliability: sections added from threads, fork, bounded names, unbalanced use."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading

import pytest
from straggler import Detector, Statistic
from straggler.analysis.policy import PolicyConfig
from straggler.reporting.generator import ReportGenerator

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("clean_detector")]



def test_new_section_names_from_threads_during_reports_keep_detection_on(caplog):
    Detector.initialize(report_time_interval=0, telemetry=False)
    stop = threading.Event()

    def add_names(prefix):
        i = 0
        while not stop.is_set():
            with Detector.detection_section(f"{prefix}-{i}", profile_cuda=False):
                pass
            i += 1

    threads = [threading.Thread(target=add_names, args=(f"t{k}",)) for k in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(30):
            with Detector.detection_section("main", profile_cuda=False):
                pass
            assert Detector.generate_report() is not None
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert Detector.core().enabled
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


FORK_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from straggler import Detector
    from straggler.telemetry import TelemetryOptions
    Detector.initialize(report_time_interval=0, telemetry=TelemetryOptions(period_s=0.01))
    assert Detector.core().telemetry.running
    with Detector.detection_section("step"):  # the simulated driver: a live engine
        time.sleep(0.01)
    pid = os.fork()
    if pid == 0:
        with Detector.detection_section("step"):
            pass
        assert Detector.generate_report() is None  # inert
        Detector.shutdown()
        Detector.shutdown()
        sys.exit(0)  # a normal exit: interpreter teardown must not abort either
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        raise SystemExit("child hung")
    assert Detector.generate_report() is not None  # the parent is untouched
    Detector.shutdown()
    print("child status", status)
""")


def test_forked_child_detector_is_inert_and_its_shutdown_neither_aborts_nor_hangs():
    proc = subprocess.run([sys.executable, "-c", FORK_SCRIPT], capture_output=True, text=True,
                          timeout=90, check=False)  # the status is asserted with the output
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "child status 0" in proc.stdout
    assert "terminate called" not in proc.stderr


def test_unused_names_expire_and_the_registries_follow_the_names_in_use():
    Detector.initialize(report_time_interval=0, telemetry=False, name_ttl_reports=2,
                        policy=PolicyConfig(forget_after_reports=2))
    core = Detector.core()
    for i in range(2000):
        with Detector.detection_section(f"churn-{i}", profile_cuda=False):
            pass
    with Detector.detection_section("step", profile_cuda=False):
        pass
    Detector.generate_report()
    assert len(core.sections) == 2001
    for _ in range(3):
        with Detector.detection_section("step", profile_cuda=False):
            pass
        Detector.generate_report()
    assert list(core.sections) == ["step"]
    reporter = core.cycle.reporter
    assert reporter.registry_rebuilds >= 1 and list(reporter.names.section_ids) == ["step"]
    # What is left: 'gpu', and the median and upper quartile of 'step' (none of the churn).
    assert core.options.policy.metrics_tracked <= 3
    # A context held across expiry is registered again when entered.
    held = Detector.detection_section("held", profile_cuda=False)
    with held:
        pass
    for _ in range(3):
        Detector.generate_report()
    assert "held" not in core.sections
    with held:
        pass
    assert "held" in core.sections and "held" in core.section_summaries()


def test_the_name_cap_refuses_new_names_with_one_warning(caplog):
    Detector.initialize(report_time_interval=0, telemetry=False, max_names=10)
    for i in range(25):
        with Detector.detection_section(f"n{i}", profile_cuda=False):
            pass
    assert len(Detector.core().sections) == 10
    warnings = [r for r in caplog.records if "max_names" in r.getMessage()]
    assert len(warnings) == 1 and "'n10'" in warnings[0].getMessage()


def test_unbalanced_exit_is_logged_once_with_the_name(caplog):
    Detector.initialize(report_time_interval=0, telemetry=False)
    ctx = Detector.detection_section("odd", profile_cuda=False)
    ctx.__exit__(None, None, None)
    ctx.__exit__(None, None, None)
    msgs = [r.getMessage() for r in caplog.records if "exited without" in r.getMessage()]
    assert len(msgs) == 1 and "'odd'" in msgs[0]


def test_a_section_left_open_across_a_report_is_reset_on_reentry_and_timed_again(caplog):
    Detector.initialize(report_time_interval=0, telemetry=False)
    core = Detector.core()
    Detector.detection_section("leak", profile_cuda=False).__enter__()  # never exited
    Detector.generate_report()
    for _ in range(2):
        with Detector.detection_section("leak", profile_cuda=False):
            pass
    assert core.sections["leak"].depth == 0
    assert core.section_summaries()["leak"][Statistic.NUM] == 2
    msgs = [r.getMessage() for r in caplog.records if "not exited" in r.getMessage()]
    assert len(msgs) == 1 and "'leak'" in msgs[0]


def test_non_positive_samples_are_logged_once_with_the_section_name(caplog):
    gen = ReportGenerator(node_name="solo")
    stats = {Statistic.MIN: 0.0, Statistic.MED: 0.0, Statistic.NUM: 3.0}
    good = {Statistic.MIN: 1.0, Statistic.MED: 1.0, Statistic.NUM: 3.0}
    for _ in range(2):
        gen.generate_report({"zero": stats, "fine": good}, {})
    msgs = [r.getMessage() for r in caplog.records if "non-positive" in r.getMessage()
            or "negative durations" in r.getMessage()]
    assert len(msgs) == 1 and "'zero'" in msgs[0]


def test_policy_and_baselines_keep_at_most_their_cap_of_names_least_recent_out_first():
    import numpy as np
    from straggler.analysis.policy import StragglerPolicy
    from straggler.analysis.scoring import WindowedMinBaseline

    policy = StragglerPolicy(PolicyConfig(max_metrics=5, forget_after_reports=1000))
    for i in range(20):
        policy.update([0, 1], {f"m{i}": [1.0, 1.0], "steady": [1.0, 1.0]})
    assert policy.metrics_tracked == 5 and "steady" in policy._metrics
    base = WindowedMinBaseline(window=20, max_names=5)
    for i in range(20):
        base.update([f"t{i}", "steady"], np.array([1.0, 2.0]))
    assert len(base.state_dict()) <= 5 and "steady" in base.state_dict()
