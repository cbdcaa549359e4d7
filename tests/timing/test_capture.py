"""Per-op capture: keys, what is timed and what never is, nesting, failures."""

from __future__ import annotations

import logging

import pytest
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from straggler import _core
from straggler.timing.capture import (OpCapture, is_communication_op, native_observer_available,
                                op_key)


@pytest.fixture
def engine():
    eng = _core.TimerEngine(backend="host")
    yield eng
    eng.close()


class _SectionCapture(OpCapture):
    """OpCapture whose push/pop also open/close a busy section timer, as sections.py does."""

    def push(self) -> None:
        self._scopes = getattr(self, "_scopes", 0) + 1
        tid = self.engine.timer_id(f"section{self._scopes}")
        self.engine.set_busy(tid)
        self.engine.start(tid, 0)
        super().push()

    def pop(self) -> None:
        super().pop()
        self.engine.stop(f"section{self._scopes}", 0)
        self._scopes -= 1


@pytest.fixture
def capture(engine):
    errors = []
    cap = _SectionCapture(engine, lambda: 0, errors.append, native=False)
    cap.errors = errors
    yield cap
    cap.close()


def _medians(engine):
    names, values = engine.summaries()
    return {n: values[i] for i, n in enumerate(names) if not n.startswith("section")}


def test_key_is_op_name_input_shapes_and_dtype():
    a, b = torch.zeros(4, 3), torch.zeros(3, 2)
    assert op_key(torch.ops.aten.mm.default, (a, b), None) == "aten.mm.default(4x3,3x2)float32"
    assert op_key(torch.ops.aten.cat.default, ([a, a], 0), None) == \
        "aten.cat.default(4x3,4x3)float32"
    assert op_key(torch.ops.aten.add.Tensor, (torch.tensor(1.0, dtype=torch.float64), 2),
                  None) == "aten.add.Tensor(scalar)float64"


def test_collectives_are_communication():
    assert is_communication_op(torch.ops.c10d.allreduce_.default)
    assert not is_communication_op(torch.ops.aten.mm.default)


def test_compute_ops_are_timed_inside_a_section_only(capture, engine):
    a = torch.randn(64, 64)
    a @ a  # before: not timed
    capture.push()
    for _ in range(3):
        a @ a
    (a + 1).t()  # t() is a view: no timer
    capture.pop()
    a @ a  # after: not timed
    stats = _medians(engine)
    assert set(stats) == {"aten.mm.default(64x64,64x64)float32",
                          "aten.add.Tensor(64x64)float32"}
    assert stats["aten.mm.default(64x64,64x64)float32"][5] == 3  # NUM
    assert _get_current_dispatch_mode() is None  # the mode left the stack


def test_shapes_and_dtypes_make_different_timers(capture, engine):
    capture.push()
    torch.zeros(8, 8) @ torch.zeros(8, 8)
    torch.zeros(4, 8) @ torch.zeros(8, 8)
    torch.zeros(4, 8, dtype=torch.float64) @ torch.zeros(8, 8, dtype=torch.float64)
    capture.pop()
    assert len([n for n in _medians(engine) if n.startswith("aten.mm")]) == 3


def test_nested_sections_capture_once_and_pause_for_communication(capture, engine):
    a = torch.randn(16, 16)
    capture.push()
    capture.push()  # a nested compute section: same mode, ops timed once
    a @ a
    capture.pause()  # a communication section inside
    a @ a
    capture.resume()
    capture.pop()
    a @ a
    capture.pop()
    assert _medians(engine)["aten.mm.default(16x16,16x16)float32"][5] == 2
    assert _get_current_dispatch_mode() is None


def test_op_errors_propagate_and_the_timer_is_closed(capture, engine):
    capture.push()
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3) @ torch.zeros(4, 5)
    torch.zeros(2, 3) @ torch.zeros(3, 5)
    capture.pop()
    assert engine.pending() == 0 and not capture.errors


class _FailingEngine:
    backend = "cuda"

    def timer_id(self, name):
        return 0

    def op_begin(self, stream):
        raise RuntimeError("event record failed")

    def op_end(self, token, op_timer, stream):
        raise AssertionError("never begun, never ended")


