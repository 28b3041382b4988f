"""What `status` says of a run's open calls that keep failing (the run itself cannot see them)."""

from __future__ import annotations

from npaflow.cli.list_handler import live_row
from npaflow.cli.progress import change_lines, progress_lines
from npaflow.cli.run_row import RunRow
from npaflow.cli.status_text import status_text
from npaflow.cli.ui.pages import live_sections
from npaflow.cli.ui.reads import Snapshot
from npaflow.ids import RunId
from npaflow.picture.report import ReportLinks
from npaflow.runtime.stalls import PendingCall, Stall, stall_lines
from npaflow.runtime.summary import RunStatusView, StatusReport
from npaflow.runtime.vocabulary import RunPhase
from npaflow.spec import load_spec_from_str
from tests.helpers import CATALOG

NOW = 1_000_000.0


def stall_at(seconds: int, error: str = "x") -> Stall:
    call = PendingCall(call="the launch", consecutive_errors=2, errors_since=NOW - seconds, last_error=error)
    (stall,) = stall_lines([call], NOW)
    return stall


def test_a_launch_failing_to_reach_its_backend_says_for_how_long_and_the_newest_error() -> None:
    call = PendingCall(call="the launch", consecutive_errors=6, errors_since=NOW - 45, last_error="refused")
    (stall,) = stall_lines([call], NOW)
    assert stall.text == (
        "the launch gets no answer from the backend for 45s (6 failed calls; retried within the run's "
        "transport budget): refused"
    )
    assert stall.short == "the backend (the launch: no answer for 45s)"


def test_a_call_temporal_retries_names_its_attempt_and_why_the_last_one_failed() -> None:
    call = PendingCall(call="the job's status", attempt=3, last_failure="worker lost")
    (stall,) = stall_lines([call], NOW)
    assert stall.text == "the job's status is retried (attempt 3) after: worker lost"
    assert stall.short == "the job's status to succeed (attempt 3)"


def test_calls_going_well_say_nothing() -> None:
    assert (
        stall_lines([PendingCall(call="the job's status"), PendingCall(call="other", attempt=2)], NOW) == []
    )


def test_status_and_the_wait_stream_say_a_stall_once_when_it_begins_and_not_each_second() -> None:
    view = RunStatusView(
        run_id=RunId("r"),
        workflow="w",
        phase=RunPhase.RUNNING,
        stalled=[stall_at(5)],
    )
    later = view.model_copy(update={"stalled": [stall_at(9)]})
    said = f"waiting: {view.stalled[0].text}"
    assert said in status_text(StatusReport.of(view, "RUNNING")).splitlines()
    assert f"  {said}" in progress_lines(view)
    assert [
        line.split(" ", 1)[1] for line in change_lines(view.model_copy(update={"stalled": []}), view)
    ] == [said]
    assert change_lines(view, later) == []
    assert "waiting:" not in status_text(StatusReport.of(view, "COMPLETED"))


def test_the_run_page_says_a_stall_while_the_run_is_open() -> None:
    spec = load_spec_from_str(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: w}\ninitial: a\n"
        "states:\n  a: {run: {shell: 'true'}, terminal: true}\n",
        "w.yaml",
        catalog=CATALOG,
    )
    stalled = [stall_at(5, "<refused>")]
    view = RunStatusView(run_id=RunId("r"), workflow="w", phase=RunPhase.RUNNING, stalled=stalled)
    sections = live_sections(Snapshot("r", "e1", "RUNNING", "q", spec=spec, view=view), ReportLinks())
    assert "waiting: the launch gets no answer from the backend for 5s" in "".join(sections.values())
    assert "&lt;refused&gt;" in "".join(sections.values())
    ended = live_sections(Snapshot("r", "e1", "COMPLETED", "q", spec=spec, view=view), ReportLinks())
    assert "waiting: the launch" not in "".join(ended.values())


def test_list_shows_a_run_whose_launch_keeps_failing_as_waiting_for_the_backend() -> None:
    view = RunStatusView(run_id=RunId("r"), workflow="w", phase=RunPhase.RUNNING, stalled=[stall_at(45)])
    row = live_row(RunRow(run_id="r", phase="running", execution_status="RUNNING"), view)
    assert row.shown_phase() == "waiting for the backend (the launch: no answer for 45s)"


def test_list_shows_a_run_id_any_client_gave_with_its_control_characters_escaped() -> None:
    from npaflow.cli.list_handler import _text

    text = _text([RunRow(run_id="evil\x1b]0;PWNED\x07\u202e", phase="failed", execution_status="FAILED")])
    assert "\x1b" not in text and "\u202e" not in text
    assert text.splitlines()[1].startswith("evil\\x1b]0;PWNED\\x07\\u202e  ")
