"""A running run's picture from its `status` query: the same drawing as its ledger's, but now.

The query answers what the run itself holds (every attempt, decisions, usage,
what it waits for), so the live page needs neither the bucket nor its credentials.
"""

from __future__ import annotations

import re

from npaflow.runtime.ledger.models import RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.summary import RunStatusView
from npaflow.waves import WaveKey

_WAVE = re.compile(r"\(wave ([^)]+)\)\s*$")


def ledger_of_view(view: RunStatusView, updated_at: str = "") -> RuntimeLedger:
    """The ledger as the picture reads it, from a `status` query's answer."""
    waves = [
        WaveAttemptRecord(
            key=wave.key,
            states=wave.states,
            attempt=wave.attempt,
            job_id=wave.job_id,
            job_name=wave.job_name,
            status=wave.status,
            sky_status=wave.sky_status,
            error_category=wave.error_category,
            started_at=wave.started_at,
            ended_at=wave.ended_at,
            gpu_hours=wave.gpu_hours,
            node_hours=wave.node_hours,
            cache=wave.cache,
            worker_id=wave.worker_id,
            worker_task_queue=wave.worker_task_queue,
            error=wave.error,
        )
        for wave in view.waves
    ]
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
    )


def waiting_states(view: RunStatusView) -> dict[str, str]:
    """What each waiting state waits for, from the run's quota waits (`... (wave KEY)`)."""
    waiting: dict[str, str] = {}
    for text in view.quota_waits:
        match = _WAVE.search(text)
        if match:
            try:
                states = WaveKey.parse(match.group(1)).states
            except ValueError:
                continue
            waiting.update(dict.fromkeys(states, text))
    return waiting
