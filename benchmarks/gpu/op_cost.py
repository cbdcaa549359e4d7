"""Host cost per timed op of per-op capture, against an aten add launch and the engine pair.

Rows, in ns per op (median of rounds, variants in turn, one process): a tiny ``x.add_(1)`` on
the GPU launched alone (the op's own cost); the same under a no-op ``TorchDispatchMode`` (the
floor of any Python dispatch hook); the same inside a ``detection_section`` with
``per_op_capture=True`` (every add timed); our ``TimerEngine("cuda")`` start+stop pair alone.
Target (issue #10): per-op capture adds at most the engine pair + 2 µs per timed op.

    python benchmarks/gpu/op_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import sys

from _common import fmt, interleaved_ns, print_header, require_gpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (seconds)")
    args = parser.parse_args()
    require_gpu()
    import torch
    from straggler import Detector, _core
    from torch.utils._python_dispatch import TorchDispatchMode

    logging.getLogger("straggler").setLevel(logging.WARNING)
    print_header("Per-op capture cost per timed op (benchmarks/gpu/op_cost.py)")
    n, rounds = (1_000, 7) if args.quick else (5_000, 15)
    x = torch.zeros(16, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    engine = _core.TimerEngine("cuda", capacity=n)
    tid = engine.timer_id("pair")

    class NoOp(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    def adds(k: int) -> None:
        for _ in range(k):
            x.add_(1)
        torch.cuda.synchronize()  # every variant drains its launches before the clock stops

    def noop_mode(k: int) -> None:
        with NoOp():
            adds(k)

    def per_op(k: int) -> None:
        with Detector.detection_section("ops"):
            adds(k)
        core = Detector.core()
        if core is not None and core.engine is not None:
            core.engine.flush()
            core.engine.reset()

    def engine_pair(k: int) -> None:
        start, stop = engine.start, engine.stop
        for _ in range(k):
            start(tid, stream)
            stop(tid, stream)
        torch.cuda.synchronize()
        engine.flush()
        engine.reset()

    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False,
                        per_op_capture=True, timer_capacity=max(n, 1024))
    try:
        per_op(16)  # warm-up: capture installed, timer created
        rows = interleaved_ns({"x.add_(1) launch alone": adds,
                               "x.add_(1) under a no-op TorchDispatchMode": noop_mode,
                               "x.add_(1) timed by per-op capture": per_op,
                               "TimerEngine('cuda') start+stop pair": engine_pair}, n, rounds)
        core = Detector.core()
        timed = len(core.capture.timer_names) if core is not None and core.capture else 0
    finally:
        Detector.shutdown()
        engine.close()
    print(f"{n} ops per batch, median of {rounds} rounds, variants in turn; per-op timers "
          f"created: {timed} (one per op key).\n")
    print("| what (per op) | ns | ns above the launch alone |")
    print("|---|---:|---:|")
    launch = rows.get("x.add_(1) launch alone")
    for name, ns in rows.items():
        above = fmt(ns - launch, ",.0f") if launch is not None else fmt(None)
        print(f"| {name} | {ns:,.0f} | {above} |")
    added = (rows["x.add_(1) timed by per-op capture"] - launch
             if launch is not None and "x.add_(1) timed by per-op capture" in rows else None)
    pair = rows.get("TimerEngine('cuda') start+stop pair")
    print("\n| comparison (same run) | µs | target |")
    print("|---|---:|---|")
    print(f"| per-op capture, added per timed op | {fmt(added and added / 1e3, '.2f')} | "
          f"<= engine pair + 2 µs |")
    print(f"| engine pair | {fmt(pair and pair / 1e3, '.2f')} | - |")
    diff = added - pair if added is not None and pair is not None else None
    print(f"| added per op - engine pair | {fmt(diff and diff / 1e3, '+.2f')} | <= +2 µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
