"""Section hot path: the specialised contexts keep every behaviour of the general one.

Sections switch between a short path (no hooks, enabled, every entry profiled, not expired)
and the general path whenever the detector's state changes, even inside an entry. A recording
engine stands in for CUDA, so the start/stop calls and their streams are visible. Also: GPU
sampling (`gpu_sample_interval`) on both paths, and the short paths with leak detection and
name expiry.
"""

from __future__ import annotations

import logging
from typing import ClassVar

import pytest
import torch
from straggler import Detector, Statistic
from straggler.timing.gpu import stream_getter
from straggler.timing.sections import (
    NO_GPU,
    UNRESOLVED,
    SectionContext,
    SectionKind,
    _GpuContext,
    _HostContext,
)

from _fakes import RecordingEngine, RecordingHook

pytestmark = pytest.mark.usefixtures("clean_detector")


def _detector_with_engine(events, **kwargs):
    kwargs.setdefault("gpu_sample_interval", 1)  # every profiled entry GPU-timed unless asked
    Detector.initialize(telemetry=False, **kwargs)
    core = Detector.core()
    core.gpu.use_engine(RecordingEngine(events))
    return core


def _samples(name):
    return len(Detector.core().sections[name].samples)


def test_plain_detector_sections_take_the_short_path():
    events = []
    _detector_with_engine(events)
    gpu = Detector.detection_section("g")
    host = Detector.detection_section("h", profile_cuda=False)
    with gpu:  # the first entry resolves the GPU timer on the general path
        pass
    assert type(gpu) is not SectionContext and type(host) is not SectionContext
    hook = RecordingHook([])
    Detector.add_section_hook(hook)
    assert type(gpu) is SectionContext and type(host) is SectionContext
    Detector.remove_section_hook(hook)
    assert type(gpu) is not SectionContext


def test_the_stop_is_recorded_on_the_stream_the_start_used():
    events = []
    core = _detector_with_engine(events)
    streams = iter([11, 22, 33, 44])
    core.gpu.stream = lambda: next(streams)
    for _ in range(2):  # general path (timer lookup), then the short path
        with Detector.detection_section("step"):
            pass
    assert events == [("start", 7, 11), ("stop", 7, 11), ("start", 7, 22), ("stop", 7, 22)]
    assert _samples("step") == 2


def test_short_paths_time_recursion_once_and_drop_samples_of_failed_bodies():
    events = []
    _detector_with_engine(events)
    for profile_cuda in (True, False):
        name = f"s{profile_cuda}"
        for _ in range(2):
            with (Detector.detection_section(name, profile_cuda),
                  Detector.detection_section(name, profile_cuda),
                  Detector.detection_section(name, profile_cuda)):
                pass
        with pytest.raises(KeyError), Detector.detection_section(name, profile_cuda):
            raise KeyError("body")
        assert _samples(name) == 2
        assert Detector.core().sections[name].depth == 0
    assert events.count(("start", 7, 0)) == 3  # the raising entry's GPU timer: cancelled
    assert events.count(("stop", 7, 0)) == 2 and events[-1] == ("cancel", 7, 0)


def test_a_hook_added_later_is_called_and_one_removed_inside_a_section_stops_cleanly():
    events = []
    _detector_with_engine(events)
    with Detector.detection_section("step"):
        pass
    hook = RecordingHook(events)
    Detector.add_section_hook(hook)
    with Detector.detection_section("step"):
        Detector.remove_section_hook(hook)  # the general path finishes the entry it began
    with Detector.detection_section("step"):
        pass
    assert events == [("start", 7, 0), ("stop", 7, 0),
                      ("enter", "step"), ("start", 7, 0), ("stop", 7, 0),
                      ("start", 7, 0), ("stop", 7, 0)]
    assert _samples("step") == 3


