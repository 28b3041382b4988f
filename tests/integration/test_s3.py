"""Artifacts, decisions, triggers, specs and the ledger on a real S3 server (SeaweedFS)."""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.storage import ArtifactMissingError, S3Storage, StorageRouter, has_content
from tests.harness import SPECS, Harness
from tests.integration.fake_backend import FakeBackend
from tests.s3_server import BUCKET, S3Server

pytestmark = pytest.mark.integration


@pytest.fixture
def s3_harness(env: WorkflowEnvironment, home, s3_server: S3Server) -> Harness:
    storage = StorageRouter(S3Storage(s3_server.endpoint, page_size=2))
    return Harness(env.client, home, FakeBackend(), f"tq-{uuid.uuid4().hex[:8]}", storage)


def put(server: S3Server, key: str, body: str) -> None:
    server.client().put_object(Bucket=BUCKET, Key=key, Body=body.encode())


async def test_storage_reads_sizes_and_lists_across_pages(s3_server: S3Server) -> None:
    storage = S3Storage(s3_server.endpoint, page_size=2)
    prefix = f"s3://{BUCKET}/unit-{uuid.uuid4().hex[:6]}/"
    for name in ("a", "b", "c", "d", "e"):
        await storage.write_text(prefix + f"dir/{name}.json", "{}")
    assert await storage.list_keys(prefix + "dir/") == [f"{n}.json" for n in "abcde"]
    assert await storage.read_text(prefix + "dir/a.json") == "{}"
    assert await storage.size(prefix + "missing.json") is None
    assert await has_content(storage, prefix + "dir/")
    assert not await has_content(storage, prefix + "empty/")
    with pytest.raises(ArtifactMissingError):
        await storage.read_text(prefix + "missing.json")


async def test_a_run_on_s3_waits_reads_decisions_checks_outputs_and_exports_the_ledger(
    s3_harness: Harness, s3_server: S3Server
) -> None:
    run_id = f"rt-s3-{uuid.uuid4().hex[:6]}"
    for name in ("1", "2", "3"):
        put(s3_server, f"{run_id}/inbox/{name}.json", "{}")
    put(s3_server, f"{run_id}/shards/part-0", "rows")
    put(s3_server, f"{run_id}/route/decision.json", json.dumps({"decision": "promote"}))
    fake = s3_harness.backend
    assert isinstance(fake, FakeBackend)
    async with s3_harness.worker():
        outcome = await s3_harness.finish(await s3_harness.start("runtime/s3-gate.yaml", run_id=run_id))
    assert outcome.status == "succeeded"
    assert fake.submissions == [["ingest"], ["route"], ["publish"]]
    assert outcome.summary.watermarks["ingest"].objects == 3
    assert outcome.summary.run_prefix_uri == f"s3://{BUCKET}/{run_id}"
    body = s3_server.client().get_object(Bucket=BUCKET, Key=f"{run_id}/npa-workflow/runtime.json")
    ledger = json.loads(body["Body"].read())
    assert ledger["status"] == "succeeded"
    assert [d["decision"] for d in ledger["decisions"]] == ["promote_checkpoint"]
    workflow_yaml = s3_server.client().get_object(Bucket=BUCKET, Key=f"{run_id}/workflow.yaml")
    assert b"s3-gate" in workflow_yaml["Body"].read()


async def test_a_run_starts_from_a_spec_on_s3(s3_harness: Harness, s3_server: S3Server) -> None:
    put(s3_server, "specs/fanout.yaml", (SPECS / "runtime/fanout.yaml").read_text())
    async with s3_harness.worker():
        handle = await s3_harness.client.start_workflow(
            "NpaWorkflowRun",
            {"spec_uri": f"s3://{BUCKET}/specs/fanout.yaml", "poll_seconds": 0.05},
            id=f"rt-s3-spec-{uuid.uuid4().hex[:6]}",
            task_queue=s3_harness.task_queue,
        )
        result = await handle.result()
    assert result["status"] == "succeeded"


async def test_missing_output_on_s3_fails_the_wave(s3_harness: Harness, s3_server: S3Server) -> None:
    run_id = f"rt-s3-missing-{uuid.uuid4().hex[:6]}"
    for name in ("1", "2", "3"):
        put(s3_server, f"{run_id}/inbox/{name}.json", "{}")
    outcome = await s3_harness.run("runtime/s3-gate.yaml", run_id=run_id)
    assert outcome.status == "failed"
    assert "completed without declared durable output" in outcome.error
