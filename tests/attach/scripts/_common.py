"""Shared by the unmodified training scripts of tests/attach (no import of straggler here).

The slowed rank's dataset sleeps `DELAY_S` in each batch it loads: slow data loading, the
classic straggler the script's author does not see.
"""

import os
import time

import torch
from torch.utils.data import Dataset

SLOW_RANK = int(os.environ.get("SLOW_RANK", "2"))
DELAY_S = float(os.environ.get("DELAY_S", "0.01"))
STEPS = int(os.environ.get("STEPS", "150"))
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
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 1))
