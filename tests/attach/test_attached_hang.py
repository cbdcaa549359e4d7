"""`straggler run --hang-timeout`: an unchanged script whose rank 1 stops is named, with its
stack, in the report log (docs/hang.md)."""

from __future__ import annotations

import subprocess

import pytest
from _jobs import PY, SCRIPTS, job_env, launch, records, straggler_run

pytestmark = pytest.mark.multirank


def test_hang_timeout_names_the_stopped_rank_of_an_attached_job(tmp_path):
    # Rank 1 stops 12 s (the test's wall time, mostly): named after the 3 s timeout, a watchdog
    # tick and its stack's round trip (5-6 s), with the rest as margin for a loaded machine.
    log = tmp_path / "r.jsonl"
    proc = straggler_run(launch(2, "hang.py"),
                         ["--hang-timeout", "3", "--report-log", str(log), "--quiet",
                          "--no-summary"], job_env(HANG_S="12"))
    assert proc.returncode == 0, proc.stderr
    # A loaded machine can stall the whole job (no rank behind) before rank 1 stops: the test
    # is about the first hang finding, not the first finding.
    hangs = [r for r in records(log)
             if r.get("schema") == "straggler.hang" and r.get("kind") == "hang"]
    assert hangs, proc.stderr
    culprit = hangs[0]["culprits"][0]
    assert [c["rank"] for c in hangs[0]["culprits"]] == [1]
    assert "stuck_reading_data" in culprit["stack"]
    # its 10 optimizer steps: the watchdog follows the step count across the attach's switch
    # from the collective boundary to the optimizer's (it read a stale counter: step 0)
    assert culprit["step"] == 10, culprit
    assert "straggler: HANG:" in proc.stderr


def test_a_bad_hang_timeout_is_named():
    proc = subprocess.run([PY, "-m", "straggler.cli", "env", "--hang-timeout", "soon"],
                          cwd=SCRIPTS, env=job_env(), capture_output=True, text=True,
                          timeout=60, check=False)
    # a bad option: status 2 naming the option and the value (docs/attach.md)
    assert proc.returncode == 2
    assert "argument --hang-timeout: `soon` must be seconds (> 0), auto or off" in proc.stderr
