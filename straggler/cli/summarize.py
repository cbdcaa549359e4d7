"""``straggler summarize LOG``: who was slow, why, for how long, and what it cost.

Time lost: in a synchronous job every rank waits for the slowest one. Where a report recorded
its collective waits (report log version 3 and later, collectives observed), the window's time
lost is measured: the time the ranks waited at collectives for each other, summed over the
ranks (``waits.waited_s``). Otherwise it is estimated: ``ranks x (slowest step - median step) x
steps`` of rank time over a job where every rank ran at the median. A rank's step is its
``step`` section's median when the record has that section (the attach's step boundary, which
holds its ``dataloader`` section), else its largest section median (the outermost when sections
nest, which the record does not say: their sum counted nested sections twice); steps are the
window's iterations, or ``window_s / slowest step`` when the log
has no iteration counts (reports generated without `generate_report_if_interval_elapsed`).

Two jobs that wrote one log are two runs (their records' ``run_id``): each gets its own
summary, oldest first. A run that restarted (torchrun ``--max-restarts``, an elastic restart, a
second job appending with the same run id: another reporting process) gets one summary per
start, and the first line says so.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .logdata import LogData, load_runs, select_runs

__all__ = ["RankSummary", "SlowBetween", "Summary", "WaitedFor", "format_summary", "run_summarize",
           "summarize"]


@dataclass
class RankSummary:
    """One rank's history over the log."""

    rank: int
    node: str
    reports_flagged: int = 0
    reports_confirmed: int = 0
    reports_waited_for: int = 0
    """Reports that named it a rank the job waited for at its collectives (a culprit)."""
    reports_slow: int = 0
    """Reports that flagged it, confirmed it or named it a culprit."""
    slow_s: float = 0.0
    """Wall time of the report windows in which it was flagged, confirmed or a culprit (s)."""
    worst_score: float = math.nan
    """Its lowest score in any report, relative or individual (GPU or any section)."""
    worst_kind: str = ""
    """Which kind `worst_score` is: "relative" (vs the other ranks) or "individual" (vs its own
    best; the only informative kind in a one-rank job)."""
    causes: dict[str, int] = field(default_factory=dict)
    """cause label -> reports that gave it."""
    evidence: str = ""
    """The latest evidence line."""


@dataclass
class WaitedFor:
    """A rank the job waited for at its collectives, over the log (docs/culprits.md)."""

    rank: int
    node: str
    lost_s: float = 0.0
    """Rank time the others lost waiting for it, summed over the reports naming it (s)."""
    reports: int = 0
    """Reports that named it a culprit."""
    groups: dict[str, float] = field(default_factory=dict)
    """Where: group label (``"world"``, ``"tp [ranks 2,3]"``) -> time lost there (s)."""


@dataclass
class SlowBetween:
    """A rank confirmed slow between its collectives, over the log (docs/culprits.md, "A rank
    slow outside its sections")."""

    rank: int
    node: str
    reports: int = 0
    """Reports that confirmed it on its own time between collectives."""
    lost_s: float = 0.0
    """Rank time the others lost waiting for it, summed over those reports (s)."""
    excess: float = math.nan
    """Its own time a step over its peers' less one, in the latest such report (0.2: 20 %)."""


@dataclass
class Summary:
    """The whole log."""

    files: list[str]
    reports: int
    ranks: int
    start_s: float
    end_s: float
    lost_rank_s: float
    """Rank time lost to waiting for the slowest rank (rank-seconds): measured at the
    collectives in `lost_measured` reports, estimated from the section times in the others."""
    run_rank_s: float
    """Rank time covered by the windows (rank-seconds)."""
    report_ms_median: float
    """Median duration of the whole `generate_report` call on the reporting rank (ms)."""
    scores_ms_median: float
    """Median of its scoring and exchange part (``Report.generate_report_elapsed_time``, ms)."""
    stragglers: list[RankSummary]
    run_id: str = ""
    waited_for: list[WaitedFor] = field(default_factory=list)
    """The ranks the job waited for at its collectives (report log version 3), most first."""
    skipped_lines: int = 0
    """Bad lines skipped while reading (``--skip-bad``), over all the files."""
    slow_between: list[SlowBetween] = field(default_factory=list)
    """The ranks confirmed slow between collectives (report log version 4), most costly first."""
    hangs: list[dict[str, Any]] = field(default_factory=list)
    """The hang findings written during the run (the log's ``straggler.hang`` records, oldest
    first, docs/hang.md)."""
    lost_measured: int = 0
    """Reports whose time lost was measured at the collectives (their record has waits)."""
    attempt: int = 1
    """Which start of its run this summary covers (a restarted run: one summary per start)."""
    attempts: int = 1
    """How many starts its run had in the log (more than 1: the run restarted)."""
    restart_count: int | None = None
    """torchrun's restart count of this start (None: not recorded)."""
    lost_largest_section: int = 0
    """Estimated reports whose step is the largest of several sections (no ``step`` section):
    exact when those nest, less than the time lost when they follow each other."""


