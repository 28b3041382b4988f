"""The text form of a run's status (`npaflow status`, duplicate submits)."""

from __future__ import annotations

from typing import Any

from npaflow.runtime.status import FailureClass
from npaflow.waves import WaveKey

#: The run's phase and Temporal's execution status that say the same thing (shown once).
_AGREEING = {
    "running": "RUNNING",
    "succeeded": "COMPLETED",
    "failed": "FAILED",
    "cancelled": "CANCELED",
    "terminated": "TERMINATED",
    "timed_out": "TIMED_OUT",
}


def status_text(payload: dict[str, Any]) -> str:
    """Phase, current states, each wave with its job (and the worker holding a local job)."""
    is_open = payload.get("execution_status") == "RUNNING"
    phase = payload["phase"]
    if is_open and phase == "running" and payload.get("pause_requested"):
        waiting = ", ".join(payload.get("current_states") or []) or "the waves in flight"
        phase = f"pausing (waits for {waiting} to finish; nothing new launches)"
    temporal = payload["execution_status"]
    agree = _AGREEING.get(str(payload["phase"])) == temporal
    lines = [f"run {payload['run_id']}: {phase}" + ("" if agree else f" (Temporal: {temporal})")]
    if is_open:
        lines.append(f"current: {', '.join(payload.get('current_states') or []) or '-'}")
    if payload.get("no_worker"):
        lines.append(f"waiting: {payload['no_worker']}")
    for wave in payload.get("waves", []):
        where = f" on worker {wave['worker_id']}" if wave.get("worker_id") else ""
        category = f" [{wave['error_category']}]" if wave.get("error_category") else ""
        told = wave.get("sky_status") not in (None, "", "SUBMITTED", "RUNNING") or wave["status"] != "running"
        seen = f" ({wave['sky_status']})" if wave.get("sky_status") and told else ""
        job = f"job {wave['job_id']}{where}{seen}" if wave.get("job_id") else "no job yet"
        label = WaveKey.parse(wave["key"]).label()
        lines.append(f"  {label} attempt {wave['attempt']}: {wave['status']}{category}, {job}")
    for decision in payload.get("decisions", []):
        state = f" (state {decision['state']})" if decision.get("state") else ""
        lines.append(f"  decision: {decision['decision']} <- {decision['uri']}{state}")
    usage = payload.get("usage") or {}
    if usage.get("node_hours"):
        lines.append(
            f"gpu_hours: {usage['gpu_hours']:.4f}{' so far' if is_open else ''} (node_hours "
            f"{usage['node_hours']:.4f}; failed attempts {usage['failed_gpu_hours']:.4f} GPU-h)"
        )
        lines.extend(
            f"  {state}: {part['gpu_hours']:.4f} GPU-h, {part['node_hours']:.4f} node-h"
            for state, part in usage.get("by_state", {}).items()
        )
    lines.extend(ending_lines(payload))
    if payload.get("error"):
        lines.append(f"error: {payload['error']}")
    classes = [w["error_category"] for w in payload.get("waves", []) if w.get("error_category")]
    if classes and classes[-1] in FailureClass.__members__.values():
        lines.append(f"why: {classes[-1]}: {FailureClass(classes[-1]).explain()}")
    lines.append(f"ledger: {payload.get('ledger_uri') or '-'}")
    if payload.get("worker_version"):
        lines.append(f"worker version: {payload['worker_version']}")
    if payload.get("ledger_behind"):
        lines.append(f"ledger behind the run: {payload['ledger_behind']}")
    if payload.get("ledger_repair"):
        lines.append(f"ledger repair: {payload['ledger_repair']}")
    return "\n".join(lines)


def ending_lines(payload: dict[str, Any]) -> list[str]:
    """The reconciled jobs, one line each, for the text status."""
    lines = [f"reconciled: {payload['reconciled_note']}"] if payload.get("reconciled_note") else []
    for job in payload.get("reconciled", []):
        cancellation = job.get("cancellation") or {}
        lines.append(
            f"reconciled: job {job['job_id']} ({job.get('wave_key') or job.get('job_name') or '-'}, attempt "
            f"{job.get('attempt', 1)}) cancelled after the run ended {job.get('run_ending')}: "
            f"{cancellation.get('state', '-')}"
            + (f" ({job['final_status']})" if job.get("final_status") else "")
        )
    return lines
