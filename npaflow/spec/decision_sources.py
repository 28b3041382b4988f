"""States that need a decision at runtime but name nowhere to read it from.

The walk reads a decision where a state branches (`transitions`) or a loop
ends (`until`). With no artifact to read, the only answer would be the
planning assumption, a branch nobody decided; so runs refuse such specs unless
the assumption is explicit (`--assume-decision`), while `validate-spec` and
`plan-spec` only warn (previews may assume). The rules mirror the walker in
npaflow/traversal/walk.py: what it reads is what must be declared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from npaflow.document.models import State, WorkflowSpec
from npaflow.document.yaml_source import KeyPath, parse_yaml
from npaflow.errors import SpecIssue
from npaflow.spec.issues import IssueCollector

_ADD_SOURCE = (
    "declare where the decision is written: params.decision_uri (or config.decision_uri), or an "
    "output whose schema names 'decision'; or pass --assume-decision to make the fallback explicit"
)


@dataclass(frozen=True)
class DecisionGap:
    """One place the walk would decide without an artifact."""

    state: str
    path: KeyPath  # where the source belongs (or the field that needs the decision)
    message: str  # why a decision is read there, and that nothing declares where


def decision_gaps(spec: WorkflowSpec, config: Mapping[str, JsonValue]) -> list[DecisionGap]:
    """Every state that reads a decision with no declared source, in spec order."""
    gaps: list[DecisionGap] = []
    for state in spec.states.values():
        if state.parallel:
            continue
        if state.sequence:
            if state.loop is not None and state.loop.until:
                gaps.extend(_sequence_loop_gaps(spec, state, config))
        elif state.loop is not None:
            if (state.loop.until or state.transitions) and not _declares_own(state):
                need = "its loop.until reads" if state.loop.until else "its transitions read"
                gaps.append(DecisionGap(state.name, ("states", state.name, "loop"), _missing(need)))
        elif state.transitions and not state.terminal and not _has_source(state, config):
            gaps.append(
                DecisionGap(
                    state.name, ("states", state.name, "transitions"), _missing("its transitions read")
                )
            )
    return gaps


def decision_source_issues(
    spec: WorkflowSpec, config: Mapping[str, JsonValue], text: str, file: str
) -> list[SpecIssue]:
    """The gaps as located issues (file, line, state, field) for `submit` and the run's load."""
    gaps = decision_gaps(spec, config)
    if not gaps:
        return []
    issues = IssueCollector(parse_yaml(text, file))
    for gap in gaps:
        issues.add(gap.path, gap.message, _ADD_SOURCE)
    return issues.issues


def _sequence_loop_gaps(
    spec: WorkflowSpec, loop: State, config: Mapping[str, JsonValue]
) -> list[DecisionGap]:
    """A sequence loop's until reads a member's branch decision, else its last decision writer's."""
    if any(spec.states[name].transitions for name in _members(spec, loop)):
        return []  # the branching member decides (and is checked itself)
    writer = next((spec.states[n] for n in reversed(loop.sequence) if spec.states[n].writes_decision), None)
    if writer is None:
        return [
            DecisionGap(
                loop.name,
                ("states", loop.name, "loop", "until"),
                "loop.until reads a decision, but no member of the loop branches or writes one "
                "(writesDecision: true), so nothing would decide when the loop ends",
            )
        ]
    if _has_source(writer, config):
        return []
    return [
        DecisionGap(
            writer.name,
            ("states", writer.name, "writesDecision"),
            _missing(
                f"loop {loop.name}'s until reads the decision this state writes (writesDecision), so it"
            ),
        )
    ]


def _missing(need: str) -> str:
    return f"{need} a decision, but the state declares no decision source"


def _members(spec: WorkflowSpec, state: State) -> list[str]:
    """The loop body's states, through nested sequences."""
    seen: list[str] = []
    pending = list(state.sequence)
    while pending:
        name = pending.pop()
        if name in seen or name not in spec.states:
            continue
        seen.append(name)
        pending.extend(spec.states[name].sequence)
    return seen


def _declares_own(state: State) -> bool:
    """A single-state loop reads only its own decision output or params.decision_uri."""
    return any(a.is_decision() for a in state.outputs) or bool(state.params.get("decision_uri"))


def _has_source(state: State, config: Mapping[str, JsonValue]) -> bool:
    if any(a.is_decision() for a in state.outputs):
        return True
    if "decision_uri" in state.params:
        return bool(str(state.params["decision_uri"] or "").strip())
    return bool(str(config.get("decision_uri") or "").strip())
