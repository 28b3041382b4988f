"""Inputs users will eventually send: every one ends in a plan or a clear exit 2, never a hang or a traceback.

Time bounds here are generous for CI; the tight figures are in bench/cli_bench.py.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import NPAFLOW
from tests.spec_factory import alias_bomb, chain_spec, deeply_nested

pytestmark = pytest.mark.e2e


def npaflow(*args: str, timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run([NPAFLOW, *args], capture_output=True, text=True, timeout=timeout)
    return result, time.monotonic() - started


def test_an_alias_bomb_is_refused_at_once_naming_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "bomb.yaml"
    spec.write_text(alias_bomb(levels=9, fanout=9))
    result, took = npaflow("validate-spec", str(spec), timeout=60)
    assert result.returncode == 2
    assert f"{spec}:13:7:" in result.stderr and "expansion bomb" in result.stderr
    assert "Traceback" not in result.stderr
    assert took < 20


def test_anchors_and_aliases_of_ordinary_size_still_work() -> None:
    result, _ = npaflow("validate-spec", "specs/examples/fan-out-join.yaml", timeout=60)
    assert result.returncode == 0, result.stderr


def test_an_oversize_spec_is_refused_with_its_size(tmp_path: Path) -> None:
    spec = tmp_path / "huge.yaml"
    spec.write_text("# " + "x" * (33 * 1024 * 1024) + "\n")
    result, _ = npaflow("validate-spec", str(spec), timeout=60)
    assert result.returncode == 2
    assert "is 33.0 MiB; at most 32 MiB is read" in result.stderr


def test_a_deeply_nested_document_is_refused_naming_the_line(tmp_path: Path) -> None:
    spec = tmp_path / "deep.yaml"
    spec.write_text(deeply_nested(500))
    result, _ = npaflow("validate-spec", str(spec), timeout=60)
    assert result.returncode == 2
    assert f"{spec}:5:" in result.stderr and "nests more than 100 levels" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_sequence_that_contains_itself_is_a_validation_error(tmp_path: Path) -> None:
    spec = tmp_path / "cycle.yaml"
    spec.write_text(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nmetadata: {name: c}\n"
        "initial: s\nstates:\n  s: {sequence: [t], next: done}\n  t: {sequence: [s]}\n"
        "  done: {terminal: true, run: {shell: echo}}\n"
    )
    result, _ = npaflow("plan-spec", str(spec), timeout=60)
    assert result.returncode == 2
    assert "sequence contains itself: s -> t -> s" in result.stderr


@pytest.mark.parametrize("command", ["validate-spec", "plan-spec"])
def test_a_10830_state_chain_validates_and_plans(tmp_path: Path, command: str) -> None:
    spec = tmp_path / "chain.yaml"
    spec.write_text(chain_spec(10830))
    result, took = npaflow(command, str(spec), timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert took < 60


def test_a_50000_state_chain_returns_a_plan(tmp_path: Path) -> None:
    spec = tmp_path / "chain.yaml"
    spec.write_text(chain_spec(50000))
    result, _ = npaflow("plan-spec", str(spec), "--json", timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count('"state":') == 50000
