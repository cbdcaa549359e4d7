"""The one decision: a report becomes who is a straggler and whether to act (pure)."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import pytest
from _reports import make_report

from straggler.analysis.policy import RankState
from straggler.reporting.report import StragglerId
from straggler.reporting.decision import (DEFAULT_PERF_THRESHOLD, Decision, DecisionRule,
                                          Verdict, below, decide, decode, encode, suspects)


def test_the_threshold_rule_is_strictly_below_and_never_nan():
    assert below({0: 0.5, 1: 0.7, 2: math.nan, 3: 0.69}, 0.7) == {0, 3}


def test_by_default_only_confirmed_ranks_are_acted_on():
    report = make_report(gpu={2: 0.3}, confirmed=(1,))
    decision = decide(report)
    assert decision.verdict is Verdict.CONFIRMED
    assert decision.stragglers == {1} and decision.act


def test_a_noisy_single_report_does_not_act_by_default_but_does_with_nvrx_rule():
    report = make_report(gpu={2: 0.3})
    assert not decide(report).act
    nvrx = decide(report, DecisionRule("single_report"))
    assert nvrx.stragglers == {2} and nvrx.verdict is Verdict.SINGLE_REPORT


def test_single_report_rule_uses_the_steps_host_time_without_gpu_scores():
    nan = math.nan
    report = make_report(gpu={r: nan for r in range(4)}, section={3: 0.4})
    rule = DecisionRule(Verdict.SINGLE_REPORT, section="step")
    assert decide(report, rule).stragglers == {3}
    assert decide(report, DecisionRule(Verdict.SINGLE_REPORT)).stragglers == set()


def test_the_policys_suspects_are_the_decisions_suspects():
    report = dataclasses.replace(make_report(confirmed=(3,)),
                                 suspects=frozenset({StragglerId(1, "node1")}))
    decision = decide(report)
    assert decision.suspects == {1} and decision.suspects_pending
    assert decision.stragglers == {3}


def test_without_a_suspects_field_slow_unconfirmed_watched_ranks_are_suspects():
    states = {1: RankState(1, False, {}, {"step": 1}, 0),    # slow in this report
              2: RankState(2, False, {}, {"step": 1}, 2),    # slow earlier, healthy since
              3: RankState(3, True, {"step": "relative"}, {"step": 4}, 0)}  # confirmed
    older = SimpleNamespace(straggler_states=states)  # e.g. a report from another library
    assert suspects(older) == {1}


def test_encoded_decision_survives_a_max_with_other_ranks_zeros():
    ranks = [0, 1, 2, 3]
    decision = Decision(frozenset({2}), frozenset({1}), Verdict.CONFIRMED)
    root = encode(decision, ranks)
    others = encode(None, ranks)
    agreed = [max(a, b) for a, b in zip(root, others, strict=True)]
    back = decode(agreed, ranks, Verdict.CONFIRMED, count=3, iteration=40)
    assert (back.stragglers, back.suspects, back.report, back.iteration) == ({2}, {1}, 3, 40)


@pytest.mark.parametrize("kwargs, match", [
    ({"verdict": "majority"}, "`verdict='majority'`"),
    ({"relative_threshold": 1.5}, "`relative_threshold=1.5`"),
    ({"individual_threshold": -0.1}, "`individual_threshold=-0.1`"),
    ({"section": ""}, "`section=''`"),
])
def test_bad_rules_are_rejected_naming_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DecisionRule(**kwargs)


def test_default_threshold_is_the_integrations_default():
    from straggler.integrations.callback_options import CallbackOptions
    from straggler.integrations.megatron.config import StragglerDetectionConfig

    assert DecisionRule().relative_threshold == DEFAULT_PERF_THRESHOLD
    assert CallbackOptions().gpu_relative_perf_threshold == DEFAULT_PERF_THRESHOLD
    assert StragglerDetectionConfig().gpu_individual_perf_threshold == DEFAULT_PERF_THRESHOLD
