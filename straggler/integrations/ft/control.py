"""Acting on stragglers through ``ft_launcher``'s workload control, and agreeing who they are."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection
from typing import Any

import torch

from ..._checks import check_choice
from .. import _common
from .monitor import FTConnection, load_ft_api
from .options import STRAGGLER_ACTIONS

__all__ = ["request_workload_action", "send_note", "agree_on_ranks"]

log = logging.getLogger("straggler")


def request_workload_action(conn: FTConnection, action: str, description: str) -> bool:
    """Ask ``ft_launcher`` to ``"exclude_node"`` or ``"shutdown"`` at its next rendezvous.

    The launcher acts once a worker has exited. Returns False (logged) when FT is off, or this
    NVRx or this launch has no workload-control channel.
    """
    check_choice("action", action, STRAGGLER_ACTIONS[1:])
    if not conn.enabled:
        return False
    api = conn.api
    if api is None:
        with contextlib.suppress(ImportError):
            api = conn.api = load_ft_api()
    if api is None or api.workload_request is None or api.workload_action is None:
        conn.warn_once("no-control", "straggler: this NVRx has no workload control "
                       "(WorkloadControlRequest); cannot ask the launcher to %s", action)
        return False
    member = "ExcludeThisNode" if action == "exclude_node" else "ShutdownWorkload"
    try:
        conn.client.send_workload_control_request(
            api.workload_request(getattr(api.workload_action, member), description))
    except Exception as exc:  # noqa: BLE001 - e.g. no $FT_LAUNCHER_IPC_SOCKET
        log.warning("straggler: asking ft_launcher to %s failed: %s", action, exc)
        return False
    log.error("straggler: asked ft_launcher to %s: %s", action, description)
    return True


def send_note(conn: FTConnection, description: str) -> bool:
    """Hand ``ft_launcher`` a message it logs without acting (``WorkloadAction.Continue``).

    The launcher reads requests at its next rendezvous, so a hang named here appears in its log
    when its own timeout has acted ("Received request from rank=N: ..."). Returns False when FT
    is off or this NVRx has no workload control.
    """
    if not conn.enabled:
        return False
    api = conn.api
    if api is None:
        with contextlib.suppress(ImportError):
            api = conn.api = load_ft_api()
    action = getattr(getattr(api, "workload_action", None), "Continue", None)
    if api is None or api.workload_request is None or action is None:
        return False
    try:
        conn.client.send_workload_control_request(api.workload_request(action, description))
    except Exception as exc:  # noqa: BLE001 - e.g. no $FT_LAUNCHER_IPC_SOCKET
        log.warning("straggler: handing ft_launcher a message failed: %s", exc)
        return False
    return True


def agree_on_ranks(ranks: Collection[int], reduce_max: Callable[[Any], Any]) -> set[int]:
    """The union of every rank's `ranks` (one MAX-reduction of a world-sized flag vector)."""
    world = _common.group_size()
    flags = torch.zeros(world, dtype=torch.float64)
    for r in ranks:
        if 0 <= r < world:
            flags[r] = 1.0
    flags = reduce_max(flags)
    return {i for i, v in enumerate(flags.tolist()) if v > 0}
