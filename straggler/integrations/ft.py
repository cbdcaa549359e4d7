"""NVRx fault-tolerance (FT) sections, driven from the places a training loop already marks.

`ft_launcher` (from ``nvidia-resiliency-ext``) starts one rank monitor per rank; a rank that
stays in a section longer than the section's timeout is killed and the job restarted. The
`FTBridge` here opens and closes those sections for us:

- ``step`` around our per-iteration detection section: opened *before* our timers start and
  closed *after* they stop (a `Detector` section hook), so FT's IPC cost stays out of our
  timings; the first ``warmup_iters`` steps stay out of it, as in Megatron-Bridge;
- ``setup`` from `setup()` (at `Detector.initialize`) to the first step;
- ``checkpointing`` around saves (`checkpointing()`);
- Megatron-Bridge's hook names for hand-written loops (`on_training_step_start/end`, ...).

Sections are reference-counted (nested or repeated use opens FT's section once) and closed one
by one: ``RankMonitorClient.end_all_sections()`` does nothing in NVRx 0.5 and later. Only the
names the launcher configured (``--ft-rank-section-timeouts``) are forwarded: NVRx 0.4.1 raises
on any other name and 0.5+ ignores it; we log once either way.

Timeouts are learned at our report points (a collective on every rank) with Megatron-Bridge's
rules: ``step`` after 16 iterations, ``setup`` only after a persistent checkpoint load,
``checkpointing`` only after a synchronous save, out-of-section only at the clean end of a run
that did all of that. They are saved atomically to ``ft_state.json`` and loaded at the next
start. NVRx is imported lazily; without ``ft_launcher`` everything here is a no-op.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import math
import os
import random
import signal
import socket
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Collection, Dict, Iterator, List, Mapping, Optional, Tuple

from .._checks import check_bool, check_int, check_seconds

__all__ = [
    "FTBridge", "FTUnavailableError", "FT_SECTIONS_MODES", "STRAGGLER_ACTIONS", "FAULT_TYPES",
    "SETUP", "STEP", "CHECKPOINTING", "STATE_FILE_NAME", "create_bridge", "under_ft_launcher",
    "load_ft_api", "client_generation", "write_finished_flag", "finished_flag_path",
    "read_state_file", "write_state_file", "connected_clients",
]

log = logging.getLogger("straggler")

FT_SECTIONS_MODES = ("auto", "required", "off")
STRAGGLER_ACTIONS = ("none", "exclude_node", "shutdown")
FAULT_TYPES = ("rank_hung", "rank_killed", "random")

SETUP, STEP, CHECKPOINTING = "setup", "step", "checkpointing"
RANK_MONITOR_SOCKET_ENV = "FT_RANK_MONITOR_IPC_SOCKET"  # set by ft_launcher for every worker
LAUNCHER_SOCKET_ENV = "FT_LAUNCHER_IPC_SOCKET"          # workload-control channel
FINISHED_FLAG_ENV = "FAULT_TOL_FINISHED_FLAG_FILE"      # job-script convention (auto-resume)
STATE_PATH_ENV = "STRAGGLER_FT_STATE"                   # default for `state_path`
STATE_FILE_NAME = "ft_state.json"

# Megatron-Bridge's constants (src/megatron/bridge/training/fault_tolerance.py).
DEFAULT_WARMUP_ITERS = 1
MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE = 16
_EMA_ALPHA = 0.5  # NVRx TimeoutsCalc merges a new timeout with a calculated one: 0.5*old+0.5*new


class FTUnavailableError(RuntimeError):
    """``ft_sections="required"`` but FT cannot run: no ``ft_launcher``, or NVRx is missing."""


# -- what the installed NVRx offers ------------------------------------------------------------
class FTApi:
    """The pieces of ``nvidia_resiliency_ext.fault_tolerance`` we use, feature-detected."""

    def __init__(self, module: Any, version: str) -> None:
        self.version = version
        self.client_cls = module.RankMonitorClient
        self.client_error = getattr(module, "RankMonitorClientError", Exception)
        # Workload control (0.4.1 and later has it); a build without it lacks both names.
        self.workload_request = getattr(module, "WorkloadControlRequest", None)
        self.workload_action = getattr(module, "WorkloadAction", None)


def load_ft_api() -> FTApi:
    """Import NVRx's FT package (raises ImportError with an install hint when it is missing)."""
    try:
        import nvidia_resiliency_ext.fault_tolerance as module
    except ImportError as exc:
        raise ImportError("FT sections need nvidia-resiliency-ext: "
                          "pip install '.[ft]' in a straggler checkout (or nvidia-resiliency-ext>=0.4.1)"
                          f" ({exc})") from exc
    try:
        from importlib.metadata import version

        ver = version("nvidia-resiliency-ext")
    except Exception:  # noqa: BLE001 - only for log lines
        ver = "unknown"
    return FTApi(module, ver)


