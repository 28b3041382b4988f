"""docs/architecture.md stays true: every path it names exists, and its run walk counts its own rows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


def _defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def test_each_walk_row_names_what_its_file_defines() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = re.findall(r"^\| \d+ \| `([\w./-]+)` \| (.+) \|$", text, re.MULTILINE)
    assert rows
    problems = []
    for path, hop in rows:
        defined = _defined_names(ROOT / path)
        for dotted in re.findall(r"`([A-Za-z_][\w.]*)`", hop.split(":")[0]):
            name = dotted.split(".")[-1]
            if not name.isupper() and name not in defined:  # CONSTANTS name the contract
                problems.append(f"{path}: {dotted}")
    assert problems == [], f"walk rows name what their file does not define: {problems}"


def test_the_runtime_packages_front_door_names_every_module_it_holds() -> None:
    runtime = ROOT / "npaflow" / "runtime"
    door = ast.get_docstring(ast.parse((runtime / "__init__.py").read_text(encoding="utf-8"))) or ""
    held = [
        path.name if path.suffix == ".py" else f"{path.name}/"
        for path in runtime.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()
    ]
    unnamed = sorted(name for name in held if f"`{name}`" not in door)
    assert unnamed == [], f"npaflow/runtime/__init__.py does not name {unnamed}"
