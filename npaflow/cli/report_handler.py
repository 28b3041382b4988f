"""`npaflow report` and `status --write-report`: a run's report.html, rendered by a worker.

The worker holds the storage credentials: it reads the ledger and the stored
spec and renders the page (the `NpaflowRunReport` helper workflow); the CLI
writes it where asked, or the worker writes it beside `runtime.json`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from temporalio.client import Client

from npaflow.errors import UsageError
from npaflow.options.runs import ReportOptions
from npaflow.runtime.contract import REPORT_WORKFLOW_TYPE
from npaflow.runtime.reads import RenderReportInput, RunReport
from npaflow.temporal.client import connect_to
from npaflow.temporal.helper_runs import ledger_on_worker, run_helper


async def fetch_report(client: Client, run_id: str, *, write: bool = False) -> RunReport:
    """The run's page as its worker renders it now (and written beside its ledger with `write`).

    Raises:
        UsageError: the run has no ledger yet, no worker serves its queue, or the page cannot be drawn.
    """
    ledger_uri, task_queue = await ledger_on_worker(client, run_id, "reports are drawn")
    return await run_helper(
        client,
        REPORT_WORKFLOW_TYPE,
        RenderReportInput(ledger_uri=ledger_uri, write=write),
        name=f"report:{run_id}",
        task_queue=task_queue,
        result_type=RunReport,
        failing=f"run {run_id}: its report could not be drawn",
    )


async def report(options: ReportOptions) -> int:
    """Write the page to --out (default RUN_ID.html; '-' prints it)."""
    client = await connect_to(options)
    page = await fetch_report(client, options.run_id)
    if options.out == "-":
        sys.stdout.write(page.html)
        return 0
    out = Path(options.out or f"{options.run_id}.html")
    try:
        out.write_text(page.html, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--out {out}: cannot write the report: {error.strerror or error}") from None
    print(f"wrote {out} ({len(page.html) // 1024 + 1} KiB): open it in a browser, it needs no network")
    return 0
