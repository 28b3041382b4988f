"""The end of a failed job's log, quoted in its error so the user sees why without another command."""

from __future__ import annotations

import asyncio

import structlog

from activities.backends.base import Backend
from npaflow.errors import NpaflowError

log = structlog.get_logger(__name__)

#: Lines of each of the job's logs its error quotes, and at most this many characters of them.
LOG_TAIL_LINES = 5
LOG_TAIL_CHARS = 800
#: A log read that takes longer is given up: the error is still reported, without the quote.
LOG_TAIL_SECONDS = 15.0


async def failed_job_log_tail(backend: Backend, job_id: str) -> str:
    """The last lines of a failed job's logs (best effort, bounded; "" when unreadable)."""
    try:
        text = await asyncio.wait_for(backend.logs(job_id, tail_lines=LOG_TAIL_LINES), LOG_TAIL_SECONDS)
    except (NpaflowError, OSError, TimeoutError) as exc:
        log.info("wave.log_tail_unread", job_id=job_id, error=str(exc))
        return ""
    lines = [line.rstrip()[:200] for line in text.splitlines() if line.strip()]
    kept = [line for line in lines if not line.startswith(("==>", "--- "))]  # file and phase headers
    return "\n".join(kept)[-LOG_TAIL_CHARS:]
