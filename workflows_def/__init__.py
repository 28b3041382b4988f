"""Temporal workflow definitions: deterministic glue between the traversal and activities."""

from workflows_def.artifacts_workflow import NpaflowArtifacts
from workflows_def.cache_admin_workflow import NpaflowCacheAdmin
from workflows_def.cache_flight_workflow import NpaflowCacheFlight
from workflows_def.ledger_repair_workflow import NpaflowLedgerRepair
from workflows_def.logs_workflow import NpaflowJobLogs
from workflows_def.quota_pool_workflow import NpaflowQuotaPool
from workflows_def.reconcile_workflow import NpaflowReconcileRun
from workflows_def.recorder import PHASE_ATTRIBUTE, SEARCH_ATTRIBUTE_KEYS, STATE_ATTRIBUTE, WORKFLOW_ATTRIBUTE
from workflows_def.report_workflow import NpaflowRunReport
from workflows_def.run_workflow import NpaWorkflowRun

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
    "NpaflowJobLogs",
    "NpaflowLedgerRepair",
    "NpaflowQuotaPool",
    "NpaflowReconcileRun",
    "NpaflowRunReport",
]
