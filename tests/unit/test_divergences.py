"""Where npaflow deliberately diverges from the reference engine (DESIGN §4)."""

from __future__ import annotations

import pytest

from npaflow.plan import build_plan
from tests.helpers import CATALOG, issues_of, load_doc, messages_of, minimal_doc, plan_of, states_of

pytestmark = pytest.mark.unit


def test_execution_mode_runtime_is_accepted_under_metadata() -> None:
    doc = minimal_doc()
    doc["metadata"]["executionMode"] = "runtime"
    assert issues_of(doc) == []
    assert load_doc(doc).metadata.execution_mode == "runtime"


def test_execution_mode_rejects_unknown_values() -> None:
    doc = minimal_doc()
    doc["metadata"]["executionMode"] = "eager"
    assert "unknown executionMode 'eager'" in messages_of(doc)


def test_next_naming_no_state_is_a_validation_error() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "next": "dnoe"})
    text = messages_of(doc)
    assert "next names unknown state 'dnoe'" in text
    assert "did you mean 'done'?" in text


def test_unknown_state_keys_are_rejected_with_a_did_you_mean_hint() -> None:
    doc = minimal_doc(
        grp={"parallel": ["a", "b"], "maxconcurrency": 2, "next": "done"},
        a={"run": {"shell": "x"}},
        b={"run": {"shell": "x"}},
    )
    issue = issues_of(doc)[0]
    assert (issue.state, issue.field) == ("grp", "maxconcurrency")
    assert issue.hint == "did you mean 'maxConcurrency'?"


def test_a_field_named_as_another_engine_names_it_hints_at_ours() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "next": "done", "end": True})
    issue = next(i for i in issues_of(doc) if i.field == "end")
    assert issue.hint == "did you mean 'terminal'?"


def test_x_prefixed_state_keys_are_allowed() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "next": "done", "x-owner": "ml-team"})
    assert issues_of(doc) == []


def test_unknown_keys_in_nested_blocks_are_rejected() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"maxx": 3}})
    assert "unknown field 'maxx'" in messages_of(doc)


def test_inner_loop_assumption_does_not_mask_outer_decision_reads() -> None:
    record = []

    class Reader:
        async def run_wave(self, batch):
            from npaflow.traversal import WaveOutcome

            return WaveOutcome(succeeded=True)

        async def read_decision(self, request):
            record.append(request.state)
            return "promote_checkpoint"

        async def assume_decision(self, request):
            return ""

        async def wait_trigger(self, request):
            return None

    from npaflow.context import build_run_context
    from npaflow.plan import run_to_completion
    from npaflow.traversal import Walker

    spec = load_doc(_nested_doc())
    walker = Walker(
        spec,
        CATALOG,
        build_run_context(spec, CATALOG, "r"),
        executor=Reader(),
        assumption="loop_back_to_inner_loop",
    )
    run_to_completion(walker.walk())
    assert record == ["decide"]
    assert [s.state for s in walker.record.steps].count("decide") == 1


def test_unmatched_decision_without_next_ends_the_plan_like_the_reference() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "transitions": [{"when": "promote_checkpoint", "goto": "done"}]}
    )
    assert [s.state for s in build_plan(load_doc(doc), CATALOG, assume_decision="weird").steps] == ["work"]


def test_plans_of_reference_shaped_specs_keep_the_reference_order() -> None:
    assert states_of(plan_of("token-factory-gate-loop.yaml", "promote")) == [
        "caption-batch",
        "score-batch",
        "quality-gate",
        "route",
        "publish",
    ]


def _nested_doc() -> dict:
    return minimal_doc(
        outer={
            "sequence": ["inner", "decide"],
            "loop": {"max": 3, "until": "promote_checkpoint"},
            "next": "done",
        },
        inner={"sequence": ["work"], "loop": {"max": 2}},
        work={"run": {"shell": "x"}},
        decide={
            "run": {"shell": "x"},
            "writesDecision": True,
            "outputs": [{"uri": "s3://b/{{loop.outer}}/d.json", "schema": "decision"}],
        },
    ) | {"initial": "outer"}


def test_a_loop_of_300_iterations_plans_every_iteration_where_the_reference_cap_refuses_it() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": 300}, "next": "done"})
    doc["states"]["work"] = {"run": {"shell": "x"}}
    doc["initial"] = "seq"
    assert states_of(build_plan(load_doc(doc), CATALOG)) == ["work"] * 300 + ["done"]


@pytest.mark.parametrize(("max_", "overrides"), [(20_000, None), ("{{config.rounds}}", {"rounds": "20000"})])
def test_a_spec_whose_loops_can_take_more_steps_than_a_run_takes_is_refused_at_its_loop_max(
    max_: object, overrides: dict[str, str] | None
) -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": max_}, "next": "done"})
    doc["states"]["work"] = {"run": {"shell": "x"}}
    doc["initial"], doc["config"] = "seq", {"rounds": 2}
    [issue] = issues_of(doc, overrides)
    assert (issue.state, issue.field) == ("seq", "loop.max") and issue.line > 0
    assert "the run can take 20,001 steps (20,000 in this loop); a run takes at most 10,000" in issue.message
