"""Secrets travel by name only; runs start without the shim through `temporal workflow start`."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.summary import RunSummary
from tests.harness import SPECS, Harness, temporal_start

pytestmark = pytest.mark.integration

CANARY = "canary-9d1f3e77-do-not-leak"


async def test_secret_canary_reaches_the_job_and_nothing_else(
    local_harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CANARY_SECRET", CANARY)
    outcome = await local_harness.run(
        "runtime/local-steps.yaml",
        run_id="rt-secret",
        vars={"root": str(tmp_path), "sleep": "0"},
        secret_env=["CANARY_SECRET"],
        poll_seconds=0.1,
    )
    assert outcome.status == "succeeded"
    seen = (tmp_path / "rt-secret" / "last.txt").read_text().split()[0]
    assert seen == hashlib.sha256(CANARY.encode()).hexdigest()
    history = await outcome.handle.fetch_history()
    assert CANARY not in history.to_json()
    for path in local_harness.home.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(errors="replace"), path
    captured = capfd.readouterr()
    assert CANARY not in captured.out + captured.err
    last = outcome.ledger.waves[-1]
    assert last.credentials.names == ["CANARY_SECRET"]
    assert last.credentials.fingerprint and last.credentials.values_persisted is False


async def test_missing_secret_fails_before_anything_launches(
    local_harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CANARY_SECRET", raising=False)
    outcome = await local_harness.run(
        "runtime/local-steps.yaml", vars={"root": str(tmp_path)}, secret_env=["CANARY_SECRET"]
    )
    assert outcome.status == "failed"
    assert "CANARY_SECRET" in outcome.error and "no job was launched" in outcome.error
    assert not (local_harness.home / "local" / "jobs" / "1").exists()


async def test_temporal_cli_starts_a_run_from_a_spec_uri(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec_uri = f"file://{SPECS / 'runtime/local-steps.yaml'}"
    payload = {"spec_uri": spec_uri, "vars": {"root": str(tmp_path), "sleep": "0"}, "poll_seconds": 0.1}
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-cli-start", payload)
        handle = env.client.get_workflow_handle("rt-cli-start", result_type=RunSummary)
        summary = await handle.result()
    assert summary.status == "succeeded"
    assert [w.states for w in summary.waves] == [["first"], ["slow"], ["last"]]


async def test_invalid_cli_input_fails_the_run_instead_of_hanging(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-bad-input", {"spec_uri": "", "spec": "", "bogus": 1})
        handle = env.client.get_workflow_handle("rt-bad-input")
        with pytest.raises(Exception, match="Workflow execution failed"):
            await handle.result()


async def test_invalid_spec_fails_with_the_validation_message(harness: Harness) -> None:
    outcome = await harness.run(
        "apiVersion: npa.workflow/v0.0.1\nkind: Workflow\nstates:\n  a: {run: {shell: x}, nxt: b}\n"
    )
    assert outcome.status != "succeeded"
    assert "unknown field 'nxt'" in outcome.error
