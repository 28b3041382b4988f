"""Awaiting one launched job: `await_wave` polls it to its end (cancel and logs: job_control.py).

Local-backend jobs' activities run on the owning worker's task queue. All
awaits of a backend in one worker share one process-wide `JobPoller`
(activities/poller.py): N concurrent waves cost one queue call per tick, not N.
A job missing from an answer is not lost until its own query and a later tick
confirm it; even then the run cancels it by id before any relaunch.
"""

from __future__ import annotations

import time

import structlog
from temporalio import activity

from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import Heartbeater, heartbeating, resume_details
from activities.log_tail import failed_job_log_tail
from activities.poller import JobPoller
from activities.tracing import tag_span
from npaflow.errors import NpaflowError, TransportError
from npaflow.runtime.contract import AWAIT_WAVE
from npaflow.runtime.ledger import Observation, TaskRow
from npaflow.runtime.messages import AwaitEnd, AwaitResult, AwaitWaveInput
from npaflow.runtime.metrics import Metric, record
from npaflow.runtime.observations import record_observation, task_starts
from npaflow.runtime.status import FailureClass, JobStatus, aggregate_job_status
from npaflow.runtime.vocabulary import HeartbeatPhase

log = structlog.get_logger(__name__)


#: Failed status queries kept as evidence per await.
MAX_STATUS_ERRORS = 20
#: Consecutive failed status queries that, past the recovery deadline, fail the wave.
MAX_CONSECUTIVE_STATUS_ERRORS = 5


