"""Pydantic models of an `npa.workflow/v0.0.1` document after parsing.

The loader checks shapes and builds these; every later stage (validation,
traversal, rendering, the workflow input) works on them, never on raw dicts.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from npaflow.document.for_each import ForEach
from npaflow.presets import FROZEN

SUPPORTED_API_VERSIONS = ("npa.workflow/v0.0.1", "npa.workflow/v0.0.1-beta")

#: A params value: tokens render scalars, so nothing nested is allowed.
ParamValue = str | bool | int | float

_FROZEN = FROZEN | ConfigDict(populate_by_name=True)


class ExecutionMode(StrEnum):
    """`metadata.executionMode`: how a spec may be used (npaflow extension)."""

    RUNTIME = "runtime"  # runs execute for real; assumptions only in previews
    PLAN = "plan"  # default: assumptions may also steer missing decisions


class MultiNodeMode(StrEnum):
    """Whether a raw `run` state may ask for more than one node."""

    FORBIDDEN = "forbidden"  # identical workers would race output writers
    SHARDED = "sharded"  # the command shards its work by SKYPILOT_NODE_RANK


class Artifact(BaseModel):
    """A declared input or output; a schema containing 'decision' marks the decision."""

    model_config = _FROZEN

    uri: str = ""
    schema_label: str = Field(default="", alias="schema")

    def is_decision(self) -> bool:
        """True when this output is the state's decision artifact (reference §7.3)."""
        return "decision" in self.schema_label.lower()


class RunBlock(BaseModel):
    """An ad-hoc command; argv wins over shell when both are set."""

    model_config = _FROZEN

    shell: str = ""
    argv: tuple[str, ...] = ()


class Trigger(BaseModel):
    """Wait for objects under a prefix before the state's work starts."""

    model_config = _FROZEN

    uri: str
    poll_seconds: int = 30
    max_polls: int = 0
    min_objects: int = 1


class Loop(BaseModel):
    """Bounded repetition; `max` stays raw (int or config reference) until reached."""

    model_config = _FROZEN

    max: bool | int | str | None = None  # bools are kept so validation can reject them
    until: str | None = None


class Transition(BaseModel):
    """A conditional edge, evaluated in declared order."""

    model_config = _FROZEN

    goto: str
    when: str | None = None
    if_: str | None = Field(default=None, alias="if")


class CacheSetting(BaseModel):
    """A state's `cache:` (npaflow's extension): reuse a verified earlier result of the same key."""

    model_config = _FROZEN

    version: str = ""
    max_age_seconds: float | None = None


class State(BaseModel):
    """One state body of the graph, with aliases already folded in."""

    model_config = _FROZEN

    name: str
    description: str = ""
    run: RunBlock | None = None
    tool_ref: str = ""
    needs: tuple[str, ...] = ()
    next: str = ""
    transitions: tuple[Transition, ...] = ()
    terminal: bool = False
    sequence: tuple[str, ...] = ()
    parallel: tuple[str, ...] = ()
    parallel_count: int | str | None = None
    max_concurrency: int | str | None = None
    params: dict[str, ParamValue] = Field(default_factory=dict)
    trigger: Trigger | None = None
    loop: Loop | None = None
    writes_decision: bool = False
    inputs: tuple[Artifact, ...] = ()
    outputs: tuple[Artifact, ...] = ()
    resources: str = "default"
    multi_node_mode: MultiNodeMode = MultiNodeMode.FORBIDDEN
    cache: CacheSetting | None = None
    for_each: ForEach | None = None  # npaflow's extension: members from a list (npaflow/fanout/)

    def is_executable(self) -> bool:
        """True when the state launches work (a command or a catalog tool)."""
        return self.run is not None or bool(self.tool_ref)


class Metadata(BaseModel):
    """Descriptive metadata; `name` names the workflow everywhere."""

    model_config = _FROZEN

    name: str = "unnamed"
    description: str = ""
    namespace: str = ""
    labels: dict[str, JsonValue] = Field(default_factory=dict)
    execution_mode: ExecutionMode | None = None


class WorkflowSpec(BaseModel):
    """A whole parsed spec document."""

    model_config = _FROZEN

    api_version: str
    kind: str = "Workflow"
    metadata: Metadata = Field(default_factory=Metadata)
    config: dict[str, JsonValue] = Field(default_factory=dict)
    run_defaults: dict[str, JsonValue] = Field(default_factory=dict)
    resources: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    initial: str
    states: dict[str, State]
    source: str = ""

    @property
    def name(self) -> str:
        """The workflow name (`metadata.name`, or `unnamed`)."""
        return self.metadata.name

    def has_transitions(self) -> bool:
        """True when any state branches on a decision."""
        return any(state.transitions for state in self.states.values())

    def with_config(self, overrides: dict[str, str]) -> WorkflowSpec:
        """Return a copy with `--var` overrides merged into `config`."""
        return self.model_copy(update={"config": {**self.config, **overrides}})
