"""One report: the `Report` type (`report`), its making across ranks (`generator`: names to
ids, fixed-size gathers, scores) and its completion after the scores (`annotation`: the
persistence policy's decision, GPU identities and causes).

The names below are the sub-package's API. `generator` and `annotation` run collectives and
import torch: they are imported by their module paths (`straggler.reporting.generator`), so
that ``from straggler import Report`` stays free.
"""

from __future__ import annotations

from .report import Report, StragglerId

__all__ = ["Report", "StragglerId"]