def _window_lost_s(row: Any) -> float:
    """The window's rank time lost (s): measured when the record has waits, else estimated."""
    if math.isfinite(row.waited_s):
        return float(row.waited_s)
    step = row.step_ms[~np.isnan(row.step_ms)]
    if step.size < 2:
        return 0.0
    slowest, median = float(step.max()), float(np.median(step))
    steps = row.window_iterations
    if steps <= 0 and math.isfinite(row.window_s) and slowest > 0:
        steps = row.window_s * 1e3 / slowest
    return len(row.ranks) * (slowest - median) * steps / 1e3


def summarize(data: LogData, top: int = 10) -> Summary:
    """The `Summary` of `data`, at most `top` ranks (most reports confirmed, then slow, first)."""
    by_rank: dict[int, RankSummary] = {}
    waited: dict[int, WaitedFor] = {}
    between: dict[int, SlowBetween] = {}
    lost = run = 0.0
    measured = largest = 0
    for row in data.reports:
        measured += math.isfinite(row.waited_s)
        largest += not math.isfinite(row.waited_s) and row.step_sections > 1
        for rank, own_ms, peers_ms, lost_s in row.slow_between:
            b = between.setdefault(rank, SlowBetween(rank, data.nodes.get(rank, "<unknown>")))
            b.reports += 1
            b.lost_s += lost_s if math.isfinite(lost_s) else 0.0
            if peers_ms > 0:
                b.excess = own_ms / peers_ms - 1.0
        for rank, lost_s, _ in row.culprits:
            w = waited.setdefault(rank, WaitedFor(rank, data.nodes.get(rank, "<unknown>")))
            w.lost_s += lost_s
            w.reports += 1
            for label, group_lost_s in row.culprit_groups.get(rank, []):
                w.groups[label] = w.groups.get(label, 0.0) + group_lost_s
        lost += _window_lost_s(row)
        if math.isfinite(row.window_s):
            run += len(row.ranks) * row.window_s
        index = {int(r): i for i, r in enumerate(row.ranks)}
        culprits = {rank for rank, _, _ in row.culprits}
        for rank in row.flagged | row.confirmed | set(row.causes) | culprits:
            s = by_rank.setdefault(rank, RankSummary(rank, data.nodes.get(rank, "<unknown>")))
            s.reports_flagged += rank in row.flagged
            s.reports_confirmed += rank in row.confirmed
            s.reports_waited_for += rank in culprits
            slow = rank in row.flagged or rank in row.confirmed or rank in culprits
            s.reports_slow += slow
            if slow and math.isfinite(row.window_s):
                s.slow_s += row.window_s
            i = index.get(rank)
            if i is not None:
                for kind, value in (("relative", row.score[i]),
                                    ("individual", row.individual[i])):
                    if not math.isnan(value) and not value >= s.worst_score:
                        s.worst_score, s.worst_kind = float(value), kind
            if rank in row.causes:
                cause, evidence = row.causes[rank]
                s.causes[cause] = s.causes.get(cause, 0) + 1
                s.evidence = evidence
    # A culprit whose scores are normal (its time goes outside the sections) is flagged by no
    # report, yet it is the rank the flagged victims waited for: it ranks by its reports too.
    ranked = sorted(by_rank.values(), key=lambda s: (-s.reports_confirmed, -s.reports_slow,
                                                     -s.reports_waited_for,
                                                     s.worst_score if s.worst_score == s.worst_score
                                                     else 2.0, s.rank))
    return Summary(files=[str(f) for f in data.files], reports=len(data.reports),
                   ranks=len(data.nodes), start_s=_start(data.reports[0]),
                   end_s=data.reports[-1].time_s, lost_rank_s=lost, run_rank_s=run,
                   report_ms_median=_median([r.report_ms for r in data.reports]),
                   scores_ms_median=_median([r.scores_ms for r in data.reports]),
                   stragglers=ranked[:top], run_id=data.run_id,
                   waited_for=sorted(waited.values(), key=lambda w: -w.lost_s)[:top],
                   skipped_lines=len(data.bad_lines),
                   slow_between=sorted(between.values(), key=lambda b: -b.lost_s)[:top],
                   hangs=list(data.hangs), lost_measured=measured,
                   lost_largest_section=largest, attempt=data.attempt,
                   attempts=data.attempts, restart_count=data.restart_count)


