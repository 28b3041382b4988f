"""What `status` says of a run's open calls that keep failing (the run itself cannot see them)."""

from __future__ import annotations

from npaflow.cli.progress import change_lines, progress_lines
from npaflow.cli.status_text import status_text
from npaflow.cli.ui.pages import live_sections
from npaflow.cli.ui.reads import Snapshot
from npaflow.ids import RunId
from npaflow.picture.report import ReportLinks
from npaflow.runtime.contract import AWAIT_WAVE, LAUNCH_WAVE
from npaflow.runtime.stalls import PendingCall, stall_lines
from npaflow.runtime.summary import RunStatusView, StatusReport
from npaflow.runtime.vocabulary import RunPhase
from npaflow.spec import load_spec_from_str
from tests.helpers import CATALOG

NOW = 1_000_000.0


def test_a_launch_failing_to_reach_its_backend_says_for_how_long_and_the_newest_error() -> None:
    call = PendingCall(
        activity=LAUNCH_WAVE.name, consecutive_errors=6, errors_since=NOW - 45, last_error="launch: refused"
    )
    assert stall_lines([call], NOW) == [
        "the launch gets no answer from the backend for 45s (6 failed calls; retried within the run's "
        "transport budget): launch: refused"
    ]


def test_a_call_temporal_retries_names_its_attempt_and_why_the_last_one_failed() -> None:
    call = PendingCall(activity=AWAIT_WAVE.name, attempt=3, last_failure="worker lost")
    assert stall_lines([call], NOW) == ["the job's status is retried (attempt 3) after: worker lost"]


def test_calls_going_well_say_nothing() -> None:
    assert (
        stall_lines([PendingCall(activity=AWAIT_WAVE.name), PendingCall(activity="other", attempt=2)], NOW)
        == []
    )


def test_status_and_the_wait_stream_say_a_stall_once_when_it_begins_and_not_each_second() -> None:
    view = RunStatusView(
        run_id=RunId("r"),
        workflow="w",
        phase=RunPhase.RUNNING,
        stalled=["the launch gets no answer from the backend for 5s (2 failed calls; ...): x"],
    )
    later = view.model_copy(update={"stalled": [view.stalled[0].replace("5s (2", "9s (4")]})
    said = f"waiting: {view.stalled[0]}"
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
    stalled = ["the launch gets no answer from the backend for 5s (2 failed calls; ...): <refused>"]
    view = RunStatusView(run_id=RunId("r"), workflow="w", phase=RunPhase.RUNNING, stalled=stalled)
    sections = live_sections(Snapshot("r", "e1", "RUNNING", "q", spec=spec, view=view), ReportLinks())
    assert "waiting: the launch gets no answer from the backend for 5s" in "".join(sections.values())
    assert "&lt;refused&gt;" in "".join(sections.values())
    ended = live_sections(Snapshot("r", "e1", "COMPLETED", "q", spec=spec, view=view), ReportLinks())
    assert "waiting: the launch" not in "".join(ended.values())
