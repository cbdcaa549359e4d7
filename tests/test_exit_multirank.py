"""A job that ends without `Detector.shutdown()` exits cleanly: the detector closes itself at exit.

Daemon threads still inside a store call or a gloo wait when Python finalizes abort the process
("terminate called without an active exception", exit code -6): seen once in ten attached
Lightning runs, whose scripts never shut the detector down (straggler/lifecycle.py).
"""

from __future__ import annotations

import atexit
import json
import threading
from pathlib import Path

import pytest

from _multirank import run_ranks

# Not serial: beside another multi-rank test, at load ~13, a spawned rank once had not written
# its exit record when the test read it; run_ranks now waits up to 30 s for ranks to exit
# (_multirank._EXIT_WAIT_S, then 10 s) and fails on a rank it had to kill, so the record is
# there whenever the test reads it.
pytestmark = pytest.mark.multirank


def _threads_at_exit(path: str) -> None:
    names = sorted(t.name for t in threading.enumerate()
                   if t.name.startswith("straggler") and t.is_alive())
    Path(path).write_text(json.dumps(names))


def _job_without_shutdown(rank: int, world_size: int, out_dir: str) -> list[str]:
    # Registered before the detector's own hook, so it runs after it (atexit is LIFO).
    atexit.register(_threads_at_exit, f"{out_dir}/threads{rank}.json")
    from straggler import Detector

    Detector.initialize(report_time_interval=0.05, hang_timeout_s=60.0)
    for _ in range(40):
        with Detector.detection_section("step", profile_cuda=False):
            pass
        Detector.generate_report_if_interval_elapsed()
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("straggler"))


def test_threads_are_stopped_before_the_interpreter_finalizes(tmp_path):
    # Spawned: a fork server's child ends with os._exit, without atexit or finalization.
    running = run_ranks(_job_without_shutdown, 2, str(tmp_path), start_method="spawn")
    # The job really had detector threads running when its main function returned...
    assert all("straggler-hang" in names for names in running), running
    # ...and none was left when Python finalized (run_ranks also checks each exit code).
    for rank in range(2):
        assert json.loads((tmp_path / f"threads{rank}.json").read_text()) == []
