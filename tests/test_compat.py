"""Import paths from before the sub-packages keep working (straggler/_compat.py)."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

import straggler
from straggler._compat import MOVED, MOVED_NAMES


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_path_is_the_new_module(old):
    new = MOVED[old]
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new  # not stamped with the old name


def test_old_paths_resolve_in_a_fresh_interpreter():
    code = ("from straggler.report import Report; from straggler.policy import PolicyConfig; "
            "from straggler.reporting import ReportGenerator; "
            "from straggler.telemetry import NvmlTelemetry, TelemetryOptions; "
            "import straggler.sections as s; print(s.__name__, Report.__module__)")
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.split() == ["straggler.timing.sections", "straggler.reporting.report"]


def test_patching_an_old_path_patches_the_code(monkeypatch):
    from straggler.analysis import scoring

    monkeypatch.setattr("straggler.scoring.EPS_TEST_ONLY", 1.0, raising=False)
    assert scoring.EPS_TEST_ONLY == 1.0


def test_objects_pickled_under_an_old_path_load():
    from straggler.analysis.policy import PolicyConfig

    config = PolicyConfig(k=3)  # protocol 2 names classes as text: `c<module>\n<name>`
    new = pickle.dumps(config, protocol=2)
    # Before the sub-packages the class was straggler.policy.PolicyConfig.
    old = new.replace(PolicyConfig.__module__.encode(), b"straggler.policy")
    assert b"straggler.policy\n" in old and pickle.loads(old) == config


def test_unknown_names_still_fail():
    with pytest.raises(ImportError, match="no_such_name"):
        from straggler.reporting import no_such_name  # noqa: F401
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("straggler.no_such_module")
    assert straggler.__name__ == "straggler"


@pytest.mark.parametrize("old,name", sorted((old, name) for old, names in MOVED_NAMES.items()
                                             for name in names))
def test_moved_names_resolve_from_their_old_module(old, name):
    value = getattr(importlib.import_module(old), name)
    assert value is getattr(importlib.import_module(MOVED_NAMES[old][name]), name)
