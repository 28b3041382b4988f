"""The process that runs one local job; detached from the worker so it outlives it.

Standard library only, run as a script (`python -S -E supervisor.py
JOB_DIR`): it starts in milliseconds, so fifty jobs starting at once do not
starve the worker. First it records itself (`supervisor.json`): until then the
job is only *launching*. Then it runs `setup` and `run` under bash for every
node rank, pipeline tasks in order and JobGroup tasks concurrently, moving each
task's status through the guarded table of `task_status.py`. Jobs see only
their rendered `envs`, their secrets, the names the worker passes through, and
a small base (PATH, HOME, locale, TMPDIR).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

TYPE_CHECKING = False

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from task_status import (  # noqa: E402 - a script: its own directory is the import root
    CANCEL_MARKER,
    JOB_FILE,
    JOB_MARKER_ENV,
    SUPERVISOR_FILE,
    WAVE_FILE,
    TaskStatus,
    file_stem,
    move_task,
)

if TYPE_CHECKING:  # annotations only: importing typing at run time costs milliseconds
    from typing import Any

    Task = dict[str, Any]
    Job = dict[str, Any]


def _rank_env(task: Task, job: Job, rank: int, nodes: int) -> dict[str, str]:
    env = {name: os.environ[name] for name in job.get("env_names", []) if name in os.environ}
    env.update({str(k): str(v) for k, v in (task.get("envs") or {}).items()})
    env.update(
        {
            "SKYPILOT_NODE_RANK": str(rank),
            "SKYPILOT_NUM_NODES": str(nodes),
            "SKYPILOT_NODE_IPS": "\n".join(["127.0.0.1"] * nodes),
            "SKYPILOT_MANAGED_JOB_ID": job["job_id"],
            "SKYPILOT_TASK_ID": f"local_{job['job_name']}_{task['name']}_{job['job_id']}",
            "SKYPILOT_SETUP_NODE_RANK": str(rank),
            JOB_MARKER_ENV: job.get("marker") or job["job_id"],
        }
    )
    if job.get("execution") == "parallel":
        env["SKYPILOT_JOBGROUP_NAME"] = job["job_name"]
    return env


def _cancel_requested(job_dir: str) -> bool:
    return os.path.exists(os.path.join(job_dir, CANCEL_MARKER))


def _end_job_if_cancelled(job_dir: str) -> None:
    """Kill the job's whole process group (this supervisor too) when a cancel came meanwhile.

    The worker writes the marker before it looks for the job's processes: a task started
    after that look would outlive the cancel, so whoever comes second ends the job.
    """
    if _cancel_requested(job_dir):
        os.killpg(os.getpgrp(), signal.SIGKILL)


def _run_on_all_ranks(script: str, task: Task, job: Job, job_dir: str, phase: str) -> str:
    """Run a script on every rank; "" when all exit 0, else which rank failed with which code."""
    nodes = int(task.get("num_nodes") or 1)
    processes = []
    for rank in range(nodes):
        log = open(os.path.join(job_dir, "logs", f"{file_stem(task['name'])}-{rank}.log"), "a")  # noqa: SIM115
        log.write(f"--- {phase} (rank {rank}/{nodes}) ---\n")
        log.flush()
        env = _rank_env(task, job, rank, nodes)
        processes.append(
            (
                subprocess.Popen(
                    ["bash", "-c", script], cwd=job_dir, env=env, stdout=log, stderr=subprocess.STDOUT
                ),
                log,
            )
        )
    _end_job_if_cancelled(job_dir)
    failure = ""
    for rank, (process, log) in enumerate(processes):
        code = process.wait()
        log.close()
        if code != 0 and not failure:
            failure = f"{phase} exited with code {code} on node {rank} of {nodes}"
    return failure


def run_task(task: Task, job: Job, job_dir: str, later: list[str] | None = None) -> TaskStatus:
    """Run one task on all its ranks; its terminal status (CANCELLED if cancelled meanwhile).

    `later` names the pipeline tasks after this one: its failure cancels them in the same step.
    """
    name = task["name"]
    if _cancel_requested(job_dir) or not move_task(job_dir, name, TaskStatus.STARTING):
        return TaskStatus.CANCELLED  # cancelled (or reaped) before it started
    move_task(job_dir, name, TaskStatus.RUNNING)
    setup = str(task.get("setup") or "")
    setup_failure = _run_on_all_ranks(setup, task, job, job_dir, "setup") if setup.strip() else ""
    if setup_failure:
        status, reason = TaskStatus.FAILED_SETUP, setup_failure
    elif run_failure := _run_on_all_ranks(str(task.get("run") or "true"), task, job, job_dir, "run"):
        status, reason = TaskStatus.FAILED, run_failure
    else:
        status, reason = TaskStatus.SUCCEEDED, ""
    skipped = later if status is not TaskStatus.SUCCEEDED else None
    return status if move_task(job_dir, name, status, reason, cancel_after=skipped) else TaskStatus.CANCELLED


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def record_self(job_dir: str) -> None:
    """Write `supervisor.json`: from here on the job is running, and findable by its group."""
    pid = os.getpid()
    with open(f"/proc/{pid}/stat") as stat_file:
        stat = stat_file.read().rsplit(")", 1)[-1].split()
    identity = {"pid": pid, "pgid": os.getpgid(pid), "start_ticks": int(stat[19])}
    temp = os.path.join(job_dir, f".{SUPERVISOR_FILE}.tmp")
    with open(temp, "w", encoding="utf-8") as file:
        json.dump(identity, file)
    os.replace(temp, os.path.join(job_dir, SUPERVISOR_FILE))


def supervise(job_dir: str) -> int:
    """Run the job's tasks as a pipeline (in order) or a JobGroup (all at once)."""
    try:
        job: Job = _read_json(os.path.join(job_dir, JOB_FILE))
        wave = _read_json(os.path.join(job_dir, WAVE_FILE))
    except (OSError, ValueError):
        return 2
    record_self(job_dir)
    tasks: list[Task] = wave["tasks"]
    os.makedirs(os.path.join(job_dir, "logs"), exist_ok=True)
    if wave.get("execution") == "parallel":
        threads = [threading.Thread(target=run_task, args=(t, job, job_dir)) for t in tasks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return 0
    for index, task in enumerate(tasks):
        later = [rest["name"] for rest in tasks[index + 1 :]]
        if run_task(task, job, job_dir, later) is not TaskStatus.SUCCEEDED:
            break  # a failure cancelled the later tasks itself; a cancel or a reap ended them all
    return 0


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1]))
