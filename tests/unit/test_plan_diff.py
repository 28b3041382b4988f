"""Plan diffs: what an edited spec changes, and which completed waves the change would hit."""

from __future__ import annotations

import pytest

from npaflow.plan import build_plan, plan_fingerprint
from npaflow.plan_diff import diff_plans
from npaflow.spec import load_spec_from_str
from tests.helpers import CATALOG

pytestmark = pytest.mark.unit

SPEC = """
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: diffed}
resources:
  gpu: {accelerators: "H100:1"}
states:
  prep: {run: {shell: echo prep}, next: train}
  train: {run: {argv: [train, --lr, "0.1"]}, resources: gpu, next: report}
  report: {terminal: true, run: {shell: echo report}}
"""


def diff(old_text: str, new_text: str, completed_states: tuple[str, ...] = ()):
    old_spec = load_spec_from_str(old_text, "old.yaml", catalog=CATALOG)
    new_spec = load_spec_from_str(new_text, "new.yaml", catalog=CATALOG)
    old, new = build_plan(old_spec, CATALOG, run_id="r"), build_plan(new_spec, CATALOG, run_id="r")
    completed = [w.key for w in old.waves if w.states[0] in completed_states]
    return diff_plans(
        old_spec,
        old,
        new_spec,
        new,
        completed=completed,
        old_fingerprint=plan_fingerprint(old, old_spec),
        new_fingerprint=plan_fingerprint(new, new_spec),
    )


def test_the_same_spec_has_no_change() -> None:
    result = diff(SPEC, SPEC, completed_states=("prep",))
    assert result.is_empty() and result.text_lines() == []
    assert result.old_fingerprint == result.new_fingerprint


def test_an_argv_edit_is_one_changed_step_with_old_and_new_values() -> None:
    result = diff(SPEC, SPEC.replace('"0.1"', '"0.2"'), completed_states=("prep",))
    assert result.text_lines() == ["state changed: train: argv: [train, --lr, '0.1'] -> [train, --lr, '0.2']"]
    assert result.affected_completed_waves == []


def test_a_changed_step_that_already_completed_is_an_affected_wave() -> None:
    result = diff(SPEC, SPEC.replace("echo prep", "echo prep2"), completed_states=("prep",))
    assert [c.state for c in result.changed_steps] == ["prep"]
    assert result.affected_completed_waves == ["001|serial|:prep:-"]


def test_a_resource_profile_edit_changes_the_steps_that_use_it() -> None:
    result = diff(SPEC, SPEC.replace("H100:1", "H100:8"))
    (change,) = result.changed_steps
    assert (change.state, change.fields) == ("train", ["resources"])


def test_added_and_removed_states_and_graph_edits_are_listed() -> None:
    new = SPEC.replace("next: report}", "next: publish}").replace(
        "  report: {terminal: true, run: {shell: echo report}}",
        "  publish: {terminal: true, run: {shell: echo publish}}",
    )
    result = diff(SPEC, new, completed_states=("prep", "train"))
    assert result.added_states == ["publish"] and result.removed_states == ["report"]
    assert result.graph_changes == ["train: next: report -> publish"]
    assert result.affected_completed_waves == []  # prep and train do the same work as before


BRANCHED = """
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: branched}
config: {decision_uri: "file:///tmp/d.json"}
states:
  gate:
    run: {shell: echo gate}
    loop: {max: 3, until: promote_checkpoint}
    params: {decision_uri: "file:///tmp/d.json"}
    transitions: [{when: promote_checkpoint, goto: publish}, {when: loop_back, goto: escalate}]
  publish: {terminal: true, run: {shell: echo publish}}
  escalate: {terminal: true, run: {shell: echo escalate}}
"""


def test_an_edit_off_the_assumed_path_is_listed_once_and_changes_the_fingerprint() -> None:
    result = diff(BRANCHED, BRANCHED.replace("echo publish", "echo publish v2"))
    assert result.text_lines() == ["state changed: publish: run.shell: echo publish -> echo publish v2"]
    assert result.old_fingerprint != result.new_fingerprint


def test_a_loop_state_edit_is_one_line_not_one_per_iteration() -> None:
    result = diff(BRANCHED, BRANCHED.replace("echo gate", "echo gate v2"))
    assert result.text_lines() == ["state changed: gate: shell: echo gate -> echo gate v2"]


def test_a_config_or_profile_edit_is_listed_even_when_no_planned_step_uses_it() -> None:
    result = diff(
        BRANCHED, BRANCHED.replace('config: {decision_uri: "file:///tmp/d.json"}', "config: {lr: 1}")
    )
    assert result.text_lines() == [
        "spec changed: config.decision_uri: file:///tmp/d.json -> (none)",
        "spec changed: config.lr: (none) -> 1",
    ]


def test_a_description_edit_is_no_change() -> None:
    edited = BRANCHED.replace("  publish: {terminal: true,", "  publish: {description: docs, terminal: true,")
    assert diff(BRANCHED, edited).is_empty()


def test_the_diff_travels_as_json_with_the_same_content() -> None:
    payload = diff(BRANCHED, BRANCHED.replace("echo publish", "echo p2")).model_dump(mode="json")
    assert payload["changed_states"] == [
        {"state": "publish", "fields": ["run.shell"], "details": ["run.shell: echo publish -> echo p2"]}
    ]
