"""Report logs read into per-report arrays: what `summarize` and `plot` need, compactly.

Each record is reduced as it is read (one float array per report, not the record), so logs of
thousands of reports of thousands of ranks fit in memory. Records are grouped by their run id
(two jobs that wrote one log are two runs). A line that is not a valid record raises
``ValueError("FILE:LINE: ...")``, never another exception; with ``skip_bad`` it is skipped and
counted instead. Progress goes to stderr on long reads (tqdm when installed and stderr is a
terminal).
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

__all__ = ["STEP_SECTION", "LogData", "ReportRow", "load_log", "load_runs", "select_runs"]

STEP_SECTION = "step"
"""The section from one step boundary to the next (`straggler run`'s workers time it, with the
``dataloader`` section inside it): a rank's step time when a record has it."""

MAX_RANK = 2**31 - 1
"""Ranks above this are not ranks (a crafted or corrupted line)."""
MAX_COUNT = 2**53
"""Iteration counts above this are not counts."""


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
    individual: np.ndarray
    """Each rank's lowest individual score (GPU or any section; vs its own best); NaN: none."""
    step_ms: np.ndarray
    """Each rank's step time (ms; NaN: no section): the median of its section `STEP_SECTION`
    when the record has one (the attach's step boundary section, which holds the others), else
    its largest section median (the outermost when sections nest, which a record does not
    say; less than the step when they follow each other)."""
    flagged: frozenset[int]
    confirmed: frozenset[int]
    causes: dict[int, tuple[str, str]]
    """rank -> (cause label, evidence)."""
    report_ms: float
    """The whole `generate_report` call on the reporting rank (``overhead.report_ms``)."""
    scores_ms: float
    """Its scoring and exchange part (``overhead.scores_ms``)."""
    culprits: list[tuple[int, float, float]] = field(default_factory=list)
    """(rank, time lost to it in s, share of the job's time) per culprit (version 3)."""
    culprit_groups: dict[int, list[tuple[str, float]]] = field(default_factory=dict)
    """rank -> (group label, time lost there in s) per culprit group (version 3;
    `straggler.analysis.waits.CulpritGroup.label`)."""
    slow_between: list[tuple[int, float, float, float]] = field(default_factory=list)
    """(rank, its own time a step in ms, its peers' in ms, time the others lost to it in s) per
    rank confirmed slow between collectives (version 4; docs/culprits.md)."""
    step_sections: int = 1
    """Sections `step_ms` was chosen among (more than one: the step is at least that)."""
    waited_s: float = math.nan
    """Rank time the ranks waited at collectives for each other in the window, summed over the
    ranks (``waits.waited_s``, s); NaN when the record has no waits (collectives not observed,
    or a record older than version 3)."""


@dataclass
class LogData:
    """The reports of one run in one or more logs, oldest first, and the nodes of their ranks."""

    files: list[Path]
    reports: list[ReportRow] = field(default_factory=list)
    nodes: dict[int, str] = field(default_factory=dict)
    run_id: str = ""
    """The run's id ("" for version 1 records, which have none)."""
    bad_lines: list[str] = field(default_factory=list)
    """``FILE:LINE: reason`` of each line skipped (``skip_bad``), over all the files read."""
    hangs: list[dict[str, Any]] = field(default_factory=list)
    """The hang findings' records (docs/hang.md) written during this run, oldest first."""
    attempt: int = 1
    """Which start of the run this is (1: the first): a run restarted (torchrun
    ``--max-restarts``, an elastic restart, a second job appending with the same run id) is
    read as one `LogData` per start, told apart by the reporting rank's process id."""
    attempts: int = 1
    """How many starts the run's records hold."""
    restart_count: int | None = None
    """torchrun's restart count of this start (None: not recorded, or not under torchrun)."""
    pid: int = 0
    """The reporting rank's process id in this start (0: not recorded)."""

    @property
    def label(self) -> str:
        """The run id, with ``#N`` for the N-th start of a restarted run (``--run`` takes it)."""
        return self.run_id if self.attempts == 1 else f"{self.run_id}#{self.attempt}"

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


def _rank_list(values: Any) -> np.ndarray:
    if not isinstance(values, list) or not all(
            isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= MAX_RANK
            for r in values):
        raise ValueError(f"`ranks` must be a list of ranks in [0, {MAX_RANK}]")
    return np.asarray(values, dtype=np.int64)


def _count(record: dict[str, Any], key: str) -> int:
    value = record.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"`{key}={str(value)[:30]}` must be a count in [0, {MAX_COUNT}]")
    return int(value)


