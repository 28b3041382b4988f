"""What a run is and remembers, changed only through the transitions of npaflow/runtime/transitions.py.

The workflow owns one `RunState`. Every change to it is a method named after
what happened (a table transition, a request from a signal, a reading); each
one records the `Effect` it calls for, and `take_effect` tells the workflow's
recorder what to publish or export. Deterministic and pure: timestamps come
from the caller (`workflow.now()`), nothing here does I/O.
"""

from __future__ import annotations

from typing import Any

from npaflow.runtime.contract import RUNTIME_FILE, ledger_file_uri
from npaflow.runtime.ids import RunId
from npaflow.runtime.ledger import (
    Cancellation,
    Credentials,
    DecisionRecord,
    LedgerDelta,
    PlannedStep,
    Watermark,
    WaveAttemptRecord,
)
from npaflow.runtime.ledger.book import AttemptId, LedgerBook, Receipt
from npaflow.runtime.messages import AttemptUsage, AwaitResult, LaunchResult
from npaflow.runtime.notifications import NotificationRecord
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.summary import ProgressView, RunStatusView, RunSummary, StepRecord, WaveView
from npaflow.runtime.transitions import Effect, RunTransition, TransitionError, WaveTransition
from npaflow.runtime.usage import task_shapes
from npaflow.runtime.vocabulary import AttemptStage, RecoveryDecision, RunPhase, WaveStatus
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey

#: Status errors kept per attempt, so a long outage cannot grow history without bound.
MAX_STATUS_ERRORS = 20
#: Enough for a plan-diff refusal of a few dozen lines; the ledger keeps it, the UI shortens it.
MAX_ERROR_CHARS = 4000

__all__ = ["AttemptId", "RunState"]


