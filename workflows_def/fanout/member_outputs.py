"""A fan-out batch's members succeed with their outputs: which outputs a failed batch left unconfirmed.

A batch is one job; when the job fails, no declared output was checked, yet the
members whose task succeeded would count as succeeded (and be skipped by a
resume). One check of the batch's declared outputs settles them: a member whose
output is not there failed after all. A store that cannot be read confirms
nothing (fail closed: such members run again, never count as done).
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import workflow

from npaflow.runtime.ledger import TaskRow, WaveAttemptRecord
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import JobStatus
from workflows_def.patches import MEMBER_OUTPUTS
from workflows_def.run.outputs import OutputsUnreadableError, missing_outputs


async def unconfirmed_member_outputs(
    request: RunRequest, record: WaveAttemptRecord, tasks: Sequence[TaskRow]
) -> list[str]:
    """The declared outputs of a failed fan-out batch not found, when some member's task succeeded."""
    ran = any(task.status is JobStatus.SUCCEEDED for task in tasks)
    if not (record.items and record.outputs and ran) or not workflow.patched(MEMBER_OUTPUTS):
        return []
    uris = [artifact.uri for artifact in record.outputs]
    try:
        return await missing_outputs(request, record.key, uris)
    except OutputsUnreadableError:
        return uris
