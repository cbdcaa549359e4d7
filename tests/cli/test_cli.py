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


def test_a_rank_flagged_by_single_reports_only_is_not_called_a_straggler(tmp_path, capsys):
    # Flagged in one report (slow_from=2 of 3: confirmation needs two more), never confirmed:
    # a clean run's noise on a loaded host. The summary lists it but names no straggler.
    log = synthetic_log(tmp_path / "noise.jsonl", 4, 3, {1: 2.0}, slow_from=2)
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert "stragglers: none confirmed (" in out and "straggler(s)" not in out
    assert "top 1 rank(s) flagged, confirmed or waited for:" in out
    log = synthetic_log(tmp_path / "slow.jsonl", 4, 5, {1: 2.0, 3: 2.0})
    assert main(["summarize", str(log)]) == 0
    assert ("stragglers (confirmed): rank 1 (node0) in 3 of 5 report(s); rank 3 (node0) in 3 "
            "of 5 report(s)") in capsys.readouterr().out


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


def test_version_prints_the_package_version(capsys):
    import straggler

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"straggler {straggler.__version__}\n"


def test_demo_outside_a_source_tree_says_it_needs_one(monkeypatch, tmp_path, capsys):
    import straggler

    # A plain `pip install .`: the package sits in site-packages, examples/ is not there.
    monkeypatch.setattr(straggler, "__file__", str(tmp_path / "straggler" / "__init__.py"))
    assert main(["demo"]) == 1
    err = capsys.readouterr().err
    assert "the demo ships with the source tree" in err and "pip install -e ." in err


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


# -- bad lines, runs, exit codes, pipes (docs/reportlog.md) -----------------------------------

def _good_line(**overrides) -> str:
    """One valid record (two ranks, rank 1 slow) as a line, with `overrides`."""
    rel = [1.0, 0.5]
    line = {"schema": SCHEMA, "version": SCHEMA_VERSION, "run_id": "r1", "time": 1000.0,
            "iteration": 10, "window_iterations": 10, "window_s": 10.0, "reporting_rank": 0,
            "threshold": 0.75, "ranks": [0, 1], "nodes": ["a", "b"],
            "gpu": {"relative": [None, None], "individual": [None, None]},
            "sections": {"step": {"relative": rel, "individual": [1.0, 1.0],
                                  "median_ms": [10.0, 20.0]}},
            "flagged": [{"rank": 1, "metrics": ["section:step:relative"]}], "confirmed": [],
            "policy": {}, "causes": [], "telemetry": {}, "telemetry_flagged": {},
            "overhead": {"report_ms": 12.0, "scores_ms": 8.0, "sections": 1, "gpu_timers": 0}}
    line.update(overrides)
    return json.dumps(line)


