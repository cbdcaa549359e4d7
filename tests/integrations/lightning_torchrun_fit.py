"""A Lightning DDP fit for torchrun on CPU/gloo whose rank 1 is 3x slower, stopping on it.

Run by tests/integrations/test_lightning_callback.py (and by hand)::

    torchrun --standalone --nproc-per-node=2 tests/integrations/lightning_torchrun_fit.py ROOT \\
        [--exit-code N] [--linger-rank R] [--hang-rank R]

Timing runs on the simulated driver (``make sim``). Each rank prints ``rank R left fit:
step=S code=C`` as it leaves ``fit``, then ends by the
callback's ``SystemExit``; torchrun's report says how every rank ended. ``--linger-rank``: that
rank takes 2 s more after ``fit`` before it exits (as a slow interpreter shutdown would), so
torchrun's SIGTERM reaches it then; ``--hang-rank``: that rank hangs on its way out of the stop
(in ``on_exception``), as a rank stuck in teardown would.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # `from _lightning_module import ...`
SIM = TESTS.parent / "build" / "sim"  # the simulated driver and NVML (`make sim`)
os.environ.setdefault("STRAGGLER_LIBCUDA", str(SIM / "libcuda.so.1"))
os.environ.setdefault("STRAGGLER_LIBNVML", str(SIM / "libnvidia-ml.so.1"))
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import warnings  # noqa: E402

warnings.simplefilter("ignore")

from straggler.integrations.lightning import LIGHTNING_PACKAGE, StragglerDetectionCallback  # noqa: E402

from _lightning_module import TinyModule  # noqa: E402

if LIGHTNING_PACKAGE == "lightning":
    import lightning.pytorch as pl
    from lightning.pytorch.callbacks import ModelCheckpoint
else:  # pragma: no cover
    import pytorch_lightning as pl
    from pytorch_lightning.callbacks import ModelCheckpoint


class HangOnExit(pl.Callback):
    def on_exception(self, trainer, pl_module, exception):
        print(f"rank {trainer.global_rank} hangs", flush=True)
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--exit-code", type=int, default=1)
    parser.add_argument("--linger-rank", type=int)
    parser.add_argument("--hang-rank", type=int)
    args = parser.parse_args()
    root, exit_code = args.root, args.exit_code
    cb = StragglerDetectionCallback(report_time_interval=0.3, num_gpu_perf_scores_to_print=0,
                                    stop_if_detected=True, exit_code=exit_code)
    ckpt = ModelCheckpoint(dirpath=os.path.join(root, "ckpt"))
    world = int(os.environ["WORLD_SIZE"])
    trainer = pl.Trainer(accelerator="cpu", devices=world, strategy="ddp", max_steps=400,
                         callbacks=[cb, ckpt], logger=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=root)
    rank = int(os.environ["RANK"])
    if rank == args.hang_rank:
        trainer.callbacks.append(HangOnExit())
    try:
        trainer.fit(TinyModule(step_s=0.02, slow_rank=1, factor=3.0, samples=4096))
    except SystemExit as exc:
        print(f"rank {rank} left fit: step={trainer.global_step} code={exc.code}", flush=True)
        if rank == args.linger_rank:
            time.sleep(2.0)
        raise
    print(f"rank {rank} left fit: step={trainer.global_step} no stop", flush=True)


if __name__ == "__main__":
    main()
