"""The launch transaction (DESIGN §3.4): at most one live job per wave attempt, whatever crashed where.

`launch_wave` runs in Temporal's ActivityEnvironment with the heartbeat details a
crashed earlier attempt would have left, against the skypilot backend on a fake
at the SDK boundary.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities import heartbeat
from activities.backends.skypilot import SkyPilotBackend
from activities.context import ActivityContext
from activities.launch import LaunchActivities
from activities.storage import StorageRouter
from npaflow.errors import ConfigurationError
from npaflow.render import RenderOptions, render_wave
from npaflow.runtime.contract import LAUNCHES_DIR, ledger_file_uri
from npaflow.runtime.ledger import LaunchReceipt
from npaflow.runtime.messages import HeartbeatDetails, LaunchWaveInput
from npaflow.runtime.request import BackendName
from tests.helpers import CATALOG, plan_of
from tests.integration.fake_skypilot import FakeSkyPilotApi, statuses

pytestmark = pytest.mark.integration


@pytest.fixture
def api() -> FakeSkyPilotApi:
    return FakeSkyPilotApi(default=[statuses("RUNNING")])


@pytest.fixture
def launches(api: FakeSkyPilotApi, tmp_path: Path) -> LaunchActivities:
    return LaunchActivities(
        ActivityContext(
            home=tmp_path, storage=StorageRouter(), backends={BackendName.SKYPILOT: SkyPilotBackend(api)}
        )
    )


def wave_input(tmp_path: Path, **changes: object) -> LaunchWaveInput:
    wave = plan_of("fanout-demo.yaml", run_id="rt").waves[0]
    return LaunchWaveInput(
        run_id="rt",
        workflow="fanout-demo",
        wave=wave,
        attempt=1,
        backend=BackendName.SKYPILOT,
        catalog=CATALOG,
        ledger_uri=f"file://{tmp_path}/runs/rt",
        transport_recovery_seconds=5,
        **changes,
    )


def rendered(request: LaunchWaveInput):
    return render_wave(
        request.wave,
        request.catalog,
        RenderOptions(run_id=request.run_id, workflow=request.workflow, attempt=request.attempt),
    )


def environment(*, attempt: int = 1, details: HeartbeatDetails | None = None) -> ActivityEnvironment:
    env = ActivityEnvironment()
    beats: list[dict] = []
    env.on_heartbeat = lambda *args: beats.append(args[0])
    env.info = dataclasses.replace(
        env.info, attempt=attempt, heartbeat_details=([details.model_dump(mode="json")] if details else [])
    )
    env.beats = beats  # type: ignore[attr-defined]
    return env


async def prelaunch(api: FakeSkyPilotApi, request: LaunchWaveInput) -> str:
    """What an attempt that crashed after submitting left on the server: the request id."""
    wave = rendered(request)
    return await api.launch(wave.yaml, wave.job_name, {})


async def test_a_fresh_launch_records_the_request_id_before_resolving_it(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_EVERY", 0.05)
    resolve = api.get

    async def slow_get(request_id: str) -> object:
        await asyncio.sleep(0.5)  # the API server takes a while to create the job
        return await resolve(request_id)

    monkeypatch.setattr(api, "get", slow_get)
    env = environment()
    result = await env.run(launches.launch_wave, wave_input(tmp_path))
    assert (result.job.job_id, result.adopted) == ("1", False)
    assert result.request_id and any(b.get("request_id") == result.request_id for b in env.beats)
    receipt_uri = ledger_file_uri(f"file://{tmp_path}/runs/rt", f"{LAUNCHES_DIR}/{result.job.job_name}.json")
    receipt = LaunchReceipt.model_validate_json(Path(receipt_uri.removeprefix("file://")).read_text())
    assert receipt.request_id == result.request_id


async def test_a_quick_launch_sends_no_heartbeat_before_one_is_due(
    launches: LaunchActivities, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SkyPilot launch is found again by its receipt or name: an opening beat only costs the server."""
    monkeypatch.setattr(heartbeat, "HEARTBEAT_EVERY", 60.0)
    env = environment()
    result = await env.run(launches.launch_wave, wave_input(tmp_path))
    assert result.job.job_id == "1"
    assert env.beats == []


