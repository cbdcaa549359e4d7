"""Host cost of GPU timing per section entry on a real GPU: the hot path against its floor.

Rows, in ns per entry (or pair), variants taking turns in one process (median of rounds):
- a bare loop; ``torch.cuda.Event`` record pairs (timing on and off);
- the stream lookups: ``torch.cuda.current_stream().cuda_stream`` and the raw getter the
  detector uses (``straggler.timing.gpu.stream_getter()``);
- our ``TimerEngine("cuda")`` start+stop pair on the current stream (**the floor**);
- ``Detector.detection_section(profile_cuda=True)`` around an empty body, the context held and
  looked up by name every entry, every entry GPU-timed (``gpu_sample_interval=1``; target: at
  most the engine pair + 1 µs);
- the same section at the default ``gpu_sample_interval`` (10: one entry in 10 GPU-timed, the
  others host-timed), held, in a phase of its own with the host section and the engine pair
  measured again beside it (expected: about 0.9 x host section + 0.1 x GPU section);
- the host-only section (``profile_cuda=False``) next to a lean class context manager that
  reads ``perf_counter_ns`` twice and appends to a deque (target: at most 1.5x);
- NVRx 0.5's ``detection_section`` (CUPTI) with and without ``profile_cuda``, when
  ``nvidia_resiliency_ext.attribution.straggler`` imports (a second phase, after ours is shut
  down, with the engine pair measured again as its same-phase reference);
- ``TimerEngine.harvest()`` per finished pair.

The engine pair and the GPU section rows both flush and reset the engine after each batch,
so they pay the same harvesting.

    python benchmarks/gpu/event_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from _common import (
    LeanSection,
    fmt,
    guarded,
    import_nvrx,
    interleaved_ns,
    print_header,
    require_gpu,
)

ENGINE_PAIR = "TimerEngine('cuda') start+stop pair (floor)"
SECTION_GPU_HELD = "ours: detection_section(profile_cuda=True), context held"
SECTION_GPU = "ours: detection_section('s', profile_cuda=True)"
SECTION_HOST_HELD = "ours: detection_section(profile_cuda=False), context held"
SECTION_HOST = "ours: detection_section('h', profile_cuda=False)"
SAMPLED_PHASE = ", sampling phase"
SECTION_SAMPLED = ("ours: detection_section(profile_cuda=True), context held, "
                   "gpu_sample_interval=10 (default)")
LEAN = "lean class context manager: 2x perf_counter_ns + deque.append"
NVRX_GPU = "NVRx 0.5: detection_section('n', profile_cuda=True) (CUPTI)"
NVRX_HOST = "NVRx 0.5: detection_section('m', profile_cuda=False)"


def ours(n: int, rounds: int) -> dict[str, float]:
    """Phase 1: our rows (NVRx not initialized)."""
    import torch
    from straggler import Detector, _core
    from straggler.timing.gpu import stream_getter

    stream = torch.cuda.current_stream().cuda_stream
    timed = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    untimed = [torch.cuda.Event(enable_timing=False) for _ in range(2)]
    engine = _core.TimerEngine("cuda", capacity=n)
    tid = engine.timer_id("pair")
    raw_stream = stream_getter()
    lean = LeanSection()

    def bare(k: int) -> None:
        for _ in range(k):
            pass

    def event_pair(events):
        a, b = events

        def body(k: int) -> None:
            for _ in range(k):
                a.record()
                b.record()
        return body

    def torch_stream(k: int) -> None:
        current = torch.cuda.current_stream
        for _ in range(k):
            _ = current().cuda_stream

    def our_stream(k: int) -> None:
        for _ in range(k):
            raw_stream()

    def engine_pair(k: int) -> None:
        start, stop = engine.start, engine.stop
        for _ in range(k):
            start(tid, stream)
            stop(tid, stream)
        engine.flush()
        engine.reset()

    def lean_cm(k: int) -> None:
        cm = lean
        for _ in range(k):
            with cm:
                pass

    def section_loop(name: str, profile_cuda: bool, held: bool):
        def body(k: int) -> None:
            section = Detector.detection_section
            cm = section(name, profile_cuda=profile_cuda)
            if held:
                for _ in range(k):
                    with cm:
                        pass
            else:
                for _ in range(k):
                    with section(name, profile_cuda=profile_cuda):
                        pass
            core = Detector.core()
            if profile_cuda and core is not None and core.engine is not None:
                core.engine.flush()
                core.engine.reset()
        return body

    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False,
                        timer_capacity=max(n, 1024), gpu_sample_interval=1)
    try:
        for name in ("sg", "s"):
            with Detector.detection_section(name):  # resolves the GPU timer: short path next
                pass
        variants = {
            "bare loop": bare,
            "torch.cuda.Event(enable_timing=True) record x2": event_pair(timed),
            "torch.cuda.Event(enable_timing=False) record x2": event_pair(untimed),
            "torch.cuda.current_stream().cuda_stream": torch_stream,
            "straggler stream getter (raw stream, capture check)": our_stream,
            ENGINE_PAIR: engine_pair,
            SECTION_GPU_HELD: section_loop("sg", True, True),
            SECTION_GPU: section_loop("s", True, False),
            LEAN: lean_cm,
            SECTION_HOST_HELD: section_loop("hh", False, True),
            SECTION_HOST: section_loop("h", False, False),
        }
        rows = interleaved_ns(variants, n, rounds)
    finally:
        Detector.shutdown()
    harvest = guarded("harvest", lambda: harvest_ns(engine, tid, stream, n))
    engine.close()
    if harvest is not None:
        rows["TimerEngine.harvest(), per finished pair"] = harvest
    return rows


def sampled(n: int, rounds: int) -> dict[str, float]:
    """Phase 1b: the GPU section at the default sampling, host section and engine pair beside."""
    import torch
    from straggler import Detector, _core

    stream = torch.cuda.current_stream().cuda_stream
    engine = _core.TimerEngine("cuda", capacity=n)
    tid = engine.timer_id("pair")

    def engine_pair(k: int) -> None:
        start, stop = engine.start, engine.stop
        for _ in range(k):
            start(tid, stream)
            stop(tid, stream)
        engine.flush()
        engine.reset()

    def held(name: str, profile_cuda: bool):
        def body(k: int) -> None:
            cm = Detector.detection_section(name, profile_cuda=profile_cuda)
            for _ in range(k):
                with cm:
                    pass
            core = Detector.core()
            if profile_cuda and core is not None and core.engine is not None:
                core.engine.flush()
                core.engine.reset()
        return body

    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False,
                        timer_capacity=max(n, 1024))
    try:
        with Detector.detection_section("ss"):  # resolves the GPU timer: short path next
            pass
        rows = interleaved_ns({ENGINE_PAIR + SAMPLED_PHASE: engine_pair,
                               SECTION_HOST_HELD + SAMPLED_PHASE: held("hs", False),
                               SECTION_SAMPLED: held("ss", True)}, n, rounds)
    finally:
        Detector.shutdown()
        engine.close()
    return rows


def harvest_ns(engine, tid: int, stream: int, n: int) -> float:
    """ns per pair of one harvest() after `n` pairs around tiny kernels have finished."""
    import torch

    x = torch.ones(16, device="cuda")
    engine.reset()
    for _ in range(n):
        engine.start(tid, stream)
        x.add_(1)
        engine.stop(tid, stream)
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    got = engine.harvest()
    return (time.perf_counter_ns() - t0) / max(got, 1)


def nvrx(n: int, rounds: int, nv) -> dict[str, float]:
    """Phase 2: NVRx's sections, with our engine pair again as the same-phase reference."""
    import torch
    from straggler import _core

    stream = torch.cuda.current_stream().cuda_stream
    engine = _core.TimerEngine("cuda", capacity=n)
    tid = engine.timer_id("pair")

    def engine_pair(k: int) -> None:
        start, stop = engine.start, engine.stop
        for _ in range(k):
            start(tid, stream)
            stop(tid, stream)
        engine.flush()
        engine.reset()

    def nv_section(name: str, profile_cuda: bool):
        def body(k: int) -> None:
            section = nv.Detector.detection_section
            for _ in range(k):
                with section(name, profile_cuda=profile_cuda):
                    pass
        return body

    nv.Detector.initialize(report_time_interval=3600, node_name="bench")
    try:
        rows = interleaved_ns({ENGINE_PAIR + ", NVRx phase": engine_pair,
                               NVRX_GPU: nv_section("n", True),
                               NVRX_HOST: nv_section("m", False)}, n, rounds)
    finally:
        nv.Detector.shutdown()
        engine.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (seconds)")
    args = parser.parse_args()
    require_gpu()
    logging.getLogger("straggler").setLevel(logging.ERROR)
    print_header("GPU timing cost per section entry (benchmarks/gpu/event_cost.py)")
    n, rounds = (2_000, 7) if args.quick else (20_000, 15)
    rows = guarded("our rows", lambda: ours(n, rounds), {}) or {}
    rows.update(guarded("sampled GPU section", lambda: sampled(n, rounds), {}) or {})
    nv = import_nvrx()
    nv_rows = guarded("NVRx rows", lambda: nvrx(n, rounds, nv), {}) if nv is not None else {}
    rows.update(nv_rows or {})

    base = rows.get("bare loop", 0.0)
    print(f"{n} entries per batch, median of {rounds} rounds, variants in turn.\n")
    print("| what (per entry / pair) | ns | ns above bare loop |")
    print("|---|---:|---:|")
    for name, ns in rows.items():
        print(f"| {name} | {ns:,.0f} | {ns - base:,.0f} |")

    print("\n| comparison (same run) | ratio | difference (µs) | target |")
    print("|---|---:|---:|---|")

    def compare(what: str, a: str, b: str, target: str) -> None:
        if a in rows and b in rows:
            print(f"| {what} | {rows[a] / rows[b]:.2f} | {(rows[a] - rows[b]) / 1e3:+.2f} | "
                  f"{target} |")
        else:
            print(f"| {what} | {fmt(None)} | {fmt(None)} | {target} |")

    compare("GPU section (held) / engine pair", SECTION_GPU_HELD, ENGINE_PAIR, "diff <= +1 µs")
    compare("GPU section (by name) / engine pair", SECTION_GPU, ENGINE_PAIR, "diff <= +1 µs")
    compare("host section (held) / lean context manager", SECTION_HOST_HELD, LEAN, "<= 1.5x")
    compare("host section (by name) / lean context manager", SECTION_HOST, LEAN, "<= 1.5x")
    compare("sampled GPU section (held, 1 in 10) / host section (held), sampling phase",
            SECTION_SAMPLED, SECTION_HOST_HELD + SAMPLED_PHASE,
            "~1 + 0.1 x (GPU - host) / host")
    compare("sampled GPU section (held, 1 in 10) / engine pair, sampling phase",
            SECTION_SAMPLED, ENGINE_PAIR + SAMPLED_PHASE, "well below 1")
    if nv_rows:
        compare("NVRx GPU section / our GPU section (by name)", NVRX_GPU, SECTION_GPU,
                "> 1 (ours cheaper)")
        compare("NVRx host section / our host section (by name)", NVRX_HOST, SECTION_HOST,
                "> 1 (ours cheaper)")
        compare("engine pair, NVRx phase / engine pair", ENGINE_PAIR + ", NVRx phase",
                ENGINE_PAIR, "~1 (phases comparable)")
    else:
        print("| NVRx 0.5 section | not installed | - | - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
