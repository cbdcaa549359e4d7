"""Replay recorded real traces through the report arithmetic and the policy, with injected faults.

    python benchmarks/replay.py                       # the table of every trace and scenario
    python benchmarks/replay.py --trace loaded-4r     # one trace

A trace (benchmarks/record_traces.py, tests/data/traces/*.npz) holds every step's section times
of every rank of a real gloo run. The replay cuts it into report windows (``--interval`` seconds
of the recorded run each), optionally slows one rank (`Injection`: a factor on its compute
sections, its data section, or a host stall added to its forward; every step, one step in five,
from mid-run, or for a while) and gives each window to the *real* report path: the window's
samples become each rank's summaries and quartiles through
`straggler.timing.registry.host_window` (what a live report computes), and one
`straggler.reporting.generator.ReportGenerator` per rank, each in its own thread joined by
`ThreadComm` (in-process collectives with gloo's semantics), builds the
report. The policy then reads the reports exactly as `apply_policy` does in a live report.

Scored per scenario: recall (the slowed rank confirmed within ``WITHIN`` reports of the onset),
reports and seconds to confirm, false alarms (another rank confirmed, or any rank on a clean
replay) per 1,000 reports, and reports to clear after a recovery.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TRACE_DIR = ROOT / "tests" / "data" / "traces"
#: Sections the replayed reports score: compute and data, not the all-reduce (``backward`` is
#: communication: its time is longest on the ranks that wait, as the demo declares it).
SCORED = ("data", "forward", "optimizer")
#: A persistent straggler must be confirmed within this many reports of its onset.
WITHIN = 3
FACTORS = (1.05, 1.1, 1.2, 1.5, 3.0)
KINDS = ("compute", "data", "stall")
PATTERNS = ("persistent", "intermittent", "recovers")


@dataclass(frozen=True)
class Trace:
    """One recorded run: ``times_ms[rank, step, section]``, rank 0's step ends, metadata."""

    name: str
    times_ms: np.ndarray
    end_s: np.ndarray
    sections: tuple[str, ...]
    meta: dict[str, Any]

    @property
    def world(self) -> int:
        return int(self.times_ms.shape[0])

    @property
    def steps(self) -> int:
        return int(self.times_ms.shape[1])


def load_trace(path: str | Path) -> Trace:
    """A trace written by benchmarks/record_traces.py."""
    path = Path(path)
    with np.load(path) as z:
        return Trace(path.stem, z["times_ms"].astype(np.float64), z["end_s"].astype(np.float64),
                     tuple(str(s) for s in z["sections"]), json.loads(str(z["meta"])))


def traces(folder: Path = TRACE_DIR) -> list[Trace]:
    """Every recorded trace of ``folder``, by name."""
    return [load_trace(p) for p in sorted(folder.glob("*.npz"))]


def subset(trace: Trace, ranks: Sequence[int]) -> Trace:
    """The trace of some of its ranks only (a 3-rank run of a 4-rank recording): the same real
    noise, seen by other peers."""
    keep = list(ranks)
    name = f"{trace.name}[{','.join(map(str, keep))}]"
    return Trace(name, trace.times_ms[keep], trace.end_s, trace.sections, trace.meta)


def variants(trace: Trace) -> list[Trace]:
    """The trace, and each 3-rank subset of a 4-rank trace (more clean runs from real noise)."""
    if trace.world < 4:
        return [trace]
    return [trace] + [subset(trace, ks) for ks in itertools.combinations(range(trace.world), 3)]


@dataclass(frozen=True)
class Injection:
    """A straggler injected into a clean trace.

    ``kind``: ``"compute"`` multiplies the rank's forward and optimizer times by ``factor``;
    ``"data"`` its data loading; ``"stall"`` adds ``factor - 1`` times its median forward to the
    forward (a host stall: the same noise, a constant more). ``pattern``: ``"persistent"`` every
    step from ``onset`` on; ``"intermittent"`` one step in five from ``onset``;
    ``"recovers"`` every step from ``onset`` until ``recovery`` (report indices).
    """

    rank: int
    factor: float
    kind: str = "compute"
    pattern: str = "persistent"
    onset: int = 5
    recovery: int | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} x{self.factor:g} {self.pattern}"


