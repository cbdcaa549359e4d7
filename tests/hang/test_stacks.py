"""Where a stalled rank's own code is: the frame named on the hang report's "doing: ... at"."""

from __future__ import annotations

import sys
import threading
from types import FrameType

from straggler.hang.stacks import user_location


def _frame_inside_torch() -> FrameType:
    from torch.utils import _pytree

    frames: list[FrameType] = []
    _pytree.tree_map(lambda x: frames.append(sys._getframe(1)) or x, [1])  # a torch frame
    return frames[0]


def test_the_job_s_own_frame_is_named_before_torch_s() -> None:
    loc = user_location(_frame_inside_torch())
    own, _, inner = loc.partition(" (innermost: ")
    assert own.startswith(f"{__file__}:") and own.endswith(" in _frame_inside_torch"), loc
    assert inner.startswith("torch/utils/_pytree.py:"), loc


def test_standard_library_frames_are_passed_over() -> None:
    waiting = threading.Event()
    frames: list[FrameType] = []

    def stuck_in_wait() -> None:
        waiting.wait(0.01)

    def trace(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code.co_name == "wait" and not frames:
            frames.append(frame)

    sys.setprofile(trace)
    try:
        stuck_in_wait()
    finally:
        sys.setprofile(None)
    loc = user_location(frames[0])
    assert " in stuck_in_wait (innermost: threading.py:" in loc, loc


def test_an_installed_package_s_frames_are_passed_over_when_the_job_s_own_are_further_out(
        ) -> None:
    code = compile("def call(fn):\n    return fn()\n", "/opt/venv/lib/python3.11/"
                   "site-packages/trainer_lib/loop.py", "exec")
    namespace: dict[str, object] = {}
    exec(code, namespace)
    frames: list[FrameType] = []
    namespace["call"](lambda: frames.append(sys._getframe(1)))  # type: ignore[operator]
    loc = user_location(frames[0])
    assert loc.startswith(f"{__file__}:"), loc
    assert loc.endswith("(innermost: trainer_lib/loop.py:2 in call)"), loc


def test_a_frame_of_the_job_s_own_is_named_alone() -> None:
    loc = user_location(sys._getframe())
    assert loc == f"{__file__}:{sys._getframe().f_lineno - 1} in " \
        "test_a_frame_of_the_job_s_own_is_named_alone", loc


def test_a_stalled_rank_publishes_its_own_frame_not_the_standard_library_s() -> None:
    from straggler.hang.progress import LocalProgress

    release, started = threading.Event(), threading.Event()

    def stuck_waiting_for_data() -> None:
        started.set()
        release.wait(30)

    thread = threading.Thread(target=stuck_waiting_for_data)
    thread.start()
    try:
        started.wait(30)
        progress = LocalProgress(0, "n", "", lambda: [], lambda: 0, group_seqs=dict,
                                 thread=thread.ident)
        for _ in range(100):  # until the thread is inside Event.wait
            loc = progress.snapshot(with_location=True).loc
            if "(innermost: threading.py:" in loc:
                break
            threading.Event().wait(0.01)
    finally:
        release.set()
        thread.join()
    assert " in stuck_waiting_for_data (innermost: threading.py:" in loc, loc


class _Stuck:
    """A dataset whose third item never comes (until the test ends): a stuck read in a
    DataLoader worker process."""

    def __init__(self, release: str) -> None:
        self.release = release

    def __len__(self) -> int:
        return 100

    def __getitem__(self, i: int) -> int:
        import os
        import time

        while i >= 2 and not os.path.exists(self.release):
            time.sleep(0.05)
        return i


def test_a_rank_stuck_on_its_dataloader_names_the_worker_processes(tmp_path) -> None:
    # The report said where the training thread waited (the loop's line, then selectors.py);
    # the stuck code is in a worker process, which it did not name.
    from straggler.hang.progress import LocalProgress
    from torch.utils.data import DataLoader

    release = tmp_path / "release"
    loader = DataLoader(_Stuck(str(release)), batch_size=1, num_workers=1, prefetch_factor=1,
                        multiprocessing_context="fork")
    it = iter(loader)
    next(it), next(it)
    started = threading.Event()
    thread = threading.Thread(target=lambda: (started.set(), next(it)))
    thread.start()
    try:
        started.wait(30)
        progress = LocalProgress(0, "n", "", lambda: [], lambda: 0, group_seqs=dict,
                                 thread=thread.ident)
        for _ in range(300):
            loc = progress.snapshot(with_location=True).loc
            if "DataLoader worker" in loc:
                break
            threading.Event().wait(0.02)
        pids = [w.pid for w in it._workers]  # type: ignore[attr-defined]
    finally:
        release.touch()
        thread.join(30)
        it._shutdown_workers()  # type: ignore[attr-defined]
    assert f"waiting for a batch from its DataLoader worker process(es) {pids[0]} " in loc, loc
