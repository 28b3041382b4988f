"""The one traversal shared by the planner and the Temporal workflow.

The front door. Inside:

- `walk.py`: the `Walker`, which expands the state graph.
- `branching.py`: where a decision leads.
- `reads.py`: trigger waits and decision reads, through the executor.
- `wave_building.py`: steps into serial waves and group batches.
- `fan_out.py`: a `forEach:` group's walk (npaflow/fanout/ holds its pure rules).
- `record.py`: what a walk did.
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
from npaflow.traversal.record import WalkRecord
from npaflow.traversal.walk import (
    StepLimitError,
    Walker,
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
