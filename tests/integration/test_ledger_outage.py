"""A ledger that is briefly unwritable never goes stale: the run waits it out, or `status` writes it.

The ledger directory is made immutable (`chattr +i`: even root gets EPERM, the
error an unprivileged worker or a shared filesystem would see) from the moment
wave 2 launches, for longer than a wave.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.contract import LEDGER_DIR, MANIFEST_FILE, RUNTIME_FILE, STATUS_FILE
from tests.e2e.test_cli_runs import npaflow
from tests.harness import Harness
from tests.helpers import eventually, skip_unless_all_required

pytestmark = pytest.mark.integration


def can_freeze(path: Path) -> bool:
    probe = path / "probe"
    probe.mkdir()
    frozen = (
        shutil.which("chattr")
        and subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    )
    if frozen:
        try:
            (probe / "x").write_text("x")
            frozen = False
        except PermissionError:
            pass
        subprocess.run(["chattr", "-i", str(probe)], check=True)
    return bool(frozen)


@contextmanager
def frozen(directory: Path) -> Iterator[None]:
    subprocess.run(["chattr", "+i", str(directory)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


@pytest.fixture
def freezable(tmp_path: Path) -> Path:
    if not can_freeze(tmp_path):
        skip_unless_all_required(
            "chattr +i is not enforced here (not root, or the filesystem lacks the flag)"
        )
    return tmp_path


def ledger_of(harness: Harness, run_id: str) -> Path:
    return harness.home / "runs" / run_id / LEDGER_DIR


async def wave_two_launched(ledger: Path) -> None:
    def launched() -> bool:
        try:
            return len(json.loads((ledger / RUNTIME_FILE).read_text())["waves"]) >= 2
        except (OSError, ValueError, KeyError):
            return False

    await eventually(launched, timeout=60, what="wave 2 launched")


def assert_true_and_complete(ledger: Path, status: str) -> None:
    runtime = json.loads((ledger / RUNTIME_FILE).read_text())
    assert runtime["status"] == status
    waves = runtime["waves"]
    assert [w["states"] for w in waves] == [["first"], ["slow"], ["last"]][: len(waves)]
    assert all(w["status"] != "running" and w["job_id"] for w in waves), waves
    manifest = json.loads((ledger / MANIFEST_FILE).read_text())
    assert json.loads((ledger / STATUS_FILE).read_text())["status"] == manifest["status"] != "running"


async def test_a_ledger_unwritable_for_longer_than_a_wave_is_waited_out_and_ends_complete(
    local_harness: Harness, freezable: Path
) -> None:
    run_id = "rt-ledger-outage"
    ledger = ledger_of(local_harness, run_id)
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-steps.yaml",
            run_id=run_id,
            vars={"root": str(freezable), "sleep": "1"},
            poll_seconds=0.1,
            transport_recovery_seconds=5,  # the ledger waits out 30 s
        )
        await wave_two_launched(ledger)
        with frozen(ledger):
            await asyncio.sleep(6)
        outcome = await local_harness.finish(handle)
    assert outcome.status == "succeeded", outcome.error
    assert_true_and_complete(ledger, "succeeded")
    assert len(json.loads((ledger / RUNTIME_FILE).read_text())["waves"]) == 3


async def test_a_run_that_ends_while_its_ledger_is_unwritable_has_it_written_by_status(
    env: WorkflowEnvironment, local_harness: Harness, freezable: Path
) -> None:
    run_id = "rt-ledger-repair"
    ledger = ledger_of(local_harness, run_id)
    async with local_harness.worker():
        handle = await local_harness.start(
            "runtime/local-steps.yaml",
            run_id=run_id,
            vars={"root": str(freezable), "sleep": "1"},
            poll_seconds=0.1,
            transport_recovery_seconds=1,  # the ledger gives up after 10 s
        )
        await wave_two_launched(ledger)
        with frozen(ledger):
            outcome = await local_harness.finish(handle)
            assert json.loads((ledger / RUNTIME_FILE).read_text())["status"] == "running"
        assert outcome.status == "failed"
        first = await npaflow(env, local_harness, "status", run_id)
        again = await npaflow(env, local_harness, "status", run_id)
    assert first.returncode == 0, first.stderr
    assert "ledger repair: written now" in first.stdout, first.stdout
    assert "ledger repair: written: repaired earlier" in again.stdout, again.stdout
    assert_true_and_complete(ledger, "failed")
