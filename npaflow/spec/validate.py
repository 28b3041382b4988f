"""`validate_spec`: the graph rules of reference §3 (10–13, 17–19) plus our divergences.

Resource and resolvability rules (14, 15, 20) live in `validate_contracts`.
"""

from __future__ import annotations

from npaflow.catalog.models import ToolCatalog
from npaflow.context import ConfigTokenError, RunContext, build_run_context
from npaflow.decisions import PREDICATES, is_known_predicate
from npaflow.document.models import SUPPORTED_API_VERSIONS, State, WorkflowSpec
from npaflow.document.yaml_source import YamlSource
from npaflow.errors import SpecIssue, TokenError
from npaflow.graphs import deepest, find_cycle
from npaflow.ids import RunId
from npaflow.ledger_paths import bucket_problem, prefix_problem
from npaflow.spec.field_hints import NUMBER_TOKEN_HINT
from npaflow.spec.issues import IssueCollector, did_you_mean
from npaflow.spec.validate_cache import validate_cache
from npaflow.spec.validate_contracts import (
    validate_executables,
    validate_profiles,
    validate_resolvable,
)
from npaflow.spec.validate_for_each import validate_for_each
from npaflow.spec.validate_groups import validate_group
from npaflow.step_bound import ceiling, step_bound
from npaflow.tokens import resolve_config_int

VALIDATE_RUN_ID = RunId("validate-run")
_PREDICATE_HINT = "known predicates: " + ", ".join(sorted(PREDICATES))


def validate_spec(
    spec: WorkflowSpec, catalog: ToolCatalog, *, source: YamlSource, prior: list[SpecIssue] | None = None
) -> None:
    """Check every rule and raise one SpecError listing all problems (and `prior` ones).

    Raises:
        SpecError: at least one rule failed.
    """
    issues = IssueCollector(source)
    issues.issues.extend(prior or [])
    if spec.api_version not in SUPPORTED_API_VERSIONS:
        issues.add(
            ("apiVersion",),
            f"unsupported apiVersion '{spec.api_version}' (expected one of {list(SUPPORTED_API_VERSIONS)})",
            f"use '{SUPPORTED_API_VERSIONS[0]}'",
        )
    if spec.kind != "Workflow":
        issues.add(("kind",), f"unsupported kind '{spec.kind}' (expected Workflow)")
    if spec.initial not in spec.states:
        issues.add(
            ("initial",),
            f"initial state '{spec.initial}' is not defined",
            did_you_mean(spec.initial, spec.states, "states"),
        )
    context = _context_or_issue(spec, catalog, issues)
    if context is not None:
        _validate_ledger_location(context, issues)
    for state in spec.states.values():
        _validate_state(spec, state, catalog, context, issues)
        validate_for_each(spec, state, issues, context)
    validate_profiles(spec, context, issues)
    validate_executables(spec, catalog, context, issues)
    validate_cache(spec, issues)
    _validate_needs_acyclic(spec, issues)
    _validate_sequence_nesting(spec, issues)
    if not any(state.terminal for state in spec.states.values()):
        issues.add(
            ("states",),
            "workflow must declare at least one terminal: true state",
            "mark the final state with 'terminal: true'",
        )
    _validate_bounded_control_flow(spec, issues)
    if context is not None:
        _validate_step_bound(spec, context, issues)
        validate_resolvable(spec, catalog, context, issues)
    issues.raise_if_any()


def _validate_step_bound(spec: WorkflowSpec, context: RunContext, issues: IssueCollector) -> None:
    """A spec whose loops can take more steps than a walk takes is refused before it launches."""
    bound = step_bound(spec, context.config)
    limit = ceiling(spec)
    if bound.steps is None or bound.steps <= limit or not bound.loop:
        return
    issues.add(
        ("states", bound.loop, "loop", "max"),
        f"with every loop at its max the run can take {bound.steps:,} steps ({bound.loop_steps:,} in "
        f"this loop); a run takes at most {limit:,}",
        "lower loop.max (a loop with 'until' still ends early when its decision says so), "
        "or split the work into runs",
    )


def _validate_ledger_location(context: RunContext, issues: IssueCollector) -> None:
    """`config.prefix` and `config.bucket` name the ledger: they must stay under its root."""
    prefix = str(context.config.get("prefix") or "").strip()
    if prefix and (problem := prefix_problem(prefix)):
        issues.add(
            ("config", "prefix"),
            f"config.prefix {prefix[:120]!r} {problem}",
            "use a relative path such as 'team/{{run.id}}' (no leading '/', no '..')",
        )
    bucket = str(context.config.get("bucket") or "").strip()
    if bucket and (problem := bucket_problem(bucket)):
        issues.add(
            ("config", "bucket"),
            f"config.bucket {bucket[:120]!r} {problem}",
            "name the bucket only; put any path into config.prefix",
        )


def _context_or_issue(spec: WorkflowSpec, catalog: ToolCatalog, issues: IssueCollector) -> RunContext | None:
    try:
        return build_run_context(spec, catalog, VALIDATE_RUN_ID)
    except ConfigTokenError as exc:
        issues.add(
            ("config", exc.key),
            f"config.{exc.key}: {exc}",
            "config values may use only {{config.*}} and {{run.*}}; define the key "
            "or move state/loop tokens into params",
        )
        return None


