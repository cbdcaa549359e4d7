"""Learning FT timeouts at our report points, with Megatron-Bridge's rules, and keeping them.

``step`` is learned after 16 iterations, ``setup`` only after a persistent checkpoint load,
``checkpointing`` only after a synchronous save, out-of-section only at the clean end of a run
that did all of that. NVRx's calculation runs on every rank in the same order; its reduction is
replaced by ours (`CalcSync`), which has a timeout and works with any backend. Learned timeouts
are saved to ``ft_state.json`` by global rank 0 and loaded at the next start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import torch
import torch.distributed as dist

from .. import _common
from .monitor import FTConnection
from .options import CHECKPOINTING, SETUP, STEP
from .sections import SectionCounter
from .state import read_state_file, reconcile_section_state, write_state_file

__all__ = ["TimeoutLearner", "TrainingProgress", "CalcSync", "default_reduce_max",
           "MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE"]

log = logging.getLogger("straggler")

# Megatron-Bridge's constant (src/megatron/bridge/training/fault_tolerance.py).
MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE = 16
_EMA_ALPHA = 0.5  # NVRx TimeoutsCalc merges a new timeout with a calculated one: 0.5*old+0.5*new
_CALC_FIELDS = ("initial_max_time", "subsequent_max_time", "out_of_section_max_time",
                "section_to_max_time")


def default_reduce_max(t: torch.Tensor) -> torch.Tensor:
    """MAX over the default process group, on the device NVRx's TimeoutsCalc would use."""
    if _common.group_size() == 1:  # also without a process group
        return t
    backend = str(dist.get_backend())
    device = torch.device("cuda") if backend == "nccl" else torch.device("cpu")
    buf = t.to(device)
    dist.all_reduce(buf, op=dist.ReduceOp.MAX)
    return buf.cpu()


class CalcSync:
    """Replaces ``TimeoutsCalc.synchronize_all`` with the same MAX-reduction through `reduce_max`.

    NVRx's own reduction runs on the default group, accepts only a plain ``nccl`` or ``gloo``
    backend and waits forever on a dead peer; the detector's communicator has a timeout and works
    with any backend. The fields are those of ``timeouts_calc.py`` (identical in 0.4.1-0.7.0).
    """

    def __init__(self, calc: Any, reduce_max: Callable[[Any], Any]) -> None:
        self.calc = calc
        self.reduce_max = reduce_max
        self.width = 3 + len(calc.section_to_max_time)

    def __call__(self) -> None:
        c = self.calc
        values = [c.initial_max_time, c.subsequent_max_time, c.out_of_section_max_time]
        values += list(c.section_to_max_time.values())
        out = self.reduce_max(torch.tensor(values, dtype=torch.float64))
        out = [float(v) for v in out.tolist()]
        c.initial_max_time, c.subsequent_max_time, c.out_of_section_max_time = out[:3]
        for i, name in enumerate(c.section_to_max_time):
            c.section_to_max_time[name] = out[3 + i]

    def dummy(self) -> None:
        """Take part in the reduction without data (a rank whose FT connection broke)."""
        self.reduce_max(torch.full((self.width,), -1.0, dtype=torch.float64))


class TrainingProgress(Protocol):
    """What the learning rules read: the bridge's counters."""

    train_iters: int
    checkpoints: int
    async_checkpointing: bool
    persistent_checkpoint_loaded: bool


