"""What a local job's queue row says: its tasks' statuses as SkyPilot's rows, and when they changed."""

from __future__ import annotations

from pathlib import Path

from activities.backends.local.jobs import CANCEL_MARKER, LocalJobRecord
from activities.backends.local.task_status import TaskRecord
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.status import JobStatus
from npaflow.traversal.models import WaveKind


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def status_stamp(job_dir: Path) -> tuple[int, int]:
    """What changes whenever a task moves or a cancel is requested: the two paths' mtimes."""
    return _mtime(job_dir / "status"), _mtime(job_dir / CANCEL_MARKER)


def task_row(job: LocalJobRecord, index: int, name: str, record: TaskRecord, cancelling: bool) -> TaskRow:
    """One task as SkyPilot's queue would list it (CANCELLING while a cancel is under way)."""
    status = JobStatus(record.status.value)
    if cancelling and not status.is_terminal():
        status = JobStatus.CANCELLING
    return TaskRow(
        job_id=job.job_id,
        task_id=index,
        task_name=name,
        status=status,
        submitted_at=record.submitted_at,
        start_at=record.start_at,
        end_at=record.end_at,
        is_job_group=job.execution is WaveKind.PARALLEL,
        execution=job.execution.value,
        cluster_name=f"local-{job.job_id}",
        last_progress_at=record.last_updated_at if status.is_active() else "",
        last_updated_at=record.last_updated_at,
        failure_reason=record.failure_reason,
    )
