"""The job's store goes away mid-run: hang detection turns off with one log line per rank and
training goes on (2 gloo ranks joined through a TCPStore the test serves and then stops)."""

from __future__ import annotations

import pytest
import datetime
import threading
import time
from typing import Any

import torch.distributed as dist
from _multirank import run_ranks


pytestmark = pytest.mark.multirank

STEPS_AFTER = 40


def _worker(rank: int, world_size: int) -> dict[str, Any]:
    import logging

    import torch

    from straggler import Detector

    lines: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logging.getLogger("straggler").addHandler(_Keep())
    Detector.initialize(hang_timeout_s=2.0, telemetry=False, report_time_interval=3600)
    hang = Detector.core().hang  # type: ignore[union-attr]
    sums: list[float] = []

    def step() -> None:
        t = torch.ones(4)
        with Detector.detection_section("step"):
            dist.all_reduce(t)
        sums.append(float(t[0]))

    for _ in range(3):
        step()
    time.sleep(1.5)  # at least one progress record published
    # The TCPStore itself (the default store is a PrefixStore on it), where the test looks.
    dist.distributed_c10d._get_default_store().underlying_store.add("test/started", 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the test stops the store; the next write fails
        running = torch.tensor([float(hang.running)])
        dist.all_reduce(running, op=dist.ReduceOp.MAX)  # leave the loop together
        if not running[0]:
            break
        step()
        time.sleep(0.05)
    for _ in range(STEPS_AFTER):  # training goes on without it
        step()
    Detector.shutdown()
    return {"failed": hang.store.failed, "lines": [m for m in lines if "hang" in m],
            "sums": sums}


def test_store_gone_turns_hang_detection_off_and_training_goes_on() -> None:
    master = dist.TCPStore("127.0.0.1", 0, 2, is_master=True, wait_for_workers=False,
                           timeout=datetime.timedelta(seconds=60))
    port = master.port
    holder = [master]
    del master

    def stop_store_when_started() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if holder[0].check(["test/started"]) and int(holder[0].add("test/started", 0)) == 2:
                break
            time.sleep(0.1)
        holder.clear()  # the last reference: the server stops

    stopper = threading.Thread(target=stop_store_when_started, daemon=True)
    stopper.start()
    results = run_ranks(_worker, 2, tcp_store_port=port, timeout_s=150.0)
    stopper.join(timeout=5)
    for r in results:
        assert r["failed"], r["lines"]
        off = [m for m in r["lines"] if "hang detection is off" in m]
        assert len(off) == 1, r["lines"]
        assert len(r["sums"]) >= STEPS_AFTER + 3 and set(r["sums"]) == {2.0}
