"""A state's `cache:` key (npaflow's extension): `true`, `false`, or `{version: STR, max_age: DURATION}`."""

from __future__ import annotations

from pydantic import JsonValue

from npaflow.document.models import CacheSetting
from npaflow.document.yaml_source import KeyPath
from npaflow.durations import LIMIT_TEXT, duration_seconds
from npaflow.spec.issues import IssueCollector, did_you_mean

#: The keys of a `cache:` mapping and the field each fills.
CACHE_KEYS = {"version": "version", "max_age": "max_age", "maxAge": "max_age"}
_SHAPE_HINT = "write cache: true, or cache: {version: '2', max_age: 7d}"


def parse_cache(value: JsonValue, path: KeyPath, issues: IssueCollector) -> CacheSetting | None:
    """The state's cache setting; None when off (`false`) or wrong (reported)."""
    if value is True:
        return CacheSetting()
    if value is False or value is None:
        return None
    if not isinstance(value, dict):
        issues.add(path, f"cache must be true, false or a mapping, got {value!r}", _SHAPE_HINT)
        return None
    setting: dict[str, object] = {}
    for key, item in value.items():
        field = CACHE_KEYS.get(key)
        if field is None:
            if not key.startswith("x-"):
                issues.add((*path, key), f"unknown field '{key}'", did_you_mean(key, ["version", "max_age"]))
            continue
        if field == "version":
            if isinstance(item, dict | list) or item is None:
                issues.add((*path, key), f"cache.version must be a string, got {item!r}", _SHAPE_HINT)
                continue
            setting["version"] = str(item)
        else:
            seconds = duration_seconds(str(item)) if isinstance(item, str | int | float) else None
            if seconds is None or isinstance(item, bool):
                issues.add(
                    (*path, key),
                    f"cache.max_age must be a positive duration ({LIMIT_TEXT}), got {item!r}",
                    "write e.g. max_age: 7d (units s, m, h, d)",
                )
                continue
            setting["max_age_seconds"] = seconds
    return CacheSetting.model_validate(setting)
