"""A state's `trigger:` prefix watch: its keys, their aliases and the floors each number keeps."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from npaflow.document.models import Trigger
from npaflow.document.yaml_source import KeyPath
from npaflow.errors import TokenError
from npaflow.integers import plain_int
from npaflow.spec.field_hints import NUMBER_TOKEN_HINT, trigger_hint
from npaflow.spec.issues import IssueCollector
from npaflow.tokens import resolve_config_int

TRIGGER_KEYS = {
    "uri": "uri",
    "pollSeconds": "poll_seconds",
    "poll_seconds": "poll_seconds",
    "maxPolls": "max_polls",
    "max_polls": "max_polls",
    "minObjects": "min_objects",
    "min_objects": "min_objects",
}
_TRIGGER_FLOORS = {
    "poll_seconds": ("pollSeconds", 1, 30),
    "max_polls": ("maxPolls", 0, 0),
    "min_objects": ("minObjects", 1, 1),
}


def parse_trigger(
    value: JsonValue, path: KeyPath, issues: IssueCollector, raw_config: Mapping[str, JsonValue]
) -> Trigger | None:
    """The state's `trigger:` watch; None when its shape or a number is wrong (reported)."""
    if not isinstance(value, dict):
        issues.add(
            path,
            "trigger must be a mapping",
            "write trigger: {uri: s3://bucket/prefix/, pollSeconds: 30}",
        )
        return None
    issues.reject_unknown(value, set(TRIGGER_KEYS), path)
    fields: dict[str, object] = {"uri": str(value.get("uri") or "")}
    for key, raw in value.items():
        canonical = TRIGGER_KEYS.get(key)
        if canonical and canonical != "uri":
            number = _trigger_number(canonical, raw, (*path, key), issues, raw_config)
            if number is None:
                return None
            fields[canonical] = number
    return Trigger.model_validate(fields)


def _trigger_number(
    field: str, raw: JsonValue, path: KeyPath, issues: IssueCollector, raw_config: Mapping[str, JsonValue]
) -> int | None:
    label, floor, default = _TRIGGER_FLOORS[field]
    if raw is None:
        return default
    if isinstance(raw, str) and "{{" in raw:
        try:
            return resolve_config_int(raw, raw_config, what=f"trigger.{label}")
        except TokenError as exc:
            issues.add(path, str(exc), NUMBER_TOKEN_HINT)
            return None
    if isinstance(raw, bool | int):
        number = int(raw)
    elif isinstance(raw, str) and (spelled := plain_int(raw.strip(), signed=True)) is not None:
        number = spelled
    else:
        issues.add(path, f"trigger.{label} must be an integer, got {raw!r}", trigger_hint(label, floor))
        return None
    if number < floor:
        issues.add(path, f"trigger.{label} must be >= {floor}, got {number}", trigger_hint(label, floor))
        return None
    return number
