"""A section of microseconds cannot make a rank a straggler on its own (`PolicyConfig.
min_section_share`). In a 4-rank trial (gloo, simulated GPUs) the policy confirmed a healthy rank
0 at reports 6-7 on ``section:zero_grad``, a section of about 10 us beside a 30 ms step that the
scheduler lengthens by 20-30 % whatever the rank's speed; the cause rules already leave such a
section out (`CauseRules.min_section_share`). Reports built by the real report path
(benchmarks/replay.py: host summaries, one ReportGenerator per rank, apply_policy)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay
from straggler.analysis.causes import CauseRules
from straggler.analysis.policy import PolicyConfig, StragglerPolicy, negligible_sections

WORLD, WINDOWS, STEPS = 4, 10, 200
SECTIONS = ("step", "zero_grad")


def _trace(zero_grad_ms: float, slow: float, seed: int = 0) -> replay.Trace:
    """4 ranks, a 30 ms step and a ``zero_grad`` of ``zero_grad_ms`` each step (log-normal
    noise of 10 % and 30 %); rank 0's ``zero_grad`` ``slow`` times as long in every step, its
    fastest too (a lasting offset, as the evidence rule needs to confirm)."""
    rng = np.random.default_rng(seed)
    steps = WINDOWS * STEPS
    times = np.empty((WORLD, steps, len(SECTIONS)))
    times[:, :, 0] = 30.0 * np.exp(0.1 * rng.standard_normal((WORLD, steps)))
    times[:, :, 1] = zero_grad_ms * np.exp(0.3 * rng.standard_normal((WORLD, steps)))
    times[0, :, 1] *= slow
    end_s = np.cumsum(times[0, :, 0]) / 1000.0
    return replay.Trace("zero-grad", times, end_s, SECTIONS, {})


def _confirmed(trace: replay.Trace, config: PolicyConfig) -> list[frozenset[int]]:
    bounds = [(i * STEPS, (i + 1) * STEPS) for i in range(WINDOWS)]
    reps = replay.reports(trace, trace.times_ms, bounds, SECTIONS)
    confirmed, _ = replay.run_policy(reps, lambda: StragglerPolicy(config))
    return confirmed


def test_a_section_of_microseconds_confirms_nobody():
    trace = _trace(0.01, 1.25)
    assert not any(_confirmed(trace, PolicyConfig()))
    # Without the rule the same reports confirm the healthy rank 0 on it, as in the trial.
    assert any(0 in c for c in _confirmed(trace, PolicyConfig(min_section_share=0)))


def test_a_section_that_matters_is_still_judged():
    # A data section 18 % of the longest, as in the recorded traces (0.11 ms beside a 0.6 ms
    # forward): rank 0 25 % slower in it is confirmed.
    assert any(0 in c for c in _confirmed(_trace(5.4, 1.25), PolicyConfig()))


def test_a_slowdown_that_makes_a_section_matter_counts_again():
    # 1 ms (3 % of the step) is negligible; 2.5x slower on rank 0 (8 %) it is not, on rank 0.
    masks = negligible_sections({"section:step": [30.0, 30.0, 30.0],
                                 "section:zero_grad": [2.5, 1.0, 1.0]}, 3, 0.05)
    assert masks["section:zero_grad"].tolist() == [False, True, True]
    assert masks["section:zero_grad:p75"].tolist() == [False, True, True]
    assert "section:step" not in masks
    assert any(0 in c for c in _confirmed(_trace(1.0, 2.5), PolicyConfig()))


def test_the_policy_and_the_cause_rules_share_the_share():
    assert PolicyConfig().min_section_share == CauseRules().min_section_share == 0.05
    with pytest.raises(ValueError, match=r"`min_section_share=1\.5`"):
        PolicyConfig(min_section_share=1.5)
