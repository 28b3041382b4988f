"""Typed activity calls, with every activity's timeouts and retry policy in one place."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, TimeoutType

from npaflow.document.problems import validation_problems
from npaflow.errors import ErrorType
from npaflow.runtime.contract import (
    NON_RETRYABLE_ERROR_TYPES,
    ActivityRef,
    QueueKind,
    error_failure_class,
    poll_task_queue,
)
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.messages import JobRef
from npaflow.runtime.payload_limits import past_the_ceiling
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass
from npaflow.runtime.timestamps import TIMESTAMP_FORMAT
from npaflow.runtime.ui_text import one_line

InputT = TypeVar("InputT", bound=BaseModel)
ResultT = TypeVar("ResultT")

#: Short activities: a few quick retries for what a retry can fix.
SHORT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=8,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)
#: Launches, polls and cancels retry until they succeed or report a final error: their
#: transport recovery deadline lives in the activity (heartbeat details carry its start).
PERSISTENT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=0,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)
#: A dead worker's launch is retried (and reconciled) within seconds, never minutes.
LAUNCH_HEARTBEAT_TIMEOUT = timedelta(seconds=20)
#: A launch may wait for a controller to come up; it heartbeats all along.
LAUNCH_TIMEOUT = timedelta(minutes=30)
#: Pollers heartbeat from a background task every few seconds whatever a queue call costs
#: (measured: SkyPilot's queue 2-3 s through the SDK, up to 22 s through the CLI at 20k
#: jobs), so this only bounds how long a dead worker goes unnoticed. The SDK sends the
#: newest beat every 0.8x of it (16 s), so only an event loop blocked that long misses one.
POLL_HEARTBEAT_TIMEOUT = timedelta(seconds=20)
#: A poller that cannot wait forever still needs a bound; unbounded waits get this.
UNBOUNDED_WAIT = timedelta(days=30)
#: Ledger exports wait out a storage outage rather than fail a healthy run.


def retries_within(policy: RetryPolicy, deadline: timedelta) -> RetryPolicy:
    """`policy` with as many attempts as its backoff fits in `deadline`.

    Local activities retry inside the worker, where a schedule-to-close timeout
    alone was not seen to end the retries: the attempt count bounds them for sure.
    """
    interval = policy.initial_interval.total_seconds()
    ceiling = policy.maximum_interval.total_seconds() if policy.maximum_interval else float("inf")
    waited, attempts = 0.0, 1
    while waited + interval <= deadline.total_seconds():
        waited += interval
        attempts += 1
        interval = min(interval * policy.backoff_coefficient, ceiling)
    return replace(policy, maximum_attempts=attempts)


def ledger_deadline(transport_recovery_seconds: float) -> timedelta:
    """How long one ledger export retries storage errors: six transport budgets (1 h by default).

    Permission errors count too (shared filesystems and S3 policies recover), so a
    briefly unwritable ledger is waited out; past this the run fails and its delta
    stays pending for `npaflow status` to write.
    """
    return timedelta(seconds=max(10.0, 6 * transport_recovery_seconds))


LEDGER_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=0,
    non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
)


def wait_timeout(max_wait_seconds: float) -> timedelta:
    """start_to_close for a poller: the wave deadline plus room to report it."""
    if max_wait_seconds <= 0:
        return UNBOUNDED_WAIT
    return timedelta(seconds=max_wait_seconds + 300)


def now() -> str:
    """Workflow time as the ledger's UTC second-precision timestamp."""
    return workflow.now().strftime(TIMESTAMP_FORMAT)


def job_of(record: WaveAttemptRecord, request: RunRequest) -> JobRef:
    """The exact job an attempt runs as, and where its activities must run."""
    return JobRef(
        backend=request.backend,
        job_id=record.job_id,
        job_name=record.job_name,
        worker_id=record.worker_id,
        worker_task_queue=record.worker_task_queue,
    )


def worker_bound(job: JobRef, request: RunRequest) -> dict[str, timedelta]:
    """A local job's activity waits this long for its worker before the job counts as lost."""
    if not job.worker_task_queue:
        return {}
    return {"schedule_to_start_timeout": timedelta(seconds=request.worker_lost_seconds)}


def queue_for(ref: ActivityRef[Any, Any], job: JobRef | None = None) -> str | None:
    """The task queue an activity runs on: a local job's own worker, the pollers', or the run's."""
    if job is not None and job.worker_task_queue:
        return job.worker_task_queue
    if ref.queue is QueueKind.POLL:
        return poll_task_queue(workflow.info().task_queue)
    return None


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(result_type: Any) -> TypeAdapter[Any]:
    """One validator per result type: a model, or a plain type such as a flight's `bool`."""
    adapter = _ADAPTERS.get(result_type)
    if adapter is None:
        adapter = _ADAPTERS[result_type] = TypeAdapter(result_type)
    return adapter


