"""Reading a local job's rows cheaply: re-read only when its statuses moved or its liveness is due.

Polling hundreds of jobs every LOCAL_POLL_SECONDS stays cheap because a queue
call reuses what it read while the job's status directory is unchanged, and
checks the supervisor is alive (a /proc read) at most every LIVENESS_SECONDS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from activities.backends.local.jobs import CANCEL_MARKER, JOB_FILE, LocalJobRecord, read_model
from activities.backends.local.liveness import reap_if_dead
from activities.backends.local.rows import status_stamp, task_row
from activities.backends.local.task_status import read_tasks
from npaflow.runtime.ledger import TaskRow

#: Seconds between checks that a job's supervisor still lives (a /proc read per job).
LIVENESS_SECONDS = 1.0
#: File-system timestamps advance in kernel clock ticks (4-10 ms): an mtime this recent may
#: share its tick with a move not yet seen, so rows read under it are read again next poll.
RACY_STAMP_NS = 50_000_000


@dataclass
class _Seen:
    """What the last queue call read of one job: reused while its statuses did not change."""

    record: LocalJobRecord
    status_stamp: tuple[int, int] | None = None
    rows: tuple[TaskRow, ...] = ()
    alive_checked: float = 0.0


class RowReader:
    """The rows of each job this worker was asked about, cached by its status directory's stamp."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def record(self, job_id: str) -> LocalJobRecord | None:
        """The job's record as last read (None before its rows were read)."""
        seen = self._seen.get(job_id)
        return seen.record if seen else None

    def read(self, job_dir: Path, job_id: str, *, fresh: bool = False) -> list[TaskRow]:
        """The job's rows, re-read only when its statuses changed or its liveness is due."""
        seen = self._seen.get(job_id)
        if seen is None or not seen.record.supervisor_pid:
            record = read_model(job_dir / JOB_FILE, LocalJobRecord)
            if record is None:
                return []
            seen = self._seen[job_id] = _Seen(record)
        stamp = status_stamp(job_dir)
        now = time.monotonic()
        liveness_due = fresh or now - seen.alive_checked >= LIVENESS_SECONDS
        if stamp == seen.status_stamp and not liveness_due:
            return list(seen.rows)
        if liveness_due:
            reap_if_dead(job_dir, seen.record)
            seen.alive_checked = now
            stamp = status_stamp(job_dir)
        cancelling = (job_dir / CANCEL_MARKER).exists()
        names = [task.name for task in seen.record.tasks]
        records = read_tasks(job_dir, names)
        seen.rows = tuple(
            task_row(seen.record, index, name, record, cancelling)
            for index, (name, record) in enumerate(zip(names, records, strict=True))
        )
        # A stamp within the file system's clock tick of now may hide a later move in the same
        # tick (the "racily clean" case git knows): such a stamp is not trusted, the next poll re-reads.
        seen.status_stamp = stamp if time.time_ns() - max(stamp) > RACY_STAMP_NS else None
        if all(row.status.is_terminal() for row in seen.rows):
            seen.alive_checked = float("inf")  # nothing left to reap
        return list(seen.rows)
