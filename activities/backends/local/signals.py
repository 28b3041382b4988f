"""Signalling a local job's processes: its process group and every process carrying its marker."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

from activities.backends.local.jobs import (
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    job_processes,
    read_model,
)

#: How long SIGKILLed processes may take to leave /proc (the kernel tears a busy one down
#: asynchronously) before they count as survivors.
KILL_SETTLE_SECONDS = 2.0


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


async def until_gone(
    marker: str, pgid: int, supervisor_pid: int, seconds: float = KILL_SETTLE_SECONDS
) -> None:
    """Wait up to `seconds` for the job's processes to exit, reaping its supervisor meanwhile."""
    deadline = time.monotonic() + seconds
    while job_processes(marker, pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        reap_supervisor(supervisor_pid)
