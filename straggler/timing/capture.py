"""Per-op capture: report every torch compute op inside profiled sections to the engine.

Each outermost op that touches the device is reported with the engine's busy-time API
(`op_begin`/`op_end`, docs/engine.md "Busy time"): its GPU segment goes to the open section's
busy sample and, with per-op timers, to a timer keyed by op name, input shapes and dtype, e.g.
``aten.mm.default(64x32,32x16)float32``. Collectives end with `comm_end`, so their time is in no
segment. The observer is the C++ extension `straggler._ops` (an at::RecordFunction callback);
without it a Python `TorchDispatchMode` does the same at a higher cost per op.

Never timed: collectives and everything else in the c10d namespaces (a collective lasts
longest on the ranks that wait for the straggler, so it would blame the wrong ranks), view
and metadata ops (no kernel; `untimed_ops.UNTIMED_OPS`, seen through: the ops they call are
reported on their own), profiler markers. Those ops still run, untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import comm_ops
from .untimed_ops import UNTIMED_OPS

__all__ = ["OpCapture", "is_communication_op", "op_key"]

log = logging.getLogger("straggler")

# Namespaces whose ops move data between ranks (or wait for it): straggler/comm_ops.py.
COMMUNICATION_NAMESPACES = frozenset(comm_ops.NAMESPACES)
# Namespaces of bookkeeping ops that launch no work.
_SKIPPED_NAMESPACES = frozenset({"profiler"})
# Ops whose timing decision is kept: more than the distinct ops a job runs (aten has ~3,000
# overloads), so in practice each op is decided once; the bound keeps a process that creates
# ops on the fly (custom ops, torch.compile) from growing the cache for good.
TIMED_CACHE_SIZE = 4096


def is_communication_op(func: Any) -> bool:
    """Whether `func` (an OpOverload) is a collective / c10d op."""
    return getattr(func, "namespace", "") in COMMUNICATION_NAMESPACES


_TIMED: dict[Any, bool] = {}  # OpOverload -> whether it is timed; oldest first


def _is_timed(func: Any) -> bool:
    """Whether ``func`` (an OpOverload) is timed at all, decided once per op (`_decide_timed`).

    A plain dict rather than functools.lru_cache: a hit is one ``dict.get`` (lru_cache costs
    ~30 ns more per op, benchmarks/capture_fallback.py); beyond `TIMED_CACHE_SIZE` ops the
    oldest decision is dropped.
    """
    timed = _TIMED.get(func)
    if timed is None:
        timed = _decide_timed(func)
        if len(_TIMED) >= TIMED_CACHE_SIZE:
            del _TIMED[next(iter(_TIMED))]
        _TIMED[func] = timed
    return timed


def _decide_timed(func: Any) -> bool:
    """Compute ops are timed; collectives, profiler markers, views and metadata ops are not."""
    ns = getattr(func, "namespace", "")
    if ns in COMMUNICATION_NAMESPACES or ns in _SKIPPED_NAMESPACES:
        return False
    if getattr(func, "is_view", False):
        return False
    name = getattr(getattr(func, "_schema", None), "name", "")
    return not (ns == "aten" and name.split("::")[-1] in UNTIMED_OPS)


def op_key(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> str:
    """Timer name for one op call: op name, tensor input shapes, dtype of the first tensor."""
    shapes = []
    dtype = None
    for a in _tensors(args, kwargs):
        shapes.append("x".join(str(d) for d in a.shape) or "scalar")
        if dtype is None:
            dtype = a.dtype
    dt = str(dtype).replace("torch.", "") if dtype is not None else ""
    return f"{func}({','.join(shapes)}){dt}"


def _tensors(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Iterator[torch.Tensor]:
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


def _cache_key(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> tuple:
    return (func, *[(t.shape, t.dtype) for t in _tensors(args, kwargs)])


def _on_device(args: tuple[Any, ...], kwargs: dict[str, Any] | None, cuda: bool) -> bool:
    """Whether the op has an input on the timed device (CUDA, or any device without CUDA)."""
    if not cuda:
        return True
    return any(t.is_cuda for t in _tensors(args, kwargs))


class _Mode(TorchDispatchMode):
    """The Python fallback observer (no `straggler._ops`): the same engine calls per op."""

    def __init__(self, capture: OpCapture) -> None:
        super().__init__()
        self._capture = capture

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # Runs for every op inside a profiled section: no helper frames, the op called once.
        cap = self._capture
        token = tid = stream = -1  # token -1: the op runs untimed
        collective = False
        if cap.enabled and not cap.paused:
            if is_communication_op(func):
                collective = True
            elif _is_timed(func) and _on_device(args, kwargs, cap.cuda):
                tid = cap.timer_for(func, args, kwargs) if cap.per_op else -1
                if tid != -2:
                    try:
                        stream = cap.stream()  # -1: a CUDA graph is being captured
                        if stream >= 0:
                            token = cap.engine.op_begin(stream)
                    except Exception as exc:  # noqa: BLE001 - fail open
                        cap.fail(exc)
        try:
            return func(*args, **(kwargs or {}))  # the op's own exceptions propagate
        finally:
            if token >= 0:
                try:
                    cap.engine.op_end(token, tid, stream)
                except Exception as exc:  # noqa: BLE001 - fail open
                    cap.fail(exc)
            elif collective:
                cap.comm_end()  # restart the busy chain after the collective


def native_observer_available() -> bool:
    """Whether the C++ op observer `straggler._ops` is at hand for this torch (installed or in
    the build cache; this never builds it, see `straggler.timing.native_observer`)."""
    from .native_observer import load

    return load(build=False) is not None


class OpCapture:
    """Reports torch ops to `engine`'s busy-time API while a profiled section is open.

    `push()`/`pop()` bracket a profiled compute section (nesting counted); `pause()`/
    `resume()` bracket a communication section inside one. With `per_op`, each op's GPU time
    also goes to its own timer (`timer_names`). `native`: use `straggler._ops` (None: when
    built). `on_error` is called (once) with any exception raised by the timing itself; the
    op's own exceptions propagate untouched.
    """

    def __init__(self, engine: Any, stream: Callable[[], int],
                 on_error: Callable[[BaseException], None], per_op: bool = True,
                 native: bool | None = None) -> None:
        self.engine = engine
        self.stream = stream
        self.per_op = per_op
        self.enabled = True
        self.paused = 0
        self.cuda = torch.cuda.is_available()
        self._depth = 0
        self._mode: _Mode | None = None
        self._on_error = on_error
        self._ids: dict[tuple, int] = {}
        self._names: dict[str, None] = {}  # per-op timers of the Python path, insertion-ordered
        self.observer: Any = None
        if native is None:
            native = native_observer_available()
        if native:
            from .native_observer import load

            _ops = load(build=False)
            if _ops is None:
                raise RuntimeError("straggler._ops is not available for this torch "
                                   "(`straggler doctor` says why)")
            # Without CUDA in torch (tests: the simulated driver) CPU tensors stand for device
            # ones, on the stream the detector uses (0).
            self.observer = _ops.Observer(engine, per_op=per_op,
                                          device="cuda" if self.cuda else "cpu",
                                          stream=-1 if self.cuda else 0,
                                          untimed=sorted(UNTIMED_OPS),
                                          communication=comm_ops.record_prefixes())

    @property
    def timer_names(self) -> dict[str, None]:
        """Names of the per-op timers created so far."""
        if self.observer is not None:
            return dict.fromkeys(self.observer.timer_names())
        return self._names

    def comm_end(self) -> None:
        """A collective ended: restart the busy chain after it (fail open)."""
        try:
            stream = self.stream()
            if stream >= 0:
                self.engine.comm_end(stream)
        except Exception as exc:  # noqa: BLE001 - fail open
            self.fail(exc)

    def timer_for(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> int:
        """The engine timer id for this op call (created once per key), -2 on failure."""
        try:
            key = _cache_key(func, args, kwargs)
            tid = self._ids.get(key)
            if tid is None:
                name = op_key(func, args, kwargs)
                tid = self.engine.timer_id(name)
                self._ids[key] = tid
                self._names[name] = None
            return tid
        except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
            self.fail(exc)
            return -2

    def fail(self, exc: BaseException) -> None:
        """Stop timing ops and hand the error to the owner (which logs once and disables)."""
        self.enabled = False
        if self.observer is not None:
            self.observer.disable()
        self._on_error(exc)

    def push(self) -> None:
        """A profiled compute section opens: start observing ops on the outermost one."""
        self._depth += 1
        if self._depth == 1 and self.enabled:
            if self.observer is not None:
                self.observer.enable()
            else:
                self._mode = _Mode(self)
                self._mode.__enter__()

    def pop(self) -> None:
        """A profiled compute section closes: stop observing after the outermost."""
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth:
            return
        if self.observer is not None:
            self.observer.disable()
            if self.observer.failed and self.enabled:
                self.fail(RuntimeError(f"straggler._ops: {self.observer.error}"))
        elif self._mode is not None:
            mode, self._mode = self._mode, None
            mode.__exit__(None, None, None)

    def pause(self) -> None:
        """A communication section opens: ops run untimed until `resume`."""
        self.paused += 1
        if self.observer is not None:
            self.observer.set_paused(True)

    def resume(self) -> None:
        """The communication section closed: its time is in no segment; time ops again."""
        if self.paused:
            self.paused -= 1
            if not self.paused:
                if self.observer is not None:
                    self.observer.set_paused(False)
                self.comm_end()

    def close(self) -> None:
        """Stop observing if a section is still open; stop timing."""
        self.enabled = False
        while self._depth:
            self.pop()
        if self.observer is not None:
            self.observer.remove()
