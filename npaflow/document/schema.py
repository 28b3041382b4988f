"""The spec as written: pydantic models of the YAML document, exported as JSON Schema for editors.

These models describe the document's *shape* (field names, aliases, types and
token-valued numbers); the loader (`npaflow.spec`) is still the judge of
meaning (references, bounds, graph rules). The schema accepts every spec the
loader accepts and flags unknown fields where the loader does: everywhere
except the top level and `x-` keys.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from npaflow.presets import STRICT

SCHEMA_ID = "urn:npaflow:schema:npa.workflow:v0.0.1"
SCHEMA_FILE = "npa.workflow.v0.0.1.schema.json"

#: A number that may also be a `{{config.x}}` token (or `config.x` for loop bounds).
TokenInt = int | str
Scalar = str | int | float | bool


def _extension_keys(schema: dict[str, Any]) -> None:
    """Allow `x-` keys beside the known fields, as the loader does."""
    schema["patternProperties"] = {"^x-": {}}


_STRICT = STRICT | ConfigDict(populate_by_name=True, json_schema_extra=_extension_keys)


class ArtifactDoc(BaseModel):
    """An input or output declaration; a `schema` containing `decision` marks the decision artifact."""

    model_config = _STRICT

    uri: str = Field(description="Artifact URI (s3:// or file://); tokens allowed.")
    schema_: str = Field(
        default="",
        alias="schema",
        description="A label; 'decision' in it marks the decision artifact a gate reads.",
    )


class RunDoc(BaseModel):
    """An ad-hoc command: `argv` wins over `shell` when both are set."""

    model_config = _STRICT

    shell: str = Field(default="", description="A shell command line; tokens allowed.")
    argv: list[Scalar] = Field(default_factory=list, description="The command as a list.")


class TriggerDoc(BaseModel):
    """Wait for objects under a prefix before the state runs."""

    model_config = _STRICT

    uri: str = Field(description="The prefix to watch (s3:// or file://).")
    pollSeconds: TokenInt = Field(default=30, description="Seconds between polls (>= 1).")
    maxPolls: TokenInt = Field(default=0, description="Poll limit; 0 means no limit.")
    minObjects: TokenInt = Field(default=1, description="Objects needed (>= 1).")


class LoopDoc(BaseModel):
    """Repeat a sequence (or a state) up to `max` times; `until` exits early on a decision."""

    model_config = _STRICT

    max: TokenInt = Field(default=1, description="Iterations: int, 'N', config.x or {{config.x}}.")
    until: str | None = Field(default=None, description="Predicate name, e.g. promote_checkpoint.")


class TransitionDoc(BaseModel):
    """A conditional edge, tried in order."""

    model_config = _STRICT

    when: str | None = Field(default=None, description="Predicate on the decision.")
    goto: str = Field(min_length=1, description="The state to go to.")
    if_: str | None = Field(default=None, alias="if", description="config.<attr>: only when truthy.")


class CacheDoc(BaseModel):
    """npaflow's extension: reuse a verified earlier result of the same content key (docs/cache.md)."""

    model_config = _STRICT

    version: str | int | None = Field(default=None, description="Bump to invalidate earlier entries.")
    max_age: str | int | None = Field(default=None, description="Oldest entry to reuse, e.g. 7d, 12h.")
    maxAge: str | int | None = None


class ForEachDoc(BaseModel):
    """npaflow's extension: a group's members come from a JSON list a stage wrote (docs/fan-out.md)."""

    model_config = _STRICT

    items: str = Field(description="URI of a JSON list of scalars or flat objects, written upstream.")
    as_: str = Field(alias="as", description="Name the member uses: {{NAME.field}}, or {{NAME}}.")
    max: TokenInt | None = Field(default=None, description="Most items allowed (default 1000, up to 10000).")
    minSuccess: float | None = Field(
        default=None, ge=0, le=1, description="Share of members that must succeed (default 1.0)."
    )
    min_success: float | None = Field(default=None, ge=0, le=1)


