"""The one traversal shared by the planner and the Temporal workflow.

The front door. Inside:

- `walk.py`: the `Walker`, which expands the state graph.
- `branching.py`: where a decision leads.
- `reads.py`: trigger waits and decision reads, through the executor.
- `wave_building.py`: steps into serial waves and group batches.
- `models.py`: the wave, its outcome, the executor protocol.
"""

from npaflow.traversal.branching import UnmatchedDecisionError
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
