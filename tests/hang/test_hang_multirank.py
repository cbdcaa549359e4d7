"""Hang detection on real gloo ranks: rank 2 stops in five ways, rank 0 names it.

Each test runs 4 ranks with ``hang_timeout_s=HANG_TIMEOUT_S``. Rank 2 gets stuck in a function
named ``stuck_*``; rank 0's watchdog reports a finding, a helper thread on rank 0 records it and
sets ``test/release`` in the job's store, which lets rank 2 go on, so that every rank finishes.
Each asserts the rank named, its section, a frame of the stuck function in its stack, and a
detection within the timeout plus `MARGIN_S` of the moment rank 2 got stuck.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from typing import Any

import pytest

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

HANG_TIMEOUT_S = 3.0
# Detection is the timeout + up to ~3 watchdog ticks (1 s each) + a stack round trip; the
# machine is shared and loaded, so the bound is generous.
MARGIN_S = 12.0
RUN_TIMEOUT_S = 150.0  # the whole job: 37 s near idle (-n 2), 54 s at -n 3 and load 14
STUCK_RANK = 2


def _store() -> Any:
    import torch.distributed as dist

    return dist.distributed_c10d._get_default_store()


PHASES = ("sleep", "read", "skip", "stall", "killed")  # one job; the killed rank goes last


def _released(phase: str) -> bool:
    return bool(_store().check([f"test/release/{phase}"]))


def _record_findings_then_release(out: dict[str, Any]) -> None:
    """Rank 0: per phase, wait for the next finding of its watchdog, keep it, release."""
    from straggler import Detector

    store = _store()
    seen = 0
    for phase in PHASES:
        while not store.check([f"test/stuck_at/{phase}"]):
            time.sleep(0.05)
        end = time.monotonic() + HANG_TIMEOUT_S + MARGIN_S + 10
        while time.monotonic() < end:
            core = Detector.core()
            hang = core.hang if core is not None else None
            if hang is not None and len(hang.findings) > seen:
                finding = hang.findings[seen]
                seen += 1
                out[phase] = {"found_at": time.time(), "finding": finding.to_dict(),
                              "text": finding.format(),
                              "stuck_at": float(store.get(f"test/stuck_at/{phase}"))}
                break
            time.sleep(0.1)
        store.set(f"test/release/{phase}", "1")


def stuck_in_sleep() -> None:
    while not _released("sleep"):  # "forever", until the test has its finding
        time.sleep(0.2)


def stuck_in_read() -> None:
    r, w = os.pipe()

    def unblock() -> None:
        while not _released("read"):
            time.sleep(0.2)
        os.write(w, b"x")

    threading.Thread(target=unblock, daemon=True).start()
    os.read(r, 1)  # blocks (GIL released) until the test has its finding


def stuck_in_checkpoint() -> None:
    while not _released("stall"):  # every rank: a long checkpoint, nobody is late
        time.sleep(0.2)


def stuck_in_other_barrier(group: Any) -> None:
    import torch.distributed as dist

    dist.barrier(group=group)  # rank 3 is not there: it waits in the collective we skipped


def _join_skipped_barrier(group: Any) -> None:
    """Rank 3, from a helper thread once released: meet rank 2's barrier, so that rank 2
    goes on and joins (late) the all_reduce rank 3's training thread waits in."""
    import torch.distributed as dist

    while not _released("skip"):
        time.sleep(0.2)
    dist.barrier(group=group)


def _mark_stuck(phase: str) -> None:
    _store().set(f"test/stuck_at/{phase}", str(time.time()))


def _worker(rank: int, world_size: int, log_dir: str) -> dict[str, Any]:
    import torch
    import torch.distributed as dist
    from straggler import Detector

    sub = dist.new_group([2, 3])
    Detector.initialize(hang_timeout_s=HANG_TIMEOUT_S, report_log=f"{log_dir}/report.jsonl",
                        telemetry=False, report_time_interval=3600)
    out: dict[str, Any] = {}
    helper = None
    if rank == 0:
        helper = threading.Thread(target=_record_findings_then_release, args=(out,),
                                  daemon=True)
        helper.start()
    t = torch.ones(4)

    def steps(n: int = 2) -> None:
        for _ in range(n):
            with Detector.detection_section("step"):
                dist.all_reduce(t)

    steps()
    # (a) rank 2 sleeps inside section "data"
    if rank == STUCK_RANK:
        _mark_stuck("sleep")
        with Detector.detection_section("data"):
            stuck_in_sleep()
    steps()
    # (b) rank 2 blocks in a pipe read inside section "data"
    if rank == STUCK_RANK:
        _mark_stuck("read")
        with Detector.detection_section("data"):
            stuck_in_read()
    steps()
    # (d) rank 2 skips the all_reduce the others enter and waits in a barrier of its subgroup
    if rank == STUCK_RANK:
        _mark_stuck("skip")
        with Detector.detection_section("step"):
            stuck_in_other_barrier(sub)
    elif rank == 3:
        threading.Thread(target=_join_skipped_barrier, args=(sub,), daemon=True).start()
    steps(1)  # rank 2 joins this one late, after the finding
    steps()
    # (e) every rank spends a long time in section "checkpoint"
    if rank == 0:
        _mark_stuck("stall")
    with Detector.detection_section("checkpoint"):
        stuck_in_checkpoint()
    steps()
    # (c) rank 2 is SIGKILLed inside section "step"
    if rank == STUCK_RANK:
        _mark_stuck("killed")
        with Detector.detection_section("step"):
            time.sleep(2.5)  # working in "step" (long enough to be published), then killed
            os.kill(os.getpid(), signal.SIGKILL)
    with contextlib.suppress(RuntimeError):  # gloo notices the dead peer; NCCL would wait
        dist.all_reduce(t)
    while not _released("killed"):
        time.sleep(0.2)
    if helper is not None:
        helper.join()
    Detector.shutdown()
    return out


