"""Whatever starts a run (the temporal CLI, the UI, an SDK client), hostile input fails it before launch.

Runs here are started with the real `temporal workflow start`, the path that
skips npaflow's own CLI checks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment

from activities.ledger import read_ledger
from activities.storage import StorageRouter
from npaflow.quota.messages import ASK_SIGNAL, CONFIGURE_UPDATE, POOL_WORKFLOW_TYPE, pool_workflow_id
from npaflow.runtime.cache.messages import FLIGHT_WORKFLOW_TYPE
from npaflow.runtime.contract import (
    ARTIFACTS_WORKFLOW_TYPE,
    CACHE_ADMIN_WORKFLOW_TYPE,
    ITEMS_DIFF_WORKFLOW_TYPE,
    LEDGER_REPAIR_WORKFLOW_TYPE,
    LOGS_WORKFLOW_TYPE,
    RECONCILE_WORKFLOW_TYPE,
    REPORT_WORKFLOW_TYPE,
    RUN_WAVES_WORKFLOW_TYPE,
    WORKFLOW_TYPE,
)
from tests.e2e.test_cli_runs import npaflow
from tests.harness import SPECS, Harness, temporal_signal, temporal_start

pytestmark = pytest.mark.integration

SPEC = (SPECS / "runtime/local-steps.yaml").read_text()


async def failure_of(env: WorkflowEnvironment, harness: Harness, workflow_id: str) -> str:
    outcome = await asyncio.wait_for(harness.finish(env.client.get_workflow_handle(workflow_id)), 60)
    assert outcome.status != "succeeded"
    return outcome.error


def launched_jobs(harness: Harness) -> list[Path]:
    return list((harness.home / "local" / "jobs").glob("*"))


@pytest.mark.parametrize(
    "workflow_id",
    ["x$(touch MARKER)", "x`touch MARKER`", "../../../escaped-run", "x" * 300, "-leading-dash"],
    ids=["command-substitution", "backticks", "traversal", "too-long", "leading-dash"],
)
async def test_a_workflow_id_that_is_not_a_run_id_fails_the_run_before_anything_launches(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path, workflow_id: str
) -> None:
    async with local_harness.worker():
        temporal_start(
            env, local_harness, workflow_id, {"spec": SPEC, "vars": {"root": str(tmp_path)}}, tmp_path
        )
        error = await failure_of(env, local_harness, workflow_id)
    assert "is not a valid run id" in error
    assert not (tmp_path / "MARKER").exists()
    assert launched_jobs(local_harness) == []
    assert not any(p.name == "escaped-run" for p in local_harness.home.parent.rglob("escaped-run"))


async def test_a_run_id_that_differs_from_the_workflow_id_fails_the_run(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    payload = {"spec": SPEC, "run_id": "other-run", "vars": {"root": str(tmp_path)}}
    async with local_harness.worker():
        temporal_start(env, local_harness, "this-run", payload, tmp_path)
        error = await failure_of(env, local_harness, "this-run")
    assert "differs from the workflow id" in error
    assert launched_jobs(local_harness) == []


@pytest.mark.parametrize(
    "field",
    [{"max_wait_seconds": 1e300}, {"transport_recovery_seconds": 1e15}, {"poll_seconds": 1e-9}],
    ids=lambda f: next(iter(f)),
)
async def test_an_overflowing_duration_fails_the_run_at_start(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path, field: dict[str, float]
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-overflow", {"spec": SPEC, **field}, tmp_path)
        await failure_of(env, local_harness, "rt-overflow")
    assert launched_jobs(local_harness) == []


async def test_the_status_of_a_run_refused_at_start_says_it_failed_and_why(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-refused", {"spec": SPEC, "vars": {"x": {"a": 1}}}, tmp_path)
        await failure_of(env, local_harness, "rt-refused")
        shown = await npaflow(env, local_harness, "status", "rt-refused")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("run rt-refused: failed\n")
    assert "vars.x" in shown.stdout and "Input should be a valid string" in shown.stdout


async def test_a_raw_start_with_a_misspelled_field_fails_with_one_line_naming_it_and_how_to_start(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-typo", {"spec": SPEC, "poll_second": 1}, tmp_path)
        error = await failure_of(env, local_harness, "rt-typo")
    assert "invalid RunRequest: poll_second: not a field it takes" in error
    assert "npaflow submit" in error
    assert "\n" not in error and "errors.pydantic.dev" not in error
    assert launched_jobs(local_harness) == []


@pytest.mark.parametrize(
    "workflow_type",
    [
        LOGS_WORKFLOW_TYPE,
        ARTIFACTS_WORKFLOW_TYPE,
        REPORT_WORKFLOW_TYPE,
        CACHE_ADMIN_WORKFLOW_TYPE,
        LEDGER_REPAIR_WORKFLOW_TYPE,
        RECONCILE_WORKFLOW_TYPE,
        ITEMS_DIFF_WORKFLOW_TYPE,
        RUN_WAVES_WORKFLOW_TYPE,
    ],
)
async def test_a_raw_start_of_a_helper_workflow_with_a_malformed_input_fails_at_once_instead_of_sticking(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path, workflow_type: str
) -> None:
    workflow_id = f"raw-{workflow_type.lower()}"
    async with local_harness.worker():
        temporal_start(env, local_harness, workflow_id, {"bogus": 1}, tmp_path, workflow_type=workflow_type)
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(env.client.get_workflow_handle(workflow_id).result(), 30)
    message = str(failure.value.cause.message)
    assert message.startswith("invalid ") and "\n" not in message


@pytest.mark.parametrize(
    ("workflow_type", "inputs", "refusal"),
    [
        (WORKFLOW_TYPE, 0, "NpaWorkflowRun takes 1 input(s), got 0 (hint: start runs with 'npaflow submit'"),
        (WORKFLOW_TYPE, 2, "NpaWorkflowRun takes 1 input(s), got 2 (hint: start runs with 'npaflow submit'"),
        (LOGS_WORKFLOW_TYPE, 0, "NpaflowJobLogs takes 1 input(s), got 0"),
        (FLIGHT_WORKFLOW_TYPE, 0, "NpaflowCacheFlight takes 1 to 2 input(s), got 0"),
    ],
    ids=["run-without-input", "run-with-two-inputs", "logs-without-input", "flight-without-key"],
)
async def test_a_raw_start_with_too_few_or_too_many_inputs_fails_at_once_instead_of_retrying_its_task(
    env: WorkflowEnvironment,
    local_harness: Harness,
    tmp_path: Path,
    workflow_type: str,
    inputs: int,
    refusal: str,
) -> None:
    workflow_id = f"raw-count-{workflow_type.lower()}-{inputs}"
    payload = {"spec": SPEC, "vars": {"root": str(tmp_path)}}
    async with local_harness.worker():
        temporal_start(
            env, local_harness, workflow_id, [payload] * inputs, tmp_path, workflow_type=workflow_type
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(env.client.get_workflow_handle(workflow_id).result(), 30)
    assert str(failure.value.cause.message).startswith(refusal)
    assert launched_jobs(local_harness) == []


def orphan_batch(run_id: str, owner_run: str | None) -> dict:
    job = {"job": {"backend": "local", "job_id": "vm-1-7"}, "status": "RUNNING"}
    if owner_run is not None:
        job["owner"] = {"run_id": owner_run, "namespace": "default", "task_queue": "npaflow"}
    return {"run_id": run_id, "ending": "terminated", "jobs": [job]}


@pytest.mark.parametrize(
    ("workflow_id", "batch", "refusal"),
    [
        (
            "npaflow:reconcile:rt-a",
            orphan_batch("rt-a", None),
            "job vm-1-7 belongs to no run, not to run rt-a",
        ),
        (
            "npaflow:reconcile:rt-a",
            orphan_batch("rt-a", "rt-b"),
            "job vm-1-7 belongs to rt-b, not to run rt-a",
        ),
        (
            "npaflow:reconcile:rt-c",
            orphan_batch("rt-a", "rt-a"),
            "run rt-a is reconciled under the workflow id",
        ),
    ],
    ids=["job-without-owner", "job-of-another-run", "id-of-another-run"],
)
async def test_a_raw_start_of_a_reconcile_with_jobs_not_of_its_run_fails_at_once_and_cancels_nothing(
    env: WorkflowEnvironment,
    local_harness: Harness,
    tmp_path: Path,
    workflow_id: str,
    batch: dict,
    refusal: str,
) -> None:
    async with local_harness.worker():
        temporal_start(
            env, local_harness, workflow_id, batch, tmp_path, workflow_type=RECONCILE_WORKFLOW_TYPE
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(env.client.get_workflow_handle(workflow_id).result(), 30)
    message = str(failure.value.cause.message)
    assert refusal in message and "\n" not in message


async def test_resuming_a_run_refused_for_its_input_says_there_is_nothing_to_resume(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-typo-resume", {"spec": SPEC, "retrys": 1}, tmp_path)
        await failure_of(env, local_harness, "rt-typo-resume")
        resumed = await npaflow(env, local_harness, "resume", "rt-typo-resume")
    assert resumed.returncode == 2 and "Traceback" not in resumed.stderr
    assert "was refused at start, its input is an invalid RunRequest (retrys: not a field" in resumed.stderr


async def test_a_var_with_a_nul_character_fails_the_run_before_anything_launches(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    payload = {"spec": SPEC, "vars": {"root": f"{tmp_path}/a\x00b"}}
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-nul", payload, tmp_path)
        error = await failure_of(env, local_harness, "rt-nul")
    assert "contains a NUL character" in error
    assert launched_jobs(local_harness) == []


async def test_a_prefix_var_that_leaves_the_ledger_root_fails_the_run_and_writes_nothing_outside(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    payload = {"spec": SPEC, "vars": {"root": str(tmp_path), "prefix": "../../../escaped-ledger"}}
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-prefix", payload, tmp_path)
        error = await failure_of(env, local_harness, "rt-prefix")
    assert "config.prefix" in error
    assert launched_jobs(local_harness) == []
    assert not list(local_harness.home.parent.rglob("escaped-ledger"))


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge"])
async def test_a_spec_uri_naming_a_device_a_fifo_or_a_huge_file_fails_fast_while_another_run_keeps_pace(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path, kind: str
) -> None:
    if kind == "dev-zero":
        target = Path("/dev/zero")
    elif kind == "fifo":
        target = tmp_path / "spec.fifo"
        os.mkfifo(target)
    else:
        target = tmp_path / "huge.yaml"
        with target.open("wb") as file:
            file.truncate(200 * 1024 * 1024)
    async with local_harness.worker():
        for index in range(6):
            temporal_start(
                env, local_harness, f"rt-{kind}-{index}", {"spec_uri": f"file://{target}"}, tmp_path
            )
        started = time.monotonic()
        good = await local_harness.finish(
            await local_harness.start(
                "runtime/local-steps.yaml", vars={"root": str(tmp_path), "sleep": "0"}, poll_seconds=0.1
            )
        )
        took = time.monotonic() - started
        errors = [await failure_of(env, local_harness, f"rt-{kind}-{index}") for index in range(6)]
    assert good.status == "succeeded", good.error
    assert took < 45
    expected = {"dev-zero": "not a regular file", "fifo": "is a FIFO", "huge": "larger than"}[kind]
    assert all(expected in error for error in errors), errors


async def test_a_raw_start_of_a_router_with_no_decision_source_fails_before_launch(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    spec = (SPECS / "runtime/unsourced-router.yaml").read_text()
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-unsourced-raw", {"spec": spec}, tmp_path)
        error = await failure_of(env, local_harness, "rt-unsourced-raw")
    assert "state route" in error and "no decision source" in error
    assert launched_jobs(local_harness) == []


async def test_a_raw_start_with_an_unknown_assumption_fails_before_launch(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-maybe", {"spec": SPEC, "assume_decision": "maybe"}, tmp_path)
        await failure_of(env, local_harness, "rt-maybe")
    assert launched_jobs(local_harness) == []


async def test_a_raw_start_with_a_spec_uri_no_worker_reads_fails_naming_the_field_before_launch(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-http", {"spec_uri": "http://127.0.0.1:1/x.yaml"}, tmp_path)
        error = await failure_of(env, local_harness, "rt-http")
    assert "invalid RunRequest: spec_uri: 'http://127.0.0.1:1/x.yaml' is not where a worker" in error
    assert launched_jobs(local_harness) == []


async def test_a_raw_start_with_a_pin_that_is_not_a_digest_fails_before_launch(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    images = {"pins": {"ghcr.io/acme/train:v1": "sha256:not-a-digest"}, "preflight": "verified"}
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-badpin", {"spec": SPEC, "images": images}, tmp_path)
        error = await failure_of(env, local_harness, "rt-badpin")
    assert "is not 'sha256:' and 64 hex digits" in error
    assert launched_jobs(local_harness) == []


async def test_a_raw_start_of_an_invalid_spec_fails_the_run_and_the_worker_logs_no_traceback(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with local_harness.worker():
        temporal_start(env, local_harness, "rt-no-kind", {"spec": "apiVersion: x\n"}, tmp_path)
        error = await failure_of(env, local_harness, "rt-no-kind")
    assert "missing required field 'kind'" in error
    warnings = [r for r in caplog.records if r.name.startswith("temporalio") and r.levelno >= logging.WARNING]
    assert not [r for r in warnings if r.exc_info], [r.getMessage() for r in warnings]
    assert launched_jobs(local_harness) == []


async def test_a_raw_start_of_a_quota_pool_with_a_malformed_input_fails_at_once_and_quota_set_starts_anew(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    workflow_id = pool_workflow_id("hostile")
    async with local_harness.worker():
        temporal_start(
            env, local_harness, workflow_id, {"bogus": 1}, tmp_path, workflow_type=POOL_WORKFLOW_TYPE
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(env.client.get_workflow_handle(workflow_id).result(), 30)
        created = await npaflow(env, local_harness, "quota", "set", "hostile", "--gpus", "4")
    message = str(failure.value.cause.message)
    assert message.startswith("invalid PoolCarry: config: Field required; bogus: not a field it takes")
    assert "npaflow quota set" in message and "\n" not in message
    assert created.returncode == 0, created.stderr


@pytest.mark.parametrize(
    ("pool", "ask"),
    [("forged-negative", {"H100": -100}), ("forged-huge", {"H100": 10**12})],
    ids=["negative-count", "beyond-any-pool"],
)
async def test_a_hand_sent_ask_with_an_impossible_gpu_count_leaves_the_pool_serving(
    env: WorkflowEnvironment, local_harness: Harness, pool: str, ask: dict[str, int]
) -> None:
    async with local_harness.worker():
        created = await npaflow(env, local_harness, "quota", "set", pool, "--gpus", "4")
        assert created.returncode == 0, created.stderr
        signal = {"lease_id": "x1", "run_id": "nobody", "wave": "w", "accelerators": ask}
        temporal_signal(env, pool_workflow_id(pool), ASK_SIGNAL, signal)
        changed = await npaflow(env, local_harness, "quota", "set", pool, "--gpus", "6", "--json")
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)[0]["config"]["gpus"] == 6


async def test_an_update_with_too_few_inputs_is_rejected_and_the_pool_keeps_serving(
    env: WorkflowEnvironment, local_harness: Harness
) -> None:
    pool = "count-lab"
    async with local_harness.worker():
        created = await npaflow(env, local_harness, "quota", "set", pool, "--gpus", "4")
        assert created.returncode == 0, created.stderr
        with pytest.raises(WorkflowUpdateFailedError) as rejected:
            await env.client.get_workflow_handle(pool_workflow_id(pool)).execute_update(CONFIGURE_UPDATE)
        changed = await npaflow(env, local_harness, "quota", "set", pool, "--gpus", "6", "--json")
    message = str(rejected.value.cause.message)
    assert message == "update 'configure' of NpaflowQuotaPool takes 1 input(s), got 0"
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)[0]["config"]["gpus"] == 6


async def test_a_raw_start_of_a_cache_flight_with_a_key_that_is_not_a_string_fails_at_once(
    env: WorkflowEnvironment, local_harness: Harness, tmp_path: Path
) -> None:
    async with local_harness.worker():
        temporal_start(
            env, local_harness, "raw-flight", {"bogus": 1}, tmp_path, workflow_type=FLIGHT_WORKFLOW_TYPE
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(env.client.get_workflow_handle("raw-flight").result(), 30)
    assert str(failure.value.cause.message).startswith("invalid flight key: {'bogus': 1} is not a cache key")


async def test_a_run_whose_prefix_holds_another_runs_ledger_is_refused_and_that_ledger_is_kept(
    local_harness: Harness, tmp_path: Path
) -> None:
    shared = {"root": str(tmp_path), "prefix": "team/shared"}
    first = await local_harness.run("runtime/local-steps.yaml", run_id="rt-shared-1", vars=shared)
    jobs = len(launched_jobs(local_harness))
    second = await local_harness.run("runtime/local-steps.yaml", run_id="rt-shared-2", vars=shared)
    ledger = await read_ledger(StorageRouter(), f"file://{local_harness.home.resolve()}/runs/team/shared")
    assert first.status == "succeeded" and second.status == "failed"
    assert "holds the ledger of run 'rt-shared-1' (succeeded); nothing was started" in second.error
    assert "config.prefix: 'team/{{run.id}}'" in second.error
    assert ledger is not None and ledger.run_id == "rt-shared-1"
    assert len(launched_jobs(local_harness)) == jobs