def window_bounds(trace: Trace, interval_s: float, phase_s: float = 0.0
                  ) -> list[tuple[int, int]]:
    """Step ranges ``[a, b)`` of consecutive report windows of ``interval_s`` recorded seconds,
    the first ending ``phase_s`` later (other windows over the same run)."""
    ends = np.arange(interval_s + phase_s, trace.end_s[-1], interval_s)
    edges = np.searchsorted(trace.end_s, ends)
    start = int(np.searchsorted(trace.end_s, phase_s)) if phase_s > 0 else 0
    edges = np.unique(np.concatenate([[start], edges]))
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges) if b - a >= 5]


def inject(trace: Trace, bounds: Sequence[tuple[int, int]], inj: Injection | None,
           seed: int = 0) -> np.ndarray:
    """The trace's times with ``inj`` applied (a copy)."""
    t = trace.times_ms.copy()
    if inj is None:
        return t
    start = bounds[inj.onset][0] if inj.onset < len(bounds) else trace.steps
    stop = trace.steps
    if inj.recovery is not None and inj.recovery < len(bounds):
        stop = bounds[inj.recovery][0]
    steps = np.arange(start, stop)
    if inj.pattern == "intermittent":
        rng = np.random.default_rng(seed)
        steps = steps[rng.random(steps.size) < 0.2]
    col = {s: i for i, s in enumerate(trace.sections)}
    r = inj.rank
    if inj.kind == "compute":
        for s in ("forward", "optimizer"):
            t[r, steps, col[s]] *= inj.factor
    elif inj.kind == "data":
        t[r, steps, col["data"]] *= inj.factor
    elif inj.kind == "stall":
        fwd = col["forward"]
        t[r, steps, fwd] += (inj.factor - 1.0) * np.median(trace.times_ms[r, :, fwd])
    else:
        raise ValueError(f"`kind={inj.kind!r}` must be one of {KINDS}")
    return t


class _Exchange:
    """The meeting point of a `ThreadComm` group: each collective is one exchange of values."""

    def __init__(self, world: int) -> None:
        self.world = world
        self.barrier = threading.Barrier(world, timeout=60)
        self.slots: list[Any] = [None] * world

    def swap(self, rank: int, value: Any) -> list[Any]:
        self.slots[rank] = value
        self.barrier.wait()
        out = list(self.slots)
        self.barrier.wait()  # nobody overwrites a slot before everyone has read them
        return out


class ThreadComm:
    """`straggler.dist.comm.Comm`'s collectives between threads of one process (for replays)."""

    def __init__(self, exchange: _Exchange, rank: int) -> None:
        self._x = exchange
        self.rank = rank
        self.world_size = exchange.world
        self.global_ranks = list(range(exchange.world))

    def all_reduce(self, t: Any, op: Any = "sum") -> Any:
        import torch

        parts = torch.stack(self._x.swap(self.rank, t.clone()))
        name = str(op).lower().rsplit(".", 1)[-1]
        reduced = {"min": parts.min(0).values, "max": parts.max(0).values}.get(name)
        t.copy_(parts.sum(0) if reduced is None else reduced)
        return t

    def all_gather(self, t: Any) -> list[Any]:
        return [v.clone() for v in self._x.swap(self.rank, t.clone())]

    def all_gather_object(self, obj: Any) -> list[Any]:
        return self._x.swap(self.rank, obj)

    def gather_to_first(self, t: Any) -> Any:
        import torch

        rows = self._x.swap(self.rank, t.clone())
        return torch.stack(rows) if self.rank == 0 else None  # one tensor, as Comm's

    def broadcast_from_first(self, t: Any) -> Any:
        t.copy_(self._x.swap(self.rank, t.clone())[0])
        return t

    def close(self) -> None:
        pass


class _Samples:
    """What `host_summaries` reads of a section: its samples (ns) in the window."""

    def __init__(self, ms: np.ndarray) -> None:
        self.samples = (ms * 1e6).astype(np.int64).tolist()


def reports(trace: Trace, times_ms: np.ndarray, bounds: Sequence[tuple[int, int]],
            sections: Sequence[str] = SCORED, **generator_options: Any) -> list[Any]:
    """The reports (gathered on rank 0, no policy) of every window of ``times_ms``."""
    from straggler.reporting.generator import ReportGenerator
    from straggler.timing.registry import host_window

    cols = [trace.sections.index(s) for s in sections]
    exchange = _Exchange(trace.world)
    out: list[Any] = []
    errors: list[BaseException] = []

    def rank_main(rank: int) -> None:
        try:
            gen = ReportGenerator(node_name=f"node{rank}", comm=ThreadComm(exchange, rank),
                                  policy=False, **generator_options)
            for a, b in bounds:
                summaries, quartiles = host_window({s: _Samples(times_ms[rank, a:b, c])
                                                    for s, c in zip(sections, cols, strict=True)})
                report = gen.generate_report(summaries, {}, section_quartiles=quartiles,
                                             early=False)  # fixed windows: none is early
                if rank == 0:
                    out.append(report)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)
            exchange.barrier.abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(trace.world)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return out


