"""Choosing where a branching state goes: its transitions in order, then its `next`."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from npaflow.context import is_config_truthy
from npaflow.decisions import evaluate_predicate
from npaflow.document.models import State
from npaflow.errors import PayloadError


class UnmatchedDecisionError(PayloadError):
    """A branching state's decision matched no transition and it has no `next`."""


def next_state(state: State, decision: str, config: Mapping[str, JsonValue], *, strict: bool) -> str | None:
    """The first transition whose `if` holds and whose `when` matches, else `next`.

    Strict (a run): a decision that matches nothing on a state without `next`
    fails with the decision and the expected values (DESIGN §4); a preview is lax.
    """
    for transition in state.transitions:
        if transition.if_ and not is_config_truthy(transition.if_, config):
            continue
        if not transition.when or evaluate_predicate(transition.when, decision):
            return transition.goto
    if state.next or not state.transitions or not strict:
        return state.next or None
    raise UnmatchedDecisionError(
        f"state {state.name}: decision {decision!r} matched no transition "
        f"({', '.join(t.when or '<always>' for t in state.transitions)}) and the state has "
        "no next; write one of the expected decisions or add 'next:'"
    )
