"""The floor npaflow is compared with: a minimal raw-Temporal pipeline, one launch and one await per wave.

`BaselinePipeline` runs `waves` jobs one after another; each wave is exactly one
`baseline_launch` activity (spawn `bash -c COMMAND` detached) and one
`baseline_await` activity (wait for that process to exit). No spec, no ledger,
no retries, no reconciliation: what any pipeline on Temporal costs at least.
Run a worker: python bench/baseline.py worker ADDRESS TASK_QUEUE
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

#: Running jobs of this worker process: the await activity waits on the launch's process.
_PROCESSES: dict[int, asyncio.subprocess.Process] = {}


@dataclass
class PipelineInput:
    """`waves` jobs, each `bash -c command` with WAVE set to its index."""

    waves: int
    command: str


@dataclass
class LaunchInput:
    """One wave's job."""

    command: str
    wave: int


@activity.defn(name="baseline_launch")
async def launch(job: LaunchInput) -> int:
    """Start the job detached from the worker's session; return its pid."""
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        job.command,
        env={"WAVE": str(job.wave), "PATH": "/usr/bin:/bin"},
        start_new_session=True,
    )
    _PROCESSES[process.pid] = process
    return process.pid


@activity.defn(name="baseline_await")
async def await_job(pid: int) -> int:
    """Wait for the job to exit; return its exit code."""
    process = _PROCESSES.pop(pid)
    return await process.wait()


@workflow.defn(name="BaselinePipeline")
class BaselinePipeline:
    """Waves in sequence: launch, then await, per wave."""

    @workflow.run
    async def run(self, request: PipelineInput) -> int:
        """Return how many waves exited 0."""
        succeeded = 0
        for wave in range(request.waves):
            pid = await workflow.execute_activity(
                launch, LaunchInput(request.command, wave), start_to_close_timeout=timedelta(minutes=1)
            )
            code = await workflow.execute_activity(await_job, pid, start_to_close_timeout=timedelta(hours=1))
            succeeded += code == 0
        return succeeded


async def serve(address: str, task_queue: str) -> None:
    """Run one baseline worker until killed."""
    client = await Client.connect(address)
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=[BaselinePipeline],
        activities=[launch, await_job],
        max_concurrent_activities=2000,
    )
    await worker.run()


if __name__ == "__main__":
    if sys.argv[1:2] != ["worker"]:
        sys.exit(__doc__)
    asyncio.run(serve(sys.argv[2], sys.argv[3]))
