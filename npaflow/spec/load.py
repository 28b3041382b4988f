"""Loading a spec document: YAML → shape checks → models → validation.

Mirrors reference §1.1: existence, YAML, the schema walk, parsing, then every
`validate_spec` rule; all problems of a document are reported together.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from npaflow.catalog.models import ToolCatalog
from npaflow.document.models import ExecutionMode, Metadata, State, WorkflowSpec
from npaflow.document.text_file import read_document
from npaflow.document.yaml_source import KeyPath, YamlSource, parse_yaml
from npaflow.errors import SpecIssue
from npaflow.spec.issues import IssueCollector, did_you_mean
from npaflow.spec.parse_state import StateParser
from npaflow.spec.validate import validate_spec

_METADATA_KEYS = {"name", "description", "namespace", "labels", "executionMode"}
_OBJECT_KEYS = ("config", "run", "resources", "states")


def load_spec_from_str(
    text: str, file: str = "<spec>", *, catalog: ToolCatalog, overrides: dict[str, str] | None = None
) -> WorkflowSpec:
    """Parse and validate a spec from YAML text, with `--var` overrides merged.

    Raises:
        SpecError: the document is invalid; carries every issue found.
    """
    source = parse_yaml(text, file)
    spec, parse_issues = parse_spec(source, overrides)
    validate_spec(spec, catalog, source=source, prior=parse_issues)
    return spec


def load_spec_from_path(
    path: str | Path, *, catalog: ToolCatalog, overrides: dict[str, str] | None = None
) -> WorkflowSpec:
    """Read, parse and validate a spec file.

    Raises:
        SpecError: the file is missing or the document is invalid.
    """
    return load_spec_from_str(read_document(path), str(path), catalog=catalog, overrides=overrides)


def parse_spec(
    source: YamlSource, overrides: dict[str, str] | None = None
) -> tuple[WorkflowSpec, list[SpecIssue]]:
    """Check the document's shape and build the models (reference §1.1 steps 2–4).

    Field-level problems inside state bodies are returned, not raised, so that
    validation can report them together with its own findings.

    Raises:
        SpecError: the document's shape is wrong or a state body is not a mapping.
    """
    issues = IssueCollector(source)
    data = _top_level(source.data, issues)
    _refuse_nul(data, overrides or {}, issues)
    metadata = _parse_metadata(data.get("metadata"), issues)
    _check_profiles(data.get("resources"), issues)
    raw_states = data.get("states")
    if isinstance(raw_states, dict) and not raw_states:
        issues.add(
            ("states",), "workflow spec must declare a non-empty 'states' mapping", "add at least one state"
        )
    issues.raise_if_any()
    config: dict[str, JsonValue] = {**_mapping(data.get("config")), **(overrides or {})}
    parser = StateParser(issues, config)
    states: dict[str, State] = {}
    bodies = _mapping(raw_states)
    for name, body in bodies.items():
        state = parser.parse(name, body)
        if state is not None:
            states[name] = state
    if len(states) != len(bodies):
        issues.raise_if_any()
    spec = WorkflowSpec(
        api_version=str(data["apiVersion"]),
        kind=str(data["kind"]),
        metadata=metadata,
        config=config,
        run_defaults=_mapping(data.get("run")),
        resources={str(k): _mapping(v) for k, v in _mapping(data.get("resources")).items()},
        initial=str(data.get("initial") or next(iter(states))),
        states=states,
        source=source.file,
    )
    return spec, issues.issues


_NUL_HINT = "remove it: a '\\0' or '\\x00' escape in a double-quoted string makes one"


def _refuse_nul(data: dict[str, Any], overrides: dict[str, str], issues: IssueCollector) -> None:
    """No command, path or environment can carry a NUL: a job given one would die, not run."""
    for path in _nul_paths(data, ()):
        issues.add(path, "contains a NUL character, which no command or path can carry", _NUL_HINT)
    for key, value in overrides.items():
        if "\x00" in key or "\x00" in value:
            issues.add(
                ("config",),
                f"var {key!r} (--var or the run's vars) contains a NUL character, which no command "
                "or path can carry",
                "remove it",
            )


def _nul_paths(value: object, path: KeyPath) -> Iterator[KeyPath]:
    if isinstance(value, str) and "\x00" in value:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nul_paths(key, path) if isinstance(key, str) else ()
            yield from _nul_paths(item, (*path, key if isinstance(key, int) else str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nul_paths(item, (*path, index))


_REQUIRED_HINTS = {
    "apiVersion": "add 'apiVersion: npa.workflow/v0.0.1'",
    "kind": "add 'kind: Workflow'",
    "states": "add a 'states:' mapping of state name to state body",
}
#: How to write each top-level mapping a spec gave as something else.
_MAPPING_HINTS = {
    "config": "write config: {key: value}, one value per key",
    "run": "write run: {key: value}, defaults for {{run.key}}",
    "resources": "write resources: {gpu: {accelerators: 'H100:1'}}, profiles by name",
    "states": "write states: {name: {run: {shell: ...}}}, each state by name",
}


def _top_level(data: object, issues: IssueCollector) -> dict[str, Any]:
    """The document as a mapping, its required keys and the types of its top-level fields checked.

    Raises:
        SpecError: the document is not a mapping at all.
    """
    if not isinstance(data, dict):
        issues.add(
            (),
            f"workflow spec must be a mapping, got {type(data).__name__}",
            "start the file with 'apiVersion: npa.workflow/v0.0.1'",
        )
        issues.raise_if_any()
        raise AssertionError("unreachable")
    for key in ("apiVersion", "kind", "states"):
        if key not in data:
            issues.add((), f"missing required field '{key}'", _REQUIRED_HINTS[key])
    if "kind" in data and data["kind"] != "Workflow":
        issues.add(("kind",), f"expected 'Workflow', got {data['kind']!r}", "set kind: Workflow")
    for key in _OBJECT_KEYS:
        if key in data and not isinstance(data[key], dict):
            issues.add(
                (key,), f"{key} must be a mapping, got {type(data[key]).__name__}", _MAPPING_HINTS[key]
            )
    if "initial" in data and not isinstance(data["initial"], str):
        issues.add(
            ("initial",), "initial must be a state name (string)", "write initial: <the first state's name>"
        )
    return data


def _check_profiles(raw: JsonValue, issues: IssueCollector) -> None:
    for name, profile in _mapping(raw).items():
        if not isinstance(profile, dict):
            issues.add(
                ("resources", name),
                f"resource profile '{name}' must be a mapping",
                "write the profile as indented keys (cloud, cpus, accelerators, ...)",
            )


def _mapping(value: JsonValue) -> dict[str, JsonValue]:
    return dict(value) if isinstance(value, dict) else {}


def _parse_metadata(raw: JsonValue, issues: IssueCollector) -> Metadata:
    if raw is None:
        return Metadata()
    if not isinstance(raw, dict):
        issues.add(("metadata",), "metadata must be a mapping")
        return Metadata()
    if "name" not in raw:
        issues.add(("metadata",), "missing required field 'name'", "add metadata.name")
    for key in raw:
        if key not in _METADATA_KEYS:
            issues.add(("metadata", key), f"unknown field(s): '{key}'", did_you_mean(key, _METADATA_KEYS))
    for key in ("name", "description", "namespace"):
        if key in raw and not isinstance(raw[key], str):
            issues.add(("metadata", key), f"metadata.{key} must be a string")
    if "labels" in raw and not isinstance(raw["labels"], dict):
        issues.add(("metadata", "labels"), "metadata.labels must be a mapping")
    raw_mode = raw.get("executionMode")
    mode: ExecutionMode | None = None
    if raw_mode is not None:
        if raw_mode in {m.value for m in ExecutionMode}:
            mode = ExecutionMode(str(raw_mode))
        else:
            issues.add(
                ("metadata", "executionMode"),
                f"unknown executionMode {raw_mode!r}",
                "use 'runtime' or 'plan'",
            )
    return Metadata(
        name=str(raw.get("name") or "unnamed"),
        description=str(raw.get("description") or ""),
        namespace=str(raw.get("namespace") or ""),
        labels=_mapping(raw.get("labels")),
        execution_mode=mode,
    )
