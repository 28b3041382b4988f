"""A spec's content as plain data: what a plan diff compares and a fingerprint covers.

Every state on every branch counts, not only the states one planning
assumption reaches, so an edit anywhere is seen. Descriptions do not count.
"""

from __future__ import annotations

from pydantic import JsonValue

from npaflow.document.models import State, WorkflowSpec


def state_content(state: State) -> dict[str, JsonValue]:
    """The state's definition (spec field names), without its name and description."""
    return state.model_dump(mode="json", by_alias=True, exclude={"name", "description"})


def spec_content(spec: WorkflowSpec) -> dict[str, JsonValue]:
    """The whole spec's definition: config, run defaults, resources, initial and every state."""
    return {
        "config": spec.config,
        "run": spec.run_defaults,
        "resources": dict(spec.resources),
        "initial": spec.initial,
        "states": {name: state_content(state) for name, state in sorted(spec.states.items())},
    }
