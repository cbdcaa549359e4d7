"""The confirmation policy's rules, with synthetic per-rank times and no process group."""

from __future__ import annotations

import numpy as np
import pytest
from straggler.analysis.peers import learn_clusters, median_of_others
from straggler.analysis.policy import PolicyConfig, StragglerPolicy

RANKS = np.arange(16)


def _times(factors: dict[int, float] | None = None, base: float = 10.0, world: int = 16,
           jitter: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
    x = np.full(world, base)
    if jitter:
        x = x * (1.0 + jitter * rng.standard_normal(world))
    for rank, f in (factors or {}).items():
        x[rank] *= f
    return x


def _k_of_n(**kwargs) -> PolicyConfig:
    """A config of the earlier rule (k slow reports of the last n), which these tests pin."""
    return PolicyConfig(rule="k_of_n", **kwargs)


def _feed(policy: StragglerPolicy, series: list[np.ndarray], metric: str = "step"):
    return [policy.update(np.arange(series[0].size), {metric: x}) for x in series]


# ------------------------------------------------------------------------------ configuration
@pytest.mark.parametrize("kwargs, match", [
    ({"threshold": 0.0}, r"`threshold=0.0` must be a number in \(0, 1\]"),
    ({"threshold": 1.5}, r"`threshold=1.5`"),
    ({"k": 4, "n": 3}, r"`k=4` must not exceed `n=3`"),
    ({"n": 0}, r"`n=0` must be a positive integer"),
    ({"reference": "mean"}, r"`reference='mean'` must be one of"),
    ({"clear_threshold": 0.9, "threshold": 0.95}, r"`clear_threshold=0.9` must be >="),
    ({"baseline_half_life": 0}, r"`baseline_half_life=0`"),
    ({"min_effect": -0.1}, r"`min_effect=-0.1`"),
    ({"cluster_min_size": 1}, r"`cluster_min_size=1`"),
    ({"structure_warmup": True}, r"`structure_warmup=True`"),
    ({"individual": "yes"}, r"`individual='yes'` must be one of"),
    ({"noise_z": -1}, r"`noise_z=-1` must be a number >= 0"),
])
def test_config_rejects_bad_values_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PolicyConfig(**kwargs)


def test_config_is_frozen():
    with pytest.raises(AttributeError):
        PolicyConfig().k = 5  # type: ignore[misc]


def test_roles_must_be_a_mapping():
    with pytest.raises(ValueError, match=r"`roles=\[1, 2\]` must be a mapping"):
        StragglerPolicy(roles=[1, 2])  # type: ignore[arg-type]


def test_times_must_match_ranks():
    with pytest.raises(ValueError, match=r"`times\['step'\]` has 3 values for 16 ranks"):
        StragglerPolicy().update(RANKS, {"step": [1.0, 2.0, 3.0]})


# --------------------------------------------------------------------------- median of peers
def test_median_of_others_matches_brute_force():
    rng = np.random.default_rng(1)
    values = rng.uniform(1, 2, 41)
    values[[3, 17]] = np.nan
    groups = rng.integers(0, 3, 41)
    got = median_of_others(values, groups)
    for i in range(values.size):
        if np.isnan(values[i]):
            assert np.isnan(got[i])
            continue
        peers = [values[j] for j in range(values.size)
                 if j != i and groups[j] == groups[i] and not np.isnan(values[j])]
        assert got[i] == pytest.approx(np.median(peers))


def test_rank_alone_in_its_group_has_no_peer_median():
    assert np.isnan(median_of_others(np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1]))[0])


# ------------------------------------------------------------------------------- persistence
def test_first_slow_report_alone_does_not_confirm():
    policy = StragglerPolicy(_k_of_n(k=2, n=3, individual="off", learn_structure=False))
    d = _feed(policy, [_times({5: 1.3})])[-1]
    assert d.confirmed == frozenset()
    assert d.states[5].slow_reports == {"step": 1}
    assert not d.states[5].confirmed


