"""Planning: reference §4 and the §11.1 plan cases, plus every example spec."""

from __future__ import annotations

import pytest

from npaflow.plan import build_plan
from npaflow.traversal import StepLimitError
from tests.helpers import CATALOG, load_doc, load_fixture, minimal_doc, plan_of, states_of

pytestmark = pytest.mark.unit


def test_plan_flattens_parallel_group_in_declared_order() -> None:
    plan = plan_of("fanout-demo.yaml")
    assert states_of(plan) == ["shard-a", "shard-b", "shard-c", "join"]
    assert [s.group for s in plan.steps] == ["shards", "shards", "shards", ""]
    assert [s.loop_label for s in plan.steps] == ["shards", "shards", "shards", ""]


def test_gate_loop_plan_matches_promote_assumption() -> None:
    assert states_of(plan_of("token-factory-gate-loop.yaml", "promote_checkpoint")) == [
        "caption-batch",
        "score-batch",
        "quality-gate",
        "route",
        "publish",
    ]


def test_gate_loop_plan_runs_the_full_budget_on_loop_back() -> None:
    body = ["caption-batch", "score-batch", "quality-gate"]
    plan = plan_of("token-factory-gate-loop.yaml", "loop_back")
    assert states_of(plan) == body * 3 + ["route", "escalate"]
    assert all(step.group == "" for step in plan.steps)


def test_assumption_defaults_to_loop_back_when_a_state_has_transitions() -> None:
    assert plan_of("token-factory-gate-loop.yaml").assume_decision == "loop_back_to_inner_loop"


def test_assumption_defaults_to_config_plan_assume_decision() -> None:
    spec = load_fixture("token-factory-gate-loop.yaml", {"plan_assume_decision": "promote"})
    assert build_plan(spec, CATALOG).assume_decision == "promote_checkpoint"


def test_spec_without_transitions_keeps_an_empty_assumption() -> None:
    assert plan_of("serial-pipeline.yaml").assume_decision == ""


def test_sequence_children_follow_their_own_next_chain_first() -> None:
    doc = minimal_doc(
        seq={"sequence": ["a", "b"], "next": "done"},
        a={"run": {"shell": "x"}, "next": "chained"},
        chained={"run": {"shell": "x"}},
        b={"run": {"shell": "x"}},
    )
    doc["initial"] = "seq"
    plan = build_plan(load_doc(doc), CATALOG)
    assert states_of(plan) == ["a", "chained", "b", "done"]
    assert [s.loop_label for s in plan.steps] == ["seq", "", "seq", ""]


def test_sequence_child_with_transitions_follows_nothing() -> None:
    doc = minimal_doc(
        seq={"sequence": ["a", "b"], "next": "done"},
        a={"run": {"shell": "x"}, "next": "other", "transitions": [{"goto": "other"}]},
        other={"run": {"shell": "x"}, "terminal": True},
        b={"run": {"shell": "x"}},
    )
    doc["initial"] = "seq"
    assert states_of(build_plan(load_doc(doc), CATALOG)) == ["a", "b", "done"]


def test_single_state_loop_sets_iterations_and_follows_transitions() -> None:
    doc = minimal_doc(poll={"run": {"shell": "echo {{loop.poll}}"}, "loop": {"max": 3}, "next": "done"})
    doc["initial"] = "poll"
    plan = build_plan(load_doc(doc), CATALOG)
    assert [(s.state, s.iteration) for s in plan.steps] == [
        ("poll", 1),
        ("poll", 2),
        ("poll", 3),
        ("done", None),
    ]
    assert plan.steps[2].shell == "echo 3"


def test_single_state_loop_exits_early_on_the_assumption() -> None:
    doc = minimal_doc(
        poll={"run": {"shell": "x"}, "loop": {"max": 3, "until": "promote_checkpoint"}, "next": "done"}
    )
    doc["initial"] = "poll"
    assert len(build_plan(load_doc(doc), CATALOG, assume_decision="promote").steps) == 2


def test_loop_numbers_persist_after_the_loop() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "loop": {"max": 2}, "next": "done"})
    doc["states"]["done"]["run"]["shell"] = "echo {{loop.seq}}"
    doc["initial"] = "seq"
    assert build_plan(load_doc(doc), CATALOG).steps[-1].shell == "echo 2"


