"""The lean baseline that section costs are compared with (same run, same machine).

`LeanSection` is the least a Python host timer can do per `with`: a class context manager that
reads `time.perf_counter_ns()` twice and appends the difference to a bounded deque. A detection
section without GPU timing should cost at most 1.5x this (issue #10).
"""

from __future__ import annotations

import collections
from time import perf_counter_ns
from typing import Any


class LeanSection:
    """`with LeanSection():` records one host duration (ns) per entry; nothing else."""

    __slots__ = ("start_ns", "samples")

    def __init__(self, capacity: int = 8 * 1024) -> None:
        self.start_ns = 0
        self.samples: collections.deque = collections.deque(maxlen=capacity)

    def __enter__(self) -> None:
        self.start_ns = perf_counter_ns()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self.samples.append(perf_counter_ns() - self.start_ns)
        return False