def test_confirmed_after_k_of_last_n_reports_even_if_not_consecutive():
    # noise_z=0: with the noise gate on, this alternation would read as a noisy rank.
    policy = StragglerPolicy(_k_of_n(k=2, n=3, individual="off", learn_structure=False,
                                          noise_z=0.0))
    decisions = _feed(policy, [_times({5: 1.3}), _times(), _times({5: 1.3})])
    assert [d.confirmed for d in decisions] == [frozenset(), frozenset(), frozenset({5})]
    assert decisions[-1].newly_confirmed == frozenset({5})
    assert decisions[-1].states[5].reasons == {"step": "relative"}


def test_slow_reports_further_apart_than_the_window_never_confirm():
    policy = StragglerPolicy(_k_of_n(k=2, n=3, individual="off", learn_structure=False,
                                          noise_z=0.0))
    series = [_times({5: 1.3}) if i % 3 == 0 else _times() for i in range(12)]
    assert all(d.confirmed == frozenset() for d in _feed(policy, series))


def test_transient_spikes_on_many_ranks_never_confirm():
    # Each report one different rank spikes by 2x: no rank is slow twice within the window.
    policy = StragglerPolicy(_k_of_n(k=2, n=3, individual="off", learn_structure=False,
                                          noise_z=0.0))
    series = [_times({i % 16: 2.0}) for i in range(32)]
    assert all(d.confirmed == frozenset() for d in _feed(policy, series))


# -------------------------------------------------------------------------------- hysteresis
def test_confirmed_rank_stays_confirmed_between_threshold_and_clear_threshold():
    # noise_z=0: two reports are too few for a noise estimate; the gate is tested below.
    cfg = _k_of_n(threshold=0.9, clear_threshold=0.97, k=2, n=2,
                       clear_reports=2,
                       individual="off", learn_structure=False, noise_z=0.0)
    policy = StragglerPolicy(cfg)
    # 1.06x slower: peer score 0.943, above threshold 0.9 but below clear_threshold 0.97.
    decisions = _feed(policy, [_times({3: 1.3})] * 2 + [_times({3: 1.06})] * 5)
    assert all(d.confirmed == frozenset({3}) for d in decisions[1:])


def test_confirmed_rank_clears_after_clear_reports_healthy_reports_in_a_row():
    cfg = _k_of_n(k=2, n=2, clear_reports=3, individual="off", learn_structure=False,
                       noise_z=0.0)
    policy = StragglerPolicy(cfg)
    decisions = _feed(policy, [_times({3: 1.3})] * 2 + [_times()] * 2 + [_times({3: 1.3})]
                      + [_times()] * 3)
    confirmed = [3 in d.confirmed for d in decisions]
    # Two healthy reports are not enough (clear_reports=3); the slow report resets the streak.
    assert confirmed == [False, True, True, True, True, True, True, False]
    assert decisions[-1].cleared == frozenset({3})
    assert decisions[-2].states[3].healthy_streak == 2


# ------------------------------------------------------------------------- effect-size gate
def test_small_slowdown_below_min_effect_never_alarms_even_with_a_strict_threshold():
    cfg = PolicyConfig(threshold=0.999, clear_threshold=0.999, min_effect=0.04, k=1, n=1,
                       learn_structure=False)
    policy = StragglerPolicy(cfg)
    assert all(d.confirmed == frozenset()
               for d in _feed(policy, [_times({2: 1.03, 9: 1.02})] * 20))


def test_job_wide_weather_drift_never_alarms():
    # Every rank drifts by +-3% together (diurnal DVFS): neither peers nor baselines alarm.
    policy = StragglerPolicy(_k_of_n(k=1, n=1))
    rng = np.random.default_rng(0)
    series = [_times(base=10.0 * (1 + 0.03 * np.sin(i / 3)), jitter=0.003, rng=rng)
              for i in range(60)]
    assert all(d.confirmed == frozenset() for d in _feed(policy, series))


def test_fastest_reference_scores_like_nvrx_but_the_gate_uses_the_median():
    cfg = _k_of_n(reference="fastest", k=1, n=1, individual="off",
                       learn_structure=False)
    policy = StragglerPolicy(cfg)
    d = _feed(policy, [_times({0: 0.8})])[-1]  # one unusually fast rank
    assert d.peer_scores["step"][5] == pytest.approx(0.8)
    assert d.confirmed == frozenset()  # nobody is slower than the median of peers
    d = policy.update(RANKS, {"step": _times({0: 0.8, 5: 1.2})})
    assert d.confirmed == frozenset({5})