def client_generation(client: Any) -> str:
    """``"0.5+"`` when the client skips names FT does not monitor itself, else ``"0.4"``.

    The 0.5+ client checks ``_should_monitor_section`` before sending, has a broken
    ``end_all_sections()`` and answers sections fire-and-forget; 0.4.1 raises
    ``RankMonitorClientError("Unknown section ...")`` for names outside the config.
    """
    return "0.5+" if callable(getattr(client, "_should_monitor_section", None)) else "0.4"


def connected_clients(exclude: Any = None) -> List[Any]:
    """NVRx ``RankMonitorClient`` objects of this process that are connected to a monitor.

    A rank monitor serves one connection at a time: a second client waits in its handshake for
    up to 180 s, and when the monitor gives up it drops the *first* connection's state. So we
    never connect while another client (Megatron's or NVRx's own FT integration) is connected.
    Empty without a scan when NVRx's client module was never imported.
    """
    module = sys.modules.get("nvidia_resiliency_ext.fault_tolerance.rank_monitor_client")
    cls = getattr(module, "RankMonitorClient", None)
    if cls is None:
        return []
    import gc

    # Instances reference their class (heap types traverse their type), so this finds them;
    # type() rather than isinstance() never runs a proxy's __class__ property.
    return [o for o in gc.get_referrers(cls) if issubclass(type(o), cls) and o is not exclude
            and getattr(o, "is_initialized", False) is True]


def under_ft_launcher(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether this process was started by ``ft_launcher`` (its rank-monitor socket exists)."""
    path = (os.environ if environ is None else environ).get(RANK_MONITOR_SOCKET_ENV)
    return bool(path) and os.path.exists(path)


# -- state file -----------------------------------------------------------------------------------
def _state_file(state_path: Any) -> Optional[str]:
    """`state_path` (a ``.json`` file or a directory) or ``$STRAGGLER_FT_STATE`` as a file path."""
    raw = state_path if state_path is not None else os.environ.get(STATE_PATH_ENV) or None
    if raw is None:
        return None
    path = os.fspath(raw)
    return path if path.endswith(".json") else os.path.join(path, STATE_FILE_NAME)


def write_state_file(path: str, state: Mapping[str, Any]) -> None:
    """Write `state` as JSON atomically: a temporary file in the same directory, fsync, rename."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ft_state.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_state_file(path: str) -> Optional[Dict[str, Any]]:
    """The saved FT state, or None when the file is absent or unreadable (logged)."""
    try:
        with open(path) as f:
            state = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("straggler: ignoring the FT state file %s: %s", path, exc)
        return None
    if not isinstance(state, dict):
        log.warning("straggler: ignoring the FT state file %s: not a JSON object", path)
        return None
    return state


def _timeout_ok(value: Any) -> bool:
    return value is None or (not isinstance(value, bool) and isinstance(value, (int, float))
                             and math.isfinite(value) and value > 0)


def _reconcile_section_state(saved: Mapping[str, Any], cfg_sections: Mapping[str, Any],
                             cfg_oos: Any) -> Optional[Dict[str, Any]]:
    """Saved section timeouts fitted to the sections the launcher configures now.

    The rank monitor replaces its timeout table wholesale, and NVRx 0.4.1's monitor fails on a
    configured section missing from it; so every configured name gets a value: the saved one
    when it was calculated, the launcher's otherwise. Names no longer configured are dropped.
    """
    section = saved.get("section")
    calculated = saved.get("calculated_sections", [])
    if not isinstance(section, Mapping) or not isinstance(calculated, (list, tuple, set)):
        return None
    calc = [s for s in calculated if s in cfg_sections and s in section
            and _timeout_ok(section[s])]
    merged = {name: (section[name] if name in calc else cfg_sections[name])
              for name in cfg_sections}
    oos_calc = bool(saved.get("is_out_of_section_calculated")) and \
        _timeout_ok(saved.get("out_of_section"))
    if not calc and not oos_calc:
        return None
    return {"section": merged, "out_of_section": saved["out_of_section"] if oos_calc else cfg_oos,
            "calculated_sections": sorted(calc), "is_out_of_section_calculated": oos_calc}


# -- finished flag (auto-resume) ------------------------------------------------------------------
def finished_flag_path(required: bool = False) -> Optional[str]:
    """The file named by ``$FAULT_TOL_FINISHED_FLAG_FILE``; `required`: RuntimeError if unset."""
    path = os.environ.get(FINISHED_FLAG_ENV) or None
    if path is None and required:
        raise RuntimeError(f"'{FINISHED_FLAG_ENV}' env variable is not set. Was this job "
                           "launched with FT launcher?")
    return path


def _global_rank() -> int:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # noqa: BLE001 - fall back to the launcher's environment
        pass
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def _world_size() -> int:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_world_size()
    except Exception:  # noqa: BLE001
        pass
    return 1


def write_finished_flag(path: Optional[str] = None) -> Optional[str]:
    """On global rank 0, create the auto-resume flag file (``$FAULT_TOL_FINISHED_FLAG_FILE``).

    A job script that re-submits ``ft_launcher`` until training is done stops when it exists.
    Returns the path written, or None (another rank, or no path known).
    """
    path = path or finished_flag_path()
    if path is None or _global_rank() != 0:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "a"):
        os.utime(path, None)
    log.info("straggler: training finished; wrote the FT finished flag %s", path)
    return path


