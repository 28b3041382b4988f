"""A run that ended behind its code is shown as the reconciler left its ledger (reconcile/shown.py)."""

from __future__ import annotations

import pytest

from npaflow.runtime.ledger import RuntimeLedger, TaskRow, WaveAttemptRecord
from npaflow.runtime.ledger.document import LedgerDocument
from npaflow.runtime.ledger.projection import InputSource
from npaflow.runtime.reconcile import EndedJob, ReconcileResult, RecordReconciledInput
from npaflow.runtime.reconcile.ledger_change import reconciled_delta
from npaflow.runtime.reconcile.models import EndedAttempt, LedgerAfter
from npaflow.runtime.reconcile.shown import ledger_after, shown_fan_out, shown_usage, shown_wave
from npaflow.runtime.reconcile.uncounted import uncounted_hours
from npaflow.runtime.status import JobStatus
from npaflow.runtime.summary import WaveView
from npaflow.runtime.usage import RunUsage, TaskShape
from npaflow.runtime.vocabulary import RunEnding, WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit
KEY = WaveKey.parse("001|serial|:slow:-")
START, END = "2026-12-07T10:00:00Z", "2026-12-07T10:06:00Z"


def running_attempt() -> WaveAttemptRecord:
    row = TaskRow(job_id="w1-1", task_name="slow", status=JobStatus.RUNNING, start_at=START)
    shape = TaskShape(state="slow", task_name="slow", accelerator="A100", accelerators_per_node=2, nodes=1)
    return WaveAttemptRecord(
        key=KEY, states=["slow"], job_id="w1-1", status=WaveStatus.RUNNING, started_at=START,
        tasks=[row], task_shapes=[shape],
    )  # fmt: skip


def closed_ledger() -> tuple[RuntimeLedger, list[WaveAttemptRecord]]:
    """A terminated run's ledger closed from its job's own record (it ran six minutes, then ended)."""
    stored = RuntimeLedger(workflow="w", run_id="r1", api_version="v", waves=[running_attempt()])
    ended_row = TaskRow(
        job_id="w1-1", task_name="slow", status=JobStatus.SUCCEEDED, start_at=START, end_at=END
    )
    job = EndedJob(job_id="w1-1", status=JobStatus.SUCCEEDED, tasks=[ended_row])
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.TERMINATED, ended=[job], close=True
    )
    delta = reconciled_delta(stored, request, now="2026-12-07T11:00:00Z")
    document = LedgerDocument(stored, InputSource())
    document.apply(delta, run_prefix_uri="file:///l", now="2026-12-07T11:00:00Z")
    return document.ledger, delta.waves


def test_what_the_ledger_says_after_a_close_is_each_attempt_as_its_job_ended_and_the_runs_hours() -> None:
    ledger, changed = closed_ledger()
    after = ledger_after(ledger, changed)
    (attempt,) = after.ended
    assert (attempt.status, attempt.sky_status, attempt.ended_at) == (
        WaveStatus.SUCCEEDED,
        JobStatus.SUCCEEDED,
        END,
    )
    assert attempt.gpu_hours == pytest.approx(0.2)  # two GPUs for six minutes, not until now
    assert after.usage.gpu_hours == pytest.approx(0.2) and after.usage == ledger.usage


def test_a_running_attempt_is_shown_as_the_ledger_ended_it_and_nothing_counts_it_further() -> None:
    ledger, changed = closed_ledger()
    result = ReconcileResult(run_id="r1", ledger=ledger_after(ledger, changed))
    shown = shown_wave(WaveView.of(running_attempt()), result)
    assert (shown.status, shown.ended_at, shown.task_shapes) == (WaveStatus.SUCCEEDED, END, [])
    assert shown.gpu_hours == pytest.approx(0.2)
    assert shown_usage(RunUsage(gpu_hours=9.0), result) == ledger.usage