def test_median_reference_is_not_moved_by_one_fast_rank():
    policy = StragglerPolicy(PolicyConfig(individual="off", learn_structure=False))
    d = policy.update(RANKS, {"step": _times({0: 0.5, 7: 1.1})})
    assert d.peer_scores["step"][7] == pytest.approx(1 / 1.1)
    assert d.peer_scores["step"][3] == pytest.approx(1.0)


# -------------------------------------------------------------------------------- noise gate
def _noisy_series(reports: int, onset: int | None = None, slowdown: float = 1.0):
    rng = np.random.default_rng(7)
    series = []
    for i in range(reports):
        x = _times(jitter=0.002, rng=rng)
        x[4] *= 1.0 + 0.04 * rng.standard_normal()  # rank 4: 4 % report-to-report noise
        if onset is not None and i >= onset:
            x[9] *= slowdown
        series.append(x)
    return series


def test_noisy_but_healthy_rank_alarms_without_the_noise_gate():
    policy = StragglerPolicy(PolicyConfig(noise_z=0.0, individual="off", k=2, n=3))
    assert any(4 in d.confirmed for d in _feed(policy, _noisy_series(60)))


def test_noise_gate_keeps_a_noisy_but_healthy_rank_quiet():
    # A rank 20x noisier than its peers: judged by its own noise in full (own_noise_weight=1;
    # the default 0.5 is what the real traces favour, docs/policy.md).
    policy = StragglerPolicy(PolicyConfig(noise_z=3.0, own_noise_weight=1.0))
    assert all(d.confirmed == frozenset() for d in _feed(policy, _noisy_series(60)))


def test_noise_gate_does_not_hide_a_step_change_on_a_quiet_rank():
    policy = StragglerPolicy(PolicyConfig(noise_z=3.0, own_noise_weight=1.0))
    decisions = _feed(policy, _noisy_series(30, onset=20, slowdown=1.1))
    assert all(d.confirmed == frozenset() for d in decisions[:20])
    assert decisions[-1].confirmed == frozenset({9})


# ------------------------------------------------------------------------------- peer groups
STAGES = np.repeat([1.0, 1.1, 1.2, 1.5], 4)  # 4 pipeline stages, the last one much heavier
ROLES = {r: f"stage{r // 4}" for r in range(16)}


def test_declared_roles_compare_ranks_only_within_their_role():
    policy = StragglerPolicy(_k_of_n(k=2, n=3), roles=ROLES)
    series = [10 * STAGES] * 4 + [10 * STAGES * _times({6: 1.15}, base=1.0)] * 3
    decisions = _feed(policy, series)
    assert all(d.confirmed == frozenset() for d in decisions[:5])
    assert decisions[-1].confirmed == frozenset({6})
    assert policy.groups("step")[6] == policy.groups("step")[4] != policy.groups("step")[0]


def test_without_roles_and_without_learning_heavy_stages_are_flagged():
    policy = StragglerPolicy(_k_of_n(k=2, n=3, learn_structure=False))
    decisions = _feed(policy, [10 * STAGES] * 3)
    # Stages 2 and 3 (1.2x, 1.5x) are slower than the median of the world (1.1x) by > 4 %.
    assert decisions[-1].confirmed == frozenset(range(8, 16))


def test_rank_without_declared_role_has_no_peers():
    policy = StragglerPolicy(PolicyConfig(individual="off"), roles={r: 0 for r in range(15)})
    d = policy.update(RANKS, {"step": _times({15: 2.0})})
    assert np.isnan(d.peer_scores["step"][15])


# ------------------------------------------------------------------------ cluster recognition
def test_learn_clusters_finds_stages_and_attaches_a_lone_outlier_to_a_faster_cluster():
    levels = np.log(np.concatenate([np.full(8, 1.0), np.full(8, 1.3)]))
    levels[3] = np.log(1.2)  # a lone slow rank between the two stages
    groups = learn_clusters(levels)
    assert len(set(groups[[0, 1, 2, 4, 5, 6, 7]])) == 1
    assert len(set(groups[8:])) == 1 and groups[8] != groups[0]
    assert groups[3] == groups[0]


def test_learn_clusters_keeps_one_group_when_no_cluster_is_large_enough():
    levels = np.log(np.r_[np.full(30, 1.0), 1.3, 1.3])  # 2 of 32 ranks: below 10 %
    assert set(learn_clusters(levels).tolist()) == {0}


