"""End to end under NVRx's ``ft_launcher``: a rank hangs inside ``step``, FT kills it, the
launcher restarts the job, and the restarted job completes and writes the finished flag.

2 gloo ranks on CPU, ``step`` timeout 3 s, monitor check every 0.5 s, one restart allowed.
About 20 s on this machine; the launcher is bounded by a subprocess timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nvidia_resiliency_ext.fault_tolerance")

WORKLOAD = Path(__file__).parent / "ft_workloads" / "train_with_hang.py"
STEP_TIMEOUT_S = 3.0
LAUNCHER_TIMEOUT_S = 150  # normally ~20 s; generous for 2 shared cores, never unbounded


def ft_launcher() -> str:
    path = Path(sys.executable).parent / "ft_launcher"
    assert path.exists(), f"{path} is missing: `make test` installs nvidia-resiliency-ext"
    return str(path)


@pytest.mark.multirank
def test_hang_in_step_is_killed_restarted_and_the_job_finishes(tmp_path):
    flag = tmp_path / "finished.flag"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FT_", "TORCHELASTIC_", "STRAGGLER_")) and k not in
           ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    env.update(STRAGGLER_FT_TEST_DIR=str(tmp_path), FAULT_TOL_FINISHED_FLAG_FILE=str(flag))
    cmd = [ft_launcher(), "--standalone", "--nproc-per-node=2", "--max-restarts=1",
           f"--ft-rank-section-timeouts=setup:30,step:{STEP_TIMEOUT_S:g},checkpointing:30",
           "--ft-rank-out-of-section-timeout=30", "--ft-workload-check-interval=0.5",
           "--ft-enable-nic-monitor=false", str(WORKLOAD)]
    try:
        run = subprocess.run(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=LAUNCHER_TIMEOUT_S,
                             check=False)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"ft_launcher did not finish in {LAUNCHER_TIMEOUT_S} s:\n"
                    f"{(exc.stdout or '')[-4000:]}")
    log = run.stdout
    events_file = tmp_path / "events.jsonl"
    events = [json.loads(line) for line in events_file.read_text().splitlines()] \
        if events_file.exists() else []
    context = f"\nlauncher rc={run.returncode}\nevents={events}\nlog tail:\n{log[-4000:]}"

    assert run.returncode == 0, context
    (hang,) = [e for e in events if e["what"] == "hang"]
    assert (hang["rank"], hang["cycle"]) == (1, 0), context
    assert hang["open_sections"] == {"step": 1}, context     # FT's step held our step section
    starts = {(e["rank"], e["cycle"]) for e in events if e["what"] == "start"}
    done = {(e["rank"], e["cycle"]) for e in events if e["what"] == "done"}
    assert starts == {(0, 0), (1, 0), (0, 1), (1, 1)}, context  # exactly one restart
    assert done == {(0, 1), (1, 1)}, context                    # only the restart completed
    assert "Section 'step' has been open" in log, context       # FT's monitor found the hang
    restart = min(e["t"] for e in events if e["what"] == "start" and e["cycle"] == 1)
    assert restart - hang["t"] >= STEP_TIMEOUT_S, context       # not before the timeout
    assert flag.exists(), context
