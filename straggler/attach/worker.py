"""The attached detector in one worker: started after the script's ``init_process_group``.

`attach_after_init` (called by the wrapper of `straggler.attach.hook`) builds a `DetectorCore`
on the default group, with the options of `AttachSettings` and the environment (report log,
Prometheus), and finds the job's steps itself:

- **The step boundary** is the optimizer's step: torch's global optimizer step post-hook
  (`torch.optim.optimizer.register_optimizer_step_post_hook`) fires after every
  ``optimizer.step()``; the first optimizer that steps paces the boundary (a GAN's second
  optimizer does not add a boundary). Every rank steps its optimizer the same number of times,
  so a report there is a point that every rank reaches.
- **Without an optimizer** (evaluation, inference) the boundary is every collective on the
  default group issued through torch.distributed's Python API (`all_reduce`, `all_gather`,
  `barrier`, ...): collectives on a group are, by their contract, made by every member in the
  same order, so the n-th one is reached by every rank. Nothing else is: DataLoader batches may
  differ between ranks (uneven shards), and a report that one rank never joins stalls the others
  until the detector's timeout. The first optimizer step switches to the optimizer for good (the
  report interval is measured again) and puts the collectives back as they were.
- **The whole step** is the section ``step``: from one boundary to the next (host time; GPU
  busy time through the op observer when there is a GPU). Each ``DataLoader`` batch is the host
  section ``dataloader`` (``_BaseDataLoaderIter.__next__``), where slow data loading shows.
- At each boundary: close ``step``, count the iteration and report when the interval elapsed
  (`DetectorCore.generate_report_if_interval_elapsed`, a collective on the detector's own
  group), open ``step`` again. The reporting rank prints one verdict line per report.

A script that runs its own `Detector` is left alone: at the first boundary after its
``Detector.initialize`` (the same boundary on every rank) the attached detector closes.
Anything failing here fails open: the detector's own errors through its `Lifecycle` (every rank
turns off at the next report); an error before the detector runs leaves the job unattached with
one line on stderr (`hook.report_failure`).
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import weakref
from collections.abc import Callable
from typing import Any

from .._constants import DATA_LOADING_SECTION
from ..detector import Detector, DetectorCore, disabled_by_env
from .hook import report_failure
from .settings import AttachSettings

__all__ = ["AttachedJob", "COLLECTIVES", "attach_after_init", "before_destroy", "current",
           "report_line"]

log = logging.getLogger("straggler")

# The collectives of torch.distributed's Python API counted as boundaries without an optimizer.
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
               "reduce_scatter_tensor", "broadcast", "reduce", "barrier", "all_to_all",
               "all_to_all_single", "gather", "scatter", "all_gather_object",
               "broadcast_object_list", "gather_object", "scatter_object_list")

class _Current:
    """The attached detector of this process (one at a time)."""

    job: AttachedJob | None = None


def current() -> AttachedJob | None:
    """The attached detector of this process, or None."""
    return _Current.job


def attach_after_init() -> None:
    """Start the attached detector (the script's ``init_process_group`` has just returned)."""
    if _Current.job is not None:
        return
    if disabled_by_env():  # the other ranks' attach would wait comm_timeout for this one
        from ..dist.comm import Comm

        Comm.decline("has STRAGGLER_DISABLE set")
        return
    if Detector.core() is not None:
        log.info("straggler: the script runs its own Detector; the attach stays out")
        return
    _Current.job = AttachedJob(AttachSettings.from_env())


def before_destroy(group: Any) -> None:
    """The script destroys the default group: close the attached detector first (local)."""
    job = _Current.job
    if job is None:
        return
    import torch.distributed as dist

    if group is None or group is dist.GroupMember.WORLD:
        _Current.job = None
        job.close()


class AttachedJob:
    """The detector of an attached worker, its step boundaries and its patches.

    Args:
        settings: the attach's options (`AttachSettings.from_env()`).
        out: where the reporting rank writes its per-report line (default stderr).
    """

    def __init__(self, settings: AttachSettings, out: Any = None) -> None:
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.settings = settings
        self._out = out
        # Same group as the script (the default one); report log and Prometheus from the env.
        self.core = DetectorCore(report_time_interval=settings.report_interval_s,
                                 comm_timeout_s=settings.comm_timeout_s)
        self.closed = False
        self.reports = 0
        self.mode = "optimizer" if settings.step == "optimizer" else "collective"
        self._step = self.core.section("step", profile_cuda=torch.cuda.is_available())
        self._data = self.core.section(DATA_LOADING_SECTION, profile_cuda=False)
        self._in_step = False
        self._started = False  # the first boundary was seen
        self._pacer: weakref.ref[Any] | None = None
        self._depth = 0  # nesting of counted collectives (all_gather_object calls all_gather)
        self._restore: list[Callable[[], None]] = []
        self._patched: list[tuple[Any, str, Any, Any]] = []
        try:
            if settings.step != "collective":
                handle = register_optimizer_step_post_hook(self._on_optimizer_step)
                self._restore.append(handle.remove)
            self._patch_dataloader()
            if settings.step != "optimizer":
                self._patch_collectives()
        except BaseException:
            self.close()
            raise

    # -- boundaries --------------------------------------------------------------------------
    def _on_optimizer_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        try:
            pacer = self._pacer() if self._pacer is not None else None
            if pacer is None:
                self._pacer = weakref.ref(optimizer)
            elif pacer is not optimizer:
                return
            if self.mode != "optimizer":
                self._switch_to_optimizer()
        except Exception as exc:  # noqa: BLE001 - never into the optimizer's step
            self.mode = "optimizer"
            self.core.fail(exc)  # off; this rank still counts and reports "off" below
        self.boundary()

    def _switch_to_optimizer(self) -> None:
        """The first optimizer step (same point on every rank): the optimizer paces from now."""
        self.mode = "optimizer"
        self._unpatch_collectives()
        self.core.cycle.restart_interval()  # step times of another kind: measure again

    def boundary(self) -> None:
        """One step ended and the next begins (every rank, the same number of times)."""
        if self.closed:
            return
        core = self.core
        if Detector.core() is not None:  # the script started its own: leave it alone
            log.info("straggler: the script initialized its own Detector; the attached detector "
                     "closes")
            self.close()
            return
        step = self._step
        if self._in_step:
            self._in_step = False
            try:
                step.__exit__(None, None, None)
            except Exception as exc:  # noqa: BLE001 - sections fail open; this is a last guard
                core.fail(exc)
        if self._started:  # a whole step ended (the first boundary only opens one)
            # Called on every boundary, also once this rank failed: it joins the next report
            # to say "off", so that every rank turns off together (lifecycle.py).
            report = core.generate_report_if_interval_elapsed()
            if report is not None:
                self.reports += 1
                self._announce(report)
        self._started = True
        if core.enabled:
            try:
                step.__enter__()
                self._in_step = True
            except Exception as exc:  # noqa: BLE001 - sections fail open; this is a last guard
                core.fail(exc)

    def _announce(self, report: Any) -> None:
        if self.settings.quiet:
            return
        try:
            line = report_line(report, self.reports, self.core.cycle.tracker.current_iter,
                               self.mode)
            out = self._out if self._out is not None else sys.stderr
            out.write(line + "\n")  # one write: never interleaved with another rank's
            out.flush()
        except Exception as exc:  # noqa: BLE001 - a line is not worth the job
            self.core.fail(exc)

    # -- patches -----------------------------------------------------------------------------
    def _patch_dataloader(self) -> None:
        from torch.utils.data import dataloader

        cls = dataloader._BaseDataLoaderIter
        original = cls.__next__
        data = self._data

        @functools.wraps(original)
        def __next__(it: Any) -> Any:
            with data:
                return original(it)

        cls.__next__ = __next__  # type: ignore[method-assign,assignment]

        def restore() -> None:
            if cls.__next__ is __next__:
                cls.__next__ = original  # type: ignore[method-assign]

        self._restore.append(restore)

    def _patch_collectives(self) -> None:
        import torch.distributed as dist
        from torch.distributed import distributed_c10d as c10d

        patched: list[tuple[Any, str, Any, Any]] = []
        for name in COLLECTIVES:
            original = getattr(c10d, name, None)
            if original is None:
                continue
            wrapper = self._counting(original)
            for owner in (c10d, dist):
                if getattr(owner, name, None) is original:
                    setattr(owner, name, wrapper)
                    patched.append((owner, name, original, wrapper))
        self._patched = patched

    def _unpatch_collectives(self) -> None:
        for owner, name, original, wrapper in self._patched:
            if getattr(owner, name, None) is wrapper:
                setattr(owner, name, original)
        self._patched = []

    def _counting(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """`original` (a collective), counting a boundary after each outermost call on the
        default group while the collective boundary is in use."""
        import torch.distributed as dist

        params = list(inspect.signature(original).parameters)
        index = params.index("group") if "group" in params else None
        job = weakref.ref(self)

        @functools.wraps(original)
        def collective(*args: Any, **kwargs: Any) -> Any:
            self_ = job()
            if self_ is None or self_.mode != "collective" or self_.closed:
                return original(*args, **kwargs)
            self_._depth += 1
            try:
                result = original(*args, **kwargs)
            finally:
                self_._depth -= 1
            if self_._depth == 0:
                group = kwargs.get("group")
                if group is None and index is not None and len(args) > index:
                    group = args[index]
                if group is None or group is dist.GroupMember.WORLD:
                    self_.boundary()
            return result

        return collective

    # -- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        """Put back what was patched and close the detector (local, idempotent)."""
        if self.closed:
            return
        self.closed = True
        if self._in_step:
            self._in_step = False
            self._step.__exit__(None, None, None)
        self._unpatch_collectives()
        for restore in reversed(self._restore):
            try:
                restore()
            except Exception as exc:  # noqa: BLE001 - closing goes on
                report_failure("restoring a patch", exc)
        self._restore.clear()
        self.core.close()


def report_line(report: Any, number: int, step: int, mode: str) -> str:
    """The reporting rank's line for `report` (docs/attach.md): the confirmed stragglers with
    their node and cause, then the ranks the job waited for at its collectives, with theirs."""
    parts = []
    for sid in sorted(report.confirmed, key=lambda sid: sid.rank):
        diagnosis = report.causes.get(sid.rank)
        cause = diagnosis.cause.value if diagnosis is not None else "no cause"
        parts.append(f"rank {sid.rank} (node {sid.node}): {cause}")
    verdict = "stragglers: " + (", ".join(parts) if parts else "none")
    culprits = getattr(report, "culprits", ())  # who the job waited for (docs/culprits.md)
    if culprits:
        nodes = getattr(report, "rank_to_node", {})
        verdict += "; the job waited for " + ", ".join(
            f"rank {c.rank} (node {nodes.get(c.rank, '<unknown>')}, {c.time_lost_s:.2f} s, "
            f"{c.share:.0%})" for c in culprits[:4])
    return f"straggler: report {number} (step {step}, {mode} boundary): {verdict}"
