"""`npaflow resume`: continue a paused or suspended run, or restart an ended one (maybe onto a new spec).

A restart replays the waves the ledger records as completed. With `--spec`, the
new plan is compared with the one the run started from; the change is listed,
and the restart goes ahead only with `--accept-changes` and only when no
completed wave would run differently (npaflow/plan_diff.py). With
`--reread-items`, what reading each forEach list again changes is shown first
(npaflow/cli/fanout/).
"""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy

from npaflow.catalog import load_catalogs
from npaflow.cli.fanout import changes_text, list_changes, refusal
from npaflow.cli.follow_run import wait_and_report
from npaflow.cli.images import checked_binding
from npaflow.cli.status_query import queried_status
from npaflow.document.text_file import read_document
from npaflow.errors import UsageError
from npaflow.ids import RunId
from npaflow.options.runs import ResumeOptions
from npaflow.plan import build_plan, plan_fingerprint
from npaflow.plan_diff import PlanDiff, diff_plans
from npaflow.runtime.contract import WORKFLOW_TYPE, Signal
from npaflow.runtime.request import AcceptedPlanChange, RunRequest
from npaflow.runtime.summary import RunSummary
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.spec import load_spec_from_str
from npaflow.temporal.client import (
    connect_to,
    describe_or_fail,
    started_request,
    summary_from_failure,
    task_queue_from,
)
from npaflow.waves import WaveKey

RESTARTABLE = {
    WorkflowExecutionStatus.FAILED,
    WorkflowExecutionStatus.CANCELED,
    WorkflowExecutionStatus.TERMINATED,
    WorkflowExecutionStatus.TIMED_OUT,
}


async def resume(options: ResumeOptions) -> int:
    """Resume a paused or suspended run, or restart a failed/cancelled/terminated one."""
    if options.wait and options.as_json:
        raise UsageError("--wait with --json would print two documents (the change, the summary); give one")
    client = await connect_to(options)
    handle = client.get_workflow_handle(options.run_id)
    description = await describe_or_fail(handle)
    if description.status == WorkflowExecutionStatus.RUNNING:
        if options.spec or options.max_gpu_hours is not None or options.reread_items:
            raise UsageError(
                f"run {options.run_id} is running; --spec, --max-gpu-hours and --reread-items apply "
                "only when restarting a run that ended (cancel it first to change them)"
            )
        await handle.signal(Signal.RESUME.value)
        print(f"{Signal.RESUME.value} sent to {options.run_id}")
        return await _followed(client, options)
    if description.status not in RESTARTABLE:
        state = description.status.name.lower() if description.status else "unknown"
        raise UsageError(
            f"run {options.run_id} {state}; only failed, cancelled or terminated runs can be resumed"
        )
    request = await started_request(client, handle)
    if options.max_gpu_hours is not None:
        request = _with_budget(request, options.max_gpu_hours)
    shown: dict[str, Any] = {"run_id": options.run_id}  # what --json prints, once
    try:
        if options.spec:
            request = await _onto_new_spec(handle, request, options, options.spec, shown)
        if options.reread_items:
            await _show_list_changes(client, options, shown)
        # A restart is a chain of its own: the latest execution may have been continued as new.
        fresh = {"reread_items": bool(options.reread_items), "continued": False, "handed_over_at": 0}
        request = request.model_copy(update=fresh)
        new = await client.start_workflow(
            WORKFLOW_TYPE,
            request,
            id=options.run_id,
            task_queue=task_queue_from(options.task_queue),
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            memo=await description.memo(),
        )
        shown["restarted_execution"] = new.result_run_id
    finally:
        if options.as_json:
            print(json.dumps(shown, indent=2))
    if not options.as_json:
        print(
            f"restarted run {options.run_id} (execution {new.result_run_id}); completed waves replay "
            "from the ledger"
        )
    return await _followed(client, options)


async def _followed(client: Client, options: ResumeOptions) -> int:
    """With --wait, the run's newest execution followed to its end; its exit code as submit --wait's."""
    if not options.wait:
        return 0
    handle = client.get_workflow_handle(options.run_id, result_type=RunSummary)
    return await wait_and_report(client, handle, task_queue_from(options.task_queue), as_json=options.as_json)


async def _show_list_changes(client: Client, options: ResumeOptions, shown: dict[str, Any]) -> None:
    """Print what re-reading each forEach list changes (a plan diff of its members).

    Raises:
        UsageError: a list's source cannot be read now, or no worker can read them.
    """
    changes = await list_changes(client, options.run_id)
    shown["items_changes"] = [change.model_dump(mode="json") for change in changes.changes]
    if not options.as_json:
        print(changes_text(changes))
    error = refusal(changes)
    if error is not None:
        raise error


