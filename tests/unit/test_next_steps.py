"""After a failed run, `next:` says what to do: read the failed job's log, or report a bug."""

from __future__ import annotations

import pytest

from npaflow.cli.run_endings import next_steps
from npaflow.ids import RunId
from npaflow.runtime.contract import INTERNAL_ERROR_PREFIX
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.status import FailureClass
from npaflow.runtime.summary import RunSummary
from npaflow.runtime.usage import RunUsage
from npaflow.runtime.vocabulary import RunPhase, WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit


def summary(error: str, *waves: WaveAttemptRecord) -> RunSummary:
    return RunSummary(
        workflow="w",
        run_id=RunId("r-1"),
        status=RunPhase.FAILED,
        wave_count=len(waves),
        waves=list(waves),
        error=error,
    )


def wave(job_id: str) -> WaveAttemptRecord:
    key = WaveKey.parse("001||train")
    return WaveAttemptRecord(key=key, states=["train"], job_id=job_id, status=WaveStatus.FAILED)


def test_an_internal_error_is_called_a_bug_and_points_at_no_job_log() -> None:
    lines = next_steps(summary(f"{INTERNAL_ERROR_PREFIX}: AttributeError: boom", wave("")))
    text = "\n".join(lines)
    assert "a bug in npaflow's workflow code, not in your job" in text
    assert (
        "npaflow logs" not in text and "npaflow resume r-1" in text and "after a deploy with the fix" in text
    )


def test_a_failed_job_points_at_its_log_and_resume() -> None:
    text = "\n".join(next_steps(summary("wave 001 failed", wave("7"))))
    assert "next: npaflow logs r-1 --state train  (the failed job's log)" in text
    assert "npaflow resume r-1" in text


def test_a_failure_without_a_job_points_at_resume_only() -> None:
    text = "\n".join(next_steps(summary("launch refused", wave(""))))
    assert "npaflow logs" not in text and text.endswith(
        "next: npaflow resume r-1  (retries it; completed waves are not run again)"
    )


def test_a_spent_budget_points_at_resume_with_a_higher_one_not_at_the_cancelled_jobs_log() -> None:
    spent = summary("job 7 reached the run's GPU-hour budget", wave("7")).model_copy(
        update={"failure_class": FailureClass.BUDGET, "usage": RunUsage(gpu_hours=0.0053)}
    )
    text = "\n".join(next_steps(spent))
    assert "npaflow logs" not in text
    assert "next: npaflow resume r-1 --max-gpu-hours H  (H above the 0.0053 GPU-h spent;" in text
