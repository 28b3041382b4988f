"""What changed between the plan a run recorded and the plan of an edited spec.

Used when a failed run is restarted with another spec (`npaflow resume --spec`):
the refusal lists the change, and `--accept-changes` resumes only when no wave
that already completed would run differently. A completed wave is unaffected
when the new plan has a wave with the same key whose steps run the same
commands, on the same resources, with the same outputs.

The diff covers the whole spec: every state's definition on every branch and
loop path (not only the states one planning assumption reaches), the config,
and the resolved steps of the plan. One line per changed state.
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml
from pydantic import BaseModel, Field

from npaflow.document.models import WorkflowSpec
from npaflow.plan import ExecutionPlan
from npaflow.presets import FROZEN
from npaflow.spec_content import state_content
from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey

#: The parts of a step whose change makes it different work.
STEP_FIELDS = ("argv", "shell", "tool_ref", "resources_profile", "outputs")
_FIELD_NAMES = {"resources_profile": "resources", "tool_ref": "toolRef"}
#: State fields that change the graph, not the work of the state itself (spec spelling).
GRAPH_FIELDS = (
    "next",
    "transitions",
    "terminal",
    "sequence",
    "parallel",
    "loop",
    "maxConcurrency",
    "parallelCount",
    "trigger",
    "needs",
)


class StepChange(BaseModel):
    """One step whose work changed: which fields, old and new values shown briefly."""

    model_config = FROZEN

    state: str
    iteration: int | None = None
    fields: list[str]
    details: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """`state` or `state#iteration`."""
        return f"{self.state}#{self.iteration}" if self.iteration else self.state


class StateChange(BaseModel):
    """One state whose definition changed: the fields, old and new values as YAML text."""

    model_config = FROZEN

    state: str
    fields: list[str]
    details: list[str] = Field(default_factory=list)


class PlanDiff(BaseModel):
    """States added, removed or edited, steps changed, graph edits, and completed waves the change hits."""

    model_config = FROZEN

    old_fingerprint: str = ""
    new_fingerprint: str = ""
    added_states: list[str] = Field(default_factory=list)
    removed_states: list[str] = Field(default_factory=list)
    changed_states: list[StateChange] = Field(default_factory=list)
    spec_changes: list[str] = Field(default_factory=list)
    changed_steps: list[StepChange] = Field(default_factory=list)
    graph_changes: list[str] = Field(default_factory=list)
    affected_completed_waves: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when the specs define the same work and graph."""
        return not (
            self.added_states
            or self.removed_states
            or self.changed_states
            or self.spec_changes
            or self.changed_steps
            or self.graph_changes
        )

    def text_lines(self) -> list[str]:
        """One line per change (a state once, not per iteration), for the refusal and the ledger."""
        lines = [f"state added: {name}" for name in self.added_states]
        lines += [f"state removed: {name}" for name in self.removed_states]
        lines += [f"spec changed: {text}" for text in self.spec_changes]
        shown = set()
        for change in self.changed_steps:  # resolved values first: what the step runs
            shown.add(change.state)
            lines.append(f"state changed: {change.state}: {'; '.join(change.details)}")
        for state_change in self.changed_states:
            if state_change.state not in shown:
                lines.append(f"state changed: {state_change.state}: {'; '.join(state_change.details)}")
        lines += [f"graph changed: {text}" for text in self.graph_changes]
        lines += [f"completed wave affected: {key}" for key in self.affected_completed_waves]
        return lines


def _step_key(step: PlanStep) -> tuple[str, str, int | None]:
    return step.state, step.loop_label, step.iteration


def _indexed(steps: Iterable[PlanStep]) -> dict[tuple[str, str, int | None, int], PlanStep]:
    """Steps keyed by (state, loop, iteration, nth occurrence), so repeats line up in order."""
    seen: dict[tuple[str, str, int | None], int] = {}
    result = {}
    for step in steps:
        key = _step_key(step)
        nth = seen.get(key, 0)
        seen[key] = nth + 1
        result[(*key, nth)] = step
    return result


