"""`npaflow submit`'s handler: validate locally, refuse a duplicate, start the run, follow it if asked."""

from __future__ import annotations

import getpass
import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from temporalio.client import (
    WorkflowHandle,
)
from temporalio.common import (
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)

from npaflow.cli.duplicate_runs import duplicate_of
from npaflow.cli.exits import (
    EXIT_ALREADY_RUNNING,
)
from npaflow.cli.follow_run import wait_and_report
from npaflow.cli.images import checked_binding
from npaflow.cli.quota.check import check_quota
from npaflow.cli.spec_loading import catalog_paths, load_spec_and_text, parse_vars, require_decision_sources
from npaflow.document.problems import message_of
from npaflow.errors import UsageError
from npaflow.ids import RunId
from npaflow.options.launch import LaunchOptions, SubmitOptions
from npaflow.quota import DEFAULT_TEAM, QuotaClaim
from npaflow.runtime.contract import (
    WORKFLOW_TYPE,
    RunMemo,
)
from npaflow.runtime.locations import run_prefix_for
from npaflow.runtime.request import RunRequest, run_id_problem
from npaflow.runtime.summary import RunSummary
from npaflow.runtime.ui_text import static_details, static_summary
from npaflow.temporal.client import (
    connect_to,
    has_pollers,
    shared_ledger_root,
    task_queue_from,
)
from npaflow.temporal.serving import no_worker_text

#: Specs larger than this travel by reference (Temporal payloads are limited to 2 MB).
INLINE_SPEC_LIMIT = 256 * 1024


def _run_id(options: SubmitOptions, name: str) -> RunId:
    """`--run-id` as given (an empty one is refused, not replaced), else `<spec name>-<UTC time>`."""
    if options.run_id is None:
        return RunId(f"{name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    if problem := run_id_problem(options.run_id):
        raise UsageError(f"--run-id: {problem}")
    return RunId(options.run_id)


async def submit(options: SubmitOptions) -> int:
    """Validate locally (nothing starts on an error), then start the run or refuse a duplicate."""
    spec, catalog, text = load_spec_and_text(options)
    require_decision_sources(options, spec, catalog)
    run_id = _run_id(options, spec.name)
    spec_uri = Path(options.spec).resolve().as_uri() if len(text.encode()) > INLINE_SPEC_LIMIT else ""
    request = build_request(options, text, run_id, spec_uri=spec_uri)
    images = await checked_binding(options, spec, catalog, backend=request.backend)
    request = request.model_copy(update={"images": images})
    client = await connect_to(options)
    if request.quota is not None and request.quota.pool:  # the workers' default pool: checked per launch
        await check_quota(client, request, spec, catalog)
    queue = task_queue_from(options.task_queue)
    handle: WorkflowHandle[Any, RunSummary] = client.get_workflow_handle(run_id, result_type=RunSummary)
    duplicate = await duplicate_of(handle, request)
    if duplicate is not None and not options.attach:
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
            static_summary=static_summary(spec.name, Path(options.spec).name),
            static_details=static_details(
                workflow=spec.name,
                run_id=run_id,
                submitted_by=getpass.getuser(),
                ledger_uri=run_prefix_for(spec, catalog, run_id, shared_ledger_root(options.ledger_root)),
                spec_file=str(options.spec),
                variables=request.vars,
            ),
            memo=RunMemo(
                spec=str(options.spec), vars=request.vars, submitted_by=getpass.getuser()
            ).submitted(),
        )
    if not options.wait and not await has_pollers(client, queue):
        sys.stderr.write(f"npaflow: warning: {no_worker_text(queue)}\n")
    if not options.wait:
        print(
            json.dumps({"run_id": run_id})
            if options.as_json
            else f"started run {run_id} (watch: npaflow status {run_id} --watch)"
        )
        return 0
    return await wait_and_report(client, handle, queue, as_json=options.as_json)


def build_request(options: LaunchOptions, spec_text: str, run_id: RunId, *, spec_uri: str = "") -> RunRequest:
    """Turn the run flags into the workflow input (the spec inline, or by reference when large).

    Raises:
        UsageError: a flag is out of range (one line naming the flag).
    """
    try:
        return _request(options, spec_text, run_id, spec_uri)
    except ValidationError as exc:
        raise UsageError(flag_problem(exc)) from None


def flag_problem(exc: ValidationError) -> str:
    """The first problem of a RunRequest, named by the flag that set it."""
    error = exc.errors(include_url=False)[0]
    loc = ("quota", *error["loc"]) if exc.title == QuotaClaim.__name__ else error["loc"]
    field = str(loc[0]) if loc else ""
    if field == "quota" and len(loc) > 1:  # --quota-pool, --team, --priority
        field = {"pool": "quota_pool"}.get(str(loc[1]), str(loc[1]))
    message = message_of(error)
    if not field:
        return message
    return f"--{field.replace('_', '-')}: {message} (got {error.get('input')!r})"


def _request(options: LaunchOptions, spec_text: str, run_id: RunId, spec_uri: str) -> RunRequest:
    return RunRequest(
        spec="" if spec_uri else spec_text,
        spec_uri=spec_uri,
        run_id=run_id,
        vars=parse_vars(options.var),
        allow_new_vars=bool(options.allow_new_vars),
        catalogs=[str(Path(p).resolve()) for p in catalog_paths(options.catalog)],
        poll_seconds=options.poll_seconds,
        max_wait_seconds=options.max_wait_seconds,
        retries=options.retries,
        max_infrastructure_recoveries=options.max_infrastructure_recoveries,
        pending_timeout_seconds=options.pending_timeout_seconds,
        max_concurrency=options.max_concurrency,
        cancel_on_timeout=not options.no_cancel_on_timeout,
        assume_decision=options.assume_decision,
        on_failure=options.on_failure,
        notify=options.notify,
        max_gpu_hours=options.max_gpu_hours,
        secret_env=options.secret_env,
        backend=options.backend,
        infra=options.infra,
        cache=options.cache,
        cache_scope=options.cache_scope,
        quota=QuotaClaim(
            pool=options.quota_pool, team=options.team or DEFAULT_TEAM, priority=options.priority
        ),
    )
