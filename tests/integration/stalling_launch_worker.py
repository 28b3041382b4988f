"""`python -m tests.integration.stalling_launch_worker`: a worker that dies inside `launch_wave`.

Its local backend submits the job, writes `<home>/launch-stalled` with the job id,
and then never returns, the worst moment for the worker to be killed: the job
exists, but no one has been told its id.
"""

from __future__ import annotations

import asyncio

from activities.backends.base import LaunchRequest, Submission
from activities.backends.local import LocalBackend

STALL_MARKER = "launch-stalled"
_submit = LocalBackend.submit


async def _submit_then_stall(self: LocalBackend, request: LaunchRequest) -> Submission:
    submission = await _submit(self, request)
    (self.jobs_dir.parents[1] / STALL_MARKER).write_text(submission.job_id)
    await asyncio.sleep(3600)
    return submission


if __name__ == "__main__":
    LocalBackend.submit = _submit_then_stall  # type: ignore[method-assign]
    import runpy

    runpy.run_module("worker", run_name="__main__")
