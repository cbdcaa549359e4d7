"""`HangWatchdog`: one daemon thread per rank that publishes progress and, on a hang, names it.

Every tick (``period_s``, 1 s) the thread reads this rank's progress (`LocalProgress`) and:

- publishes it to the store at most once per publish interval (1 s; longer at scale, so that
  all ranks together stay under ``max_store_qps``), and at once when it starts to stall;
- when its own progress has stalled for half the hang timeout, adds where the training thread
  is (the innermost frame and the torch.distributed call it is in) and answers the reporter's
  request for its stack (``want`` -> ``stack/<rank>``);
- when the stall reaches the timeout, adds one to the store's ``alarm`` counter (once per stall);
- on a reporter rank (global ranks 0, world/2 and world-1, the first one alive acts), a new
  alarm makes it read every rank's record, ask the culprits for their stacks, wait a few
  seconds for them, and hand the `HangFinding` to ``on_finding``.

The thread never raises into the job: a store error turns hang detection off on this rank with
one log line (`ProgressStore`), any other error is logged once and stops the thread. It is a
daemon thread (it never keeps the process alive) that `close()` stops and joins; in a forked
child it does not exist, and `forget_after_fork()` makes the object inert.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable

from .analysis import MISMATCHED, NOT_ARRIVED, HangFinding, analyse
from .options import HangOptions, HangTimeout
from .progress import LocalProgress, ProgressRecord
from .stacks import format_stack, thread_frame
from .store import ProgressStore

__all__ = ["HangWatchdog", "process_exited", "MAX_STACKS"]

log = logging.getLogger("straggler")

MAX_STACKS = 8  # stacks the reporter asks for per finding (culprits first)


def process_exited(rec: ProgressRecord, node: str) -> bool:
    """Whether `rec`'s process is known to be gone: on this host only (pid, zombie state)."""
    if rec.node != node or rec.pid <= 0:
        return False
    try:
        with open(f"/proc/{rec.pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return not os.path.exists(f"/proc/{rec.pid}") if os.path.isdir("/proc") else False
    return state in (b"Z", b"X")


class HangWatchdog:
    """Publishes this rank's progress and names a hang (see the module docstring).

    Args:
        options: `HangOptions`.
        progress: this rank's `LocalProgress`.
        store: the `ProgressStore` all ranks of the job share.
        rank, world_size: global rank and world size.
        on_finding: called on the reporter with each `HangFinding` (logs, sinks, FT).
        on_exit: called with a description on a culprit named with ``action="exit"`` (and on
            the reporter when no culprit can act); it exits the process (`HangOutput.exit`).
        on_clear: called on the reporter when its own progress resumes after a finding.
        cap_s: the job's own timeouts, read every tick (the timeout stays at half of it).
        clock: monotonic seconds; ``wall``: wall seconds (the records' timestamps).
    """

    def __init__(self, options: HangOptions, progress: LocalProgress, store: ProgressStore,
                 rank: int, world_size: int, on_finding: Callable[[HangFinding], None],
                 on_exit: Callable[[str], None] | None = None,
                 on_clear: Callable[[], None] | None = None,
                 cap_s: Callable[[], float] = lambda: float("inf"),
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.options = options
        self.progress = progress
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self.on_finding = on_finding
        self.on_exit = on_exit
        self.on_clear = on_clear
        self.cap_s = cap_s
        self.timeout = HangTimeout(options.timeout_s)
        self.interval_s = options.publish_interval_s(world_size)
        self.gone_after_s = 3 * self.interval_s + 2 * options.period_s + 2.0
        self.candidates = sorted({0, world_size // 2, world_size - 1})
        # How long, and how often, the reporter looks for the stacks it asked for: a stalled
        # rank answers at its next publish tick.
        self.stack_wait_s = 2 * self.interval_s + 2 * options.period_s + 1.0
        self.stack_poll_s = 0.2
        self.findings: list[HangFinding] = []  # what this rank reported (the latest last)
        self._clock, self._wall = clock, wall
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_publish = -float("inf")
        self._last_poll = -float("inf")
        self._suspect = False
        self._alarmed = False
        self._handled_alarm = 0
        self._last_report = -float("inf")
        self._answered: set[int] = set()  # `want` episodes answered
        self._acted = False
        self._step = (0, clock())
        self._reported = False  # a finding is out and this rank has not progressed since
        # Called (once) with the reason when the peers ask this rank to leave the detector's
        # group: it is past a report they wait in (absent.py); polled while no progress.
        self.on_leave: Callable[[str], None] | None = None
        self._last_leave_poll = -float("inf")

    # -- lifetime ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the daemon thread."""
        self._thread = threading.Thread(target=self._run, name="straggler-hang", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Stop the thread and wait for it (bounded by one store timeout)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self.options.store_timeout_s + 2 * self.options.period_s)

    def forget_after_fork(self) -> None:
        """In a forked child: the thread is the parent's; never start or join it."""
        self._stop.set()
        self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.options.period_s):
            if self.store.failed:
                return
            try:
                self.tick()
            except Exception as exc:
                log.warning("straggler: hang detection stopped on this rank after an internal "
                            "error (training goes on): %s: %s", type(exc).__name__, exc,
                            exc_info=exc)
                return

    # -- one tick ------------------------------------------------------------------------------
    def tick(self) -> None:
        """Read, publish, alarm, answer, report: what the thread does every ``period_s``."""
        now = self._clock()
        self.timeout.cap_s = self.cap_s()
        timeout = self.timeout.value_s
        stalled = self.progress.stall_s()
        suspect = stalled >= 0.5 * timeout
        rec = self.progress.snapshot(with_location=suspect)
        self._learn(rec.step, now)
        if rec.stall_s < 0.5 * timeout:
            suspect = self._alarmed = False
            if self._reported:
                if self.rank in self.candidates:
                    self._absorb_alarms(self.store.add("alarm", 0))
                if self.on_clear is not None:
                    self.on_clear()
            self._reported = False
        if now - self._last_publish >= self.interval_s or (suspect and not self._suspect):
            self._last_publish = now
            self.store.put(f"p/{self.rank}", rec.to_json())
        self._suspect = suspect
        if self.on_leave is not None and stalled >= self.interval_s \
                and now - self._last_leave_poll >= self.interval_s:
            self._last_leave_poll = now
            self._poll_leave()
        if rec.stall_s >= timeout and not self._alarmed:
            self._alarmed = True
            self.store.add("alarm", 1)
        if suspect and now - self._last_poll >= self.interval_s:
            self._last_poll = now
            self._answer()
        if self.rank in self.candidates:
            self._maybe_report(timeout)

    def _poll_leave(self) -> None:
        """Whether the peers asked this rank to leave (`absent.leave_key`); then `on_leave`."""
        from .absent import leave_key

        raw = self.store.get(leave_key(self.rank))
        on_leave = self.on_leave
        if raw and on_leave is not None:
            self.on_leave = None
            on_leave(raw.decode(errors="replace"))

    def _learn(self, step: int, now: float) -> None:
        last_step, since = self._step
        if step != last_step:
            if step > last_step:
                self.timeout.observe_step(now - since, step - last_step)
            self._step = (step, now)

    def _own_stack(self) -> str:
        frame = thread_frame(self.progress.thread) if self.progress.thread else None
        return format_stack(frame, self.options.stack_bytes) if frame is not None else ""

    def _answer(self) -> None:
        """While stalled: publish the stack the reporter asks for; act on a finding."""
        raw = self.store.get("want")
        if raw:
            want = json.loads(raw)
            episode = int(want.get("episode", 0))
            if self.rank in want.get("ranks", ()) and episode not in self._answered:
                self._answered.add(episode)
                self.store.put(f"stack/{self.rank}",
                               json.dumps({"episode": episode, "stack": self._own_stack()}))
        if self.options.action == "exit" and not self._acted and self.on_exit is not None:
            raw = self.store.get("finding")
            if raw:
                data = json.loads(raw)
                if self.rank in data.get("exit", ()):
                    self._acted = True
                    self.on_exit(f"straggler: hang: rank {self.rank} is named by rank "
                                 f"{data.get('reporter', '?')} as one the job waits for")

    # -- the reporter --------------------------------------------------------------------------
    def _absorb_alarms(self, alarm: int | None) -> None:
        """Count the ``alarm`` alarms so far as handled: each stalled rank adds one, the finding
        came at the first, and the others belong to the stall it reported (once the job went on,
        they made a finding of a job in progress: a `stall` blaming nobody after 0 s)."""
        self._handled_alarm = max(self._handled_alarm, alarm or 0)

    def _maybe_report(self, timeout: float) -> None:
        alarm = self.store.add("alarm", 0)
        if self._reported:  # this rank has not progressed since its finding: the same stall
            self._absorb_alarms(alarm)
            return
        now = self._clock()
        if not alarm or alarm <= self._handled_alarm or now - self._last_report < timeout:
            return
        for c in self.candidates:  # the first candidate alive reports
            if c == self.rank:
                break
            raw = self.store.get(f"p/{c}")
            if raw and self._wall() - ProgressRecord.from_json(raw).t <= self.gone_after_s:
                return
        self._handled_alarm = alarm
        finding = self._analyse(timeout)
        wanted = [c.rank for c in finding.culprits
                  if c.state in (NOT_ARRIVED, MISMATCHED)][:MAX_STACKS]
        if wanted:
            finding = self._collect_stacks(alarm, wanted, timeout)
        if self.store.failed or self._stop.is_set():
            return
        self._last_report = self._clock()
        exit_ranks = [c.rank for c in finding.culprits if c.state == NOT_ARRIVED]
        self.store.put("finding", json.dumps({"episode": alarm, "kind": finding.kind,
                                              "culprits": finding.culprit_ranks,
                                              "exit": exit_ranks, "reporter": self.rank}))
        self.findings.append(finding)
        self._reported = True
        self.on_finding(finding)
        if self.options.action == "exit" and finding.kind == "hang" and not exit_ranks \
                and self.on_exit is not None:
            self._acted = True  # nobody alive to exit for the job: this rank does
            self.on_exit(finding.format().splitlines()[0])

    def _read_records(self) -> dict[int, ProgressRecord]:
        keys = [f"p/{r}" for r in range(self.world_size)]
        out: dict[int, ProgressRecord] = {}
        for key, raw in self.store.get_many(keys).items():
            try:
                rec = ProgressRecord.from_json(raw)
            except (ValueError, TypeError):
                continue
            out[int(key[2:])] = rec
        return out

    def _analyse(self, timeout: float) -> HangFinding:
        node = self.progress.node
        return analyse(self._read_records(), self.world_size, self._wall(),
                       gone_after_s=self.gone_after_s, timeout_s=timeout, reporter=self.rank,
                       exited=lambda rec: process_exited(rec, node))

    def _collect_stacks(self, episode: int, ranks: list[int], timeout: float) -> HangFinding:
        """Ask `ranks` for their stacks and wait for them (a few seconds at the most)."""
        stacks: dict[int, str] = {}
        if self.rank in ranks:
            stacks[self.rank] = self._own_stack()
        self.store.put("want", json.dumps({"episode": episode, "ranks": ranks}))
        for _ in range(max(1, round(self.stack_wait_s / self.stack_poll_s))):
            if self._stop.is_set() or self.store.failed:
                break
            for r in ranks:
                if r in stacks:
                    continue
                raw = self.store.get(f"stack/{r}")
                if raw:
                    data = json.loads(raw)
                    if data.get("episode") == episode:
                        stacks[r] = str(data.get("stack", ""))
            if len(stacks) == len(ranks):
                break
            self._stop.wait(self.stack_poll_s)
        # Read again: a rank that did not answer may now be known to be gone.
        return self._analyse(timeout).with_stacks(stacks)
