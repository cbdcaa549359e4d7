"""Host cost of GPU timing on a real GPU. NOT YET RUN (no GPU was available): see README.md.

Rows, in ns per timed pair (start + stop), measured in turns in one process:
- a bare loop; ``torch.cuda.Event(enable_timing=True)`` record pairs; the same with timing
  disabled (the literature's ~2.5 µs vs ~0.24 µs per record on a V100);
- our ``TimerEngine("cuda")`` start/stop (pooled events, recorded on the current stream);
- ``Detector.detection_section(profile_cuda=True)`` around an empty body;
- ``TimerEngine.harvest()`` after N pairs, per pair (event queries, never a synchronize).

    python benchmarks/gpu/event_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import sys

from _common import interleaved_ns, machine, require_gpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    require_gpu()
    import torch

    from straggler import Detector, _core

    n, rounds = (2_000, 5) if args.quick else (20_000, 11)
    stream = torch.cuda.current_stream().cuda_stream
    timed = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    untimed = [torch.cuda.Event(enable_timing=False) for _ in range(2)]
    engine = _core.TimerEngine("cuda", capacity=n)
    tid = engine.timer_id("pair")

    def bare(k: int) -> None:
        for _ in range(k):
            pass

    def torch_timed(k: int) -> None:
        a, b = timed
        for _ in range(k):
            a.record()
            b.record()

    def torch_untimed(k: int) -> None:
        a, b = untimed
        for _ in range(k):
            a.record()
            b.record()

    def ours_engine(k: int) -> None:
        start, stop = engine.start, engine.stop
        for _ in range(k):
            start(tid, stream)
            stop(tid, stream)
        engine.flush()
        engine.reset()

    def ours_section(k: int) -> None:
        section = Detector.detection_section
        for _ in range(k):
            with section("empty", profile_cuda=True):
                pass

    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False)
    try:
        rows = interleaved_ns({"bare loop": bare,
                               "torch.cuda.Event(enable_timing=True) x2": torch_timed,
                               "torch.cuda.Event(enable_timing=False) x2": torch_untimed,
                               "TimerEngine('cuda') start+stop (+flush per batch)": ours_engine,
                               "Detector.detection_section(profile_cuda=True)": ours_section},
                              n, rounds)
    finally:
        Detector.shutdown()
    # Harvest cost: record n pairs around tiny kernels, let them finish, then time harvest().
    x = torch.ones(16, device="cuda")
    for _ in range(n):
        engine.start(tid, stream)
        x.add_(1)
        engine.stop(tid, stream)
    torch.cuda.synchronize()
    import time

    t0 = time.perf_counter_ns()
    got = engine.harvest()
    harvest_ns = (time.perf_counter_ns() - t0) / max(got, 1)
    engine.close()
    print(f"## GPU timing cost ({machine()})\n")
    print("| what (per pair) | ns | ns above bare loop |")
    print("|---|---|---|")
    base = rows["bare loop"]
    for name, ns in rows.items():
        print(f"| {name} | {ns:,.0f} | {ns - base:,.0f} |")
    print(f"| TimerEngine.harvest(), per finished pair ({got} pairs) | {harvest_ns:,.0f} | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
