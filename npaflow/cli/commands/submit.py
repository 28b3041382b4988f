"""`npaflow submit`: validate a spec and start a durable run; the run flags and their request.

`resume --spec` and `schedule create` take the same run flags (`add_run_options`)
and build the same workflow input (`build_request`). The handler loads the
Temporal client only when the command runs (npaflow/cli/submit_handler.py).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from pydantic import ValidationError

from npaflow.cli.options import (
    SubParsers,
    add_connection_arguments,
    add_spec_arguments,
    catalog_paths,
    parse_vars,
)
from npaflow.errors import UsageError
from npaflow.runtime.notifications import NotifyWhen
from npaflow.runtime.request import BackendName, OnFailure, RunRequest


def add(commands: SubParsers) -> None:
    """Register `submit`."""
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
    add_run_options(submit)
    submit.set_defaults(handler=run_submit)


def run_submit(args: argparse.Namespace) -> int:
    """The handler: the Temporal client is imported only now."""
    from npaflow.cli.submit_handler import submit

    return asyncio.run(submit(args))


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The flags that shape a run: how long it waits and retries, where and how its jobs run."""
    _add_waiting_options(parser)
    _add_launch_options(parser)


def _add_waiting_options(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--no-cancel-on-timeout",
        action="store_true",
        help="keep a job that outlives --max-wait-seconds (never retried)",
    )
    parser.add_argument(
        "--on-failure",
        choices=[o.value for o in OnFailure],
        default=OnFailure.FAIL.value,
        help="when a wave fails for good: fail the run, or suspend it until `resume` (default fail)",
    )
    parser.add_argument(
        "--notify",
        choices=[w.value for w in NotifyWhen],
        default=NotifyWhen.FAILURES.value,
        help="which outcomes the workers post to their NPAFLOW_NOTIFY_URL webhooks: failures "
        "(failed, suspended, out of capacity), always (success too), or never (default failures)",
    )


def _add_launch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-concurrency", type=int, default=0, help="cap on group batch sizes")
    parser.add_argument("--assume-decision", default="", help="fallback for a missing decision artifact")
    parser.add_argument(
        "--max-gpu-hours",
        type=float,
        default=0,
        metavar="H",
        help="GPU-hour budget of the run: nothing launches once it is spent, and a job that would "
        "overspend it is cancelled by id and the run fails (class budget); 0 = none",
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
        choices=[b.value for b in BackendName],
        default=BackendName.LOCAL.value,
        help="where jobs run: processes on the worker, or SkyPilot managed jobs (default local)",
    )
    parser.add_argument("--infra", default="", help="SkyPilot infra for every task, e.g. k8s/my-context")


def build_request(args: argparse.Namespace, spec_text: str, run_id: str, *, spec_uri: str = "") -> RunRequest:
    """Turn the run flags into the workflow input (the spec inline, or by reference when large).

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
