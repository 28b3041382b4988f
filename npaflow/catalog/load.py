"""Loading ToolCatalog YAML files: the built-in one plus `--catalog` paths."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from npaflow.catalog.models import CATALOG_API_VERSION, ToolCatalog, ToolEntry
from npaflow.document.text_file import read_document
from npaflow.document.yaml_source import parse_yaml
from npaflow.errors import SpecError, SpecIssue
from npaflow.shipped import CATALOG_DIR


def load_catalog_from_str(text: str, file: str = "<catalog>") -> ToolCatalog:
    """Parse one ToolCatalog document.

    Raises:
        SpecError: the document is not a valid ToolCatalog.
    """
    source = parse_yaml(text, file, what="tool catalog")
    data = source.data
    issues: list[SpecIssue] = []

    def issue(path: tuple[str, ...], message: str, hint: str = "") -> None:
        line, column = source.locate(path)
        issues.append(
            SpecIssue(file=file, line=line, column=column, field=".".join(path), message=message, hint=hint)
        )

    if not isinstance(data, dict):
        issue((), "tool catalog must be a mapping", "start with 'apiVersion: npa.catalog/v1'")
        raise SpecError(issues)
    if data.get("apiVersion") != CATALOG_API_VERSION:
        issue(
            ("apiVersion",),
            f"unsupported catalog apiVersion {data.get('apiVersion')!r}",
            f"use '{CATALOG_API_VERSION}'",
        )
    if data.get("kind") != "ToolCatalog":
        issue(("kind",), f"unsupported catalog kind {data.get('kind')!r}", "use 'ToolCatalog'")
    tools = data.get("tools") or {}
    entries: dict[str, ToolEntry] = {}
    if not isinstance(tools, dict):
        issue(("tools",), "tools must be a mapping of toolRef to entry")
        tools = {}
    for ref, body in tools.items():
        try:
            entry = ToolEntry.model_validate({**body, "name": ref} if isinstance(body, dict) else body)
        except ValidationError as exc:
            for error in exc.errors():
                loc = tuple(str(part) for part in error["loc"])
                issue(("tools", ref, *loc), error["msg"])
            continue
        entries[ref] = entry
    if issues:
        raise SpecError(issues)
    return ToolCatalog(tools=entries)


def load_catalog_from_path(path: str | Path) -> ToolCatalog:
    """Read one ToolCatalog file.

    Raises:
        SpecError: the file is missing or invalid.
    """
    return load_catalog_from_str(read_document(path, "tool catalog"), str(path))


#: The built-in catalog as last read, with the files' versions it was read from: every
#: run's load_spec needs it, and parsing it again cost a worker ~2 % of its CPU per run.
_BUILTIN: dict[tuple[tuple[str, int, int], ...], ToolCatalog] = {}


def _versions(paths: list[Path]) -> tuple[tuple[str, int, int], ...]:
    stats = [(str(path), path.stat()) for path in paths]
    return tuple((name, info.st_mtime_ns, info.st_size) for name, info in stats)


def load_builtin_catalog() -> ToolCatalog:
    """Return the catalog shipped under `specs/catalog/` (read again only when a file changed)."""
    paths = sorted(CATALOG_DIR.glob("*.yaml"))
    versions = _versions(paths)
    if versions in _BUILTIN:
        return _BUILTIN[versions]
    if not paths:
        # An install without its data would silently accept no toolRef at all.
        raise SpecError(
            [
                SpecIssue(
                    file=str(CATALOG_DIR),
                    message="built-in tool catalog missing",
                    hint="reinstall npaflow: the wheel ships npaflow/specs/catalog/",
                )
            ]
        )
    catalog = ToolCatalog()
    for path in paths:
        catalog = catalog.merged_with(load_catalog_from_path(path))
    _BUILTIN.clear()
    _BUILTIN[versions] = catalog
    return catalog


def load_catalogs(paths: Iterable[str | Path] = ()) -> ToolCatalog:
    """Return the built-in catalog overlaid with each path in order (later wins)."""
    catalog = load_builtin_catalog()
    for path in paths:
        catalog = catalog.merged_with(load_catalog_from_path(path))
    return catalog
