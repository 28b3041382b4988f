"""How `schedule describe` and `schedule list` show a schedule: when, overlap, runs, problems."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TypeGuard

from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.client import (
    ScheduleActionExecution,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleDescription,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    ScheduleSpec,
)

from npaflow.cli.options import Overlap
from npaflow.document.problems import validation_problems
from npaflow.runtime.contract import WORKFLOW_TYPE
from npaflow.runtime.request import RunRequest
from npaflow.temporal.data_converter import DATA_CONVERTER

OVERLAP = {
    Overlap.SKIP: ScheduleOverlapPolicy.SKIP,
    Overlap.BUFFER_ONE: ScheduleOverlapPolicy.BUFFER_ONE,
    Overlap.ALLOW_ALL: ScheduleOverlapPolicy.ALLOW_ALL,
}


def stamp(moment: datetime) -> str:
    """A schedule time as the CLI shows them: UTC, to the second."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def every_text(interval: ScheduleIntervalSpec) -> str:
    """`every 24h`, `every 90m`: an interval as `schedule create --every` takes it."""
    seconds = int(interval.every.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"every {seconds // size}{unit}"
    return f"every {seconds}s"


def _run_ids(actions: Sequence[ScheduleActionExecution]) -> list[str]:
    return [a.workflow_id for a in actions if isinstance(a, ScheduleActionExecutionStartWorkflow)]


def when_text(memo: Mapping[str, Any], spec: ScheduleSpec) -> list[str]:
    """As created (`cron 0 3 * * *`, `every 24h`): the server keeps crons as calendars."""
    if memo.get("when"):
        return [str(memo["when"])]
    return [f"cron {c}" for c in spec.cron_expressions] + [every_text(i) for i in spec.intervals]


def _starts_runs(action: object) -> TypeGuard[ScheduleActionStartWorkflow]:
    """Whether the schedule starts npaflow runs (else it is another tool's)."""
    return isinstance(action, ScheduleActionStartWorkflow) and action.workflow == WORKFLOW_TYPE


def _started(action: object) -> str:
    return str(getattr(action, "workflow", type(action).__name__))


def _input_problem(action: object) -> str:
    """Why every run the schedule starts will be refused at once ("" when its input reads)."""
    if not _starts_runs(action):
        return f"it starts {_started(action)}, not npaflow runs ({WORKFLOW_TYPE})"
    payloads = [a for a in action.args if isinstance(a, Payload)]
    if len(payloads) != 1:
        return f"it passes {len(action.args)} inputs; an npaflow run takes one RunRequest"
    try:
        DATA_CONVERTER.payload_converter.from_payloads(payloads, [RunRequest])
    except ValidationError as exc:
        return (
            f"every run it starts is refused, its input is an invalid RunRequest: "
            f"{validation_problems(exc)} (hint: recreate it with 'npaflow schedule create')"
        )
    return ""


async def schedule_summary(name: str, description: ScheduleDescription) -> dict[str, Any]:
    """What `schedule describe` prints: when, overlap, pause, next and recent runs, problems."""
    schedule, info = description.schedule, description.info
    when = when_text(await description.memo(), schedule.spec)
    overlap = {v: k for k, v in OVERLAP.items()}.get(schedule.policy.overlap, str(schedule.policy.overlap))
    return {
        "name": name,
        "when": when,
        "overlap": overlap,
        "paused": schedule.state.paused,
        "note": schedule.state.note or "",
        "next_runs": [stamp(t) for t in info.next_action_times[:3]],
        "recent_runs": _run_ids([a.action for a in info.recent_actions[-5:]]),
        "running": _run_ids(info.running_actions),
        "skipped_for_overlap": info.num_actions_skipped_overlap,
        "actions": info.num_actions,
        "problem": _input_problem(schedule.action),
    }
