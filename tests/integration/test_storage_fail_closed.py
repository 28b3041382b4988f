"""Storage fails closed: only a definite "no such key" is missing; access errors fail at once.

Against the real SeaweedFS S3 server with wrong credentials, and with a bucket
policy that denies reads under `denied/`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.storage import ArtifactMissingError, FileStorage, S3Storage, StorageRouter
from npaflow.errors import AccessDeniedError
from tests.harness import Harness
from tests.integration.fake_backend import FakeBackend
from tests.s3_server import BUCKET, WRONG_CREDENTIALS, S3Server

pytestmark = pytest.mark.integration

DENY_READS = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{BUCKET}/denied/*"],
        }
    ],
}


@pytest.fixture(scope="module")
def denied_prefix(s3_server: S3Server) -> str:
    s3_server.client().put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(DENY_READS))
    return f"s3://{BUCKET}/denied"


@pytest.fixture
def s3_harness(env: WorkflowEnvironment, home: Path, s3_server: S3Server) -> Harness:
    return Harness(
        env.client,
        home,
        FakeBackend(),
        f"tq-{uuid.uuid4().hex[:8]}",
        StorageRouter(S3Storage(s3_server.endpoint)),
    )


def put(server: S3Server, key: str, body: str) -> None:
    server.client().put_object(Bucket=BUCKET, Key=key, Body=body.encode())


async def test_a_read_the_bucket_policy_denies_is_access_denied_not_missing(
    s3_server: S3Server, denied_prefix: str
) -> None:
    put(s3_server, "denied/unit/decision.json", "{}")
    storage = S3Storage(s3_server.endpoint)
    with pytest.raises(AccessDeniedError, match="access denied"):
        await storage.read_text(f"{denied_prefix}/unit/decision.json")
    with pytest.raises(ArtifactMissingError):
        await storage.read_text(f"s3://{BUCKET}/unit/definitely-missing.json")


async def test_wrong_credentials_are_access_denied_for_reads_heads_and_listings(
    s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in WRONG_CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    storage = S3Storage(s3_server.endpoint)
    for call in (storage.read_text, storage.size, storage.list_keys):
        with pytest.raises(AccessDeniedError):
            await call(f"s3://{BUCKET}/unit/anything.json")


async def test_a_missing_bucket_is_a_configuration_error_not_a_missing_object(s3_server: S3Server) -> None:
    storage = S3Storage(s3_server.endpoint)
    with pytest.raises(Exception, match="bucket does not exist"):
        await storage.size("s3://no-such-bucket-here/key.json")


async def test_permission_denied_on_a_file_is_access_denied_not_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OS's own PermissionError (tests may run as root, which ignores file modes)."""
    decision = tmp_path / "decision.json"
    decision.write_text("{}")

    def refuse(*_: object, **__: object) -> int:
        raise PermissionError(13, "Permission denied", str(decision))

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(AccessDeniedError, match="permission denied"):
        await FileStorage().read_text(str(decision))


async def test_a_denied_decision_artifact_fails_the_run_naming_access_denied_and_no_branch_is_taken(
    s3_harness: Harness, s3_server: S3Server, denied_prefix: str
) -> None:
    run_id = f"rt-denied-{uuid.uuid4().hex[:6]}"
    put(s3_server, f"denied/{run_id}/decision.json", json.dumps({"decision": "promote"}))
    started = time.monotonic()
    outcome = await s3_harness.run(
        "runtime/s3-read-decision.yaml",
        run_id=run_id,
        assume_decision="promote",
        vars={"decision": f"{denied_prefix}/{run_id}/decision.json"},
        transport_recovery_seconds=600,
    )
    assert outcome.status == "failed"
    assert "state route" in outcome.error and "access denied" in outcome.error
    assert f"{denied_prefix}/{run_id}/decision.json" in outcome.error
    assert outcome.ledger.decisions == []  # the assumed decision was never used
    assert [wave.states for wave in outcome.ledger.waves] == [["route"]]
    assert outcome.ledger.waves[0].error_category == "configuration"
    assert time.monotonic() - started < 60  # not retried for the recovery deadline


async def test_wrong_credentials_fail_the_run_at_once_naming_access_denied(
    s3_harness: Harness, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = f"rt-wrongcreds-{uuid.uuid4().hex[:6]}"
    put(s3_server, f"{run_id}/decision.json", json.dumps({"decision": "promote"}))
    for key, value in WRONG_CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    started = time.monotonic()
    outcome = await s3_harness.run(
        "runtime/s3-read-decision.yaml",
        run_id=run_id,
        assume_decision="promote",
        transport_recovery_seconds=600,
        vars={"decision": f"s3://{BUCKET}/{run_id}/decision.json"},
    )
    assert outcome.status == "failed"
    assert "access denied" in outcome.error and "credentials" in outcome.error
    assert outcome.ledger.decisions == []
    assert time.monotonic() - started < 60
