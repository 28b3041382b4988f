"""`npaflow logs`: the end of each job's logs, read by the run's backend on the job's own worker."""

from __future__ import annotations

import argparse
import asyncio
import difflib

from npaflow.cli.temporal_client import connect_from, describe_or_fail, run_helper, task_queue_from
from npaflow.errors import UsageError
from npaflow.runtime.contract import LOGS_WORKFLOW_TYPE, STATUS_QUERY
from npaflow.runtime.messages import JobRef
from npaflow.runtime.reads import JobLogsRequest, JobLogsResult, ReadJobLogsInput
from npaflow.runtime.summary import RunStatusView


async def logs(args: argparse.Namespace) -> int:
    """Print the end of each job's logs, read by the run's backend on the job's own worker."""
    client = await connect_from(args)
    handle = client.get_workflow_handle(args.run_id)
    await describe_or_fail(handle)
    try:
        view = await asyncio.wait_for(handle.query(STATUS_QUERY, result_type=RunStatusView), 30)
    except Exception as exc:  # noqa: BLE001 - queries need a worker: say so
        raise UsageError(
            f"run {args.run_id}: no worker answered ({type(exc).__name__}); logs are "
            "read by workers (start one with 'npaflow worker')"
        ) from None
    launched = [w for w in view.waves if w.job_id]
    waves = [w for w in launched if not args.state or args.state in w.states]
    if args.state and not waves:
        known = sorted({state for w in launched for state in w.states})
        close = difflib.get_close_matches(args.state, known, n=1)
        raise UsageError(
            f"run {args.run_id} has no job of state '{args.state}'"
            + (f" (did you mean '{close[0]}'?)" if close else "")
            + f"; states with jobs: {', '.join(known) or 'none yet'}"
        )
    jobs = [
        ReadJobLogsInput(
            job=JobRef(
                backend=view.backend,
                job_id=w.job_id,
                job_name=w.job_name,
                worker_id=w.worker_id,
                worker_task_queue=w.worker_task_queue,
            ),
            task=args.state,
            tail_lines=args.tail,
        )
        for w in waves
    ]
    result = await run_helper(
        client,
        LOGS_WORKFLOW_TYPE,
        JobLogsRequest(jobs=jobs),
        name=f"logs:{args.run_id}",
        task_queue=task_queue_from(args.task_queue),
        result_type=JobLogsResult,
    )
    for wave, entry in zip(waves, result.logs, strict=True):
        print(f"### {wave.key} attempt {wave.attempt} job {wave.job_id} ({wave.status.value})")
        print(entry.text or "(no logs)")
    if not waves:
        print(f"run {args.run_id} has no launched jobs" + (f" for state {args.state}" if args.state else ""))
    return 0
