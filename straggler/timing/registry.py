"""`SectionRegistry`: the live sections of one detector, their hooks and their report windows.

Names are bounded: at most `max_names` live sections; a section unused for `name_ttl_reports`
reports is forgotten (its held contexts register it again when entered: `revive`). Unnamed
sections are found by their `with` statement's code object and line. Hooks are called around
every outermost entry; one that raises is logged and removed.

The registry is the sections' `SectionOwner` (straggler/timing/sections.py): it holds what their
hot path reads (`reports`, `hooks`, `enabled`) as plain attributes, and keeps every section's
context class in step with them (`specialise_all` after any change of `enabled`, `hooks` or the
op observer).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from typing import Any

from .._checks import check_bool, check_choice, check_name
from ..analysis.recent import recent_summary
from ..analysis.statistics import Statistic
from .gpu import GpuTiming
from .sections import (
    NULL_CONTEXT,
    UNRESOLVED,
    NullContext,
    Section,
    SectionContext,
    SectionHook,
    SectionKind,
)

__all__ = ["LOW_PERCENTILE", "SectionRegistry", "check_kind", "host_summaries", "host_window"]

#: The percentile of a section's window that stands for the rank's fast steps (the verdict
#: policy's evidence, docs/policy.md): interference lengthens some steps, a straggler all.
LOW_PERCENTILE = 5.0

log = logging.getLogger("straggler")


def check_kind(kind: Any) -> SectionKind:
    """`kind` as a `SectionKind`; ValueError naming the choices otherwise."""
    return SectionKind(check_choice("kind", kind, [k.value for k in SectionKind]))


def host_summaries(sections: dict[str, Section]) -> dict[str, dict[Statistic, float]]:
    """The window's host-time statistics (ms) of every section with samples.

    `Statistic.STD` is the sample standard deviation (ddof=1; NaN with one sample).
    """
    return host_window(sections)[0]


def host_window(sections: dict[str, Section]
                ) -> tuple[dict[str, dict[Statistic, float]],
                           dict[str, tuple[float, float, float, float, float]]]:
    """`host_summaries` and, per section, the lower and upper quartiles, the `LOW_PERCENTILE`,
    and the median and `LOW_PERCENTILE` of the window's recent part (ms) of its samples.

    The quartiles are the window's spread that the verdict policy weighs each median by, the
    low percentile the rank's fast steps, the recent part (the last samples, in the order
    taken: `straggler.analysis.recent`) a straggler that starts inside the window
    (docs/policy.md); they travel in the gathered report next to the medians.
    """
    import numpy as np

    out: dict[str, dict[Statistic, float]] = {}
    quartiles: dict[str, tuple[float, float, float, float, float]] = {}
    for name, s in sections.copy().items():  # a copy: threads may add names
        if not s.samples:
            continue
        a = np.array(tuple(s.samples), dtype=np.float64)  # a snapshot (other threads append)
        a *= 1e-6  # ns -> ms
        n = a.size
        low, q25, med, q75 = np.percentile(a, (LOW_PERCENTILE, 25.0, 50.0, 75.0))
        out[name] = {
            Statistic.MIN: float(a.min()), Statistic.MAX: float(a.max()),
            Statistic.MED: float(med), Statistic.AVG: float(a.mean()),
            Statistic.STD: float(a.std(ddof=1)) if n > 1 else math.nan,
            Statistic.NUM: float(n)}
        quartiles[name] = (float(q25), float(q75), float(low),
                           *recent_summary(a, LOW_PERCENTILE))
    return out, quartiles


class SectionRegistry:
    """Sections by name and by `with` location, bounded and expiring; the hooks around them.

    Args:
        gpu: the sections' GPU side (`straggler.timing.gpu.GpuTiming`).
        profiling_interval: every n-th outermost entry of a section is profiled.
        capacity: host samples kept per section in a window.
        gpu_interval: every n-th profiled GPU entry is GPU-timed.
        max_names: live section names at most.
        name_ttl_reports: a section unused for this many reports is forgotten.
        fail: the detector's fail-open entry.
        warn_once: ``warn_once(key, msg, *args)``, the detector's log-once.
    """

    def __init__(self, gpu: GpuTiming, *, profiling_interval: int, capacity: int,
                 gpu_interval: int, max_names: int, name_ttl_reports: int,
                 fail: Callable[[BaseException], None],
                 warn_once: Callable[..., object]) -> None:
        self.gpu = gpu
        self.profiling_interval = profiling_interval
        self.capacity = capacity
        self.gpu_interval = gpu_interval
        self.max_names = max_names
        self.name_ttl_reports = name_ttl_reports
        self.fail = fail
        self.warn_once = warn_once
        # Read by every entry: change `enabled` and `hooks` through set_enabled()/add_hook().
        self.enabled = True
        self.hooks: list[SectionHook] = []
        self.reports = 0  # reports finished: the clock of name expiry and leak detection
        self.sections: dict[str, Section] = {}
        self._by_location: dict[Any, dict[int, Section]] = {}  # code object -> line -> section
        self._names_lock = threading.Lock()  # section creation (threads may add names)

    # -- specialisation --------------------------------------------------------------------
    def set_enabled(self, enabled: bool) -> None:
        """Turn timing on or off for every section (off: entries only count and run hooks)."""
        self.enabled = enabled
        self.specialise_all()

    def specialise_all(self) -> None:
        """Let every section's contexts take the fast path if and only if it is correct now.

        Call after any change of `enabled`, `hooks` or the op observer (the short paths rely on
        them).
        """
        plain, capture = self.enabled and not self.hooks, self.gpu.capture is not None
        for s in self.sections.copy().values():  # a copy: threads may add names
            s.specialise(plain, capture)

    def specialise(self, s: Section) -> None:
        """`specialise_all` for one section (created, resolved, expired or revived)."""
        s.specialise(self.enabled and not self.hooks, self.gpu.capture is not None)

    # -- hooks -----------------------------------------------------------------------------
    def add_hook(self, hook: SectionHook) -> None:
        """Call `hook.on_section_enter/exit(name)` around every outermost section entry."""
        if not callable(getattr(hook, "on_section_enter", None)) or \
                not callable(getattr(hook, "on_section_exit", None)):
            raise ValueError(f"`hook={hook!r}` needs on_section_enter(name) and "
                             "on_section_exit(name) methods")
        if hook not in self.hooks:
            self.hooks.append(hook)
            self.specialise_all()

    def remove_hook(self, hook: SectionHook) -> None:
        """Stop notifying `hook` (a no-op if it is not registered)."""
        if hook in self.hooks:
            self.hooks.remove(hook)
            self.specialise_all()

    def call_hooks_enter(self, name: str) -> None:
        """`on_section_enter(name)` of every hook; a hook that raises is logged and removed."""
        for hook in tuple(self.hooks):
            try:
                hook.on_section_enter(name)
            except Exception as exc:  # noqa: BLE001 - a broken hook must not break training
                self._drop_hook(hook, exc)

    def call_hooks_exit(self, name: str) -> None:
        """`on_section_exit(name)` of every hook, newest first; a failing hook is removed."""
        for hook in tuple(reversed(self.hooks)):
            try:
                hook.on_section_exit(name)
            except Exception as exc:  # noqa: BLE001 - a broken hook must not break training
                self._drop_hook(hook, exc)

    def _drop_hook(self, hook: SectionHook, exc: BaseException) -> None:
        log.error("straggler: section hook %r failed and was removed: %s", hook, exc,
                  exc_info=exc)
        self.remove_hook(hook)

    # -- lookup ----------------------------------------------------------------------------
    def section(self, name: str, profile_cuda: bool = True,
                kind: SectionKind | str = SectionKind.COMPUTE) -> SectionContext | NullContext:
        """The reusable context of section `name` (created on first use).

        A `NullContext` when `max_names` live names are in use (logged once).
        """
        check_name("name", name)  # None (a `with` statement's location) never comes here
        # Every argument is checked before a name is registered: a bad call leaves nothing.
        check_bool("profile_cuda", profile_cuda)
        kind = check_kind(kind)
        s = self.sections.get(name)
        if s is None:
            s = self._new_section(name, kind)
            if s is None:
                return NULL_CONTEXT
        elif kind is not s.kind:
            raise ValueError(f"`kind={kind.value!r}` differs from the kind of section {name!r} "
                             f"({s.kind.value!r})")
        return _context(s, profile_cuda)

    def located_section(self, code: Any, line: int, profile_cuda: bool,
                        kind: SectionKind | str) -> SectionContext | NullContext:
        """The section named after a `with` statement's `file:line` (cached per location)."""
        check_bool("profile_cuda", profile_cuda)
        kind = check_kind(kind)
        by_line = self._by_location.get(code)
        s = by_line.get(line) if by_line is not None else None
        if s is None:
            s = self.sections.get(f"{code.co_filename}:{line}")
            if s is None:
                s = self._new_section(f"{code.co_filename}:{line}", kind)
                if s is None:
                    return NULL_CONTEXT
            s.location = (code, line)
            self._by_location.setdefault(code, {})[line] = s
        elif kind is not s.kind:
            raise ValueError(f"`kind={kind.value!r}` differs from the kind of section "
                             f"{s.name!r} ({s.kind.value!r})")
        return _context(s, profile_cuda)

    def _new_section(self, name: str, kind: Any) -> Section | None:
        """A new registered section; None when `max_names` live names are in use (logged once).

        Thread-safe: two threads adding the same name get one section.
        """
        kind = check_kind(kind)
        with self._names_lock:
            s = self.sections.get(name)
            if s is not None:
                return s
            if len(self.sections) >= self.max_names:
                self.warn_once("max-names", "straggler: %d section names are in use "
                               "(max_names); new names are not timed until names unused for "
                               "%d reports expire (first refused: %r)", self.max_names,
                               self.name_ttl_reports, name)
                return None
            s = Section(self, self.gpu, name, kind, self.profiling_interval, self.capacity,
                        self.gpu_interval)
            s.seen = s.entered_report = self.reports
            self.specialise(s)
            self.sections[name] = s  # readers iterate a copy (dict.copy() holds the GIL)
        return s

    def revive(self, s: Section) -> None:
        """A held context of an expired section was entered again: register it anew."""
        with self._names_lock:
            if not s.expired:
                return
            if self.sections.get(s.name) is None and len(self.sections) < self.max_names:
                s.expired = False
                s.seen = s.entered_report = self.reports
                self.sections[s.name] = s
        self.specialise(s)  # back on the short paths (the GPU one once its timer is resolved)

    # -- report windows --------------------------------------------------------------------
    def summaries(self) -> dict[str, dict[Statistic, float]]:
        """This window's host-time statistics (ms) of every section with samples."""
        return host_summaries(self.sections)

    def window(self) -> tuple[dict[str, dict[Statistic, float]],
                              dict[str, tuple[float, float, float, float, float]]]:
        """`summaries` and each section's quartiles, low percentile and recent part (ms)
        (`host_window`)."""
        return host_window(self.sections)

    def new_window(self) -> None:
        """Start the next window: clear samples, note which sections were used, expire names.

        The first profiled GPU entry of each section in the new window is a GPU sample (then
        every `gpu_interval`-th), so a short window still has GPU time.

        The short paths keep no entry count and no report number (a cost per entry): a section
        was used in the window if it has samples or its general-path count moved; a section
        not open now gets the new report number, so that only an entry left open across this
        report looks like a leak to the same thread's next entry (sections.py).
        """
        self.reports += 1
        now = self.reports
        for s in self.sections.copy().values():
            if s.samples or s.count != s.seen_count:
                s.seen, s.seen_count = now, s.count
            s.samples.clear()
            s.gpu_left = 0  # every window gets a GPU sample: its first profiled GPU entry
            if not s.depth:
                s.entered_report = now
        self.expire_names()

    def expire_names(self) -> None:
        """Forget sections unused for `name_ttl_reports` reports (called at each report); the
        one that marks the steps (``Section.step_mark``) is kept: it has a job to do."""
        now = self.reports
        ttl = self.name_ttl_reports
        stale = [name for name, s in self.sections.copy().items()  # seen: set by new_window
                 if now - s.seen >= ttl and s.depth == 0 and s.step_mark is None]
        if not stale:
            return
        with self._names_lock:
            sections = self.sections
            for name in stale:
                s = sections.pop(name, None)
                if s is None or s.depth:  # entered meanwhile: keep it
                    if s is not None:
                        sections[name] = s
                    continue
                self._forget(s)

    def _forget(self, s: Section) -> None:
        s.expired = True
        s.timer_id = UNRESOLVED  # looked up again (and re-registered) on next use
        self.specialise(s)  # the general path revives it
        self.gpu.forget(s.name)
        if s.location is not None:
            code, line = s.location
            by_line = self._by_location.get(code)
            if by_line is not None and by_line.get(line) is s:
                del by_line[line]
                if not by_line:
                    del self._by_location[code]


def _context(s: Section, profile_cuda: Any) -> SectionContext:
    if profile_cuda is True:
        return s.gpu_ctx
    if profile_cuda is False:
        return s.host_ctx
    raise ValueError(f"`profile_cuda={profile_cuda!r}` must be True or False")
