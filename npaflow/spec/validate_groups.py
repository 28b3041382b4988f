"""Parallel-group rules (reference §3 rule 13, `_validate_parallel_group`)."""

from __future__ import annotations

from npaflow.context import RunContext
from npaflow.document.models import State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.spec.field_hints import NUMBER_TOKEN_HINT
from npaflow.spec.issues import IssueCollector, did_you_mean
from npaflow.tokens import resolve_config_int

#: Upper bound on a group's batch size; larger values are almost always typos.
MAX_GROUP_CONCURRENCY = 64


def validate_group(
    spec: WorkflowSpec, state: State, context: RunContext | None, issues: IssueCollector
) -> None:
    """Check a state's parallel-group fields, or their absence."""
    path = ("states", state.name)
    if not state.parallel:
        if state.parallel_count is not None:
            issues.add(
                (*path, "parallelCount"),
                "parallelCount requires a parallel group",
                "remove parallelCount or add 'parallel: [...]'",
            )
        if state.max_concurrency is not None:
            issues.add(
                (*path, "maxConcurrency"),
                "maxConcurrency requires a parallel group",
                "remove maxConcurrency or add 'parallel: [...]'",
            )
        return
    if state.sequence:
        issues.add((*path, "parallel"), "set either sequence or parallel, not both")
    if state.loop is not None:
        issues.add(
            (*path, "loop"),
            "loop is not supported directly on a parallel group; wrap the "
            "group in a sequence state that carries the loop",
        )
    if state.is_executable():
        issues.add(
            (*path, "parallel"),
            "a parallel group cannot also declare run/toolRef",
            "move the command into a member state",
        )
    if len(set(state.parallel)) != len(state.parallel):
        issues.add((*path, "parallel"), "duplicate parallel member", "list each member once")
    _validate_bound(state, "parallelCount", state.parallel_count, context, issues)
    seen: set[str] = set()
    for index, member in enumerate(state.parallel):
        if member not in seen:
            seen.add(member)
            _validate_member(spec, state, member, index, issues)
    _validate_bound(state, "maxConcurrency", state.max_concurrency, context, issues)


def _validate_member(
    spec: WorkflowSpec, group: State, member: str, index: int, issues: IssueCollector
) -> None:
    path = ("states", group.name, "parallel", index)
    body = spec.states.get(member)
    if body is None:
        issues.add(path, f"unknown parallel member '{member}'", did_you_mean(member, spec.states, "states"))
    elif member == group.name:
        issues.add(path, "parallel member cannot be itself")
    elif body.sequence or body.parallel or body.loop is not None:
        issues.add(path, f"parallel member '{member}' must be a leaf state (no sequence, parallel, or loop)")
    elif body.terminal:
        issues.add(
            path,
            f"parallel member '{member}' cannot be terminal",
            "put 'next: <terminal state>' on the group instead",
        )
    elif body.next or body.transitions:
        issues.add(
            path,
            f"parallel member '{member}' must not declare next/transitions; the group owns the barrier edge",
            "move the edge to the group's 'next'",
        )


def _validate_bound(
    state: State, label: str, raw: int | str | None, context: RunContext | None, issues: IssueCollector
) -> None:
    if raw is None or context is None:
        return
    path = ("states", state.name, label)
    try:
        value = resolve_config_int(raw, context.config, what=label)
    except TokenError as exc:
        issues.add(path, str(exc), NUMBER_TOKEN_HINT)
        return
    members = len(state.parallel)
    if label == "parallelCount":
        if value != members:
            issues.add(
                path,
                f"parallelCount resolves to {value}, but the group declares {members} "
                "members; parallelCount must equal the member count",
                "fix the member list or parallelCount",
            )
        return
    if value < 1:
        issues.add(
            path, f"maxConcurrency must be >= 1, got {value}", "set how many members run at once, from 1 up"
        )
    elif value > MAX_GROUP_CONCURRENCY:
        issues.add(
            path,
            f"maxConcurrency must be <= {MAX_GROUP_CONCURRENCY}, got {value} (the "
            f"effective value is min(maxConcurrency, {members} members); a larger bound is "
            "almost always a typo)",
        )
