"""tools/gpu_check.py's CPU-side logic: the suite's shards, the merged pytest counts, options."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "tools" / "gpu_check.py"
_spec = importlib.util.spec_from_file_location("gpu_check", _PATH)
assert _spec is not None and _spec.loader is not None
gpu_check = importlib.util.module_from_spec(_spec)
sys.modules["gpu_check"] = gpu_check  # dataclasses look their module up by name
_spec.loader.exec_module(gpu_check)


def test_every_file_lands_in_exactly_one_shard():
    weights = {f"tests/test_{i}.py": float(i % 7 + 1) for i in range(23)}
    shards = gpu_check.shard_files(weights, 5)
    assert len(shards) == 5
    dealt = [name for shard in shards for name in shard]
    assert sorted(dealt) == sorted(weights)
    assert all(shards)


def test_heavy_files_are_spread_and_loads_balanced():
    # Four heavy files over four shards: one each, never two together.
    weights = {"h1": 10.0, "h2": 10.0, "h3": 10.0, "h4": 10.0,
               **{f"light{i}": 1.0 for i in range(8)}}
    shards = gpu_check.shard_files(weights, 4)
    assert [sum(1 for f in s if f.startswith("h")) for s in shards] == [1, 1, 1, 1]
    loads = [sum(weights[f] for f in s) for s in shards]
    assert max(loads) - min(loads) <= max(weights.values())  # greedy's bound: one file


def test_sharding_is_deterministic_and_ignores_input_order():
    weights = {f"f{i}": float((i * 37) % 11) for i in range(30)}
    backwards = dict(reversed(list(weights.items())))
    assert gpu_check.shard_files(weights, 6) == gpu_check.shard_files(backwards, 6)


def test_fewer_files_than_shards_and_bad_count():
    assert gpu_check.shard_files({"a": 1.0, "b": 2.0}, 5) == [["b"], ["a"]]
    assert gpu_check.shard_files({"a": 1.0}, 1) == [["a"]]
    with pytest.raises(ValueError, match="`shards=0`"):
        gpu_check.shard_files({"a": 1.0}, 0)


def test_the_suite_files_weigh_heavy_where_they_spawn_ranks():
    files = {p.name: gpu_check.file_weight(p) for p in gpu_check.test_files()}
    assert "test_gpu_check.py" in files
    assert files["test_soak.py"] > files["test_checks.py"]
    assert files["test_detector_multirank.py"] > files["test_scoring.py"]
    assert files["test_demo_gpu.py"] < files["test_scoring.py"]  # deselected in the suite


def test_counts_of_the_shards_add_up(tmp_path):
    a, b, c = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    a.write_text("....\n=== 1 failed, 40 passed, 2 skipped, 3 deselected in 12.5s ===\n"
                 "FAILED tests/test_x.py::test_y - AssertionError: no\n")
    b.write_text("...\n30 passed, 1 error in 303.01s (0:05:03)\n")  # -q: no rule of '='s
    c.write_text("killed before the end\n")
    total = gpu_check.merge_counts([a, b, c])
    assert total == {"failed": 1, "passed": 70, "skipped": 2, "deselected": 3, "errors": 1}
    assert gpu_check.format_counts(total) == \
        "1 failed, 70 passed, 2 skipped, 3 deselected, 1 errors"
    assert gpu_check.pytest_failures(a) == ["FAILED tests/test_x.py::test_y - AssertionError: no"]
    assert gpu_check.pytest_counts(c) == ""


def test_parallel_runs_report_each_shard(tmp_path):
    ok = [sys.executable, "-c", "print('fine')"]
    bad = [sys.executable, "-c", "raise SystemExit(3)"]
    logs = [tmp_path / "1.log", tmp_path / "2.log"]
    res = gpu_check.run_parallel("suite", [ok, bad], logs, limit_s=60)
    assert res.status == "FAILED (rc=3)"
    assert res.detail == "failed: shard 2: rc=3"
    assert "fine" in logs[0].read_text()
    res = gpu_check.run_parallel("suite", [ok, ok], logs, limit_s=60)
    assert res.ok and res.detail == ""


def test_parallel_runs_are_killed_at_the_limit(tmp_path):
    # A 5 s limit (the smallest run_parallel starts) against a 60 s sleep: only the limit ends it.
    slow = [sys.executable, "-c", "import time; time.sleep(60)"]
    ok = [sys.executable, "-c", "pass"]
    res = gpu_check.run_parallel("suite", [ok, slow], [tmp_path / "1", tmp_path / "2"],
                                 limit_s=5)
    assert res.status == "TIMED OUT after 5 s"
    assert res.detail == "timed out: shard 2"
    assert res.seconds < 50


def test_options_check_their_values(capsys):
    args = gpu_check.parse_args(["--steps", "sim,suite", "--shards", "3", "--limit",
                                 "suite=900"])
    assert args.steps == ["sim", "suite"] and args.shards == 3
    assert args.limits["suite"] == 900 and args.limits["gpu"] == gpu_check.STEP_LIMIT_S["gpu"]
    for bad, needle in ((["--shards", "0"], "`--shards=0`"),
                        (["--limit", "suite=x"], "`--limit='suite=x'`"),
                        (["--limit", "nope=3"], "`--limit='nope=3'`")):
        with pytest.raises(SystemExit):
            gpu_check.parse_args(bad)
        assert needle in capsys.readouterr().err


def test_default_budget_fits_one_device_call():
    # One device call runs under 10 minutes; the step limits sum within the budget, leaving
    # the benchmarks their share.
    assert gpu_check.BUDGET_S <= 480
    assert sum(gpu_check.STEP_LIMIT_S.values()) < gpu_check.BUDGET_S


def test_benchmarks_see_nvrx_only_when_gpu_check_nvrx_names_it(monkeypatch, tmp_path):
    monkeypatch.delenv("GPU_CHECK_NVRX", raising=False)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert gpu_check.bench_env()["PYTHONPATH"] == "/elsewhere"
    monkeypatch.setenv("GPU_CHECK_NVRX", str(tmp_path))
    env = gpu_check.bench_env()
    assert env["PYTHONPATH"].split(":") == [str(tmp_path), "/elsewhere"]
    assert env["LD_LIBRARY_PATH"].split(":")[0].endswith("nvidia/cu13/lib")  # libcupti.so.13