def _column(values: Any, n: int, what: str) -> list[Any]:
    if not isinstance(values, list) or len(values) != n:
        raise ValueError(f"`{what}` must be a list of {n} values (one per rank)")
    return values


def _reduce(record: dict[str, Any]) -> ReportRow:
    ranks = _rank_list(record["ranks"])
    n = len(ranks)
    sections = record["sections"]
    rel = [_column(record["gpu"]["relative"], n, "gpu.relative")]
    ind = [_column(record["gpu"]["individual"], n, "gpu.individual")]
    for name, sec in sections.items():
        rel.append(_column(sec["relative"], n, f"sections.{name}.relative"))
        ind.append(_column(sec["individual"], n, f"sections.{name}.individual"))
    # A rank's step: the `step` section, else its largest section. Summing the sections
    # counted nested ones twice (a "train_step" holding "forward" and "backward"), and a record
    # does not say how its sections nest; the largest is the outermost when they do.
    step = np.full(n, np.nan)
    steps = {STEP_SECTION: sections[STEP_SECTION]} if STEP_SECTION in sections else sections
    for name, sec in steps.items():
        a = np.array([np.nan if v is None else v
                      for v in _column(sec["median_ms"], n, f"sections.{name}.median_ms")],
                     dtype=np.float64)
        step = np.fmax(step, a)  # fmax ignores NaN
    timed = sum(1 for sec in steps.values() if any(v is not None for v in sec["median_ms"]))
    window_s = record.get("window_s")
    overhead = record["overhead"]
    return ReportRow(
        time_s=float(record["time"]),
        window_s=float(window_s) if window_s is not None else math.nan,
        window_iterations=_count(record, "window_iterations"),
        iteration=_count(record, "iteration"),
        ranks=ranks, score=_nanmin_columns(rel, n), individual=_nanmin_columns(ind, n),
        step_ms=step, step_sections=timed,
        flagged=frozenset(_rank_list([f["rank"] for f in record["flagged"]]).tolist()),
        confirmed=frozenset(_rank_list(record["confirmed"]).tolist()),
        causes={int(r): (str(c["cause"]), str(c.get("evidence", "")))
                for r, c in zip(_rank_list([c["rank"] for c in record["causes"]]).tolist(),
                                record["causes"], strict=True)},
        culprits=[(int(c["rank"]), float(c.get("time_lost_s") or 0.0),
                   float(c["share"]) if c.get("share") is not None else math.nan)
                  for c in record.get("culprits", [])],
        culprit_groups={int(c["rank"]): [(_group_label(g), float(g.get("time_lost_s") or 0.0))
                                         for g in c.get("groups", [])]
                        for c in record.get("culprits", [])},
        report_ms=float(overhead.get("report_ms") or math.nan),
        scores_ms=float(overhead.get("scores_ms") or math.nan),
        slow_between=[(int(b["rank"]), _float(b.get("own_ms")), _float(b.get("peers_ms")),
                       _float(b.get("lost_s")))
                      for b in record.get("slow_between", [])],
        waited_s=_waited_s(record.get("waits"), n))


def _waited_s(waits: Any, n: int) -> float:
    """The ranks' ``waits.waited_s`` summed (s); NaN when the record has no waits (``{}``)."""
    if not waits:
        return math.nan
    column = np.array([np.nan if v is None else v
                       for v in _column(waits["waited_s"], n, "waits.waited_s")],
                      dtype=np.float64)
    return float(np.nansum(column)) if np.isfinite(column).any() else math.nan


def _float(value: Any) -> float:
    """A record's number (None: NaN); a value that is no number raises ValueError/TypeError."""
    return math.nan if value is None else float(value)


def _progress(items: Iterator[Any], what: str) -> Iterator[Any]:
    if not sys.stderr.isatty():
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=what, unit=" reports", file=sys.stderr, leave=False)


_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError,
              RecursionError)


