"""CPU cost of the C++ op observer (`straggler._ops`) per torch op, outside and inside sections.

Tiny CPU ops (`torch.add` on 8x8, `view`) on the host engine, one process, variants interleaved
(median of rounds). "callback on" is the observer enabled with no busy scope open: the callback
runs and boxes the op's inputs, then returns, which is what every op outside sections paid while
the callback stayed enabled. "disabled" is after enable()+disable(): the callback is off.
CPU figures; on a GPU host the timed path adds the engine's event calls. Run:
``.venv/bin/python benchmarks/observer_cpu.py [--ops 20000] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from straggler import _core, _ops
from straggler.timing.untimed_ops import UNTIMED_OPS


def _ns_per_op(fn, n: int) -> float:
    t0 = time.perf_counter_ns()
    fn(n)
    return (time.perf_counter_ns() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    torch.set_num_threads(1)
    a, b = torch.ones(8, 8), torch.ones(8, 8)

    def adds(n: int) -> None:
        for _ in range(n):
            torch.add(a, b)

    def views(n: int) -> None:
        for _ in range(n):
            a.view(64)

    eng = _core.TimerEngine(backend="host")
    obs = _ops.Observer(eng, per_op=False, device="cpu", stream=0, untimed=sorted(UNTIMED_OPS))
    sec = eng.timer_id("section")
    eng.set_busy(sec)

    def no_observer(fn):
        return fn

    def callback_on(fn):
        def run(n):
            obs.enable()
            try:
                fn(n)
            finally:
                obs.disable()
        return run

    def disabled(fn):
        def run(n):
            obs.enable()
            obs.disable()
            fn(n)
        return run

    def in_section(fn):
        def run(n):
            eng.start(sec, 0)
            obs.enable()
            try:
                fn(n)
            finally:
                obs.disable()
                eng.stop(sec, 0)
        return run

    variants = {
        "add, no observer": no_observer(adds),
        "add, outside sections, callback left on (before)": callback_on(adds),
        "add, outside sections, callback disabled (now)": disabled(adds),
        "add, inside a section (timed)": in_section(adds),
        "view, no observer": no_observer(views),
        "view, inside a section (seen through, not timed)": in_section(views),
    }
    samples = {k: [] for k in variants}
    for fn in variants.values():  # warm-up
        fn(min(args.ops, 1000))
    for _ in range(args.rounds):
        for name, fn in variants.items():
            samples[name].append(_ns_per_op(fn, args.ops))
            eng.reset()
    base = {"add": statistics.median(samples["add, no observer"]),
            "view": statistics.median(samples["view, no observer"])}
    print("| variant | ns per op | added ns per op |")
    print("|---|---:|---:|")
    for name, s in samples.items():
        med = statistics.median(s)
        print(f"| {name} | {med:,.0f} | {med - base[name.split(',')[0]]:+,.0f} |")
    print(f"\ncallback calls in this run: {_ops.callback_calls():,}")
    obs.remove()
    eng.close()


if __name__ == "__main__":
    main()
