"""Step-time overhead on a small GPT-style model: no detector, our sections, per-op capture, NVRx.

A decoder-only transformer built from torch.nn (token and position embeddings, pre-LayerNorm
blocks of causal self-attention through ``F.scaled_dot_product_attention`` and a GELU MLP, a
tied-free LM head), bf16 autocast, AdamW. One training step is forward, cross-entropy,
backward and ``optimizer.step()``; the script counts its aten ops once (a counting
``TorchDispatchMode``) and prints the count (the issue asks for >= 1,000).

Configurations, in rounds (the order rotates each round, so drift hits all alike); each step
is timed from its start to ``torch.cuda.synchronize()``; medians over every timed step:
- no detector (the baseline of the same run);
- ours, sections only: the step inside one ``detection_section("step")`` (GPU timing on), at
  the default ``gpu_sample_interval`` (one step in 10 GPU-timed: engine pair and busy-time op
  observer; the others host-timed) and at ``gpu_sample_interval=1`` (every step GPU-timed);
- ours, per-op capture: ``per_op_capture=True``, every compute op of every step timed;
- NVRx 0.5 (CUPTI): the step inside its ``detection_section("step", profile_cuda=True)``,
  when ``nvidia_resiliency_ext.attribution.straggler`` imports.

Two tables: a device-bound size (the GPU is the bottleneck) and a host-bound one (batch 1,
short sequence: the host launches ops as fast as it can, so host overhead shows first). Per-op
µs = (per-op step - baseline step) / timed ops per step (from the detector's own report).
``--quick`` (about 30 s on an H100): both tables, fewer steps per round and as many rounds as
fit a time budget per table (at least 3).

    python benchmarks/gpu/gpt_step.py [--quick]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _common import fmt, guarded, import_nvrx, print_header, require_gpu

SECTIONS = "ours: sections only (gpu_sample_interval=10, default)"
SECTIONS_EVERY = "ours: sections only, gpu_sample_interval=1 (every step GPU-timed)"
PER_OP = "ours: per-op capture"
TARGETS = {SECTIONS: "<= 0.3 %", PER_OP: "<= 3 %"}


def build_model(vocab: int, d: int, heads: int, layers: int, seq: int):
    """The GPT-style model (fp32 parameters on the GPU; run under bf16 autocast)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (y.view(b, t, heads, d // heads).transpose(1, 2) for y in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT().to("cuda")


class Workload:
    """One model, optimizer and batch; `step()` is one training step."""

    def __init__(self, vocab: int, d: int, heads: int, layers: int, batch: int, seq: int) -> None:
        import torch

        self.torch = torch
        self.model = build_model(vocab, d, heads, layers, seq)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.idx = torch.randint(0, vocab, (batch, seq), device="cuda")
        self.target = torch.randint(0, vocab, (batch, seq), device="cuda")
        self.device_type = self.idx.device.type
        self.vocab = vocab

    def step(self) -> None:
        torch = self.torch
        with torch.autocast(device_type=self.device_type, dtype=torch.bfloat16):
            logits = self.model(self.idx)
            loss = torch.nn.functional.cross_entropy(logits.view(-1, self.vocab).float(),
                                                     self.target.view(-1))
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def count_ops(self) -> int:
        """aten ops one step dispatches (forward, backward, optimizer)."""
        from torch.utils._python_dispatch import TorchDispatchMode

        class Count(TorchDispatchMode):
            n = 0

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                Count.n += 1
                return func(*args, **(kwargs or {}))

        with Count():
            self.step()
        self.torch.cuda.synchronize()
        return Count.n


class Config:
    """A configuration: set up, the step context, tear down."""

    def __init__(self, name: str, setup: Callable[[], Any], section: Callable[[], Any],
                 teardown: Callable[[], None]) -> None:
        self.name, self.setup, self.section, self.teardown = name, setup, section, teardown


def configs(nv: Any) -> list[Config]:
    """The configurations of the tables; NVRx's only when it imported."""
    import contextlib

    from straggler import Detector

    def ours(per_op: bool, **options: Any) -> Callable[[], None]:
        return lambda: Detector.initialize(report_time_interval=3600, node_name="bench",
                                           telemetry=False, per_op_capture=per_op, **options)

    def step() -> Any:
        return Detector.detection_section("step")

    out = [Config("no detector", lambda: None, contextlib.nullcontext, lambda: None),
           Config(SECTIONS, ours(False), step, Detector.shutdown),
           Config(SECTIONS_EVERY, ours(False, gpu_sample_interval=1), step, Detector.shutdown),
           Config(PER_OP, ours(True), step, Detector.shutdown)]
    if nv is not None:
        out.append(Config("NVRx 0.5: sections (CUPTI)",
                          lambda: nv.Detector.initialize(report_time_interval=3600,
                                                         node_name="bench"),
                          lambda: nv.Detector.detection_section("step", profile_cuda=True),
                          nv.Detector.shutdown))
    return out


def timed_ops_per_step() -> float:
    """Ops the detector timed per step in the window so far (per-op capture), from its report."""
    from straggler import Detector, Statistic

    report = Detector.generate_report()
    if report is None:
        return float("nan")
    steps = report.local_section_summaries["step"][Statistic.NUM]
    return sum(s[Statistic.NUM] for s in report.local_kernel_summaries.values()) / steps


def measure(work: Workload, cfgs: list[Config], rounds: int, steps: int,
            budget_s: float | None = None) -> tuple[dict[str, list[float]], float, int]:
    """Step times (ms) per configuration, timed ops per step (per-op) and the rounds run.

    With ``budget_s``, no round starts once that many seconds have passed (at least 3 run).
    """
    torch = work.torch
    times: dict[str, list[float]] = {c.name: [] for c in cfgs}
    live = list(cfgs)
    timed_ops = float("nan")
    start = time.perf_counter()
    done = 0
    for r in range(rounds):
        if budget_s is not None and r >= 3 and time.perf_counter() - start > budget_s:
            break
        done += 1
        order = live[r % len(live):] + live[:r % len(live)]
        for cfg in order:
            try:
                cfg.setup()
                try:
                    for _ in range(2):  # warm-up: timers, caches, first-use costs
                        with cfg.section():
                            work.step()
                    torch.cuda.synchronize()
                    for _ in range(steps):
                        t0 = time.perf_counter()
                        with cfg.section():
                            work.step()
                        torch.cuda.synchronize()
                        times[cfg.name].append((time.perf_counter() - t0) * 1e3)
                    if cfg.name == PER_OP:
                        timed_ops = timed_ops_per_step()
                finally:
                    cfg.teardown()
            except Exception as exc:  # noqa: BLE001 - one configuration failing: an error row
                print(f"\n**error in {cfg.name}**: `{type(exc).__name__}: {exc}`\n", flush=True)
                live.remove(cfg)
                times[cfg.name] = []
    return times, timed_ops, done


def table(title: str, work: Workload, cfgs: list[Config], rounds: int, steps: int,
          budget_s: float | None = None) -> None:
    """Measure one size and print its table."""
    times, timed_ops, done = measure(work, cfgs, rounds, steps, budget_s)
    base = statistics.median(times["no detector"]) if times["no detector"] else None
    print(f"### {title}\n")
    print(f"{done} rounds x {steps} steps per configuration (order rotating each round), "
          f"medians of synchronized steps; timed ops per step with per-op capture: "
          f"{fmt(timed_ops, ',.0f')}.\n")
    print("| configuration | step ms (median) | overhead vs no detector | per timed op (µs) | "
          "target |")
    print("|---|---:|---:|---:|---|")
    for cfg in cfgs:
        t = times.get(cfg.name) or []
        med = statistics.median(t) if t else None
        pct = (med - base) / base * 100 if med is not None and base else None
        per_op = None
        if cfg.name == PER_OP and med is not None and base and timed_ops > 0:
            per_op = (med - base) * 1e3 / timed_ops
        print(f"| {cfg.name} | {fmt(med, '.3f')} | "
              f"{'-' if cfg.name == 'no detector' else fmt(pct, '+.2f') + ' %'} | "
              f"{fmt(per_op, '.2f') if cfg.name == PER_OP else '-'} | "
              f"{TARGETS.get(cfg.name, '-')} |", flush=True)
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and steps")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--sizes", choices=("both", "device-bound", "host-bound"),
                        default="both", help="which table(s) to run")
    args = parser.parse_args()
    if args.layers < 1:
        parser.error(f"`layers={args.layers}` must be positive")
    require_gpu()
    logging.getLogger("straggler").setLevel(logging.WARNING)
    print_header("Step overhead on a GPT-style model (benchmarks/gpu/gpt_step.py)")
    # --quick: the whole script in ~30 s on an H100 (gpu_check caps each script at ~50 s):
    # 6 steps a round, as many rounds as fit 12 s (device-bound) and 6 s (host-bound).
    rounds, steps = (12, 6) if args.quick else (7, 25)
    budgets = {"device-bound": 12.0, "host-bound": 6.0} if args.quick else {}
    nv = import_nvrx()
    cfgs = configs(nv)
    sizes = [("device-bound: d=1024, 16 heads, batch 16, seq 1024, vocab 8192",
              dict(vocab=8192, d=1024, heads=16, layers=args.layers, batch=16, seq=1024)),
             ("host-bound: d=256, 4 heads, batch 1, seq 64, vocab 1024",
              dict(vocab=1024, d=256, heads=4, layers=args.layers, batch=1, seq=64))]
    for title, size in sizes:
        if args.sizes != "both" and not title.startswith(args.sizes):
            continue
        def run(title=title, size=size) -> None:
            work = Workload(**size)
            for _ in range(3):
                work.step()
            n_ops = work.count_ops()
            print(f"{title}, {args.layers} layers, bf16 autocast, AdamW: **{n_ops:,} aten ops "
                  f"per training step** (forward, backward, optimizer)"
                  f"{'' if n_ops >= 1000 else ' (below 1,000: raise --layers)'}.\n", flush=True)
            table(title, work, cfgs, rounds, steps, budgets.get(title.split(":")[0]))
        guarded(title, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