CRAFTED = [
    ('{"schema": "straggler.report", "version": 2, "time": 1e999}', "number 1e999 is out of range"),
    (_good_line().replace('"ranks": [0, 1]', '"ranks": [0, ' + "1" + "0" * 30 + "]"),
     "malformed report record"),
    (_good_line().replace('"flagged": [{"rank": 1', '"flagged": [{"rank": 1' + "0" * 30),
     "malformed report record"),
    (_good_line(window_iterations=10**30), "malformed report record"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deep"),
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    (_good_line(ranks="01"), "malformed report record"),
    (_good_line(nodes=["a"]), "malformed report record"),
    (_good_line(sections={"step": {"relative": [1.0], "individual": [1.0],
                                   "median_ms": [1.0]}}), "malformed report record"),
]


@pytest.mark.parametrize("line, reason", CRAFTED)
@pytest.mark.parametrize("command", ["summarize", "plot"])
def test_crafted_lines_give_file_line_errors_never_a_traceback(tmp_path, capsys, command, line,
                                                              reason):
    log = tmp_path / "crafted.jsonl"
    log.write_text(_good_line() + "\n" + line + "\n" + _good_line(time=1010.0) + "\n")
    args = [command, str(log)] + (["-o", str(tmp_path / "x.png")] if command == "plot" else [])
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"{log}:2: " in err and reason in err and "Traceback" not in err
    # With --skip-bad the good records on both sides are read and the bad line is counted.
    assert main([*args, "--skip-bad"]) == 0
    out, err = capsys.readouterr()
    assert f"skipped 1 bad line(s); the first: {log}:2: " in err
    if command == "summarize":
        assert "2 report(s) of 2 rank(s)" in out


def test_a_log_left_by_a_full_disk_is_read_with_skip_bad(tmp_path, capsys):
    # The old writer's half line, then a restart appending onto it, then more records.
    log = tmp_path / "disk.jsonl"
    log.write_text(_good_line() + "\n" + _good_line(time=1010.0)[:40] + _good_line(time=1020.0)
                   + "\n" + _good_line(time=1030.0) + "\n")
    assert main(["summarize", str(log)]) == 1
    assert f"{log}:2: not a JSON line" in capsys.readouterr().err
    assert main(["summarize", "--skip-bad", str(log)]) == 0
    assert "2 report(s)" in capsys.readouterr().out


def test_two_runs_in_one_log_are_summarized_apart(tmp_path, capsys):
    log = tmp_path / "two.jsonl"
    log.write_text("".join(_good_line(run_id=run, time=t) + "\n"
                           for run, t in (("a", 1000.0), ("b", 1005.0), ("a", 1010.0))))
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 runs in the log")
    assert "run a: 2 report(s) of 2 rank(s)" in out and "run b: 1 report(s) of 2 rank(s)" in out
    assert main(["summarize", "--json", str(log)]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["run_id"], r["reports"]) for r in runs] == [("a", 2), ("b", 1)]
    assert main(["summarize", "--run", "b", "--json", str(log)]) == 0
    assert json.loads(capsys.readouterr().out)["reports"] == 1
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 1
    assert "holds 2 runs ('a', 'b'); choose one with --run" in capsys.readouterr().err
    assert main(["plot", str(log), "--run", "a", "-o", str(tmp_path / "x.png")]) == 0


def test_version_1_records_are_still_read_as_one_run_without_id(tmp_path):
    log = tmp_path / "v1.jsonl"
    line = json.loads(_good_line())
    del line["run_id"]
    line["version"] = 1
    log.write_text(json.dumps(line) + "\n")
    assert load_log([log]).run_id == ""


@pytest.mark.parametrize("args", [["--top", "0"], ["--top", "-3"], ["--top", "x"]])
def test_bad_arguments_exit_2(tmp_path, capsys, args):
    log = synthetic_log(tmp_path / "r.jsonl", 4, 2, {})
    with pytest.raises(SystemExit) as exc:
        main(["summarize", str(log), *args])
    assert exc.value.code == 2
    assert "--top" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["plot", str(log), "-o", "x.png", "--max-rows", "1"])
    assert exc.value.code == 2


def test_summarize_into_a_closed_pipe_exits_quietly(tmp_path):
    log = synthetic_log(tmp_path / "r.jsonl", 4, 2, {2: 2.0})
    # The reader is gone before the first write (as `| head` once it has its lines): the read
    # end of the pipe is closed before the command starts, so its first write always fails.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "straggler.cli", "summarize", str(log)],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    finally:
        os.close(write_end)
    assert proc.stderr == ""  # no "Broken pipe", no traceback
    assert proc.returncode == 141


def test_a_one_rank_summary_takes_the_worst_score_of_either_kind(tmp_path, capsys):
    log = tmp_path / "one.jsonl"
    lines = []
    for j, ind in enumerate([1.0, 0.35, 0.4]):
        lines.append(_good_line(
            time=1000.0 + j, ranks=[0], nodes=["a"],
            gpu={"relative": [None], "individual": [None]},
            sections={"step": {"relative": [1.0], "individual": [ind], "median_ms": [10.0]}},
            flagged=[{"rank": 0, "metrics": ["section:step:individual"]}] if ind < 0.75 else []))
    log.write_text("\n".join(lines) + "\n")
    s = summarize(load_log([log]))
    assert s.stragglers[0].worst_score == pytest.approx(0.35)
    assert s.stragglers[0].worst_kind == "individual"
    assert main(["summarize", str(log)]) == 0
    assert "0.350 ind" in capsys.readouterr().out


def test_summarize_says_what_each_report_time_is(tmp_path, capsys):
    log = synthetic_log(tmp_path / "r.jsonl", 4, 3, {})
    assert main(["summarize", str(log)]) == 0
    assert ("report time (median): 12.0 ms per generate_report call, of which 8.0 ms scoring "
            "and exchange") in capsys.readouterr().out


