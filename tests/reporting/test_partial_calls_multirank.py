"""When only some ranks make a detector call, the others' error says which call and how long."""

from __future__ import annotations

import logging
import time

import pytest

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

TIMEOUT_S = 2  # comm_timeout_s of these tests; the skipping rank sleeps well past it
SKIPPER_SLEEP_S = 6


def _initialize_on_rank0_only(rank, world_size):
    from straggler import Detector

    if rank != 0:
        time.sleep(SKIPPER_SLEEP_S)
        return None
    with pytest.raises(RuntimeError) as info:
        Detector.initialize(report_time_interval=0, comm_timeout_s=TIMEOUT_S, telemetry=False)
    assert Detector.core() is None  # stays uninitialized
    return str(info.value)


def test_initialize_on_some_ranks_names_initialize_and_the_timeout():
    message = run_ranks(_initialize_on_rank0_only, 2, timeout_s=60)[0]
    assert message.startswith(f"straggler: rank 0 waited {TIMEOUT_S} s for the other ranks of "
                              "its group (2 ranks) to call Detector.initialize();")


def _report_on_rank0_only(rank, world_size, via_interval):
    from straggler import Detector

    messages = []

    class Catch(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    logging.getLogger("straggler").addHandler(Catch(logging.ERROR))
    Detector.initialize(report_time_interval=0, comm_timeout_s=TIMEOUT_S, telemetry=False)
    for _ in range(2):  # two reports that every rank makes
        with Detector.detection_section("step", profile_cuda=False):
            pass
        Detector.generate_report_if_interval_elapsed() if via_interval \
            else Detector.generate_report()
    if rank == 1:
        time.sleep(SKIPPER_SLEEP_S)  # skips the third
    else:
        third = (Detector.generate_report_if_interval_elapsed() if via_interval
                 else Detector.generate_report())
        assert third is None  # fail open: logged, the detector turns itself off
    Detector.shutdown()
    return messages


@pytest.mark.parametrize("via_interval", [False, True])
def test_a_report_some_ranks_skip_names_the_call_and_the_report(via_interval):
    messages = run_ranks(_report_on_rank0_only, 2, via_interval, timeout_s=60)[0]
    assert len(messages) == 1
    call = ("Detector.generate_report_if_interval_elapsed() on iteration 3 (report 3)"
            if via_interval else "Detector.generate_report() (report 3)")
    assert f"straggler: rank 0 waited {TIMEOUT_S} s for the other ranks of its group (2 ranks) " \
           f"to call {call};" in messages[0], messages[0]
