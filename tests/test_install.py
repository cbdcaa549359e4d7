"""A plain ``pip install`` ends with the native op observer (docs/install.md).

A fresh venv, a clean clone, ``pip install <clone>`` with no flags (an isolated build, as for
any sdist): torch is not there when the wheel is built, so ``straggler._ops`` is built on first
need into the cache; then the same install over an environment that has torch builds it at
install time, in pip's isolated build. Minutes of compiling: marked ``install`` and left out of
``make test`` (``make test-install`` runs it). pip finds the pinned CPU torch in the machine's
wheel folder (offline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# Two builds of the package and one of the observer: minutes, more on a loaded machine.
pytestmark = [pytest.mark.install, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
STATUS = ("import json, straggler.timing.native_observer as n, dataclasses; "
          "print(json.dumps(dataclasses.asdict(n.status(build=True))))")


def _run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}:\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture
def work_dir():
    # Not pytest's tmp_path: its root is shared by every pytest run of the user, and a run
    # that starts meanwhile may delete the oldest directories (this test takes minutes).
    (ROOT / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="install-test-", dir=ROOT / "build") as tmp:
        yield Path(tmp)


def test_plain_pip_install_gets_the_native_observer(work_dir):
    tmp_path = work_dir
    clone = tmp_path / "clone"
    _run(["git", "clone", "--quiet", "--depth", "1", f"file://{ROOT}", str(clone)])
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRAGGLER_", "PYTHON"))}
    env["STRAGGLER_CACHE_DIR"] = str(tmp_path / "cache")

    # A fresh environment: pip builds the wheel before it installs torch.
    _run([str(py), "-m", "pip", "install", "-q", str(clone)], env=env, cwd=tmp_path)
    first = json.loads(_run([str(py), "-c", STATUS], env=env, cwd=tmp_path))
    assert first["native"] and first["source"] == "built", f"{first['detail']}\n{first['fix']}"
    assert str(tmp_path / "cache") in first["detail"]
    doctor = _run([str(venv / "bin" / "straggler"), "doctor"], env=env, cwd=tmp_path)
    assert "[ok] op observer" in doctor and "(cache:" in doctor, doctor

    # torch installed: the same plain install builds straggler._ops at install time.
    _run([str(py), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(clone)],
         env=env, cwd=tmp_path)
    again = json.loads(_run([str(py), "-c", STATUS], env=env, cwd=tmp_path))
    assert again["native"] and again["source"] == "installed", f"{again['detail']}"
