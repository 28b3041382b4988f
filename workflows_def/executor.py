"""The Temporal executor: turns traversal requests into activity calls, attempts and retries."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from npaflow.errors import PayloadError
from npaflow.runtime.ledger import (
    Cancellation,
    CancellationState,
    Credentials,
    WaveAttemptRecord,
    WaveStatus,
)
from npaflow.runtime.messages import (
    AwaitResult,
    AwaitWaveInput,
    CancelResult,
    CancelWaveInput,
    CheckOutputsInput,
    CheckOutputsResult,
    DecisionResult,
    LaunchResult,
    LaunchWaveInput,
    LoadedSpec,
    ReadDecisionInput,
    TriggerResult,
    WaitTriggerInput,
)
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.traversal import DecisionRequest, TriggerRequest, WaveBatch, WaveOutcome
from workflows_def.activity_options import (
    POLL_RETRY,
    SHORT_RETRY,
    heartbeat_timeout,
    poll_task_queue,
    wait_timeout,
)
from workflows_def.run_book import InFlightJob, RunBook


class RunControl(Protocol):
    """What the executor needs from the workflow: the pause gate, suspension, ledger flushes."""

    async def wait_while_paused(self) -> None:
        """Return once the run is not paused."""
        ...

    async def suspend_after_failure(self, error: str) -> bool:
        """Park the run; True when resumed (retry), never returns False unless cancelled."""
        ...

    async def flush(self) -> None:
        """Export what changed to the ledger."""
        ...

    async def continue_as_new_if_suggested(self) -> None:
        """At a wave boundary with nothing in flight, continue as new when history is long."""
        ...


@dataclass
class AttemptOutcome:
    """How one attempt ended, and which budget a failure spends."""

    ok: bool
    error: str = ""
    failure_class: FailureClass = FailureClass.PAYLOAD
    retryable: bool = True


def iso(moment: object) -> str:
    """Format workflow time as the ledger's UTC second-precision timestamp."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[attr-defined]


def classify_activity_error(error: ActivityError) -> tuple[FailureClass, str]:
    """Map an activity failure to a retry budget by its ApplicationError type."""
    cause = error.cause
    message = str(cause) if cause is not None else str(error)
    kind = cause.type if isinstance(cause, ApplicationError) else ""
    if kind in ("ConfigurationError", "SpecError", "LaunchUnidentified"):
        return FailureClass.CONFIGURATION, message
    if kind == "PayloadError":
        return FailureClass.PAYLOAD, message
    return FailureClass.INFRA, message


