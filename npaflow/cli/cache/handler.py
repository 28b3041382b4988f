"""`npaflow cache ...` through a worker (it holds the storage credentials), as `npaflow artifacts` does."""

from __future__ import annotations

from temporalio.client import Client

from npaflow.cli.durations import parse_duration
from npaflow.errors import UsageError
from npaflow.options.features import CacheOptions
from npaflow.runtime.cache.admin import (
    CacheAction,
    CacheAdminInput,
    CacheAdminResult,
    CacheExplanation,
    CacheRow,
    key_digits,
)
from npaflow.runtime.contract import CACHE_ADMIN_WORKFLOW_TYPE, RunMemo
from npaflow.runtime.usage import gpu_hours_text
from npaflow.temporal.client import connect_to, describe_or_fail, task_queue_from
from npaflow.temporal.helper_runs import require_worker, run_helper


async def cache(options: CacheOptions) -> int:
    """List, explain or purge (exit 2 when no worker serves the task queue or the request is wrong)."""
    action = CacheAction(options.action)
    client = await connect_to(options)
    request, task_queue = await _request(client, action, options)
    await require_worker(client, task_queue, "the cache is read by workers")
    result = await run_helper(
        client,
        CACHE_ADMIN_WORKFLOW_TYPE,
        request,
        name=f"cache-{action.value}",
        task_queue=task_queue,
        result_type=CacheAdminResult,
        failing=f"cache {action.value}",
    )
    print(result.model_dump_json(indent=2) if options.as_json else cache_text(result))
    return 0


async def _request(client: Client, action: CacheAction, options: CacheOptions) -> tuple[CacheAdminInput, str]:
    if action is CacheAction.EXPLAIN:
        description = await describe_or_fail(client.get_workflow_handle(options.run_id))
        ledger_uri = RunMemo.read(await description.memo()).ledger_uri
        if not ledger_uri:
            raise UsageError(f"run {options.run_id} has no ledger location yet (it has not loaded its spec)")
        return CacheAdminInput(
            action=action, ledger_uri=ledger_uri, state=options.state
        ), description.task_queue
    older = parse_duration("--older-than", options.older_than).total_seconds() if options.older_than else None
    request = CacheAdminInput(
        action=action,
        root=options.root or "",
        scope=options.scope,
        older_than_seconds=older,
        key=options.key,
        run=options.run,
        state=options.state if action is CacheAction.PURGE else "",
        dry_run=options.dry_run,
    )
    if action is CacheAction.PURGE:
        _check_purge(request)
    return request, task_queue_from(options.task_queue)


def _check_purge(request: CacheAdminInput) -> None:
    """A purge names what it deletes, and a key is written as `cache list` prints it."""
    if request.state and not request.run:
        raise UsageError("cache purge --state needs --run RUN_ID (the run whose entry of that state goes)")
    if not request.selects():
        raise UsageError(
            "cache purge needs --scope SCOPE, --older-than DURATION (e.g. --older-than 30d), --key KEY "
            "or --run RUN_ID"
        )
    if request.key:
        try:
            key_digits(request.key)
        except ValueError as exc:
            raise UsageError(f"cache purge {exc}") from None


def cache_text(result: CacheAdminResult) -> str:
    """Entries one per line, an explanation, or how many were purged."""
    if result.explanation is not None:
        return explanation_text(result.explanation)
    under = result.root + (f" (scope {result.scope})" if result.scope else "")
    if not result.rows:
        return (
            f"purged {result.purged} entries under {under}" if result.purged else f"no entries under {under}"
        )
    head = f"would purge {len(result.rows)} entries under {under} (dry run: nothing deleted)"
    if not result.dry_run:
        head = f"{len(result.rows)} entries under {under}" + (
            " (more not listed)" if result.truncated else ""
        )
    return "\n".join([head, *(_row_text(row) for row in result.rows)])


def _row_text(row: CacheRow) -> str:
    if row.damaged:
        return f"  {row.scope}/?  {row.key[:19]}  damaged ({row.damaged})"
    return (
        f"  {row.scope}/{row.state}  {row.key[:19]}  {row.created_at}  run {row.source_run} "
        f"job {row.source_job}  {gpu_hours_text(row.gpu_hours)} GPU-h  {row.objects} objects"
    )


def explanation_text(found: CacheExplanation) -> str:
    """Hit or miss and why, the key, and the components that differ from the state's newest entry."""
    step = found.step
    verdict = (
        f"hit (run {step.source_run} job {step.source_job})" if step.hit else f"miss: {step.reason or '-'}"
    )
    lines = [f"state {found.state}: {verdict}", f"key: {step.key}"]
    if step.hit:
        lines.append(f"entry: {step.entry or '-'}")
    else:
        written = "written when this attempt succeeded" if step.stored else "written once the state succeeds"
        lines.append(f"new entry: {step.entry or '-'} ({written})")
    if found.newest_entry:
        lines.append(f"newest other entry of the state: {found.newest_entry}")
        if found.changes:
            lines.append("differs in:")
            lines.extend(f"  {change}" for change in found.changes)
        else:
            lines.append(
                "differs in: " + (", ".join(found.differing) or "its key's components were not recorded")
            )
    elif not step.hit:
        lines.append("no other entry of the state in this scope to compare with")
    return "\n".join(lines)
