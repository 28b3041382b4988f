"""How a run that ended behind its code is shown once the reconciler wrote its ledger.

A terminated or timed-out run never saw its last jobs end: its own answer (the
status query, replayed) counts them as running, up to whenever it is asked, so its
GPU-hours would grow forever. The reconcile workflow's result says what the ledger
recorded instead: each attempt it ended (as the job's own record or its cancel
says) and the run's hours. `npaflow status` and the run page show that.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from npaflow.runtime.ledger import RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.reconcile.models import EndedAttempt, LedgerAfter, ReconcileResult
from npaflow.runtime.summary import WaveView
from npaflow.runtime.usage import RunUsage

ShownWave = TypeVar("ShownWave", bound=WaveView)


def ledger_after(ledger: RuntimeLedger, changed: Iterable[WaveAttemptRecord]) -> LedgerAfter:
    """What the merged ledger says of the attempts the reconciler changed, and the run's hours."""
    stored = {(wave.key, wave.attempt): wave for wave in ledger.waves}
    records = [stored.get((change.key, change.attempt), change) for change in changed]
    fields = EndedAttempt.model_fields
    ended = [EndedAttempt(**{name: getattr(record, name) for name in fields}) for record in records]
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


def shown_usage(usage: RunUsage | None, result: ReconcileResult) -> RunUsage | None:
    """The run's hours as its ledger counts them once the reconciler wrote it (else `usage`)."""
    return result.ledger.usage if result.ledger is not None else usage
