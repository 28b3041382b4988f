"""A state that branches or ends a loop must name where its decision is read (issue 17)."""

from __future__ import annotations

import pytest

from npaflow.context import build_run_context
from npaflow.decisions import assumption_problem
from npaflow.spec.decision_sources import decision_gaps, decision_source_issues
from tests.helpers import CATALOG, SPECS, load_fixture

pytestmark = pytest.mark.unit


def gaps_of(name: str, overrides: dict[str, str] | None = None) -> list[tuple[str, str]]:
    spec = load_fixture(name, overrides)
    config = build_run_context(spec, CATALOG, "r").config
    return [(gap.state, ".".join(map(str, gap.path[2:]))) for gap in decision_gaps(spec, config)]


def test_a_router_with_no_decision_uri_is_a_gap_at_its_transitions() -> None:
    assert gaps_of("runtime/unsourced-router.yaml") == [("route", "transitions")]


def test_config_decision_uri_is_a_source_for_every_router() -> None:
    assert gaps_of("runtime/unsourced-router.yaml", {"decision_uri": "file:///tmp/d.json"}) == []


def test_params_decision_uri_and_decision_outputs_are_sources() -> None:
    assert gaps_of("runtime/branch.yaml") == []
    assert gaps_of("runtime/gate-loop.yaml") == []


def test_every_shipped_example_names_its_decision_sources() -> None:
    for name in ("gate-loop.yaml", "nested-loop.yaml", "fan-out-join.yaml", "parallel-sweep.yaml"):
        assert gaps_of(name) == [], name


def test_the_issue_names_file_line_state_and_the_fix() -> None:
    path = SPECS / "runtime/unsourced-router.yaml"
    spec = load_fixture("runtime/unsourced-router.yaml")
    (issue,) = decision_source_issues(spec, {}, path.read_text(), str(path))
    text = issue.render()
    assert text.startswith(f"{path}:16:") and "state route" in text
    assert "params.decision_uri" in text and "--assume-decision" in text


@pytest.mark.parametrize(
    "value", ["promote", "promote_checkpoint", "loop_back", "loop_back_to_inner_loop", ""]
)
def test_known_assumptions_are_accepted(value: str) -> None:
    assert assumption_problem(value) == ""


def test_an_unknown_assumption_names_the_known_ones_and_the_closest() -> None:
    problem = assumption_problem("promot")
    assert "did you mean 'promote'" in problem and "loop_back" in problem
    assert "known decisions" in assumption_problem("maybe")