def decode(ref: ActivityRef[Any, ResultT], raw: object) -> ResultT:
    """An activity's result as its declared type, validated here in the run's own code.

    Results arrive as plain JSON and are validated here rather than by the data
    converter: a converter error would fail the whole execution (pydantic errors are
    failure exceptions for the workflow's input) before any cleanup could run, so a
    malformed result (`temporal activity complete --result ...`, a mismatched worker)
    becomes that activity's failure instead, handled like any other.

    Raises:
        ActivityError: the result does not fit the declared type (non-retryable).
    """
    if ref.result_type is type(None):
        nothing: Any = None
        return nothing  # type: ignore[no-any-return]
    try:
        validated: ResultT = _adapter(ref.result_type).validate_python(raw)
        return validated
    except ValidationError as exc:
        error = ActivityError(
            f"activity {ref.name} returned a malformed result",
            scheduled_event_id=0,
            started_event_id=0,
            identity="",
            activity_type=ref.name,
            activity_id="",
            retry_state=None,
        )
        problems = validation_problems(exc)
        error.__cause__ = ApplicationError(
            f"activity {ref.name} returned a malformed {ref.result_type.__name__} ({problems})",
            type=ErrorType.CONTROLLER.value,
            non_retryable=True,
        )
        raise error from error.__cause__


def _inert(options: dict[str, Any]) -> dict[str, Any]:
    """The options with their UI summary on one bounded line (it names states a spec chose).

    The Temporal UI shows activity summaries as plain text in the event history (escaped
    by the UI itself), so they are not Markdown-escaped: a backslash would show.
    """
    if options.get("summary"):
        return {**options, "summary": one_line(options["summary"], 300)}
    return options


def sendable(ref: ActivityRef[InputT, Any], arg: InputT) -> InputT:
    """The input, once it is known to fit one payload.

    Raises:
        ApplicationError: past the ceiling (a wave too wide to launch as one): the run fails
            naming the size, where scheduling it would fail its workflow task forever.
    """
    if isinstance(arg, BaseModel):
        problem = past_the_ceiling(f"the input of {ref.name}", len(arg.model_dump_json()))
        if problem:
            raise ApplicationError(
                f"{problem}; launch fewer members at once (a lower maxConcurrency) or split the spec",
                type=ErrorType.SPEC.value,
                non_retryable=True,
            )
    return arg


async def call(ref: ActivityRef[InputT, ResultT], arg: InputT, **options: Any) -> ResultT:
    """Execute an activity by its contract reference; the result has the declared type."""
    return decode(ref, await workflow.execute_activity(ref.name, sendable(ref, arg), **_inert(options)))


def start(ref: ActivityRef[InputT, Any], arg: InputT, **options: Any) -> workflow.ActivityHandle[object]:
    """Start an activity by its contract reference; `decode` its result once it is awaited."""
    return workflow.start_activity(ref.name, sendable(ref, arg), **_inert(options))


async def call_local(ref: ActivityRef[InputT, ResultT], arg: InputT, **options: Any) -> ResultT:
    """Execute a local activity (no history events of its own beyond a marker)."""
    local = await workflow.execute_local_activity(ref.name, sendable(ref, arg), **_inert(options))
    return decode(ref, local)


def launch_moved_to(error: ActivityError) -> str | None:
    """The task queue a launch must be reconciled on, when it began on another worker."""
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type == ErrorType.LAUNCH_MOVED.value and cause.details:
        return str(cause.details[0])
    return None


ACTIVITY_FAILURES = (ActivityError, ApplicationError, TimeoutError)
"""What awaiting an activity raises when it fails: a (remote) activity raises `ActivityError`
wrapping the cause; a local activity raises its `ApplicationError` or `TimeoutError` itself."""


def is_activity_failure(error: BaseException) -> bool:
    """Whether an exception is an activity's failure (remote or local), not a workflow bug."""
    if isinstance(error, ActivityError | TimeoutError):
        return True
    return isinstance(error, ApplicationError) and error.type in _ERROR_TYPES


_ERROR_TYPES = frozenset(kind.value for kind in ErrorType)


def classify_activity_error(error: BaseException, job: JobRef | None = None) -> tuple[FailureClass, str]:
    """Map an activity failure to the failure class whose budget pays for another attempt."""
    cause = error.cause if isinstance(error, ActivityError) else error
    activity = error.activity_type if isinstance(error, ActivityError) else "local activity"
    if isinstance(cause, ApplicationError):
        try:
            kind = ErrorType(cause.type or "")
        except ValueError:
            return FailureClass.CONTROLLER, cause.message
        return error_failure_class(kind), cause.message
    if isinstance(cause, TimeoutError):
        if cause.type is TimeoutType.SCHEDULE_TO_START and job is not None and job.worker_id:
            return FailureClass.CONTROLLER, (
                f"worker {job.worker_id} holds job {job.job_id} but did not pick up its activity "
                f"on task queue {job.worker_task_queue}; its host may be gone"
            )
        timeout = cause.type.name if cause.type else "timeout"
        return FailureClass.TRANSPORT, f"{activity} timed out ({timeout})"
    return FailureClass.CONTROLLER, str(cause or error)