def test_the_heatmap_keeps_the_x_on_confirmed_cells_and_never_clips(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes
    from straggler.cli.plot import colour_floor, plot_heatmap

    drawn = {}
    real_scatter, real_imshow = Axes.scatter, Axes.imshow

    def scatter(self, x, y, *args, **kwargs):
        drawn[kwargs.get("label")] = sorted(zip(np.asarray(y).tolist(), np.asarray(x).tolist(),
                                                strict=True))
        return real_scatter(self, x, y, *args, **kwargs)

    def imshow(self, data, *args, **kwargs):
        drawn["vmin"] = kwargs["vmin"]
        return real_imshow(self, data, *args, **kwargs)

    monkeypatch.setattr(Axes, "scatter", scatter)
    monkeypatch.setattr(Axes, "imshow", imshow)
    log = synthetic_log(tmp_path / "r.jsonl", 8, 6, {3: 10.0}, slow_from=2)  # score ~0.10
    data = load_log([log])
    plot_heatmap(data, str(tmp_path / "h.png"))
    # Rank 3 is flagged in reports 2..5 and confirmed in 4..5: an x in all four.
    assert drawn["flagged (one report, NVRx rule)"] == [(3, 2), (3, 3), (3, 4), (3, 5)]
    assert drawn["vmin"] == pytest.approx(0.05)  # the lowest score (~0.10) keeps its colour
    assert colour_floor(np.array([0.9, np.nan, 0.6])) == 0.25
    assert colour_floor(np.array([0.25])) == 0.25 and colour_floor(np.array([0.0])) == 0.0


def _hang_line(time_s: float) -> str:
    from straggler.hang import HANG, Culprit, HangFinding
    from straggler.hang.output import hang_record
    from straggler.hang.stacks import CollectiveWait
    from straggler.sinks.reportlog import encode_line

    finding = HangFinding(HANG, 2, 3.3, 3.0, CollectiveWait("all_reduce", "0", 11), (0,),
                          (Culprit(1, "not arrived", node="vm", step=9, section="step",
                                   section_s=4.0, seq=10,
                                   location="hang.py:14 in stuck_reading_data",
                                   stack='  File "hang.py", line 14, in stuck_reading_data\n'),))
    return encode_line(hang_record(finding, time_s)).decode() + "\n"  # as the log writes it


def test_summarize_shows_the_hang_findings_of_the_log(tmp_path, capsys):
    # A job that hung before its first report left only a hang record: summarize said
    # "no report records" (exit 1), and with reports it never mentioned the hang.
    only = tmp_path / "hang.jsonl"
    only.write_text(_hang_line(1050.0))
    assert main(["summarize", str(only)]) == 0
    out = capsys.readouterr().out
    assert "no report records" in out and "hang finding (" in out
    assert "rank 1 (node vm) has not reached all_reduce #11" in out
    assert "in stuck_reading_data" in out
    log = synthetic_log(tmp_path / "r.jsonl", 4, 6, {})
    with open(log, "a") as f:
        f.write(_hang_line(1040.0) + _hang_line(1070.0))
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert "stragglers: none" in out and "hang findings: 2; the latest (" in out
    assert main(["summarize", "--json", str(log)]) == 0
    hangs = json.loads(capsys.readouterr().out)["hangs"]
    assert [h["time_s"] for h in hangs] == [1040.0, 1070.0]


@pytest.mark.parametrize("args, message", [
    (["--threshold", "2"], "--threshold=2.0 must be in (0, 1]"),
    (["--threshold", "0"], "--threshold=0.0 must be in (0, 1]"),
    (["--report-interval", "-1"], "--report-interval=-1.0 must be a finite number"),
    (["--report-interval", "nan"], "--report-interval=nan must be a finite number"),
    (["--hidden", "0"], "--hidden=0 must be a positive integer"),
    (["--batch", "-4"], "--batch=-4 must be a positive integer")])
def test_demo_rejects_bad_values_before_starting_its_ranks(args, message, capsys):
    # --threshold 2 started 4 ranks, which died with a traceback (a ValueError in rank 0)
    import importlib.util

    spec = importlib.util.spec_from_file_location("straggler_demo", REPO / "examples" / "demo.py")
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    with pytest.raises(SystemExit) as info:
        demo.parse_args(args)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


# Report logs of real runs on this 2-core machine (4 gloo ranks, rank 2 slowed): README's
# `straggler run` example (tests/attach/scripts/ddp_loop.py, rank 2's data loading 10 ms slower
# a batch, STEPS=300, --report-interval 1) and `make demo` (rank 2's forward slowed).
ATTACH_LOG = REPO / "tests" / "data" / "reportlog_attach_ddp_loop.jsonl"
DEMO_LOG = REPO / "tests" / "data" / "reportlog_demo.jsonl"
CULPRITS_LOG = REPO / "tests" / "data" / "reportlog_culprits.jsonl"
"""`python examples/culprits.py --report-log ...` (2 reports; rank 2 stalls outside its
section; 2026-11-25, main at c89a144, the shared 2-core machine, load average 4.7-4.9)."""


def _real_records(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines())
            if r.get("schema") == SCHEMA]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_time_lost_is_the_waits_measured_at_the_collectives_when_the_log_has_them(capsys):
    """The summary's two figures agree: the job's whole wait at collectives is at least what it
    lost to rank 2 (before: 11.3 s, 55.6 %, from section times counting data loading twice,
    beside 5.6 s, 27.6 % for rank 2)."""
    recs = _real_records(ATTACH_LOG)
    s = summarize(load_log([ATTACH_LOG]))
    waited = sum(v for r in recs for v in r["waits"]["waited_s"] if v is not None)
    assert s.lost_measured == s.reports == len(recs)
    assert s.lost_rank_s == pytest.approx(waited)
    assert [w.rank for w in s.waited_for] == [2]
    assert s.waited_for[0].lost_s <= s.lost_rank_s < 0.8 * s.run_rank_s
    assert main(["summarize", str(ATTACH_LOG)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("time lost"))
    assert line.startswith("time lost waiting for other ranks: ")
    assert line.endswith(", measured at the collectives"), line


def test_the_demos_waits_are_measured_though_its_culprit_is_seldom_named():
    """`make demo`'s rank 2 is named a culprit in 1 report of 6, its time lost attributed in 2:
    the ranks' own waits still measure the job's loss (not 0.0 s beside a confirmed rank)."""
    s = summarize(load_log([DEMO_LOG]))
    assert [r.rank for r in s.stragglers if r.reports_confirmed] == [2]
    assert s.lost_measured == s.reports
    assert 0.05 * s.run_rank_s < s.lost_rank_s < s.run_rank_s
    assert sum(w.lost_s for w in s.waited_for) <= s.lost_rank_s


def test_without_waits_the_estimate_takes_the_step_section_alone(tmp_path, capsys):
    """An attached job's `dataloader` section lies inside `step`: summing both counted slow data
    loading twice. Without waits in the log the estimate reads the `step` section only."""
    recs = _real_records(ATTACH_LOG)
    for r in recs:
        r["waits"] = {}
    log = _write(tmp_path / "nowaits.jsonl", recs)
    expected = 0.0
    for r in recs:
        step = np.array(r["sections"]["step"]["median_ms"], dtype=float)
        expected += len(step) * (step.max() - np.median(step)) * r["window_iterations"] / 1e3
    s = summarize(load_log([log]))
    assert s.lost_measured == 0
    assert s.lost_rank_s == pytest.approx(expected)
    assert main(["summarize", str(log)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("time lost"))
    assert line.startswith("time lost waiting for the slowest rank: ")
    assert line.endswith("estimated from the section times (no collective waits in the log)")


def test_a_log_measured_in_part_says_which_reports_were_estimated(tmp_path, capsys):
    recs = _real_records(ATTACH_LOG)
    for r in recs[:2]:
        r["waits"] = {}
    log = _write(tmp_path / "part.jsonl", recs)
    assert main(["summarize", str(log)]) == 0
    assert (f"measured at the collectives in {len(recs) - 2} of {len(recs)} report(s), "
            "estimated from the section times in the others") in capsys.readouterr().out


def test_without_waits_or_a_step_section_nested_sections_are_not_summed(tmp_path, capsys):
    """A hand-instrumented loop: `train_step` holds `forward`; rank 5's forward is 100 ms slower,
    so its train_step is too. The time lost is 8 ranks x 100 ms x 100 iterations a window;
    summing the two sections counted it twice (160 rank-s per window, 1.6 x 10 x 8)."""
    log = synthetic_log(tmp_path / "r.jsonl", 8, 3, {5: 2.0})
    recs = _real_records(log)
    for r in recs:
        step = r["sections"].pop("step")
        forward = [m - 50.0 for m in step["median_ms"]]  # 50 ms, rank 5's 150 ms
        r["sections"] = {"train_step": step, "forward": {**step, "median_ms": forward}}
    s = summarize(load_log([_write(log, recs)]))
    assert s.lost_rank_s == pytest.approx(3 * 8 * 0.1 * 100, rel=0.05)
    assert s.lost_largest_section == 3
    assert main(["summarize", str(log)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("time lost"))
    assert "a step taken as each rank's largest section" in line, line


def test_a_restarted_run_is_said_so_and_its_starts_are_summarized_apart(tmp_path, capsys):
    """torchrun --standalone keeps TORCHELASTIC_RUN_ID across --max-restarts: the restarted
    job's records carried the same run id, and the summary added both starts' numbers up as one
    run (6 reports, the 40 s of downtime inside its span) without a word of the restart."""
    first = [_good_line(time=1000.0 + 10 * i, iteration=10 * (i + 1), pid=700,
                        restart_count=0) for i in range(3)]
    second = [_good_line(time=1060.0 + 10 * i, iteration=10 * (i + 1), pid=900,
                         restart_count=1, ranks=[0, 1], nodes=["c", "d"]) for i in range(3)]
    log = tmp_path / "restarted.jsonl"
    log.write_text("".join(line + "\n" for line in first + second))
    assert main(["summarize", str(log)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run r1 restarted 1 time(s) (a new reporting process, torchrun "
                          "restart 1): 2 starts, summarized apart"), out
    assert "run r1, start 1 of 2: 3 report(s) of 2 rank(s) over 30.0 s" in out
    assert "run r1, start 2 of 2, torchrun restart 1: 3 report(s) of 2 rank(s) over 30.0 s" \
        in out
    rows = [line.split()[:2] for line in out.splitlines() if line.strip().startswith("1 ")]
    assert rows == [["1", "b"], ["1", "d"]], out  # each start's own node for rank 1
    assert main(["summarize", "--run", "r1#2", "--json", str(log)]) == 0
    one = json.loads(capsys.readouterr().out)
    assert (one["reports"], one["attempt"], one["restart_count"]) == (3, 2, 1)
    assert main(["plot", str(log), "-o", str(tmp_path / "x.png")]) == 1
    assert "choose one with --run" in capsys.readouterr().err


def test_records_without_a_process_id_tell_a_restart_by_their_iterations_going_back(tmp_path):
    lines = [_good_line(time=1000.0 + 10 * i, iteration=it)
             for i, it in enumerate((10, 20, 30, 10, 20))]
    log = tmp_path / "old.jsonl"
    log.write_text("".join(line + "\n" for line in lines))
    from straggler.cli.logdata import load_runs

    assert [(d.attempt, len(d.reports)) for d in load_runs([log])] == [(1, 3), (2, 2)]


def test_a_culprit_no_report_flagged_is_listed_before_the_victims_that_waited_for_it(capsys):
    """examples/culprits.py's rank 2 is the rank both reports waited for (its scores are normal:
    its time goes outside its section) while its three victims are flagged by both: it was last
    in the table, "slow for 0.0 s", under victims whose evidence names it."""
    s = summarize(load_log([CULPRITS_LOG]))
    assert [w.rank for w in s.waited_for] == [2]
    assert [r.rank for r in s.stragglers] == [2, 3, 1, 0]
    top = s.stragglers[0]
    assert (top.reports_flagged, top.reports_confirmed, top.reports_waited_for) == (0, 0, 2)
    assert top.slow_s == pytest.approx(s.end_s - s.start_s, rel=0.05)
    assert main(["summarize", str(CULPRITS_LOG)]) == 0
    out = capsys.readouterr().out
    assert "top 4 rank(s) flagged, confirmed or waited for:" in out
