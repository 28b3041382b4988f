"""The names every layer shares, each defined once (docs/architecture.md).

Workflow types, task queues, search attributes, activities bound to their input
and result types, error types with their retry meaning, the ledger layout, and
environment variables with their defaults.

The workflow calls activities through these references (`LAUNCH_WAVE`, ...),
the activities register under `ref.name`, and the worker registers from
`ACTIVITIES`; "find references" on one of them shows the call and the
implementation side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from npaflow.errors import ErrorType
from npaflow.fanout.changes import DiffItemsInput, ItemsChanges
from npaflow.fanout.models import ItemsRead, ReadItemsInput, WriteMembersInput
from npaflow.runtime.cache.admin import CacheAdminInput, CacheAdminResult
from npaflow.runtime.cache.messages import (
    CacheLookupInput,
    CacheLookupResult,
    CacheStoreInput,
    CacheStoreResult,
    FlightAnswer,
    RequestFlightInput,
)
from npaflow.runtime.environment import DEFAULT_TASK_QUEUE, ENV_DEFAULTS, EnvVar
from npaflow.runtime.ledger_layout import (
    LAUNCHES_DIR,
    LEDGER_DIR,
    MANIFEST_FILE,
    REPORT_FILE,
    RUNTIME_FILE,
    SPEC_FILE,
    STATUS_FILE,
    ledger_file_uri,
    spec_file_uri,
)
from npaflow.runtime.loaded import LoadSpecInput
from npaflow.runtime.messages import (
    AwaitResult,
    AwaitWaveInput,
    CancelResult,
    CancelWaveInput,
    CheckOutputsInput,
    CheckOutputsResult,
    DecisionResult,
    ExportLedgerInput,
    ExportResult,
    LaunchResult,
    LaunchWaveInput,
    ReadDecisionInput,
    RequestCancelInput,
    TriggerResult,
    WaitTriggerInput,
)
from npaflow.runtime.notifications import NotificationResult, RunNotification
from npaflow.runtime.reads import (
    JobLogs,
    ListArtifactsInput,
    ReadJobLogsInput,
    RenderReportInput,
    RunArtifacts,
    RunReport,
    RunWaves,
    RunWavesInput,
)
from npaflow.runtime.reconcile import models as reconcile
from npaflow.runtime.run_memo import RunMemo
from npaflow.runtime.spec_parts import LoadPart, LoadPartInput, SpecLoad
from npaflow.runtime.status import FailureClass

# --- workflows and task queues ------------------------------------------------------------

#: The run workflow; `temporal workflow start --type NpaWorkflowRun` uses this name.
WORKFLOW_TYPE = "NpaWorkflowRun"
#: How a run's error starts when npaflow's own workflow code broke (a bug, not the job's failure).
INTERNAL_ERROR_PREFIX = "internal error in the run's workflow code"
#: A small workflow that reads job logs where the jobs run (`npaflow logs`).
LOGS_WORKFLOW_TYPE = "NpaflowJobLogs"
#: A small workflow that writes what a closed run's ledger lacks (`npaflow status` starts it).
LEDGER_REPAIR_WORKFLOW_TYPE = "NpaflowLedgerRepair"
#: A small workflow that lists a run's artifacts where its storage is (`npaflow artifacts`).
ARTIFACTS_WORKFLOW_TYPE = "NpaflowArtifacts"
#: Reads a run's forEach lists again where its storage is (`resume --reread-items` shows the diff).
ITEMS_DIFF_WORKFLOW_TYPE = "NpaflowItemsDiff"
#: Reads a page of an ended run's wave attempts from its ledger (`npaflow status` of a long run).
RUN_WAVES_WORKFLOW_TYPE = "NpaflowRunWaves"
#: Renders a run's report.html where its storage is (`npaflow report`, `status --write-report`).
REPORT_WORKFLOW_TYPE = "NpaflowRunReport"
#: `npaflow cache list | explain | purge` (workflows_def/cache/admin_workflow.py).
CACHE_ADMIN_WORKFLOW_TYPE = "NpaflowCacheAdmin"
#: Cancels, by exact id, the jobs of a run that ended without its cleanup (worker/reconciler.py).
RECONCILE_WORKFLOW_TYPE = "NpaflowReconcileRun"
#: The signal a worker's sweep sends it with the orphans it found (signal-with-start).
RECONCILE_SIGNAL = "orphans"
#: Its query: the jobs reconciled so far (`npaflow status` of a terminated run).
RECONCILED_QUERY = "reconciled"
#: Pollers (await_wave, wait_trigger) live on `<queue>-poll` so they never starve launches.
POLL_QUEUE_SUFFIX = "-poll"
#: Each worker also serves `<queue>@<worker id>`: local-backend jobs' own activities.
WORKER_QUEUE_SEPARATOR = "@"


class Signal(StrEnum):
    """Signals the run workflow accepts (also: `temporal workflow signal --name ...`)."""

    CANCEL = "cancel"  # reason: any JSON (signal_input.py); Temporal's own cancel's cleanup
    PAUSE = "pause"  # launch no new wave; in-flight waves finish
    RESUME = "resume"  # continue a paused run, or retry a suspended run's failed wave


#: The run workflow's live-status query (`temporal workflow query --name status`).
STATUS_QUERY = "status"
#: The export the run's ledger lacks (null when current); answered for closed runs too.
PENDING_LEDGER_QUERY = "pending_ledger"


def poll_task_queue(main_queue: str) -> str:
    """The pollers' task queue that belongs to a main task queue."""
    return main_queue + POLL_QUEUE_SUFFIX


