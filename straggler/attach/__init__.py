"""Zero-code attach: find stragglers in a training script that was never changed.

``straggler run [OPTIONS] -- COMMAND...`` (straggler/cli/run.py) runs COMMAND with
``STRAGGLER_AUTO=1`` and the folder `site_dir()` first on ``PYTHONPATH``; its ``sitecustomize``
installs a lazy import hook (`hook`) that wraps ``torch.distributed.init_process_group``; after
the script's own call, each worker starts a detector on the same group and finds the steps
itself (`worker`). `settings` reads the ``STRAGGLER_*`` variables. docs/attach.md explains the
mechanism, the variables and the limits. Importing this package imports no torch.
"""

from __future__ import annotations

import os

from .settings import AttachSettings

__all__ = ["AttachSettings", "attach_env", "site_dir"]


def site_dir() -> str:
    """The folder holding the attach's ``sitecustomize.py`` (put first on ``PYTHONPATH``)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")


def attach_env(settings: AttachSettings, environ: dict[str, str] | None = None, *,
               report_log: str | None = None, prometheus: int | None = None) -> dict[str, str]:
    """The variables an attached command runs with: `environ` (default ``os.environ``) plus
    ``STRAGGLER_AUTO=1``, the settings, `site_dir()` first on ``PYTHONPATH``, and the report
    log and Prometheus port when given."""
    env = dict(os.environ if environ is None else environ)
    env.update(settings.to_env())
    path = env.get("PYTHONPATH", "")
    parts = [p for p in path.split(os.pathsep) if p and p != site_dir()]
    env["PYTHONPATH"] = os.pathsep.join([site_dir(), *parts])
    if report_log is not None:
        env["STRAGGLER_REPORT_LOG"] = report_log
    if prometheus is not None:
        env["STRAGGLER_PROMETHEUS_PORT"] = str(prometheus)
    return env
