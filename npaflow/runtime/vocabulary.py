"""Every status vocabulary of a run, and the tables that map one onto another.

Jobs' statuses and failure classes (SkyPilot's words) are in
npaflow/runtime/status.py; transitions between these states are in
npaflow/runtime/transitions.py; diagrams in docs/runtime-states.md.
"""

from __future__ import annotations

from enum import StrEnum


class RunPhase(StrEnum):
    """Where a run is; mirrored into the `NpaflowPhase` search attribute and memo."""

    STARTING = "starting"  # loading and validating the spec
    RUNNING = "running"  # walking the graph, waves launching or in flight
    PAUSED = "paused"  # no new launches; in-flight waves finish
    SUSPENDED = "suspended"  # a wave failed with on_failure=suspend; waiting for resume/cancel
    CANCELLING = "cancelling"  # cancelling in-flight jobs by exact id
    SUCCEEDED = "succeeded"  # the walk reached its end
    FAILED = "failed"  # a wave, decision, trigger or the ledger failed for good
    CANCELLED = "cancelled"  # cancelled; every in-flight job was cancelled first

    def is_final(self) -> bool:
        """True once the run has ended."""
        return self in (RunPhase.SUCCEEDED, RunPhase.FAILED, RunPhase.CANCELLED)

    def ledger_status(self) -> LedgerStatus:
        """The ledger's `status` for a run in this phase (the one phase -> ledger mapping)."""
        return _LEDGER_STATUS[self]


class LedgerStatus(StrEnum):
    """The run's status in `runtime.json` (the reference's running|succeeded|failed, plus two)."""

    RUNNING = "running"  # starting, running, paused, or cancelling its jobs
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"  # ours: the reference records a cancelled run as failed
    SUSPENDED = "suspended"  # ours: waiting for `resume` after a wave failed
    TERMINATED = "terminated"  # ours: terminated outside npaflow; its jobs were reconciled
    TIMED_OUT = "timed_out"  # ours: its execution timeout expired; its jobs were reconciled

    def manifest_status(self) -> str:
        """`manifest.json`/`status.json` `status` (the reference's planned|running|completed|failed)."""
        return _MANIFEST_STATUS[self]


_LEDGER_STATUS = {
    RunPhase.STARTING: LedgerStatus.RUNNING,
    RunPhase.RUNNING: LedgerStatus.RUNNING,
    RunPhase.PAUSED: LedgerStatus.RUNNING,
    RunPhase.CANCELLING: LedgerStatus.RUNNING,
    RunPhase.SUSPENDED: LedgerStatus.SUSPENDED,
    RunPhase.SUCCEEDED: LedgerStatus.SUCCEEDED,
    RunPhase.FAILED: LedgerStatus.FAILED,
    RunPhase.CANCELLED: LedgerStatus.CANCELLED,
}
_MANIFEST_STATUS = {
    LedgerStatus.RUNNING: "running",
    LedgerStatus.SUCCEEDED: "completed",
    LedgerStatus.FAILED: "failed",
    LedgerStatus.CANCELLED: "cancelled",
    LedgerStatus.SUSPENDED: "suspended",
    LedgerStatus.TERMINATED: "terminated",
    LedgerStatus.TIMED_OUT: "timed_out",
}


class RunEnding(StrEnum):
    """How a run's newest execution stands, as Temporal says; only open runs own their jobs."""

    OPEN = "open"  # running (or a new execution took over): it owns or adopts its jobs
    SUCCEEDED = "succeeded"  # completed: only jobs left running on purpose may remain
    FAILED = "failed"  # failed, maybe without its cleanup (a bug, a malformed input)
    CANCELLED = "cancelled"  # cancelled; its cleanup may not have verified every cancel
    TERMINATED = "terminated"  # terminated (the UI's Terminate button): no cleanup ran
    TIMED_OUT = "timed_out"  # its execution timeout expired: no cleanup ran
    GONE = "gone"  # Temporal has no such run (deleted, or past retention)

    def ledger_status(self) -> LedgerStatus:
        """The ledger status a run that ended this way gets, when its ledger still says running."""
        return _ENDING_STATUS[self]


_ENDING_STATUS = {
    RunEnding.OPEN: LedgerStatus.RUNNING,
    RunEnding.SUCCEEDED: LedgerStatus.SUCCEEDED,
    RunEnding.FAILED: LedgerStatus.FAILED,
    RunEnding.CANCELLED: LedgerStatus.CANCELLED,
    RunEnding.TERMINATED: LedgerStatus.TERMINATED,
    RunEnding.TIMED_OUT: LedgerStatus.TIMED_OUT,
    RunEnding.GONE: LedgerStatus.TERMINATED,
}


class WaveStatus(StrEnum):
    """A wave attempt's status in the ledger."""

    PENDING = "pending"  # planned, not launched
    RUNNING = "running"  # crossing the launch boundary or launched and not terminal
    SUCCEEDED = "succeeded"  # terminal success with every declared output present
    FAILED = "failed"  # terminal failure, timeout, missing outputs, or launch error
    CANCELLED = "cancelled"  # ours: the run was cancelled while this attempt was in flight

    def is_final(self) -> bool:
        """True once the attempt can no longer change."""
        return self in (WaveStatus.SUCCEEDED, WaveStatus.FAILED, WaveStatus.CANCELLED)

    def step_status(self) -> StepStatus:
        """The status of each member step of an attempt with this status."""
        return StepStatus.OK if self is WaveStatus.SUCCEEDED else StepStatus(self.value)


