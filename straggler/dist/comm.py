"""Collectives for the report on a gloo group the detector owns, with a timeout.

`Comm` moves fixed-size CPU tensors (and, rarely, picklable objects) among the ranks of a process
group, and nothing else. It builds its own gloo backend over the same global ranks, so that

- CPU tensors work in NCCL jobs, and the report never queues behind training collectives;
- every operation has a timeout: a dead or stuck peer ends it with an error instead of a hang;
- any group works, including a subgroup without global rank 0, and only its members take part
  in the set-up (NVRx #277: a set-up on the default group deadlocks when a subset reports).

Why not ``torch.distributed.new_group(..., use_local_synchronization=True)``: its store prefix is
a hash of the ranks, so a second group over the same ranks (a detector shut down and initialized
again) meets the first one's stale rendezvous keys and times out. Each `Comm` here takes a fresh
prefix from a per-rank counter in the default store, which the members advance in lockstep.

A collective that fails (a peer that did not make the same call within the timeout, or died)
raises `CommError`, which names the detector call the peers did not make: set it with
`Comm.during`. A member that will not run the detector (``STRAGGLER_DISABLE=1`` on that rank
only) calls `Comm.decline` instead of `Comm.create`: the others' `create` then raises
`CommDeclined` at once, instead of waiting the whole timeout for it. A member that skipped a
report and went on is found by the communicator's `stall_check` (`straggler.hang.absent`).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import io
import os
import pickle
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.distributed as dist

from .._checks import check_choice, check_seconds

__all__ = ["Comm", "CommError", "CommDeclined", "Pending"]

_READY = "ready"  # set to _JOINED by the last member to join, or to a member's refusal
_JOINED = b"joined"

_OPS = {"min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX, "sum": dist.ReduceOp.SUM}

#: With a `Comm.stall_check`, a collective that has waited this long asks it, then about every
#: `STALL_CHECK_EVERY_S`, whether to give up (in lockstep a report's collectives take
#: milliseconds; a peer's step running late is not a stall).
STALL_GRACE_S = 1.0
STALL_CHECK_EVERY_S = 1.0


class CommError(RuntimeError):
    """A collective of the detector failed: the peers did not make the same call in time, or a
    peer died. The message names the call; the torch error is the ``__cause__``."""


class CommDeclined(CommError):
    """A member of the group declined to join (`Comm.decline`); the message says which and why."""


class Comm:
    """Collectives among the ranks of one process group, on a private gloo backend.

    Use `Comm.create`. ``rank``/``world_size`` are the group rank and size; ``global_ranks[i]``
    is the global rank of group rank ``i``. ``calls`` counts the collectives issued, by method
    name. Every method is a collective: all ranks of the group call it, in the same order.
    Without an initialized ``torch.distributed`` the world is this process alone and every method
    returns at once. ``call`` names the API call of the next collectives (see `during`).

    ``stall_check``: None, or called with the collective's serial number (the count of this
    communicator's collectives so far, the same on every rank) while a collective has waited
    more than `STALL_GRACE_S`, then about every `STALL_CHECK_EVERY_S` until it gives a reason
    (why a peer will not come: `straggler.hang.absent.PeersPast`, which also asks that peer to
    leave, failing the collective at once); the `CommError` then gives that reason. Called with
    minus the serial when the collective failed without one: only a reason already known.
    """

    def __init__(self, backend: Any, rank: int, global_ranks: list[int],
                 timeout: datetime.timedelta) -> None:
        self._backend = backend
        self._timeout = timeout
        self.rank = rank
        self.world_size = len(global_ranks)
        self.global_ranks = list(global_ranks)
        self.calls: Counter[str] = Counter()
        self.serial = 0  # collectives started, every kind: the same count on every rank
        self.stall_check: Callable[[int], str | None] | None = None
        self._closed = False
        # The API call the next collectives belong to, named by a `CommError`.
        self.call = "a straggler collective"

    @contextlib.contextmanager
    def during(self, call: str) -> Iterator[None]:
        """Set `call` (e.g. "Detector.run_probe()") for the collectives inside this block."""
        before, self.call = self.call, call
        try:
            yield
        finally:
            self.call = before

    @classmethod
    def create(cls, process_group: Any = None, timeout_s: float = 120.0,
               call: str = "Comm.create()") -> Comm:
        """A `Comm` over the ranks of ``process_group`` (default: the whole world).

        Collective among the group's members only (``call`` names it in a `CommError` when a
        member does not join within ``timeout_s``). ``timeout_s`` bounds the set-up and every
        later operation. Without an initialized ``torch.distributed`` the world is this process
        alone, unless the environment says otherwise (``WORLD_SIZE`` > 1, as torchrun sets it):
        then `RuntimeError`, since every rank would silently compare only with itself.
        """
        timeout = datetime.timedelta(seconds=check_seconds("timeout_s", timeout_s))
        if not (dist.is_available() and dist.is_initialized()):
            if process_group is not None:
                raise ValueError(f"`process_group={process_group!r}` given but "
                                 "torch.distributed is not initialized")
            _check_single_process(call)
            return cls(None, 0, [0], timeout)
        ranks, rank, prefixed = _members(process_group)
        if prefixed is None:
            return cls(None, 0, ranks, timeout)
        global_rank = ranks[rank]
        try:
            # Meet in the store first: a member that declined (`decline`) ends the wait at once.
            if prefixed.add("joined", 1) == len(ranks):
                prefixed.set(_READY, _JOINED)
            prefixed.wait([_READY], timeout)
            ready = prefixed.get(_READY)
        except RuntimeError as error:  # DistStoreError: a member did not join in time
            raise _comm_error(error, call, global_rank, timeout, len(ranks)) from error
        if ready != _JOINED:
            raise CommDeclined(f"straggler: {ready.decode(errors='replace')}; {call} on rank "
                               f"{global_rank} gives up at once")
        try:
            backend = dist.ProcessGroupGloo(prefixed, rank, len(ranks), timeout)
        except RuntimeError as error:  # DistStoreError: a member did not join in time
            raise _comm_error(error, call, global_rank, timeout, len(ranks)) from error
        return cls(backend, rank, ranks, timeout)

    @staticmethod
    def decline(reason: str, process_group: Any = None) -> None:
        """Tell the other members, instead of joining (`create`), that this rank will not: their
        `create` raises `CommDeclined` with `reason` at once. A no-op without torch.distributed
        or in a one-rank group; never raises (a store error is left to the peers' timeout)."""
        if not (dist.is_available() and dist.is_initialized()):
            return
        with contextlib.suppress(RuntimeError, ValueError):
            ranks, rank, prefixed = _members(process_group)
            if prefixed is not None:
                prefixed.set(_READY, f"rank {ranks[rank]} {reason}".encode())

    def _start(self, name: str) -> None:
        if self._closed:
            raise RuntimeError(f"Comm.{name}() called after close()")
        self.calls[name] += 1
        self.serial += 1

    def _wait(self, work: Any) -> None:
        timeout, why = self._timeout, None
        check = self.stall_check
        if check is not None:
            timeout, why = self._wait_checked(work, check)
        try:
            work.wait(timeout)
        except RuntimeError as error:
            me = self.global_ranks[self.rank]
            if check is not None and why is None:  # the peer may have left at another's word
                why = check(-self.serial)
            if why:
                raise CommError(f"straggler: rank {me} gave up {self.call} with the other "
                                f"ranks of its group ({self.world_size} ranks): {why}") from error
            raise _comm_error(error, self.call, me, self._timeout, self.world_size) from error

    def _wait_checked(self, work: Any, check: Callable[[int], str | None]
                      ) -> tuple[datetime.timedelta, str | None]:
        """Wait for `work` in slices (`STALL_GRACE_S`, then `STALL_CHECK_EVERY_S`), asking
        `check` between them; returns the time left of the timeout and the reason `check` gave
        (None: none). A slice that ends leaves the collective pending (gloo's timed wait only
        raises), and each returns the moment the collective completes.

        A reason does not end the wait here: gloo cannot cancel a pending collective (neither
        ``abort()`` nor ``shutdown()`` does; releasing the backend then blocks until the
        collective's timeout). The peer it names leaves (`straggler.hang.absent`), which fails
        the collective at once; the reason then names it in the `CommError`.
        """
        end = time.monotonic() + self._timeout.total_seconds()
        why, serial, piece = None, self.serial, STALL_GRACE_S
        while True:
            left = end - time.monotonic()
            if left <= piece:
                break
            try:
                work.wait(datetime.timedelta(seconds=piece))
                break  # completed
            except RuntimeError:
                if work.is_completed():
                    break  # failed: the caller's wait raises it
            if why is None:
                why = check(serial)
            piece = STALL_CHECK_EVERY_S
        return datetime.timedelta(seconds=max(end - time.monotonic(), 0.001)), why

    def all_reduce(self, t: torch.Tensor, op: Any = dist.ReduceOp.SUM) -> torch.Tensor:
        """Reduce ``t`` over the group (``op``: a ``ReduceOp`` or "min"/"max"/"sum").

        Returns the reduced tensor; ``t`` itself is updated when it is a contiguous CPU tensor.
        """
        self._start("all_reduce")
        if isinstance(op, str):  # a name; anything else goes to gloo as a ReduceOp
            op = _OPS[check_choice("op", op.lower(), _OPS)]
        buf = _cpu(t)
        if self._backend is not None:
            opts = dist.AllreduceOptions()
            opts.reduceOp = op
            opts.timeout = self._timeout
            self._wait(self._backend.allreduce([buf], opts))
        if buf is not t:
            t.copy_(buf)
        return t

    def all_reduce_async(self, t: torch.Tensor, op: str = "max") -> Pending:
        """Start reducing the CPU float tensor ``t`` over the group; returns at once.

        The returned `Pending` says whether the result arrived (`Pending.done`, never blocks)
        and waits for it at most the timeout (`Pending.wait`). A collective like the others:
        every rank starts the same ones in the same order.
        """
        self._start("all_reduce_async")
        buf = _cpu(t).clone()
        if self._backend is None:
            return Pending(None, buf, self)
        opts = dist.AllreduceOptions()
        opts.reduceOp = _OPS[check_choice("op", op.lower(), _OPS)]  # type: ignore[assignment]
        opts.timeout = self._timeout
        return Pending(self._backend.allreduce([buf], opts), buf, self)

    def gather_to_first(self, t: torch.Tensor) -> torch.Tensor | None:
        """Every rank's ``t`` (same shape and dtype everywhere), in group order, on group rank 0:
        one tensor, row i the i-th rank's (``world_size`` x ``t``'s shape).

        Returns None on the other ranks. The rows are views of that one tensor, written by the
        gather: rank 0 allocates one buffer and stacks nothing (at 16,384 ranks the report's
        rows are 11.5 MB).
        """
        self._start("gather_to_first")
        buf = _cpu(t)
        if self._backend is None:
            return buf.clone().unsqueeze(0)
        opts = dist.GatherOptions()
        opts.rootRank = 0
        opts.timeout = self._timeout
        out = torch.empty((self.world_size, *buf.shape), dtype=buf.dtype) if self.rank == 0 \
            else None
        outputs = [list(out.unbind(0))] if out is not None else []
        self._wait(self._backend.gather(outputs, [buf], opts))
        return out

    def all_gather(self, t: torch.Tensor) -> list[torch.Tensor]:
        """Every rank's ``t`` (same shape and dtype everywhere), in group order, on every rank."""
        self._start("all_gather")
        buf = _cpu(t)
        if self._backend is None:
            return [buf.clone()]
        outputs = [torch.empty_like(buf) for _ in range(self.world_size)]
        self._wait(self._backend.allgather([outputs], [buf]))
        return outputs

    def all_gather_object(self, obj: Any) -> list[Any]:
        """Every rank's picklable ``obj``, in group order, on every rank."""
        self._start("all_gather_object")
        if self._backend is None:
            return [obj]
        data = io.BytesIO()
        pickle.dump(obj, data)
        payload = torch.frombuffer(bytearray(data.getbuffer()), dtype=torch.uint8)
        sizes = [int(s) for s in self._gather_plain(torch.tensor([payload.numel()]))]
        padded = torch.zeros(max(sizes), dtype=torch.uint8)
        padded[:payload.numel()] = payload
        blobs = self._gather_plain(padded)
        return [pickle.loads(blob[:size].numpy().tobytes())
                for blob, size in zip(blobs, sizes, strict=True)]

    def _gather_plain(self, buf: torch.Tensor) -> list[torch.Tensor]:
        outputs = [torch.empty_like(buf) for _ in range(self.world_size)]
        self._wait(self._backend.allgather([outputs], [buf]))
        return outputs

    def broadcast_from_first(self, t: torch.Tensor) -> torch.Tensor:
        """Group rank 0's ``t`` on every rank (``t`` updated in place when it is on the CPU)."""
        self._start("broadcast_from_first")
        buf = _cpu(t)
        if self._backend is not None:
            opts = dist.BroadcastOptions()
            opts.rootRank = 0
            opts.timeout = self._timeout
            self._wait(self._backend.broadcast([buf], opts))
        if buf is not t:
            t.copy_(buf)
        return t

    def close(self) -> None:
        """Release the gloo backend (local; safe to call twice or after an error)."""
        backend, self._backend = self._backend, None
        self._closed = True
        if backend is not None:
            # A broken peer must not fail the close.
            with contextlib.suppress(Exception):
                backend.shutdown()


class Pending:
    """A collective started with `Comm.all_reduce_async`: its result when it arrives."""

    def __init__(self, work: Any, buf: torch.Tensor, comm: Comm) -> None:
        self._work = work
        self._buf = buf
        self._comm = comm
        self._call = comm.call

    def done(self) -> bool:
        """Whether the result arrived (or the collective failed); never blocks."""
        return self._work is None or bool(self._work.is_completed())

    def wait(self) -> torch.Tensor:
        """The reduced tensor; waits at most the communicator's timeout (`CommError` then)."""
        if self._work is not None:
            with self._comm.during(self._call):
                self._comm._wait(self._work)
        return self._buf


def _check_single_process(call: str) -> None:
    """Refuse a world of one when the launcher (torchrun, ft_launcher) started several ranks."""
    world = os.environ.get("WORLD_SIZE", "").strip()
    if world.isdigit() and int(world) > 1:
        raise RuntimeError(
            f"straggler: {call} was called before torch.distributed.init_process_group(), but "
            f"`WORLD_SIZE={world}` says this process is one of {world} ranks: call "
            "dist.init_process_group() first (without a process group each rank would run a "
            "one-rank detector and never be compared with the others)")


def _members(process_group: Any) -> tuple[list[int], int, Any]:
    """(the group's global ranks, this rank's index, the store of the next `Comm` over them or
    None in a one-rank group). Advances this rank's count of `Comm`s over these ranks."""
    group = dist.group.WORLD if process_group is None else process_group
    global_rank = dist.get_rank()
    try:
        ranks = dist.get_process_group_ranks(group)
    except (RuntimeError, ValueError) as error:
        raise ValueError(f"`process_group={process_group!r}` is not a process group this "
                         f"rank belongs to ({error})") from error
    if global_rank not in ranks:
        raise ValueError(f"`process_group={process_group!r}` does not include global rank "
                         f"{global_rank}")
    if len(ranks) == 1:
        return ranks, 0, None
    # The store init_process_group made (private API, the one torch's new_group uses too).
    store = dist.distributed_c10d._get_default_store()
    members = hashlib.sha1(",".join(map(str, ranks)).encode(),
                           usedforsecurity=False).hexdigest()[:16]
    # How many Comms this rank made over these ranks before: equal on all members.
    serial = store.add(f"straggler/comm/{members}/count{global_rank}", 1)
    return ranks, ranks.index(global_rank), dist.PrefixStore(
        f"straggler/comm/{members}/{serial}/", store)


def _comm_error(error: BaseException, call: str, global_rank: int,
                timeout: datetime.timedelta, world_size: int) -> CommError:
    """A `CommError` saying which call the peers did not make (or that a peer was lost)."""
    seconds = f"{timeout.total_seconds():g} s"
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if "timeout" in text.lower() or "timed out" in text.lower():
        return CommError(
            f"straggler: rank {global_rank} waited {seconds} for the other ranks of its group "
            f"({world_size} ranks) to call {call}; at least one of them did not within "
            f"comm_timeout_s={timeout.total_seconds():g} (it skipped the call, is stuck, or is "
            f"slower than that; every rank must make the same detector calls) [{text}]")
    return CommError(
        f"straggler: rank {global_rank} lost contact with the other ranks of its group "
        f"({world_size} ranks) during {call}: a peer died or closed its connection "
        f"[{type(error).__name__}: {text}]")


def _cpu(t: torch.Tensor) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(t).__name__}")
    return t if t.device.type == "cpu" and t.is_contiguous() else t.detach().cpu().contiguous()
