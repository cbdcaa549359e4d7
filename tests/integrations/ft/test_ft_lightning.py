"""The Lightning callback's FT option: each batch is FT's ``step`` on a real rank monitor, and
with ``ft_autoresume`` rank 0 writes ``$FAULT_TOL_FINISHED_FLAG_FILE`` when training completes.
One process on CPU; the monitor is NVRx's RankMonitorServer in a subprocess (ft_monitor.py).
"""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")

from straggler import Detector
from straggler.integrations import ft
from straggler.integrations.lightning import (
    LIGHTNING_PACKAGE,
    StragglerDetectionCallback,
)

if LIGHTNING_PACKAGE == "lightning":
    import lightning.pytorch as pl
else:  # pragma: no cover - only pytorch_lightning installed
    import pytorch_lightning as pl

pytestmark = [
    pytest.mark.filterwarnings("ignore::lightning.fabric.utilities.warnings.PossibleUserWarning"),
    pytest.mark.filterwarnings("ignore:.*does not have many workers.*"),
    pytest.mark.filterwarnings(
        "ignore:`isinstance.treespec, LeafSpec.` is deprecated:FutureWarning"),
]


class Module(pl.LightningModule):
    """Records which FT sections are open while its training_step runs."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.seen = []
        self.bridge = None

    def training_step(self, batch, batch_idx):
        self.bridge = Detector.ft_bridge()
        self.seen.append(self.bridge.open_sections() if self.bridge else None)
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        g = torch.Generator().manual_seed(0)
        return DataLoader(TensorDataset(torch.randn(64, 4, generator=g),
                                        torch.randn(64, 1, generator=g)), batch_size=4)


def fit(callback, max_steps, tmp_path):
    module = Module()
    trainer = pl.Trainer(max_steps=max_steps, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=tmp_path,
                         callbacks=[callback])
    trainer.fit(module)
    return module


def test_batches_are_ft_steps_and_the_finished_flag_is_written(monitor_factory, kill_signal,
                                                               tmp_path, monkeypatch):
    flag = tmp_path / "finished.flag"
    monkeypatch.setenv(ft.FINISHED_FLAG_ENV, str(flag))
    monitor_factory({ft.SETUP: 30.0, ft.STEP: 30.0, ft.CHECKPOINTING: 30.0})
    callback = StragglerDetectionCallback(report_time_interval=0, ft_sections="required",
                                          ft_options={"warmup_iters": 1}, ft_autoresume=True)
    module = fit(callback, 6, tmp_path)
    # Step 0 is warm-up (out of section); afterwards each batch holds `step` (nested twice: the
    # batch and the timed training_step share it through the reference count)
    assert module.seen[0] == {}
    assert all(s.get(ft.STEP, 0) >= 1 for s in module.seen[1:]), module.seen
    assert module.bridge.train_iters == 6
    assert module.bridge.client.timeouts_calc.section_to_max_time[ft.STEP] > 0
    assert not module.bridge.client.is_initialized      # disconnected at teardown
    assert Detector.core() is None
    assert flag.exists()
    assert not kill_signal.is_set()


def test_autoresume_needs_the_flag_variable(monitor_factory, tmp_path, monkeypatch):
    monkeypatch.delenv(ft.FINISHED_FLAG_ENV, raising=False)
    monitor_factory({ft.STEP: 30.0})
    callback = StragglerDetectionCallback(ft_autoresume=True)
    with pytest.raises(RuntimeError, match="FAULT_TOL_FINISHED_FLAG_FILE"):
        fit(callback, 2, tmp_path)


def test_required_ft_is_a_configuration_error_not_a_silent_failure(tmp_path, monkeypatch):
    monkeypatch.delenv(ft.RANK_MONITOR_SOCKET_ENV, raising=False)
    callback = StragglerDetectionCallback(ft_sections="required")
    with pytest.raises(ft.FTUnavailableError, match="not started by ft_launcher"):
        fit(callback, 2, tmp_path)
    Detector.shutdown()


def test_bad_ft_options_are_named():
    with pytest.raises(ValueError, match="`ft_sections='yes'`"):
        StragglerDetectionCallback(ft_sections="yes")
    with pytest.raises(ValueError, match="`ft_autoresume=1`"):
        StragglerDetectionCallback(ft_autoresume=1)
    with pytest.raises(ValueError, match="`ft_options=3`"):
        StragglerDetectionCallback(ft_options=3)
