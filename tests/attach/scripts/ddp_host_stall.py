"""A DDP loop whose slow rank stalls on the host outside any DataLoader (Python between steps,
e.g. hand-rolled batching or logging): only the waits at the collectives can name it."""

import time

import torch
import torch.distributed as dist
from _common import BATCH, DELAY_S, SLOW_RANK, STEPS, WIDTH, finish, model
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank = dist.get_rank()
net = DistributedDataParallel(model())
opt = torch.optim.SGD(net.parameters(), lr=0.01)
gen = torch.Generator().manual_seed(rank)
for _ in range(STEPS):
    x = torch.randn(BATCH, WIDTH, generator=gen)
    if rank == SLOW_RANK:
        time.sleep(DELAY_S)
    loss = torch.nn.functional.mse_loss(net(x), x.sum(dim=1, keepdim=True))
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"final loss {loss.item():.6f}", flush=True)
dist.destroy_process_group()
finish()
