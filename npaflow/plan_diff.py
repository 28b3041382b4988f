"""What changed between the plan a run recorded and the plan of an edited spec.

Used when a failed run is restarted with another spec (`npaflow resume --spec`):
the refusal lists the change, and `--accept-changes` resumes only when no wave
that already completed would run differently. A completed wave is unaffected
when the new plan has a wave with the same key whose steps run the same
commands, on the same resources, with the same outputs.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from npaflow.document.models import WorkflowSpec
from npaflow.plan import ExecutionPlan
from npaflow.steps import PlanStep
from npaflow.traversal.models import Wave
from npaflow.waves import WaveKey

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: The parts of a step whose change makes it different work.
STEP_FIELDS = ("argv", "shell", "tool_ref", "resources_profile", "outputs")
_FIELD_NAMES = {"resources_profile": "resources", "tool_ref": "toolRef"}
#: State fields that change the graph, not the work of the state itself.
GRAPH_FIELDS = (
    "next",
    "transitions",
    "terminal",
    "sequence",
    "parallel",
    "loop",
    "max_concurrency",
    "parallel_count",
    "trigger",
    "needs",
)


class StepChange(BaseModel):
    """One step whose work changed: which fields, old and new values shown briefly."""

    model_config = _FROZEN

    state: str
    iteration: int | None = None
    fields: list[str]
    details: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """`state` or `state#iteration`."""
        return f"{self.state}#{self.iteration}" if self.iteration else self.state


class PlanDiff(BaseModel):
    """States added or removed, steps changed, graph edits, and completed waves the change hits."""

    model_config = _FROZEN

    old_fingerprint: str = ""
    new_fingerprint: str = ""
    added_states: list[str] = Field(default_factory=list)
    removed_states: list[str] = Field(default_factory=list)
    changed_steps: list[StepChange] = Field(default_factory=list)
    graph_changes: list[str] = Field(default_factory=list)
    affected_completed_waves: list[str] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when the plans do the same work."""
        return not (self.added_states or self.removed_states or self.changed_steps or self.graph_changes)

    def text_lines(self) -> list[str]:
        """One line per change, for the refusal and for `resume`'s report."""
        lines = [f"state added: {name}" for name in self.added_states]
        lines += [f"state removed: {name}" for name in self.removed_states]
        for change in self.changed_steps:
            lines.append(f"step changed: {change.label} ({', '.join(change.fields)})")
            lines += [f"    {detail}" for detail in change.details]
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
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


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
    changed = []
    for index, step in new_steps.items():
        before = old_steps.get(index)
        change = step_change(before, step) if before is not None else None
        if change is not None:
            changed.append(change)
    graph = []
    for name in sorted(set(old_spec.states) & set(new_spec.states)):
        was, now = old_spec.states[name], new_spec.states[name]
        edited = [field for field in GRAPH_FIELDS if getattr(was, field) != getattr(now, field)]
        if edited:
            graph.append(f"{name} ({', '.join(edited)})")
    old_waves = {wave.key: wave for wave in old.waves}
    new_waves = {wave.key: wave for wave in new.waves}
    changed_states = {c.state for c in changed} | set(old_spec.states) ^ set(new_spec.states)
    affected = []
    for key in completed:
        old_wave, new_wave = old_waves.get(key), new_waves.get(key)
        if old_wave is not None:
            hit = new_wave is None or not _same_work(old_wave, new_wave)
        else:  # the run went where the plan's assumption did not: judge by its states
            hit = any(state in changed_states for state in key.states)
        if hit:
            affected.append(str(key))
    return PlanDiff(
        old_fingerprint=old_fingerprint,
        new_fingerprint=new_fingerprint,
        added_states=sorted(set(new_spec.states) - set(old_spec.states)),
        removed_states=sorted(set(old_spec.states) - set(new_spec.states)),
        changed_steps=changed,
        graph_changes=graph,
        affected_completed_waves=affected,
    )
