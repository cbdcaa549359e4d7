"""Reference-counted FT sections: nested or repeated opens reach NVRx once, closes one by one.

``RankMonitorClient.end_all_sections()`` does nothing in NVRx 0.5 and later, so every section is
closed by name. Only the names the launcher configured are forwarded: NVRx 0.4.1 raises on any
other name and 0.5+ ignores it; we log once either way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .monitor import FTConnection
from .options import STEP

__all__ = ["SectionCounter"]


class SectionCounter:
    """Open/close FT sections through `conn`; also the longest ``step`` since the last read.

    `clock` returns seconds (default ``time.monotonic``); it times ``step``.
    """

    def __init__(self, conn: FTConnection, clock: Callable[[], float] = time.monotonic) -> None:
        self._conn = conn
        self._clock = clock
        self._open: dict[str, int] = {}
        self._step_open_t = 0.0
        self.window_step_max_s = -1.0  # longest `step` section since `take_window_step_max`

    def open(self, name: str) -> None:
        """Open FT section `name` (reference-counted: only the first open reaches FT)."""
        conn = self._conn
        if not conn.enabled:
            return
        n = self._open.get(name, 0)
        self._open[name] = n + 1
        if n:
            return
        if name not in conn.configured:
            self._unknown(name)
            return
        try:
            conn.client.start_section(name)
        except Exception as exc:  # noqa: BLE001 - fail open
            conn.fail(f"start_section({name!r})", exc)
            return
        if name == STEP:
            self._step_open_t = self._clock()

    def close(self, name: str) -> None:
        """Close FT section `name` (the last close of a nested use reaches FT)."""
        conn = self._conn
        if not conn.enabled:
            return
        n = self._open.get(name, 0)
        if n == 0:
            return  # unbalanced close: ignore rather than make FT raise
        if n > 1:
            self._open[name] = n - 1
            return
        del self._open[name]
        if name not in conn.configured:
            return
        if name == STEP:
            self.window_step_max_s = max(self.window_step_max_s,
                                         self._clock() - self._step_open_t)
        try:
            conn.client.end_section(name)
        except Exception as exc:  # noqa: BLE001 - fail open
            conn.fail(f"end_section({name!r})", exc)

    def close_fully(self, name: str) -> None:
        """Close `name` whatever its nesting count (no-op when it is not open)."""
        if name in self._open:
            self._open[name] = 1
            self.close(name)

    def close_all(self) -> None:
        """Close every open section, the most recently opened first."""
        for name in reversed(list(self._open)):
            self.close_fully(name)

    def counts(self) -> dict[str, int]:
        """FT sections open now, with their nesting counts."""
        return dict(self._open)

    def take_window_step_max(self) -> float:
        """The longest ``step`` since the last call (-1.0: none), and start a new window."""
        longest, self.window_step_max_s = self.window_step_max_s, -1.0
        return longest

    def _unknown(self, name: str) -> None:
        conn = self._conn
        if conn.generation == "0.4":
            why = "NVRx 0.4 raises on names outside rank_section_timeouts, so it is not sent"
        else:
            why = "NVRx 0.5+ ignores names outside rank_section_timeouts"
        conn.warn_once(f"unknown:{name}", "straggler: FT section %r is not configured "
                       "(--ft-rank-section-timeouts has %s); %s", name,
                       sorted(conn.configured), why)
