"""CPU cost per torch op of the Python per-op observer (`OpCapture(native=False)`).

The fallback when the C++ observer `straggler._ops` is not built: a `TorchDispatchMode` that
makes the same engine calls per op. Tiny CPU ops (`torch.add` on 8x8: timed; `view`: seen
through, not timed) on the host engine, one process, one torch thread, variants interleaved
(median of rounds). ``--against MODULE`` times another implementation of `OpCapture` in the
same rounds (e.g. a copy of the previous ``capture.py``) and prints the paired ratio. Run:
``.venv/bin/python benchmarks/capture_fallback.py [--ops 20000] [--rounds 7] [--against M]``.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Callable

import torch

from straggler import _core
from straggler.timing import capture


def _ns_per_op(fn: Callable[[int], None], n: int) -> float:
    t0 = time.perf_counter_ns()
    fn(n)
    return (time.perf_counter_ns() - t0) / n


def _variants(module, eng, a) -> dict[str, Callable[[int], None]]:
    """Per-op loops inside a profiled section observed by ``module.OpCapture``."""
    def adds(n: int) -> None:
        for _ in range(n):
            torch.add(a, a)

    def views(n: int) -> None:
        for _ in range(n):
            a.view(64)

    def observed(fn: Callable[[int], None], per_op: bool, paused: bool = False):
        def run(n: int) -> None:
            cap = module.OpCapture(eng, lambda: 0, _raise, per_op=per_op, native=False)
            cap.push()
            if paused:
                cap.pause()
            try:
                fn(n)
            finally:
                cap.close()
        return run

    return {"add, timed, per-op timers": observed(adds, True),
            "add, timed, section only": observed(adds, False),
            "add, paused (communication section)": observed(adds, True, paused=True),
            "view, seen through (not timed)": observed(views, True)}


def _raise(exc: BaseException) -> None:
    raise exc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--against", help="module with another OpCapture to compare, paired")
    args = ap.parse_args()
    torch.set_num_threads(1)
    a = torch.ones(8, 8)
    eng = _core.TimerEngine(backend="host")
    sec = eng.timer_id("section")
    eng.set_busy(sec)
    impls = {"now": capture}
    if args.against:
        impls["against"] = importlib.import_module(args.against)
    baseline = {"add": lambda n: [torch.add(a, a) for _ in range(n)],
                "view": lambda n: [a.view(64) for _ in range(n)]}
    runs = {(impl, name): fn for impl, module in impls.items()
            for name, fn in _variants(module, eng, a).items()}
    runs.update({("none", f"{op}, no observer"): fn for op, fn in baseline.items()})
    samples: dict[tuple[str, str], list[float]] = {k: [] for k in runs}
    for fn in runs.values():  # warm-up
        fn(min(args.ops, 1000))
    for _ in range(args.rounds):
        for key, fn in runs.items():
            eng.start(sec, 0)
            samples[key].append(_ns_per_op(fn, args.ops))
            eng.stop(sec, 0)
            eng.reset()
    med = {k: statistics.median(v) for k, v in samples.items()}
    names = [name for impl, name in runs if impl == "now"]
    print("| variant | ns per op | added ns per op |"
          + (" against: ns per op | now / against |" if args.against else ""))
    print("|---|---:|---:|" + ("---:|---:|" if args.against else ""))
    for op in ("add", "view"):
        print(f"| {op}, no observer | {med[('none', f'{op}, no observer')]:,.0f} | +0 |"
              + (" | |" if args.against else ""))
    for name in names:
        base = med[("none", f"{name.split(',')[0]}, no observer")]
        now = med[("now", name)]
        row = f"| {name} | {now:,.0f} | {now - base:+,.0f} |"
        if args.against:
            old = med[("against", name)]
            row += f" {old:,.0f} | {now / old:.3f} |"
        print(row)
    eng.close()


if __name__ == "__main__":
    main()
