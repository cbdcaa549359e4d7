"""Trains a few steps, then fails: `CRASH=raise` raises (printed as the interpreter prints an
uncaught exception), `CRASH=exit` exits with status 7."""

import os
import sys

import torch
import torch.distributed as dist
from _common import finish, model

dist.init_process_group("gloo")
net = model()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.linspace(-1, 1, 4 * 64).reshape(4, 64)
for _step in range(20):
    loss = (net(x) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    dist.all_reduce(loss.detach())
weights = sum(p.detach().double().sum().item() for p in net.parameters())
print(f"weights {weights:.15e}", flush=True)
if os.environ.get("CRASH") == "exit":
    finish(7)
try:
    raise ValueError(f"the script's own error after step {_step}")
except ValueError:
    sys.excepthook(*sys.exc_info())  # what the interpreter prints for an uncaught exception
    finish(1)