class JobActivities:
    """await_wave, bound to the worker's pollers."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=AWAIT_WAVE.name)
    @mapped_errors
    async def await_wave(self, request: AwaitWaveInput) -> AwaitResult:
        """Poll until terminal, the deadline, or capacity never coming; retries resume the same job."""
        tag_span(wave_key=str(request.wave_key), job_id=request.job.job_id)
        poller = self.context.poller(request.job.backend)
        details = resume_details(job_id=request.job.job_id, phase=HeartbeatPhase.POLLING)
        if details.job_id != request.job.job_id:
            details = details.model_copy(
                update={"job_id": request.job.job_id, "polls": 0, "started_at": time.time()}
            )
        backend = request.job.backend.value
        record(Metric.JOBS_IN_FLIGHT, 1, backend=backend)
        try:
            # The job id is the input: a wave that ends within HEARTBEAT_EVERY needs no beat.
            async with heartbeating(details, quiet_start=True) as hb:
                return await JobWatch(request, poller, hb).run()
        finally:
            record(Metric.JOBS_IN_FLIGHT, -1, backend=backend)


class JobWatch:
    """One await: polls through the shared poller and decides when polling ends."""

    def __init__(self, request: AwaitWaveInput, poller: JobPoller, hb: Heartbeater) -> None:
        self.request = request
        self.poller = poller
        self.hb = hb
        self.observations: list[Observation] = []
        self.errors: list[str] = []
        self.rows: list[TaskRow] = []
        self.interval = min(request.poll_seconds, poller.backend.poll_interval)

    async def run(self) -> AwaitResult:
        """Poll to the end; each outcome is one of `AwaitEnd`."""
        request, job_id = self.request, self.request.job.job_id
        deadline = (
            self.hb.details.started_at + request.max_wait_seconds if request.max_wait_seconds > 0 else None
        )
        while True:
            status = await self._poll()
            if status is None:
                failed = self._unreadable()
                if failed is not None:
                    return failed
            elif status is JobStatus.ABSENT:
                log.warning("wave.lost", wave_key=str(request.wave_key), job_id=job_id)
                return self._result(
                    status,
                    end=AwaitEnd.LOST,
                    cls=FailureClass.CONTROLLER,
                    error=(
                        f"job {job_id} is not in the backend's queue: absent from a tick that asked "
                        "for it, from its own exact query and from the next tick (the controller "
                        "lost the record)"
                    ),
                )
            elif status.is_terminal() and self._every_member_ended():
                return await self._ended(status)
            elif self._waited_too_long_for_capacity(status):
                return self._result(
                    status,
                    end=AwaitEnd.CAPACITY_TIMEOUT,
                    error=(
                        f"wave {request.wave_key}: job {job_id} waited for resources ({status.value}) "
                        f"longer than {request.pending_timeout_seconds:g}s"
                    ),
                    cls=FailureClass.CAPACITY,
                )
            if (
                request.budget_seconds > 0
                and time.time() >= self.hb.details.started_at + request.budget_seconds
            ):
                return self._result(
                    self.hb.details.last_status,
                    end=AwaitEnd.BUDGET,
                    error=(
                        f"wave {request.wave_key}: job {job_id} reached the run's GPU-hour budget "
                        f"({request.budget_text}); it is cancelled and nothing more launches "
                        "(resume with a higher --max-gpu-hours to continue)"
                    ),
                    cls=FailureClass.BUDGET,
                )
            if deadline is not None and time.time() >= deadline:
                return self._result(
                    self.hb.details.last_status,
                    end=AwaitEnd.TIMED_OUT,
                    error=(
                        f"wave {request.wave_key} did not reach a terminal status within "
                        f"{request.max_wait_seconds:g}s (last={self.hb.details.last_status.value}, "
                        f"job_id={job_id})"
                    ),
                )

    async def _poll(self) -> JobStatus | None:
        """One observation through the poller; None when the query failed, ABSENT when lost."""
        details = self.hb.details
        try:
            rows = await self.poller.observe(self.request.job.job_id, self.interval)
            if not rows:
                rows = await self._confirm_absent()
        except (TransportError, OSError) as exc:
            self._query_failed(exc)
            return None
        except NpaflowError:
            raise
        except Exception as exc:  # noqa: BLE001 - unclassified query errors are retried, never read
            self._query_failed(exc)
            return None
        if not rows:
            self.hb.update(polls=details.polls + 1)
            return JobStatus.ABSENT
        self.rows = rows
        status = aggregate_job_status([row.status for row in rows])
        self.hb.update(
            polls=details.polls + 1,
            last_status=status,
            consecutive_errors=0,
            errors_since=0.0,
            last_error="",
            pending_since=self._pending_since(rows),
        )
        self._observe(rows, status)
        return status

    async def _confirm_absent(self) -> list[TaskRow]:
        """An answer that asked for the job had no rows: ask for it alone, then on a later tick.

        Raises:
            Exception: either query failed (then nothing is concluded from it).
        """
        job_id = self.request.job.job_id
        self.errors.append(f"job {job_id} absent from a queue answer that asked for it")
        rows = (await self.poller.backend.queue([job_id])).get(job_id, [])
        if not rows:
            self.errors.append(f"job {job_id} absent from its own exact query")
            rows = await self.poller.observe(job_id, self.interval)
        del self.errors[:-MAX_STATUS_ERRORS]
        return rows

    def _query_failed(self, exc: BaseException) -> None:
        details = self.hb.details
        self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        del self.errors[:-MAX_STATUS_ERRORS]
        self.hb.update(
            polls=details.polls + 1,
            consecutive_errors=details.consecutive_errors + 1,
            errors_since=details.errors_since or time.time(),
            last_error=self.errors[-1],
        )
        return None

    def _unreadable(self) -> AwaitResult | None:
        """Fail only after more than 5 failures in a row lasting past the recovery deadline."""
        details = self.hb.details
        lasted = time.time() - details.errors_since
        if (
            details.consecutive_errors <= MAX_CONSECUTIVE_STATUS_ERRORS
            or lasted < self.request.transport_recovery_seconds
        ):
            return None
        return self._result(
            details.last_status,
            end=AwaitEnd.UNREADABLE,
            cls=FailureClass.TRANSPORT,
            error=(
                f"wave {self.request.wave_key}: {details.consecutive_errors} "
                f"consecutive status queries failed over {lasted:.0f}s for job "
                f"{self.request.job.job_id}; last error: {self.errors[-1]}"
            ),
        )

    def _every_member_ended(self) -> bool:
        """A fan-out batch ends when all its members have: one failing stops none of the others."""
        fan_out = any(member.item for member in self.request.wave_key.members)
        return not fan_out or all(row.status.is_terminal() for row in self.rows)

    def _pending_since(self, rows: list[TaskRow]) -> float:
        """When the job started waiting for resources (0 while some task runs or has run)."""
        waiting = any(r.status.is_waiting_for_resources() and not r.start_at for r in rows)
        running = any(r.status.is_active() for r in rows)
        if running or not waiting:
            return 0.0
        return self.hb.details.pending_since or time.time()

    def _waited_too_long_for_capacity(self, status: JobStatus) -> bool:
        timeout, since = self.request.pending_timeout_seconds, self.hb.details.pending_since
        return timeout > 0 and since > 0 and time.time() - since > timeout

    def _observe(self, rows: list[TaskRow], status: JobStatus) -> None:
        running = record_observation(self.observations, rows, status, utc_now())
        self.hb.details = self.hb.details.model_copy(
            update={
                "max_concurrent": max(self.hb.details.max_concurrent, len(running)),
                "task_starts": task_starts(rows),
            }
        )

    async def _ended(self, status: JobStatus) -> AwaitResult:
        """The job reached a terminal status: the result, quoting its log's end if it failed."""
        job_id = self.request.job.job_id
        log.info(
            "wave.terminal",
            wave_key=str(self.request.wave_key),
            job_id=job_id,
            status=status.value,
            polls=self.hb.details.polls,
        )
        result = self._result(status)
        if status.is_failure():
            tail = await failed_job_log_tail(self.poller.backend, job_id)
            result = result.model_copy(update={"log_tail": tail})
        return result

    def _result(
        self,
        status: JobStatus,
        *,
        end: AwaitEnd = AwaitEnd.TERMINAL,
        error: str = "",
        cls: FailureClass | None = None,
    ) -> AwaitResult:
        return AwaitResult(
            status=status,
            end=end,
            error=error,
            failure_class=cls,
            tasks=self.rows,
            observations=self.observations,
            max_concurrent_observed=self.hb.details.max_concurrent,
            status_errors=self.errors,
        )
