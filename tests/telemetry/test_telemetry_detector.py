"""`Detector.initialize(telemetry=...)` in one process: options, the sampler's lifetime, the
telemetry and GPU identity on the report, and `Detector.run_probe()` (simulated libraries)."""

from __future__ import annotations

import math
import os
import time

import pytest
from straggler import Detector
from straggler.telemetry import TelemetryOptions

from sim.simnvml import use_scenario


@pytest.fixture(autouse=True)
def _shutdown(monkeypatch):
    monkeypatch.delenv("STRAGGLER_DISABLE", raising=False)
    use_scenario(monkeypatch, "")
    Detector.shutdown()
    yield
    Detector.shutdown()


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("value, match", [
    ("yes", "`telemetry='yes'` must be True, False, None, a dict or a "
            "straggler.options.TelemetryOptions"),
    (1, "`telemetry=1` must be True, False"),
    ({"period": 1}, r"`telemetry=\{'period': 1\}` has unknown keys \['period'\]"),
])
def test_bad_telemetry_option_names_the_parameter(value, match):
    with pytest.raises(ValueError, match=match):
        Detector.initialize(telemetry=value)
    assert not Detector.initialized


def test_telemetry_options_are_validated():
    with pytest.raises(ValueError, match="`period_s=0` must be a positive number of seconds"):
        TelemetryOptions(period_s=0)
    # A period far below NVML's own cost per sample would keep a core busy: refused, named.
    with pytest.raises(ValueError, match=r"^`period_s=1e-09` must be at least 0\.01 s"):
        TelemetryOptions(period_s=1e-9)
    with pytest.raises(ValueError, match=r"^`period_s=1e-06` must be at least 0\.01 s"):
        Detector.initialize(telemetry={"period_s": 1e-6})
    assert Detector.core() is None
    assert TelemetryOptions(period_s=0.01).period_s == 0.01
    with pytest.raises(ValueError, match="`probe_suspects='no'` must be True or False"):
        TelemetryOptions(probe_suspects="no")
    with pytest.raises(TypeError, match=r"`rules=0\.5` must be None, a dict or a "
                                        r"straggler\.options\.CauseRules"):
        TelemetryOptions(rules=0.5)
    assert TelemetryOptions(rules={"slow_score": 0.8}).rules.slow_score == 0.8


def test_report_carries_the_window_telemetry_and_the_gpu_and_shutdown_joins_the_sampler(
        monkeypatch):
    use_scenario(monkeypatch, "sm_clock=1710;gpu_temp=64")
    before = _threads()
    Detector.initialize(node_name="solo", telemetry=TelemetryOptions(period_s=0.01))
    telemetry = Detector.core().telemetry
    assert telemetry.running and _threads() == before + 1
    deadline = time.monotonic() + 20
    while telemetry._sampler.samples_taken < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    with Detector.detection_section("step", profile_cuda=False):
        time.sleep(0.005)
    report = Detector.generate_report()
    values = report.rank_telemetry[0]
    assert values["sm_clock_mhz_mean"] == 1710 and values["gpu_temp_c_max"] == 64
    assert values["nvml_samples"] >= 3
    assert report.gpus[0].pci_bus_id == "0000:10:00.0" and report.causes == {}
    Detector.shutdown()
    assert not telemetry.running and _threads() == before


def test_telemetry_off_starts_no_thread_and_sends_no_fields():
    before = _threads()
    Detector.initialize(node_name="solo", telemetry=False)
    assert Detector.core().telemetry is None and _threads() == before
    with Detector.detection_section("step", profile_cuda=False):
        time.sleep(0.001)
    report = Detector.generate_report()
    assert report.rank_telemetry == {0: {}} and report.gpus == {}


def test_run_probe_in_a_group_of_one_has_no_reference():
    Detector.initialize(node_name="solo")
    results = Detector.run_probe()
    assert set(results) == {0}
    assert results[0].compute_tflops > 0 and math.isnan(results[0].relative)
    assert Detector.core().enabled


@pytest.mark.parametrize("probe_suspects, estimates_by_comm", [(True, True), (False, False)])
def test_reports_that_probe_suspects_agree_on_their_iteration(probe_suspects,
                                                              estimates_by_comm):
    # Individual scores kept per rank need no communication, so each rank may keep its own
    # interval; but probe_suspects makes every report a collective (the annotator's flag), so
    # the ranks must report on the same iteration: the interval is agreed with an all_reduce.
    Detector.initialize(scores_to_compute=["individual_perf_scores"], gather_on_rank0=False,
                        report_time_interval=1.0, ft_sections="off",
                        telemetry=TelemetryOptions(enabled=False, probe_suspects=probe_suspects))
    core = Detector.core()
    for _ in range(20):  # past the 16 step times of the first estimate
        with Detector.detection_section("step", profile_cuda=False):
            pass
        Detector.generate_report_if_interval_elapsed()
    assert core.cycle.tracker.iter_interval is not None
    assert (core.comm.calls["all_reduce"] > 0) is estimates_by_comm
