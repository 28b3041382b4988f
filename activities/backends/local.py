"""The local backend (the embedded default): wave jobs as processes on this worker's host.

Jobs live on disk under `<home>/local/jobs/<worker id>-<n>`, each run by a
detached supervisor, so a restarted worker re-attaches to jobs that outlived
it. Their ids carry the worker id, and their activities run on that worker's
own task queue: no other host can ever read or cancel the wrong job.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog
import yaml

from activities.backends.base import JobMatch, LaunchRequest, Submission
from activities.backends.local_jobs import (
    CANCEL_MARKER,
    JOB_FILE,
    JOB_MARKER_ENV,
    SUPERVISOR_FILE,
    LocalJobRecord,
    LocalTask,
    SupervisorIdentity,
    allocate_job_id,
    is_supervisor_alive,
    job_processes,
    read_model,
    set_task_status,
    start_ticks,
    task_status,
    write_model,
)
from activities.clock import utc_now
from npaflow.errors import ConfigurationError, ControllerError
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus, aggregate_job_status

log = structlog.get_logger(__name__)

#: How long a cancelled job's processes get to exit on SIGTERM before SIGKILL.
CANCEL_GRACE_SECONDS = 5.0
#: A record whose worker died before starting the supervisor is a ghost after this long.
GHOST_GRACE_SECONDS = 10.0
#: Seconds between polls of a local job (a queue call costs well under a millisecond per job).
LOCAL_POLL_SECONDS = 0.2
#: What every job may see of the worker's environment (besides what it is given).
BASE_ENV = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TMPDIR",
    "TZ",
)
SUPERVISOR_COMMAND = (sys.executable, "-m", "activities.backends.local_supervisor")


class LocalBackend:
    """Runs rendered SkyPilot task documents as local processes with SkyPilot's statuses."""

    name = BackendName.LOCAL
    host_bound = True
    #: Its queue reads a few local files per job: a job's end is seen within this.
    poll_interval = LOCAL_POLL_SECONDS

    def __init__(
        self,
        home: Path,
        worker_id: str,
        *,
        job_env: Sequence[str] = (),
        supervisor_command: Sequence[str] = SUPERVISOR_COMMAND,
    ) -> None:
        self.jobs_dir = home / "local" / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self.worker_id = worker_id
        self.job_env = tuple(job_env)
        self.supervisor_command = tuple(supervisor_command)

    def _job_dir(self, job_id: str) -> Path:
        """The job's directory; a job id of another worker is never looked up here.

        Raises:
            ControllerError: the id belongs to another worker.
        """
        if not job_id.startswith(f"{self.worker_id}-"):
            raise ControllerError(
                f"local job {job_id} belongs to another worker; this is worker "
                f"{self.worker_id} (its activities run on the owner's task queue)"
            )
        return self.jobs_dir / job_id

    async def submit(self, request: LaunchRequest) -> Submission:
        """Record the job as launching and start its detached supervisor."""
        documents = [d for d in yaml.safe_load_all(request.yaml) if d]
        if len(documents) < 2 or not isinstance(documents[0], dict):
            raise ConfigurationError("wave YAML has no task documents")
        job_id = await asyncio.to_thread(allocate_job_id, self.jobs_dir, self.worker_id)
        job_dir = self.jobs_dir / job_id
        (job_dir / "wave.yaml").write_text(request.yaml, encoding="utf-8")
        env_names = sorted({*BASE_ENV, *self.job_env, *request.secret_values})
        job = LocalJobRecord(
            job_id=job_id,
            job_name=request.job_name,
            token=request.launch_token,
            execution=str(documents[0].get("execution", "serial")),
            submitted_at=utc_now(),
            launched_at=time.time(),
            worker_id=self.worker_id,
            env_names=env_names,
            tasks=[LocalTask(name=d["name"], num_nodes=int(d.get("num_nodes", 1))) for d in documents[1:]],
        )
        write_model(job_dir / JOB_FILE, job)
        for task in job.tasks:
            set_task_status(job_dir, task.name, JobStatus.PENDING)
        pid = self._spawn(job_dir, job_id, request.secret_values)
        write_model(job_dir / JOB_FILE, job.model_copy(update={"supervisor_pid": pid}))
        log.info("local.launched", job_id=job_id, job_name=request.job_name, pid=pid)
        return Submission(request_id=job_id, job_id=job_id)

    def _spawn(self, job_dir: Path, job_id: str, secrets: Mapping[str, str]) -> int:
        env = {
            name: os.environ[name] for name in (*BASE_ENV, *self.job_env, "PYTHONPATH") if name in os.environ
        }
        env.update(secrets)
        env[JOB_MARKER_ENV] = job_id
        with open(job_dir / "supervisor.log", "ab") as out:
            process = subprocess.Popen(
                [*self.supervisor_command, str(job_dir)],
                cwd=Path(__file__).resolve().parents[2],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return process.pid

    async def resolve(self, request_id: str) -> str:
        """Local launches are synchronous: the request id is the job id."""
        if not (self._job_dir(request_id) / JOB_FILE).exists():
            raise ControllerError(f"local job {request_id} has no record")
        return request_id

    async def find_jobs(self, job_name: str) -> list[JobMatch]:
        """Jobs of this worker with exactly this name, newest first; ghosts cannot progress."""
        matches = []
        for job_dir in self.jobs_dir.iterdir():
            job = read_model(job_dir / JOB_FILE, LocalJobRecord) if job_dir.is_dir() else None
            if job is None or job.job_name != job_name:
                continue
            rows = self._rows(job_dir, job)
            status = aggregate_job_status([row.status for row in rows])
            dead = status is JobStatus.FAILED_CONTROLLER
            matches.append(
                JobMatch(
                    job_id=job.job_id,
                    status=status,
                    launch_token=job.token,
                    can_progress=not dead,
                    reason=rows[0].failure_reason if dead and rows else "",
                )
            )
        return sorted(matches, key=lambda m: int(m.job_id.rsplit("-", 1)[-1]), reverse=True)

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """The task rows of each job id (none for an unknown one); dead jobs are reaped first."""
        result: dict[str, list[TaskRow]] = {}
        for job_id in job_ids:
            job_dir = self._job_dir(job_id)
            job = read_model(job_dir / JOB_FILE, LocalJobRecord)
            result[job_id] = self._rows(job_dir, job) if job else []
        return result

    def _rows(self, job_dir: Path, job: LocalJobRecord) -> list[TaskRow]:
        _reap(job.supervisor_pid)
        dead = self._dead_reason(job_dir, job)
        rows = []
        for index, task in enumerate(job.tasks):
            record = task_status(job_dir, task.name)
            if dead and not record.status.is_terminal():
                cancelled = (job_dir / CANCEL_MARKER).exists()
                _kill(job.job_id, _pgid(job_dir, job))
                set_task_status(
                    job_dir,
                    task.name,
                    JobStatus.CANCELLED if cancelled else JobStatus.FAILED_CONTROLLER,
                    "cancelled by request" if cancelled else dead,
                )
                record = task_status(job_dir, task.name)
            elif (job_dir / CANCEL_MARKER).exists() and not record.status.is_terminal():
                record = record.model_copy(update={"status": JobStatus.CANCELLING})
            rows.append(
                TaskRow(
                    job_id=job.job_id,
                    task_id=index,
                    task_name=task.name,
                    status=record.status,
                    submitted_at=record.submitted_at,
                    start_at=record.start_at,
                    end_at=record.end_at,
                    is_job_group=job.execution == "parallel",
                    execution=job.execution,
                    cluster_name=f"local-{job.job_id}",
                    last_progress_at=record.last_updated_at if record.status.is_active() else "",
                    last_updated_at=record.last_updated_at,
                    failure_reason=record.failure_reason,
                )
            )
        return rows

    def _dead_reason(self, job_dir: Path, job: LocalJobRecord) -> str:
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

    async def cancel(self, job_id: str) -> None:
        """Kill every process of the job (its group and anything marked with its id), then mark it.

        Raises:
            ControllerError: processes of the job are still alive after SIGKILL.
        """
        job_dir = self._job_dir(job_id)
        job = read_model(job_dir / JOB_FILE, LocalJobRecord)
        if job is None:
            return
        (job_dir / CANCEL_MARKER).write_text(utc_now())
        pgid = _pgid(job_dir, job)
        if job_processes(job_id, pgid):
            _kill(job_id, pgid, signal.SIGTERM)
            deadline = time.monotonic() + CANCEL_GRACE_SECONDS
            while job_processes(job_id, pgid) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                _reap(job.supervisor_pid)
            _kill(job_id, pgid)
        _reap(job.supervisor_pid)
        left = job_processes(job_id, pgid)
        if left:
            raise ControllerError(f"local job {job_id}: processes {left} survived SIGKILL")
        for task in job.tasks:
            if not task_status(job_dir, task.name).status.is_terminal():
                set_task_status(job_dir, task.name, JobStatus.CANCELLED, "cancelled by request")
        log.info("local.cancelled", job_id=job_id)

    async def logs(self, job_id: str, task: str = "", tail_lines: int = 2000) -> str:
        """The end of the job's per-rank logs (one task's when named)."""
        logs_dir = self._job_dir(job_id) / "logs"
        if not logs_dir.is_dir():
            return ""
        parts = []
        for path in sorted(logs_dir.glob(f"{task}-*.log" if task else "*.log")):
            lines = path.read_text(errors="replace").splitlines()[-tail_lines:]
            parts.append(f"==> {path.stem} <==\n" + "\n".join(lines))
        return "\n".join(parts)


def _pgid(job_dir: Path, job: LocalJobRecord) -> int:
    identity = read_model(job_dir / SUPERVISOR_FILE, SupervisorIdentity)
    return identity.pgid if identity else job.supervisor_pid  # a session leader's pgid is its pid


def _kill(job_id: str, pgid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    """Signal the job's process group and every process carrying its marker."""
    if pgid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
    for pid in job_processes(job_id, pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap(pid: int) -> None:
    """Collect an exited supervisor this process started, so it is not left a zombie."""
    if pid <= 0:
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
