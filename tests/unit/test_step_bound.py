"""A spec's worst-case step count: what the walk's limit and validation's loop check read."""

from __future__ import annotations

import pytest

from npaflow.step_bound import MAX_WALK_STEPS, step_bound, walk_limit
from tests.helpers import load_doc, minimal_doc

pytestmark = pytest.mark.unit


def test_nested_loops_multiply_and_a_branch_counts_its_longest_way() -> None:
    doc = minimal_doc(
        outer={"sequence": ["inner", "gate"], "loop": {"max": 3}, "next": "route"},
        inner={"sequence": ["a", "b"], "loop": {"max": 4}},
        a={"run": {"shell": "x"}},
        b={"run": {"shell": "x"}},
        gate={"run": {"shell": "x"}},
        route={
            "run": {"shell": "x"},
            "params": {"decision_uri": "file:///d.json"},
            "transitions": [
                {"when": "promote_checkpoint", "goto": "done"},
                {"when": "loop_back", "goto": "sweep"},
            ],
        },
        sweep={"parallel": ["p1", "p2", "p3"], "next": "done"},
        p1={"run": {"shell": "x"}},
        p2={"run": {"shell": "x"}},
        p3={"run": {"shell": "x"}},
    )
    doc["initial"] = "outer"
    bound = step_bound(load_doc(doc), {})
    # 3 x (4 x 2 + 1) in the loops, then route, then the longer branch (3 members) and done
    assert (bound.steps, bound.loop, bound.loop_steps) == (27 + 1 + 3 + 1, "outer", 27)


def test_a_bound_above_the_reference_cap_becomes_the_limit_up_to_the_most_a_run_takes() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": "{{config.rounds}}"}, "next": "done"})
    doc["states"]["work"] = {"run": {"shell": "x"}}
    doc["initial"], doc["config"] = "seq", {"rounds": 2}
    spec = load_doc(doc)
    assert walk_limit(spec, {"rounds": 2}) == 256  # the reference's max(256, 64 x states)
    assert walk_limit(spec, {"rounds": 900}) == 901
    assert walk_limit(spec, {"rounds": 50_000}) == MAX_WALK_STEPS


def test_a_sequence_its_own_child_leads_back_into_has_no_bound_and_keeps_the_reference_cap() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "next": "done"})
    doc["states"]["work"] = {"run": {"shell": "x"}, "next": "seq"}
    doc["initial"] = "seq"
    spec = load_doc(doc)
    assert step_bound(spec, {}).steps is None and walk_limit(spec, {}) == 256
