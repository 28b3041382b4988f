"""Signalling a local job's processes: its process group and every process carrying its marker."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from activities.backends.local.jobs import (
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    job_processes,
    read_model,
)


def job_pgid(job_dir: Path, job: LocalJobRecord) -> int:
    """The job's process group: its supervisor's (recorded once it started)."""
    identity = read_model(job_dir / SUPERVISOR_FILE, SupervisorIdentity)
    return identity.pgid if identity else job.supervisor_pid  # a session leader's pgid is its pid


def kill_job(marker: str, pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Signal the job's process group and every process carrying its marker."""
    if pgid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in job_processes(marker, pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def reap_supervisor(pid: int) -> None:
    """Collect an exited supervisor this process started, so it is not left a zombie."""
    if pid <= 0:
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
