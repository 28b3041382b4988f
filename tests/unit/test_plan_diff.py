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
        old_fingerprint=plan_fingerprint(old),
        new_fingerprint=plan_fingerprint(new),
    )


def test_the_same_spec_has_no_change() -> None:
    result = diff(SPEC, SPEC, completed_states=("prep",))
    assert result.is_empty() and result.text_lines() == []
    assert result.old_fingerprint == result.new_fingerprint


def test_an_argv_edit_is_one_changed_step_with_old_and_new_values() -> None:
    result = diff(SPEC, SPEC.replace('"0.1"', '"0.2"'), completed_states=("prep",))
    assert result.text_lines() == [
        "step changed: train (argv)",
        "    argv: ('train', '--lr', '0.1') -> ('train', '--lr', '0.2')",
    ]
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
    assert result.graph_changes == ["train (next)"]
    assert result.affected_completed_waves == []  # prep and train do the same work as before
