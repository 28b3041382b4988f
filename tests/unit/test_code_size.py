"""Production code stays in small rooms (no module over 300 lines, no function over 60), all shipped.

A module is split by concern well before the limit: none stands within 10 lines
of it, so a limit is never met by squeezing the last lines in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.unit

LAYERS = ("npaflow", "workflows_def", "activities", "worker")
MAX_MODULE_LINES = 300
#: Lines a module keeps free under the limit: the next change splits it, not squeezes it.
HEADROOM_LINES = 10
MAX_FUNCTION_LINES = 60


def production_modules() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (ROOT / layer).rglob("*.py"))


def test_no_production_module_stands_within_10_lines_of_300() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in production_modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES - HEADROOM_LINES
    }
    assert long == {}


def test_no_production_function_is_over_60_lines() -> None:
    long = {
        f"{p.relative_to(ROOT)}:{node.name}": length
        for p in production_modules()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert long == {}


def test_every_package_of_the_layers_ships_in_the_wheel() -> None:
    import tomllib

    shipped = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for layer in LAYERS
        for init in (ROOT / layer).rglob("__init__.py")
    }
    assert packages - shipped == set(), "add them to [tool.setuptools] packages in pyproject.toml"
