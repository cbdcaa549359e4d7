"""Every rank's telemetry window as one (ranks x fields) array behind the report's mapping.

`Report.rank_telemetry` is ``{global rank: {field: value}}``. At 16,384 ranks x 50 NVML fields,
building those 16k dicts when a report is unpacked cost about 250 ms on rank 0, and the report
log then read them back into an array: `TelemetryTable` keeps the gathered array, makes a
rank's dict only when it is looked up, and gives the readers that want whole fields
(`column`, `peer_medians`) the array itself.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from .rank_table import RankTable


class TelemetryTable(RankTable[Mapping[str, float]]):
    """``{global rank: {field: value}}`` over one array, NaN for an absent value; a rank's dict
    (its present fields only) is made when it is looked up."""

    def __init__(self, ranks: Sequence[int] | np.ndarray, fields: Sequence[str],
                 values: np.ndarray) -> None:
        self._set_ranks(ranks)
        self.fields = tuple(fields)
        self.array = np.asarray(values, dtype=np.float64).reshape(len(self.ranks),
                                                                     len(self.fields))

    @classmethod
    def of(cls, telemetry: Mapping[int, Mapping[str, float]]) -> TelemetryTable:
        """``telemetry`` itself when it is a table, else a table of the same values."""
        if isinstance(telemetry, TelemetryTable):
            return telemetry
        rows = list(telemetry.values())
        fields = sorted(set().union(*rows)) if rows else []
        try:  # each rank's row in one C call when it has every field (numbers)
            row = operator.itemgetter(*fields)  # one value, not a tuple, for a single field
            values = np.fromiter(map(row, rows), np.dtype((np.float64, len(fields))), len(rows))
        except (KeyError, TypeError, ValueError):  # a field absent on some rank: NaN there
            values = np.array([[_float(row.get(f)) for f in fields] for row in rows],
                              dtype=np.float64)
        return cls(list(telemetry), fields, values.reshape(len(rows), len(fields)))

    def present_fields(self) -> list[str]:
        """The fields some rank has a finite value of, sorted."""
        present = np.flatnonzero(np.isfinite(self.array).any(axis=0))
        return sorted(self.fields[i] for i in present.tolist())

    def column(self, field: str) -> np.ndarray:
        """``field`` for every rank of `ranks` (NaN where absent or unknown)."""
        if field not in self.fields:
            return np.full(len(self.ranks), np.nan)
        return self.array[:, self.fields.index(field)]

    def by_rank(self, field: str) -> dict[int, float]:
        """``{rank: value}`` of ``field`` for the ranks with a finite value."""
        values = self.column(field)
        keep = np.isfinite(values)
        return dict(zip(self.ranks[keep].tolist(), values[keep].tolist(), strict=True))

    def peer_medians(self, exclude: Collection[int] = ()) -> PeerMedians:
        """Each field's median over the ranks not in ``exclude`` (computed once per field)."""
        keep = ~np.isin(self.ranks, np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
        return PeerMedians(self, keep)

    def __getitem__(self, rank: int) -> dict[str, float]:
        row = self.array[self._row(rank)].tolist()
        return {f: v for f, v in zip(self.fields, row, strict=True) if not math.isnan(v)}

    def __repr__(self) -> str:
        return f"TelemetryTable({len(self)} ranks x {len(self.fields)} fields)"


class PeerMedians:
    """``medians(field)``: the median of ``field``'s finite values over a set of ranks, NaN when
    none has one."""

    def __init__(self, table: TelemetryTable, keep: np.ndarray) -> None:
        self._table, self._keep = table, keep
        self._cache: dict[str, float] = {}
        self.ranks = int(keep.sum())
        """How many ranks the medians are taken over."""

    def __call__(self, field: str) -> float:
        if field not in self._cache:
            values = self._table.column(field)[self._keep]
            values = values[np.isfinite(values)]
            self._cache[field] = float(np.median(values)) if values.size else math.nan
        return self._cache[field]


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):  # None, or not a number: absent
        return math.nan
