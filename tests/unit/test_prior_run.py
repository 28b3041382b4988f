"""What a run's load carries of its earlier executions (activities/runs.py `_prior`)."""

from __future__ import annotations

import pytest

from activities.runs import _prior
from npaflow.runtime.ledger import (
    CachedStep,
    CarriedMember,
    DecisionRecord,
    Observation,
    RuntimeLedger,
    TaskRow,
    WaveAttemptRecord,
)
from npaflow.runtime.quota_waits import QuotaWait
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import WaveView
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit
AT = "2026-12-07T08:00:00Z"


def record(sequence: int, status: WaveStatus, attempt: int = 1) -> WaveAttemptRecord:
    return WaveAttemptRecord(
        key=WaveKey.parse(f"{sequence:03d}|serial|:s{sequence}:-"),
        status=status,
        attempt=attempt,
        job_id=f"j{sequence}-{attempt}",
        error="exit 1" if status is WaveStatus.FAILED else "",
        tasks=[TaskRow(job_id=f"j{sequence}-{attempt}", status=JobStatus.FAILED, start_at=AT)],
        observations=[Observation(observed_at=AT, scheduler_state=JobStatus.RUNNING)],
    )


def ledger(*waves: WaveAttemptRecord, waits: tuple[QuotaWait, ...] = ()) -> RuntimeLedger:
    decision = DecisionRecord(state="gate", uri="file:///d.json", decision="promote_checkpoint", read_at=AT)
    return RuntimeLedger(
        workflow="w",
        run_id="r1",
        api_version="npa.workflow/v0.0.1",
        waves=list(waves),
        decisions=[decision],
        quota_waits=list(waits),
    )


def test_an_attempt_that_ended_without_success_travels_whole_but_for_its_observations() -> None:
    prior = _prior(ledger(record(1, WaveStatus.FAILED)))
    (ended,) = prior.ended
    assert (ended.error, ended.tasks[0].start_at, ended.observations) == ("exit 1", AT, [])
    assert prior.finished == [] and prior.waves == []


def test_only_the_newest_attempt_of_a_wave_travels_and_a_success_as_a_summary() -> None:
    prior = _prior(ledger(record(1, WaveStatus.FAILED), record(1, WaveStatus.SUCCEEDED, attempt=2)))
    assert prior.ended == [] and [(f.key.sequence, f.attempt) for f in prior.finished] == [(1, 2)]
    assert [wave.attempt for wave in prior.latest()] == [2]


def test_a_success_travels_with_what_the_run_shows_of_it_items_worker_cache_and_carried_members() -> None:
    hit = CachedStep(state="s1", key="sha256:k", hit=True, source_run="r0", source_job="j0")
    carried = CarriedMember(item="a", attempt=1, job_id="j1-1", job_name="r1-01")
    success = record(1, WaveStatus.SUCCEEDED, attempt=2).model_copy(
        update={
            "items": ["a", "b"],
            "worker_id": "w1",
            "worker_task_queue": "npaflow@w1",
            "cache": [hit],
            "carried": [carried],
        }
    )
    (shown,) = _prior(ledger(success)).latest()
    assert WaveView.of(shown) == WaveView.of(success).model_copy(update={"tasks": []})


def test_an_attempt_in_flight_travels_whole_for_the_run_to_adopt() -> None:
    prior = _prior(ledger(record(1, WaveStatus.RUNNING)))
    assert [wave.observations != [] for wave in prior.waves] == [True]


def test_ended_quota_waits_and_every_decision_travel_an_open_wait_stays_in_the_ledger() -> None:
    ended = QuotaWait(id="a@1", pool="p", wave="001|serial|:s1:-", queued_at=AT, granted_at=AT, seconds=2)
    stale = QuotaWait(id="b@1", pool="p", wave="002|serial|:s2:-", queued_at=AT)
    prior = _prior(ledger(waits=(ended, stale)))
    assert prior.quota_waits == [ended]
    assert [d.decision for d in prior.decisions] == ["promote_checkpoint"]
