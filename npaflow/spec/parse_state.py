"""Parsing one state body: shapes, aliases, parser-time rules 1–9 of reference §3.

Unknown keys are errors with a did-you-mean hint (DESIGN §4), except `x-` keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from npaflow.document.models import (
    Loop,
    MultiNodeMode,
    ParamValue,
    RunBlock,
    State,
    Transition,
)
from npaflow.document.yaml_source import KeyPath
from npaflow.spec.field_hints import STRING_HINTS, param_hint
from npaflow.spec.issues import IssueCollector, did_you_mean
from npaflow.spec.parse_artifacts import parse_artifacts
from npaflow.spec.parse_cache import parse_cache
from npaflow.spec.parse_for_each import parse_for_each
from npaflow.spec.parse_trigger import parse_trigger

#: State keys and the canonical field each one fills (aliases included).
STATE_KEYS: dict[str, str] = {
    "description": "description",
    "run": "run",
    "toolRef": "tool_ref",
    "tool_ref": "tool_ref",
    "needs": "needs",
    "next": "next",
    "transitions": "transitions",
    "terminal": "terminal",
    "sequence": "sequence",
    "parallel": "parallel",
    "parallelCount": "parallel_count",
    "parallel_count": "parallel_count",
    "maxConcurrency": "max_concurrency",
    "max_concurrency": "max_concurrency",
    "params": "params",
    "trigger": "trigger",
    "loop": "loop",
    "writesDecision": "writes_decision",
    "writes_decision": "writes_decision",
    "inputs": "inputs",
    "outputs": "outputs",
    "resources": "resources",
    "multiNodeMode": "multi_node_mode",
    "multi_node_mode": "multi_node_mode",
    "cache": "cache",
    "forEach": "for_each",
    "for_each": "for_each",
}


class StateParser:
    """Builds a `State` from one raw body, reporting problems to the collector."""

    def __init__(self, issues: IssueCollector, raw_config: Mapping[str, JsonValue]) -> None:
        self.issues = issues
        self.raw_config = raw_config

    def parse(self, name: str, body: JsonValue) -> State | None:
        """Return the parsed state, or None when its body is not a mapping."""
        path: KeyPath = ("states", name)
        if not name.strip():  # it would name nothing in a graph, a ledger or a job
            self.issues.add(path, "a state's name is empty", "name the state, e.g. 'train:'")
            return None
        if not isinstance(body, dict):
            self.issues.add(
                path, "must be a mapping", "write the state as 'name:' followed by indented fields"
            )
            return None
        fields: dict[str, object] = {"name": name}
        for key, value in body.items():
            if key.startswith("x-"):
                continue
            canonical = STATE_KEYS.get(key)
            if canonical is None:
                self.issues.add(
                    (*path, key),
                    f"unknown field '{key}'",
                    did_you_mean(key, [k for k in STATE_KEYS if "_" not in k]),
                )
                continue
            parsed = self._parse_field(canonical, value, (*path, key))
            if parsed is not None:
                fields[canonical] = parsed
        return State.model_validate(fields)

    def _parse_field(self, field: str, value: JsonValue, path: KeyPath) -> object | None:
        match field:
            case "description" | "tool_ref" | "next" | "resources":
                return self._string(value, path)
            case "multi_node_mode":
                return self._multi_node_mode(value, path)
            case "cache":
                return parse_cache(value, path, self.issues)
            case "for_each":
                return parse_for_each(value, path, self.issues, self.raw_config)
            case "terminal" | "writes_decision":
                return self._bool(value, path)
            case "needs" | "sequence":
                return self._names(value, path)
            case "parallel":
                return self._parallel(value, path)
            case "parallel_count" | "max_concurrency":
                return self._bound(value, path)
            case "run":
                return self._run(value, path)
            case "transitions":
                return self._transitions(value, path)
            case "params":
                return self._params(value, path)
            case "trigger":
                return parse_trigger(value, path, self.issues, self.raw_config)
            case "loop":
                return self._loop(value, path)
            case _:
                return parse_artifacts(value, path, self.issues)

    def _string(self, value: JsonValue, path: KeyPath) -> str | None:
        if value is None:
            return None
        if isinstance(value, dict | list):
            hint = STRING_HINTS.get(str(path[-1]), "")
            self.issues.add(path, f"{path[-1]} must be a string, got {type(value).__name__}", hint)
            return None
        return str(value)

    def _multi_node_mode(self, value: JsonValue, path: KeyPath) -> MultiNodeMode | None:
        text = self._string(value, path)
        if text is None:
            return None
        if text not in {m.value for m in MultiNodeMode}:
            self.issues.add(
                path,
                f"multiNodeMode must be 'sharded', got '{text}'",
                "use 'forbidden' (the default) or 'sharded'",
            )
            return None
        return MultiNodeMode(text)

    def _bool(self, value: JsonValue, path: KeyPath) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.issues.add(
            path, f"{path[-1]} must be true or false, got {value!r}", f"write {path[-1]}: true, unquoted"
        )
        return None

    def _names(self, value: JsonValue, path: KeyPath) -> tuple[str, ...] | None:
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.issues.add(path, f"{path[-1]} must be a list of state names", f"write {path[-1]}: [a, b]")
            return None
        return tuple(str(v) for v in value)

    def _parallel(self, value: JsonValue, path: KeyPath) -> tuple[str, ...] | None:
        if not isinstance(value, list):
            self.issues.add(
                path,
                f"parallel must be a list of state names, got {type(value).__name__}",
                "write parallel: [member-a, member-b]",
            )
            return None
        for index, member in enumerate(value):
            if not isinstance(member, str):
                self.issues.add(
                    (*path, index), f"parallel member must be a state name (string), got {member!r}"
                )
                return None
        return tuple(str(m) for m in value)

    def _bound(self, value: JsonValue, path: KeyPath) -> int | str | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | str):
            self.issues.add(
                path,
                f"{path[-1]} must be an integer or a config reference, got {value!r}",
                "write an integer or '{{config.key}}'",
            )
            return None
        return value

    def _run(self, value: JsonValue, path: KeyPath) -> RunBlock | None:
        if not isinstance(value, dict):
            self.issues.add(path, "run must be a mapping", "write run: {shell: '...'} or run: {argv: [...]}")
            return None
        self._reject_unknown(value, {"shell", "argv"}, path)
        shell, argv = value.get("shell"), value.get("argv")
        if argv is not None and not isinstance(argv, list):
            self.issues.add((*path, "argv"), "run.argv must be a list", "write argv: [cmd, arg1, ...]")
            argv = None
        if shell is not None and not isinstance(shell, str):
            self.issues.add((*path, "shell"), "run.shell must be a string")
            shell = None
        return RunBlock(shell=shell or "", argv=tuple(str(item) for item in argv or ()))

    def _transitions(self, value: JsonValue, path: KeyPath) -> tuple[Transition, ...] | None:
        if value is None:
            return ()
        if not isinstance(value, list):
            self.issues.add(path, "transitions must be a list", "write transitions: [{when: ..., goto: ...}]")
            return None
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, dict) or not item.get("goto"):
                self.issues.add(
                    (*path, index), "transition needs goto", "each transition needs 'goto: <state>'"
                )
                continue
            self._reject_unknown(item, {"when", "goto", "if"}, (*path, index))
            result.append(
                Transition.model_validate(
                    {
                        "goto": str(item["goto"]),
                        "when": None if item.get("when") is None else str(item["when"]),
                        "if": None if item.get("if") is None else str(item["if"]),
                    }
                )
            )
        return tuple(result)

    def _params(self, value: JsonValue, path: KeyPath) -> dict[str, ParamValue] | None:
        if not isinstance(value, dict):
            self.issues.add(path, "params must be a mapping", "write params: {key: value}")
            return None
        params: dict[str, ParamValue] = {}
        for key, item in value.items():
            if not isinstance(item, str | int | float | bool):
                self.issues.add(
                    (*path, key),
                    f"params.{key} must be a string, number or bool "
                    f"(tokens render scalars), got {type(item).__name__}",
                    param_hint(str(key), item),
                )
                continue
            params[key] = item
        return params

    def _loop(self, value: JsonValue, path: KeyPath) -> Loop | None:
        if not isinstance(value, dict):
            self.issues.add(path, "loop must be a mapping", "write loop: {max: 3, until: promote_checkpoint}")
            return None
        self._reject_unknown(value, {"max", "until"}, path)
        raw_max = value.get("max")
        if raw_max is not None and not isinstance(raw_max, bool | int | str):
            raw_max = str(raw_max)  # rejected with the reference's message by validation
        until = value.get("until")
        return Loop(max=raw_max, until=None if until is None else str(until))

    def _reject_unknown(self, value: dict[str, JsonValue], known: set[str], path: KeyPath) -> None:
        self.issues.reject_unknown(value, known, path)
