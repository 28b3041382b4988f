"""Pure resolution helpers shared by validation and step materialization."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import Artifact, State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.tokens import TokenScope, resolve_text


def drop_empty_flags(argv: Sequence[str], flags: Sequence[str]) -> list[str]:
    """Drop each `flag value` pair whose flag is listed and whose value is blank."""
    result: list[str] = []
    index = 0
    while index < len(argv):
        item = argv[index]
        if item in flags and index + 1 < len(argv) and not argv[index + 1].strip():
            index += 2
            continue
        result.append(item)
        index += 1
    return result


def resolve_command(state: State, catalog: ToolCatalog, scope: TokenScope) -> tuple[list[str], str]:
    """Return the resolved (argv, shell) of a state; a toolRef wins over `run`.

    Raises:
        TokenError: a token in the command cannot be resolved.
    """
    if state.tool_ref:
        entry = catalog.get(state.tool_ref)
        if entry is None:
            raise TokenError(f"unknown toolRef '{state.tool_ref}'")
        argv = [resolve_text(item, scope) for item in entry.argv]
        return drop_empty_flags(argv, entry.omit_flags_when_empty), ""
    if state.run is None:
        return [], ""
    if state.run.argv:
        return [resolve_text(item, scope) for item in state.run.argv], ""
    return [], resolve_text(state.run.shell, scope)


def resolve_artifacts(artifacts: Sequence[Artifact], scope: TokenScope) -> tuple[Artifact, ...]:
    """Resolve artifact URIs, dropping entries whose URI is empty."""
    resolved = []
    for artifact in artifacts:
        if not artifact.uri:
            continue
        uri = resolve_text(artifact.uri, scope)
        if uri:
            resolved.append(artifact.model_copy(update={"uri": uri}))
    return tuple(resolved)


def profile_for(spec: WorkflowSpec, name: str) -> dict[str, JsonValue]:
    """Return the raw profile a state names, falling back to `default`, then empty."""
    return dict(spec.resources.get(name) or spec.resources.get("default") or {})