def load_runs(paths: Sequence[str | Path], skip_bad: bool = False,
              hangs: list[dict[str, Any]] | None = None) -> list[LogData]:
    """Read `paths` (each with its rotated files): one `LogData` per run, oldest run first.

    Raises ValueError naming ``FILE:LINE`` for a bad line (unless ``skip_bad``: then it is
    listed in each run's ``bad_lines``) and when no record is left. With a `hangs` list, the
    hang findings' records (docs/hang.md) are appended to it, oldest first, and a log holding
    only those is no error (no runs).
    """
    files: list[Path] = []
    for p in paths:
        files += log_files(p)
    bad: list[str] = []

    def skip(exc: Exception) -> None:
        bad.append(str(exc))

    runs: dict[str, list[tuple[float, int, int, int | None, dict[int, str], ReportRow]]] = {}

    def hang(_f: Path, _number: int, record: dict[str, Any]) -> None:
        if hangs is not None:
            hangs.append(record)

    records = read_records(files, rotated=False, on_bad=skip if skip_bad else None,
                           on_hang=hang if hangs is not None else None)
    for f, number, record in _progress(records, "reading"):
        try:
            row = _reduce(record)
            nodes = _column(record["nodes"], len(row.ranks), "nodes")
            run_id = str(record.get("run_id", ""))
            pid = _count(record, "pid")
            restarts = record.get("restart_count")
            restarts = None if restarts is None else _count(record, "restart_count")
        except _MALFORMED as exc:
            message = f"{f}:{number}: malformed report record ({type(exc).__name__}: {exc})"
            if not skip_bad:
                raise ValueError(message) from None
            bad.append(message)
            continue
        runs.setdefault(run_id, []).append((row.time_s, number, pid, restarts, {
            r: str(node) for r, node in zip(row.ranks.tolist(), nodes, strict=True)}, row))
    if hangs:
        hangs.sort(key=lambda h: float(h.get("time_s") or 0.0))
    if not runs and hangs:
        return []
    if not runs:
        skipped = f" ({len(bad)} bad line(s) skipped)" if bad else ""
        raise ValueError(f"{', '.join(map(str, files))}: no report records{skipped}")
    out: list[LogData] = []
    for run_id, rows in runs.items():
        rows.sort(key=lambda x: (x[0], x[1]))
        starts: list[LogData] = []
        for _, _, pid, restarts, rank_nodes, row in rows:
            last = starts[-1] if starts else None
            if last is None or _restarted(last, pid, restarts, row):
                last = LogData(files, run_id=run_id, bad_lines=bad, restart_count=restarts,
                               pid=pid)
                starts.append(last)
            last.nodes.update(rank_nodes)
            last.reports.append(row)
        for i, data in enumerate(starts):
            data.attempt, data.attempts = i + 1, len(starts)
        out += starts
    return sorted(out, key=lambda d: d.reports[0].time_s)


def _restarted(current: LogData, pid: int, restarts: int | None, row: ReportRow) -> bool:
    """Whether `row` (with its record's `pid` and `restarts`) begins a new start of the run
    `current` is the latest start of: another reporting process, another torchrun restart
    count, or (records without them) an iteration count that went back."""
    if pid and current.pid and pid != current.pid:
        return True
    if restarts is not None and restarts != current.restart_count:
        return True
    previous = current.reports[-1].iteration
    return 0 < row.iteration < previous


def load_log(paths: Sequence[str | Path], skip_bad: bool = False,
             run: str | None = None) -> LogData:
    """The one run in `paths` (or run `run`); ValueError names ``FILE:LINE`` on bad data, and
    the runs when there are several and `run` is None."""
    runs = load_runs(paths, skip_bad)
    if run is not None:
        chosen = select_runs(runs, run)
        if len(chosen) > 1:
            raise ValueError(f"`--run={run!r}` restarted {len(chosen) - 1} time(s); choose "
                             f"one start: {', '.join(repr(d.label) for d in chosen)}")
        return chosen[0]
    if len(runs) > 1:
        what = "runs" if all(d.attempts == 1 for d in runs) else "runs or starts of a run"
        raise ValueError(f"the log holds {len(runs)} {what} "
                         f"({', '.join(repr(d.label) for d in runs)}); choose one with --run")
    return runs[0]


def select_runs(runs: Sequence[LogData], run: str) -> list[LogData]:
    """The runs `run` names: a run id (every start of it) or a label (``ID#2``: one start);
    ValueError naming the runs when none matches."""
    chosen = [d for d in runs if d.label == run] or [d for d in runs if d.run_id == run]
    if not chosen:
        raise ValueError(f"`--run={run!r}` is not in the log; its runs: "
                         f"{', '.join(repr(d.label) for d in runs)}")
    return chosen


def _group_label(group: dict[str, Any]) -> str:
    """A culprit group of the log as people read it (``CulpritGroup.label``)."""
    from ..analysis.waits import CulpritGroup

    ranks = tuple(int(r) for r in group.get("ranks", []))
    return CulpritGroup(ranks, int(group.get("size", len(ranks))), 0.0, 0.0,
                        str(group.get("name") or "")).label
