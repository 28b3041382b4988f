"""docs/architecture.md stays true: every path it names exists, and its run walk counts its own rows."""

from __future__ import annotations

import re

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.unit

DOC = ROOT / "docs" / "architecture.md"
_PATH = re.compile(r"`((?:npaflow|workflows_def|activities|worker|tests|docs|specs)/[\w./-]+)`")
_WALK_ROW = re.compile(r"^\| (\d+) \| `([\w./-]+)` \|", re.MULTILINE)


def test_every_path_the_architecture_doc_names_exists() -> None:
    named = set(_PATH.findall(DOC.read_text(encoding="utf-8")))
    assert named, "the doc names no paths"
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_run_walk_is_numbered_in_order_and_its_count_is_the_one_the_doc_states() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = _WALK_ROW.findall(text)
    assert [int(number) for number, _ in rows] == list(range(1, len(rows) + 1))
    words = {14: "Fourteen", 15: "Fifteen", 16: "Sixteen", 17: "Seventeen", 18: "Eighteen"}
    assert f"{words.get(len(rows), len(rows))} files, one line per hop" in text
