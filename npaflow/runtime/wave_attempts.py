"""A run's wave attempts, each at its stage, moved only through the rows of `WaveTransition`.

Each method is one row, named after it (`launched` is `wave_launched`), but for
`recalled`, which shows an earlier execution's attempt and moves nothing; its
keyword arguments are the fields it sets (`AttemptChanges`, so a misspelt
field is a type error), the record is validated in full as a ledger record must
be, and the row's `Effect` is kept for the recorder. The run's running totals
and the ledger's pending changes follow every move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from npaflow.images import LaunchImage
from npaflow.runtime.attempt_changes import AttemptChanges
from npaflow.runtime.ledger import CachedStep, Cancellation, CarriedMember, TaskRow, WaveAttemptRecord
from npaflow.runtime.ledger.book import AttemptId, LedgerBook
from npaflow.runtime.ledger.new_attempt import launch_credentials, new_attempt
from npaflow.runtime.messages import AwaitResult, LaunchResult
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.transitions import Effect, TransitionError, WaveTransition
from npaflow.runtime.vocabulary import AttemptStage, RecoveryDecision, WaveStatus
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey

#: Status errors kept per attempt, so a long outage cannot grow history without bound.
MAX_STATUS_ERRORS = 20


class WaveAttempts:
    """Attempt records by (wave key, attempt) with their stages; the only writer of both."""

    def __init__(self, progress: RunProgress, ledger: LedgerBook) -> None:
        self._records: dict[AttemptId, WaveAttemptRecord] = {}
        self._stages: dict[AttemptId, AttemptStage] = {}
        self._progress, self._ledger = progress, ledger
        self.effect = Effect.NONE  # the rows' effects since the recorder last took them
        self.failure_class: FailureClass | None = None  # of the newest failure
        self.unverified: list[str] = []  # jobs this execution cancelled without seeing them end

    def _move(
        self,
        transition: WaveTransition,
        identity: AttemptId,
        base: WaveAttemptRecord | None = None,
        *,
        persist: bool = True,
        **changes: Unpack[AttemptChanges],
    ) -> WaveAttemptRecord:
        row = transition.value
        current = self.stage(*identity)
        if current not in row.sources:
            raise TransitionError(row, f"wave {identity[0]} attempt {identity[1]}", current)
        old = self._records.get(identity)
        start = base if base is not None else self._records[identity]
        fields = {**changes, "status": row.target.ledger_status()}
        if transition is WaveTransition.REPLAYED:  # the run's own ledger record, checked when read
            record = start.model_copy(update=fields)
        else:
            record = WaveAttemptRecord.model_validate({**dict(start), **fields})
        updated = record.with_hours()
        self._records[identity], self._stages[identity] = updated, row.target
        self._progress.record(identity, old, updated)
        if persist:
            self._ledger.wave_changed(identity)
        self.effect |= row.effect
        return updated

    # --- the rows ------------------------------------------------------------------------------

    def launching(
        self,
        wave: Wave,
        attempt: int,
        *,
        now: str,
        cache: list[CachedStep] | None = None,
        images: Sequence[LaunchImage] = (),
        launches: Wave | None = None,
        carried: list[CarriedMember] | None = None,
    ) -> WaveAttemptRecord:
        """Recorded as running before the launch boundary is crossed (its cache misses, what it carries)."""
        record = new_attempt(wave, attempt, now=now, images=images, launches=launches)
        changes = AttemptChanges(cache=cache or [])
        if carried:
            changes["carried"] = carried
        return self._move(WaveTransition.LAUNCHING, (wave.key, attempt), record, **changes)

    def served_from_cache(
        self,
        wave: Wave,
        attempt: int,
        *,
        now: str,
        cache: list[CachedStep],
        images: Sequence[LaunchImage] = (),
    ) -> WaveAttemptRecord:
        """Every step hit a verified entry whose outputs were copied to this run's: no job."""
        record = new_attempt(wave, attempt, now=now, images=images)
        return self._move(
            WaveTransition.SERVED_FROM_CACHE, (wave.key, attempt), record, cache=cache, ended_at=now
        )

    def cache_stored(self, key: WaveKey, attempt: int, cache: list[CachedStep]) -> WaveAttemptRecord:
        """Entries written for the cached steps of a success (or why one was not)."""
        return self._move(WaveTransition.CACHE_STORED, (key, attempt), cache=cache)

    def launched(self, key: WaveKey, attempt: int, launch: LaunchResult) -> WaveAttemptRecord:
        """The exact job, launched now or adopted by the launch."""
        job = launch.job
        return self._move(
            WaveTransition.LAUNCHED,
            (key, attempt),
            job_id=job.job_id,
            job_name=job.job_name,
            sky_status=JobStatus.SUBMITTED,
            logical_launch_id=launch.launch_token,
            launch_sequence=1,
            adopted=launch.adopted,
            reconciliation=launch.reconciliation,
            recovery_decision=RecoveryDecision.SUBMITTED_AND_RECONCILED,
            credentials=launch_credentials(launch.credential_names, launch.credential_fingerprint),
            request_id=launch.request_id,
            worker_id=job.worker_id,
            worker_task_queue=job.worker_task_queue,
        )

    def adopted(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """A job an earlier execution left in flight, or cancelled without seeing it end (resume).

        A cancelled one keeps its `cancellation` (what was asked) and runs again from here.
        """
        identity, adopted = (prior.key, prior.attempt), RecoveryDecision.ADOPTED_IN_FLIGHT
        base = prior.model_copy(update={"ended_at": "", "error": ""}) if prior.status.is_final() else prior
        return self._move(WaveTransition.ADOPTED, identity, base, adopted=True, recovery_decision=adopted)

    def observed(self, key: WaveKey, attempt: int, result: AwaitResult) -> WaveAttemptRecord:
        """Task rows, observations, the status and query errors polling saw."""
        record = self.attempt(key, attempt)
        changes = AttemptChanges(
            tasks=result.tasks or record.tasks,
            observations=result.observations,
            max_concurrent_observed=max(result.max_concurrent_observed, record.max_concurrent_observed),
            status_errors=[*record.status_errors, *result.status_errors][-MAX_STATUS_ERRORS:],
        )
        if result.status not in (JobStatus.UNKNOWN, JobStatus.ABSENT):
            changes["sky_status"] = result.status
        return self._move(WaveTransition.OBSERVED, (key, attempt), **changes)

    def left_running(self, key: WaveKey, attempt: int, *, error: str) -> WaveAttemptRecord:
        """Timed out with cancel_on_timeout off: kept for a later resume to adopt."""
        primary = self.attempt(key, attempt).primary_error or error
        return self._move(
            WaveTransition.LEFT_RUNNING, (key, attempt), ended_at="", error=error, primary_error=primary
        )

    def succeeded(
        self, key: WaveKey, attempt: int, *, now: str, cancellation: Cancellation | None = None
    ) -> WaveAttemptRecord:
        """Every declared output present (a cancel that came too late is noted)."""
        changes = AttemptChanges(ended_at=now)
        if cancellation is not None:
            changes["cancellation"] = cancellation
        return self._move(WaveTransition.SUCCEEDED, (key, attempt), **changes)

    def replayed(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """An earlier execution's success, reused (not sent to the ledger again)."""
        identity = (prior.key, prior.attempt)
        return self._move(WaveTransition.REPLAYED, identity, prior, persist=False, replayed=True)

    def recalled(self, prior: WaveAttemptRecord) -> WaveAttemptRecord:
        """An earlier execution's attempt that did not succeed, shown here (`replayed`).

        Never moved: its stage stays NEW, and the ledger, which has it, does not get it again.
        """
        identity, record = (prior.key, prior.attempt), prior.model_copy(update={"replayed": True})
        self._progress.record(identity, self._records.get(identity), record)
        self._records[identity] = record
        return record

    def failed(
        self,
        key: WaveKey,
        attempt: int,
        *,
        error: str,
        category: FailureClass,
        now: str,
        cancellation: Cancellation | None = None,
        final_status: JobStatus | None = None,
        tasks: list[TaskRow] | None = None,
        unconfirmed_outputs: list[str] | None = None,
    ) -> WaveAttemptRecord:
        """Its job, if any, was cancelled by id first; outputs it left unconfirmed are named."""
        ending = self._ending((key, attempt), error, now, cancellation, final_status, tasks)
        ending["error_category"] = category
        if unconfirmed_outputs:
            ending["unconfirmed_outputs"] = unconfirmed_outputs
        self.failure_class = category
        return self._move(WaveTransition.FAILED, (key, attempt), **ending)

    def cancelled(
        self,
        key: WaveKey,
        attempt: int,
        *,
        error: str,
        now: str,
        cancellation: Cancellation,
        final_status: JobStatus | None = None,
        tasks: list[TaskRow] | None = None,
    ) -> WaveAttemptRecord:
        """The run was cancelled while this attempt was in flight (a cancel not seen to end it says so)."""
        unverified = cancellation.unverified(job_id := self.attempt(key, attempt).job_id)
        if unverified:
            error = f"{error}; {unverified}"
            self.unverified.append(job_id)
        ending = self._ending((key, attempt), error, now, cancellation, final_status, tasks)
        return self._move(WaveTransition.CANCELLED, (key, attempt), **ending)

    def _ending(
        self,
        identity: AttemptId,
        error: str,
        now: str,
        cancellation: Cancellation | None,
        final_status: JobStatus | None,
        tasks: list[TaskRow] | None = None,
    ) -> AttemptChanges:
        primary = self.attempt(*identity).primary_error or error
        changes = AttemptChanges(ended_at=now, error=error, primary_error=primary)
        if tasks and not self.attempt(*identity).tasks:  # the cancel saw the job's own clock
            changes["tasks"] = tasks
        if cancellation is not None:
            changes["cancellation"] = cancellation
        if final_status is not None and final_status.is_terminal():
            changes["sky_status"] = final_status
        return changes

    # --- reads -----------------------------------------------------------------------------

    def stage(self, key: WaveKey, attempt: int) -> AttemptStage:
        """The stage of one attempt (NEW when this execution has not recorded it)."""
        return self._stages.get((key, attempt), AttemptStage.NEW)

    def attempt(self, key: WaveKey, attempt: int) -> WaveAttemptRecord:
        """The record of one attempt this execution knows."""
        return self._records[(key, attempt)]

    def records(self) -> list[WaveAttemptRecord]:
        """Every attempt in the order the run made them (by wave, then attempt).

        Recorded order, but for an earlier execution's attempts, recalled at the start
        (the sort is linear on what is nearly sorted already).
        """
        return sorted(self._records.values(), key=lambda record: (record.key.sequence, record.attempt))

    def by_id(self) -> dict[AttemptId, WaveAttemptRecord]:
        """Every attempt by its id (what a ledger delta picks from); read only."""
        return self._records

    def in_flight(self) -> list[WaveAttemptRecord]:
        """Attempts whose job every abort path must cancel by exact id (costs the running ones only)."""
        running = self._progress.running.items()
        return [r for i, r in running if self._stages[i] is AttemptStage.IN_FLIGHT]

    def pending_launch(self) -> list[AttemptId]:
        """Attempts recorded before their launch reported a job (launch failed or in progress)."""
        return [i for i in self._progress.running if self._stages[i] is AttemptStage.LAUNCHING]

    def last_failure(self) -> WaveAttemptRecord | None:
        """The newest failed attempt (what a failure notification names), if any."""
        failed = [r for r in self._records.values() if r.status is WaveStatus.FAILED]
        return failed[-1] if failed else None
