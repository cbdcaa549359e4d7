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
# 192 x 192 (about 2 ms of work a step): in these gloo runs rank 0 takes a few µs more of its
# own a step than its peers (its compute too, without the detector; cause not found): 1.5-5 % of
# the fast steps' own time at 96 x 96, near the policy's 4 % gate (CI once confirmed it, from
# the first report's early windows), under 1 % at 192 x 192. 25 % more work stays far above it.
DIM = 192
MAX_S = 25.0  # the run stops at its verdict, at the latest after this long


def _train(rank: int, world_size: int, slow_rank: int | None, factor: float,
           reports_wanted: int) -> dict:
    import torch
    import torch.distributed as dist
    from straggler import Detector

    torch.set_num_threads(1)
    Detector.initialize(report_time_interval=0.5, comm_timeout_s=30, telemetry=False)
    a = torch.randn(DIM, DIM)
    reps = round(WORK * factor) if rank == slow_rank else WORK
    sync, stop = torch.zeros(1), torch.zeros(1)
    confirmed: list[list[int]] = []
    reasons: list[dict[int, dict[str, str]]] = []  # why, for a failure's message
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
                reasons.append({r: dict(st.reasons) for r, st in report.straggler_states.items()
                                if st.reasons})
            done = (confirmed and confirmed[-1]) or len(confirmed) >= reports_wanted \
                or time.monotonic() - start > MAX_S
            stop[0] = float(rank == 0 and bool(done))
            dist.broadcast(stop, src=0)
            if stop[0] > 0:
                break
    finally:
        Detector.shutdown()
    return {"confirmed": confirmed, "seconds": time.monotonic() - start, "reasons": reasons}


def test_a_mild_persistent_straggler_is_confirmed_live():
    out = run_ranks(_train, 3, 2, 1.25, 40, timeout_s=150)[0]
    # 1.25x the compute of its peers, every step: confirmed, and nobody else ever is.
    assert out["confirmed"] and out["confirmed"][-1] == [2], out
    assert all(c in ([], [2]) for c in out["confirmed"]), out


def test_a_clean_live_run_confirms_nobody():
    out = run_ranks(_train, 3, None, 1.0, 12, timeout_s=150)[0]
    assert len(out["confirmed"]) >= 12 or out["seconds"] > MAX_S, out
    assert not any(out["confirmed"]), out