def _median(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.median(finite)) if finite else math.nan


def _start(first: Any) -> float:
    """When the first window began (its report's time minus its window)."""
    return first.time_s - (first.window_s if math.isfinite(first.window_s) else 0.0)


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "-"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def format_summary(s: Summary) -> str:
    """The text `straggler summarize` prints."""
    share = f" ({100 * s.lost_rank_s / s.run_rank_s:.1f} % of rank time)" if s.run_rank_s else ""
    run = f"run {s.run_id}" if s.run_id else "the run"
    if s.attempts > 1:
        restart = f", torchrun restart {s.restart_count}" if s.restart_count else ""
        run += f", start {s.attempt} of {s.attempts}{restart}: "
    else:
        run = f"{run}: " if s.run_id else ""
    lines = [
        f"{run}{s.reports} report(s) of {s.ranks} rank(s) over "
        f"{_duration(s.end_s - s.start_s)} ({len(s.files)} file(s))",
        f"report time (median): {s.report_ms_median:.1f} ms per generate_report call, of which "
        f"{s.scores_ms_median:.1f} ms scoring and exchange",
        f"time lost waiting for {'other ranks' if s.lost_measured else 'the slowest rank'}: "
        f"{_duration(s.lost_rank_s)} of rank time{share}, {_lost_source(s)}",
    ]
    for w in s.waited_for:  # from the collective waits (docs/culprits.md)
        pct = f" ({100 * w.lost_s / s.run_rank_s:.1f} %)" if s.run_rank_s else ""
        where = sorted(w.groups.items(), key=lambda g: -g[1])
        groups = "; ".join(f"{label}: {_duration(t)}" for label, t in where[:4])
        groups = f" ({groups}{'; ...' if len(where) > 4 else ''})" if groups else ""
        lines.append(f"the job waited {_duration(w.lost_s)}{pct} for rank {w.rank} ({w.node}) "
                     f"at its collectives{groups}, named in {w.reports} report(s)")
    for b in s.slow_between:  # own time between collectives (docs/culprits.md)
        excess = f"{b.excess:.0%} more time of its own a step than its peers, " \
            if math.isfinite(b.excess) else ""
        lines.append(f"rank {b.rank} ({b.node}) was slow between collectives in {b.reports} "
                     f"report(s): {excess}the others waited about {_duration(b.lost_s)} for it")
    if not s.stragglers:
        lines.append("stragglers: none")
        return "\n".join(lines + format_hangs(s.hangs))
    lines.append(_verdict(s))
    header = ["rank", "node", "flagged", "confirmed", "slow for", "worst score", "causes"]
    rows = []
    for r in s.stragglers:
        causes = ", ".join(f"{c} x{n}" for c, n in Counter(r.causes).most_common()) or "-"
        worst = (f"{r.worst_score:.3f} {r.worst_kind[:3]}" if math.isfinite(r.worst_score)
                 else "-")
        rows.append([str(r.rank), r.node, str(r.reports_flagged), str(r.reports_confirmed),
                     _duration(r.slow_s), worst, causes])
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(len(header))]
    lines.append(f"top {len(rows)} rank(s) flagged, confirmed or waited for:")
    for row in [header, *rows]:
        cells = [row[0].rjust(widths[0]), row[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(row[2:6], widths[2:6], strict=True)] + [row[6]]
        lines.append("  ".join(cells).rstrip())
    for r in s.stragglers:
        if r.evidence:
            lines.append(f"rank {r.rank} ({r.node}), latest evidence: {r.evidence}")
    return "\n".join(lines + format_hangs(s.hangs))


def _lost_source(s: Summary) -> str:
    """How the time lost was found: measured, estimated, or both (docs/reportlog.md)."""
    if s.lost_measured >= s.reports:
        return "measured at the collectives"
    estimated = "estimated from the section times (no collective waits in the log)"
    if s.lost_largest_section:
        estimated += (", a step taken as each rank's largest section: the log does not say "
                      "how sections nest, so sections that follow each other count at their "
                      "largest only")
    if not s.lost_measured:
        return estimated
    return (f"measured at the collectives in {s.lost_measured} of {s.reports} report(s), "
            "estimated from the section times in the others")


def _verdict(s: Summary) -> str:
    """The ranks the policy confirmed, or that it confirmed none: a rank flagged by single
    reports only (NVRx's rule, one report at a time) is not a straggler (docs/policy.md)."""
    confirmed = [r for r in s.stragglers if r.reports_confirmed]
    if confirmed:
        return "stragglers (confirmed): " + "; ".join(
            f"rank {r.rank} ({r.node}) in {r.reports_confirmed} of {s.reports} report(s)"
            for r in confirmed)
    return ("stragglers: none confirmed (the ranks below were flagged or diagnosed by single "
            "reports, not confirmed over several: docs/policy.md)")


def format_hangs(hangs: Sequence[dict[str, Any]]) -> list[str]:
    """The hang findings' lines: their count, then the latest one's block as the log had it.

    Raises ValueError on a malformed record.
    """
    if not hangs:
        return []
    from ..hang.analysis import HangFinding

    latest = hangs[-1]
    try:
        block = HangFinding.from_dict(latest).format()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"malformed hang record ({type(exc).__name__}: {exc})") from None
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(latest.get("time_s", 0))))
    title = (f"hang findings: {len(hangs)}; the latest ({when}):" if len(hangs) > 1 else
             f"hang finding ({when}):")
    return [title, block]