def test_a_hook_added_inside_a_short_path_entry_sees_only_later_entries():
    events = []
    _detector_with_engine(events)
    with Detector.detection_section("step", profile_cuda=False):
        pass
    with Detector.detection_section("step", profile_cuda=False):
        Detector.add_section_hook(RecordingHook(events))
    with Detector.detection_section("step", profile_cuda=False):
        pass
    # The entry in progress when the hook arrived finishes as it began: timed, no exit call.
    assert events == [("enter", "step"), ("exit", "step")]
    assert _samples("step") == 3


@pytest.mark.parametrize("fail_on", ["start", "stop"])
def test_engine_failure_on_the_short_path_disables_without_reaching_the_loop(caplog, fail_on):
    events = []
    core = _detector_with_engine(events)
    with Detector.detection_section("step"):
        pass  # resolves the timer: the next entries take the short path
    core.engine.fail_on = fail_on
    with caplog.at_level(logging.ERROR, logger="straggler"):
        for _ in range(3):
            with Detector.detection_section("step"):
                value = 1
    assert value == 1 and not core.enabled
    assert type(Detector.detection_section("step")) is SectionContext
    assert sum(f"{fail_on} exploded" in r.getMessage() for r in caplog.records) == 1
    assert Detector.generate_report() is None


def test_interval_and_communication_sections_stay_on_the_general_path():
    events = []
    _detector_with_engine(events, profiling_interval=2)
    ctx = Detector.detection_section("step")
    for _ in range(4):
        with ctx:
            pass
    assert type(ctx) is SectionContext
    assert events.count(("start", 7, 0)) == 2
    comm = Detector.detection_section("ar", kind="communication")
    assert type(comm) is SectionContext
    report = Detector.generate_report()
    assert report.local_section_summaries["step"][Statistic.NUM] == 2


def test_stream_getter_reads_the_raw_stream_of_the_current_device(monkeypatch):
    capturing = [False]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 3, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda d: 1000 + d, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_isCurrentStreamCapturing", lambda: capturing[0],
                        raising=False)
    stream = stream_getter()
    assert stream() == 1003
    capturing[0] = True
    assert stream() == -1


def test_stream_getter_falls_back_to_the_public_api(monkeypatch):
    class _Stream:
        cuda_stream = 42

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delattr(torch._C, "_cuda_getCurrentRawStream", raising=False)
    monkeypatch.setattr(torch.cuda, "current_stream", _Stream)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    assert stream_getter()() == 42


