"""The local backend (the embedded default): wave jobs as processes on this worker's host.

Jobs live on disk under `<home>/local/jobs/<worker id>-<n>`, each run by a
detached standard-library supervisor, so a restarted worker re-attaches to jobs
that outlived it. Their ids carry the worker id, and their activities run on
that worker's own task queue: no other host can ever read or cancel the wrong
job. A queue call re-reads a job's statuses only when its status directory
changed, and checks its supervisor's liveness at most every LIVENESS_SECONDS, so
polling hundreds of jobs every LOCAL_POLL_SECONDS stays cheap.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import structlog
import yaml

from activities.backends.base import JobMatch, LaunchRequest, Submission
from activities.backends.local.jobs import (
    CANCEL_MARKER,
    JOB_FILE,
    JOB_MARKER_ENV,
    WAVE_FILE,
    JobNameIndex,
    LocalJobId,
    LocalJobRecord,
    LocalTask,
    allocate_job_id,
    job_marker,
    job_processes,
    read_model,
    write_model,
)
from activities.backends.local.row_reader import RowReader
from activities.backends.local.signals import job_pgid, kill_job, reap_supervisor, until_gone
from activities.backends.local.spawn import SUPERVISOR_COMMAND, SupervisorStarter
from activities.backends.local.task_status import TaskStatus, end_tasks, file_stem, init_task
from activities.clock import utc_now
from npaflow.errors import ConfigurationError, ControllerError
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.messages import JobRef
from npaflow.runtime.reconcile.models import LiveJob
from npaflow.runtime.request import BackendName
from npaflow.runtime.status import JobStatus, aggregate_job_status
from npaflow.traversal.models import WaveKind

log = structlog.get_logger(__name__)
#: libyaml's safe loader when PyYAML was built with it (several times faster), else PyYAML's own.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: How long a cancelled job's processes get to exit on SIGTERM before SIGKILL.
CANCEL_GRACE_SECONDS = 5.0
#: Seconds between polls of a local job: its state is on this host, so its end is seen at once.
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


class LocalBackend:
    """Runs rendered SkyPilot task documents as local processes with SkyPilot's statuses."""

    name = BackendName.LOCAL
    host_bound = True
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
        self.supervisors = SupervisorStarter(home / "local", supervisor_command)
        self.names = JobNameIndex(self.jobs_dir)
        self.rows = RowReader()
        self._ended: set[str] = set()  # job ids seen terminal: never listed again

    def _job_dir(self, job_id: str) -> Path:
        """The job's directory; a job id of another worker is never looked up here.

        Raises:
            ControllerError: the id is not one of this worker's local job ids.
        """
        try:
            owner = LocalJobId.parse(job_id).worker_id
        except ValueError as exc:
            raise ControllerError(str(exc)) from None
        if owner != self.worker_id:
            raise ControllerError(
                f"local job {job_id} belongs to another worker; this is worker "
                f"{self.worker_id} (its activities run on the owner's task queue)"
            )
        return self.jobs_dir / job_id

    async def submit(self, request: LaunchRequest) -> Submission:
        """Record the job and start its supervisor in one thread hop (blocking I/O, off the loop)."""
        return await asyncio.to_thread(self._submit, request)

    def _submit(self, request: LaunchRequest) -> Submission:
        documents = [d for d in yaml.load_all(request.yaml, Loader=_SAFE_LOADER) if d]
        if len(documents) < 2 or not isinstance(documents[0], dict):
            raise ConfigurationError("wave YAML has no task documents")
        job_id = str(allocate_job_id(self.jobs_dir, self.worker_id))
        job_dir = self.jobs_dir / job_id
        execution = WaveKind(str(documents[0].get("execution", WaveKind.SERIAL.value)))
        (job_dir / "wave.yaml").write_text(request.yaml, encoding="utf-8")
        wave = {"execution": execution.value, "tasks": documents[1:]}
        (job_dir / WAVE_FILE).write_text(json.dumps(wave), encoding="utf-8")
        job = LocalJobRecord(
            job_id=job_id,
            job_name=request.job_name,
            token=request.launch_token,
            execution=execution,
            submitted_at=utc_now(),
            launched_at=time.time(),
            worker_id=self.worker_id,
            env_names=sorted({*BASE_ENV, *self.job_env, *request.secret_values}),
            tasks=[LocalTask.of_document(document) for document in documents[1:]],
            marker=job_marker(self.jobs_dir, job_id),
            owner=request.owner,
        )
        write_model(job_dir / JOB_FILE, job)
        self.names.add(request.job_name, job_id)
        for task in job.tasks:
            init_task(job_dir, task.name)
        env = {name: os.environ[name] for name in (*BASE_ENV, *self.job_env) if name in os.environ}
        pid = self.supervisors.start(job_dir, {**env, **request.secret_values, JOB_MARKER_ENV: job.marker})
        write_model(job_dir / JOB_FILE, job.model_copy(update={"supervisor_pid": pid}))
        log.info("local.launched", job_id=job_id, job_name=request.job_name, pid=pid)
        return Submission(request_id=job_id, job_id=job_id)

    async def resolve(self, request_id: str) -> str:
        """Local launches are synchronous: the request id is the job id."""
        if not (self._job_dir(request_id) / JOB_FILE).exists():
            raise ControllerError(f"local job {request_id} has no record")
        return request_id

    async def find_jobs(self, job_name: str) -> list[JobMatch]:
        """Jobs of this worker with exactly this name, newest first; ghosts cannot progress."""
        matches = []
        for job_id in self.names.ids(job_name):
            job = read_model(self._job_dir(job_id) / JOB_FILE, LocalJobRecord)
            if job is None or job.job_name != job_name:
                continue
            rows = self._rows(job.job_id, fresh=True)
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
        return sorted(matches, key=lambda m: LocalJobId.parse(m.job_id).number, reverse=True)

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """The task rows of each job id (none for an unknown one); dead jobs are reaped first."""
        return {job_id: self._rows(job_id) for job_id in job_ids}

    def _rows(self, job_id: str, *, fresh: bool = False) -> list[TaskRow]:
        return self.rows.read(self._job_dir(job_id), job_id, fresh=fresh)

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
        pgid, marker = job_pgid(job_dir, job), job.process_marker
        if job_processes(marker, pgid):
            kill_job(marker, pgid, signal.SIGTERM)
            await until_gone(marker, pgid, job.supervisor_pid, CANCEL_GRACE_SECONDS)
            kill_job(marker, pgid)
            await until_gone(marker, pgid, job.supervisor_pid)
        reap_supervisor(job.supervisor_pid)
        left = job_processes(marker, pgid)
        if left:
            raise ControllerError(f"local job {job_id}: processes {left} survived SIGKILL")
        end_tasks(job_dir, [task.name for task in job.tasks], TaskStatus.CANCELLED, "cancelled by request")
        log.info("local.cancelled", job_id=job_id)

    async def live_jobs(self) -> list[LiveJob]:
        """This worker's jobs that are not terminal (dead ones are reaped on the way)."""
        live = []
        prefix = f"{self.worker_id}-"
        for entry in os.scandir(self.jobs_dir):
            job_id = entry.name
            if not job_id.startswith(prefix) or job_id in self._ended:
                continue
            try:
                rows = self._rows(job_id, fresh=True)
            except ControllerError:
                continue  # not a job id of this worker
            record = self.rows.record(job_id)
            if not rows or record is None:
                continue
            status = aggregate_job_status([row.status for row in rows])
            if status.is_terminal():
                self._ended.add(job_id)
                continue
            job = JobRef(backend=self.name, job_id=job_id, job_name=record.job_name, worker_id=self.worker_id)
            live.append(LiveJob(job=job, status=status, owner=record.owner))
        return live

    async def logs(self, job_id: str, task: str = "", tail_lines: int = 2000) -> str:
        """The end of the job's per-rank logs (one task's when named)."""
        logs_dir = self._job_dir(job_id) / "logs"
        if not logs_dir.is_dir():
            return ""
        parts = []
        for path in sorted(logs_dir.glob(f"{file_stem(task)}-*.log" if task else "*.log")):
            lines = path.read_text(errors="replace").splitlines()[-tail_lines:]
            parts.append(f"==> {path.stem} <==\n" + "\n".join(lines))
        return "\n".join(parts)
