"""A running attempt's tasks' starts reach the page and the stream from its await's heartbeat."""

from __future__ import annotations

import pytest

from npaflow.cli.live_view import _merged
from npaflow.runtime.messages import HeartbeatDetails
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import WaveView
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit


def running(job: str = "7") -> WaveView:
    return WaveView(
        key=WaveKey.parse("001||train"), attempt=1, states=["train"], job_id=job, job_name="j",
        status=WaveStatus.RUNNING,
    )  # fmt: skip


def test_a_running_attempt_takes_its_tasks_starts_and_status_from_its_heartbeat() -> None:
    beat = HeartbeatDetails(
        job_id="7", polls=3, last_status=JobStatus.RUNNING, task_starts={"0": "2026-12-06T01:00:00Z"}
    )
    merged = _merged(running(), {"7": beat})
    assert merged.sky_status is JobStatus.RUNNING
    assert [(row.task_id, row.start_at) for row in merged.tasks] == [(0, "2026-12-06T01:00:00Z")]


def test_an_attempt_without_a_heartbeat_or_already_ended_is_left_as_the_run_says() -> None:
    assert _merged(running(), {}) == running()
    ended = running().model_copy(update={"status": WaveStatus.SUCCEEDED})
    beat = HeartbeatDetails(job_id="7", polls=1, task_starts={"0": "2026-12-06T01:00:00Z"})
    assert _merged(ended, {"7": beat}) == ended


def test_a_running_attempts_spend_moves_from_its_launch_to_its_tasks_own_start() -> None:
    from npaflow.cli.live_view import _recount
    from npaflow.runtime.usage import RunUsage, TaskShape

    shape = TaskShape(task_name="train", state="train", accelerator="H100", accelerators_per_node=2)
    launched = running().model_copy(update={"started_at": "2026-12-06T01:00:00Z", "task_shapes": [shape]})
    beat = HeartbeatDetails(job_id="7", polls=3, task_starts={"0": "2026-12-06T01:00:30Z"})
    started = _merged(launched, {"7": beat})
    usage = RunUsage(gpu_hours=2 * 60 / 3600, node_hours=60 / 3600)  # what the launch's clock said
    _recount(usage, launched, started, "2026-12-06T01:01:00Z")
    assert usage.gpu_hours == pytest.approx(2 * 30 / 3600)  # 2 GPUs since the task started, 30 s
