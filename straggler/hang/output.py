"""Where a `HangFinding` goes: the log (one block), the report log (a ``hang`` record), the
Prometheus exporter, ``ft_launcher`` (a message it logs), and the optional exit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from .analysis import HANG, HangFinding
from .options import EXIT_CODE

__all__ = ["HangOutput", "hang_record", "HANG_SCHEMA", "HANG_SCHEMA_VERSION"]

log = logging.getLogger("straggler")

HANG_SCHEMA = "straggler.hang"
HANG_SCHEMA_VERSION = 1


def hang_record(finding: HangFinding, time_s: float) -> dict[str, Any]:
    """The report log's ``hang`` record (docs/reportlog.md, "The hang record")."""
    return {"schema": HANG_SCHEMA, "version": HANG_SCHEMA_VERSION, "time_s": round(time_s, 3),
            **finding.to_dict()}


class HangOutput:
    """Sends each finding to the sinks of this detector; `exit` ends a culprit's process.

    Args:
        observers: the detector's `ReportObservers` (report log, Prometheus) or None.
        ft_bridge: the FT bridge (`straggler.integrations.ft.FTBridge`) or None.
        exit_process: how to exit (default ``os._exit``: the training thread is stuck, so
            nothing else would end the process).
    """

    def __init__(self, observers: Any, ft_bridge: Any,
                 exit_process: Callable[[int], Any] = os._exit,
                 clock: Callable[[], float] = time.time) -> None:
        self.observers = observers
        self.ft_bridge = ft_bridge
        self._exit_process = exit_process
        self._clock = clock

    def finding(self, finding: HangFinding) -> None:
        """Log, record and export `finding`; never raises."""
        text = finding.format()
        if finding.kind == HANG:
            log.error("%s", text)
        else:
            log.warning("%s", text)
        try:
            if self.observers is not None:
                self.observers.emit_hang(hang_record(finding, self._clock()))
            bridge = self.ft_bridge
            if finding.kind == HANG and bridge is not None and getattr(bridge, "enabled", False):
                bridge.note(text[:4000])
        except Exception as exc:  # noqa: BLE001 - the log block is out; sinks are best effort
            log.warning("straggler: the hang finding could not be recorded: %s: %s",
                        type(exc).__name__, exc)

    def clear(self) -> None:
        """The job makes progress again: the exporter's hang gauge goes back to 0."""
        if self.observers is not None:
            self.observers.clear_hang()

    def exit(self, description: str) -> None:
        """``hang_action="exit"``: ask FT to leave this node out (when on), then exit."""
        bridge = self.ft_bridge
        try:
            if bridge is not None and getattr(bridge, "enabled", False):
                bridge.request_workload_action(
                    "exclude_node", f"{description} (on {socket.gethostname()})")
        except Exception as exc:  # noqa: BLE001 - exit anyway
            log.warning("straggler: asking ft_launcher to exclude this node failed: %s", exc)
        log.error("straggler: hang_action='exit': exiting with code %d (%s)", EXIT_CODE,
                  description)
        for handler in logging.getLogger().handlers + log.handlers:
            with contextlib.suppress(Exception):  # exiting anyway
                handler.flush()
        sys.stderr.flush()
        self._exit_process(EXIT_CODE)
