"""On-disk records of local-backend jobs, shared by the backend and the supervisor.

Layout under `<home>/local/jobs/<id>/`: `job.json`, `wave.yaml`, `status/<task>.json`,
`logs/<task>-<rank>.log`, `cancel_requested`, `supervisor.log`.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from activities.clock import utc_now
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.status import JobStatus

JOB_FILE = "job.json"
CANCEL_MARKER = "cancel_requested"


now_iso = utc_now


def write_json(path: Path, payload: object) -> None:
    """Write JSON atomically so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(payload, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temp, path)


def read_json(path: Path) -> dict:
    """Read a JSON object, or {} when the file does not exist yet."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def allocate_job_id(jobs_dir: Path) -> str:
    """Return the next job id; a file lock makes ids unique across worker processes."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    with open(jobs_dir / ".counter.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = jobs_dir / ".counter"
        value = int(counter.read_text() or "0") + 1 if counter.exists() else 1
        counter.write_text(str(value))
        (jobs_dir / str(value)).mkdir()
        return str(value)


def set_task_status(job_dir: Path, task: str, status: JobStatus, reason: str = "") -> None:
    """Record one task's status transition with its timestamps."""
    path = job_dir / "status" / f"{task}.json"
    record = read_json(path)
    record["status"] = status.value
    record["last_updated_at"] = now_iso()
    if status is JobStatus.STARTING:
        record.setdefault("submitted_at", record["last_updated_at"])
    if status is JobStatus.RUNNING:
        record.setdefault("start_at", record["last_updated_at"])
    if status.is_terminal():
        record.setdefault("end_at", record["last_updated_at"])
    if reason:
        record["failure_reason"] = reason
    write_json(path, record)


def is_process_alive(pid: int) -> bool:
    """True when the supervisor process still exists (and is not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def task_rows(job_dir: Path) -> list[TaskRow]:
    """Return the job's task rows, resolving orphaned or cancelled tasks."""
    job = read_json(job_dir / JOB_FILE)
    alive = is_process_alive(int(job.get("supervisor_pid") or 0))
    cancelled = (job_dir / CANCEL_MARKER).exists()
    rows = []
    for index, task in enumerate(job.get("tasks", [])):
        record = read_json(job_dir / "status" / f"{task['name']}.json")
        status = JobStatus.parse(record.get("status") or "PENDING")
        if not status.is_terminal() and not alive and job.get("supervisor_pid"):
            status = JobStatus.CANCELLED if cancelled else JobStatus.FAILED_CONTROLLER
        elif not status.is_terminal() and cancelled:
            status = JobStatus.CANCELLING
        rows.append(TaskRow(
            job_id=str(job["job_id"]), task_id=index, task_name=task["name"], status=status.value,
            submitted_at=record.get("submitted_at", ""), start_at=record.get("start_at", ""),
            end_at=record.get("end_at", ""), is_job_group=job.get("execution") == "parallel",
            execution=job.get("execution", "serial"), cluster_name=f"local-{job['job_id']}",
            last_progress_at=record.get("last_updated_at", "") if status.is_active() else "",
            last_updated_at=record.get("last_updated_at", ""),
            failure_reason=record.get("failure_reason", "")))
    return rows
