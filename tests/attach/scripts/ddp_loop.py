"""A plain DDP training loop on gloo (never changed for straggler detection)."""

import torch
import torch.distributed as dist
from _common import Batches, finish, model
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

dist.init_process_group("gloo")
rank = dist.get_rank()
net = DistributedDataParallel(model())
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for x, y in DataLoader(Batches(rank), batch_size=None):
    loss = torch.nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"final loss {loss.item():.6f}", flush=True)
dist.destroy_process_group()
finish()
