"""`straggler run` and `straggler env`: what the command computes, prints and returns is its own.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _jobs import PY, SCRIPTS, _kill_job, job_env, launch, records, straggler_run, torchrun


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


def test_a_crash_and_the_computation_pass_through_unchanged(tmp_path):
    """The script's printed weights (to the last digit), its traceback and its exit status are
    those of the same script run without the attach; the attach did run (a report per step)."""
    log = tmp_path / "r.jsonl"
    command = [PY, str(SCRIPTS / "crash.py")]
    attached = straggler_run(command, ["--report-interval", "0", "--report-log", str(log),
                                       *QUIET], _one_rank(CRASH="raise"))
    plain = _plain(command, _one_rank(CRASH="raise"))
    assert plain.returncode == 1 and "weights " in plain.stdout
    assert (attached.returncode, attached.stdout, attached.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)
    assert "ValueError: the script's own error after step 19" in attached.stderr
    assert len(records(log)) >= 19


def test_an_exit_status_passes_through():
    attached = straggler_run([PY, str(SCRIPTS / "crash.py")], QUIET, _one_rank(CRASH="exit"))
    assert attached.returncode == 7, attached.stderr
    assert attached.stderr == ""


def test_a_rank_with_straggler_disable_costs_the_others_no_wait():
    # Rank 1 has STRAGGLER_DISABLE=1: rank 0's attach waited --comm-timeout (60 s) for it in the
    # detector's set-up, inside the script's init_process_group, then ran unattached.
    proc = straggler_run(launch(2, "one_rank_disabled.py"), ["--comm-timeout", "60", *QUIET],
                         job_env(), timeout_s=150)
    assert proc.returncode == 0, proc.stderr
    took = dict(re.findall(r"rank (\d) init took ([\d.]+) s", proc.stdout))
    assert set(took) == {"0", "1"}, proc.stdout
    assert all(float(t) < 30 for t in took.values()), took  # generous: a loaded machine
    assert "rank 1 has STRAGGLER_DISABLE set" in proc.stderr, proc.stderr


def test_a_bad_setting_on_one_rank_costs_the_others_no_wait():
    # Rank 1 alone has STRAGGLER_REPORT_INTERVAL=banana in its environment: it printed its line
    # at interpreter start and never joined the detector's set-up, so rank 0 waited
    # --comm-timeout (60 s) in its init_process_group. Now it tells rank 0 at once.
    proc = straggler_run(launch(2, "one_rank_disabled.py"), ["--comm-timeout", "60", *QUIET],
                         job_env(DISABLE_RANK_1="0",
                                 LAUNCH_RANK1_STRAGGLER_REPORT_INTERVAL="banana"),
                         timeout_s=150)
    assert proc.returncode == 0, proc.stderr
    took = dict(re.findall(r"rank (\d) init took ([\d.]+) s", proc.stdout))
    assert set(took) == {"0", "1"}, proc.stdout
    assert all(float(t) < 30 for t in took.values()), took  # generous: a loaded machine
    lines = proc.stderr.splitlines()  # one line per rank, none from the launcher
    assert len(lines) == 2, proc.stderr
    assert any("`STRAGGLER_REPORT_INTERVAL='banana'`" in line for line in lines)
    assert any("rank 1 has a bad straggler setting" in line for line in lines), proc.stderr


def test_a_failing_start_prints_one_line_per_rank_and_the_job_runs():
    """Every rank fails the same way before its detector exists: one line each, no wait."""
    proc = straggler_run(launch(2, "tiny.py"), QUIET,
                         job_env(STRAGGLER_PROMETHEUS_PORT="banana"), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, proc.stderr
    for line in lines:
        assert line.startswith("straggler: attach failed (starting the detector: ValueError: ")
        assert "STRAGGLER_PROMETHEUS_PORT" in line
    assert proc.stdout.count("loss ") == 2


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
    assert empty.returncode == 2 and "no command to run" in empty.stderr


@pytest.mark.parametrize("option", [["--step", "epoch"], ["--report-interval", "-1"],
                                    ["--report-interval", "nan"], ["--comm-timeout", "0"],
                                    ["--prometheus", "70000"], ["--hang-timeout", "banana"]])
@pytest.mark.parametrize("command", ["run", "env"])
def test_bad_options_exit_2_naming_the_option_and_value(command, option):
    # docs/attach.md: a bad option exits 2 (a value out of range as a malformed one did)
    proc = subprocess.run([PY, "-m", "straggler.cli", command, *option, "--", "true"],
                          env=job_env(), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2, proc.stderr
    assert option[0] in proc.stderr and option[1] in proc.stderr


@pytest.mark.parametrize("command", ["run", "env"])
def test_a_report_log_that_is_no_file_path_exits_2_naming_it(command, tmp_path):
    for path, says in (("", "`` must be a file path"), (str(tmp_path), f"`{tmp_path}` is a "
                                                            "directory")):
        proc = subprocess.run([PY, "-m", "straggler.cli", command, "--report-log", path, "--",
                               "true"], env=job_env(), capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 2, proc.stderr
        assert f"argument --report-log: {says}" in proc.stderr, proc.stderr


def test_a_job_that_wrote_no_report_says_so_instead_of_a_summary(tmp_path):
    log = tmp_path / "r.jsonl"
    proc = straggler_run([PY, str(SCRIPTS / "tiny.py")], ["--report-log", str(log)],
                         _one_rank())  # 30 steps, well before the first report (60 s)
    assert proc.returncode == 0, proc.stderr
    assert not log.exists()
    assert (f"straggler run: no summary: there is no report log at {log} (the job ended "
            "before its first report, --report-interval 60 s;") in proc.stderr


def test_a_log_path_naming_the_rank_is_summarized_from_the_reporting_ranks_file(tmp_path):
    log = tmp_path / "r{rank}.jsonl"  # docs/reportlog.md: {rank} is the writer's global rank
    proc = straggler_run([PY, str(SCRIPTS / "tiny.py")],
                         ["--report-interval", "0", "--report-log", str(log), "--quiet"],
                         _one_rank())
    assert proc.returncode == 0, proc.stderr
    assert f"straggler run: summary of {tmp_path / 'r0.jsonl'}" in proc.stderr, proc.stderr


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


@pytest.mark.multirank
@pytest.mark.parametrize(("signum", "group"), [(signal.SIGTERM, False), (signal.SIGINT, False),
                                             (signal.SIGINT, True)])
def test_stopped_by_a_signal_torchrun_stops_its_workers_without_a_traceback(signum, group,
                                                                            tmp_path):
    """SIGTERM (or a SIGINT sent to `straggler run` alone, not from the terminal) stops the
    job: torchrun printed a traceback of its own frames (SignalException) and exited 1, and a
    SIGINT was ignored while the job ran on. Now the workers end, torchrun dies by the signal it
    got and `straggler run` by the one it got (130 or 143 in a shell). A signal to the whole
    process group (`timeout`, a scheduler) reached torchrun twice, directly and passed on: the
    second (SIGTERM for the SIGINT) raised inside its shutdown, which began again (SIGTERM to
    every worker once more; once "--- Logging error ---" and two tracebacks)."""
    import os
    import time

    out_path, err_path = tmp_path / "out", tmp_path / "err"
    with open(out_path, "w") as out, open(err_path, "w") as err, \
            subprocess.Popen([PY, "-m", "straggler.cli", "run", "--quiet", "--report-log",
                              str(tmp_path / "none.jsonl"), "--",
                              *torchrun(2, "sleeper.py")], cwd=SCRIPTS, env=job_env(),
                             stdout=out, stderr=err, text=True,
                             start_new_session=True) as proc:
        try:
            end = time.monotonic() + 150
            while out_path.read_text().count(" ready pid ") < 2:
                if time.monotonic() > end or proc.poll() is not None:
                    pytest.fail(f"the workers did not start: {out_path.read_text()}"
                                f"{err_path.read_text()}")
                time.sleep(0.2)
            if group:
                os.killpg(proc.pid, signum)
            else:
                proc.send_signal(signum)
            proc.wait(timeout=60)
        except BaseException:
            _kill_job(proc)
            raise
    text = err_path.read_text()
    assert proc.returncode == -signum, text
    if group:  # the workers got the SIGINT too: their KeyboardInterrupt is their own
        text = "\n".join(line for line in text.splitlines() if not line.startswith("[rank"))
        assert "closing signal SIGTERM" not in text, text  # one stop, one shutdown
    assert "Traceback" not in text and "Logging error" not in text, text
    assert "closing signal SIG" in text, text  # torchrun stopped them
    # no report before the stop: not "the job ended before its first report"
    assert f"(the job was stopped by {signal.Signals(signum).name} before its first report" \
        in text, text
    for line in out_path.read_text().splitlines():
        pid = int(line.split()[-1])
        stat = Path(f"/proc/{pid}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
