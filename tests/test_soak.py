"""The soak benchmark (benchmarks/soak.py), run for a few seconds: it completes and prints its
table (no timing is asserted; the 10-minute run and its numbers are in benchmarks/README.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[1] / "benchmarks" / "soak.py"

pytestmark = pytest.mark.multirank


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    for key in ("STRAGGLER_LIBCUDA", "STRAGGLER_LIBNVML", "SIMNVML_SCENARIO"):
        env.pop(key, None)
    return subprocess.run([sys.executable, str(SOAK), *args], capture_output=True, text=True,
                          timeout=240, env=env, check=False)


@pytest.mark.parametrize("extra", [[], ["--simulated-gpu", "--world-size", "3"]])
def test_a_short_soak_completes_and_prints_one_table_row_per_rank(extra):
    out = _run("--minutes", "0.05", "--report-interval", "0.5", *extra)  # 3 s, ~6 reports
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("soak: ")
    header = next(i for i, line in enumerate(lines) if line.startswith("| rank | reports |"))
    rows = [line.split("|")[1:-1] for line in lines[header + 2:] if line.startswith("|")]
    world = 3 if extra else 2
    assert [int(r[0]) for r in rows] == list(range(world))
    for row in rows:
        assert int(row[1]) >= 1  # reports recorded
        assert row[-1].strip() == "yes"  # the detector was still on at the end
        assert float(row[6]) > 0 and float(row[7]) > 0  # RSS, first and last window


def test_bad_arguments_exit_2_naming_the_value():
    out = _run("--world-size", "9")
    assert out.returncode == 2 and "`--world-size=9`" in out.stderr
    out = _run("--minutes", "0")
    assert out.returncode == 2 and "`--minutes=0.0`" in out.stderr
