"""Rules for `cache:` (npaflow's extension): only a state that runs and declares what it writes can be cached.

A hit launches nothing and copies the cached outputs to the state's declared
output URIs, so what downstream states and decisions read must be among them.
"""

from __future__ import annotations

from npaflow.document.models import State, WorkflowSpec
from npaflow.spec.issues import IssueCollector


def validate_cache(spec: WorkflowSpec, issues: IssueCollector) -> None:
    """Report every cached state that a hit could not stand in for."""
    for state in spec.states.values():
        if state.cache is not None:
            _validate_cached_state(state, issues)


def _validate_cached_state(state: State, issues: IssueCollector) -> None:
    path = ("states", state.name, "cache")
    if not state.is_executable():
        issues.add(
            path,
            "only a state that runs a command or a tool can be cached",
            "put cache: on the states that run (a group's or sequence's members), or remove it",
        )
        return
    if not state.outputs:
        issues.add(
            path,
            "a state with no declared outputs cannot be cached: a hit would have nothing to reuse",
            "declare what it writes, e.g. outputs: [{uri: 's3://bucket/{{run.id}}/"
            f"{state.name}/'}}], or remove cache:",
        )
        return
    reads_decision = state.writes_decision or bool(state.transitions)
    if reads_decision and not any(artifact.is_decision() for artifact in state.outputs):
        issues.add(
            path,
            "a cached state whose decision is read must declare the decision artifact as an output "
            "(a hit copies only declared outputs)",
            "add outputs: [{uri: '<where it writes decision.json>', schema: decision}]",
        )
