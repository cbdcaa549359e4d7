"""A confirmed straggler is no reference: in a group of two, once one rank is confirmed, the
other's ratio to it is no evidence (live: README's snippet on 2 ranks, rank 1 slowed, confirmed
the waiting rank 0 on `section:optimizer` too). Synthetic, no process group."""

from __future__ import annotations

import math

import numpy as np
from straggler.analysis.peers import only_confirmed_peers
from straggler.analysis.policy import StragglerPolicy

STEPS = 200
SPREAD = 0.1  # log-spread of one step (sigmas)


def _run(world: int, reports: int = 12):
    """Rank 1's forward 1.3x slower from the start; rank 0's optimizer 6 % slower from the
    fourth report (after rank 1 is confirmed). The decisions of every report."""
    policy = StragglerPolicy()
    ranks = np.arange(world)
    se = np.full(world, 1.2533 * SPREAD / math.sqrt(STEPS))
    out = []
    for i in range(reports):
        forward = np.ones(world)
        forward[1] = 1.3
        optimizer = np.ones(world)
        if i >= 3:
            optimizer[0] = 1.06
        times = {"section:forward": forward, "section:optimizer": optimizer}
        out.append(policy.update(ranks, times, dict.fromkeys(times, STEPS),
                                 dict.fromkeys(times, se)))
    return out


def test_the_only_peer_of_a_confirmed_straggler_is_not_confirmed_against_it():
    decisions = _run(2)
    assert 1 in decisions[2].confirmed
    assert all(d.confirmed == {1} for d in decisions[2:])
    assert all(0 not in d.suspects for d in decisions[4:])  # no early reports for it either


def test_a_rank_with_a_healthy_peer_is_still_judged_against_it():
    decisions = _run(3)
    assert decisions[-1].confirmed == {0, 1}
    assert decisions[-1].states[0].reasons == {"section:optimizer": "relative"}


def test_only_confirmed_peers_marks_a_group_left_with_one_unconfirmed_rank():
    values = np.array([1.0, 2.0, 1.0, 1.0, np.nan])
    groups = np.array([0, 0, 1, 1, 1])
    confirmed = np.array([False, True, False, False, False])
    assert only_confirmed_peers(values, groups, confirmed).tolist() == [True, False, False,
                                                                          False, False]
    assert not only_confirmed_peers(values, groups, np.zeros(5, dtype=bool)).any()
    alone = np.array([1.0, np.nan])  # no peer with a value: nothing to say
    assert not only_confirmed_peers(alone, np.zeros(2, np.int64), np.array([False, True])).any()
