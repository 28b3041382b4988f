"""The skypilot backend through the real workflow, on paths a cloud-less API server cannot reach.

The fake sits at the SDK boundary and speaks SkyPilot's own models
(tests/integration/fake_skypilot.py); backend, activities and workflow are real.
"""

from __future__ import annotations

import asyncio

import pytest
from sky import exceptions as sky_exceptions

from npaflow.cli import run_handlers
from npaflow.cli.run_handlers import status_once
from npaflow.cli.status_text import status_text
from npaflow.runtime.status import FailureClass, JobStatus
from npaflow.runtime.vocabulary import CancellationState, WaveStatus
from tests.harness import Harness
from tests.helpers import eventually
from tests.integration.fake_skypilot import FakeSkyPilotApi, statuses

pytestmark = pytest.mark.integration

SKY = {"backend": "skypilot"}


async def test_jobs_walk_pending_starting_running_to_succeeded(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("PENDING"), statuses("STARTING"), statuses("RUNNING"), statuses("SUCCEEDED")]
    outcome = await fake_sky_harness.run("runtime/fanout.yaml", **SKY)
    assert outcome.status == "succeeded"
    assert fake_sky.names() == [w.job_name for w in outcome.summary.waves]
    group, single, _join = outcome.ledger.waves
    assert [row.task_id for row in group.tasks] == [0, 1]
    assert group.max_concurrent_observed == 2
    assert single.tasks[0].task_name == single.job_name  # SkyPilot renames a single task...
    stage = next(s for s in outcome.ledger.stages if s.stage == "shard-c")
    assert stage.started_at == single.tasks[0].start_at != ""  # ...rows still match by task id