def test_stream_getter_without_cuda_is_the_null_stream(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert stream_getter()() == 0


class _Capture:
    """Stands in for the op observer: records push/pop; `fail_push` makes push() raise."""

    timer_names: ClassVar[dict] = {}
    per_op = False

    def __init__(self, events, fail_push=False):
        self.events, self.fail_push, self.enabled = events, fail_push, True

    def push(self):
        if self.fail_push:
            raise RuntimeError("push exploded")
        self.events.append(("push",))

    def pop(self):
        self.events.append(("pop",))

    def close(self):
        pass


def _detector_with_capture(events, fail_push=False, **kwargs):
    core = _detector_with_engine(events, **kwargs)
    core.gpu.use_capture(_Capture(events, fail_push))
    return core


def test_with_the_op_observer_on_it_opens_inside_the_gpu_timer_on_every_path():
    events = []
    core = _detector_with_capture(events)
    ctx = Detector.detection_section("step")
    for _ in range(2):  # general path (timer lookup), then the short path
        with ctx, ctx:
            pass
    assert type(ctx) is not SectionContext
    assert events == [("start", 7, 0), ("push",), ("pop",), ("stop", 7, 0)] * 2
    assert _samples("step") == 2 and core.enabled


def test_a_failing_observer_still_stops_the_gpu_timer_and_disables(caplog):
    events = []
    core = _detector_with_capture(events)
    with Detector.detection_section("step"):
        pass
    core.capture.fail_push = True
    with caplog.at_level(logging.ERROR, logger="straggler"), Detector.detection_section("step"):
        value = 1
    assert value == 1 and not core.enabled
    assert events[-2:] == [("start", 7, 0), ("stop", 7, 0)]
    assert sum("push exploded" in r.getMessage() for r in caplog.records) == 1


# -- GPU sampling (gpu_sample_interval) ------------------------------------------------------


def _pairs(events):
    return events.count(("start", 7, 0)), events.count(("stop", 7, 0))


def _count_general_path(monkeypatch):
    """Count the calls of the general path's enter and exit (the short paths fall back to it)."""
    calls = {"enter": 0, "exit": 0}
    enter, exit_ = SectionContext.__enter__, SectionContext.__exit__

    def counted_enter(self):
        calls["enter"] += 1
        return enter(self)

    def counted_exit(self, *exc):
        calls["exit"] += 1
        return exit_(self, *exc)

    monkeypatch.setattr(SectionContext, "__enter__", counted_enter)
    monkeypatch.setattr(SectionContext, "__exit__", counted_exit)
    return calls


@pytest.mark.parametrize("interval, entries, gpu", [(1, 7, 7), (3, 7, 3), (4, 8, 2), (10, 25, 3),
                                                    (10, 1, 1), (100, 99, 1)])
def test_every_nth_entry_is_gpu_timed_the_first_always_every_entry_host_timed(interval, entries,
                                                                            gpu):
    events = []
    _detector_with_engine(events, gpu_sample_interval=interval)
    ctx = Detector.detection_section("step")
    for _ in range(entries):
        with ctx:
            pass
    assert _pairs(events) == (gpu, gpu)
    assert _samples("step") == entries


def test_sampled_host_entries_and_gpu_samples_stay_on_the_short_path(monkeypatch):
    events = []
    _detector_with_engine(events, gpu_sample_interval=3)
    ctx = Detector.detection_section("step")
    with ctx:  # the general path resolves the timer: a GPU sample (the first)
        pass
    assert type(ctx) is _GpuContext
    calls = _count_general_path(monkeypatch)
    for _ in range(6):  # host, host, GPU, host, host, GPU
        with ctx:
            pass
    assert calls == {"enter": 0, "exit": 0}
    assert _pairs(events) == (3, 3) and _samples("step") == 7


def test_with_the_op_observer_only_gpu_samples_open_it_on_the_short_path(monkeypatch):
    events = []
    _detector_with_capture(events, gpu_sample_interval=2)
    ctx = Detector.detection_section("step")
    with ctx:
        pass
    assert type(ctx) is _GpuContext  # one GPU short path, with or without the observer
    calls = _count_general_path(monkeypatch)
    for _ in range(3):
        with ctx:
            pass
    assert calls == {"enter": 0, "exit": 0}
    # Entries 1 and 3 are GPU samples: timer started, observer opened inside it; 2 and 4 not.
    assert events == [("start", 7, 0), ("push",), ("pop",), ("stop", 7, 0)] * 2
    assert _samples("step") == 4


def test_the_general_path_samples_the_same_way():
    events = []
    hook = RecordingHook([])  # a hook keeps every entry on the general path
    _detector_with_capture(events, gpu_sample_interval=2)
    Detector.add_section_hook(hook)
    ctx = Detector.detection_section("step")
    for _ in range(4):
        with ctx:
            pass
    assert type(ctx) is SectionContext
    assert events == [("start", 7, 0), ("push",), ("pop",), ("stop", 7, 0)] * 2
    assert len(hook.events) == 8 and _samples("step") == 4


def test_per_op_capture_gpu_times_every_profiled_entry_whatever_the_interval():
    events = []
    core = _detector_with_capture(events, per_op_capture=True, gpu_sample_interval=10)
    assert core.options.gpu_interval == 1
    ctx = Detector.detection_section("step")
    for _ in range(5):
        with ctx:
            pass
    assert events == [("start", 7, 0), ("push",), ("pop",), ("stop", 7, 0)] * 5


def test_nvrx_periodic_capture_with_profiling_interval_two_gpu_times_every_profiled_entry():
    # NVRx's test_periodic_capture: profiling_interval=2 over 4 entries profiles 2, on the GPU
    # too, with the default gpu_sample_interval.
    events = []
    Detector.initialize(telemetry=False, profiling_interval=2)
    Detector.core().gpu.use_engine(RecordingEngine(events))
    for _ in range(4):
        with Detector.detection_section("one"):
            pass
    assert _pairs(events) == (2, 2) and _samples("one") == 2


@pytest.mark.parametrize("profiling_interval, gpu_interval, entries, profiled, gpu",
                         [(2, 3, 12, 6, 2), (3, 2, 10, 4, 2), (2, 1, 5, 3, 3), (4, 10, 80, 20, 2)])
def test_gpu_samples_are_taken_among_profiled_entries(profiling_interval, gpu_interval, entries,
                                                      profiled, gpu):
    events = []
    _detector_with_engine(events, profiling_interval=profiling_interval,
                          gpu_sample_interval=gpu_interval)
    ctx = Detector.detection_section("step")
    for _ in range(entries):
        with ctx:
            pass
    assert type(ctx) is SectionContext  # profiling_interval > 1: the general path
    assert _pairs(events) == (gpu, gpu) and _samples("step") == profiled


def test_an_entry_on_a_capturing_stream_defers_the_gpu_sample_to_the_next_entry():
    events = []
    core = _detector_with_engine(events, gpu_sample_interval=3)
    ctx = Detector.detection_section("step")
    with ctx:  # GPU sample 1 (general path)
        pass
    for _ in range(2):  # host-only entries
        with ctx:
            pass
    core.gpu.stream = lambda: -1  # a CUDA graph is being captured: the due sample cannot be taken
    with ctx:
        pass
    core.gpu.stream = lambda: 0
    for _ in range(3):  # the first of these takes the deferred sample; then two host-only
        with ctx:
            pass
    assert _pairs(events) == (2, 2) and _samples("step") == 7


def test_host_contexts_of_a_gpu_section_are_never_gpu_timed():
    events = []
    _detector_with_engine(events, gpu_sample_interval=2)
    gpu, host = Detector.detection_section("s"), Detector.detection_section("s", False)
    with gpu:
        pass
    assert type(host) is _HostContext
    for _ in range(4):
        with host:
            pass
    assert _pairs(events) == (1, 1) and _samples("s") == 5


@pytest.mark.parametrize("bad", [0, -1, 2.0, "10", True])
def test_a_bad_gpu_sample_interval_is_refused_naming_the_value(bad):
    with pytest.raises(ValueError, match=rf"`gpu_sample_interval={bad!r}` must be a positive"):
        Detector.initialize(telemetry=False, gpu_sample_interval=bad)
    assert not Detector.initialized and Detector.core() is None


# -- the short paths and the reliability work (leaks, expiry) ----------------------------------


def test_a_gpu_entry_left_open_across_a_report_is_dropped_and_its_timer_stopped(caplog):
    events = []
    core = _detector_with_engine(events, report_time_interval=0)
    streams = iter([5, 6, 7])
    core.gpu.stream = lambda: next(streams)
    ctx = Detector.detection_section("step")
    with ctx:  # resolves the timer (stream 5)
        pass
    ctx.__enter__()  # the short path, never exited (stream 6)
    Detector.generate_report()
    # the leak is dropped, its timer stopped on its own stream; timed anew (7)
    with caplog.at_level(logging.WARNING, logger="straggler"), ctx:
        pass
    assert events == [("start", 7, 5), ("stop", 7, 5), ("start", 7, 6), ("stop", 7, 6),
                      ("start", 7, 7), ("stop", 7, 7)]
    assert core.sections["step"].depth == 0 and _samples("step") == 1
    assert sum("not exited" in r.getMessage() for r in caplog.records) == 1


def test_nested_short_path_entries_within_a_report_are_not_taken_for_leaks(caplog):
    events = []
    core = _detector_with_engine(events, report_time_interval=0)
    ctx = Detector.detection_section("step")
    with ctx:
        pass
    with caplog.at_level(logging.WARNING, logger="straggler"):
        for _ in range(3):  # the creation's window, then windows after reports
            with ctx, ctx:
                pass
            with (Detector.detection_section("other", profile_cuda=False),
                  Detector.detection_section("other", profile_cuda=False)):
                pass
            Detector.generate_report()
    assert core.sections["step"].depth == 0 and _pairs(events) == (4, 4)
    assert not [r for r in caplog.records if "not exited" in r.getMessage()]


def test_an_expired_section_takes_the_general_path_and_returns_to_the_short_one_when_revived():
    events = []
    # Without collective waits: a job calling only generate_report() would get its loop's
    # first section as its step mark, on the general path (tests/timing/test_section_steps.py).
    core = _detector_with_engine(events, report_time_interval=0, name_ttl_reports=1,
                                 collective_waits=False)
    gpu, host = Detector.detection_section("step"), Detector.detection_section("step", False)
    with gpu:
        pass
    with host:
        pass
    assert (type(gpu), type(host)) == (_GpuContext, _HostContext)
    Detector.generate_report()  # used in this window: kept
    Detector.generate_report()  # unused for one report: forgotten
    s = gpu._s
    assert s.expired and "step" not in core.sections
    assert type(gpu) is SectionContext and type(host) is SectionContext
    with host:  # the general path registers it again: both contexts back on short paths
        pass
    assert not s.expired and core.sections["step"] is s
    assert type(host) is _HostContext and type(gpu) is SectionContext  # timer looked up again
    with gpu:
        pass
    assert type(gpu) is _GpuContext
    with gpu:
        pass
    assert _pairs(events) == (3, 3)


def test_a_section_used_only_on_the_short_path_does_not_expire():
    _detector_with_engine([], report_time_interval=0, name_ttl_reports=1,
                          collective_waits=False)  # no step marks from sections (above)
    ctx = Detector.detection_section("step", profile_cuda=False)
    for _ in range(5):
        with ctx:
            pass
        Detector.generate_report()
    assert type(ctx) is _HostContext and "step" in Detector.core().sections


@pytest.mark.parametrize("bad", [["list"], "", 7])
def test_a_bad_name_is_refused_by_the_by_name_lookup(bad):
    _detector_with_engine([])
    with pytest.raises(ValueError, match="must be a non-empty string or None"):
        Detector.detection_section(bad)


def test_by_name_a_known_section_of_another_kind_is_refused():
    _detector_with_engine([])
    Detector.detection_section("ar", kind="communication")
    with pytest.raises(ValueError, match="differs from the kind of section 'ar'"):
        Detector.detection_section("ar")
    assert Detector.detection_section("ar", kind="communication") is not None


def test_each_report_window_starts_with_a_gpu_sample():
    events = []
    _detector_with_engine(events, gpu_sample_interval=10, report_time_interval=0)
    ctx = Detector.detection_section("step")
    for _ in range(3):  # windows of 4 entries: the first of each is GPU-timed
        for _ in range(4):
            with ctx:
                pass
        Detector.generate_report()
    assert _pairs(events) == (3, 3)


def test_timer_for_returns_the_id_and_the_section_stores_it():
    events = []
    core = _detector_with_engine(events)
    assert core.gpu.timer_for("comm", SectionKind.COMMUNICATION) == NO_GPU
    assert core.gpu.timer_for("step", SectionKind.COMPUTE) == 7  # RecordingEngine's id
    assert "step" not in core.sections  # looking a timer up registers no section
    ctx = Detector.detection_section("step")
    section = core.sections["step"]
    assert section.timer_id == UNRESOLVED  # resolved on the first profiled GPU entry
    with ctx:
        pass
    assert section.timer_id == 7 and type(ctx) is _GpuContext
    assert events == [("start", 7, 0), ("stop", 7, 0)]
