"""The orphan reconciler's pure part: job owners, orphans, and how a run ended (DESIGN §3.5)."""

from npaflow.runtime.reconcile.ledger_change import cancelled_unverified, in_flight, left_open, unended_jobs
from npaflow.runtime.reconcile.models import (
    RECONCILE_ID_PREFIX,
    CheckRunInput,
    EndedJob,
    JobOwner,
    LedgerClosure,
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
    "EndedJob",
    "JobOwner",
    "LedgerClosure",
    "LiveJob",
    "OrphanBatch",
    "ReconcileResult",
    "RecordReconciledInput",
    "RunStanding",
    "cancelled_unverified",
    "in_flight",
    "left_open",
    "orphan_candidates",
    "reconcile_workflow_id",
    "unended_jobs",
]
