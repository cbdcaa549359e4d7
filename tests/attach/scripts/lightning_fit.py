"""A Lightning `Trainer.fit` on 4 CPU processes with the DDP strategy (launched by torchrun)."""

import os

import lightning as L
import torch
from _common import Batches, finish, model
from torch.utils.data import DataLoader


class Module(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = model()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        return DataLoader(Batches(int(os.environ["RANK"])), batch_size=None)


trainer = L.Trainer(accelerator="cpu", devices=int(os.environ["LOCAL_WORLD_SIZE"]),
                    num_nodes=1, strategy="ddp", max_epochs=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False, use_distributed_sampler=False)
trainer.fit(Module())
if trainer.global_rank == 0:
    print(f"fit done: {trainer.global_step} steps", flush=True)
finish()
