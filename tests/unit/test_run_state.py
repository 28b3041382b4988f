"""The run state machine: guarded transitions, what each records, and the generated diagrams."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from npaflow.ids import RunId
from npaflow.runtime.diagrams import render_blocks
from npaflow.runtime.ledger import Cancellation, DecisionRecord, LedgerDelta, Watermark
from npaflow.runtime.messages import AwaitResult, JobRef, LaunchResult
from npaflow.runtime.request import BackendName
from npaflow.runtime.result import run_summary
from npaflow.runtime.run_state import RunState
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.transitions import Effect, RunNote, RunTransition, TransitionError, WaveTransition
from npaflow.runtime.vocabulary import AttemptStage, CancellationState, LedgerStatus, RunPhase, WaveStatus
from tests.helpers import ROOT, plan_of

pytestmark = pytest.mark.unit


def started() -> RunState:
    state = RunState(RunId("run-1"))
    state.run_started(workflow="w", ledger_uri="file:///l/run-1", backend=BackendName.LOCAL)
    return state


def launched(state: RunState, job_id: str = "7") -> tuple:
    wave = plan_of("fanout-demo.yaml").waves[0]
    state.waves.launching(wave, 1, now="t0")
    launch = LaunchResult(
        job=JobRef(
            backend=BackendName.LOCAL,
            job_id=job_id,
            job_name="run-1-01-x",
            worker_id="w1",
            worker_task_queue="q@w1",
        ),
        launch_token="tok",
        request_id="req-7",
    )
    state.waves.launched(wave.key, 1, launch)
    return wave.key, 1


def test_a_run_walks_from_starting_to_succeeded() -> None:
    state = started()
    state.run_succeeded()
    assert state.phase is RunPhase.SUCCEEDED


def test_a_phase_transition_from_a_state_it_does_not_allow_raises_naming_the_current_state() -> None:
    state = RunState(RunId("run-1"))
    with pytest.raises(TransitionError, match="run_succeeded: run run-1 is starting; allowed from: running"):
        state.run_succeeded()


def test_pause_and_resume_clear_the_requests() -> None:
    state = started()
    state.pause_requested_by_operator()
    state.run_paused()
    state.run_resumed()
    assert (state.phase, state.pause_requested, state.resume_requested) == (RunPhase.RUNNING, False, False)


def test_a_launched_wave_records_the_exact_job_and_where_it_lives() -> None:
    state = started()
    key, attempt = launched(state)
    record = state.waves.attempt(key, attempt)
    assert (record.status, record.job_id, record.request_id, record.worker_id) == (
        WaveStatus.RUNNING,
        "7",
        "req-7",
        "w1",
    )
    assert state.waves.stage(key, attempt) is AttemptStage.IN_FLIGHT
    assert [r.job_id for r in state.waves.in_flight()] == ["7"]


def test_a_wave_cannot_succeed_before_its_job_is_known() -> None:
    state = started()
    wave = plan_of("fanout-demo.yaml").waves[0]
    state.waves.launching(wave, 1, now="t0")
    with pytest.raises(TransitionError, match=r"wave_succeeded: .* is launching; allowed from: in_flight"):
        state.waves.succeeded(wave.key, 1, now="t1")


def test_observing_records_rows_and_the_latest_status() -> None:
    state = started()
    key, attempt = launched(state)
    record = state.waves.observed(
        key, attempt, AwaitResult(status=JobStatus.RUNNING, max_concurrent_observed=2)
    )
    assert (record.sky_status, record.max_concurrent_observed) == (JobStatus.RUNNING, 2)


def test_cancelled_waves_are_recorded_as_cancelled_not_failed() -> None:
    state = started()
    key, attempt = launched(state)
    state.run_cancelling("operator")
    record = state.waves.cancelled(
        key,
        attempt,
        error=state.error,
        now="t2",
        cancellation=Cancellation(state=CancellationState.VERIFIED),
        final_status=JobStatus.CANCELLED,
    )
    assert (record.status, record.sky_status, record.cancellation.state) == (
        WaveStatus.CANCELLED,
        JobStatus.CANCELLED,
        CancellationState.VERIFIED,
    )
    assert state.waves.in_flight() == []


def test_a_failed_wave_keeps_its_first_error_and_category() -> None:
    state = started()
    key, attempt = launched(state)
    record = state.waves.failed(key, attempt, error="second", category=FailureClass.CAPACITY, now="t")
    assert (record.status, record.error_category, record.primary_error) == (
        WaveStatus.FAILED,
        FailureClass.CAPACITY,
        "second",
    )
    with pytest.raises(TransitionError):
        state.waves.failed(key, attempt, error="again", category=FailureClass.PAYLOAD, now="t")


def test_replayed_waves_are_not_sent_to_the_ledger_again() -> None:
    state = started()
    key, attempt = launched(state)
    record = state.waves.succeeded(key, attempt, now="t")
    fresh = started()
    fresh.waves.replayed(record)
    assert fresh.pending_delta()[0].waves == []
    assert run_summary(fresh).waves[0].replayed


def written(state: RunState) -> LedgerDelta:
    """Take the pending delta and report it exported."""
    delta, receipt = state.pending_delta()
    state.ledger_written(receipt)
    return delta


def test_deltas_carry_only_what_changed_since_the_last_written_one() -> None:
    state = started()
    key, attempt = launched(state)
    first = written(state)
    assert ([w.job_id for w in first.waves], first.status) == (["7"], LedgerStatus.RUNNING)
    assert state.pending_delta()[0].waves == []
    assert not state.ledger_is_behind()
    state.waves.succeeded(key, attempt, now="t")
    assert [w.status for w in written(state).waves] == [WaveStatus.SUCCEEDED]


def test_a_delta_whose_export_failed_stays_pending_whole() -> None:
    state = started()
    launched(state)
    state.add_decision(DecisionRecord(state="gate", uri="file:///d", decision="promote_checkpoint"))
    state.pending_delta()  # taken, but its export never reported success
    again, _ = state.pending_delta()
    assert [w.job_id for w in again.waves] == ["7"]
    assert (len(again.decisions), again.decision_offset, again.status) == (1, 0, LedgerStatus.RUNNING)


def test_a_change_made_while_its_earlier_version_was_being_exported_stays_pending() -> None:
    state = started()
    key, attempt = launched(state)
    _, receipt = state.pending_delta()
    state.waves.succeeded(key, attempt, now="t")  # lands while the export is in flight
    state.ledger_written(receipt)
    assert [w.status for w in state.pending_delta()[0].waves] == [WaveStatus.SUCCEEDED]


def test_decisions_after_a_written_delta_carry_their_offset() -> None:
    state = started()
    state.add_decision(DecisionRecord(state="gate", uri="file:///d/1", decision="loop_back_to_inner_loop"))
    written(state)
    state.add_decision(DecisionRecord(state="gate", uri="file:///d/2", decision="promote_checkpoint"))
    delta, _ = state.pending_delta()
    assert (delta.decision_offset, [d.uri for d in delta.decisions]) == (1, ["file:///d/2"])


def test_each_transition_declares_what_the_recorder_does_after_it() -> None:
    state = RunState(RunId("run-1"))
    state.run_started(workflow="w", ledger_uri="file:///l/run-1", backend=BackendName.LOCAL)
    assert state.take_effect() is Effect.PUBLISH
    key, attempt = launched(state)
    assert state.take_effect() is Effect.FLUSH  # launching (none) then launched (flush)
    state.waves.succeeded(key, attempt, now="t")
    assert state.take_effect() is Effect.NONE  # exported with the next flush
    state.run_succeeded()
    assert state.take_effect() is Effect.ANNOUNCE


def test_the_ledger_status_follows_the_run_phase() -> None:
    assert [phase.ledger_status() for phase in RunPhase] == [
        LedgerStatus.RUNNING,
        LedgerStatus.RUNNING,
        LedgerStatus.RUNNING,
        LedgerStatus.SUSPENDED,
        LedgerStatus.RUNNING,
        LedgerStatus.SUCCEEDED,
        LedgerStatus.FAILED,
        LedgerStatus.CANCELLED,
    ]


def test_the_docs_diagrams_match_the_transition_tables() -> None:
    document = (ROOT / "docs" / "runtime-states.md").read_text(encoding="utf-8")
    assert render_blocks(document) == document, "run: python tests/regenerate_diagrams.py"


def _glue_modules() -> list[Path]:
    return sorted((ROOT / "workflows_def").rglob("*.py"))


def _modules_outside_the_state() -> list[Path]:
    """Every production module but the two that own the run's state."""
    owners = {
        ROOT / "npaflow" / "runtime" / "run_state.py",
        ROOT / "npaflow" / "runtime" / "wave_attempts.py",
    }
    layers = ("npaflow", "workflows_def", "activities", "worker")
    return sorted(p for layer in layers for p in (ROOT / layer).rglob("*.py") if p not in owners)


