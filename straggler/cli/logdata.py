"""Report logs read into per-report arrays: what `summarize` and `plot` need, compactly.

Each record is reduced as it is read (one float array per report, not the record), so logs of
thousands of reports of thousands of ranks fit in memory. Progress goes to stderr on long reads
(tqdm when installed and stderr is a terminal).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..sinks.reportlog import log_files, read_records

__all__ = ["LogData", "ReportRow", "load_log"]


@dataclass
class ReportRow:
    """One report, reduced."""

    time_s: float
    window_s: float
    window_iterations: int
    iteration: int
    ranks: np.ndarray
    """Global ranks of the report (int64)."""
    score: np.ndarray
    """Each rank's lowest relative score (GPU or any section); NaN: none."""
    step_ms: np.ndarray
    """Each rank's step time: the sum of its section medians (ms); NaN: no section."""
    flagged: frozenset[int]
    confirmed: frozenset[int]
    causes: dict[int, tuple[str, str]]
    """rank -> (cause label, evidence)."""
    report_ms: float


@dataclass
class LogData:
    """The reports of one or more logs, oldest first, and the nodes of their ranks."""

    files: list[Path]
    reports: list[ReportRow] = field(default_factory=list)
    nodes: dict[int, str] = field(default_factory=dict)

    @property
    def ranks(self) -> list[int]:
        """Every rank seen, sorted."""
        return sorted(self.nodes)


def _nanmin_columns(columns: Iterable[Sequence[Any]], n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    for col in columns:
        a = np.array([np.nan if v is None else v for v in col], dtype=np.float64)
        out = np.fmin(out, a)  # fmin ignores NaN
    return out


def _reduce(record: dict[str, Any]) -> ReportRow:
    ranks = np.asarray(record["ranks"], dtype=np.int64)
    n = len(ranks)
    rel = [record["gpu"]["relative"]] + [s["relative"] for s in record["sections"].values()]
    step = np.zeros(n)
    has = np.zeros(n, dtype=bool)
    for s in record["sections"].values():
        a = np.array([np.nan if v is None else v for v in s["median_ms"]], dtype=np.float64)
        step += np.nan_to_num(a)
        has |= ~np.isnan(a)
    step[~has] = np.nan
    window_s = record.get("window_s")
    return ReportRow(
        time_s=float(record["time"]),
        window_s=float(window_s) if window_s is not None else math.nan,
        window_iterations=int(record.get("window_iterations") or 0),
        iteration=int(record.get("iteration") or 0),
        ranks=ranks, score=_nanmin_columns(rel, n), step_ms=step,
        flagged=frozenset(int(f["rank"]) for f in record["flagged"]),
        confirmed=frozenset(int(r) for r in record["confirmed"]),
        causes={int(c["rank"]): (str(c["cause"]), str(c.get("evidence", "")))
                for c in record["causes"]},
        report_ms=float(record["overhead"].get("report_ms") or math.nan))


def _progress(items: Iterator[Any], what: str) -> Iterator[Any]:
    if not sys.stderr.isatty():
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=what, unit=" reports", file=sys.stderr, leave=False)


def load_log(paths: Sequence[str | Path]) -> LogData:
    """Read `paths` (each with its rotated files); ValueError names ``FILE:LINE`` on bad data."""
    files: list[Path] = []
    for p in paths:
        files += log_files(p)
    data = LogData(files)
    for f, number, record in _progress(read_records(files, rotated=False), "reading"):
        try:
            row = _reduce(record)
            for r, node in zip(record["ranks"], record["nodes"], strict=True):
                data.nodes[int(r)] = str(node)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{f}:{number}: malformed report record "
                             f"({type(exc).__name__}: {exc})") from None
        data.reports.append(row)
    if not data.reports:
        raise ValueError(f"{', '.join(map(str, files))}: no report records")
    data.reports.sort(key=lambda r: r.time_s)
    return data
