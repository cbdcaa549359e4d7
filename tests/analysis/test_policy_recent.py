"""The recent part of a window (straggler/analysis/recent.py): a straggler that starts inside a
report window is a suspect in that window's report. Synthetic, no process group."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from straggler.analysis.policy import PolicyConfig, StragglerPolicy, window_recent, window_spread
from straggler.analysis.recent import (
    MIN_RECENT_STEPS,
    RECENT_FRACTION,
    recent_count,
    recent_log_ratio,
    recent_summary,
)
from straggler.analysis.statistics import Statistic
from straggler.timing.registry import LOW_PERCENTILE, host_window

WORLD = 4
RANKS = np.arange(WORLD)
STEP = "section:step"


def test_the_recent_part_is_the_last_quarter_of_the_steps_in_their_order():
    assert RECENT_FRACTION == 0.25
    assert recent_count(400) == 100 and recent_count(2) == 1
    assert recent_count(0) == 0 and recent_count(math.nan) == 0
    samples = np.concatenate([np.full(300, 10.0), np.arange(100.0, 200.0)])  # slow at the end
    med, low = recent_summary(samples, LOW_PERCENTILE)
    assert med == pytest.approx(149.5) and low == pytest.approx(104.95)
    assert all(math.isnan(v) for v in recent_summary(np.array([]), LOW_PERCENTILE))


def test_a_window_summary_carries_its_recent_part():
    samples = [10_000_000] * 320 + [11_000_000] * 80  # ns: the last fifth 10 % slower
    summaries, quantiles = host_window({"step": types.SimpleNamespace(samples=samples)})
    q25, q75, low, recent_med, recent_low = quantiles["step"]
    assert (q25, q75, low) == (10.0, 10.0, 10.0)  # the whole window: not moved
    assert summaries["step"][Statistic.MED] == 10.0
    assert recent_med == pytest.approx(11.0) and recent_low == pytest.approx(10.0)
    samples = [10_000_000] * 300 + [11_000_000] * 100  # the whole last quarter
    assert host_window({"step": types.SimpleNamespace(samples=samples)})[1]["step"][3:] == \
        (pytest.approx(11.0), pytest.approx(11.0))


def test_the_recent_ratio_is_at_most_its_fast_steps_ratio():
    groups = np.zeros(WORLD, dtype=np.int64)
    med = np.array([10.0, 10.0, 11.0, 12.0])
    low = np.array([8.0, 8.0, 8.0, 9.6])  # rank 2: median slower, fast steps not
    ratio, slower = recent_log_ratio(med, low, groups)
    np.testing.assert_allclose(ratio[2], math.log(11.0 / 10.0))
    assert slower[2] == pytest.approx(0.0)
    assert slower[3] == pytest.approx(math.log(1.2))  # both 20 % behind
    # Without a low percentile the median's ratio alone; without peers, NaN.
    _, slower = recent_log_ratio(med, np.full(WORLD, np.nan), groups)
    np.testing.assert_allclose(slower, ratio)
    ratio, _ = recent_log_ratio(med, low, np.arange(WORLD))
    assert np.isnan(ratio).all()


def _feed(policy, steps=400, recent_factor=1.0, factor=1.0):
    """One report: every rank's window at 10 ms (quartiles 9-11 ms, 5th percentile 8 ms);
    rank 2's whole window ``factor`` times its peers' and its recent part ``recent_factor``
    times (its median and fast steps)."""
    scale = np.ones(WORLD)
    scale[2] = factor
    report = types.SimpleNamespace(
        section_quartiles_ms={"step": {int(r): (9.0 * scale[r], 11.0 * scale[r])
                                       for r in RANKS}},
        local_section_summaries={"step": {Statistic.NUM: steps}})
    recent = np.ones(WORLD)
    recent[2] = recent_factor
    return policy.update(RANKS, {STEP: 10.0 * scale}, {STEP: steps},
                         window_spread(report, RANKS), low={STEP: 8.0 * scale},
                         recent={STEP: (10.0 * recent, 8.0 * recent)})


def _warm(policy):
    for _ in range(4):  # the structure warm-up and one more
        assert not _feed(policy).suspects
    return policy


def test_a_rank_whose_recent_steps_are_slow_is_a_suspect_in_that_report():
    policy = _warm(StragglerPolicy())
    decision = _feed(policy, recent_factor=1.1)
    assert decision.suspects == {2} and not decision.confirmed
    off = _warm(StragglerPolicy(PolicyConfig(recent_steps=False)))
    assert not _feed(off, recent_factor=1.1).suspects  # the whole window alone shows nothing


def test_the_recent_part_counts_as_half_its_evidence_and_never_confirms_alone():
    policy = _warm(StragglerPolicy())
    assert not any(_feed(policy, recent_factor=1.1).confirmed for _ in range(6))
    ms = policy._metrics[STEP]
    assert ms.evidence[2] > 0  # half the recent z, less the drift, each report
    # The next window slow throughout confirms it: the evidence of the recent parts counts.
    assert _feed(policy, recent_factor=1.1, factor=1.1).confirmed == {2}
    # As a suspect signal only (weight 0), two whole windows are needed.
    policy = _warm(StragglerPolicy(PolicyConfig(recent_evidence_weight=0.0)))
    assert not any(_feed(policy, recent_factor=1.1).confirmed for _ in range(6))
    assert policy._metrics[STEP].evidence[2] == 0
    assert [_feed(policy, recent_factor=1.1, factor=1.1).confirmed for _ in range(2)] \
        == [set(), {2}]


def test_an_early_windows_recent_part_is_too_short_to_judge():
    policy = _warm(StragglerPolicy())
    steps = math.ceil(MIN_RECENT_STEPS / RECENT_FRACTION) - 4  # a recent part under the minimum
    assert recent_count(steps) < MIN_RECENT_STEPS
    assert not _feed(policy, steps=steps, recent_factor=1.2).suspects


def test_recent_noise_on_healthy_ranks_does_not_confirm_anyone():
    policy = StragglerPolicy()
    rng = np.random.default_rng(0)
    for _ in range(30):  # every rank's recent part 1 % noisy: under the effect-size gate
        d = _feed(policy, recent_factor=float(np.exp(0.01 * rng.standard_normal())))
        assert not d.confirmed


def test_recent_parts_are_read_from_a_report():
    report = types.SimpleNamespace(section_recent_ms={"step": {0: (10.0, 8.0), 3: (11.0, 9.0)},
                                                      "idle": {}})
    recent = window_recent(report, RANKS)
    assert list(recent) == [STEP]
    np.testing.assert_array_equal(recent[STEP][0], [10.0, np.nan, np.nan, 11.0])
    np.testing.assert_array_equal(recent[STEP][1], [8.0, np.nan, np.nan, 9.0])
    assert window_recent(types.SimpleNamespace(), RANKS) == {}
    every = types.SimpleNamespace(section_recent_ms={"step": {int(r): (10.0 + r, 8.0 + r)
                                                              for r in RANKS}})
    med, low = window_recent(every, RANKS)[STEP]  # the gathered layout: every rank, in order
    np.testing.assert_array_equal(med, 10.0 + RANKS)
    np.testing.assert_array_equal(low, 8.0 + RANKS)


def test_bad_recent_settings_name_the_value():
    with pytest.raises(ValueError, match="recent_steps"):
        PolicyConfig(recent_steps="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"recent_evidence_weight=1\.5"):
        PolicyConfig(recent_evidence_weight=1.5)
