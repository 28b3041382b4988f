"""The reconciler's pure rules: which live jobs a sweep may touch, and what the ledger records."""

from __future__ import annotations

from npaflow.runtime.ledger import Cancellation, ReconciledJob, RuntimeLedger, WaveAttemptRecord
from npaflow.runtime.messages import JobRef
from npaflow.runtime.reconcile import EndedJob, JobOwner, LiveJob, RecordReconciledInput, orphan_candidates
from npaflow.runtime.reconcile.ledger_change import kept_on_purpose, reconciled_delta
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus
from npaflow.runtime.vocabulary import CancellationState, LedgerStatus, RunEnding, WaveStatus
from npaflow.waves import WaveKey


def live(job_id: str, owner: JobOwner | None, status: JobStatus = JobStatus.RUNNING) -> LiveJob:
    return LiveJob(job=JobRef(backend=BackendName.LOCAL, job_id=job_id), status=status, owner=owner)


def owner(run_id: str = "r1", namespace: str = "default", task_queue: str = "npaflow") -> JobOwner:
    return JobOwner(run_id=run_id, namespace=namespace, task_queue=task_queue)


def test_a_sweep_only_considers_its_own_namespace_and_task_queue_and_owned_live_jobs() -> None:
    jobs = [
        live("1", owner()),
        live("2", owner(namespace="prod")),
        live("3", owner(task_queue="other")),
        live("4", None),
        live("5", owner(), JobStatus.SUCCEEDED),
        live("6", owner("r2")),
    ]
    found = orphan_candidates(jobs, namespace="default", task_queue="npaflow")
    assert {run: [j.job.job_id for j in js] for run, js in found.items()} == {"r1": ["1"], "r2": ["6"]}


def attempt(job_id: str, status: WaveStatus) -> WaveAttemptRecord:
    return WaveAttemptRecord(key=WaveKey.parse("001|serial|:slow:-"), job_id=job_id, status=status)


def test_only_a_job_the_runs_own_cleanup_left_running_is_kept() -> None:
    ended = RuntimeLedger(workflow="w", run_id="r1", api_version="v", status=LedgerStatus.FAILED)
    ended.waves = [attempt("7", WaveStatus.RUNNING)]
    cut_short = ended.model_copy(update={"status": LedgerStatus.RUNNING})
    assert kept_on_purpose(ended, "7")
    assert not kept_on_purpose(cut_short, "7")  # no cleanup ran at all: cancel it
    assert not kept_on_purpose(None, "7")


def test_the_reconciled_delta_cancels_the_attempt_and_ends_a_running_ledger() -> None:
    stored = RuntimeLedger(workflow="w", run_id="r1", api_version="v")
    stored.waves = [attempt("7", WaveStatus.RUNNING)]
    verified = Cancellation(state=CancellationState.VERIFIED)
    job = ReconciledJob(job_id="7", cancellation=verified, final_status=JobStatus.CANCELLED)
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.TIMED_OUT, jobs=[job]
    )
    delta = reconciled_delta(stored, request, now="2026-12-02T00:00:00Z")
    assert delta.status is LedgerStatus.TIMED_OUT and "timeout" in (delta.error or "")
    (wave,) = delta.waves
    assert wave.status is WaveStatus.CANCELLED and wave.cancellation == verified
    assert wave.sky_status is JobStatus.CANCELLED
    assert [j.job_id for j in delta.reconciled] == ["7"]


def test_a_ledger_the_run_already_ended_keeps_its_own_status() -> None:
    stored = RuntimeLedger(
        workflow="w", run_id="r1", api_version="v", status=LedgerStatus.FAILED, error="boom"
    )
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.FAILED, jobs=[ReconciledJob(job_id="7")]
    )
    delta = reconciled_delta(stored, request, now="2026-12-02T00:00:00Z")
    assert delta.status is None and delta.error is None


def test_a_job_its_run_never_recorded_is_written_into_the_ledger_as_a_cancelled_attempt() -> None:
    stored = RuntimeLedger(workflow="w", run_id="r1", api_version="v")  # ended before its first export
    verified = Cancellation(state=CancellationState.VERIFIED)
    job = ReconciledJob(
        job_id="w1-1", job_name="r1-01-slow", wave_key="001|serial|:slow:-", attempt=1, cancellation=verified
    )
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.TERMINATED, jobs=[job]
    )
    (wave,) = reconciled_delta(stored, request, now="2026-12-02T00:00:00Z").waves
    assert (wave.key.states, wave.job_id, wave.attempt) == (["slow"], "w1-1", 1)
    assert wave.status is WaveStatus.CANCELLED and wave.cancellation == verified


def test_a_job_only_its_launch_receipt_named_is_written_into_the_closed_ledger_as_it_ended() -> None:
    stored = RuntimeLedger(workflow="w", run_id="r1", api_version="v")  # ended before its first export
    ended = EndedJob(
        job_id="w1-1", status=JobStatus.SUCCEEDED, wave_key="001|serial|:s0:-", attempt=2, job_name="r1-02-s0"
    )
    request = RecordReconciledInput(
        run_id="r1", ledger_uri="file:///l", ending=RunEnding.TERMINATED, ended=[ended], close=True
    )
    delta = reconciled_delta(stored, request, now="2026-12-02T00:00:00Z")
    (wave,) = delta.waves
    assert (wave.key.states, wave.job_id, wave.job_name, wave.attempt) == (["s0"], "w1-1", "r1-02-s0", 2)
    assert wave.status is WaveStatus.SUCCEEDED and "ended SUCCEEDED on its own" in wave.reconciliation[0]
    assert delta.status is LedgerStatus.TERMINATED
