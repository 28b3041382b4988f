"""Fan-out from data with its list, its ledger copy and members.json on a real S3 server (SeaweedFS)."""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.storage import S3Storage, StorageRouter
from npaflow.fanout import MembersDocument, list_digest, member_key
from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend
from tests.s3_server import BUCKET, S3Server

pytestmark = pytest.mark.integration

SEVEN = [{"id": f"s{n}", "rows": n} for n in range(7)]
SPEC = """apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: fan-s3}
config: {bucket: BUCKET_NAME}
initial: split
states:
  split:
    run: {shell: echo split}
    outputs: [{uri: "s3://{{config.bucket}}/{{run.id}}/items.json", schema: items}]
    next: work
  work:
    parallel: [shard]
    forEach: {items: "s3://{{config.bucket}}/{{run.id}}/items.json", as: s, max: 7}
    maxConcurrency: 3
    next: done
  shard:
    run: {shell: "train --rows {{s.rows}}"}
  done:
    terminal: true
    run: {shell: "summarize {{state.work.uri}}"}
""".replace("BUCKET_NAME", BUCKET)


@pytest.fixture
def s3_harness(env: WorkflowEnvironment, home, s3_server: S3Server) -> Harness:
    storage = StorageRouter(S3Storage(s3_server.endpoint, page_size=2))
    return Harness(env.client, home, FakeBackend(), f"tq-{uuid.uuid4().hex[:8]}", storage)


def read(server: S3Server, key: str) -> str:
    return server.client().get_object(Bucket=BUCKET, Key=key)["Body"].read().decode()


async def test_a_list_on_s3_fans_out_and_its_copy_and_members_json_land_in_the_s3_ledger(
    s3_harness: Harness, s3_server: S3Server
) -> None:
    run_id = f"fan-s3-{uuid.uuid4().hex[:6]}"
    s3_server.client().put_object(Bucket=BUCKET, Key=f"{run_id}/items.json", Body=json.dumps(SEVEN).encode())
    fake = s3_harness.backend
    assert isinstance(fake, FakeBackend)
    async with s3_harness.worker():
        outcome = await s3_harness.finish(await s3_harness.start(SPEC, run_id=run_id))
    assert outcome.status == "succeeded", outcome.error
    batches = [states for states in fake.submissions if states[0].startswith("shard")]
    assert [len(states) for states in batches] == [3, 3, 1]
    assert sorted(s for states in batches for s in states) == sorted(f"shard-{member_key(i)}" for i in SEVEN)
    folder = f"{run_id}/npa-workflow/fanout/work-2"
    assert json.loads(read(s3_server, f"{folder}/items.json")) == SEVEN
    members = MembersDocument.model_validate_json(read(s3_server, f"{folder}/members.json"))
    assert (members.succeeded, members.digest) == (7, list_digest(SEVEN))
    ledger = json.loads(read(s3_server, f"{run_id}/npa-workflow/runtime.json"))
    record = ledger["fan_outs"]["work#2"]
    assert record["digest"] == list_digest(SEVEN) and record["etag"] and record["count"] == 7
    assert f"summarize s3://{BUCKET}/{folder}/members.json" in fake.launches[-1].tasks[0]["run"]
