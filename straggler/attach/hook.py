"""The lazy import hook: wrap ``torch.distributed.init_process_group`` once torch.distributed loads.

`install()` runs at interpreter start in every Python process of an attached job (from the
``sitecustomize`` that `straggler run` puts on ``PYTHONPATH``, docs/attach.md). It imports
nothing of torch: a process that never imports ``torch.distributed`` (the launcher of a non-torch
job, a compiler, a tool) only carries one inert entry in ``sys.meta_path``. When
``torch.distributed`` is imported, right after its module ran and before the importer sees it,
``init_process_group`` and ``destroy_process_group`` are replaced by thin wrappers (in
``torch.distributed`` and ``torch.distributed.distributed_c10d``, so that ``from torch.distributed
import init_process_group`` gets them too). The wrappers call the original first with the same
arguments and return its result unchanged; only then, and never raising, the worker starts the
detector (`straggler.attach.worker`). A process that never calls ``init_process_group`` (the
launcher, a DataLoader worker) never loads the worker. Before the original
``init_process_group`` the wrapper imports ``torch.distributed.nn.functional``, so that the
script's ``destroy_process_group`` frees the group (`_before_init`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.abc
import importlib.machinery
import logging
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["install", "installed", "patch_torch_distributed", "report_failure", "start"]

log = logging.getLogger("straggler")

_TARGET = "torch.distributed"
_ORIGINAL = "__straggler_original__"
_reported: list[str] = []  # the attach's one failure line per process
_bad_settings: list[BaseException] = []  # reported at the process's init_process_group


def report_failure(what: str, exc: BaseException) -> None:
    """The one line an attach failure prints (once per process); the job runs unattached."""
    if _reported:
        return
    _reported.append(what)
    # One write per line: ranks sharing a stderr (a launcher's pipe) never interleave halves.
    sys.stderr.write(f"straggler: attach failed ({what}: {type(exc).__name__}: {exc}); the job "
                     "runs without straggler detection\n")
    sys.stderr.flush()


class _Loader(importlib.abc.Loader):
    """Runs the real loader, then patches the module (the module's loader stays the real one)."""

    def __init__(self, loader: Any, patch: Callable[[ModuleType], None] | None = None) -> None:
        self._loader = loader
        self._patch = patch if patch is not None else patch_torch_distributed

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        try:
            self._patch(module)
        except Exception as exc:  # noqa: BLE001 - never into the import
            report_failure(f"patching {module.__name__}", exc)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``torch.distributed`` (and torchrun's process module, `launcher`) through the
    other finders and hands back a patching loader; it leaves ``sys.meta_path`` once both
    were imported."""

    def __init__(self) -> None:
        from . import launcher

        self._targets: dict[str, Callable[[ModuleType], None]] = {
            _TARGET: patch_torch_distributed, launcher.ELASTIC_API: launcher.patch_elastic_api}

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        patch = self._targets.pop(fullname, None)
        if patch is None:
            return None
        if not self._targets:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self)  # each module, once
        try:
            for finder in sys.meta_path:
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            spec.loader = _Loader(spec.loader, patch)
            return spec
        except Exception as exc:  # noqa: BLE001 - the normal import goes on without us
            report_failure("the import hook", exc)
            return None


def installed() -> bool:
    """Whether the hook waits in ``sys.meta_path`` or torch.distributed is already patched."""
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return True
    module = sys.modules.get(_TARGET)
    return module is not None and hasattr(getattr(module, "init_process_group", None), _ORIGINAL)


def install() -> None:
    """Arrange for torch.distributed to be patched when it is imported (now, if it already is)."""
    if installed():
        return
    module = sys.modules.get(_TARGET)
    if module is not None:
        patch_torch_distributed(module)
    else:
        sys.meta_path.insert(0, _Finder())


def start() -> None:
    """What the attach's ``sitecustomize`` runs: check the settings, then `install`.

    Runs twice when both the ``sitecustomize`` and the ``straggler_attach.pth`` line of an
    installed package start it (the second does nothing). Bad settings
    (``STRAGGLER_REPORT_INTERVAL=banana``, ``STRAGGLER_AUTO=banana``) print one line naming the
    variable when the process calls ``init_process_group`` (so a rank, not the launcher, a
    DataLoader worker or a tool started with the same environment), which then tells the other
    ranks and runs unattached. ``STRAGGLER_DISABLE=1`` leaves it unattached silently; its
    ``init_process_group`` still tells the other ranks (`Comm.decline`), whose attach then
    gives up at once instead of waiting ``STRAGGLER_COMM_TIMEOUT`` for it.
    """
    try:
        from .. import _env
        from .settings import AttachSettings

        try:
            if not _env.AUTO.read():
                return
            if not _env.DISABLE.read():
                AttachSettings.from_env()
        except ValueError as exc:
            _bad_settings.append(exc)
        install()
        from . import launcher

        launcher.install()  # torchrun stopped by a signal: no traceback (launcher.py)
    except Exception as exc:  # noqa: BLE001 - fail open: the job runs unattached
        report_failure("reading the environment", exc)


def _wrap(original: Callable[..., Any], after: Callable[[], None] | None,
          before: Callable[[Any, Any], None] | None = None) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            before(args, kwargs)
        result = original(*args, **kwargs)  # the script's call, its errors its own
        if after is not None:
            after()
        return result

    setattr(wrapper, _ORIGINAL, original)
    return wrapper


def _before_init(args: Any, kwargs: Any) -> None:
    # torch.distributed.nn.functional binds ``group=group.WORLD`` as default arguments at its
    # import. Imported after init_process_group (torch._dynamo imports it, and a torch.optim
    # optimizer imports torch._dynamo), it keeps the default group, and its gloo threads, alive
    # past destroy_process_group() into the interpreter's finalization, where torch 2.13 can
    # abort the finished job (docs/detector.md "Exit"). Imported first, it binds None.
    with contextlib.suppress(Exception):  # a best effort: never into the script's init
        importlib.import_module("torch.distributed.nn.functional")


def _after_init() -> None:
    if _bad_settings:  # this rank stays out: it says why, and tells the others at once
        with contextlib.suppress(Exception):
            from ..dist.comm import Comm

            Comm.decline(f"has a bad straggler setting ({_bad_settings[0]})")
        report_failure("reading the environment", _bad_settings[0])
        return
    try:
        from . import worker

        worker.attach_after_init()
    except Exception as exc:  # noqa: BLE001 - fail open: the job runs unattached
        report_failure("starting the detector", exc)


def _before_destroy(args: Any, kwargs: Any) -> None:
    worker = sys.modules.get(__package__ + ".worker")
    if worker is None:
        return
    try:
        group = kwargs.get("group", args[0] if args else None)
        worker.before_destroy(group)
    except Exception as exc:  # noqa: BLE001 - never into the script's destroy
        report_failure("closing the detector", exc)


def patch_torch_distributed(module: ModuleType) -> None:
    """Wrap init/destroy_process_group in `module` (torch.distributed) and distributed_c10d."""
    c10d = getattr(module, "distributed_c10d", None)
    wrappers: dict[int, Callable[..., Any]] = {}  # one wrapper per original function
    for owner in (module, c10d):
        if owner is None:
            continue
        for name, after, before in (("init_process_group", _after_init, _before_init),
                                    ("destroy_process_group", None, _before_destroy)):
            original = getattr(owner, name, None)
            if original is None or hasattr(original, _ORIGINAL):
                continue
            wrapper = wrappers.get(id(original))
            if wrapper is None:
                wrapper = wrappers[id(original)] = _wrap(original, after, before)
            setattr(owner, name, wrapper)
