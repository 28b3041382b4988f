"""A running run's picture from its `status` query: the same drawing as its ledger's, but now.

The query answers what the run itself holds (every attempt, decisions, usage,
what it waits for), so the live page needs neither the bucket nor its credentials.
"""

from __future__ import annotations

from npaflow.document.models import WorkflowSpec
from npaflow.runtime.ledger.attempt import WaveAttemptRecord
from npaflow.runtime.ledger.models import RuntimeLedger
from npaflow.runtime.summary import RunStatusView
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey


def ledger_of_view(view: RunStatusView, updated_at: str = "") -> RuntimeLedger:
    """The ledger as the picture reads it, from a `status` query's answer."""
    waves = [WaveAttemptRecord(**dict(wave)) for wave in view.waves]  # a view is a record's subset
    return RuntimeLedger(
        workflow=view.workflow,
        run_id=view.run_id,
        api_version="",
        status=view.phase.ledger_status(),
        updated_at=updated_at,
        waves=waves,
        decisions=view.decisions,
        error=view.error,
        cancel_reason=view.cancel_reason,
        usage=view.usage,
        quota_waits=view.quota_waits,
        fan_outs={record.key: record for record in view.fan_outs},
    )


def waiting_states(view: RunStatusView, spec: WorkflowSpec | None = None) -> dict[str, str]:
    """What each waiting state waits for: its trigger, quota, or another run's cache entry.

    A trigger: a current state with one and no attempt running yet. Quota: the run's
    quota waits name their wave (`... (wave KEY)`).
    """
    running = {state for wave in view.waves if wave.status is WaveStatus.RUNNING for state in wave.states}
    waiting: dict[str, str] = {}
    declared = spec.states if spec is not None else {}
    for name in view.current_states:
        trigger = declared[name].trigger if name in declared else None
        if trigger is not None and name not in running:
            waiting[name] = f"waiting for its trigger: objects under {trigger.uri}"
    for wait in view.quota_waits:
        if not wait.is_open():
            continue
        try:
            states = WaveKey.parse(wait.wave).states
        except ValueError:
            continue
        waiting.update(dict.fromkeys(states, wait.text()))
    for cache_wait in view.cache_waits:
        waiting.update(dict.fromkeys(cache_wait.states, cache_wait.text()))
    return waiting
