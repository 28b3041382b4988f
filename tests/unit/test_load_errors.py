"""Loading: YAML and shape errors carry file, line, column, state, field and a hint."""

from __future__ import annotations

import pytest

from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import SpecError, SpecIssue
from npaflow.spec import load_spec_from_path
from tests.helpers import CATALOG, issues_of, messages_of, minimal_doc

pytestmark = pytest.mark.unit


def test_missing_file_names_the_path() -> None:
    with pytest.raises(SpecError, match="workflow spec not found") as caught:
        load_spec_from_path("/nonexistent/spec.yaml", catalog=CATALOG)
    assert caught.value.issues[0].file == "/nonexistent/spec.yaml"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("9" * 5000, "as a YAML int: too many digits"),
        ("2026-02-31", "as a YAML timestamp: day is out of range"),
    ],
    ids=["integer-of-5000-digits", "february-31"],
)
def test_a_scalar_its_tag_cannot_hold_is_a_located_issue_with_the_hint_to_quote_it(
    value: str, reason: str
) -> None:
    with pytest.raises(SpecError) as caught:
        parse_yaml(f"config:\n  when: {value}\n", "odd.yaml")
    issue = caught.value.issues[0]
    assert (issue.line, issue.column, issue.hint) == (2, 9, "quote it to keep it as text")
    assert reason in issue.message


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ('!!python/object:os.system "true"', "!!python/object:os.system"),
        ('!Ref "bucket"', "!Ref"),
        ("!!python/object {x: 1}", "!!python/object"),
        ("!custom [a, b]", "!custom"),
        ("!!set {a}", "!!set"),
    ],
    ids=["python-object-scalar", "custom-scalar", "python-object-mapping", "custom-list", "set"],
)
def test_a_tag_no_plain_value_carries_is_refused_where_it_stands_never_dropped(value: str, tag: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_yaml(f"config:\n  when: {value}\n", "tagged.yaml")
    issue = caught.value.issues[0]
    assert (issue.line, issue.column, issue.message) == (2, 9, f"YAML tag {tag!r} is not one a spec may use")


def test_the_tags_yaml_gives_plain_values_may_be_written_out() -> None:
    text = "config: !!map\n  a: !!str 1\n  b: !!int '2'\n  c: !!seq [!!bool true]\n"
    assert parse_yaml(text, "plain.yaml").data == {"config": {"a": "1", "b": 2, "c": [True]}}


def test_a_key_given_twice_is_refused_at_the_second_naming_the_first() -> None:
    text = "apiVersion: x\nmetadata: {name: a}\nmetadata: {name: b}\n"
    with pytest.raises(SpecError) as caught:
        parse_yaml(text, "dup.yaml")
    assert caught.value.issues[0].render() == (
        "dup.yaml:3:1: key 'metadata' is given twice in this mapping (first at line 2) "
        "(hint: keep one of them: YAML allows a key once, and the later one would silently win)"
    )


def test_a_key_a_merge_brings_in_may_be_overridden() -> None:
    source = parse_yaml("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\nagain: [*b, *b]\n", "m.yaml")
    assert source.data["other"] == {"x": 3, "y": 2}  # type: ignore[index]


@pytest.mark.parametrize("text", ["x: &a [*a]\n", "a: &a {b: *a}\n"])
def test_an_alias_inside_its_own_anchor_is_refused(text: str) -> None:
    with pytest.raises(SpecError, match="refers to an anchor that contains it"):
        parse_yaml(text, "loop.yaml")


def test_invalid_yaml_reports_line_and_column() -> None:
    issue = issues_of("apiVersion: x\nstates:\n  a: [unclosed\n")[0]
    assert issue.message.startswith("workflow spec is not valid YAML")
    assert issue.line >= 3
    assert issue.hint


def test_top_level_must_be_a_mapping() -> None:
    assert "workflow spec must be a mapping, got list" in messages_of("- a\n- b\n")


def test_required_top_level_fields_are_reported_together() -> None:
    text = messages_of("metadata: {name: x}\n")
    for key in ("apiVersion", "kind", "states"):
        assert f"missing required field '{key}'" in text


def test_empty_states_are_rejected() -> None:
    assert "non-empty 'states' mapping" in messages_of(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates: {}\n"
    )


def test_states_as_a_list_are_rejected() -> None:
    assert "states must be a mapping, got list" in messages_of(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates: [{name: a}]\n"
    )


def test_metadata_requires_a_name_and_rejects_unknown_keys() -> None:
    doc = minimal_doc()
    doc["metadata"] = {"owner": "me"}
    text = messages_of(doc)
    assert "missing required field 'name'" in text
    assert "unknown field(s): 'owner'" in text


def test_state_body_must_be_a_mapping() -> None:
    assert "must be a mapping" in messages_of(minimal_doc(work="echo"))


def test_unknown_top_level_keys_are_ignored_like_the_reference() -> None:
    doc = minimal_doc()
    doc["annotations"] = {"team": "ml"}
    assert issues_of(doc) == []


def test_every_problem_of_a_document_is_reported_at_once() -> None:
    doc = minimal_doc(
        work={"run": {"shell": "x"}, "nxt": "done"},
        other={"run": {"shell": "echo {{config.nope}}"}, "terminal": True},
    )
    doc["initial"] = "missing"
    fields = {(issue.state, issue.field) for issue in issues_of(doc)}
    assert ("work", "nxt") in fields
    assert ("", "initial") in fields
    assert ("other", "run") in fields


def test_issue_points_at_the_offending_line() -> None:
    text = (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: t}\nstates:\n"
        "  a:\n    run: {shell: x}\n    terminal: true\n    parralel: [b]\n"
    )
    issue = issues_of(text)[0]
    assert (issue.line, issue.column, issue.state, issue.field) == (8, 5, "a", "parralel")
    assert issue.render().startswith("t.yaml:8:5: state a: parralel: unknown field")


