"""One report: the `Report` type (`report`) and its making across ranks (`generator`: names to
ids, fixed-size gathers, scores).

``straggler.reporting`` was a module before it was a package; its names (`ReportGenerator`,
`check_scores_to_compute`) still resolve here.
"""

from __future__ import annotations

from typing import Any

from .._compat import forward


def __getattr__(name: str) -> Any:
    return forward(__name__, f"{__name__}.generator", name)