def _brief(value: object) -> str:
    """A value as one line of YAML flow text (never a Python repr), at most 200 characters."""
    plain = _plain(value)
    if isinstance(plain, str):
        text = plain
    else:
        text = yaml.safe_dump(plain, default_flow_style=True, sort_keys=False, width=10**6).strip()
        text = text.removesuffix("...").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _plain(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _flat(content: dict[str, object]) -> dict[str, object]:
    """Mappings one level down as `field.key` (run.shell, params.lr), so a line names what changed."""
    flat: dict[str, object] = {}
    for field, value in content.items():
        if isinstance(value, dict) and value:
            flat.update({f"{field}.{key}": item for key, item in value.items()})
        else:
            flat[field] = value
    return flat


def _change(field: str, before: object, after: object) -> str:
    return f"{field}: {_brief(before) if before is not None else '(none)'} -> " + (
        _brief(after) if after is not None else "(none)"
    )


def step_change(old: PlanStep, new: PlanStep) -> StepChange | None:
    """How `new` differs from `old` in the work it does (None when it does not)."""
    fields, details = [], []
    for field in STEP_FIELDS:
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            name = _FIELD_NAMES.get(field, field)
            fields.append(name)
            details.append(f"{name}: {_brief(before)} -> {_brief(after)}")
    if not fields:
        return None
    return StepChange(state=new.state, iteration=new.iteration, fields=fields, details=details)


def _same_work(old: Wave, new: Wave) -> bool:
    return len(old.steps) == len(new.steps) and all(
        step_change(a, b) is None for a, b in zip(old.steps, new.steps, strict=True)
    )


def diff_plans(
    old_spec: WorkflowSpec,
    old: ExecutionPlan,
    new_spec: WorkflowSpec,
    new: ExecutionPlan,
    *,
    completed: Iterable[WaveKey] = (),
    old_fingerprint: str = "",
    new_fingerprint: str = "",
) -> PlanDiff:
    """Compare two plans of one run; `completed` are the wave keys the run already finished."""
    old_steps, new_steps = _indexed(old.steps), _indexed(new.steps)
    changed: list[StepChange] = []
    for index, step in new_steps.items():
        before = old_steps.get(index)
        change = step_change(before, step) if before is not None else None
        if change is not None and all(c.state != change.state for c in changed):
            changed.append(change)
    graph, edited_states = _state_edits(old_spec, new_spec)
    was_spec = _flat({"config": old_spec.config, "resources": dict(old_spec.resources)})
    now_spec = _flat({"config": new_spec.config, "resources": dict(new_spec.resources)})
    config = [
        _change(key, was_spec.get(key), now_spec.get(key))
        for key in sorted(set(was_spec) | set(now_spec))
        if was_spec.get(key) != now_spec.get(key)
    ]
    changed_states = (
        {c.state for c in changed}
        | {c.state for c in edited_states}
        | set(old_spec.states) ^ set(new_spec.states)
    )
    affected = _affected(old, new, completed, changed_states)
    return PlanDiff(
        old_fingerprint=old_fingerprint,
        new_fingerprint=new_fingerprint,
        added_states=sorted(set(new_spec.states) - set(old_spec.states)),
        removed_states=sorted(set(old_spec.states) - set(new_spec.states)),
        changed_states=edited_states,
        spec_changes=config,
        changed_steps=changed,
        graph_changes=graph,
        affected_completed_waves=affected,
    )


def _state_edits(old_spec: WorkflowSpec, new_spec: WorkflowSpec) -> tuple[list[str], list[StateChange]]:
    """Each kept state's edits: to the graph (transitions, loops, groups), and to its work."""
    graph, edited_states = [], []
    for name in sorted(set(old_spec.states) & set(new_spec.states)):
        was, now = state_content(old_spec.states[name]), state_content(new_spec.states[name])
        edited = [field for field in GRAPH_FIELDS if was.get(field) != now.get(field)]
        if edited:
            graph.append(f"{name}: " + "; ".join(_change(f, was.get(f), now.get(f)) for f in edited))
        work = _flat({k: v for k, v in was.items() if k not in GRAPH_FIELDS})
        after = _flat({k: v for k, v in now.items() if k not in GRAPH_FIELDS})
        fields = [field for field in sorted(set(work) | set(after)) if work.get(field) != after.get(field)]
        if fields:
            details = [_change(field, work.get(field), after.get(field)) for field in fields]
            edited_states.append(StateChange(state=name, fields=fields, details=details))
    return graph, edited_states


def _affected(
    old: ExecutionPlan, new: ExecutionPlan, completed: Iterable[WaveKey], changed_states: set[str]
) -> list[str]:
    """The completed waves whose work the edit changes (a resume re-runs them only if accepted)."""
    old_waves = {wave.key: wave for wave in old.waves}
    new_waves = {wave.key: wave for wave in new.waves}
    affected = []
    for key in completed:
        old_wave, new_wave = old_waves.get(key), new_waves.get(key)
        if old_wave is not None:
            hit = new_wave is None or not _same_work(old_wave, new_wave)
        else:  # the run went where the plan's assumption did not: judge by its states
            hit = any(state in changed_states for state in key.states)
        if hit:
            affected.append(str(key))
    return affected
