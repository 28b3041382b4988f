"""Wave activities: launch exactly once, await with heartbeats, cancel by exact id, check outputs."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time

import structlog
from temporalio import activity

from activities.backends.base import (
    Backend,
    BackendUnavailableError,
    LaunchRequest,
)
from activities.clock import utc_now
from activities.context import ActivityContext
from activities.errors import mapped_errors
from activities.heartbeat import PollState, heartbeat_poll, resume_poll_state
from activities.storage import has_content
from npaflow.errors import ConfigurationError, LaunchUnidentifiedError
from npaflow.render import RenderOptions, render_wave
from npaflow.runtime.ledger import CancellationState, Observation, TaskRow
from npaflow.runtime.messages import (
    AwaitResult,
    AwaitWaveInput,
    CancelResult,
    CancelWaveInput,
    CheckOutputsInput,
    CheckOutputsResult,
    LaunchResult,
    LaunchWaveInput,
)
from npaflow.runtime.status import JobStatus, aggregate_job_status

log = structlog.get_logger(__name__)

#: More consecutive failed status queries than this fail the wave (reference §6.4.5).
MAX_CONSECUTIVE_STATUS_ERRORS = 5
#: Observations kept per wave attempt; only changes are recorded, so this bounds history size.
MAX_OBSERVATIONS = 100
#: The first polls come quickly so short jobs do not wait a full poll interval.
FIRST_POLL_SECONDS = 0.25


def credential_fingerprint(values: dict[str, str]) -> str:
    """Fingerprint secret values so the ledger can show a change without storing them."""
    material = "\0".join(f"{k}={v}" for k, v in sorted(values.items()))
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


class WaveActivities:
    """The activities that touch wave jobs, bound to the worker's backends."""

    def __init__(self, context: ActivityContext) -> None:
        self.context = context

    @activity.defn(name="launch_wave")
    @mapped_errors
    async def launch_wave(self, request: LaunchWaveInput) -> LaunchResult:
        """Render, adopt a job already launched under the unique name, or launch it once."""
        backend = self.context.backend(request.backend)
        rendered = render_wave(request.batch, request.catalog, RenderOptions(
            run_id=request.run_id, workflow=request.workflow, attempt=request.attempt,
            aws_endpoint_url=self.context.aws_endpoint_url, secret_env=tuple(request.secret_env)))
        notes: list[str] = []
        existing = await backend.find_jobs(rendered.job_name)
        if existing:
            log.info("wave.reconciled", wave_key=request.batch.key, attempt=request.attempt,
                     job_name=rendered.job_name, found=existing)
            return await self._adopt(backend, rendered.job_name, rendered.launch_token, existing)
        values = {name: os.environ[name] for name in rendered.secret_names if os.environ.get(name)}
        missing = [name for name in rendered.secret_names if name not in values]
        if missing:
            raise ConfigurationError(f"required credential(s) unavailable in the worker "
                                     f"environment: {', '.join(missing)}; no job was launched")
        reported = await backend.launch(LaunchRequest(
            job_name=rendered.job_name, launch_token=rendered.launch_token, yaml=rendered.yaml,
            infra=request.infra, secret_names=list(rendered.secret_names), secret_values=values))
        activity.heartbeat(reported)
        found = await backend.find_jobs(rendered.job_name)
        job_id = found[-1] if found else reported
        if found and reported and reported != job_id:
            notes.append(f"stale job id from launch output: {reported} != {job_id}")
        if not job_id:
            raise LaunchUnidentifiedError(f"backend reported no job id for '{rendered.job_name}' and the job "
                             "could not be found by name; refusing to poll a job we cannot identify")
        log.info("wave.launched", wave_key=request.batch.key, attempt=request.attempt, job_id=job_id,
                 job_name=rendered.job_name)
        return LaunchResult(job_id=job_id, job_name=rendered.job_name,
                            launch_token=rendered.launch_token, reconciliation=notes,
                            credential_names=sorted(values),
                            credential_fingerprint=credential_fingerprint(values) if values else "")

    async def _adopt(self, backend: Backend, job_name: str, token: str,
                     existing: list[str]) -> LaunchResult:
        keep, *extras = sorted(existing, key=lambda i: int(i) if i.isdigit() else 0)
        notes = [f"adopted job {keep} already launched as {job_name}"]
        for extra in extras:
            await backend.cancel(extra)
            notes.append(f"cancelled duplicate job {extra} launched as {job_name}")
        log.warning("wave.adopted", job_id=keep, job_name=job_name, duplicates=extras)
        return LaunchResult(job_id=keep, job_name=job_name, launch_token=token, adopted=True,
                            reconciliation=notes)

    @activity.defn(name="await_wave")
    @mapped_errors
    async def await_wave(self, request: AwaitWaveInput) -> AwaitResult:
        """Poll until terminal; heartbeats carry the job id so retries resume the same job."""
        backend = self.context.backend(request.backend)
        state = resume_poll_state(request.job_id, time.time())
        deadline = state.started_at + request.max_wait_seconds if request.max_wait_seconds > 0 else None
        observations: list[Observation] = []
        errors: list[str] = []
        delay = min(FIRST_POLL_SECONDS, request.poll_seconds)
        while True:
            rows, status = await self._poll(backend, request, state, errors)
            if rows is not None:
                _observe(rows, status, observations, state)
            heartbeat_poll(state)
            if state.consecutive_errors > MAX_CONSECUTIVE_STATUS_ERRORS:
                return _await_result(state, observations, errors, error=(
                    f"wave {request.wave_key}: {state.consecutive_errors} consecutive status "
                    f"queries failed for job {request.job_id}; last error: {errors[-1]}"))
            if status.is_terminal():
                log.info("wave.terminal", wave_key=request.wave_key, job_id=request.job_id,
                         status=status.value, polls=state.polls)
                return _await_result(state, observations, errors, tasks=rows or [])
            if deadline is not None and time.time() >= deadline:
                return _await_result(state, observations, errors, timed_out=True, tasks=rows or [],
                                     error=f"wave {request.wave_key} did not reach a terminal status "
                                     f"within {request.max_wait_seconds:g}s (last={state.last_status}, "
                                     f"job_id={request.job_id})")
            await asyncio.sleep(delay)
            delay = min(delay * 2, request.poll_seconds)

    async def _poll(self, backend: Backend, request: AwaitWaveInput, state: PollState,
                    errors: list[str]) -> tuple[list[TaskRow] | None, JobStatus]:
        state.polls += 1
        try:
            rows = (await backend.queue([request.job_id])).get(request.job_id, [])
        except (BackendUnavailableError, OSError) as exc:
            state.consecutive_errors += 1
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
            return None, JobStatus.UNKNOWN
        state.consecutive_errors = 0
        if not rows:
            state.last_status = JobStatus.FAILED_CONTROLLER.value
            errors.append(f"job {request.job_id} is not in the backend's queue "
                          "(the controller lost the record)")
            return [], JobStatus.FAILED_CONTROLLER
        status = aggregate_job_status([JobStatus.parse(r.status) for r in rows])
        state.last_status = status.value
        return rows, status

    @activity.defn(name="cancel_wave")
    @mapped_errors
    async def cancel_wave(self, request: CancelWaveInput) -> CancelResult:
        """Cancel by exact id, then poll until the job is terminal (verified) or time runs out."""
        backend = self.context.backend(request.backend)
        try:
            await backend.cancel(request.job_id)
        except Exception as exc:  # noqa: BLE001 - best-effort cleanup records the failure truthfully
            return CancelResult(state=CancellationState.FAILED, error=f"{type(exc).__name__}: {exc}")
        deadline = time.monotonic() + request.verify_seconds
        status = JobStatus.UNKNOWN
        while time.monotonic() < deadline:
            try:
                rows = (await backend.queue([request.job_id])).get(request.job_id, [])
            except BackendUnavailableError:
                rows = None
            if rows:
                status = aggregate_job_status([JobStatus.parse(r.status) for r in rows])
                if status.is_terminal():
                    return CancelResult(state=CancellationState.VERIFIED, status=status.value)
            activity.heartbeat(request.job_id)
            await asyncio.sleep(0.5)
        return CancelResult(state=CancellationState.REQUESTED, status=status.value)

    @activity.defn(name="check_outputs")
    @mapped_errors
    async def check_outputs(self, request: CheckOutputsInput) -> CheckOutputsResult:
        """Return the declared outputs that do not exist (or are empty)."""
        missing = []
        for uri in request.uris:
            try:
                present = await has_content(self.context.storage.for_uri(uri), uri)
            except ConfigurationError as exc:
                missing.append(f"{uri} ({exc})")
                continue
            if not present:
                missing.append(uri)
        return CheckOutputsResult(missing=missing)


def _observe(rows: list[TaskRow], status: JobStatus, observations: list[Observation],
             state: PollState) -> None:
    statuses = {row.task_name: row.status for row in rows}
    running = sorted(r.task_name for r in rows if JobStatus.parse(r.status).is_active())
    state.max_concurrent = max(state.max_concurrent, len(running))
    if observations and observations[-1].statuses == statuses:
        return
    observations.append(Observation(
        observed_at=utc_now(), scheduler_state=status.value,
        running=running, running_count=len(running), statuses=statuses))
    del observations[:-MAX_OBSERVATIONS]


def _await_result(state: PollState, observations: list[Observation], errors: list[str], *,
                  error: str = "", timed_out: bool = False,
                  tasks: list[TaskRow] | None = None) -> AwaitResult:
    return AwaitResult(status=state.last_status, timed_out=timed_out, error=error, tasks=tasks or [],
                       observations=observations, max_concurrent_observed=state.max_concurrent,
                       status_errors=errors[-20:])