# -- timeouts calculation on our own collective ---------------------------------------------------
_CALC_FIELDS = ("initial_max_time", "subsequent_max_time", "out_of_section_max_time",
                "section_to_max_time")


def _default_reduce_max(t: Any) -> Any:
    """MAX over the default process group, on the device NVRx's TimeoutsCalc would use."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t
    backend = str(dist.get_backend())
    device = torch.device("cuda") if backend == "nccl" else torch.device("cpu")
    buf = t.to(device)
    dist.all_reduce(buf, op=dist.ReduceOp.MAX)
    return buf.cpu()


class _CalcSync:
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
        import torch

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
        import torch

        self.reduce_max(torch.full((self.width,), -1.0, dtype=torch.float64))


# -- the bridge -----------------------------------------------------------------------------------
def _check_choice(name: str, value: Any, choices: Tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"`{name}={value!r}` must be one of {list(choices)}")
    return value


class FTBridge:
    """Drives NVRx's rank monitor from our sections; every method is a no-op while FT is off.

    Parameters (all keyword-only but `mode`):

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
    """

    def __init__(self, mode: str = "auto", *, step_section: Optional[str] = None,
                 state_path: Any = None, calc_timeouts: bool = True,
                 timeouts_from_stats: bool = False, warmup_iters: Optional[int] = None,
                 straggler_action: str = "none", client: Any = None,
                 reduce_max: Optional[Callable[[Any], Any]] = None) -> None:
        self.mode = _check_choice("ft_sections", mode, FT_SECTIONS_MODES)
        if step_section is not None and (not isinstance(step_section, str) or not step_section):
            raise ValueError(f"`step_section={step_section!r}` must be a non-empty string or None")
        check_bool("calc_timeouts", calc_timeouts)
        check_bool("timeouts_from_stats", timeouts_from_stats)
        if warmup_iters is not None:
            check_int("warmup_iters", warmup_iters, 0)
        if state_path is not None and not isinstance(state_path, (str, os.PathLike)):
            raise ValueError(f"`state_path={state_path!r}` must be a path or None")
        if reduce_max is not None and not callable(reduce_max):
            raise ValueError(f"`reduce_max={reduce_max!r}` must be callable or None")
        self.step_section = step_section
        self.state_file = _state_file(state_path)
        self.calc_timeouts = calc_timeouts
        self.timeouts_from_stats = timeouts_from_stats
        self.warmup_iters = warmup_iters
        self.straggler_action = _check_choice("straggler_action", straggler_action,
                                              STRAGGLER_ACTIONS)
        self.client = client
        self._reduce_max = reduce_max or _default_reduce_max
        self.api: Optional[FTApi] = None
        self.generation = ""
        self.configured: frozenset = frozenset()
        self.enabled = False        # sections are forwarded
        self._participating = False  # takes part in the timeout collectives (until shutdown)
        self._sync: Optional[_CalcSync] = None
        self._owns_connection = False  # False for a client given already connected (shared)
        self._closed = False
        self._open: Dict[str, int] = {}
        self._warned: set = set()
        self._depth = 0              # our (detector) sections currently entered
        self._step_stack: List[bool] = []
        self._eval_stack: List[bool] = []
        self.train_iters = 0
        self.eval_iter = 0
        self.checkpoints = 0
        self.async_checkpointing = False
        self.persistent_checkpoint_loaded = False
        self._step_open_t = 0.0
        self._window_step_max_s = -1.0

    # -- lifetime ---------------------------------------------------------------------------------
    def setup(self) -> bool:
        """Connect to this rank's monitor, load saved timeouts, open ``setup``; True when on.

        ``auto`` stays off (logged) without ``ft_launcher`` or NVRx; ``required`` raises
        `FTUnavailableError` saying which is missing.
        """
        if self.mode == "off" or self.enabled or self._closed:
            return self.enabled
        socket_path = os.environ.get(RANK_MONITOR_SOCKET_ENV)
        if not under_ft_launcher():
            why = (f"not started by ft_launcher (${RANK_MONITOR_SOCKET_ENV} is "
                   + ("not set)" if not socket_path else f"{socket_path!r}, which does not exist)"))
            return self._unavailable(why, level=logging.INFO)
        client = self.client
        if client is None:
            others = connected_clients()
            if others:
                return self._unavailable(
                    f"another RankMonitorClient is already connected in this process ({len(others)}"
                    ", e.g. Megatron's or NVRx's FT integration); leave FT sections to it, or "
                    "pass it as ft_options={'client': client} to share it")
            try:
                self.api = load_ft_api()
            except ImportError as exc:
                return self._unavailable(str(exc), exc)
            try:
                client = self.api.client_cls()
            except Exception as exc:  # noqa: BLE001 - fail open in auto mode
                return self._unavailable(f"RankMonitorClient() failed: {exc}", exc)
        shared = bool(getattr(client, "is_initialized", False))
        try:
            if not shared:
                client.init_workload_monitoring()  # no arguments: the 0.4.1 and 0.7 signature
            cfg_sections = dict(client.cfg.rank_section_timeouts)
        except Exception as exc:  # noqa: BLE001 - e.g. monitor gone, RANK unknown
            return self._unavailable(f"connecting to the rank monitor at {socket_path} failed: "
                                     f"{type(exc).__name__}: {exc}", exc)
        self.client = client
        self._owns_connection = not shared
        self.generation = client_generation(client)
        self.configured = frozenset(cfg_sections)
        if self.warmup_iters is None:
            self.warmup_iters = int(getattr(client.cfg, "num_warmup_iterations",
                                            DEFAULT_WARMUP_ITERS) or 0)
        self._install_sync()
        self._participating = True
        self.enabled = True
        if STEP not in self.configured:
            log.warning("straggler: FT has no 'step' section configured (add step:<seconds> to "
                        "--ft-rank-section-timeouts); steps are covered only by the "
                        "out-of-section timeout")
        self._load_saved_timeouts()
        if SETUP in self.configured:
            self.open_section(SETUP)
        log.info("straggler: FT sections on (NVRx %s, %s API): monitored %s, timeouts %s",
                 self.api.version if self.api else "client given", self.generation,
                 sorted(self.configured), self.current_timeouts())
        return self.enabled

    def _unavailable(self, why: str, exc: Optional[BaseException] = None,
                     level: int = logging.WARNING) -> bool:
        if self.mode == "required":
            raise FTUnavailableError(f"ft_sections='required' but FT sections cannot run: {why}. "
                                     "Start the job with ft_launcher "
                                     "(--ft-rank-section-timeouts=setup:600,step:180,"
                                     "checkpointing:420) and install nvidia-resiliency-ext, or "
                                     "use ft_sections='auto'") from exc
        log.log(level, "straggler: FT sections off: %s", why)
        return False

    def _install_sync(self) -> None:
        calc = getattr(self.client, "timeouts_calc", None)
        if not self._owns_connection or calc is None \
                or not all(hasattr(calc, f) for f in _CALC_FIELDS):
            self._sync = None  # a shared client, or an NVRx we do not know: keep its reduction
            return
        self._sync = _CalcSync(calc, self._reduce_max)
        calc.synchronize_all = self._sync

    def shutdown(self, clean: bool = True) -> None:
        """Close open sections one by one; on a clean end, learn timeouts once more; disconnect.

        With `clean` (and ``calc_timeouts``) this is a collective: call it on every rank at the
        end of training. After a failure use `abort()`.
        """
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            for name in reversed(list(self._open)):
                self._open[name] = 1
                self.close_section(name)
        if clean and self._participating and self.calc_timeouts:
            self._learn(is_closing=True)
        self._participating = False
        self._disconnect()

    def abort(self) -> None:
        """Disconnect without the final timeout update (no collective): for failure paths."""
        self.shutdown(clean=False)

    def close(self) -> None:
        """`shutdown()` (called by `Detector.shutdown`)."""
        self.shutdown(clean=True)

    def _disconnect(self) -> None:
        self.enabled = False
        if self.client is not None and self._owns_connection:
            self._owns_connection = False
            try:
                self.client.shutdown_workload_monitoring()
            except Exception as exc:  # noqa: BLE001 - the monitor may be gone already
                log.debug("straggler: FT disconnect failed: %s", exc)

    def _fail(self, what: str, exc: BaseException) -> None:
        """An FT call failed: log once, stop forwarding sections, keep training."""
        if self.enabled:
            log.error("straggler: FT %s failed, FT sections are off for the rest of this run "
                      "(training continues): %s: %s", what, type(exc).__name__, exc)
        self.enabled = False

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning(msg, *args)

    # -- sections -------------------------------------------------------------------------------
    def open_section(self, name: str) -> None:
        """Open FT section `name` (reference-counted: only the first open reaches FT)."""
        if not self.enabled:
            return
        n = self._open.get(name, 0)
        self._open[name] = n + 1
        if n:
            return
        if name not in self.configured:
            self._unknown(name)
            return
        try:
            self.client.start_section(name)
        except Exception as exc:  # noqa: BLE001 - fail open
            self._fail(f"start_section({name!r})", exc)
            return
        if name == STEP:
            self._step_open_t = time.monotonic()

    def close_section(self, name: str) -> None:
        """Close FT section `name` (the last close of a nested use reaches FT)."""
        if not self.enabled:
            return
        n = self._open.get(name, 0)
        if n == 0:
            return  # unbalanced close: ignore rather than make FT raise
        if n > 1:
            self._open[name] = n - 1
            return
        del self._open[name]
        if name not in self.configured:
            return
        if name == STEP:
            self._window_step_max_s = max(self._window_step_max_s,
                                          time.monotonic() - self._step_open_t)
        try:
            self.client.end_section(name)
        except Exception as exc:  # noqa: BLE001 - fail open
            self._fail(f"end_section({name!r})", exc)

    def _unknown(self, name: str) -> None:
        if self.generation == "0.4":
            why = "NVRx 0.4 raises on names outside rank_section_timeouts, so it is not sent"
        else:
            why = "NVRx 0.5+ ignores names outside rank_section_timeouts"
        self._warn_once(f"unknown:{name}", "straggler: FT section %r is not configured "
                        "(--ft-rank-section-timeouts has %s); %s", name,
                        sorted(self.configured), why)

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        """``with bridge.section(name):`` opens and closes FT section `name`."""
        self.open_section(name)
        try:
            yield
        finally:
            self.close_section(name)

    def open_sections(self) -> Dict[str, int]:
        """FT sections open now, with their nesting counts."""
        return dict(self._open)

    # -- the detector's section hook ------------------------------------------------------------
    def on_section_enter(self, name: str) -> None:
        """Section hook, called before our timers start: our step section opens FT ``step``."""
        depth, self._depth = self._depth, self._depth + 1
        if not self.enabled:
            return
        if self.step_section is None and depth == 0:
            self.step_section = name
            log.info("straggler: FT 'step' follows detection section %r (set "
                     "ft_options={'step_section': ...} to choose another)", name)
        if name == self.step_section:
            self.on_training_step_start()

    def on_section_exit(self, name: str) -> None:
        """Section hook, called after our timers stop."""
        self._depth = max(0, self._depth - 1)
        if name == self.step_section and self.enabled:
            self.on_training_step_end()

    # -- Megatron-Bridge hooks ------------------------------------------------------------------
    def _close_setup(self) -> None:
        if SETUP in self._open:
            self._open[SETUP] = 1
            self.close_section(SETUP)

    def _start_step(self, stack: List[bool], done: int) -> None:
        """``setup`` ends; ``step`` opens once `done` steps passed the warm-up (nesting kept)."""
        self._close_setup()
        opens = done >= self.warmup_iters
        stack.append(opens)
        if opens:
            self.open_section(STEP)

    def _end_step(self, stack: List[bool]) -> bool:
        """Close what the matching `_start_step` opened; True when the outermost step ended."""
        if not stack:
            return False
        if stack.pop():
            self.close_section(STEP)
        return not stack

    def on_training_step_start(self) -> None:
        """Before a training step: ``setup`` ends; ``step`` opens once warm-up is over."""
        if not self.enabled:
            return
        self.eval_iter = 0
        self._start_step(self._step_stack, self.train_iters)

    def on_training_step_end(self) -> None:
        """After a training step: ``step`` closes; the step counts."""
        if self._end_step(self._step_stack):
            self.train_iters += 1

    def on_eval_step_start(self) -> None:
        """Before an evaluation step (``step`` too, after the evaluation's own warm-up)."""
        if self.enabled:
            self._start_step(self._eval_stack, self.eval_iter)

    def on_eval_step_end(self) -> None:
        """After an evaluation step."""
        if self._end_step(self._eval_stack):
            self.eval_iter += 1

    def on_checkpointing_start(self) -> None:
        """Before saving a checkpoint (or finalizing an asynchronous save)."""
        self.open_section(CHECKPOINTING)

    def on_checkpointing_end(self, is_async_finalization: bool = False) -> None:
        """After a save. Asynchronous saves vary too much for a learned timeout (Megatron)."""
        if not self.enabled:
            return
        self.close_section(CHECKPOINTING)
        if is_async_finalization:
            self.async_checkpointing = True
        else:
            self.checkpoints += 1

    @contextlib.contextmanager
    def checkpointing(self, is_async_finalization: bool = False) -> Iterator[None]:
        """``with bridge.checkpointing():`` around a checkpoint save."""
        self.on_checkpointing_start()
        try:
            yield
        finally:
            self.on_checkpointing_end(is_async_finalization)

    def on_checkpoint_loaded(self, is_local_chkpt: bool = False) -> None:
        """After loading a checkpoint; only a persistent load makes ``setup`` learnable."""
        if self.enabled:
            self.persistent_checkpoint_loaded = not is_local_chkpt

    # -- timeouts -------------------------------------------------------------------------------
    def current_timeouts(self) -> Dict[str, Optional[float]]:
        """The timeouts in force: one per monitored section, plus ``out_of_section``."""
        st = getattr(self.client, "section_timeouts", None) if self.client is not None else None
        if st is None:
            return {}
        out = dict(st.section)
        out["out_of_section"] = st.out_of_section
        return out

    def _selection(self, is_closing: bool) -> Tuple[List[str], bool]:
        """Megatron-Bridge's rules for which timeouts may be learned now."""
        sections = []
        if SETUP in self.configured and self.persistent_checkpoint_loaded:
            sections.append(SETUP)
        step_ready = STEP in self.configured and \
            self.train_iters >= MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE
        if step_ready and not self.timeouts_from_stats:
            sections.append(STEP)
        if CHECKPOINTING in self.configured and self.checkpoints > 0 and \
                not self.async_checkpointing:
            sections.append(CHECKPOINTING)
        oos = (is_closing and self.checkpoints > 0 and step_ready
               and self.persistent_checkpoint_loaded and SETUP in self.configured)
        return sections, oos

    def on_report(self) -> bool:
        """At a report point (collective: every rank, same iteration): learn timeouts.

        Returns True when new timeouts were set on this rank.
        """
        if not (self._participating and self.calc_timeouts):
            return False
        return self._learn(is_closing=False)

    def _learn(self, is_closing: bool) -> bool:
        """One NVRx calculation (and one statistics reduction) on every rank, in the same order."""
        changed = False
        sections, oos = self._selection(is_closing)
        try:
            if not self.enabled:  # FT broke on this rank: keep the collectives matched
                if self._sync is not None:
                    self._sync.dummy()
                if self.timeouts_from_stats:
                    self._reduce_stats()
                return False
            if sections or oos:
                changed = bool(self.client.calculate_and_set_section_timeouts(
                    selected_sections=sections, calc_out_of_section=oos, skip_if_not_ready=True))
            elif self._sync is not None:  # nothing to learn here, but peers may: take part
                self._sync()
            elif _world_size() > 1:  # a shared client: NVRx's own reduction
                self.client.timeouts_calc.synchronize_all()
            if self.timeouts_from_stats:
                changed = self._push_step_from_stats() or changed
        except Exception as exc:  # noqa: BLE001 - fail open; stop learning, keep sections
            log.error("straggler: learning FT timeouts failed; timeouts stay as they are: "
                      "%s: %s", type(exc).__name__, exc)
            self._participating = False
            return False
        if changed:
            log.info("straggler: FT timeouts updated: %s", self.current_timeouts())
            self._save_timeouts()
        return changed

    def _reduce_stats(self) -> float:
        import torch

        local, self._window_step_max_s = self._window_step_max_s, -1.0
        return float(self._reduce_max(torch.tensor([local], dtype=torch.float64))[0])

    def _push_step_from_stats(self) -> bool:
        longest_s = self._reduce_stats()
        if longest_s <= 0 or self.train_iters < MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE:
            return False
        st = self.client.section_timeouts
        new = float(self.client.cfg.safety_factor) * longest_s
        calculated = set(st.calculated_sections)
        if STEP in calculated and st.section.get(STEP):
            new = _EMA_ALPHA * st.section[STEP] + (1.0 - _EMA_ALPHA) * new
        section = dict(st.section)  # every configured name: the monitor replaces its table
        section[STEP] = new
        self.client.load_state_dict({"current_timeouts": {"section": {
            "section": section, "out_of_section": st.out_of_section,
            "calculated_sections": sorted(calculated | {STEP}),
            "is_out_of_section_calculated": bool(st.is_out_of_section_calculated)}}})
        return True

    def state_dict(self) -> Dict[str, Any]:
        """What ``ft_state.json`` holds: NVRx's ``current_timeouts`` (calculated ones only)."""
        if not self.enabled:
            return {}
        return {"current_timeouts": dict(self.client.state_dict().get("current_timeouts", {})),
                "saved_by": "straggler"}

    def _save_timeouts(self) -> None:
        if self.state_file is None or _global_rank() != 0:
            return
        try:
            write_state_file(self.state_file, self.state_dict())
            log.info("straggler: FT timeouts saved to %s", self.state_file)
        except Exception as exc:  # noqa: BLE001 - a full disk must not stop training
            log.warning("straggler: could not save FT timeouts to %s: %s", self.state_file, exc)

    def _load_saved_timeouts(self) -> None:
        if self.state_file is None:
            return
        state = read_state_file(self.state_file)
        saved = (state or {}).get("current_timeouts", {})
        if not isinstance(saved, Mapping) or not isinstance(saved.get("section"), Mapping):
            return
        cfg = self.client.cfg
        section = _reconcile_section_state(saved["section"], dict(cfg.rank_section_timeouts),
                                           cfg.rank_out_of_section_timeout)
        if section is None:
            return
        try:
            self.client.load_state_dict({"current_timeouts": {"section": section}})
        except Exception as exc:  # noqa: BLE001 - fail open
            self._fail("load_state_dict", exc)
            return
        log.info("straggler: FT timeouts loaded from %s: %s", self.state_file,
                 self.current_timeouts())

    # -- acting on stragglers --------------------------------------------------------------------
    def request_workload_action(self, action: str, description: str) -> bool:
        """Ask ``ft_launcher`` to ``"exclude_node"`` or ``"shutdown"`` at its next rendezvous.

        The launcher acts once a worker has exited. Returns False (logged) when this NVRx or this
        launch has no workload-control channel.
        """
        _check_choice("action", action, STRAGGLER_ACTIONS[1:])
        if not self.enabled:
            return False
        api = self.api
        if api is None:
            with contextlib.suppress(ImportError):
                api = self.api = load_ft_api()
        if api is None or api.workload_request is None or api.workload_action is None:
            self._warn_once("no-control", "straggler: this NVRx has no workload control "
                            "(WorkloadControlRequest); cannot ask the launcher to %s", action)
            return False
        member = "ExcludeThisNode" if action == "exclude_node" else "ShutdownWorkload"
        try:
            self.client.send_workload_control_request(
                api.workload_request(getattr(api.workload_action, member), description))
        except Exception as exc:  # noqa: BLE001 - e.g. no $FT_LAUNCHER_IPC_SOCKET
            log.warning("straggler: asking ft_launcher to %s failed: %s", action, exc)
            return False
        log.error("straggler: asked ft_launcher to %s: %s", action, description)
        return True

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
                ranks = self._agree_on_ranks(ranks)
            except Exception as exc:  # noqa: BLE001 - fail open: act on what this rank knows
                log.warning("straggler: agreeing on the stragglers failed (%s: %s); acting on "
                            "this rank's own list", type(exc).__name__, exc)
        if not ranks or not self.enabled:
            return False
        me = _global_rank()
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

    def _agree_on_ranks(self, ranks: Collection[int]) -> set:
        """The union of every rank's `ranks` (one MAX-reduction of a world-sized flag vector)."""
        import torch

        world = _world_size()
        flags = torch.zeros(world, dtype=torch.float64)
        for r in ranks:
            if 0 <= r < world:
                flags[r] = 1.0
        flags = self._reduce_max(flags)
        return {i for i, v in enumerate(flags.tolist()) if v > 0}

    # -- fault drills --------------------------------------------------------------------------
    def maybe_setup_simulated_fault(self, simulate_fault: bool = True, fault_type: str = "random",
                                    fault_rank: Optional[int] = None,
                                    base_delay_s: float = 0.0) -> Optional[int]:
        """A drill: after a delay one rank hangs (SIGSTOP) or dies (SIGKILL); returns its rank.

        As Megatron-Bridge: the rank is random unless given (chosen on rank 0 and broadcast, so
        a collective when torch.distributed is up), ``random`` picks hung or killed, and the
        delay is `base_delay_s` plus up to 20 %. No-op (None) when FT is off.
        """
        _check_choice("fault_type", fault_type, FAULT_TYPES)
        check_seconds("base_delay_s", base_delay_s, allow_zero=True)
        if fault_rank is not None:
            check_int("fault_rank", fault_rank, 0)
        if not simulate_fault or not self.enabled:
            return None
        import torch.distributed as dist

        dist_up = dist.is_available() and dist.is_initialized()
        world = dist.get_world_size() if dist_up else 1
        if fault_rank is not None and fault_rank >= world:
            raise ValueError(f"`fault_rank={fault_rank!r}` must be below the world size {world}")
        if fault_rank is None:
            choice = [random.randrange(world)]
            if dist_up and world > 1:
                dist.broadcast_object_list(choice, src=0)
            fault_rank = int(choice[0])
        if _global_rank() == fault_rank:
            kind = fault_type if fault_type != "random" else \
                random.choice(("rank_hung", "rank_killed"))
            delay = base_delay_s + 0.2 * random.random() * base_delay_s
            threading.Thread(target=_inject_fault, args=(kind, fault_rank, delay),
                             name="straggler-ft-fault", daemon=True).start()
        return fault_rank


def _inject_fault(kind: str, rank: int, delay_s: float) -> None:
    time.sleep(delay_s)
    banner = f"\n####\nFT: Simulating fault: {kind}; rank to fail: {rank}\n####\n"
    print(banner, file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSTOP if kind == "rank_hung" else signal.SIGKILL)


# -- the detector's factory -----------------------------------------------------------------------
_BRIDGE_OPTIONS = tuple(p for p in inspect.signature(FTBridge.__init__).parameters
                        if p not in ("self", "mode"))


def create_bridge(mode: str, **options: Any) -> Optional[FTBridge]:
    """An `FTBridge` set up for `mode`, or None when FT is off (``off``, or ``auto`` without it).

    `options` are `FTBridge`'s keyword parameters; ``required`` raises `FTUnavailableError`.
    """
    unknown = sorted(set(options) - set(_BRIDGE_OPTIONS))
    if unknown:
        raise ValueError(f"`ft_options={options!r}` has unknown keys {unknown}; "
                         f"known: {list(_BRIDGE_OPTIONS)}")
    bridge = FTBridge(mode, **options)
    return bridge if bridge.setup() else None
