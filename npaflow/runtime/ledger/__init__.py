"""The `npa.workflow.runtime.v1` ledger: its records, the deltas a run exports, the merged document.

The front door: import the ledger's models from here. Inside:

- `attempt.py`: one wave attempt record (its tasks, observations, cancellation, spend).
- `models.py`: the finished waves and stages, the delta a run exports, the whole ledger.
- `records.py`: the small records (decisions, watermarks, launch receipts, plan changes).
- `book.py`: what a run has not yet exported, by version (the workflow side).
- `document.py`: the stored document a delta is merged into (the activity side).
- `projection.py`: the manifest, status and stage views written beside it.

A new run-level ledger field needs these edits, in this order:

1. the field on `RuntimeLedger` (models.py), with a default so older ledgers load;
2. the field on `LedgerDelta` (models.py), and where `RunState.pending_delta`
   (npaflow/runtime/run_state.py) fills it from the run's state;
3. what `LedgerBook.is_behind`/`delta` (book.py) must remember so it is sent
   once and re-sent until written;
4. the merge in `LedgerDocument.merge` (document.py), and the field in the
   documents written beside the ledger if it is shown there (projection.py);
5. the field in docs/compatibility.md's "additive ledger fields" row, and a
   test in tests/unit/test_ledger_document.py that a delta carries it.
"""

from npaflow.runtime.ledger.attempt import (
    Cancellation,
    Credentials,
    MaybeFailureClass,
    MaybeJobStatus,
    Observation,
    TaskRow,
    WaveAttemptRecord,
    latest_attempts,
)
from npaflow.runtime.ledger.models import (
    RUN_SCHEMA,
    RUNTIME_SCHEMA,
    FinishedWave,
    LedgerDelta,
    ReconciledJob,
    RuntimeLedger,
    StageRecord,
)
from npaflow.runtime.ledger.records import (
    CachedStep,
    CarriedMember,
    DecisionRecord,
    LaunchReceipt,
    PlanChangeRecord,
    PlannedStep,
    Watermark,
)
from npaflow.runtime.ledger.spend import UsagePart, attempt_usage

__all__ = [
    "RUNTIME_SCHEMA",
    "RUN_SCHEMA",
    "CachedStep",
    "Cancellation",
    "CarriedMember",
    "Credentials",
    "DecisionRecord",
    "FinishedWave",
    "LaunchReceipt",
    "LedgerDelta",
    "MaybeFailureClass",
    "MaybeJobStatus",
    "Observation",
    "PlanChangeRecord",
    "PlannedStep",
    "ReconciledJob",
    "RuntimeLedger",
    "StageRecord",
    "TaskRow",
    "UsagePart",
    "Watermark",
    "WaveAttemptRecord",
    "attempt_usage",
    "latest_attempts",
]
