"""The local backend (the embedded default): wave jobs as processes on this machine.

Jobs live on disk under `<home>/local/jobs`, each run by a detached supervisor
process, so a new worker re-attaches to jobs that outlived the old one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import structlog
import yaml

from activities.backends.base import LaunchRejectedError, LaunchRequest
from activities.backends.local_jobs import (
    CANCEL_MARKER,
    JOB_FILE,
    allocate_job_id,
    is_process_alive,
    now_iso,
    read_json,
    set_task_status,
    task_rows,
    write_json,
)
from npaflow.runtime.ledger import TaskRow
from npaflow.runtime.status import JobStatus

log = structlog.get_logger(__name__)

#: How long a cancelled supervisor gets to exit on SIGTERM before SIGKILL.
CANCEL_GRACE_SECONDS = 5.0


class LocalBackend:
    """Runs rendered SkyPilot task documents as local processes with SkyPilot's statuses."""

    def __init__(self, home: Path) -> None:
        self.jobs_dir = home / "local" / "jobs"
        self.jobs_dir.mkdir(parents=True, exist_ok=True)

    def _job_dirs(self) -> list[Path]:
        return [p for p in self.jobs_dir.iterdir() if p.is_dir() and p.name.isdigit()]

    async def launch(self, request: LaunchRequest) -> str:
        """Record the job and start its detached supervisor; returns the new job id."""
        documents = [d for d in yaml.safe_load_all(request.yaml) if d]
        if len(documents) < 2 or not isinstance(documents[0], dict):
            raise LaunchRejectedError("wave YAML has no task documents", retryable=False)
        job_id = await asyncio.to_thread(allocate_job_id, self.jobs_dir)
        job_dir = self.jobs_dir / job_id
        (job_dir / "wave.yaml").write_text(request.yaml, encoding="utf-8")
        job = {"job_id": job_id, "job_name": request.job_name, "token": request.launch_token,
               "execution": documents[0].get("execution", "serial"), "submitted_at": now_iso(),
               "tasks": [{"name": d["name"], "num_nodes": d.get("num_nodes", 1)}
                         for d in documents[1:]], "supervisor_pid": 0}
        write_json(job_dir / JOB_FILE, job)
        for task in job["tasks"]:
            set_task_status(job_dir, task["name"], JobStatus.PENDING)
        env = {**os.environ, **request.secret_values}
        with open(job_dir / "supervisor.log", "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "activities.backends.local_supervisor", str(job_dir)],
                cwd=Path(__file__).resolve().parents[2], env=env, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        job["supervisor_pid"] = process.pid
        write_json(job_dir / JOB_FILE, job)
        log.info("local.launched", job_id=job_id, job_name=request.job_name, pid=process.pid)
        return job_id

    async def find_jobs(self, job_name: str) -> list[str]:
        """Return ids of jobs with exactly this name, newest first."""
        ids = [p.name for p in self._job_dirs()
               if read_json(p / JOB_FILE).get("job_name") == job_name]
        return sorted(ids, key=int, reverse=True)

    async def queue(self, job_ids: list[str]) -> dict[str, list[TaskRow]]:
        """Return the task rows of each job id (no rows for an unknown id)."""
        result: dict[str, list[TaskRow]] = {}
        for job_id in job_ids:
            job_dir = self.jobs_dir / job_id
            _reap(int(read_json(job_dir / JOB_FILE).get("supervisor_pid") or 0))
            result[job_id] = task_rows(job_dir) if (job_dir / JOB_FILE).exists() else []
        return result

    async def cancel(self, job_id: str) -> None:
        """Kill the job's whole process group and mark unfinished tasks CANCELLED."""
        job_dir = self.jobs_dir / job_id
        job = read_json(job_dir / JOB_FILE)
        if not job:
            return
        (job_dir / CANCEL_MARKER).write_text(now_iso())
        pid = int(job.get("supervisor_pid") or 0)
        if pid and is_process_alive(pid):
            _signal_group(pid, signal.SIGTERM)
            for _ in range(int(CANCEL_GRACE_SECONDS / 0.1)):
                if not is_process_alive(pid):
                    break
                await asyncio.sleep(0.1)
            _signal_group(pid, signal.SIGKILL)
        for task in job.get("tasks", []):
            stored = read_json(job_dir / "status" / f"{task['name']}.json").get("status")
            if not JobStatus.parse(stored or "PENDING").is_terminal():
                set_task_status(job_dir, task["name"], JobStatus.CANCELLED, "cancelled by request")
        log.info("local.cancelled", job_id=job_id)

    async def logs(self, job_id: str, task: str = "") -> str:
        """Concatenate the job's per-rank logs (one task's when named)."""
        logs_dir = self.jobs_dir / job_id / "logs"
        if not logs_dir.is_dir():
            return ""
        parts = []
        for path in sorted(logs_dir.glob(f"{task}-*.log" if task else "*.log")):
            parts.append(f"==> {path.stem} <==\n{path.read_text(errors='replace')}")
        return "\n".join(parts)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    _reap(pid)


def _reap(pid: int) -> None:
    """Collect an exited supervisor this process started, so it is not left a zombie."""
    if pid <= 0:
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
