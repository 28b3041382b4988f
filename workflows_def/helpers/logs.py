"""`NpaflowJobLogs`: reads job logs where the jobs run, for `npaflow logs`.

Local-backend jobs live on one worker's host, so their logs can only be read
by an activity on that worker's own task queue; a small workflow routes them.
Asked with a ledger, it first reads which jobs an ended run launched: a run
pinned to a worker version that is gone answers no query, but its ledger does.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from npaflow.runtime.contract import LOGS_WORKFLOW_TYPE, READ_JOB_LOGS, READ_RUN_WAVES
from npaflow.runtime.reads import JobLogs, JobLogsRequest, JobLogsResult, RunWavesInput
from workflows_def.activity_calls import SHORT_RETRY, call, classify_activity_error, queue_for
from workflows_def.input_refusal import MALFORMED_INPUT

#: How long to wait for a job's worker to pick up the read before reporting it unavailable.
WORKER_WAIT = timedelta(seconds=30)


@workflow.defn(name=LOGS_WORKFLOW_TYPE, failure_exception_types=MALFORMED_INPUT)
class NpaflowJobLogs:
    """Reads each requested job's logs through its own backend and worker."""

    @workflow.run
    async def run(self, request: JobLogsRequest) -> JobLogsResult:
        """One `read_job_logs` per job; a job whose worker is gone says so instead."""
        waves = []
        if request.ledger_uri:
            read = await call(
                READ_RUN_WAVES,
                RunWavesInput(ledger_uri=request.ledger_uri),
                start_to_close_timeout=timedelta(minutes=1),
                retry_policy=SHORT_RETRY,
                summary="the run's launched jobs, from its ledger",
            )
            waves = read.waves
        logs = []
        for item in request.jobs:
            try:
                logs.append(
                    await call(
                        READ_JOB_LOGS,
                        item,
                        task_queue=queue_for(READ_JOB_LOGS, item.job),
                        schedule_to_start_timeout=WORKER_WAIT,
                        start_to_close_timeout=timedelta(minutes=2),
                        retry_policy=SHORT_RETRY,
                        summary=f"logs of job {item.job.job_id}",
                    )
                )
            except ActivityError as error:
                _, message = classify_activity_error(error, item.job)
                logs.append(JobLogs(text=f"(logs unavailable: {message})"))
        return JobLogsResult(logs=logs, waves=waves)
