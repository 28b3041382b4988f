"""`submit`, `status`, `cancel`, `pause`, `resume`: the run commands of the shim."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from npaflow.cli.options import add_spec_arguments, catalog_paths, load_spec_for, parse_vars
from npaflow.cli.temporal_client import (
    WORKFLOW_TYPE,
    address_from,
    connect,
    describe_or_fail,
    has_pollers,
    is_cancelled_failure,
    namespace_from,
    summary_from_failure,
    task_queue_from,
)
from npaflow.errors import UsageError
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import RunStatusView, RunSummary

EXIT_FAILED = 1
EXIT_CAPACITY = 75
EXIT_CANCELLED = 130
_CLOSED_RESTARTABLE = {WorkflowExecutionStatus.FAILED, WorkflowExecutionStatus.CANCELED,
                       WorkflowExecutionStatus.TERMINATED, WorkflowExecutionStatus.TIMED_OUT}


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """--address, --namespace and --task-queue (defaults from the environment)."""
    parser.add_argument("--address", help="Temporal address (TEMPORAL_ADDRESS, default 127.0.0.1:7233)")
    parser.add_argument("--namespace", help="Temporal namespace (TEMPORAL_NAMESPACE, default default)")
    parser.add_argument("--task-queue", help="task queue (NPAFLOW_TASK_QUEUE, default npaflow)")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the run subcommands."""
    submit = commands.add_parser("submit", help="validate a spec and start a durable run")
    add_spec_arguments(submit)
    add_connection_arguments(submit)
    submit.add_argument("--run-id", help="run id = workflow id (default <spec name>-<UTC timestamp>)")
    submit.add_argument("--wait", action="store_true", help="wait and print the final summary")
    _add_run_options(submit)
    submit.set_defaults(handler=lambda a: asyncio.run(_submit(a)))
    for name, text in (("status", "show a run's live status"), ("cancel", "cancel a run's jobs and end it"),
                       ("pause", "stop launching new waves"),
                       ("resume", "continue a paused/suspended run, or restart a failed one")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("run_id", metavar="RUN_ID")
        add_connection_arguments(sub)
        if name == "status":
            sub.add_argument("--json", action="store_true")
            sub.add_argument("--watch", action="store_true", help="refresh until the run ends")
        if name == "cancel":
            sub.add_argument("--reason", default="", help="recorded in the ledger")
        sub.set_defaults(handler=lambda a, n=name: asyncio.run(_COMMANDS[n](a)))


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--poll-seconds", type=float, default=30)
    parser.add_argument("--max-wait-seconds", type=float, default=3600,
                        help="per wave attempt; 0 = unbounded")
    parser.add_argument("--retries", type=int, default=0, help="extra attempts for job failures")
    parser.add_argument("--max-infrastructure-recoveries", type=int, default=1)
    parser.add_argument("--max-concurrency", type=int, default=0, help="cap on group batch sizes")
    parser.add_argument("--no-cancel-on-timeout", action="store_true",
                        help="keep a job that outlives --max-wait-seconds (never retried)")
    parser.add_argument("--assume-decision", default="", help="fallback for a missing decision artifact")
    parser.add_argument("--on-failure", choices=["fail", "suspend"], default="fail")
    parser.add_argument("--secret-env", action="append", default=[], metavar="NAME",
                        help="pass this worker environment variable to jobs as a secret (name only)")
    parser.add_argument("--backend", choices=["local", "skypilot"], default="local")
    parser.add_argument("--infra", default="", help="SkyPilot --infra, e.g. k8s/my-context")


def build_request(args: argparse.Namespace, spec_text: str, run_id: str) -> RunRequest:
    """Turn submit flags into the workflow input."""
    return RunRequest(
        spec=spec_text, run_id=run_id, vars=parse_vars(args.var),
        catalogs=[str(Path(p).resolve()) for p in catalog_paths(args.catalog)],
        poll_seconds=args.poll_seconds, max_wait_seconds=args.max_wait_seconds,
        retries=args.retries, max_infrastructure_recoveries=args.max_infrastructure_recoveries,
        max_concurrency=args.max_concurrency, cancel_on_timeout=not args.no_cancel_on_timeout,
        assume_decision=args.assume_decision, on_failure=args.on_failure,
        secret_env=args.secret_env, backend=args.backend, infra=args.infra)


async def _submit(args: argparse.Namespace) -> int:
    spec, _ = load_spec_for(args)
    run_id = args.run_id or f"{spec.name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    request = build_request(args, Path(args.spec).read_text(encoding="utf-8"), run_id)
    client = await connect(address_from(args.address), namespace_from(args.namespace))
    try:
        handle = await client.start_workflow(
            WORKFLOW_TYPE, request, id=run_id, task_queue=task_queue_from(args.task_queue),
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            static_summary=f"{spec.name} ({Path(args.spec).name})", memo={"spec": str(args.spec)},
            result_type=RunSummary)
    except WorkflowAlreadyStartedError:
        raise UsageError(f"run id '{run_id}' already completed successfully; a completed run is "
                         "never re-run (hint: choose another --run-id)") from None
    queue = task_queue_from(args.task_queue)
    if not await has_pollers(client, queue):
        sys.stderr.write(f"npaflow: warning: no worker is polling task queue '{queue}'; the run "
                         "waits until one starts ('npaflow worker' or 'npaflow dev')\n")
    if not args.wait:
        print(json.dumps({"run_id": run_id, "workflow_run_id": handle.result_run_id}) if args.json
              else f"started run {run_id} (watch: npaflow status {run_id} --watch)")
        return 0
    return await _wait_and_report(handle, as_json=args.json)


async def _wait_and_report(handle: object, *, as_json: bool) -> int:
    try:
        summary = await handle.result()  # type: ignore[attr-defined]
        code = 0
    except WorkflowFailureError as error:
        if is_cancelled_failure(error):
            print(json.dumps({"run_id": handle.id, "status": "cancelled"}) if as_json  # type: ignore[attr-defined]
                  else f"status: cancelled\nrun_id: {handle.id}")  # type: ignore[attr-defined]
            return EXIT_CANCELLED
        summary = summary_from_failure(error)
        if summary is None:
            raise UsageError(f"run failed: {error.cause}") from None
        code = EXIT_CAPACITY if summary.failure_class == FailureClass.INFRA.value else EXIT_FAILED
    print(summary.model_dump_json(indent=2) if as_json else "\n".join(summary.text_lines()))
    return code


async def _status(args: argparse.Namespace) -> int:
    client = await connect(address_from(args.address), namespace_from(args.namespace))
    handle = client.get_workflow_handle(args.run_id)
    while True:
        description = await describe_or_fail(handle)
        try:
            view = await asyncio.wait_for(handle.query("status", result_type=RunStatusView), 10)
            payload = view.model_dump(mode="json")
        except Exception:  # noqa: BLE001 - no worker to answer: fall back to server-side memo
            memo = await description.memo()  # type: ignore[attr-defined]
            payload = {"run_id": args.run_id, "phase": memo.get("phase", "unknown"),
                       "current_states": memo.get("current_states", []),
                       "ledger_uri": memo.get("ledger_uri", "")}
        payload["execution_status"] = description.status.name  # type: ignore[attr-defined]
        print(json.dumps(payload, indent=2) if args.json else _status_text(payload))
        if not args.watch or description.status != WorkflowExecutionStatus.RUNNING:  # type: ignore[attr-defined]
            return 0
        await asyncio.sleep(2)


def _status_text(payload: dict) -> str:
    lines = [f"run {payload['run_id']}: {payload['phase']} ({payload['execution_status']})",
             f"current: {', '.join(payload.get('current_states') or []) or '-'}"]
    for wave in payload.get("waves", []):
        lines.append(f"  {wave['key']} attempt {wave['attempt']}: {wave['status']} "
                     f"job_id={wave['job_id'] or '-'} {wave['sky_status']}")
    for decision in payload.get("decisions", []):
        lines.append(f"  decision: {decision['decision']} <- {decision['uri']}")
    if payload.get("error"):
        lines.append(f"error: {payload['error']}")
    lines.append(f"ledger: {payload.get('ledger_uri') or '-'}")
    return "\n".join(lines)


async def _signal(args: argparse.Namespace, name: str, *params: object) -> int:
    client = await connect(address_from(args.address), namespace_from(args.namespace))
    handle = client.get_workflow_handle(args.run_id)
    description = await describe_or_fail(handle)
    if description.status != WorkflowExecutionStatus.RUNNING:  # type: ignore[attr-defined]
        raise UsageError(f"run {args.run_id} is not running ({description.status.name})")  # type: ignore[attr-defined]
    await handle.signal(name, *params)
    print(f"{name} sent to {args.run_id}")
    return 0


async def _resume(args: argparse.Namespace) -> int:
    client = await connect(address_from(args.address), namespace_from(args.namespace))
    handle = client.get_workflow_handle(args.run_id)
    description = await describe_or_fail(handle)
    if description.status == WorkflowExecutionStatus.RUNNING:  # type: ignore[attr-defined]
        await handle.signal("resume")
        print(f"resume sent to {args.run_id}")
        return 0
    if description.status not in _CLOSED_RESTARTABLE:  # type: ignore[attr-defined]
        raise UsageError(f"run {args.run_id} {description.status.name.lower()}; only failed, "  # type: ignore[attr-defined]
                         "cancelled or terminated runs can be resumed")
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    (request,) = client.data_converter.payload_converter.from_payloads(
        list(started.input.payloads), [RunRequest])
    new = await client.start_workflow(
        WORKFLOW_TYPE, request, id=args.run_id, task_queue=task_queue_from(args.task_queue),
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY)
    print(f"restarted run {args.run_id} (execution {new.result_run_id}); completed waves replay "
          "from the ledger")
    return 0


_COMMANDS = {
    "status": _status,
    "cancel": lambda a: _signal(a, "cancel", a.reason),
    "pause": lambda a: _signal(a, "pause"),
    "resume": _resume,
}
