"""What jobs write (decisions, object keys, errors) reaches a terminal escaped, and the ledger as written."""

from __future__ import annotations

import pytest

from npaflow.cli.artifacts_handler import artifacts_text
from npaflow.ids import RunId
from npaflow.printable import colours_kept, printable
from npaflow.runtime.ledger.records import DecisionRecord
from npaflow.runtime.reads import ArtifactRow, RunArtifacts

pytestmark = pytest.mark.unit

RETITLE = "\x1b]0;PWNED\x07\x1b[31mred"


def test_a_decision_that_carries_an_escape_sequence_is_shown_escaped_and_kept_as_read() -> None:
    record = DecisionRecord(uri="file:///d.json", decision=RETITLE)
    assert record.shown == "\\x1b]0;PWNED\\x07\\x1b[31mred"
    assert record.decision == RETITLE


def test_lines_and_tabs_are_kept_while_bidi_overrides_and_c1_controls_are_escaped() -> None:
    assert printable("a\tb\nc\u202ed\x9b") == "a\tb\nc\\u202ed\\x9b"


def test_printing_twice_escapes_once() -> None:
    assert printable(printable(RETITLE)) == printable(RETITLE)


def test_an_object_key_with_controls_is_listed_escaped() -> None:
    row = ArtifactRow(kind="output", state="s", uri=f"s3://b/{RETITLE}", exists=True)
    text = artifacts_text(RunArtifacts(run_id=RunId("r1"), rows=[row]))
    assert "\x1b" not in text and "\x07" not in text and "s3://b/\\x1b]0;PWNED" in text


def test_a_log_keeps_its_colours_and_progress_redraws_but_not_a_title_change_or_cleared_screen() -> None:
    log = "\x1b[1;32mok\x1b[0m 50%\r100%\n\x1b]0;PWNED\x07\x1b[2J\x1b[H\u202eevil"
    assert colours_kept(log) == "\x1b[1;32mok\x1b[0m 50%\r100%\n\\x1b]0;PWNED\\x07\\x1b[2J\\x1b[H\\u202eevil"
