"""Resource-profile, executable-contract and resolvability rules (reference §3 rules 14, 15, 20)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from pydantic import JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.context import RunContext, state_config
from npaflow.document.models import MultiNodeMode, State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.integers import plain_int
from npaflow.spec.field_hints import token_hint
from npaflow.spec.issues import IssueCollector, did_you_mean
from npaflow.spec.resolve import profile_for, resolve_artifacts, resolve_command
from npaflow.tokens import UnknownStateTokenError, resolve_deep, resolve_text

#: Largest gang a profile may request; bigger blocks are almost always typos.
MAX_PROFILE_NODES = 32
_ACCELERATOR = re.compile(r"^([A-Za-z0-9_.-]+):(\d+)$")
_SHARDED_HINT = "set 'multiNodeMode: sharded' if the command splits its work by SKYPILOT_NODE_RANK"


def profile_num_nodes(profile: dict[str, JsonValue]) -> int:
    """Return a resolved profile's node count (default 1).

    Raises:
        ValueError: the value is not an integer in 1..32.
    """
    raw = profile.get("num_nodes", 1)
    if raw is None:
        return 1
    if isinstance(raw, bool):
        raise ValueError("num_nodes must be an integer, not a bool")
    if isinstance(raw, str) and (number := plain_int(raw.strip(), signed=True)) is not None:
        raw = number
    if not isinstance(raw, int):
        raise ValueError(f"num_nodes must be an integer, got {raw!r}")
    if raw < 1:
        raise ValueError("num_nodes must be >= 1")
    if raw > MAX_PROFILE_NODES:
        raise ValueError(
            f"num_nodes must be <= {MAX_PROFILE_NODES}, got {raw} (a gang-scheduled "
            "block this large is almost always a typo; split the work instead)"
        )
    return raw


def _accelerator_problem(raw: JsonValue, resolved: JsonValue) -> str:
    if isinstance(resolved, dict):
        for name, count in resolved.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                return f"accelerator count for '{name}' must be a positive integer, got {count!r}"
        return ""
    if not isinstance(resolved, str):
        return ""
    match = _ACCELERATOR.match(resolved.strip())
    if match and int(match.group(2)) < 1:
        return f"accelerator count must be >= 1, got {match.group(2)}"
    if not match and isinstance(raw, str) and "{{" in raw:
        return "resolved accelerators must use '<type>:<positive-count>'"
    return ""


def validate_profiles(spec: WorkflowSpec, context: RunContext | None, issues: IssueCollector) -> None:
    """Check every resource profile against the global config (rule 14)."""
    if context is None:
        return
    for name, profile in spec.resources.items():
        path = ("resources", name)
        try:
            resolved = resolve_deep(profile, context.scope())
        except TokenError as exc:
            issues.add(path, f"resource profile '{name}': {exc}")
            continue
        assert isinstance(resolved, dict)
        problem = _accelerator_problem(profile.get("accelerators"), resolved.get("accelerators"))
        if problem:
            hint = "write accelerators: 'H100:1' (type:count) or {H100: 1}"
            issues.add((*path, "accelerators"), f"resource profile '{name}': {problem}", hint)
        try:
            profile_num_nodes(resolved)
        except ValueError as exc:
            hint = f"set num_nodes to a whole number of machines from 1 to {MAX_PROFILE_NODES}"
            issues.add((*path, "num_nodes"), f"resource profile '{name}': {exc}", hint)


def validate_executables(
    spec: WorkflowSpec, catalog: ToolCatalog, context: RunContext | None, issues: IssueCollector
) -> None:
    """Check each executable state's profile and multi-node contract (rule 15)."""
    for state in spec.states.values():
        if not state.is_executable():
            continue
        path = ("states", state.name)
        if state.resources not in spec.resources and state.resources != "default":
            issues.add(
                (*path, "resources"),
                f"unknown resource profile '{state.resources}'",
                did_you_mean(state.resources, spec.resources or {"default": None}),
            )
            continue
        entry = catalog.get(state.tool_ref) if state.tool_ref else None
        mode = entry.multi_node_mode if entry else state.multi_node_mode
        nodes = _state_num_nodes(spec, state, context)
        if nodes > 1 and mode is not MultiNodeMode.SHARDED:
            issues.add(
                (*path, "resources"),
                f"requests num_nodes={nodes}, but this executable is "
                "not declared sharded; identical workers could duplicate or race output "
                "writers",
                _SHARDED_HINT,
            )


def _state_num_nodes(spec: WorkflowSpec, state: State, context: RunContext | None) -> int:
    if context is None:
        return 1
    try:
        overlay = state_config(state, context, context.scope())
        profile = resolve_deep(profile_for(spec, state.resources), context.scope(config=overlay))
        return profile_num_nodes(profile) if isinstance(profile, dict) else 1
    except (TokenError, ValueError):
        return 1  # reported by the profile and resolvability rules


def validate_resolvable(
    spec: WorkflowSpec, catalog: ToolCatalog, context: RunContext, issues: IssueCollector
) -> None:
    """Resolve every state's tokens with every loop at iteration 1 (rule 20, reference §2.6)."""
    loops = {name: 1 for name, state in spec.states.items() if state.loop is not None}
    for state in spec.states.values():
        path = ("states", state.name)
        base = context.scope(loop_iterations=loops)
        try:
            overlay = state_config(state, context, base)
        except TokenError as exc:
            key = str(exc).split(":", 1)[0]
            issues.add((*path, *key.split(".", 1)), str(exc))
            continue
        scope = context.scope(loop_iterations=loops, config=overlay)
        if state.is_executable() and (not state.tool_ref or catalog.get(state.tool_ref)):
            _tolerating_state_tokens(
                partial(resolve_command, state, catalog, scope),
                issues,
                (*path, "toolRef" if state.tool_ref else "run"),
            )
        if state.trigger is not None and state.trigger.uri:
            try:
                resolve_text(state.trigger.uri, scope)
            except TokenError as exc:
                issues.add((*path, "trigger", "uri"), f"trigger.uri: {exc}")
        for field in ("inputs", "outputs"):
            _tolerating_state_tokens(
                partial(resolve_artifacts, getattr(state, field), scope), issues, (*path, field)
            )


def _tolerating_state_tokens(
    resolve: Callable[[], object], issues: IssueCollector, path: tuple[str, ...]
) -> None:
    try:
        resolve()
    except UnknownStateTokenError:
        return  # a state that has not run yet at validation time
    except TokenError as exc:
        issues.add(path, str(exc), token_hint(str(exc)))
