"""Ask a run its `status` query, page by page, for the whole view (npaflow/runtime/status_pages.py).

Each answer is one bounded page: the newest wave attempts and where they start.
Readers ask again from that start until the first wave; every page is asked at
the same clock, so spend counted up to `now` agrees across pages.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import WorkflowHandle, WorkflowQueryFailedError

from npaflow.cli.clock import utc_now_text
from npaflow.runtime.contract import STATUS_QUERY
from npaflow.runtime.status_pages import MAX_STATUS_PAGES, merged_pages
from npaflow.runtime.summary import RunStatusView

#: The SDK's deadlock detector (an activation past 2 s): a closed run's query replays its whole
#: history on a worker, and on a loaded host that replay can pass it. Asked again, it answers.
DEADLOCK_MARK = "TMPRL1101"
#: How often a page is asked when the worker's replay ran into the detector.
QUERY_ATTEMPTS = 3


async def queried_status(handle: WorkflowHandle[Any, Any], seconds: float, now: str = "") -> RunStatusView:
    """The run's whole status view, every wave attempt, read in bounded pages.

    Raises:
        TimeoutError: a page went unanswered within `seconds`.
        WorkflowQueryFailedError: the run could not answer (asked again only after a deadlock).
    """
    now = now or utc_now_text()
    pages = [await _page(handle, [now], seconds)]
    while pages[-1].waves_start > 0 and pages[-1].waves and len(pages) < MAX_STATUS_PAGES:
        pages.append(await _page(handle, [now, pages[-1].waves_start], seconds))
    return merged_pages(pages)


async def _page(handle: WorkflowHandle[Any, Any], args: list[Any], seconds: float) -> RunStatusView:
    """One page; a replay the deadlock detector stopped is asked again (nothing else is)."""
    attempt = 1
    while True:
        try:
            asked = handle.query(STATUS_QUERY, args=args, result_type=RunStatusView)
            return await asyncio.wait_for(asked, seconds)
        except WorkflowQueryFailedError as error:
            if DEADLOCK_MARK not in str(error) or attempt >= QUERY_ATTEMPTS:
                raise
        await asyncio.sleep(attempt)
        attempt += 1
