"""`ReportCycle`: one detector's reports: when they are due, what they hold, what follows them.

A report is a collective: every rank of the group calls it on the same iteration. It gathers the
window's host and GPU summaries and the telemetry vector, asks the ranks whether they are all
still on (`ReportGate`, when reports communicate), scores them (`ReportGenerator`), completes
them (`ReportAnnotator`: GPU identities, probe, causes), hands them to the observers (report
log, Prometheus) and starts the next window. The report interval (`ReportIntervalTracker`) is
re-agreed on the report's own collective. Any failure fails the detector open (lifecycle.py).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

from .detector_options import DetectorOptions
from .dist.deadline import ReportDeadline
from .lifecycle import Lifecycle
from .reporting.decision import Decision, DecisionRule
from .timing.gpu import GpuTiming
from .timing.interval import ReportIntervalTracker
from .timing.registry import SectionRegistry

if TYPE_CHECKING:
    from .detector import TelemetryProvider
    from .dist.comm import Comm
    from .reporting.report import Report
    from .sinks.observers import ReportObservers

__all__ = ["ReportCycle", "EARLY_FRACTION", "MAX_EARLY_REPORTS", "MIN_EARLY_STEPS", "early_window"]

log = logging.getLogger("straggler")

#: After a report with suspects (slow, not confirmed), the next report comes after this
#: fraction of the interval, to confirm or clear them sooner.
EARLY_FRACTION = 0.15
#: Early reports in a row at most (the extra cost's bound), then the interval again.
MAX_EARLY_REPORTS = 4
#: Iterations an early report's window holds at least: the demo's 5-step early windows put a
#: healthy rank's median 8x behind its peers, and in the replayed traces early windows of
#: 25-45 steps confirmed healthy ranks (docs/policy.md, "Early reports").
MIN_EARLY_STEPS = 50


def early_window(every: int | None, profiling_interval: int = 1) -> int | None:
    """Iterations of an early report's window, given the interval's ``every`` iterations:
    `EARLY_FRACTION` of it, at least `MIN_EARLY_STEPS` (and ``profiling_interval``); None
    when that is more than half the interval (the next report comes on time instead)."""
    if every is None:
        return None
    iters = max(profiling_interval, MIN_EARLY_STEPS, math.ceil(EARLY_FRACTION * every))
    return iters if 2 * iters <= every else None


class ReportCycle:
    """Reports of one detector, its report interval and its persistent state.

    Args:
        options: the detector's validated options.
        comm: the detector's communicator (`straggler.dist.comm.Comm`).
        registry: the sections (host summaries, windows).
        gpu: the sections' GPU side (GPU summaries, windows).
        lifecycle: the on/off state; failures are reported to it.
        telemetry: the per-report telemetry vector's provider, or None.
        observers: report log and Prometheus exporter, or None.
    """

    def __init__(self, options: DetectorOptions, comm: Comm, registry: SectionRegistry,
                 gpu: GpuTiming, lifecycle: Lifecycle, telemetry: TelemetryProvider | None = None,
                 observers: ReportObservers | None = None) -> None:
        from .analysis.causes import CauseRules
        from .dist.failopen import ReportGate
        from .reporting.annotation import ReportAnnotator
        from .reporting.generator import ReportGenerator

        self.comm = comm
        self.registry = registry
        self.gpu = gpu
        self.lifecycle = lifecycle
        self.telemetry = telemetry
        self.observers = observers
        self.on_report: Callable[[], object] | None = None  # after each report (FT timeouts)
        # Collective waits ride on the report's gather (docs/culprits.md); None: not sent.
        self.collective_waits = options.collective_waits
        self._waits_since_s = time.monotonic()
        # Own time per step (analysis/own_time.py): the observer's step mark, when it observes.
        self._mark_step: Callable[[], object] | None = None
        # A job that calls only generate_report() (NVRx's style) never marks a step: from its
        # first report on, its loop's first section does (collectives.SectionSteps, a hook);
        # a job that calls generate_report_if_interval_elapsed() never gets the hook.
        self._stepped = False
        self._section_steps: Any = None
        if self.collective_waits:
            from .timing import collectives

            self._mark_step = collectives.step_marker()
        self._wait_groups: dict[str, str] = {}  # this rank's groups: c10d name -> name for people
        fields = tuple(telemetry.fields) if telemetry is not None else ()
        try:
            self.reporter = ReportGenerator(options.scores_to_compute, options.gather_on_rank0,
                                            node_name=options.node_name, comm=comm,
                                            telemetry_fields=fields, policy=options.policy,
                                            **options.report_options)
        except TypeError as exc:  # an unknown tunable in report_options
            raise ValueError(f"`report_options={options.report_options!r}`: {exc}") from None
        tel = options.telemetry
        # After each report: GPU identities, the probe on suspects, causes (annotation.py).
        self.annotator: Callable[[Any], Any] = ReportAnnotator(
            comm, lambda: getattr(self.telemetry, "identity", None),
            gather=options.gather_on_rank0 and tel.enabled,
            device=None,  # torch's current device when probing
            probe_suspects=tel.probe_suspects, rules=tel.rules or CauseRules(),
            gpu_timing=gpu.no_timers_reason)
        # Ranks must agree on the report iteration whenever a report communicates.
        self.agree_by_comm = options.agree_by_comm
        self.tracker = ReportIntervalTracker(
            options.report_time_interval, options.profiling_interval,
            reduce_max=self._reduce_max if self.agree_by_comm else None)
        self.gate = ReportGate(comm)
        self._calls = 0  # reports attempted, named when a collective times out
        # Held by the thread in a report call: a second thread's call (or one from inside a
        # report) would interleave its collectives with the report's on this rank only.
        self.busy = threading.Lock()
        self._busy_owner, self._busy_ident = "", 0
        # The one decision (reporting/decision.py): the rule integrations set, and the decision
        # of the last report, agreed on every rank inside the report.
        self.decision_rule = DecisionRule()
        self.last_decision: Decision | None = None
        self.interval_s = options.report_time_interval
        self._started = False  # the first call agrees the iteration and opens the first window
        self._early_streak = 0  # early reports in a row
        # Reports on time whatever the step time does (dist/deadline.py): a watcher thread
        # and, when ranks must agree, a gloo group that carries nothing but its reductions.
        self.deadline: ReportDeadline | None = None
        self.deadline_comm: Any = None
        if self.interval_s > 0:
            post = None
            if self.agree_by_comm and comm.world_size > 1:
                from .dist.comm import Comm

                self.deadline_comm = dcomm = Comm.create(
                    options.process_group, options.comm_timeout_s,
                    call="Detector.initialize() (the report deadline's group)")
                dcomm.call = "the report deadline's reduction (dist/deadline.py)"

                def post(iteration: float) -> Any:
                    import torch

                    return dcomm.all_reduce_async(torch.tensor([iteration],
                                                               dtype=torch.float64), "max")
            self.deadline = ReportDeadline(post, lambda: self.tracker.current_iter,
                                           wait_s=options.comm_timeout_s)
            lifecycle.on_stop.append(self.close_deadline)

    def _reduce_max(self, value: float) -> float:
        """MAX of `value` over the group (one small collective; the interval's first estimate)."""
        import torch

        call = (f"Detector.generate_report_if_interval_elapsed() (iteration "
                f"{self.tracker.current_iter}: the first estimate of the report interval)")
        with self.comm.during(call):
            reduced = self.comm.all_reduce(torch.tensor([value], dtype=torch.float64), "max")
        return float(reduced[0])

    def _in_reports(self) -> bool:
        return self.lifecycle.in_reports(self.registry.enabled)

    def generate_report(self, call: str = "Detector.generate_report()") -> Report | None:
        """Collective: every rank of the group calls it on the same iteration."""
        if not self._in_reports():
            return None
        if not self.acquire(call):
            return None
        try:
            return self._generate_report(call)
        finally:
            self.release()

    def acquire(self, call: str) -> bool:
        """Whether this thread may run `call` (a collective, or the iteration count) now; then
        `release()` after it. Not while another thread, or this one further up, is in a report
        call of this rank: that call is ignored (None), logged once, and the protocol stays the
        peers'."""
        if self.busy.acquire(blocking=False):
            self._busy_owner, self._busy_ident = call, threading.get_ident()
            return True
        owner = next((t for t in threading.enumerate() if t.ident == self._busy_ident), None)
        self.lifecycle.warn_once(
            "report-concurrent", "straggler: %s called in thread %r while %s runs in thread "
            "%r on this rank; the call is ignored and returns None (reports are collectives: "
            "call them from one thread, once per iteration)", call,
            threading.current_thread().name, self._busy_owner or "a report",
            owner.name if owner is not None else self._busy_ident)
        return False

    def release(self) -> None:
        """End the call `acquire` allowed."""
        self.busy.release()

    @contextlib.contextmanager
    def exclusive(self, call: str) -> Iterator[bool]:
        """`acquire` and `release` around a block: whether it may run `call`."""
        alone = self.acquire(call)
        try:
            yield alone
        finally:
            if alone:
                self.release()

    def _generate_report(self, call: str) -> Report | None:
        self._calls += 1
        self.comm.call = f"{call} (report {self._calls})"  # named if a collective fails
        start_s = time.perf_counter()
        sections: dict[Any, Any] = {}
        quartiles: dict[Any, Any] = {}
        gpu: dict[Any, Any] = {}
        telemetry = None
        try:
            sections, quartiles = self.registry.window()
            gpu = self.gpu.summaries()
            telemetry = self.telemetry.sample() if self.telemetry is not None else None
        except Exception as exc:  # noqa: BLE001 - fail open: say "off" at the gate below
            self.lifecycle.fail(exc)
        except BaseException as exc:  # noqa: BLE001 - closes, then re-raised
            self._interrupted(exc)
        if not self._agreed_on():
            return None
        try:
            return self._report(sections, gpu, telemetry, start_s, quartiles)
        except Exception as exc:  # noqa: BLE001 - fail open
            self.lifecycle.fail(exc, in_report=True)
            return None
        except BaseException as exc:  # noqa: BLE001 - closes, then re-raised
            self._interrupted(exc)

    def _interrupted(self, exc: BaseException) -> NoReturn:
        """A `BaseException` (KeyboardInterrupt, SystemExit) inside a report: this rank leaves
        the report protocol at once (its communicator closes, so no peer waits for it) and the
        exception goes on to the caller."""
        self.lifecycle.fail(exc, in_report=True)
        raise exc

    def _agreed_on(self) -> bool:
        """The gate: whether every rank is still on (False: this rank is off now)."""
        life = self.lifecycle
        if self.agree_by_comm and not life.done:
            enabled = self.registry.enabled
            try:
                on = self.gate.agree(enabled)
            except Exception as exc:  # noqa: BLE001 - a dead or stuck peer
                life.fail(exc, in_report=True)
                return False
            except BaseException as exc:  # noqa: BLE001 - closes, then re-raised
                self._interrupted(exc)
            if not on:
                if enabled:
                    log.warning("straggler: rank %d turned straggler detection off after an "
                                "internal error; it is off on every rank of the group for the "
                                "rest of this run (training continues)", self.gate.failed_rank)
                life.stop_reporting()
                return False
        return self.registry.enabled

    def _report(self, sections: dict[Any, Any], gpu: dict[Any, Any], telemetry: Any,
                start_s: float, quartiles: dict[Any, Any] | None = None) -> Report | None:
        extra: list[float] | None = None  # reports need no communication: nor does the interval
        if self.agree_by_comm:
            # The interval is re-agreed on the report's own collective: each rank's wish
            # (-1: none yet) rides along, the group's MAX comes back in last_extra_max.
            wish = self.tracker.local_estimate()
            extra = [wish if math.isfinite(wish) else -1.0]
        waits = self._waits()
        report = self.reporter.generate_report(sections, gpu, telemetry=telemetry, extra=extra,
                                               waits=waits, wait_groups=self._wait_groups,
                                               section_quartiles=quartiles,
                                               early=self.next_report_early)
        report = self.annotator(report)  # GPU identities and causes (collective)
        # Agreed on every rank before anything else can fail: a rank that fails later in this
        # report still holds the same decision as its peers.
        self.last_decision = decision = self._agree_decision(report)
        tracker = self.tracker
        if extra is None:
            agreed = tracker.local_estimate()
        else:
            agreed = (self.reporter.last_extra_max or (-1.0,))[0]
        tracker.agree(agreed if agreed > 0 else math.nan)  # local: the value is agreed
        every = tracker.iter_interval
        early_iters = early_window(every, tracker.profiling_interval) \
            if self.interval_s > 0 else None
        early = (decision.suspects_pending and self._early_streak < MAX_EARLY_REPORTS
                 and early_iters is not None)
        self._early_streak = self._early_streak + 1 if early else 0
        if self.deadline is not None and self._started:  # the next window starts now
            self.deadline.finish_window()
            share = early_iters / every if early and early_iters and every else 1.0
            self.deadline.start_window(self.interval_s * share)
        if early and early_iters is not None:
            tracker.bring_forward(tracker.current_iter + early_iters)
        if report is not None and self.observers is not None:  # never raises
            self.observers.emit(report, iteration=tracker.current_iter,
                                report_ms=(time.perf_counter() - start_s) * 1e3,
                                sections=len(sections), gpu_timers=len(gpu))
        self.registry.new_window()
        self.gpu.new_window()
        if self.on_report is not None:
            self.on_report()  # learns FT timeouts; never raises
        return report

    @property
    def next_report_early(self) -> bool:
        """Whether the next report comes early (the last one had suspects; docs/policy.md)."""
        return self._early_streak > 0

    def _waits(self) -> Any:
        """This window's collective waits (`straggler.analysis.waits.pack`), or None when
        collectives are not observed; the window restarts."""
        if not self.collective_waits:
            return None
        from .analysis import own_time
        from .analysis.waits import group_name, pack
        from .timing import collectives

        now = time.monotonic()
        window_s, self._waits_since_s = now - self._waits_since_s, now
        groups = [g for g in collectives.take_window() if g.size > 1]
        world = _world_group_name()
        self._wait_groups = {g.group: group_name(g.group, g.desc, world) for g in groups}
        # Own time per step (analysis/own_time.py); not on the GPU path (the host's gaps).
        steps = collectives.take_own_time()
        own = None if steps.gpu else own_time.summarize(steps.steps_s, steps.outside_s)
        if not self._stepped and self._section_steps is None and self._mark_step is not None:
            self._steps_from_sections()
        return pack([(g.group, g.count, g.wait_sum_s, g.wait_min_s, g.histogram)
                     for g in groups], window_s, own)

    def _steps_from_sections(self) -> None:
        """No step marked before this report: mark them from the loop's first section on."""
        from .timing import collectives

        assert self._mark_step is not None
        self._mark_step()  # the gaps since initialize() are no step: ended here ...
        collectives.take_own_time()  # ... and dropped
        self._section_steps = collectives.SectionSteps(self._mark_step, self.registry)
        self._section_steps.start()

    def _steps_from_the_loop(self) -> None:
        """The job marks its steps (generate_report_if_interval_elapsed): no section hook."""
        self._stepped = True
        if self._section_steps is not None:
            self._section_steps.stop()
            self._section_steps = None

    def _agree_decision(self, report: Any) -> Decision:
        """The decision of this report, the same on every rank (collective when reports
        communicate: one all_reduce(MAX) of one code per rank plus the verdict)."""
        import torch

        from .reporting.decision import Verdict, decide, decode, encode

        count, iteration = self._calls, self.tracker.current_iter
        rule = self.decision_rule
        local = decide(report, rule, count=count, iteration=iteration) \
            if report is not None else None
        comm = self.comm
        if not self.agree_by_comm or comm.world_size == 1:
            return local if local is not None else decode([], [], rule.verdict, count=count,
                                                         iteration=iteration)
        verdicts = list(Verdict)
        ranks = comm.global_ranks
        own_verdict = float(verdicts.index(Verdict(rule.verdict))) if local is not None else 0.0
        vector = [*encode(local, ranks), own_verdict]
        agreed = comm.all_reduce(torch.tensor(vector, dtype=torch.float64), "max").tolist()
        return decode(agreed[:-1], ranks, verdicts[int(agreed[-1])], count=count,
                      iteration=iteration)

    def generate_report_if_interval_elapsed(self) -> Report | None:
        """Count one iteration; the report when it is due (collective), else None.

        A rank that failed keeps counting (the interval's first estimate is a collective) and
        joins the next report to say "off" (see `Lifecycle.fail`).
        """
        if not self._in_reports():
            return None
        if not self.acquire("Detector.generate_report_if_interval_elapsed()"):
            return None
        try:
            return self._count_iteration()
        finally:
            self.release()

    def _count_iteration(self) -> Report | None:
        try:
            if self._mark_step is not None:
                self._mark_step()  # a step ended: its own time (analysis/own_time.py)
                if not self._stepped:
                    self._steps_from_the_loop()
            if not self._started:
                self._start()
            tracker = self.tracker
            tracker.iter_increase()
            if self.deadline is not None:
                due = self.deadline.due(tracker.current_iter)
                if due is not None:
                    tracker.bring_forward(due)
        except Exception as exc:  # noqa: BLE001 - e.g. the estimate's collective failed
            self.lifecycle.fail(exc, in_report=True)
            return None
        if self.tracker.is_interval_elapsed():
            return self._generate_report("Detector.generate_report_if_interval_elapsed() on "
                                         f"iteration {self.tracker.current_iter}")
        return None

    def restart_interval(self) -> None:
        """Measure the report interval again from the next iteration (the steps changed kind,
        e.g. the attach's boundary moved to the optimizer). Call on every rank at the same
        iteration; the iteration count goes on. The report window restarts too: the time
        before (an attached job's start-up after an early collective) neither makes the next
        report due at once nor counts in the report log's ``window_s``, nor do its collective
        waits (ranks started seconds apart wait that long at their first collectives)."""
        old = self.tracker
        self.tracker = ReportIntervalTracker(
            old.time_interval_s, old.profiling_interval,
            reduce_max=self._reduce_max if self.agree_by_comm else None)
        self.tracker.current_iter = old.current_iter
        if self.deadline is not None and self._started:
            self.deadline.finish_window()  # every rank: the window's one reduction, then anew
            self.deadline.start_window(self.interval_s)
        if self.observers is not None and self._started:
            self.observers.start_window(old.current_iter)
        if self.collective_waits:  # the start-up's collective waits go with its time
            from .timing import collectives

            collectives.take_window()
            self._waits_since_s = time.monotonic()

    def _start(self) -> None:
        """The first call, on every rank: agree on the iteration count (ranks restored from a
        checkpoint may differ; the largest wins), then open the deadline's first window."""
        self._started = True
        tracker = self.tracker
        if self.agree_by_comm and self.comm.world_size > 1:
            import torch

            with self.comm.during("Detector.generate_report_if_interval_elapsed() (the first "
                                  "call: agreeing on the iteration count)"):
                agreed = int(self.comm.all_reduce(
                    torch.tensor([float(tracker.current_iter)], dtype=torch.float64),
                    "max")[0])
            if agreed != tracker.current_iter:
                log.info("straggler: rank %d counts iterations from %d (its peers' count; it "
                         "had %d)", self.comm.global_ranks[self.comm.rank], agreed,
                         tracker.current_iter)
                tracker.adopt_iteration(agreed)
        if self.deadline is not None:
            self.deadline.start_window(self.interval_s)
        if self.observers is not None:  # the report log's first window starts here too
            self.observers.start_window(tracker.current_iter)

    def close_deadline(self) -> None:
        """Stop the deadline's thread and close its group (local; safe to call twice)."""
        comm, self.deadline_comm = self.deadline_comm, None
        if comm is not None:
            comm.close()  # first: the watcher may be waiting in a reduction
        if self.deadline is not None:
            self.deadline.close()

    def is_interval_elapsed(self) -> bool:
        """Whether a report is due on this iteration (False once disabled)."""
        return ((self.registry.enabled or self.lifecycle.leaving)
                and self.tracker.is_interval_elapsed())

    # -- persistence -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """What a resumed job needs: the individual references and the iteration count."""
        return {"version": 1, "reporter": self.reporter.state_dict(),
                "interval": self.tracker.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict()` output; ValueError when `state` is not one."""
        if not isinstance(state, dict) or state.get("version") != 1:
            raise ValueError(f"`state={state!r:.200}` is not a Detector.state_dict() of version 1")
        self.tracker.check_state(state.get("interval"))  # before anything is restored
        self.reporter.load_state_dict(state["reporter"])
        self.tracker.load_state_dict(state["interval"])


def _world_group_name() -> str | None:
    """The default process group's c10d name, or None outside torch.distributed."""
    try:
        import torch.distributed as dist

        world = dist.group.WORLD if dist.is_initialized() else None
        return None if world is None else str(world.group_name)
    except Exception:  # noqa: BLE001 - a name for people only: never fail a report for it
        return None
