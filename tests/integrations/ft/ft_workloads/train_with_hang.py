"""Worker for tests/integrations/ft/test_ft_launcher.py, started by ``ft_launcher`` on 2 gloo ranks.

A small loop with its step in ``Detector.detection_section("step")`` and FT sections required.
On the first cycle (``TORCHELASTIC_RESTART_COUNT=0``) rank ``HANG_RANK`` hangs inside the step
at iteration ``HANG_AT``; FT's rank monitor must kill it and the launcher restart the job. The
restarted cycle completes and rank 0 writes ``$FAULT_TOL_FINISHED_FLAG_FILE``. Every rank appends
its events as JSON lines to ``$STRAGGLER_FT_TEST_DIR/events.jsonl``.
"""

from __future__ import annotations

import json
import os
import time

import torch
import torch.distributed as dist
from straggler import Detector
from straggler.integrations.ft import write_finished_flag

ITERS = 24
HANG_RANK = 1
HANG_AT = 5
HANG_S = 120.0  # far beyond the step timeout: only FT ends it


def event(what: str, **fields) -> None:
    record = {"what": what, "rank": int(os.environ["RANK"]),
              "cycle": int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")),
              "t": time.time(), **fields}
    with open(os.path.join(os.environ["STRAGGLER_FT_TEST_DIR"], "events.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")


def main() -> None:
    rank = int(os.environ["RANK"])
    cycle = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    dist.init_process_group("gloo")
    # Timeouts are not learned here: on 2 shared cores a learned step timeout (5 x a ~20 ms
    # step) could kill a healthy rank in a scheduling stall; learning is tested on its own.
    Detector.initialize(report_time_interval=0.5, ft_sections="required",
                        ft_options={"warmup_iters": 1, "calc_timeouts": False})
    bridge = Detector.ft_bridge()
    event("start", timeouts=bridge.current_timeouts())
    x = torch.ones(64)
    for it in range(ITERS):
        with Detector.detection_section("step", profile_cuda=False):
            dist.all_reduce(x)
            x.div_(dist.get_world_size())
            time.sleep(0.02)
            if cycle == 0 and rank == HANG_RANK and it == HANG_AT:
                event("hang", open_sections=bridge.open_sections())
                time.sleep(HANG_S)
        Detector.generate_report_if_interval_elapsed()
    Detector.shutdown()
    event("done")
    dist.barrier()
    write_finished_flag()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
