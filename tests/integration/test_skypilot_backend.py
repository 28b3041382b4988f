"""The SkyPilot backend against a `sky` test double that prints what the real CLI prints."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.backends.skypilot import SkyPilotBackend
from activities.context import ActivityContext
from activities.storage import StorageRouter
from npaflow.runtime.request import BackendName
from tests.harness import Harness

pytestmark = pytest.mark.integration

FAKE_SKY = Path(__file__).resolve().parents[1] / "fakes" / "sky"


class SkyHarness(Harness):
    def context(self) -> ActivityContext:
        return ActivityContext(home=self.home, backends={BackendName.SKYPILOT: self.backend},
                               storage=StorageRouter())


@pytest.fixture
def sky(env: WorkflowEnvironment, home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> SkyHarness:
    state = tmp_path / "sky-state.json"
    monkeypatch.setenv("FAKE_SKY_STATE", str(state))
    wrapper = tmp_path / "sky"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {FAKE_SKY} \"$@\"\n")
    wrapper.chmod(0o755)
    return SkyHarness(env.client, home, SkyPilotBackend(str(wrapper), home),
                      f"tq-{uuid.uuid4().hex[:8]}")


def sky_state(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "sky-state.json").read_text())


async def test_fanout_runs_as_managed_jobs_with_exact_ids(sky: SkyHarness, tmp_path: Path) -> None:
    outcome = await sky.run("runtime/fanout.yaml", backend="skypilot", infra="k8s/gpu")
    assert outcome.status == "succeeded"
    assert [w.job_id for w in outcome.summary.waves] == ["1", "2", "3"]
    state = sky_state(tmp_path)
    launches = [c for c in state["calls"] if c[:2] == ["jobs", "launch"]]
    assert [c[c.index("--name") + 1] for c in launches] == [w.job_name for w in outcome.summary.waves]
    assert all("--detach-run" in c and "--yes" in c and c[c.index("--infra") + 1] == "k8s/gpu"
               for c in launches)
    assert state["jobs"]["1"]["execution"] == "parallel"
    assert state["jobs"]["1"]["metadata"]["npaflow_launch_token"].startswith("npa-launch-")


async def test_timeout_cancels_the_managed_job_by_exact_id(sky: SkyHarness, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SKY_SCRIPT", "RUNNING")
    outcome = await sky.run("runtime/fanout.yaml", backend="skypilot", max_wait_seconds=1)
    assert outcome.status == "failed"
    cancels = [c for c in sky_state(tmp_path)["calls"] if c[:2] == ["jobs", "cancel"]]
    assert cancels == [["jobs", "cancel", "--yes", "1"]]
    assert outcome.summary.waves[0].cancellation.state.value == "verified"


async def test_secrets_are_passed_by_name_with_values_in_the_environment(
        sky: SkyHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf-canary-value")
    outcome = await sky.run("runtime/fanout.yaml", backend="skypilot", secret_env=["HF_TOKEN"])
    assert outcome.status == "succeeded"
    state = sky_state(tmp_path)
    assert state["jobs"]["1"]["secrets"] == {"HF_TOKEN": True}
    assert "hf-canary-value" not in json.dumps(state)
    assert "hf-canary-value" not in (await outcome.handle.fetch_history()).to_json()


async def test_configuration_errors_at_launch_are_not_retried(sky: SkyHarness, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SKY_LAUNCH_ERROR", "sky.exceptions.InvalidSkyPilotConfigError: "
                       "Invalid task YAML: Found unsupported field 'foo'.")
    outcome = await sky.run("runtime/fanout.yaml", backend="skypilot", retries=2)
    assert outcome.status == "failed"
    assert "unsupported field" in outcome.error
    launches = [c for c in sky_state(tmp_path)["calls"] if c[:2] == ["jobs", "launch"]]
    assert len(launches) == 1


async def test_a_run_asking_for_a_backend_the_worker_lacks_fails_clearly(harness: Harness) -> None:
    outcome = await harness.run("runtime/fanout.yaml", backend="skypilot")
    assert outcome.status == "failed"
    assert "backend 'skypilot' is not configured on this worker" in outcome.error