def worker_task_queue(main_queue: str, worker_id: str) -> str:
    """The task queue only one worker serves: activities of the local jobs it holds."""
    return f"{main_queue}{WORKER_QUEUE_SEPARATOR}{worker_id}"


class QueueKind(StrEnum):
    """Which of a worker's task queues serves an activity."""

    MAIN = "main"  # short activities, next to the workflows
    POLL = "poll"  # long heartbeating waits
    WORKER = "worker"  # activities that must run on the host holding a local job


# --- search attributes --------------------------------------------------------------------


class SearchAttribute(StrEnum):
    """Search attributes the run workflow upserts (registered by the worker and `npaflow dev`)."""

    PHASE = "NpaflowPhase"  # RunPhase value: find suspended or paused runs with no worker up
    WORKFLOW = "NpaflowWorkflow"  # the spec's metadata.name: every run of one workflow
    STATE = "NpaflowState"  # the states running now (a list): runs sitting in one state


#: Temporal's own attribute for workflows that are not the namespace's business: its default
#: list (and the UI's) leaves them out, as it leaves out a schedule's own workflow.
NAMESPACE_DIVISION_ATTRIBUTE = "TemporalNamespaceDivision"
#: The division of npaflow's helper workflows (log and artifact reads, orphan reconciles,
#: ledger repairs): `TemporalNamespaceDivision = 'npaflow-helpers'` lists them.
HELPER_DIVISION = "npaflow-helpers"

#: Search attribute name -> Temporal index type (as `temporal server start-dev
#: --search-attribute NAME=TYPE` and `temporal operator search-attribute create` spell it).
SEARCH_ATTRIBUTE_TYPES: dict[str, str] = {
    SearchAttribute.PHASE.value: "Keyword",
    SearchAttribute.WORKFLOW.value: "Keyword",
    SearchAttribute.STATE.value: "KeywordList",
}

# --- activities ---------------------------------------------------------------------------

InputT = TypeVar("InputT", bound=BaseModel)
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class ActivityRef(Generic[InputT, ResultT]):
    """One activity: its registered name, its input and result types, and its queue."""

    name: str
    input_type: type[InputT]
    result_type: type[ResultT]
    queue: QueueKind = QueueKind.MAIN


LOAD_SPEC = ActivityRef("load_spec", LoadSpecInput, SpecLoad)
READ_LOAD_PART = ActivityRef("read_load_part", LoadPartInput, LoadPart)
LAUNCH_WAVE = ActivityRef("launch_wave", LaunchWaveInput, LaunchResult)
AWAIT_WAVE = ActivityRef("await_wave", AwaitWaveInput, AwaitResult, QueueKind.POLL)
CANCEL_WAVE = ActivityRef("cancel_wave", CancelWaveInput, CancelResult)
CHECK_OUTPUTS = ActivityRef("check_outputs", CheckOutputsInput, CheckOutputsResult)
READ_DECISION = ActivityRef("read_decision", ReadDecisionInput, DecisionResult)
WAIT_TRIGGER = ActivityRef("wait_trigger", WaitTriggerInput, TriggerResult, QueueKind.POLL)
EXPORT_LEDGER = ActivityRef("export_ledger", ExportLedgerInput, ExportResult)
REQUEST_CANCEL = ActivityRef("request_cancel", RequestCancelInput, type(None))
READ_JOB_LOGS = ActivityRef("read_job_logs", ReadJobLogsInput, JobLogs)
NOTIFY_RUN = ActivityRef("notify_run", RunNotification, NotificationResult)
LIST_ARTIFACTS = ActivityRef("list_artifacts", ListArtifactsInput, RunArtifacts)
CHECK_RUN = ActivityRef("check_run", reconcile.CheckRunInput, reconcile.RunStanding)
RECORD_RECONCILED = ActivityRef("record_reconciled", reconcile.RecordReconciledInput, reconcile.LedgerWritten)
CACHE_LOOKUP = ActivityRef("cache_lookup", CacheLookupInput, CacheLookupResult)
CACHE_STORE = ActivityRef("cache_store", CacheStoreInput, CacheStoreResult)
REQUEST_FLIGHT = ActivityRef("request_cache_flight", RequestFlightInput, FlightAnswer)
CACHE_ADMIN = ActivityRef("cache_admin", CacheAdminInput, CacheAdminResult)
RENDER_REPORT = ActivityRef("render_report", RenderReportInput, RunReport)
READ_RUN_WAVES = ActivityRef("read_run_waves", RunWavesInput, RunWaves)
READ_ITEMS = ActivityRef("read_items", ReadItemsInput, ItemsRead)
WRITE_MEMBERS = ActivityRef("write_members", WriteMembersInput, type(None))
DIFF_ITEMS = ActivityRef("diff_items", DiffItemsInput, ItemsChanges)

