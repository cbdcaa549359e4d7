"""`make gpu-check`: the whole GPU tier in one command, on a host with an NVIDIA GPU.

Runs with the interpreter that runs it (the system's ``python3`` and its CUDA torch; no venv, no
internet), in this order, each step under its own time limit inside one overall budget:

1. ``build``: the extension in place (``pip install --no-build-isolation --no-deps -e .``);
2. ``sim``: the simulated driver and NVML (``make sim``), which the CPU suite runs on;
3. ``suite``: the whole test suite on the simulators (``gpu`` tests skip there);
4. ``gpu``: every ``gpu`` test against the real driver and NVML;
5. ``bench``: every ``benchmarks/gpu/*.py`` script found at run time, with ``--quick``.

Logs go to ``$GPU_CHECK_OUT`` (default ``build/gpu-check``): one ``<step>.log`` per step, one
``bench-<script>.md`` per benchmark (its stdout: the markdown tables) and ``summary.md``, which is
rewritten after every step so a run cut short still says how far it got. The summary is printed
at the end; the exit status is 0 only when every step passed.

    python3 tools/gpu_check.py                    # everything, 570 s budget
    python3 tools/gpu_check.py --steps gpu,bench  # a part (e.g. a second device call)
    GPU_CHECK_OUT=$OUT GPU_CHECK_BUDGET_S=540 make gpu-check
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
STEPS = ("build", "sim", "suite", "gpu", "bench")
# Each step's own limit (s); the overall budget caps them too. The suite is the long one (a few
# minutes of spawned multi-rank tests); the benchmarks share what is left, at most BENCH_CAP_S each.
STEP_LIMIT_S = {"build": 240, "sim": 60, "suite": 330, "gpu": 150}
BENCH_CAP_S = 120
# pytest's final line, e.g. "== 3 failed, 580 passed, 12 skipped in 201.3s ==".
PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")
PYTEST_SKIP = re.compile(r"^SKIPPED \[(\d+)\] ([^:]+):\d+: (.*)$")


@dataclasses.dataclass
class Outcome:
    """What one step (or one benchmark) did."""

    name: str
    status: str  # "ok", "FAILED (rc=N)", "TIMED OUT after N s", "not run: why"
    seconds: float = 0.0
    detail: str = ""
    log: Optional[Path] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Budget:
    """The overall time left, handed out to steps."""

    def __init__(self, total_s: float) -> None:
        self.deadline = time.monotonic() + total_s

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def grant(self, want_s: float) -> float:
        return max(0.0, min(want_s, self.left()))


def run_logged(name: str, cmd: Sequence[str], log: Path, limit_s: float,
               env: Optional[dict] = None, stdout_to: Optional[Path] = None) -> Outcome:
    """Run ``cmd`` in the repo with a time limit; stderr (and stdout unless ``stdout_to``) to log."""
    if limit_s < 5:
        return Outcome(name, "not run: the time budget is spent", log=log)
    t0 = time.monotonic()
    with log.open("w") as err, (stdout_to.open("w") if stdout_to else log.open("a")) as out:
        err.write(f"$ {shlex.join(cmd)}   (limit {limit_s:.0f} s)\n")
        err.flush()
        # A new session: on timeout the whole tree (spawned ranks too) is killed.
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            return Outcome(name, f"TIMED OUT after {limit_s:.0f} s", time.monotonic() - t0,
                           log=log)
    status = "ok" if rc == 0 else f"FAILED (rc={rc})"
    return Outcome(name, status, time.monotonic() - t0, log=log)


def pytest_counts(log: Path) -> str:
    """'580 passed, 12 skipped' from a pytest log's last summary line ('' when there is none)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    lines = [ln for ln in text.splitlines() if re.search(r" in [\d.]+s", ln) and "=" in ln]
    if not lines:
        return ""
    return ", ".join(f"{n} {what}" for n, what in PYTEST_COUNT.findall(lines[-1]))


