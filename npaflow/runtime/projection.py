"""Views derived from the ledger: per-stage records, the run manifest, status.json."""

from __future__ import annotations

from pydantic import JsonValue

from npaflow.runtime.ledger import RUN_SCHEMA, RuntimeLedger, WaveAttemptRecord

_SUCCESS = {"OK", "SUCCESS", "COMPLETED", "SUCCEEDED"}
_CANCELLED = {"CANCELED", "CANCELLED", "ABORTED"}


def normalize_stage_state(raw: str) -> str:
    """Normalize a task/sky/wave status the way the reference's stage view does."""
    text = (raw or "").strip().upper().replace("-", "_")
    if not text:
        return "UNKNOWN"
    if text in _SUCCESS:
        return "SUCCEEDED"
    if text in _CANCELLED:
        return "CANCELLED"
    if text in ("FAILED_STARTUP", "FAILED_SETUP"):
        return text
    if text.startswith("FAILED") or text in ("FAILURE", "ERROR", "BLOCKED"):
        return "FAILED"
    return text


def _members(wave: WaveAttemptRecord) -> list[tuple[str, str]]:
    """Return (state, iteration) pairs parsed from the wave key, else from `states`."""
    parts = wave.key.split("|", 2)
    if len(parts) == 3 and parts[2]:
        members = []
        for member in parts[2].split(","):
            _, state, iteration = ([*member.split(":"), "", "", ""])[:3]
            members.append((state, "" if iteration in ("", "-") else iteration))
        return members
    return [(state, "") for state in wave.states]


def stage_records(wave: WaveAttemptRecord) -> list[dict[str, JsonValue]]:
    """Project one wave attempt onto one record per member stage."""
    records = []
    newest = wave.observations[-1] if wave.observations else None
    for state, iteration in _members(wave):
        task_name = f"{state}-{iteration}" if iteration else state
        rows = [t for t in wave.tasks if t.task_name in (task_name, state)]
        row = rows[0] if rows else None
        terminal = wave.status.value if wave.status.value in ("succeeded", "failed") else ""
        if wave.sky_status.upper() in _CANCELLED:
            terminal = "cancelled"
        records.append({
            "key": f"{state}#{iteration}" if iteration else state, "stage": state,
            "iteration": int(iteration) if iteration.isdigit() else None,
            "logical_state": normalize_stage_state(
                (row.status if row else "") or wave.sky_status or wave.status.value),
            "attempt": wave.attempt, "managed_job_id": wave.job_id,
            "job_group_id": wave.group or wave.job_name, "job_name": wave.job_name,
            "wave_key": wave.key, "submitted_at": wave.started_at,
            "started_at": (row.start_at if row else "") or wave.ended_at,
            "finished_at": (row.end_at if row else "") or wave.ended_at,
            "last_observed_at": newest.observed_at if newest else "",
            "last_scheduler_state": newest.scheduler_state if newest else wave.sky_status,
            "last_heartbeat_at": row.last_progress_at if row else "",
            "heartbeat_source": "scheduler_task_progress" if row and row.last_progress_at else "",
            "pending_reason": "", "log_location": "",
            "artifact_locations": [a.uri for a in wave.outputs],
            "terminal_outcome": terminal, "provenance": "runtime_wave_projection",
            "attribution_ambiguous": len(rows) > 1,
        })
    return records


def derive_stages(ledger: RuntimeLedger) -> list[dict[str, JsonValue]]:
    """Upsert every wave attempt's stage records, keyed by (stage key, attempt)."""
    stages: dict[tuple[str, int], dict[str, JsonValue]] = {}
    for wave in ledger.waves:
        for record in stage_records(wave):
            stages[(str(record["key"]), wave.attempt)] = record
    return list(stages.values())


def manifest_document(ledger: RuntimeLedger, input_source: str) -> dict[str, JsonValue]:
    """Return `manifest.json` (npa.workflow.run.v1) for the run."""
    status = {"succeeded": "completed", "failed": "failed", "cancelled": "failed"}.get(
        ledger.status.value, ledger.status.value)
    steps: list[JsonValue] = []
    for key, wave in ledger.latest_attempts().items():
        for state, iteration in _members(wave):
            steps.append({"state": state, "iteration": int(iteration) if iteration else None,
                          "status": "ok" if wave.status.value == "succeeded" else wave.status.value,
                          "job_id": wave.job_id, "job_name": wave.job_name,
                          "sky_status": wave.sky_status, "wave_key": key, "group": wave.group,
                          "error": wave.error})
    return {"schema_version": RUN_SCHEMA, "workflow": ledger.workflow, "run_id": ledger.run_id,
            "api_version": ledger.api_version, "run_prefix_uri": ledger.run_prefix_uri,
            "status": status, "sky_job_id": "", "updated_at": ledger.updated_at, "steps": steps,
            "input_source": input_source}


def status_document(ledger: RuntimeLedger) -> dict[str, JsonValue]:
    """Return `status.json` for the run."""
    return {"schema_version": RUN_SCHEMA, "run_id": ledger.run_id, "workflow": ledger.workflow,
            "status": ledger.status.value, "updated_at": ledger.updated_at,
            "step_count": sum(len(_members(w)) for w in ledger.latest_attempts().values())}
