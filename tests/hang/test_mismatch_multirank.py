"""A collective mismatch on real gloo ranks: rank 0 blocks in a barrier, rank 1 in a broadcast,
both on a group made with ``new_group`` (after collectives on the default group too).

The Lightning trial's hang: the finding read "whole-job stall ... none inside a collective ...
No rank is blamed". The mismatched collectives never end, so each rank's helper thread ends
its process once rank 0's watchdog has its finding (written to a file for the test).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import Any

import pytest

from _multirank import run_ranks

pytestmark = pytest.mark.multirank

HANG_TIMEOUT_S = 2.0
DEADLINE_S = 40.0  # for the finding; the machine is shared and loaded


def _end_when(done: Any, out_path: str, rank: int) -> None:
    from straggler import Detector

    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end and not done():
        core = Detector.core()
        if rank == 0 and core is not None and core.hang is not None and core.hang.findings:
            finding = core.hang.findings[0]
            with open(out_path + ".tmp", "w") as f:
                json.dump({"finding": finding.to_dict(), "text": finding.format()}, f)
            os.replace(out_path + ".tmp", out_path)
        time.sleep(0.1)
    time.sleep(0.5)  # rank 1 sees the file too
    os._exit(0)  # the mismatched collectives never return


def _worker(rank: int, world_size: int, out_path: str) -> None:
    import torch
    import torch.distributed as dist
    from straggler import Detector

    group = dist.new_group([0, 1])
    Detector.initialize(hang_timeout_s=HANG_TIMEOUT_S, telemetry=False,
                        report_time_interval=3600)
    t = torch.ones(2)
    for _ in range(2):
        with Detector.detection_section("step"):
            dist.all_reduce(t)
            dist.all_reduce(t, group=group)
    threading.Thread(target=_end_when, args=(lambda: os.path.exists(out_path), out_path, rank),
                     daemon=True).start()
    # gloo raises in the other rank once one rank has ended its process
    with Detector.detection_section("sync"), contextlib.suppress(RuntimeError):
        if rank == 0:
            dist.barrier(group=group)
        else:
            dist.broadcast(t, src=0, group=group)
    time.sleep(DEADLINE_S + 10)  # until the helper thread ends the process


def test_ranks_in_different_collectives_are_named_as_a_mismatch(tmp_path: Any) -> None:
    out_path = str(tmp_path / "finding.json")
    run_ranks(_worker, 2, out_path, timeout_s=DEADLINE_S + 30, may_die=[0, 1])
    assert os.path.exists(out_path), "rank 0 reported no finding within the deadline"
    with open(out_path) as f:
        out = json.load(f)
    finding, text = out["finding"], out["text"]
    assert finding["kind"] == "hang", text
    mismatch = [(m["op"], m["seq"], m["ranks"]) for m in finding["mismatch"]]
    assert mismatch == [("barrier", 3, [0]), ("broadcast", 3, [1])], text
    group = finding["mismatch"][0]["group"]
    assert group != "0" and finding["mismatch"][1]["group"] == group, text
    assert [(c["rank"], c["state"]) for c in finding["culprits"]] == [
        (0, "mismatched"), (1, "mismatched")], text
    assert f"  in barrier on group {group}, collective #3: rank(s) 0" in text
    assert f"  in broadcast on group {group}, collective #3: rank(s) 1" in text
    assert "in _worker" in text  # the stacks show the caller's line
    print(text)
