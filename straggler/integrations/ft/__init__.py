"""NVRx fault-tolerance (FT) sections, driven from the places a training loop already marks.

`ft_launcher` (from ``nvidia-resiliency-ext``) starts one rank monitor per rank; a rank that
stays in a section longer than the section's timeout is killed and the job restarted. The
`FTBridge` opens and closes those sections for us (``step`` around our detection section,
``setup`` until the first step, ``checkpointing`` around saves, Megatron-Bridge's hook names for
hand-written loops), learns their timeouts at our report points, keeps them in
``ft_state.json``, and can ask the launcher to leave a straggler's node out. NVRx is imported
lazily; without ``ft_launcher`` everything here is a no-op. See docs/ft.md.

One module per concern:

- `options`: section names, choices, `FTOptions` (the validated ``ft_options``);
- `monitor`: finding NVRx and the launcher, `FTConnection` (connect, fail open, disconnect);
- `sections`: `SectionCounter` (reference-counted sections);
- `hooks`: `BridgeHooks` (the detector's section hook, Megatron-Bridge's hooks, progress);
- `timeouts`: `TimeoutLearner` (Megatron-Bridge's rules, our reduction, save and load);
- `state`: ``ft_state.json`` and the auto-resume finished flag;
- `control`: workload control (``exclude_node``, ``shutdown``) and agreeing on stragglers;
- `drills`: simulated faults;
- `bridge`: `FTBridge`, which puts them together, and `create_bridge` (the detector's factory).
"""

from __future__ import annotations

from .bridge import FTBridge, create_bridge
from .hooks import DEFAULT_WARMUP_ITERS
from .monitor import (
    LAUNCHER_SOCKET_ENV,
    RANK_MONITOR_SOCKET_ENV,
    FTApi,
    FTUnavailableError,
    client_generation,
    connected_clients,
    load_ft_api,
    under_ft_launcher,
)
from .options import (
    CHECKPOINTING,
    FAULT_TYPES,
    FT_SECTIONS_MODES,
    SETUP,
    STEP,
    STRAGGLER_ACTIONS,
    FTOptions,
)
from .state import (
    FINISHED_FLAG_ENV,
    STATE_FILE_NAME,
    STATE_PATH_ENV,
    finished_flag_path,
    read_state_file,
    write_finished_flag,
    write_state_file,
)
from .timeouts import MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE

__all__ = [
    "FTBridge", "FTOptions", "FTUnavailableError", "FT_SECTIONS_MODES", "STRAGGLER_ACTIONS",
    "FAULT_TYPES", "SETUP", "STEP", "CHECKPOINTING", "STATE_FILE_NAME", "create_bridge",
    "under_ft_launcher", "load_ft_api", "client_generation", "write_finished_flag",
    "finished_flag_path", "read_state_file", "write_state_file", "connected_clients",
    # also reachable as before the split (environment names, constants, the NVRx adapter)
    "FTApi", "RANK_MONITOR_SOCKET_ENV", "LAUNCHER_SOCKET_ENV", "FINISHED_FLAG_ENV",
    "STATE_PATH_ENV", "DEFAULT_WARMUP_ITERS", "MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE",
]
