"""The run commands against a Temporal server: submit, status, cancel, pause, resume, logs.

Exit codes (npaflow/cli/exits.py): 0 succeeded, 1 failed, 2 usage or validation,
3 the run id is already running (without --attach), 4 stopped following by
Ctrl-C (the run continues), 75 failed for lack of capacity, 130 cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.common import (
    SearchAttributeKey,
    VersioningBehavior,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from npaflow.cli.exits import (
    EXIT_ALREADY_RUNNING,
    EXIT_CANCELLED,
    EXIT_CAPACITY,
    EXIT_FAILED,
    StoppedFollowing,
)
from npaflow.cli.follow_run import follow_run, no_worker_text
from npaflow.cli.options import load_spec_for, require_decision_sources
from npaflow.cli.run_commands import build_request
from npaflow.cli.run_endings import add_ending, next_steps
from npaflow.cli.status_text import status_text
from npaflow.cli.temporal_client import (
    connect_from,
    describe_or_fail,
    has_pollers,
    is_cancelled_failure,
    shared_ledger_root,
    summary_from_failure,
    task_queue_from,
)
from npaflow.errors import UsageError
from npaflow.runtime.contract import (
    LEDGER_REPAIR_WORKFLOW_TYPE,
    PENDING_LEDGER_QUERY,
    STATUS_QUERY,
    WORKFLOW_TYPE,
    SearchAttribute,
    Signal,
)
from npaflow.runtime.locations import run_prefix_for
from npaflow.runtime.messages import (
    ExportLedgerInput,
    ExportResult,
)
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import RunStatusView, RunSummary
from npaflow.runtime.ui_text import static_details, static_summary

#: Specs larger than this travel by reference (Temporal payloads are limited to 2 MB).
INLINE_SPEC_LIMIT = 256 * 1024


async def submit(args: argparse.Namespace) -> int:
    """Validate locally (nothing starts on an error), then start the run or refuse a duplicate."""
    spec, catalog = load_spec_for(args)
    require_decision_sources(args, spec, catalog)
    run_id = args.run_id or f"{spec.name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    text = Path(args.spec).read_text(encoding="utf-8")
    spec_uri = Path(args.spec).resolve().as_uri() if len(text.encode()) > INLINE_SPEC_LIMIT else ""
    request = build_request(args, text, run_id, spec_uri=spec_uri)
    client = await connect_from(args)
    queue = task_queue_from(args.task_queue)
    handle: WorkflowHandle[Any, RunSummary] = client.get_workflow_handle(run_id, result_type=RunSummary)
    duplicate = await _duplicate_of(handle, request)
    if duplicate is not None and not args.attach:
        print(duplicate)
        return EXIT_ALREADY_RUNNING
    if duplicate is None:
        handle = await client.start_workflow(
            WORKFLOW_TYPE,
            request,
            id=run_id,
            task_queue=queue,
            result_type=RunSummary,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            static_summary=static_summary(spec.name, Path(args.spec).name),
            static_details=static_details(
                workflow=spec.name,
                run_id=run_id,
                submitted_by=getpass.getuser(),
                ledger_uri=run_prefix_for(spec, catalog, run_id, shared_ledger_root(args.ledger_root)),
                spec_file=str(args.spec),
                variables=request.vars,
            ),
            memo={"spec": str(args.spec), "vars": request.vars, "submitted_by": getpass.getuser()},
        )
    if not args.wait and not await has_pollers(client, queue):
        sys.stderr.write(f"npaflow: warning: {no_worker_text(queue)}\n")
    if not args.wait:
        print(
            json.dumps({"run_id": run_id})
            if args.json
            else f"started run {run_id} (watch: npaflow status {run_id} --watch)"
        )
        return 0
    return await _wait_and_report(client, handle, queue, as_json=args.json)


async def _duplicate_of(handle: WorkflowHandle[Any, RunSummary], request: RunRequest) -> str | None:
    """What to say when the run id is already running (None when it is not).

    Raises:
        UsageError: it runs with other --var values, or it already completed.
    """
    try:
        description = await handle.describe()
    except Exception:  # noqa: BLE001 - no such run (or not visible yet): a fresh start
        return None
    if description.status == WorkflowExecutionStatus.COMPLETED:
        raise UsageError(
            f"run id '{handle.id}' already completed successfully; a completed run is "
            "never re-run (hint: choose another --run-id)"
        )
    if description.status != WorkflowExecutionStatus.RUNNING:
        return None
    running = dict((await description.memo()).get("vars") or {})
    if running != request.vars:
        keys = sorted(set(running) | set(request.vars))
        changes = [
            f"{k}: {running.get(k, '<unset>')!r} -> {request.vars.get(k, '<unset>')!r}"
            for k in keys
            if running.get(k) != request.vars.get(k)
        ]
        raise UsageError(
            f"run id '{handle.id}' is already running with other --var values "
            f"({'; '.join(changes)}); choose another --run-id, or cancel it first"
        )
    return f"run {handle.id} is already running (attach with --attach):\n" + await _status_once(handle)


async def _wait_and_report(
    client: Client, handle: WorkflowHandle[Any, RunSummary], queue: str, *, as_json: bool
) -> int:
    """Wait for the run (showing live progress unless --json), then print its summary.

    Raises:
        StoppedFollowing: Ctrl-C; the run goes on.
    """
    result = asyncio.ensure_future(handle.result())
    try:
        if not as_json:

            async def ended() -> bool:
                return result.done()

            await follow_run(client, handle, queue, ended)
        else:
            if not await has_pollers(client, queue):
                sys.stderr.write(f"npaflow: warning: {no_worker_text(queue)}\n")
        await asyncio.wait([result])
    except asyncio.CancelledError:
        result.cancel()
        raise StoppedFollowing(handle.id) from None
    try:
        summary = await result
        code = 0
    except WorkflowFailureError as error:
        if is_cancelled_failure(error):
            print(
                json.dumps({"run_id": handle.id, "status": "cancelled"})
                if as_json
                else f"status: cancelled\nrun_id: {handle.id}"
            )
            return EXIT_CANCELLED
        failed = summary_from_failure(error)
        if failed is None:
            raise UsageError(f"run failed: {error.cause}") from None
        summary = failed
        code = EXIT_CAPACITY if summary.failure_class is FailureClass.CAPACITY else EXIT_FAILED
    print(summary.model_dump_json(indent=2) if as_json else "\n".join(summary.text_lines()))
    if code and not as_json:
        print("\n".join(next_steps(summary)))
    return code


async def _view(handle: WorkflowHandle[Any, Any], repair_with: Client | None = None) -> dict[str, Any]:
    """The live status, from the `status` query, else the server-side memo (no worker up).

    With `repair_with`, a closed run whose ledger is behind gets it written, and an
    open run that no worker serves says so (without waiting on a query nobody answers).
    """
    description = await describe_or_fail(handle)
    closed = description.status != WorkflowExecutionStatus.RUNNING
    unserved = (
        repair_with is not None and not closed and not await has_pollers(repair_with, description.task_queue)
    )
    try:
        if unserved:
            raise LookupError("no worker polls the run's task queue")
        view = await asyncio.wait_for(handle.query(STATUS_QUERY, result_type=RunStatusView), 10)
        payload: dict[str, Any] = view.model_dump(mode="json")
    except Exception:  # noqa: BLE001 - no worker to answer: fall back to server-side memo
        memo = await description.memo()
        states = description.typed_search_attributes.get(
            SearchAttributeKey.for_keyword_list(SearchAttribute.STATE.value)
        )
        payload = {
            "run_id": handle.id,
            "phase": memo.get("phase", "unknown"),
            "current_states": list(states or []),
            "ledger_uri": memo.get("ledger_uri", ""),
        }
    payload["execution_status"] = description.status.name if description.status else "UNKNOWN"
    if repair_with is not None:
        await add_ending(repair_with, description.status, payload)
    payload["worker_version"] = _worker_version(description)
    if unserved:
        payload["no_worker"] = no_worker_text(description.task_queue)
    if repair_with is not None and closed and payload.get("ledger_behind"):
        payload["ledger_repair"] = await _repair_ledger(repair_with, handle, description)
        if payload["ledger_repair"].startswith("written"):
            payload["ledger_behind"] = ""
    return payload


def _worker_version(description: WorkflowExecutionDescription) -> str:
    """The Worker Deployment version the run is pinned to ("unversioned" when none)."""
    info = description.raw_description.workflow_execution_info.versioning_info
    version = info.deployment_version
    if version.build_id:
        behavior = VersioningBehavior(info.behavior).name.lower().replace("_", "-")
        return f"{version.deployment_name}:{version.build_id} ({behavior})"
    return "unversioned"


async def _repair_ledger(
    client: Client, handle: WorkflowHandle[Any, Any], description: WorkflowExecutionDescription
) -> str:
    """Write what a closed run's ledger lacks (its last export failed); say what happened.

    The pending delta lives in the run's history; a worker answers the query by
    replaying it, and a small workflow on the run's task queue exports it.
    """
    try:
        pending = await asyncio.wait_for(
            handle.query(PENDING_LEDGER_QUERY, result_type=ExportLedgerInput), 30
        )
    except Exception as exc:  # noqa: BLE001 - queries need a worker: say so
        return f"not repaired: no worker answered ({type(exc).__name__}); start one and run status again"
    if pending is None:
        return "written: the ledger is current"
    repair_id = f"{handle.id}-ledger-repair-{(description.run_id or '')[:8]}"
    try:
        await client.execute_workflow(
            LEDGER_REPAIR_WORKFLOW_TYPE,
            pending,
            id=repair_id,
            task_queue=description.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            result_type=ExportResult,
            execution_timeout=timedelta(minutes=6),
        )
    except WorkflowAlreadyStartedError:
        return f"written: repaired earlier ({repair_id})"
    except WorkflowFailureError as error:
        return f"not repaired: {error.cause}"[:300]
    return f"written now: the ledger holds the run's final state ({repair_id})"


async def _status_once(handle: WorkflowHandle[Any, Any]) -> str:
    return status_text(await _view(handle))


async def status(args: argparse.Namespace) -> int:
    """Print the run's status once, or until it ends with --watch; repair a ledger left behind."""
    client = await connect_from(args)
    handle = client.get_workflow_handle(args.run_id)
    try:
        if args.watch and not args.json:
            queue = (await describe_or_fail(handle)).task_queue

            async def ended() -> bool:
                return (await describe_or_fail(handle)).status != WorkflowExecutionStatus.RUNNING

            await follow_run(client, handle, queue, ended)
            print(status_text(await _view(handle, repair_with=client)))
            return 0
        while True:
            payload = await _view(handle, repair_with=client)
            print(json.dumps(payload, indent=2) if args.json else status_text(payload), flush=True)
            if not args.watch or payload["execution_status"] != "RUNNING":
                return 0
            await asyncio.sleep(2)
    except asyncio.CancelledError:
        if not args.watch:
            raise
        raise StoppedFollowing(handle.id) from None


async def _signal(args: argparse.Namespace, name: Signal, *params: object) -> int:
    client = await connect_from(args)
    handle = client.get_workflow_handle(args.run_id)
    description = await describe_or_fail(handle)
    if description.status != WorkflowExecutionStatus.RUNNING:
        state = description.status.name if description.status else "unknown"
        raise UsageError(f"run {args.run_id} is not running ({state})")
    await handle.signal(name.value, *params)
    print(f"{name.value} sent to {args.run_id}")
    if name is Signal.PAUSE:
        print(f"waves in flight finish, nothing new launches; `npaflow resume {args.run_id}` continues")
    if name is Signal.CANCEL and not await has_pollers(client, description.task_queue):
        print(
            f"no worker polls task queue {description.task_queue} now: nothing will launch; the run "
            "records its cancellation and ends CANCELED as soon as a worker picks it up"
        )
    return 0


async def cancel(args: argparse.Namespace) -> int:
    """Cancel every in-flight job by exact id and end the run CANCELED."""
    return await _signal(args, Signal.CANCEL, args.reason)


async def pause(args: argparse.Namespace) -> int:
    """Stop launching new waves."""
    return await _signal(args, Signal.PAUSE)


__all__ = ["cancel", "pause", "status", "submit"]
