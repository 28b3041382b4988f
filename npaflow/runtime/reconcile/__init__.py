"""The orphan reconciler's pure part: job owners, orphans, and how a run ended (DESIGN §3.5)."""

from npaflow.runtime.reconcile.models import (
    RECONCILE_ID_PREFIX,
    CheckRunInput,
    JobOwner,
    LiveJob,
    OrphanBatch,
    ReconcileResult,
    RecordReconciledInput,
    RunStanding,
    reconcile_workflow_id,
)
from npaflow.runtime.reconcile.sweep import orphan_candidates

__all__ = [
    "RECONCILE_ID_PREFIX",
    "CheckRunInput",
    "JobOwner",
    "LiveJob",
    "OrphanBatch",
    "ReconcileResult",
    "RecordReconciledInput",
    "RunStanding",
    "orphan_candidates",
    "reconcile_workflow_id",
]
