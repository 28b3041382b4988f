"""The GPU- and node-hours a run that ended behind its code never counted in the metrics.

A run counts its hours by state in `npaflow_gpu_hours_total` once, when its code ends
it: everything its executions added since the last counted ending (a resume starts
a new chain of executions; a continue-as-new goes on with the same one). A terminated
or timed-out chain never gets there, so the reconciler, closing its ledger, counts for
it: each attempt's hours that the chain added, by the chain's start (`since`).
"""

from __future__ import annotations

from npaflow.runtime.ledger import RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.ledger.spend import attempt_usage
from npaflow.runtime.timestamps import epoch_seconds
from npaflow.runtime.usage import Usage


def uncounted_hours(ledger: RuntimeLedger, since: str) -> dict[str, Usage]:
    """Each state's hours of the attempts the chain started at `since` added ("": every attempt)."""
    start = epoch_seconds(since) if since else None
    hours: dict[str, Usage] = {}
    for wave in ledger.waves:
        share = 1.0 if start is None else _share_after(wave, start)
        if share <= 0.0:
            continue
        for state, gpu, node, failed in attempt_usage(wave):
            hours.setdefault(state, Usage()).add(gpu * share, node * share, failed=failed)
    return hours


def _share_after(wave: WaveAttemptRecord, start: float) -> float:
    """The part of an attempt's time after the chain's start: all of it, none, or (adopted) the rest.

    An attempt an earlier execution left running counted its hours up to that execution's
    end there; the chain counts what came after.
    """
    began, ended = epoch_seconds(wave.started_at), epoch_seconds(wave.ended_at)
    if began is None or began >= start:
        return 1.0
    if ended is None or ended <= start:
        return 0.0
    return (ended - start) / (ended - began)