def test_engine_errors_fail_open_and_ops_still_run():
    errors = []
    cap = OpCapture(_FailingEngine(), lambda: 0, errors.append, native=False)
    cap.push()
    out = torch.ones(2, 2) @ torch.ones(2, 2)
    out2 = torch.ones(2, 2) + 1  # capture is off now: no second error
    cap.pop()
    assert out.sum().item() == 8 and out2.sum().item() == 8
    assert len(errors) == 1 and "event record failed" in str(errors[0])


def test_detector_per_op_capture_in_one_process(monkeypatch):
    from straggler import Detector

    Detector.shutdown()
    Detector.initialize(per_op_capture=True)
    try:
        core = Detector.core()
        core.gpu.use_engine(_core.TimerEngine(backend="host"))
        lin = torch.nn.Linear(8, 4)
        with Detector.detection_section("fwd"):
            lin(torch.randn(2, 8)).sum().backward()
        with Detector.detection_section("comm", kind="communication"):
            torch.randn(3, 3) @ torch.randn(3, 3)
        with Detector.detection_section("no-gpu", profile_cuda=False):
            torch.randn(5, 5) @ torch.randn(5, 5)
        report = Detector.generate_report()
        names = set(report.local_kernel_summaries)
        if core.capture.observer is None:  # the Python observer sees ops after autograd
            assert "aten.addmm.default(4,2x8,8x4)float32" in names  # bias, input, weight.t()
            assert "aten.mm.default(4x2,2x8)float32" in names  # a backward op
        else:  # the C++ observer: outermost ops as called
            assert "aten.linear.default(2x8,4x8,4)float32" in names, names
            assert any(n.startswith("aten.mm.default(4x2,2x8)") for n in names), names
        assert not any("3x3" in n or "5x5" in n for n in names), names
        assert "fwd" not in names and "fwd" in report.local_section_summaries
    finally:
        Detector.shutdown()
    assert _get_current_dispatch_mode() is None


def test_capture_logs_nothing_when_healthy(capture, caplog):
    with caplog.at_level(logging.WARNING, logger="straggler"):
        capture.push()
        torch.ones(3) * 2
        capture.pop()
    assert not caplog.records and not capture.errors


@pytest.mark.skipif(not native_observer_available(), reason="straggler._ops is not built")
def test_native_observer_times_outermost_ops_and_skips_sleeps(sim_cuda):
    """Real torch CPU ops through straggler._ops on a simulated stream: the host sleep between
    ops is not busy time; nested aten calls (matmul -> mm) are one op."""
    import time

    eng = _core.TimerEngine("cuda")
    errors = []
    cap = _SectionCapture(eng, lambda: 0, errors.append, native=True)
    a = torch.randn(32, 32)
    for _ in range(3):  # warm-up: torch's one-time initialisation is not what we measure
        cap.push()
        (a @ a).relu()
        cap.pop()
    eng.flush()
    eng.reset()
    start = time.perf_counter()
    cap.push()
    b = a @ a
    time.sleep(0.05)
    b.relu()
    cap.pop()
    host_ms = (time.perf_counter() - start) * 1e3
    eng.flush()
    (busy,) = eng.durations("section1")
    # CPU ops on the simulated stream take their host time; the sleep is in no segment.
    assert host_ms >= 50.0 and busy <= host_ms - 50.0 + 1.0
    names = set(cap.timer_names)
    assert "aten.matmul.default(32x32,32x32)float32" in names
    assert not any(n.startswith("aten.mm.") for n in names)  # nested in matmul
    assert not errors
    cap.close()
    eng.close()