def test_structural_imbalance_is_learned_not_flagged():
    rng = np.random.default_rng(3)
    policy = StragglerPolicy(PolicyConfig())
    series = [10 * STAGES * _times(base=1.0, jitter=0.005, rng=rng) for _ in range(20)]
    decisions = _feed(policy, series)
    assert not decisions[0].structure_ready and decisions[-1].structure_ready
    assert all(d.confirmed == frozenset() for d in decisions)
    assert len(set(policy.groups("step").values())) == 4


def test_straggler_present_from_the_start_is_not_mistaken_for_structure():
    policy = StragglerPolicy(_k_of_n(k=2, n=3, structure_warmup=3))
    decisions = _feed(policy, [_times({9: 1.2})] * 3)
    # The warm-up is replayed through the persistence rule once the groups are known.
    assert [d.confirmed for d in decisions] == [frozenset(), frozenset(), frozenset({9})]


def test_node_that_slows_after_the_warmup_is_flagged_as_a_whole():
    policy = StragglerPolicy(PolicyConfig())
    node = {r: 1.25 for r in range(8, 12)}
    decisions = _feed(policy, [_times()] * 4 + [_times(node)] * 4)
    assert all(d.confirmed == frozenset() for d in decisions[:4])
    assert decisions[-1].confirmed == frozenset(range(8, 12))


# ---------------------------------------------------------------------- decaying baseline
def test_gradual_drift_of_a_lone_rank_is_seen_by_the_individual_score():
    # One rank alone (no peers, as with gather_on_rank0=False): only its own history can tell.
    policy = StragglerPolicy(PolicyConfig(baseline_half_life=20, individual_threshold=0.9))
    decisions = [policy.update([0], {"step": [10.0 * (1 + 0.01 * max(0, i - 5))]})
                 for i in range(40)]
    first = next(i for i, d in enumerate(decisions) if d.confirmed)
    assert decisions[first].states[0].reasons == {"step": "individual"}
    assert 10 < first < 40


def test_recovery_clears_and_a_permanent_new_level_is_accepted():
    # noise_z=0: the 10 -> 13 -> 10 -> 13 ms swings would otherwise read as a noisy rank.
    cfg = PolicyConfig(baseline_half_life=5, k=2, n=3, clear_reports=3, noise_z=0.0)
    policy = StragglerPolicy(cfg)
    slow = [policy.update([0], {"step": [10.0]}) for _ in range(10)]
    slow += [policy.update([0], {"step": [13.0]}) for _ in range(3)]
    assert slow[-1].confirmed == frozenset({0})
    # Recovery: back to 10 ms -> healthy (score > 1) -> cleared after clear_reports.
    back = [policy.update([0], {"step": [10.0]}) for _ in range(3)]
    assert back[-1].cleared == frozenset({0})
    # A permanent new level: the baseline decays towards it and the rank is cleared again.
    later = [policy.update([0], {"step": [13.0]}) for _ in range(40)]
    assert later[2].confirmed == frozenset({0})
    assert later[-1].confirmed == frozenset()
    assert later[-1].individual_scores["step"][0] == pytest.approx(1.0, abs=0.01)


def test_individual_rule_can_be_switched_off():
    policy = StragglerPolicy(PolicyConfig(individual="off"))
    decisions = [policy.update([0], {"step": [10.0 if i < 5 else 20.0]}) for i in range(10)]
    assert all(d.confirmed == frozenset() for d in decisions)


# --------------------------------------------------------------------------------- bookkeeping
def test_missing_values_neither_count_as_slow_nor_as_healthy():
    cfg = _k_of_n(k=2, n=2, clear_reports=1, individual="off", learn_structure=False,
                       noise_z=0.0)
    policy = StragglerPolicy(cfg)
    gap = _times({4: 1.3})
    gap[4] = np.nan
    decisions = _feed(policy, [_times({4: 1.3}), gap, _times({4: 1.3}), gap])
    assert [4 in d.confirmed for d in decisions] == [False, False, True, True]


