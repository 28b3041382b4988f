"""Loading the spec named on the command line: catalogs, --var, typo checks, decision sources.

Kept apart from the argument definitions (npaflow/cli/options.py) because it
imports the spec, catalog and plan models, which only the spec commands need.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from npaflow.catalog import ToolCatalog, load_catalogs
from npaflow.context import build_run_context
from npaflow.decisions import assumption_problem
from npaflow.document.text_file import read_document
from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import SpecError, SpecIssue, UsageError
from npaflow.ids import RunId
from npaflow.options.spec import PreviewOptions, SpecOptions
from npaflow.runtime.environment import EnvVar
from npaflow.spec import WorkflowSpec, load_spec_from_str
from npaflow.spec.decision_sources import decision_source_issues
from npaflow.spec.typos import terminal_warnings, token_warnings, top_level_warnings, unknown_var_issues

if TYPE_CHECKING:  # the plan's modules load only for the commands that preview one
    from npaflow.plan import AssumedItems, ExecutionPlan


def parse_vars(items: Sequence[str]) -> dict[str, str]:
    """Turn `K=V` items into a dict; the value is whatever follows the first `=`.

    Raises:
        UsageError: an item has no `=` or an empty key.
    """
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--var expects KEY=VALUE, got {item!r} (example: --var bucket=my-bucket)")
        result[key.strip()] = value
    return result


def catalog_paths(cli_paths: Sequence[str]) -> list[str]:
    """Return catalog paths from NPAFLOW_CATALOG followed by --catalog (later wins)."""
    from_env = [p for p in os.environ.get(EnvVar.CATALOG.value, "").split(os.pathsep) if p.strip()]
    return [*from_env, *cli_paths]


def load_catalog_for(options: SpecOptions) -> ToolCatalog:
    """Load the built-in catalog plus NPAFLOW_CATALOG and --catalog paths."""
    return load_catalogs(catalog_paths(options.catalog))


def load_spec_for(options: SpecOptions) -> tuple[WorkflowSpec, ToolCatalog]:
    """Load and validate the spec named on the command line, with --var merged (see load_spec_and_text)."""
    spec, catalog, _ = load_spec_and_text(options)
    return spec, catalog


def load_spec_and_text(options: SpecOptions) -> tuple[WorkflowSpec, ToolCatalog, str]:
    """The spec named on the command line, validated with --var merged, and the text it was read from.

    The file is read once: what a run is given is exactly what was validated.

    Typos that would silently change what runs are caught here, for every command:
    an unknown top-level key, or a `next` on a terminal state, is a warning (the reference
    ignores both), a `--var` key
    that nothing reads is an error unless --allow-new-vars says it is meant.

    Raises:
        SpecError: the spec is invalid, or a --var key is unknown.
    """
    catalog = load_catalog_for(options)
    overrides = parse_vars(options.var)
    text = read_document(options.spec)
    spec = load_spec_from_str(text, options.spec, catalog=catalog, overrides=overrides)
    source = parse_yaml(text, options.spec)
    for issue in [*top_level_warnings(source), *terminal_warnings(source), *token_warnings(source)]:
        print(f"npaflow: warning: {issue.render()}", file=sys.stderr)
    if overrides and not options.allow_new_vars:
        refs = {state.tool_ref for state in spec.states.values() if state.tool_ref}
        used = ToolCatalog(tools={ref: catalog.tools[ref] for ref in refs if ref in catalog.tools})
        issues = unknown_var_issues(overrides, source, text, used)
        if issues:
            raise SpecError(issues)
    return spec, catalog, text


def decision_gaps_for(options: SpecOptions, spec: WorkflowSpec, catalog: ToolCatalog) -> list[SpecIssue]:
    """The states of the spec on the command line that would decide with no artifact."""
    config = build_run_context(spec, catalog, RunId("validate-run")).config
    return decision_source_issues(spec, config, read_document(options.spec), options.spec)


def require_decision_sources(options: SpecOptions, spec: WorkflowSpec, catalog: ToolCatalog) -> None:
    """A run decides only from artifacts, unless --assume-decision makes the fallback explicit.

    Raises:
        UsageError: --assume-decision names no known decision.
        SpecError: a state would branch or end a loop with no decision source.
    """
    check_assumption(options.assume_decision)
    if not options.assume_decision:
        issues = decision_gaps_for(options, spec, catalog)
        if issues:
            raise SpecError(issues)


def warn_decision_sources(options: SpecOptions, spec: WorkflowSpec, catalog: ToolCatalog) -> None:
    """Previews accept such specs, but say that a run would refuse them."""
    for issue in decision_gaps_for(options, spec, catalog):
        print(
            f"npaflow: warning: {issue.render()}; `npaflow submit` refuses this spec "
            "unless --assume-decision is given",
            file=sys.stderr,
        )


def check_assumption(value: str) -> None:
    """Raises UsageError when --assume-decision names no known decision."""
    if problem := assumption_problem(value or ""):
        raise UsageError(f"--assume-decision: {problem}")


def preview_plan(options: PreviewOptions, spec: WorkflowSpec, catalog: ToolCatalog) -> ExecutionPlan:
    """The plan `plan-spec` and `render` preview: the flags' run id, assumption and cap."""
    from npaflow.plan import build_plan

    return build_plan(
        spec,
        catalog,
        run_id=options.run_id,
        assume_decision=options.assume_decision,
        cap=max(0, options.max_concurrency),
        items=assumed_items(options.assume_items),
    )


def assumed_items(path: str | None) -> AssumedItems:
    """`--assume-items FILE`: a JSON list, or a list per group name (None without the flag).

    Raises:
        UsageError: the file cannot be read or is not such JSON.
    """
    if path is None:
        return None
    from npaflow.errors import UsageError

    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--assume-items {path}: {exc}; give a file holding a JSON list") from None
    lists = document.values() if isinstance(document, dict) else [document]
    if not all(isinstance(items, list) for items in lists):
        raise UsageError(f'--assume-items {path}: write a JSON list, or {{"group": [...]}} per group')
    return document  # type: ignore[no-any-return]