@dataclass
class Outcome:
    """One replay's verdicts per report and what they score."""

    label: str
    trace: str
    confirmed: list[frozenset[int]]
    suspects: list[frozenset[int]]
    injection: Injection | None
    interval_s: float
    #: Reports until the slowed rank was confirmed (1: the onset report), None: never.
    reports_to_confirm: int | None = None
    #: Reports after the recovery until it was cleared (1: the first healthy report).
    reports_to_clear: int | None = None
    false_alarms: int = 0
    #: Reports judged for false alarms.
    judged_reports: int = 0
    notes: dict[str, Any] = field(default_factory=dict)


def score(label: str, trace: Trace, confirmed: list[frozenset[int]],
          suspects: list[frozenset[int]], inj: Injection | None, interval_s: float) -> Outcome:
    """What ``confirmed`` (the verdict after each report) says about ``inj``."""
    out = Outcome(label, trace.name, confirmed, suspects, inj, interval_s)
    slow = inj.rank if inj is not None else None
    seen: set[int] = set()
    for i, now in enumerate(confirmed):
        new = now - seen
        seen = set(now)
        out.judged_reports += 1
        out.false_alarms += len(new - {slow})
        if inj is not None and slow in now and out.reports_to_confirm is None and i >= inj.onset:
            out.reports_to_confirm = i - inj.onset + 1
    if inj is not None and inj.recovery is not None and out.reports_to_confirm is not None:
        for i in range(inj.recovery, len(confirmed)):
            if slow not in confirmed[i]:
                out.reports_to_clear = i - inj.recovery + 1
                break
    return out


def with_interval(make_policy: Callable[[], Any], interval_s: float) -> Callable[[], Any]:
    """``make_policy`` whose policies know the report interval (`StragglerPolicy.interval_s`,
    as the detector gives it; a policy given one keeps it)."""
    def make() -> Any:
        policy = make_policy()
        if getattr(policy, "interval_s", 0.0) is None:
            policy.interval_s = interval_s
        return policy
    return make


def run_policy(reps: Sequence[Any], make_policy: Callable[[], Any]
               ) -> tuple[list[frozenset[int]], list[frozenset[int]]]:
    """The policy's confirmed and suspect ranks after each report, as a live report has them."""
    from straggler.reporting.annotation import apply_policy

    policy = make_policy()
    confirmed, suspects = [], []
    for rep in reps:
        decided = apply_policy(policy, rep)
        confirmed.append(frozenset(s.rank for s in decided.confirmed))
        suspects.append(frozenset(s.rank for s in decided.suspects))
    return confirmed, suspects


def window_observation(times_ms: np.ndarray, a: int, b: int, cols: Sequence[int],
                       sections: Sequence[str] = SCORED, tails: bool = True) -> dict[str, Any]:
    """`StragglerPolicy.update`'s arguments (but the ranks) for the window of steps ``[a, b)``
    of ``times_ms``, as `apply_policy` passes a report's: per section and rank the median, the
    quartiles' standard error, the 5th percentile, the recent part's median and 5th percentile
    (`straggler.analysis.recent`), and the step count (``tails``: the upper quartiles too)."""
    from straggler.analysis.policy import TAIL_SUFFIX, window_spread
    from straggler.analysis.recent import recent_count
    from straggler.timing.registry import LOW_PERCENTILE

    window = times_ms[:, a:b][:, :, list(cols)]  # ranks, steps, sections
    p5, q25, med, q75 = np.percentile(window, (LOW_PERCENTILE, 25.0, 50.0, 75.0), axis=1)
    k = max(recent_count(b - a), 1)
    r5, rmed = np.percentile(window[:, -k:], (LOW_PERCENTILE, 50.0), axis=1)
    world = times_ms.shape[0]
    times: dict[str, np.ndarray] = {}
    for i, name in enumerate(sections):
        times[f"section:{name}"] = med[:, i]
        if tails:
            times[f"section:{name}{TAIL_SUFFIX}"] = q75[:, i]
    quartiles = {name: {r: (q25[r, i], q75[r, i]) for r in range(world)}
                 for i, name in enumerate(sections)}
    steps = {m: float(b - a) for m in times}

    class _Window:
        section_quartiles_ms = quartiles

    return {"times": times, "steps": steps,
            "spread": window_spread(_Window, np.arange(world), steps),
            "low": {f"section:{name}": p5[:, i] for i, name in enumerate(sections)},
            "recent": {f"section:{name}": (rmed[:, i], r5[:, i])
                       for i, name in enumerate(sections)}}


