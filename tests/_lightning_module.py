"""A tiny Lightning module for the callback's tests, in-process and under torchrun: a linear
model whose ``training_step`` does simulated GPU work (``gpu_sleep``, tests/sim), slower on
``slow_rank`` from step ``slow_after`` on."""

from __future__ import annotations

import torch
from straggler.integrations.lightning import LIGHTNING_PACKAGE
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sim.simcuda import gpu_sleep

if LIGHTNING_PACKAGE == "lightning":
    import lightning.pytorch as pl
else:  # pragma: no cover - only pytorch_lightning installed
    import pytorch_lightning as pl


class TinyModule(pl.LightningModule):
    """A linear model whose training_step does simulated GPU work; ``slow_after`` / ``slow_rank``
    make it slower; ``samples``: the dataset's size (4 a batch)."""

    def __init__(self, step_s: float = 0.01, slow_rank: int | None = None, factor: float = 3.0,
                 slow_after: int = 0, samples: int = 512) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.step_s, self.slow_rank, self.factor, self.slow_after = (step_s, slow_rank, factor,
                                                                     slow_after)
        self.samples = samples

    def training_step(self, batch, batch_idx):
        slow = self.global_rank == self.slow_rank and self.global_step >= self.slow_after
        gpu_sleep(self.step_s * (self.factor if slow else 1.0))
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        g = torch.Generator().manual_seed(0)
        data = TensorDataset(torch.randn(self.samples, 4, generator=g),
                             torch.randn(self.samples, 1, generator=g))
        return DataLoader(data, batch_size=4)
