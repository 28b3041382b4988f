"""Typos that would silently change what runs: ignored keys and undeclared `--var` keys.

The reference engine ignores an unknown top-level key, so `intial: second` would
start the run at the first state in YAML order, and `--var treshold=80` would run
with the default threshold. npaflow says so before anything starts: an unknown
top-level key is a warning with a did-you-mean (the reference schema allows it,
so a spec that has one stays valid), as is the `next` or `transitions` of a
terminal state (which the reference ignores); a `--var` key nothing reads is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from npaflow.catalog import ToolCatalog
from npaflow.document.yaml_source import YamlSource
from npaflow.errors import SpecIssue
from npaflow.spec.issues import IssueCollector, did_you_mean

#: The document's own keys (reference §1.2); `x-` prefixed keys are extensions, never warned about.
TOP_LEVEL_KEYS = ("apiVersion", "kind", "metadata", "config", "run", "resources", "initial", "states")
#: Config keys the engine itself reads (reference §1.4), whether or not the spec declares them.
ENGINE_CONFIG_KEYS = ("bucket", "prefix", "decision_uri", "plan_assume_decision")
_CONFIG_TOKEN = re.compile(r"config\.([A-Za-z0-9_\-]+)")
#: The scopes `{{scope.key}}` tokens resolve (reference §2.2).
TOKEN_SCOPES = ("config", "run", "state", "loop")
#: Text shaped like a token of any scope.
_SCOPED_TEXT = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z0-9_.-]+)(?:\|[A-Za-z0-9_-]+)?\s*\}\}")


def top_level_warnings(source: YamlSource) -> list[SpecIssue]:
    """A warning for each top-level key the language does not have (with the closest known key)."""
    collector = IssueCollector(source)
    data = source.data if isinstance(source.data, dict) else {}
    for key in data:
        name = str(key)
        if name in TOP_LEVEL_KEYS or name.startswith("x-"):
            continue
        collector.add(
            (name,),
            f"unknown top-level key '{name}' is ignored",
            did_you_mean(name, TOP_LEVEL_KEYS) + " (prefix deliberate extensions with 'x-')",
        )
    return collector.issues


def terminal_warnings(source: YamlSource) -> list[SpecIssue]:
    """A warning for each `next` or `transitions` on a terminal state: the reference ignores them."""
    collector = IssueCollector(source)
    data = source.data if isinstance(source.data, dict) else {}
    states = data.get("states")
    for name, body in states.items() if isinstance(states, dict) else ():
        if not isinstance(body, dict) or body.get("terminal") is not True:
            continue
        for key in ("next", "transitions"):
            if key in body:
                collector.add(
                    ("states", str(name), key),
                    "is ignored: the state is terminal",
                    f"drop 'terminal: true' to go on, or drop '{key}'",
                )
    return collector.issues


def token_warnings(source: YamlSource) -> list[SpecIssue]:
    """A warning for each `{{scope.key}}` whose scope npaflow does not resolve: it stays as written.

    The reference leaves such text untouched (`{{params.x}}`, `{{conifg.x}}`), so a
    misspelt scope would reach the job's command verbatim.
    """
    collector = IssueCollector(source)
    items = _item_names(source.data)
    stack: list[tuple[tuple[str | int, ...], object]] = [((), source.data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*path, str(k)), v) for k, v in value.items() if not str(k).startswith("x-"))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
        elif isinstance(value, str):
            member = str(path[1]) if len(path) > 1 and path[0] == "states" else ""
            scopes = (*TOKEN_SCOPES, items[member]) if member in items else TOKEN_SCOPES
            for scope, key in _SCOPED_TEXT.findall(value):
                if scope not in scopes:
                    collector.add(
                        path,
                        f"'{{{{{scope}.{key}}}}}' is left as written: npaflow resolves only "
                        f"{', '.join(scopes)} tokens",
                        f"a state's params overlay its config: write '{{{{config.{key}}}}}'"
                        if scope == "params"
                        else did_you_mean(scope, scopes, "scopes"),
                    )
    return sorted(collector.issues, key=lambda issue: (issue.line or 0, issue.column or 0))


def _item_names(data: object) -> dict[str, str]:
    """Each fan-out template state -> the name its items go by (`forEach.as`): its own tokens."""
    states = data.get("states") if isinstance(data, dict) else None
    names: dict[str, str] = {}
    for body in states.values() if isinstance(states, dict) else ():
        fan = body.get("forEach") if isinstance(body, dict) else None
        members = body.get("parallel") if isinstance(body, dict) else None
        if isinstance(fan, dict) and isinstance(fan.get("as"), str) and isinstance(members, list):
            names.update({str(member): fan["as"] for member in members})
    return names


def config_keys_read(text: str, declared: Iterable[str], catalog: ToolCatalog) -> set[str]:
    """Every config key something reads: declared, used by a token, a tool's, or the engine's own."""
    keys = {*declared, *ENGINE_CONFIG_KEYS, *_CONFIG_TOKEN.findall(text)}
    for tool in catalog.tools.values():
        keys.update(tool.config_defaults)
        keys.update(_CONFIG_TOKEN.findall(tool.model_dump_json()))
    return keys


def unknown_var_issues(
    overrides: Mapping[str, str], source: YamlSource, text: str, catalog: ToolCatalog
) -> list[SpecIssue]:
    """An error for each `--var` key that no config entry, token, tool or engine rule reads."""
    data = source.data if isinstance(source.data, dict) else {}
    config = data.get("config")
    declared = [str(k) for k in config] if isinstance(config, dict) else []
    known = config_keys_read(text, declared, catalog)
    issues = []
    for key in overrides:
        if key in known:
            continue
        hint = did_you_mean(key, sorted(declared) or sorted(known), kind="config keys")
        issues.append(
            SpecIssue(
                file=source.file,
                field=f"--var {key}",
                message=f"--var {key}: the spec's config has no key '{key}' and nothing reads it",
                hint=f"{hint} (or pass --allow-new-vars, allow_new_vars in a raw workflow input, "
                "to add a new config key on purpose)",
            )
        )
    return issues