def direct_verdicts(trace: Trace, times_ms: np.ndarray, bounds: Sequence[tuple[int, int]],
                    make_policy: Callable[[], Any], sections: Sequence[str] = SCORED,
                    tails: bool = True) -> tuple[list[frozenset[int]], list[frozenset[int]]]:
    """What `run_policy` gives for `reports` of the same windows, without the report path: each
    window's per-rank medians, quartiles, 5th percentiles and step counts straight to
    `StragglerPolicy.update`, as `apply_policy` passes them (tests check the two agree); fast
    enough for thousands of clean reports in a test.

    ``tails=False`` leaves the upper-quartile metrics out (twice as fast): the same verdicts
    when the policy's upper quartiles are off (the default ``tail_min_effect``, 1,000 %: no
    window reaches it, so they never mark a rank)."""
    policy = make_policy()
    cols = [trace.sections.index(s) for s in sections]
    ranks = np.arange(trace.world)
    confirmed, suspects = [], []
    for a, b in bounds:
        decision = policy.update(ranks, **window_observation(times_ms, a, b, cols, sections,
                                                              tails), early=False)
        confirmed.append(decision.confirmed)
        suspects.append(decision.suspects)
    return confirmed, suspects


def schedule_verdicts(trace: Trace, times_ms: np.ndarray, interval: float, early: bool = True,
                      phase_s: float = 0.0, make_policy: Callable[[], Any] | None = None,
                      observe: Callable[..., None] | None = None
                      ) -> list[tuple[float, frozenset[int], bool]]:
    """The report cadence of straggler/report_cycle.py over a recorded trace: windows of
    ``interval`` recorded seconds (the first starting at ``phase_s``), and after a report with
    suspects an early one (`early_window` of the interval's steps, at most `MAX_EARLY_REPORTS`
    in a row; ``early=False``: none). Each window goes to the policy (``make_policy()``,
    default `StragglerPolicy()`) as `direct_verdicts` gives it. Returns (end s, confirmed,
    whether the window was an early one) per report. ``observe(policy, decision, a, b, early)``,
    when given, sees each report's policy after its update (the window is steps ``[a, b)``)."""
    from straggler.analysis.policy import StragglerPolicy
    from straggler.report_cycle import MAX_EARLY_REPORTS, early_window

    policy = with_interval(make_policy or StragglerPolicy, interval)()
    cols = [trace.sections.index(s) for s in SCORED]
    ranks = np.arange(trace.world)
    end = trace.end_s
    a = int(np.searchsorted(end, phase_s)) if phase_s > 0 else 0
    start_s, every, streak = phase_s, None, 0
    out: list[tuple[float, frozenset[int], bool]] = []
    while True:
        b = int(np.searchsorted(end, start_s + interval, side="right"))
        short = early_window(every) if early and every and 0 < streak <= MAX_EARLY_REPORTS \
            else None
        if short is not None:
            b = a + short
        if b >= trace.steps:
            return out
        decision = policy.update(ranks, **window_observation(times_ms, a, b, cols),
                                 early=short is not None)  # as the detector's cadence says
        if observe is not None:
            observe(policy, decision, a, b, short is not None)
        out.append((float(end[b - 1]), decision.confirmed, short is not None))
        if short is None:
            every = b - a  # the interval in steps, as the tracker agrees it at a report
        streak = streak + 1 if decision.suspects and streak < MAX_EARLY_REPORTS else 0
        a, start_s = b, float(end[b - 1])


