"""Demo: 4 CPU ranks train a small model with DDP on gloo; one rank is slowed on purpose.

    python examples/demo.py                      # rank 2 runs its forward pass 3x slower
    python examples/demo.py --slowdown 1.0       # nobody is slowed: "stragglers: none"
    python examples/demo.py --gpu                # real GPUs: rank 2 does 3x the forward's work
    python examples/demo.py --gpu --gpu-slow host  # real GPUs: rank 2's host stalls instead

The script spawns its ranks itself (no torchrun needed). Each rank trains an MLP with
DistributedDataParallel on synthetic data and wraps its step in detection sections:

- ``forward``: the forward pass and the loss (pure compute, no communication);
- ``backward``: autograd plus DDP's gradient all-reduce. It is declared
  ``kind="communication"``: the all-reduce makes every rank wait for the slowest one, so its
  duration is longest on the ranks that are *not* slow. It is never timed or scored;
- ``optimizer``: the parameter update (compute).

How the slowdown is injected: inside ``forward`` the slow rank measures its own forward compute
time t and then sleeps ``(slowdown - 1) * t``, so its forward takes ``slowdown`` times as
long as its own compute would (like a GPU clocked down by that factor). Because the all-reduce
evens out the whole step, only sections that exclude communication can see this.

Output: ``injected straggler: rank R`` (or ``none``), each report as a table, then for each
confirmed straggler its cause (``Report.format_causes()``: node, label, evidence), then the
verdict, one line ``stragglers: rank R (node N): CAUSE, ...`` naming the ranks the policy has
confirmed at the last report (``Report.confirmed``: enough evidence over successive reports
against the peers, beyond the job's noise; docs/policy.md), each with the cause most of its
reports gave, or
``stragglers: none``. One report flagging a rank (a score below ``--threshold``, starred in the
table) is not a verdict: ranks sharing a GPU dip each other's scores now and then.

``--simulated-gpu {thermal,power,clocks,healthy}`` shows the GPU half on a CPU machine, with the
test doubles ``make sim`` builds (build/sim/libcuda.so.1, build/sim/libnvidia-ml.so.1). Each
rank gets its own simulated GPU (``SIMCUDA_VISIBLE_DEVICES``) and simulated NVML, and enqueues
simulated GPU work (``simcuda_enqueue`` on stream 0) in ``forward`` and ``optimizer`` and waits
for it after each, as a real step waits for its GPU. Instead of sleeping, the slow rank's
simulated GPU runs ``--slowdown`` times slower (``SIMCUDA_SLOWDOWN``) and its simulated NVML
reports the matching evidence (``SIMNVML_SCENARIO``): thermal throttling, a power cap, low clocks
with no reason, or healthy telemetry. The reports then carry GPU scores and the cause
straggler.analysis.causes computes (``gpu_thermal_throttling``, ``gpu_power_capping``,
``gpu_clocks_low``, ``gpu_slow_healthy_telemetry``). The output says that the GPU and NVML are
simulated.

``--gpu`` runs the ranks on real GPUs: one GPU per rank (NCCL) when there are enough, else the
ranks share them (rank modulo the GPU count, gloo, since NCCL takes one rank per GPU). The model
is wider (``--hidden 2048 --batch 4096`` unless given) so each step is GPU work, the report uses
the real driver and NVML, and the health probe runs on suspects (``probe_suspects``). Each step
also loads its next batch on the host (``data``: a 2 ms stand-in, while the GPU computes the
forward). The slow rank is made by ``--gpu-slow``:

- ``work`` (default): its forward pass runs ``--slowdown`` times over (the extra passes without
  gradients): more GPU work, on a healthy GPU. Expected cause: ``more_work`` (the probe finds its
  GPU as fast as the others'); ``gpu_slow_healthy_telemetry`` where the probe is inconclusive;
- ``host``: its ``data`` section takes ``--slowdown`` times as long (a host-side stall: slow data
  loading), its GPU work is the same. Expected cause: ``host_side`` (also where ranks share a GPU
  and time-slicing dips the stalled rank's GPU score: its host section is far slower still).

The demo runs until it has its verdict, not for a fixed number of steps, so it names its
straggler on a fast GPU node and on a loaded laptop alike: it stops at the report that confirms a
rank, or, with nobody confirmed, once ``CLEAN_REPORTS`` reports have come and the last
``QUIET_REPORTS`` had no suspect (a rank that looks slow but is not confirmed yet; the detector
then reports early to settle it). Rank 0 decides after each report and the ranks agree each step
(a broadcast on a gloo group of its own, described ``demo-stop`` in the culprit line, outside
the sections). ``--duration S`` caps the training time (default 120 s) and ``--steps`` the
steps.

The first line after ``injected straggler`` names the GPUs and versions (GPU, driver, CUDA, torch).
In the CPU and simulated modes the real GPUs, if any, are hidden from the ranks
(``CUDA_VISIBLE_DEVICES=""``): those ranks are CPU ranks, and the simulated driver must not be
handed a real CUDA torch's streams.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import os
import socket
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIM_DIR = Path(__file__).resolve().parents[1] / "build" / "sim"
SIM_LIBCUDA, SIM_LIBNVML = SIM_DIR / "libcuda.so.1", SIM_DIR / "libnvidia-ml.so.1"
# What the slow rank's simulated NVML reports per --simulated-gpu mode (keys: the header of
# tests/sim/sim_nvml.cpp; reasons: nvmlClocksEventReason bits SW_THERMAL 0x20 | HW_THERMAL 0x40,
# SW_POWER_CAP 0x4). The healthy ranks, and "healthy", report a healthy H100 at full load.
SIM_SCENARIOS = {
    "thermal": "reasons=0x60;thermal_violation_frac=0.6;gpu_temp=92;sm_clock=1300",
    "power": "reasons=0x4;power_violation_frac=0.7;power_w=700;sm_clock=1500",
    "clocks": "sm_clock=700",
    "healthy": "",
}
# Simulated GPU work per step, before the slowdown: more than the host's own compute in the
# section, so the section's GPU time is the simulated work (the sections' CUDA events record when
# the stream is done or, if it is idle, the current time).
SIM_GPU_MS = {"forward": 5.0, "optimizer": 2.0}
# --gpu: the host's stand-in for loading the next batch, per step (the slow rank's x --slowdown
# with --gpu-slow host); the model's size unless --hidden / --batch say otherwise.
GPU_DATA_S = 0.002
GPU_HIDDEN, GPU_BATCH = 2048, 4096
CPU_HIDDEN, CPU_BATCH = 256, 64
# Without a confirmed rank the demo stops after this many reports, the last QUIET_REPORTS of them
# without a suspect; with one, at the report that confirms it.
CLEAN_REPORTS, QUIET_REPORTS = 6, 3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world-size", type=int, default=4, help="number of CPU ranks (default 4)")
    p.add_argument("--slow-rank", type=int, default=2, help="rank to slow down (default 2)")
    p.add_argument("--slowdown", type=float, default=3.0,
                   help="factor on the slow rank's forward time; 1.0 = no straggler (default 3)")
    p.add_argument("--steps", type=int, default=1_000_000,
                   help="training steps at most (default: until the verdict)")
    p.add_argument("--duration", type=float, default=120.0, metavar="S",
                   help="stop after S seconds of training at most (default 120; the demo "
                        "stops at its verdict, usually far sooner)")
    p.add_argument("--report-interval", type=float, default=2.0,
                   help="seconds between reports (Detector report_time_interval, default 2)")
    p.add_argument("--threshold", type=float, default=0.75,
                   help="score below which a rank is flagged (default 0.75, as NVRx)")
    p.add_argument("--hidden", type=int, default=None,
                   help=f"MLP width (default {CPU_HIDDEN}; {GPU_HIDDEN} with --gpu)")
    p.add_argument("--batch", type=int, default=None,
                   help=f"batch size per rank (default {CPU_BATCH}; {GPU_BATCH} with --gpu)")
    p.add_argument("--gpu", action="store_true",
                   help="REAL GPUs: one per rank when there are enough, else shared")
    p.add_argument("--gpu-slow", choices=("work", "host"), default="work",
                   help="with --gpu, how the slow rank is slow: extra GPU work (default) or a "
                        "host-side stall")
    p.add_argument("--simulated-gpu", choices=sorted(SIM_SCENARIOS), default=None,
                   help="SIMULATED GPUs and NVML (make sim): the slow rank's GPU is --slowdown "
                        "times slower and its NVML shows this evidence")
    p.add_argument("--report-log", default=None, metavar="PATH",
                   help="write the report log (one JSON line per report) to PATH, replacing "
                        "it; read it with `straggler summarize PATH` or `straggler plot`")
    args = p.parse_args(argv)
    if args.world_size < 2:
        p.error(f"--world-size={args.world_size} must be at least 2")
    if not 0 <= args.slow_rank < args.world_size:
        p.error(f"--slow-rank={args.slow_rank} must be in [0, {args.world_size})")
    if args.slowdown < 1.0:
        p.error(f"--slowdown={args.slowdown} must be >= 1.0")
    if args.steps < 20:
        p.error(f"--steps={args.steps} must be at least 20 (the interval is measured first)")
    if args.duration is not None and not args.duration > 0:
        p.error(f"--duration={args.duration} must be positive")
    if not 0 < args.threshold <= 1:
        p.error(f"--threshold={args.threshold} must be in (0, 1]")
    if not 0 <= args.report_interval < float("inf"):
        p.error(f"--report-interval={args.report_interval} must be a finite number of seconds "
                ">= 0")
    for name in ("hidden", "batch"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name}={getattr(args, name)} must be a positive integer")
    if args.gpu and args.simulated_gpu:
        p.error(f"--gpu and --simulated-gpu={args.simulated_gpu} exclude each other")
    if args.gpu and not torch.cuda.is_available():
        p.error("--gpu needs an NVIDIA GPU: torch.cuda.is_available() is False "
                f"(torch {torch.__version__})")
    args.hidden = args.hidden or (GPU_HIDDEN if args.gpu else CPU_HIDDEN)
    args.batch = args.batch or (GPU_BATCH if args.gpu else CPU_BATCH)
    if args.simulated_gpu and not (SIM_LIBCUDA.exists() and SIM_LIBNVML.exists()):
        p.error(f"--simulated-gpu={args.simulated_gpu} needs {SIM_LIBCUDA} and {SIM_LIBNVML}: "
                "run `make sim` (or `make demo`) first")
    return args


class SimulatedGpu:
    """One rank's simulated GPU (build/sim/libcuda.so.1, the library the engine loads too).

    `launch(ms)` enqueues ``ms`` (times SIMCUDA_SLOWDOWN) of work on the default stream and
    returns at once, as a kernel launch does; `wait()` blocks until the stream is done, as a real
    step blocks on its GPU (``loss.backward()``, ``loss.item()``).
    """

    def __init__(self) -> None:
        lib = ctypes.CDLL(str(SIM_LIBCUDA))
        lib.simcuda_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_double]
        ctx, self._event = ctypes.c_void_p(), ctypes.c_void_p()
        for rc in (lambda: lib.cuInit(0),
                   lambda: lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0),
                   lambda: lib.cuCtxSetCurrent(ctx),
                   lambda: lib.cuEventCreate(ctypes.byref(self._event), 2)):  # DISABLE_TIMING
            if rc() != 0:
                raise RuntimeError(f"the simulated CUDA driver {SIM_LIBCUDA} failed to start")
        self._lib = lib

    def launch(self, ms: float) -> None:
        """Queue ``ms`` of simulated GPU work on stream 0, reported to the detector's engine as
        one op (as straggler._ops reports a real kernel-launching op), so it is busy time."""
        from straggler import Detector

        core = Detector.core()
        engine = core.engine if core is not None else None
        token = engine.op_begin(0) if engine is not None else -1
        self._lib.simcuda_enqueue(None, ms)
        if engine is not None:
            engine.op_end(token, -1, 0)

    def wait(self) -> None:
        """Block until the work queued on stream 0 is done."""
        self._lib.cuEventRecord(self._event, None)
        self._lib.cuEventSynchronize(self._event)


def simulated_gpu_env(rank: int, args: argparse.Namespace) -> None:
    """Point this rank at the simulated libraries, its own GPU and (slow rank) its scenario."""
    slow = rank == args.slow_rank and args.slowdown > 1.0
    os.environ.update({
        "STRAGGLER_LIBCUDA": str(SIM_LIBCUDA), "STRAGGLER_LIBNVML": str(SIM_LIBNVML),
        "SIMCUDA_DEVICE_COUNT": str(args.world_size), "SIMCUDA_VISIBLE_DEVICES": str(rank),
        "SIMCUDA_SLOWDOWN": f"{args.slowdown:g}" if slow else "1",
        "SIMNVML_SCENARIO": SIM_SCENARIOS[args.simulated_gpu] if slow else ""})


def gpu_placement(world_size: int) -> tuple:
    """(GPU count, process-group backend): NCCL with a GPU per rank, gloo when ranks share."""
    gpus = torch.cuda.device_count()
    return gpus, ("nccl" if gpus >= world_size else "gloo")


def train(rank: int, args: argparse.Namespace, port: int) -> None:
    torch.set_num_threads(1)
    backend, device = "gloo", torch.device("cpu")
    if args.gpu:  # before the process group: NCCL binds the current device
        gpus, backend = gpu_placement(args.world_size)
        device = torch.device("cuda", rank % gpus)
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=args.world_size,
                            timeout=datetime.timedelta(seconds=60))
    sim = None
    if args.simulated_gpu:  # before straggler loads the driver and NVML: they read it once
        simulated_gpu_env(rank, args)
        sim = SimulatedGpu()
    from straggler import Detector
    from straggler.telemetry import TelemetryOptions
    from straggler.telemetry.options import MIN_PERIOD_S

    is_slow = rank == args.slow_rank and args.slowdown > 1.0
    slow = is_slow and sim is None and not args.gpu  # the CPU mode's injected sleep
    extra_passes = max(1, round(args.slowdown - 1.0)) if is_slow and args.gpu \
        and args.gpu_slow == "work" else 0
    data_s = GPU_DATA_S * (args.slowdown if is_slow and args.gpu_slow == "host" else 1.0)
    # GPU timers on a GPU (real or simulated); on a CPU-only machine host time, and no warning.
    gpu = args.gpu or sim is not None
    # Several NVML samples per report (the default period is 1 s).
    period_s = min(1.0, max(MIN_PERIOD_S, args.report_interval / 10))
    if sim is not None:
        telemetry = TelemetryOptions(period_s=period_s)
    elif args.gpu:  # a slow GPU with healthy telemetry: the probe tells more work from a bad board
        telemetry = TelemetryOptions(period_s=period_s, probe_suspects=True)
    else:
        telemetry = True
    # gpu_sample_interval=1: GPU-time every step. The demo's windows hold a few dozen steps,
    # too few for the default sampling (1 in 10) to give steady GPU scores.
    Detector.initialize(report_time_interval=args.report_interval, comm_timeout_s=60.0,
                        telemetry=telemetry, report_log=args.report_log, gpu_sample_interval=1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10)).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[device] if args.gpu else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.hidden, generator=gen).to(device)
    y = torch.randint(0, 10, (args.batch,), generator=gen).to(device)

    # Rank 0 decides when to stop (the verdict is in, or --duration is up), broadcast on a gloo
    # group each step (outside the sections) so every rank runs the same number of DDP steps.
    # The ranks do wait for a straggler there, so its waits count; the description names the
    # group in the culprit line (`demo-stop [ranks ...]`, not an anonymous `ranks ...`).
    stop_group = dist.new_group(backend="gloo", group_desc="demo-stop")
    stop = torch.zeros(1)
    start = time.monotonic()
    reports = []
    for _ in range(args.steps):
        with Detector.detection_section("forward", profile_cuda=gpu):
            if sim is not None:  # its kernels run while the host goes on (the slow rank's slower)
                sim.launch(SIM_GPU_MS["forward"])
            t0 = time.perf_counter()
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            if slow:  # the injected slowdown: sleep (slowdown - 1) x own compute time
                time.sleep((args.slowdown - 1.0) * (time.perf_counter() - t0))
            if extra_passes:  # --gpu-slow work: the same forward again, more GPU work
                with torch.no_grad():
                    for _ in range(extra_passes):
                        model(x)
        if args.gpu:  # the next batch, loaded on the host while the GPU runs the forward
            with Detector.detection_section("data", profile_cuda=False):
                time.sleep(data_s)
        with Detector.detection_section("backward", kind="communication"):
            if sim is not None:  # backward needs the forward's results: the host waits here
                sim.wait()
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with Detector.detection_section("optimizer", profile_cuda=gpu):
            if sim is not None:
                sim.launch(SIM_GPU_MS["optimizer"])
            opt.step()
        if sim is not None:
            sim.wait()
        if args.gpu:  # the loss logged each step: the host waits for its GPU here
            loss.item()
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:  # rank 0 only (gather_on_rank0=True)
            reports.append(report)
            print(report.format_table(threshold=args.threshold), flush=True)
        stop[0] = float(rank == 0 and (verdict_is_in(reports)
                                       or time.monotonic() - start >= args.duration))
        dist.broadcast(stop, src=0, group=stop_group)
        if stop[0] > 0:
            break
    Detector.shutdown()
    if rank == 0:
        named = confirmed_stragglers(reports)
        for line in cause_lines(reports, named):
            print(line, flush=True)
        print(verdict(reports), flush=True)
    dist.destroy_process_group()


def verdict_is_in(reports) -> bool:
    """Whether the demo can stop: a rank is confirmed, or enough quiet reports came."""
    if not reports:
        return False
    if reports[-1].confirmed:
        return True
    recent = reports[-QUIET_REPORTS:]
    return len(reports) >= CLEAN_REPORTS and not any(r.suspects for r in recent)


def confirmed_stragglers(reports) -> list:
    """The StragglerIds the persistence policy confirms at the last report, by rank."""
    return sorted(reports[-1].confirmed, key=lambda sid: sid.rank) if reports else []


def usual_cause(reports, rank: int):
    """(label, the last report giving it): the cause most reports gave ``rank`` (ties: the
    latest); (None, None) when no report diagnosed it."""
    diagnosed = [r for r in reports if rank in r.causes]
    if not diagnosed:
        return None, None
    labels = [r.causes[rank].cause.value for r in diagnosed]
    label = max(reversed(labels), key=labels.count)  # reversed: a tie goes to the latest
    return label, next(r for r in reversed(diagnosed) if r.causes[rank].cause.value == label)


def cause_lines(reports, named) -> list[str]:
    """`Report.format_causes()` line of each named rank, from the last report giving its usual
    cause (`usual_cause`)."""
    lines = []
    for sid in named:
        _, report = usual_cause(reports, sid.rank)
        if report is not None:
            prefix = f"rank {sid.rank} ("
            lines += [line for line in report.format_causes().splitlines()
                      if line.startswith(prefix)]
    return lines


def verdict(reports) -> str:
    """The final line: the confirmed stragglers, each with its node and usual cause."""
    if not reports:
        return "stragglers: none (no report was generated: raise --duration or --steps)"
    named = confirmed_stragglers(reports)
    if not named:
        return "stragglers: none"
    return "stragglers: " + ", ".join(
        f"rank {s.rank} (node {s.node}): {usual_cause(reports, s.rank)[0] or 'no cause'}"
        for s in named)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gpu_line(world_size: int) -> str:
    """The GPUs and versions of a --gpu run, and how the ranks are placed on them."""
    gpus, backend = gpu_placement(world_size)
    names = sorted({torch.cuda.get_device_name(i) for i in range(gpus)})
    driver = "unknown"
    try:  # nvidia-ml-py, when installed; the line is informative only
        import pynvml

        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
    except Exception:  # noqa: BLE001
        pass
    placement = "one GPU per rank" if backend == "nccl" else f"{world_size} ranks share them"
    return (f"GPUs: {gpus} x {' / '.join(names)} ({placement}, {backend}); driver {driver}, "
            f"CUDA {torch.version.cuda}, torch {torch.__version__}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    injected = f"rank {args.slow_rank}" if args.slowdown > 1.0 else "none"
    if args.simulated_gpu:
        what = f"SIMULATED GPU x{args.slowdown:g} slower, SIMULATED NVML: {args.simulated_gpu}"
    elif args.gpu and args.gpu_slow == "work":
        what = f"GPU work: forward x{max(1, round(args.slowdown - 1.0)) + 1}"
    elif args.gpu:
        what = f"host stall: data loading x{args.slowdown:g}"
    else:
        what = f"forward x{args.slowdown:g}"
    print(f"injected straggler: {injected}"
          + (f" ({what})" if args.slowdown > 1.0 else ""), flush=True)
    if args.gpu:
        print(gpu_line(args.world_size), flush=True)
    else:  # CPU ranks (or simulated GPUs): a real GPU must not be mixed in
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    if args.simulated_gpu:
        print("note: the GPUs and NVML are SIMULATED (make sim: build/sim/libcuda.so.1, "
              "build/sim/libnvidia-ml.so.1); every GPU number comes from the simulator", flush=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.report_log:  # this run's reports only (rotated files of an older run go too)
        log = Path(args.report_log)
        for old in log.parent.glob(log.name + "*"):
            if old.name == log.name or old.name[len(log.name) + 1:].isdigit():
                old.unlink()
    mp.start_processes(train, args=(args, free_port()), nprocs=args.world_size, join=True,
                       start_method="spawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
