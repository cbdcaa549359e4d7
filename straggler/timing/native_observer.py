"""Where the C++ op observer `straggler._ops` comes from: the package, a build cache, or nowhere.

`straggler._ops` is compiled against one torch's C++ API (``at::RecordFunction`` is not in
torch's stable ABI), so it must match the torch that runs. Tried in order:

1. **Installed** with the package, when it was built for this torch (the version tag in the
   file, `built_for`, is ``torch.__version__``). pip builds it when torch is importable at
   install time, also in pip's isolated build: CMakeLists.txt then asks the target
   environment's Python.
2. **The build cache**: ``<cache>/ops/<key>/_ops<EXT_SUFFIX>``, the key a hash of the sources,
   torch's version and git revision and the Python ABI; ``<cache>`` is
   ``$STRAGGLER_CACHE_DIR``, else ``$XDG_CACHE_HOME/straggler``, else ``~/.cache/straggler``.
   A miss is built on first need (`load(build=True)`: ``Detector.initialize`` on a CUDA host, or
   ``straggler build-ops``) with the C++ compiler (``$CXX``, ``c++`` or ``g++``) against this
   torch's headers (two files). A file lock makes the ranks of a node build it
   once; ``STRAGGLER_BUILD_OPS=0`` forbids building.
3. **None**: the Python fallback (a TorchDispatchMode, about 14x the cost per op) or no
   observer. `ObserverStatus.detail` says why and `fix` what to do; ``straggler doctor`` prints
   both, and the detector logs them as a warning on a CUDA host.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .. import _env

__all__ = ["ObserverStatus", "build_command", "built_for", "cache_dir", "load", "status"]

MODULE = "straggler._ops"
BUILD_TIMEOUT_S = 600.0  # the compile; waiting for another process's build has the same bound
# Relative to csrc/ (or _ops_src/); the same files CMakeLists.txt builds and ships.
_UNITS = ("ops/observer.cpp", "ops/collectives.cpp", "ops/gpu_waits.cpp",
          "driver/cuda_driver.cpp")
_SOURCES = (*_UNITS, "ops/collectives.h", "ops/gpu_waits.h", "driver/cuda_driver.h",
            "driver/dynamic_library.h", "timing/engine_api.h")


@dataclass(frozen=True)
class ObserverStatus:
    """Which op observer this process gets, and why.

    ``native``: whether `straggler._ops` is loaded; ``source``: ``"installed"``, ``"cache"``
    (built earlier), ``"built"`` (built now) or ``"none"``; ``detail``: its path, or why there
    is none; ``fix``: what to do about it (empty when native).
    """

    native: bool
    source: str
    detail: str
    fix: str = ""


_lock = threading.Lock()
# The final answer of this process, once known (native, or building was tried): {"": answer}.
_resolved: dict[str, tuple[ModuleType | None, ObserverStatus]] = {}


def load(build: bool = True) -> ModuleType | None:
    """The `straggler._ops` module for the running torch, or None; see `status`."""
    module, _ = _resolve(build)
    return module


def status(build: bool = False) -> ObserverStatus:
    """Which observer this process gets; with ``build``, a cache miss is built first."""
    _, found = _resolve(build)
    return found


def _resolve(build: bool) -> tuple[ModuleType | None, ObserverStatus]:
    with _lock:
        if "" in _resolved:
            return _resolved[""]
        import torch

        module, why_not = _installed(torch.__version__)
        result: tuple[ModuleType | None, ObserverStatus]
        if module is not None:
            result = module, ObserverStatus(True, "installed", str(module.__file__))
        else:
            result = _from_cache(torch, why_not, build)
        if result[0] is not None or build:  # final: loaded, or building was tried
            _resolved[""] = result
        return result


_TAG = b"straggler-torch-version:"


def built_for(path: str | Path) -> str:
    """The torch version a `straggler._ops` file was built for ('' when it carries no tag).

    Read from the file, not by loading it: a module built for another torch may not load, and
    once loaded, Python would hand out that module for every later load under its name.
    """
    data = Path(path).read_bytes()
    start = data.find(_TAG)
    if start < 0:
        return ""
    start += len(_TAG)
    return data[start:data.find(b"\0", start)].decode(errors="replace")


def _installed(torch_version: str) -> tuple[ModuleType | None, str]:
    """The installed module if it was built for ``torch_version``; else None and why."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.origin:
        return None, ("straggler._ops was not built at install time (torch was not importable "
                      "when the package was built)")
    version = built_for(spec.origin)
    if version != torch_version:
        return None, (f"the installed straggler._ops was built for torch {version or '?'}, "
                      f"this is torch {torch_version}")
    try:
        module = importlib.import_module(MODULE)
    except ImportError as exc:
        return None, f"the installed straggler._ops does not load ({exc})"
    return module, ""


def cache_dir() -> Path:
    """The build cache's root (``$STRAGGLER_CACHE_DIR``, ``$XDG_CACHE_HOME/straggler``, or
    ``~/.cache/straggler``)."""
    explicit = _env.CACHE_DIR.read()
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "straggler"


def _source_root() -> Path | None:
    """The observer's sources: shipped in the package, or the checkout's csrc/ (editable)."""
    package = Path(__file__).resolve().parent.parent
    for root in (package / "_ops_src", package.parent / "csrc"):
        if all((root / name).is_file() for name in _SOURCES):
            return root
    return None


