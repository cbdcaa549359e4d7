"""``straggler doctor``: what this host offers the detector, why not, and the fix for each.

Every check is read-only and bounded: it loads the CUDA driver and NVML the way the detector
does (``straggler._core``), asks torch about CUDA, and reads the environment; it starts no
process group. The exit status is 0 whatever the findings: the report is the output.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Check", "checks", "run_build_ops", "run_doctor"]

PG_ENV = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


@dataclass(frozen=True)
class Check:
    """One finding: what, whether it is there, the detail, and the fix when it is not."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def _guard(name: str, fn: Callable[[], Check]) -> Check:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a broken check is a finding, not a crash
        return Check(name, False, f"{type(exc).__name__}: {exc}", "report this as a bug")


def _core() -> Check:
    from .. import _core

    return Check("straggler._core", True, f"C++ extension loaded ({_core.__file__})")


def _observer() -> Check:
    from ..timing.native_observer import status

    found = status(build=False)
    if found.native:
        return Check("op observer", True, f"native straggler._ops ({found.source}: "
                     f"{found.detail})")
    return Check("op observer", False, f"Python fallback (about 14x the cost per op): "
                 f"{found.detail}", found.fix)


def _cuda() -> Check:
    from .. import _core, _env

    ok, reason = _core.cuda_status()
    where = _env.LIBCUDA.read() or "libcuda.so.1"
    return Check("CUDA driver", ok, reason or f"loaded from {where}",
                 "" if ok else "install the NVIDIA driver, or set STRAGGLER_LIBCUDA to "
                 "libcuda.so.1's path; without it sections are timed with the host clock")


def _nvml() -> Check:
    from .. import _core

    ok, reason = _core.nvml_status()
    return Check("NVML", ok, reason or "loaded and initialised",
                 "" if ok else "install the NVIDIA driver (libnvidia-ml.so.1), or set "
                 "STRAGGLER_LIBNVML; without it there is no telemetry and causes say unknown")


def _torch() -> Check:
    import torch

    if torch.cuda.is_available():
        return Check("torch CUDA", True, f"torch {torch.__version__}, CUDA {torch.version.cuda},"
                     f" {torch.cuda.device_count()} device(s)")
    why = ("a CPU-only build" if torch.version.cuda is None
           else f"built for CUDA {torch.version.cuda} but no usable device")
    return Check("torch CUDA", False, f"torch {torch.__version__}: {why}",
                 "install a CUDA wheel of torch (https://pytorch.org/get-started) on a GPU "
                 "host; CPU/gloo jobs still get host-time scores")


def _process_group() -> Check:
    present = {k: os.environ[k] for k in PG_ENV if k in os.environ}
    missing = [k for k in PG_ENV if k not in os.environ]
    detail = ", ".join(f"{k}={v}" for k, v in present.items()) or "none set"
    if not missing:
        return Check("process group env", True, detail)
    return Check("process group env", False, f"{detail}; missing {', '.join(missing)}",
                 "start the job with torchrun (or ft_launcher), which sets them; call "
                 "dist.init_process_group() before Detector.initialize()")


def _ft() -> Check:
    from ..integrations.ft import RANK_MONITOR_SOCKET_ENV, under_ft_launcher

    installed = importlib.util.find_spec("nvidia_resiliency_ext") is not None
    under = under_ft_launcher()
    if installed and under:
        return Check("FT launcher", True, "nvidia-resiliency-ext installed, running under "
                     "ft_launcher")
    detail = ("nvidia-resiliency-ext " + ("installed" if installed else "not installed")
              + ("; under ft_launcher" if under
                 else f"; not under ft_launcher (${RANK_MONITOR_SOCKET_ENV} unset)"))
    fix = ("pip install nvidia-resiliency-ext, " if not installed else "") + \
        "start the job with ft_launcher for FT sections (optional, docs/ft.md)"
    return Check("FT launcher", False, detail, fix)


def _optional(module: str, feature: str, pip: str) -> Callable[[], Check]:
    def check() -> Check:
        ok = importlib.util.find_spec(module) is not None
        return Check(feature, ok, f"{module} " + ("installed" if ok else "not installed"),
                     "" if ok else f"pip install '{pip}'")
    return check


def _switches() -> Check:
    """Every ``STRAGGLER_*`` variable that is set, each parsed by the one reader (_env.py)."""
    from .. import _env

    shown, bad = [], []
    for var in _env.VARIABLES:
        if not var.is_set():
            continue
        shown.append(f"{var.name}={var.raw()}")
        try:
            var.read()
        except ValueError as exc:
            bad.append(str(exc))
    if bad:
        return Check("straggler env", False, "; ".join(bad), "set a valid value or unset it "
                     "(Detector.initialize raises on it)")
    disabled = _env.DISABLE.read()
    return Check("straggler env", not disabled, ", ".join(shown) or "no STRAGGLER_* switch set",
                 "unset STRAGGLER_DISABLE to turn detection on" if disabled else "")


def checks() -> list[Check]:
    """Every finding, in the order printed."""
    items: list[tuple[str, Callable[[], Check]]] = [
        ("straggler._core", _core), ("op observer", _observer), ("CUDA driver", _cuda),
        ("NVML", _nvml),
        ("torch CUDA", _torch), ("process group env", _process_group), ("FT launcher", _ft),
        ("plot (matplotlib)", _optional("matplotlib", "plot (matplotlib)",
                                        "matplotlib>=3.6")),
        ("Prometheus", _optional("prometheus_client", "Prometheus (prometheus-client)",
                                 "prometheus-client>=0.17")),
        ("straggler env", _switches)]
    return [_guard(name, fn) for name, fn in items]


def run_doctor() -> int:
    """Print the findings; always 0."""
    found = checks()
    width = max(len(c.name) for c in found)
    for c in found:
        print(f"[{'ok' if c.ok else 'no'}] {c.name.ljust(width)}  {c.detail}")
        if c.fix:
            print(f"     {' ' * width}  fix: {c.fix}")
    return 0


def run_build_ops() -> int:
    """Build the native op observer if this torch has none; 0 when it is native, else 1."""
    from ..timing.native_observer import status

    found = status(build=True)
    if found.native:
        print(f"[ok] op observer  native straggler._ops ({found.source}: {found.detail})")
        return 0
    print(f"[no] op observer  {found.detail}\n     fix: {found.fix}")
    return 1
