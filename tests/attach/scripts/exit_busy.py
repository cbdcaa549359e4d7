"""Ends without ``destroy_process_group()``, as a Lightning fit on gloo does, while the attached
detector's hang watchdog is inside torch store calls (they release the GIL). The job must exit
with status 0: the detector is closed at interpreter exit (straggler/lifecycle.py), before
finalization would end its thread inside such a call and abort the process.
"""

import threading
import time

import torch.distributed as dist

dist.init_process_group("gloo")
from straggler.attach import worker  # noqa: E402 - the attached detector exists from here

hang = worker.current().core.hang
entered = threading.Event()


class BusyStore:
    """The watchdog's store; its first operation spends 1 s in short torch store calls."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        op = getattr(self._real, name)

        def busy(*args):
            if not entered.is_set():
                entered.set()
                end = time.monotonic() + 1.0
                while time.monotonic() < end:
                    self._real.check(["busy"])
            return op(*args)

        return busy


hang.store._store = BusyStore(hang.store._store)
assert entered.wait(30), "the hang watchdog made no store call"
print(f"rank {dist.get_rank()} exits with its detector open", flush=True)
