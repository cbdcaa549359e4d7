"""`make gpu-check`: the whole GPU tier in one command, on a host with an NVIDIA GPU.

Runs with the interpreter that runs it (the system's ``python3`` and its CUDA torch; no venv, no
internet), in this order, each step under its own time limit inside one overall budget:

1. ``build``: the extension in place (``pip install --no-build-isolation --no-deps -e .``);
2. ``sim``: the simulated driver and NVML (``make sim``), which the CPU suite runs on;
3. ``suite``: the whole test suite on the simulators (``gpu`` tests deselected), sharded over
   parallel pytest processes (``--shards``; test files dealt out by a rough weight, see
   `shard_files`), one log per shard;
4. ``gpu``: every ``gpu`` test against the real driver and NVML, after the suite (alone on the
   GPU: its tests time kernels);
5. ``bench``: every ``benchmarks/gpu/*.py`` script found at run time, with ``--quick``, each an
   equal share of the budget left (at most ``BENCH_CAP_S``).

Logs go to ``$GPU_CHECK_OUT`` (default ``build/gpu-check``): one ``<step>.log`` per step
(``suite-<i>.log`` per shard), one
``bench-<script>.md`` per benchmark (its stdout: the markdown tables) and ``summary.md``, which is
rewritten after every step so a run cut short still says how far it got. The summary is printed
at the end; the exit status is 0 only when every step passed.

    python3 tools/gpu_check.py                    # everything, 470 s budget
    python3 tools/gpu_check.py --steps gpu,bench  # a part (e.g. a second device call)
    python3 tools/gpu_check.py --steps sim,suite --limit suite=900 --budget-s 1000  # a CPU VM
    GPU_CHECK_OUT=$OUT GPU_CHECK_BUDGET_S=460 make gpu-check
    GPU_CHECK_NVRX=/tmp/nvrx make gpu-check       # NVRx 0.5 (pip install --target) beside us
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
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS = ("build", "sim", "suite", "gpu", "bench")
# The whole run fits one device call of under 10 minutes (the build included).
BUDGET_S = 470
# Each step's own limit (s); the overall budget caps them too. The suite is the long one (spawned
# multi-rank tests, sharded); the benchmarks share what is left, at most BENCH_CAP_S each.
STEP_LIMIT_S = {"build": 90, "sim": 30, "suite": 170, "gpu": 120}
BENCH_CAP_S = 45
# Suite shards: a few pytest processes (each multi-rank test spawns up to 4 ranks).
MAX_SHARDS = 6
# Test files whose name says they spawn ranks, launchers or long runs: the heavy ones.
HEAVY_NAME = re.compile(r"multirank|demo|soak|fault|reliability|ft_|megatron|lightning")
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
    log: Path | None = None

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


def _start(cmd: Sequence[str], log: Path, limit_s: float, env: dict | None,
           stdout_to: Path | None) -> subprocess.Popen:
    with log.open("w") as err, (stdout_to.open("w") if stdout_to else log.open("a")) as out:
        err.write(f"$ {shlex.join(cmd)}   (limit {limit_s:.0f} s)\n")
        err.flush()
        # A new session: on timeout the whole tree (spawned ranks too) is killed.
        return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _finish(proc: subprocess.Popen, deadline: float) -> int | None:
    """The exit status, or None after killing the process group at ``deadline``."""
    try:
        return proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        return None


def run_logged(name: str, cmd: Sequence[str], log: Path, limit_s: float,
               env: dict | None = None, stdout_to: Path | None = None) -> Outcome:
    """Run ``cmd`` in the repo with a time limit.

    stderr (and stdout unless ``stdout_to``) goes to ``log``.
    """
    if limit_s < 5:
        return Outcome(name, "not run: the time budget is spent", log=log)
    t0 = time.monotonic()
    rc = _finish(_start(cmd, log, limit_s, env, stdout_to), t0 + limit_s)
    if rc is None:
        return Outcome(name, f"TIMED OUT after {limit_s:.0f} s", time.monotonic() - t0, log=log)
    status = "ok" if rc == 0 else f"FAILED (rc={rc})"
    return Outcome(name, status, time.monotonic() - t0, log=log)


def run_parallel(name: str, cmds: Sequence[Sequence[str]], logs: Sequence[Path],
                 limit_s: float, env: dict | None = None) -> Outcome:
    """Run ``cmds`` at once, each to its log, all under one time limit; one `Outcome`."""
    if limit_s < 5:
        return Outcome(name, "not run: the time budget is spent")
    t0 = time.monotonic()
    procs = [_start(cmd, log, limit_s, env, None) for cmd, log in zip(cmds, logs, strict=True)]
    rcs = [_finish(proc, t0 + limit_s) for proc in procs]
    late = [str(i + 1) for i, rc in enumerate(rcs) if rc is None]
    bad = [f"{i + 1}: rc={rc}" for i, rc in enumerate(rcs) if rc not in (0, None)]
    if late:
        status = f"TIMED OUT after {limit_s:.0f} s"
    elif bad:
        status = f"FAILED (rc={max(rc for rc in rcs if rc)})"
    else:
        status = "ok"
    detail = "; ".join(x for x in (f"timed out: shard {', '.join(late)}" if late else "",
                                   f"failed: shard {', '.join(bad)}" if bad else "") if x)
    return Outcome(name, status, time.monotonic() - t0, detail=detail)


def file_weight(path: Path) -> float:
    """A rough cost of a test file: heavy by name (demo, soak, launchers, multi-rank), spawns
    ranks (uses tests/_multirank.py or the ``multirank`` marker), plus a little per test."""
    text = path.read_text(errors="replace")
    if path.stem.endswith("_gpu") and "pytest.mark.gpu" in text:
        return 0.5  # the `gpu` step's: deselected in the suite
    weight = 1.0 + 0.1 * text.count("def test_")
    if "multirank" in text:
        weight += 4.0
    if HEAVY_NAME.search(path.name):
        weight += 6.0
    return weight


def shard_files(weights: Mapping[str, float], shards: int) -> list[list[str]]:
    """Deal the files to ``shards`` lists: heaviest first, each to the lightest shard so far
    (ties: the lowest index); deterministic, every file exactly once, no shard empty while
    there are at least as many files as shards."""
    if shards < 1:
        raise ValueError(f"`shards={shards!r}` must be at least 1")
    out: list[list[str]] = [[] for _ in range(min(shards, max(1, len(weights))))]
    load = [0.0] * len(out)
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        i = min(range(len(out)), key=lambda k: (load[k], k))
        out[i].append(name)
        load[i] += weights[name]
    return out


def test_files() -> list[Path]:
    """The suite's test files (tests/**/test_*.py)."""
    return sorted((REPO / "tests").rglob("test_*.py"))