def test_ranks_may_appear_later_and_in_any_order():
    policy = StragglerPolicy(_k_of_n(k=1, n=1, learn_structure=False, individual="off"))
    policy.update([0, 1, 2], {"step": [1.0, 1.0, 1.0]})
    d = policy.update([7, 2, 1, 0], {"step": [1.5, 1.0, 1.0, 1.0]})
    assert d.confirmed == frozenset({7})
    assert list(d.ranks) == [7, 2, 1, 0]


def test_repeated_rank_is_rejected():
    with pytest.raises(ValueError, match="must not repeat a rank"):
        StragglerPolicy().update([0, 0], {"step": [1.0, 1.0]})


def test_a_rank_confirmed_on_any_metric_is_confirmed():
    cfg = _k_of_n(k=1, n=1, individual="off", learn_structure=False)
    policy = StragglerPolicy(cfg)
    d = policy.update(RANKS, {"gpu": _times(), "step": _times({11: 1.4})})
    assert d.confirmed == frozenset({11})
    assert d.states[11].reasons == {"step": "relative"}


# ---------------------------------------------------------------------- individual rule modes
def test_job_wide_slowdown_is_not_a_straggler_by_default():
    series = [_times()] * 6 + [_times(base=11.5)] * 6  # every rank 15 % slower
    assert all(d.confirmed == frozenset() for d in _feed(StragglerPolicy(), series))


def test_individual_always_confirms_every_rank_of_a_job_wide_slowdown():
    policy = StragglerPolicy(PolicyConfig(individual="always"))
    series = [_times()] * 6 + [_times(base=11.5)] * 6
    decisions = _feed(policy, series)
    assert decisions[-1].confirmed == frozenset(range(16))
    assert decisions[-1].states[0].reasons == {"step": "individual"}


# ------------------------------------------------------------------------ report adapter
def _report(scores: dict[int, float], medians: dict[int, float]):
    from straggler.reporting.report import Report

    return Report(gpu_relative_perf_scores=scores, section_relative_perf_scores={},
                  gpu_individual_perf_scores={}, section_individual_perf_scores={},
                  rank_to_node={r: f"n{r // 2}" for r in scores}, local_section_summaries={},
                  local_kernel_summaries={}, generate_report_elapsed_time=0.0,
                  gather_on_rank0=True, rank=0, section_medians_ms={"step": medians})


def test_observation_uses_section_medians_and_inverse_gpu_scores():
    from straggler.analysis.policy import observation_from_report

    ranks, times = observation_from_report(_report({0: 1.0, 1: 0.5, 2: float("nan")},
                                                   {0: 10.0, 2: 12.0}))
    assert list(ranks) == [0, 1, 2]
    assert times["gpu"][:2].tolist() == [1.0, 2.0] and np.isnan(times["gpu"][2])
    assert np.isnan(times["section:step"][1]) and times["section:step"][2] == 12.0


def test_make_policy_options():
    from straggler.analysis.policy import make_policy

    assert make_policy(None) is None and make_policy(False) is None
    assert isinstance(make_policy(True), StragglerPolicy)
    with_roles = make_policy(None, roles={0: "a", 1: "b"})  # roles imply the defaults
    with_roles.update([0, 1], {"m": [1.0, 1.0]})
    assert with_roles.groups("m") == {0: 0, 1: 1}
    given = StragglerPolicy()
    assert make_policy(given) is given
    with pytest.raises(ValueError, match="`roles` must be given to the StragglerPolicy"):
        make_policy(given, roles={0: "a"})
    with pytest.raises(ValueError, match=r"`policy=3` must be True, False, None, a dict"):
        make_policy(3)


def test_the_detector_gives_the_policy_its_report_interval():
    # `min_slow_s` reads the interval: what two windows span (docs/policy.md).
    from straggler.analysis.policy import make_policy
    from straggler.detector_options import DetectorOptions

    assert DetectorOptions(report_time_interval=3).policy.interval_s == 3.0
    assert make_policy(True).interval_s is None  # unknown: no minimum span
    given = StragglerPolicy(interval_s=5)
    assert make_policy(given, interval_s=3).interval_s == 5.0
    assert make_policy(StragglerPolicy(), interval_s=3).interval_s == 3.0
    with pytest.raises(ValueError, match=r"`interval_s=-1` must be a finite number of seconds"):
        StragglerPolicy(interval_s=-1)


