"""The package's logger and its one log-once helper.

Every module logs on the ``straggler`` logger under the module-level name ``log``
(``log = logging.getLogger("straggler")``; tests/test_logging.py checks it). A user silences or
redirects the whole package through that one name. `WarnOnce` is the only way to log a
warning once per key.
"""

from __future__ import annotations

import logging

__all__ = ["LOGGER_NAME", "WarnOnce"]

LOGGER_NAME = "straggler"

# Keys remembered per helper: keys may carry user-given names (a section name), so the set is
# bounded; past it, new keys are not logged (one line says so).
MAX_KEYS = 1024


class WarnOnce:
    """``warn(key, msg, *args)`` logs ``msg % args`` as a warning the first time `key` is seen.

    One instance per owner (a detector's lifecycle, a report generator, an FT connection): a
    new detector warns again. Returns whether it logged.
    """

    def __init__(self, logger: logging.Logger | None = None, max_keys: int = MAX_KEYS) -> None:
        self._log = logger if logger is not None else logging.getLogger(LOGGER_NAME)
        self._seen: set[str] = set()
        self._max_keys = max_keys

    def __call__(self, key: str, msg: str, *args: object) -> bool:
        if key in self._seen:
            return False
        if len(self._seen) >= self._max_keys:
            if len(self._seen) == self._max_keys:
                self._seen.add("\0full")  # said once
                self._log.warning("straggler: more than %d distinct warnings; further ones "
                                  "are not logged", self._max_keys)
            return False
        self._seen.add(key)
        self._log.warning(msg, *args)
        return True

    def seen(self, key: str) -> bool:
        """Whether `key` was already logged."""
        return key in self._seen
