"""Each rank says it is ready (with its pid), then sleeps until it is stopped (no import of
straggler here)."""

import os
import time

import torch.distributed as dist

dist.init_process_group("gloo")
print(f"rank {dist.get_rank()} ready pid {os.getpid()}", flush=True)
time.sleep(120)
