"""Agreed fail-open: every rank of the group turns detection off at the same report.

A rank whose detector failed keeps its place in the report protocol: it stops timing, but it
still counts iterations (the interval's estimate is a collective) and still joins the next
report, where the first collective, one all_reduce(MAX) of two floats, carries each rank's
on/off flag. When any rank says "off", every rank turns off there, logs once and stops joining;
no peer ever waits for a rank that left silently. A failure in the middle of a report (after
that first collective) closes this rank's communicator at once, so the peers' pending
collective fails immediately (gloo: "connection closed by peer") instead of waiting
``comm_timeout_s``. A rank that skipped the report and went on is asked to leave through the
store (straggler/hang/absent.py). Only a stopped process (or a rank that skipped while hang
detection is off) can cost a peer ``comm_timeout_s``.
"""

from __future__ import annotations

import logging

import torch

__all__ = ["ReportGate"]

log = logging.getLogger("straggler")


class ReportGate:
    """The on/off agreement at the start of every communicating report.

    `agree(on)` is a collective over ``comm``: True when every rank is on; False when some rank
    is off (`failed_rank` then holds the highest global rank that said so).
    """

    def __init__(self, comm: object) -> None:
        self.comm = comm
        self.failed_rank: int = -1

    def agree(self, on: bool) -> bool:
        """Collective: whether every rank of the group is still on."""
        comm = self.comm
        own = comm.global_ranks[comm.rank]  # type: ignore[attr-defined]
        flags = torch.tensor([0.0 if on else 1.0, -1.0 if on else float(own)],
                             dtype=torch.float64)
        comm.all_reduce(flags, "max")  # type: ignore[attr-defined]
        if flags[0].item() > 0:
            self.failed_rank = int(flags[1].item())
            return False
        return True
