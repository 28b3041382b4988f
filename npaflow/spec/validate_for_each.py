"""A `forEach:` group's rules: one member template, outputs per item, a list something produces."""

from __future__ import annotations

from npaflow.context import RunContext, state_config
from npaflow.document.models import State, WorkflowSpec
from npaflow.errors import TokenError
from npaflow.fanout import has_item_token
from npaflow.spec.field_hints import token_hint
from npaflow.spec.issues import IssueCollector
from npaflow.tokens import UnknownStateTokenError, resolve_text

_GROUP_HINT = "write parallel: [member] and forEach: {items: ..., as: item} on the group"


def validate_for_each(
    spec: WorkflowSpec, state: State, issues: IssueCollector, context: RunContext | None = None
) -> None:
    """Check a state's `forEach:` against its group, its template and the spec's producers."""
    fan = state.for_each
    if fan is None:
        return
    path = ("states", state.name, "forEach")
    if not state.parallel:
        issues.add(path, "forEach fans out a parallel group; this state has no 'parallel:'", _GROUP_HINT)
        return
    if len(state.parallel) != 1:
        issues.add(
            ("states", state.name, "parallel"),
            f"a forEach group has one member template, got {len(state.parallel)} members",
            "list one state under parallel: it runs once per item",
        )
        return
    if state.parallel_count is not None:
        issues.add(
            ("states", state.name, "parallelCount"),
            "parallelCount does not apply to a forEach group (its members come from the list)",
            "remove parallelCount; bound the list with forEach.max",
        )
    template = spec.states.get(state.parallel[0])
    if template is not None:
        _check_outputs(template, fan.name, issues)
    if fan.items and context is not None and not _tokens_resolve(spec, state, fan.items, context, issues):
        return  # a mistyped token would otherwise read as "nothing writes the list"
    if fan.items and not _produced(spec, state, fan.items):
        issues.add(
            (*path, "items"),
            f"forEach.items {fan.items!r} is not an output any upstream state declares, nor under a "
            "trigger's prefix: nothing the run does before the group writes it",
            "declare it in the outputs of the state that writes the list (e.g. outputs: [{uri: "
            f"'{fan.items}', schema: items}}]), or use {{{{state.<writer>.uri}}}}",
        )


def _tokens_resolve(
    spec: WorkflowSpec, group: State, items: str, context: RunContext, issues: IssueCollector
) -> bool:
    """False (and said) when forEach.items names a run, config or loop value nothing defines."""
    loops = {name: 1 for name, state in spec.states.items() if state.loop is not None}
    try:
        overlay = state_config(group, context, context.scope(loop_iterations=loops))
        resolve_text(items, context.scope(loop_iterations=loops, config=overlay))
    except UnknownStateTokenError:
        return True  # a state's output: checked against the producers below
    except TokenError as exc:
        issues.add(("states", group.name, "forEach", "items"), f"forEach.items: {exc}", token_hint(str(exc)))
        return False
    return True


def _check_outputs(template: State, name: str, issues: IssueCollector) -> None:
    for index, artifact in enumerate(template.outputs):
        if not has_item_token(artifact.uri, name):
            issues.add(
                ("states", template.name, "outputs", index, "uri"),
                f"output {artifact.uri!r} of fan-out member '{template.name}' names no item, so "
                "every member would write over the others",
                f"put the item in it, e.g. '.../{{{{{name}.id}}}}/out/' (or {{{{{name}}}}} for scalar items)",
            )


def _produced(spec: WorkflowSpec, group: State, uri: str) -> bool:
    """True when an upstream state writes `uri`, or it lies under a trigger's prefix.

    An upstream state declares it (or a directory above it) in its outputs, or the
    items name its output by token (`{{state.X.uri}}`).
    """
    text = uri.strip()
    if any(
        s.trigger is not None and s.trigger.uri and text.startswith(s.trigger.uri)
        for s in spec.states.values()
    ):
        return True
    for state in spec.states.values():
        if state.name == group.name or state.name in group.parallel:
            continue
        names = text.startswith(f"{{{{state.{state.name}.") and bool(state.outputs)
        declares = any(
            a.uri.strip() == text or (a.uri.strip().endswith("/") and text.startswith(a.uri.strip()))
            for a in state.outputs
        )
        if (names or declares) and group.name in _downstream(spec, state.name):
            return True
    return False


def _downstream(spec: WorkflowSpec, start: str) -> set[str]:
    """Every state the walk can reach after `start` (its edges, and its containers' onward edges)."""
    parents = {child: s for s in spec.states.values() for child in (*s.sequence, *s.parallel)}
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        state = spec.states.get(name)
        if state is None:
            continue
        onward = [state.next, *(t.goto for t in state.transitions), *state.sequence, *state.parallel]
        parent = parents.get(name)
        if parent is not None:
            siblings = list(parent.sequence)
            later = siblings[siblings.index(name) + 1 :] if name in siblings else []
            onward += later[:1] or [parent.name]  # the next sibling, else on past the container
        for target in onward:
            if target and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen
