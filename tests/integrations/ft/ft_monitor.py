"""A real NVRx rank monitor for tests: RankMonitorServer in a subprocess, on CPU.

The monitor kills a rank that overstays a section with ``rank_termination_signal``; here that
is SIGUSR1, so a test can see that the server saw a section open without dying of it.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile

from nvidia_resiliency_ext import fault_tolerance

CHECK_INTERVAL_S = 0.2


class Monitor:
    """One RankMonitorServer subprocess with a catchable termination signal."""

    def __init__(self, sections, oos=30.0):
        self.dir = tempfile.mkdtemp(prefix="ftmon")  # short: AF_UNIX paths are limited
        self.socket = os.path.join(self.dir, "rmon.socket")
        cfg = fault_tolerance.FaultToleranceConfig(
            rank_section_timeouts=dict(sections), rank_out_of_section_timeout=oos,
            workload_check_interval=CHECK_INTERVAL_S, initial_rank_heartbeat_timeout=None,
            rank_heartbeat_timeout=None, rank_termination_signal=signal.SIGUSR1)
        if hasattr(cfg, "enable_nic_monitor"):
            cfg.enable_nic_monitor = False
        ctx = multiprocessing.get_context("fork")
        self.proc = fault_tolerance.RankMonitorServer.run_in_subprocess(
            cfg=cfg, ipc_socket_path=self.socket, mp_ctx=ctx)

    def close(self):
        self.proc.terminate()
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        shutil.rmtree(self.dir, ignore_errors=True)
