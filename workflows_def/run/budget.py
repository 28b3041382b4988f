"""The run's GPU-hour budget in the workflow: no launch once it is spent, and a timer per attempt.

The await activity stops a job at its share of the budget, but only while its
worker lives: a dead worker's await sits until its heartbeat times out, and the
job spends on. The run's own timer (BUDGET_TIMER) fires one poll interval after
the await should have stopped the job, so the run cancels it by exact id however
its worker fares.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

from npaflow.errors import BudgetSpentError
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.messages import AwaitEnd, AwaitResult
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.usage import gpus_held, seconds_of_budget
from npaflow.traversal import Wave
from npaflow.waves import states_where

#: Runs that race each budgeted await against a workflow timer (recorded at the first such await).
BUDGET_TIMER = "budget-timer-v1"


class GpuBudget:
    """What the run may still spend: earlier executions' GPU-hours (from the ledger), then each attempt."""

    def __init__(self, request: RunRequest, spent_gpu_hours: float) -> None:
        self.limit = request.max_gpu_hours
        self.spent = spent_gpu_hours
        self.poll_seconds = request.poll_seconds

    def check(self, wave: Wave) -> None:
        """Refuse a launch once the budget is spent.

        Raises:
            BudgetSpentError: the budget is spent; the run fails with class `budget`.
        """
        if self.limit and self.spent >= self.limit:
            raise BudgetSpentError(
                f"state {states_where(wave.states, [step.item_label for step in wave.steps])}: the run's "
                f"GPU-hour budget of {self.limit:g} is spent "
                f"({self.spent:.4f} GPU-h); nothing more launches (resume with a higher --max-gpu-hours)"
            )

    def allowance(self, record: WaveAttemptRecord) -> tuple[float, str]:
        """Seconds this attempt's job may hold its accelerators, and how that was reckoned."""
        gpus = gpus_held(record.task_shapes)
        if not self.limit or not gpus:
            return 0.0, ""
        seconds = max(1.0, seconds_of_budget(self.limit, self.spent, gpus))
        return (
            seconds,
            f"{self.limit:g} GPU-h, {self.spent:.4f} spent before this wave, which holds {gpus:g} GPUs",
        )

    def charge(self, gpu_hours: float) -> None:
        """An attempt ended: what it spent counts against the budget."""
        self.spent += gpu_hours

    async def await_within(self, handle: workflow.ActivityHandle[object], seconds: float) -> object | None:
        """The await's raw result, or None when the budget's timer fired first (its worker may be dead).

        Raises:
            ActivityError: the await failed (as awaiting it directly would).
        """
        if seconds <= 0 or not workflow.patched(BUDGET_TIMER):
            return await handle
        timer = asyncio.ensure_future(workflow.sleep(timedelta(seconds=seconds + self.poll_seconds)))
        try:
            await workflow.wait([handle, timer], return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            handle.cancel()
            timer.cancel()
            raise
        if handle.done():
            timer.cancel()
            return handle.result()
        handle.cancel()  # the run stops the job itself; the await's answer no longer matters
        return None


def budget_stop(record: WaveAttemptRecord, budget_text: str) -> AwaitResult:
    """The await's result when the run's own budget timer fired first."""
    return AwaitResult(
        status=record.sky_status or JobStatus.UNKNOWN,
        end=AwaitEnd.BUDGET,
        error=(
            f"state {states_where(record.states, record.items)}: job {record.job_id} reached the run's "
            "GPU-hour budget "
            f"({budget_text}) and its await did not report in time (its worker may be gone), so the "
            "run cancels it itself; nothing more launches (resume with a higher --max-gpu-hours)"
        ),
        failure_class=FailureClass.BUDGET,
    )