class TemporalExecutor:
    """Runs wave batches as launch/await activity pairs with both retry budgets."""

    def __init__(self, request: RunRequest, loaded: LoadedSpec, book: RunBook,
                 control: RunControl, task_queue: str) -> None:
        self.request = request
        self.loaded = loaded
        self.book = book
        self.control = control
        self.poll_queue = poll_task_queue(task_queue)
        self.prior_decisions = list(loaded.prior.decisions)
        self.pending_launches: dict[tuple[str, int], workflow.ActivityHandle[LaunchResult]] = {}
        self.prior = {}
        for record in loaded.prior.waves:
            current = self.prior.get(record.key)
            if current is None or record.attempt >= current.attempt:
                self.prior[record.key] = record

    async def run_wave(self, batch: WaveBatch) -> WaveOutcome:
        """Replay, adopt, or launch the batch; retry within budgets; suspend if asked to."""
        await self.control.continue_as_new_if_suggested()
        await self.control.wait_while_paused()
        self.book.current_states = batch.states
        prior = self.prior.pop(batch.key, None)
        if prior is not None:
            outcome = await self._resume_from(batch, prior)
            if outcome is not None:
                return outcome
        first = (prior.attempt if prior and not prior.job_id and prior.status is WaveStatus.RUNNING
                 else (prior.attempt + 1 if prior else 1))
        return await self._attempts(batch, first)

    async def _resume_from(self, batch: WaveBatch, prior: WaveAttemptRecord) -> WaveOutcome | None:
        if prior.status is WaveStatus.SUCCEEDED:
            trusted = self.request.continued  # our own earlier execution just checked them
            missing = [] if trusted else await self._missing_outputs([a.uri for a in prior.outputs])
            if not missing:
                self.book.upsert(prior.model_copy(update={"replayed": True}), persist=False)
                return WaveOutcome(succeeded=True)
            return None
        if prior.status is WaveStatus.RUNNING and prior.job_id:
            record = prior.model_copy(update={"adopted": True, "recovery_decision": "adopted_in_flight"})
            self.book.upsert(record)
            self.book.in_flight[record.job_id] = InFlightJob(record.key, record.attempt,
                                                             record.job_id, self.request.backend)
            outcome = await self._await_attempt(batch, record)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
        return None

    async def _attempts(self, batch: WaveBatch, attempt: int) -> WaveOutcome:
        payload_left = self.request.retries
        infra_left = self.request.max_infrastructure_recoveries
        failures = 0
        while True:
            outcome = await self._one_attempt(batch, attempt)
            if outcome.ok:
                return WaveOutcome(succeeded=True)
            retry = False
            if outcome.retryable and outcome.failure_class is FailureClass.PAYLOAD and payload_left > 0:
                payload_left, retry = payload_left - 1, True
            elif outcome.retryable and outcome.failure_class is FailureClass.INFRA and infra_left > 0:
                infra_left, retry = infra_left - 1, True
            if retry:
                failures += 1
                await workflow.sleep(timedelta(seconds=self.request.backoff_seconds(failures)),
                                     summary=f"backoff before attempt {attempt + 1} of {batch.key}")
            elif outcome.retryable and self.request.on_failure.value == "suspend":
                await self.control.suspend_after_failure(outcome.error)
            else:
                self.book.failure_class = outcome.failure_class.value
                return WaveOutcome(succeeded=False, error=outcome.error)
            attempt += 1

    async def _one_attempt(self, batch: WaveBatch, attempt: int) -> AttemptOutcome:
        record = WaveAttemptRecord(
            key=batch.key, states=batch.states, kind=batch.kind.value, group=batch.group,
            attempt=attempt, status=WaveStatus.RUNNING, started_at=iso(workflow.now()),
            outputs=[a for step in batch.steps for a in step.outputs],
            scheduler_fence_sequence=batch.sequence)
        self.book.upsert(record)  # exported with the job id once the launch returns
        handle = workflow.start_activity(
            "launch_wave", LaunchWaveInput(
                run_id=self.book.run_id, workflow=self.book.workflow, batch=batch,
                attempt=attempt, backend=self.request.backend, catalog=self.loaded.catalog,
                secret_env=self.request.secret_env, infra=self.request.infra),
            result_type=LaunchResult, start_to_close_timeout=timedelta(minutes=30),
            retry_policy=SHORT_RETRY,
            summary=f"launch {batch.key.split('|')[0]} {batch.label} {batch.states} attempt {attempt}")
        self.pending_launches[(batch.key, attempt)] = handle
        try:
            # Shielded: a run cancelled mid-launch still learns the job id, so cleanup can cancel it.
            launch = await asyncio.shield(handle)
            del self.pending_launches[(batch.key, attempt)]
        except ActivityError as error:
            del self.pending_launches[(batch.key, attempt)]
            if is_cancelled_exception(error):
                raise
            failure_class, message = classify_activity_error(error)
            return await self._fail(record, message, failure_class)
        record = record.model_copy(update={
            "job_id": launch.job_id, "job_name": launch.job_name, "sky_status": "SUBMITTED",
            "logical_launch_id": launch.launch_token, "launch_sequence": 1, "adopted": launch.adopted,
            "reconciliation": launch.reconciliation,
            "recovery_decision": "submitted_and_reconciled",
            "credentials": Credentials(names=launch.credential_names,
                                       fingerprint=launch.credential_fingerprint,
                                       source="worker_environment" if launch.credential_names else "")})
        self.book.upsert(record)
        self.book.in_flight[launch.job_id] = InFlightJob(batch.key, attempt, launch.job_id,
                                                         self.request.backend)
        await self.control.flush()
        return await self._await_attempt(batch, record)

    async def _await_attempt(self, batch: WaveBatch, record: WaveAttemptRecord) -> AttemptOutcome:
        try:
            result = await workflow.execute_activity(
                "await_wave", AwaitWaveInput(
                    job_id=record.job_id, job_name=record.job_name, wave_key=record.key,
                    backend=self.request.backend, poll_seconds=self.request.poll_seconds,
                    max_wait_seconds=self.request.max_wait_seconds),
                result_type=AwaitResult, task_queue=self.poll_queue,
                start_to_close_timeout=wait_timeout(self.request.max_wait_seconds),
                heartbeat_timeout=heartbeat_timeout(self.request.poll_seconds),
                retry_policy=POLL_RETRY,
                summary=f"await job {record.job_id} ({record.job_name}) attempt {record.attempt}")
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            result = AwaitResult(status=record.sky_status or "UNKNOWN", error=str(error.cause or error))
        record = record.model_copy(update={
            "tasks": result.tasks or record.tasks, "observations": result.observations,
            "max_concurrent_observed": max(result.max_concurrent_observed, record.max_concurrent_observed),
            "status_errors": [*record.status_errors, *result.status_errors]})
        return await self._settle(batch, record, result)

    async def _settle(self, batch: WaveBatch, record: WaveAttemptRecord,
                      result: AwaitResult) -> AttemptOutcome:
        status = JobStatus.parse(result.status)
        if result.timed_out and not self.request.cancel_on_timeout:
            self.book.in_flight.pop(record.job_id, None)
            kept = record.model_copy(update={"status": WaveStatus.RUNNING, "ended_at": "",
                                             "sky_status": record.sky_status, "error": result.error,
                                             "primary_error": result.error})
            self.book.upsert(kept)
            await self.control.flush()
            return AttemptOutcome(ok=False, error=result.error, retryable=False)
        if result.error or not status.is_terminal():
            record = await self.cancel_job(record)
            failure = FailureClass.PAYLOAD if result.timed_out else FailureClass.INFRA
            return await self._fail(record, result.error or f"wave {record.key} ended polling "
                                    f"without a terminal status", failure)
        self.book.in_flight.pop(record.job_id, None)
        record = record.model_copy(update={"sky_status": status.value})
        if not status.is_success():
            return await self._fail(record, f"wave {record.key} reached terminal status {status.value} "
                                    f"(job_id={record.job_id}, name={record.job_name})",
                                    status.failure_class())
        missing = await self._missing_outputs([a.uri for a in record.outputs])
        if missing:
            return await self._fail(record, f"wave {record.key} completed without declared durable "
                                    f"output(s): {missing}", FailureClass.PAYLOAD)
        self.book.upsert(record.model_copy(update={"status": WaveStatus.SUCCEEDED,
                                                   "ended_at": iso(workflow.now())}))
        return AttemptOutcome(ok=True)  # exported with the next launch, wait, or the run's end

    async def _fail(self, record: WaveAttemptRecord, error: str,
                    failure_class: FailureClass) -> AttemptOutcome:
        self.book.upsert(record.model_copy(update={
            "status": WaveStatus.FAILED, "ended_at": iso(workflow.now()), "error": error,
            "primary_error": record.primary_error or error, "error_category": failure_class.value}))
        await self.control.flush()
        return AttemptOutcome(ok=False, error=error, failure_class=failure_class,
                              retryable=failure_class in (FailureClass.PAYLOAD, FailureClass.INFRA))

    async def cancel_job(self, record: WaveAttemptRecord) -> WaveAttemptRecord:
        """Cancel one attempt's job by exact id and record how far that got."""
        self.book.in_flight.pop(record.job_id, None)
        if not record.job_id or JobStatus.parse(record.sky_status).is_terminal():
            return record
        result = await workflow.execute_activity(
            "cancel_wave", CancelWaveInput(job_id=record.job_id, backend=self.request.backend,
                                           verify_seconds=max(2.0, min(60.0, 4 * self.request.poll_seconds))),
            result_type=CancelResult, start_to_close_timeout=timedelta(minutes=5),
            heartbeat_timeout=timedelta(seconds=30), retry_policy=SHORT_RETRY,
            summary=f"cancel job {record.job_id} ({record.job_name})")
        update: dict[str, object] = {"cancellation": Cancellation(state=result.state, error=result.error)}
        if result.state is CancellationState.VERIFIED:
            update["sky_status"] = JobStatus.CANCELLED.value
        return record.model_copy(update=update)

    async def settle_pending_launches(self) -> None:
        """After a cancel arrived mid-launch: learn each job id so cleanup can cancel it."""
        for (key, attempt), handle in list(self.pending_launches.items()):
            del self.pending_launches[(key, attempt)]
            try:
                launch = await handle
            except ActivityError:
                continue  # the launch failed: there is no job to cancel
            record = self.book.records[(key, attempt)].model_copy(update={
                "job_id": launch.job_id, "job_name": launch.job_name, "sky_status": "SUBMITTED",
                "logical_launch_id": launch.launch_token, "launch_sequence": 1})
            self.book.upsert(record)
            self.book.in_flight[launch.job_id] = InFlightJob(key, attempt, launch.job_id,
                                                             self.request.backend)

    async def _missing_outputs(self, uris: list[str]) -> list[str]:
        if not uris:
            return []
        result = await workflow.execute_local_activity(
            "check_outputs", CheckOutputsInput(uris=uris), result_type=CheckOutputsResult,
            start_to_close_timeout=timedelta(minutes=2), retry_policy=SHORT_RETRY,
            summary=f"check {len(uris)} declared output(s)")
        return result.missing

    async def read_decision(self, request: DecisionRequest) -> str:
        """Read a decision artifact; the explicit assumption is only a missing-artifact fallback.

        Decisions an earlier execution of this run already took are replayed from the
        ledger in order, so the walk retraces its path even if an artifact was overwritten.
        """
        if self.prior_decisions:
            head = self.prior_decisions[0]
            if (head.state, head.uri) == (request.state, request.uri) and head.decision \
                    and not head.decode_error:
                self.prior_decisions.pop(0)
                return head.decision
            self.prior_decisions.clear()  # the walk diverged: read everything fresh from here
        result = await workflow.execute_local_activity(
            "read_decision", ReadDecisionInput(state=request.state, uri=request.uri,
                                               fallback=self.request.assume_decision),
            result_type=DecisionResult, start_to_close_timeout=timedelta(minutes=2),
            retry_policy=SHORT_RETRY, summary=f"read decision of {request.state} from {request.uri}")
        self.book.add_decision(result.record)
        if result.error:
            raise PayloadError(result.error)
        return result.decision

    async def wait_trigger(self, request: TriggerRequest) -> None:
        """Wait for the prefix unless this state's watermark already fired."""
        known = self.book.watermarks.get(request.state) or self.loaded.prior.watermarks.get(request.state)
        if known is not None and known.objects >= request.trigger.min_objects:
            return
        self.book.current_states = [request.state]
        await self.control.flush()
        result = await workflow.execute_activity(
            "wait_trigger", WaitTriggerInput(state=request.state, uri=request.uri,
                                             trigger=request.trigger,
                                             max_wait_seconds=self.request.max_wait_seconds),
            result_type=TriggerResult, task_queue=self.poll_queue,
            start_to_close_timeout=wait_timeout(self.request.max_wait_seconds),
            heartbeat_timeout=heartbeat_timeout(request.trigger.poll_seconds),
            retry_policy=POLL_RETRY, summary=f"wait for {request.uri} ({request.state})")
        if result.error or result.watermark is None:
            raise PayloadError(result.error or f"state {request.state}: trigger gave up")
        self.book.add_watermark(request.state, result.watermark)
