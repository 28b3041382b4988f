"""The Temporal UI's current details of a run: its states table (npaflow/runtime/ui_text.py)."""

from __future__ import annotations

import pytest

from npaflow.ids import RunId
from npaflow.runtime.ledger import WaveAttemptRecord
from npaflow.runtime.progress import RunProgress
from npaflow.runtime.progress_view import progress_view
from npaflow.runtime.run_state import RunState
from npaflow.runtime.state_rows import TABLE_ROWS, state_rows
from npaflow.runtime.ui_text import current_details, static_details
from npaflow.runtime.vocabulary import WaveStatus
from npaflow.waves import WaveKey

pytestmark = pytest.mark.unit


def ran(progress: RunProgress, states: int) -> None:
    for index in range(states):
        record = WaveAttemptRecord(
            key=WaveKey(sequence=index), states=[f"s{index}"], status=WaveStatus.SUCCEEDED
        )
        progress.record((record.key, 1), None, record)


def test_the_table_rows_are_the_newest_states_in_the_order_they_first_ran() -> None:
    progress = RunProgress()
    ran(progress, 100)
    rows = state_rows(progress, 3)
    assert [row.state for row in rows] == ["s97", "s98", "s99"]


def test_a_state_run_again_keeps_its_place_and_shows_its_newest_attempt() -> None:
    progress = RunProgress()
    ran(progress, 3)
    again = WaveAttemptRecord(key=WaveKey(sequence=0), states=["s0"], attempt=2, status=WaveStatus.RUNNING)
    progress.record((again.key, 2), None, again)
    rows = state_rows(progress, 3)
    assert [(row.state, row.attempt, row.status) for row in rows] == [
        ("s0", 2, WaveStatus.RUNNING),
        ("s1", 1, WaveStatus.SUCCEEDED),
        ("s2", 1, WaveStatus.SUCCEEDED),
    ]


def test_the_details_of_a_long_run_show_the_newest_states_and_count_the_earlier_ones() -> None:
    state = RunState(RunId("run-1"))
    ran(state.progress, 1000)
    details = current_details(progress_view(state))
    table = details.split("\n\n", 1)[1].splitlines()
    assert len(table) == 2 + TABLE_ROWS + 1  # header, rule, rows, the count of the rest
    assert "| s999 |" in table[-2]
    assert f"… {1000 - TABLE_ROWS} earlier states" in table[-1]


def test_a_short_run_shows_every_state_and_no_count() -> None:
    state = RunState(RunId("run-1"))
    ran(state.progress, 3)
    details = current_details(progress_view(state))
    assert "earlier states" not in details
    assert all(f"| s{index} |" in details for index in range(3))


HOSTILE = "<script>alert(1)</script> | **bold** [x](javascript:y) <b>b</b>"


def test_no_text_from_a_spec_or_a_job_reaches_the_temporal_ui_as_markup() -> None:
    from npaflow.runtime.progress_view import ProgressView
    from npaflow.runtime.vocabulary import RunPhase

    view = ProgressView(phase=RunPhase.FAILED, error=HOSTILE, quota_waits=[HOSTILE], ledger_uri=HOSTILE)
    text = current_details(view)
    details = static_details(
        workflow=HOSTILE,
        run_id=RunId("r-1"),
        ledger_uri="file:///x",
        submitted_by=HOSTILE,
        spec_file="s.yaml",
        variables={"k": HOSTILE},
    )
    for shown in (text, details):
        assert "<script>" not in shown and "<b>" not in shown and "](javascript" not in shown
        assert "&lt;script&gt;" in shown and "\\|" in shown and "\\*\\*bold\\*\\*" in shown


def test_a_2000_character_name_is_cut_in_the_details_and_the_states_table() -> None:
    from npaflow.runtime.ui_text import MAX_VALUE_CHARS, md

    assert len(md("s" * 2000)) == MAX_VALUE_CHARS and md("s" * 2000).endswith("…")
    assert md("line one\nline two") == "line one line two"


def test_an_activity_summary_is_one_bounded_line_of_plain_text() -> None:
    """The UI shows activity summaries as text (it escapes them itself): no Markdown escapes."""
    from workflows_def.activity_calls import _inert

    shown = _inert({"summary": "launch wave 001: a\nb (attempt 1)" + "x" * 500, "retry_policy": None})
    assert shown["summary"].startswith("launch wave 001: a b (attempt 1)") and len(shown["summary"]) == 300
    assert shown["retry_policy"] is None and _inert({"task_queue": "q"}) == {"task_queue": "q"}


def test_a_control_character_reaches_the_temporal_ui_as_its_escape_in_details_and_summaries() -> None:
    from npaflow.runtime.ui_text import md
    from workflows_def.activity_calls import _inert

    shown = _inert({"summary": "launch shard [\x1b]0;PWNED\x07 \u202egnp]"})["summary"]
    assert shown == "launch shard [\\x1b]0;PWNED\\x07 \\u202egnp]"
    assert "\x1b" not in md("a\x1b[2Jb") and "x1b" in md("a\x1b[2Jb")


def test_the_temporal_uis_table_says_which_run_a_cached_state_was_served_from() -> None:
    from npaflow.runtime.ledger import CachedStep
    from npaflow.runtime.ui_text import states_table

    hit = CachedStep(state="prep", key="k", hit=True, source_run="c1", source_job="7")
    record = WaveAttemptRecord(
        key=WaveKey(sequence=1), states=["prep"], status=WaveStatus.SUCCEEDED, cache=[hit]
    )
    progress = RunProgress()
    progress.record((record.key, 1), None, record)
    assert (
        states_table(state_rows(progress)).splitlines()[-1] == "| ✓ | prep | 1 | - | 0.0000 | from run c1 |"
    )
