"""Run an unmodified script of tests/attach/scripts through `straggler run` and read its log."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent / "scripts"
PY = sys.executable


def job_env(**extra: str) -> dict[str, str]:
    """The test's environment for a job: a CPU machine (no simulated driver or NVML), one
    torch thread per rank, none of the attach's variables inherited."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("STRAGGLER_") and k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", **extra)
    return env


def torchrun(nproc: int, script: str) -> list[str]:
    """torchrun's command line for `script` on `nproc` local ranks (a free port)."""
    return [PY, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
            str(SCRIPTS / script)]


def launch(nproc: int, script: str) -> list[str]:
    """The light launcher's command line (scripts/launch.py: no elastic agent)."""
    return [PY, str(SCRIPTS / "launch.py"), str(nproc), str(SCRIPTS / script)]


def _kill_job(proc: subprocess.Popen[str]) -> None:
    """Kill a job's whole process group: the launcher and its ranks (killing `straggler run`
    alone left a hung rank spinning on the CPU under the tests that came after)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def straggler_run(command: list[str], options: list[str], env: dict[str, str],
                  timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    """`straggler run OPTIONS -- COMMAND`, run in the scripts' folder, output captured; past
    `timeout_s` the job and its ranks are killed and ``TimeoutExpired`` is raised."""
    with subprocess.Popen([PY, "-m", "straggler.cli", "run", *options, "--", *command],
                          cwd=SCRIPTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_job(proc)
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape_while_running(command: list[str], options: list[str], env: dict[str, str],
                         port: int, timeout_s: float = 240
                         ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`straggler_run`, scraping ``http://127.0.0.1:PORT/metrics`` (the reporting rank's
    exporter) every 0.2 s while the job runs; returns the job and every page scraped."""
    pages: list[str] = []
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([PY, "-m", "straggler.cli", "run", *options, "--", *command],
                                cwd=SCRIPTS, env=env, stdout=out, stderr=err, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError), \
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                           timeout=2) as page:
                pages.append(page.read().decode())
            time.sleep(0.2)
        if proc.poll() is None:
            _kill_job(proc)
        proc.wait()
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    return done, pages


_TORCHRUN_ERROR = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
_SUMMARY = "straggler run: summary of "


def job_failure(proc: subprocess.CompletedProcess[str], chars: int = 6000) -> str:
    """Why a job failed, for an assertion message: its exit status, the workers' own output
    (their tracebacks, a C++ abort's ``terminate called ...``), and torchrun's table of failed
    ranks (exit code or signal of each). Left out: torchrun's own traceback, which only says
    that a child failed, and `straggler run`'s summary of the report log; both end the
    output and used to push the workers' lines out of a truncated message."""
    lines = proc.stderr.splitlines()
    summary = next((i for i, line in enumerate(lines) if line.startswith(_SUMMARY)),
                   len(lines))
    lines = lines[:summary]
    table: list[str] = []
    end = next((i for i, line in enumerate(lines) if line.startswith(_TORCHRUN_ERROR)), None)
    if end is not None:
        start = next((i for i in range(end, -1, -1)
                      if lines[i].startswith("Traceback (most recent call last):")), end)
        table = [line for line in lines[end + 1:] if line.strip() and set(line) != {"="}]
        lines = lines[:start]
    workers = "\n".join(lines)[-chars:]
    out = [f"exit status {proc.returncode}; the workers' output (stderr, "
           f"{len(proc.stderr)} chars in all):", workers]
    if table:
        out += ["torchrun's failed ranks:", *table]
    if proc.stdout.strip():
        out += ["stdout (tail):", proc.stdout[-1000:]]
    return "\n".join(out)


def records(log: Path) -> list[dict[str, Any]]:
    """The report log's records (none when the file does not exist)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def named_ranks(recs: list[dict[str, Any]]) -> set[int]:
    """Every rank some report confirmed as a straggler."""
    return {rank for r in recs for rank in r["confirmed"]}
