"""On-disk records of local-backend jobs, shared by the backend and the supervisor.

Layout under `<home>/local/jobs/<job id>/`: `job.json` (written by the worker),
`supervisor.json` (written by the supervisor itself once it runs), `wave.yaml` and
`wave.json` (its task documents, parsed for the standard-library supervisor),
`status/<task>.json` (task_status.py), `logs/<task>-<rank>.log`, `cancel_requested`,
`supervisor.log`.
A job is *launching* until its supervisor has recorded itself and is alive.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from activities.backends.local.task_status import (
    CANCEL_MARKER,
    JOB_FILE,
    JOB_MARKER_ENV,
    SUPERVISOR_FILE,
    WAVE_FILE,
)
from activities.files import write_text_atomic
from npaflow.integers import plain_int
from npaflow.runtime.reconcile.models import JobOwner
from npaflow.runtime.usage import accelerator_count
from npaflow.traversal.models import WaveKind

#: The layout's file names live with the standard-library status module; re-exported here.
__all__ = [
    "CANCEL_MARKER",
    "JOB_FILE",
    "JOB_MARKER_ENV",
    "SUPERVISOR_FILE",
    "WAVE_FILE",
    "JobNameIndex",
    "LocalJobId",
    "LocalJobRecord",
    "LocalTask",
    "SupervisorIdentity",
    "allocate_job_id",
    "is_supervisor_alive",
    "job_marker",
    "job_processes",
    "read_model",
    "start_ticks",
    "write_model",
]
_OPEN = ConfigDict(extra="ignore")
ModelT = TypeVar("ModelT", bound=BaseModel)


class LocalTask(BaseModel):
    """One task of a local job."""

    model_config = _OPEN

    name: str
    num_nodes: int = 1
    accelerator: str = ""  # e.g. "H100", from the task's `resources.accelerators`; "" for CPU-only
    accelerators_per_node: float = 0

    @classmethod
    def of_document(cls, document: dict[str, Any]) -> LocalTask:
        """A wave task document's name, nodes and the accelerators it holds on each node."""
        resources = document.get("resources")
        kind, count = accelerator_count(
            resources.get("accelerators") if isinstance(resources, dict) else None
        )
        nodes = int(document.get("num_nodes", 1))
        return cls(name=document["name"], num_nodes=nodes, accelerator=kind, accelerators_per_node=count)


class LocalJobRecord(BaseModel):
    """`job.json`: what the launching worker recorded about the job."""

    model_config = _OPEN

    job_id: str
    job_name: str
    token: str = ""
    execution: WaveKind = WaveKind.SERIAL
    submitted_at: str = ""
    launched_at: float = 0.0  # epoch seconds: when the worker started the supervisor
    worker_id: str = ""
    tasks: list[LocalTask] = Field(default_factory=list)
    env_names: list[str] = Field(default_factory=list)  # what the job may see of its environment
    supervisor_pid: int = 0
    marker: str = ""  # NPAFLOW_LOCAL_JOB in its processes (job_marker); "" in jobs from before it
    owner: JobOwner | None = None  # the run that launched it; None in jobs from before owners

    @property
    def process_marker(self) -> str:
        """What the job's processes carry in NPAFLOW_LOCAL_JOB (older jobs carry their id)."""
        return self.marker or self.job_id


class SupervisorIdentity(BaseModel):
    """`supervisor.json`: the supervisor's own pid, process group and start time."""

    model_config = _OPEN

    pid: int
    pgid: int
    start_ticks: int


def read_model(path: Path, model: type[ModelT]) -> ModelT | None:
    """Read a JSON record, or None when it does not exist (yet) or is unreadable."""
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValidationError, ValueError):
        return None


def write_model(path: Path, record: BaseModel) -> None:
    """Write a JSON record atomically so a reader never sees half a file."""
    write_text_atomic(path, record.model_dump_json(indent=2))


