"""One rank's few training steps; prints the final loss (the computation attach must not change)."""

import torch
import torch.distributed as dist

from _common import model

dist.init_process_group("gloo")
net = model()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(30):
    loss = net(torch.ones(4, 64)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.9f} rank {dist.get_rank()}", flush=True)
dist.destroy_process_group()
