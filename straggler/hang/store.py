"""The key-value store hang detection talks through: the job's torch.distributed store.

`ProgressStore` wraps a *clone* of the default store (``Store.clone()``: the same TCPStore
server, our own connection), under the prefix ``straggler/hang/<generation>``, so that a slow
store operation of the watchdog never holds the lock of the client the job uses, and every
operation has `timeout_s`. Any store error turns hang detection off on this rank with one log
line (`failed`); nothing is retried and nothing is raised into the job.

Keys (docs/hang.md, "Store traffic"): ``p/<rank>`` a rank's `ProgressRecord`; ``alarm`` a
counter that a rank adds to once when its own stall passes the timeout; ``want`` the stacks
the reporter asks for; ``stack/<rank>`` a rank's stack; ``finding`` the latest finding.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from typing import Any

__all__ = ["ProgressStore", "open_job_store"]

log = logging.getLogger("straggler")


def open_job_store(timeout_s: float) -> Any:
    """Our own connection to the job's torch.distributed store (or the store itself when it
    cannot be cloned); raises when torch.distributed has no store."""
    import torch.distributed as dist

    store = dist.distributed_c10d._get_default_store()
    try:
        own = store.clone()  # type: ignore[attr-defined]  # torch>=2.5, not in its stubs
    except Exception:  # noqa: BLE001 - a store without clone(): share the job's connection
        own = store
    own.set_timeout(datetime.timedelta(seconds=timeout_s))
    return own


class ProgressStore:
    """Hang detection's keys in `store`, every operation bounded by the store's timeout."""

    def __init__(self, store: Any, prefix: str) -> None:
        import torch.distributed as dist

        self._store = dist.PrefixStore(prefix, store)
        self.failed = False

    def _fail(self, what: str, exc: BaseException) -> None:
        if not self.failed:
            self.failed = True
            log.warning("straggler: hang detection is off on this rank: the torch.distributed "
                        "store failed (%s: %s: %s); training goes on", what,
                        type(exc).__name__, exc)

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        if self.failed:
            return None
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - any store error: off, once
            self._fail(what, exc)
            return None

    def put(self, key: str, value: str) -> bool:
        """Set `key`; False when the store failed."""
        self._call(f"set {key}", self._store.set, key, value)
        return not self.failed

    def get(self, key: str) -> bytes | None:
        """The value of `key`, or None when it does not exist (or the store failed)."""
        if not self._call(f"check {key}", self._store.check, [key]):
            return None
        return self._call(f"get {key}", self._store.get, key)

    def get_many(self, keys: Sequence[str], chunk: int = 256) -> dict[str, bytes]:
        """The values of those `keys` that exist: two round trips per `chunk` keys when all
        exist (``multi_get`` of a missing key would wait for the store's timeout, so a chunk is
        checked first, and read key by key when some are missing)."""
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), chunk):
            part = list(keys[i:i + chunk])
            if self._call("check", self._store.check, part):
                values = self._call("multi_get", self._store.multi_get, part)
                if values is not None:
                    out.update(zip(part, values, strict=True))
                continue
            for k in part:
                v = self.get(k)
                if v is not None:
                    out[k] = v
        return out

    def add(self, key: str, amount: int) -> int | None:
        """Add `amount` to counter `key` (0 reads it); None when the store failed."""
        return self._call(f"add {key}", self._store.add, key, amount)
