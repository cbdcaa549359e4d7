"""A thread's Python stack, read from another thread, and the collective it waits in.

`sys._current_frames()` needs the GIL, so the watchdog thread can read the main thread's stack
while the main thread runs Python or sits in a call that released the GIL (``time.sleep``, a
pipe or socket read, a ``torch.distributed`` wait, a CUDA synchronize). A C extension that
holds the GIL and never returns stops the watchdog thread as well: the rank then stops
publishing and is reported as silent (docs/hang.md, "What it cannot see").
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import Any

__all__ = ["CollectiveWait", "thread_frame", "format_stack", "innermost_location",
           "user_location", "dataloader_workers", "collective_wait", "group_name"]

# The module whose public functions are the torch.distributed collectives.
_C10D_FILE = os.path.join("torch", "distributed", "distributed_c10d.py")
_NOT_COLLECTIVES = frozenset({"is_initialized", "get_rank", "get_world_size", "get_backend",
                              "new_group", "destroy_process_group", "init_process_group"})


@dataclass(frozen=True)
class CollectiveWait:
    """The torch.distributed call a thread is in: ``op`` (``all_reduce``), the group's name
    (as ``ProcessGroup.group_name``) and the group's sequence number there (issued so far)."""

    op: str
    group: str
    seq: int


def thread_frame(ident: int) -> FrameType | None:
    """The current frame of thread `ident` (None when it has ended)."""
    return sys._current_frames().get(ident)


def format_stack(frame: FrameType, max_bytes: int, max_frames: int = 40) -> str:
    """The stack from the outermost call to `frame`, as ``traceback`` prints it, innermost last;
    cut to the innermost frames that fit in `max_bytes`."""
    lines = traceback.format_list(traceback.extract_stack(frame, limit=max_frames))
    out: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line)
        if size > max_bytes and out:
            out.append("  ...\n")
            break
        out.append(line)
    return "".join(reversed(out))


def innermost_location(frame: FrameType) -> str:
    """``file:line in function`` of the innermost frame."""
    code = frame.f_code
    return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"


_SITE_DIRS = ("site-packages", "dist-packages")


def _roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(straggler's and torch's folders, the standard library's folders), each ending in a
    separator."""
    core = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # straggler/
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        core.append(os.path.dirname(os.path.abspath(torch_file)))
    paths = sysconfig.get_paths()
    stdlib = {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib") if paths.get(k)}
    return (tuple(os.path.join(d, "") for d in core),
            tuple(os.path.join(d, "") for d in sorted(stdlib)))


def _in_package(filename: str) -> bool:
    return any(d in filename.split(os.sep) for d in _SITE_DIRS)


def _is_library(filename: str, packages: bool) -> bool:
    """Whether `filename` belongs to torch, straggler or the standard library (with `packages`:
    to any installed package as well), rather than to the job's own code."""
    if filename.startswith("<"):  # <frozen runpy> is the standard library; <string> is a -c
        return filename.startswith("<frozen ")
    core, stdlib = _roots()
    if filename.startswith(core):
        return True
    if _in_package(filename):  # site-packages may lie inside the standard library's folder
        return packages
    return filename.startswith(stdlib)


def _short(filename: str) -> str:
    """A library file's path from its package folder (``torch/distributed/...``)."""
    parts = filename.split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _SITE_DIRS:
            return os.sep.join(parts[i + 1:])
    core, stdlib = _roots()
    for root in core:
        if filename.startswith(root):
            return os.path.relpath(filename, os.path.dirname(root.rstrip(os.sep)))
    for root in stdlib:
        if filename.startswith(root):
            return os.path.relpath(filename, root)
    return filename


_DATALOADER_FILE = os.path.join("torch", "utils", "data", "dataloader.py")


def dataloader_workers(frame: FrameType) -> list[int]:
    """The pids of the DataLoader worker processes `frame`'s thread waits for a batch from
    (inside ``_MultiProcessingDataLoaderIter._get_data``), else []."""
    f: FrameType | None = frame
    while f is not None:
        code = f.f_code
        if code.co_name == "_get_data" and code.co_filename.endswith(_DATALOADER_FILE):
            try:
                workers = list(getattr(f.f_locals.get("self"), "_workers", None) or ())
                return [int(w.pid) for w in workers if w.pid is not None]
            except Exception:  # noqa: BLE001 - another torch's iterator: no pids
                return []
        f = f.f_back
    return []


def user_location(frame: FrameType) -> str:
    """Where the job's own code is in `frame`'s stack: ``file:line in function`` of the
    innermost frame outside torch, straggler, the standard library and (when some frame is)
    the installed packages; followed by ``(innermost: ...)`` when the stack goes deeper. The
    innermost frame alone when every frame is a library's."""
    frames: list[FrameType] = []
    f: FrameType | None = frame
    while f is not None and len(frames) < 200:
        frames.append(f)
        f = f.f_back
    for packages in (True, False):
        own = next((f for f in frames if not _is_library(f.f_code.co_filename, packages)),
                   None)
        if own is not None:
            break
    workers = dataloader_workers(frame)
    # where the batch is stuck: a worker process, whose stack this thread cannot read
    tail = (f"; waiting for a batch from its DataLoader worker process(es) "
            f"{', '.join(map(str, workers[:8]))}{', ...' if len(workers) > 8 else ''} "
            f"(`py-spy dump --pid PID` shows where they are)" if workers else "")
    if own is None or own is frame:
        return innermost_location(frame) + tail
    code = frame.f_code
    return (f"{innermost_location(own)} (innermost: {_short(code.co_filename)}:"
            f"{frame.f_lineno} in {code.co_name}){tail}")


def group_name(group: Any) -> str:
    """The name torch gives a process group (the same on every member); ``"0"`` is WORLD."""
    import torch.distributed as dist

    if group is None or group is dist.GroupMember.WORLD:
        group = dist.distributed_c10d._get_default_group()
    return str(group.group_name)


def collective_wait(frame: FrameType) -> CollectiveWait | None:
    """The torch.distributed collective that `frame`'s thread is in, or None.

    The outermost frame in ``torch/distributed/distributed_c10d.py`` is the public call (an
    ``all_reduce``, ``barrier``...); its ``group`` argument names the group.
    """
    found: FrameType | None = None
    f: FrameType | None = frame
    while f is not None:
        code = f.f_code
        if code.co_filename.endswith(_C10D_FILE) and not code.co_name.startswith("_") \
                and code.co_name not in _NOT_COLLECTIVES:
            found = f
        f = f.f_back
    if found is None:
        return None
    try:
        group = found.f_locals.get("group")
        if group is None:
            group = found.f_locals.get("pg")
        name = group_name(group)
        import torch.distributed as dist

        pg = dist.distributed_c10d._get_default_group() if group is None else group
        seq = int(pg._get_sequence_number_for_group())  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - a group we cannot read: the op alone
        return CollectiveWait(found.f_code.co_name, "?", -1)
    return CollectiveWait(found.f_code.co_name, name, seq)
