"""`npaflow cache ...` through a worker (it holds the storage credentials), as `npaflow artifacts` does."""

from __future__ import annotations

import argparse

from temporalio.client import Client, WorkflowFailureError

from npaflow.cli.durations import parse_duration
from npaflow.cli.temporal_client import (
    connect_from,
    describe_or_fail,
    has_pollers,
    innermost_message,
    run_helper,
    task_queue_from,
)
from npaflow.errors import UsageError
from npaflow.runtime.cache_admin import CacheAction, CacheAdminInput, CacheAdminResult, CacheExplanation
from npaflow.runtime.contract import CACHE_ADMIN_WORKFLOW_TYPE, RunMemo


async def cache(args: argparse.Namespace) -> int:
    """List, explain or purge (exit 2 when no worker serves the task queue or the request is wrong)."""
    action = CacheAction(args.action)
    client = await connect_from(args)
    request, task_queue = await _request(client, action, args)
    if not await has_pollers(client, task_queue, activities=True):
        raise UsageError(
            f"no worker polls task queue '{task_queue}': the cache is read by workers (start one with "
            "'npaflow worker')"
        )
    try:
        result = await run_helper(
            client,
            CACHE_ADMIN_WORKFLOW_TYPE,
            request,
            name=f"cache-{action.value}",
            task_queue=task_queue,
            result_type=CacheAdminResult,
        )
    except WorkflowFailureError as error:
        raise UsageError(f"cache {action.value}: {innermost_message(error)}") from None
    print(result.model_dump_json(indent=2) if getattr(args, "json", False) else cache_text(result))
    return 0


async def _request(
    client: Client, action: CacheAction, args: argparse.Namespace
) -> tuple[CacheAdminInput, str]:
    if action is CacheAction.EXPLAIN:
        description = await describe_or_fail(client.get_workflow_handle(args.run_id))
        ledger_uri = RunMemo.read(await description.memo()).ledger_uri
        if not ledger_uri:
            raise UsageError(f"run {args.run_id} has no ledger location yet (it has not loaded its spec)")
        return CacheAdminInput(action=action, ledger_uri=ledger_uri, state=args.state), description.task_queue
    older = (
        parse_duration("--older-than", args.older_than).total_seconds()
        if getattr(args, "older_than", "")
        else None
    )
    if action is CacheAction.PURGE and not (args.scope or older):
        raise UsageError("cache purge needs --scope SCOPE or --older-than DURATION (e.g. --older-than 30d)")
    request = CacheAdminInput(action=action, root=args.root or "", scope=args.scope, older_than_seconds=older)
    return request, task_queue_from(args.task_queue)


def cache_text(result: CacheAdminResult) -> str:
    """Entries one per line, an explanation, or how many were purged."""
    if result.explanation is not None:
        return explanation_text(result.explanation)
    under = result.root + (f" (scope {result.scope})" if result.scope else "")
    if not result.rows:
        return (
            f"purged {result.purged} entries under {under}" if result.purged else f"no entries under {under}"
        )
    lines = [f"{len(result.rows)} entries under {under}" + (" (more not listed)" if result.truncated else "")]
    lines.extend(
        f"  {row.scope}/{row.state}  {row.key[:19]}  {row.created_at}  run {row.source_run} "
        f"job {row.source_job}  {row.gpu_hours:.3f} GPU-h  {row.objects} objects"
        for row in result.rows
    )
    return "\n".join(lines)


def explanation_text(found: CacheExplanation) -> str:
    """Hit or miss and why, the key, and the components that differ from the state's newest entry."""
    step = found.step
    verdict = (
        f"hit (run {step.source_run} job {step.source_job})" if step.hit else f"miss: {step.reason or '-'}"
    )
    lines = [f"state {found.state}: {verdict}", f"key: {step.key}", f"entry: {step.entry or '-'}"]
    if found.newest_entry:
        lines.append(f"newest other entry of the state: {found.newest_entry}")
        lines.append(
            "differs in: " + (", ".join(found.differing) or "its key's components were not recorded")
        )
    elif not step.hit:
        lines.append("no other entry of the state in this scope to compare with")
    return "\n".join(lines)
