"""Step marks from sections (straggler.timing.collectives.SectionSteps) for jobs that never call
generate_report_if_interval_elapsed(): the loop's first section marks each step, on a real
detector's section registry (the mark is a counter here)."""

from __future__ import annotations

import logging

import pytest
from straggler import Detector
from straggler.timing.collectives import SectionSteps
from straggler.timing.sections import SectionContext, _HostContext

pytestmark = pytest.mark.usefixtures("clean_detector")


def _steps():
    Detector.initialize(telemetry=False, report_time_interval=0, collective_waits=False)
    marks: list[int] = []
    steps = SectionSteps(lambda: marks.append(1), Detector.core().registry)
    steps.start()
    return steps, marks


def _enter(*names):
    for name in names:
        with Detector.detection_section(name, profile_cuda=False):
            pass


def test_the_first_section_entered_twice_marks_each_step_and_alone_leaves_the_short_path():
    steps, marks = _steps()
    _enter("setup", "data", "forward")  # every section general while the hook looks
    assert type(Detector.detection_section("forward", profile_cuda=False)) is SectionContext
    for _ in range(4):
        _enter("data", "forward", "backward")
    # "setup" never repeats; "data" opens the loop: a mark at each of its entries from its
    # second one on; then only "data" is on the general path, where its mark is.
    assert steps.anchor == "data" and len(marks) == 4
    assert type(Detector.detection_section("data", profile_cuda=False)) is SectionContext
    assert type(Detector.detection_section("forward", profile_cuda=False)) is _HostContext
    steps.stop()  # the job marks its steps itself: no more marks, every section short again
    _enter("data", "forward")
    assert len(marks) == 4
    assert type(Detector.detection_section("data", profile_cuda=False)) is _HostContext


def test_micro_batches_mark_at_each_entry_of_the_anchor():
    # Gradient accumulation: "forward" twice a step; the micro-batch without collectives adds
    # its time to the next one in the observer (mark_step), so marking each entry is right.
    steps, marks = _steps()
    for _ in range(3):
        _enter("forward", "forward", "optimizer")
    assert steps.anchor == "forward" and len(marks) == 5


def test_no_section_entered_twice_marks_nothing():
    steps, marks = _steps()
    _enter(*(f"s{i}" for i in range(50)))
    assert steps.anchor is None and marks == []


def test_a_failing_mark_turns_the_detector_off_instead_of_raising(caplog):
    Detector.initialize(telemetry=False, report_time_interval=0, collective_waits=False)
    core = Detector.core()

    def broken():
        raise RuntimeError("mark failed")

    SectionSteps(broken, core.registry).start()
    with caplog.at_level(logging.ERROR, logger="straggler"):
        _enter("a", "a")  # found: its first mark fails in the hook, which is dropped (logged)
        assert core.enabled
        _enter("a")  # the section's own mark fails: the detector turns off, nothing raises
    assert not core.enabled
    assert sum("mark failed" in r.getMessage() for r in caplog.records) >= 2
