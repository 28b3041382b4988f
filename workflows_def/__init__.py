"""Temporal workflow definitions: deterministic glue between the traversal and activities.

A room per concern: `run/` (the run), `cache/` and `quota/` (each feature's
wave layer and coordinator workflow), `fanout/` (fan-out's reads, layer and
list diff), `helpers/` (the CLI's helper workflows).
Shared by every room: `activity_calls.py` (each activity's options, sendable
inputs), `wave_layers.py` (the one shape of a wave-level feature),
`run_deps.py` (what a run's layers are built from), `patches.py`,
`metrics.py`, `input_refusal.py` and `cleanup.py`.
"""

from workflows_def.cache.admin_workflow import NpaflowCacheAdmin
from workflows_def.cache.flight_workflow import NpaflowCacheFlight
from workflows_def.fanout.diff_workflow import NpaflowItemsDiff
from workflows_def.helpers.artifacts import NpaflowArtifacts
from workflows_def.helpers.ledger_repair import NpaflowLedgerRepair
from workflows_def.helpers.logs import NpaflowJobLogs
from workflows_def.helpers.reconcile import NpaflowReconcileRun
from workflows_def.helpers.report import NpaflowRunReport
from workflows_def.helpers.run_waves import NpaflowRunWaves
from workflows_def.quota.pool_workflow import NpaflowQuotaPool
from workflows_def.run.recorder import (
    PHASE_ATTRIBUTE,
    SEARCH_ATTRIBUTE_KEYS,
    STATE_ATTRIBUTE,
    WORKFLOW_ATTRIBUTE,
)
from workflows_def.run.workflow import NpaWorkflowRun

#: Every workflow a worker registers.
WORKFLOWS = [
    NpaWorkflowRun,
    NpaflowJobLogs,
    NpaflowLedgerRepair,
    NpaflowArtifacts,
    NpaflowReconcileRun,
    NpaflowCacheFlight,
    NpaflowCacheAdmin,
    NpaflowQuotaPool,
    NpaflowRunReport,
    NpaflowItemsDiff,
    NpaflowRunWaves,
]

__all__ = [
    "PHASE_ATTRIBUTE",
    "SEARCH_ATTRIBUTE_KEYS",
    "STATE_ATTRIBUTE",
    "WORKFLOWS",
    "WORKFLOW_ATTRIBUTE",
    "NpaWorkflowRun",
    "NpaflowArtifacts",
    "NpaflowCacheAdmin",
    "NpaflowCacheFlight",
    "NpaflowItemsDiff",
    "NpaflowJobLogs",
    "NpaflowLedgerRepair",
    "NpaflowQuotaPool",
    "NpaflowReconcileRun",
    "NpaflowRunReport",
    "NpaflowRunWaves",
]
