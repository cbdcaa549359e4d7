"""The reporting rank's per-report line of an attached job (docs/attach.md): who, which node,
why, and who the job waited for."""

from __future__ import annotations

from types import SimpleNamespace

from straggler import StragglerId
from straggler.attach.worker import report_line


def _report(confirmed=(), causes=None, culprits=()):
    return SimpleNamespace(confirmed={StragglerId(r, "node-b") for r in confirmed},
                           causes=causes or {}, culprits=list(culprits),
                           rank_to_node={0: "node-a", 1: "node-a", 2: "node-b", 3: "node-b"})


def test_a_clean_report_names_nobody():
    assert report_line(_report(), 3, 120, "optimizer") == \
        "straggler: report 3 (step 120, optimizer boundary): stragglers: none"


def test_the_line_names_each_rank_with_its_node_and_cause():
    cause = SimpleNamespace(cause=SimpleNamespace(value="late_outside_compute"))
    waited = SimpleNamespace(rank=2, time_lost_s=1.5234, share=0.42)
    line = report_line(_report([2], {2: cause}, [waited]), 4, 73, "optimizer")
    assert line == ("straggler: report 4 (step 73, optimizer boundary): stragglers: rank 2 "
                    "(node node-b): late_outside_compute; the job waited for rank 2 (node "
                    "node-b, 1.52 s, 42%)")