def test_full_windows_confirm_once_they_span_the_minimum():
    # A rank 20 % slower in every window: at a 3 s interval two windows span 6 s, under
    # min_slow_s (6.5 s): the third confirms; at 5 s the second does; without an interval
    # (or with min_slow_s=0) the second does too; at 0.5 s min_slow_windows (3) decides.
    def first(policy, slower=(1.2,) * 6):
        for i in range(10):
            times = np.full(4, 100.0)
            times[3] *= slower[i - 4] if i >= 4 else 1.0
            if policy.update(np.arange(4), {"step": times}, steps={"step": 200},
                             spread={"step": np.full(4, 0.01)}).confirmed:
                return i - 3
        return None

    assert first(StragglerPolicy(interval_s=3.0)) == 3
    assert first(StragglerPolicy(interval_s=5.0)) == 2
    assert first(StragglerPolicy()) == 2
    assert first(StragglerPolicy(PolicyConfig(min_slow_s=0), interval_s=3.0)) == 2
    # Every window since the evidence started counts, one under the effect-size gate (2 %)
    # between two slow ones too: 9 s by the second slow window.
    assert first(StragglerPolicy(interval_s=3.0), (1.2, 1.02, 1.2, 1.2)) == 3
    # A short interval: min_slow_windows (3) windows suffice, not min_slow_s (13 at 0.5 s).
    assert first(StragglerPolicy(interval_s=0.5)) == 3
    assert first(StragglerPolicy(PolicyConfig(min_slow_windows=5), interval_s=0.5)) == 5


def test_noisy_rank_that_recovers_clears_within_its_noise():
    # Rank 4 swings between 1.00x and 1.06x every report (a noisy rank), is 30 % slower for
    # five reports, then swings again. Its 1.06x reports score 0.943, below clear_threshold,
    # but within one sigma of its own noise they count as healthy, so it clears.
    def run(noise_z: float) -> list:
        policy = StragglerPolicy(_k_of_n(noise_z=noise_z, k=3, n=4))
        out = []
        for i in range(45):
            factor = 1.3 if 15 <= i < 20 else (1.06 if i % 2 else 1.0)
            out.append(policy.update(RANKS, {"step": _times({4: factor})}))
        return out

    decisions = run(2.5)
    assert any(4 in d.confirmed for d in decisions[15:20])
    assert all(4 not in d.confirmed for d in decisions[:15])
    assert 4 not in decisions[-1].confirmed
    # Without the noise band (noise_z=0 turns gate and band off) the swings keep it confirmed.
    assert 4 in run(0.0)[-1].confirmed


# ---------------------------------------------------------------------------------- restarts
def test_state_dict_round_trip_keeps_confirmation_and_learned_structure():
    rng = np.random.default_rng(5)
    series = [10 * STAGES * _times(base=1.0, jitter=0.003, rng=rng) for _ in range(6)]
    slow = [x * _times({6: 1.2}, base=1.0) for x in series + series[:1]]
    first = StragglerPolicy()
    _feed(first, series + slow[:4])
    assert first.confirmed == frozenset({6})
    restored = StragglerPolicy()
    restored.load_state_dict(first.state_dict())
    assert restored.confirmed == frozenset({6})
    assert restored.groups("step") == first.groups("step")
    assert restored.reports_seen == first.reports_seen
    # Both go on identically.
    a = first.update(RANKS, {"step": slow[4]})
    b = restored.update(RANKS, {"step": slow[4]})
    assert a.confirmed == b.confirmed and np.allclose(a.peer_scores["step"], b.peer_scores["step"])


def test_load_state_dict_rejects_garbage():
    with pytest.raises(ValueError, match=r"is not a StragglerPolicy\.state_dict"):
        StragglerPolicy().load_state_dict({"version": 99})


def test_a_slow_rank_is_a_suspect_until_it_is_confirmed():
    policy = StragglerPolicy(PolicyConfig(noise_z=0.0, structure_warmup=1))
    _feed(policy, [_times()] * 3)
    decisions = _feed(policy, [_times({5: 1.3})] * 6)
    first_confirmed = next(i for i, d in enumerate(decisions) if d.confirmed)
    assert all(d.suspects == {5} for d in decisions[:first_confirmed])
    assert all(d.suspects == frozenset() and d.confirmed == {5}
               for d in decisions[first_confirmed:])
