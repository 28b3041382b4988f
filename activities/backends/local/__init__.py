"""The local backend: each wave's YAML runs on this host under a detached supervisor.

The front door is `LocalBackend` (backend.py). Inside: the job directory and its
records (jobs.py), each task's guarded status file (task_status.py), the
supervisor that runs a job's tasks (supervisor.py) and the spawner that starts
supervisors detached (spawner.py, spawn.py), the rows `queue` reports (rows.py,
read again only when they moved by row_reader.py),
whether a job can still progress (liveness.py) and the signals that stop a job
(signals.py). supervisor.py, spawner.py and
task_status.py run as scripts with the standard library only.
"""

from activities.backends.local.backend import LocalBackend

__all__ = ["LocalBackend"]
