"""Two ranks all-reduce; after a few steps rank 1 stops in `stuck_reading_data` for HANG_S
seconds while rank 0 waits in the next all_reduce (no import of straggler here)."""

import os
import time

import torch
import torch.distributed as dist
from _common import finish

HANG_S = float(os.environ.get("HANG_S", "15"))


def stuck_reading_data() -> None:
    time.sleep(HANG_S)  # a read that does not come back (for HANG_S)


dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(8)
for step in range(20):
    if step == 10 and rank == 1:
        stuck_reading_data()
    dist.all_reduce(t)
    t /= dist.get_world_size()
dist.destroy_process_group()
finish()
