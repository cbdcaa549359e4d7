"""Megatron-Bridge's hook names and the detector's section hook: where steps and saves happen.

- ``step`` around our per-iteration detection section: opened *before* our timers start and
  closed *after* they stop (a `Detector` section hook), so FT's IPC cost stays out of our
  timings; the first ``warmup_iters`` steps stay out of it, as in Megatron-Bridge;
- ``setup`` from `FTBridge.setup()` to the first step;
- ``checkpointing`` around saves (`checkpointing()`);
- Megatron-Bridge's hook names for hand-written loops (`on_training_step_start/end`, ...).
"""

from __future__ import annotations

import abc
import contextlib
import logging
from collections.abc import Iterator

from .options import CHECKPOINTING, SETUP, STEP
from .sections import SectionCounter

__all__ = ["BridgeHooks", "DEFAULT_WARMUP_ITERS"]

log = logging.getLogger("straggler")

DEFAULT_WARMUP_ITERS = 1  # Megatron-Bridge's default


class BridgeHooks(abc.ABC):
    """The training progress (steps, checkpoints) counted from hooks; sections opened to match.

    The base of `FTBridge`, which provides `enabled` (whether FT is on now).
    """

    def __init__(self, sections: SectionCounter, step_section: str | None,
                 warmup_iters: int | None) -> None:
        self._sections = sections
        self.step_section = step_section
        self.warmup_iters = warmup_iters
        self._depth = 0              # our (detector) sections currently entered
        self._step_stack: list[bool] = []
        self._eval_stack: list[bool] = []
        self.train_iters = 0
        self.eval_iter = 0
        self.checkpoints = 0
        self.async_checkpointing = False
        self.persistent_checkpoint_loaded = False

    @property
    @abc.abstractmethod
    def enabled(self) -> bool:
        """Whether sections are forwarded to FT now (the bridge decides)."""

    def open_section(self, name: str) -> None:
        """Open FT section `name` (reference-counted: only the first open reaches FT)."""
        self._sections.open(name)

    def close_section(self, name: str) -> None:
        """Close FT section `name` (the last close of a nested use reaches FT)."""
        self._sections.close(name)

    # -- the detector's section hook --------------------------------------------------------
    def on_section_enter(self, name: str) -> None:
        """Section hook, called before our timers start: our step section opens FT ``step``."""
        depth, self._depth = self._depth, self._depth + 1
        if not self.enabled:
            return
        if self.step_section is None and depth == 0:
            self.step_section = name
            log.info("straggler: FT 'step' follows detection section %r (set "
                     "ft_options={'step_section': ...} to choose another)", name)
        if name == self.step_section:
            self.on_training_step_start()

    def on_section_exit(self, name: str) -> None:
        """Section hook, called after our timers stop."""
        self._depth = max(0, self._depth - 1)
        if name == self.step_section and self.enabled:
            self.on_training_step_end()

    # -- Megatron-Bridge hooks --------------------------------------------------------------
    def _start_step(self, stack: list[bool], done: int) -> None:
        """``setup`` ends; ``step`` opens once `done` steps passed the warm-up (nesting kept)."""
        self._sections.close_fully(SETUP)
        opens = done >= (self.warmup_iters or 0)
        stack.append(opens)
        if opens:
            self.open_section(STEP)

    def _end_step(self, stack: list[bool]) -> bool:
        """Close what the matching `_start_step` opened; True when the outermost step ended."""
        if not stack:
            return False
        if stack.pop():
            self.close_section(STEP)
        return not stack

    def on_training_step_start(self) -> None:
        """Before a training step: ``setup`` ends; ``step`` opens once warm-up is over."""
        if not self.enabled:
            return
        self.eval_iter = 0
        self._start_step(self._step_stack, self.train_iters)

    def on_training_step_end(self) -> None:
        """After a training step: ``step`` closes; the step counts."""
        if self._end_step(self._step_stack):
            self.train_iters += 1

    def on_eval_step_start(self) -> None:
        """Before an evaluation step (``step`` too, after the evaluation's own warm-up)."""
        if self.enabled:
            self._start_step(self._eval_stack, self.eval_iter)

    def on_eval_step_end(self) -> None:
        """After an evaluation step."""
        if self._end_step(self._eval_stack):
            self.eval_iter += 1

    def on_checkpointing_start(self) -> None:
        """Before saving a checkpoint (or finalizing an asynchronous save)."""
        self.open_section(CHECKPOINTING)

    def on_checkpointing_end(self, is_async_finalization: bool = False) -> None:
        """After a save. Asynchronous saves vary too much for a learned timeout (Megatron)."""
        if not self.enabled:
            return
        self.close_section(CHECKPOINTING)
        if is_async_finalization:
            self.async_checkpointing = True
        else:
            self.checkpoints += 1

    @contextlib.contextmanager
    def checkpointing(self, is_async_finalization: bool = False) -> Iterator[None]:
        """``with bridge.checkpointing():`` around a checkpoint save."""
        self.on_checkpointing_start()
        try:
            yield
        finally:
            self.on_checkpointing_end(is_async_finalization)

    def on_checkpoint_loaded(self, is_local_chkpt: bool = False) -> None:
        """After loading a checkpoint; only a persistent load makes ``setup`` learnable."""
        if self.enabled:
            self.persistent_checkpoint_loaded = not is_local_chkpt