class StateDoc(BaseModel):
    """One state body (camelCase; the snake_case aliases the loader accepts are allowed too)."""

    model_config = _STRICT

    description: str = ""
    run: RunDoc | None = None
    toolRef: str | None = Field(default=None, description="Catalog tool; wins over run.")
    tool_ref: str | None = None
    needs: list[str] = Field(default_factory=list, description="Ordering hint only.")
    next: str | None = None
    transitions: list[TransitionDoc] = Field(default_factory=list)
    terminal: bool = False
    sequence: list[str] = Field(default_factory=list)
    parallel: list[str] = Field(default_factory=list)
    parallelCount: TokenInt | None = None
    parallel_count: TokenInt | None = None
    maxConcurrency: TokenInt | None = Field(default=None, description="Group batch size, 1..64.")
    max_concurrency: TokenInt | None = None
    params: dict[str, Scalar] = Field(default_factory=dict, description="Per-state config overlay.")
    trigger: TriggerDoc | None = None
    loop: LoopDoc | None = None
    writesDecision: bool = False
    writes_decision: bool | None = None
    inputs: list[ArtifactDoc] = Field(default_factory=list)
    outputs: list[ArtifactDoc] = Field(default_factory=list)
    resources: str = Field(default="default", description="A profile name under resources.")
    multiNodeMode: Literal["forbidden", "sharded"] | None = None
    multi_node_mode: Literal["forbidden", "sharded"] | None = None
    cache: bool | CacheDoc | None = Field(
        default=None,
        description="npaflow's extension: skip the launch when a verified result of the same key exists.",
    )
    forEach: ForEachDoc | None = Field(
        default=None,
        description="npaflow's extension: one member per item of a list (parallel: [one template]).",
    )
    for_each: ForEachDoc | None = None


class MetadataDoc(BaseModel):
    """Descriptive fields; `name` names runs, jobs and the ledger."""

    model_config = STRICT

    name: str
    description: str = ""
    namespace: str = ""
    labels: dict[str, Any] = Field(default_factory=dict)
    executionMode: Literal["runtime", "plan"] | None = None


class ResourceProfileDoc(BaseModel):
    """A resource profile; keys the renderer does not know are kept in the portable task only."""

    model_config = ConfigDict(extra="allow")

    cloud: str | None = None
    accelerators: str | dict[str, TokenInt] | None = Field(
        default=None, description="'TYPE:COUNT' or {TYPE: COUNT}."
    )
    cpus: str | int | float | None = None
    memory: str | int | float | None = None
    disk_size: str | int | None = None
    use_spot: bool | None = None
    region: str | None = None
    num_nodes: TokenInt | None = Field(default=None, description="1..32; tokens allowed.")
    image: str | None = None


class WorkflowDoc(BaseModel):
    """An `npa.workflow/v0.0.1` workflow spec."""

    model_config = ConfigDict(extra="allow", title="npa.workflow/v0.0.1 workflow spec")

    apiVersion: Literal["npa.workflow/v0.0.1", "npa.workflow/v0.0.1-beta"]
    kind: Literal["Workflow"]
    metadata: MetadataDoc | None = None
    config: dict[str, Any] = Field(default_factory=dict, description="Parameters tokens refer to.")
    run: dict[str, Any] = Field(default_factory=dict, description="{{run.*}} token defaults.")
    resources: dict[str, ResourceProfileDoc] = Field(default_factory=dict)
    initial: str | None = Field(default=None, description="Entry state (default: the first).")
    states: dict[str, StateDoc] = Field(min_length=1)


def workflow_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the spec document, as committed under specs/."""
    schema = WorkflowDoc.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def workflow_json_schema_text() -> str:
    """The schema as the committed file holds it (stable key order, trailing newline)."""
    return json.dumps(workflow_json_schema(), indent=2) + "\n"
