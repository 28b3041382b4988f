"""The commands that act on one run (status, cancel, pause, logs, artifacts, report, resume) and `list`."""

from __future__ import annotations

from pydantic import Field

from npaflow.options.connection import ConnectionOptions
from npaflow.options.spec import ImageFlags


class RunOptions(ConnectionOptions):
    """`RUN_ID` and the connection flags; `--json` where the command has it."""

    run_id: str
    as_json: bool = Field(default=False, alias="json")


class StatusOptions(RunOptions):
    """`npaflow status`: follow the run, write its report page."""

    watch: bool = False
    write_report: bool = False


class CancelOptions(RunOptions):
    """`npaflow cancel`: the reason the ledger records."""

    reason: str = ""


class LogsOptions(RunOptions):
    """`npaflow logs`: one state's logs, how many lines, undecorated."""

    state: str = ""
    tail: int = 2000
    raw: bool = False


class ArtifactsOptions(RunOptions):
    """`npaflow artifacts`: one state's artifacts only."""

    state: str = ""


class ReportOptions(RunOptions):
    """`npaflow report`: where to write the page ("" prints where it was written)."""

    out: str = ""


class ResumeOptions(RunOptions, ImageFlags):
    """`npaflow resume`: onto a new spec, with a new budget, the lists read again; --wait follows it."""

    spec: str | None = None
    accept_changes: bool = False
    max_gpu_hours: float | None = None
    reread_items: bool = False
    wait: bool = False


class ListOptions(ConnectionOptions):
    """`npaflow list`: which runs (phase, spec, since) and how many."""

    phase: str = ""
    spec: str | None = None
    since: str = ""
    limit: int = 50
    as_json: bool = Field(default=False, alias="json")
