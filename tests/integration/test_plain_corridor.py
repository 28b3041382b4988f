"""docs/architecture.md's walk is what a plain run executes: measured by tracing one, not summing a doc."""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.harness import ROOT, Harness

pytestmark = pytest.mark.integration

DOC = ROOT / "docs" / "architecture.md"
LAYERS = tuple(f"{ROOT / layer}/" for layer in ("npaflow", "workflows_def", "activities", "worker"))
PLAIN = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: plain}
initial: hello
states:
  hello:
    run: {shell: "echo hello"}
    next: bye
  bye:
    terminal: true
    run: {shell: "echo bye"}
"""


class CallTrace:
    """The production files in which some function ran (class bodies and module code do not count)."""

    def __init__(self) -> None:
        self.files: set[str] = set()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "call" and code.co_flags & inspect.CO_NEWLOCALS and code.co_filename.startswith(LAYERS):
            self.files.add(str(Path(code.co_filename).relative_to(ROOT)))

    def __enter__(self) -> CallTrace:
        threading.setprofile(self)
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def _walk_rows() -> list[str]:
    return re.findall(r"^\| \d+ \| `([\w./-]+)` \|", DOC.read_text(encoding="utf-8"), re.MULTILINE)


def _off_the_way() -> list[str]:
    section = DOC.read_text(encoding="utf-8").split("### Off a plain run's way", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^- `([\w./-]+)`", section, re.MULTILINE)


def _stated_count() -> tuple[int, int]:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    found = re.search(r"about ([\d,]+) production files \(about ([\d,]+) lines", text)
    assert found, "the doc states how many production files a plain run calls into"
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


async def test_a_plain_run_executes_every_walk_row_and_enters_no_feature_room(
    local_harness: Harness, env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npaflow import cli

    spec = tmp_path / "plain.yaml"
    spec.write_text(PLAIN)
    monkeypatch.setenv("NPAFLOW_HOME", str(local_harness.home))
    argv = ["submit", str(spec), "--wait", "--run-id", "plain-corridor"]
    argv += [
        "--address",
        env.client.service_client.config.target_host,
        "--task-queue",
        local_harness.task_queue,
    ]
    async with local_harness.worker():
        with CallTrace() as trace:
            code = await asyncio.to_thread(_traced_run, trace, cli.run, argv)
    assert code == 0
    assert (local_harness.home / "runs" / "plain-corridor" / "npa-workflow" / "runtime.json").exists()
    assert [row for row in _walk_rows() if row not in trace.files] == []
    entered = sorted(f for f in trace.files for room in _off_the_way() if f == room or f.startswith(room))
    assert entered == []
    files, lines = _stated_count()
    measured = sum(len((ROOT / f).read_text(encoding="utf-8").splitlines()) for f in trace.files)
    assert abs(len(trace.files) - files) <= files // 10, (
        f"the doc says about {files} files; {len(trace.files)}"
    )
    assert abs(measured - lines) <= lines // 10, f"the doc says about {lines} lines; {measured}"


def _traced_run(trace: CallTrace, run: Any, argv: list[str]) -> int:
    sys.setprofile(trace)  # this thread was started before the trace: it is set here
    try:
        return int(run(argv))
    finally:
        sys.setprofile(None)
