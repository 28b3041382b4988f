"""The commands that start runs: `submit` and `schedule create` (and the other schedule actions)."""

from __future__ import annotations

from pydantic import Field

from npaflow.options.connection import ConnectionOptions, FromFlags
from npaflow.options.spec import SpecOptions


class RunFlags(FromFlags):
    """How each run behaves: polling, retries, failure handling, budget, backend, cache, quota."""

    poll_seconds: float = 30
    max_wait_seconds: float = 3600
    retries: int = 0
    max_infrastructure_recoveries: int = 1
    pending_timeout_seconds: float = 1800
    no_cancel_on_timeout: bool = False
    on_failure: str = "fail"
    notify: str = "failures"
    max_concurrency: int = 0
    max_gpu_hours: float = 0
    secret_env: tuple[str, ...] = ()
    backend: str = "local"
    infra: str = ""
    cache: str = "on"
    cache_scope: str = ""
    quota_pool: str = ""
    team: str = ""
    priority: int = 3


class LaunchOptions(ConnectionOptions, SpecOptions, RunFlags):
    """A spec, where to start it, and how its runs behave: what `submit` and `schedule create` share."""


class SubmitOptions(LaunchOptions):
    """`npaflow submit`: the run id, and whether to wait for the run or attach to a running one."""

    run_id: str | None = None
    wait: bool = False
    attach: bool = False


class ScheduleCreateOptions(LaunchOptions):
    """`npaflow schedule create NAME`: when the schedule starts runs."""

    name: str
    cron: str = ""
    every: str = ""
    overlap: str = "skip"
    catchup_window: str = ""
    jitter: str = ""


class ScheduleOptions(ConnectionOptions):
    """`npaflow schedule describe|pause|unpause|trigger|delete|list`: which schedule, and a note."""

    name: str = ""
    note: str = ""
    as_json: bool = Field(default=False, alias="json")


class BackfillOptions(ScheduleOptions):
    """`npaflow schedule backfill`: the window, its overlap, and the most runs it may start."""

    start: str
    end: str
    overlap: str = "allow-all"
    max_runs: int = 100
