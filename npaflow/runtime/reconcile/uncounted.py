"""The GPU- and node-hours a run that ended behind its code never counted in the metrics.

A run counts its hours by state in `npaflow_gpu_hours_total` once, when its code ends
it: everything its executions added since the last counted ending (a resume starts
a new chain of executions; a continue-as-new goes on with the same one). A terminated
or timed-out chain never gets there, so the reconciler, closing its ledger, counts for
it: each attempt's hours that the chain added, by the chain's start (`since`).
"""

from __future__ import annotations

from collections.abc import Iterable

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


def added_hours(before: Iterable[WaveAttemptRecord], after: Iterable[WaveAttemptRecord]) -> dict[str, Usage]:
    """Each state's hours `after` adds to the same attempts `before` (a job that ran on past its run).

    A run whose cleanup could not verify a cancel counted its job's hours up to that cancel;
    the sweep that cancels the job later clocks it up to then, and the metrics count the rest.
    """
    counted = {(wave.key, wave.attempt): wave for wave in before}
    hours: dict[str, Usage] = {}
    for wave in after:
        earlier = counted.get((wave.key, wave.attempt))
        if earlier is None:
            continue
        was = {state: (gpu, node) for state, gpu, node, _ in attempt_usage(earlier)}
        for state, gpu, node, failed in attempt_usage(wave):
            gpu_was, node_was = was.get(state, (0.0, 0.0))
            if gpu > gpu_was or node > node_was:
                more = max(0.0, gpu - gpu_was), max(0.0, node - node_was)
                hours.setdefault(state, Usage()).add(*more, failed=failed)
    return hours
