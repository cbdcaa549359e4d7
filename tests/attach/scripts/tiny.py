"""One rank's few training steps; prints the final loss (the computation attach must not change)."""

import torch
import torch.distributed as dist
from _common import finish, model

dist.init_process_group("gloo")
net = model()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.linspace(-1, 1, 4 * 64).reshape(4, 64)
for _ in range(30):
    loss = (net(x) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = sum(p.detach().double().sum().item() for p in net.parameters())
print(f"loss {loss.item():.9e} weights {weights:.15e} rank {dist.get_rank()}", flush=True)
dist.destroy_process_group()
finish()
