"""Pure runtime pieces: statuses, the request, ledger merging and projections."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from npaflow.document.problems import refusal_text
from npaflow.runtime.ledger import LedgerDelta, RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.ledger.document import LedgerDocument
from npaflow.runtime.ledger.projection import normalize_stage_state
from npaflow.runtime.request import RunRequest
from npaflow.runtime.status import FailureClass, JobStatus, RetryBudget, aggregate_job_status
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit
S = JobStatus


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ([S.SUCCEEDED, S.FAILED, S.CANCELLED], S.FAILED),
        ([S.CANCELLED, S.FAILED_SETUP], S.CANCELLED),
        ([S.SUCCEEDED, S.SUCCEEDED], S.SUCCEEDED),
        ([S.PENDING, S.RUNNING, S.SUCCEEDED], S.RUNNING),
        ([S.PENDING, S.STARTING], S.STARTING),
        ([], S.ABSENT),
    ],
)
def test_job_status_aggregates_task_rows_like_the_reference(
    tasks: list[JobStatus], expected: JobStatus
) -> None:
    assert aggregate_job_status(tasks) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("succeeded", S.SUCCEEDED),
        ("CANCELED", S.CANCELLED),
        ("FAILED_SOMETHING_NEW", S.FAILED),
        ("", S.UNKNOWN),
        ("weird", S.UNKNOWN),
    ],
)
def test_status_parsing_accepts_aliases(raw: str, expected: JobStatus) -> None:
    assert JobStatus.parse(raw) is expected


@pytest.mark.parametrize(
    ("status", "failure_class", "budget"),
    [
        (S.FAILED, FailureClass.PAYLOAD, RetryBudget.RETRIES),
        (S.FAILED_SETUP, FailureClass.SETUP, RetryBudget.RETRIES),
        (S.FAILED_NO_RESOURCE, FailureClass.CAPACITY, RetryBudget.INFRASTRUCTURE),
        (S.FAILED_CONTROLLER, FailureClass.CONTROLLER, RetryBudget.INFRASTRUCTURE),
        (S.FAILED_PRECHECKS, FailureClass.CONFIGURATION, RetryBudget.NONE),
        (S.CANCELLED, FailureClass.CANCELLED, RetryBudget.NONE),
    ],
)
def test_failure_classes_pick_the_retry_budget(
    status: JobStatus, failure_class: FailureClass, budget: RetryBudget
) -> None:
    assert status.failure_class() is failure_class
    assert failure_class.budget() is budget


def test_absent_and_unknown_are_never_terminal() -> None:
    assert not S.ABSENT.is_terminal() and not S.UNKNOWN.is_terminal()


def test_run_request_needs_exactly_one_spec_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        RunRequest()
    with pytest.raises(ValidationError, match="exactly one"):
        RunRequest(spec="x", spec_uri="file:///x")


@pytest.mark.parametrize(
    "uri", ["http://127.0.0.1/spec.yaml", "specs/x.yaml", "s3://bucket", "file://host/x"]
)
def test_a_spec_uri_no_worker_can_read_is_refused_naming_the_field_and_the_forms_it_takes(uri: str) -> None:
    with pytest.raises(ValidationError) as caught:
        RunRequest(spec_uri=uri)
    text = refusal_text(caught.value)
    assert text.startswith(f"invalid RunRequest: spec_uri: {uri!r} is not where a worker reads a spec")
    assert "s3://BUCKET/KEY, file:///ABSOLUTE/PATH or an absolute path" in text


@pytest.mark.parametrize("uri", ["s3://bucket/specs/x.yaml", "file:///srv/specs/x.yaml", "/srv/specs/x.yaml"])
def test_a_spec_uri_a_worker_reads_is_taken(uri: str) -> None:
    assert RunRequest(spec_uri=uri).spec_uri == uri


def test_a_handover_point_is_refused_on_a_request_that_did_not_continue_as_new() -> None:
    with pytest.raises(ValidationError, match="set by continue-as-new only"):
        RunRequest(spec="x", handed_over_at=3)
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        RunRequest(spec="x", continued=True, handed_over_at=-1)
    assert RunRequest(spec="x", continued=True, handed_over_at=3).handed_over_at == 3


def test_run_request_rejects_unknown_fields_and_bad_secret_names() -> None:
    with pytest.raises(ValidationError):
        RunRequest(spec="x", bogus=1)
    with pytest.raises(ValidationError, match="variable names"):
        RunRequest(spec="x", secret_env=["NOT-A-NAME"])


@pytest.mark.parametrize("run_id", ["abc\n", "bad id", "-dash-first", "a" * 97, "a/b"])
def test_a_run_id_the_run_would_refuse_is_refused_before_it_starts(run_id: str) -> None:
    with pytest.raises(ValidationError, match="1-96 letters, digits"):
        RunRequest(spec="x", run_id=run_id)


def test_a_schedules_run_id_with_its_timestamp_is_a_run_id() -> None:
    run_id = "nightly-2026-12-04T10:00:00Z"
    assert RunRequest(spec="x", run_id=run_id).run_id == run_id


def test_retry_backoff_doubles_and_is_capped() -> None:
    request = RunRequest(spec="x", retry_backoff_seconds=30)
    assert [request.backoff_seconds(n) for n in (1, 2, 3)] == [30, 60, 120]
    assert request.backoff_seconds(20) == 1800


def test_ledger_upserts_waves_by_key_and_attempt() -> None:
    document = LedgerDocument(RuntimeLedger(workflow="w", run_id="r", api_version="v"))
    document.apply(
        LedgerDelta(waves=[WaveAttemptRecord(key="001|serial|:a:-", status=WaveStatus.RUNNING)]),
        run_prefix_uri="file:///l",
        now="t1",
    )
    document.apply(
        LedgerDelta(
            waves=[
                WaveAttemptRecord(key="001|serial|:a:-", status=WaveStatus.FAILED),
                WaveAttemptRecord(key="001|serial|:a:-", attempt=2),
            ]
        ),
        run_prefix_uri="file:///l",
        now="t2",
    )
    ledger = document.ledger
    assert [(w.attempt, w.status.value) for w in ledger.waves] == [(1, "failed"), (2, "pending")]
    assert ledger.updated_at == "t2"
    assert ledger.latest_attempts()[WaveKey.parse("001|serial|:a:-")].attempt == 2


def test_stage_projection_keeps_attempts_and_group_attribution_separate() -> None:
    ledger = RuntimeLedger(
        workflow="w",
        run_id="r",
        api_version="v",
        waves=[
            WaveAttemptRecord(
                key="001|shards|shards:shard-a:-,shards:shard-b:-",
                job_id="201",
                group="shards",
                status=WaveStatus.FAILED,
            ),
            WaveAttemptRecord(
                key="001|shards|shards:shard-a:-,shards:shard-b:-",
                job_id="202",
                group="shards",
                attempt=2,
                status=WaveStatus.SUCCEEDED,
            ),
            WaveAttemptRecord(key="002|serial|:finalize:-", job_id="203", status=WaveStatus.SUCCEEDED),
        ],
    )
    stages = {(s.stage, s.attempt): s for s in LedgerDocument(ledger).ledger.stages}
    assert stages[("shard-a", 1)].managed_job_id == "201"
    assert stages[("shard-b", 1)].managed_job_id == "201"
    assert stages[("shard-a", 2)].managed_job_id == "202"
    assert stages[("shard-b", 2)].terminal_outcome == "succeeded"
    assert stages[("finalize", 1)].managed_job_id == "203"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ok", "SUCCEEDED"),
        ("aborted", "CANCELLED"),
        ("failed-setup", "FAILED_SETUP"),
        ("ERROR", "FAILED"),
        ("", "UNKNOWN"),
        ("RUNNING", "RUNNING"),
    ],
)
def test_stage_states_normalize_like_the_reference(raw: str, expected: str) -> None:
    assert normalize_stage_state(raw) == expected


@pytest.mark.parametrize(
    "field",
    [
        {"max_wait_seconds": 1e300},
        {"transport_recovery_seconds": 1e15},
        {"worker_lost_seconds": 1e15},
        {"pending_timeout_seconds": float("inf")},
        {"poll_seconds": 1e-9},
        {"poll_seconds": float("nan")},
        {"retries": 10**9},
        {"max_concurrency": 10**9},
    ],
    ids=lambda f: next(iter(f)),
)
def test_run_request_refuses_durations_and_counts_no_timer_can_hold(field: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        RunRequest(spec="x", **field)
