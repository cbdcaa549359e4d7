"""Pure arithmetic over reports: statistics, scores, the persistence policy and cause rules.
No process group, no GPU: each function takes numbers and returns numbers or labels.

The names below are the sub-package's API; the modules (`statistics`, `scoring`, `policy`,
`policy_config`, `peers`, `persistence`, `causes`) hold the rest.
"""

from __future__ import annotations

from .causes import Cause, CauseRules, Diagnosis, diagnose, format_causes
from .policy import PolicyConfig, PolicyDecision, StragglerPolicy, make_policy
from .statistics import Statistic

__all__ = ["Statistic", "PolicyConfig", "PolicyDecision", "StragglerPolicy", "make_policy",
           "Cause", "CauseRules", "Diagnosis", "diagnose", "format_causes"]
