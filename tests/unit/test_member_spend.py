"""A failed fan-out batch's hours: a member that succeeded beside failing ones did not spend on a failure."""

from __future__ import annotations

import pytest

from npaflow.runtime.ledger import CarriedMember, TaskRow, WaveAttemptRecord, attempt_usage
from npaflow.runtime.ledger.projection import manifest_steps
from npaflow.runtime.ledger.records import PlannedStep
from npaflow.runtime.status import JobStatus
from npaflow.runtime.usage import TaskShape
from npaflow.runtime.vocabulary import StepStatus, WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit

A, B = "0000000000aa", "0000000000bb"


def batch(*, statuses: tuple[JobStatus, JobStatus], unconfirmed: tuple[str, ...] = ()) -> WaveAttemptRecord:
    """Two members, each an hour on one GPU; the batch failed."""
    rows = [
        TaskRow(
            job_id="j1",
            task_id=index,
            task_name=f"shard-{item}",
            status=status,
            start_at="2026-12-01T10:00:00Z",
            end_at="2026-12-01T11:00:00Z",
        )
        for index, (item, status) in enumerate(zip((A, B), statuses, strict=True))
    ]
    return WaveAttemptRecord(
        key=WaveKey.parse(f"002|g|g:shard@{A}:-,g:shard@{B}:-"),
        states=["shard", "shard"],
        items=["a", "b"],
        status=WaveStatus.FAILED,
        job_id="j1",
        ended_at="2026-12-01T11:00:00Z",
        tasks=rows,
        task_shapes=[
            TaskShape(task_name=f"shard-{item}", state="shard", accelerator="H100", accelerators_per_node=1)
            for item in (A, B)
        ],
        planned=[PlannedStep(state="shard", outputs=[{"uri": f"file:///o/{item}"}]) for item in (A, B)],
        unconfirmed_outputs=list(unconfirmed),
    )


def failed_hours(record: WaveAttemptRecord) -> float:
    return sum(gpu for _, gpu, _, failed in attempt_usage(record) if failed)


def test_only_the_failed_members_hours_count_as_spent_on_a_failure() -> None:
    record = batch(statuses=(JobStatus.SUCCEEDED, JobStatus.FAILED))
    assert sum(gpu for _, gpu, _, _ in attempt_usage(record)) == pytest.approx(2.0)
    assert failed_hours(record) == pytest.approx(1.0)


def test_a_member_whose_output_went_unconfirmed_spent_its_hours_on_a_failure() -> None:
    record = batch(statuses=(JobStatus.SUCCEEDED, JobStatus.FAILED), unconfirmed=("file:///o/0000000000aa",))
    assert failed_hours(record) == pytest.approx(2.0)


def test_the_manifest_marks_each_member_of_a_failed_batch_by_how_it_ended() -> None:
    record = batch(statuses=(JobStatus.SUCCEEDED, JobStatus.FAILED))
    assert [step.status for step in manifest_steps(record)] == [StepStatus.OK, StepStatus.FAILED]


def test_a_carried_member_is_ok_in_the_manifest_under_the_job_that_ran_it() -> None:
    retry = batch(statuses=(JobStatus.FAILED, JobStatus.FAILED)).model_copy(
        update={"attempt": 2, "job_id": "j2", "carried": [CarriedMember(item=A, attempt=1, job_id="j1")]}
    )
    steps = manifest_steps(retry)
    assert [(s.status, s.job_id, s.attempt) for s in steps] == [
        (StepStatus.OK, "j1", 1),
        (StepStatus.FAILED, "j2", 2),
    ]
