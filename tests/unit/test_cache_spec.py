"""`cache:` on a state: opt-in, validated where it is written, and invisible to specs that do not use it."""

from __future__ import annotations

import pytest

from npaflow.cli.commands.plan_spec import format_steps
from npaflow.plan import build_plan
from tests.helpers import CATALOG, issues_of, load_doc, messages_of, minimal_doc

pytestmark = pytest.mark.unit

OUTPUTS = [{"uri": "s3://bucket/{{run.id}}/work/", "schema": "shards"}]


def cached(cache: object, **body: object) -> dict:
    return minimal_doc(
        work={"run": {"shell": "echo hi"}, "outputs": OUTPUTS, "next": "done", "cache": cache, **body}
    )


def test_cache_true_turns_the_cache_on_with_no_version_and_no_age_limit() -> None:
    setting = load_doc(cached(True)).states["work"].cache
    assert setting is not None and setting.version == "" and setting.max_age_seconds is None


def test_a_cache_mapping_takes_a_version_and_a_max_age() -> None:
    setting = load_doc(cached({"version": 2, "max_age": "7d"})).states["work"].cache
    assert setting is not None and setting.version == "2" and setting.max_age_seconds == 7 * 86400


def test_cache_false_is_off() -> None:
    assert load_doc(cached(False)).states["work"].cache is None


def test_a_misspelt_cache_field_is_an_error_with_the_fix() -> None:
    (issue,) = issues_of(cached({"max_ag": "7d"}))
    assert issue.render() == (
        "t.yaml:14:7: state work: cache.max_ag: unknown field 'max_ag' (hint: did you mean 'max_age'?)"
    )


def test_a_max_age_that_is_not_a_duration_is_an_error() -> None:
    assert "cache.max_age must be a positive duration" in messages_of(cached({"max_age": "forever"}))


def test_a_state_with_no_declared_outputs_cannot_be_cached() -> None:
    doc = minimal_doc(work={"run": {"shell": "echo hi"}, "next": "done", "cache": True})
    text = messages_of(doc)
    assert "no declared outputs cannot be cached" in text and "outputs: [{uri:" in text


def test_a_group_cannot_be_cached_only_its_members() -> None:
    doc = minimal_doc(
        grp={"parallel": ["a", "b"], "next": "done", "cache": True},
        a={"run": {"shell": "echo a"}, "outputs": OUTPUTS},
        b={"run": {"shell": "echo b"}, "outputs": OUTPUTS},
        work={"run": {"shell": "echo hi"}, "next": "grp"},
    )
    assert "only a state that runs a command or a tool can be cached" in messages_of(doc)


def test_a_cached_state_that_branches_must_declare_its_decision_as_an_output() -> None:
    doc = cached(True, transitions=[{"when": "promote", "goto": "done"}])
    assert "must declare the decision artifact as an output" in messages_of(doc)


def test_the_plan_marks_cached_steps_and_leaves_others_as_the_reference_plans_them() -> None:
    plan = build_plan(load_doc(cached({"version": "3"})), CATALOG, run_id="r1")
    work, done = (step.to_plan_dict() for step in plan.steps)
    assert work["cache"] == {"version": "3", "max_age_seconds": None}
    assert "cache" not in done


def test_plan_spec_marks_the_states_the_cache_may_serve() -> None:
    plan = build_plan(load_doc(cached({"version": "2", "max_age": "7d"})), CATALOG, run_id="r1")
    work, done = format_steps(plan)[1:]
    assert work == "00. work [cached v2, max_age 7d]: echo hi"
    assert done == "01. done: echo done"
