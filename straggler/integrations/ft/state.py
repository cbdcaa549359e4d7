"""What outlives a restart: learned timeouts in ``ft_state.json``, and the finished flag."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import tempfile
from collections.abc import Mapping
from typing import Any

from ... import _env
from .. import _common

__all__ = ["STATE_FILE_NAME", "STATE_PATH_ENV", "FINISHED_FLAG_ENV", "state_file_path",
           "write_state_file", "read_state_file", "reconcile_section_state",
           "finished_flag_path", "write_finished_flag"]

log = logging.getLogger("straggler")

FINISHED_FLAG_ENV = "FAULT_TOL_FINISHED_FLAG_FILE"      # job-script convention (auto-resume)
STATE_PATH_ENV = _env.FT_STATE.name                     # default for `state_path`
STATE_FILE_NAME = "ft_state.json"


def state_file_path(state_path: Any) -> str | None:
    """`state_path` (a ``.json`` file or a directory) or ``$STRAGGLER_FT_STATE`` as a file path."""
    raw = state_path if state_path is not None else _env.FT_STATE.read()
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


def read_state_file(path: str) -> dict[str, Any] | None:
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


def reconcile_section_state(saved: Mapping[str, Any], cfg_sections: Mapping[str, Any],
                            cfg_oos: Any) -> dict[str, Any] | None:
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


def finished_flag_path(required: bool = False) -> str | None:
    """The file named by ``$FAULT_TOL_FINISHED_FLAG_FILE``; `required`: RuntimeError if unset."""
    path = os.environ.get(FINISHED_FLAG_ENV) or None
    if path is None and required:
        # NVRx's first sentence; its "Was this job launched with FT launcher?" misled: the
        # launcher never sets the variable, the job script does.
        raise RuntimeError(f"'{FINISHED_FLAG_ENV}' env variable is not set. Auto-resume "
                           "(ft_autoresume=True) needs it: your job script sets it to the file "
                           "rank 0 creates when training completes, and re-submits the job "
                           "until that file exists (ft_launcher does not set it; docs/ft.md)")
    return path


def write_finished_flag(path: str | None = None) -> str | None:
    """On global rank 0, create the auto-resume flag file (``$FAULT_TOL_FINISHED_FLAG_FILE``).

    A job script that re-submits ``ft_launcher`` until training is done stops when it exists.
    Returns the path written, or None (another rank, or no path known).
    """
    path = path or finished_flag_path()
    # $RANK when the process group is gone: the flag is often written after training ended.
    if path is None or _common.group_rank(env_rank=True) != 0:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "a"):
        os.utime(path, None)
    log.info("straggler: training finished; wrote the FT finished flag %s", path)
    return path
