"""Megatron-style config, flags and report schedule: pure logic, no process group."""

from __future__ import annotations

import argparse
import dataclasses
import math

import pytest
from straggler.integrations.megatron import (
    NVRxStragglerDetectionConfig,
    ReportSchedule,
    StragglerDetectionConfig,
    add_straggler_args,
    config_from_args,
)


def _parser() -> argparse.ArgumentParser:
    return add_straggler_args(argparse.ArgumentParser(prog="train.py"))


# -- config ----------------------------------------------------------------------------------


def test_defaults_match_megatron_bridge_and_megatron_lm():
    c = StragglerDetectionConfig()
    bridge = dict(enabled=False, report_time_interval=300.0, calc_relative_gpu_perf=True,
                  calc_individual_gpu_perf=True, num_gpu_perf_scores_to_print=5,
                  gpu_relative_perf_threshold=0.7, gpu_individual_perf_threshold=0.7,
                  stop_if_detected=False, enable_logging=True, profiling_interval=1,
                  logger_name="megatron.bridge.NVRxStragglerDetection")
    mlm = dict(straggler_ctrlr_port=65535, straggler_minmax_count=1,
               disable_straggler_on_startup=False)
    for name, value in {**bridge, **mlm}.items():
        assert getattr(c, name) == value, name
    assert c.straggler_ctrlr_host == "127.0.0.1"
    assert NVRxStragglerDetectionConfig is StragglerDetectionConfig


def test_scores_to_compute_follows_the_calc_flags():
    assert StragglerDetectionConfig().scores_to_compute == ["relative_perf_scores",
                                                            "individual_perf_scores"]
    assert StragglerDetectionConfig(calc_relative_gpu_perf=False).scores_to_compute == [
        "individual_perf_scores"]
    assert StragglerDetectionConfig(calc_individual_gpu_perf=False).scores_to_compute == [
        "relative_perf_scores"]


BAD_CONFIG_VALUES = [
    ("enabled", 1), ("enabled", "yes"), ("calc_relative_gpu_perf", None),
    ("calc_individual_gpu_perf", 0), ("stop_if_detected", "False"), ("enable_logging", 1.0),
    ("disable_straggler_on_startup", None), ("enable_controller", "on"),
    ("report_time_interval", 0), ("report_time_interval", -1.0),
    ("report_time_interval", float("inf")), ("report_time_interval", float("nan")),
    ("report_time_interval", "300"), ("report_time_interval", True),
    ("sync_timeout_s", 0), ("sync_timeout_s", float("nan")), ("verdict", "majority"),
    ("gpu_relative_perf_threshold", 1.01), ("gpu_relative_perf_threshold", -0.01),
    ("gpu_relative_perf_threshold", float("nan")), ("gpu_relative_perf_threshold", "0.7"),
    ("gpu_individual_perf_threshold", 2), ("gpu_individual_perf_threshold", True),
    ("num_gpu_perf_scores_to_print", -1), ("num_gpu_perf_scores_to_print", 2.0),
    ("profiling_interval", 0), ("profiling_interval", 1.5), ("profiling_interval", True),
    ("straggler_minmax_count", 0), ("straggler_minmax_count", "2"),
    ("straggler_ctrlr_port", -1), ("straggler_ctrlr_port", 65536),
    ("straggler_ctrlr_port", "65535"), ("straggler_ctrlr_port", 80.0),
    ("logger_name", ""), ("logger_name", None), ("straggler_ctrlr_host", " "),
    ("straggler_ctrlr_host", 127), ("node_name", ""), ("node_name", 3),
]


@pytest.mark.parametrize("name, value", BAD_CONFIG_VALUES)
def test_every_bad_value_is_rejected_naming_the_field(name, value):
    with pytest.raises(ValueError, match=f"`{name}="):
        StragglerDetectionConfig(**{name: value})


@pytest.mark.parametrize("name, value", BAD_CONFIG_VALUES[:6])
def test_finalize_catches_a_field_changed_after_construction(name, value):
    c = StragglerDetectionConfig()
    setattr(c, name, value)
    with pytest.raises(ValueError, match=f"`{name}="):
        c.finalize()


