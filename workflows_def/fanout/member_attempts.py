"""Which members of a fan-out batch each attempt ran to success, and what a retry still launches.

Members are independent: a member whose task succeeded with its declared outputs
confirmed is done, whichever attempt ran it. A retry of the batch launches only
the members not done (as Argo retries a pod, or a Flyte map task a subtask);
the attempt records the others as `carried`, each with the attempt and job that
ran it, so the manifest and the stage cache name the job that made its outputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from temporalio import workflow

from npaflow.runtime.ledger import CarriedMember, WaveAttemptRecord
from npaflow.runtime.run_state import RunState
from npaflow.traversal import Wave
from workflows_def.patches import MEMBER_RETRIES


def this_execution(state: RunState, wave: Wave) -> list[WaveAttemptRecord]:
    """The batch's attempts this execution made (or adopted), oldest first; recalled ones stay out."""
    records = [r for r in state.waves.records() if r.key == wave.key and not r.replayed]
    return sorted(records, key=lambda record: record.attempt)


def failed_members(
    wave: Wave, records: Sequence[WaveAttemptRecord], *, outputs: bool = True
) -> tuple[str, ...]:
    """The item keys of the wave's members no attempt ran to success (all, without records).

    Runs since MEMBER_OUTPUTS (`outputs`) weigh every attempt of the batch; older
    runs weigh its last attempt alone, as they were recorded.
    """
    weighed = records if outputs else records[-1:]
    done = set().union(*(record.members_done(outputs=outputs) for record in weighed))
    return tuple(step.item for step in wave.steps if step.item not in done)


def carried_members(launches: Wave, earlier: Sequence[WaveAttemptRecord]) -> list[CarriedMember]:
    """The members of `launches` an earlier attempt of the batch ran to success (first one wins)."""
    carried: dict[str, CarriedMember] = {}
    for record in sorted(earlier, key=lambda record: record.attempt):
        for item in record.members_ran():
            job = {"job_id": record.job_id, "job_name": record.job_name}
            carried.setdefault(item, CarriedMember(item=item, attempt=record.attempt, **job))
    return [carried[step.item] for step in launches.steps if step.item in carried]


def retry_launches(launches: Wave, earlier: Sequence[WaveAttemptRecord]) -> tuple[Wave, list[CarriedMember]]:
    """What a retry of a fan-out batch launches: the members not done yet, and those it carries.

    Everything when nothing is done (or everything is: the batch then runs whole
    again rather than launch an empty job); older runs (before MEMBER_RETRIES) too.
    """
    carried = carried_members(launches, earlier)
    if not carried or len(carried) == len(launches.steps) or not workflow.patched(MEMBER_RETRIES):
        return launches, []
    done = {member.item for member in carried}
    steps = tuple(step for step in launches.steps if step.item not in done)
    return launches.model_copy(update={"steps": steps}), carried
