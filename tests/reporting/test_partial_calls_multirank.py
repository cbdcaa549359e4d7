"""When only some ranks make a detector call, the others' error says which call and how long.

The skipping rank stays alive (and in the detector's group) until rank 0's call has failed: it
waits for rank 0's word in the job's store, not for a fixed time. Had it gone on after a sleep
(shut down, exited) while rank 0, slowed down on a loaded machine, was still waiting, rank 0
would have seen a peer leave ("lost contact") instead of a timeout.
"""

from __future__ import annotations

import datetime
import logging

import pytest

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

TIMEOUT_S = 2  # comm_timeout_s of these tests
DONE_KEY = "test/rank0-done"


def _store():
    import torch.distributed as dist

    return dist.distributed_c10d._get_default_store()  # the store run_ranks' group was made on


def _skip_until_rank0_is_done():
    _store().wait([DONE_KEY], datetime.timedelta(seconds=60))


def _initialize_on_rank0_only(rank, world_size):
    from straggler import Detector

    if rank != 0:
        _skip_until_rank0_is_done()
        return None
    with pytest.raises(RuntimeError) as info:
        Detector.initialize(report_time_interval=0, comm_timeout_s=TIMEOUT_S, telemetry=False)
    _store().set(DONE_KEY, "1")
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
        _skip_until_rank0_is_done()  # skips the third
    else:
        third = (Detector.generate_report_if_interval_elapsed() if via_interval
                 else Detector.generate_report())
        _store().set(DONE_KEY, "1")
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