def onset_of(n_reports: int) -> int:
    """The report where injected faults start: a third into the run (the policy has learned
    the job's noise by then, as in a job that ran a while before a rank turned slow)."""
    return max(4, n_reports // 3)


def scenarios(world: int, onset: int, n_reports: int) -> list[Injection | None]:
    """Clean, then every kind x factor x pattern on the last-but-one rank."""
    rank = min(2, world - 1)
    out: list[Injection | None] = [None]
    recovery = min(onset + 8, n_reports - WITHIN - 1)
    for kind in KINDS:
        for factor in FACTORS:
            for pattern in PATTERNS:
                out.append(Injection(rank, factor, kind, pattern, onset,
                                     recovery if pattern == "recovers" else None))
    return out


def replay_all(trace_list: Iterable[Trace], interval_s: float,
               make_policy: Callable[[], Any], cache: dict | None = None, *,
               direct: bool = False, phases: Sequence[float] = (0.0,),
               clean_phases: Sequence[float] = ()) -> list[Outcome]:
    """Every scenario of every trace through the report path (``direct``: `direct_verdicts`)
    and the policy, with the report windows starting at each of ``phases`` seconds; clean runs
    also at each of ``clean_phases`` (more clean reports). The policies know the interval
    (`with_interval`)."""
    make_policy = with_interval(make_policy, interval_s)
    outcomes = []
    for trace in trace_list:
        for phase in sorted(set(phases) | set(clean_phases)):
            bounds = window_bounds(trace, interval_s, phase)
            for inj in scenarios(trace.world, onset_of(len(bounds)), len(bounds)):
                if phase not in phases and inj is not None:
                    continue
                if direct:
                    confirmed, suspects = direct_verdicts(trace, inject(trace, bounds, inj),
                                                          bounds, make_policy)
                else:
                    key = (trace.name, interval_s, phase, inj)
                    reps = cache.get(key) if cache is not None else None
                    if reps is None:
                        reps = reports(trace, inject(trace, bounds, inj), bounds)
                        if cache is not None:
                            cache[key] = reps
                    confirmed, suspects = run_policy(reps, make_policy)
                outcomes.append(score("clean" if inj is None else inj.label, trace, confirmed,
                                      suspects, inj, interval_s))
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    """A markdown table: one row per scenario, over the traces given."""
    rows: dict[str, list[Outcome]] = {}
    for o in outcomes:
        load = "loaded" if o.trace.startswith("loaded") else "idle"
        rows.setdefault(f"{o.label} | {load}", []).append(o)
    lines = ["| scenario | load | runs | recall (<= 3 reports) | reports to confirm | "
             "s to confirm | cleared (reports) | false alarms / 1,000 reports |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for key, group in rows.items():
        inj = group[0].injection
        judged = sum(o.judged_reports for o in group)
        fa = 1000.0 * sum(o.false_alarms for o in group) / max(judged, 1)
        if inj is None:
            lines.append(f"| {key} | {len(group)} | - | - | - | - | {fa:.1f} |")
            continue
        hits = [o.reports_to_confirm for o in group if o.reports_to_confirm is not None
                and o.reports_to_confirm <= WITHIN]
        anytime = [o.reports_to_confirm for o in group if o.reports_to_confirm is not None]
        rtc = f"{np.median(anytime):.0f}" if anytime else "never"
        stc = f"{np.median(anytime) * group[0].interval_s:.1f}" if anytime else "-"
        clear = [o.reports_to_clear for o in group if o.reports_to_clear is not None]
        clr = f"{max(clear)}" if clear else "-"
        lines.append(f"| {key} | {len(group)} | {len(hits) / len(group):.2f} | {rtc} | {stc} | "
                     f"{clr} | {fa:.1f} |")
    return "\n".join(lines)


def summary(outcomes: Sequence[Outcome]) -> str:
    """The headline table: per pattern and factor, pooled over kinds, traces and loads."""
    rows: dict[str, list[Outcome]] = {}
    for o in outcomes:
        inj = o.injection
        key = "clean" if inj is None else f"{inj.pattern} x{inj.factor:g}"
        rows.setdefault(key, []).append(o)
    lines = ["| scenario (compute, data, stall; idle and loaded) | runs | recall (<= 3 reports) "
             "| recall (ever) | reports to confirm (median, max) | cleared within 3 reports | "
             "false alarms / 1,000 reports |", "|---|---:|---:|---:|---:|---:|---:|"]
    for key, group in rows.items():
        judged = sum(o.judged_reports for o in group)
        fa = 1000.0 * sum(o.false_alarms for o in group) / max(judged, 1)
        if key == "clean":
            lines.append(f"| clean | {len(group)} | - | - | - | - | {fa:.1f} ({judged} reports) |")
            continue
        got = [o.reports_to_confirm for o in group if o.reports_to_confirm is not None]
        within = sum(1 for r in got if r <= WITHIN)
        rtc = f"{np.median(got):.0f}, {max(got)}" if got else "never"
        rec = [o for o in group if o.injection is not None and o.injection.recovery is not None
               and o.reports_to_confirm is not None]
        cleared = sum(1 for o in rec if o.reports_to_clear is not None
                      and o.reports_to_clear <= WITHIN)
        clr = f"{cleared}/{len(rec)}" if rec else "-"
        lines.append(f"| {key} | {len(group)} | {within / len(group):.2f} | "
                     f"{len(got) / len(group):.2f} | {rtc} | {clr} | {fa:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from straggler.analysis.policy import StragglerPolicy

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", action="append", help="trace name(s) (default: all)")
    p.add_argument("--interval", type=float, default=5.0,
                   help="report interval in recorded seconds (default 5)")
    p.add_argument("--folder", type=Path, default=TRACE_DIR)
    p.add_argument("--fit", action="store_true",
                   help="print the simulator's noise model fitted to the traces, and stop")
    args = p.parse_args(argv)
    found = traces(args.folder)
    if args.trace:
        found = [t for t in found if t.name in args.trace]
    if not found:
        p.error(f"no trace in {args.folder}: record some with benchmarks/record_traces.py")
    if args.fit:
        print(fit_noise(found, args.interval))
        return 0
    for t in found:
        print(f"{t.name}: {t.world} ranks, {t.steps} steps, {t.meta['seconds']:.0f} s, load "
              f"{t.meta['loadavg_1m_before']:.1f} -> {t.meta['loadavg_1m_after']:.1f}, "
              f"{len(window_bounds(t, args.interval))} reports of {args.interval:g} s")
    print(table(replay_all(found, args.interval, StragglerPolicy)))
    return 0


if __name__ == "__main__":
    sys.exit(main())


# --------------------------------------------------------------------- the simulator's noise
def log_ratios(trace: Trace, interval_s: float, section: str = "forward") -> np.ndarray:
    """``(ranks, reports)`` log ratio of each rank's window median to the median of its peers."""
    col = trace.sections.index(section)
    bounds = window_bounds(trace, interval_s)
    med = np.log(np.array([[np.median(trace.times_ms[r, a:b, col]) for a, b in bounds]
                           for r in range(trace.world)]))
    return np.stack([med[r] - np.median(np.delete(med, r, axis=0), axis=0)
                     for r in range(trace.world)])


def tail_ratio(values: np.ndarray) -> float:
    """95th over 50th percentile of ``|values|``: 2.9 for Gaussian noise, more for heavy tails."""
    a = np.abs(np.asarray(values, dtype=np.float64).ravel())
    return float(np.percentile(a, 95) / np.percentile(a, 50))


def fit_noise(trace_list: Sequence[Trace], interval_s: float,
              sections: Sequence[str] = SCORED) -> dict[str, float]:
    """The simulator's noise parameters (`simulator.NoiseModel`) fitted to real traces.

    ``rank_offset``: spread (sd of log) of the ranks' lasting offsets from their peers;
    ``jitter``: robust sd of a rank's report-to-report log ratio around its offset;
    ``tail_df``: degrees of freedom of the Student-t whose 95/50 % quantile ratio matches the
    residuals' (heavy tails: a rank descheduled for a window).
    """
    offsets, residuals = [], []
    for t in trace_list:
        for s in sections:
            d = log_ratios(t, interval_s, s)
            off = np.median(d, axis=1, keepdims=True)
            offsets.append(off.ravel())
            residuals.append((d - off).ravel())
    res = np.concatenate(residuals)
    jitter = 1.4826 * float(np.median(np.abs(res)))
    want = tail_ratio(res)
    grid = np.array([2.1, 2.5, 3.0, 4.0, 5.0, 7.0, 10.0, 30.0])
    rng = np.random.default_rng(0)
    ratios = np.array([tail_ratio(rng.standard_t(df, 200_000)) for df in grid])
    df = float(grid[np.argmin(np.abs(ratios - want))])
    return {"rank_offset": float(np.std(np.concatenate(offsets))), "jitter": jitter,
            "tail_df": df}
