"""Client-side helpers for the run commands: connecting, and reading results and failures."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, TypeVar

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError
from temporalio.runtime import Runtime
from temporalio.service import RPCError, RPCStatusCode

from npaflow.document.problems import validation_problems
from npaflow.errors import UsageError
from npaflow.options.connection import ConnectionOptions
from npaflow.runtime.contract import (
    ENV_DEFAULTS,
    WORKFLOW_TYPE,
    EnvVar,
)
from npaflow.runtime.request import RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.dev_marker import DEV_START_PATIENCE_SECONDS, dev_server_is_starting
from npaflow.temporal.errors import is_namespace_missing, rpc_error_text
from npaflow.temporal.serving import live_pollers
from npaflow.temporal.target import TemporalTarget, temporal_target
from npaflow.temporal.tracing import tracing_interceptors

ResultT = TypeVar("ResultT")

#: How long a command keeps trying to reach the server: an unreachable one is
#: reported in under 3 s (a dev server that is still starting answers within it).
CONNECT_PATIENCE_SECONDS = 1.5
#: How long a worker keeps trying: it is often started beside its server.
WORKER_CONNECT_PATIENCE_SECONDS = 30.0


#: Temporal's default limit for ids and names.
MAX_QUEUE_CHARS = 1000


def _from_env(flag: str | None, name: EnvVar) -> str:
    return flag or os.environ.get(name.value) or ENV_DEFAULTS.get(name, "")


def task_queue_from(flag: str | None) -> str:
    """The task queue: --task-queue, else NPAFLOW_TASK_QUEUE, else npaflow.

    Raises:
        UsageError: the name would silently be another queue no worker polls.
    """
    queue = _from_env(flag, EnvVar.TASK_QUEUE)
    if problem := task_queue_problem(queue):
        source = "--task-queue" if flag else EnvVar.TASK_QUEUE.value
        raise UsageError(f"{source} {queue!r}: {problem}")
    return queue


def task_queue_problem(name: str) -> str:
    """Why a task queue name is a typo ("" when it is fine).

    A space at either end or a control character names a queue no worker polls, and
    the run would wait for one forever.
    """
    if not name.strip():
        return "give a task queue name (default: npaflow)"
    if name != name.strip():
        return "a space at either end names another queue; remove it"
    if not name.isprintable():
        return "a control character names a queue no worker polls; remove it"
    return "" if len(name) <= MAX_QUEUE_CHARS else f"at most {MAX_QUEUE_CHARS} characters"


def shared_ledger_root(flag: str | None) -> str:
    """--ledger-root, else NPAFLOW_LEDGER_ROOT, else "" (each worker then uses its own home)."""
    return _from_env(flag, EnvVar.LEDGER_ROOT)


async def connect(
    target: TemporalTarget,
    patience: float = CONNECT_PATIENCE_SECONDS,
    runtime: Runtime | None = None,
    service: str = "npaflow-cli",
) -> Client:
    """Connect with the pydantic converter, retrying briefly while a dev server starts.

    Raises:
        UsageError: the server cannot be reached.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    waited_for_dev = False
    while True:
        try:
            return await asyncio.wait_for(
                Client.connect(
                    target.address,
                    namespace=target.namespace,
                    api_key=target.api_key,
                    tls=target.tls,
                    rpc_metadata=target.rpc_metadata,
                    data_converter=DATA_CONVERTER,
                    runtime=runtime,
                    interceptors=tracing_interceptors(service),
                ),
                timeout=max(0.5, deadline - loop.time()),
            )
        except (RuntimeError, TimeoutError) as exc:
            if loop.time() >= deadline and not waited_for_dev and dev_server_is_starting(target.address):
                waited_for_dev = True
                deadline = loop.time() + DEV_START_PATIENCE_SECONDS
                sys.stderr.write(
                    f"npaflow: waiting for 'npaflow dev' to start the server at {target.address}\n"
                )
            if loop.time() >= deadline:
                if isinstance(exc, TimeoutError):
                    reason = "no answer"
                elif "refused" in str(exc):
                    reason = "connection refused"
                else:
                    reason = str(exc).splitlines()[0][:200]
                security = "TLS" if target.secured else "plaintext"
                raise UsageError(
                    f"cannot reach the Temporal server at {target.address} ({security}, "
                    f"namespace {target.namespace}, from {target.source}): {reason} "
                    "(hint: start one with 'npaflow dev', or set --address / "
                    "TEMPORAL_ADDRESS / a temporal.toml profile)"
                ) from None
            await asyncio.sleep(0.5)


