"""Fork safety: a forked child's detector is inert.

After ``fork()`` only the forking thread exists in the child: the NVML sampler's thread, the
gloo communicator's threads and the CUDA context are the parent's. Stopping or destroying them
there aborts ("terminate called without an active exception") or hangs. `os.register_at_fork`
calls `DetectorCore.forget_after_fork` on every live detector in the child: it turns detection
off and keeps the native objects alive for good (never destroyed, so no destructor runs), which
makes `Detector.shutdown()` and everything else a no-op in the child. The parent is untouched.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import weakref
from typing import Any

__all__ = ["track", "keep_forever"]

_live: weakref.WeakSet[Any] = weakref.WeakSet()
_kept: list[Any] = []  # objects leaked on purpose in a forked child


def track(core: Any) -> None:
    """Call ``core.forget_after_fork()`` in any child forked while ``core`` is alive."""
    _live.add(core)


def keep_forever(obj: Any) -> None:
    """Never destroy ``obj`` in this process (not even at interpreter exit)."""
    if obj is not None:
        _kept.append(obj)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))  # survives module teardown too


def _after_fork_in_child() -> None:
    for core in list(_live):
        with contextlib.suppress(Exception):  # never fail a fork
            core.forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
