"""Two ranks all-reduce and step an optimizer; after 10 steps rank 1 stops in
`stuck_reading_data` for HANG_S seconds while rank 0 waits in the next all_reduce (no import of
straggler here)."""

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
w = torch.nn.Parameter(torch.ones(8))
opt = torch.optim.SGD([w], lr=0.01)
for step in range(20):
    if step == 10 and rank == 1:
        stuck_reading_data()
    w.grad = w.detach().clone()
    dist.all_reduce(w.grad)
    opt.step()
dist.destroy_process_group()
finish()