def pytest_skips(log: Path) -> List[str]:
    """The `-rs` lines of a pytest log: 'N x file: reason'."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [f"{m[1]} x {m[2]}: {m[3]}" for m in map(PYTEST_SKIP.match, text.splitlines()) if m]


def machine() -> List[str]:
    """GPU, driver, CUDA, torch and Python versions, as lines of the summary."""
    code = ("import platform, torch\n"
            "print('python', platform.python_version())\n"
            "print('torch', torch.__version__, 'cuda', torch.version.cuda)\n"
            "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
            "print('devices', n)\n"
            "for i in range(n): print('gpu', i, torch.cuda.get_device_name(i))\n")
    lines = []
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, cwd="/", check=False)
        lines += out.stdout.strip().splitlines() or [f"torch: {out.stderr.strip()[-300:]}"]
    except subprocess.TimeoutExpired:
        lines.append("torch: timed out asking for the devices")
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30, check=False)
        lines += [f"nvidia-smi {ln}" for ln in smi.stdout.strip().splitlines()]
    except (OSError, subprocess.TimeoutExpired) as exc:
        lines.append(f"nvidia-smi: {exc}")
    return lines


def step_build(out: Path, budget: Budget) -> Outcome:
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", "."]
    return run_logged("build", cmd, out / "build.log", budget.grant(STEP_LIMIT_S["build"]))


def step_sim(out: Path, budget: Budget) -> Outcome:
    return run_logged("sim", ["make", "sim", f"PY={sys.executable}"], out / "sim.log",
                      budget.grant(STEP_LIMIT_S["sim"]))


def pytest_cmd(*args: str) -> List[str]:
    # -p no:cacheprovider: no .pytest_cache in the tree; -rs: every skip with its reason.
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args]


def step_suite(out: Path, budget: Budget) -> Outcome:
    # The simulators (tests/conftest.py's defaults): drop any real-driver settings of the shell.
    env = {k: v for k, v in os.environ.items()
           if k not in ("STRAGGLER_LIBCUDA", "STRAGGLER_LIBNVML")}
    res = run_logged("suite", pytest_cmd(), out / "suite.log",
                     budget.grant(STEP_LIMIT_S["suite"]), env=env)
    res.detail = pytest_counts(out / "suite.log")
    return res


def step_gpu(out: Path, budget: Budget) -> Outcome:
    # The real driver and NVML by their sonames, as torch finds them.
    env = dict(os.environ, STRAGGLER_LIBCUDA="libcuda.so.1",
               STRAGGLER_LIBNVML="libnvidia-ml.so.1")
    log = out / "gpu.log"
    res = run_logged("gpu", pytest_cmd("-m", "gpu"), log, budget.grant(STEP_LIMIT_S["gpu"]),
                     env=env)
    res.detail = pytest_counts(log)
    skips = pytest_skips(log)
    if skips:  # on a GPU host a skipped gpu test is news: list why
        res.detail += "".join(f"\n    skipped: {s}" for s in skips)
    return res


def benchmark_scripts() -> List[Path]:
    """benchmarks/gpu/*.py at run time, helpers (leading underscore) left out."""
    return sorted(p for p in (REPO / "benchmarks" / "gpu").glob("*.py")
                  if not p.name.startswith("_"))


def step_bench(out: Path, budget: Budget) -> List[Outcome]:
    scripts = benchmark_scripts()
    results = []
    for i, script in enumerate(scripts):
        # An equal share of what is left, so one slow script cannot starve the rest.
        share = budget.left() / (len(scripts) - i)
        table = out / f"bench-{script.stem}.md"
        res = run_logged(f"bench {script.name}", [sys.executable, str(script), "--quick"],
                         out / f"bench-{script.stem}.log", min(share, BENCH_CAP_S),
                         stdout_to=table)
        res.detail = f"tables: {table}"
        if not res.ok:  # its last words, so the summary alone says why
            tail = [ln for ln in res.log.read_text(errors="replace").splitlines() if ln.strip()]
            res.detail += f"\n    {tail[-1][:200]}" if tail else ""
        results.append(res)
    if not scripts:
        results.append(Outcome("bench", "FAILED (rc=-)", detail="no benchmarks/gpu/*.py found"))
    return results


def summary(machine_lines: List[str], outcomes: List[Outcome], out: Path, done: bool) -> str:
    lines = ["# gpu-check summary", "", *[f"- {ln}" for ln in machine_lines], ""]
    for o in outcomes:
        where = f"  [{o.log}]" if o.log else ""
        lines.append(f"{o.name:<28} {o.status:<22} {o.seconds:6.0f} s{where}")
        if o.detail:
            lines.append(f"    {o.detail}")
    if done:
        bad = [o.name for o in outcomes if not o.ok]
        lines += ["", "gpu-check: " + ("PASSED" if not bad else "FAILED: " + ", ".join(bad))]
    else:
        lines += ["", "gpu-check: still running (this file is rewritten after every step)"]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path,
                   default=Path(os.environ.get("GPU_CHECK_OUT") or REPO / "build" / "gpu-check"),
                   help="log directory (default $GPU_CHECK_OUT or build/gpu-check)")
    p.add_argument("--budget-s", type=float,
                   default=float(os.environ.get("GPU_CHECK_BUDGET_S") or 570),
                   help="overall time limit in seconds (default $GPU_CHECK_BUDGET_S or 570)")
    p.add_argument("--steps", default=os.environ.get("GPU_CHECK_STEPS") or ",".join(STEPS),
                   help=f"comma-separated subset of {','.join(STEPS)} (default: all)")
    args = p.parse_args(argv)
    args.steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    bad = [s for s in args.steps if s not in STEPS]
    if bad:
        p.error(f"`--steps={','.join(bad)}` must be among {', '.join(STEPS)}")
    if args.budget_s <= 0:
        p.error(f"`--budget-s={args.budget_s!r}` must be positive")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    budget = Budget(args.budget_s)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    machine_lines = machine()
    outcomes: List[Outcome] = []
    runners = {"build": step_build, "sim": step_sim, "suite": step_suite, "gpu": step_gpu}
    for step in STEPS:
        if step not in args.steps:
            continue
        print(f"gpu-check: {step} ...", flush=True)
        if step == "bench":
            outcomes += step_bench(out, budget)
        else:
            outcomes.append(runners[step](out, budget))
            if step in ("build", "sim") and not outcomes[-1].ok:
                summary(machine_lines, outcomes, out, done=False)
                break  # nothing after runs without the extension or the simulators
        summary(machine_lines, outcomes, out, done=False)
    text = summary(machine_lines, outcomes, out, done=True)
    print(text, end="", flush=True)
    return 0 if outcomes and all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
