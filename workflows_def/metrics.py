"""Replay-safe recording for workflow code: a history being replayed records nothing.

Each value is recorded when the workflow first executes the code that produces
it; a worker that replays the history later (after a restart, for a query)
skips it, so counters never count a run, a wave or an hour twice.
"""

from __future__ import annotations

from temporalio import workflow

from npaflow.runtime.metrics import Metric, record


def count(metric: Metric, value: float = 1.0, **labels: str) -> None:
    """Record `value` unless this code is being replayed."""
    if workflow.unsafe.is_replaying():
        return
    record(metric, value, **labels)