@pytest.fixture(scope="module")
def job(tmp_path_factory: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One 4-rank job going through every phase; rank 0's findings by phase, the report log."""
    log_dir = tmp_path_factory.mktemp("hang")
    results = run_ranks(_worker, 4, str(log_dir), timeout_s=RUN_TIMEOUT_S,
                        may_die=[STUCK_RANK])
    with open(log_dir / "report.jsonl") as f:
        records = [json.loads(line) for line in f]
    return results[0], records


def _phase(job: tuple[dict[str, Any], list[dict[str, Any]]], phase: str
           ) -> tuple[dict[str, Any], str]:
    out = job[0].get(phase)
    assert out is not None, f"rank 0 reported no finding within the deadline ({phase})"
    latency = out["found_at"] - out["stuck_at"]
    assert latency <= HANG_TIMEOUT_S + MARGIN_S, (latency, out["text"])
    return out["finding"], out["text"]


def _only_culprit(finding: dict[str, Any]) -> dict[str, Any]:
    assert finding["kind"] == "hang", finding
    assert [c["rank"] for c in finding["culprits"]] == [STUCK_RANK], finding
    return finding["culprits"][0]


def test_rank_sleeping_in_a_section_is_named_with_its_stack(job: Any) -> None:
    finding, text = _phase(job, "sleep")
    c = _only_culprit(finding)
    assert c["state"] == "not arrived"
    assert c["section"] == "data"
    assert "stuck_in_sleep" in c["stack"]
    assert finding["wait"]["op"] == "all_reduce"
    assert finding["waiting"] == [0, 1, 3]
    assert "rank 2" in text and "stuck_in_sleep" in text


def test_rank_blocked_in_a_pipe_read_is_named_with_its_stack(job: Any) -> None:
    finding, _ = _phase(job, "read")
    c = _only_culprit(finding)
    assert c["section"] == "data"
    assert "stuck_in_read" in c["stack"]
    assert "os.read" in c["stack"]


def test_rank_that_skipped_a_collective_is_named(job: Any) -> None:
    finding, text = _phase(job, "skip")
    c = _only_culprit(finding)
    assert c["state"] == "not arrived"
    assert c["section"] == "step"
    assert "stuck_in_other_barrier" in c["stack"]
    assert c["waiting_in"]["op"] == "barrier"  # where it went instead
    assert finding["wait"]["op"] == "all_reduce"
    assert c["seq"] < finding["wait"]["seq"]
    # whom it waits for there: rank 3, which never reached the subgroup's barrier (it had run
    # no collective on that group, so its record did not list the group)
    assert c["blocked_by"] == [3], finding
    assert "for rank(s) 3, which wait in all_reduce" in text and "a deadlock" in text, text
    # the test's own frame, not torch's, with torch's after it
    assert "at " + __file__ in text and "in stuck_in_other_barrier (innermost: torch" in text


def test_whole_job_stall_blames_nobody(job: Any) -> None:
    finding, text = _phase(job, "stall")
    assert finding["kind"] == "stall"
    assert finding["culprits"] == []
    assert finding["sections"] == [{"section": "checkpoint", "ranks": 4}]
    assert "No rank is blamed" in text


def test_killed_rank_is_named_as_gone(job: Any) -> None:
    finding, text = _phase(job, "killed")
    c = _only_culprit(finding)
    assert c["state"] in ("exited", "gone")
    assert c["section"] == "step"  # its last published state
    assert "is gone" in text


def test_findings_are_in_the_report_log(job: Any) -> None:
    hang = [r for r in job[1] if r["schema"] == "straggler.hang"]
    assert [r["kind"] for r in hang] == ["hang", "hang", "hang", "stall", "hang"]
    assert hang[0]["culprits"][0]["rank"] == STUCK_RANK
    assert hang[0]["version"] == 1 and hang[0]["time_s"] > 0
