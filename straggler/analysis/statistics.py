"""The statistics a timing summary holds, keyed exactly as in NVRx."""

from __future__ import annotations

import enum

__all__ = ["Statistic"]


class Statistic(enum.Enum):
    """One statistic of a timer's samples in a report interval.

    Summaries are ``Mapping[Statistic, float]``; times are in milliseconds. ``STD`` is the sample
    standard deviation (NaN with fewer than two samples) and ``NUM`` the number of samples.
    """

    MIN = enum.auto()
    MAX = enum.auto()
    MED = enum.auto()
    AVG = enum.auto()
    STD = enum.auto()
    NUM = enum.auto()

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Statistic.{self.name}"
