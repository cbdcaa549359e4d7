"""Where the C++ op observer comes from (straggler/timing/native_observer.py): the installed
module when it matches this torch, else the build cache, else a reason and a fix. No compiler
runs here (tests/test_install.py builds for real)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from straggler.cli import main
from straggler.timing import native_observer as no


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process that has not resolved its observer yet, with an empty cache."""
    monkeypatch.setattr(no, "_resolved", {})
    monkeypatch.setenv("STRAGGLER_CACHE_DIR", str(tmp_path / "cache"))
    if "straggler._ops" in sys.modules:
        monkeypatch.setitem(sys.modules, "straggler._ops", sys.modules["straggler._ops"])
    return tmp_path / "cache"


def _installed_ops() -> Path:
    import straggler._ops

    return Path(straggler._ops.__file__)


def test_the_installed_observer_is_used_when_built_for_this_torch(fresh):
    found = no.status()
    assert found.native and found.source == "installed" and found.fix == ""
    observer = no.load(build=False)
    assert observer is not None and torch.__version__ == observer.TORCH_VERSION


def test_an_installed_observer_for_another_torch_is_not_loaded_and_says_so(fresh, monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.0.0+other")
    monkeypatch.setenv("STRAGGLER_BUILD_OPS", "0")
    found = no.status(build=True)
    assert not found.native and found.source == "none"
    assert f"built for torch {_ops_version()}, this is torch 2.0.0+other" in found.detail
    assert "STRAGGLER_BUILD_OPS=0 forbids building it" in found.detail
    assert found.fix == "unset STRAGGLER_BUILD_OPS"


def _ops_version():
    import straggler._ops

    return straggler._ops.TORCH_VERSION


CACHE_HIT = """
import shutil, sys
from pathlib import Path
import straggler.timing.native_observer as no
no._installed = lambda version: (None, "not installed")  # as if none was built at install
miss = no.status(build=False)
target = Path(miss.detail.split("built on first need into ")[1])
target.mkdir(parents=True)
shutil.copy(sys.argv[1], target / Path(sys.argv[1]).name)  # a build for this torch
found = no.status(build=False)
import straggler._ops
print(miss.native, found.native, found.source, target.parent, straggler._ops.__file__)
"""


def test_a_cache_hit_is_loaded_under_the_module_name(fresh):
    # A fresh interpreter: this one has the installed module loaded under the same name.
    out = subprocess.run([sys.executable, "-c", CACHE_HIT, str(_installed_ops())],
                         capture_output=True, text=True, check=True, timeout=120,
                         env={**os.environ, "STRAGGLER_CACHE_DIR": str(fresh)}).stdout.split()
    miss, native, source, ops_dir, loaded = out
    assert (miss, native, source) == ("False", "True", "cache")
    assert Path(ops_dir) == fresh / "ops" and loaded.startswith(str(fresh / "ops"))


def test_the_installed_file_carries_its_torch_version():
    assert no.built_for(_installed_ops()) == torch.__version__
    assert no.built_for(Path(torch.__file__)) == ""  # no tag: an unknown build


def test_without_a_compiler_the_reason_and_the_fix_are_named(fresh, monkeypatch):
    monkeypatch.setattr(no, "_installed", lambda version: (None, "not installed"))
    monkeypatch.setattr(no, "_compiler", lambda: None)
    found = no.status(build=True)
    assert not found.native
    assert found.detail == "not installed; no C++ compiler to build it ($CXX, c++, g++, clang++)"
    assert "install g++" in found.fix


def test_the_cache_key_changes_with_torch(fresh, monkeypatch):
    root = no._source_root()
    assert root is not None
    key = no._key(root, torch)
    monkeypatch.setattr(torch, "__version__", "9.9.9")
    assert no._key(root, torch) != key


def test_the_build_command_uses_cmakes_flags(tmp_path):
    cmd = no.build_command("g++", Path("/src"), tmp_path / "_ops.so", torch)
    assert "-DNDEBUG" in cmd and "-std=c++20" in cmd
    assert "/src/ops/observer.cpp" in cmd and "/src/ops/collectives.cpp" in cmd
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    assert f"-D_GLIBCXX_USE_CXX11_ABI={abi}" in cmd
    assert f'-DSTRAGGLER_TORCH_VERSION="{torch.__version__}"' in cmd


@pytest.mark.parametrize("env, expected", [
    ({"STRAGGLER_CACHE_DIR": "/x/y"}, Path("/x/y")),
    ({"XDG_CACHE_HOME": "/c"}, Path("/c/straggler")),
    ({}, Path.home() / ".cache" / "straggler"),
])
def test_cache_dir_follows_the_environment(monkeypatch, env, expected):
    for name in ("STRAGGLER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert no.cache_dir() == expected


def test_doctor_and_build_ops_report_the_observer(fresh, capsys):
    assert main(["doctor"]) == 0
    assert "[ok] op observer" in capsys.readouterr().out
    assert main(["build-ops"]) == 0
    assert "native straggler._ops (installed:" in capsys.readouterr().out
