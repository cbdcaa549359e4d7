"""FSDP2 (`fully_shard`) on CPU with gloo: parameters sharded, gathered per forward."""

import torch
import torch.distributed as dist
from _common import Batches, finish, model
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader

dist.init_process_group("gloo")
rank = dist.get_rank()
net = model()
for layer in net:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(net)
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