async def test_a_job_group_member_failure_fails_the_wave_with_the_failing_status(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.scripts = [[statuses("RUNNING", "RUNNING"), statuses("SUCCEEDED", "FAILED")]]
    outcome = await fake_sky_harness.run("runtime/fanout.yaml", **SKY)
    assert outcome.status == "failed"
    (wave,) = outcome.ledger.waves
    assert (wave.sky_status, wave.error_category) == (JobStatus.FAILED, FailureClass.PAYLOAD)


async def test_failed_setup_is_its_own_class_and_spends_retries(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.scripts = [[statuses("FAILED_SETUP")]]
    outcome = await fake_sky_harness.run("runtime/fanout.yaml", retries=1, **SKY)
    assert outcome.status == "succeeded"
    first = outcome.ledger.waves[0]
    assert (first.status, first.error_category) == (WaveStatus.FAILED, FailureClass.SETUP)


async def test_waiting_for_capacity_past_the_timeout_is_cancelled_and_retried_on_the_infra_budget(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.scripts = [[statuses("PENDING"), statuses("STARTING")]]
    outcome = await fake_sky_harness.run(
        "runtime/fanout.yaml", pending_timeout_seconds=1, max_infrastructure_recoveries=1, retries=0, **SKY
    )
    assert outcome.status == "succeeded"
    first = outcome.ledger.waves[0]
    assert (first.status, first.error_category) == (WaveStatus.FAILED, FailureClass.CAPACITY)
    assert first.cancellation.state is CancellationState.VERIFIED
    assert fake_sky.cancel_calls == [[1]]
    assert "waited for resources" in first.error


async def test_capacity_exhaustion_fails_the_run_as_capacity(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("FAILED_NO_RESOURCE")]
    fake_sky.failure_reasons = {
        1: "sky.exceptions.ManagedJobReachedMaxRetriesError: Resources "
        "unavailable: failed to launch clusters after 240 retries."
    }
    outcome = await fake_sky_harness.run(
        "runtime/fanout.yaml", max_infrastructure_recoveries=1, retries=3, **SKY
    )
    assert outcome.status == "failed"
    assert outcome.summary.failure_class is FailureClass.CAPACITY
    assert len(fake_sky.jobs) == 2  # one recovery, no payload retries
    assert "ManagedJobReachedMaxRetriesError" in outcome.ledger.waves[0].error


async def test_a_job_the_controller_lost_fails_as_controller(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("RUNNING")]

    original_queue = fake_sky.queue

    async def losing_queue(**kwargs):  # the record vanishes after the first observation
        records = await original_queue(**kwargs)
        for job in fake_sky.jobs.values():
            job.lost = True
        return records

    fake_sky.queue = losing_queue  # type: ignore[method-assign]
    outcome = await fake_sky_harness.run("runtime/fanout.yaml", max_infrastructure_recoveries=0, **SKY)
    assert outcome.status == "failed"
    wave = outcome.ledger.waves[0]
    assert (wave.sky_status, wave.error_category) == (JobStatus.FAILED_CONTROLLER, FailureClass.CONTROLLER)
    assert "controller lost the record" in wave.error


async def test_transient_api_errors_are_waited_out_without_spending_a_budget(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.unreachable_calls = 6
    outcome = await fake_sky_harness.run(
        "runtime/fanout.yaml", max_infrastructure_recoveries=0, transport_recovery_seconds=60, **SKY
    )
    assert outcome.status == "succeeded"
    assert len(fake_sky.jobs) == 3
    assert [w.attempt for w in outcome.ledger.waves] == [1, 1, 1]


async def test_an_unreachable_api_server_past_the_deadline_fails_as_transport(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.unreachable_calls = 10_000
    outcome = await fake_sky_harness.run(
        "runtime/fanout.yaml", max_infrastructure_recoveries=0, transport_recovery_seconds=1, **SKY
    )
    assert outcome.status == "failed"
    assert outcome.summary.failure_class is FailureClass.TRANSPORT
    assert "ApiServerConnectionError" in outcome.error
    assert fake_sky.jobs == {}


async def test_a_launch_refused_for_its_configuration_is_not_retried(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.launch_errors = {1: sky_exceptions.NoCloudAccessError("Cloud access is not set up.")}
    outcome = await fake_sky_harness.run(
        "runtime/fanout.yaml", retries=2, max_infrastructure_recoveries=2, **SKY
    )
    assert outcome.status == "failed"
    assert outcome.summary.failure_class is FailureClass.CONFIGURATION
    assert len(fake_sky.jobs) == 1


async def test_infra_is_written_into_every_task_of_a_job_group(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    seen: list[str] = []
    original_launch = fake_sky.launch

    async def recording_launch(yaml_text: str, name: str, secrets):
        seen.append(yaml_text)
        return await original_launch(yaml_text, name, secrets)

    fake_sky.launch = recording_launch  # type: ignore[method-assign]
    outcome = await fake_sky_harness.run("runtime/fanout.yaml", infra="k8s/gpu-pool", **SKY)
    assert outcome.status == "succeeded"
    assert seen[0].count("infra: k8s/gpu-pool") == 2


async def test_a_job_briefly_missing_from_one_answer_is_polled_on_and_never_relaunched(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("RUNNING"), statuses("RUNNING"), statuses("SUCCEEDED")]
    fake_sky.missing_answers = {1: 1}
    outcome = await fake_sky_harness.run("runtime/sky-one.yaml", max_infrastructure_recoveries=2, **SKY)
    assert outcome.status == "succeeded"
    assert len(fake_sky.jobs) == 1
    assert fake_sky.cancel_calls == []
    (wave,) = outcome.ledger.waves
    assert "absent from a queue answer that asked for it" in " ".join(wave.status_errors)


async def test_a_lost_job_is_cancelled_by_id_and_verified_before_the_infra_budget_relaunches_it(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.scripts = [[statuses("RUNNING")]]
    fake_sky.missing_answers = {1: 10_000}
    outcome = await fake_sky_harness.run("runtime/sky-one.yaml", max_infrastructure_recoveries=1, **SKY)
    assert outcome.status == "succeeded"
    first, second = outcome.ledger.waves
    assert fake_sky.cancel_calls == [[1]]
    assert (first.error_category, first.cancellation.state) == (
        FailureClass.CONTROLLER,
        CancellationState.VERIFIED,
    )
    assert (second.attempt, second.status) == (2, WaveStatus.SUCCEEDED)


async def test_a_lost_job_whose_cancel_cannot_be_verified_fails_closed_without_a_second_launch(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("RUNNING")]
    fake_sky.missing_answers = {1: 10_000}

    async def refused_cancel(job_ids: list[int]) -> None:
        fake_sky.cancel_calls.append(list(job_ids))
        raise sky_exceptions.PermissionDeniedError("not allowed to cancel this job")

    fake_sky.cancel = refused_cancel  # type: ignore[method-assign]
    outcome = await fake_sky_harness.run(
        "runtime/sky-one.yaml", max_infrastructure_recoveries=3, retries=3, **SKY
    )
    assert outcome.status == "failed"
    assert len(fake_sky.jobs) == 1
    (wave,) = outcome.ledger.waves
    assert wave.cancellation.state is CancellationState.FAILED
    assert not wave.sky_status.is_terminal()  # it may still run: never recorded as ended
    assert "no second job is launched" in wave.error


async def test_ten_runs_at_once_over_a_slow_queue_launch_exactly_one_job_each(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [statuses("RUNNING"), statuses("RUNNING"), statuses("SUCCEEDED")]
    fake_sky.queue_latency = 1.5
    async with fake_sky_harness.worker():
        handles = [
            await fake_sky_harness.start("runtime/sky-one.yaml", max_infrastructure_recoveries=2, **SKY)
            for _ in range(10)
        ]
        outcomes = await asyncio.gather(*(fake_sky_harness.finish(h) for h in handles))
    assert [o.status for o in outcomes] == ["succeeded"] * 10
    assert len(fake_sky.jobs) == 10
    assert fake_sky.cancel_calls == []
    polls = [ids for ids in fake_sky.queue_calls if ids is not None]
    assert max(len(ids) for ids in polls) > 2  # the awaits shared calls


async def test_why_skypilot_recovered_a_job_is_kept_in_the_attempt_s_observations(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.default = [
        statuses("RUNNING"),
        statuses("RECOVERING"),
        statuses("RUNNING"),
        statuses("SUCCEEDED"),
    ]
    fake_sky.recovery_reasons = {1: "Cluster preempted or failed: spot instance reclaimed"}
    outcome = await fake_sky_harness.run("runtime/sky-one.yaml", poll_seconds=0.05, **SKY)
    assert outcome.status == "succeeded", outcome.error
    (wave,) = outcome.ledger.waves
    reasons = [o.recovering for o in wave.observations if o.recovering]
    assert reasons and set(reasons[0].values()) == {"Cluster preempted or failed: spot instance reclaimed"}
    assert wave.tasks[0].recovery_reason == ""  # the last row: running again, then done


async def test_status_says_what_a_launch_retrying_against_an_unreachable_api_server_gets(
    fake_sky_harness: Harness, fake_sky: FakeSkyPilotApi
) -> None:
    fake_sky.unreachable_calls = 10_000
    async with fake_sky_harness.worker():
        handle = await fake_sky_harness.start(
            "runtime/fanout.yaml", max_infrastructure_recoveries=0, transport_recovery_seconds=300, **SKY
        )

        async def stalled() -> str | None:
            text = await status_once(handle)
            return text if "waiting: the launch" in text else None

        text = await eventually(stalled, timeout=60, what="status naming the launch's failing calls")
        with pytest.MonkeyPatch.context() as patch:  # a status query no worker answers in time
            patch.setattr(run_handlers, "_queried", _unanswered)
            fallback = status_text(await run_handlers._view(handle, repair_with=fake_sky_harness.client))
        fake_sky.unreachable_calls = 0  # the server is back: the launch goes on, and says nothing more
        outcome = await fake_sky_harness.finish(handle)
        after = await status_once(handle)
    said = [line for line in text.splitlines() if line.startswith("waiting: ")]
    assert len(said) == 1 and said[0].startswith("waiting: the launch gets no answer from the backend for ")
    assert "failed calls; retried within the run's transport budget): " in said[0]
    assert "ApiServerConnectionError" in said[0]
    assert outcome.status == "succeeded" and "waiting:" not in after
    assert said[0].split(" for ")[0] in fallback  # the memo's fallback still says what the run waits for


async def _unanswered(*_: object) -> object:
    raise TimeoutError("no worker answered the status query")
