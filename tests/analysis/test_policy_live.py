"""The policy in live runs: 3 gloo ranks in lock step (a collective each step, as DDP), one of
them mildly slower in its compute section or none; the detector's own reports decide."""

from __future__ import annotations

import time

import pytest

from _multirank import run_ranks

# serial: `make test` runs these alone (its serial pass): a live verdict within a time budget
# is what they assert, and a neighbouring multi-rank test's load delays it.
pytestmark = [pytest.mark.multirank, pytest.mark.serial]

WORK = 8  # matrix products per step on a healthy rank
MAX_S = 25.0  # the run stops at its verdict, at the latest after this long


def _train(rank: int, world_size: int, slow_rank: int | None, factor: float,
           reports_wanted: int) -> dict:
    import torch
    import torch.distributed as dist
    from straggler import Detector

    torch.set_num_threads(1)
    Detector.initialize(report_time_interval=0.5, comm_timeout_s=30, telemetry=False)
    a = torch.randn(96, 96)
    reps = round(WORK * factor) if rank == slow_rank else WORK
    sync, stop = torch.zeros(1), torch.zeros(1)
    confirmed: list[list[int]] = []
    start = time.monotonic()
    try:
        while True:
            with Detector.detection_section("forward", profile_cuda=False):
                b = a
                for _ in range(reps):
                    b = torch.mm(b, a) * 0.01
            dist.all_reduce(sync)  # the step's collective: every rank waits for the slowest
            report = Detector.generate_report_if_interval_elapsed()
            if report is not None:
                confirmed.append(sorted(s.rank for s in report.confirmed))
            done = (confirmed and confirmed[-1]) or len(confirmed) >= reports_wanted \
                or time.monotonic() - start > MAX_S
            stop[0] = float(rank == 0 and bool(done))
            dist.broadcast(stop, src=0)
            if stop[0] > 0:
                break
    finally:
        Detector.shutdown()
    return {"confirmed": confirmed, "seconds": time.monotonic() - start}


def test_a_mild_persistent_straggler_is_confirmed_live():
    out = run_ranks(_train, 3, 2, 1.25, 40, timeout_s=150)[0]
    # 1.25x the compute of its peers, every step: confirmed, and nobody else ever is.
    assert out["confirmed"] and out["confirmed"][-1] == [2], out
    assert all(c in ([], [2]) for c in out["confirmed"]), out


def test_a_clean_live_run_confirms_nobody():
    out = run_ranks(_train, 3, None, 1.0, 12, timeout_s=150)[0]
    assert len(out["confirmed"]) >= 12 or out["seconds"] > MAX_S, out
    assert not any(out["confirmed"]), out
