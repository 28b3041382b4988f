"""What the reconciler writes into a run's ledger, and which jobs a run's own cleanup kept.

Pure: the reconcile activities (activities/reconcile.py) read the stored ledger,
apply these, and write the result with the ledger's own merge.
"""

from __future__ import annotations

from npaflow.runtime.ledger import Cancellation, LedgerDelta, ReconciledJob, RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.reconcile.models import EndedJob, RecordReconciledInput
from npaflow.runtime.status import JobStatus
from npaflow.runtime.vocabulary import CancellationState, LedgerStatus, RunEnding, WaveStatus
from npaflow.waves import WaveKey

#: Ledger statuses of a run whose own code has not recorded its end.
_OPEN_STATUSES = (LedgerStatus.RUNNING, LedgerStatus.SUSPENDED)


def in_flight(ledger: RuntimeLedger) -> list[WaveAttemptRecord]:
    """The newest attempts that can still change: what a run closed without its code left open."""
    return [wave for wave in ledger.latest_attempts().values() if not wave.status.is_final()]


def cancelled_unverified(ledger: RuntimeLedger) -> list[WaveAttemptRecord]:
    """The newest attempts a run's cleanup cancelled without seeing their jobs end."""
    return [wave for wave in ledger.latest_attempts().values() if wave.cancel_unverified() and wave.job_id]


def unended_jobs(ledger: RuntimeLedger) -> list[str]:
    """What a run's ledger does not show as ended: jobs in flight, cancels not verified."""
    live = [wave.job_id or f"wave {wave.key} (its job is not known yet)" for wave in in_flight(ledger)]
    live += [wave.job_id for wave in cancelled_unverified(ledger)]
    live += [
        job.job_id
        for job in ledger.reconciled
        if job.cancellation.state is not CancellationState.VERIFIED
        and not (job.final_status and job.final_status.is_terminal())
    ]
    return live


def left_open(ledger: RuntimeLedger) -> bool:
    """True when the ledger still says the run runs, or holds an attempt in flight."""
    return ledger.status in _OPEN_STATUSES or bool(in_flight(ledger))


def kept_on_purpose(ledger: RuntimeLedger | None, job_id: str) -> bool:
    """A job the run's own cleanup left running on purpose (timed out with cancel_on_timeout off).

    Cleanup that ran leaves a final ledger status; the only attempt it leaves `running`
    is one kept on purpose. A ledger that still says running had no cleanup at all.
    """
    if ledger is None or ledger.status in (LedgerStatus.RUNNING, LedgerStatus.SUSPENDED):
        return False
    attempts = [w for w in ledger.waves if w.job_id == job_id]
    return bool(attempts) and attempts[-1].status is WaveStatus.RUNNING


def reconciled_delta(stored: RuntimeLedger, request: RecordReconciledInput, *, now: str) -> LedgerDelta:
    """The ledger change: each job's newest attempt cancelled with its cancellation, the run ended.

    An attempt the run's own cleanup cancelled without seeing its job end is clocked again
    up to the sweep's cancel: the job ran (and billed) until then.

    Closing (`request.close`), each attempt whose job ended on its own gets what the
    job's own record says, an attempt that never got a job is cancelled, and an attempt
    the run's cleanup cancelled unverified is clocked up to its job's own end.
    """
    waves: list[WaveAttemptRecord] = []
    for job in (j for j in request.jobs if not j.skipped):
        attempts = [w for w in stored.waves if w.job_id == job.job_id] or _unrecorded(
            job.wave_key, job.attempt, job.job_id, job.job_name
        )
        if not attempts or (attempts[-1].status.is_final() and not attempts[-1].cancel_unverified()):
            continue
        waves.append(_cancelled(attempts[-1], job, request.ending, now))
    if request.close:
        waves.extend(_closed(stored, request, now, done={w.job_id for w in waves}))
    running = stored.status in _OPEN_STATUSES
    ending = request.ending
    error = None
    if running and not stored.error:
        error = _ending_error(ending, cancelled=bool(request.jobs), launched=bool(stored.waves or waves))
    return LedgerDelta(
        status=ending.ledger_status() if running else None,
        error=error,
        waves=waves,
        reconciled=[job.model_copy(update={"at": job.at or now}) for job in request.jobs],
    )


def _unrecorded(wave_key: str, attempt: int, job_id: str, job_name: str) -> list[WaveAttemptRecord]:
    """The attempt of a job its run launched but never exported (from the job's owner record or receipt).

    A run ended right after a launch has no ledger record of it yet: rebuilt from the
    wave and attempt the job carries, so the ledger never loses a job it cancelled or saw end.
    """
    try:
        key = WaveKey.parse(wave_key)
    except ValueError:
        return []
    record = WaveAttemptRecord(key=key, states=key.states, attempt=attempt, job_id=job_id, job_name=job_name)
    return [record.model_copy(update={"status": WaveStatus.RUNNING})]


