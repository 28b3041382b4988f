"""The in-memory ledger document: fragment-built files equal a plain dump; re-sent deltas change nothing."""

from __future__ import annotations

import json

import pytest

from npaflow.document.models import Artifact
from npaflow.images import ImageBinding, ImagePreflight
from npaflow.runtime.ledger import (
    DecisionRecord,
    LedgerDelta,
    PlannedStep,
    RuntimeLedger,
    TaskRow,
    WaveAttemptRecord,
)
from npaflow.runtime.ledger.document import LedgerDocument
from npaflow.runtime.ledger.projection import InputSource
from npaflow.runtime.status import JobStatus
from npaflow.runtime.usage import TaskShape
from npaflow.runtime.vocabulary import LedgerStatus, WaveStatus

pytestmark = pytest.mark.unit

KEY = "001|shards|shards:a:-,shards:b:-"


def wave(key: str, attempt: int = 1, status: WaveStatus = WaveStatus.RUNNING) -> WaveAttemptRecord:
    return WaveAttemptRecord(
        key=key,
        attempt=attempt,
        status=status,
        job_id=f"{attempt}",
        group="shards",
        outputs=[Artifact(uri="s3://b/out.json", schema="report")],
        ended_at="2026-12-01T10:30:00Z" if status.is_final() else "",
        tasks=[
            TaskRow(
                job_id=f"{attempt}",
                task_id=0,
                task_name="a",
                status=JobStatus.RUNNING,
                start_at="2026-12-01T10:00:00Z",
            ),
            TaskRow(
                job_id=f"{attempt}",
                task_id=1,
                task_name="b",
                status=JobStatus.SUCCEEDED,
                start_at="2026-12-01T10:00:00Z",
                end_at="2026-12-01T10:20:00Z",
            ),
        ],
        task_shapes=[
            TaskShape(task_name="a", state="a", nodes=2, accelerator="H100", accelerators_per_node=8),
            TaskShape(task_name="b", state=key.rsplit(":", 2)[-2], nodes=1),
        ],
        planned=[PlannedStep(state="a", resources_profile={"cpus": 2}), PlannedStep(state="b")],
    )


def plain(model: RuntimeLedger) -> str:
    return json.dumps(model.model_dump(mode="json", by_alias=True), indent=2, sort_keys=True) + "\n"


def document_after_two_deltas() -> LedgerDocument:
    document = LedgerDocument(
        RuntimeLedger(workflow="w", run_id="r", api_version="v"), InputSource(spec="inline")
    )
    decision = DecisionRecord(state="gate", uri="s3://b/d.json", decision="promote_checkpoint")
    document.apply(
        LedgerDelta(status=LedgerStatus.RUNNING, waves=[wave(KEY)], decisions=[decision], decision_offset=0),
        run_prefix_uri="s3://b/r",
        now="t1",
    )
    document.apply(
        LedgerDelta(
            waves=[wave(KEY, status=WaveStatus.FAILED), wave(KEY, attempt=2), wave("002|serial|:c:-")]
        ),
        run_prefix_uri="s3://b/r",
        now="t2",
    )
    return document


def test_runtime_json_built_from_fragments_equals_a_plain_dump_of_the_ledger() -> None:
    document = document_after_two_deltas()
    assert document.ledger.usage.gpu_hours > 0 and len(document.ledger.usage.by_state) == 3
    assert document.runtime_text() == plain(document.ledger)
    reread = RuntimeLedger.model_validate_json(document.runtime_text())
    assert [(w.key.sequence, w.attempt) for w in reread.waves] == [(1, 1), (1, 2), (2, 1)]


def test_a_document_rebuilt_from_the_stored_ledger_writes_the_same_files() -> None:
    document = document_after_two_deltas()
    stored = RuntimeLedger.model_validate_json(document.runtime_text())
    rebuilt = LedgerDocument(stored, InputSource(spec="inline"))
    assert rebuilt.runtime_text() == document.runtime_text()
    assert rebuilt.manifest_text() == document.manifest_text()
    assert rebuilt.status_text() == document.status_text()


def test_applying_a_delta_twice_changes_nothing() -> None:
    document = document_after_two_deltas()
    before = document.runtime_text(), document.manifest_text()
    retried = LedgerDelta(
        waves=[wave(KEY, attempt=2)],
        decisions=[DecisionRecord(state="gate", uri="s3://b/d.json", decision="promote_checkpoint")],
        decision_offset=0,
    )
    document.apply(retried, run_prefix_uri="s3://b/r", now="t2")
    assert (document.runtime_text(), document.manifest_text()) == before


def test_declared_outputs_read_as_the_reference_writes_them() -> None:
    wave_json = json.loads(document_after_two_deltas().runtime_text())["waves"][0]
    assert wave_json["outputs"] == [{"uri": "s3://b/out.json", "schema": "report"}]


def test_manifest_steps_are_the_newest_attempt_of_each_wave_with_what_the_plan_made_of_them() -> None:
    manifest = json.loads(document_after_two_deltas().manifest_text())
    assert [(s["state"], s["attempt"], s["status"]) for s in manifest["steps"]] == [
        ("a", 2, "running"),
        ("b", 2, "running"),
        ("c", 1, "running"),
    ]
    assert manifest["steps"][0]["resources_profile"] == {"cpus": 2}
    assert manifest["input_source"] == {"spec": "inline"}


def test_stage_records_carry_pending_reasons_and_artifacts_as_mappings() -> None:
    stage = json.loads(document_after_two_deltas().runtime_text())["stages"][0]
    assert stage["pending_reason"] == {}
    assert stage["artifact_locations"] == [{"uri": "s3://b/out.json", "schema": "report"}]


def test_status_json_repeats_the_manifest_status() -> None:
    document = document_after_two_deltas()
    document.apply(LedgerDelta(status=LedgerStatus.SUCCEEDED), run_prefix_uri="s3://b/r", now="t3")
    status = json.loads(document.status_text())
    assert (status["status"], status["step_count"]) == ("completed", 3)
    assert json.loads(document.manifest_text())["status"] == "completed"


def test_older_ledgers_with_plain_output_uris_still_load() -> None:
    record = WaveAttemptRecord.model_validate({"key": "001|serial|:a:-", "outputs": ["s3://b/o.json"]})
    assert record.outputs[0].uri == "s3://b/o.json"


def test_a_delta_carries_the_runs_images_and_the_manifest_names_each_steps_digest() -> None:
    digest = "sha256:" + "c" * 64
    binding = ImageBinding(pins={"ghcr.io/a/train:v1": digest}, preflight=ImagePreflight.VERIFIED)
    pinned = wave("001|serial|:a:-").model_copy(
        update={"planned": [PlannedStep(state="a", image="ghcr.io/a/train:v1", image_digest=digest)]}
    )
    document = LedgerDocument(RuntimeLedger(workflow="w", run_id="r", api_version="v"))
    document.apply(LedgerDelta(waves=[pinned], images=binding), run_prefix_uri="s3://b/r", now="t1")
    runtime = json.loads(document.runtime_text())
    step = json.loads(document.manifest_text())["steps"][0]
    assert runtime["images"]["pins"] == {"ghcr.io/a/train:v1": digest}
    assert runtime["images"]["preflight"] == "verified"
    assert (step["image"], step["image_digest"]) == ("ghcr.io/a/train:v1", digest)
