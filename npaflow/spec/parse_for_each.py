"""A group's `forEach:` key: `{items: URI, as: NAME, max: N, minSuccess: 0..1}`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import JsonValue

from npaflow.document.for_each import DEFAULT_MAX_ITEMS, MAX_ITEMS_CEILING, RESERVED_NAMES, ForEach
from npaflow.document.yaml_source import KeyPath
from npaflow.errors import TokenError
from npaflow.integers import plain_int
from npaflow.spec.issues import IssueCollector
from npaflow.tokens import resolve_config_int

#: The keys of a `forEach:` mapping and the field each fills.
FOR_EACH_KEYS = {"items": "items", "as": "name", "max": "max_items", "minSuccess": "min_success"}
_ALIASES = {"min_success": "minSuccess"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHAPE_HINT = "write forEach: {items: 's3://bucket/{{run.id}}/shards.json', as: shard, max: 100}"


def parse_for_each(
    value: JsonValue, path: KeyPath, issues: IssueCollector, raw_config: Mapping[str, JsonValue]
) -> ForEach | None:
    """The group's fan-out, or None when its shape is wrong (every problem reported)."""
    if not isinstance(value, dict):
        issues.add(path, "forEach must be a mapping", _SHAPE_HINT)
        return None
    value = {_ALIASES.get(key, key): item for key, item in value.items()}
    issues.reject_unknown(value, set(FOR_EACH_KEYS), path)
    items, name = value.get("items"), value.get("as")
    fields: dict[str, object] = {"items": items, "as": name}
    if not isinstance(items, str) or not items.strip():
        issues.add((*path, "items"), "forEach.items must name the URI of a JSON list", _SHAPE_HINT)
        fields["items"] = ""
    if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED_NAMES:
        issues.add(
            (*path, "as"),
            f"forEach.as must be a name like 'shard' (letters, digits, _), not {name!r}"
            + (f"; '{name}' is a token scope of its own" if name in RESERVED_NAMES else ""),
            "write as: shard, then use {{shard.field}} in the member",
        )
        fields["as"] = "item"
    fields["max"] = _max_items(value.get("max"), (*path, "max"), issues, raw_config)
    fields["minSuccess"] = _min_success(value.get("minSuccess"), (*path, "minSuccess"), issues)
    return ForEach.model_validate(fields)


def _max_items(raw: JsonValue, path: KeyPath, issues: IssueCollector, config: Mapping[str, JsonValue]) -> int:
    if raw is None:
        return DEFAULT_MAX_ITEMS
    try:
        number = resolve_config_int(raw, config, what="forEach.max")
    except TokenError as exc:
        issues.add(path, str(exc), f"give forEach.max a whole number from 1 to {MAX_ITEMS_CEILING:,}")
        return DEFAULT_MAX_ITEMS
    if not 1 <= number <= MAX_ITEMS_CEILING:
        issues.add(
            path,
            f"forEach.max must be from 1 to {MAX_ITEMS_CEILING:,}, got {number}",
            "bound the list by what one group should launch; split a wider one into two groups",
        )
        return DEFAULT_MAX_ITEMS
    return number


def _min_success(raw: JsonValue, path: KeyPath, issues: IssueCollector) -> float:
    if raw is None:
        return 1.0
    number: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str) and (whole := plain_int(raw.strip())) is not None:
        number = float(whole)
    if number is None or not 0.0 <= number <= 1.0:
        issues.add(
            path,
            f"forEach.minSuccess must be a share from 0 to 1, got {raw!r}",
            "write minSuccess: 0.8 for 'at least 80% of the members succeed' (default 1.0: all of them)",
        )
        return 1.0
    return number
