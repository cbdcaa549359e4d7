"""Paired A/B of a section's exit code against an earlier revision's (same process, same rounds).

Loads `straggler/timing/sections.py` as it was at `--against` (a commit) into its own module
and switches the held contexts between the old and the new
classes round by round, interleaved with a lean class context manager (the reference), so that
machine load hits all alike. Measures the normal path (the body does not raise) of the GPU short
path (`_GpuContext`), the GPU general path and the host short path on the simulated driver
(build/sim/libcuda.so.1), every entry GPU-timed.

    python benchmarks/section_exit_ab.py --against REV [--rounds 21] [--n 20000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("STRAGGLER_LIBCUDA", str(REPO / "build" / "sim" / "libcuda.so.1"))
os.environ.setdefault("STRAGGLER_LIBNVML", str(REPO / "build" / "sim" / "libnvidia-ml.so.1"))

from _lean import LeanSection  # noqa: E402
from straggler import Detector  # noqa: E402
from straggler.timing import sections  # noqa: E402


def _loop(ctx, n: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with ctx:
            pass
    return (time.perf_counter_ns() - t0) / n


def _old_sections(rev: str):
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:straggler/timing/sections.py"],
                         check=True, capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("sections_before", f.name)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--against", required=True, help="the revision whose sections.py is 'before'")
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--n", type=int, default=20000)
    args = p.parse_args()
    old = _old_sections(args.against)

    Detector.initialize(telemetry=False, gpu_sample_interval=1, report_time_interval=1e9)
    host = Detector.detection_section("host", profile_cuda=False)
    gpu = Detector.detection_section("gpu", profile_cuda=True)
    with gpu:  # the first entry resolves the GPU timer and specialises the context
        pass
    assert type(gpu) is sections._GpuContext and type(host) is sections._HostContext
    old.set_gap_note(sections._gap_note)  # the old module reads its own global

    def as_class(ctx, cls, back):
        def run(n: int) -> float:
            ctx.__class__ = cls
            try:
                return _loop(ctx, n)
            finally:
                ctx.__class__ = back
        return run

    variants = {
        "lean class context manager (reference)": lambda n: _loop(LeanSection(), n),
        "host short path, before": as_class(host, old._HostContext, sections._HostContext),
        "host short path, after": lambda n: _loop(host, n),
        "GPU short path, before": as_class(gpu, old._GpuContext, sections._GpuContext),
        "GPU short path, after": lambda n: _loop(gpu, n),
        "GPU general path, before": as_class(gpu, old.SectionContext, sections._GpuContext),
        "GPU general path, after": as_class(gpu, sections.SectionContext, sections._GpuContext),
    }
    samples: dict[str, list[float]] = {k: [] for k in variants}
    for r in range(args.rounds):
        items = list(variants.items())
        for name, run in items if r % 2 == 0 else items[::-1]:  # order alternates
            samples[name].append(run(args.n))
    Detector.shutdown()
    lean = statistics.median(samples["lean class context manager (reference)"])
    print(f"{args.rounds} rounds x {args.n} entries, median ns per `with`, interleaved; before = "
          f"sections.py at {args.against}\n")
    print("| variant | ns | x lean |")
    print("|---|---:|---:|")
    for k, v in samples.items():
        print(f"| {k} | {statistics.median(v):,.0f} | {statistics.median(v) / lean:.2f} |")
    print()
    for what in ("host short path", "GPU short path", "GPU general path"):
        ratios = [a / b for a, b in zip(samples[f"{what}, after"], samples[f"{what}, before"],
                                        strict=True)]
        print(f"{what}: after / before, median of per-round ratios {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