def default_shards() -> int:
    """A shard per 3 cores (a multi-rank test spawns up to 4 processes), 1 to MAX_SHARDS."""
    return max(1, min(MAX_SHARDS, (os.cpu_count() or 1) // 3))


def pytest_count_map(log: Path) -> dict[str, int]:
    """{'passed': 580, 'skipped': 12} from a pytest log's last summary line ({} when none)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    # "== 3 failed, 580 passed in 201.3s ==", or with -q "3 failed, 580 passed in 201.3s (0:03:21)"
    lines = [ln for ln in text.splitlines()
             if re.search(r" in [\d.]+s\b", ln) and PYTEST_COUNT.search(ln)]
    if not lines:
        return {}
    counts: dict[str, int] = {}
    for n, word in PYTEST_COUNT.findall(lines[-1]):
        what = "errors" if word.startswith("error") else word
        counts[what] = counts.get(what, 0) + int(n)
    return counts


def format_counts(counts: Mapping[str, int]) -> str:
    """'580 passed, 12 skipped' (pytest's words, its order)."""
    order = ["failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "errors"]
    return ", ".join(f"{counts[w]} {w}" for w in order if counts.get(w))


def merge_counts(logs: Sequence[Path]) -> dict[str, int]:
    """The shards' counts added up."""
    total: dict[str, int] = {}
    for log in logs:
        for what, n in pytest_count_map(log).items():
            total[what] = total.get(what, 0) + n
    return total


def pytest_counts(log: Path) -> str:
    """'580 passed, 12 skipped' from a pytest log's last summary line ('' when there is none)."""
    return format_counts(pytest_count_map(log))


def pytest_failures(log: Path) -> list[str]:
    """The `-rfE` lines of a pytest log: 'FAILED tests/x.py::test_y - why'."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [ln[:200] for ln in text.splitlines() if ln.startswith(("FAILED ", "ERROR "))]


def pytest_skips(log: Path) -> list[str]:
    """The `-rs` lines of a pytest log: 'N x file: reason'."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [f"{m[1]} x {m[2]}: {m[3]}" for m in map(PYTEST_SKIP.match, text.splitlines()) if m]


def machine() -> list[str]:
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


def step_build(out: Path, budget: Budget, limit_s: float) -> Outcome:
    cmd = [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", "."]
    return run_logged("build", cmd, out / "build.log", budget.grant(limit_s))


def step_sim(out: Path, budget: Budget, limit_s: float) -> Outcome:
    return run_logged("sim", ["make", "sim", f"PY={sys.executable}"], out / "sim.log",
                      budget.grant(limit_s))


def pytest_cmd(*args: str) -> list[str]:
    # -p no:cacheprovider: no .pytest_cache in the tree; -rsfE: every skip with its reason, every
    # failure and error by name.
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rsfE", *args]


def step_suite(out: Path, budget: Budget, shards: int, limit_s: float) -> Outcome:
    # The simulators (tests/conftest.py's defaults): drop any real-driver settings of the shell.
    env = {k: v for k, v in os.environ.items()
           if k not in ("STRAGGLER_LIBCUDA", "STRAGGLER_LIBNVML")}
    files = {str(p.relative_to(REPO)): file_weight(p) for p in test_files()}
    groups = shard_files(files, shards)
    logs = [out / f"suite-{i + 1}.log" for i in range(len(groups))]
    # `gpu` tests are the gpu step's (the real driver, the GPU to themselves): deselected here.
    res = run_parallel("suite", [pytest_cmd("-m", "not gpu", *g) for g in groups], logs,
                       budget.grant(limit_s), env=env)
    counts = format_counts(merge_counts(logs))
    where = f"{len(groups)} shards: {logs[0].parent}/suite-{{1..{len(groups)}}}.log"
    res.detail = "; ".join(x for x in (counts, where, res.detail) if x)
    res.detail += "".join(f"\n    {f}" for log in logs for f in pytest_failures(log))
    return res


def step_gpu(out: Path, budget: Budget, limit_s: float) -> Outcome:
    # The real driver and NVML by their sonames, as torch finds them.
    env = dict(os.environ, STRAGGLER_LIBCUDA="libcuda.so.1",
               STRAGGLER_LIBNVML="libnvidia-ml.so.1")
    log = out / "gpu.log"
    res = run_logged("gpu", pytest_cmd("-m", "gpu"), log, budget.grant(limit_s), env=env)
    res.detail = pytest_counts(log)
    res.detail += "".join(f"\n    {f}" for f in pytest_failures(log))
    skips = pytest_skips(log)
    if skips:  # on a GPU host a skipped gpu test is news: list why
        res.detail += "".join(f"\n    skipped: {s}" for s in skips)
    return res


def benchmark_scripts() -> list[Path]:
    """benchmarks/gpu/*.py at run time, helpers (leading underscore) left out."""
    return sorted(p for p in (REPO / "benchmarks" / "gpu").glob("*.py")
                  if not p.name.startswith("_"))


def bench_env() -> dict[str, str]:
    """The benchmarks' environment: with ``$GPU_CHECK_NVRX`` (a directory where
    nvidia-resiliency-ext was installed with ``pip install --target``), NVRx on the path and
    torch's CUDA libraries (libcupti) on the loader path, for the side-by-side rows. Only the
    benchmarks see it: the suite's FT tests expect NVRx 0.4.1 or none."""
    env = dict(os.environ)
    nvrx = env.get("GPU_CHECK_NVRX")
    if nvrx:
        import torch  # the CUDA torch this host runs; its wheel ships libcupti

        cu_lib = Path(torch.__file__).parent.parent / "nvidia" / "cu13" / "lib"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (nvrx, env.get("PYTHONPATH")) if p)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(cu_lib), env.get("LD_LIBRARY_PATH")) if p)
    return env


def step_bench(out: Path, budget: Budget, cap_s: float = BENCH_CAP_S) -> list[Outcome]:
    scripts = benchmark_scripts()
    env = bench_env()
    results = []
    for i, script in enumerate(scripts):
        # An equal share of what is left, so one slow script cannot starve the rest.
        share = budget.left() / (len(scripts) - i)
        table = out / f"bench-{script.stem}.md"
        res = run_logged(f"bench {script.name}", [sys.executable, str(script), "--quick"],
                         out / f"bench-{script.stem}.log", min(share, cap_s),
                         env=env, stdout_to=table)
        res.detail = f"tables: {table}"
        if not res.ok:  # its last words, so the summary alone says why
            tail = [ln for ln in res.log.read_text(errors="replace").splitlines() if ln.strip()]
            res.detail += f"\n    {tail[-1][:200]}" if tail else ""
        results.append(res)
    if not scripts:
        results.append(Outcome("bench", "FAILED (rc=-)", detail="no benchmarks/gpu/*.py found"))
    return results


def summary(machine_lines: list[str], outcomes: list[Outcome], out: Path, done: bool) -> str:
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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path,
                   default=Path(os.environ.get("GPU_CHECK_OUT") or REPO / "build" / "gpu-check"),
                   help="log directory (default $GPU_CHECK_OUT or build/gpu-check)")
    p.add_argument("--budget-s", type=float,
                   default=float(os.environ.get("GPU_CHECK_BUDGET_S") or BUDGET_S),
                   help=f"overall time limit in seconds (default $GPU_CHECK_BUDGET_S or "
                        f"{BUDGET_S})")
    p.add_argument("--steps", default=os.environ.get("GPU_CHECK_STEPS") or ",".join(STEPS),
                   help=f"comma-separated subset of {','.join(STEPS)} (default: all)")
    p.add_argument("--shards", type=int,
                   default=int(os.environ.get("GPU_CHECK_SHARDS") or default_shards()),
                   help="parallel pytest processes for the suite (default $GPU_CHECK_SHARDS or "
                        f"a third of the cores, at most {MAX_SHARDS}: {default_shards()} here)")
    p.add_argument("--limit", action="append", default=[], metavar="STEP=S",
                   help="a step's own time limit in seconds, e.g. suite=900 (defaults: "
                        + ", ".join(f"{k}={v}" for k, v in STEP_LIMIT_S.items())
                        + f", bench={BENCH_CAP_S} per script)")
    args = p.parse_args(argv)
    if args.shards < 1:
        p.error(f"`--shards={args.shards!r}` must be at least 1")
    args.limits = {**STEP_LIMIT_S, "bench": BENCH_CAP_S}
    for item in args.limit:
        step, _, secs = item.partition("=")
        try:
            value = float(secs)
        except ValueError:
            value = -1.0
        if step not in STEPS or value <= 0:
            p.error(f"`--limit={item!r}` must be STEP=SECONDS with STEP among "
                    f"{', '.join(STEPS)} and SECONDS positive")
        args.limits[step] = value
    args.steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    bad = [s for s in args.steps if s not in STEPS]
    if bad:
        p.error(f"`--steps={','.join(bad)}` must be among {', '.join(STEPS)}")
    if args.budget_s <= 0:
        p.error(f"`--budget-s={args.budget_s!r}` must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    budget = Budget(args.budget_s)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    machine_lines = machine()
    outcomes: list[Outcome] = []
    limits = args.limits
    runners = {"build": lambda: step_build(out, budget, limits["build"]),
               "sim": lambda: step_sim(out, budget, limits["sim"]),
               "suite": lambda: step_suite(out, budget, args.shards, limits["suite"]),
               "gpu": lambda: step_gpu(out, budget, limits["gpu"])}
    for step in STEPS:
        if step not in args.steps:
            continue
        print(f"gpu-check: {step} ...", flush=True)
        if step == "bench":
            outcomes += step_bench(out, budget, limits["bench"])
        else:
            outcomes.append(runners[step]())
            if step in ("build", "sim") and not outcomes[-1].ok:
                summary(machine_lines, outcomes, out, done=False)
                break  # nothing after runs without the extension or the simulators
        summary(machine_lines, outcomes, out, done=False)
    text = summary(machine_lines, outcomes, out, done=True)
    print(text, end="", flush=True)
    return 0 if outcomes and all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
