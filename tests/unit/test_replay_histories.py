"""`replay-check --histories DIR`: every file is an exported history, or one error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from npaflow.errors import SpecError, UsageError
from tests.helpers import ROOT, fifo_that_answers_late
from worker.replay import histories_in

pytestmark = pytest.mark.unit


def test_a_file_that_is_json_but_no_history_is_named_with_what_it_should_be(tmp_path: Path) -> None:
    (tmp_path / "run-1.json").write_text("{}")
    with pytest.raises(UsageError) as refused:
        histories_in(tmp_path)
    assert str(refused.value).startswith(
        f"--histories {tmp_path}/run-1.json: not a history exported with 'temporal workflow show"
    )


def test_a_fifo_among_the_histories_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo_that_answers_late(tmp_path / "run-1.json")
    with pytest.raises(SpecError, match="exported history is a FIFO, not a file"):
        histories_in(tmp_path)


def test_an_exported_history_is_read_under_its_file_stem(tmp_path: Path) -> None:
    (tmp_path / "run-7.json").write_text('{"events": []}')
    assert [history.workflow_id for history in histories_in(tmp_path)] == ["run-7"]


def test_a_directory_with_no_histories_is_refused_rather_than_passed_with_nothing_checked(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("not a history")
    with pytest.raises(UsageError, match=r"no exported histories \(\*\.json\) in it, so nothing would be"):
        histories_in(tmp_path)


def test_an_exported_history_replays_under_the_workflow_id_it_ran_as_not_its_file_name(
    tmp_path: Path,
) -> None:
    """A quota-waiting run's lease ids are made of its id: under its file's name it cannot replay."""
    source = ROOT / "tests" / "histories" / "quota-waiting.json"
    (tmp_path / "renamed.json").write_text(source.read_text())
    (history,) = histories_in(tmp_path)
    assert history.workflow_id == "history-quota-waiting"
