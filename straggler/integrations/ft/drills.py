"""Fault drills as in Megatron-Bridge: after a delay one rank hangs (SIGSTOP) or dies (SIGKILL)."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time

from ..._checks import check_choice, check_int, check_seconds
from .. import _common
from .options import FAULT_TYPES

__all__ = ["setup_simulated_fault"]


def setup_simulated_fault(fault_type: str = "random", fault_rank: int | None = None,
                          base_delay_s: float = 0.0) -> int:
    """Arm the drill on the chosen rank; returns that rank (a collective when it is chosen here).

    The rank is random unless given (chosen on rank 0 and broadcast when torch.distributed is
    up); ``random`` picks hung or killed; the delay is `base_delay_s` plus up to 20 %.
    """
    import torch.distributed as dist

    check_fault_args(fault_type, fault_rank, base_delay_s)
    dist_up = dist.is_available() and dist.is_initialized()
    world = _common.group_size()
    if fault_rank is not None and fault_rank >= world:
        raise ValueError(f"`fault_rank={fault_rank!r}` must be below the world size {world}")
    if fault_rank is None:
        choice = [random.randrange(world)]
        if dist_up and world > 1:
            dist.broadcast_object_list(choice, src=0)
        fault_rank = int(choice[0])
    if _common.group_rank(env_rank=True) == fault_rank:
        kind = fault_type if fault_type != "random" else \
            random.choice(("rank_hung", "rank_killed"))
        delay = base_delay_s + 0.2 * random.random() * base_delay_s
        threading.Thread(target=_inject_fault, args=(kind, fault_rank, delay),
                         name="straggler-ft-fault", daemon=True).start()
    return fault_rank


def check_fault_args(fault_type: str, fault_rank: int | None, base_delay_s: float) -> None:
    """ValueError naming the first bad drill argument."""
    check_choice("fault_type", fault_type, FAULT_TYPES)
    check_seconds("base_delay_s", base_delay_s, allow_zero=True)
    if fault_rank is not None:
        check_int("fault_rank", fault_rank, 0)


def _inject_fault(kind: str, rank: int, delay_s: float) -> None:
    time.sleep(delay_s)
    banner = f"\n####\nFT: Simulating fault: {kind}; rank to fail: {rank}\n####\n"
    print(banner, file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSTOP if kind == "rank_hung" else signal.SIGKILL)
