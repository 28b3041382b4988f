"""`forEach:` on a group: parsed, validated where it is written, and planned honestly."""

from __future__ import annotations

from typing import Any

import pytest

from npaflow.cli.commands.plan_spec import format_steps
from npaflow.plan import build_plan
from tests.helpers import CATALOG, issues_of, load_doc, messages_of, minimal_doc

pytestmark = pytest.mark.unit

ITEMS = "s3://bucket/{{run.id}}/items.json"


def fan_doc(for_each: object | None = None, **changes: Any) -> dict[str, Any]:
    """work writes the list, grp fans out over it with member `m`, done ends the run."""
    states: dict[str, Any] = {
        "work": {"run": {"shell": "echo hi"}, "outputs": [{"uri": ITEMS, "schema": "items"}], "next": "grp"},
        "grp": {
            "parallel": ["m"],
            "forEach": {"items": ITEMS, "as": "s", "max": 5} if for_each is None else for_each,
            "next": "done",
        },
        "m": {
            "run": {"shell": "echo {{s.id}}"},
            "outputs": [{"uri": "s3://bucket/{{run.id}}/out/{{s.id}}/"}],
        },
    }
    for name, body in changes.items():
        states[name] = {**states.get(name, {}), **body}
    return minimal_doc(**states)


def test_for_each_reads_items_as_max_and_min_success() -> None:
    fan = load_doc(fan_doc({"items": ITEMS, "as": "s", "max": 5, "minSuccess": 0.8})).states["grp"].for_each
    assert fan is not None and (fan.items, fan.name, fan.max_items, fan.min_success) == (ITEMS, "s", 5, 0.8)


def test_for_each_defaults_to_at_most_1000_items_all_succeeding() -> None:
    fan = load_doc(fan_doc({"items": ITEMS, "as": "s"})).states["grp"].for_each
    assert fan is not None and (fan.max_items, fan.min_success) == (1000, 1.0)


def test_an_output_uri_without_an_item_token_is_refused_at_its_line_with_the_fix() -> None:
    doc = fan_doc(m={"outputs": [{"uri": "s3://bucket/{{run.id}}/out/"}]})
    (issue,) = issues_of(doc)
    assert issue.render().startswith("t.yaml:")
    assert "state m: outputs[0].uri" in issue.render() and "names no item" in issue.message
    assert "{{s.id}}" in issue.hint


def test_a_list_nothing_writes_is_refused_naming_the_producer_to_declare() -> None:
    text = messages_of(fan_doc({"items": "s3://bucket/elsewhere.json", "as": "s"}))
    assert "forEach.items 's3://bucket/elsewhere.json' is not an output any upstream state declares" in text


def test_a_list_only_a_later_state_writes_is_refused() -> None:
    doc = fan_doc(
        work={"outputs": []},
        done={"terminal": False, "outputs": [{"uri": ITEMS}], "next": "end"},
        end={"terminal": True, "run": {"shell": "true"}},
    )
    assert "is not an output any upstream state declares" in messages_of(doc)


def test_a_list_under_a_writer_s_directory_output_or_named_by_its_token_is_produced() -> None:
    under = fan_doc({"items": "s3://bucket/{{run.id}}/lists/a.json", "as": "s"})
    under["states"]["work"]["outputs"] = [{"uri": "s3://bucket/{{run.id}}/lists/"}]
    assert issues_of(under) == []
    assert issues_of(fan_doc({"items": "{{state.work.uri}}", "as": "s"})) == []


@pytest.mark.parametrize(
    ("for_each", "says"),
    [
        ({"items": ITEMS, "as": "config"}, "'config' is a token scope of its own"),
        ({"items": ITEMS, "as": "a-b"}, "forEach.as must be a name like 'shard'"),
        ({"items": ITEMS, "as": "s", "max": 0}, "forEach.max must be from 1 to 10,000, got 0"),
        ({"items": ITEMS, "as": "s", "minSuccess": 1.5}, "forEach.minSuccess must be a share from 0 to 1"),
        ({"items": "", "as": "s"}, "forEach.items must name the URI of a JSON list"),
        ({"items": ITEMS, "as": "s", "maxx": 3}, "unknown field 'maxx'"),
        ("all", "forEach must be a mapping"),
    ],
    ids=["reserved-name", "bad-name", "max-zero", "share-past-one", "no-items", "typo", "not-a-mapping"],
)
def test_a_malformed_for_each_is_refused_with_the_fix(for_each: object, says: str) -> None:
    assert says in messages_of(fan_doc(for_each))


def test_for_each_on_a_state_without_a_group_is_refused() -> None:
    doc = fan_doc(grp={"parallel": [], "run": {"shell": "true"}})
    assert "forEach fans out a parallel group; this state has no 'parallel:'" in messages_of(doc)


def test_a_for_each_group_takes_one_member_template() -> None:
    doc = fan_doc(grp={"parallel": ["m", "n"]}, n={"run": {"shell": "true"}})
    assert "a forEach group has one member template, got 2 members" in messages_of(doc)


def test_item_tokens_in_a_template_are_not_warned_about_and_a_misspelt_one_is_told_the_items_name() -> None:
    import yaml

    from npaflow.document.yaml_source import parse_yaml
    from npaflow.spec.typos import token_warnings

    source = parse_yaml(yaml.safe_dump(fan_doc(m={"run": {"shell": "echo {{s.id}} {{ss.id}}"}})), "t.yaml")
    assert [(w.message, w.hint) for w in token_warnings(source)] == [
        (
            "'{{ss.id}}' is left as written: npaflow resolves only config, run, state, loop, s tokens",
            "did you mean 's'?",
        )
    ]


def test_a_plan_without_the_list_shows_the_template_and_where_its_items_come_from() -> None:
    plan = build_plan(load_doc(fan_doc()), CATALOG)
    (line,) = [line for line in format_steps(plan) if "[group grp]" in line]
    assert "× up to 5 items from s3://bucket/plan-run/items.json (read at run time): echo {{s.id}}" in line


def test_assume_items_plans_one_member_per_item_keyed_by_content() -> None:
    items = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    plan = build_plan(load_doc(fan_doc()), CATALOG, items=items)
    members = [step for step in plan.steps if step.group == "grp"]
    assert [step.shell for step in members] == ["echo a", "echo b", "echo c"]
    again = build_plan(load_doc(fan_doc()), CATALOG, items=list(reversed(items)))
    assert sorted(s.item for s in members) == sorted(s.item for s in again.steps if s.group == "grp")


def test_a_spec_without_for_each_plans_exactly_as_before() -> None:
    doc = minimal_doc(work={"run": {"shell": "echo hi"}, "next": "done"})
    steps = build_plan(load_doc(doc), CATALOG).to_dict()["steps"]
    assert all("item" not in step for step in steps)  # type: ignore[operator, union-attr]


def test_a_state_reading_the_member_templates_outputs_is_told_to_read_the_groups_members_json() -> None:
    from npaflow.errors import TokenError

    doc = fan_doc(done={"terminal": True, "run": {"shell": "cat {{state.m.uri}}"}})
    with pytest.raises(TokenError, match=r"state\.m\.uri \('m' is the member template of forEach group"):
        build_plan(load_doc(doc), CATALOG)


def test_a_mistyped_token_in_the_items_is_one_error_naming_the_token_it_meant() -> None:
    typo = "s3://bucket/{{run.idd}}/items.json"
    (issue,) = issues_of(fan_doc({"items": typo, "as": "s"}))
    assert issue.message == "forEach.items: unknown run token: run.idd (did you mean run.id?)"
    assert "{{run.id}}" in issue.hint and "config" not in issue.hint
