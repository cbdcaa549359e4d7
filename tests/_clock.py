"""A clock for code that takes `clock: Callable[[], float]`: time passes only when a test says."""

from __future__ import annotations

import threading


class FakeClock:
    """Seconds that move only through :meth:`advance` (safe to read from other threads)."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Let `seconds` pass."""
        if seconds < 0:
            raise ValueError(f"`seconds={seconds!r}` must be >= 0: time does not run backwards")
        with self._lock:
            self._now += seconds
