"""A run's result (reference §6.10): the final summary, bounded however wide or long the run was.

The ledger holds every record; the result is one Temporal payload, so it carries
the newest attempts, steps and decisions and the costliest states' hours within
npaflow/runtime/payload_limits.py's budgets, and says how many it left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from npaflow.fanout.models import SHOWN_FAN_OUTS, FanOutRecord
from npaflow.runtime.ledger_layout import RUNTIME_FILE, ledger_file_uri
from npaflow.runtime.payload_limits import (
    RESULT_DECISION_BYTES,
    RESULT_STATE_USAGE_BYTES,
    RESULT_STEP_BYTES,
    RESULT_WAVE_BYTES,
    TEMPORAL_PAYLOAD_WARNING,
    costliest_within,
    newest_within,
)
from npaflow.runtime.summary import MAX_SUMMARY_WAITS, RunSummary, StepRecord

if TYPE_CHECKING:
    from npaflow.runtime.run_state import RunState


def run_summary(state: RunState) -> RunSummary:
    """The final summary (reference §6.10), bounded: the newest attempts and decisions that fit.

    The ledger holds every record; the result (a Temporal payload) keeps under
    npaflow/runtime/payload_limits.py's budgets however wide or long the run was.
    """
    records = state.waves.records()
    waves, waves_omitted = newest_within(records, RESULT_WAVE_BYTES)
    decisions, decisions_omitted = newest_within(state.decisions, RESULT_DECISION_BYTES)
    every_step = [StepRecord.of(record, name) for record in waves for name in record.states]
    steps, _ = newest_within(every_step, RESULT_STEP_BYTES)
    usage = state.progress.usage()
    by_state = costliest_within(usage.by_state, RESULT_STATE_USAGE_BYTES, lambda part: part.node_hours)
    runtime_uri = ledger_file_uri(state.ledger_uri, RUNTIME_FILE) if state.ledger_uri else ""
    summary = RunSummary(
        workflow=state.workflow,
        run_id=state.run_id,
        status=state.phase,
        wave_count=len(records),
        waves=waves,
        waves_omitted=waves_omitted,
        decisions=decisions,
        decisions_omitted=decisions_omitted,
        steps=steps,
        watermarks=state.watermarks,
        run_prefix_uri=state.ledger_uri,
        runtime_state_uri=runtime_uri,
        error=state.error,
        failure_class=state.failure_class,
        usage=usage.model_copy(update={"by_state": by_state}),
        states_omitted=len(usage.by_state) - len(by_state),
        ledger_behind=state.ledger.failed_export,
        cache=state.progress.cache.model_copy(),
        quota_waits=state.quota.records()[-MAX_SUMMARY_WAITS:],
        fan_outs=shown_fan_outs(state.fan_outs),
    )
    return fitted_summary(summary)


def fitted_summary(summary: RunSummary, limit: int = TEMPORAL_PAYLOAD_WARNING) -> RunSummary:
    """Fail closed on size: a summary still past `limit` keeps its counts, not its records.

    A long error or many watermarks could still push it past; the ledger keeps the records,
    and the run completes instead of retrying its last workflow task forever.
    """
    if len(summary.model_dump_json()) <= limit:
        return summary
    return summary.model_copy(
        update={
            "waves": [],
            "waves_omitted": summary.wave_count,
            "steps": [],
            "decisions": [],
            "decisions_omitted": summary.decisions_omitted + len(summary.decisions),
            "error": summary.error[:4096],
        }
    )


def shown_fan_outs(records: dict[str, FanOutRecord]) -> list[FanOutRecord]:
    """The newest fan-out occurrences, each naming at most its first failures (the ledger has all)."""
    return [record.shown() for record in list(records.values())[-SHOWN_FAN_OUTS:]]
