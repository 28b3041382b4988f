"""Built-in tools never turn input into code: hostile --var values stay data when the tool runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from npaflow.catalog.load import load_builtin_catalog
from npaflow.plan import build_plan
from npaflow.render.wave import build_run_script
from npaflow.spec import load_spec_from_str

pytestmark = pytest.mark.unit

CATALOG = load_builtin_catalog()
HOSTILE = [
    "0.5'); open('MARKER','w').write('pwned'); float('0",
    '"; touch MARKER; "',
    "$(touch MARKER)",
    "`touch MARKER`",
    "a\ntouch MARKER",
    "x; touch MARKER #",
    "x' || touch MARKER || '",
]
#: Stands in for tools that are not installed here: records the argv it was given.
RECORDER = "import json, sys; json.dump(sys.argv[1:], open('argv.json', 'w'))"


def config_keys(tool_ref: str) -> list[str]:
    parts = " ".join(CATALOG.tools[tool_ref].argv)
    return sorted(set(re.findall(r"\{\{\s*config\.([A-Za-z0-9_.-]+)", parts)))


def benign(key: str) -> str:
    return "file://out/decision.json" if key.endswith("uri") else "0.5"


TOOL_KEYS = [(tool, key) for tool in sorted(CATALOG.tools) for key in config_keys(tool) or [""]]


def rendered_command(tool_ref: str, key: str, value: str) -> str:
    spec = load_spec_from_str(
        yaml.safe_dump(
            {
                "apiVersion": "npa.workflow/v0.0.1",
                "kind": "Workflow",
                "metadata": {"name": "hostile"},
                "initial": "step",
                "states": {"step": {"terminal": True, "toolRef": tool_ref}},
            }
        ),
        "<hostile>",
        catalog=CATALOG,
        overrides={k: value if k == key else benign(k) for k in config_keys(tool_ref)},
    )
    (step,) = build_plan(spec, CATALOG, run_id="hostile-run").waves[0].steps
    return build_run_script(step, CATALOG.tools[tool_ref])


def test_the_built_in_catalog_is_the_one_shipped() -> None:
    assert {"npaflow.write_decision", "workbench.rl.write_success_decision"} <= set(CATALOG.tools)


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize(("tool_ref", "key"), TOOL_KEYS, ids=[f"{t}.{k}" for t, k in TOOL_KEYS])
def test_a_hostile_value_reaches_a_built_in_tool_as_data(
    tool_ref: str, key: str, value: str, tmp_path: Path
) -> None:
    command = rendered_command(tool_ref, key, value)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in {CATALOG.tools[tool_ref].argv[0]} - {"python3", "bash"}:
        shim = bin_dir / name
        shim.write_text(f"#!{sys.executable}\n{RECORDER}\n")
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, timeout=30, check=False
    )
    assert not (tmp_path / "MARKER").exists(), command
    recorded = tmp_path / "argv.json"
    if recorded.exists():
        argv = json.loads(recorded.read_text())
        assert all(part == value or value not in part for part in argv), argv
