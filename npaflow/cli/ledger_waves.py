"""An ended run's wave attempts, read page by page from its ledger by a worker.

An ended run's summary keeps its newest attempts and says where they start; its
ledger holds them all. A worker reads the ledger (it holds the storage
credentials) in pages the size of the `status` query's, so no answer grows with
the run and no worker replays the ended run's history to answer.
"""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from npaflow.runtime.contract import RUN_WAVES_WORKFLOW_TYPE
from npaflow.runtime.reads import RunWaves, RunWavesInput
from npaflow.runtime.status_pages import MAX_STATUS_PAGES
from npaflow.runtime.summary import RunStatusView, WaveView
from npaflow.temporal.helper_runs import run_helper

#: How long one page may take (a helper workflow reading the ledger once).
PAGE_SECONDS = 60


async def ledger_waves(
    client: Client, run_id: str, ledger_uri: str, task_queue: str, *, before: int = -1, failing: str = ""
) -> tuple[list[WaveView], int]:
    """The run's attempts before index `before` (-1: all), oldest first, and where they start (0: all read).

    Raises:
        UsageError: with `failing`, the ledger cannot be read (the message says that and why).
        WorkflowFailureError: without `failing`, the ledger cannot be read.
        RPCError: the server refused the helper.
        TimeoutError: a page went unanswered within PAGE_SECONDS.
    """
    pages: list[list[WaveView]] = []
    while before != 0 and len(pages) < MAX_STATUS_PAGES:
        asked = RunWavesInput(ledger_uri=ledger_uri, before=before)
        page = await asyncio.wait_for(_page(client, run_id, asked, task_queue, failing), PAGE_SECONDS)
        if not page.waves or 0 <= before <= page.start:
            break
        pages.append(page.waves)
        before = page.start
    return [wave for page in reversed(pages) for wave in page], max(before, 0)


async def with_ledger_waves(client: Client, view: RunStatusView, task_queue: str) -> RunStatusView:
    """The view with the attempts before its `waves_start` read from its ledger.

    Raises:
        WorkflowFailureError, RPCError, TimeoutError: as `ledger_waves`.
    """
    earlier, start = await ledger_waves(
        client, view.run_id, view.ledger_uri, task_queue, before=view.waves_start
    )
    return view.model_copy(update={"waves": [*earlier, *view.waves], "waves_start": start})


async def _page(client: Client, run_id: str, asked: RunWavesInput, task_queue: str, failing: str) -> RunWaves:
    return await run_helper(
        client,
        RUN_WAVES_WORKFLOW_TYPE,
        asked,
        name=f"waves:{run_id}",
        task_queue=task_queue,
        result_type=RunWaves,
        failing=failing,
    )
