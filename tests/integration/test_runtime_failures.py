"""Retries, timeouts, status errors and job-id trust (reference §11.2 cases 21–27, 38–43, 57–59)."""

from __future__ import annotations

import pytest

from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import CancellationState, WaveStatus
from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend

pytestmark = pytest.mark.integration


async def test_wave_retry_recovers_from_a_transient_failure(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["FAILED"]]
    outcome = await harness.run("runtime/fanout.yaml", retries=1)
    assert outcome.status == "succeeded"
    first = [w for w in outcome.summary.waves if w.key.sequence == 1]
    assert [(w.attempt, w.status.value) for w in first] == [(1, "failed"), (2, "succeeded")]
    assert [launch.env("NPA_WORKFLOW_FENCE_ATTEMPT") for launch in fake.launches[:2]] == ["1", "2"]
    assert fake.launches[0].env("NPA_WORKFLOW_ATTEMPT_ID") != fake.launches[1].env("NPA_WORKFLOW_ATTEMPT_ID")
    assert fake.launches[0].env("NPA_WORKFLOW_FENCE_SEQUENCE") == fake.launches[1].env(
        "NPA_WORKFLOW_FENCE_SEQUENCE"
    )
    assert fake.launches[1].job_name.endswith("-a2")


async def test_wave_retry_exhausted_fails_the_run(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["FAILED"], ["FAILED"]]
    outcome = await harness.run("runtime/fanout.yaml", retries=1)
    assert outcome.status == "failed"
    assert "FAILED" in outcome.error
    assert len(fake.launches) == 2


async def test_infrastructure_failures_spend_their_own_budget(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["FAILED_NO_RESOURCE"], ["FAILED_NO_RESOURCE"]]
    outcome = await harness.run("runtime/fanout.yaml", retries=0, max_infrastructure_recoveries=1)
    assert outcome.status == "failed"
    assert len(fake.launches) == 2
    assert outcome.summary.failure_class is FailureClass.CAPACITY


async def test_configuration_failures_never_retry(harness: Harness, fake: FakeBackend) -> None:
    fake.scripts = [["FAILED_PRECHECKS"]]
    outcome = await harness.run("runtime/fanout.yaml", retries=3, max_infrastructure_recoveries=3)
    assert outcome.status == "failed"
    assert len(fake.launches) == 1


async def test_timeout_cancels_the_managed_job(harness: Harness, fake: FakeBackend) -> None:
    fake.default = ["RUNNING"]
    outcome = await harness.run("runtime/fanout.yaml", max_wait_seconds=1)
    assert outcome.status == "failed"
    assert "did not reach a terminal status" in outcome.error
    assert fake.cancel_calls == ["1"]
    assert outcome.summary.waves[0].cancellation.state.value == "verified"


async def test_timeout_without_cancel_never_retries_a_preserved_job(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.default = ["RUNNING"]
    outcome = await harness.run("runtime/fanout.yaml", max_wait_seconds=1, retries=2, cancel_on_timeout=False)
    assert outcome.status == "failed"
    assert len(fake.launches) == 1
    assert fake.cancel_calls == []
    (wave,) = outcome.ledger.waves
    assert (wave.status, wave.sky_status, wave.cancellation.state) == (
        WaveStatus.RUNNING,
        JobStatus.RUNNING,
        CancellationState.NOT_APPLICABLE,
    )


async def test_zero_max_wait_is_unbounded(harness: Harness, fake: FakeBackend) -> None:
    fake.default = ["PENDING", "RUNNING", "RUNNING", "SUCCEEDED"]
    outcome = await harness.run("runtime/fanout.yaml", max_wait_seconds=0)
    assert outcome.status == "succeeded"


async def test_transient_status_errors_do_not_orphan_the_job(harness: Harness, fake: FakeBackend) -> None:
    fake.query_failures = 3
    outcome = await harness.run("runtime/fanout.yaml")
    assert outcome.status == "succeeded"
    assert fake.cancel_calls == []
    errors = outcome.summary.waves[0].status_errors
    assert len(errors) == 3
    assert "TimeoutError" in errors[0]


async def test_persistent_status_errors_cancel_the_job_and_fail_as_transport(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.query_failures = 10_000
    outcome = await harness.run(
        "runtime/fanout.yaml", max_infrastructure_recoveries=0, transport_recovery_seconds=0
    )
    assert outcome.status == "failed"
    assert "consecutive" in outcome.error
    assert fake.cancel_calls == ["1"]
    wave = outcome.summary.waves[0]
    assert wave.sky_status is JobStatus.SUBMITTED
    assert wave.error_category is FailureClass.TRANSPORT
    assert wave.cancellation.state is CancellationState.REQUESTED


async def test_status_errors_within_the_recovery_deadline_are_waited_out(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.query_failures = 8
    outcome = await harness.run("runtime/fanout.yaml", transport_recovery_seconds=60)
    assert outcome.status == "succeeded"
    assert fake.cancel_calls == []
    assert len(fake.launches) == 3


async def test_exact_cancellation_is_verified_without_masking_primary_error(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.default = ["RUNNING"]
    fake.query_failures = 6
    outcome = await harness.run(
        "runtime/fanout.yaml", transport_recovery_seconds=0, max_infrastructure_recoveries=0
    )
    wave = outcome.summary.waves[0]
    assert "consecutive" in wave.primary_error
    assert wave.cancellation.state is CancellationState.VERIFIED
    assert wave.sky_status is JobStatus.CANCELLED


async def test_successful_job_without_declared_output_fails_closed(
    harness: Harness, fake: FakeBackend, tmp_path
) -> None:
    outcome = await harness.run("runtime/single.yaml", vars={"root": str(tmp_path)})
    assert outcome.status == "failed"
    assert "completed without declared durable output" in outcome.error
    assert outcome.summary.waves[0].status.value == "failed"


async def test_a_resumed_run_shows_the_attempt_its_earlier_execution_failed_beside_the_new_one(
    harness: Harness, fake: FakeBackend
) -> None:
    fake.scripts = [["FAILED"]]
    first = await harness.run("runtime/fanout.yaml", run_id="rt-shown")
    assert first.status == "failed"
    resumed = await harness.run("runtime/fanout.yaml", run_id="rt-shown")
    assert resumed.status == "succeeded"
    shown = [w for w in resumed.summary.waves if w.key.sequence == 1]
    assert [(w.attempt, w.status.value, w.replayed) for w in shown] == [
        (1, "failed", True),
        (2, "succeeded", False),
    ]
    failed = next(w for w in first.ledger.waves if w.key.sequence == 1)
    assert (shown[0].error, shown[0].job_id, shown[0].tasks) == (failed.error, failed.job_id, failed.tasks)
    assert shown[0].tasks  # the page draws the bar from them, as report.html does
    kept = [w for w in resumed.ledger.waves if (w.key, w.attempt) == (failed.key, 1)]
    assert kept == [failed]  # the ledger keeps it as the first execution wrote it