def _cancelled(
    record: WaveAttemptRecord, job: ReconciledJob, ending: RunEnding, now: str
) -> WaveAttemptRecord:
    error = f"the run ended ({ending.value}) without cancelling its job: cancelled by the reconciler"
    return record.model_copy(
        update={
            "status": WaveStatus.CANCELLED,
            "ended_at": now,
            "error": record.error or error,
            "cancellation": job.cancellation,
            "sky_status": job.final_status or record.sky_status,
        }
    ).with_hours()


def _closed(
    stored: RuntimeLedger, request: RecordReconciledInput, now: str, done: set[str]
) -> list[WaveAttemptRecord]:
    """The attempts a closed run left in flight, each as its job's own record says it ended."""
    ended = {job.job_id: job for job in request.ended}
    named = {record.job_id for record in stored.waves}
    closed: list[WaveAttemptRecord] = []
    for job in (job for job in request.ended if job.job_id not in named | done):  # from receipts
        closed += [
            _ended_alone(record, job, request.ending, now)
            for record in _unrecorded(job.wave_key, job.attempt, job.job_id, job.job_name)
        ]
    for record in in_flight(stored):
        if record.job_id and record.job_id in done:
            continue
        if record.job_id in ended:
            closed.append(_ended_alone(record, ended[record.job_id], request.ending, now))
        elif not record.job_id:
            error = f"the run ended ({request.ending.value}) before this attempt got a job"
            closed.append(
                record.model_copy(
                    update={"status": WaveStatus.CANCELLED, "ended_at": now, "error": record.error or error}
                )
            )
    for record in cancelled_unverified(stored):
        if record.job_id in ended and record.job_id not in done:
            closed.append(_ended_after_cancel(record, ended[record.job_id], now))
    return closed


def _ended_alone(record: WaveAttemptRecord, job: EndedJob, ending: RunEnding, now: str) -> WaveAttemptRecord:
    """An attempt whose job ended by itself after its run closed: the job's own status and times."""
    status = _WAVE_STATUS_OF_JOB.get(job.status, WaveStatus.FAILED)
    ran = f"the run ended ({ending.value}) while this job ran"
    note = f"{ran}; the job then ended {job.status.value} on its own"
    if job.status is JobStatus.ABSENT:
        note = f"{ran}; the backend no longer lists the job"
    elif status is WaveStatus.SUCCEEDED:
        note += " (its outputs were not checked: the run had ended)"
    update = {
        **_as_its_job_ended(job, now),
        "status": status,
        "error": record.error or (note if status is not WaveStatus.SUCCEEDED else ""),
        "reconciliation": [*record.reconciliation, note],
    }
    return record.model_copy(update=update).with_hours()


def _ended_after_cancel(record: WaveAttemptRecord, job: EndedJob, now: str) -> WaveAttemptRecord:
    """An attempt whose cancel the run did not see take, once its job ended: clocked to the job's end."""
    how = "no longer listed by the backend" if job.status is JobStatus.ABSENT else f"ended {job.status.value}"
    note = f"the run's cancel was not seen to take; the job then {how} (seen by the workers' ledger sweep)"
    update = {
        **_as_its_job_ended(job, now),
        "cancellation": Cancellation(state=CancellationState.VERIFIED),
        "reconciliation": [*record.reconciliation, note],
    }
    return record.model_copy(update=update).with_hours()


def _as_its_job_ended(job: EndedJob, now: str) -> dict[str, object]:
    """What an attempt takes from its ended job's own record: its end (else now), status and tasks."""
    ends = sorted(row.end_at for row in job.tasks if row.end_at)
    update: dict[str, object] = {"ended_at": ends[-1] if ends else now, "sky_status": job.status}
    if job.tasks:
        update["tasks"] = job.tasks
    return update


_WAVE_STATUS_OF_JOB = {
    JobStatus.SUCCEEDED: WaveStatus.SUCCEEDED,
    JobStatus.CANCELLED: WaveStatus.CANCELLED,
}


def how_it_ended(ending: RunEnding) -> str:
    """How a run ended without its code: the ledger's error and the run page say it alike."""
    return {
        RunEnding.TERMINATED: "the run was terminated outside npaflow (e.g. temporal workflow terminate)",
        RunEnding.TIMED_OUT: "the run's execution timeout expired",
        RunEnding.GONE: "Temporal no longer has this run",
    }.get(ending, f"the run ended {ending.value} without its cleanup")


def _ending_error(ending: RunEnding, *, cancelled: bool, launched: bool) -> str:
    """Why a run's ledger ended without its code, and what the reconciler did about its jobs."""
    how = how_it_ended(ending)
    if cancelled:
        return f"{how}; its in-flight jobs were cancelled by the reconciler"
    if not launched:
        return f"{how} before it launched any job; the reconciler wrote its ledger from its history"
    return f"{how}; the reconciler closed its ledger from its jobs' own records"
