"""Ask a run its `status` query, page by page, for the whole view (npaflow/runtime/status_pages.py).

Each answer is one bounded page: the newest wave attempts and where they start.
Readers ask again from that start until the first wave; every page is asked at
the same clock, so spend counted up to `now` agrees across pages.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import WorkflowHandle

from npaflow.cli.clock import utc_now_text
from npaflow.runtime.contract import STATUS_QUERY
from npaflow.runtime.status_pages import MAX_STATUS_PAGES, merged_pages
from npaflow.runtime.summary import RunStatusView


async def queried_status(handle: WorkflowHandle[Any, Any], seconds: float, now: str = "") -> RunStatusView:
    """The run's whole status view, every wave attempt, read in bounded pages.

    Raises:
        TimeoutError: a page went unanswered within `seconds`.
    """
    now = now or utc_now_text()
    asked = handle.query(STATUS_QUERY, now, result_type=RunStatusView)
    pages = [await asyncio.wait_for(asked, seconds)]
    while pages[-1].waves_start > 0 and pages[-1].waves and len(pages) < MAX_STATUS_PAGES:
        asked = handle.query(STATUS_QUERY, args=[now, pages[-1].waves_start], result_type=RunStatusView)
        pages.append(await asyncio.wait_for(asked, seconds))
    return merged_pages(pages)
