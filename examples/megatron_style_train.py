"""A Megatron-style training loop with straggler detection; runs on CPU (gloo) or GPUs (NCCL).

With fewer GPUs than local ranks the ranks share them (local rank modulo the GPU count) and use
gloo, since NCCL takes one rank per GPU.

Two processes, rank 1 made 3x slower, a report every 2 s, stop when a straggler is found::

    torchrun --standalone --nproc-per-node=2 examples/megatron_style_train.py \\
        --log-straggler --straggler-report-interval 2 --straggler-stop-if-detected \\
        --slow-rank 1 --train-iters 300

The straggler flags are Megatron-LM's (``--log-straggler``, ``--straggler-ctrlr-port``,
``--straggler-minmax-count``, ``--disable-straggler-on-startup``) plus ours (``--straggler-*``,
see ``--help`` and docs/integrations.md). While it runs, the reporting rank serves the
controller on 127.0.0.1 (``--straggler-ctrlr-port``, default 65535). Requests need the job's
token: ``$STRAGGLER_CONTROLLER_TOKEN`` if you set it, else the one written to the file the
reporting rank's start line names (readable by you only)::

    F="${XDG_RUNTIME_DIR:-$HOME/.cache}/straggler/controller-65535.token"
    H="Authorization: Bearer $(cat "$F")"
    curl -s -H "$H" localhost:65535                          # state and last report (JSON)
    curl -s -H "$H" -X POST localhost:65535/toggle           # detection off / on
    curl -s -H "$H" -X POST -H 'Content-Type: application/json' \\
         -d '{"gpu_relative_perf_threshold": 0.9}' localhost:65535

On a stop the script saves a checkpoint and exits with status ``--exit-code-on-straggler``
(default 1, so a restarting launcher restarts the job without the slow node) on every rank:
from the stop on, each rank ignores SIGTERM, which torchrun sends to the ranks still running
once the first one exited.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

import torch
import torch.distributed as dist
from straggler.integrations.megatron import (
    StragglerDetectionManager,
    add_straggler_args,
    config_from_args,
)
from torch import nn


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-iters", type=int, default=300)
    parser.add_argument("--log-interval", type=int, default=50)
    parser.add_argument("--micro-batch-size", type=int, default=64)
    parser.add_argument("--hidden-size", type=int, default=512)
    parser.add_argument("--slow-rank", type=int, default=None,
                        help="Make this rank's train step slower (a simulated straggler).")
    parser.add_argument("--slowdown", type=float, default=3.0,
                        help="How much slower the slow rank's step is (its compute runs this "
                        "many times, rounded). Default: %(default)s.")
    parser.add_argument("--save", default=None, help="Checkpoint directory (on a stop).")
    parser.add_argument("--exit-code-on-straggler", type=int, default=1)
    add_straggler_args(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        if gpus:  # more local ranks than GPUs: they share them (device = local rank mod count)
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % gpus)
        # NCCL wants one rank per GPU; ranks sharing a GPU (or none) use gloo.
        dist.init_process_group("nccl" if gpus >= local_ranks else "gloo")
    rank = dist.get_rank() if distributed else 0
    world = dist.get_world_size() if distributed else 1
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() \
        else torch.device("cpu")
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format=f"[rank{rank}] %(name)s %(levelname)s: %(message)s")

    torch.manual_seed(1234)  # same initial weights on every rank
    model = nn.Sequential(nn.Linear(args.hidden_size, 4 * args.hidden_size), nn.GELU(),
                          nn.Linear(4 * args.hidden_size, args.hidden_size)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    data_gen = torch.Generator(device="cpu").manual_seed(rank)
    slow = args.slow_rank == rank

    # A straggler's device is slow: its step runs the same forward and backward `slowdown` times
    # (each pass with loss / passes, so the summed gradient is the one of a single pass). The
    # extra time is device work, which GPU scores (busy time) see; a host-side sleep would show
    # in the step's section score with the cause host_side and leave the GPU score at 1.0.
    passes = max(1, round(args.slowdown)) if slow else 1

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Forward and backward: the compute of one step (no communication inside)."""
        for _ in range(passes):
            loss = nn.functional.mse_loss(model(x), y)
            (loss / passes).backward()
        return loss

    manager = StragglerDetectionManager()
    manager.initialize(config_from_args(args))
    step = manager.wrap_train_step(train_step)

    exit_code = 0
    try:
        for iteration in range(1, args.train_iters + 1):
            x = torch.randn(args.micro_batch_size, args.hidden_size, generator=data_gen)
            y = torch.randn(args.micro_batch_size, args.hidden_size, generator=data_gen)
            loss = step(x.to(device), y.to(device))
            if distributed:  # gradient all-reduce, outside the timed step (as Megatron's)
                for p in model.parameters():
                    dist.all_reduce(p.grad)
                    p.grad /= world
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rank == 0 and iteration % args.log_interval == 0:
                logging.getLogger("train").info("iteration %d/%d | loss %.4f", iteration,
                                                args.train_iters, loss.item())
            if manager.check_stragglers(iteration):  # the same answer on every rank
                # torchrun stops the whole job (SIGTERM) as soon as one rank exits non-zero:
                # the others, still saving or tearing down, died by that signal. Ignored from
                # here, they end with this status too (torchrun's SIGKILL after 30 s remains).
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                if args.save and rank == 0:
                    os.makedirs(args.save, exist_ok=True)
                    path = os.path.join(args.save, f"iter_{iteration:07d}.pt")
                    torch.save({"iteration": iteration, "model": model.state_dict(),
                                "optimizer": optimizer.state_dict()}, path)
                    logging.getLogger("train").info("saved %s", path)
                logging.getLogger("train").error("Exiting due to straggler detection at "
                                                 "iteration %d", iteration)
                exit_code = args.exit_code_on_straggler
                break
    finally:
        manager.shutdown()
        if distributed:
            dist.destroy_process_group()
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