@pytest.mark.skipif(not native_observer_available(), reason="straggler._ops is not built")
def test_native_observer_is_switched_by_a_flag_and_its_failures_stay_inside(sim_cuda):
    """The RecordFunction callback is registered once: disable/enable only stop and resume the
    reports. An engine failure inside the callback is recorded on the observer; the op runs and
    returns its result, and nothing is raised out of the callback."""
    from sim.simcuda import CUDA_ERROR_LAUNCH_FAILED
    from straggler import _ops

    eng = _core.TimerEngine("cuda")
    obs = _ops.Observer(eng, per_op=False, device="cpu", stream=0, communication=[])
    sec = eng.timer_id("s")
    eng.set_busy(sec)
    a = torch.ones(4, 4)
    eng.start(sec, 0)
    for enabled in (True, False, True):
        if enabled:
            obs.enable()
        else:
            obs.disable()
        a.add(1)
    assert obs.ops_timed == 2 and not obs.failed
    sim_cuda.fail("cuEventRecord", CUDA_ERROR_LAUNCH_FAILED, count=-1)
    assert torch.equal(a.mul(2), torch.full((4, 4), 2.0))  # the op is untouched
    sim_cuda.reset()
    assert obs.failed and "cuEventRecord" in obs.error
    obs.remove()
    eng.stop(sec, 0)
    eng.close()


@pytest.mark.skipif(not native_observer_available(), reason="straggler._ops is not built")
def test_native_callback_does_not_run_outside_sections(sim_cuda):
    """The RecordFunction callback is disabled while no profiled section is open: ops there (on
    any thread) pay neither the callback nor the boxing of their inputs."""
    import threading

    from straggler import _ops

    eng = _core.TimerEngine("cuda")
    cap = _SectionCapture(eng, lambda: 0, [].append, per_op=False, native=True)
    a = torch.ones(4, 4)

    def calls_for(fn) -> int:
        before = _ops.callback_calls()
        fn()
        return _ops.callback_calls() - before

    def on_a_thread() -> None:
        t = threading.Thread(target=lambda: [a.add(1) for _ in range(10)])
        t.start()
        t.join()

    assert calls_for(lambda: a.add(1)) == 0  # never enabled yet
    for _ in range(3):
        cap.push()
        assert calls_for(lambda: a.add(1)) >= 1
        cap.pop()
        assert calls_for(lambda: [a.add(1) for _ in range(10)]) == 0
        assert calls_for(on_a_thread) == 0
    assert cap.observer.ops_timed == 3
    cap.close()
    eng.close()


@pytest.mark.skipif(not native_observer_available(), reason="straggler._ops is not built")
def test_native_observer_sees_through_views_and_markers(sim_cuda):
    """Views and metadata ops are not timed; a reshape that copies still times its copy (the
    nested clone is reported on its own); an op inside a FUNCTION-scope record that is not an
    operator (Dynamo's "Torch-Compiled Region" marker) is reported, not swallowed by it (the
    root of a compiled region's missing GPU samples on the H100)."""
    eng = _core.TimerEngine("cuda")
    cap = _SectionCapture(eng, lambda: 0, [].append, per_op=True, native=True)
    x = torch.randn(64, 32)
    cap.push()
    for v in (x.view(-1), x.t(), x.reshape(32, 64), x[1:], x.unsqueeze(0), x.expand(2, 64, 32),
              x.detach(), x.contiguous(), torch.empty_like(x)):
        assert v is not None
    x.sum().item()
    cap.pop()
    eng.flush()
    names = set(cap.timer_names)
    assert [n for n in names if not n.startswith("aten.sum.")] == [], names
    assert len(eng.durations("section1")) == 1  # the sum

    eng.reset()
    big = torch.randn(512, 512).t()  # not contiguous: reshape(-1) must copy
    cap.push()
    flat = big.reshape(-1)
    cap.pop()
    eng.flush()
    assert flat.is_contiguous() and not big.is_contiguous()
    copies = [n for n in cap.timer_names if n.startswith("aten.clone.")]
    assert copies, cap.timer_names
    assert not any(n.startswith("aten.reshape.") for n in cap.timer_names)
    (busy,) = eng.durations("section1")
    (copy,) = eng.durations(copies[0])
    assert busy >= copy > 0  # the copy is in the section's busy time

    # torch.compile wraps the compiled graph's ops in a FUNCTION-scope record without an
    # operator ("Torch-Compiled Region: 0/0"): seen through, so its ops are reported.
    block = torch.compile(lambda y: torch.relu(y @ y) + 1.0, backend="aot_eager")
    sq = torch.randn(16, 16)
    block(sq)  # compiled outside the section
    before = cap.observer.ops_timed
    cap.push()
    block(sq)
    cap.pop()
    assert cap.observer.ops_timed - before >= 2  # mm and relu at least
    assert any(n.startswith("aten.mm.") for n in cap.timer_names), cap.timer_names
    cap.close()
    eng.close()


