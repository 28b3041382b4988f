"""`submit`, `status`, `cancel`, `pause`, `resume`, `logs`: the run commands' arguments.

Only the parsers live here; the handlers (npaflow/cli/run_handlers.py) import
the Temporal client, and are imported only when a run command runs, so the
spec commands stay fast.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from npaflow.cli.options import SubParsers, add_spec_arguments, catalog_paths, parse_vars
from npaflow.errors import UsageError
from npaflow.runtime.notifications import NotifyWhen
from npaflow.runtime.request import RunRequest


def add_connection_arguments(parser: argparse.ArgumentParser, *, ledger_root: bool = True) -> None:
    """--address, --namespace, --profile, --task-queue, and --ledger-root where it matters."""
    parser.add_argument("--address", help="Temporal address (TEMPORAL_ADDRESS, default 127.0.0.1:7233)")
    parser.add_argument("--namespace", help="Temporal namespace (TEMPORAL_NAMESPACE, default default)")
    parser.add_argument(
        "--profile",
        help="profile of the Temporal client config file (TEMPORAL_PROFILE; "
        "file TEMPORAL_CONFIG_FILE, API key and TLS as for the temporal CLI)",
    )
    parser.add_argument("--task-queue", help="task queue (NPAFLOW_TASK_QUEUE, default npaflow)")
    if ledger_root:
        parser.add_argument(
            "--ledger-root",
            help="shared ledger root of runs without config.bucket (NPAFLOW_LEDGER_ROOT): the "
            "directory or s3:// prefix workers write ledgers under; give the workers' value so "
            "the run's ledger location is shown right",
        )


def _handler(name: str, module: str = "npaflow.cli.run_handlers") -> Any:
    def run(args: argparse.Namespace) -> int:
        handlers = importlib.import_module(module)
        return int(asyncio.run(getattr(handlers, name)(args)))

    return run


def register(commands: SubParsers) -> None:
    """Add the run subcommands."""
    submit = commands.add_parser(
        "submit",
        help="validate a spec and start a durable run",
        epilog="exit codes: 0 started (with --wait: succeeded), 1 failed, 2 usage or validation "
        "error (nothing started), 3 the run id is already running (see --attach), 4 stopped "
        "following by Ctrl-C (the run continues), 75 failed for lack of capacity (try again "
        "later), 130 cancelled",
    )
    add_spec_arguments(submit)
    add_connection_arguments(submit)
    submit.add_argument("--run-id", help="run id = workflow id (default <spec name>-<UTC timestamp>)")
    submit.add_argument(
        "--wait",
        action="store_true",
        help="follow the run and print its summary; the exit code is its outcome (below)",
    )
    submit.add_argument(
        "--attach",
        action="store_true",
        help="if the run id is already running, attach to it instead of refusing",
    )
    _add_run_options(submit)
    submit.set_defaults(handler=_handler("submit"))
    _register_schedule(commands)
    found = commands.add_parser(
        "artifacts",
        help="a run's declared outputs (present or missing now), decisions read and trigger objects",
    )
    found.add_argument("run_id", metavar="RUN_ID", help="the run id (= its Temporal workflow id)")
    add_connection_arguments(found, ledger_root=False)
    found.add_argument("--state", default="", help="only this state's artifacts")
    found.add_argument("--json", action="store_true", help="print machine-readable JSON")
    found.set_defaults(handler=_handler("artifacts", "npaflow.cli.artifacts_handler"))
    runs = commands.add_parser(
        "list", help="list npaflow's runs, newest first, with spec, phase and GPU-hours"
    )
    add_connection_arguments(runs, ledger_root=False)
    runs.add_argument("--phase", default="", help="only runs in this phase (running, suspended, failed, ...)")
    runs.add_argument("--spec", default="", help="only runs of this spec (its metadata.name)")
    runs.add_argument(
        "--since", default="", metavar="DURATION", help="only runs started in the last 30m, 24h, 7d"
    )
    runs.add_argument("--limit", type=int, default=50, help="at most this many runs")
    runs.add_argument("--json", action="store_true", help="print machine-readable JSON")
    runs.set_defaults(handler=_handler("list_runs", "npaflow.cli.list_handler"))
    for name, text in (
        ("status", "show a run's live status"),
        ("cancel", "cancel a run's jobs and end it"),
        ("pause", "stop launching new waves"),
        ("resume", "continue a paused/suspended run, or restart a failed one"),
        ("logs", "print the logs of a run's jobs, read where they run"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("run_id", metavar="RUN_ID", help="the run id (= its Temporal workflow id)")
        add_connection_arguments(sub, ledger_root=False)  # the run itself knows where its ledger is
        if name == "status":
            sub.add_argument("--json", action="store_true", help="print machine-readable JSON")
            sub.add_argument(
                "--watch",
                action="store_true",
                help="follow until the run ends (Ctrl-C stops following: exit 4, the run continues)",
            )
        if name == "cancel":
            sub.add_argument("--reason", default="", help="recorded in the ledger")
        if name == "logs":
            sub.add_argument("--state", default="", help="only this state's jobs")
            sub.add_argument("--tail", type=int, default=2000, help="lines per job (default 2000)")
        if name == "resume":
            sub.add_argument(
                "--spec",
                metavar="NEW.yaml",
                help="restart an ended run onto this edited spec (its change is listed)",
            )
            sub.add_argument(
                "--accept-changes",
                action="store_true",
                help="with --spec: re-run the changed steps that have not completed",
            )
            sub.add_argument("--json", action="store_true", help="print the change as JSON")
            sub.add_argument(
                "--max-gpu-hours",
                type=float,
                default=None,
                metavar="H",
                help="restart with this GPU-hour budget (a run that spent its budget continues)",
            )
            sub.set_defaults(handler=_handler(name, "npaflow.cli.resume_handler"))
            continue
        sub.set_defaults(
            handler=_handler(name, "npaflow.cli.logs_handler") if name == "logs" else _handler(name)
        )


def _register_schedule(commands: SubParsers) -> None:
    """`schedule create|list|describe|pause|unpause|trigger|backfill|delete`."""
    schedule = commands.add_parser("schedule", help="run a spec on a cron or interval (Temporal Schedules)")
    actions = schedule.add_subparsers(dest="action", metavar="ACTION", required=True)
    module = "npaflow.cli.schedule_handler"
    create = actions.add_parser(
        "create", help="validate a spec and run it on a schedule; runs are NAME-<time>"
    )
    create.add_argument("name", metavar="NAME", help="the schedule's name; it starts every run id it makes")
    add_spec_arguments(create)
    add_connection_arguments(create, ledger_root=False)
    create.add_argument(
        "--cron", default="", metavar="EXPR", help="a cron expression, e.g. '0 3 * * *' (UTC)"
    )
    create.add_argument("--every", default="", metavar="DURATION", help="an interval, e.g. 24h or 30m")
    create.add_argument(
        "--overlap",
        choices=["skip", "buffer-one", "allow-all"],
        default="skip",
        help="when the previous run is still going: skip this one, run it after, or run both",
    )
    create.add_argument(
        "--catchup-window", default="", metavar="DURATION", help="how late a missed run may still start"
    )
    create.add_argument(
        "--jitter", default="", metavar="DURATION", help="start each run up to this much later"
    )
    _add_run_options(create)
    create.set_defaults(handler=_handler("create", module))
    for name, text in (
        ("describe", "what a schedule does, its next and recent runs, and what it skipped"),
        ("pause", "stop starting runs (started runs go on)"),
        ("unpause", "start runs again at the next scheduled time"),
        ("trigger", "start one run now (the overlap policy applies)"),
        ("backfill", "run what the schedule would have started between two times"),
        ("delete", "delete a schedule (its runs and their ledgers stay)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("name", metavar="NAME", help="the schedule's name")
        add_connection_arguments(action, ledger_root=False)
        if name == "describe":
            action.add_argument("--json", action="store_true", help="print machine-readable JSON")
        if name in ("pause", "unpause"):
            action.add_argument("--note", default="", help="why (shown in the Temporal UI)")
        if name == "backfill":
            action.add_argument(
                "--start", required=True, metavar="TIME", help="ISO time, e.g. 2026-12-01T00:00:00Z"
            )
            action.add_argument("--end", required=True, metavar="TIME", help="ISO time, after --start")
            action.add_argument(
                "--overlap",
                choices=["skip", "buffer-one", "allow-all"],
                default="allow-all",
                help="for these runs",
            )
        action.set_defaults(handler=_handler(name, module))
    listing = actions.add_parser("list", help="npaflow's schedules, with when they run next")
    add_connection_arguments(listing, ledger_root=False)
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=_handler("list_schedules", module))


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--poll-seconds",
        type=float,
        default=30,
        help="longest wait between status checks of a job (a cap: local jobs are watched; default 30)",
    )
    parser.add_argument(
        "--max-wait-seconds", type=float, default=3600, help="per wave attempt; 0 = unbounded"
    )
    parser.add_argument("--retries", type=int, default=0, help="extra attempts for job failures")
    parser.add_argument(
        "--max-infrastructure-recoveries",
        type=int,
        default=1,
        help="extra attempts for infrastructure failures (controller, capacity, transport; default 1)",
    )
    parser.add_argument(
        "--pending-timeout-seconds",
        type=float,
        default=1800,
        help="a job waiting this long for resources is a capacity failure (0 = never)",
    )
    parser.add_argument("--max-concurrency", type=int, default=0, help="cap on group batch sizes")
    parser.add_argument(
        "--no-cancel-on-timeout",
        action="store_true",
        help="keep a job that outlives --max-wait-seconds (never retried)",
    )
    parser.add_argument("--assume-decision", default="", help="fallback for a missing decision artifact")
    parser.add_argument(
        "--on-failure",
        choices=["fail", "suspend"],
        default="fail",
        help="when a wave fails for good: fail the run, or suspend it until `resume` (default fail)",
    )
    parser.add_argument(
        "--max-gpu-hours",
        type=float,
        default=0,
        metavar="H",
        help="GPU-hour budget of the run: nothing launches once it is spent, and a job that would "
        "overspend it is cancelled by id and the run fails (class budget); 0 = none",
    )
    parser.add_argument(
        "--notify",
        choices=[w.value for w in NotifyWhen],
        default=NotifyWhen.FAILURES.value,
        help="which outcomes the workers post to their NPAFLOW_NOTIFY_URL webhooks: failures "
        "(failed, suspended, out of capacity), always (success too), or never (default failures)",
    )
    parser.add_argument(
        "--secret-env",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this worker environment variable to jobs as a secret (name only)",
    )
    parser.add_argument(
        "--backend",
        choices=["local", "skypilot"],
        default="local",
        help="where jobs run: processes on the worker, or SkyPilot managed jobs (default local)",
    )
    parser.add_argument("--infra", default="", help="SkyPilot infra for every task, e.g. k8s/my-context")


def build_request(args: argparse.Namespace, spec_text: str, run_id: str, *, spec_uri: str = "") -> RunRequest:
    """Turn submit flags into the workflow input (the spec inline, or by reference when large).

    Raises:
        UsageError: a flag is out of range (one line naming the flag).
    """
    try:
        return _request(args, spec_text, run_id, spec_uri)
    except ValidationError as exc:
        raise UsageError(flag_problem(exc)) from None


def flag_problem(exc: ValidationError) -> str:
    """The first problem of a RunRequest, named by the flag that set it."""
    error = exc.errors(include_url=False)[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    message = str(error["msg"]).removeprefix("Value error, ")
    if not field:
        return message
    return f"--{field.replace('_', '-')}: {message} (got {error.get('input')!r})"


def _request(args: argparse.Namespace, spec_text: str, run_id: str, spec_uri: str) -> RunRequest:
    return RunRequest(
        spec="" if spec_uri else spec_text,
        spec_uri=spec_uri,
        run_id=run_id,
        vars=parse_vars(args.var),
        catalogs=[str(Path(p).resolve()) for p in catalog_paths(args.catalog)],
        poll_seconds=args.poll_seconds,
        max_wait_seconds=args.max_wait_seconds,
        retries=args.retries,
        max_infrastructure_recoveries=args.max_infrastructure_recoveries,
        pending_timeout_seconds=args.pending_timeout_seconds,
        max_concurrency=args.max_concurrency,
        cancel_on_timeout=not args.no_cancel_on_timeout,
        assume_decision=args.assume_decision,
        on_failure=args.on_failure,
        notify=args.notify,
        max_gpu_hours=args.max_gpu_hours,
        secret_env=args.secret_env,
        backend=args.backend,
        infra=args.infra,
    )