def test_before_the_reconciler_wrote_the_ledger_the_runs_own_answer_stands() -> None:
    nothing = ReconcileResult(run_id="r1")
    wave = WaveView.of(running_attempt())
    assert shown_wave(wave, nothing) == wave
    assert shown_usage(RunUsage(gpu_hours=9.0), nothing) == RunUsage(gpu_hours=9.0)


def test_a_later_write_updates_the_hours_and_its_attempts_over_the_earlier_ones() -> None:
    first = EndedAttempt(key=KEY, attempt=1, status=WaveStatus.CANCELLED, gpu_hours=1.0)
    other = EndedAttempt(key=WaveKey.parse("002|serial|:b:-"), attempt=1, status=WaveStatus.FAILED)
    earlier = LedgerAfter(usage=RunUsage(gpu_hours=1.0), ended=[first, other])
    later = LedgerAfter(usage=RunUsage(gpu_hours=2.0), ended=[first.model_copy(update={"gpu_hours": 2.0})])
    merged = earlier.then(later)
    assert merged.usage.gpu_hours == 2.0
    assert sorted((a.key.sequence, a.gpu_hours) for a in merged.ended) == [(1, 2.0), (2, 0.0)]


def attempt_between(sequence: int, started: str, ended: str) -> WaveAttemptRecord:
    """A one-node attempt without GPUs, its job running from `started` to `ended`."""
    row = TaskRow(
        job_id=f"j{sequence}", task_name="s", status=JobStatus.SUCCEEDED, start_at=started, end_at=ended
    )
    shape = TaskShape(state="s", task_name="s", nodes=1)
    key = WaveKey.parse(f"{sequence:03d}|serial|:s:-")
    return WaveAttemptRecord(
        key=key, states=["s"], job_id=f"j{sequence}", status=WaveStatus.SUCCEEDED, started_at=started,
        ended_at=ended, tasks=[row], task_shapes=[shape],
    )  # fmt: skip


def test_a_chain_ended_behind_its_code_counts_the_hours_it_added_and_no_earlier_chains() -> None:
    counted = attempt_between(1, "2026-12-07T09:00:00Z", "2026-12-07T09:06:00Z")  # an earlier chain's
    adopted = attempt_between(2, "2026-12-07T09:30:00Z", "2026-12-07T10:30:00Z")  # running at the resume
    its_own = attempt_between(3, "2026-12-07T10:30:00Z", "2026-12-07T10:36:00Z")
    ledger = RuntimeLedger(workflow="w", run_id="r1", api_version="v", waves=[counted, adopted, its_own])
    (hours,) = uncounted_hours(ledger, since="2026-12-07T10:00:00Z").values()
    assert hours.node_hours == pytest.approx(0.5 + 0.1)  # the adopted job's half hour after, then its own
    assert uncounted_hours(ledger, since="2026-12-07T11:00:00Z") == {}


def test_a_group_the_run_ended_inside_counts_the_batch_whose_job_then_succeeded_on_its_own() -> None:
    from npaflow.fanout.models import FanOutRecord

    counted = FanOutRecord(group="work", occurrence=1, items_uri="u", count=10, succeeded=4)
    batch = WaveKey.parse("003|work|work:one@000000000004:-,work:one@000000000005:-")
    closed = EndedAttempt(key=batch, attempt=1, status=WaveStatus.SUCCEEDED, group="work", members=2)
    result = ReconcileResult(run_id="r1", ledger=LedgerAfter(usage=RunUsage(), ended=[closed]))
    assert shown_fan_out(counted, result).succeeded == 6
    assert shown_fan_out(counted, ReconcileResult(run_id="r1")) == counted


def test_what_the_ledger_says_of_a_closed_batch_names_its_group_and_how_many_members_it_holds() -> None:
    batch = running_attempt().model_copy(update={"group": "work", "items": ["a", "b", "c"]})
    ledger = RuntimeLedger(workflow="w", run_id="r1", api_version="v", waves=[batch])
    (attempt,) = ledger_after(ledger, [batch]).ended
    assert (attempt.group, attempt.members) == ("work", 3)


