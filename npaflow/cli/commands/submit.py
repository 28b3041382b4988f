"""`npaflow submit`: validate a spec and start a durable run; the run flags.

`resume --spec` and `schedule create` take the same run flags (`add_run_options`);
`build_request` (npaflow/cli/submit_handler.py) turns them into the workflow
input. The handler loads the Temporal client only when the command runs.
"""

from __future__ import annotations

import argparse
import asyncio

from npaflow.cli.image_flags import add_image_arguments, add_preflight_argument
from npaflow.cli.options import add_cap_argument, add_connection_arguments, add_spec_arguments, nonempty
from npaflow.runtime.cache.messages import CacheMode
from npaflow.runtime.notifications import NotifyWhen
from npaflow.runtime.request import BackendName, OnFailure


def add(submit: argparse.ArgumentParser) -> None:
    """The arguments of `submit`."""
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
    from npaflow.options.launch import SubmitOptions

    return asyncio.run(submit(SubmitOptions.parsed(args)))


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The flags that shape a run: how long it waits and retries, where and how its jobs run."""
    _add_waiting_options(parser)
    _add_launch_options(parser)
    add_image_arguments(parser)
    add_preflight_argument(parser)
    _add_quota_options(parser)


def _add_quota_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quota-pool",
        type=nonempty,
        default=argparse.SUPPRESS,  # unset: the options model's "" (argparse would check a str default)
        metavar="POOL",
        help="acquire each wave's GPUs from this pool before it launches (default: the workers' "
        "NPAFLOW_QUOTA_POOL); a wave bigger than the pool is refused here",
    )
    parser.add_argument(
        "--team",
        type=nonempty,
        default=argparse.SUPPRESS,  # unset: the options model's "" (argparse would check a str default)
        metavar="NAME",
        help="the team the run's GPUs count for (default)",
    )
    parser.add_argument(
        "--priority",
        type=int,
        default=3,
        choices=range(1, 6),
        metavar="1..5",
        help="1 is served first; equal priorities share by team weight, then first come (default 3)",
    )


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
    add_cap_argument(parser)
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
    parser.add_argument(
        "--infra",
        type=nonempty,
        default=argparse.SUPPRESS,
        help="SkyPilot infra for every task, e.g. k8s/my-context",
    )
    parser.add_argument(
        "--cache",
        choices=[m.value for m in CacheMode],
        default=CacheMode.ON.value,
        help="the stage cache for states with cache: — on (reuse verified results, store new ones), "
        "refresh (run them and overwrite their entries), off (neither); default on",
    )
    parser.add_argument(
        "--cache-scope",
        type=nonempty,
        default=argparse.SUPPRESS,  # unset: the options model's "" (argparse would check a str default)
        metavar="SCOPE",
        help="share cache entries across specs, or isolate them (default: the spec's metadata.name)",
    )
