"""The most steps a walk of a spec can take, read from its structure and its loop bounds.

The reference stops every walk at max(256, 64 x states) steps to catch runaway
plans. With unbounded cycles refused by validation, that cap only ever stops
bounded loops: a 3-state spec with `loop: {max: 300}` cannot plan or run at all
(reference §13.20), and a long loop kept going by its decisions fails its run
mid-way, after its GPUs were paid for. npaflow's limit is the spec's own bound
(never below the reference's cap), up to MAX_WALK_STEPS; a spec whose loops can
take more is refused by validation, naming the loop, before anything launches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from npaflow.document.models import State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.graphs import find_cycle, postorder
from npaflow.tokens import resolve_config_int

#: The most steps npaflow walks for a spec whose own bound is larger than the reference's cap.
MAX_WALK_STEPS = 10_000


@dataclass(frozen=True)
class StepBound:
    """A spec's worst-case step count, and the loop that makes up most of it."""

    steps: int | None  # None: not bounded by structure alone (a sequence reached from inside itself)
    loop: str = ""  # the loop state whose iterations take the most steps ("" when none)
    loop_steps: int = 0


def reference_limit(spec: WorkflowSpec) -> int:
    """The reference engine's step cap: max(256, 64 x states)."""
    return max(256, 64 * len(spec.states))


def ceiling(spec: WorkflowSpec) -> int:
    """The most steps any walk of `spec` takes: MAX_WALK_STEPS, or the reference's cap when larger.

    A `forEach:` group's members count on top: its `max` bounds them already.
    """
    fanned = sum(s.for_each.max_items for s in spec.states.values() if s.for_each is not None)
    return max(reference_limit(spec), MAX_WALK_STEPS) + fanned


def walk_limit(spec: WorkflowSpec, config: Mapping[str, JsonValue]) -> int:
    """The most steps a walk of `spec` may take: its bound, never below the reference's cap."""
    bound = step_bound(spec, config).steps
    reference = reference_limit(spec)
    return reference if bound is None else min(max(reference, bound), ceiling(spec))


def step_bound(spec: WorkflowSpec, config: Mapping[str, JsonValue]) -> StepBound:
    """Steps of the longest walk: every loop to its max, every branch its longest way."""
    states = spec.states

    def reaches(name: str) -> list[str]:
        return _reaches(states[name], states)

    if find_cycle(states, reaches) or spec.initial not in states:
        return StepBound(steps=None)
    chain: dict[str, int] = {}
    loops: dict[str, int] = {}
    for name in postorder(states, reaches):
        state = states[name]
        own = _own_steps(state, chain, config)
        if own is None:
            return StepBound(steps=None)
        if state.loop is not None:
            loops[name] = own
        after = 0 if state.terminal else max((chain[t] for t in _successors(state, states)), default=0)
        chain[name] = own + after
    loop, loop_steps = max(loops.items(), key=lambda item: item[1], default=("", 0))
    return StepBound(steps=chain[spec.initial], loop=loop, loop_steps=loop_steps)


def _own_steps(state: State, chain: Mapping[str, int], config: Mapping[str, JsonValue]) -> int | None:
    """Steps the state itself takes (a sequence: its children's chains), before its `next`."""
    if state.for_each is not None:
        return state.for_each.max_items  # one member per item, at most `max`
    if state.parallel:
        return len(state.parallel)
    body = sum(chain.get(child, 0) for child in state.sequence) if state.sequence else 1
    if state.loop is None:
        return body
    try:
        bound = resolve_config_int(state.loop.max if state.loop.max is not None else 1, config)
    except TokenError:  # validation names the bad bound
        return None
    return max(bound, 1) * body


def _successors(state: State, states: Mapping[str, State]) -> list[str]:
    targets = {state.next} | {t.goto for t in state.transitions}
    return sorted(t for t in targets if t and t in states)


def _reaches(state: State, states: Mapping[str, State]) -> list[str]:
    """What the walk expands from `state`: its successors, and a sequence's children."""
    return _successors(state, states) + [child for child in state.sequence if child in states]
