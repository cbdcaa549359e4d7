"""The attached worker's boundaries, sections and patches, on 2 gloo ranks (no subprocess CLI).
"""

from __future__ import annotations

import pytest

from _multirank import run_ranks

pytestmark = pytest.mark.multirank


def _boundaries(rank: int, world_size: int) -> dict:
    import torch
    import torch.distributed as dist
    from straggler.attach.settings import AttachSettings
    from straggler.attach.worker import AttachedJob
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    original_next = _BaseDataLoaderIter.__next__
    original_all_reduce = dist.all_reduce
    job = AttachedJob(AttachSettings(report_interval_s=60.0, quiet=True))
    tracker = lambda: job.core.cycle.tracker  # noqa: E731 - replaced on the switch
    out: dict = {}
    t = torch.ones(1)
    for _ in range(3):  # the first collective opens the first step: 2 steps counted
        dist.all_reduce(t)
    out["world"] = tracker().current_iter
    dist.all_gather_object([None] * world_size, rank)  # nested all_gather: one boundary
    out["nested"] = tracker().current_iter
    sub = dist.new_group([0, 1])
    dist.all_reduce(t, group=sub)  # not the default group: no boundary
    out["subgroup"] = tracker().current_iter
    net = torch.nn.Linear(2, 1)
    first = torch.optim.SGD(net.parameters(), lr=0.1)
    second = torch.optim.SGD(net.parameters(), lr=0.1)
    first.step()  # switches to the optimizer, the collectives are put back
    out["switch"] = (job.mode, dist.all_reduce is original_all_reduce, tracker().current_iter)
    dist.all_reduce(t)
    second.step()  # another optimizer: no boundary
    first.step()
    out["after"] = tracker().current_iter
    for _batch in DataLoader(TensorDataset(torch.zeros(3, 2)), batch_size=1):
        pass
    out["dataloader_samples"] = len(job.core.sections["dataloader"].samples)
    out["step_samples"] = len(job.core.sections["step"].samples)
    job.close()
    first.step()
    out["closed"] = (_BaseDataLoaderIter.__next__ is original_next, job.core.enabled)
    out["failure"] = _one_rank_fails(rank)
    return out


def test_boundaries_sections_restore_and_failing_open_together():
    """One pair of ranks (spawning costs more than the checks): the boundaries, then a second
    attached detector whose rank 1 fails: both ranks turn off at the next report, no wait."""
    outs = run_ranks(_boundaries, 2)
    for out in outs:
        assert out["world"] == 2
        assert out["nested"] == 3
        assert out["subgroup"] == 3
        # The first optimizer step ends the 4th step, counted against a fresh interval.
        assert out["switch"] == ("optimizer", True, 4)
        assert out["after"] == 5
        assert out["dataloader_samples"] == 3  # the 4th __next__ raised StopIteration
        assert out["step_samples"] == 5  # one per counted step
        assert out["closed"] == (True, False)
    failures = [out["failure"] for out in outs]
    assert [f["enabled"] for f in failures] == [False, False]
    assert all(f["s"] < 10 for f in failures)  # no collective timeout (20 s) was waited out
    assert 1 <= failures[0]["reports"] < 11


def _one_rank_fails(rank: int) -> dict:
    import time

    import torch
    from straggler.attach.settings import AttachSettings
    from straggler.attach.worker import AttachedJob

    job = AttachedJob(AttachSettings(report_interval_s=0.0, quiet=True, comm_timeout_s=20))
    net = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    start = time.monotonic()
    for i in range(12):
        if i == 5 and rank == 1:
            job.core.fail(RuntimeError("an internal error on rank 1"))
        opt.step()
    out = {"enabled": job.core.enabled, "s": time.monotonic() - start, "reports": job.reports}
    job.close()
    return out


STARTUP_S = 2.5  # the start-up after the first collectives, before the loop


def _startup_after_a_collective(rank: int, world_size: int, log: str) -> int:
    import time

    import torch
    import torch.distributed as dist
    from straggler.attach.settings import AttachSettings
    from straggler.attach.worker import AttachedJob

    job = AttachedJob(AttachSettings(report_interval_s=0.3, quiet=True))
    for _ in range(2):  # the first collective opens a step, the second ends it: the first call
        dist.barrier()
    time.sleep(STARTUP_S)  # then start-up: the model, the data
    net = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(40):  # the loop: the boundary moves to the optimizer
        time.sleep(0.02)
        opt.step()
    reports = job.reports
    job.close()
    return reports


def test_the_first_window_leaves_out_start_up_after_an_early_collective(tmp_path, monkeypatch):
    # A barrier right after init_process_group opened the report log's first window: the
    # start-up until the loop's first optimizer step was counted in the first window_s.
    log = tmp_path / "r.jsonl"
    monkeypatch.setenv("STRAGGLER_REPORT_LOG", str(log))
    assert run_ranks(_startup_after_a_collective, 2, str(log))[0] >= 1
    import json

    first = json.loads(log.read_text().splitlines()[0])
    # 40 steps of 20 ms after the switch, reports every 0.3 s: the first window is a fraction
    # of a second (1.2 s was seen once at load 12); with the start-up it is over STARTUP_S.
    assert first["window_s"] < 0.8 * STARTUP_S, first
    assert first["window_iterations"] <= 40, first
