"""Typed command options: what a command's flags mean, parsed once from argparse.

The front door. A command module turns its `argparse.Namespace` into one of
these frozen models at once; everything below it (handlers, the Temporal
client package, the worker's commands) takes the model, never the Namespace.

- `connection.py`: `FromFlags`, the base every model parses from, and where
  the Temporal server is (`--address`, `--namespace`, `--profile`,
  `--task-queue`, `--ledger-root`).
- `spec.py`: a spec on the command line (`SPEC`, `--var`, `--catalog`), the
  image flags, and how `plan-spec` / `render` preview it.
- `launch.py`: `submit` and `schedule ...`: the run flags they share.
- `runs.py`: the commands on one run (`status`, `cancel`, `pause`, `logs`,
  `artifacts`, `report`, `resume`) and `list`.
- `features.py`: `cache`, `quota` and `ui`.
- `worker.py`: the worker process's commands (`worker`, `dev`, `replay-check`,
  `deployment promote|status`).

Flags are kept as the strings argparse checked (its `choices` are the
vocabulary); `--json` is the field `as_json`.
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
