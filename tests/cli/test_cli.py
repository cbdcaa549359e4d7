"""The `straggler` command: summarize, plot (8 and 4,096 ranks), doctor, demo, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from straggler.cli import main
from straggler.cli.logdata import load_log
from straggler.cli.plot import heatmap_arrays
from straggler.cli.summarize import summarize
from straggler.sinks.record import SCHEMA, SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]


def synthetic_log(path: Path, n_ranks: int, n_reports: int, slow: dict[int, float],
                  per_node: int = 8, slow_from: int = 0, step_ms: float = 100.0,
                  window_s: float = 10.0, iterations: int = 100) -> Path:
    """A report log: rank r's step takes `step_ms * slow[r]` from report `slow_from` on."""
    rng = np.random.default_rng(0)
    with open(path, "w") as f:
        for j in range(n_reports):
            factor = np.ones(n_ranks)
            if j >= slow_from:
                for r, x in slow.items():
                    factor[r] = x
            med = step_ms * factor * (1 + 0.01 * rng.random(n_ranks))
            rel = med.min() / med
            flagged = [int(r) for r in np.nonzero(rel < 0.75)[0]]
            confirmed = flagged if j >= slow_from + 2 else []
            record = {
                "schema": SCHEMA, "version": SCHEMA_VERSION, "time": 1000.0 + window_s * j,
                "iteration": iterations * (j + 1), "window_iterations": iterations,
                "window_s": window_s, "reporting_rank": 0, "threshold": 0.75,
                "ranks": list(range(n_ranks)),
                "nodes": [f"node{r // per_node}" for r in range(n_ranks)],
                "gpu": {"relative": [None] * n_ranks, "individual": [None] * n_ranks},
                "sections": {"step": {"relative": rel.tolist(), "individual": [1.0] * n_ranks,
                                      "median_ms": med.tolist()}},
                "flagged": [{"rank": r, "metrics": ["section:step:relative"]} for r in flagged],
                "confirmed": confirmed, "policy": {},
                "causes": [{"rank": r, "cause": "gpu_thermal_throttling",
                            "evidence": f"rank {r} hot", "values": {}, "gpu": None}
                           for r in flagged],
                "telemetry": {}, "telemetry_flagged": {},
                "overhead": {"report_ms": 12.0, "scores_ms": 8.0, "sections": 1,
                             "gpu_timers": 0}}
            f.write(json.dumps(record) + "\n")
    return path


def test_summarize_names_the_straggler_its_cause_time_slow_and_time_lost(tmp_path, capsys):
    log = synthetic_log(tmp_path / "r.jsonl", 8, 10, {5: 2.0}, slow_from=4)
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert "10 report(s) of 8 rank(s)" in out
    lines = out.splitlines()
    row = next(line for line in lines if line.split()[:2] == ["5", "node0"])
    # Flagged in 6 reports (4..9), confirmed in 4 (6..9), slow for 6 windows of 10 s.
    assert row.split()[2:6] == ["6", "4", "60.0", "s"]
    assert "gpu_thermal_throttling x6" in row
    assert "rank 5 (node0), latest evidence: rank 5 hot" in out


def test_time_lost_is_ranks_times_slowest_minus_median_step(tmp_path):
    log = synthetic_log(tmp_path / "r.jsonl", 8, 10, {5: 2.0}, slow_from=4)
    s = summarize(load_log([log]))
    # 6 slow windows x 8 ranks x (200 - 100 ms) x 100 iterations = 480 rank-seconds, plus the
    # +-1 % noise of every window.
    assert s.lost_rank_s == pytest.approx(480.0, rel=0.05)
    assert s.run_rank_s == pytest.approx(8 * 10 * 10.0)
    assert [r.rank for r in s.stragglers] == [5]


