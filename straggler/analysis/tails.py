"""The tail test: how one report's upper quartile (a ``:p75`` metric) counts as evidence.

A rank slow in one step in five moves its window's upper quartile by 20-120 %, its median by
about 5 % and its fast steps not at all, so only the upper quartile shows it. But where a step
is as short as a scheduler slice, a healthy rank's upper quartile measures how often its core
was taken, which comes and goes in episodes: in clean demo runs on a loaded 2-core machine (a
1 ms forward, 40-120 steps per window) a healthy rank's upper quartile sat 30-120 % behind its
peers' for a few windows at a time, at z 1-2.6 per window, and the median's rule (every window
adds ``z - drift``) confirmed it (docs/policy.md, "The tail test"). So for an upper quartile:

- **slow windows only**: a window adds evidence only when it is slow on its own (``z >=
  slow_z``); any other window drains it (``tail_slow_only``);
- **a window's evidence grows with its steps**: a window of ``n`` steps adds at most
  ``evidence_z_cap * sqrt(n / tail_full_steps)`` (a quantile's count of slow steps carries
  ``sqrt(n)`` evidence; a 50-step window's upper quartile is no clear evidence);
- **a suspect needs half the evidence** (`tail_suspect`): a single slow tail window does not
  make the next report come early.

Pure numpy, no state: the rest of the metric's rules (gates, CUSUM, clearing) are the
median's (`straggler.analysis.persistence.MetricState.judge`).
"""

from __future__ import annotations

import math

import numpy as np

from .policy_config import PolicyConfig

__all__ = ["SUSPECT_SHARE", "tail_evidence", "tail_suspect"]

#: A slow upper-quartile window marks a suspect (the next report comes early) only once this
#: share of `PolicyConfig.evidence_threshold` is in, and its slow marks are forgotten once the
#: evidence falls under it: on a loaded machine single slow tail windows came in most reports
#: of clean runs, and their early reports never ended.
SUSPECT_SHARE = 0.5


def tail_evidence(cfg: PolicyConfig, ratio: np.ndarray, noise: np.ndarray, steps: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The log ratio and noise one upper-quartile report adds to the evidence with.

    ``ratio``: each rank's log ratio of its upper quartile to its peers'; ``noise``: the
    report's noise of it; ``steps``: the window's steps (NaN: unknown, no cap). Returns the
    noise raised so that no window's ``z`` exceeds its cap, and the ratio set to at most 0
    where the window is not slow on its own (``z < slow_z``), so it drains the evidence. NaN
    stays NaN (no data). Clearing is judged on the report's own ratio and noise, not these.
    """
    if cfg.tail_full_steps > 0 and math.isfinite(steps) and steps > 0:
        cap = cfg.evidence_z_cap * math.sqrt(min(1.0, steps / cfg.tail_full_steps))
        with np.errstate(invalid="ignore"):
            noise = np.fmax(noise, ratio / cap)
    if cfg.tail_slow_only:
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(ratio / noise >= cfg.slow_z, ratio, np.minimum(ratio, 0.0))
    return ratio, noise


def tail_suspect(cfg: PolicyConfig, evidence: np.ndarray) -> np.ndarray:
    """Where a slow upper-quartile window makes its rank a suspect: its evidence after the
    window is at least `SUSPECT_SHARE` of ``evidence_threshold`` (one clear window of 150
    steps or more: ``evidence_z_cap - evidence_drift`` = 3.5)."""
    return evidence >= SUSPECT_SHARE * cfg.evidence_threshold