class TimeoutLearner:
    """Learns, saves and loads the rank monitor's timeouts; a collective at every `learn`."""

    def __init__(self, conn: FTConnection, sections: SectionCounter, *, calc_timeouts: bool,
                 timeouts_from_stats: bool, state_file: str | None,
                 reduce_max: Callable[[Any], Any]) -> None:
        self._conn = conn
        self._sections = sections
        self.calc_timeouts = calc_timeouts
        self.timeouts_from_stats = timeouts_from_stats
        self.state_file = state_file
        self.reduce_max = reduce_max
        self.participating = False  # takes part in the timeout collectives (until shutdown)
        self._sync: CalcSync | None = None

    def start(self) -> None:
        """Once connected: install our reduction, join the collectives, load saved timeouts."""
        calc = getattr(self._conn.client, "timeouts_calc", None)
        if not self._conn.owns_connection or calc is None \
                or not all(hasattr(calc, f) for f in _CALC_FIELDS):
            self._sync = None  # a shared client, or an NVRx we do not know: keep its reduction
        else:
            self._sync = CalcSync(calc, self.reduce_max)
            calc.synchronize_all = self._sync
        self.participating = True

    def current_timeouts(self) -> dict[str, float | None]:
        """The timeouts in force: one per monitored section, plus ``out_of_section``."""
        client = self._conn.client
        st = getattr(client, "section_timeouts", None) if client is not None else None
        if st is None:
            return {}
        out = dict(st.section)
        out["out_of_section"] = st.out_of_section
        return out

    def selection(self, progress: TrainingProgress, is_closing: bool) -> tuple[list[str], bool]:
        """Megatron-Bridge's rules for which timeouts may be learned now."""
        configured = self._conn.configured
        sections = []
        if SETUP in configured and progress.persistent_checkpoint_loaded:
            sections.append(SETUP)
        step_ready = STEP in configured and \
            progress.train_iters >= MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE
        if step_ready and not self.timeouts_from_stats:
            sections.append(STEP)
        if CHECKPOINTING in configured and progress.checkpoints > 0 and \
                not progress.async_checkpointing:
            sections.append(CHECKPOINTING)
        oos = (is_closing and progress.checkpoints > 0 and step_ready
               and progress.persistent_checkpoint_loaded and SETUP in configured)
        return sections, oos

    def on_report(self, progress: TrainingProgress) -> bool:
        """At a report point (every rank, same iteration); True when timeouts changed here."""
        if not (self.participating and self.calc_timeouts):
            return False
        return self.learn(progress, is_closing=False)

    def on_shutdown(self, progress: TrainingProgress, clean: bool) -> None:
        """Learn once more at a clean end (a collective); leave the collectives either way."""
        if clean and self.participating and self.calc_timeouts:
            self.learn(progress, is_closing=True)
        self.participating = False

    def learn(self, progress: TrainingProgress, is_closing: bool) -> bool:
        """One NVRx calculation (and one statistics reduction) on every rank, in the same order."""
        conn = self._conn
        changed = False
        sections, oos = self.selection(progress, is_closing)
        try:
            if not conn.enabled:  # FT broke on this rank: keep the collectives matched
                if self._sync is not None:
                    self._sync.dummy()
                if self.timeouts_from_stats:
                    self._reduce_stats()
                return False
            if sections or oos:
                changed = bool(conn.client.calculate_and_set_section_timeouts(
                    selected_sections=sections, calc_out_of_section=oos, skip_if_not_ready=True))
            elif self._sync is not None:  # nothing to learn here, but peers may: take part
                self._sync()
            elif _common.group_size() > 1:  # a shared client: NVRx's own reduction
                conn.client.timeouts_calc.synchronize_all()
            if self.timeouts_from_stats:
                changed = self._push_step_from_stats(progress) or changed
        except Exception as exc:  # noqa: BLE001 - fail open; stop learning, keep sections
            log.error("straggler: learning FT timeouts failed; timeouts stay as they are: "
                      "%s: %s", type(exc).__name__, exc)
            self.participating = False
            return False
        if changed:
            log.info("straggler: FT timeouts updated: %s", self.current_timeouts())
            self.save()
        return changed

    def _reduce_stats(self) -> float:
        local = self._sections.take_window_step_max()
        return float(self.reduce_max(torch.tensor([local], dtype=torch.float64))[0])

    def _push_step_from_stats(self, progress: TrainingProgress) -> bool:
        longest_s = self._reduce_stats()
        if longest_s <= 0 or progress.train_iters < MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE:
            return False
        client = self._conn.client
        st = client.section_timeouts
        new = float(client.cfg.safety_factor) * longest_s
        calculated = set(st.calculated_sections)
        if STEP in calculated and st.section.get(STEP):
            new = _EMA_ALPHA * st.section[STEP] + (1.0 - _EMA_ALPHA) * new
        section = dict(st.section)  # every configured name: the monitor replaces its table
        section[STEP] = new
        client.load_state_dict({"current_timeouts": {"section": {
            "section": section, "out_of_section": st.out_of_section,
            "calculated_sections": sorted(calculated | {STEP}),
            "is_out_of_section_calculated": bool(st.is_out_of_section_calculated)}}})
        return True

    def state_dict(self) -> dict[str, Any]:
        """What ``ft_state.json`` holds: NVRx's ``current_timeouts`` (calculated ones only)."""
        if not self._conn.enabled:
            return {}
        current = self._conn.client.state_dict().get("current_timeouts", {})
        return {"current_timeouts": dict(current), "saved_by": "straggler"}

    def save(self) -> None:
        """Write `state_dict()` to the state file, on global rank 0 only; never raises."""
        if self.state_file is None or _common.group_rank(env_rank=True) != 0:
            return
        try:
            write_state_file(self.state_file, self.state_dict())
            log.info("straggler: FT timeouts saved to %s", self.state_file)
        except Exception as exc:  # noqa: BLE001 - a full disk must not stop training
            log.warning("straggler: could not save FT timeouts to %s: %s", self.state_file, exc)

    def load_saved(self) -> None:
        """Hand the rank monitor the timeouts saved by an earlier run, fitted to today's config."""
        if self.state_file is None:
            return
        state = read_state_file(self.state_file)
        saved = (state or {}).get("current_timeouts", {})
        if not isinstance(saved, Mapping) or not isinstance(saved.get("section"), Mapping):
            return
        cfg = self._conn.client.cfg
        section = reconcile_section_state(saved["section"], dict(cfg.rank_section_timeouts),
                                          cfg.rank_out_of_section_timeout)
        if section is None:
            return
        try:
            self._conn.client.load_state_dict({"current_timeouts": {"section": section}})
        except Exception as exc:  # noqa: BLE001 - fail open
            self._conn.fail("load_state_dict", exc)
            return
        log.info("straggler: FT timeouts loaded from %s: %s", self.state_file,
                 self.current_timeouts())
