"""TimerEngine error behaviour: driver failures, a missing driver, bad arguments, misuse."""

from __future__ import annotations

import inspect
import threading
import time

import pytest
from straggler import _core

from sim.simcuda import (
    CUDA_ERROR_ILLEGAL_ADDRESS,
    CUDA_ERROR_INVALID_CONTEXT,
    CUDA_ERROR_LAUNCH_FAILED,
    CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_ERROR_UNKNOWN,
    run_python,
)


def assert_usable(engine: _core.TimerEngine, sim, name: str = "after") -> None:
    """A full start/stop/flush cycle works and stores exactly one new sample."""
    before = engine.durations(name).size if name in engine.summaries()[0] else 0
    engine.start(name)
    sim.enqueue(0, 2.0)
    engine.stop(name)
    engine.flush()
    assert engine.durations(name).size == before + 1
    assert engine.pending() == 0


@pytest.fixture
def engine(sim_cuda):
    eng = _core.TimerEngine("cuda")
    yield eng
    eng.close()


# ---- Injected driver errors: a CudaError naming the call and the driver's error, engine usable ---

def test_cuda_error_is_a_runtime_error():
    assert issubclass(_core.CudaError, RuntimeError)


def test_event_create_failure_in_start(engine, sim_cuda):
    sim_cuda.fail("cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY)
    oom = r"cuEventCreate.*CUDA_ERROR_OUT_OF_MEMORY \(out of memory\)"
    with pytest.raises(_core.CudaError, match=oom):
        engine.start("a")
    engine.start("a")  # the failed start left nothing open
    engine.stop("a")
    assert_usable(engine, sim_cuda)


def test_event_record_failure_in_start(engine, sim_cuda):
    engine.start("warm")
    engine.stop("warm")
    sim_cuda.fail("cuEventRecord", CUDA_ERROR_LAUNCH_FAILED)
    with pytest.raises(_core.CudaError, match=r"cuEventRecord.*CUDA_ERROR_LAUNCH_FAILED"):
        engine.start("a")
    assert engine.pending() == 1
    assert_usable(engine, sim_cuda, "a")


def test_event_record_failure_in_stop_drops_the_pair(engine, sim_cuda):
    engine.start("a")
    sim_cuda.fail("cuEventRecord", CUDA_ERROR_ILLEGAL_ADDRESS)
    with pytest.raises(_core.CudaError, match=r"cuEventRecord.*CUDA_ERROR_ILLEGAL_ADDRESS"):
        engine.stop("a")
    assert engine.pending() == 0
    assert_usable(engine, sim_cuda, "a")  # "a" can start again
    assert engine.durations("a").size == 1


def test_event_query_failure_in_harvest_drops_that_pair(engine, sim_cuda):
    for name in ("bad", "good"):
        engine.start(name)
        engine.stop(name)
    engine.flush()
    engine.start("bad")
    engine.stop("bad")
    engine.start("good")
    engine.stop("good")
    sim_cuda.fail("cuEventQuery", CUDA_ERROR_LAUNCH_FAILED)
    with pytest.raises(_core.CudaError, match=r"cuEventQuery.*CUDA_ERROR_LAUNCH_FAILED"):
        engine.harvest()
    assert engine.pending() == 1  # the failed pair is dropped, the other kept
    assert engine.harvest() == 1
    assert engine.durations("bad").size == 1
    assert engine.durations("good").size == 2
    assert_usable(engine, sim_cuda)


def test_elapsed_time_failure_in_summaries(engine, sim_cuda):
    engine.start("a")
    engine.stop("a")
    sim_cuda.fail("cuEventElapsedTime", CUDA_ERROR_UNKNOWN)
    with pytest.raises(_core.CudaError, match=r"cuEventElapsedTime.*CUDA_ERROR_UNKNOWN"):
        engine.summaries()
    assert engine.pending() == 0
    assert_usable(engine, sim_cuda)


def test_event_synchronize_failure_in_flush_keeps_the_pair(engine, sim_cuda):
    engine.start("a")
    sim_cuda.enqueue(0, 20.0)
    engine.stop("a")
    sim_cuda.fail("cuEventSynchronize", CUDA_ERROR_LAUNCH_FAILED)
    with pytest.raises(_core.CudaError, match=r"cuEventSynchronize.*CUDA_ERROR_LAUNCH_FAILED"):
        engine.flush()
    assert engine.pending() == 1
    engine.flush()
    assert engine.durations("a").size == 1
    assert_usable(engine, sim_cuda)


def test_context_failure_in_a_new_thread(engine, sim_cuda):
    errors: list[BaseException] = []

    def body() -> None:  # a fresh thread has no current context: the engine sets its own
        sim_cuda.fail("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT)
        try:
            engine.start("t")
        except _core.CudaError as e:
            errors.append(e)
        engine.start("t")
        engine.stop("t")

    th = threading.Thread(target=body)
    th.start()
    th.join(timeout=60)
    assert not th.is_alive()
    assert len(errors) == 1
    assert "cuCtxSetCurrent" in str(errors[0]) and "CUDA_ERROR_INVALID_CONTEXT" in str(errors[0])
    engine.flush()
    assert engine.durations("t").size == 1


def test_context_retain_failure_raises_for_cuda_and_falls_back_for_auto(sim_cuda, capfd):
    sim_cuda.fail("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY)
    with pytest.raises(_core.CudaError, match=r"cuDevicePrimaryCtxRetain.*OUT_OF_MEMORY"):
        _core.TimerEngine("cuda")
    sim_cuda.fail("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY)
    with _core.TimerEngine("auto") as eng:
        assert eng.backend == "host"
    assert "cuDevicePrimaryCtxRetain" in capfd.readouterr().err
    with _core.TimerEngine("auto") as eng:  # the failure was transient
        assert eng.backend == "cuda"


def test_destroy_failure_at_close_is_logged_not_raised(sim_cuda, capfd):
    eng = _core.TimerEngine("cuda")
    eng.start("a")
    eng.stop("a")
    eng.flush()
    sim_cuda.fail("cuEventDestroy_v2", CUDA_ERROR_LAUNCH_FAILED, count=-1)
    eng.close()
    assert eng.closed
    err = capfd.readouterr().err
    assert "[straggler]" in err and "cuEventDestroy" in err and "CUDA_ERROR_LAUNCH_FAILED" in err
    assert sim_cuda.primary_ctx_refs(0) == 0


def test_init_failure_makes_cuda_unavailable(sim_cuda):
    sim_cuda.fail("cuInit", CUDA_ERROR_UNKNOWN)
    ok, reason = _core.cuda_status()
    assert not ok
    assert "cuInit" in reason and "CUDA_ERROR_UNKNOWN" in reason


def test_not_ready_message_says_what_to_do(engine, sim_cuda):
    sim_cuda.fail("cuEventQuery", 600)  # CUDA_ERROR_NOT_READY is normal there: not an error
    engine.start("a")
    engine.stop("a")
    assert engine.harvest() == 0
    assert engine.pending() == 1
    engine.flush()
    assert engine.pending() == 0


# ---- No driver, no device ------------------------------------------------------------------------

NO_CUDA_SNIPPET = """
from straggler import _core
ok, reason = _core.cuda_status()
assert not ok
print(reason)
with _core.TimerEngine() as eng:
    assert eng.backend == "host", eng.backend
    eng.start("a"); eng.stop("a")
    assert eng.durations("a").size == 1
try:
    _core.TimerEngine("cuda")
except _core.CudaError as e:
    print("CudaError:", e)
else:
    raise SystemExit("no CudaError")
"""


def test_absent_driver_is_unavailable_with_reason_and_auto_uses_host():
    out = run_python(NO_CUDA_SNIPPET, STRAGGLER_LIBCUDA="/nonexistent/libcuda.so.1")
    assert "cannot load the CUDA driver '/nonexistent/libcuda.so.1'" in out
    assert "STRAGGLER_LIBCUDA" in out
    assert "CudaError: CUDA backend unavailable: cannot load" in out


def test_zero_devices_is_unavailable_with_reason_and_auto_uses_host():
    out = run_python(NO_CUDA_SNIPPET, SIMCUDA_DEVICE_COUNT=0)
    assert "cuInit" in out and "CUDA_ERROR_NO_DEVICE" in out
    assert "CudaError: CUDA backend unavailable" in out


def test_missing_device_ordinal(sim_cuda):
    ok, reason = _core.cuda_status(3)
    assert not ok and "`device=3`" in reason and "1 visible" in reason
    with pytest.raises(_core.CudaError, match="device=3"):
        _core.TimerEngine("cuda", device=3)


# ---- Bad arguments and misuse --------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"backend": "gpu"}, r"`backend='gpu'` must be one of 'auto', 'cuda', 'host'"),
        ({"capacity": 0}, r"`capacity=0` must be an integer"),
        ({"capacity": -5}, r"`capacity=-5`"),
        ({"capacity": 2**40}, r"`capacity=1099511627776`"),
        ({"device": -1}, r"`device=-1` must be a non-negative"),
    ],
)
def test_bad_constructor_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _core.TimerEngine(**({"backend": "host"} | kwargs))


def test_unknown_timer_id_and_bad_timer_type():
    with _core.TimerEngine("host") as eng:
        with pytest.raises(ValueError, match=r"`timer=7` is not a timer id"):
            eng.start(7)
        with pytest.raises(ValueError, match=r"`timer=7` is not a timer id"):
            eng.durations(7)
        with pytest.raises(TypeError, match="`timer` must be an int id or a str name"):
            eng.start(1.5)
        with pytest.raises(ValueError, match="non-empty"):
            eng.timer_id("")


def test_start_twice_in_one_thread_raises_naming_the_timer():
    with _core.TimerEngine("host") as eng:
        eng.start("fwd")
        with pytest.raises(ValueError, match="timer 'fwd' is already started in this thread"):
            eng.start("fwd")
        eng.start("bwd")  # other names nest freely
        eng.stop("bwd")
        eng.stop("fwd")
        assert eng.durations("fwd").size == 1


def test_stop_without_start_raises_naming_the_timer():
    with _core.TimerEngine("host") as eng:
        with pytest.raises(ValueError, match="timer 'opt' was not started in this thread"):
            eng.stop("opt")
        eng.start("opt")
        eng.stop("opt")
        with pytest.raises(ValueError, match="timer 'opt' was not started"):
            eng.stop("opt")


def test_closed_engine_refuses_timing_but_keeps_its_samples():
    eng = _core.TimerEngine("host")
    eng.start("a")
    eng.stop("a")
    eng.close()
    with pytest.raises(RuntimeError, match="closed"):
        eng.start("a")
    assert eng.harvest() == 0
    eng.flush()
    names, table = eng.summaries()
    assert names == ["a"] and table.shape == (1, 7)


def test_start_stop_arguments_by_keyword_and_their_errors():
    with _core.TimerEngine("host") as eng:
        eng.start(timer="a", stream=0)
        eng.stop(stream=3, timer="a")
        assert eng.durations("a").size == 1
        with pytest.raises(ValueError, match=r"`stream=-1` must be a CUstream handle"):
            eng.start("a", -1)
        with pytest.raises(ValueError, match=r"`stream='0'`"):
            eng.start("a", "0")
        with pytest.raises(TypeError, match="missing required argument 'timer'"):
            eng.start()
        with pytest.raises(TypeError, match="at most 2 arguments"):
            eng.stop("a", 0, 0)
        with pytest.raises(TypeError, match="unexpected keyword argument 'name'"):
            eng.start(name="a")
        with pytest.raises(TypeError, match="multiple values for argument 'timer'"):
            eng.start("a", timer="a")
        assert eng.pending() == 0 and eng.durations("a").size == 1  # nothing half-done
        eng.start("a")  # and nothing left open
        eng.stop("a")
        assert str(inspect.signature(eng.start)) == "(timer, stream=0)"


def test_start_on_an_engine_whose_init_never_ran_raises():
    eng = _core.TimerEngine.__new__(_core.TimerEngine)
    with pytest.raises(TypeError):
        eng.start("a")


def test_pairs_dropped_by_another_thread_during_a_flush_are_destroyed_after_it(engine, sim_cuda):
    """flush() waits on its pairs' events without the engine lock. If another thread's harvest()
    drops those pairs meanwhile (a driver error), their events must outlive the flush: waiting
    on a destroyed event is a use after free in a real driver (the simulator says
    CUDA_ERROR_INVALID_HANDLE, whether the event goes before or during the wait).

    The order is fixed by construction, not by timing, so a loaded machine cannot reorder it:
    the work never ends by itself within the test (an hour), the harvests start once the flush
    is inside cuEventSynchronize, and the work ends (sim_cuda.complete) only after them."""
    for name in ("first", "second"):
        engine.start(name)
        sim_cuda.enqueue(0, 3_600_000.0)  # until sim_cuda.complete()
        engine.stop(name)
    errors: list[BaseException] = []

    def flusher() -> None:
        try:
            engine.flush()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    th = threading.Thread(target=flusher)
    th.start()
    try:
        # The flush has collected its events and waits on "first", holding no engine lock.
        deadline = time.monotonic() + 60
        while sim_cuda.calls("cuEventSynchronize") == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert sim_cuda.calls("cuEventSynchronize") == 1 and th.is_alive()
        sim_cuda.fail("cuEventQuery", CUDA_ERROR_LAUNCH_FAILED, count=2)
        for _ in range(2):  # each failed harvest drops one pair
            with pytest.raises(_core.CudaError, match="cuEventQuery"):
                engine.harvest()
        assert engine.pending() == 0
        assert sim_cuda.calls("cuEventDestroy_v2") == 0  # not while the flush waits on them
    finally:
        sim_cuda.complete()  # the work ends: the flush's waits return
        th.join(timeout=60)
    assert not th.is_alive() and errors == []
    assert sim_cuda.calls("cuEventDestroy_v2") == 4  # the dropped pairs' events, after the flush
    assert_usable(engine, sim_cuda)
