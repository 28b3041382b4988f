"""The ledger files keep every field, type and vocabulary of the spec contract (§6.6, §6.9, §7.4).

The tables below are the contract's, copied field for field: a rename, a dropped
field or a changed type in npaflow's models fails here before a reference reader
meets it. npaflow's own fields are allowed only in addition (docs/compatibility.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from npaflow.document.models import Artifact
from npaflow.runtime.ledger import (
    Cancellation,
    DecisionRecord,
    LedgerDelta,
    Observation,
    RuntimeLedger,
    TaskRow,
    Watermark,
    WaveAttemptRecord,
)
from npaflow.runtime.ledger.document import LedgerDocument
from npaflow.runtime.ledger.projection import InputSource
from npaflow.runtime.status import JobStatus
from npaflow.runtime.vocabulary import CancellationState, DecisionSource, LedgerStatus, WaveStatus
from npaflow.traversal.models import WaveKind

pytestmark = pytest.mark.unit

STR, INT, BOOL, LIST, DICT = str, int, bool, list, dict
OPT_INT = (int, type(None))
OPT_STR = (str, type(None))

TOP_LEVEL = {
    "schema_version": STR, "workflow": STR, "run_id": STR, "api_version": STR, "status": STR,
    "run_prefix_uri": STR, "plan_fingerprint": STR, "updated_at": STR, "waves": LIST,
    "stages": LIST, "decisions": LIST, "watermarks": DICT,
}  # fmt: skip
WAVE_ATTEMPT = {
    "key": STR, "replayed": BOOL, "adopted": BOOL, "states": LIST, "kind": STR, "group": STR,
    "attempt": INT, "job_id": STR, "job_name": STR, "status": STR, "sky_status": OPT_STR,
    "started_at": STR, "ended_at": STR, "tasks": LIST, "outputs": LIST, "error": STR,
    "max_concurrent_observed": INT, "observations": LIST, "status_errors": LIST,
    "logical_launch_id": STR, "scheduler_fence_sequence": INT, "launch_sequence": INT,
    "error_category": OPT_STR, "readiness": LIST, "reconciliation": LIST,
    "recovery_decision": STR, "operator_remedy": STR, "primary_error": STR,
    "reconciliation_error": STR, "cancellation": DICT, "credentials": DICT,
}  # fmt: skip
OBSERVATION = {
    "observed_at": STR, "scheduler_state": STR, "running": LIST, "running_count": INT, "statuses": DICT,
}  # fmt: skip
STAGE = {
    "key": STR, "stage": STR, "iteration": OPT_INT, "logical_state": STR, "attempt": INT,
    "managed_job_id": STR, "job_group_id": STR, "job_name": STR, "wave_key": STR,
    "submitted_at": STR, "started_at": STR, "finished_at": STR, "last_observed_at": STR,
    "last_scheduler_state": STR, "last_heartbeat_at": STR, "heartbeat_source": STR,
    "pending_reason": DICT, "log_location": STR, "artifact_locations": LIST,
    "terminal_outcome": STR, "provenance": STR, "attribution_ambiguous": BOOL,
}  # fmt: skip
DECISION = {"uri": STR, "decision": STR, "read_at": STR, "source": STR, "body": STR, "decode_error": STR}
WATERMARK = {"uri": STR, "objects": INT, "polls": INT, "observed_at": STR, "sample": LIST}
MANIFEST = {
    "schema_version": STR, "workflow": STR, "run_id": STR, "api_version": STR,
    "run_prefix_uri": STR, "status": STR, "sky_job_id": STR, "updated_at": STR, "steps": LIST,
    "input_source": DICT,
}  # fmt: skip
MANIFEST_STEP = {
    "state": STR, "iteration": OPT_INT, "status": STR, "job_id": STR, "job_name": STR,
    "sky_status": STR, "wave_key": STR, "tool_ref": STR, "resources": STR,
    "resources_profile": DICT, "inputs": LIST, "outputs": LIST, "error": STR, "group": STR,
}  # fmt: skip
STATUS = {
    "schema_version": STR, "run_id": STR, "workflow": STR, "status": STR, "updated_at": STR,
    "step_count": INT,
}  # fmt: skip

GROUP_KEY = "002|shards|shards:a:-,shards:b:-"


def group_wave(status: WaveStatus, attempt: int = 1) -> WaveAttemptRecord:
    rows = [
        TaskRow(
            job_id="7", task_id=i, task_name=name, status=JobStatus.RUNNING, start_at="2026-12-01T10:00:00Z"
        )
        for i, name in enumerate(("a", "b"))
    ]
    observation = Observation(
        observed_at="2026-12-01T10:01:00Z",
        scheduler_state=JobStatus.RUNNING,
        running=["a", "b"],
        running_count=2,
        statuses={"a": JobStatus.RUNNING, "b": JobStatus.RUNNING},
    )
    return WaveAttemptRecord(
        key=GROUP_KEY,
        kind=WaveKind.PARALLEL,
        group="shards",
        states=["a", "b"],
        attempt=attempt,
        job_id="7",
        status=status,
        tasks=rows,
        observations=[observation],
        max_concurrent_observed=2,
        outputs=[Artifact(uri="s3://b/r/a.json", schema="report")],
        ended_at="2026-12-01T10:30:00Z" if status.is_final() else "",
        cancellation=Cancellation(state=CancellationState.VERIFIED)
        if status is WaveStatus.CANCELLED
        else Cancellation(),
    )


def ledger_files(final: LedgerStatus, group_status: WaveStatus) -> dict[str, Any]:
    """runtime.json, manifest.json and status.json of a run with a serial wave and a group wave."""
    document = LedgerDocument(
        RuntimeLedger(workflow="w", run_id="r", api_version="v"), InputSource(spec="inline")
    )
    serial = WaveAttemptRecord(
        key="001|serial|:prep:-", states=["prep"], job_id="6", status=WaveStatus.SUCCEEDED
    )
    document.apply(
        LedgerDelta(
            status=LedgerStatus.RUNNING,
            plan_fingerprint="0123456789abcdef",
            waves=[serial, group_wave(WaveStatus.RUNNING)],
            decisions=[
                DecisionRecord(state="gate", uri="s3://b/d.json", decision="promote_checkpoint", body="{}"),
                DecisionRecord(
                    state="gate", uri="s3://b/e.json", decision="loop_back", source=DecisionSource.FALLBACK
                ),
            ],
            decision_offset=0,
            watermarks={
                "watch": Watermark(uri="s3://b/in/", objects=3, polls=2, observed_at="t", sample=["x"])
            },
        ),
        run_prefix_uri="s3://b/r",
        now="2026-12-01T10:00:00Z",
    )
    document.apply(
        LedgerDelta(status=final, waves=[group_wave(group_status)]),
        run_prefix_uri="s3://b/r",
        now="2026-12-01T10:31:00Z",
    )
    return {
        "runtime": json.loads(document.runtime_text()),
        "manifest": json.loads(document.manifest_text()),
        "status": json.loads(document.status_text()),
    }


def problems(record: dict[str, Any], table: dict[str, Any], where: str) -> list[str]:
    """Every contract field that is missing or of the wrong JSON type."""
    found = []
    for field, kind in table.items():
        if field not in record:
            found.append(f"{where}: {field} missing")
        elif not isinstance(record[field], kind) or (kind is INT and isinstance(record[field], bool)):
            found.append(f"{where}: {field} is {type(record[field]).__name__}")
    return found


OUTCOMES = [
    (LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED),
    (LedgerStatus.FAILED, WaveStatus.FAILED),
    (LedgerStatus.CANCELLED, WaveStatus.CANCELLED),
]


@pytest.mark.parametrize(("final", "group_status"), OUTCOMES, ids=[o[0].value for o in OUTCOMES])
def test_every_contract_field_is_present_with_its_type(final: LedgerStatus, group_status: WaveStatus) -> None:
    files = ledger_files(final, group_status)
    runtime = files["runtime"]
    found = problems(runtime, TOP_LEVEL, "runtime.json")
    for wave in runtime["waves"]:
        found += problems(wave, WAVE_ATTEMPT, f"wave {wave['key']}")
        found += [p for o in wave["observations"] for p in problems(o, OBSERVATION, "observation")]
    found += [p for s in runtime["stages"] for p in problems(s, STAGE, f"stage {s['key']}")]
    found += [p for d in runtime["decisions"] for p in problems(d, DECISION, "decision")]
    found += [p for w in runtime["watermarks"].values() for p in problems(w, WATERMARK, "watermark")]
    found += problems(files["manifest"], MANIFEST, "manifest.json")
    found += [p for s in files["manifest"]["steps"] for p in problems(s, MANIFEST_STEP, f"step {s['state']}")]
    found += problems(files["status"], STATUS, "status.json")
    assert found == []


def test_schema_versions_are_the_contracts() -> None:
    files = ledger_files(LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED)
    assert files["runtime"]["schema_version"] == "npa.workflow.runtime.v1"
    assert files["manifest"]["schema_version"] == files["status"]["schema_version"] == "npa.workflow.run.v1"


@pytest.mark.parametrize(
    ("final", "runtime_status", "manifest_status"),
    [
        (LedgerStatus.SUCCEEDED, "succeeded", "completed"),
        (LedgerStatus.FAILED, "failed", "failed"),
        (LedgerStatus.CANCELLED, "cancelled", "cancelled"),
    ],
)
def test_run_status_is_named_in_each_files_vocabulary(
    final: LedgerStatus, runtime_status: str, manifest_status: str
) -> None:
    files = ledger_files(final, WaveStatus.SUCCEEDED)
    assert files["runtime"]["status"] == runtime_status
    assert files["manifest"]["status"] == files["status"]["status"] == manifest_status


def test_waves_are_upserted_by_key_and_attempt() -> None:
    waves = ledger_files(LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED)["runtime"]["waves"]
    assert [(w["key"], w["attempt"], w["status"]) for w in waves] == [
        ("001|serial|:prep:-", 1, "succeeded"),
        (GROUP_KEY, 1, "succeeded"),
    ]


def test_a_group_wave_projects_one_stage_per_member_with_its_group_and_evidence() -> None:
    runtime = ledger_files(LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED)["runtime"]
    group = runtime["waves"][1]
    assert (group["kind"], group["max_concurrent_observed"]) == ("parallel", 2)
    assert group["observations"][0]["running"] == ["a", "b"]
    members = [s for s in runtime["stages"] if s["wave_key"] == GROUP_KEY]
    assert [(s["key"], s["stage"], s["managed_job_id"]) for s in members] == [
        ("a", "a", "7"),
        ("b", "b", "7"),
    ]
    assert {s["terminal_outcome"] for s in members} == {"succeeded"}
    assert {s["provenance"] for s in members} == {"runtime_wave_projection"}


def test_manifest_steps_say_ok_for_a_succeeded_wave_and_failed_with_the_error_otherwise() -> None:
    succeeded = ledger_files(LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED)["manifest"]["steps"]
    assert [(s["state"], s["status"]) for s in succeeded] == [("prep", "ok"), ("a", "ok"), ("b", "ok")]
    failed = ledger_files(LedgerStatus.FAILED, WaveStatus.FAILED)["manifest"]["steps"]
    assert [(s["state"], s["status"], s["group"]) for s in failed[1:]] == [
        ("a", "failed", "shards"),
        ("b", "failed", "shards"),
    ]


def test_a_cancelled_wave_records_its_verified_cancellation_and_credentials_are_never_persisted() -> None:
    wave = ledger_files(LedgerStatus.CANCELLED, WaveStatus.CANCELLED)["runtime"]["waves"][1]
    assert wave["cancellation"] == {"state": "verified", "error": ""}
    assert wave["credentials"]["values_persisted"] is False


def test_decision_reads_keep_their_order_and_name_their_source() -> None:
    decisions = ledger_files(LedgerStatus.SUCCEEDED, WaveStatus.SUCCEEDED)["runtime"]["decisions"]
    assert [(d["uri"], d["decision"], d["source"]) for d in decisions] == [
        ("s3://b/d.json", "promote_checkpoint", "artifact"),
        ("s3://b/e.json", "loop_back", "assume_decision_fallback"),
    ]


def test_the_files_are_written_with_indent_2_sorted_keys_and_a_trailing_newline() -> None:
    document = LedgerDocument(
        RuntimeLedger(workflow="w", run_id="r", api_version="v"), InputSource(spec="inline")
    )
    document.apply(LedgerDelta(status=LedgerStatus.RUNNING), run_prefix_uri="s3://b/r", now="t")
    for text in (document.runtime_text(), document.manifest_text(), document.status_text()):
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"
