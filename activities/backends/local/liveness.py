"""Whether a local job can still make progress, and ending the tasks of one that cannot.

A job is run by a detached supervisor; when that supervisor is gone (killed, its
host rebooted) or never started (a ghost record), what is left of the job is
killed and its tasks end once those processes are gone (so a job reported ended
runs nothing): cancelled when a cancel was asked for, else failed as a
controller failure.
"""

from __future__ import annotations

import time
from pathlib import Path

from activities.backends.local.jobs import (
    CANCEL_MARKER,
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    is_supervisor_alive,
    job_processes,
    read_model,
    start_ticks,
)
from activities.backends.local.signals import job_pgid, kill_job, reap_supervisor
from activities.backends.local.task_status import TaskStatus, end_tasks, read_tasks

#: A record whose worker died before starting the supervisor is a ghost after this long.
GHOST_GRACE_SECONDS = 10.0
#: How long a dead supervisor's killed processes may take to exit before the job ends anyway.
KILL_SETTLE_LIMIT_SECONDS = 30.0
#: When the first SIGKILL went to a dead supervisor's processes.
KILLED_MARKER = "killed_at"


def reap_if_dead(job_dir: Path, job: LocalJobRecord) -> None:
    """A job whose supervisor is gone: kill what is left, end its tasks (guarded moves)."""
    reap_supervisor(job.supervisor_pid)
    dead = dead_reason(job_dir, job)
    if not dead:
        return
    names = [t.name for t in job.tasks]
    if all(record.status.is_terminal() for record in read_tasks(job_dir, names)):
        return
    pgid = job_pgid(job_dir, job)
    kill_job(job.process_marker, pgid)
    left = job_processes(job.process_marker, pgid)
    if left and not _settle_over(job_dir):
        return  # SIGKILL is delivered, not yet acted on: the job ends once they are gone
    if left:
        dead += f"; processes {left} outlived SIGKILL for {KILL_SETTLE_LIMIT_SECONDS:.0f} s"
    if (job_dir / CANCEL_MARKER).exists():
        end_tasks(job_dir, names, TaskStatus.CANCELLED, "cancelled by request")
    else:
        end_tasks(job_dir, names, TaskStatus.FAILED_CONTROLLER, dead)


def _settle_over(job_dir: Path) -> bool:
    """True once the job's processes had KILL_SETTLE_LIMIT_SECONDS to exit after the first SIGKILL."""
    marker = job_dir / KILLED_MARKER
    if not marker.exists():
        marker.write_text(str(time.time()))
        return False
    try:
        return time.time() - float(marker.read_text()) > KILL_SETTLE_LIMIT_SECONDS
    except ValueError:
        return True  # a marker this code did not write: do not wait on it


def dead_reason(job_dir: Path, job: LocalJobRecord) -> str:
    """Why the job can make no progress ("" while it can): no or a dead supervisor."""
    identity = read_model(job_dir / SUPERVISOR_FILE, SupervisorIdentity)
    if identity is not None:
        if is_supervisor_alive(identity):
            return ""
        return f"the job's supervisor (pid {identity.pid}) died; its processes were killed"
    if job.supervisor_pid and start_ticks(job.supervisor_pid) is not None:
        return ""  # started, not yet recorded
    if job.supervisor_pid or time.time() - job.launched_at > GHOST_GRACE_SECONDS:
        return "the job's supervisor never started (the record is a ghost)"
    return ""
