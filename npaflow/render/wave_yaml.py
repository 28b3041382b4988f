"""A rendered wave as text: SkyPilot's multi-document YAML (header, then one document per task).

Block style, insertion order, multi-line scripts as literal blocks, so the text
a job owner reads back and compares is exactly what was launched.
"""

from __future__ import annotations

import yaml
from pydantic import JsonValue

from npaflow.errors import RenderError

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, insertion order, multi-line scripts as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_wave_yaml(header: dict[str, JsonValue], tasks: list[dict[str, JsonValue]]) -> str:
    """Join the header and task documents with `---`, ending in a newline."""
    documents = [
        yaml.dump(
            doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10000, allow_unicode=True
        ).rstrip("\n")
        for doc in (header, *tasks)
    ]
    return "\n---\n".join(documents) + "\n"


def load_wave_yaml(text: str) -> tuple[dict[str, JsonValue], list[dict[str, JsonValue]]]:
    """Split rendered YAML back into (header, tasks); the inverse of `dump_wave_yaml`.

    Raises:
        RenderError: the text is not a rendered wave.
    """
    documents = [doc for doc in yaml.load_all(text, Loader=_LOADER) if doc is not None]
    if not documents or not isinstance(documents[0], dict) or "execution" not in documents[0]:
        raise RenderError("not a rendered wave: the first document must be {name, execution}")
    return documents[0], documents[1:]
