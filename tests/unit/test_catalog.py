"""The tool catalog as data: loading, merging and errors (DESIGN §3.12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npaflow.catalog import load_builtin_catalog, load_catalog_from_str, load_catalogs
from npaflow.errors import SpecError

pytestmark = pytest.mark.unit

ENTRY = """
apiVersion: npa.catalog/v1
kind: ToolCatalog
tools:
  my.tool:
    description: mine
    argv: [run-it, "{{config.x}}"]
    configDefaults: {x: "1"}
    omitFlagsWhenEmpty: [--flag]
    multiNodeMode: sharded
    image: ghcr.io/me/tool:1
    setup: pip install tool
    runPreamble: export A=1
    secretHints: [HF_TOKEN]
"""


def test_catalog_entry_fields_load() -> None:
    entry = load_catalog_from_str(ENTRY).tools["my.tool"]
    assert entry.argv == ("run-it", "{{config.x}}")
    assert (entry.image, entry.setup, entry.run_preamble) == (
        "ghcr.io/me/tool:1",
        "pip install tool",
        "export A=1",
    )
    assert entry.secret_hints == ("HF_TOKEN",)
    assert entry.multi_node_mode.value == "sharded"


def test_builtin_catalog_ships_entries() -> None:
    assert "npaflow.write_decision" in load_builtin_catalog().tools


def test_builtin_catalog_is_read_again_when_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "tools.yaml"
    shipped.write_text(ENTRY)
    monkeypatch.setattr("npaflow.catalog.load.CATALOG_DIR", tmp_path)
    assert load_builtin_catalog() is load_builtin_catalog()  # unchanged files: read once
    shipped.write_text(ENTRY.replace("my.tool", "my.other.tool"))
    assert list(load_builtin_catalog().tools) == ["my.other.tool"]


def test_later_catalogs_win(tmp_path: Path) -> None:
    override = tmp_path / "c.yaml"
    override.write_text(ENTRY.replace("my.tool", "npaflow.write_decision"))
    assert load_catalogs([override]).tools["npaflow.write_decision"].argv[0] == "run-it"


def test_catalog_with_unknown_entry_field_is_rejected_with_location() -> None:
    with pytest.raises(SpecError) as caught:
        load_catalog_from_str(ENTRY.replace("description: mine", "descripton: mine"), "c.yaml")
    issue = caught.value.issues[0]
    assert issue.file == "c.yaml"
    assert "descripton" in issue.field


def test_catalog_requires_its_api_version() -> None:
    with pytest.raises(SpecError, match="unsupported catalog apiVersion"):
        load_catalog_from_str(ENTRY.replace("npa.catalog/v1", "v2"))


def test_missing_catalog_file_is_a_user_error() -> None:
    with pytest.raises(SpecError, match="tool catalog not found"):
        load_catalogs(["/nope/catalog.yaml"])
