"""Long runs continue as new at wave boundaries and replay to the same point (DESIGN §3.10)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from npaflow.runtime.summary import RunStatusView
from npaflow.temporal.data_converter import DATA_CONVERTER
from npaflow.temporal.dev_server import DEV_SERVER_FLAGS
from tests.harness import TEMPORAL_BIN, Harness
from tests.helpers import eventually
from tests.integration.fake_backend import FakeBackend
from workflows_def import SEARCH_ATTRIBUTE_KEYS, NpaWorkflowRun

pytestmark = pytest.mark.integration


@pytest_asyncio.fixture(scope="module")
async def short_history_env() -> AsyncIterator[WorkflowEnvironment]:
    environment = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL_BIN),
        data_converter=DATA_CONVERTER,
        search_attributes=list(SEARCH_ATTRIBUTE_KEYS),
        ui=False,
        dev_server_log_level="error",
        dev_server_extra_args=[
            *DEV_SERVER_FLAGS,
            "--dynamic-config-value",
            "limit.historyCount.suggestContinueAsNew=60",
        ],
    )
    yield environment
    await environment.shutdown()


def chain_with_a_loop(waves: int) -> str:
    states = {f"s{i:02d}": {"run": {"shell": "true"}, "next": f"s{i + 1:02d}"} for i in range(waves)}
    states[f"s{waves - 1:02d}"] = {"run": {"shell": "true"}, "next": "gate-loop"}
    states["gate-loop"] = {
        "sequence": ["gate"],
        "loop": {"max": 3, "until": "promote_checkpoint"},
        "next": "done",
    }
    states["gate"] = {
        "writesDecision": True,
        "run": {"shell": "true"},
        "params": {"decision_uri": "file://{{config.root}}/decision.json"},
    }
    states["done"] = {"terminal": True, "run": {"shell": "true"}}
    return yaml.safe_dump(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "long"},
            "config": {"root": "/tmp/unset"},
            "initial": "s00",
            "states": states,
        }
    )


async def test_a_long_run_continues_as_new_and_launches_every_wave_once(
    short_history_env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "decision.json").write_text('{"decision": "loop_back"}')
    fake = FakeBackend()
    launched_gates: list[str] = []

    def flip_decision_after_two_gates(launch) -> None:
        if launch.states == ["gate"]:
            launched_gates.append(launch.job_id)
            if len(launched_gates) == 2:
                (tmp_path / "decision.json").write_text('{"decision": "promote"}')

    fake.on_launch = flip_decision_after_two_gates
    harness = Harness(short_history_env.client, home, fake, f"tq-{uuid.uuid4().hex[:6]}")
    outcome = await harness.run(chain_with_a_loop(8), run_id="rt-long", vars={"root": str(tmp_path)})
    assert outcome.status == "succeeded"
    states = [s for launch in fake.submissions for s in launch]
    assert states == [f"s{i:02d}" for i in range(8)] + ["gate", "gate", "done"]
    runs = [w async for w in short_history_env.client.list_workflows("WorkflowId = 'rt-long'")]
    assert len(runs) > 1
    assert sum(r.status == WorkflowExecutionStatus.CONTINUED_AS_NEW for r in runs) == len(runs) - 1
    assert [w.status.value for w in outcome.ledger.waves].count("succeeded") == 11


def fan_out_within_min_success(items_uri: str, min_success: float = 0.5) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "npa.workflow/v0.0.1",
            "kind": "Workflow",
            "metadata": {"name": "batches"},
            "initial": "gen",
            "states": {
                "gen": {"run": {"shell": "true"}, "outputs": [{"uri": items_uri}], "next": "fan"},
                "fan": {
                    "parallel": ["m"],
                    "forEach": {"items": items_uri, "as": "it", "minSuccess": min_success},
                    "maxConcurrency": 1,
                    "next": "done",
                },
                "m": {"run": {"shell": "echo {{it.id}}"}},
                "done": {"terminal": True, "run": {"shell": "true"}},
            },
        }
    )


async def test_a_batch_that_failed_within_min_success_stays_failed_after_continue_as_new(
    short_history_env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "items.json").write_text(json.dumps([{"id": f"i{n}"} for n in range(10)]))
    fake = FakeBackend(scripts=[["SUCCEEDED"], ["SUCCEEDED"], ["FAILED"]])  # the second member fails
    harness = Harness(short_history_env.client, home, fake, f"tq-{uuid.uuid4().hex[:6]}")
    spec = fan_out_within_min_success(f"file://{tmp_path}/items.json")
    outcome = await harness.run(spec, run_id="rt-batches")
    assert outcome.status == "succeeded"
    runs = [w async for w in short_history_env.client.list_workflows("WorkflowId = 'rt-batches'")]
    assert len(runs) > 1  # the run continued as new after the failed batch
    members = [launch.task_names for launch in fake.launches if launch.task_names[0].startswith("m-")]
    assert len(members) == 10 and len({name for names in members for name in names}) == 10
    (fan_out,) = outcome.ledger.fan_outs.values()
    failed_member = members[1][0].removeprefix("m-")
    assert (fan_out.succeeded, fan_out.failed) == (9, [failed_member])


def serial_chain(waves: int) -> str:
    states: dict[str, object] = {
        f"s{i:02d}": {"run": {"shell": "true"}, "next": f"s{i + 1:02d}"} for i in range(waves)
    }
    states[f"s{waves - 1:02d}"] = {"run": {"shell": "true"}, "terminal": True}
    document = {"apiVersion": "npa.workflow/v0.0.1", "kind": "Workflow", "metadata": {"name": "chain"}}
    return yaml.safe_dump({**document, "initial": "s00", "states": states})


async def test_a_pause_sent_while_continue_as_new_is_due_holds_the_run_until_resume(
    short_history_env: WorkflowEnvironment, home: Path
) -> None:
    fake = FakeBackend(default=["RUNNING"] * 20 + ["SUCCEEDED"])  # each wave runs about a second
    harness = Harness(short_history_env.client, home, fake, f"tq-{uuid.uuid4().hex[:6]}")
    run = short_history_env.client.get_workflow_handle_for(NpaWorkflowRun.run, "rt-pause-due")  # the newest
    async with harness.worker():
        first = await harness.start(serial_chain(12), run_id="rt-pause-due")

        async def handover_due() -> bool:  # past the server's 60 events: the next wave boundary hands over
            return (await first.describe()).history_length >= 60

        await eventually(handover_due, timeout=60, interval=0.05)
        launched = len(fake.launches)
        await run.signal("pause")
        await eventually(lambda: _phase(run, "paused"), timeout=30)
        await asyncio.sleep(2)  # a wave would have launched by now
        assert len(fake.launches) == launched
        await run.signal("resume")
        outcome = await harness.finish(run)
    assert outcome.status == "succeeded"
    assert [launch.states for launch in fake.launches] == [[f"s{i:02d}"] for i in range(12)]
    assert len([w async for w in short_history_env.client.list_workflows("WorkflowId = 'rt-pause-due'")]) > 1


async def _phase(handle: WorkflowHandle, wanted: str) -> bool:
    return (await handle.query("status", result_type=RunStatusView)).phase.value == wanted


async def test_resume_of_a_run_that_continued_as_new_retries_every_member_that_failed(
    short_history_env: WorkflowEnvironment, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "items.json").write_text(json.dumps([{"id": f"i{n}"} for n in range(10)]))
    spec = fan_out_within_min_success(f"file://{tmp_path}/items.json", min_success=0.9)  # 1 may fail
    fake = FakeBackend(scripts=[["SUCCEEDED"]] * 3 + [["FAILED"]] + [["SUCCEEDED"]] * 6 + [["FAILED"]])
    harness = Harness(short_history_env.client, home, fake, f"tq-{uuid.uuid4().hex[:6]}")
    run = short_history_env.client.get_workflow_handle_for(NpaWorkflowRun.run, "rt-can-resume")
    async with harness.worker():
        failed = await harness.finish(await harness.start(spec, run_id="rt-can-resume"))
        assert failed.status == "failed"  # the second and the ninth member failed: one too many
        executions = short_history_env.client.list_workflows("WorkflowId = 'rt-can-resume'")
        assert len([w async for w in executions]) > 1  # it had continued as new before it failed
        resume = await asyncio.create_subprocess_exec(
            str(TEMPORAL_BIN.parent / "npaflow"), "resume", "rt-can-resume",
            "--address", short_history_env.client.service_client.config.target_host,
            "--task-queue", harness.task_queue,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await resume.communicate()
        assert resume.returncode == 0, err.decode()
        resumed = await harness.finish(run)
    assert resumed.status == "succeeded" and resumed.ledger is not None
    members = [launch.task_names[0] for launch in fake.launches if launch.task_names[0].startswith("m-")]
    relaunched = sorted({name for name in members if members.count(name) == 2})
    failed_first = [fake.launches[3].task_names[0], fake.launches[10].task_names[0]]
    assert relaunched == sorted(failed_first) and len(members) == 12  # each failed member once more
    (fan_out,) = resumed.ledger.fan_outs.values()
    assert fan_out.failed == []
