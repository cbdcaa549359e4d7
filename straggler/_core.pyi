"""straggler's C++ core: GPU/host timers, NVML sampler, health probe (csrc/python/)."""

from types import TracebackType

import numpy as np
import numpy.typing as npt

SUMMARY_COLUMNS: tuple[str, str, str, str, str, str, str]
"""Columns of TimerEngine.summaries(): ("MIN", "MAX", "MED", "AVG", "STD", "NUM", "TOTAL")."""

ENGINE_API: object
"""A PyCapsule holding the engine's C entry points for ``straggler._ops``
(csrc/timing/engine_api.h)."""

class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""

def cuda_status(device: int = 0) -> tuple[bool, str]:
    """(available, reason): the driver loads, cuInit succeeds and ``device`` exists.

    Never raises.
    """

class TimerEngine:
    """Named start/stop timers on CUDA streams (pooled events) or the host clock.

    Each timer keeps a ring buffer of its newest ``capacity`` durations (ms). A timer can be open
    once per thread; different threads may time the same name at the same time.
    """

    def __init__(self, backend: str = "auto", capacity: int = 8192, device: int = 0) -> None:
        """backend: "auto" (cuda if available, else host), "cuda" (CudaError if unavailable)
        or "host". ValueError names a bad backend, capacity or device."""
    @property
    def backend(self) -> str:
        """The backend in use: "cuda" or "host"."""
    @property
    def capacity(self) -> int:
        """Ring-buffer length (samples kept) per timer."""
    @property
    def closed(self) -> bool:
        """Whether close() was called."""
    def timer_id(self, name: str) -> int:
        """Stable small int id for ``name``; creates the timer."""
    def timer_name(self, timer: int) -> str:
        """The name of timer id ``timer``."""
    def start(self, timer: int | str, stream: int = 0) -> None:
        """Record the start of ``timer`` on ``stream`` (a raw CUstream as int; 0: default).

        ValueError if ``timer`` is already started in this thread. The host backend ignores
        ``stream``."""
    def stop(self, timer: int | str, stream: int = 0) -> None:
        """Record the stop of ``timer`` on ``stream``; ValueError if it was not started in
        this thread. If the driver fails here, the pair is dropped and CudaError raised."""
    def cancel(self, timer: int | str, stream: int = 0) -> None:
        """Close ``timer`` like ``stop`` but keep no sample (the interval was cut short: its
        section's body raised); ValueError if it was not started in this thread."""
    def set_busy(self, timer: int, busy: bool = True) -> None:
        """Busy mode for ``timer``: start/stop open/close a busy scope whose sample is the GPU
        time of the ops reported inside it (idle gaps and collectives excluded)."""
    def busy(self, timer: int) -> bool:
        """Whether ``timer`` is in busy mode."""
    def op_begin(self, stream: int = 0, /) -> int:
        """A compute op starts on ``stream``: a token for op_end(), or -1 when no busy scope is
        open (the op is not timed)."""
    def op_end(self, token: int, op_timer: int = -1, stream: int = 0, /) -> None:
        """The op of ``token`` ended: its GPU segment goes to the open busy scope and, if
        ``op_timer >= 0``, to that timer."""
    def comm_end(self, stream: int = 0, /) -> None:
        """A collective ended on ``stream``: the busy chain restarts after it, so its time is in
        no segment."""
    def open_scopes(self) -> int:
        """Busy scopes open now, over all threads."""
    def idle_entries(self) -> dict[int, int]:
        """{timer: entries this window that saw no GPU work (so stored no sample)}."""
    def harvest(self) -> int:
        """Store every finished pair without blocking; returns how many."""
    def flush(self) -> None:
        """Wait (GIL released) for this engine's pending pairs only, then store them."""
    def pending(self) -> int:
        """Pairs recorded but not yet stored."""
    def summaries(self) -> tuple[list[str], npt.NDArray[np.float64]]:
        """Harvest, then (names, array (n, 7)) with columns SUMMARY_COLUMNS, durations in ms,
        one row per timer with at least one sample in the current window."""
    def durations(self, timer: int | str) -> npt.NDArray[np.float64]:
        """The ring buffer's samples (ms), oldest first."""
    def reset(self) -> None:
        """New report window: clear samples; pending pairs land in the next window."""
    def close(self) -> None:
        """Release events and the context reference. Idempotent; also run on destruction."""
    def __enter__(self) -> TimerEngine: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

