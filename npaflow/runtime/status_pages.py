"""The `status` query's answer, one bounded page at a time, and the whole view its pages make up.

A run's wave attempts grow with its width and length: 100 batches of 50 long
names, or 2,000 loop waves, answer past Temporal's 256 KiB warning (and a query
answer past 2 MiB fails outright). So one answer carries the newest wave
attempts within `STATUS_WAVE_BYTES` and says where they start; a reader asks
again with `before` set to that start for the older ones (`status_pages` reads
them all). Decisions, quota waits and per-state hours keep the newest (or
costliest) within their budgets and count the rest, which the ledger holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from npaflow.runtime.payload_limits import (
    TEMPORAL_PAYLOAD_WARNING,
    costliest_within,
    names_within,
    newest_within,
)
from npaflow.runtime.result import shown_fan_outs
from npaflow.runtime.summary import RunStatusView, WaveView
from npaflow.runtime.usage import RunUsage

if TYPE_CHECKING:
    from npaflow.runtime.ledger import WaveAttemptRecord
    from npaflow.runtime.run_state import RunState

#: What one answer spends on each part; with the fixed fields well under the warning.
STATUS_WAVE_BYTES = 112 * 1024
STATUS_TASK_ROW_BYTES = 64 * 1024  # of the waves' budget: the newest attempts' task rows
STATUS_DECISION_BYTES = 32 * 1024
STATUS_STATE_USAGE_BYTES = 32 * 1024
STATUS_QUOTA_WAIT_BYTES = 16 * 1024
STATUS_CURRENT_STATE_BYTES = 16 * 1024
#: The most a reader asks for one run's answer: pages of at least one wave each.
MAX_STATUS_PAGES = 10_000


def rows_within(views: list[WaveView], budget: int = STATUS_TASK_ROW_BYTES) -> list[WaveView]:
    """The views with their task rows while the rows fit `budget`, newest first; older ones bare."""
    kept: list[WaveView] = []
    spent = 0
    for view in reversed(views):
        size = sum(len(row.model_dump_json()) for row in view.tasks)
        if view.tasks and spent + size > budget:
            view = view.model_copy(update={"tasks": []})
        spent += size if view.tasks else 0
        kept.append(view)
    kept.reverse()
    return kept


def wave_page(records: list[WaveAttemptRecord], before: int = -1) -> tuple[list[WaveView], int]:
    """The newest attempts before index `before` (-1: the last) within a page, and where they start.

    The run's status query and a read of its ledger page alike, so their pages agree.
    """
    end = before if 0 <= before <= len(records) else len(records)
    views = [WaveView.of(record) for record in records[:end]]
    return newest_within(rows_within(views), STATUS_WAVE_BYTES)


def status_view(state: RunState, now: str = "", before: int = -1) -> RunStatusView:
    """One page of the live status: the wave attempts before index `before` (-1: the newest).

    Running attempts' spend is counted up to `now`.
    """
    records = state.waves.records()
    waves, start = wave_page(records, before)
    decisions, decisions_omitted = newest_within(state.decisions, STATUS_DECISION_BYTES)
    waits, waits_omitted = newest_within(state.quota.records(), STATUS_QUOTA_WAIT_BYTES)
    current = names_within(state.current_states, STATUS_CURRENT_STATE_BYTES)
    view = RunStatusView(
        run_id=state.run_id,
        workflow=state.workflow,
        phase=state.phase,
        pause_requested=state.pause_requested,
        backend=state.backend,
        current_states=current,
        current_states_omitted=len(state.current_states) - len(current),
        quota_waits=waits,
        quota_waits_omitted=waits_omitted,
        cache_waits=list(state.cache_waits.values()),
        fan_outs=shown_fan_outs(state.fan_outs),
        waves=waves,
        wave_count=len(records),
        waves_start=start,
        decisions=decisions,
        decisions_omitted=decisions_omitted,
        ledger_uri=state.ledger_uri,
        ledger_behind=state.ledger.failed_export,
        error=state.error,
        cancel_reason=state.cancel_reason,
    )
    return _with_usage(view, state.progress.usage(now))


def _with_usage(view: RunStatusView, usage: RunUsage) -> RunStatusView:
    """The view with the run's totals and its costliest states' hours within budget."""
    by_state = costliest_within(usage.by_state, STATUS_STATE_USAGE_BYTES, lambda item: item.gpu_hours)
    bounded = usage.model_copy(update={"by_state": by_state})
    view = view.model_copy(update={"usage": bounded, "states_omitted": len(usage.by_state) - len(by_state)})
    return fitted(view)


def fitted(view: RunStatusView, limit: int = TEMPORAL_PAYLOAD_WARNING) -> RunStatusView:
    """Fail closed on size: a view still past `limit` keeps fewer waves (its newest) until it fits."""
    while len(view.model_dump_json()) > limit and view.waves:
        dropped = max(1, len(view.waves) // 2)
        view = view.model_copy(
            update={"waves": view.waves[dropped:], "waves_start": view.waves_start + dropped}
        )
    return view


def merged_pages(pages: list[RunStatusView]) -> RunStatusView:
    """The whole view from its pages, newest page first: the first page's facts, every wave."""
    newest = pages[0]
    waves = [wave for page in reversed(pages) for wave in page.waves]
    return newest.model_copy(update={"waves": waves, "waves_start": pages[-1].waves_start})
