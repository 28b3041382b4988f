"""The one traversal shared by the planner and the Temporal workflow."""

from npaflow.traversal.models import (
    DecisionRequest,
    Executor,
    TriggerRequest,
    Wave,
    WaveKind,
    WaveOutcome,
)
from npaflow.traversal.walk import (
    StepLimitError,
    UnmatchedDecisionError,
    Walker,
    WalkRecord,
    WaveFailedError,
)

__all__ = [
    "DecisionRequest",
    "Executor",
    "StepLimitError",
    "TriggerRequest",
    "UnmatchedDecisionError",
    "WalkRecord",
    "Walker",
    "Wave",
    "WaveFailedError",
    "WaveKind",
    "WaveOutcome",
]