# ---- NVML sampler (csrc/telemetry/nvml_sampler.h) ------------------------------------------------

NVML_FIELDS: tuple[str, ...]
"""Columns of NvmlSampler.drain() values (straggler.telemetry.nvml.RAW_FIELDS)."""

def nvml_status() -> tuple[bool, str]:
    """(available, reason): NVML ($STRAGGLER_LIBNVML or libnvidia-ml.so.1) loads and initialises.
    Never raises."""

def cuda_device_pci_bus_id(ordinal: int) -> str:
    """PCI bus id ("0000:3B:00.0") of CUDA device ``ordinal`` (after CUDA_VISIBLE_DEVICES), from
    the CUDA driver. CudaError/RuntimeError when there is no such device or no driver."""

class NvmlSampler:
    """Background thread sampling one GPU's NVML telemetry every ``period_s`` seconds.

    The GPU is found by PCI bus id. A field the GPU does not support stays NaN (and is not asked
    again); ``max_consecutive_failures`` failing samples in a row stop the thread (``error``).
    """

    def __init__(self, pci_bus_id: str, period_s: float = 1.0, capacity: int = 4096,
                 max_consecutive_failures: int = 3) -> None:
        """ValueError names a bad period, capacity or failure count; RuntimeError when NVML is
        unavailable or has no GPU with that bus id."""
    def start(self) -> None:
        """Start the thread (no-op when running, or after it stopped on persistent errors)."""
    def stop(self) -> None:
        """Stop and join the thread (GIL released). Idempotent; also run on destruction."""
    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
    def sample_now(self) -> bool:
        """One sample on the calling thread, into the buffer; False if an NVML call failed."""
    def drain(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int]:
        """(timestamps_s (n,), values (n, len(NVML_FIELDS)), dropped): the samples since the last
        drain, oldest first, NaN = absent; ``dropped`` samples were lost to the bounded buffer."""
    @property
    def identity(self) -> dict[str, str]:
        """name, uuid, serial, pci_bus_id, driver_version ("" where unavailable)."""
    @property
    def period_s(self) -> float:
        """Seconds between samples of the thread."""
    @property
    def error(self) -> str:
        """"" while healthy; why the thread stopped after persistent NVML errors."""
    @property
    def unsupported(self) -> dict[str, str]:
        """{field: NVML's answer} for the fields this GPU does not offer."""
    @property
    def samples_taken(self) -> int:
        """Samples attempted so far (thread and sample_now)."""
    def __enter__(self) -> NvmlSampler: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

# ---- GPU health probe (csrc/telemetry/probe.h) ---------------------------------------------------

PROBE_PTX: str
"""The probe kernels' PTX embedded in this build (csrc/telemetry/probe_kernel.cu)."""
PROBE_PTX_ORIGIN: str
""""nvcc" (compiled at build time) or "committed" (csrc/telemetry/probe_kernel.ptx)."""

def run_probe(device: int = 0, compute_iterations: int = 16384, memory_passes: int = 16,
              repeats: int = 3) -> dict[str, float | int]:
    """Run the fixed-work kernels on CUDA device ``device`` (GIL released, a few ms):
    compute_ms and memory_ms (fastest of ``repeats`` timed launches after a warm-up),
    compute_gflop and memory_gbyte (work per launch), sm_count. CudaError names a failed
    driver call; ValueError a bad option."""
