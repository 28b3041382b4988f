"""What a run is and remembers, changed only through guarded transitions (npaflow/runtime/transitions.py).

The workflow owns one `RunState`: it applies a transition after every activity
and sends the ledger only what changed (`take_delta`). Deterministic and pure:
timestamps come from the caller (`workflow.now()`), nothing here does I/O.
"""

from __future__ import annotations

from typing import Any

from npaflow.runtime.contract import RUNTIME_FILE, ledger_file_uri
from npaflow.runtime.ledger import (
    Cancellation,
    Credentials,
    DecisionRecord,
    LedgerDelta,
    LedgerStatus,
    Watermark,
    WaveAttemptRecord,
    run_usage,
)
from npaflow.runtime.messages import AwaitResult, LaunchResult
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.summary import RunPhase, RunStatusView, RunSummary, StepRecord, WaveView
from npaflow.runtime.transitions import (
    PHASE_TRANSITIONS,
    WAVE_TRANSITIONS,
    AttemptStage,
    TransitionError,
)
from npaflow.runtime.usage import task_shapes
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey

AttemptId = tuple[WaveKey, int]
#: Status errors kept per attempt, so a long outage cannot grow history without bound.
MAX_STATUS_ERRORS = 20


#: Enough for a plan-diff refusal of a few dozen lines; the ledger keeps it, the UI shortens it.
MAX_ERROR_CHARS = 4000


class RunState:
    """A run's phase, wave attempts, decisions and watermarks, plus the ledger's pending delta."""

    def __init__(self, run_id: str) -> None:
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
        self._attempts: dict[AttemptId, WaveAttemptRecord] = {}
        self._stages: dict[AttemptId, AttemptStage] = {}
        self._changed: list[AttemptId] = []
        self._new_decisions: list[DecisionRecord] = []
        self._new_watermarks: dict[str, Watermark] = {}

    # --- phases ----------------------------------------------------------------------------

    def _to_phase(self, name: str) -> None:
        transition = PHASE_TRANSITIONS[name]
        if self.phase not in transition.sources:
            raise TransitionError(transition, f"run {self.run_id}", self.phase)
        self.phase = transition.target

    def run_started(self, *, workflow: str, ledger_uri: str, backend: BackendName) -> None:
        """The spec is loaded: walking begins."""
        self._to_phase("run_started")
        self.workflow, self.ledger_uri, self.backend = workflow, ledger_uri, backend

    def run_paused(self) -> None:
        """A pause request reached the launch gate: nothing new launches."""
        self._to_phase("run_paused")

    def run_resumed(self) -> None:
        """Paused or suspended no more."""
        self._to_phase("run_resumed")
        self.pause_requested = self.resume_requested = False
        self.error = ""

    def run_suspended(self, error: str) -> None:
        """A wave failed for good under on_failure=suspend: wait for resume or cancel."""
        self._to_phase("run_suspended")
        self.error = error
        self.resume_requested = False

    def run_cancelling(self, reason: str) -> None:
        """Cancellation began: in-flight jobs are cancelled next."""
        self._to_phase("run_cancelling")
        self.cancel_reason = self.cancel_reason or reason or "no reason given"
        self.error = f"run cancelled: {self.cancel_reason}"

    def run_cancelled(self) -> None:
        """Every in-flight job was cancelled (or its cancellation recorded as failed)."""
        self._to_phase("run_cancelled")

    def run_succeeded(self) -> None:
        """The walk reached its end."""
        self._to_phase("run_succeeded")

    def run_failed(self, error: str, failure_class: FailureClass | None = None) -> None:
        """The run failed for good; `failure_class` is the class of the wave that ended it."""
        self._to_phase("run_failed")
        lines = (" ".join(line.split()) for line in error.splitlines())
        self.error = "\n".join(line for line in lines if line)[:MAX_ERROR_CHARS]
        self.failure_class = failure_class or self.failure_class

    # --- wave attempts ---------------------------------------------------------------------

    def stage(self, key: WaveKey, attempt: int) -> AttemptStage:
        """The stage of one attempt (NEW when this execution has not recorded it)."""
        return self._stages.get((key, attempt), AttemptStage.NEW)

    def attempt(self, key: WaveKey, attempt: int) -> WaveAttemptRecord:
        """The record of one attempt this execution knows."""
        return self._attempts[(key, attempt)]

    def _move(
        self,
        name: str,
        key: WaveKey,
        attempt: int,
        *,
        persist: bool = True,
        record: WaveAttemptRecord | None = None,
        **changes: Any,
    ) -> WaveAttemptRecord:
        transition = WAVE_TRANSITIONS[name]
        current = self.stage(key, attempt)
        if current not in transition.sources:
            raise TransitionError(transition, f"wave {key} attempt {attempt}", current)
        base = record if record is not None else self._attempts[(key, attempt)]
        changes["status"] = transition.target.ledger_status()
        updated = _changed(base, changes)
        self._attempts[(key, attempt)] = updated
        self._stages[(key, attempt)] = transition.target
        if persist and (key, attempt) not in self._changed:
            self._changed.append((key, attempt))
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
        )
        return self._move("wave_launching", wave.key, attempt, record=record)

    def wave_launched(self, key: WaveKey, attempt: int, launch: LaunchResult) -> WaveAttemptRecord:
        """The launch returned the exact job (launched now, or adopted by the launch)."""
        job = launch.job
        credentials = Credentials(
            names=launch.credential_names,
            fingerprint=launch.credential_fingerprint,
            source="worker_environment" if launch.credential_names else "",
        )
        return self._move(
            "wave_launched",
            key,
            attempt,
            job_id=job.job_id,
            job_name=job.job_name,
            sky_status=JobStatus.SUBMITTED,
            logical_launch_id=launch.launch_token,
            launch_sequence=1,
            adopted=launch.adopted,
            reconciliation=launch.reconciliation,
            recovery_decision="submitted_and_reconciled",
            credentials=credentials,
            request_id=launch.request_id,
            worker_id=job.worker_id,
            worker_task_queue=job.worker_task_queue,
        )

    def wave_adopted(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """Take over a job an earlier execution left in flight (resume)."""
        return self._move(
            "wave_adopted",
            prior.key,
            prior.attempt,
            record=prior,
            adopted=True,
            recovery_decision="adopted_in_flight",
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
        return self._move("wave_observed", key, attempt, **changes)

    def wave_left_running(self, key: WaveKey, attempt: int, *, error: str) -> WaveAttemptRecord:
        """Timed out with cancel_on_timeout off: the job is kept for a later resume to adopt."""
        record = self._attempts[(key, attempt)]
        return self._move(
            "wave_left_running",
            key,
            attempt,
            ended_at="",
            error=error,
            primary_error=record.primary_error or error,
        )

    def wave_succeeded(self, key: WaveKey, attempt: int, *, now: str) -> WaveAttemptRecord:
        """Terminal success with every declared output present."""
        return self._move("wave_succeeded", key, attempt, ended_at=now)

    def wave_replayed(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """Reuse an earlier execution's success (not re-recorded in the ledger)."""
        return self._move(
            "wave_replayed", prior.key, prior.attempt, record=prior, persist=False, replayed=True
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
        return self._move(
            "wave_failed",
            key,
            attempt,
            **self._ending(key, attempt, error, now, cancellation, final_status),
            error_category=category,
        )

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
        return self._move(
            "wave_cancelled",
            key,
            attempt,
            **self._ending(key, attempt, error, now, cancellation, final_status),
        )

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
        return [self._attempts[i] for i, stage in self._stages.items() if stage is AttemptStage.IN_FLIGHT]

    def launching(self) -> list[AttemptId]:
        """Attempts recorded before their launch reported a job (launch failed or in progress)."""
        return [i for i, stage in self._stages.items() if stage is AttemptStage.LAUNCHING]

    # --- decisions, watermarks, the ledger delta ------------------------------------------

    def add_decision(self, record: DecisionRecord) -> None:
        """Append a decision read."""
        self.decisions.append(record)
        self._new_decisions.append(record)

    def add_watermark(self, state: str, watermark: Watermark) -> None:
        """Record what a trigger saw when it fired."""
        self.watermarks[state] = watermark
        self._new_watermarks[state] = watermark

    def has_changes(self) -> bool:
        """True when the ledger is behind."""
        return bool(self._changed or self._new_decisions or self._new_watermarks)

    def take_delta(self, status: LedgerStatus | None = None, error: str | None = None) -> LedgerDelta:
        """Return everything changed since the last delta, and forget it."""
        delta = LedgerDelta(
            status=status,
            error=error,
            waves=[self._attempts[i] for i in self._changed],
            decisions=list(self._new_decisions),
            watermarks=dict(self._new_watermarks),
            cancel_reason=self.cancel_reason,
        )
        self._changed.clear()
        self._new_decisions.clear()
        self._new_watermarks.clear()
        return delta

    # --- reports ---------------------------------------------------------------------------

    def view(self) -> RunStatusView:
        """The live status for the `status` query."""
        waves = [
            WaveView(
                key=r.key,
                attempt=r.attempt,
                states=r.states,
                job_id=r.job_id,
                job_name=r.job_name,
                status=r.status,
                sky_status=r.sky_status,
                error_category=r.error_category,
                worker_id=r.worker_id,
                worker_task_queue=r.worker_task_queue,
                started_at=r.started_at,
                ended_at=r.ended_at,
                gpu_hours=r.gpu_hours,
                node_hours=r.node_hours,
            )
            for r in self._attempts.values()
        ]
        return RunStatusView(
            run_id=self.run_id,
            workflow=self.workflow,
            phase=self.phase,
            backend=self.backend,
            current_states=self.current_states,
            waves=waves,
            decisions=self.decisions,
            ledger_uri=self.ledger_uri,
            error=self.error,
            cancel_reason=self.cancel_reason,
            usage=run_usage(list(self._attempts.values())),
        )

    def summary(self) -> RunSummary:
        """The final summary (reference §6.10)."""
        waves = list(self._attempts.values())
        steps = [_step_record(record, state) for record in waves for state in record.states]
        runtime_uri = ledger_file_uri(self.ledger_uri, RUNTIME_FILE) if self.ledger_uri else ""
        return RunSummary(
            workflow=self.workflow,
            run_id=self.run_id,
            status=self.phase.value,
            wave_count=len(waves),
            waves=waves,
            decisions=self.decisions,
            steps=steps,
            watermarks=self.watermarks,
            run_prefix_uri=self.ledger_uri,
            runtime_state_uri=runtime_uri,
            error=self.error,
            failure_class=self.failure_class,
            usage=run_usage(waves),
        )


def _changed(record: WaveAttemptRecord, changes: dict[str, Any]) -> WaveAttemptRecord:
    """Apply field changes with full validation (`model_copy(update=)` validates nothing)."""
    unknown = set(changes) - set(WaveAttemptRecord.model_fields)
    if unknown:
        raise TypeError(f"WaveAttemptRecord has no field(s) {sorted(unknown)}")
    return WaveAttemptRecord.model_validate({**dict(record), **changes}).with_hours()


def _step_record(record: WaveAttemptRecord, state: str) -> StepRecord:
    ok = record.status.value == "succeeded"
    return StepRecord(
        state=state,
        status="ok" if ok else record.status.value,
        job_id=record.job_id,
        job_name=record.job_name,
        sky_status=record.sky_status,
        wave_key=record.key,
        group=record.group,
        attempt=record.attempt,
        error=record.error,
    )
