"""`npaflow artifacts RUN_ID`: what a run produced and read, checked where its storage is.

The run's ledger names every declared output, decision read and trigger; a
worker (which holds the storage credentials) reads it and checks each output
exists now, through the small `NpaflowArtifacts` workflow.
"""

from __future__ import annotations

from npaflow.options.runs import ArtifactsOptions
from npaflow.printable import printable
from npaflow.runtime.contract import ARTIFACTS_WORKFLOW_TYPE
from npaflow.runtime.reads import ArtifactRow, ListArtifactsInput, RunArtifacts
from npaflow.temporal.client import connect_to
from npaflow.temporal.helper_runs import ledger_on_worker, run_helper


def _mark(row: ArtifactRow) -> str:
    return {True: "present", False: "MISSING", None: "-"}[row.exists]


def artifacts_text(result: RunArtifacts) -> str:
    """One line per artifact: kind, state, whether it exists, URI, and what it is."""
    if not result.rows:
        return f"run {result.run_id}: no artifacts recorded yet"
    lines = [f"run {result.run_id}:"]
    for row in result.rows:
        what = " ".join(part for part in (row.schema_label, row.detail) if part)
        where = f"(wave {row.wave_key.split('|', 1)[0]}, attempt {row.attempt})" if row.wave_key else ""
        state = f"{row.state} [{row.item}]" if row.item else row.state
        told = " ".join(part for part in (what, where) if part)
        lines.append(f"  {row.kind:<8} {state:<20} {_mark(row):<7} {row.uri}  {told}".rstrip())
    return printable("\n".join(lines))  # keys and URIs are named by whoever writes the objects


async def artifacts(options: ArtifactsOptions) -> int:
    """Print the run's artifacts (exit 2 when it has no ledger location or no worker serves it)."""
    client = await connect_to(options)
    ledger_uri, task_queue = await ledger_on_worker(client, options.run_id, "artifacts are read")
    result = await run_helper(
        client,
        ARTIFACTS_WORKFLOW_TYPE,
        ListArtifactsInput(ledger_uri=ledger_uri, state=options.state),
        name=f"artifacts:{options.run_id}",
        task_queue=task_queue,
        result_type=RunArtifacts,
        failing=f"run {options.run_id}: artifacts could not be read",
    )
    print(result.model_dump_json(indent=2) if options.as_json else artifacts_text(result))
    return 0
