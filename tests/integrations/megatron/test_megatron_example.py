"""examples/megatron_style_train.py under torchrun on CPU: Megatron's flags end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "megatron_style_train.py"


@pytest.mark.multirank
def test_example_flags_slow_rank_and_stops_every_rank_with_status_1(tmp_path):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
           str(EXAMPLE), "--log-straggler", "--straggler-report-interval", "0.5",
           "--straggler-ctrlr-port", "0", "--straggler-minmax-count", "2",
           "--straggler-stop-if-detected", "--slow-rank", "1", "--slowdown", "3",
           "--train-iters", "400", "--hidden-size", "128", "--save", str(tmp_path / "ckpt")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=tmp_path,
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text  # torchrun reports the ranks' status 1 as a failure
    assert "Affected ranks: {StragglerId(rank=1," in text, text
    assert re.search(r"MnRelPerf/Rnk: 0\.\d\d/1", text), text
    stops = re.findall(r"\[rank(\d)\] train ERROR: Exiting due to straggler detection at "
                       r"iteration (\d+)", text)
    assert sorted(r for r, _ in stops) == ["0", "1"], text
    assert stops[0][1] == stops[1][1]  # the same iteration on both ranks
    saved = list((tmp_path / "ckpt").glob("iter_*.pt"))
    assert [p.name for p in saved] == [f"iter_{int(stops[0][1]):07d}.pt"]
    assert re.search(r"exitcode\s*:\s*1", text), text
    # every rank ends by its own exit: torchrun's SIGTERM (sent to the ranks still running once
    # one exited) killed the other one, still saving or tearing down, in 4 runs of 5
    assert "Signal 15" not in text and "exitcode  : -15" not in text, text
    assert len(re.findall(r"exitcode\s*:\s*1 \(pid", text)) == 2, text
