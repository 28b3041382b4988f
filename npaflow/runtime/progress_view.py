"""What the Temporal UI's current details of a run show (npaflow/runtime/ui_text.py writes them).

Built from the run's running totals at each change: it costs the running attempts
and the newest states, never the run's length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from npaflow.presets import FROZEN
from npaflow.runtime.cache.tally import CacheTally
from npaflow.runtime.ledger import DecisionRecord
from npaflow.runtime.state_rows import StateRow, state_rows
from npaflow.runtime.summary import WaveView
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import RunPhase

if TYPE_CHECKING:
    from npaflow.runtime.run_state import RunState


class ProgressView(BaseModel):
    """What the Temporal UI's current details show, from the run's running totals."""

    model_config = FROZEN

    phase: RunPhase
    running: list[WaveView] = Field(default_factory=list)
    done: int = 0
    total: int = 0
    retried: int = 0
    last_decision: DecisionRecord | None = None
    usage: RunUsage = Field(default_factory=RunUsage)
    ledger_uri: str = ""
    ledger_behind: str = ""
    error: str = ""
    cache: CacheTally = Field(default_factory=CacheTally)
    quota_waits: list[str] = Field(default_factory=list)
    cache_waits: list[str] = Field(default_factory=list)  # waves waiting for another run's cache entry
    states: list[StateRow] = Field(default_factory=list)  # the newest states only
    earlier_states: int = 0  # states that ran before those
    page: str = ""  # the run's page in `npaflow ui`, when the workers name its address


def progress_view(state: RunState) -> ProgressView:
    """What the UI's current details show; costs the running attempts, not the run's length."""
    progress = state.progress
    rows = state_rows(progress)  # the table's newest states
    return ProgressView(
        phase=state.phase,
        running=[WaveView.of(r) for r in progress.running.values()],
        done=progress.done,
        total=progress.total,
        retried=progress.retried,
        last_decision=state.decisions[-1] if state.decisions else None,
        usage=progress.totals(),
        ledger_uri=state.ledger_uri,
        ledger_behind=state.ledger.failed_export,
        error=state.error,
        cache=state.progress.cache.model_copy(),
        quota_waits=state.quota.open_texts(),
        cache_waits=[wait.text() for wait in state.cache_waits.values()],
        states=rows,
        earlier_states=len(progress.latest) - len(rows),
        page=f"{state.page_url.rstrip('/')}/runs/{state.run_id}" if state.page_url else "",
    )
