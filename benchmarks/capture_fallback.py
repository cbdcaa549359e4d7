"""CPU cost per torch op of the Python per-op observer (`OpCapture(native=False)`).

The fallback when the C++ observer `straggler._ops` is not built: a `TorchDispatchMode` that
makes the same engine calls per op. Tiny CPU ops (`torch.add` on 8x8: timed; `view`: seen
through, not timed) on the host engine, one process, one torch thread, variants interleaved
(median of rounds, thread CPU time). The "dispatch only" rows call the observer's
``__torch_dispatch__`` directly with a stand-in op that does nothing: the observer's own Python
cost, without torch's dispatch machinery around it (which dominates the other rows).
``--against MODULE`` times another implementation of `OpCapture` in the same rounds (e.g. a
copy of the previous ``capture.py``), each variant of the two back to back, and prints the
median of the per-round ratios. Run:
``.venv/bin/python benchmarks/capture_fallback.py [--ops 20000] [--rounds 7] [--against M]``.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import types
from collections.abc import Callable

import torch
from straggler import _core
from straggler.timing import capture


def _ns_per_op(fn: Callable[[int], None], n: int) -> float:
    # CPU time of this thread, not wall time: on a shared machine the time the thread waits for
    # a core is not the observer's cost (the loop is single-threaded, torch has one thread).
    t0 = time.thread_time_ns()
    fn(n)
    return (time.thread_time_ns() - t0) / n


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

    def dispatch_only(op: _NoOp, per_op: bool) -> Callable[[int], None]:
        def run(n: int) -> None:
            cap = module.OpCapture(eng, lambda: 0, _raise, per_op=per_op, native=False)
            mode = module._Mode(cap)
            call, args = mode.__torch_dispatch__, (a, a)
            for _ in range(n):
                call(op, (), args, None)
        return run

    return {"dispatch only, timed, per-op timers": dispatch_only(_NoOp("add", False), True),
            "dispatch only, timed, section only": dispatch_only(_NoOp("add", False), False),
            "dispatch only, view (not timed)": dispatch_only(_NoOp("view", True), True),
            "add, timed, per-op timers": observed(adds, True),
            "add, timed, section only": observed(adds, False),
            "add, paused (communication section)": observed(adds, True, paused=True),
            "view, seen through (not timed)": observed(views, True)}


class _NoOp:
    """Stands for an aten OpOverload (the attributes the observer reads) and does nothing."""

    namespace = "aten"

    def __init__(self, name: str, is_view: bool) -> None:
        self.is_view = is_view
        self._schema = types.SimpleNamespace(name=f"aten::{name}")
        self._name = f"aten.{name}.default"

    def __call__(self, *args: object, **kwargs: object) -> None:
        return None

    def __str__(self) -> str:
        return self._name


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
    variants = {impl: _variants(module, eng, a) for impl, module in impls.items()}
    # Each variant of the two implementations back to back, so a pair sees the same load.
    runs = {(impl, name): variants[impl][name] for name in variants["now"] for impl in impls}
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
        base = med.get(("none", f"{name.split(',')[0]}, no observer"), 0.0)
        now = med[("now", name)]
        row = f"| {name} | {now:,.0f} | {now - base:+,.0f} |"
        if args.against:
            old = med[("against", name)]
            ratios = [x / y for x, y in zip(samples[("now", name)], samples[("against", name)],
                                            strict=True)]
            row += f" {old:,.0f} | {statistics.median(ratios):.3f} |"
        print(row)
    eng.close()


if __name__ == "__main__":
    main()
