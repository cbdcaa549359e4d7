"""Per-op capture: time every torch compute op inside profiled sections.

A `TorchDispatchMode` sees each op the dispatcher runs (forward and, through autograd's
thread-local state, backward). Each compute op runs between a start and a stop of one engine
timer keyed by op name, input shapes and dtype, e.g. ``aten.mm.default(64x32,32x16)float32``.
On CUDA the engine records events on the current stream (GPU time); with the host backend it
reads the host clock around the op (on CPU that is the op's compute time).

Never timed: collectives and everything else in the c10d namespaces (a collective lasts
longest on the ranks that wait for the straggler, so it would blame the wrong ranks), view
and metadata ops (no kernel), profiler markers. Those ops still run, untouched.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["OpCapture", "is_communication_op", "op_key"]

log = logging.getLogger("straggler")

# Namespaces whose ops move data between ranks (or wait for it).
COMMUNICATION_NAMESPACES = frozenset(
    {"c10d", "_c10d_functional", "c10d_functional", "_c10d_functional_autograd", "_dtensor"})
# Namespaces of bookkeeping ops that launch no work.
_SKIPPED_NAMESPACES = frozenset({"profiler"})
_METADATA_OPS = frozenset({"detach", "alias", "lift_fresh", "_to_copy_meta", "set_", "resize_",
                           "empty", "empty_like", "empty_strided", "_local_scalar_dense", "item",
                           "is_same_size", "sym_size", "sym_stride", "sym_numel",
                           "sym_storage_offset"})


def is_communication_op(func: Any) -> bool:
    """Whether `func` (an OpOverload) is a collective / c10d op."""
    return getattr(func, "namespace", "") in COMMUNICATION_NAMESPACES


_TIMED: Dict[Any, bool] = {}  # OpOverload -> whether it is timed (decided once per op)


def _is_timed(func: Any) -> bool:
    timed = _TIMED.get(func)
    if timed is None:
        timed = _TIMED[func] = _decide_timed(func)
    return timed


def _decide_timed(func: Any) -> bool:
    ns = getattr(func, "namespace", "")
    if ns in COMMUNICATION_NAMESPACES or ns in _SKIPPED_NAMESPACES:
        return False
    if getattr(func, "is_view", False):
        return False
    base = getattr(getattr(func, "_schema", None), "name", "").split("::")[-1]
    return base not in _METADATA_OPS


def op_key(func: Any, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]) -> str:
    """Timer name for one op call: op name, tensor input shapes, dtype of the first tensor."""
    shapes = []
    dtype = None
    for a in _tensors(args, kwargs):
        shapes.append("x".join(str(d) for d in a.shape) or "scalar")
        if dtype is None:
            dtype = a.dtype
    dt = str(dtype).replace("torch.", "") if dtype is not None else ""
    return f"{func}({','.join(shapes)}){dt}"


def _tensors(args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]):
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, torch.Tensor):
                yield a


def _cache_key(func: Any, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]) -> tuple:
    return (func, *[(t.shape, t.dtype) for t in _tensors(args, kwargs)])


class _Mode(TorchDispatchMode):
    def __init__(self, capture: "OpCapture") -> None:
        super().__init__()
        self._capture = capture

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        cap = self._capture
        if cap.paused or not cap.enabled or not _is_timed(func):
            return func(*args, **(kwargs or {}))
        tid = cap.timer_for(func, args, kwargs)
        if tid < 0:
            return func(*args, **(kwargs or {}))
        try:
            stream = cap.stream()  # -1: a CUDA graph is being captured, run the op untimed
            if stream >= 0:
                cap.engine.start(tid, stream)
        except Exception as exc:  # noqa: BLE001 - fail open
            cap.fail(exc)
            stream = -1
        if stream < 0:
            return func(*args, **(kwargs or {}))
        try:
            return func(*args, **(kwargs or {}))  # the op's own exceptions propagate
        finally:
            try:
                cap.engine.stop(tid, stream)
            except Exception as exc:  # noqa: BLE001 - fail open
                cap.fail(exc)


class OpCapture:
    """Times torch compute ops with `engine` while at least one profiled section is open.

    `push()`/`pop()` bracket a profiled compute section (nesting counted); `pause()`/
    `resume()` bracket a communication section inside one. `on_error` is called (once) with
    any exception raised by the timing itself; the op's own exceptions propagate untouched.
    """

    def __init__(self, engine: Any, stream: Callable[[], int],
                 on_error: Callable[[BaseException], None]) -> None:
        self.engine = engine
        self.stream = stream
        self.enabled = True
        self.paused = 0
        self._depth = 0
        self._mode: Optional[_Mode] = None
        self._on_error = on_error
        self._ids: Dict[tuple, int] = {}
        self.timer_names: Dict[str, None] = {}  # names of the per-op timers, insertion-ordered

    def timer_for(self, func: Any, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]]) -> int:
        """The engine timer id for this op call (created once per key), -1 on failure."""
        try:
            key = _cache_key(func, args, kwargs)
            tid = self._ids.get(key)
            if tid is None:
                name = op_key(func, args, kwargs)
                tid = self.engine.timer_id(name)
                self._ids[key] = tid
                self.timer_names[name] = None
            return tid
        except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
            self.fail(exc)
            return -1

    def fail(self, exc: BaseException) -> None:
        """Stop timing ops and hand the error to the owner (which logs once and disables)."""
        self.enabled = False
        self._on_error(exc)

    def push(self) -> None:
        """A profiled compute section opens: enter the dispatch mode on the outermost one."""
        self._depth += 1
        if self._depth == 1:
            self._mode = _Mode(self)
            self._mode.__enter__()

    def pop(self) -> None:
        """A profiled compute section closes: leave the dispatch mode after the outermost."""
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0 and self._mode is not None:
            mode, self._mode = self._mode, None
            mode.__exit__(None, None, None)

    def pause(self) -> None:
        """A communication section opens: ops run untimed until `resume`."""
        self.paused += 1

    def resume(self) -> None:
        """The communication section closed: time ops again (pauses are counted)."""
        if self.paused:
            self.paused -= 1

    def close(self) -> None:
        """Leave the dispatch mode if a section is still open; stop timing."""
        self.enabled = False
        while self._depth:
            self.pop()
