"""The JSON Schema editors use: exported from the document models, committed, and true to the loader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from npaflow.document.schema import SCHEMA_FILE, workflow_json_schema, workflow_json_schema_text
from tests.helpers import ROOT

pytestmark = pytest.mark.unit

EXAMPLES = sorted((ROOT / "specs" / "examples").glob("*.yaml"))
RUNTIME_SPECS = sorted(
    p for p in (ROOT / "tests" / "specs").rglob("*.yaml") if "kind: Workflow" in p.read_text()
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = workflow_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(validator: jsonschema.Draft202012Validator, text: str) -> list[str]:
    return [
        "/".join(map(str, e.absolute_path)) + ": " + e.message
        for e in validator.iter_errors(yaml.safe_load(text))
    ]


def test_the_committed_schema_is_the_one_the_models_export() -> None:
    committed = (ROOT / "specs" / SCHEMA_FILE).read_text()
    assert committed == workflow_json_schema_text(), f"regenerate with: npaflow schema > specs/{SCHEMA_FILE}"


def test_npaflow_schema_prints_the_committed_schema() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "npaflow", "schema"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert printed == (ROOT / "specs" / SCHEMA_FILE).read_text()


@pytest.mark.parametrize("path", EXAMPLES + RUNTIME_SPECS, ids=lambda p: p.name)
def test_every_shipped_and_test_spec_validates(
    validator: jsonschema.Draft202012Validator, path: Path
) -> None:
    assert errors(validator, path.read_text()) == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_names_the_schema_for_editors(path: Path) -> None:
    first = path.read_text().splitlines()[0]
    assert first == f"# yaml-language-server: $schema=../{SCHEMA_FILE}"


def test_an_unknown_state_field_is_flagged_at_its_path(validator: jsonschema.Draft202012Validator) -> None:
    text = (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: t}\n"
        "states:\n  a: {terminal: true, run: {shell: echo}, retries: 3}\n"
    )
    (error,) = errors(validator, text)
    assert error.startswith("states/a: ") and "'retries'" in error


def test_extension_keys_and_tokens_in_numbers_are_allowed(validator: jsonschema.Draft202012Validator) -> None:
    text = (
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: t}\n"
        "config: {n: 2}\nstates:\n  g: {parallel: [a, b], maxConcurrency: '{{config.n}}',"
        " next: a, x-owner: ml-team}\n  a: {terminal: true, run: {shell: echo}}\n"
        "  b: {run: {argv: [echo, 1]}, loop: {max: config.n, until: promote_checkpoint}}\n"
    )
    assert errors(validator, text) == []


def test_a_wrong_kind_and_a_missing_states_are_flagged(validator: jsonschema.Draft202012Validator) -> None:
    found = errors(validator, "apiVersion: npa.workflow/v0.0.1\nkind: Flow\n")
    assert any("'states' is a required property" in e for e in found)
    assert any(e.startswith("kind: ") for e in found)
