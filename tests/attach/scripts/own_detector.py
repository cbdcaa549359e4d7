"""A script that already uses straggler's Detector itself: the attach must leave it alone."""

import torch
import torch.distributed as dist
from _common import finish
from straggler import Detector

dist.init_process_group("gloo")
Detector.initialize(report_time_interval=0, profiling_interval=5)
net = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
reports = 0
for _ in range(40):
    with Detector.detection_section("forward"):
        loss = net(torch.ones(4, 8)).sum()
    opt.zero_grad()
    loss.backward()
    dist.all_reduce(loss.detach())
    opt.step()
    if Detector.generate_report_if_interval_elapsed() is not None:
        reports += 1
Detector.shutdown()
if dist.get_rank() == 0:
    print(f"own reports: {reports}", flush=True)
dist.destroy_process_group()
finish()