def test_summarize_reads_rotated_files_oldest_first(tmp_path, capsys):
    whole = synthetic_log(tmp_path / "whole.jsonl", 4, 9, {1: 2.0})
    lines = whole.read_text().splitlines(keepends=True)
    base = tmp_path / "rot.jsonl"
    Path(f"{base}.2").write_text("".join(lines[:3]))
    Path(f"{base}.1").write_text("".join(lines[3:6]))
    base.write_text("".join(lines[6:]))
    data = load_log([base])
    assert [f.name for f in data.files] == ["rot.jsonl.2", "rot.jsonl.1", "rot.jsonl"]
    assert len(data.reports) == 9
    assert main(["summarize", "--json", str(base)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["reports"] == 9 and summary["stragglers"][0]["rank"] == 1


def test_a_healthy_log_has_no_stragglers(tmp_path, capsys):
    log = synthetic_log(tmp_path / "ok.jsonl", 4, 3, {})
    assert main(["summarize", str(log)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "stragglers: none"


def test_errors_name_the_file_and_line_and_exit_non_zero(tmp_path, capsys):
    log = synthetic_log(tmp_path / "bad.jsonl", 4, 3, {})
    with open(log, "a") as f:
        f.write("{oops\n")
    assert main(["summarize", str(log)]) == 1
    assert f"{log}:4: not a JSON line" in capsys.readouterr().err
    log.write_text(json.dumps({"schema": SCHEMA, "version": SCHEMA_VERSION, "time": 1}) + "\n")
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 1
    assert f"{log}:1: malformed report record" in capsys.readouterr().err
    assert main(["summarize", str(tmp_path / "missing.jsonl")]) == 1
    assert "missing.jsonl: no such report log" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["plot", str(log)])  # -o is required
    assert exc.value.code == 2


def test_heatmap_arrays_mark_flagged_and_confirmed_cells(tmp_path):
    log = synthetic_log(tmp_path / "r.jsonl", 8, 6, {3: 2.0}, slow_from=2)
    score, flagged, confirmed = heatmap_arrays(load_log([log]))
    assert score.shape == (8, 6)
    assert score[3, 2:].max() < 0.6 and np.nanmin(np.delete(score, 3, axis=0)) > 0.95
    assert flagged[3].tolist() == [False, False, True, True, True, True]
    assert confirmed[3].tolist() == [False, False, False, False, True, True]
    assert flagged.sum() == 4


@pytest.mark.parametrize("n_ranks, n_reports, note", [
    (8, 12, None),
    (4096, 40, "each row: min over 16 consecutive ranks"),
])
def test_plot_writes_a_heatmap_at_8_and_4096_ranks(tmp_path, capsys, n_ranks, n_reports, note):
    log = synthetic_log(tmp_path / "r.jsonl", n_ranks, n_reports, {n_ranks // 3: 2.0},
                        slow_from=n_reports // 3)
    out = tmp_path / f"heat{n_ranks}.png"
    assert main(["plot", str(log), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"wrote {out}: {n_ranks} ranks x {n_reports} reports")
    assert (note in printed) if note else "(" not in printed
    from matplotlib import image

    png = image.imread(out)
    assert png.shape[0] > 300 and png.shape[1] > 600
    if os.environ.get("STRAGGLER_KEEP_PLOTS"):  # to look at them: STRAGGLER_KEEP_PLOTS=dir
        Path(os.environ["STRAGGLER_KEEP_PLOTS"], out.name).write_bytes(out.read_bytes())


def test_doctor_reports_every_check_with_a_fix_and_exits_zero(capsys, monkeypatch):
    for key in ("RANK", "WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for name in ("straggler._core", "CUDA driver", "NVML", "torch CUDA", "process group env",
                 "FT launcher"):
        assert name in out
    assert "[no] process group env" in out and "LOCAL_RANK=0" in out
    assert "missing MASTER_ADDR" in out and "fix: start the job with torchrun" in out
    assert "[ok] straggler._core" in out


def test_the_console_script_is_installed_and_runs_doctor():
    script = Path(sys.executable).with_name("straggler")
    out = subprocess.run([str(script), "doctor"], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert "CUDA driver" in out.stdout


def test_demo_finds_the_readme_demo_and_passes_arguments(capsys):
    from straggler.cli.demo import demo_script

    assert demo_script() == REPO / "examples" / "demo.py"
    # argparse of the demo rejects this before spawning anything: exit status 2, its message.
    assert main(["demo", "--world-size", "1"]) == 2


def test_demo_arguments_keep_their_order(monkeypatch):
    from straggler.cli import demo

    seen = []
    monkeypatch.setattr(demo, "run_demo", lambda args: seen.append(list(args)) or 0)
    assert main(["demo", "--slow-rank", "1", "--world-size", "3"]) == 0
    assert seen == [["--slow-rank", "1", "--world-size", "3"]]


def test_importing_straggler_and_its_command_loads_neither_matplotlib_nor_prometheus():
    code = ("import sys, straggler, straggler.cli, straggler.sinks.observers; "
            "print(sorted(m for m in ('matplotlib', 'prometheus_client') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"
