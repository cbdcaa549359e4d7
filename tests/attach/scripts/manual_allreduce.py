"""torch.optim without DDP: gradients averaged with a hand-written all-reduce."""

import torch
import torch.distributed as dist
from _common import Batches, finish, model
from torch.utils.data import DataLoader

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
net = model()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for x, y in DataLoader(Batches(rank), batch_size=None):
    loss = torch.nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    for p in net.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world
    opt.step()
if rank == 0:
    print(f"final loss {loss.item():.6f}", flush=True)
dist.destroy_process_group()
finish()
