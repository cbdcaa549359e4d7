"""The collective observer (straggler.timing.collectives) on real gloo ranks: every way of
issuing a collective is seen, with the same group names and indices on every member, the waits
point at the late rank, the detector's own collectives are not counted, and nothing is observed
without a detector. One spawn of two ranks runs every scenario (spawning is the slow part).
"""

from __future__ import annotations

import time

import pytest

from _multirank import run_ranks

# serial: `make test` runs it alone (its serial pass): the waits it measures must match the
# injected lateness, and a neighbouring multi-rank test's load adds waits of its own.
pytestmark = [pytest.mark.multirank, pytest.mark.serial]

LATE_S = 0.15  # rank 1's delay before a collective: far above gloo's latency on a loaded box


def _ranks(rank, world_size):
    import torch
    import torch.distributed as dist
    import torch.distributed._functional_collectives as fc
    from straggler import Detector
    from straggler.timing import collectives

    out = {}
    x = torch.ones(4)
    dist.all_reduce(x)  # before the detector: not observed
    out["before"] = (collectives.is_observing(), collectives.progress())
    Detector.initialize(report_time_interval=0, comm_timeout_s=30)
    pair = dist.new_group([0, 1])

    if rank == 1:
        time.sleep(LATE_S)
    dist.all_reduce(x)  # 1 on the world: rank 1 late
    if rank == 1:
        time.sleep(LATE_S)
    work = dist.all_reduce(x, group=pair, async_op=True)  # 1 on the pair: rank 1 late
    if rank == 0:  # inside it until rank 1 arrives
        inside = collectives.progress()[pair.group_name]
        out["inside"] = (inside.inside, inside.inside_since_s, time.monotonic())
    work.wait()
    dist.barrier()
    if rank == 0:
        dist.send(x, 1)
    else:
        dist.recv(x, 0)
    fc.all_reduce(x, "sum", pair).wait()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
    model(torch.ones(2, 4)).sum().backward()
    with torch.inference_mode():
        dist.all_reduce(torch.ones(2))
    time.sleep(0.05)  # the last futures' callbacks
    out["progress"] = collectives.progress()
    out["window"] = {w.group: w for w in collectives.take_window()}
    Detector.generate_report()  # the detector's own collectives: not counted
    out["after_report"] = collectives.progress()
    Detector.shutdown()
    dist.all_reduce(x)
    out["after_shutdown"] = (collectives.is_observing(), collectives.error())
    # A new start: indices count from it; a group shows once it is used again.
    Detector.initialize(report_time_interval=0, comm_timeout_s=30)
    out["restarted_empty"] = collectives.progress()
    dist.all_reduce(x)
    time.sleep(0.05)
    out["restarted"] = collectives.progress()
    from straggler import _ops  # the observer's cost without a backend (benchmarks/)
    out["bench"] = (_ops.collectives_bench(100, False), _ops.collectives_bench(100, True))
    out["after_bench"] = collectives.progress()  # the bench's group is not reported
    Detector.shutdown()
    out["pair"] = pair.group_name
    out["world"] = dist.group.WORLD.group_name
    return out


def test_every_collective_is_seen_with_agreed_groups_indices_and_waits():
    r0, r1 = run_ranks(_ranks, 2, timeout_s=120)
    world, pair = r0["world"], r0["pair"]
    assert r0["before"] == (False, {})
    p0, p1 = r0["progress"], r1["progress"]
    assert set(p0) == set(p1) == {world, pair, f"{world}:p2p:0-1"}
    for name in p0:  # every member agrees on the group's sequence
        assert (p0[name].index, p0[name].size) == (p1[name].index, p1[name].size), name
        assert p0[name].completed == p0[name].index and not p0[name].inside
    assert p0[pair].index == 2  # the async all-reduce and the functional one
    assert p0[world].index >= 5  # all_reduce, barrier, DDP's broadcasts and bucket, inference
    assert (p0[f"{world}:p2p:0-1"].op, p1[f"{world}:p2p:0-1"].op) == ("send", "recv_")
    inside, since, now = r0["inside"]
    assert inside and 0 <= now - since < LATE_S

    # Rank 1 was late twice: rank 0 waited about LATE_S each time. (Only the pair's two
    # collectives are compared: on a loaded machine either rank may stall in DDP's set-up.)
    w0, w1 = r0["window"], r1["window"]
    assert w0[world].wait_sum_s > 0.8 * LATE_S and w0[pair].wait_sum_s > 0.8 * LATE_S
    assert w1[pair].wait_sum_s < w0[pair].wait_sum_s - 0.5 * LATE_S
    assert sum(w0[world].histogram) == w0[world].count
    assert r0["after_report"] == p0  # the report's own collectives are not observed
    assert r0["after_shutdown"] == (False, "")
    for r in (r0, r1):
        assert r["restarted_empty"] == {}
        again = r["restarted"]
        assert set(again) == {world} and (again[world].index, again[world].completed) == (1, 1)
        assert all(ns > 0 for ns in r["bench"]) and r["after_bench"] == again
