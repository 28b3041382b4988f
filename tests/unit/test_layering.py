"""The layers import one way (STYLE rule 1): pure code never touches the world."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.unit

SIDE_EFFECT_MODULES = {"temporalio", "boto3", "botocore", "aioboto3", "subprocess", "random",
                       "time", "os", "socket", "asyncio.subprocess", "workflows_def", "activities",
                       "worker"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def pure_modules() -> list[Path]:
    return [p for p in (ROOT / "npaflow").rglob("*.py") if "cli" not in p.relative_to(ROOT).parts]


@pytest.mark.parametrize("path", pure_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_modules_import_no_side_effects(path: Path) -> None:
    bad = {name for name in imported_modules(path)
           if name.split(".")[0] in SIDE_EFFECT_MODULES or name in SIDE_EFFECT_MODULES}
    assert not bad, f"{path} imports {sorted(bad)}"


WORKFLOW_ALLOWED_ROOTS = {"npaflow", "temporalio", "pydantic", "workflows_def", "__future__",
                          "asyncio", "dataclasses", "datetime", "typing", "collections", "enum"}


@pytest.mark.parametrize("path", sorted((ROOT / "workflows_def").glob("*.py")),
                         ids=lambda p: p.name)
def test_workflow_code_imports_only_pure_modules_and_the_sdk(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert roots <= WORKFLOW_ALLOWED_ROOTS, f"{path.name} imports {sorted(roots - WORKFLOW_ALLOWED_ROOTS)}"


@pytest.mark.parametrize("path", sorted((ROOT / "activities").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_activities_never_import_the_worker_or_workflows(path: Path) -> None:
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert not roots & {"worker", "workflows_def"}, path
