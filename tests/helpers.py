"""Helpers shared by the test tiers: building specs, reading their errors, waiting for events."""

from __future__ import annotations

import asyncio
import copy
import fcntl
import inspect
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import pytest
import yaml

from npaflow.catalog import ToolCatalog, load_catalogs
from npaflow.errors import SpecError, SpecIssue
from npaflow.plan import ExecutionPlan, build_plan
from npaflow.runtime.metrics import Metric
from npaflow.spec import WorkflowSpec, load_spec_from_path, load_spec_from_str

ROOT = Path(__file__).resolve().parents[1]
#: The `npaflow` console script of the running venv.
NPAFLOW = str(Path(sys.executable).parent / "npaflow")
#: How long a wait that includes a fresh worker process's start may take: a new interpreter
#: importing temporalio, pydantic and boto took 28 s on a 2-core host running two suites.
COLD_WORKER_SECONDS = 120.0
SPECS = ROOT / "tests" / "specs"
EXAMPLES = ROOT / "specs" / "examples"
CATALOG: ToolCatalog = load_catalogs([SPECS / "test-catalog.yaml"])
T = TypeVar("T")


def in_the_foreground() -> None:
    """Run in a child before exec: Ctrl-C's signals as a foreground command gets them.

    A suite started in the background (`nohup`, `cmd &` in a script) inherits
    SIGINT and SIGQUIT ignored and hands that to every child; a user who types
    Ctrl-C runs the CLI in the foreground, where they are not.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def minimal_doc(**states: dict[str, Any]) -> dict[str, Any]:
    """A valid one-state document, with extra or replacement states merged in."""
    doc: dict[str, Any] = {
        "apiVersion": "npa.workflow/v0.0.1",
        "kind": "Workflow",
        "metadata": {"name": "t"},
        "states": {
            "work": {"run": {"shell": "echo hi"}, "next": "done"},
            "done": {"terminal": True, "run": {"shell": "echo done"}},
        },
    }
    doc["states"].update(copy.deepcopy(states))
    return doc


def load_doc(doc: dict[str, Any], overrides: dict[str, str] | None = None) -> WorkflowSpec:
    return load_spec_from_str(
        yaml.safe_dump(doc, sort_keys=False), "t.yaml", catalog=CATALOG, overrides=overrides
    )


def issues_of(doc: dict[str, Any] | str, overrides: dict[str, str] | None = None) -> list[SpecIssue]:
    """Return every issue a document produces (empty when it is valid)."""
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    try:
        load_spec_from_str(text, "t.yaml", catalog=CATALOG, overrides=overrides)
    except SpecError as exc:
        return exc.issues
    return []


def messages_of(doc: dict[str, Any] | str, overrides: dict[str, str] | None = None) -> str:
    return "\n".join(issue.render() for issue in issues_of(doc, overrides))


def load_fixture(name: str, overrides: dict[str, str] | None = None) -> WorkflowSpec:
    path = SPECS / name if (SPECS / name).exists() else EXAMPLES / name
    return load_spec_from_path(path, catalog=CATALOG, overrides=overrides)


def plan_of(name: str, assume: str = "", cap: int = 0, run_id: str = "plan-run") -> ExecutionPlan:
    return build_plan(load_fixture(name), CATALOG, assume_decision=assume, cap=cap, run_id=run_id)


def states_of(plan: ExecutionPlan) -> list[str]:
    return [step.state for step in plan.steps]


async def eventually(
    check: Callable[[], Awaitable[T] | T], *, timeout: float = 30.0, interval: float = 0.05, what: str = ""
) -> T:
    """Poll `check` until it returns something truthy; fail with the last value seen."""
    deadline = asyncio.get_running_loop().time() + timeout
    last: object = None
    while True:
        value = check()
        last = await value if inspect.isawaitable(value) else value
        if last:
            return last  # type: ignore[return-value]
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(
                f"not true within {timeout:g}s{f' ({what})' if what else ''}; last value: {last!r}"
            )
        await asyncio.sleep(interval)


def _which(names: tuple[str, ...]) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


def _apt_install(package: str, names: tuple[str, ...]) -> str | None:
    """Install a Debian package for the tests (serialized across test processes)."""
    with open(Path(tempfile.gettempdir()) / "npaflow-tests-apt.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _which(names) is None:
            environ = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            for command in (
                ["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", package],
            ):
                subprocess.run(command, env=environ, capture_output=True, check=False, timeout=900)
    return _which(names)


def require_tool(*names: str, package: str) -> str:
    """The path of the first of `names` on PATH, installing `package` from Debian if need be.

    As `.ci/run` does: as root with apt-get (a fresh Debian machine or container), the
    package is installed once (one process at a time); otherwise the test is skipped
    naming the package, and under `.ci/run` (NPAFLOW_REQUIRE_ALL_TESTS=1) it fails.
    """
    found = _which(names)
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        found = _apt_install(package, names)
    if found:
        return found
    skip_unless_all_required(f"{names[0]} is missing: apt-get install {package} runs this test")


def skip_unless_all_required(message: str) -> NoReturn:
    """Skip this test, except under `.ci/run` (NPAFLOW_REQUIRE_ALL_TESTS=1), where it fails."""
    if os.environ.get("NPAFLOW_REQUIRE_ALL_TESTS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fifo_that_answers_late(path: Path, after: float = 2.0) -> None:
    """A FIFO at `path` whose writer comes only after `after` seconds, if a reader is waiting.

    Code that wrongly opens it then reads garbage and fails its test, instead of
    hanging the suite; code that refuses FIFOs never meets the writer.
    """
    import threading
    import time

    os.mkfifo(path)

    def write_late() -> None:
        time.sleep(after)
        deadline = time.monotonic() + after
        while time.monotonic() < deadline:
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader (ENXIO): try again until the deadline
                time.sleep(0.05)
                continue
            os.write(descriptor, b"\xff not text")
            os.close(descriptor)
            return

    threading.Thread(target=write_late, daemon=True).start()


class RecordingSink:
    """Every metric value recorded in this process (the in-process worker's counters)."""

    def __init__(self) -> None:
        self.values: list[tuple[str, float, dict[str, str]]] = []

    def add(self, metric: Metric, value: float, labels: Mapping[str, str]) -> None:
        self.values.append((metric.value, value, dict(labels)))

    def total(self, metric: Metric) -> float:
        return sum(value for name, value, _ in self.values if name == metric.value)
