"""`resume --reread-items`: the change to each forEach list, shown before the restart.

A restart that re-reads its lists would launch members for items added since
the run read them (and drop those removed); the user sees that diff first, as
`resume --spec` shows a plan change. A worker reads the lists (it holds the
storage credentials). A source that cannot be read now stops the restart: the
group would fail on it.
"""

from __future__ import annotations

from temporalio.client import Client

from npaflow.errors import UsageError
from npaflow.fanout.changes import DiffItemsInput, ItemsChanges
from npaflow.printable import printable
from npaflow.runtime.contract import ITEMS_DIFF_WORKFLOW_TYPE
from npaflow.temporal.helper_runs import ledger_on_worker, run_helper


async def list_changes(client: Client, run_id: str) -> ItemsChanges:
    """Each list's change since the run read it.

    Raises:
        UsageError: no worker serves the run, its ledger cannot be read, or a list's
            source cannot be read now (the message names it and the fix).
    """
    ledger_uri, task_queue = await ledger_on_worker(client, run_id, "forEach lists are read again")
    changes = await run_helper(
        client,
        ITEMS_DIFF_WORKFLOW_TYPE,
        DiffItemsInput(ledger_uri=ledger_uri),
        name=f"items:{run_id}",
        task_queue=task_queue,
        result_type=ItemsChanges,
        failing=f"run {run_id}: its forEach lists could not be read again",
    )
    return changes


def refusal(changes: ItemsChanges) -> UsageError | None:
    """Why the restart cannot re-read its lists (a source is unreadable now), or None."""
    unreadable = changes.unreadable()
    if not unreadable:
        return None
    first = unreadable[0]
    return UsageError(
        printable(
            f"run {changes.run_id}: forEach list {first.items_uri} (group {first.group}) cannot be "
            f"read now: {first.error}; fix the list, or resume without --reread-items to run the "
            "items the run read first"
        )
    )


def changes_text(changes: ItemsChanges) -> str:
    """`forEach lists of run R, read again:` and a line per list and per item added or removed."""
    lines = [f"forEach lists of run {changes.run_id}, read again:"]
    lines += [f"  {line}" for line in changes.text_lines()]
    return printable("\n".join(lines))