def run_summarize(logs: Sequence[str], top: int = 10, as_json: bool = False,
                  skip_bad: bool = False, run: str | None = None) -> int:
    """Print the summary of each run in `logs` (or of run `run`); 0.

    With several runs, the text has one block per run and ``--json`` prints
    ``{"runs": [summary, ...]}``; with one, the summary itself.
    """
    if top < 1:
        raise ValueError(f"`--top={top!r}` must be a positive integer")
    hangs: list[dict[str, Any]] = []
    runs = load_runs(logs, skip_bad, hangs=hangs)
    if not runs:  # hang findings only: the job hung before its first report
        _say_skipped([])
        if as_json:
            print(json.dumps({"reports": 0, "hangs": hangs}, indent=1, default=str))
        else:
            print("\n".join([f"no report records in {', '.join(logs)}", *format_hangs(hangs)]))
        return 0
    for hang in hangs:  # each finding to the last run that began before it
        at = float(hang.get("time_s") or 0.0)
        started = [d for d in runs if _start(d.reports[0]) <= at]
        (started[-1] if started else runs[0]).hangs.append(hang)
    if run is not None:
        runs = select_runs(runs, run)
    summaries = [summarize(d, top) for d in runs]
    _say_skipped(runs[0].bad_lines if runs else [])
    if as_json:
        payload: Any = asdict(summaries[0]) if len(summaries) == 1 else {
            "runs": [asdict(x) for x in summaries]}
        print(json.dumps(payload, indent=1, default=str, allow_nan=True))
    else:
        if len(summaries) > 1:
            print(_runs_line(runs) + "\n")
        print("\n\n".join(format_summary(x) for x in summaries))
    return 0


def _runs_line(runs: Sequence[LogData]) -> str:
    """What the log holds when it is more than one run: the runs, and which ones restarted."""
    ids = list(dict.fromkeys(d.run_id for d in runs))
    restarted = [d for d in runs if d.attempt == d.attempts > 1]
    parts = []
    if len(ids) > 1:
        parts.append(f"{len(ids)} runs in the log (told apart by their run id)")
    for d in restarted:
        torchrun = f", torchrun restart {d.restart_count}" if d.restart_count else ""
        parts.append(f"run {d.run_id or '(no id)'} restarted {d.attempts - 1} time(s) (a new "
                     f"reporting process{torchrun}): {d.attempts} starts, summarized apart "
                     "(their ranks and windows differ)")
    return "; ".join(parts)


def _say_skipped(bad: list[str]) -> None:
    if bad:
        import sys

        print(f"straggler: skipped {len(bad)} bad line(s); the first: {bad[0]}", file=sys.stderr)
