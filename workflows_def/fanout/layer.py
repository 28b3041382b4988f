"""`FanOutMembers`: the wave layer that says which members of a failed fan-out batch did not succeed.

A batch is one job (a JobGroup); its members end one by one. When the batch's
attempts are spent and it failed, this layer reads the last attempt's task rows
and names the members whose task did not succeed (or every member, when the
job never ran them), so the walk can weigh them against `minSuccess`.
"""

from __future__ import annotations

from temporalio import workflow

from npaflow.render.wave import sanitize_task_name
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.run_state import RunState
from npaflow.runtime.status import JobStatus
from npaflow.traversal import Wave, WaveOutcome
from workflows_def.patches import MEMBER_OUTPUTS
from workflows_def.run_deps import RunDeps
from workflows_def.wave_layers import Next, WaveCall


class FanOutMembers:
    """Names a failed fan-out batch's members that did not succeed."""

    def __init__(self, deps: RunDeps) -> None:
        self.state: RunState = deps.state

    async def around(self, call: WaveCall, next_: Next) -> WaveOutcome:
        """Pass the wave on; if a fan-out batch failed, name its members that did not succeed."""
        outcome = await next_(call)
        if outcome.succeeded or call.wave.fan_out is None:
            return outcome
        outputs = workflow.patched(MEMBER_OUTPUTS)
        failed = failed_members(call.wave, self._last(call.wave), outputs=outputs)
        return outcome.model_copy(update={"failed_items": failed})

    def _last(self, wave: Wave) -> WaveAttemptRecord | None:
        records = [record for record in self.state.waves.records() if record.key == wave.key]
        return max(records, key=lambda record: record.attempt) if records else None


def failed_members(wave: Wave, record: WaveAttemptRecord | None, *, outputs: bool = True) -> tuple[str, ...]:
    """The item keys of the wave's members that did not succeed (all, without task rows).

    A member succeeded when its task did and (`outputs`: runs since MEMBER_OUTPUTS)
    none of its declared outputs is among those the attempt left unconfirmed. A member
    the stage cache served stands as succeeded; tasks are matched by name
    (`<template>-<item key>`, each member's own).
    """
    served = {(step.state, step.item) for step in record.cache if step.hit} if record else set()
    launched = [step for step in wave.steps if (step.state, step.item) not in served]
    rows = {row.task_name: row.status for row in record.tasks} if record else {}
    if len(launched) == 1 and len(rows) == 1:  # a serial job's one task may carry the job's name
        rows = {sanitize_task_name(launched[0].task_name): next(iter(rows.values()))}
    unconfirmed = set(record.unconfirmed_outputs) if record and outputs else set()
    return tuple(
        step.item
        for step in launched
        if rows.get(sanitize_task_name(step.task_name)) is not JobStatus.SUCCEEDED
        or any(artifact.uri in unconfirmed for artifact in step.outputs)
    )
