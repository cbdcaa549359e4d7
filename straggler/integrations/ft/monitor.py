"""The connection to this rank's NVRx rank monitor: find NVRx, connect, fail open, disconnect."""

from __future__ import annotations

import gc
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..._log import WarnOnce

__all__ = ["FTApi", "FTConnection", "FTUnavailableError", "load_ft_api", "client_generation",
           "connected_clients", "under_ft_launcher", "RANK_MONITOR_SOCKET_ENV",
           "LAUNCHER_SOCKET_ENV"]

log = logging.getLogger("straggler")

RANK_MONITOR_SOCKET_ENV = "FT_RANK_MONITOR_IPC_SOCKET"  # set by ft_launcher for every worker
LAUNCHER_SOCKET_ENV = "FT_LAUNCHER_IPC_SOCKET"          # workload-control channel


class FTUnavailableError(RuntimeError):
    """``ft_sections="required"`` but FT cannot run: no ``ft_launcher``, or NVRx is missing."""


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
                          "pip install '.[ft]' in a straggler checkout "
                          "(or nvidia-resiliency-ext>=0.4.1)"
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


def connected_clients(exclude: Any = None) -> list[Any]:
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
    # Instances reference their class (heap types traverse their type), so this finds them;
    # type() rather than isinstance() never runs a proxy's __class__ property.
    return [o for o in gc.get_referrers(cls) if issubclass(type(o), cls) and o is not exclude
            and getattr(o, "is_initialized", False) is True]


def under_ft_launcher(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process was started by ``ft_launcher`` (its rank-monitor socket exists)."""
    path = (os.environ if environ is None else environ).get(RANK_MONITOR_SOCKET_ENV)
    return bool(path) and os.path.exists(path)  # type: ignore[arg-type]


class FTConnection:
    """This rank's link to its rank monitor; `enabled` while sections may be forwarded.

    `connect()` follows `mode` (``auto``: stay off, logged; ``required``: raise
    `FTUnavailableError`); a failed FT call later turns it off for good (`fail`), so training
    never stops because of FT.
    """

    def __init__(self, mode: str, client: Any = None) -> None:
        self.mode = mode
        self.client = client
        self.api: FTApi | None = None
        self.generation = ""
        self.configured: frozenset[str] = frozenset()
        self.enabled = False         # sections are forwarded
        self.owns_connection = False  # False for a client given already connected (shared)
        self.closed = False
        # `warn_once(key, msg, *args)`: a warning logged the first time `key` is seen.
        self.warn_once = WarnOnce(log)

    def connect(self) -> bool:
        """Connect (or adopt a connected client) and read the configured sections; True if on."""
        socket_path = os.environ.get(RANK_MONITOR_SOCKET_ENV)
        if not under_ft_launcher():
            why = (f"not started by ft_launcher (${RANK_MONITOR_SOCKET_ENV} is "
                   + ("not set)" if not socket_path else f"{socket_path!r}, which does not exist)"))
            return self.unavailable(why, level=logging.INFO)
        client = self.client
        if client is None:
            others = connected_clients()
            if others:
                return self.unavailable(
                    f"another RankMonitorClient is already connected in this process ({len(others)}"
                    ", e.g. Megatron's or NVRx's FT integration); leave FT sections to it, or "
                    "pass it as ft_options={'client': client} to share it")
            try:
                self.api = load_ft_api()
            except ImportError as exc:
                return self.unavailable(str(exc), exc)
            try:
                client = self.api.client_cls()
            except Exception as exc:  # noqa: BLE001 - fail open in auto mode
                return self.unavailable(f"RankMonitorClient() failed: {exc}", exc)
        shared = bool(getattr(client, "is_initialized", False))
        try:
            if not shared:
                client.init_workload_monitoring()  # no arguments: the 0.4.1 and 0.7 signature
            cfg_sections = dict(client.cfg.rank_section_timeouts)
        except Exception as exc:  # noqa: BLE001 - e.g. monitor gone, RANK unknown
            return self.unavailable(f"connecting to the rank monitor at {socket_path} failed: "
                                    f"{type(exc).__name__}: {exc}", exc)
        self.client = client
        self.owns_connection = not shared
        self.generation = client_generation(client)
        self.configured = frozenset(cfg_sections)
        self.enabled = True
        return True

    def unavailable(self, why: str, exc: BaseException | None = None,
                    level: int = logging.WARNING) -> bool:
        """FT cannot run: raise in ``required`` mode, else log at `level`; returns False."""
        if self.mode == "required":
            raise FTUnavailableError(f"ft_sections='required' but FT sections cannot run: {why}. "
                                     "Start the job with ft_launcher "
                                     "(--ft-rank-section-timeouts=setup:600,step:180,"
                                     "checkpointing:420) and install nvidia-resiliency-ext, or "
                                     "use ft_sections='auto'") from exc
        log.log(level, "straggler: FT sections off: %s", why)
        return False

    def disconnect(self) -> None:
        """Stop forwarding; end the monitoring this object started (never a shared client's)."""
        self.enabled = False
        if self.client is not None and self.owns_connection:
            self.owns_connection = False
            try:
                self.client.shutdown_workload_monitoring()
            except Exception as exc:  # noqa: BLE001 - the monitor may be gone already
                log.debug("straggler: FT disconnect failed: %s", exc)

    def fail(self, what: str, exc: BaseException) -> None:
        """An FT call failed: log once, stop forwarding sections, keep training."""
        if self.enabled:
            log.error("straggler: FT %s failed, FT sections are off for the rest of this run "
                      "(training continues): %s: %s", what, type(exc).__name__, exc)
        self.enabled = False