@pytest.mark.skipif(not native_observer_available(), reason="straggler._ops is not built")
def test_native_and_python_observers_skip_the_same_ops():
    """Both observers take their untimed ops from straggler.timing.untimed_ops: the Python one
    decides per OpOverload, and views it knows from the schema are in the shared list too."""
    from straggler.timing.capture import _decide_timed
    from straggler.timing.untimed_ops import UNTIMED_OPS

    for base in UNTIMED_OPS:
        packet = getattr(torch.ops.aten, base, None)
        if packet is None:
            continue
        for overload in packet.overloads():
            assert not _decide_timed(getattr(packet, overload)), (base, overload)
    assert _decide_timed(torch.ops.aten.add.Tensor) and _decide_timed(torch.ops.aten.clone.default)
    views = {"view", "t", "transpose", "permute", "expand", "slice", "select", "squeeze",
             "unsqueeze", "split", "narrow", "unbind", "as_strided", "alias", "_unsafe_view"}
    assert views <= UNTIMED_OPS


class _MadeOnTheFly:
    """Stands for an OpOverload created at run time (custom ops, torch.compile): a new key."""

    namespace = "custom"
    is_view = False
    _schema = None


def test_the_timing_decision_cache_is_bounded(monkeypatch):
    from straggler.timing import capture as capture_module

    monkeypatch.setattr(capture_module, "_TIMED", {})
    ops = [_MadeOnTheFly() for _ in range(capture_module.TIMED_CACHE_SIZE + 100)]
    assert all(capture_module._is_timed(op) for op in ops)
    cache = capture_module._TIMED
    assert len(cache) == capture_module.TIMED_CACHE_SIZE
    assert ops[0] not in cache and ops[-1] in cache  # the oldest decisions went first
    assert capture_module._is_timed(torch.ops.aten.mm.default)  # still decides correctly
    assert not capture_module._is_timed(torch.ops.aten.view.default)
    assert len(cache) == capture_module.TIMED_CACHE_SIZE


class _RecordingEngine:
    """The engine's busy-time API, recording each call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def timer_id(self, name: str) -> int:
        return 7

    def op_begin(self, stream: int) -> int:
        self.calls.append(("op_begin", stream))
        return 1

    def op_end(self, token: int, tid: int, stream: int) -> None:
        self.calls.append(("op_end", token, tid, stream))

    def comm_end(self, stream: int) -> None:
        self.calls.append(("comm_end", stream))


def test_python_observer_brackets_each_op_once_whatever_its_kind(monkeypatch):
    from straggler.timing import capture as capture_module

    # aten.mm stands for a collective here: no process group is needed to see comm_end.
    monkeypatch.setattr(capture_module, "is_communication_op",
                        lambda func: func is torch.ops.aten.mm.default)
    eng = _RecordingEngine()
    cap = OpCapture(eng, lambda: 0, pytest.fail, native=False)
    a, wrong_shape = torch.ones(4, 4), torch.ones(3)
    cap.push()
    try:
        a + 1
        assert eng.calls == [("op_begin", 0), ("op_end", 1, 7, 0)]
        a.view(16)  # seen through: no engine call
        a @ a  # "a collective": runs untimed, the busy chain restarts after it
        assert eng.calls[2:] == [("comm_end", 0)]
        with pytest.raises(RuntimeError):
            a + wrong_shape  # the op's own error propagates; its timing is still closed
        assert eng.calls[3:] == [("op_begin", 0), ("op_end", 1, 7, 0)]
        cap.pause()
        a + 1  # inside a communication section: untimed
        cap.resume()
        assert eng.calls[5:] == [("comm_end", 0)]
    finally:
        cap.close()
