"""Megatron-style integration: config, command-line flags and a manager for hand-written loops.

- :class:`StragglerDetectionConfig` has Megatron-Bridge's ``NVRxStragglerDetectionConfig``
  fields and defaults (and validation), Megatron-LM's four straggler settings, and ours.
- :func:`add_straggler_args` registers Megatron-LM's flags (``--log-straggler``,
  ``--straggler-ctrlr-port``, ``--straggler-minmax-count``, ``--disable-straggler-on-startup``)
  and flags for the other settings; :func:`config_from_args` turns parsed args into a config.
- :class:`StragglerDetectionManager` drives the Detector from a training loop::

      manager = StragglerDetectionManager()
      manager.initialize(config_from_args(args))
      train_step = manager.wrap_train_step(train_step)
      for iteration in range(start, end):
          train_step(batch)
          if manager.check_stragglers(iteration):     # same answer on every rank
              save_checkpoint(); break
      manager.shutdown()

Report points are agreed by one small broadcast from the reporting rank (group rank 0), which
also carries runtime changes from the HTTP controller (:mod:`..controller`), so every rank applies
them at the same iteration.

One module per concern: `config` (the settings), `args` (flags), `schedule` (when to meet),
`manager` (the loop's side), `report` (what the reporting rank logs and serves).
"""

from __future__ import annotations

from .args import add_straggler_args, config_from_args
from .config import NVRxStragglerDetectionConfig, StragglerDetectionConfig
from .manager import StragglerDetectionManager, TrainStep
from .report import megatron_lines
from .schedule import ReportSchedule

__all__ = ["StragglerDetectionConfig", "NVRxStragglerDetectionConfig", "add_straggler_args",
           "config_from_args", "StragglerDetectionManager", "ReportSchedule", "TrainStep",
           "megatron_lines"]
