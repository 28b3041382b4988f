"""What the reconciler writes into a run's ledger, and which jobs a run's own cleanup kept.

Pure: the reconcile activities (activities/reconcile.py) read the stored ledger,
apply these, and write the result with the ledger's own merge.
"""

from __future__ import annotations

from npaflow.runtime.ledger import LedgerDelta, ReconciledJob, RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.reconcile.models import RecordReconciledInput
from npaflow.runtime.vocabulary import LedgerStatus, RunEnding, WaveStatus
from npaflow.waves import WaveKey


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
    """The ledger change: each job's newest attempt cancelled with its cancellation, the run ended."""
    waves: list[WaveAttemptRecord] = []
    for job in (j for j in request.jobs if not j.skipped):
        attempts = [w for w in stored.waves if w.job_id == job.job_id] or _unrecorded(job)
        if not attempts or attempts[-1].status.is_final():
            continue
        waves.append(_cancelled(attempts[-1], job, request.ending, now))
    running = stored.status in (LedgerStatus.RUNNING, LedgerStatus.SUSPENDED)
    ending = request.ending
    return LedgerDelta(
        status=ending.ledger_status() if running else None,
        error=_ending_error(ending) if running and not stored.error else None,
        waves=waves,
        reconciled=[job.model_copy(update={"at": job.at or now}) for job in request.jobs],
    )


def _unrecorded(job: ReconciledJob) -> list[WaveAttemptRecord]:
    """The attempt of a job its run launched but never exported, from the job's owner record.

    A run ended right after a launch has no ledger record of it yet: rebuilt from the
    wave and attempt the job carries, so the ledger never loses a job it cancelled.
    """
    try:
        key = WaveKey.parse(job.wave_key)
    except ValueError:
        return []
    record = WaveAttemptRecord(
        key=key, states=key.states, attempt=job.attempt, job_id=job.job_id, job_name=job.job_name
    )
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
    )


def _ending_error(ending: RunEnding) -> str:
    return {
        RunEnding.TERMINATED: "the run was terminated outside npaflow (e.g. temporal workflow terminate); "
        "its in-flight jobs were cancelled by the reconciler",
        RunEnding.TIMED_OUT: "the run's execution timeout expired; its in-flight jobs were cancelled "
        "by the reconciler",
        RunEnding.GONE: "Temporal no longer has this run; its in-flight jobs were cancelled "
        "by the reconciler",
    }.get(
        ending, f"the run ended {ending.value} without its cleanup; its jobs were cancelled by the reconciler"
    )