def _writes_to_run_state(tree: ast.AST) -> list[int]:
    """Lines that assign to `<...>.state.<field>` (or augment or delete it)."""
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            while isinstance(target, ast.Subscript):
                target = target.value
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Attribute | ast.Name)
                and (getattr(target.value, "attr", None) or getattr(target.value, "id", None)) == "state"
            ):
                lines.append(node.lineno)
    return lines


def test_nothing_outside_the_run_state_writes_its_fields() -> None:
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in _modules_outside_the_state()
        if (lines := _writes_to_run_state(ast.parse(path.read_text())))
    }
    assert offenders == {}


def test_the_workflow_layer_names_no_transition_by_string() -> None:
    names = {t.value.name for t in (*RunTransition, *WaveTransition, *RunNote)}
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for path in _glue_modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    ]
    assert offenders == []


def test_every_note_is_a_run_state_method_that_declares_its_row() -> None:
    source = (ROOT / "npaflow" / "runtime" / "run_state.py").read_text(encoding="utf-8")
    for note in RunNote:
        assert f"def {note.value.name}(" in source, note
        assert f"RunNote.{note.name})" in source, note


def test_a_note_hands_the_recorder_its_declared_effect() -> None:
    state = started()
    state.take_effect()
    state.trigger_waiting("watch")
    assert (state.take_effect(), state.current_states) == (Effect.FLUSH, ["watch"])
    state.add_watermark("watch", Watermark(uri="s3://b/p/", objects=1, polls=1, observed_at="t"))
    assert state.take_effect() is Effect.NONE


def test_a_publish_and_an_export_asked_for_apart_make_a_flush() -> None:
    assert Effect.PUBLISH | Effect.EXPORT is Effect.FLUSH
    assert Effect.EXPORT | Effect.ANNOUNCE is Effect.ANNOUNCE
    assert Effect.NONE | Effect.EXPORT is Effect.EXPORT


def _recorder_calls(tree: ast.AST) -> set[str]:
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "recorder"
    }


def test_the_workflow_layer_never_exports_or_publishes_by_hand() -> None:
    called = set().union(*(_recorder_calls(ast.parse(p.read_text())) for p in _glue_modules()))
    assert called <= {"sync", "attach", "loaded", "pending_export"}, called


@pytest.mark.parametrize("how", ["cancel signal", "Temporal's cancel"])
def test_a_cancel_reason_of_any_length_is_kept_to_a_thousand_characters_and_says_so(how: str) -> None:
    state, reason = started(), "R" * 1_500_000  # a raw signal may carry up to the server's 2 MB
    if how == "cancel signal":
        state.cancel_requested(reason)
    state.run_cancelling(reason)
    assert state.cancel_reason == "R" * 1000 + "… (1,500,000 characters, clipped)"
    assert len(state.error) < 1100