def _validate_state(
    spec: WorkflowSpec, state: State, catalog: ToolCatalog, context: RunContext | None, issues: IssueCollector
) -> None:
    path = ("states", state.name)
    known = spec.states
    if state.loop and state.loop.until and not is_known_predicate(state.loop.until):
        issues.add((*path, "loop", "until"), f"unknown loop.until '{state.loop.until}'", _PREDICATE_HINT)
    for index, transition in enumerate(state.transitions):
        where = (*path, "transitions", index)
        if transition.when and not is_known_predicate(transition.when):
            issues.add((*where, "when"), f"unknown transition.when '{transition.when}'", _PREDICATE_HINT)
        if transition.goto not in known:
            issues.add(
                (*where, "goto"),
                f"transition goto unknown state '{transition.goto}'",
                did_you_mean(transition.goto, known, "states"),
            )
    if state.next and state.next not in known:
        issues.add(
            (*path, "next"),
            f"next names unknown state '{state.next}'",
            did_you_mean(state.next, known, "states"),
        )
    for name in state.needs:
        if name not in known:
            issues.add((*path, "needs"), f"unknown needs '{name}'", did_you_mean(name, known, "states"))
    for name in state.sequence:
        if name not in known:
            issues.add((*path, "sequence"), f"unknown sequence '{name}'", did_you_mean(name, known, "states"))
    validate_group(spec, state, context, issues)
    _validate_trigger_and_work(state, catalog, issues)
    if state.loop is not None and context is not None:
        try:
            bound = resolve_config_int(state.loop.max if state.loop.max is not None else 1, context.config)
        except TokenError as exc:
            issues.add((*path, "loop", "max"), str(exc), NUMBER_TOKEN_HINT)
        else:
            if bound < 1:
                issues.add(
                    (*path, "loop", "max"),
                    f"loop.max must be >= 1, got {bound}",
                    "a loop runs its body at least once: set loop.max to 1 or more, or remove loop",
                )


def _validate_trigger_and_work(state: State, catalog: ToolCatalog, issues: IssueCollector) -> None:
    path = ("states", state.name)
    if state.trigger is not None:
        if not state.trigger.uri.strip():
            issues.add(
                (*path, "trigger", "uri"),
                "trigger.uri is required",
                "set trigger.uri to the prefix to watch, e.g. s3://bucket/inbox/",
            )
        if not state.is_executable():
            issues.add(
                (*path, "trigger"),
                "trigger requires run or toolRef on the same state (the trigger gates that state's work)",
            )
    if state.tool_ref and catalog.get(state.tool_ref) is None:
        close = catalog.close_matches(state.tool_ref)
        issues.add(
            (*path, "toolRef"),
            f"unknown toolRef '{state.tool_ref}'",
            f"did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else "add it to a catalog passed with --catalog, or use run:",
        )
    does_work = state.sequence or state.parallel or state.is_executable()
    if not state.terminal and not does_work and not state.transitions and not state.next:
        issues.add(
            path,
            "must set run, toolRef, sequence, parallel, transitions, next, or terminal",
            "give the state work (run/toolRef), children, an edge, or 'terminal: true'",
        )
    run = state.run
    if (
        run is not None
        and not run.shell.strip()
        and not run.argv
        and not state.tool_ref
        and not state.sequence
    ):
        issues.add((*path, "run"), "empty run block", "set run.shell or run.argv")


#: Sequences nest at most this deep (the walk recurses once per level).
MAX_SEQUENCE_DEPTH = 64


def _validate_needs_acyclic(spec: WorkflowSpec, issues: IssueCollector) -> None:
    cycle = find_cycle(spec.states, lambda name: (n for n in spec.states[name].needs if n in spec.states))
    if cycle:
        issues.add(("states", cycle[-1], "needs"), f"cycle detected in needs among states (at {cycle[-1]})")


def _validate_sequence_nesting(spec: WorkflowSpec, issues: IssueCollector) -> None:
    def children(name: str) -> list[str]:
        return [child for child in spec.states[name].sequence if child in spec.states]

    sequences = [name for name, state in spec.states.items() if state.sequence]
    cycle = find_cycle(sequences, children)
    if cycle:
        issues.add(
            ("states", cycle[0], "sequence"),
            "sequence contains itself: " + " -> ".join(cycle),
            "a sequence lists states to run, never itself or a sequence that contains it; "
            "to repeat, give the sequence 'loop: {max: N}'",
        )
        return
    depth, where = deepest(sequences, children)
    if depth > MAX_SEQUENCE_DEPTH:
        issues.add(
            ("states", where, "sequence"),
            f"sequences nest {depth} levels deep here (at most {MAX_SEQUENCE_DEPTH})",
            "flatten the nesting, e.g. chain states with 'next'",
        )


def _validate_bounded_control_flow(spec: WorkflowSpec, issues: IssueCollector) -> None:
    def successors(name: str) -> list[str]:
        state = spec.states[name]
        targets = {state.next} | {t.goto for t in state.transitions}
        return sorted(t for t in targets if t in spec.states)

    cycle = find_cycle(spec.states, successors)
    if cycle:
        issues.add(
            ("states", cycle[0]),
            "unbounded control-flow cycle detected: " + " -> ".join(cycle),
            "loop by making the states children of a sequence with 'loop: {max: N}' "
            "and 'goto' the sequence state",
        )