class AttemptStage(StrEnum):
    """Where one wave attempt is; finer than the ledger's `WaveStatus` it maps onto."""

    NEW = "new"  # not recorded by this execution yet
    LAUNCHING = "launching"  # recorded as running before crossing the launch boundary
    IN_FLIGHT = "in_flight"  # the exact job is known; every abort path cancels it
    KEPT = "kept"  # timed out with cancel_on_timeout off: left running on purpose
    SUCCEEDED = "succeeded"  # terminal success with every declared output present
    FAILED = "failed"  # failed; the budgets decide whether another attempt follows
    CANCELLED = "cancelled"  # the run was cancelled while the attempt was in flight

    def ledger_status(self) -> WaveStatus:
        """The `status` the ledger records for an attempt at this stage."""
        return _WAVE_STATUS[self]


_WAVE_STATUS = {
    AttemptStage.NEW: WaveStatus.PENDING,
    AttemptStage.LAUNCHING: WaveStatus.RUNNING,
    AttemptStage.IN_FLIGHT: WaveStatus.RUNNING,
    AttemptStage.KEPT: WaveStatus.RUNNING,
    AttemptStage.SUCCEEDED: WaveStatus.SUCCEEDED,
    AttemptStage.FAILED: WaveStatus.FAILED,
    AttemptStage.CANCELLED: WaveStatus.CANCELLED,
}


class StepStatus(StrEnum):
    """A member step's status in the summary and `manifest.json` steps (reference §6.9)."""

    OK = "ok"  # its wave attempt succeeded
    PENDING = "pending"
    RUNNING = "running"
    FAILED = "failed"
    CANCELLED = "cancelled"


class CancellationState(StrEnum):
    """How far cancelling a wave's job got."""

    NOT_APPLICABLE = "not_applicable"  # no job to cancel, or the job was kept on purpose
    REQUESTED = "requested"  # cancel accepted, terminal status not yet observed
    VERIFIED = "verified"  # the job was observed terminal (or absent from the queue)
    FAILED = "failed"  # the cancel call failed; the job may still run

    def unverified(self) -> bool:
        """A cancel was asked for and its job not seen to end: the job may still run."""
        return self in (CancellationState.REQUESTED, CancellationState.FAILED)


class DecisionSource(StrEnum):
    """Where a decision the walk took came from (the ledger's decision record `source`)."""

    ARTIFACT = "artifact"  # read from the state's decision artifact
    FALLBACK = "assume_decision_fallback"  # the artifact was missing; the explicit assumption stood in
    ASSUMED = "assume_decision"  # the state has no decision source; the explicit assumption decided
    MISSING = "missing"  # the artifact was missing and no assumption was given: the run fails
    ERROR = "error"  # the artifact could not be read: the run fails


class RecoveryDecision(StrEnum):
    """Why an attempt record is what it is after a launch or a resume (the reference's vocabulary)."""

    NONE = ""
    SUBMITTED_AND_RECONCILED = "submitted_and_reconciled"  # launched, exact job id resolved
    ADOPTED_IN_FLIGHT = "adopted_in_flight"  # ours: a resumed run polls an earlier execution's job
    # The reference's recovery decisions, read from its ledgers:
    BLOCK_INDETERMINATE = "block_indeterminate"
    BLOCK_AFTER_UNCERTAIN_SUCCESS = "block_after_uncertain_success"
    DEADLINE_EXHAUSTED_VERIFIED_ABSENT = "recovery_deadline_exhausted_verified_absent"
    INTERRUPTED_VERIFIED_ABSENT = "interrupted_verified_absent"
    BLOCK_TERMINAL_OR_LEGACY_ABSENCE = "resume_block_terminal_or_legacy_absence"
    BLOCK_OUTPUT_PRESENT = "resume_block_output_present"
    BLOCK_OUTPUT_INDETERMINATE = "resume_block_output_indeterminate"
    OPERATOR_AUTHORIZED_RELAUNCH = "operator_authorized_verified_absent_relaunch"
    ADOPTED_TERMINAL_SUCCESS = "adopted_terminal_success_after_driver_failure"


class HeartbeatPhase(StrEnum):
    """What a heartbeating activity was doing when it last reported (a retry resumes from it)."""

    NONE = ""
    LAUNCHING = "launching"  # a launch was about to be sent
    SUBMITTED = "submitted"  # the backend accepted a launch request; its job id not yet known
    LAUNCHED = "launched"  # the exact job id is known
    POLLING = "polling"  # awaiting a job
    CANCELLING = "cancelling"  # cancelling a job and verifying it
    WAITING = "waiting"  # a trigger waiting for objects

    def may_have_launched(self) -> bool:
        """True when a launch may have reached the backend: recover it, never resubmit blindly."""
        return self in (HeartbeatPhase.LAUNCHING, HeartbeatPhase.SUBMITTED)
