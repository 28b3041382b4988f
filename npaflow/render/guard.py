"""The placeholder guard (reference §8.12): no bare `${NAME}` outside run and setup."""

from __future__ import annotations

import re

import yaml
from pydantic import JsonValue

from npaflow.errors import RenderError

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCRIPT_KEYS = {"run", "setup"}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _collect(value: JsonValue, found: list[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _collect(str(key), found)
            _collect(item, found)
    elif isinstance(value, list):
        for item in value:
            _collect(item, found)
    elif isinstance(value, str):
        found.extend(match.group(0) for match in _PLACEHOLDER.finditer(value))


def assert_no_unresolved_placeholders(text: str) -> None:
    """Reject rendered YAML that still holds `${NAME}` where SkyPilot would not expand it.

    Raises:
        RenderError: a placeholder is left, or the YAML does not parse.
    """
    try:
        documents = list(yaml.load_all(text, Loader=_LOADER))
    except yaml.YAMLError as exc:
        raise RenderError(f"rendered SkyPilot YAML is invalid while checking placeholders: {exc}") from None
    found: list[str] = []
    for document in documents:
        if isinstance(document, dict):
            for key, value in document.items():
                _collect(str(key), found)
                if key not in _SCRIPT_KEYS:
                    _collect(value, found)
        else:
            _collect(document, found)
    if found:
        unique = ", ".join(dict.fromkeys(found))
        raise RenderError(
            f"rendered SkyPilot YAML still contains unresolved placeholders: {unique}; "
            "resolve images and config before submit"
        )
