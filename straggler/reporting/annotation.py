"""What completes a report after its scores: the policy's decision, GPU identities and causes.

`apply_policy` feeds a report to the persistence policy (`straggler.analysis.policy`) and fills
in the confirmed stragglers; `ReportAnnotator` adds each rank's GPU identity and the cause of
each flagged rank (`straggler.analysis.causes.diagnose`), running the collectives that needs
(one identity gather, and the health probe on suspects). The arithmetic stays in the pure
`straggler.analysis`; this module is the glue that talks to the group.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

import torch

from .._log import WarnOnce
from ..analysis import own_time
from ..analysis.causes import Cause, CauseRules, Diagnosis, diagnose
from ..analysis.policy import (
    StragglerPolicy,
    culprit_shares,
    observation_from_report,
    window_low,
    window_recent,
    window_spread,
    window_steps,
)
from ..telemetry.device import current_cuda_device
from ..telemetry.probe import ProbeResult, probe_group
from .report import StragglerId

__all__ = ["ReportAnnotator", "apply_policy"]

log = logging.getLogger("straggler")

_DEFAULT_RULES = CauseRules()
# Causes the health probe can refine: a slow GPU that telemetry does not explain.
_PROBE_WORTHY = (Cause.GPU_SLOW_HEALTHY_TELEMETRY, Cause.UNKNOWN)


def apply_policy(policy: StragglerPolicy, report: Any, early: bool | None = None) -> Any:
    """Feed ``report`` to ``policy``; return the report with ``confirmed``, ``suspects`` and
    states filled in. ``early``: whether the report's window was an early report's (None:
    unknown, the policy reads it from the window's steps)."""
    ranks, times = observation_from_report(report)
    steps = window_steps(report)
    spread, low, recent = (window_spread(report, ranks, steps), window_low(report, ranks),
                           window_recent(report, ranks))
    # A rank's own time per step, judged like a section (analysis/own_time.py).
    own_times, own_steps, own_spread, own_low, own_recent = own_time.policy_inputs(
        getattr(report, "own_time", None), ranks)
    times.update(own_times)
    steps.update(own_steps)
    spread.update(own_spread)
    low.update(own_low)
    recent.update(own_recent)
    decision = policy.update(ranks, times, steps, spread, culprit_shares(report), low, recent,
                             early=early)
    nodes = report.rank_to_node

    def ids(ranks: frozenset[int]) -> frozenset[StragglerId]:
        return frozenset(StragglerId(r, nodes.get(r, "<unknown>")) for r in ranks)

    return dataclasses.replace(report, confirmed=ids(decision.confirmed),
                               suspects=ids(decision.suspects),
                               straggler_states=dict(decision.states))


class ReportAnnotator:
    """Completes each report with GPU identities and causes; a collective on every rank.

    Once (first report, when the report covers the group): one ``all_gather_object`` of each
    rank's `GpuIdentity` (and, with ``gpu_timing``, why it has no GPU timers, for the evidence).
    With ``probe_suspects``: one all_reduce(MAX) of a flag per report and,
    when a flagged rank's GPU is slow with no telemetry explanation, the health probe on every
    rank (`straggler.telemetry.probe.probe_group`, a few ms) so its diagnosis can say whether
    the GPU itself is slow (`Cause.GPU_SLOW_PROBE_CONFIRMED`) or the rank has more work
    (`Cause.MORE_WORK`). Diagnosis errors are logged once and leave the report without causes;
    collective errors propagate (the peers' state is then unknown).
    """

    def __init__(self, comm: Any, identity: Any, gather: bool, device: int | None = None, *,
                 probe_suspects: bool = False, rules: CauseRules = _DEFAULT_RULES,
                 probe_options: Mapping[str, Any] | None = None,
                 gpu_timing: Callable[[], str | None] | None = None) -> None:
        self.comm = comm
        self.identity = identity
        # Why this rank has no GPU timers (None: it has some); sent along with the identity.
        self.gpu_timing = gpu_timing
        self._no_gpu_timers: dict[int, str | None] = {}
        self.gather = gather
        self.device = device
        self.probe_suspects = probe_suspects
        self.rules = rules
        self.probe_options = dict(probe_options or {})
        self._gpus: dict[int, Any] | None = None
        self._warn_once = WarnOnce(log)
        self.last_probe: Mapping[int, ProbeResult] | None = None

    def __call__(self, report: Any) -> Any:
        """``report`` with ``gpus`` and ``causes`` filled in (None on ranks without a report)."""
        gpus = self._identities()
        if report is not None:
            report = dataclasses.replace(report, gpus=gpus)
        causes = self._diagnose(report)
        if self.probe_suspects and self._agree_on_probe(causes):
            device = self.device if self.device is not None else current_cuda_device()
            self.last_probe = probe_group(self.comm, device, **self.probe_options)
            relative = {r: p.relative for r, p in self.last_probe.items()}
            refined = self._diagnose(report, probe=relative)
            causes = refined if refined is not None else causes
        if report is not None and causes is not None:
            report = dataclasses.replace(report, causes=causes)
        return report

    def _diagnose(self, report: Any, probe: Mapping[int, float] | None = None
                  ) -> dict[int, Diagnosis] | None:
        """The report's causes; None without a report or when the diagnosis failed (logged)."""
        if report is None:
            return None
        try:
            return diagnose(report, probe=probe, rules=self.rules,
                            no_gpu_timers=self._no_gpu_timers)
        except Exception as exc:  # noqa: BLE001 - a diagnosis bug must not stop detection
            self._warn(exc)
            return None

    def _agree_on_probe(self, causes: Mapping[int, Diagnosis] | None) -> bool:
        """Whether any rank wants the probe: one all_reduce(MAX) that every rank joins."""
        worthy = any(d.cause in _PROBE_WORTHY
                     and d.values.get("gpu_score", float("nan")) < self.rules.slow_score
                     for d in (causes or {}).values())
        flag = self.comm.all_reduce(torch.tensor([float(worthy)], dtype=torch.float64), "max")
        return float(flag[0]) > 0

    def _identities(self) -> dict[int, Any]:
        if self._gpus is None:
            # Read now, not at construction: the provider follows the job's choice of GPU.
            identity = self.identity() if callable(self.identity) else self.identity
            timing = self.gpu_timing() if self.gpu_timing is not None else None
            own = self.comm.global_ranks[self.comm.rank]
            self._no_gpu_timers = {own: timing}
            if self.gather:
                payload = (identity, timing) if self.gpu_timing is not None else identity
                gathered = self.comm.all_gather_object(payload)
                if self.gpu_timing is not None:
                    self._no_gpu_timers = {self.comm.global_ranks[i]: t
                                           for i, (_, t) in enumerate(gathered)}
                    gathered = [g for g, _ in gathered]
                self._gpus = {self.comm.global_ranks[i]: g for i, g in enumerate(gathered)
                              if g is not None and getattr(g, "known", True)}
            else:
                known = identity is not None and getattr(identity, "known", True)
                self._gpus = {own: identity} if known else {}
        return self._gpus

    def _warn(self, exc: BaseException) -> None:
        self._warn_once("diagnose", "straggler: diagnosing the report's stragglers failed (%s: "
                        "%s); reports go on without causes", type(exc).__name__, exc)
