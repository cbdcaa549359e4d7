"""Lightning callback: NVRx's ``StragglerDetectionCallback`` on top of :class:`straggler.Detector`.

Works with ``lightning`` (``lightning.pytorch``) or, when that is missing, ``pytorch_lightning``;
Lightning is an optional dependency (``pip install '.[lightning]'`` in a checkout)::

    from straggler.integrations.lightning import StragglerDetectionCallback

    trainer = Trainer(callbacks=[StragglerDetectionCallback(report_time_interval=300,
                                                            stop_if_detected=True)])

Pass the callback in a list: Lightning duck-types callbacks in a list, so the class also works
with the other Lightning package when both are installed.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from typing import Any

from typing_extensions import override

from . import _common
from .callback_options import DEFAULT_LOGGER_NAME, CallbackOptions, scores_to_print
from .ft.options import FTOptions

try:
    import lightning.pytorch as _pl
except ImportError:
    try:
        import pytorch_lightning as _pl  # type: ignore[no-redef]
    except ImportError as _exc:
        raise ImportError(
            "straggler.integrations.lightning needs Lightning: install `lightning` "
            "(pip install '.[lightning]' in a straggler checkout) or `pytorch_lightning`; neither "
            "could be "
            "imported") from _exc

__all__ = ["StragglerDetectionCallback", "LIGHTNING_PACKAGE"]

#: The Lightning package the callback was built on: "lightning" or "pytorch_lightning".
LIGHTNING_PACKAGE = "lightning" if _pl.__name__.startswith("lightning") else "pytorch_lightning"

log = logging.getLogger("straggler")


def _training_completed(trainer: Any) -> bool:
    """``max_steps`` or ``max_epochs`` reached (NVRx's FT callback's rule for auto-resume)."""
    max_steps = getattr(trainer, "max_steps", -1)
    if isinstance(max_steps, int) and max_steps > 0 and trainer.global_step >= max_steps:
        return True
    max_epochs = getattr(trainer, "max_epochs", None)
    return isinstance(max_epochs, int) and max_epochs > 0 and trainer.current_epoch >= max_epochs


class StragglerDetectionCallback(_pl.Callback):
    """Finds slow ranks while ``trainer.fit`` runs; optionally stops the job when it finds one.

    Parameters are NVRx's (same names and meaning); the defaults are NeMo's recipe values:

    - ``report_time_interval`` (s, default 300): time between reports; 0 reports every
      ``profiling_interval`` steps. Reports are collective and happen on the same step on every
      rank.
    - ``calc_relative_gpu_perf`` / ``calc_individual_gpu_perf``: which GPU scores to compute
      (relative: vs the other ranks; individual: vs the rank's own best). At least one.
    - ``num_gpu_perf_scores_to_print`` (default 5; ``num_gpu_perf_scores_to_log`` is accepted
      as the same thing): worst and best N ranks logged with node name and cause at each report;
      0 logs scores only when a straggler is found.
    - ``gpu_relative_perf_threshold`` / ``gpu_individual_perf_threshold`` (default 0.7): a rank
      whose score is strictly below is a straggler (NaN: nothing measured, never flagged).
    - ``stop_if_detected`` (default False): on a straggler every rank, holding the same
      decision (agreed inside the detector's report on its own group, never on the training
      group), saves ``last.ckpt`` through the trainer's checkpoint callback if there is one, and
      stops. Which ranks are stragglers is the ``verdict``'s choice (below).
    - ``enable_ptl_logging`` (default False): log ``gpu_relative_perf/{min,median,max}`` and
      ``gpu_individual_perf/...`` through Lightning's logger.
    - ``profiling_interval`` (default 1): time every N-th training step only.
    - ``logger_name``: Python logger for the report lines (NVRx's default name).

    Ours: ``exit_code`` (default 1) is the process exit status after a stop: the callback raises
    ``SystemExit(exit_code)`` on every rank once the checkpoint is saved, so a restarting
    launcher (torchrun, ft_launcher) restarts the job; from the stop on the process ignores
    SIGTERM, so no rank dies by the SIGTERM torchrun sends once the first one exited; ``0``
    exits cleanly; ``None`` only sets ``trainer.should_stop`` and ``fit`` returns after the
    current step. ``node_name`` names this
    node in reports (default: the host name); ``process_group`` limits detection to a group;
    ``sync_timeout_s`` bounds every wait in the detector's collectives (its ``comm_timeout_s``).
    ``verdict`` (default ``"confirmed"``): act on the persistence policy's confirmed stragglers
    (robust to noise, docs/policy.md); ``"single_report"`` is NVRx's rule, any rank whose
    score is below a threshold in one report. The thresholds always decide what is logged.

    Fault tolerance (NVRx ``ft_launcher``, see docs/ft.md): ``ft_sections`` (``"auto"``: on
    under ``ft_launcher``; ``"required"``; ``"off"``) and ``ft_options`` go to
    ``Detector.initialize``; each training batch is FT's ``step`` section. With
    ``ft_autoresume`` the job must be started with ``$FAULT_TOL_FINISHED_FLAG_FILE`` set, and
    rank 0 creates that file when training completes (``max_steps`` or ``max_epochs`` reached,
    no straggler stop), so an outer job script knows to stop re-submitting. With
    ``ft_options={"straggler_action": "exclude_node" | "shutdown"}`` a straggler stop first asks
    the launcher to leave the straggler's node out of the restart, or not to restart.
    """

    def __init__(self, report_time_interval: float = 300.0, calc_relative_gpu_perf: bool = True,
                 calc_individual_gpu_perf: bool = True, num_gpu_perf_scores_to_print: int = 5,
                 gpu_relative_perf_threshold: float = 0.7,
                 gpu_individual_perf_threshold: float = 0.7, stop_if_detected: bool = False,
                 enable_ptl_logging: bool = False, profiling_interval: int = 1,
                 logger_name: str | None = DEFAULT_LOGGER_NAME, *,
                 num_gpu_perf_scores_to_log: int | None = None, exit_code: int | None = 1,
                 node_name: str | None = None, process_group: Any = None,
                 sync_timeout_s: float = _common.DEFAULT_SYNC_TIMEOUT_S,
                 ft_sections: str = "auto",
                 ft_options: FTOptions | Mapping[str, Any] | None = None,
                 ft_autoresume: bool = False, verdict: str = "confirmed") -> None:
        opts = CallbackOptions(
            report_time_interval=report_time_interval,
            calc_relative_gpu_perf=calc_relative_gpu_perf,
            calc_individual_gpu_perf=calc_individual_gpu_perf,
            num_gpu_perf_scores_to_print=scores_to_print(num_gpu_perf_scores_to_print,
                                                         num_gpu_perf_scores_to_log),
            gpu_relative_perf_threshold=gpu_relative_perf_threshold,
            gpu_individual_perf_threshold=gpu_individual_perf_threshold,
            stop_if_detected=stop_if_detected, enable_ptl_logging=enable_ptl_logging,
            profiling_interval=profiling_interval, logger_name=logger_name, exit_code=exit_code,
            node_name=node_name, process_group=process_group, sync_timeout_s=sync_timeout_s,
            ft_sections=ft_sections, ft_options=ft_options, ft_autoresume=ft_autoresume,
            verdict=verdict)
        self.options = opts
        # NVRx's attribute names, read by users and by the hooks below.
        self.report_time_interval = opts.report_time_interval
        self.calc_relative_gpu_perf = opts.calc_relative_gpu_perf
        self.calc_individual_gpu_perf = opts.calc_individual_gpu_perf
        self.num_gpu_perf_scores_to_print = opts.num_gpu_perf_scores_to_print
        self.gpu_relative_perf_threshold = opts.gpu_relative_perf_threshold
        self.gpu_individual_perf_threshold = opts.gpu_individual_perf_threshold
        self.stop_if_detected = opts.stop_if_detected
        self.enable_ptl_logging = opts.enable_ptl_logging
        self.profiling_interval = opts.profiling_interval
        self.logger_name = opts.logger_name
        self.exit_code = opts.exit_code
        self.node_name = opts.node_name
        self.process_group = opts.process_group
        self.sync_timeout_s = opts.sync_timeout_s
        self.ft_sections = opts.ft_sections
        self.ft_options = opts.ft_options
        self.ft_autoresume = opts.ft_autoresume
        self.verdict = opts.verdict
        self.scores_to_compute = opts.scores_to_compute
        self.logger = logging.getLogger(opts.logger_name)
        self._initialized = False
        self._failed = False
        self._section: str | None = None  # the wrapped training_step's section name
        self.last_report: Any = None
        self.last_stragglers: dict[str, set] = {}
        self.last_decision: Any = None  # the agreed decision of the last report
        self.stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    @override
    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """Start the Detector and wrap the strategy's ``training_step`` (``fit`` only)."""
        if stage != "fit" or self._initialized:
            return
        from straggler import CallableId, Detector

        from .ft import FTUnavailableError, finished_flag_path

        if self.ft_autoresume:
            finished_flag_path(required=True)  # RuntimeError: not started for auto-resume
        try:
            Detector.initialize(scores_to_compute=self.scores_to_compute, gather_on_rank0=True,
                                profiling_interval=self.profiling_interval,
                                report_time_interval=self.report_time_interval,
                                node_name=self.node_name, process_group=self.process_group,
                                comm_timeout_s=self.sync_timeout_s,
                                ft_sections=self.ft_sections, ft_options=self.ft_options)
        except FTUnavailableError:
            raise  # ft_sections="required" and no FT: a configuration error, not a failure
        except Exception:  # noqa: BLE001 - fail open: training goes on without detection
            self._fail("Detector.initialize() failed")
            return
        self._initialized = True
        if not Detector.initialized:  # STRAGGLER_DISABLE=1
            return
        strategy = trainer.strategy
        if not callable(getattr(strategy, "training_step", None)):
            self.logger.warning("straggler detection: %s has no training_step to time",
                                type(strategy).__name__)
            return
        before = strategy.training_step
        callable_id = CallableId(strategy, "training_step")
        self._section = str(callable_id)
        from straggler.reporting.decision import DecisionRule

        Detector.set_decision_rule(DecisionRule(
            self.verdict, self.gpu_relative_perf_threshold, self.gpu_individual_perf_threshold,
            self._section))
        try:
            Detector.wrap_callables([callable_id])
        except Exception:  # noqa: BLE001
            self._fail("wrapping the strategy's training_step failed")
            return
        if strategy.training_step == before:
            self.logger.warning("straggler detection: training_step of %s was not wrapped; "
                                "no step will be timed and scores will be NaN",
                                type(strategy).__name__)

    @override
    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        """Shut the Detector down (puts ``training_step`` back); FT auto-resume flag if done."""
        if stage == "fit":
            if self.ft_autoresume and not self.stopped and _training_completed(trainer):
                from .ft import write_finished_flag

                write_finished_flag()
            self._shutdown()

    @override
    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """Shut the Detector down: Lightning skips ``teardown`` hooks when ``fit`` raises
        (including the ``SystemExit`` of a straggler stop)."""
        self._shutdown()

    def _shutdown(self) -> None:
        if not self._initialized:
            return
        self._initialized = False
        from straggler import Detector

        try:
            Detector.shutdown()
        except Exception:
            log.exception("straggler: Detector.shutdown() failed")

    # -- checkpoints ----------------------------------------------------------------------------

    @override
    def state_dict(self) -> dict[str, Any]:
        """Every rank's detector state (individual baselines, policy), for the checkpoint.

        Lightning calls this on every rank when it saves a checkpoint and writes rank 0's copy,
        while the baselines differ per rank: so the ranks' states are gathered here (one object
        gather on the detector's own group, bounded by its timeout) and each rank takes its own
        back in `load_state_dict`. ``{}`` while detection is not running. The checkpoint a
        straggler stop saves leaves the policy's verdict out (`_common.without_verdicts`).
        """
        from straggler import Detector

        core = Detector.core()
        if not self._initialized or self._failed or core is None or not core.enabled:
            return {}
        try:
            with core.comm.during("StragglerDetectionCallback.state_dict() (a checkpoint save)"):
                states = core.comm.all_gather_object(Detector.state_dict())
        except Exception:  # noqa: BLE001 - a checkpoint must not fail because of us
            self._fail("gathering the detector state for the checkpoint failed")
            return {}
        if self.stopped:  # the checkpoint of a straggler stop: the restart confirms afresh
            states = [_common.without_verdicts(st) for st in states]
        return {"version": 1, "detector": dict(zip(core.comm.global_ranks, states, strict=True))}

    @override
    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore this rank's detector state from a checkpoint (Lightning calls it after
        ``setup``); a rank the checkpoint does not know keeps a fresh baseline."""
        from straggler import Detector

        per_rank = state_dict.get("detector") if isinstance(state_dict, dict) else None
        core = Detector.core()
        if not per_rank or core is None or not self._initialized:
            return
        state = per_rank.get(core.comm.global_ranks[core.comm.rank])
        if not state:
            return
        try:
            Detector.load_state_dict(state)
        except Exception:
            self.logger.warning("straggler detection: the checkpoint's detector state was not "
                                "restored; baselines start afresh", exc_info=True)

    # -- every step ------------------------------------------------------------------------------

    @override
    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        """FT: the batch is the fault-tolerance ``step`` section (when FT sections are on)."""
        from straggler import Detector

        bridge = Detector.ft_bridge()
        if bridge is not None:
            bridge.on_training_step_start()

    @override
    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """Report on the interval; agree on, and carry out, a stop."""
        from straggler import Detector

        bridge = Detector.ft_bridge()
        if bridge is not None:
            bridge.on_training_step_end()  # before the report: it is not part of the step
        if not self._initialized or self._failed:
            return
        start = time.monotonic()
        try:
            seen = Detector.last_decision()
            report = Detector.generate_report_if_interval_elapsed()
            if report is not None:
                try:
                    self._handle_report(report, pl_module)
                except Exception:
                    self.logger.exception("straggler detection: reading the report failed")
            # Every rank holds the same decision, agreed inside the report on the detector's
            # own group: acting on it needs no collective here (never one on the training group).
            decision = Detector.last_decision()
        except Exception:  # noqa: BLE001 - fail open
            self._fail("the straggler report failed")
            return
        if decision is None or decision is seen:
            return
        self.last_decision = decision
        if self.stop_if_detected and decision.act:
            self._stop_training(trainer)
        self.logger.info("Straggler report processing time: %.3f sec.", time.monotonic() - start)

    # -- helpers ------------------------------------------------------------------------------

    def _handle_report(self, report: Any, pl_module: Any) -> bool:
        """Log the report on the reporting rank; return whether a rank is below a threshold."""
        from straggler import Detector

        ev = _common.evaluate_report(report, self.gpu_relative_perf_threshold,
                                     self.gpu_individual_perf_threshold, self._section,
                                     self.logger, self.num_gpu_perf_scores_to_print,
                                     Detector.last_decision())  # made inside this report
        self.last_report = report
        self.last_stragglers = ev.stragglers
        if self.enable_ptl_logging:
            metrics = ev.stats()
            if metrics:
                try:
                    pl_module.log_dict(metrics, logger=True, batch_size=1, rank_zero_only=True)
                except Exception:
                    self.logger.exception("straggler detection: logging the scores failed")
        return ev.found

    def _stop_training(self, trainer: Any) -> None:
        """Every rank: save the last checkpoint if possible, stop, and exit as configured."""
        self.logger.error("Detected stragglers. Terminating training...")
        self.stopped = True
        trainer.should_stop = True
        if self.exit_code is not None:
            _ignore_sigterm_until_exit(trainer, self.logger)
        _save_last_checkpoint(trainer, self.logger)
        from straggler import Detector

        bridge = Detector.ft_bridge()
        if bridge is not None and bridge.straggler_action != "none":
            # FT: the stragglers ask ft_launcher to exclude their node or stop the workload;
            # every rank knows them from the agreed decision (no collective).
            ranks = set(self.last_decision.stragglers) if self.last_decision else set()
            bridge.act_on_stragglers(ranks, exit_code=self.exit_code or 0,
                                     exit_process=self.exit_code is not None)
        if self.exit_code is not None:
            raise SystemExit(self.exit_code)

    def _fail(self, what: str) -> None:
        if not self._failed:
            log.exception("straggler: %s; straggler detection is off on this rank and "
                          "training goes on", what)
        self._failed = True


def _ignore_sigterm_until_exit(trainer: Any, logger: logging.Logger) -> None:
    """Ignore SIGTERM from the stop until the process exits with the stop's status.

    torchrun sends SIGTERM to the ranks still running as soon as one rank exits non-zero; the
    others, still saving or tearing down after the same stop, died by it (torchrun's report read
    ``exitcode: -15`` for one rank in 3 runs of 3, docs/integrations.md). Lightning's teardown
    puts back the SIGTERM handler it found at ``fit`` (usually the default: die), after the
    callback's ``SystemExit`` and before the process ends, so the ignore is also written into
    what it puts back. torchrun's SIGKILL, 30 s after its SIGTERM, still ends a rank that hangs.
    """
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal works only there; Lightning runs fit on the main thread
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    restored = getattr(getattr(trainer, "_signal_connector", None), "_original_handlers", None)
    if isinstance(restored, dict):
        restored[signal.SIGTERM] = signal.SIG_IGN
    else:
        logger.warning("straggler detection: this Lightning keeps no _original_handlers; its "
                       "teardown may put SIGTERM's handler back before the process exits")


def _save_last_checkpoint(trainer: Any, logger: logging.Logger) -> None:
    """``last.ckpt`` through the trainer's checkpoint callback, if it has one with a folder.

    Collective: every rank calls it. A failure is logged; the stop goes on.
    """
    callback = getattr(trainer, "checkpoint_callback", None)
    dirpath = getattr(callback, "dirpath", None)
    if callback is not None and dirpath:
        name = getattr(callback, "CHECKPOINT_NAME_LAST", "last")
        ext = getattr(callback, "FILE_EXTENSION", ".ckpt")
        path = os.path.join(dirpath, f"{name}{ext}")
        try:
            trainer.save_checkpoint(path)
            logger.info("straggler detection: saved checkpoint %s", path)
        except Exception:
            logger.exception("straggler detection: saving %s failed", path)
    elif callback is not None:
        logger.warning("straggler detection: %s has no dirpath; no checkpoint saved",
                       type(callback).__name__)