#: Every activity; a worker registers an implementation for each (worker/registry.py).
ACTIVITIES: tuple[ActivityRef[Any, Any], ...] = (
    LOAD_SPEC,
    READ_LOAD_PART,
    LAUNCH_WAVE,
    AWAIT_WAVE,
    CANCEL_WAVE,
    CHECK_OUTPUTS,
    READ_DECISION,
    WAIT_TRIGGER,
    EXPORT_LEDGER,
    REQUEST_CANCEL,
    READ_JOB_LOGS,
    NOTIFY_RUN,
    LIST_ARTIFACTS,
    CHECK_RUN,
    RECORD_RECONCILED,
    CACHE_LOOKUP,
    CACHE_STORE,
    REQUEST_FLIGHT,
    CACHE_ADMIN,
    RENDER_REPORT,
    READ_RUN_WAVES,
    READ_ITEMS,
    WRITE_MEMBERS,
    DIFF_ITEMS,
)
#: Served on each worker's own queue as well: a local job's activities run on its host, and a
#: launch interrupted there is reconciled there.
WORKER_QUEUE_ACTIVITIES = (LAUNCH_WAVE, AWAIT_WAVE, CANCEL_WAVE, READ_JOB_LOGS)

# --- error types --------------------------------------------------------------------------


_ERROR_CLASSES = {
    ErrorType.SPEC: FailureClass.CONFIGURATION,
    ErrorType.CONFIGURATION: FailureClass.CONFIGURATION,
    ErrorType.ACCESS_DENIED: FailureClass.CONFIGURATION,
    ErrorType.LAUNCH_UNIDENTIFIED: FailureClass.CONFIGURATION,
    ErrorType.LAUNCH_MOVED: FailureClass.CONTROLLER,
    ErrorType.PAYLOAD: FailureClass.PAYLOAD,
    ErrorType.CAPACITY: FailureClass.CAPACITY,
    ErrorType.CONTROLLER: FailureClass.CONTROLLER,
    ErrorType.TRANSPORT: FailureClass.TRANSPORT,
    ErrorType.INFRA: FailureClass.CONTROLLER,
}


def error_failure_class(kind: ErrorType) -> FailureClass:
    """The failure class a wave attempt gets when its activity fails with this type."""
    return _ERROR_CLASSES[kind]


#: For activity retry policies: every type a retry of the same activity cannot fix.
NON_RETRYABLE_ERROR_TYPES: list[str] = [t.value for t in ErrorType if not t.is_retryable()]

# --- the run's memo ------------------------------------------------------------------------
# RunMemo lives in npaflow/runtime/run_memo.py and is part of this contract.


# --- environment ---------------------------------------------------------------------------
# EnvVar and ENV_DEFAULTS live in npaflow/runtime/environment.py (imported by the fast CLI
# paths without the activity models) and are part of this contract.

#: Re-exported: every contract name is importable from this module.
__all__ = [
    "DEFAULT_TASK_QUEUE",
    "ENV_DEFAULTS",
    "LAUNCHES_DIR",
    "LEDGER_DIR",
    "MANIFEST_FILE",
    "REPORT_FILE",
    "RUNTIME_FILE",
    "SPEC_FILE",
    "STATUS_FILE",
    "EnvVar",
    "RunMemo",
    "ledger_file_uri",
    "spec_file_uri",
]
