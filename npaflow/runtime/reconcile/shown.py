"""How a run that ended behind its code is shown once the reconciler wrote its ledger.

A terminated or timed-out run never saw its last jobs end: its own answer (the
status query, replayed) counts them as running, up to whenever it is asked, so its
GPU-hours would grow forever. The reconcile workflow's result says what the ledger
recorded instead: each attempt it ended (as the job's own record or its cancel
says) and the run's hours. `npaflow status` and the run page show that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from npaflow.fanout.models import FanOutRecord
from npaflow.runtime.ledger import RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.reconcile.models import EndedAttempt, LedgerAfter, ReconcileResult
from npaflow.runtime.summary import WaveView
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import WaveStatus

ShownWave = TypeVar("ShownWave", bound=WaveView)


class RunView(Protocol):
    """What `status` and the run page show of a run: its attempts, hours and fan-outs."""

    @property
    def waves(self) -> Sequence[WaveView]:
        """Its wave attempts, oldest first."""

    @property
    def usage(self) -> RunUsage | None:
        """Its hours (None: not known, a memo's view)."""

    @property
    def fan_outs(self) -> Sequence[FanOutRecord]:
        """Its newest fan-out records."""


def shown_update(view: RunView, result: ReconcileResult) -> dict[str, Any]:
    """The view's attempts, hours and fan-outs as the reconciler left the run's ledger."""
    return {
        "waves": [shown_wave(wave, result) for wave in view.waves],
        "usage": shown_usage(view.usage, result),
        "fan_outs": [shown_fan_out(record, result) for record in view.fan_outs],
    }


def ledger_after(ledger: RuntimeLedger, changed: Iterable[WaveAttemptRecord]) -> LedgerAfter:
    """What the merged ledger says of the attempts the reconciler changed, and the run's hours."""
    stored = {(wave.key, wave.attempt): wave for wave in ledger.waves}
    records = [stored.get((change.key, change.attempt), change) for change in changed]
    fields = [name for name in EndedAttempt.model_fields if name != "members"]
    ended = [
        EndedAttempt(members=len(record.items), **{name: getattr(record, name) for name in fields})
        for record in records
    ]
    return LedgerAfter(usage=ledger.usage, ended=ended)


def shown_wave(wave: ShownWave, result: ReconcileResult) -> ShownWave:
    """The attempt as the ledger now has it, when the reconciler ended it (else as it was)."""
    if result.ledger is None:
        return wave
    ended = next((a for a in result.ledger.ended if (a.key, a.attempt) == (wave.key, wave.attempt)), None)
    if ended is None:
        return wave
    return wave.model_copy(
        update={
            "status": ended.status,
            "sky_status": ended.sky_status or wave.sky_status,
            "ended_at": ended.ended_at or wave.ended_at,
            "gpu_hours": ended.gpu_hours,
            "node_hours": ended.node_hours,
            "task_shapes": [],  # nothing of it runs on: no clock counts it further
        }
    )


def seen_ended(view: RunView, result: ReconcileResult) -> str:
    """The jobs the ledger sweep saw end after the run's own cancel of them was not seen to take."""
    cancelled = {job.job_id for job in result.jobs}
    ended = {(a.key, a.attempt): a for a in result.ledger.ended} if result.ledger else {}
    seen = [
        f"job {wave.job_id} ({wave.key}, attempt {wave.attempt}) ended {after.sky_status.value} "
        f"after the run's cancel was not seen to take; its hours count to {after.ended_at or 'then'}"
        for wave in view.waves
        if wave.job_id not in cancelled
        and (after := ended.get((wave.key, wave.attempt))) is not None
        and after.sky_status is not None
    ]
    return "; ".join(seen)


def shown_usage(usage: RunUsage | None, result: ReconcileResult) -> RunUsage | None:
    """The run's hours as its ledger counts them once the reconciler wrote it (else `usage`)."""
    return result.ledger.usage if result.ledger is not None else usage


def shown_fan_out(record: FanOutRecord, result: ReconcileResult) -> FanOutRecord:
    """A group the run ended inside, with the members of the batches that then ended on their own.

    The run counts a batch's members once its wave returns; a batch still in flight when
    the run was terminated was never counted, though its job may have succeeded after.
    """
    if record.ended or result.ledger is None:
        return record
    done = sum(
        attempt.members
        for attempt in result.ledger.ended
        if attempt.group == record.group and attempt.status is WaveStatus.SUCCEEDED
    )
    return (
        record.model_copy(update={"succeeded": min(record.count, record.succeeded + done)})
        if done
        else record
    )
