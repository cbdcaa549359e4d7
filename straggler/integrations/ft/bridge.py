"""`FTBridge`: NVRx's FT sections driven from the places a training loop already marks.

The training progress and Megatron-Bridge's hook names live in `BridgeHooks`; the rest of the
work is done by the bridge's parts: `FTConnection` (the rank monitor), `SectionCounter` (sections),
`TimeoutLearner` (timeouts and ``ft_state.json``), `control` (workload control) and `drills`.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
from collections.abc import Collection, Iterator
from typing import Any

from ..._checks import check_choice
from ...options import to_options
from .. import _common
from . import control, drills
from .hooks import DEFAULT_WARMUP_ITERS, BridgeHooks
from .monitor import FTConnection
from .options import FT_SECTIONS_MODES, SETUP, STEP, FTOptions
from .sections import SectionCounter
from .state import state_file_path
from .timeouts import TimeoutLearner, default_reduce_max

__all__ = ["FTBridge", "create_bridge"]

log = logging.getLogger("straggler")


class FTBridge(BridgeHooks):
    """Drives NVRx's rank monitor from our sections; every method is a no-op while FT is off.

    ``FTBridge(mode, options)`` or ``FTBridge(mode, **fields)``: `options` is an `FTOptions` or
    a dict of its fields:

    - ``mode``: ``"auto"`` (on only under ``ft_launcher`` with NVRx importable), ``"required"``
      (`setup()` raises `FTUnavailableError` otherwise), ``"off"``.
    - ``step_section``: name of our per-iteration detection section that holds FT's ``step``;
      None adopts the first outermost section entered.
    - ``state_path``: ``ft_state.json`` or its directory (default ``$STRAGGLER_FT_STATE``); None
      keeps learned timeouts only for the life of the launcher's rank monitors.
    - ``calc_timeouts``: learn timeouts at report points and at a clean shutdown.
    - ``timeouts_from_stats``: learn ``step`` from our own statistics instead of NVRx's
      calculation: safety factor x the longest step of the last report window on any rank
      (warm-up excluded), merged with the previous value as NVRx does.
    - ``warmup_iters``: steps kept out of ``step`` (default: the launcher's
      ``num_warmup_iterations`` where NVRx has it, else Megatron-Bridge's 1).
    - ``straggler_action``: what `act_on_stragglers` asks of the launcher: ``"none"``,
      ``"exclude_node"`` or ``"shutdown"``.
    - ``client``: an existing ``RankMonitorClient`` (or compatible object) to drive.
    - ``reduce_max``: MAX-reduces a CPU float64 tensor over all ranks (the detector passes its
      communicator); default: ``torch.distributed`` on the default group.
    - ``clock``: seconds for the ``step`` times ``timeouts_from_stats`` learns from (default
      ``time.monotonic``; tests pass a fake one).
    """

    def __init__(self, mode: str = "auto", options: Any = None, **fields: Any) -> None:
        mode = check_choice("ft_sections", mode, FT_SECTIONS_MODES)
        if options is not None and fields:
            raise ValueError(f"`options={options!r}` and keyword fields {sorted(fields)}: "
                             "pass one or the other")
        opts = to_options(FTOptions, options if options is not None else fields, "ft_options")
        assert opts is not None  # FTOptions has no "off" shorthand
        self.options = opts
        self.straggler_action = opts.straggler_action
        self._conn = FTConnection(mode, opts.client)
        super().__init__(SectionCounter(self._conn, opts.clock), opts.step_section,
                         opts.warmup_iters)
        self._timeouts = TimeoutLearner(self._conn, self._sections,
                                        calc_timeouts=opts.calc_timeouts,
                                        timeouts_from_stats=opts.timeouts_from_stats,
                                        state_file=state_file_path(opts.state_path),
                                        reduce_max=opts.reduce_max or default_reduce_max)

    # -- what the parts know ----------------------------------------------------------------
    mode = property(lambda self: self._conn.mode, doc="``auto``, ``required`` or ``off``.")

    @property
    def enabled(self) -> bool:
        """Whether sections are forwarded to FT now."""
        return self._conn.enabled

    client = property(lambda self: self._conn.client, doc="The ``RankMonitorClient`` driven.")
    api = property(lambda self: self._conn.api, doc="The `FTApi` of the NVRx imported (or None).")
    generation = property(lambda self: self._conn.generation,
                          doc="``0.4`` or ``0.5+``: the NVRx client's behaviour (see monitor).")
    configured = property(lambda self: self._conn.configured,
                          doc="The section names the launcher monitors.")
    state_file = property(lambda self: self._timeouts.state_file,
                          doc="Where learned timeouts are saved (None: not saved).")
    calc_timeouts = property(lambda self: self._timeouts.calc_timeouts,
                             doc="Whether timeouts are learned.")
    timeouts_from_stats = property(lambda self: self._timeouts.timeouts_from_stats,
                                   doc="Whether ``step`` is learned from our statistics.")

    # -- lifetime ---------------------------------------------------------------------------
    def setup(self) -> bool:
        """Connect to this rank's monitor, load saved timeouts, open ``setup``; True when on.

        ``auto`` stays off (logged) without ``ft_launcher`` or NVRx; ``required`` raises
        `FTUnavailableError` saying which is missing.
        """
        conn = self._conn
        if conn.mode == "off" or conn.enabled or conn.closed:
            return conn.enabled
        if not conn.connect():
            return False
        if self.warmup_iters is None:
            self.warmup_iters = int(getattr(conn.client.cfg, "num_warmup_iterations",
                                            DEFAULT_WARMUP_ITERS) or 0)
        self._timeouts.start()
        if STEP not in conn.configured:
            log.warning("straggler: FT has no 'step' section configured (add step:<seconds> to "
                        "--ft-rank-section-timeouts); steps are covered only by the "
                        "out-of-section timeout")
        self._timeouts.load_saved()
        if SETUP in conn.configured:
            self.open_section(SETUP)
        log.info("straggler: FT sections on (NVRx %s, %s API): monitored %s, timeouts %s",
                 conn.api.version if conn.api else "client given", conn.generation,
                 sorted(conn.configured), self.current_timeouts())
        return conn.enabled

    def shutdown(self, clean: bool = True) -> None:
        """Close open sections one by one; on a clean end, learn timeouts once more; disconnect.

        With `clean` (and ``calc_timeouts``) this is a collective: call it on every rank at the
        end of training. After a failure use `abort()`.
        """
        if self._conn.closed:
            return
        self._conn.closed = True
        if self._conn.enabled:
            self._sections.close_all()
        self._timeouts.on_shutdown(self, clean)
        self._conn.disconnect()

    def abort(self) -> None:
        """Disconnect without the final timeout update (no collective): for failure paths."""
        self.shutdown(clean=False)

    def close(self) -> None:
        """`shutdown()` (called by `Detector.shutdown`)."""
        self.shutdown(clean=True)

    # -- sections ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        """``with bridge.section(name):`` opens and closes FT section `name`."""
        self.open_section(name)
        try:
            yield
        finally:
            self.close_section(name)

    def open_sections(self) -> dict[str, int]:
        """FT sections open now, with their nesting counts."""
        return self._sections.counts()

    # -- timeouts ---------------------------------------------------------------------------
    def current_timeouts(self) -> dict[str, float | None]:
        """The timeouts in force: one per monitored section, plus ``out_of_section``."""
        return self._timeouts.current_timeouts()

    def on_report(self) -> bool:
        """At a report point (collective: every rank, same iteration): learn timeouts.

        Returns True when new timeouts were set on this rank.
        """
        return self._timeouts.on_report(self)

    def state_dict(self) -> dict[str, Any]:
        """What ``ft_state.json`` holds: NVRx's ``current_timeouts`` (calculated ones only)."""
        return self._timeouts.state_dict()

    # -- acting on stragglers ---------------------------------------------------------------
    def request_workload_action(self, action: str, description: str) -> bool:
        """Ask ``ft_launcher`` to ``"exclude_node"`` or ``"shutdown"`` at its next rendezvous.

        The launcher acts once a worker has exited. Returns False (logged) when this NVRx or this
        launch has no workload-control channel.
        """
        return control.request_workload_action(self._conn, action, description)

    def note(self, description: str) -> bool:
        """Hand ``ft_launcher`` `description` to log, without an action (a hang finding)."""
        return control.send_note(self._conn, description)

    def act_on_stragglers(self, straggler_ranks: Collection[int], *, description: str = "",
                          exit_code: int = 1, exit_process: bool = True,
                          agree: bool = False) -> bool:
        """Act on a confirmed straggler decision per ``straggler_action``, then exit.

        Call it on every rank once the ranks agreed to stop. Each straggler rank asks its node's
        launcher to leave the node out of the next rendezvous (``exclude_node``) or to stop the
        workload (``shutdown``); then every rank disconnects from FT (no collective) and, with
        `exit_process`, exits with `exit_code` (non-zero, so the launcher acts). With `agree`,
        the ranks first share who the stragglers are (a collective through ``reduce_max``), so
        only the reporting rank needs to know them. Returns True when an action was taken (seen
        only with ``exit_process=False``); False when there is nothing to do or FT is off.
        """
        if self.straggler_action == "none":
            return False
        ranks = {int(r) for r in straggler_ranks}
        if agree:  # every rank joins, even one whose FT broke: the collectives stay matched
            try:
                ranks = control.agree_on_ranks(ranks, self._timeouts.reduce_max)
            except Exception as exc:  # noqa: BLE001 - fail open: act on what this rank knows
                log.warning("straggler: agreeing on the stragglers failed (%s: %s); acting on "
                            "this rank's own list", type(exc).__name__, exc)
        if not ranks or not self.enabled:
            return False
        me = _common.group_rank(env_rank=True)
        text = description or f"straggler: ranks {sorted(ranks)} confirmed slow"
        if me in ranks:
            self.request_workload_action(self.straggler_action,
                                         f"{text} (rank {me} on {socket.gethostname()})")
        self.abort()
        if exit_process:
            log.error("straggler: exiting with code %d after the straggler decision (%s)",
                      exit_code, text)
            sys.exit(exit_code)
        return True

    # -- fault drills -----------------------------------------------------------------------
    def maybe_setup_simulated_fault(self, simulate_fault: bool = True, fault_type: str = "random",
                                    fault_rank: int | None = None,
                                    base_delay_s: float = 0.0) -> int | None:
        """A drill: after a delay one rank hangs (SIGSTOP) or dies (SIGKILL); returns its rank.

        As Megatron-Bridge: the rank is random unless given (chosen on rank 0 and broadcast, so
        a collective when torch.distributed is up), ``random`` picks hung or killed, and the
        delay is `base_delay_s` plus up to 20 %. No-op (None) when FT is off.
        """
        drills.check_fault_args(fault_type, fault_rank, base_delay_s)
        if not simulate_fault or not self.enabled:
            return None
        return drills.setup_simulated_fault(fault_type, fault_rank, base_delay_s)


def create_bridge(mode: str, options: Any = None, **fields: Any) -> FTBridge | None:
    """An `FTBridge` set up for `mode`, or None when FT is off (``off``, or ``auto`` without it).

    `options` (an `FTOptions` or a dict) or `fields` are `FTOptions`' fields; unknown keys raise
    ValueError; ``required`` raises `FTUnavailableError`.
    """
    bridge = FTBridge(mode, options, **fields)
    return bridge if bridge.setup() else None