async def connect_to(options: ConnectionOptions) -> Client:
    """Connect with a command's --address, --namespace and --profile over envconfig's settings.

    The task queue (flag or environment) is checked first: a typo in it fails here, not as a
    run that waits forever for a worker of a queue nobody polls.
    """
    task_queue_from(options.task_queue)
    return await connect(temporal_target(options.address, options.namespace, options.profile))


async def has_pollers(
    client: Client, task_queue: str, *, activities: bool = False, strict: bool = False
) -> bool:
    """True when some worker polls the task queue for workflow (or `activities`) tasks.

    When the server cannot say, True (submit only warns) unless `strict` (a health check).
    """
    pollers = await live_pollers(client, task_queue, activities=activities)
    return (not strict) if pollers is None else bool(pollers)


#: How long a query waits when no worker polls its queue (one may be starting): not a hang.
UNSERVED_QUERY_SECONDS = 5.0


async def query_wait(client: Client, task_queue: str, seconds: float) -> tuple[float, bool]:
    """How long to wait for a query's answer, and whether a worker polls the queue now.

    A queue nobody polls gets a few seconds (a worker may have just started), not the
    whole wait, so a command says "no worker" soon instead of hanging on it.
    """
    served = await has_pollers(client, task_queue)
    return (seconds if served else min(seconds, UNSERVED_QUERY_SECONDS)), served


def summary_from_failure(error: WorkflowFailureError) -> RunSummary | None:
    """The run summary a failed run attaches to its final error, if any."""
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.details:
        detail = cause.details[0]
        if isinstance(detail, dict) and "run_id" in detail:
            return RunSummary.model_validate(detail)
    return None


def is_cancelled_failure(error: WorkflowFailureError) -> bool:
    """True when the run ended CANCELED (a terminated run is told apart by its caller)."""
    return isinstance(error.cause, CancelledError | TerminatedError)


class RunMissing(UsageError):
    """The server says no workflow has this id (and nothing else went wrong)."""


async def describe_or_fail(handle: WorkflowHandle[Any, Any]) -> WorkflowExecutionDescription:
    """Describe a run, turning 'not found' into a clear user error.

    A workflow of another type under that id is another tool's: no run command may
    signal, cancel or read it as a run.

    Raises:
        RunMissing: there is no run with this id (the server said NOT_FOUND).
        UsageError: the id holds another type of workflow, or the server refused to say.
    """
    try:
        description = await handle.describe()
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND or is_namespace_missing(exc):
            raise UsageError(rpc_error_text(exc)) from None  # never read as "no such run"
        missing = f"no run with id '{handle.id}' ({exc.message}); list runs with 'npaflow list'"
        raise RunMissing(missing) from None
    if description.workflow_type != WORKFLOW_TYPE:
        raise UsageError(
            f"'{handle.id}' is a {description.workflow_type} workflow, not an npaflow run "
            f"({WORKFLOW_TYPE}), so npaflow leaves it alone; list runs with 'npaflow list'"
        )
    return description


async def started_request(client: Client, handle: WorkflowHandle[Any, Any]) -> RunRequest:
    """The request the latest execution started with (its first history event, fetched alone).

    Raises:
        UsageError: no history, or an input no run accepts (the run was refused at start).
    """
    async for event in handle.fetch_history_events(page_size=1):
        started = event.workflow_execution_started_event_attributes
        try:
            (request,) = client.data_converter.payload_converter.from_payloads(
                list(started.input.payloads), [RunRequest]
            )
        except ValidationError as exc:
            raise UsageError(
                f"run {handle.id} was refused at start, its input is an invalid RunRequest "
                f"({validation_problems(exc)}): there is nothing to resume or reuse (hint: submit "
                "the spec again with 'npaflow submit')"
            ) from None
        assert isinstance(request, RunRequest)
        return request
    raise UsageError(f"run {handle.id} has no history on this server")
