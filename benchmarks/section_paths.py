"""Paired A/B of a section's specialised short paths against its general path (issue #24 item 5).

`timing/sections.py` switches each held context's class to a short path (`_HostContext`,
`_GpuContext`) when the detector is enabled, has no hooks and profiles
every entry, and to the general `SectionContext` otherwise. This measures, in one process and
interleaved (rounds alternate the variants, so machine load hits all alike), the ns per
``with`` of:

- a lean class context manager (the reference, `_lean.LeanSection`);
- a host-only section (profile_cuda=False), held: its short path, then forced onto the general
  path (the same object, class switched as the detector does);
- a GPU section on the simulated driver (build/sim/libcuda.so.1), every entry GPU-timed
  (``gpu_sample_interval=1``), held: its short path and the general path. The simulated event
  calls cost what the simulator costs, not what a GPU costs: the *difference* between the two
  rows is the Python the short path saves;
- both short paths without the note to the collective observer at each exit (the own time
  outside the sections, docs/culprits.md): the build before it, paired with the one after in
  the same rounds. The observer has an open gap here (a 2-rank bench collective finished).

    python benchmarks/section_paths.py [--rounds 15] [--n 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
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
from straggler.timing.sections import SectionContext  # noqa: E402


def _loop(ctx, n: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(n):
        with ctx:
            pass
    return (time.perf_counter_ns() - t0) / n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--n", type=int, default=20000)
    args = p.parse_args()

    Detector.initialize(telemetry=False, gpu_sample_interval=1, report_time_interval=1e9)
    host = Detector.detection_section("host", profile_cuda=False)
    gpu = Detector.detection_section("gpu", profile_cuda=True)
    with gpu:  # the first entry resolves the GPU timer and specialises the context
        pass
    fast_host, fast_gpu = type(host), type(gpu)
    assert fast_host is not SectionContext and fast_gpu is not SectionContext, (fast_host,
                                                                              fast_gpu)

    def general(ctx, short):
        def run(n: int) -> float:
            ctx.__class__ = SectionContext
            try:
                return _loop(ctx, n)
            finally:
                ctx.__class__ = short
        return run

    note = sections._gap_note
    assert note is not None, "the collective observer is not on"

    def without_note(ctx):
        def run(n: int) -> float:
            sections.set_gap_note(None)
            try:
                return _loop(ctx, n)
            finally:
                sections.set_gap_note(note)
        return run

    from straggler import _ops
    _ops.collectives_bench(1, True)  # a 2-rank bench collective: the observer's gap is open

    variants = {
        "lean class context manager (reference)": lambda n: _loop(LeanSection(), n),
        f"host section, short path ({fast_host.__name__})": lambda n: _loop(host, n),
        "host section, short path, no note to the observer (before)": without_note(host),
        "host section, general path (SectionContext)": general(host, fast_host),
        f"GPU section (sim), short path ({fast_gpu.__name__})": lambda n: _loop(gpu, n),
        "GPU section (sim), short path, no note to the observer (before)": without_note(gpu),
        "GPU section (sim), general path (SectionContext)": general(gpu, fast_gpu),
    }
    samples: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.rounds):
        for name, run in variants.items():
            samples[name].append(run(args.n))
    Detector.shutdown()
    lean = statistics.median(samples["lean class context manager (reference)"])
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"{args.rounds} rounds x {args.n} entries, median ns per `with`, interleaved\n")
    print("| variant | ns | x lean |")
    print("|---|---|---|")
    for k, v in med.items():
        print(f"| {k} | {v:,.0f} | {v / lean:.2f} |")
    host_pairs = [g / s for g, s in zip(samples["host section, general path (SectionContext)"],
                                        samples[f"host section, short path ({fast_host.__name__})"],
                                        strict=True)]
    gpu_pairs = [g / s for g, s in zip(
        samples["GPU section (sim), general path (SectionContext)"],
        samples[f"GPU section (sim), short path ({fast_gpu.__name__})"], strict=True)]
    print(f"\ngeneral / short, median of per-round ratios: host "
          f"{statistics.median(host_pairs):.2f}, GPU (sim) {statistics.median(gpu_pairs):.2f}")
    for kind, short in (("host", f"host section, short path ({fast_host.__name__})"),
                        ("GPU (sim)", f"GPU section (sim), short path ({fast_gpu.__name__})")):
        before = next(k for k in samples if k.startswith(short.split(" (")[0])
                      and k.endswith("(before)"))
        pairs = [a - b for a, b in zip(samples[short], samples[before], strict=True)]
        ratios = [a / b for a, b in zip(samples[short], samples[before], strict=True)]
        print(f"with / without the note to the observer, {kind}: median of per-round ratios "
              f"{statistics.median(ratios):.3f}, of differences {statistics.median(pairs):+.0f} ns")


if __name__ == "__main__":
    main()
