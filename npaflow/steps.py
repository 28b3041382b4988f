"""Materializing a state into a `PlanStep`: resolved command, artifacts and profile."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.context import RunContext, state_config
from npaflow.document.models import Artifact, CacheSetting, State, WorkflowSpec
from npaflow.durations import duration_text
from npaflow.presets import FROZEN, STRICT
from npaflow.spec.resolve import profile_for, resolve_artifacts, resolve_command
from npaflow.tokens import resolve_deep


class PlanStep(BaseModel):
    """One materialized unit of work, as `plan-spec --json` prints it (reference §4.2)."""

    model_config = FROZEN

    state: str
    iteration: int | None = None
    loop_label: str = ""
    argv: tuple[str, ...] = ()
    shell: str = ""
    tool_ref: str = ""
    resources: str = "default"
    resources_profile: dict[str, JsonValue] = Field(default_factory=dict)
    outputs: tuple[Artifact, ...] = ()
    inputs: tuple[Artifact, ...] = ()
    group: str = ""
    cache: CacheSetting | None = None
    item: str = ""  # a fan-out member's item key (npaflow/fanout/): its task name carries it
    item_label: str = ""  # and its item as displays name it (npaflow/fanout/labels.py)
    #: The same step resolved with the run id as the literal `{{run.id}}` (a cached spec's steps only):
    #: what its cache key sees, so a value that merely contains the run id keys as that value.
    keyed: PlanStep | None = None

    @property
    def task_name(self) -> str:
        """The scheduler task name: the state, plus `-<iteration>` in single-state loops.

        A fan-out member's is `<state>-<item key>`: each member's own, and the same
        however the list is ordered.
        """
        if self.item:
            return f"{self.state}-{self.item}"
        return f"{self.state}-{self.iteration}" if self.iteration else self.state

    def has_command(self) -> bool:
        """True when the step has something to run."""
        return bool(self.argv) or bool(self.shell.strip())

    def to_plan_dict(self) -> dict[str, JsonValue]:
        """Return the reference's JSON shape of a plan step."""
        return {
            "state": self.state,
            "iteration": self.iteration,
            "loop_label": self.loop_label,
            "argv": list(self.argv),
            "shell": self.shell,
            "tool_ref": self.tool_ref,
            "resources": self.resources,
            "resources_profile": self.resources_profile,
            "outputs": [a.model_dump(by_alias=True) for a in self.outputs],
            "inputs": [a.model_dump(by_alias=True) for a in self.inputs],
            "group": self.group,
            **({"cache": self.cache.model_dump(mode="json")} if self.cache else {}),
            **({"item": self.item, "item_label": self.item_label} if self.item else {}),
        }


def materialize_step(
    spec: WorkflowSpec,
    state: State,
    *,
    context: RunContext,
    catalog: ToolCatalog,
    walk: WalkTokens,
    placement: StepPlacement,
    key_context: RunContext | None = None,
) -> PlanStep:
    """Build the step of `state` with tokens resolved against the walk so far.

    With `key_context` (a cached spec), the step carries its keyed twin: the same
    tokens resolved with the run id as the literal `{{run.id}}`.

    Raises:
        TokenError: a token in the state cannot be resolved.
    """
    step = _resolved(spec, state, context, catalog, walk.outputs, walk.loops, placement)
    if key_context is None:
        return step
    keyed = _resolved(spec, state, key_context, catalog, walk.keyed_outputs, walk.loops, placement)
    return step.model_copy(update={"keyed": keyed})


def _resolved(
    spec: WorkflowSpec,
    state: State,
    context: RunContext,
    catalog: ToolCatalog,
    outputs: dict[str, dict[str, str]],
    loops: dict[str, int],
    placement: StepPlacement,
) -> PlanStep:
    base = context.scope(state_outputs=outputs, loop_iterations=loops)
    scope = (
        base
        if not state.params
        else context.scope(
            state_outputs=outputs, loop_iterations=loops, config=state_config(state, context, base)
        )
    )
    argv, shell = resolve_command(state, catalog, scope)
    profile = resolve_deep(profile_for(spec, state.resources), scope)
    return PlanStep(
        state=state.name,
        iteration=placement.iteration,
        loop_label=placement.loop_label,
        argv=tuple(argv),
        shell=shell,
        tool_ref=state.tool_ref,
        resources=state.resources,
        resources_profile=profile if isinstance(profile, dict) else {},
        outputs=resolve_artifacts(state.outputs, scope),
        inputs=resolve_artifacts(state.inputs, scope),
        group=placement.group,
        cache=state.cache,
        item=placement.item,
        item_label=placement.item_label,
    )


class WalkTokens(BaseModel):
    """The token-visible state of a walk: recorded outputs and loop numbers."""

    model_config = STRICT

    outputs: dict[str, dict[str, str]] = Field(default_factory=dict)
    loops: dict[str, int] = Field(default_factory=dict)
    keyed_outputs: dict[str, dict[str, str]] = Field(default_factory=dict)  # the keyed twins' outputs

    def record_outputs(self, step: PlanStep) -> None:
        """Make `{{state.<name>.uri}}` and `output_N` available to later states."""
        self.outputs[step.state] = _output_tokens(step)
        if step.keyed is not None:
            self.keyed_outputs[step.state] = _output_tokens(step.keyed)


def _output_tokens(step: PlanStep) -> dict[str, str]:
    values: dict[str, str] = {}
    for index, artifact in enumerate(step.outputs, start=1):
        values.setdefault("uri", artifact.uri)
        values[f"output_{index}"] = artifact.uri
    return values


class StepPlacement(BaseModel):
    """Where a step sits in the walk: its iteration, loop label and group."""

    model_config = FROZEN

    iteration: int | None = None
    loop_label: str = ""
    group: str = ""
    item: str = ""  # a fan-out member's item key
    item_label: str = ""  # the item as displays name it


def cache_mark(step: PlanStep) -> str:
    """` [cached v2, max_age 7d]` for a step the stage cache may serve (plans and wave lists)."""
    if step.cache is None:
        return ""
    parts = [f"v{step.cache.version}"] if step.cache.version else []
    if step.cache.max_age_seconds:
        parts.append(f"max_age {duration_text(step.cache.max_age_seconds)}")
    return " [cached" + (f" {', '.join(parts)}" if parts else "") + "]"
