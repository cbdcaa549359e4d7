"""straggler's C++ core: GPU/host timers (and, separately, the NVML sampler and probe)."""

from types import TracebackType

import numpy as np
import numpy.typing as npt

SUMMARY_COLUMNS: tuple[str, str, str, str, str, str, str]
"""Columns of TimerEngine.summaries(): ("MIN", "MAX", "MED", "AVG", "STD", "NUM", "TOTAL")."""

class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""

def cuda_status(device: int = 0) -> tuple[bool, str]:
    """(available, reason): the driver loads, cuInit succeeds and ``device`` exists. Never raises."""

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
