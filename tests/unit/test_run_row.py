"""The run row `npaflow list` and the runs page share: one model, the same words in both."""

from __future__ import annotations

import pytest

from npaflow.cli.run_row import RunRow
from npaflow.cli.ui.pages import runs_page

pytestmark = pytest.mark.unit


def test_a_waiting_run_says_what_it_waits_for_and_a_finished_one_has_no_such_key() -> None:
    waiting = RunRow(
        run_id="r1",
        phase="waiting",
        execution_status="RUNNING",
        waiting_for="quota gpu8 (2 GPUs, position 1)",
    )
    assert waiting.shown_phase() == "waiting for quota gpu8 (2 GPUs, position 1)"
    assert waiting.document()["waiting_for"] == "quota gpu8 (2 GPUs, position 1)"
    assert "waiting_for" not in RunRow(run_id="r2", phase="succeeded").document()


def test_an_older_run_without_a_memo_shows_its_execution_status_and_no_hours() -> None:
    row = RunRow(run_id="old", execution_status="COMPLETED")
    assert (row.shown_phase(), row.document()["gpu_hours"], row.document()["waited_seconds"]) == (
        "completed",
        None,
        None,
    )
    assert 'data-phase="completed"' in runs_page([row], "", "", 0)


def test_a_run_no_worker_can_move_says_so_in_the_list_and_on_the_runs_page() -> None:
    stranded = RunRow(
        run_id="r3",
        phase="running",
        execution_status="RUNNING",
        no_worker="no worker of build npaflow:b1 polls task queue 'npaflow'",
    )
    assert stranded.shown_phase() == "running (no worker of build npaflow:b1 polls task queue 'npaflow')"
    assert stranded.document()["no_worker"].startswith("no worker of build npaflow:b1")
    assert "no_worker" not in RunRow(run_id="r4", phase="running", execution_status="RUNNING").document()
    assert "no worker of build npaflow:b1 polls task queue &#x27;npaflow&#x27;" in runs_page(
        [stranded], "", "", 0
    )


def test_a_status_shown_from_the_memo_because_the_answer_was_unreadable_says_why() -> None:
    from npaflow.cli.status_text import status_text
    from npaflow.ids import RunId
    from npaflow.runtime.summary import StatusReport

    why = "an answer could not be read as RunStatusView: waves.0.grown: Extra inputs are not permitted"
    report = StatusReport(run_id=RunId("r1"), phase="running", unreadable_answer=why)
    assert f"shown from the memo only: {why}" in status_text(report).splitlines()


def test_list_filters_on_an_ending_no_runs_code_records_by_temporals_word_for_it() -> None:
    from datetime import UTC, datetime

    from npaflow.cli.list_handler import LISTED_PHASES, visibility_query

    query = visibility_query("terminated", "", "", datetime.now(UTC))
    assert "ExecutionStatus = 'Terminated'" in query and "NpaflowPhase" not in query
    assert "ExecutionStatus = 'TimedOut'" in visibility_query("timed_out", "", "", datetime.now(UTC))
    assert {"terminated", "timed_out", "running", "failed"} <= set(LISTED_PHASES)
