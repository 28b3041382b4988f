"""The process that runs one local job; detached from the worker so it outlives it.

First it records itself (`supervisor.json`): until then the job is only
*launching*. Then it runs `setup` and `run` under bash for every node rank,
pipeline tasks in order and JobGroup tasks concurrently, writing SkyPilot-style
statuses. Jobs see only their rendered `envs`, their secrets, the names the
worker passes through, and a small base (PATH, HOME, locale, TMPDIR).
Usage: python -m activities.backends.local_supervisor JOB_DIR
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

from activities.backends.local_jobs import (
    JOB_FILE,
    JOB_MARKER_ENV,
    SUPERVISOR_FILE,
    LocalJobRecord,
    SupervisorIdentity,
    read_model,
    set_task_status,
    start_ticks,
    write_model,
)
from npaflow.runtime.status import JobStatus

Task = dict[str, Any]


def _rank_env(task: Task, job: LocalJobRecord, rank: int, nodes: int) -> dict[str, str]:
    env = {name: os.environ[name] for name in job.env_names if name in os.environ}
    env.update({str(k): str(v) for k, v in (task.get("envs") or {}).items()})
    env.update(
        {
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NUM_NODES": str(nodes),
            "SKYPILOT_NODE_IPS": "\n".join(["127.0.0.1"] * nodes),
            "SKYPILOT_MANAGED_JOB_ID": job.job_id,
            "SKYPILOT_TASK_ID": f"local_{job.job_name}_{task['name']}_{job.job_id}",
            "SKYPILOT_SETUP_NODE_RANK": str(rank),
            JOB_MARKER_ENV: job.job_id,
        }
    )
    if job.execution == "parallel":
        env["SKYPILOT_JOBGROUP_NAME"] = job.job_name
    return env


def _run_on_all_ranks(script: str, task: Task, job: LocalJobRecord, job_dir: Path, phase: str) -> bool:
    nodes = int(task.get("num_nodes") or 1)
    processes = []
    for rank in range(nodes):
        log = open(job_dir / "logs" / f"{task['name']}-{rank}.log", "a")  # noqa: SIM115
        log.write(f"--- {phase} (rank {rank}/{nodes}) ---\n")
        log.flush()
        processes.append(
            (
                subprocess.Popen(
                    ["bash", "-c", script],
                    cwd=job_dir,
                    env=_rank_env(task, job, rank, nodes),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                ),
                log,
            )
        )
    codes = []
    for process, log in processes:
        codes.append(process.wait())
        log.close()
    return all(code == 0 for code in codes)


def run_task(task: Task, job: LocalJobRecord, job_dir: Path) -> JobStatus:
    """Run one task on all its ranks and record its terminal status."""
    name = task["name"]
    set_task_status(job_dir, name, JobStatus.STARTING)
    setup = str(task.get("setup") or "")
    if setup.strip():
        set_task_status(job_dir, name, JobStatus.RUNNING)
        if not _run_on_all_ranks(setup, task, job, job_dir, "setup"):
            set_task_status(job_dir, name, JobStatus.FAILED_SETUP, "setup exited non-zero")
            return JobStatus.FAILED_SETUP
    set_task_status(job_dir, name, JobStatus.RUNNING)
    if _run_on_all_ranks(str(task.get("run") or "true"), task, job, job_dir, "run"):
        set_task_status(job_dir, name, JobStatus.SUCCEEDED)
        return JobStatus.SUCCEEDED
    set_task_status(job_dir, name, JobStatus.FAILED, "run exited non-zero on some node")
    return JobStatus.FAILED


def record_self(job_dir: Path) -> None:
    """Write `supervisor.json`: from here on the job is running, and findable by its group."""
    pid = os.getpid()
    write_model(
        job_dir / SUPERVISOR_FILE,
        SupervisorIdentity(pid=pid, pgid=os.getpgid(pid), start_ticks=start_ticks(pid) or 0),
    )


def supervise(job_dir: Path) -> int:
    """Run the job's tasks as a pipeline (in order) or a JobGroup (all at once)."""
    job = read_model(job_dir / JOB_FILE, LocalJobRecord)
    if job is None:
        return 2
    record_self(job_dir)
    documents = [d for d in yaml.safe_load_all((job_dir / "wave.yaml").read_text()) if d]
    tasks: list[Task] = documents[1:]
    (job_dir / "logs").mkdir(exist_ok=True)
    if job.execution == "parallel":
        threads = [threading.Thread(target=run_task, args=(t, job, job_dir)) for t in tasks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return 0
    for index, task in enumerate(tasks):
        if not run_task(task, job, job_dir).is_success():
            for rest in tasks[index + 1 :]:
                set_task_status(job_dir, rest["name"], JobStatus.CANCELLED, "an earlier task failed")
            break
    return 0


if __name__ == "__main__":
    sys.exit(supervise(Path(sys.argv[1])))