def test_state_output_tokens_see_earlier_steps() -> None:
    doc = minimal_doc(
        work={
            "run": {"shell": "x"},
            "next": "done",
            "outputs": [{"uri": "s3://b/w.json"}, {"uri": "s3://b/w2.json"}],
        }
    )
    doc["states"]["done"]["run"]["shell"] = "cat {{state.work.uri}} {{state.work.output_2}}"
    assert build_plan(load_doc(doc), CATALOG).steps[-1].shell == "cat s3://b/w.json s3://b/w2.json"


def test_empty_output_uris_are_dropped() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "next": "done", "outputs": [{"uri": ""}, {"uri": "s3://b/{{config.e}}"}]}
    )
    doc["config"] = {"e": ""}
    assert [a.uri for a in build_plan(load_doc(doc), CATALOG).steps[0].outputs] == ["s3://b/"]


def test_tool_ref_argv_drops_flags_whose_value_is_blank() -> None:
    doc = minimal_doc(work={"toolRef": "test.optional_flags", "next": "done"})
    assert build_plan(load_doc(doc), CATALOG).steps[0].argv == ("tool", "--out", "s3://bucket/out")


def test_catalog_config_defaults_never_override_spec_values() -> None:
    doc = minimal_doc(work={"toolRef": "test.optional_flags", "next": "done"})
    doc["config"] = {"cache_dir": "/cache"}
    assert "/cache" in build_plan(load_doc(doc), CATALOG).steps[0].argv


def test_tool_ref_wins_over_run() -> None:
    doc = minimal_doc(work={"toolRef": "test.sharded", "run": {"shell": "ignored"}, "next": "done"})
    step = build_plan(load_doc(doc), CATALOG).steps[0]
    assert (step.argv, step.shell, step.tool_ref) == (("shard", "--rank-aware"), "", "test.sharded")


def test_argv_wins_over_shell() -> None:
    doc = minimal_doc(work={"run": {"shell": "no", "argv": ["yes", 1]}, "next": "done"})
    step = build_plan(load_doc(doc), CATALOG).steps[0]
    assert (step.argv, step.shell) == (("yes", "1"), "")


def test_plan_step_limit_stops_a_sequence_that_its_own_child_leads_back_into() -> None:
    doc = minimal_doc(seq={"sequence": ["work"], "next": "done"})
    doc["states"]["work"] = {"run": {"shell": "x"}, "next": "seq"}
    doc["initial"] = "seq"
    with pytest.raises(StepLimitError):
        build_plan(load_doc(doc), CATALOG)


def test_plan_dict_has_exactly_the_reference_keys() -> None:
    payload = plan_of("fanout-demo.yaml").to_dict()
    assert set(payload) == {"workflow", "api_version", "initial", "assume_decision", "steps"}
    assert set(payload["steps"][0]) == {
        "state",
        "iteration",
        "loop_label",
        "argv",
        "shell",
        "tool_ref",
        "resources",
        "resources_profile",
        "outputs",
        "inputs",
        "group",
    }


def test_trigger_knobs_come_from_config_and_plans_ignore_the_wait() -> None:
    spec = load_fixture("trigger-ref.yaml")
    trigger = spec.states["caption-inbox"].trigger
    assert (trigger.poll_seconds, trigger.max_polls, trigger.min_objects) == (15, 40, 1)
    assert spec.states["caption-inbox"].tool_ref == "workbench.token_factory.caption"
    assert states_of(build_plan(spec, CATALOG)) == ["caption-inbox"]


def test_trigger_parses_with_defaults() -> None:
    doc = minimal_doc(
        work={
            "run": {"shell": "x"},
            "next": "done",
            "trigger": {"uri": "s3://b/in/", "pollSeconds": 5, "maxPolls": 3},
        }
    )
    trigger = load_doc(doc).states["work"].trigger
    assert (trigger.poll_seconds, trigger.max_polls, trigger.min_objects) == (5, 3, 1)


def test_parallel_group_parses_members_in_order_and_keeps_the_raw_bound() -> None:
    group = load_fixture("fanout-demo.yaml").states["shards"]
    assert group.parallel == ("shard-a", "shard-b", "shard-c")
    assert group.max_concurrency == "{{config.max_concurrency}}"


def test_plan_fingerprint_is_stable_and_changes_with_the_plan() -> None:
    from npaflow.plan import plan_fingerprint

    first = plan_fingerprint(plan_of("fanout-demo.yaml"))
    assert first == plan_fingerprint(plan_of("fanout-demo.yaml"))
    assert len(first) == 16
    assert first != plan_fingerprint(plan_of("fanout-demo.yaml", run_id="other-run"))
