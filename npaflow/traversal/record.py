"""What a walk did: the steps it materialized, the waves it dispatched, the steps it skipped."""

from __future__ import annotations

from dataclasses import dataclass, field

from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave


@dataclass
class WalkRecord:
    """What a walk did: every materialized step and every wave it dispatched."""

    steps: list[PlanStep] = field(default_factory=list)
    waves: list[Wave] = field(default_factory=list)
    skipped: list[PlanStep] = field(default_factory=list)