@pytest.mark.parametrize("name, value, message", [
    ("straggler_ctrlr_host", " ", "`straggler_ctrlr_host=' '` must be a non-blank string"),
    ("logger_name", "", "`logger_name=''` must be a non-blank string"),
    ("node_name", "  ", "`node_name='  '` must be a non-blank string or None"),
    ("straggler_ctrlr_port", 65536, "`straggler_ctrlr_port=65536` must be an integer between 0 "
                                    "and 65535"),
])
def test_blank_names_and_ports_out_of_range_get_the_shared_wording(name, value, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        StragglerDetectionConfig(**{name: value})


def test_at_least_one_score_kind_is_required():
    with pytest.raises(ValueError, match="at least one kind of score"):
        StragglerDetectionConfig(calc_relative_gpu_perf=False, calc_individual_gpu_perf=False)


def test_threshold_bounds_are_inclusive_like_bridge():
    c = StragglerDetectionConfig(gpu_relative_perf_threshold=0.0, gpu_individual_perf_threshold=1)
    assert c.gpu_relative_perf_threshold == 0.0


# -- flags -----------------------------------------------------------------------------------


def test_megatron_lm_flags_keep_names_and_defaults():
    args = _parser().parse_args([])
    assert args.log_straggler is False
    assert args.straggler_ctrlr_port == 65535
    assert args.straggler_minmax_count == 1
    assert args.disable_straggler_on_startup is False
    assert config_from_args(args) == StragglerDetectionConfig()


def test_megatron_lm_command_line_switches_over_unchanged():
    # examples/rl/README.md's Megatron-LM flags
    args = _parser().parse_args(["--log-straggler", "--disable-straggler-on-startup",
                                 "--straggler-minmax-count", "16",
                                 "--straggler-ctrlr-port", "12345"])
    c = config_from_args(args)
    assert (c.enabled, c.disable_straggler_on_startup, c.straggler_minmax_count,
            c.straggler_ctrlr_port) == (True, True, 16, 12345)


def test_our_flags_map_to_config_fields():
    args = _parser().parse_args([
        "--log-straggler", "--straggler-report-interval", "2.5", "--straggler-scores",
        "individual", "--straggler-gpu-relative-threshold", "0.5",
        "--straggler-gpu-individual-threshold", "0.6", "--straggler-stop-if-detected",
        "--straggler-profiling-interval", "4", "--straggler-num-scores-to-print", "0",
        "--straggler-disable-logging", "--straggler-logger-name", "my.log",
        "--straggler-ctrlr-host", "0.0.0.0", "--straggler-disable-ctrlr",
        "--straggler-node-name", "node7", "--straggler-sync-timeout", "30",
        "--straggler-verdict", "single_report"])
    c = config_from_args(args)
    expected = StragglerDetectionConfig(
        enabled=True, report_time_interval=2.5, calc_relative_gpu_perf=False,
        calc_individual_gpu_perf=True, gpu_relative_perf_threshold=0.5,
        gpu_individual_perf_threshold=0.6, stop_if_detected=True, profiling_interval=4,
        num_gpu_perf_scores_to_print=0, enable_logging=False, logger_name="my.log",
        straggler_ctrlr_host="0.0.0.0", enable_controller=False, node_name="node7",
        sync_timeout_s=30.0, verdict="single_report")
    assert c == expected
    assert config_from_args(_parser().parse_args(["--straggler-scores", "relative"])) \
        .scores_to_compute == ["relative_perf_scores"]


@pytest.mark.parametrize("argv, flag", [
    (["--straggler-ctrlr-port", "-1"], "--straggler-ctrlr-port"),
    (["--straggler-ctrlr-port", "65536"], "--straggler-ctrlr-port"),
    (["--straggler-ctrlr-port", "http"], "--straggler-ctrlr-port"),
    (["--straggler-ctrlr-port", "80.5"], "--straggler-ctrlr-port"),
    (["--straggler-minmax-count", "0"], "--straggler-minmax-count"),
    (["--straggler-minmax-count", "two"], "--straggler-minmax-count"),
    (["--straggler-report-interval", "0"], "--straggler-report-interval"),
    (["--straggler-report-interval", "-5"], "--straggler-report-interval"),
    (["--straggler-report-interval", "inf"], "--straggler-report-interval"),
    (["--straggler-report-interval", "nan"], "--straggler-report-interval"),
    (["--straggler-report-interval", "5m"], "--straggler-report-interval"),
    (["--straggler-gpu-relative-threshold", "1.5"], "--straggler-gpu-relative-threshold"),
    (["--straggler-gpu-relative-threshold", "-0.1"], "--straggler-gpu-relative-threshold"),
    (["--straggler-gpu-relative-threshold", "nan"], "--straggler-gpu-relative-threshold"),
    (["--straggler-gpu-individual-threshold", "7"], "--straggler-gpu-individual-threshold"),
    (["--straggler-gpu-individual-threshold", "x"], "--straggler-gpu-individual-threshold"),
    (["--straggler-profiling-interval", "0"], "--straggler-profiling-interval"),
    (["--straggler-profiling-interval", "1.5"], "--straggler-profiling-interval"),
    (["--straggler-num-scores-to-print", "-1"], "--straggler-num-scores-to-print"),
    (["--straggler-sync-timeout", "0"], "--straggler-sync-timeout"),
    (["--straggler-scores", "both"], "--straggler-scores"),
    (["--straggler-logger-name", " "], "--straggler-logger-name"),
    (["--straggler-ctrlr-host", ""], "--straggler-ctrlr-host"),
    (["--straggler-node-name", ""], "--straggler-node-name"),
    (["--log-straggler", "yes"], "unrecognized arguments"),
])
def test_every_bad_flag_value_exits_with_a_message(argv, flag, capsys):
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert flag in err
    if len(argv) == 2 and not argv[1].startswith("--"):
        assert repr(argv[1]) in err or argv[1] in err  # the value is echoed
    if "invalid choice" not in err and flag != "unrecognized arguments":
        assert f"`{flag}={argv[1]!r}`" in err  # named as given, not as "a name"


def test_config_from_hand_built_namespace_is_validated():
    with pytest.raises(ValueError, match=r"`gpu_relative_perf_threshold=3\.0`"):
        config_from_args(argparse.Namespace(straggler_gpu_relative_threshold=3.0))
    with pytest.raises(ValueError, match="`straggler_scores='both'`"):
        config_from_args(argparse.Namespace(straggler_scores="both"))
    # Absent flags take their defaults (a parser that registered only Megatron-LM's flags).
    c = config_from_args(argparse.Namespace(log_straggler=True))
    assert c == dataclasses.replace(StragglerDetectionConfig(), enabled=True)


def test_flags_live_in_their_own_group_and_coexist_with_other_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    add_straggler_args(parser)
    assert any(g.title == "straggler" for g in parser._action_groups)
    args = parser.parse_args(["--lr", "0.5", "--log-straggler"])
    assert args.lr == 0.5 and config_from_args(args).enabled


# -- schedule --------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _run_steps(schedule: ReportSchedule, clock: FakeClock, step_s: float) -> int:
    """Tick until a sync point; return how many steps that took."""
    n = 0
    while True:
        clock.t += step_s
        n += 1
        if schedule.tick():
            return n


def test_first_meeting_after_16_steps_then_every_interval():
    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    assert _run_steps(s, clock, 0.5) == 16
    # 8 s elapsed of a 30 s interval: no report yet, meet again when the interval is over.
    report, steps = s.plan(30.0, timing=True)
    assert report is False and steps == 44
    s.agree(report, steps)
    assert _run_steps(s, clock, 0.5) == 44
    report, steps = s.plan(30.0, timing=True)
    assert report is True and steps == 60
    s.agree(report, steps)
    assert _run_steps(s, clock, 0.5) == 60
    assert s.plan(30.0, timing=True)[0] is True


def test_short_interval_reports_at_the_first_meeting():
    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    _run_steps(s, clock, 0.1)
    assert s.plan(1.0, timing=True) == (True, 10)


def test_steps_never_below_profiling_interval_nor_zero():
    clock = FakeClock()
    s = ReportSchedule(min_steps=8, clock=clock)
    _run_steps(s, clock, 1.0)
    assert s.plan(0.5, timing=True) == (True, 8)
    frozen = ReportSchedule(clock=FakeClock())  # a clock that never moves: finite, positive
    for _ in range(16):
        frozen.tick()
    _, steps = frozen.plan(10.0, timing=True)
    assert 1 <= steps <= ReportSchedule.MAX_STEPS


def test_switched_off_never_reports_and_window_restarts_when_switched_on():
    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    _run_steps(s, clock, 1.0)
    report, steps = s.plan(4.0, timing=False)
    assert report is False and steps == 4  # keep meeting once per interval to hear "on"
    s.agree(report, steps, timing_started=True)
    clock.t += 1.0
    # Just switched on: the window starts now, so 1 s into a 4 s interval is not a report.
    assert s.plan(4.0, timing=True)[0] is False


def test_meetings_are_capped_by_max_wait_without_reporting():
    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    _run_steps(s, clock, 0.5)
    # A 300 s interval, but the controller wants to be heard every 5 s: meet in 10 steps.
    assert s.plan(300.0, timing=True, max_wait_s=5.0) == (False, 10)
    assert s.plan(300.0, timing=False, max_wait_s=5.0) == (False, 10)


def test_schedule_counts_on_the_detectors_interval_tracker():
    """One mechanism: the manager's schedule counts and measures with `ReportIntervalTracker`."""
    from straggler.timing.interval import ReportIntervalTracker

    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    assert isinstance(s._tracker, ReportIntervalTracker)
    assert ReportSchedule.FIRST_SYNC == ReportIntervalTracker.ESTIMATION_ITERS
    assert _run_steps(s, clock, 0.5) == 16 and s.count == 16


def test_plan_uses_the_lower_median_step_time_as_nvrx():
    # 16 step times alternating 0.1 and 0.3 s: the lower median is 0.1 (statistics.median: 0.2).
    clock = FakeClock()
    s = ReportSchedule(clock=clock)
    for i in range(17):
        clock.t += 0.1 if i % 2 else 0.3
        s.tick()
    s.agree(False, 1)  # past the first meeting; the next tick is one
    clock.t += 0.1
    assert s.tick()
    assert s._tracker.median_step_s() == pytest.approx(0.1)
    assert s.plan(3.0, timing=False) == (False, 30)


def test_median_step_time_is_nan_before_any_step():
    s = ReportSchedule(clock=FakeClock())
    assert math.isnan(s._tracker.median_step_s())
