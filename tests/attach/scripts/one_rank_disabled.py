"""A plain DDP loop whose rank 1 has STRAGGLER_DISABLE=1 (set before init_process_group, as a
node with its own environment would; DISABLE_RANK_1=0: not); no import of straggler here."""

import os
import time

if os.environ["RANK"] == "1" and os.environ.get("DISABLE_RANK_1", "1") == "1":
    os.environ["STRAGGLER_DISABLE"] = "1"

import torch
import torch.distributed as dist
from _common import finish, model

start = time.monotonic()
dist.init_process_group("gloo")
print(f"rank {dist.get_rank()} init took {time.monotonic() - start:.1f} s", flush=True)
net = model()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.ones(4, 64)
for _step in range(5):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    dist.all_reduce(loss.detach())
dist.destroy_process_group()
finish()