def _key(root: Path, torch_module: ModuleType) -> str:
    digest = hashlib.sha256()
    for name in _SOURCES:
        digest.update((root / name).read_bytes())
    for part in (torch_module.__version__, getattr(torch_module.version, "git_version", ""),
                 sys.implementation.cache_tag, sysconfig.get_config_var("EXT_SUFFIX"),
                 str(int(torch_module._C._GLIBCXX_USE_CXX11_ABI))):
        digest.update(str(part).encode() + b"\0")
    return digest.hexdigest()[:16]


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return str(shutil.which(name))
    return None


def _torch_dir(torch_module: ModuleType) -> Path:
    return Path(str(torch_module.__file__)).resolve().parent


def build_command(compiler: str, root: Path, output: Path, torch_module: ModuleType) -> list[str]:
    """The compiler command that builds the observer (the flags CMakeLists.txt uses)."""
    torch_dir = _torch_dir(torch_module)
    lib = torch_dir / "lib"
    abi = int(torch_module._C._GLIBCXX_USE_CXX11_ABI)
    # NDEBUG as torch: RecordFunction's layout differs without it (csrc/ops/observer.cpp).
    # C++20 as torch.utils.cpp_extension: torch 2.14's headers need it.
    return [compiler, "-std=c++20", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
            "-DNDEBUG", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
            f'-DSTRAGGLER_TORCH_VERSION="{torch_module.__version__}"', f"-I{root}",
            "-isystem", str(torch_dir / "include"), "-isystem", sysconfig.get_paths()["include"],
            *(str(root / unit) for unit in _UNITS), "-o", str(output), f"-L{lib}", "-lc10",
            "-ltorch_cpu", "-ldl", f"-Wl,-rpath,{lib}"]


def _from_cache(torch_module: ModuleType, why_not: str, build: bool
                ) -> tuple[ModuleType | None, ObserverStatus]:
    fix_install = ("reinstall with torch importable: pip install --force-reinstall --no-deps "
                   "straggler (with torch already installed)")
    root = _source_root()
    if root is None:
        return None, ObserverStatus(False, "none", f"{why_not}; the observer's sources are not "
                                    "in the package", fix_install)
    target = cache_dir() / "ops" / _key(root, torch_module) / \
        f"_ops{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    if target.is_file():
        return _import_cached(target, "cache", why_not, fix_install)
    reason = _cannot_build(torch_module)
    if reason:
        return None, ObserverStatus(False, "none", f"{why_not}; {reason[0]}", reason[1])
    if not build:
        return None, ObserverStatus(False, "none", f"{why_not}; it is built on first need into "
                                    f"{target.parent}", "run `straggler build-ops` (or "
                                    "Detector.initialize on a CUDA host builds it)")
    try:
        seconds = _build(root, target, torch_module)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        return None, ObserverStatus(False, "none", f"{why_not}; building it failed: {exc}",
                                    "install a C++17 compiler and the Python headers, or "
                                    + fix_install)
    return _import_cached(target, "built", why_not, fix_install,
                          f" in {seconds:.0f} s" if seconds is not None else "")


def _cannot_build(torch_module: ModuleType) -> tuple[str, str] | None:
    """Why no build can be tried here (and the fix), or None."""
    if not _env.BUILD_OPS.read():
        return "STRAGGLER_BUILD_OPS=0 forbids building it", "unset STRAGGLER_BUILD_OPS"
    if _compiler() is None:
        return ("no C++ compiler to build it ($CXX, c++, g++, clang++)",
                "install g++ (or set CXX), then run `straggler build-ops`")
    headers = _torch_dir(torch_module) / "include" / "ATen" / "record_function.h"
    if not headers.is_file():
        return f"torch's C++ headers are missing ({headers})", "install a full torch wheel"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return ("the Python headers are missing (Python.h)",
                "install them (e.g. apt-get install python3-dev), then run "
                "`straggler build-ops`")
    return None


def _import_cached(path: Path, source: str, why_not: str, fix: str, took: str = ""
                   ) -> tuple[ModuleType | None, ObserverStatus]:
    try:
        spec = importlib.util.spec_from_file_location(MODULE, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"no loader for {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as exc:
        return None, ObserverStatus(False, "none", f"{why_not}; the cached build {path} does "
                                    f"not load ({exc})", f"delete {path.parent}, or {fix}")
    # `import straggler._ops` and `from straggler import _ops` find it from now on.
    sys.modules[MODULE] = module
    setattr(sys.modules["straggler"], "_ops", module)  # noqa: B010 - a submodule, bound by hand
    return module, ObserverStatus(True, source, f"{path}{took}")


def _build(root: Path, target: Path, torch_module: ModuleType) -> float | None:
    """Compile into ``target`` under a lock; the seconds it took (None: another process did)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(target.parent / "build.lock"):
        if target.is_file():  # another rank of this node built it while we waited
            return None
        compiler = _compiler()
        if compiler is None:
            raise RuntimeError("no C++ compiler")
        start = time.monotonic()
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            out = Path(tmp) / target.name
            done = subprocess.run(build_command(compiler, root, out, torch_module),
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                                  check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{Path(compiler).name} exited with {done.returncode}: "
                                   f"{done.stderr.strip()[-600:]}")
            os.replace(out, target)  # atomic: readers see a whole file or none
        return time.monotonic() - start


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "a") as handle:
        deadline = time.monotonic() + BUILD_TIMEOUT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"waited {BUILD_TIMEOUT_S:.0f} s for another process's "
                                       f"build ({path})") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