async def test_a_retry_resolves_the_recorded_request_id_and_launches_nothing(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path)
    request_id = await prelaunch(api, request)
    env = environment(attempt=2, details=HeartbeatDetails(phase="submitted", request_id=request_id))
    result = await env.run(launches.launch_wave, request)
    assert (result.job.job_id, result.adopted, result.request_id) == ("1", True, request_id)
    assert len(api.jobs) == 1


async def test_a_retry_without_a_request_id_adopts_the_job_by_name_and_token(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path)
    request_id = await prelaunch(api, request)
    await api.get(request_id)
    env = environment(attempt=2, details=HeartbeatDetails(phase="launching"))
    result = await env.run(launches.launch_wave, request)
    assert (result.job.job_id, result.adopted) == ("1", True)
    assert len(api.jobs) == 1
    assert any("adopted job 1" in note for note in result.reconciliation)


async def test_a_resumed_execution_finds_the_launch_receipt_in_the_ledger(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path, reconcile=True)
    request_id = await prelaunch(api, request)
    wave = rendered(request)
    path = Path(f"{tmp_path}/runs/rt/npa-workflow/{LAUNCHES_DIR}/{wave.job_name}.json")
    path.parent.mkdir(parents=True)
    path.write_text(
        LaunchReceipt(
            job_name=wave.job_name, launch_token=wave.launch_token, request_id=request_id
        ).model_dump_json()
    )
    result = await environment().run(launches.launch_wave, request)
    assert (result.job.job_id, result.request_id) == ("1", request_id)
    assert len(api.jobs) == 1


async def test_a_job_left_inactive_by_a_failed_launch_is_cancelled_by_id_never_adopted(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path)
    await prelaunch(api, request)  # never resolved: PENDING / INACTIVE forever
    env = environment(attempt=2, details=HeartbeatDetails(phase="launching"))
    result = await env.run(launches.launch_wave, request)
    assert result.job.job_id == "2" and not result.adopted
    assert api.cancel_calls == [[1]]
    assert any("cannot progress" in note for note in result.reconciliation)


async def test_two_live_jobs_for_one_attempt_keep_the_first_and_cancel_the_other_by_id(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path)
    for _ in range(2):
        await api.get(await prelaunch(api, request))
    env = environment(attempt=2, details=HeartbeatDetails(phase="launching"))
    result = await env.run(launches.launch_wave, request)
    assert result.job.job_id == "1"
    assert api.cancel_calls == [[2]]


async def test_a_job_under_the_same_name_with_another_token_is_never_adopted(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    request = wave_input(tmp_path)
    wave = rendered(request)
    await api.get(
        await api.launch(wave.yaml.replace(wave.launch_token, "npa-launch-someone-else"), wave.job_name, {})
    )
    env = environment(attempt=2, details=HeartbeatDetails(phase="launching"))
    result = await env.run(launches.launch_wave, request)
    assert (result.job.job_id, result.adopted) == ("2", False)
    assert api.cancel_calls == []


async def test_a_submit_that_failed_in_transport_is_looked_up_before_submitting_again(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    original = api.launch
    calls = 0

    async def launch_then_lose_the_response(yaml_text, name, secrets):
        nonlocal calls
        calls += 1
        request_id = await original(yaml_text, name, secrets)
        if calls == 1:
            await api.get(request_id)
            raise ConnectionError("response lost after the server accepted the launch")
        return request_id

    api.launch = launch_then_lose_the_response  # type: ignore[method-assign]
    result = await environment().run(launches.launch_wave, wave_input(tmp_path))
    assert (result.job.job_id, result.adopted) == ("1", True)
    assert calls == 1 and len(api.jobs) == 1


async def test_missing_secret_values_launch_nothing(
    launches: LaunchActivities, api: FakeSkyPilotApi, tmp_path: Path
) -> None:
    with pytest.raises(Exception, match="NPAFLOW_TEST_ABSENT_SECRET") as raised:
        await environment().run(
            launches.launch_wave, wave_input(tmp_path, secret_env=["NPAFLOW_TEST_ABSENT_SECRET"])
        )
    assert isinstance(raised.value.__cause__, ConfigurationError)
    assert api.jobs == {}