def _with_budget(request: RunRequest, hours: float) -> RunRequest:
    """The request with a new GPU-hour budget (bounded like submit's).

    Raises:
        UsageError: the budget is out of bounds.
    """
    try:
        return RunRequest.model_validate({**request.model_dump(), "max_gpu_hours": hours})
    except ValidationError as exc:
        raise UsageError(f"--max-gpu-hours {hours:g}: {exc.errors()[0]['msg']}") from None


async def _onto_new_spec(
    handle: WorkflowHandle[Any, Any],
    request: RunRequest,
    options: ResumeOptions,
    spec_file: str,
    shown: dict[str, Any],
) -> RunRequest:
    """The request with the new spec, once its change is shown and (if needed) accepted.

    Raises:
        UsageError: the change was not accepted, or it would change completed waves.
    """
    new_text = _read(Path(spec_file))
    diff = await plan_change(handle, request, new_text, spec_file)
    lines = diff.text_lines() or ["no change to the plan"]
    shown["changes"] = diff.model_dump(mode="json")
    shown["accepted"] = bool(options.accept_changes) and not diff.affected_completed_waves
    if not options.as_json:
        print(f"plan change for run {handle.id} ({diff.old_fingerprint} -> {diff.new_fingerprint}):")
        print("\n".join(f"  {line}" for line in lines))
    change: AcceptedPlanChange | None = None
    if not diff.is_empty() or diff.old_fingerprint != diff.new_fingerprint:
        if not options.accept_changes:
            raise UsageError(
                f"run {handle.id}: the spec changed (above); resume with "
                "--accept-changes to re-run the changed steps that have not completed"
            )
        if diff.affected_completed_waves:
            raise UsageError(
                f"run {handle.id}: the change would alter "
                f"{len(diff.affected_completed_waves)} completed wave(s) (above); start "
                "a new run id instead"
            )
        change = AcceptedPlanChange(
            from_fingerprint=diff.old_fingerprint,
            to_fingerprint=diff.new_fingerprint,
            changes=diff.text_lines(),
            accepted_by=getpass.getuser(),
        )
    catalog = load_catalogs(request.catalogs)
    new_spec = load_spec_from_str(new_text, spec_file, catalog=catalog, overrides=request.vars)
    images = await checked_binding(
        options, new_spec, catalog, backend=request.backend, started=request.images
    )
    update = {"spec": new_text, "spec_uri": "", "accepted_change": change, "images": images}
    return request.model_copy(update=update)


async def plan_change(
    handle: WorkflowHandle[Any, Any], request: RunRequest, new_text: str, new_file: str
) -> PlanDiff:
    """The change from the spec the run started with to `new_text`, and the completed waves it hits."""
    old_text = request.spec or _read(_local_path(request.spec_uri))
    catalog = load_catalogs(request.catalogs)
    old_spec = load_spec_from_str(old_text, "<the run's spec>", catalog=catalog, overrides=request.vars)
    new_spec = load_spec_from_str(new_text, new_file, catalog=catalog, overrides=request.vars)
    old_plan = build_plan(old_spec, catalog, run_id=RunId(handle.id), assume_decision=request.assume_decision)
    new_plan = build_plan(new_spec, catalog, run_id=RunId(handle.id), assume_decision=request.assume_decision)
    return diff_plans(
        old_spec,
        old_plan,
        new_spec,
        new_plan,
        completed=await completed_waves(handle),
        old_fingerprint=plan_fingerprint(old_plan, old_spec),
        new_fingerprint=plan_fingerprint(new_plan, new_spec),
    )


async def completed_waves(handle: WorkflowHandle[Any, Any]) -> list[WaveKey]:
    """The waves the run completed: from its status (a worker answers), else its failure summary.

    Raises:
        UsageError: neither is available.
    """
    try:
        view = await queried_status(handle, 15)
        return [w.key for w in view.waves if w.status is WaveStatus.SUCCEEDED]
    except Exception:  # noqa: BLE001 - no worker to answer: the failure carries a summary
        pass
    try:
        await handle.result()
    except WorkflowFailureError as failure:
        summary = summary_from_failure(failure)
        if summary is not None:
            return [w.key for w in summary.waves if w.status is WaveStatus.SUCCEEDED]
    raise UsageError(
        f"run {handle.id}: cannot tell which waves completed (no worker answered the "
        "status query); start a worker and try again"
    )


def _local_path(uri: str) -> Path:
    if not uri.startswith("file://"):
        raise UsageError(f"the run's spec is at {uri}; only a local file:// spec can be compared here")
    return Path(uri.removeprefix("file://"))


def _read(path: Path) -> str:
    return read_document(path)