class LocalJobId(NamedTuple):
    """A local job id, `<worker id>-<n>`: unique across workers, hosts and restarts.

    Built and parsed only here; the worker id keeps another worker's job from ever
    being looked up (or cancelled) on this host.
    """

    worker_id: str
    number: int

    def __str__(self) -> str:
        return f"{self.worker_id}-{self.number}"

    @classmethod
    def parse(cls, job_id: str) -> LocalJobId:
        """Split an id into worker id and number.

        Raises:
            ValueError: the text is not a local job id.
        """
        worker, _, digits = job_id.rpartition("-")
        number = plain_int(digits)
        if not worker or number is None:
            raise ValueError(f"{job_id!r} is not a local job id (<worker id>-<n>)")
        return cls(worker, number)


def allocate_job_id(jobs_dir: Path, worker_id: str) -> LocalJobId:
    """Return the next job id of this worker and create its directory."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    with open(jobs_dir / ".counter.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = jobs_dir / ".counter"
        value = int(counter.read_text() or "0") + 1 if counter.exists() else 1
        counter.write_text(str(value))
        job_id = LocalJobId(worker_id, value)
        (jobs_dir / str(job_id)).mkdir()
        return job_id


class JobNameIndex:
    """`<home>/local/names/<job name>`: the ids of the jobs launched under each exact name.

    A launch looks its name up before submitting; the index keeps that lookup to
    the few jobs of that name instead of every job the home ever ran. Built once
    from the job records when it does not exist yet (a home from an older version).
    """

    def __init__(self, jobs_dir: Path) -> None:
        self.jobs_dir = jobs_dir
        self.directory = jobs_dir.parent / "names"
        if not self.directory.is_dir():
            self._build()

    def _build(self) -> None:
        staging = self.directory.with_name(f".names.{os.getpid()}")
        staging.mkdir(parents=True, exist_ok=True)
        for job_dir in sorted(p for p in self.jobs_dir.iterdir() if p.is_dir()):
            job = read_model(job_dir / JOB_FILE, LocalJobRecord)
            if job is not None:
                with open(staging / job.job_name, "a", encoding="utf-8") as ids:
                    ids.write(job.job_id + "\n")
        try:
            os.rename(staging, self.directory)
        except OSError:  # another process built it first
            for leftover in staging.iterdir():
                leftover.unlink()
            staging.rmdir()

    def _entry(self, job_name: str) -> Path:
        if not job_name or "/" in job_name or job_name in (".", ".."):
            raise ValueError(f"{job_name!r} is not a job name")
        return self.directory / job_name

    def add(self, job_name: str, job_id: str) -> None:
        """Record a job under its name (before its supervisor starts)."""
        with open(self._entry(job_name), "a", encoding="utf-8") as ids:
            ids.write(job_id + "\n")

    def ids(self, job_name: str) -> list[str]:
        """The ids recorded under this exact name, oldest first."""
        try:
            text = self._entry(job_name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if line]


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks (field 22 of /proc/pid/stat); None if gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def is_supervisor_alive(identity: SupervisorIdentity | None) -> bool:
    """True when the recorded supervisor process still runs (and is not a reused pid)."""
    return identity is not None and start_ticks(identity.pid) == identity.start_ticks


def job_marker(jobs_dir: Path, job_id: str) -> str:
    """The marker a job's processes carry: its directory, which no other job on the host has.

    Ids repeat across homes (two workers given one NPAFLOW_WORKER_ID, two test suites):
    marked by id, cancelling one job killed the other home's job of that id.
    """
    return str(jobs_dir.resolve() / job_id)


def job_processes(marker: str, pgid: int = 0) -> list[int]:
    """Every live process of a job: its group, its marked processes, and their sessions.

    A supervisor forked by the spawner does not carry the marker in its environment,
    but it leads the session its marked task processes run in.
    """
    marker_entry = f"{JOB_MARKER_ENV}={marker}".encode()
    processes: dict[int, tuple[int, int]] = {}  # pid -> (pgid, session id)
    marked: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            if fields[0] == "Z":
                continue
            processes[pid] = (int(fields[2]), int(fields[3]))
            if marker_entry in (entry / "environ").read_bytes().split(b"\0"):
                marked.add(pid)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    sessions = {processes[pid][1] for pid in marked} - {0, 1}
    return sorted(
        pid
        for pid, (group, session) in processes.items()
        if pid in marked or (pgid and group == pgid) or session in sessions or pid in sessions
    )