def test_needs_must_be_a_list() -> None:
    doc = minimal_doc(work={"run": {"shell": "x"}, "needs": "done", "next": "done"})
    assert "needs must be a list of state names" in messages_of(doc)


def _yaml_issue(text: str) -> SpecIssue:
    with pytest.raises(SpecError) as caught:
        parse_yaml(text, "spec.yaml")
    return caught.value.issues[0]


def test_a_key_indented_too_deep_is_reported_at_its_line_not_where_the_parser_stopped() -> None:
    text = (
        "states:\n"  # 1
        "  a:\n"  # 2
        "    run: {shell: echo a}\n"  # 3
        "  b:\n"  # 4
        "      run:\n"  # 5: too deep, and its children come along
        "        shell: echo b\n"  # 6
        "        env: {X: '1'}\n"  # 7
        "    next: a\n"  # 8: the parser stops here
    )
    issue = _yaml_issue(text)
    assert (issue.line, issue.column) == (5, 7)
    assert "indented 6 spaces, but the keys of its mapping are indented 4 (line 8" in issue.message
    assert "indent it 4 spaces" in issue.hint


def test_a_key_indented_too_shallow_is_reported_at_its_line() -> None:
    text = "states:\n  a:\n   params: {shard: a}\n    run: {shell: echo}\n"
    issue = _yaml_issue(text)
    assert (
        issue.line == 3 and "indented 3 spaces, but the keys of its mapping are indented 4" in issue.message
    )


def test_a_yaml_error_with_no_indentation_to_blame_keeps_the_parsers_position() -> None:
    issue = _yaml_issue("states:\n  a: [unclosed\n")
    assert issue.message.startswith("workflow spec is not valid YAML") and "indented" not in issue.message


@pytest.mark.parametrize("name", ["", "   "])
def test_a_state_with_an_empty_name_is_named_as_such_not_as_a_cycle(name: str) -> None:
    text = messages_of(minimal_doc(**{name: {"run": {"shell": "true"}, "terminal": True}}))
    assert "a state's name is empty (hint: name the state, e.g. 'train:')" in text
    assert "cycle" not in text


@pytest.mark.parametrize(
    ("top", "message", "hint"),
    [
        ({"config": [1]}, "config must be a mapping, got list", "write config: {key: value}"),
        ({"run": 5}, "run must be a mapping, got int", "write run: {key: value}"),
        ({"resources": [1]}, "resources must be a mapping, got list", "write resources: {gpu: "),
        ({"initial": ["work"]}, "initial must be a state name (string)", "write initial: "),
        (
            {"resources": {"gpu": {"num_nodes": 0}}},
            "resource profile 'gpu': num_nodes must be >= 1",
            "set num_nodes to a whole number of machines from 1 to 32",
        ),
        (
            {"resources": {"gpu": {"accelerators": "H100:0"}}},
            "resource profile 'gpu': accelerator count must be >= 1, got 0",
            "write accelerators: 'H100:1'",
        ),
    ],
    ids=["config", "run", "resources", "initial", "num-nodes", "accelerators"],
)
def test_a_top_level_field_of_the_wrong_shape_names_the_fix(top: dict, message: str, hint: str) -> None:
    (issue,) = [i for i in issues_of({**minimal_doc(), **top}) if i.message == message]
    assert issue.hint.startswith(hint)
