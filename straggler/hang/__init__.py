"""Hang detection: every rank publishes its progress through the job's torch.distributed
store; when the job stops making progress, a surviving rank names the rank(s) the others wait
for, with their section and Python stack (docs/hang.md).

Modules: `options` (settings, the timeout in force), `progress` (what a rank publishes, read
off the process), `stacks` (a thread's stack, the collective it is in), `store` (the store
connection), `analysis` (records -> finding, pure), `watchdog` (the thread), `output` (log,
report log, Prometheus, FT, exit). `start_hang_detection` puts them together for the detector.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from .analysis import (
    EXITED,
    GONE,
    HANG,
    MISMATCHED,
    NOT_ARRIVED,
    STALL,
    Culprit,
    HangFinding,
    analyse,
)
from .options import EXIT_CODE, HangOptions, HangTimeout
from .output import HANG_SCHEMA, HANG_SCHEMA_VERSION, HangOutput, hang_record
from .progress import LocalProgress, ProgressRecord
from .store import ProgressStore, open_job_store
from .watchdog import HangWatchdog

__all__ = ["HangOptions", "HangTimeout", "EXIT_CODE", "HangFinding", "Culprit",
           "analyse", "HANG", "STALL", "NOT_ARRIVED", "GONE", "EXITED", "MISMATCHED",
           "HangOutput", "hang_record", "HANG_SCHEMA", "HANG_SCHEMA_VERSION", "LocalProgress",
           "ProgressRecord", "ProgressStore", "HangWatchdog", "start_hang_detection",
           "job_timeout_s"]

log = logging.getLogger("straggler")


def job_timeout_s(ft_bridge: Any = None, pg_timeout_s: float | None = None) -> float:
    """The shortest timeout that ends the job on a hang: the default process group's (read now
    unless given), and FT's section timeouts when FT is on (inf when none is known)."""
    out = pg_timeout_s if pg_timeout_s is not None else _pg_timeout_s()
    if ft_bridge is not None and getattr(ft_bridge, "enabled", False):
        try:
            ft = [float(v) for v in ft_bridge.current_timeouts().values() if v]
            out = min([out, *ft])
        except Exception:  # noqa: BLE001 - FT's timeouts unknown
            pass
    return out


def _pg_timeout_s() -> float:
    """The default process group's timeout (inf when unknown)."""
    import torch
    import torch.distributed as dist

    out = float("inf")
    try:
        pg = dist.distributed_c10d._get_default_group()
        for device in ("cuda", "cpu"):
            try:
                out = min(out, pg._get_backend(torch.device(device)).options._timeout
                          .total_seconds())
                break
            except Exception:  # noqa: BLE001 - no backend for this device
                continue
    except Exception:  # noqa: BLE001 - no default group
        pass
    return out


def start_hang_detection(options: HangOptions, *, node: str, gpu: Callable[[], str],
                         sections: Callable[[], Iterable[Any]], step: Callable[[], int],
                         observers: Any, ft_bridge: Any) -> HangWatchdog | None:
    """Start this rank's watchdog (None when torch.distributed runs one rank, or has no store).
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return None
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        own = open_job_store(options.store_timeout_s)
        # A fresh prefix per detector lifetime (initialize() again meets no stale keys); the
        # ranks advance it in lockstep, as dist/comm.py does for its groups.
        serial = own.add(f"straggler/hang/count{rank}", 1)
        store = ProgressStore(own, f"straggler/hang/{serial}")
    except Exception as exc:  # noqa: BLE001 - no store: no hang detection
        log.warning("straggler: hang detection is off: no torch.distributed store (%s)", exc)
        return None
    try:
        output = HangOutput(observers, ft_bridge)
        pg_timeout = _pg_timeout_s()  # fixed for the job; FT's are read every tick
        try:
            gpu_name = gpu()
        except Exception:  # noqa: BLE001 - the GPU is a detail of the report
            gpu_name = ""
        progress = LocalProgress(rank, node, gpu_name, sections, step)
        watchdog = HangWatchdog(options, progress, store, rank, world, output.finding,
                                on_exit=output.exit, on_clear=output.clear,
                                cap_s=lambda: job_timeout_s(ft_bridge, pg_timeout))
        watchdog.start()
    except Exception as exc:
        log.warning("straggler: hang detection is off on this rank: %s: %s",
                    type(exc).__name__, exc, exc_info=exc)
        return None
    return watchdog