def cancelled_unverified() -> RuntimeLedger:
    """A cancelled run's ledger: its cleanup asked to cancel the job at END and never saw it end."""
    from npaflow.runtime.ledger import Cancellation
    from npaflow.runtime.vocabulary import CancellationState, LedgerStatus

    requested = Cancellation(state=CancellationState.REQUESTED)
    cancelled = running_attempt().model_copy(
        update={"status": WaveStatus.CANCELLED, "ended_at": END, "cancellation": requested}
    )
    waves, status = [cancelled.with_hours()], LedgerStatus.CANCELLED
    return RuntimeLedger(workflow="w", run_id="r1", api_version="v", status=status, waves=waves)


def test_an_attempt_cancelled_without_its_end_seen_is_clocked_again_to_the_sweeps_cancel() -> None:
    from npaflow.runtime.ledger import Cancellation, ReconciledJob
    from npaflow.runtime.reconcile.models import RecordReconciledInput
    from npaflow.runtime.reconcile.uncounted import added_hours
    from npaflow.runtime.vocabulary import CancellationState

    stored = cancelled_unverified()
    verified = Cancellation(state=CancellationState.VERIFIED)
    job = ReconciledJob(job_id="w1-1", run_ending=RunEnding.CANCELLED, cancellation=verified)
    ending = RunEnding.CANCELLED
    request = RecordReconciledInput(run_id="r1", ledger_uri="file:///l", jobs=[job], ending=ending)
    delta = reconciled_delta(stored, request, now="2026-12-07T10:12:00Z")
    (wave,) = delta.waves
    assert delta.status is None  # the run's own ending stands
    assert (wave.cancellation, wave.ended_at) == (verified, "2026-12-07T10:12:00Z")
    assert (stored.waves[0].node_hours, wave.node_hours) == (0.1, 0.2)  # six minutes more, one node
    (more,) = added_hours(stored.waves, delta.waves).values()
    assert (more.node_hours, more.gpu_hours) == pytest.approx((0.1, 0.2))  # only what the sweep added


def test_an_attempt_cancelled_without_its_end_seen_is_clocked_to_its_jobs_own_end_once_it_ended() -> None:
    from npaflow.runtime.vocabulary import CancellationState

    stored = cancelled_unverified()
    own_end = "2026-12-07T10:18:00Z"  # twelve minutes after the run's cleanup gave up on it
    row = TaskRow(job_id="w1-1", task_name="slow", status=JobStatus.SUCCEEDED, start_at=START, end_at=own_end)
    job = EndedJob(job_id="w1-1", status=JobStatus.SUCCEEDED, tasks=[row])
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.CANCELLED, ended=[job], close=True
    )
    delta = reconciled_delta(stored, request, now="2026-12-07T11:00:00Z")
    (wave,) = delta.waves
    assert delta.status is None and delta.error is None  # the run's own ending stands
    assert (wave.status, wave.sky_status, wave.ended_at) == (
        WaveStatus.CANCELLED,
        JobStatus.SUCCEEDED,
        own_end,
    )
    assert wave.cancellation.state is CancellationState.VERIFIED  # its end was seen, if not the cancel's
    assert (stored.waves[0].node_hours, wave.node_hours) == (0.1, 0.3)  # every minute it ran, no more
    assert "ended SUCCEEDED" in wave.reconciliation[-1]


def test_an_attempt_whose_cancel_was_seen_to_take_is_left_as_it_is_by_a_close() -> None:
    stored, _ = closed_ledger()
    job = EndedJob(job_id="w1-1", status=JobStatus.SUCCEEDED)
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.CANCELLED, ended=[job], close=True
    )
    assert reconciled_delta(stored, request, now="2026-12-07T12:00:00Z").waves == []
