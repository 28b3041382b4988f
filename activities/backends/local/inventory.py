"""What the local backend's jobs hold right now: accelerators of every task not yet ended.

A quota pool counts what it granted; this counts what the backend runs, from the
jobs' own records on disk (`job.json` and `status/<task>.json`), so the two can be
compared: a task holds its accelerators from its launch until its status is terminal.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from activities.backends.local.jobs import JOB_FILE, LocalJobRecord, read_model
from activities.backends.local.task_status import read_tasks


class HeldAccelerators(BaseModel):
    """One job's accelerators in flight: every node of every task that has not ended."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    run_id: str  # the run that launched it ("" for jobs from before owners)
    accelerators: dict[str, float]

    @property
    def gpus(self) -> float:
        """Accelerators of every type."""
        return sum(self.accelerators.values())


def held_accelerators(jobs_dir: Path) -> list[HeldAccelerators]:
    """Every local job under `jobs_dir` (any worker's) that holds accelerators now."""
    held = []
    for entry in os.scandir(jobs_dir) if jobs_dir.is_dir() else ():
        if not entry.is_dir() or entry.name.startswith("."):
            continue  # the id counter's lock, the job-name index
        job = read_model(Path(entry.path) / JOB_FILE, LocalJobRecord)
        if job is None or not job.supervisor_pid:
            continue  # recorded but not launched yet: nothing holds a GPU
        records = read_tasks(entry.path, [task.name for task in job.tasks])
        counts: dict[str, float] = {}
        for task, record in zip(job.tasks, records, strict=True):
            if task.accelerator and not record.status.is_terminal():
                counts[task.accelerator] = counts.get(task.accelerator, 0) + (
                    task.accelerators_per_node * task.num_nodes
                )
        if counts:
            run_id = job.owner.run_id if job.owner else ""
            held.append(HeldAccelerators(job_id=job.job_id, run_id=run_id, accelerators=counts))
    return held
