"""Typed command options: what a command's flags mean, parsed once from argparse.

The front door. A command module turns its `argparse.Namespace` into one of
these frozen models at once; everything below it (handlers, the Temporal
client package, the worker's commands) takes the model, never the Namespace.

- `connection.py`: where the Temporal server is (`--address`, `--namespace`,
  `--profile`, `--task-queue`, `--ledger-root`).
- `worker.py`: the worker process's commands (`worker`, `dev`, `replay-check`,
  `deployment promote|status`).
"""

from npaflow.options.connection import ConnectionOptions
from npaflow.options.worker import (
    DeploymentStatusOptions,
    DevOptions,
    PromoteOptions,
    ReplayCheckOptions,
    WorkerOptions,
)

__all__ = [
    "ConnectionOptions",
    "DeploymentStatusOptions",
    "DevOptions",
    "PromoteOptions",
    "ReplayCheckOptions",
    "WorkerOptions",
]
