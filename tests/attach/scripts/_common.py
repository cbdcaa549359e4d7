"""Shared by the unmodified training scripts of tests/attach (no import of straggler here).

The slowed rank's dataset sleeps `DELAY_S` in each batch it loads: slow data loading, the
classic straggler the script's author does not see. Every script ends with `finish` (torch's
gloo at-exit abort, below).
"""

import atexit
import os
import sys
import time
from typing import NoReturn

import torch
from torch.utils.data import Dataset

SLOW_RANK = int(os.environ.get("SLOW_RANK", "2"))
DELAY_S = float(os.environ.get("DELAY_S", "0.01"))
STEPS = int(os.environ.get("STEPS", "150"))
START_DELAY_S = float(os.environ.get("START_DELAY_S", "0"))
"""The slowed rank starts this much later (in `model`, after ``init_process_group``)."""
BATCH, WIDTH = 32, 64


class Batches(Dataset):
    """`STEPS` synthetic batches (use with ``DataLoader(batch_size=None)``); `rank`'s are slow."""

    def __init__(self, rank: int, steps: int = STEPS) -> None:
        self.slow = rank == SLOW_RANK
        self.steps = steps
        self.gen = torch.Generator().manual_seed(rank)

    def __len__(self) -> int:
        return self.steps

    def __getitem__(self, i: int):
        if self.slow:
            time.sleep(DELAY_S)
        x = torch.randn(BATCH, WIDTH, generator=self.gen)
        return x, x.sum(dim=1, keepdim=True)


def model() -> torch.nn.Module:
    if START_DELAY_S and int(os.environ.get("RANK", "0")) == SLOW_RANK:
        time.sleep(START_DELAY_S)  # a rank starting late: the others wait at DDP's broadcast
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 1))


def finish(status: int = 0) -> NoReturn:
    """End the script with `status` as a normal exit would, minus the interpreter's finalization.

    The exit hooks run (the attach closes its detector there, as at any exit), the output is
    flushed, then ``os._exit``. Finalization is skipped because torch 2.13's gloo backend can
    abort a finished job there ("terminate called without an active exception", SIGABRT, in
    1-20 % of runs): a gloo worker thread releases its last finished work after ``wait()`` has
    returned, the release of its tensors takes the GIL, and a thread that takes the GIL once
    finalization has begun is ended by ``pthread_exit``, whose unwinding through the worker's
    noexcept frames calls ``std::terminate`` (pytorch/pytorch#190489). Once ``torch._dynamo`` is
    imported (by any torch.optim optimizer) ``destroy_process_group()`` no longer frees the gloo
    backend, so its threads always live into finalization. What our detector does at
    finalization is tested on its own (tests/test_exit_multirank.py).
    """
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
