"""One report: the `Report` type (`report`), its making across ranks (`generator`: names to
ids, fixed-size gathers, scores) and its completion after the scores (`annotation`: the
persistence policy's decision, GPU identities and causes).

``straggler.reporting`` was a module before it was a package; its names (`ReportGenerator`,
`check_scores_to_compute`) still resolve here (`straggler._compat.MOVED_NAMES`).
"""

from __future__ import annotations

from typing import Any

from .._compat import forward


def __getattr__(name: str) -> Any:
    return forward(__name__, name)
