"""`npaflow init`: a starter that teaches the language, the examples, and no overwritten work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npaflow.cli import run
from npaflow.plan import build_plan
from npaflow.spec import load_spec_from_path
from npaflow.spec.decision_sources import decision_gaps
from tests.helpers import CATALOG, EXAMPLES

pytestmark = pytest.mark.unit


def test_init_writes_the_starter_the_examples_and_the_schema(tmp_path: Path) -> None:
    assert run(["init", str(tmp_path / "p")]) == 0
    names = sorted(p.relative_to(tmp_path / "p").as_posix() for p in (tmp_path / "p").rglob("*.*"))
    assert names == sorted(
        [
            "pipeline.yaml",
            "npa.workflow.v0.0.1.schema.json",
            *(f"examples/{p.name}" for p in EXAMPLES.glob("*.yaml")),
        ]
    )
    assert json.loads((tmp_path / "p" / "npa.workflow.v0.0.1.schema.json").read_text())["$id"]


def test_init_refuses_to_overwrite_anything_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pipeline.yaml").write_text("my work")
    assert run(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "already exist" in err and "--force" in err
    assert (tmp_path / "pipeline.yaml").read_text() == "my work"
    assert not (tmp_path / "examples").exists()  # nothing written
    assert run(["init", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "pipeline.yaml").read_text() != "my work"


def test_the_starter_is_valid_and_every_decision_has_a_source(tmp_path: Path) -> None:
    run(["init", str(tmp_path)])
    spec = load_spec_from_path(tmp_path / "pipeline.yaml", catalog=CATALOG)
    assert decision_gaps(spec, spec.config) == []


@pytest.mark.parametrize(("assume", "last"), [("promote", "publish"), ("loop_back", "report")])
def test_the_starter_loops_then_branches_on_the_decision(tmp_path: Path, assume: str, last: str) -> None:
    run(["init", str(tmp_path)])
    spec = load_spec_from_path(tmp_path / "pipeline.yaml", catalog=CATALOG)
    plan = build_plan(spec, CATALOG, assume_decision=assume, run_id="plan-run")
    rounds = 1 if assume == "promote" else 3
    assert [step.state for step in plan.steps] == ["train", "evaluate"] * rounds + ["route", last]


def test_init_into_a_path_that_is_a_file_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken").write_text("a file")
    assert run(["init", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"DIR {tmp_path / 'taken'}: cannot write" in err and "File exists" in err and "hint:" in err