class RunState:
    """A run's phase, wave attempts, decisions and watermarks, plus what its ledger still lacks."""

    def __init__(self, run_id: RunId) -> None:
        self.run_id = run_id
        self.workflow = ""
        self.ledger_uri = ""
        self.backend = BackendName.LOCAL
        self.phase = RunPhase.STARTING
        self.current_states: list[str] = []
        self.error = ""
        self.failure_class: FailureClass | None = None
        self.cancel_reason = ""
        self.pause_requested = False  # set by the `pause` signal; honoured before the next launch
        self.resume_requested = False  # set by the `resume` signal
        self.decisions: list[DecisionRecord] = []
        self.watermarks: dict[str, Watermark] = {}
        self.notifications: dict[str, NotificationRecord] = {}
        self.ledger = LedgerBook()
        self.progress = RunProgress()
        self._attempts: dict[AttemptId, WaveAttemptRecord] = {}
        self._stages: dict[AttemptId, AttemptStage] = {}
        self._effect = Effect.NONE

    def take_effect(self) -> Effect:
        """The strongest effect the transitions since the last call asked for (then NONE)."""
        effect, self._effect = self._effect, Effect.NONE
        return effect

    # --- requests (signals) and readings -----------------------------------------------------

    def pause_requested_by_operator(self) -> None:
        """`pause`: finish in-flight waves, launch no new one."""
        self.pause_requested = True

    def resume_requested_by_operator(self) -> None:
        """`resume`: continue a paused run, or retry a suspended run's failed wave."""
        self.pause_requested = False
        self.resume_requested = True

    def cancel_requested(self, reason: str) -> None:
        """The `cancel` signal arrived; its reason lands in the ledger."""
        self.cancel_reason = reason or "cancel signal"

    def states_entered(self, states: list[str]) -> None:
        """The walk moved on to these states (shown with the next publish)."""
        self.current_states = list(states)

    def add_decision(self, record: DecisionRecord) -> None:
        """Append a decision read (or the assumption that stood in for one)."""
        self.decisions.append(record)

    def add_watermark(self, state: str, watermark: Watermark) -> None:
        """Record what a trigger saw when it fired."""
        self.watermarks[state] = watermark
        self.ledger.watermark_changed(state)

    def add_notification(self, record: NotificationRecord) -> None:
        """Record how a notification's delivery went (exported with the next sync)."""
        self.notifications[record.id] = record
        self.ledger.notification_changed(record.id)

    # --- phases ------------------------------------------------------------------------------

    def _to_phase(self, transition: RunTransition) -> None:
        row = transition.value
        if self.phase not in row.sources:
            raise TransitionError(row, f"run {self.run_id}", self.phase)
        self.phase = row.target
        self._effect = max(self._effect, row.effect)

    def run_started(self, *, workflow: str, ledger_uri: str, backend: BackendName) -> None:
        """The spec is loaded: walking begins; the spec goes with the first export."""
        self._to_phase(RunTransition.STARTED)
        self.run_located(workflow=workflow, ledger_uri=ledger_uri, backend=backend)

    def usage_carried(self, prior: list[AttemptUsage], *, counted: bool) -> None:
        """Earlier executions' attempts count in this run's hours, as they do in its ledger."""
        for attempt in prior:
            self.progress.carry((attempt.key, attempt.attempt), list(attempt.parts), counted=counted)

    def run_located(self, *, workflow: str, ledger_uri: str, backend: BackendName) -> None:
        """Where the run's ledger goes (also for a run cancelled before it started walking)."""
        self.workflow, self.ledger_uri, self.backend = workflow, ledger_uri, backend
        self.ledger.spec_pending = True

    def run_paused(self) -> None:
        """A pause request reached the launch gate: nothing new launches."""
        self._to_phase(RunTransition.PAUSED)

    def run_resumed(self) -> None:
        """Paused or suspended no more."""
        self._to_phase(RunTransition.RESUMED)
        self.pause_requested = self.resume_requested = False
        self.error = ""

    def run_suspended(self, error: str) -> None:
        """A wave failed for good under on_failure=suspend: wait for resume or cancel."""
        self._to_phase(RunTransition.SUSPENDED)
        self.error = error
        self.resume_requested = False

    def run_cancelling(self, reason: str) -> None:
        """Cancellation began: in-flight jobs are cancelled next."""
        self._to_phase(RunTransition.CANCELLING)
        self.cancel_reason = self.cancel_reason or reason or "no reason given"
        self.error = f"run cancelled: {self.cancel_reason}"

    def run_cancelled(self) -> None:
        """Every in-flight job was cancelled (or its cancellation recorded as failed)."""
        self._to_phase(RunTransition.CANCELLED)

    def run_succeeded(self) -> None:
        """The walk reached its end."""
        self._to_phase(RunTransition.SUCCEEDED)

    def run_failed(self, error: str, failure_class: FailureClass | None = None) -> None:
        """The run failed for good; without a class, the class of its last failed attempt."""
        self._to_phase(RunTransition.FAILED)
        lines = (" ".join(line.split()) for line in error.splitlines())
        self.error = "\n".join(line for line in lines if line)[:MAX_ERROR_CHARS]
        self.failure_class = failure_class or self.failure_class

    def ledger_export_failed(self, message: str) -> None:
        """The last export failed for good: the run says its ledger is behind, and why."""
        self.ledger.failed_export = message
        self.error = f"{self.error} (the ledger could not be written: {message})"[:MAX_ERROR_CHARS]

    # --- wave attempts -----------------------------------------------------------------------

    def stage(self, key: WaveKey, attempt: int) -> AttemptStage:
        """The stage of one attempt (NEW when this execution has not recorded it)."""
        return self._stages.get((key, attempt), AttemptStage.NEW)

    def attempt(self, key: WaveKey, attempt: int) -> WaveAttemptRecord:
        """The record of one attempt this execution knows."""
        return self._attempts[(key, attempt)]

    def _move(
        self,
        transition: WaveTransition,
        key: WaveKey,
        attempt: int,
        *,
        persist: bool = True,
        record: WaveAttemptRecord | None = None,
        **changes: Any,
    ) -> WaveAttemptRecord:
        row, identity = transition.value, (key, attempt)
        current = self.stage(key, attempt)
        if current not in row.sources:
            raise TransitionError(row, f"wave {key} attempt {attempt}", current)
        old = self._attempts.get(identity)
        base = record if record is not None else self._attempts[identity]
        changes["status"] = row.target.ledger_status()
        updated = _changed(base, changes)
        self._attempts[identity] = updated
        self._stages[identity] = row.target
        self.progress.record(identity, old, updated)
        if persist:
            self.ledger.wave_changed(identity)
        self._effect = max(self._effect, row.effect)
        return updated

    def wave_launching(self, wave: Wave, attempt: int, *, now: str) -> WaveAttemptRecord:
        """Record the attempt as running before the launch boundary is crossed."""
        record = WaveAttemptRecord(
            key=wave.key,
            states=wave.states,
            kind=wave.kind,
            group=wave.group,
            attempt=attempt,
            started_at=now,
            outputs=[a for step in wave.steps for a in step.outputs],
            scheduler_fence_sequence=wave.sequence,
            task_shapes=task_shapes(wave.steps),
            planned=[
                PlannedStep(
                    state=step.state,
                    iteration=step.iteration,
                    tool_ref=step.tool_ref,
                    resources=step.resources,
                    resources_profile=step.resources_profile,
                    inputs=list(step.inputs),
                    outputs=list(step.outputs),
                )
                for step in wave.steps
            ],
        )
        return self._move(WaveTransition.LAUNCHING, wave.key, attempt, record=record)

    def wave_launched(self, key: WaveKey, attempt: int, launch: LaunchResult) -> WaveAttemptRecord:
        """The launch returned the exact job (launched now, or adopted by the launch)."""
        job = launch.job
        credentials = Credentials(
            names=launch.credential_names,
            fingerprint=launch.credential_fingerprint,
            source="worker_environment" if launch.credential_names else "",
        )
        return self._move(
            WaveTransition.LAUNCHED,
            key,
            attempt,
            job_id=job.job_id,
            job_name=job.job_name,
            sky_status=JobStatus.SUBMITTED,
            logical_launch_id=launch.launch_token,
            launch_sequence=1,
            adopted=launch.adopted,
            reconciliation=launch.reconciliation,
            recovery_decision=RecoveryDecision.SUBMITTED_AND_RECONCILED,
            credentials=credentials,
            request_id=launch.request_id,
            worker_id=job.worker_id,
            worker_task_queue=job.worker_task_queue,
        )

    def wave_adopted(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """Take over a job an earlier execution left in flight (resume)."""
        return self._move(
            WaveTransition.ADOPTED,
            prior.key,
            prior.attempt,
            record=prior,
            adopted=True,
            recovery_decision=RecoveryDecision.ADOPTED_IN_FLIGHT,
        )

    def wave_observed(self, key: WaveKey, attempt: int, result: AwaitResult) -> WaveAttemptRecord:
        """Record what polling saw: task rows, observations, the status and query errors."""
        record = self._attempts[(key, attempt)]
        changes: dict[str, Any] = {
            "tasks": result.tasks or record.tasks,
            "observations": result.observations,
            "max_concurrent_observed": max(result.max_concurrent_observed, record.max_concurrent_observed),
            "status_errors": [*record.status_errors, *result.status_errors][-MAX_STATUS_ERRORS:],
        }
        if result.status not in (JobStatus.UNKNOWN, JobStatus.ABSENT):
            changes["sky_status"] = result.status
        return self._move(WaveTransition.OBSERVED, key, attempt, **changes)

    def wave_left_running(self, key: WaveKey, attempt: int, *, error: str) -> WaveAttemptRecord:
        """Timed out with cancel_on_timeout off: the job is kept for a later resume to adopt."""
        record = self._attempts[(key, attempt)]
        primary = record.primary_error or error
        return self._move(
            WaveTransition.LEFT_RUNNING, key, attempt, ended_at="", error=error, primary_error=primary
        )

    def wave_succeeded(
        self, key: WaveKey, attempt: int, *, now: str, cancellation: Cancellation | None = None
    ) -> WaveAttemptRecord:
        """Terminal success with every declared output present (a cancel that came late is noted)."""
        changes: dict[str, Any] = {"ended_at": now}
        if cancellation is not None:
            changes["cancellation"] = cancellation
        return self._move(WaveTransition.SUCCEEDED, key, attempt, **changes)

    def wave_replayed(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """Reuse an earlier execution's success (not re-recorded in the ledger)."""
        return self._move(
            WaveTransition.REPLAYED, prior.key, prior.attempt, record=prior, persist=False, replayed=True
        )

    def wave_failed(
        self,
        key: WaveKey,
        attempt: int,
        *,
        error: str,
        category: FailureClass,
        now: str,
        cancellation: Cancellation | None = None,
        final_status: JobStatus | None = None,
    ) -> WaveAttemptRecord:
        """The attempt failed (its job, if any, was cancelled by id first)."""
        ending = self._ending(key, attempt, error, now, cancellation, final_status)
        record = self._move(WaveTransition.FAILED, key, attempt, **ending, error_category=category)
        self.failure_class = category
        return record

    def wave_cancelled(
        self,
        key: WaveKey,
        attempt: int,
        *,
        error: str,
        now: str,
        cancellation: Cancellation,
        final_status: JobStatus | None = None,
    ) -> WaveAttemptRecord:
        """The run was cancelled while this attempt was in flight."""
        ending = self._ending(key, attempt, error, now, cancellation, final_status)
        return self._move(WaveTransition.CANCELLED, key, attempt, **ending)

    def _ending(
        self,
        key: WaveKey,
        attempt: int,
        error: str,
        now: str,
        cancellation: Cancellation | None,
        final_status: JobStatus | None,
    ) -> dict[str, Any]:
        record = self._attempts[(key, attempt)]
        changes: dict[str, Any] = {
            "ended_at": now,
            "error": error,
            "primary_error": record.primary_error or error,
        }
        if cancellation is not None:
            changes["cancellation"] = cancellation
        if final_status is not None and final_status.is_terminal():
            changes["sky_status"] = final_status
        return changes

    def in_flight(self) -> list[WaveAttemptRecord]:
        """Attempts whose job every abort path must cancel by exact id."""
        return [r for i, r in self.progress.running.items() if self._stages[i] is AttemptStage.IN_FLIGHT]

    def last_failure(self) -> WaveAttemptRecord | None:
        """The newest failed attempt (what a failure notification names), if any."""
        failed = [r for r in self._attempts.values() if r.status is WaveStatus.FAILED]
        return failed[-1] if failed else None

    def launching(self) -> list[AttemptId]:
        """Attempts recorded before their launch reported a job (launch failed or in progress)."""
        return [i for i in self.progress.running if self._stages[i] is AttemptStage.LAUNCHING]

    # --- the ledger delta ----------------------------------------------------------------------

    def ledger_is_behind(self) -> bool:
        """True when an export would write something the ledger does not have."""
        return self.ledger.is_behind(
            status=self.phase.ledger_status(), error=self.error, decisions=len(self.decisions)
        )

    def pending_delta(self) -> tuple[LedgerDelta, Receipt]:
        """What the ledger lacks, with the receipt `ledger.written` takes once it is exported."""
        return self.ledger.delta(
            records=self._attempts,
            decisions=self.decisions,
            watermarks=self.watermarks,
            notifications=self.notifications,
            status=self.phase.ledger_status(),
            error=self.error,
            cancel_reason=self.cancel_reason,
        )

    # --- reports -------------------------------------------------------------------------------

    def progress_view(self) -> ProgressView:
        """What the UI's current details show; costs the running attempts, not the run's length."""
        progress = self.progress
        return ProgressView(
            phase=self.phase,
            running=[WaveView.of(r) for r in progress.running.values()],
            done=progress.done,
            total=progress.total,
            retried=progress.retried,
            last_decision=self.decisions[-1] if self.decisions else None,
            usage=progress.totals(),
            ledger_uri=self.ledger_uri,
            ledger_behind=self.ledger.failed_export,
            error=self.error,
        )

    def view(self) -> RunStatusView:
        """The live status for the `status` query."""
        return RunStatusView(
            run_id=self.run_id,
            workflow=self.workflow,
            phase=self.phase,
            pause_requested=self.pause_requested,
            backend=self.backend,
            current_states=self.current_states,
            waves=[WaveView.of(r) for r in self._attempts.values()],
            decisions=self.decisions,
            ledger_uri=self.ledger_uri,
            ledger_behind=self.ledger.failed_export,
            error=self.error,
            cancel_reason=self.cancel_reason,
            usage=self.progress.usage(),
        )

    def summary(self) -> RunSummary:
        """The final summary (reference §6.10)."""
        waves = list(self._attempts.values())
        steps = [StepRecord.of(record, state) for record in waves for state in record.states]
        runtime_uri = ledger_file_uri(self.ledger_uri, RUNTIME_FILE) if self.ledger_uri else ""
        return RunSummary(
            workflow=self.workflow,
            run_id=self.run_id,
            status=self.phase,
            wave_count=len(waves),
            waves=waves,
            decisions=self.decisions,
            steps=steps,
            watermarks=self.watermarks,
            run_prefix_uri=self.ledger_uri,
            runtime_state_uri=runtime_uri,
            error=self.error,
            failure_class=self.failure_class,
            usage=self.progress.usage(),
            ledger_behind=self.ledger.failed_export,
        )


def _changed(record: WaveAttemptRecord, changes: dict[str, Any]) -> WaveAttemptRecord:
    """Apply field changes with full validation (`model_copy(update=)` validates nothing)."""
    unknown = set(changes) - set(WaveAttemptRecord.model_fields)
    if unknown:
        raise TypeError(f"WaveAttemptRecord has no field(s) {sorted(unknown)}")
    return WaveAttemptRecord.model_validate({**dict(record), **changes}).with_hours()
