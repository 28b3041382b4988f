"""Activities about one launched job: await it, cancel it by exact id, read its logs.

Local-backend jobs' activities run on the owning worker's task queue. All
awaits of a backend in one worker share one process-wide `JobPoller`: each
`observe(job_id, delay)` registers a waiter due after `delay`; the poller wakes
at the earliest due time, makes ONE `backend.queue([every registered id])` call,
and hands each due (or nearly due) waiter its job's rows, or the call's error.
N concurrent waves therefore cost one queue call per tick, not N.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import structlog
from temporalio import activity

from activities.backends.base import Backend
from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import Heartbeater, heartbeating, resume_details
from npaflow.errors import NpaflowError, TransportError
from npaflow.runtime.contract import AWAIT_WAVE, CANCEL_WAVE, READ_JOB_LOGS
from npaflow.runtime.ledger import CancellationState, Observation, TaskRow
from npaflow.runtime.messages import (
    AwaitEnd,
    AwaitResult,
    AwaitWaveInput,
    CancelResult,
    CancelWaveInput,
    JobLogs,
    ReadJobLogsInput,
)
from npaflow.runtime.status import FailureClass, JobStatus, aggregate_job_status

log = structlog.get_logger(__name__)

#: Observations kept per wave attempt; only changes are recorded, so this bounds history size.
MAX_OBSERVATIONS = 100
#: The first polls come quickly so short jobs do not wait a full poll interval.
FIRST_POLL_SECONDS = 0.25
#: Failed status queries kept as evidence per await.
MAX_STATUS_ERRORS = 20
#: Consecutive failed status queries that, past the recovery deadline, fail the wave.
MAX_CONSECUTIVE_STATUS_ERRORS = 5


#: A waiter due within this share of its own interval is served by the current call, so
#: waves that started at different times fall onto one shared tick after one interval.
COALESCE_FRACTION = 0.5


@dataclass
class _Waiter:
    job_id: str
    delay: float
    due: float
    future: asyncio.Future[list[TaskRow]]

    def is_served_by(self, call_end: float, latency: float) -> bool:
        """Served when due before the call ended, or early by at most half its own interval."""
        return self.due <= call_end + max(latency, COALESCE_FRACTION * self.delay)


@dataclass
class PollerStats:
    """What the poller did: for benchmarks and logs."""

    calls: int = 0
    served: int = 0
    max_ids_per_call: int = 0
    worst_latency: float = 0.0
    latencies: list[float] = field(default_factory=list)


class JobPoller:
    """Coalesces status queries of one backend across all awaits in this process."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.stats = PollerStats()
        self._waiters: list[_Waiter] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def observe(self, job_id: str, delay: float) -> list[TaskRow]:
        """The job's rows from the first call at least `delay` seconds from now.

        Raises:
            Exception: whatever the shared queue call raised on that tick.
        """
        delay = max(0.0, delay)
        waiter = _Waiter(job_id, delay, time.monotonic() + delay, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        self._ensure_running()
        self._wake.set()
        try:
            return await waiter.future
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while self._waiters:
            self._wake.clear()
            wait = min(w.due for w in self._waiters) - time.monotonic()
            if wait > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
                    continue  # a new waiter may be due sooner: recompute
                except TimeoutError:
                    pass
            await self._tick()

    async def _tick(self) -> None:
        ids = sorted({w.job_id for w in self._waiters})
        started = time.monotonic()
        try:
            rows = await self.backend.queue(ids)
            error: BaseException | None = None
        except Exception as exc:  # noqa: BLE001 - handed to every waiter, which decides
            rows, error = {}, exc
        latency = time.monotonic() - started
        self._record(len(ids), latency)
        ended = time.monotonic()
        for waiter in [w for w in self._waiters if w.is_served_by(ended, latency)]:
            self._waiters.remove(waiter)
            if waiter.future.done():
                continue
            if error is not None:
                waiter.future.set_exception(error)
            else:
                waiter.future.set_result(rows.get(waiter.job_id, []))
            self.stats.served += 1

    def _record(self, ids: int, latency: float) -> None:
        stats = self.stats
        stats.calls += 1
        stats.max_ids_per_call = max(stats.max_ids_per_call, ids)
        stats.worst_latency = max(stats.worst_latency, latency)
        stats.latencies = [*stats.latencies[-99:], latency]
        log.debug("poller.tick", backend=self.backend.name.value, ids=ids, latency=round(latency, 3))


class JobActivities:
    """await_wave, cancel_wave and read_job_logs, bound to the worker's backends and pollers."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name=AWAIT_WAVE.name)
    @mapped_errors
    async def await_wave(self, request: AwaitWaveInput) -> AwaitResult:
        """Poll until terminal, the deadline, or capacity never coming; retries resume the same job."""
        poller = self.context.poller(request.job.backend)
        details = resume_details(job_id=request.job.job_id, phase="polling")
        if details.job_id != request.job.job_id:
            details = details.model_copy(
                update={"job_id": request.job.job_id, "polls": 0, "started_at": time.time()}
            )
        async with heartbeating(details) as hb:
            return await JobWatch(request, poller, hb).run()

    @activity.defn(name=CANCEL_WAVE.name)
    @mapped_errors
    async def cancel_wave(self, request: CancelWaveInput) -> CancelResult:
        """Cancel by exact id, then poll until terminal (verified) or the bound passes (requested)."""
        backend = self.context.backend(request.job.backend)
        poller = self.context.poller(request.job.backend)
        async with heartbeating(resume_details(job_id=request.job.job_id, phase="cancelling")) as hb:
            try:
                await hb.recovering(
                    f"cancel job {request.job.job_id}",
                    lambda: backend.cancel(request.job.job_id),
                    deadline_seconds=request.verify_seconds,
                )
            except NpaflowError as exc:
                return CancelResult(state=CancellationState.FAILED, error=str(exc)[:400])
            deadline = time.monotonic() + request.verify_seconds
            status = JobStatus.UNKNOWN
            while time.monotonic() < deadline:
                try:
                    rows = await poller.observe(request.job.job_id, 0.2)
                except NpaflowError:
                    rows = []
                if rows:
                    status = aggregate_job_status([row.status for row in rows])
                    hb.update(last_status=status)
                    if status.is_terminal():
                        return CancelResult(state=CancellationState.VERIFIED, status=status)
            return CancelResult(state=CancellationState.REQUESTED, status=status)

    @activity.defn(name=READ_JOB_LOGS.name)
    @mapped_errors
    async def read_job_logs(self, request: ReadJobLogsInput) -> JobLogs:
        """The end of one job's logs, read where the job runs."""
        backend = self.context.backend(request.job.backend)
        return JobLogs(text=await backend.logs(request.job.job_id, request.task, request.tail_lines))


class JobWatch:
    """One await: polls through the shared poller and decides when polling ends."""

    def __init__(self, request: AwaitWaveInput, poller: JobPoller, hb: Heartbeater) -> None:
        self.request = request
        self.poller = poller
        self.hb = hb
        self.observations: list[Observation] = []
        self.errors: list[str] = []
        self.rows: list[TaskRow] = []
        self.lost = ""

    async def run(self) -> AwaitResult:
        """Poll to the end; each outcome is one of `AwaitEnd`."""
        request, job_id = self.request, self.request.job.job_id
        deadline = (
            self.hb.details.started_at + request.max_wait_seconds if request.max_wait_seconds > 0 else None
        )
        delay = min(FIRST_POLL_SECONDS, request.poll_seconds)
        while True:
            status = await self._poll(delay)
            delay = min(delay * 2, request.poll_seconds)
            if status is None:
                failed = self._unreadable()
                if failed is not None:
                    return failed
            elif status.is_terminal():
                log.info(
                    "wave.terminal",
                    wave_key=str(request.wave_key),
                    job_id=job_id,
                    status=status.value,
                    polls=self.hb.details.polls,
                )
                return self._result(status, error=self.lost)
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

    async def _poll(self, delay: float) -> JobStatus | None:
        """One observation through the poller; None when the query failed."""
        details = self.hb.details
        try:
            rows = await self.poller.observe(self.request.job.job_id, delay)
        except (TransportError, OSError) as exc:
            return self._query_failed(exc)
        except NpaflowError:
            raise
        except Exception as exc:  # noqa: BLE001 - unclassified query errors are retried, never read
            return self._query_failed(exc)
        if not rows:
            self.lost = (
                f"job {self.request.job.job_id} is not in the backend's queue (the "
                "controller lost the record)"
            )
            self.hb.update(polls=details.polls + 1, last_status=JobStatus.FAILED_CONTROLLER)
            return JobStatus.FAILED_CONTROLLER
        self.rows = rows
        status = aggregate_job_status([row.status for row in rows])
        self.hb.update(
            polls=details.polls + 1,
            last_status=status,
            consecutive_errors=0,
            errors_since=0.0,
            pending_since=self._pending_since(rows),
        )
        self._observe(rows, status)
        return status

    def _query_failed(self, exc: BaseException) -> None:
        details = self.hb.details
        self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        del self.errors[:-MAX_STATUS_ERRORS]
        self.hb.update(
            polls=details.polls + 1,
            consecutive_errors=details.consecutive_errors + 1,
            errors_since=details.errors_since or time.time(),
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
        statuses = {row.task_name or str(row.task_id): row.status for row in rows}
        running = sorted(row.task_name for row in rows if row.status.is_active())
        self.hb.details = self.hb.details.model_copy(
            update={"max_concurrent": max(self.hb.details.max_concurrent, len(running))}
        )
        if self.observations and self.observations[-1].statuses == statuses:
            return
        self.observations.append(
            Observation(
                observed_at=utc_now(),
                scheduler_state=status,
                running=running,
                running_count=len(running),
                statuses=statuses,
            )
        )
        del self.observations[:-MAX_OBSERVATIONS]

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
