"""`straggler run` and `straggler env`: what the command computes, prints and returns is its own.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from _jobs import PY, SCRIPTS, job_env, launch, records, straggler_run


def _one_rank(**extra: str) -> dict[str, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return job_env(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), **extra)


def _plain(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=SCRIPTS, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


QUIET = ["--quiet", "--no-summary"]


@pytest.mark.parametrize(("crash", "status"), [("raise", 1), ("exit", 7)])
def test_a_crash_passes_through_unchanged(tmp_path, crash, status):
    log = tmp_path / "r.jsonl"
    command = [PY, str(SCRIPTS / "crash.py")]
    attached = straggler_run(command, ["--report-interval", "0", "--report-log", str(log),
                                       *QUIET], _one_rank(CRASH=crash))
    plain = _plain(command, _one_rank(CRASH=crash))
    assert plain.returncode == status
    assert (attached.returncode, attached.stdout, attached.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)
    if crash == "raise":
        assert "ValueError: the script's own error after step 19" in attached.stderr
    assert len(records(log)) >= 19  # the detector was attached: a report every step


def test_the_computation_is_the_same_attached(tmp_path):
    command = [PY, str(SCRIPTS / "tiny.py")]
    attached = straggler_run(command, ["--report-interval", "0", *QUIET], _one_rank())
    plain = _plain(command, _one_rank())
    assert attached.returncode == plain.returncode == 0, attached.stderr
    assert attached.stdout == plain.stdout  # the loss, to the last printed digit


def test_a_failing_start_prints_one_line_and_the_job_runs(tmp_path):
    command = [PY, str(SCRIPTS / "tiny.py")]
    bad = _one_rank(STRAGGLER_PROMETHEUS_PORT="banana")
    attached = straggler_run(command, QUIET, bad)
    plain = _plain(command, bad)
    assert attached.returncode == 0 and attached.stdout == plain.stdout
    lines = attached.stderr.splitlines()
    assert len(lines) == 1, attached.stderr
    assert lines[0].startswith("straggler: attach failed (starting the detector: ValueError: ")
    assert "STRAGGLER_PROMETHEUS_PORT" in lines[0]


def test_a_failing_start_on_every_rank_costs_no_wait(tmp_path):
    proc = straggler_run(launch(2, "tiny.py"), QUIET,
                         job_env(STRAGGLER_PROMETHEUS_PORT="banana"), timeout_s=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("straggler: attach failed") == 2
    assert sorted(proc.stdout.split("\n"))[1:] and proc.stdout.count("loss") == 2


def test_a_signal_death_is_the_callers_too():
    proc = subprocess.run([PY, "-m", "straggler.cli", "run", "--", PY, "-c",
                           "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"],
                          env=job_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == -signal.SIGTERM


def test_unknown_command_and_no_command():
    missing = straggler_run(["no-such-command-xyz"], [], job_env())
    assert missing.returncode == 127
    assert "'no-such-command-xyz': command not found" in missing.stderr
    empty = subprocess.run([PY, "-m", "straggler.cli", "run", "--"], env=job_env(),
                           capture_output=True, text=True, timeout=60, check=False)
    assert empty.returncode == 1 and "no command to run" in empty.stderr


def test_bad_options_exit_2():
    proc = subprocess.run([PY, "-m", "straggler.cli", "run", "--step", "epoch", "--", "true"],
                          env=job_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2 and "--step" in proc.stderr


def test_straggler_env_attaches_a_command_line_of_its_own(tmp_path):
    log = tmp_path / "r.jsonl"
    shell = (f"eval \"$({PY} -m straggler.cli env --report-interval 0 --report-log {log} "
             f"--quiet)\" && {PY} {SCRIPTS / 'tiny.py'}")
    proc = subprocess.run(["bash", "-c", shell], cwd=SCRIPTS, env=_one_rank(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert len(records(log)) >= 29  # attached through the exported variables alone
    exports = subprocess.run([PY, "-m", "straggler.cli", "env", "--step", "optimizer"],
                             env=job_env(), capture_output=True, text=True, timeout=60,
                             check=True).stdout
    assert "export STRAGGLER_AUTO=1\n" in exports
    assert "export STRAGGLER_STEP=optimizer\n" in exports
    assert "export PYTHONPATH=" in exports


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
