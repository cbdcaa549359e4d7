"""`RankTable`: a ``{global rank: value}`` mapping over arrays, one row per rank.

The report's per-rank tables (`Report.waits`, `Report.own_time`, `Report.rank_telemetry`) hold
16,384 ranks at scale: they keep the gathered columns and make a rank's value only when it is
looked up, and give whole columns to the readers that want them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TypeVar

import numpy as np

__all__ = ["RankTable"]

V = TypeVar("V")


class RankTable(Mapping[int, V]):
    """The mapping part of a per-rank table: a subclass sets its ranks with `_set_ranks` and
    makes a value from its row (`_row`) in ``__getitem__``."""

    ranks: np.ndarray
    """The global ranks, one per row."""
    _index: dict[int, int] | None

    def _set_ranks(self, ranks: Sequence[int] | np.ndarray) -> None:
        self.ranks = np.asarray(ranks, dtype=np.int64).reshape(-1)
        self._index = None

    def _row(self, rank: int) -> int:
        """The row of ``rank``; KeyError when the table does not hold it."""
        if self._index is None:
            self._index = {r: i for i, r in enumerate(self.ranks.tolist())}
        return self._index[rank]

    def _rows_of(self, ranks: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``ranks``: whether the table holds it, and its row there (whole arrays,
        no lookup per rank)."""
        order = np.asarray(ranks, dtype=np.int64).reshape(-1)
        found, at = np.zeros(len(order), dtype=bool), np.zeros(len(order), dtype=np.int64)
        if len(self.ranks) and len(order):
            sorter = np.argsort(self.ranks, kind="stable")
            at = sorter[np.searchsorted(self.ranks, order, sorter=sorter).clip(0, len(sorter) - 1)]
            found = self.ranks[at] == order
        return found, at

    def __iter__(self) -> Iterator[int]:
        return iter(self.ranks.tolist())

    def __len__(self) -> int:
        return len(self.ranks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} ranks)"
